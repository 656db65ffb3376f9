// The link's fault injector, called directly (no kernel): rates, determinism, traces, and that
// corrupted and re-segmented frames are what they claim to be.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "link/fault_injector.h"
#include "proto/net.h"

namespace rnic::test {
namespace {

namespace net = proto::net;

std::vector<std::uint8_t> tcp_frame(std::size_t payload_len, std::uint32_t seq = 1000) {
    net::endpoints ep;
    ep.src_mac = {2, 0, 0, 0, 0, 1};
    ep.dst_mac = {2, 0, 0, 0, 0, 2};
    ep.src_ip = 0x0a000001;
    ep.dst_ip = 0x0a000002;
    net::tcp_header h;
    h.src_port = 40000;
    h.dst_port = 18515;
    h.seq = seq;
    h.ack = 7;
    h.flags = net::tcp_flags::kAck | net::tcp_flags::kPsh;
    h.window = 1000;
    std::vector<std::uint8_t> payload(payload_len);
    for (std::size_t i = 0; i < payload_len; ++i) payload[i] = static_cast<std::uint8_t>(i * 31 + 7);
    std::vector<std::uint8_t> out;
    net::build_tcp_frame(ep, net::ipv4_header{}, h, payload.data(), payload.size(), out);
    return out;
}

TEST(FaultInjector, RandomLossHitsItsRateAndRepeatsForTheSameSeed) {
    fault_config cfg;
    cfg.loss = 0.02;
    fault_injector a(cfg, 42), b(cfg, 42), c(cfg, 43);
    int lost = 0, same = 0, differs = 0;
    for (int i = 0; i < 100000; ++i) {
        const bool la = a.apply({1, 2, 3}).dropped != fault_injector::cause::none;
        const bool lb = b.apply({1, 2, 3}).dropped != fault_injector::cause::none;
        const bool lc = c.apply({1, 2, 3}).dropped != fault_injector::cause::none;
        lost += la;
        same += la == lb;
        differs += la != lc;
    }
    EXPECT_NEAR(lost / 100000.0, 0.02, 0.002);
    EXPECT_EQ(same, 100000);
    EXPECT_GT(differs, 0);
    EXPECT_EQ(a.stats().dropped_random, static_cast<std::uint64_t>(lost));
}

// With no fault configured the injector is inert (a link skips apply() for it): apply() then hands
// every frame back unchanged and alone; any configured fault makes it live.
TEST(FaultInjector, InertOnlyWithoutFaultsAndThenAppliesNothing) {
    fault_injector none(fault_config{}, 5);
    EXPECT_TRUE(none.inert());
    const std::vector<std::uint8_t> frame = tcp_frame(100);
    for (int i = 0; i < 1000; ++i) {
        const fault_injector::outcome o = none.apply(frame);
        ASSERT_EQ(o.dropped, fault_injector::cause::none);
        ASSERT_FALSE(o.corrupted || o.duplicated);
        ASSERT_EQ(o.extra_delay_ps, 0u);
        ASSERT_EQ(o.frames.size(), 1u);
        ASSERT_EQ(o.frames.front(), frame);
    }
    none.pass();
    EXPECT_EQ(none.stats().frames, 1001u);
    for (int k = 0; k < 7; ++k) {
        fault_config cfg;
        switch (k) {
        case 0:
            cfg.loss = 0.1;
            break;
        case 1:
            cfg.ge_good_to_bad = 0.1;
            break;
        case 2:
            cfg.trace_drops = {3};
            break;
        case 3:
            cfg.reorder = 0.1;
            break;
        case 4:
            cfg.duplicate = 0.1;
            break;
        case 5:
            cfg.corrupt = 0.1;
            break;
        default:
            cfg.resegment = 0.1;
            break;
        }
        EXPECT_FALSE(fault_injector(cfg, 5).inert()) << "fault " << k;
    }
}

TEST(FaultInjector, GilbertElliottLossComesInBursts) {
    fault_config cfg;
    cfg.ge_good_to_bad = 0.01;
    cfg.ge_bad_to_good = 0.25;  // mean bad sojourn of 4 frames
    cfg.ge_loss_bad = 1.0;
    fault_injector f(cfg, 7);
    int lost = 0, bursts = 0;
    bool prev = false;
    for (int i = 0; i < 200000; ++i) {
        const bool l = f.apply({0}).dropped == fault_injector::cause::burst;
        lost += l;
        bursts += l && !prev;
        prev = l;
    }
    // Stationary loss = p / (p + r) = 0.01 / 0.26; bursts average 1 / r = 4 frames.
    EXPECT_NEAR(lost / 200000.0, 0.01 / 0.26, 0.006);
    EXPECT_NEAR(static_cast<double>(lost) / bursts, 4.0, 0.5);
}

TEST(FaultInjector, TraceDropsExactlyTheListedFrames) {
    const std::string path = "/tmp/rnic-trace-" + std::to_string(::getpid()) + ".txt";
    {
        std::ofstream f(path);
        f << "# lose the 2nd and 5th frame\n2\n5   # inline comment\n\n";
    }
    fault_config cfg;
    std::string error;
    ASSERT_TRUE(load_loss_trace(path, &cfg.trace_drops, &error)) << error;
    fault_injector inj(cfg, 1);
    std::vector<int> lost;
    for (int i = 1; i <= 8; ++i) {
        if (inj.apply({1}).dropped == fault_injector::cause::trace) lost.push_back(i);
    }
    EXPECT_EQ(lost, (std::vector<int>{2, 5}));
    {
        std::ofstream f(path);
        f << "3\nfour\n";
    }
    std::set<std::uint64_t> drops;
    EXPECT_FALSE(load_loss_trace(path, &drops, &error));
    EXPECT_NE(error.find(path + ":2"), std::string::npos) << error;
    EXPECT_FALSE(load_loss_trace("/nonexistent/trace.txt", &drops, &error));
    std::remove(path.c_str());
}

TEST(FaultInjector, DuplicationAndReorderingAreReported) {
    fault_config cfg;
    cfg.duplicate = 1.0;
    cfg.reorder = 1.0;
    cfg.reorder_delay_ps = 5000000;
    fault_injector inj(cfg, 3);
    const auto frame = tcp_frame(100);
    const auto o = inj.apply(frame);
    ASSERT_EQ(o.frames.size(), 2u);
    EXPECT_EQ(o.frames[0], frame);
    EXPECT_EQ(o.frames[1], frame);
    EXPECT_EQ(o.extra_delay_ps, 5000000u);
}

TEST(FaultInjector, CorruptionFlipsOneBitAndTheChecksumCatchesIt) {
    fault_config cfg;
    cfg.corrupt = 1.0;
    fault_injector inj(cfg, 9);
    int caught = 0;
    for (int i = 0; i < 200; ++i) {
        const auto frame = tcp_frame(1000);
        const auto o = inj.apply(frame);
        ASSERT_EQ(o.frames.size(), 1u);
        int bits = 0;
        for (std::size_t k = 0; k < frame.size(); ++k) bits += __builtin_popcount(frame[k] ^ o.frames[0][k]);
        EXPECT_EQ(bits, 1);
        std::string error;
        caught += !net::parse_tcp_frame(o.frames[0].data(), o.frames[0].size(), &error).has_value();
    }
    // Flips in the MAC addresses are not the checksums' business (the receiver checks its MAC).
    EXPECT_GT(caught, 180);
}

TEST(FaultInjector, ChecksumFixingMiddleboxLeavesDamageForTheMpaCrc) {
    fault_config cfg;
    cfg.corrupt = 1.0;
    cfg.corrupt_fixes_checksum = true;
    fault_injector inj(cfg, 11);
    int payload_damaged_but_parses = 0;
    for (int i = 0; i < 100; ++i) {
        const auto frame = tcp_frame(1400);
        const auto o = inj.apply(frame);
        std::string error;
        const auto f = net::parse_tcp_frame(o.frames[0].data(), o.frames[0].size(), &error);
        if (f && !std::equal(frame.begin() + 54, frame.end(), o.frames[0].begin() + 54)) ++payload_damaged_but_parses;
    }
    EXPECT_GT(payload_damaged_but_parses, 80);  // most flips land in the 1400-byte payload
}

TEST(FaultInjector, ResegmentationSplitsThePayloadAtConsistentSequenceNumbers) {
    fault_config cfg;
    cfg.resegment = 1.0;
    fault_injector inj(cfg, 5);
    const auto frame = tcp_frame(1000, 0xfffffe00u);  // across the sequence wrap
    std::string error;
    const auto orig = net::parse_tcp_frame(frame.data(), frame.size(), &error);
    ASSERT_TRUE(orig);
    const auto o = inj.apply(frame);
    ASSERT_EQ(o.frames.size(), 2u);
    const auto a = net::parse_tcp_frame(o.frames[0].data(), o.frames[0].size(), &error);
    const auto b = net::parse_tcp_frame(o.frames[1].data(), o.frames[1].size(), &error);
    ASSERT_TRUE(a) << error;
    ASSERT_TRUE(b) << error;
    EXPECT_EQ(a->tcp.seq, orig->tcp.seq);
    EXPECT_EQ(b->tcp.seq, static_cast<std::uint32_t>(orig->tcp.seq + a->payload_len));
    EXPECT_EQ(a->payload_len + b->payload_len, 1000u);
    std::vector<std::uint8_t> joined(o.frames[0].begin() + static_cast<std::ptrdiff_t>(a->payload_offset),
                                     o.frames[0].end());
    joined.insert(joined.end(), o.frames[1].begin() + static_cast<std::ptrdiff_t>(b->payload_offset),
                  o.frames[1].end());
    EXPECT_TRUE(
        std::equal(joined.begin(), joined.end(), frame.begin() + static_cast<std::ptrdiff_t>(orig->payload_offset)));
    // SYNs and empty ACKs are never split.
    fault_injector inj2(cfg, 5);
    EXPECT_EQ(inj2.apply(tcp_frame(0)).frames.size(), 1u);
}

}  // namespace
}  // namespace rnic::test
