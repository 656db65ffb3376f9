// SACK-based loss recovery (RFC 6675, Config::sack_recovery): several losses in one window repaired
// in one round trip, fallback to NewReno without SACK, the timeout path, FPDU-aligned
// retransmissions and data integrity under random loss.
#include <algorithm>
#include <map>
#include <set>

#include "harness.h"

namespace tcptest {
namespace {

constexpr std::uint64_t kMss = 1460;

struct loss_run {
    tcp::stats a;                       // the sender's counters
    std::vector<std::uint64_t> rexmit;  // times of A's retransmissions
    std::uint64_t recovery_start = 0;   // first retransmission
    std::uint64_t recovery_end = 0;     // first time A is out of recovery again after it
    std::vector<std::uint64_t> trace;   // A's segments: time, seq, len, flags
    std::uint64_t rx_bytes = 0, rx_mismatches = 0;
    bool sack_recovery_enabled = false;
};

// A sends 2 MB to B over a 1 Gbit/s link (50 us one way); the data segments at `lost` (segment
// indices) are dropped once each. Large buffers: neither the peer window nor the send buffer limits.
loss_run run_losses(bool sack_a, bool sack_b, bool sack_recovery, const std::vector<std::uint64_t>& lost) {
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.sack = sack_a;
    cb.sack = sack_b;
    ca.sack_recovery = sack_recovery;
    ca.send_buffer = 8 * 1024 * 1024;
    cb.receive_buffer = 8 * 1024 * 1024;
    net_config net;
    net.rate_bps = 1'000'000'000;
    net.delay_ns = 50 * kUs;
    Sim sim(ca, cb, net);
    std::set<std::uint64_t> pending;
    for (std::uint64_t k : lost) pending.insert(k * kMss);
    sim.drop = [&](int from, const sent_segment& s) {
        if (from != 0 || s.len == 0) return false;
        return pending.erase(s.stream_offset) > 0;
    };
    loss_run r;
    sim.a().on_transmit = [&](const sent_segment& s) {
        r.trace.insert(r.trace.end(), {s.time, s.h.seq, s.len, s.h.flags});
        if (!s.retransmission) return;
        if (r.rexmit.empty()) r.recovery_start = s.time;
        r.rexmit.push_back(s.time);
    };
    const std::uint64_t total = 2'000'000;
    sim.a().tx_total = total;
    sim.open();
    sim.run(10 * kSec, [&] {
        if (r.recovery_start != 0 && r.recovery_end == 0 && !sim.conn_a().in_fast_recovery()) r.recovery_end = sim.now;
        return sim.b().rx_bytes == total && sim.conn_a().send_stream_acked() == total;
    });
    r.a = sim.conn_a().stats();
    r.rx_bytes = sim.b().rx_bytes;
    r.rx_mismatches = sim.b().rx_mismatches;
    r.sack_recovery_enabled = sim.conn_a().sack_recovery_enabled();
    return r;
}

const std::vector<std::uint64_t> kFourLosses = {100, 103, 106, 109};

TEST(TcpSackRecovery, RepairsSeveralLossesInOneRoundTrip) {
    const loss_run sack = run_losses(true, true, true, kFourLosses);
    const loss_run reno = run_losses(true, true, false, kFourLosses);
    ASSERT_TRUE(sack.sack_recovery_enabled);
    ASSERT_FALSE(reno.sack_recovery_enabled);
    for (const loss_run* r : {&sack, &reno}) {
        EXPECT_EQ(r->rx_bytes, 2'000'000u);
        EXPECT_EQ(r->rx_mismatches, 0u);
        EXPECT_EQ(r->a.retransmit_timeouts, 0u);
        EXPECT_EQ(r->a.fast_retransmits, 1u);           // one recovery episode
        EXPECT_EQ(r->a.bytes_retransmitted, 4 * kMss);  // exactly the lost segments, nothing spurious
        ASSERT_EQ(r->rexmit.size(), 4u);
        ASSERT_GT(r->recovery_end, r->recovery_start);
    }
    // NewReno learns of one hole per partial ACK: a round trip between retransmissions. With the
    // scoreboard every hole is retransmitted before the first retransmission is acknowledged.
    const std::uint64_t sack_spread = sack.rexmit.back() - sack.rexmit.front();
    const std::uint64_t reno_spread = reno.rexmit.back() - reno.rexmit.front();
    const std::uint64_t sack_recovery = sack.recovery_end - sack.recovery_start;
    const std::uint64_t reno_recovery = reno.recovery_end - reno.recovery_start;
    EXPECT_LT(sack_spread, sack_recovery);  // all repairs sent within the first round trip of recovery
    for (std::size_t k = 1; k < reno.rexmit.size(); ++k) {
        EXPECT_GE(reno.rexmit[k] - reno.rexmit[k - 1], 100 * kUs);  // at least the base RTT apart
    }
    EXPECT_GT(reno_spread, 3 * sack_spread);
    EXPECT_GT(reno_recovery, 2 * sack_recovery);
}

TEST(TcpSackRecovery, WithoutNegotiatedSackFallsBackToNewReno) {
    // B does not offer SACK: A's sack_recovery has no effect, the run is the NewReno one exactly.
    const loss_run on = run_losses(true, false, true, kFourLosses);
    const loss_run off = run_losses(true, false, false, kFourLosses);
    EXPECT_FALSE(on.sack_recovery_enabled);
    EXPECT_EQ(on.trace, off.trace);
    EXPECT_EQ(on.a.bytes_retransmitted, off.a.bytes_retransmitted);
    EXPECT_EQ(on.a.dupacks_received, off.a.dupacks_received);
    EXPECT_EQ(on.a.segments_sent, off.a.segments_sent);
    EXPECT_EQ(on.rexmit, off.rexmit);
    // A does not offer SACK either (sack_recovery without sack): the same.
    const loss_run only_flag = run_losses(false, true, true, kFourLosses);
    const loss_run neither = run_losses(false, true, false, kFourLosses);
    EXPECT_FALSE(only_flag.sack_recovery_enabled);
    EXPECT_EQ(only_flag.trace, neither.trace);
}

TEST(TcpSackRecovery, FlagOffKeepsNewRenoWithSackNegotiated) {
    // SACK negotiated but sack_recovery off: blocks are generated, the sender still runs NewReno
    // (one retransmission per round trip, as in TcpRecovery.NewRenoRepairsTwoLossesInOneWindow...).
    const loss_run r = run_losses(true, true, false, {100, 110});
    EXPECT_EQ(r.a.fast_retransmits, 1u);
    EXPECT_EQ(r.a.retransmit_timeouts, 0u);
    EXPECT_EQ(r.a.bytes_retransmitted, 2 * kMss);
    ASSERT_EQ(r.rexmit.size(), 2u);
    EXPECT_GE(r.rexmit[1] - r.rexmit[0], 100 * kUs);
}

TEST(TcpSackRecovery, LostRetransmissionTimesOutAndSkipsSackedData) {
    // Segment 100 is lost twice (original and its retransmission), 105 once. Recovery repairs 105,
    // the timeout repairs 100; after it nothing the peer SACKed is sent again.
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.sack = cb.sack = ca.sack_recovery = true;
    Sim sim(ca, cb);
    std::map<std::uint64_t, int> drops = {{100 * kMss, 2}, {105 * kMss, 1}};
    sim.drop = [&](int from, const sent_segment& s) {
        if (from != 0 || s.len == 0) return false;
        auto it = drops.find(s.stream_offset);
        if (it == drops.end() || it->second == 0) return false;
        --it->second;
        return true;
    };
    const std::uint64_t total = 1'000'000;
    sim.a().tx_total = total;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == total; }));
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    const tcp::stats& st = sim.conn_a().stats();
    EXPECT_EQ(st.fast_retransmits, 1u);
    EXPECT_EQ(st.retransmit_timeouts, 1u);
    EXPECT_EQ(st.bytes_retransmitted, 3 * kMss);  // 100 twice, 105 once
}

TEST(TcpSackRecovery, TailLossesRepairedByRescueRetransmissionWithoutTimeout) {
    // The last two segments of the transfer are lost along with one in the middle: nothing is
    // SACKed above them, so only the rescue retransmission (RFC 6675 NextSeg rule 4) and the SACK
    // it triggers find them before the timer would.
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.sack = cb.sack = ca.sack_recovery = true;
    Sim sim(ca, cb);
    std::set<std::uint64_t> pending = {150 * kMss, 198 * kMss, 199 * kMss};
    sim.drop = [&](int from, const sent_segment& s) {
        return from == 0 && s.len > 0 && pending.erase(s.stream_offset) > 0;
    };
    std::vector<std::uint64_t> rexmit;
    sim.a().on_transmit = [&](const sent_segment& s) {
        if (s.retransmission) rexmit.push_back(s.stream_offset / kMss);
    };
    const std::uint64_t total = 200 * kMss;
    sim.a().tx_total = total;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.conn_a().send_stream_acked() == total; }));
    EXPECT_EQ(sim.b().rx_bytes, total);
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    const tcp::stats& st = sim.conn_a().stats();
    EXPECT_EQ(st.retransmit_timeouts, 0u);
    EXPECT_EQ(st.fast_retransmits, 1u);
    EXPECT_EQ(st.bytes_retransmitted, 3 * kMss);
    EXPECT_EQ(rexmit, (std::vector<std::uint64_t>{150, 199, 198}));  // 199 by the rescue, 198 by rule 3
}

struct fpdus {
    std::mt19937_64 rng{7};
    std::size_t next() { return 16 + static_cast<std::size_t>(rng() % 700); }
};

// Random loss (both directions), FPDU-structured stream with one FPDU per segment: every byte
// arrives intact, and every data segment A sends (retransmissions included) starts and ends on an
// FPDU boundary.
TEST(TcpSackRecovery, RandomLossDeliversTheExactStreamOnFpduBoundaries) {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        SCOPED_TRACE(seed);
        tcp::config ca = Sim::config_a(), cb = Sim::config_b();
        ca.sack = cb.sack = ca.sack_recovery = true;
        ca.one_boundary_per_segment = true;
        net_config net;
        net.rate_bps = 10'000'000'000ULL;
        net.loss = 0.01 * static_cast<double>(seed);  // 1 % .. 6 %
        net.reorder = seed % 2 ? 0.0 : 0.01;
        Sim sim(ca, cb, net, seed);
        fpdus fpdus;
        fpdus.rng.seed(seed);
        std::set<std::uint64_t> ends = {0};
        std::uint64_t written = 0;
        sim.a().next_fpdu = [&] {
            const std::size_t n = fpdus.next();
            written += n;
            ends.insert(written);
            return n;
        };
        std::uint64_t misaligned = 0;
        sim.a().on_transmit = [&](const sent_segment& s) {
            if (s.len == 0 || s.len == 1) return;  // (a one-byte zero-window probe may split)
            if (!ends.count(s.stream_offset) || !ends.count(s.stream_offset + s.len)) ++misaligned;
        };
        const std::uint64_t total = 1'000'000;
        ends.insert(total);  // the last FPDU is cut at the end of the stream
        sim.a().tx_total = total;
        sim.open();
        ASSERT_TRUE(sim.run(600 * kSec,
                            [&] { return sim.b().rx_bytes == total && sim.conn_a().send_stream_acked() == total; }));
        EXPECT_TRUE(sim.conn_a().sack_recovery_enabled());
        EXPECT_EQ(sim.b().rx_mismatches, 0u);
        EXPECT_TRUE(sim.a().acked_monotonic);
        EXPECT_EQ(misaligned, 0u);
        EXPECT_GT(sim.conn_a().stats().fast_retransmits, 0u);
        EXPECT_GT(sim.conn_a().stats().bytes_retransmitted, 0u);
    }
}

// Bulk transfer with random loss, plain segments: integrity, and SACK recovery needs no more
// timeouts than NewReno on the same loss pattern (same seed).
TEST(TcpSackRecovery, RandomLossIntegrityAndFewerTimeoutsThanNewReno) {
    std::uint64_t rto_sack = 0, rto_reno = 0;
    for (std::uint64_t seed = 11; seed <= 16; ++seed) {
        for (bool on : {true, false}) {
            SCOPED_TRACE(seed * 10 + (on ? 1 : 0));
            tcp::config ca = Sim::config_a(), cb = Sim::config_b();
            ca.sack = cb.sack = true;
            ca.sack_recovery = on;
            net_config net;
            net.rate_bps = 1'000'000'000;
            net.loss = 0.03;
            net.duplicate = 0.01;
            Sim sim(ca, cb, net, seed);
            const std::uint64_t total = 3'000'000;
            sim.a().tx_total = total;
            sim.open();
            ASSERT_TRUE(sim.run(
                600 * kSec, [&] { return sim.b().rx_bytes == total && sim.conn_a().send_stream_acked() == total; }));
            EXPECT_EQ(sim.b().rx_mismatches, 0u);
            EXPECT_EQ(sim.conn_a().sack_scoreboard_blocks(), 0u);
            (on ? rto_sack : rto_reno) += sim.conn_a().stats().retransmit_timeouts;
        }
    }
    EXPECT_LE(rto_sack, rto_reno);
}

}  // namespace
}  // namespace tcptest
