// Scripted single-connection tests of sender and receiver rules: RTO computation (RFC 6298) and
// Karn's algorithm, duplicate-ACK rules and NewReno window arithmetic (RFC 5681 / 6582), persist
// with outstanding data, corking, restart after idle, delayed ACK exceptions, FIN beyond a gap,
// reuse of a Connection.
#include "harness.h"

namespace tcptest {
namespace {

constexpr std::uint32_t kMss = 1460;

net::tcp_header peer_ack(const tcp::connection& c, std::uint64_t acked_bytes, std::uint16_t window = 65535,
                         std::uint32_t peer_seq = 5001) {
    return make_header(2000, 1000, peer_seq, c.iss() + 1 + static_cast<std::uint32_t>(acked_bytes), tf::kAck, window);
}

std::size_t data_count(const recorder& r) {
    std::size_t n = 0;
    for (const recorder::tx& t : r.sent) n += t.len > 0 ? 1 : 0;
    return n;
}

TEST(TcpSender, RtoFollowsRfc6298AndKarn) {
    recorder r;
    tcp::config cfg = Sim::config_a();
    cfg.rto_min_ns = 1'000;  // let the computed value show
    tcp::connection c(cfg, r);
    establish(c, r, 65535, 100 * kUs);  // SYN at 0, SYN-ACK at 100 us: first sample
    EXPECT_EQ(c.srtt(), 100'000u);
    EXPECT_EQ(c.rttvar(), 50'000u);
    EXPECT_EQ(c.rto(), 300'000u);  // SRTT + 4 RTTVAR

    c.on_send_data(200 * kUs, 1000);
    c.on_segment(260 * kUs, peer_ack(c, 1000), nullptr, 0);
    EXPECT_EQ(c.rttvar(), 47'500u);  // 3/4 * 50 + 1/4 * |100 - 60|
    EXPECT_EQ(c.srtt(), 95'000u);    // 7/8 * 100 + 1/8 * 60
    EXPECT_EQ(c.rto(), 285'000u);
    EXPECT_EQ(c.next_deadline(), UINT64_MAX);

    // A timeout: retransmission, doubled RTO, and no sample from the ACK of the retransmission.
    c.on_send_data(300 * kUs, 1000);
    EXPECT_EQ(c.next_deadline(), 300 * kUs + 285'000);
    c.on_timer(c.next_deadline());
    EXPECT_EQ(c.stats().retransmit_timeouts, 1u);
    EXPECT_EQ(c.rto(), 570'000u);
    EXPECT_EQ(r.sent.back().stream_offset, 1000u);
    EXPECT_EQ(r.sent.back().len, 1000u);
    EXPECT_EQ(c.next_deadline(), 585 * kUs + 570'000);
    c.on_segment(600 * kUs, peer_ack(c, 2000), nullptr, 0);
    EXPECT_EQ(c.srtt(), 95'000u);
    EXPECT_EQ(c.rto(), 570'000u);       // stays backed off until a valid sample
    EXPECT_EQ(c.cwnd(), kMss + 1000u);  // loss window 1 MSS, then + bytes acked in slow start

    c.on_send_data(700 * kUs, 1000);
    c.on_segment(750 * kUs, peer_ack(c, 3000), nullptr, 0);
    EXPECT_EQ(c.srtt(), 89'375u);
    EXPECT_EQ(c.rttvar(), 46'875u);
    EXPECT_EQ(c.rto(), 276'875u);
}

TEST(TcpSender, RtoIsClampedToMinAndMax) {
    recorder r;
    tcp::config cfg = Sim::config_a();
    cfg.rto_min_ns = 1 * kMs;
    cfg.rto_max_ns = 3 * kMs;
    tcp::connection c(cfg, r);
    establish(c, r, 65535, 10 * kUs);
    EXPECT_EQ(c.rto(), 1 * kMs);
    c.on_send_data(20 * kUs, 100);
    std::uint64_t t = c.next_deadline();
    for (std::uint64_t expect : {2 * kMs, 3 * kMs, 3 * kMs}) {
        c.on_timer(t);
        EXPECT_EQ(c.rto(), expect);
        EXPECT_EQ(c.next_deadline(), t + expect);
        t = c.next_deadline();
    }
}

TEST(TcpSender, DuplicateAckRulesAndNewRenoArithmetic) {
    recorder r;
    tcp::connection c(Sim::config_a(), r);
    establish(c, r);
    c.on_send_data(20, 5 * kMss);
    ASSERT_EQ(data_count(r), 5u);
    const std::uint16_t w = 65535;
    std::uint32_t peer_seq = 5001;

    // Same ACK number but carrying data: not a duplicate ACK.
    std::vector<std::uint8_t> data(10, 7);
    c.on_segment(30, peer_ack(c, 0, w, peer_seq), data.data(), data.size());
    peer_seq += 10;
    EXPECT_EQ(c.stats().dupacks_received, 0u);
    EXPECT_EQ(r.received.size(), 10u);
    // Same ACK number but a different window: a window update, not a duplicate ACK.
    c.on_segment(31, peer_ack(c, 0, w - 1, peer_seq), nullptr, 0);
    EXPECT_EQ(c.stats().dupacks_received, 0u);
    c.on_segment(32, peer_ack(c, 0, w, peer_seq), nullptr, 0);
    EXPECT_EQ(c.stats().dupacks_received, 0u);

    // Three real duplicates: fast retransmit of the first segment.
    const std::size_t before = r.sent.size();
    for (int k = 0; k < 3; ++k) c.on_segment(40 + k, peer_ack(c, 0, w, peer_seq), nullptr, 0);
    EXPECT_EQ(c.stats().dupacks_received, 3u);
    EXPECT_EQ(c.stats().fast_retransmits, 1u);
    EXPECT_TRUE(c.in_fast_recovery());
    ASSERT_EQ(r.sent.size(), before + 1);
    EXPECT_EQ(r.sent.back().stream_offset, 0u);
    EXPECT_EQ(r.sent.back().len, kMss);
    EXPECT_EQ(c.ssthresh(), 5u * kMss / 2);  // FlightSize / 2
    EXPECT_EQ(c.cwnd(), 5u * kMss / 2 + 3 * kMss);
    c.on_segment(43, peer_ack(c, 0, w, peer_seq), nullptr, 0);
    EXPECT_EQ(c.cwnd(), 5u * kMss / 2 + 4 * kMss);  // inflation

    // Partial ACK: the next hole is retransmitted at once, cwnd deflated by the amount acked
    // and one MSS added back.
    c.on_segment(50, peer_ack(c, 2 * kMss, w, peer_seq), nullptr, 0);
    EXPECT_TRUE(c.in_fast_recovery());
    EXPECT_EQ(r.sent.back().stream_offset, 2u * kMss);
    EXPECT_EQ(c.cwnd(), 5u * kMss / 2 + 4 * kMss - 2 * kMss + kMss);
    // Full ACK: recovery ends, cwnd = min(ssthresh, FlightSize + MSS).
    c.on_segment(60, peer_ack(c, 5 * kMss, w, peer_seq), nullptr, 0);
    EXPECT_FALSE(c.in_fast_recovery());
    EXPECT_EQ(c.cwnd(), 2u * kMss);
    EXPECT_EQ(c.stats().retransmit_timeouts, 0u);
    EXPECT_EQ(c.send_stream_acked(), 5u * kMss);
    EXPECT_EQ(r.acked_offset, 5u * kMss);
    EXPECT_EQ(c.next_deadline(), UINT64_MAX);
}

TEST(TcpSender, NoFastRetransmitForDupacksFromBeforeATimeout) {
    recorder r;
    tcp::connection c(Sim::config_a(), r);
    establish(c, r);
    c.on_send_data(20, 5 * kMss);
    c.on_timer(c.next_deadline());  // RTO: recover = everything sent so far
    EXPECT_EQ(c.stats().retransmit_timeouts, 1u);
    const std::uint64_t t = c.next_deadline() - 1;
    for (int k = 0; k < 5; ++k) c.on_segment(t, peer_ack(c, 0), nullptr, 0);
    EXPECT_EQ(c.stats().dupacks_received, 5u);
    EXPECT_EQ(c.stats().fast_retransmits, 0u);  // RFC 6582 §3.2 step 2
}

TEST(TcpSender, WindowClosingWithDataOutstandingSwitchesToPersist) {
    recorder r;
    tcp::connection c(Sim::config_a(), r);
    establish(c, r);
    c.on_send_data(20, 3000);
    ASSERT_EQ(data_count(r), 3u);
    // The peer takes the first segment only and closes its window.
    c.on_segment(1000, peer_ack(c, kMss, 0), nullptr, 0);
    EXPECT_EQ(c.send_window(), 0u);
    EXPECT_EQ(c.bytes_in_flight(), 0u);  // pulled back to SND.UNA
    const std::uint64_t probe_at = c.next_deadline();
    EXPECT_EQ(probe_at, 1000 + c.rto());
    r.sent.clear();
    c.on_timer(probe_at);
    ASSERT_EQ(r.sent.size(), 1u);
    EXPECT_EQ(r.sent[0].stream_offset, kMss);  // the first unacknowledged byte
    EXPECT_EQ(r.sent[0].len, 1u);
    EXPECT_EQ(c.stats().window_probes, 1u);
    EXPECT_EQ(c.next_deadline(), probe_at + 2 * c.rto());  // backed off
    // Still zero: no retransmission timeout, just the next probe.
    c.on_segment(probe_at + 100, peer_ack(c, kMss, 0), nullptr, 0);
    EXPECT_EQ(c.stats().dupacks_received, 0u);
    EXPECT_EQ(c.next_deadline(), probe_at + 2 * c.rto());
    // The window opens: everything from SND.UNA goes out again.
    r.sent.clear();
    c.on_segment(probe_at + 200, peer_ack(c, kMss, 100), nullptr, 0);
    ASSERT_EQ(data_count(r), 2u);
    EXPECT_EQ(r.sent[0].stream_offset, kMss);
    EXPECT_EQ(r.sent[0].len, kMss);
    EXPECT_EQ(r.sent[1].len, 3000u - 2 * kMss);
    EXPECT_EQ(c.stats().retransmit_timeouts, 0u);
    EXPECT_EQ(c.next_deadline(), probe_at + 200 + c.rto());
}

TEST(TcpSender, CorkBatchesFpdusIntoOneSegment) {
    recorder r;
    tcp::connection c(Sim::config_a(), r);
    establish(c, r);
    c.set_cork(20, true);
    for (std::uint64_t end = 300; end <= 1200; end += 300) {
        c.on_send_data(20, 300);
        c.mark_boundary(end);
    }
    EXPECT_TRUE(r.sent.empty());
    c.set_cork(20, false);
    ASSERT_EQ(r.sent.size(), 1u);
    EXPECT_EQ(r.sent[0].len, 1200u);
    // Without the cork each FPDU leaves on its own.
    for (std::uint64_t end = 1500; end <= 2400; end += 300) {
        c.on_send_data(30, 300);
        c.mark_boundary(end);
    }
    EXPECT_EQ(r.sent.size(), 5u);
}

TEST(TcpSender, CwndRestartsAfterIdle) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.a().tx_total = 1'000'000;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == 1'000'000; }));
    sim.run_for(2 * kSec);
    EXPECT_GT(sim.conn_a().cwnd(), 100'000u);
    std::uint32_t first_cwnd = 0;
    sim.a().on_transmit = [&](const sent_segment& s) {
        if (s.len > 0 && first_cwnd == 0) first_cwnd = s.cwnd;
    };
    sim.a().tx_total += 100'000;
    sim.pump();
    EXPECT_EQ(first_cwnd, 10u * kMss);  // RFC 5681 §4.1 restart window
    ASSERT_TRUE(sim.run(sim.now + 10 * kSec, [&] { return sim.b().rx_bytes == 1'100'000; }));
}

TEST(TcpReceiver, DelayedAckExceptions) {
    recorder r;
    tcp::config cfg = Sim::config_b();
    cfg.delayed_ack_ns = 1 * kMs;
    tcp::connection c(cfg, r);
    c.listen();
    c.on_segment(0, make_header(1000, 2000, 100, 0, tf::kSyn), nullptr, 0);
    c.on_segment(10, make_header(1000, 2000, 101, 0x70000001, tf::kAck), nullptr, 0);
    r.sent.clear();
    const std::vector<std::uint8_t> d(100, 1);
    c.on_segment(20, make_header(1000, 2000, 101, 0x70000001, tf::kAck), d.data(), 100);
    EXPECT_TRUE(r.sent.empty());
    EXPECT_EQ(c.next_deadline(), 20 + 1 * kMs);
    // Out of order: immediate duplicate ACK.
    c.on_segment(30, make_header(1000, 2000, 401, 0x70000001, tf::kAck), d.data(), 100);
    ASSERT_EQ(r.sent.size(), 1u);
    EXPECT_EQ(r.sent[0].h.ack, 201u);
    EXPECT_EQ(c.next_deadline(), UINT64_MAX);
    // Filling part of the gap: immediate ACK.
    c.on_segment(40, make_header(1000, 2000, 201, 0x70000001, tf::kAck), d.data(), 100);
    ASSERT_EQ(r.sent.size(), 2u);
    EXPECT_EQ(r.sent[1].h.ack, 301u);
    // In order again, no gap left behind it: delayed.
    c.on_segment(50, make_header(1000, 2000, 301, 0x70000001, tf::kAck), d.data(), 100);
    EXPECT_EQ(r.sent.size(), 3u);  // fills the gap to the held block: immediate
    EXPECT_EQ(r.sent[2].h.ack, 501u);
    c.on_segment(60, make_header(1000, 2000, 501, 0x70000001, tf::kAck), d.data(), 100);
    EXPECT_EQ(r.sent.size(), 3u);
    // FIN: immediate.
    c.on_segment(70, make_header(1000, 2000, 601, 0x70000001, tf::kAck | tf::kFin), nullptr, 0);
    ASSERT_EQ(r.sent.size(), 4u);
    EXPECT_EQ(r.sent[3].h.ack, 602u);
    EXPECT_EQ(c.state(), state::close_wait);
    EXPECT_EQ(r.received.size(), 500u);
}

TEST(TcpReceiver, FinBeyondAGapWaitsAndNothingFollowsIt) {
    recorder r;
    tcp::connection c(Sim::config_b(), r);
    c.listen();
    c.on_segment(0, make_header(1000, 2000, 100, 0, tf::kSyn), nullptr, 0);
    c.on_segment(10, make_header(1000, 2000, 101, 0x70000001, tf::kAck), nullptr, 0);
    std::vector<std::uint8_t> stream(3500);
    for (std::size_t k = 0; k < stream.size(); ++k) stream[k] = static_cast<std::uint8_t>(k);
    auto seg = [&](std::size_t from, std::size_t len, std::uint8_t extra) {
        c.on_segment(20, make_header(1000, 2000, static_cast<std::uint32_t>(101 + from), 0x70000001, tf::kAck | extra),
                     len ? stream.data() + from : nullptr, len);
    };
    seg(0, 1000, 0);
    seg(2000, 1000, tf::kFin);  // FIN at 3000, beyond the hole [1000, 2000)
    EXPECT_EQ(c.state(), state::established);
    seg(3000, 500, 0);  // bogus: after the FIN
    EXPECT_EQ(c.out_of_order_bytes(), 1000u);
    seg(1000, 1000, 0);
    EXPECT_EQ(c.state(), state::close_wait);
    ASSERT_EQ(r.received.size(), 3000u);
    EXPECT_TRUE(std::equal(r.received.begin(), r.received.end(), stream.begin()));
    EXPECT_EQ(r.sent.back().h.ack, 101u + 3001);
}

TEST(TcpReceiver, ConnectionCanBeReusedAfterClose) {
    Sim sim(Sim::config_a(), Sim::config_b());
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE(round);
        for (endpoint& e : sim.ep) {
            e.tx_queued = 0;
            e.rx_bytes = 0;
            e.close_called = false;
        }
        sim.conn_a().set_iss(0x1000 + 0x10000000u * static_cast<std::uint32_t>(round));
        sim.a().tx_total = 50'000 + 10'000 * static_cast<std::uint64_t>(round);
        sim.a().close_when_sent = true;
        sim.b().close_on_peer_fin = true;
        sim.open();
        ASSERT_TRUE(sim.run(sim.now + 10 * kSec, [&] { return sim.both(state::closed); }));
        EXPECT_EQ(sim.b().rx_bytes, sim.a().tx_total);
        EXPECT_EQ(sim.b().rx_mismatches, 0u);
        EXPECT_EQ(sim.conn_a().send_stream_acked(), sim.a().tx_total);
        EXPECT_EQ(sim.conn_b().receive_stream_delivered(), sim.a().tx_total);
        EXPECT_EQ(sim.conn_b().irs(), 0x1000 + 0x10000000u * static_cast<std::uint32_t>(round));
    }
}

}  // namespace
}  // namespace tcptest
