// Loss recovery: fast retransmit / NewReno, retransmission timeout with backoff, SACK generation,
// zero-window persist.
#include "harness.h"

namespace tcptest {
namespace {

constexpr std::uint64_t kMss = 1460;

// Drops the first `times` transmissions (original included) of the data segment at `offset` from A.
std::function<bool(int, const sent_segment&)> drop_segment(std::uint64_t offset, int times, int* count) {
    return [offset, times, count](int from, const sent_segment& s) {
        if (from != 0 || s.len == 0 || s.stream_offset != offset) return false;
        return (*count)++ < times;
    };
}

TEST(TcpRecovery, SingleLossRecoveredByFastRetransmit) {
    net_config net;
    net.rate_bps = 1'000'000'000;
    Sim sim(Sim::config_a(), Sim::config_b(), net);
    int dropped = 0;
    sim.drop = drop_segment(100 * kMss, 1, &dropped);
    const std::uint64_t total = 2'000'000;
    sim.a().tx_total = total;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == total; }));
    EXPECT_EQ(dropped, 2);  // the original (dropped) and one retransmission
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    const tcp::stats& st = sim.conn_a().stats();
    EXPECT_EQ(st.fast_retransmits, 1u);
    EXPECT_EQ(st.retransmit_timeouts, 0u);
    EXPECT_EQ(st.bytes_retransmitted, kMss);
    EXPECT_GE(st.dupacks_received, 3u);
    EXPECT_GT(sim.conn_b().stats().out_of_order_segments, 0u);
    EXPECT_FALSE(sim.conn_a().in_fast_recovery());
    // The retransmission went out on the third duplicate ACK.
    const sent_segment* rexmit = nullptr;
    for (const sent_segment& s : sim.a().sent) {
        if (s.retransmission) rexmit = &s;
    }
    ASSERT_NE(rexmit, nullptr);
    EXPECT_EQ(rexmit->stream_offset, 100 * kMss);
    EXPECT_EQ(rexmit->len, kMss);
    // After recovery cwnd was halved (ssthresh = flight / 2) and grows again from there.
    EXPECT_LT(sim.conn_a().ssthresh(), 1'000'000u);
}

TEST(TcpRecovery, NewRenoRepairsTwoLossesInOneWindowWithPartialAck) {
    Sim sim(Sim::config_a(), Sim::config_b());
    int d1 = 0, d2 = 0;
    auto f1 = drop_segment(100 * kMss, 1, &d1);
    auto f2 = drop_segment(110 * kMss, 1, &d2);
    sim.drop = [&](int from, const sent_segment& s) { return f1(from, s) || f2(from, s); };
    const std::uint64_t total = 2'000'000;
    sim.a().tx_total = total;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == total; }));
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    const tcp::stats& st = sim.conn_a().stats();
    EXPECT_EQ(st.fast_retransmits, 1u);  // one recovery episode
    EXPECT_EQ(st.retransmit_timeouts, 0u);
    EXPECT_EQ(st.bytes_retransmitted, 2 * kMss);
}

TEST(TcpRecovery, LostRetransmissionTimesOutWithExponentialBackoff) {
    Sim sim(Sim::config_a(), Sim::config_b());
    int dropped = 0;
    const std::uint64_t target = 50 * kMss;
    sim.drop = drop_segment(target, 3, &dropped);  // original, fast retransmit, first RTO retransmit
    std::vector<sent_segment> tx;
    sim.a().on_transmit = [&](const sent_segment& s) {
        if (s.len > 0 && s.stream_offset == target) tx.push_back(s);
    };
    const std::uint64_t total = 1'000'000;
    sim.a().tx_total = total;
    sim.open();
    ASSERT_TRUE(sim.run(60 * kSec, [&] { return sim.b().rx_bytes == total; }));
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    const tcp::stats& st = sim.conn_a().stats();
    EXPECT_EQ(st.fast_retransmits, 1u);
    EXPECT_EQ(st.retransmit_timeouts, 2u);
    ASSERT_EQ(tx.size(), 4u);
    const std::uint64_t base = tx[1].rto;  // RTO in force when the fast retransmission went out
    EXPECT_EQ(base, 200 * kMs);            // RTT is tiny: RTO clamped to rto_min
    EXPECT_EQ(tx[2].rto, 2 * base);        // first timeout doubled it...
    EXPECT_EQ(tx[3].rto, 4 * base);        // ...and the second again
    EXPECT_EQ(tx[3].time - tx[2].time, 2 * base);
    EXPECT_EQ(tx[2].cwnd, kMss);  // loss window
    EXPECT_EQ(tx[3].cwnd, kMss);
    // After the timeout new RTT samples bring the RTO back down.
    EXPECT_EQ(sim.conn_a().rto(), 200 * kMs);
}

TEST(TcpRecovery, RtoRetransmissionsAreCappedAndGiveUp) {
    tcp::config ca = Sim::config_a();
    ca.rto_max_ns = 1 * kSec;
    ca.max_retransmits = 4;
    Sim sim(ca, Sim::config_b());
    sim.a().tx_total = 100'000;
    sim.open();
    sim.run(1 * kMs);
    ASSERT_EQ(sim.conn_a().state(), state::established);
    sim.drop = [](int from, const sent_segment&) { return from == 1; };  // B goes silent
    sim.a().tx_total = 200'000;
    sim.pump();
    sim.run(120 * kSec);
    EXPECT_EQ(sim.conn_a().state(), state::closed);
    EXPECT_EQ(sim.conn_a().stats().retransmit_timeouts, 4u);
    EXPECT_EQ(sim.conn_a().stats().rsts_sent, 1u);
    // Backoff 0.4, 0.8, then capped at rto_max.
    EXPECT_EQ(sim.conn_a().rto(), 1 * kSec);
}

TEST(TcpRecovery, SackBlocksReportHolesMostRecentFirst) {
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.sack = cb.sack = true;
    Sim sim(ca, cb);
    int d1 = 0, d2 = 0;
    auto f1 = drop_segment(20 * kMss, 1, &d1);
    auto f2 = drop_segment(22 * kMss, 1, &d2);
    sim.drop = [&](int from, const sent_segment& s) { return f1(from, s) || f2(from, s); };
    sim.a().tx_total = 200'000;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == 200'000; }));
    const std::uint32_t base = sim.conn_a().iss() + 1;
    auto seq = [&](std::uint64_t seg) { return base + static_cast<std::uint32_t>(seg * kMss); };
    const sent_segment* first = nullptr;
    const sent_segment* two = nullptr;
    for (const sent_segment& s : sim.b().sent) {
        if (!first && !s.h.sack_blocks.empty()) first = &s;
        if (!two && s.h.sack_blocks.size() == 2) two = &s;
    }
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->h.ack, seq(20));
    EXPECT_EQ(first->h.sack_blocks[0].left, seq(21));
    EXPECT_EQ(first->h.sack_blocks[0].right, seq(22));
    ASSERT_NE(two, nullptr);
    EXPECT_EQ(two->h.ack, seq(20));
    EXPECT_EQ(two->h.sack_blocks[0].left, seq(23));  // the block with the latest arrival first
    EXPECT_EQ(two->h.sack_blocks[0].right, seq(24));
    EXPECT_EQ(two->h.sack_blocks[1].left, seq(21));
    EXPECT_EQ(two->h.sack_blocks[1].right, seq(22));
    // Once the holes are filled no more SACK blocks.
    EXPECT_TRUE(sim.b().sent.back().h.sack_blocks.empty());
    EXPECT_EQ(sim.conn_b().out_of_order_bytes(), 0u);
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
}

TEST(TcpRecovery, NoSackBlocksWithoutNegotiation) {
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    cb.sack = true;  // only B wants it
    Sim sim(ca, cb);
    int d = 0;
    sim.drop = drop_segment(20 * kMss, 1, &d);
    sim.a().tx_total = 200'000;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == 200'000; }));
    EXPECT_EQ(sim.b().count_sent([](const sent_segment& s) { return !s.h.sack_blocks.empty(); }), 0u);
    EXPECT_GT(sim.conn_b().stats().out_of_order_segments, 0u);
}

TEST(TcpRecovery, ZeroWindowPersistProbesUntilTheWindowOpens) {
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.mss = 1024;  // segments fill the 64 KiB window exactly
    cb.owner_consumes = true;
    cb.receive_buffer = 64 * 1024;
    Sim sim(ca, cb);
    sim.b().consume = false;  // the application on B does not read until t = 2 s
    sim.schedule(2 * kSec, [&] { sim.b().consume = true; });
    const std::uint64_t total = 256 * 1024;
    sim.a().tx_total = total;
    sim.open();
    ASSERT_TRUE(
        sim.run(30 * kSec, [&] { return sim.b().rx_bytes == total && sim.conn_a().send_stream_acked() == total; }));
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    EXPECT_GT(sim.b().count_sent([](const sent_segment& s) { return s.h.window == 0 && s.time < 2 * kSec; }), 0u);
    std::vector<std::uint64_t> probes;
    for (const sent_segment& s : sim.a().sent) {
        if (s.len == 1 && s.time < 2 * kSec) probes.push_back(s.time);
    }
    EXPECT_EQ(sim.conn_a().stats().window_probes, probes.size());
    ASSERT_EQ(probes.size(), 3u);  // persist interval 0.2 s, 0.4 s, 0.8 s (then the window opened)
    EXPECT_EQ(probes[1] - probes[0], 400 * kMs);
    EXPECT_EQ(probes[2] - probes[1], 800 * kMs);
    EXPECT_EQ(sim.conn_a().stats().retransmit_timeouts, 0u);
    EXPECT_EQ(sim.conn_b().stats().bad_segments, 0u);
    // The window update at 2 s restarts the transfer at once.
    const sent_segment* resumed = nullptr;
    for (const sent_segment& s : sim.a().sent) {
        if (s.len > 1 && s.time >= 2 * kSec) {
            resumed = &s;
            break;
        }
    }
    ASSERT_NE(resumed, nullptr);
    EXPECT_EQ(resumed->time, 2 * kSec + 10 * kUs);
}

TEST(TcpRecovery, LostWindowUpdateIsRecoveredByAProbe) {
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.mss = 1024;  // segments fill the 64 KiB window exactly
    cb.owner_consumes = true;
    cb.receive_buffer = 64 * 1024;
    Sim sim(ca, cb);
    sim.b().consume = false;
    sim.schedule(2 * kSec, [&] { sim.b().consume = true; });
    int updates = 0;
    sim.drop = [&](int from, const sent_segment& s) {
        return from == 1 && s.time == 2 * kSec && s.h.window > 0 && updates++ == 0;
    };
    const std::uint64_t total = 256 * 1024;
    sim.a().tx_total = total;
    sim.open();
    ASSERT_TRUE(
        sim.run(30 * kSec, [&] { return sim.b().rx_bytes == total && sim.conn_a().send_stream_acked() == total; }));
    EXPECT_EQ(updates, 1);
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    EXPECT_EQ(sim.conn_a().stats().window_probes, 4u);  // the fourth one (at ~3 s) finds the window open
    EXPECT_EQ(sim.conn_a().stats().retransmit_timeouts, 0u);
}

TEST(TcpRecovery, SlowReaderKeepsTransferGoing) {
    // The receiving application consumes in bursts; the window closes and opens repeatedly.
    tcp::config cb = Sim::config_b();
    cb.owner_consumes = true;
    cb.receive_buffer = 16 * 1024;
    cb.window_scaling = false;
    Sim sim(Sim::config_a(), cb);
    sim.b().consume = false;
    std::function<void()> tick = [&] {
        sim.b().consume = !sim.b().consume;
        sim.schedule(sim.now + 3 * kMs, tick);
    };
    sim.schedule(3 * kMs, tick);
    const std::uint64_t total = 2'000'000;
    sim.a().tx_total = total;
    sim.open();
    ASSERT_TRUE(sim.run(600 * kSec, [&] { return sim.b().rx_bytes == total; }));
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    EXPECT_EQ(sim.conn_b().stats().bad_segments, 0u);
    EXPECT_EQ(sim.conn_a().stats().retransmit_timeouts, 0u);
}

}  // namespace
}  // namespace tcptest
