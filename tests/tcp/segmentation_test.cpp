// Segmentation: MSS-sized segments, and FPDU-aligned segments when the owner marks FPDU boundaries
// (RFC 5044 §5), also across retransmissions.
#include <algorithm>
#include <set>

#include "harness.h"

namespace tcptest {
namespace {

constexpr std::uint32_t kMss = 1460;

std::vector<recorder::tx> data_of(const recorder& r) {
    std::vector<recorder::tx> v;
    for (const recorder::tx& t : r.sent) {
        if (t.len > 0) v.push_back(t);
    }
    return v;
}

TEST(TcpSegmentation, FullSizedSegmentsWithoutBoundaries) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.a().tx_total = 1'000'000;
    sim.a().chunk = 3000;  // the application writes odd-sized chunks
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == 1'000'000; }));
    std::size_t small = 0;
    for (const sent_segment& s : sim.a().sent) {
        if (s.len > 0 && s.len != kMss) ++small;
        EXPECT_LE(s.len, kMss);
    }
    // Segments shorter than the MSS only where all queued data fit (end of a write burst).
    EXPECT_LT(small, sim.a().data_segments() / 10);
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
}

TEST(TcpSegmentation, ThousandByteFpdusEachGetTheirOwnSegment) {
    for (double loss : {0.0, 0.02}) {
        SCOPED_TRACE(loss);
        net_config net;
        net.loss = loss;
        net.rate_bps = 1'000'000'000;
        tcp::config ca = Sim::config_a(), cb = Sim::config_b();
        ca.sack = cb.sack = true;
        Sim sim(ca, cb, net, 3);
        sim.a().next_fpdu = [] { return std::size_t{1000}; };
        sim.a().tx_total = 1'000'000;
        sim.open();
        ASSERT_TRUE(sim.run(300 * kSec, [&] { return sim.b().rx_bytes == 1'000'000; }));
        EXPECT_EQ(sim.b().rx_mismatches, 0u);
        std::size_t bad = 0, rexmits = 0;
        for (const sent_segment& s : sim.a().sent) {
            if (s.len == 0) continue;
            if (s.len != 1000 || s.stream_offset % 1000 != 0) ++bad;
            rexmits += s.retransmission ? 1 : 0;
        }
        EXPECT_EQ(bad, 0u);
        if (loss > 0) {
            EXPECT_GT(rexmits, 0u);  // retransmissions are aligned too
        }
    }
}

TEST(TcpSegmentation, SmallFpdusArePackedWholeIntoSegments) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.a().next_fpdu = [] { return std::size_t{300}; };
    sim.a().tx_total = 600'000;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == 600'000; }));
    std::size_t full = 0;
    for (const sent_segment& s : sim.a().sent) {
        if (s.len == 0) continue;
        EXPECT_EQ(s.stream_offset % 300, 0u);
        EXPECT_EQ(s.len % 300, 0u);
        EXPECT_LE(s.len, kMss);
        full += s.len == 1200 ? 1 : 0;
    }
    EXPECT_GT(full, sim.a().data_segments() * 9 / 10);
}

TEST(TcpSegmentation, OneBoundaryPerSegmentSendsEachSmallFpduAlone) {
    // With markers, MPA sends one FPDU per segment (RFC 5044 App. A; Wireshark needs it too).
    for (double loss : {0.0, 0.02}) {
        SCOPED_TRACE(loss);
        net_config net;
        net.loss = loss;
        tcp::config ca = Sim::config_a(), cb = Sim::config_b();
        ca.one_boundary_per_segment = true;
        Sim sim(ca, cb, net, 5);
        sim.a().next_fpdu = [] { return std::size_t{300}; };
        sim.a().tx_total = 300'000;
        sim.open();
        ASSERT_TRUE(sim.run(300 * kSec, [&] { return sim.b().rx_bytes == 300'000; }));
        EXPECT_EQ(sim.b().rx_mismatches, 0u);
        std::size_t bad = 0;
        for (const sent_segment& s : sim.a().sent) {
            if (s.len == 0) continue;
            if (s.len != 300 || s.stream_offset % 300 != 0) ++bad;
        }
        EXPECT_EQ(bad, 0u);
    }
}

TEST(TcpSegmentation, VariableFpdusEndSegmentsAtTheLastFittingBoundary) {
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<std::size_t> size_dist(50, 4000);
    std::vector<std::size_t> sizes;
    std::set<std::uint64_t> ends;
    std::uint64_t total = 0;
    while (total < 2'000'000) {
        sizes.push_back(size_dist(rng));
        total += sizes.back();
        ends.insert(total);
    }
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    ca.sack = cb.sack = true;
    net_config net;
    net.loss = 0.01;
    Sim sim(ca, cb, net, 9);
    std::size_t next = 0;
    sim.a().next_fpdu = [&] { return sizes[next++]; };
    sim.a().tx_total = total;
    std::size_t violations = 0, last_fitting = 0, with_boundary = 0, filled = 0;
    sim.a().on_transmit = [&](const sent_segment& s) {
        if (s.len == 0) return;
        const std::uint64_t start = s.stream_offset, end = start + s.len;
        const std::uint64_t queued = sim.conn_a().send_stream_queued();
        // Boundaries the connection knows about: marked ends, plus the end of the queued data.
        auto it = ends.upper_bound(std::min<std::uint64_t>(start + kMss, queued));
        std::uint64_t best = 0;
        if (it != ends.begin()) best = *std::prev(it);
        if (best <= start) best = 0;
        const bool at_boundary = ends.count(end) > 0 || end == queued;
        if (best == 0) {
            if (s.len != kMss && end != queued) ++violations;  // big FPDU: filled to the MSS
            ++filled;
        } else {
            ++with_boundary;
            if (!at_boundary) ++violations;
            if (end == best) ++last_fitting;
        }
    };
    sim.open();
    ASSERT_TRUE(sim.run(300 * kSec, [&] { return sim.b().rx_bytes == total; }));
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    EXPECT_EQ(violations, 0u);
    EXPECT_GT(filled, 100u);
    EXPECT_GT(with_boundary, 100u);
    EXPECT_GT(last_fitting, with_boundary * 95 / 100);  // fewer only where the peer window cut
    EXPECT_GT(sim.conn_a().stats().bytes_retransmitted, 0u);
}

TEST(TcpSegmentation, SmallReceiveWindowKeepsFpdusWhole) {
    tcp::config cb = Sim::config_b();
    cb.receive_buffer = 4000;
    cb.window_scaling = false;
    Sim sim(Sim::config_a(), cb);
    sim.a().next_fpdu = [] { return std::size_t{1000}; };
    sim.a().tx_total = 300'000;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.b().rx_bytes == 300'000; }));
    for (const sent_segment& s : sim.a().sent) {
        if (s.len == 0) continue;
        EXPECT_EQ(s.len, 1000u);
        EXPECT_EQ(s.stream_offset % 1000, 0u);
    }
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
}

TEST(TcpSegmentation, BoundariesMarkedBeforeTheDataArrive) {
    recorder r;
    tcp::connection c(Sim::config_a(), r);
    establish(c, r);
    c.mark_boundary(500);
    c.mark_boundary(1000);
    c.mark_boundary(900);  // not increasing: ignored
    c.mark_boundary(1500);
    c.on_send_data(20, 1500);
    const auto d = data_of(r);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].stream_offset, 0u);
    EXPECT_EQ(d[0].len, 1000u);  // last boundary within the MSS
    EXPECT_EQ(d[1].stream_offset, 1000u);
    EXPECT_EQ(d[1].len, 500u);
    EXPECT_TRUE(has(d[1].h, tf::kPsh));
    EXPECT_EQ(d[0].h.seq, c.iss() + 1);
    EXPECT_EQ(d[1].h.seq, c.iss() + 1001);
}

TEST(TcpSegmentation, LargeFpduFillsSegmentsThenEndsAtItsBoundary) {
    recorder r;
    tcp::connection c(Sim::config_a(), r);
    establish(c, r);
    c.on_send_data(20, 4000);
    c.mark_boundary(4000);
    c.on_send_data(20, 300);
    c.mark_boundary(4300);
    c.on_send_data(20, 2000);
    c.mark_boundary(6300);
    const auto d = data_of(r);
    // 4000 went out at once as 1460 + 1460 + 1080; the 300 and 2000 FPDUs follow.
    ASSERT_EQ(d.size(), 6u);
    EXPECT_EQ(d[0].len, 1460u);
    EXPECT_EQ(d[1].len, 1460u);
    EXPECT_EQ(d[2].len, 1080u);
    EXPECT_EQ(d[3].len, 300u);
    EXPECT_EQ(d[4].len, 1460u);
    EXPECT_EQ(d[5].len, 540u);
}

TEST(TcpSegmentation, WindowLimitedSegmentEndsAtABoundaryInsideTheWindow) {
    recorder r;
    tcp::connection c(Sim::config_a(), r);
    establish(c, r, 20);  // peer window 20 << 7 = 2560 bytes
    ASSERT_EQ(c.send_window(), 2560u);
    for (std::uint64_t end = 700; end <= 7000; end += 700) c.mark_boundary(end);
    c.on_send_data(20, 7000);
    auto d = data_of(r);
    // 1400 (two FPDUs) then 700 more fit in 2560; the next FPDU would cross the window edge.
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].len, 1400u);
    EXPECT_EQ(d[1].len, 700u);
    // ACK of everything, window still 2560: continue with whole FPDUs.
    c.on_segment(30, make_header(2000, 1000, 5001, c.iss() + 1 + 2100, tf::kAck, 20), nullptr, 0);
    d = data_of(r);
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(d[2].stream_offset, 2100u);
    EXPECT_EQ(d[2].len, 1400u);
    EXPECT_EQ(d[3].len, 700u);
}

TEST(TcpSegmentation, TinyWindowWithNothingInFlightSplitsRatherThanStall) {
    recorder r;
    tcp::connection c(Sim::config_a(), r);
    establish(c, r, 4);  // 512 bytes
    c.on_send_data(20, 1000);
    c.mark_boundary(1000);
    const auto d = data_of(r);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].len, 512u);
}

}  // namespace
}  // namespace tcptest
