// Bad input: out-of-window segments, ACKs of unsent data, bad flag combinations, wrong ports,
// duplicates, and a random fuzz; none may crash or corrupt the connection.
#include "harness.h"

namespace tcptest {
namespace {

std::vector<std::uint8_t> bytes(std::size_t n, std::uint8_t v = 0xEE) {
    return std::vector<std::uint8_t>(n, v);
}

TEST(TcpRobustness, BadSegmentsAreCountedAndIgnored) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.a().tx_total = 100'000;
    sim.b().tx_total = 50'000;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == 100'000 && sim.a().rx_bytes == 50'000; }));
    sim.run_for(10 * kMs);
    ASSERT_TRUE(sim.both(state::established));
    tcp::connection& b = sim.conn_b();
    const std::uint32_t rn = rcv_nxt(b);         // what B expects from A
    const std::uint32_t snd = next_send_seq(b);  // B's SND.NXT == SND.MAX
    const std::uint64_t rx_before = sim.b().rx_bytes;
    std::uint64_t bad = b.stats().bad_segments;
    ASSERT_EQ(bad, 0u);
    auto last_is_ack = [&] {
        const net::tcp_header& h = sim.b().sent.back().h;
        return h.flags == tf::kAck && h.ack == rn && h.seq == snd;
    };
    std::size_t n = sim.b().sent.size();

    // ACK of data never sent: ACK back, drop.
    sim.inject(1, make_header(1000, 2000, rn, snd + 5000, tf::kAck), bytes(10));
    EXPECT_EQ(b.stats().bad_segments, ++bad);
    EXPECT_EQ(sim.b().sent.size(), ++n);
    EXPECT_TRUE(last_is_ack());
    // ACK older than the peer's window allows (RFC 5961 §5): ACK back if it carries data; a bare
    // ACK gets no reply (two desynchronized ends must not ACK each other forever).
    sim.inject(1, make_header(1000, 2000, rn, snd - 5'000'000, tf::kAck), bytes(10));
    EXPECT_EQ(b.stats().bad_segments, ++bad);
    EXPECT_EQ(sim.b().sent.size(), ++n);
    sim.inject(1, make_header(1000, 2000, rn, snd - 5'000'000, tf::kAck));
    EXPECT_EQ(b.stats().bad_segments, ++bad);
    EXPECT_EQ(sim.b().sent.size(), n);
    sim.inject(1, make_header(1000, 2000, rn, snd + 5000, tf::kAck));
    EXPECT_EQ(b.stats().bad_segments, ++bad);
    EXPECT_EQ(sim.b().sent.size(), n);
    // Data far beyond the window.
    sim.inject(1, make_header(1000, 2000, rn + 5'000'000, snd, tf::kAck), bytes(100));
    EXPECT_EQ(b.stats().bad_segments, ++bad);
    EXPECT_EQ(sim.b().sent.size(), ++n);
    EXPECT_TRUE(last_is_ack());
    // Bare ACK beyond the window: dropped without reply.
    sim.inject(1, make_header(1000, 2000, rn + 3'000'000, snd, tf::kAck));
    EXPECT_EQ(b.stats().bad_segments, ++bad);
    EXPECT_EQ(sim.b().sent.size(), n);
    // SYN in a synchronized state: challenge ACK.
    sim.inject(1, make_header(1000, 2000, rn + 10, 0, tf::kSyn));
    EXPECT_EQ(b.stats().bad_segments, ++bad);
    EXPECT_EQ(sim.b().sent.size(), ++n);
    EXPECT_TRUE(last_is_ack());
    // In-window data without ACK: dropped silently.
    sim.inject(1, make_header(1000, 2000, rn, 0, tf::kPsh), bytes(10));
    EXPECT_EQ(b.stats().bad_segments, ++bad);
    EXPECT_EQ(sim.b().sent.size(), n);
    // Nonsense flag combinations.
    sim.inject(1, make_header(1000, 2000, rn, snd, tf::kSyn | tf::kFin | tf::kAck));
    sim.inject(1, make_header(1000, 2000, rn, snd, tf::kSyn | tf::kRst | tf::kAck));
    bad += 2;
    EXPECT_EQ(b.stats().bad_segments, bad);
    // Wrong ports.
    sim.inject(1, make_header(1000, 2001, rn, snd, tf::kAck), bytes(10));
    sim.inject(1, make_header(1001, 2000, rn, snd, tf::kAck), bytes(10));
    bad += 2;
    EXPECT_EQ(b.stats().bad_segments, bad);
    // Payload length without payload.
    b.on_segment(sim.now, make_header(1000, 2000, rn, snd, tf::kAck), nullptr, 10);
    EXPECT_EQ(b.stats().bad_segments, ++bad);
    EXPECT_EQ(sim.b().sent.size(), n);

    // A duplicate of data already received: counted as duplicate, re-ACKed, not delivered.
    const std::uint64_t dups = b.stats().duplicate_segments;
    sim.inject(1, make_header(1000, 2000, rn - 1000, snd, tf::kAck), bytes(1000));
    EXPECT_EQ(b.stats().duplicate_segments, dups + 1);
    EXPECT_EQ(sim.b().sent.size(), ++n);
    EXPECT_TRUE(last_is_ack());
    EXPECT_EQ(b.stats().bad_segments, bad);

    EXPECT_EQ(b.state(), state::established);
    EXPECT_EQ(sim.b().rx_bytes, rx_before);
    EXPECT_EQ(rcv_nxt(b), rn);

    // The connection carries on unharmed in both directions.
    sim.a().tx_total += 200'000;
    sim.b().tx_total += 200'000;
    sim.pump();
    ASSERT_TRUE(
        sim.run(sim.now + 10 * kSec, [&] { return sim.b().rx_bytes == 300'000 && sim.a().rx_bytes == 250'000; }));
    EXPECT_EQ(sim.a().rx_mismatches + sim.b().rx_mismatches, 0u);
    EXPECT_EQ(sim.conn_a().stats().bad_segments, 0u);
}

TEST(TcpRobustness, OverlappingSegmentsAreTrimmed) {
    recorder r;
    tcp::config cfg = Sim::config_b();
    cfg.sack = true;
    tcp::connection c(cfg, r);
    c.listen();
    net::tcp_header syn = make_header(1000, 2000, 100, 0, tf::kSyn);
    syn.sack_permitted = true;
    c.on_segment(0, syn, nullptr, 0);
    c.on_segment(1, make_header(1000, 2000, 101, 0x70000001, tf::kAck), nullptr, 0);
    ASSERT_EQ(c.state(), state::established);
    std::vector<std::uint8_t> stream(5000);
    for (std::size_t k = 0; k < stream.size(); ++k) stream[k] = static_cast<std::uint8_t>(k * 7 + 3);
    auto seg = [&](std::size_t from, std::size_t len) {
        c.on_segment(2, make_header(1000, 2000, static_cast<std::uint32_t>(101 + from), 0x70000001, tf::kAck),
                     stream.data() + from, len);
    };
    seg(0, 1000);
    seg(2000, 1000);  // hole [1000, 2000)
    EXPECT_EQ(c.out_of_order_bytes(), 1000u);
    ASSERT_EQ(r.sent.back().h.sack_blocks.size(), 1u);
    EXPECT_EQ(r.sent.back().h.sack_blocks[0].left, 101u + 2000);
    seg(2500, 1000);  // overlaps the held block
    EXPECT_EQ(c.out_of_order_bytes(), 1500u);
    seg(2200, 300);  // entirely held already
    EXPECT_EQ(c.stats().duplicate_segments, 1u);
    seg(4000, 500);  // second hole [3500, 4000)
    ASSERT_EQ(r.sent.back().h.sack_blocks.size(), 2u);
    EXPECT_EQ(r.sent.back().h.sack_blocks[0].left, 101u + 4000);
    seg(500, 1700);  // overlaps delivered data and the held block, fills the first hole
    EXPECT_EQ(r.received.size(), 3500u);
    EXPECT_EQ(r.sent.back().h.ack, 101u + 3500);
    ASSERT_EQ(r.sent.back().h.sack_blocks.size(), 1u);
    seg(3400, 1600);  // fills the rest
    ASSERT_EQ(r.received.size(), 5000u);
    EXPECT_EQ(r.received, stream);
    EXPECT_TRUE(r.sent.back().h.sack_blocks.empty());
    EXPECT_EQ(c.out_of_order_bytes(), 0u);
    EXPECT_EQ(c.stats().bytes_delivered, 5000u);
    EXPECT_EQ(c.stats().bad_segments, 0u);
}

TEST(TcpRobustness, DataBeyondTheWindowEdgeIsCut) {
    recorder r;
    tcp::config cfg = Sim::config_b();
    cfg.receive_buffer = 3000;
    cfg.window_scaling = false;
    tcp::connection c(cfg, r);
    c.listen();
    c.on_segment(0, make_header(1000, 2000, 100, 0, tf::kSyn), nullptr, 0);
    EXPECT_EQ(r.sent.back().h.window, 3000);
    c.on_segment(1, make_header(1000, 2000, 101, 0x70000001, tf::kAck), nullptr, 0);
    const std::vector<std::uint8_t> data(5000, 1);
    c.on_segment(2, make_header(1000, 2000, 101, 0x70000001, tf::kAck | tf::kFin), data.data(), data.size());
    EXPECT_EQ(r.received.size(), 3000u);  // cut at the right edge, FIN dropped with the rest
    EXPECT_EQ(c.state(), state::established);
    EXPECT_EQ(r.sent.back().h.ack, 3101u);
}

TEST(TcpRobustness, RandomFuzzNeverBreaksInvariants) {
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.sack = cb.sack = true;
    cb.owner_consumes = true;
    Sim sim(ca, cb, net_config{}, 99);
    sim.a().tx_total = 2'000'000;
    sim.b().tx_total = 500'000;
    sim.open();
    std::mt19937_64 rng(1234);
    std::vector<std::uint8_t> junk(3000, 0x5A);
    int injected = 0;
    std::function<void()> fuzz = [&] {
        const int to = static_cast<int>(rng() % 2);
        tcp::connection& c = *sim.ep[to].conn;
        const std::uint32_t rn = c.irs() + 1 + static_cast<std::uint32_t>(c.receive_stream_delivered());
        const std::uint32_t una = c.iss() + 1 + static_cast<std::uint32_t>(c.send_stream_acked());
        net::tcp_header h;
        h.src_port = to == 0 ? 2000 : 1000;
        h.dst_port = to == 0 ? 1000 : 2000;
        if (rng() % 16 == 0) h.src_port ^= 1;
        const std::uint64_t mode = rng() % 4;
        h.seq =
            mode == 0 ? static_cast<std::uint32_t>(rng()) : rn + static_cast<std::uint32_t>(rng() % 400'000) - 200'000;
        h.ack =
            mode == 1 ? static_cast<std::uint32_t>(rng()) : una + static_cast<std::uint32_t>(rng() % 400'000) - 200'000;
        h.flags = static_cast<std::uint8_t>(rng() & 0x3F);
        if (h.flags & tf::kRst && rng() % 8 != 0) h.flags &= static_cast<std::uint8_t>(~tf::kRst);
        h.window = static_cast<std::uint16_t>(rng());
        if (rng() % 4 == 0)
            h.sack_blocks.push_back({static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng())});
        if (rng() % 8 == 0) h.mss = static_cast<std::uint16_t>(rng());
        if (rng() % 8 == 0) h.window_scale = static_cast<std::uint8_t>(rng());
        const std::size_t len = rng() % 3 == 0 ? static_cast<std::size_t>(rng() % junk.size()) : 0;
        c.on_segment(sim.now, h, len ? junk.data() : nullptr, len);
        ++injected;
        if (injected < 20'000) sim.schedule(sim.now + 5 * kUs, fuzz);
    };
    sim.schedule(50 * kUs, fuzz);
    sim.run(60 * kSec, [&] { return injected >= 20'000; });
    EXPECT_EQ(injected, 20'000);
    for (endpoint* e : {&sim.a(), &sim.b()}) {
        const tcp::connection& c = *e->conn;
        EXPECT_TRUE(e->acked_monotonic);
        EXPECT_EQ(c.stats().bytes_delivered, e->rx_bytes);
        EXPECT_LE(c.send_stream_acked(), c.send_stream_sent());
        EXPECT_LE(c.send_stream_sent(), c.send_stream_queued());
        EXPECT_GE(c.cwnd(), c.effective_mss());
        EXPECT_LE(c.out_of_order_bytes(), c.config().receive_buffer);
        EXPECT_GT(c.stats().bad_segments, 100u);
    }
    // Whatever state the fuzz left them in, both can be shut down.
    sim.conn_a().abort(sim.now);
    sim.conn_b().abort(sim.now);
    EXPECT_TRUE(sim.both(state::closed));
    EXPECT_EQ(sim.conn_a().next_deadline(), UINT64_MAX);
}

}  // namespace
}  // namespace tcptest
