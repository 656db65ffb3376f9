// Bulk transfer: window- and cwnd-limited phases, sequence wrap, random loss / reordering /
// duplication, delayed ACK.
#include <string>
#include <vector>

#include "harness.h"

namespace tcptest {
namespace {

bool wire_seq_wrapped(const endpoint& e, std::uint32_t iss) {
    for (const sent_segment& s : e.sent) {
        if (s.len > 0 && s.h.seq < iss) return true;
    }
    return false;
}

TEST(TcpTransfer, TenMegabytesWindowAndCwndLimited) {
    tcp::config ca = Sim::config_a();
    ca.iss = 0xFFFFFFFFu - 3'000'000;  // the sequence space wraps ~3 MB into the transfer
    tcp::config cb = Sim::config_b();
    cb.receive_buffer = 64 * 1024;
    net_config net;
    net.delay_ns = 50 * kUs;
    net.rate_bps = 10'000'000'000ULL;
    Sim sim(ca, cb, net);
    const std::uint64_t total = 10ULL * 1024 * 1024;
    sim.a().tx_total = total;

    std::uint64_t cwnd_limited = 0, window_limited = 0, violations = 0, max_flight = 0;
    sim.a().on_transmit = [&](const sent_segment& s) {
        if (s.len == 0 || s.retransmission) return;
        const std::uint64_t flight = s.stream_offset + s.len - s.acked;
        max_flight = std::max(max_flight, flight);
        if (flight > std::min<std::uint64_t>(s.cwnd, s.send_window)) ++violations;
        if (s.cwnd < s.send_window) ++cwnd_limited;
        if (s.send_window < s.cwnd) ++window_limited;
    };
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == total; }));
    const std::uint64_t finish_time = sim.now;
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    EXPECT_EQ(violations, 0u);
    EXPECT_GT(cwnd_limited, 10u);      // slow start from IW = 10 segments
    EXPECT_GT(window_limited, 1000u);  // then the 64 KiB receive window is the limit
    EXPECT_LE(max_flight, 64u * 1024);
    EXPECT_GE(max_flight, 60u * 1024);
    EXPECT_TRUE(wire_seq_wrapped(sim.a(), ca.iss));
    const tcp::stats& st = sim.conn_a().stats();
    EXPECT_EQ(st.bytes_retransmitted, 0u);
    EXPECT_EQ(st.retransmit_timeouts, 0u);
    EXPECT_EQ(st.fast_retransmits, 0u);
    EXPECT_EQ(st.bytes_sent, total);
    EXPECT_EQ(sim.conn_b().stats().bytes_delivered, total);
    EXPECT_EQ(sim.conn_b().stats().out_of_order_segments, 0u);
    sim.run_for(1 * kSec);
    EXPECT_EQ(sim.conn_a().send_stream_acked(), total);
    EXPECT_EQ(sim.a().acked_offset, total);
    EXPECT_EQ(sim.conn_a().send_stream_sent(), total);
    EXPECT_TRUE(sim.a().acked_monotonic);
    EXPECT_EQ(sim.conn_a().bytes_in_flight(), 0u);
    EXPECT_EQ(sim.conn_a().next_deadline(), UINT64_MAX);
    // No more than 2 * 64 KiB of cwnd is built up while the receive window is the limit.
    EXPECT_LE(sim.conn_a().cwnd(), 2u * 64 * 1024 + 2 * 1460);
    // ~10 MB in ~165 round trips of 64 KiB: a sanity check of the simulated time.
    EXPECT_LT(finish_time, 40 * kMs);
}

TEST(TcpTransfer, SendBufferLimitsOutstandingBytes) {
    tcp::config ca = Sim::config_a();
    ca.send_buffer = 20'000;
    Sim sim(ca, Sim::config_b());
    sim.a().tx_total = 500'000;
    std::uint64_t max_outstanding = 0;
    sim.a().on_transmit = [&](const sent_segment& s) {
        if (s.len > 0) max_outstanding = std::max(max_outstanding, s.stream_offset + s.len - s.acked);
    };
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == 500'000; }));
    sim.run_for(1 * kMs);
    EXPECT_LE(max_outstanding, 20'000u);
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    EXPECT_EQ(sim.conn_a().send_space(), 20'000u);
}

TEST(TcpTransfer, BidirectionalWithLossAndSack) {
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.sack = cb.sack = true;
    net_config net;
    net.loss = 0.01;
    Sim sim(ca, cb, net, 11);
    const std::uint64_t total = 2'000'000;
    sim.a().tx_total = sim.b().tx_total = total;
    sim.open();
    ASSERT_TRUE(sim.run(120 * kSec, [&] { return sim.a().rx_bytes == total && sim.b().rx_bytes == total; }));
    EXPECT_EQ(sim.a().rx_mismatches + sim.b().rx_mismatches, 0u);
    EXPECT_GT(sim.conn_a().stats().bytes_retransmitted, 0u);
    EXPECT_GT(sim.conn_b().stats().bytes_retransmitted, 0u);
    EXPECT_GT(sim.conn_a().stats().out_of_order_segments, 0u);
    std::size_t with_sack = 0;
    for (const endpoint* e : {&sim.a(), &sim.b()}) {
        for (const sent_segment& s : e->sent) with_sack += s.h.sack_blocks.empty() ? 0 : 1;
    }
    EXPECT_GT(with_sack, 0u);
}

TEST(TcpTransfer, SequenceWrapBothDirectionsWithImpairments) {
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.iss = 0xFFFFFFFFu;
    cb.iss = 0xFFFFF000u;
    ca.sack = cb.sack = true;
    net_config net;
    net.loss = 0.02;
    net.reorder = 0.02;
    net.duplicate = 0.01;
    Sim sim(ca, cb, net, 5);
    const std::uint64_t total = 3'000'000;
    sim.a().tx_total = sim.b().tx_total = total;
    sim.a().close_when_sent = sim.b().close_when_sent = true;
    sim.open();
    ASSERT_TRUE(sim.run(600 * kSec, [&] { return sim.both(state::closed); }));
    EXPECT_EQ(sim.a().rx_bytes, total);
    EXPECT_EQ(sim.b().rx_bytes, total);
    EXPECT_EQ(sim.a().rx_mismatches + sim.b().rx_mismatches, 0u);
    EXPECT_TRUE(wire_seq_wrapped(sim.a(), ca.iss));
    EXPECT_TRUE(wire_seq_wrapped(sim.b(), cb.iss));
    EXPECT_EQ(sim.conn_a().stats().bytes_delivered, total);
    EXPECT_EQ(sim.conn_b().stats().bytes_delivered, total);
}

struct impairment {
    double loss;
    double duplicate;
    double reorder;
    bool sack;
    std::uint64_t seed;
};

std::string impairment_label(const impairment& p) {
    auto pct = [](double v) { return std::to_string(static_cast<int>(v * 100 + 0.5)); };
    return "loss" + pct(p.loss) + "_dup" + pct(p.duplicate) + "_reorder" + pct(p.reorder) +
           (p.sack ? "_sack" : "_nosack") + "_seed" + std::to_string(p.seed);
}
std::string impairment_name(const testing::TestParamInfo<impairment>& param_info) {
    return impairment_label(param_info.param);
}
void PrintTo(const impairment& p, std::ostream* os) {
    *os << impairment_label(p);
}

class TcpImpaired : public testing::TestWithParam<impairment> {};

TEST_P(TcpImpaired, EveryByteExactlyOnce) {
    const impairment p = GetParam();
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.sack = cb.sack = p.sack;
    ca.iss = static_cast<std::uint32_t>(p.seed * 0x9E3779B9u);
    cb.iss = static_cast<std::uint32_t>(p.seed * 0x7F4A7C15u);
    cb.delayed_ack_ns = p.seed % 2 ? 200 * kUs : 0;
    net_config net;
    net.loss = p.loss;
    net.duplicate = p.duplicate;
    net.reorder = p.reorder;
    net.rate_bps = 1'000'000'000;
    Sim sim(ca, cb, net, p.seed);
    const std::uint64_t a_total = 1'500'000, b_total = 300'000;
    sim.a().tx_total = a_total;
    sim.b().tx_total = b_total;
    sim.a().close_when_sent = true;
    sim.b().close_on_peer_fin = true;
    sim.open();
    ASSERT_TRUE(sim.run(3600 * kSec, [&] { return sim.both(state::closed); }))
        << "A " << tcp::to_string(sim.conn_a().state()) << " B " << tcp::to_string(sim.conn_b().state());
    EXPECT_EQ(sim.b().rx_bytes, a_total);
    EXPECT_EQ(sim.a().rx_bytes, b_total);
    EXPECT_EQ(sim.a().rx_mismatches + sim.b().rx_mismatches, 0u);
    EXPECT_TRUE(sim.a().acked_monotonic);
    EXPECT_TRUE(sim.b().acked_monotonic);
    EXPECT_EQ(sim.a().acked_offset, a_total);
    EXPECT_EQ(sim.conn_b().stats().bad_segments, 0u);
    if (p.loss > 0) {
        EXPECT_GT(sim.conn_a().stats().bytes_retransmitted, 0u);
    }
    if (p.duplicate > 0) {
        EXPECT_GT(sim.conn_b().stats().duplicate_segments, 0u);
    }
    // Orderly close: A did the active close and went through TIME-WAIT.
    bool a_time_wait = false;
    for (const auto& t : sim.a().transitions) a_time_wait |= t.second == state::time_wait;
    EXPECT_TRUE(a_time_wait);
}

std::vector<impairment> impairments() {
    std::vector<impairment> v;
    std::uint64_t seed = 1;
    for (double loss : {0.01, 0.05}) {
        for (bool mixed : {false, true}) {
            for (bool sack : {false, true}) {
                for (int k = 0; k < 3; ++k) {
                    v.push_back(impairment{loss, mixed ? 0.02 : 0.0, mixed ? 0.05 : 0.0, sack, seed++});
                }
            }
        }
    }
    v.push_back(impairment{0.0, 0.2, 0.2, true, seed++});  // heavy duplication and reordering, no loss
    v.push_back(impairment{0.0, 0.2, 0.2, false, seed++});
    return v;
}

INSTANTIATE_TEST_SUITE_P(LossReorderDuplication, TcpImpaired, testing::ValuesIn(impairments()), impairment_name);

TEST(TcpTransfer, DelayedAckReducesAckCount) {
    std::uint64_t acks[2] = {0, 0};
    for (int delayed = 0; delayed < 2; ++delayed) {
        tcp::config cb = Sim::config_b();
        cb.delayed_ack_ns = delayed ? 500 * kUs : 0;
        Sim sim(Sim::config_a(), cb);
        sim.a().tx_total = 1'000'000;
        sim.open();
        ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == 1'000'000; }));
        EXPECT_EQ(sim.b().rx_mismatches, 0u);
        sim.run_for(1 * kSec);
        EXPECT_EQ(sim.conn_a().send_stream_acked(), 1'000'000u);
        acks[delayed] = sim.conn_b().stats().acks_sent;
    }
    EXPECT_GE(acks[0], 1'000'000u / 1460);
    EXPECT_LT(acks[1] * 10, acks[0] * 6);
}

TEST(TcpTransfer, DelayedAckTimerAndEverySecondSegment) {
    tcp::config cb = Sim::config_b();
    cb.delayed_ack_ns = 500 * kUs;
    Sim sim(Sim::config_a(), cb);
    sim.open();
    sim.run(1 * kMs);
    ASSERT_TRUE(sim.both(state::established));
    const std::size_t before = sim.b().sent.size();

    // One small segment: ACKed when the delayed-ACK timer expires.
    const std::uint64_t t0 = sim.now;
    sim.a().tx_total = 100;
    sim.pump();
    EXPECT_EQ(sim.conn_b().next_deadline(), UINT64_MAX);
    sim.run_for(20 * kUs);
    EXPECT_EQ(sim.b().rx_bytes, 100u);
    EXPECT_EQ(sim.conn_b().next_deadline(), t0 + 10 * kUs + 500 * kUs);
    sim.run_for(1 * kMs);
    ASSERT_EQ(sim.b().sent.size(), before + 1);
    EXPECT_EQ(sim.b().sent.back().time, t0 + 10 * kUs + 500 * kUs);
    EXPECT_EQ(sim.b().sent.back().h.ack, sim.conn_b().irs() + 1 + 100);

    // Two full segments: the second is ACKed at once.
    const std::uint64_t t1 = sim.now;
    sim.a().tx_total = 100 + 2 * 1460;
    sim.pump();
    sim.run_for(1 * kMs);
    ASSERT_EQ(sim.b().sent.size(), before + 2);
    EXPECT_EQ(sim.b().sent.back().time, t1 + 10 * kUs);
    EXPECT_EQ(sim.b().sent.back().h.ack, sim.conn_b().irs() + 1 + 100 + 2 * 1460);
}

TEST(TcpTransfer, PiggybackedAcksOnDataClearDelayedAck) {
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.delayed_ack_ns = cb.delayed_ack_ns = 1 * kMs;
    Sim sim(ca, cb);
    sim.a().tx_total = 400'000;
    sim.b().tx_total = 400'000;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.a().rx_bytes == 400'000 && sim.b().rx_bytes == 400'000; }));
    EXPECT_EQ(sim.a().rx_mismatches + sim.b().rx_mismatches, 0u);
    // Most ACKs ride on data in both directions.
    EXPECT_LT(sim.conn_a().stats().acks_sent, sim.a().data_segments() / 2);
}

}  // namespace
}  // namespace tcptest
