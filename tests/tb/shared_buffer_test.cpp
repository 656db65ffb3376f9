// The switch's shared buffer called directly (no kernel): the Dynamic Threshold rule at its exact
// limit, buffer-full, ECN congestion, PFC XOFF/XON and headroom, the interval-maximum trace; and the
// protocol helpers it leans on (CE marking with the incremental checksum, PFC frames).
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "proto/net.h"
#include "switch/shared_buffer.h"
#include "dt_rule.h"

namespace rnic::test {
namespace {

namespace net = proto::net;
using verdict = shared_buffer::verdict;
using part = shared_buffer::part;
using pfc_signal = shared_buffer::pfc_signal;

shared_buffer_config config(int ports, std::uint64_t bytes, double alpha) {
    shared_buffer_config c;
    c.ports = ports;
    c.buffer_bytes = bytes;
    c.alpha = alpha;
    return c;
}

TEST(SharedBuffer, DynamicThresholdAdmitsUpToTheLimitAndDropsTheNext) {
    // B = 9000, alpha = 1, L = 1000: the 5th frame meets the limit with equality
    // (q = 4000: 4000 + 1000 <= 1 * (9000 - 4000)) and is admitted; the 6th is not.
    shared_buffer buf(config(4, 9000, 1.0));
    ASSERT_EQ(dt_capacity(9000, 1.0, 1000), 5);
    for (int i = 0; i < 5; ++i) {
        const auto a = buf.admit(0, 2, 1000);
        EXPECT_TRUE(a.admitted()) << "frame " << i;
        EXPECT_EQ(a.charged, part::shared);
    }
    EXPECT_EQ(buf.queue_bytes(2), 5000u);
    EXPECT_EQ(buf.admit(0, 2, 1000).result, verdict::dt_threshold);
    EXPECT_EQ(buf.queue_bytes(2), 5000u);
    EXPECT_EQ(buf.ingress_bytes(0), 5000u);
    // The limit is now 1 * (9000 - 5000) = 4000, below the 5000 queued: not even a short frame fits.
    EXPECT_EQ(buf.admit(1, 2, 60).result, verdict::dt_threshold);
    // Another queue shares what is left, and its limit shrinks as it fills:
    // q3 + 1000 <= 9000 - 5000 - q3 <=> q3 <= 1500: two frames.
    EXPECT_TRUE(buf.admit(1, 3, 1000).admitted());
    EXPECT_TRUE(buf.admit(1, 3, 1000).admitted());
    EXPECT_EQ(buf.admit(1, 3, 1000).result, verdict::dt_threshold);
    EXPECT_EQ(buf.total_used(), 7000u);
    EXPECT_EQ(buf.total_peak(), 7000u);
}

TEST(SharedBuffer, AlphaScalesTheThreshold) {
    for (const double alpha : {0.25, 0.5, 1.0, 2.0, 4.0, 8.0}) {
        shared_buffer buf(config(2, 9000, alpha));
        const int expected = dt_capacity(9000, alpha, 1000);
        int admitted = 0;
        while (buf.admit(0, 1, 1000).admitted()) ++admitted;
        EXPECT_EQ(admitted, expected) << "alpha " << alpha;
    }
    // The fixed point alpha / (1 + alpha) * B with frames of 1 byte.
    shared_buffer buf(config(2, 9000, 2.0));
    int n = 0;
    while (buf.admit(0, 1, 1).admitted()) ++n;
    EXPECT_EQ(n, 6000);  // q + 1 <= 2 * (9000 - q) <=> q <= 5999.67
}

TEST(SharedBuffer, BufferFullWhenTheThresholdWouldAllowMore) {
    // With a large alpha the threshold is loose, and the buffer's size is the limit.
    shared_buffer buf(config(2, 5000, 64.0));
    for (int i = 0; i < 9; ++i) ASSERT_TRUE(buf.admit(0, 0, 500).admitted());  // 4500 in queue 0
    // Queue 1 is empty: 0 + 1000 <= 64 * 500, but 4500 + 1000 > 5000.
    EXPECT_EQ(buf.admit(0, 1, 1000).result, verdict::buffer_full);
    EXPECT_TRUE(buf.admit(0, 1, 500).admitted());  // exactly full
    EXPECT_EQ(buf.total_used(), 5000u);
    EXPECT_EQ(buf.admit(0, 1, 1).result, verdict::dt_threshold);  // alpha * 0 = 0
}

TEST(SharedBuffer, ReleaseGivesTheBytesBackAndTracksPeaks) {
    shared_buffer buf(config(3, 9000, 1.0));
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(buf.admit(i % 2, 2, 1000).admitted());
    EXPECT_EQ(buf.ingress_bytes(0), 3000u);
    EXPECT_EQ(buf.ingress_bytes(1), 2000u);
    EXPECT_FALSE(buf.admit(0, 2, 1000).admitted());
    EXPECT_EQ(buf.release(0, 2, 1000, part::shared), pfc_signal::none);  // PFC off: never a signal
    EXPECT_EQ(buf.queue_bytes(2), 4000u);
    EXPECT_EQ(buf.ingress_bytes(0), 2000u);
    EXPECT_TRUE(buf.admit(0, 2, 1000).admitted());  // 4000 + 1000 <= 9000 - 4000
    for (int i = 0; i < 5; ++i) buf.release(i % 2, 2, 1000, part::shared);
    EXPECT_EQ(buf.total_used(), 0u);
    EXPECT_EQ(buf.shared_used(), 0u);
    EXPECT_EQ(buf.queue_peak(2), 5000u);
    EXPECT_EQ(buf.ingress_peak(0), 3000u);
    EXPECT_EQ(buf.ingress_peak(1), 2000u);
    EXPECT_EQ(buf.total_peak(), 5000u);
}

TEST(SharedBuffer, EcnCongestionIsJudgedOnTheQueueBeforeTheFrame) {
    shared_buffer_config c = config(2, 100000, 1.0);
    c.ecn = true;
    c.ecn_threshold = 2000;
    shared_buffer buf(c);
    // Queue before each frame: 0, 1000, 2000, 3000.
    EXPECT_FALSE(buf.admit(0, 1, 1000).ecn_congested);
    EXPECT_FALSE(buf.admit(0, 1, 1000).ecn_congested);
    EXPECT_TRUE(buf.admit(0, 1, 1000).ecn_congested);
    EXPECT_TRUE(buf.admit(0, 1, 1000).ecn_congested);
    EXPECT_FALSE(buf.admit(0, 0, 1000).ecn_congested);  // per output queue
    buf.release(0, 1, 1000, part::shared);
    buf.release(0, 1, 1000, part::shared);
    EXPECT_TRUE(buf.admit(0, 1, 1000).ecn_congested);  // 2000 queued: at the threshold
    buf.release(0, 1, 1000, part::shared);
    buf.release(0, 1, 1000, part::shared);
    EXPECT_FALSE(buf.admit(0, 1, 1000).ecn_congested);  // 1000 queued
}

TEST(SharedBuffer, EcnOffNeverMarks) {
    shared_buffer buf(config(2, 100000, 1.0));
    for (int i = 0; i < 20; ++i) EXPECT_FALSE(buf.admit(0, 1, 1000).ecn_congested);
}

TEST(SharedBuffer, PfcPausesAboveXoffAndResumesAtXon) {
    shared_buffer_config c = config(3, 100000, 1.0);
    c.pfc = true;
    c.pfc_xoff = 3000;
    c.pfc_xon = 1000;
    c.pfc_headroom = 2000;
    shared_buffer buf(c);
    EXPECT_EQ(buf.shared_capacity(), 100000u - 3 * 2000);
    for (int cycle = 0; cycle < 2; ++cycle) {
        EXPECT_EQ(buf.admit(0, 2, 1000).pfc, pfc_signal::none);
        EXPECT_EQ(buf.admit(0, 2, 1000).pfc, pfc_signal::none);
        EXPECT_EQ(buf.admit(0, 2, 1000).pfc, pfc_signal::none);  // 3000 is not above xoff
        EXPECT_FALSE(buf.paused(0));
        EXPECT_EQ(buf.admit(0, 2, 1000).pfc, pfc_signal::xoff);  // 4000 > 3000
        EXPECT_TRUE(buf.paused(0));
        EXPECT_EQ(buf.admit(0, 2, 1000).pfc, pfc_signal::none);  // already paused
        EXPECT_EQ(buf.admit(1, 2, 1000).pfc, pfc_signal::none);  // another ingress port
        EXPECT_FALSE(buf.paused(1));
        EXPECT_EQ(buf.release(0, 2, 1000, part::shared), pfc_signal::none);  // 4000
        EXPECT_EQ(buf.release(0, 2, 1000, part::shared), pfc_signal::none);  // 3000
        EXPECT_EQ(buf.release(0, 2, 1000, part::shared), pfc_signal::none);  // 2000
        EXPECT_EQ(buf.release(0, 2, 1000, part::shared), pfc_signal::xon);   // 1000 <= xon
        EXPECT_FALSE(buf.paused(0));
        EXPECT_EQ(buf.release(0, 2, 1000, part::shared), pfc_signal::none);
        EXPECT_EQ(buf.release(1, 2, 1000, part::shared), pfc_signal::none);
        EXPECT_EQ(buf.total_used(), 0u);
    }
}

TEST(SharedBuffer, PfcHeadroomAbsorbsWhatTheSharedPartRefuses) {
    // B = 10000, two ports with 2000 bytes of headroom each: S = 6000. DT on the shared part:
    // q + 1000 <= 6000 - q -> three frames; then ingress 0's headroom takes two more.
    shared_buffer_config c = config(2, 10000, 1.0);
    c.pfc = true;
    c.pfc_xoff = 50000;  // never reached: the headroom is what pauses here
    c.pfc_xon = 0;
    c.pfc_headroom = 2000;
    shared_buffer buf(c);
    ASSERT_EQ(buf.shared_capacity(), 6000u);
    for (int i = 0; i < 3; ++i) {
        const auto a = buf.admit(0, 1, 1000);
        ASSERT_TRUE(a.admitted());
        EXPECT_EQ(a.charged, part::shared);
        EXPECT_EQ(a.pfc, pfc_signal::none);
    }
    auto a = buf.admit(0, 1, 1000);
    ASSERT_TRUE(a.admitted());
    EXPECT_EQ(a.charged, part::headroom);
    EXPECT_EQ(a.pfc, pfc_signal::xoff);  // using the headroom pauses the sender
    a = buf.admit(0, 1, 1000);
    ASSERT_TRUE(a.admitted());
    EXPECT_EQ(a.charged, part::headroom);
    EXPECT_EQ(buf.admit(0, 1, 1000).result, verdict::headroom_full);
    EXPECT_EQ(buf.queue_bytes(1), 5000u);
    EXPECT_EQ(buf.queue_shared_bytes(1), 3000u);
    EXPECT_EQ(buf.ingress_headroom_bytes(0), 2000u);
    EXPECT_EQ(buf.shared_used(), 3000u);
    EXPECT_EQ(buf.total_used(), 5000u);
    // Ingress 1 has its own headroom: the shared part refuses (3000 + 1000 > 6000 - 3000).
    a = buf.admit(1, 1, 1000);
    ASSERT_TRUE(a.admitted());
    EXPECT_EQ(a.charged, part::headroom);
    EXPECT_EQ(a.pfc, pfc_signal::xoff);
    // A headroom frame gives its bytes back to the headroom.
    EXPECT_EQ(buf.release(0, 1, 1000, part::headroom), pfc_signal::none);
    EXPECT_EQ(buf.ingress_headroom_bytes(0), 1000u);
    EXPECT_EQ(buf.shared_used(), 3000u);
    EXPECT_TRUE(buf.admit(0, 1, 1000).admitted());
}

TEST(SharedBuffer, PfcResumesOnlyOnceTheHeadroomHasDrained) {
    // The shared part refuses ingress 0's fourth frame (the egress threshold), which pauses it with
    // ingress 0 far below xon; the resume waits until that headroom frame has left as well.
    shared_buffer_config c = config(2, 10000, 1.0);
    c.pfc = true;
    c.pfc_xoff = 50000;
    c.pfc_xon = 3000;
    c.pfc_headroom = 2000;
    shared_buffer buf(c);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(buf.admit(0, 1, 1000).charged, part::shared);
    const auto a = buf.admit(0, 1, 1000);
    ASSERT_EQ(a.charged, part::headroom);
    ASSERT_EQ(a.pfc, pfc_signal::xoff);
    // 3000, then 2000 and 1000 bytes of ingress 0 left: below xon, but the headroom still holds 1000.
    EXPECT_EQ(buf.release(0, 1, 1000, part::shared), pfc_signal::none);
    EXPECT_EQ(buf.release(0, 1, 1000, part::shared), pfc_signal::none);
    EXPECT_EQ(buf.release(0, 1, 1000, part::shared), pfc_signal::none);
    EXPECT_EQ(buf.ingress_headroom_bytes(0), 1000u);
    EXPECT_EQ(buf.release(0, 1, 1000, part::headroom), pfc_signal::xon);
    EXPECT_EQ(buf.ingress_headroom_bytes(0), 0u);
}

TEST(SharedBuffer, PfcRefusedByAFullHeadroomStillPauses) {
    shared_buffer_config c = config(2, 10000, 1.0);
    c.pfc = true;
    c.pfc_xoff = 50000;
    c.pfc_headroom = 500;  // smaller than a frame
    shared_buffer buf(c);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(buf.admit(0, 1, 1000).admitted());  // S = 9000: q <= 4000
    const auto a = buf.admit(0, 1, 1000);
    EXPECT_EQ(a.result, verdict::headroom_full);
    EXPECT_EQ(a.pfc, pfc_signal::xoff);
}

TEST(SharedBuffer, InconsistentConfigurationsAreRefused) {
    EXPECT_THROW(shared_buffer(config(0, 1000, 1.0)), std::invalid_argument);
    EXPECT_THROW(shared_buffer(config(2, 0, 1.0)), std::invalid_argument);
    EXPECT_THROW(shared_buffer(config(2, 1000, 0.0)), std::invalid_argument);
    shared_buffer_config c = config(4, 8000, 1.0);
    c.pfc = true;
    c.pfc_xoff = 1000;
    c.pfc_xon = 2000;
    EXPECT_THROW(shared_buffer{c}, std::invalid_argument);
    c.pfc_xon = 500;
    c.pfc_headroom = 2000;  // 4 * 2000 = 8000: nothing left to share
    EXPECT_THROW(shared_buffer{c}, std::invalid_argument);
    c.pfc_headroom = 1999;
    EXPECT_EQ(shared_buffer{c}.shared_capacity(), 4u);
}

TEST(SharedBuffer, IntervalMaxTraceKeepsTheMaximumOfEachInterval) {
    interval_max_trace t(1000);
    t.set(0, 3000);     // [0, 1000): 3000
    t.set(1500, 2000);  // [1000, 2000): 3000 until 1500
    t.set(2200, 1000);  // [2000, 3000): 2000 until 2200
    t.set(2900, 0);
    EXPECT_EQ(t.maxima(4500), (std::vector<std::uint64_t>{3000, 3000, 2000, 0, 0}));
    EXPECT_EQ(t.maxima(2950), (std::vector<std::uint64_t>{3000, 3000, 2000}));
    // A change exactly at a boundary belongs to the new interval only; a value held for no time counts.
    interval_max_trace u(1000);
    u.set(100, 500);
    u.set(1000, 200);
    u.set(1000, 900);
    u.set(1000, 100);
    EXPECT_EQ(u.maxima(1000), (std::vector<std::uint64_t>{500, 900}));
    EXPECT_EQ(u.maxima(2000), (std::vector<std::uint64_t>{500, 900, 100}));
    EXPECT_TRUE(interval_max_trace(0).maxima(5000).empty());
}

std::vector<std::uint8_t> tcp_frame(std::uint8_t tos) {
    net::endpoints ep;
    ep.src_mac = {2, 0, 0, 0, 0, 1};
    ep.dst_mac = {2, 0, 0, 0, 0, 2};
    ep.src_ip = 0x0a000001;
    ep.dst_ip = 0x0a000002;
    net::ipv4_header ip;
    ip.dscp_ecn = tos;
    ip.identification = 0x1234;
    net::tcp_header h;
    h.src_port = 40000;
    h.dst_port = 4791;
    h.seq = 1;
    h.flags = net::tcp_flags::kAck;
    h.window = 100;
    const std::vector<std::uint8_t> payload(100, 0x5a);
    std::vector<std::uint8_t> out;
    net::build_tcp_frame(ep, ip, h, payload.data(), payload.size(), out);
    return out;
}

TEST(SharedBuffer, CeMarkingSetsCeAndKeepsTheIpv4ChecksumValid) {
    for (const std::uint8_t dscp : {0x00, 0xb8}) {  // best effort, EF
        for (const std::uint8_t ect : {net::ecn::kEct0, net::ecn::kEct1}) {
            std::vector<std::uint8_t> f = tcp_frame(static_cast<std::uint8_t>(dscp | ect));
            ASSERT_EQ(net::mark_ecn_ce(f.data(), f.size()), net::ecn_mark::marked);
            std::string error;
            const auto parsed = net::parse_tcp_frame(f.data(), f.size(), &error);
            ASSERT_TRUE(parsed) << error;
            EXPECT_EQ(parsed->ip.dscp_ecn, dscp | net::ecn::kCe);
            EXPECT_EQ(f, tcp_frame(static_cast<std::uint8_t>(dscp | net::ecn::kCe)));  // as if built with CE
        }
    }
    std::vector<std::uint8_t> not_ect = tcp_frame(0xb8);
    const std::vector<std::uint8_t> before = not_ect;
    EXPECT_EQ(net::mark_ecn_ce(not_ect.data(), not_ect.size()), net::ecn_mark::not_ect);
    EXPECT_EQ(not_ect, before);
    std::vector<std::uint8_t> ce = tcp_frame(net::ecn::kCe);
    const std::vector<std::uint8_t> ce_before = ce;
    EXPECT_EQ(net::mark_ecn_ce(ce.data(), ce.size()), net::ecn_mark::already_ce);
    EXPECT_EQ(ce, ce_before);
}

TEST(SharedBuffer, CeMarkingLeavesOtherFramesAlone) {
    std::vector<std::uint8_t> arp = net::build_arp_request({2, 0, 0, 0, 0, 1}, 0x0a000001, 0x0a000002);
    const std::vector<std::uint8_t> arp_before = arp;
    EXPECT_EQ(net::mark_ecn_ce(arp.data(), arp.size()), net::ecn_mark::not_ipv4);
    EXPECT_EQ(arp, arp_before);
    std::vector<std::uint8_t> f = tcp_frame(net::ecn::kEct0);
    EXPECT_EQ(net::mark_ecn_ce(f.data(), 33), net::ecn_mark::not_ipv4);  // header cut short
    f[14] = 0x46;                                                        // IHL 6 words...
    EXPECT_EQ(net::mark_ecn_ce(f.data(), 37), net::ecn_mark::not_ipv4);  // ...beyond the frame
    f[14] = 0x65;                                                        // version 6
    EXPECT_EQ(net::mark_ecn_ce(f.data(), f.size()), net::ecn_mark::not_ipv4);
    EXPECT_EQ(net::mark_ecn_ce(f.data(), 0), net::ecn_mark::not_ipv4);
    // A header whose checksum was wrong stays wrong (incremental update, RFC 1624).
    std::vector<std::uint8_t> bad = tcp_frame(net::ecn::kEct0);
    bad[24] ^= 0x01;
    ASSERT_EQ(net::mark_ecn_ce(bad.data(), bad.size()), net::ecn_mark::marked);
    EXPECT_FALSE(net::parse_tcp_frame(bad.data(), bad.size(), nullptr));
}

TEST(SharedBuffer, PfcFramesRoundTrip) {
    net::pfc_frame p;
    p.class_enable = 0x01;
    p.quanta[0] = net::kPfcMaxQuanta;
    const std::vector<std::uint8_t> f = net::build_pfc_frame({2, 0, 0, 0, 0xfe, 3}, p);
    ASSERT_EQ(f.size(), 60u);
    const std::vector<std::uint8_t> head{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0xfe,
                                         0x03, 0x88, 0x08, 0x01, 0x01, 0x00, 0x01, 0xff, 0xff, 0x00, 0x00};
    EXPECT_TRUE(std::equal(head.begin(), head.end(), f.begin()));
    EXPECT_EQ(net::mac_control_opcode(f.data(), f.size()), net::kMacControlPfc);
    const auto parsed = net::parse_pfc_frame(f.data(), f.size(), nullptr);
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->class_enable, 0x01);
    EXPECT_EQ(parsed->quanta, p.quanta);

    proto::parse_error code = proto::parse_error::none;
    std::string error;
    EXPECT_FALSE(net::parse_pfc_frame(f.data(), 33, &error, &code));
    EXPECT_EQ(code, proto::parse_error::short_input);
    std::vector<std::uint8_t> pause = f;
    pause[14] = 0x00;  // opcode 0x0001: 802.3 PAUSE
    pause[15] = 0x01;
    EXPECT_FALSE(net::parse_pfc_frame(pause.data(), pause.size(), &error, &code));
    EXPECT_EQ(code, proto::parse_error::unsupported);
    EXPECT_EQ(net::mac_control_opcode(pause.data(), pause.size()), net::kMacControlPause);
    std::vector<std::uint8_t> ip = f;
    ip[12] = 0x08;
    ip[13] = 0x00;
    EXPECT_FALSE(net::mac_control_opcode(ip.data(), ip.size()));
    EXPECT_FALSE(net::parse_pfc_frame(ip.data(), ip.size(), &error, &code));
    EXPECT_EQ(code, proto::parse_error::unsupported);
}

}  // namespace
}  // namespace rnic::test
