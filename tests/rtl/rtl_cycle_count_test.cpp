// The RTL datapath's cycle counts, pinned. The framer turns beats into simulated time and the
// results report latency cycles, so a change to how the Verilated blocks are evaluated (the
// adapter in models/rtl) must leave both exactly where they were. The expected values below were
// recorded with the adapter as it was before the per-FPDU evaluator (d24b37d: the blocks as
// Verilated SystemC modules, two evaluations per clock through direct_signal ports) and must
// never be regenerated from the code under test; only a change to rtl/*.sv may move them, and
// then the TLM model's cycle formula and rnic.mpa.cycles_per_fpdu need a look too.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "framing/fpdu_datapath.h"
#include "proto/mpa.h"
#include "rtl/rtl_fpdu_datapath.h"

namespace {

using rnic::datapath_cycles;
using rnic::fpdu_rx_result;
namespace mpa = rnic::proto::mpa;
using bytes = std::vector<std::uint8_t>;

bytes random_bytes(std::mt19937& rng, std::size_t n) {
    bytes b(n);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    return b;
}

// Own datapaths (one per width, never destroyed, like rtl_blocks_test.cpp's), so that the blocks'
// carried state (marker-space position) depends on this file's calls only.
rnic::rtl::rtl_fpdu_datapath& rtl(std::uint32_t width) {
    static rnic::rtl::rtl_fpdu_datapath* w8 = nullptr;
    static rnic::rtl::rtl_fpdu_datapath* w16 = nullptr;
    auto*& p = width == 8 ? w8 : w16;
    if (p == nullptr) {
        rnic::rtl::rtl_datapath_options o;
        o.bytes_per_cycle = width;
        o.name = "cycles_w" + std::to_string(width);
        p = rnic::rtl::make_rtl_datapath(o).release();
    }
    return *p;
}

struct fpdu_case {
    std::uint32_t width;
    std::size_t len;
    bool markers;
    std::uint32_t pos;
    std::uint64_t tx_beats, tx_latency, rx_beats, rx_latency;
};

// One FPDU each way, each after a reload of the position (another connection's stream).
TEST(RtlCycleCount, KnownFpdus) {
    const fpdu_case cases[] = {
#include "rtl_cycle_count_cases.inc"
    };
    std::mt19937 rng(51);
    const bytes payload = random_bytes(rng, mpa::kMaxUlpduLength);
    for (const fpdu_case& k : cases) {
        auto& dp = rtl(k.width);
        bytes wire;
        const datapath_cycles t = dp.build_fpdu(payload.data(), k.len, true, k.markers, k.pos, wire);
        fpdu_rx_result r;
        const datapath_cycles c = dp.check_fpdu(wire.data(), wire.size(), true, k.markers, k.pos, r);
        const std::string what = "{" + std::to_string(k.width) + ", " + std::to_string(k.len) + ", " +
                                 (k.markers ? "true" : "false") + ", " + std::to_string(k.pos) + "u, " +
                                 std::to_string(t.beats) + ", " + std::to_string(t.latency) + ", " +
                                 std::to_string(c.beats) + ", " + std::to_string(c.latency) + "},";
        EXPECT_EQ(r.error, mpa::deframe_error::none) << what;
        EXPECT_EQ(t.beats, k.tx_beats) << what;
        EXPECT_EQ(t.latency, k.tx_latency) << what;
        EXPECT_EQ(c.beats, k.rx_beats) << what;
        EXPECT_EQ(c.latency, k.rx_latency) << what;
    }
}

// Every ULPDU length at positions around the Marker boundary, each way, then streams of FPDUs that
// carry the position from one to the next (no reload cycle): all counts folded into a digest
// (FNV-1a over beats and latency of every call) and a total.
struct sweep_result {
    std::uint64_t digest = 0xcbf29ce484222325ull;
    std::uint64_t latency = 0, calls = 0;
    void add(const datapath_cycles& c) {
        for (std::uint64_t v : {c.beats, c.latency}) {
            for (int i = 0; i < 8; ++i) {
                digest ^= (v >> (8 * i)) & 0xFFu;
                digest *= 0x100000001b3ull;
            }
        }
        latency += c.latency;
        ++calls;
    }
};

sweep_result sweep(std::uint32_t width) {
    auto& dp = rtl(width);
    sweep_result s;
    std::mt19937 rng(52);
    const bytes payload = random_bytes(rng, 1100);
    for (std::size_t len = 0; len <= payload.size(); ++len) {
        for (std::uint32_t pos : {0u, 4u, 256u, 496u, 500u, 504u, 508u, 0xFFFFFE00u, 0xFFFFFFFCu}) {
            for (bool markers : {true, false}) {
                bytes wire;
                s.add(dp.build_fpdu(payload.data(), len, true, markers, pos, wire));
                fpdu_rx_result r;
                s.add(dp.check_fpdu(wire.data(), wire.size(), true, markers, pos, r));
            }
        }
    }
    for (bool markers : {true, false}) {
        std::uint32_t pos = 0x1ec;
        bytes stream;
        std::vector<std::pair<std::uint32_t, std::size_t>> fpdus;  // (position, length)
        for (int i = 0; i < 300; ++i) {
            const bytes u = random_bytes(rng, rng() % 1500);
            const std::size_t before = stream.size();
            s.add(dp.build_fpdu(u.data(), u.size(), true, markers, pos, stream));
            fpdus.emplace_back(pos, stream.size() - before);
            pos += static_cast<std::uint32_t>(stream.size() - before);
        }
        std::size_t at = 0;
        for (const auto& [p, n] : fpdus) {
            fpdu_rx_result r;
            s.add(dp.check_fpdu(stream.data() + at, n, true, markers, p, r));
            at += n;
        }
    }
    // The CRC engine alone: one cycle per word, every start lane.
    for (std::size_t len = 0; len < 200; ++len) {
        datapath_cycles c;
        dp.crc32c(payload.data(), len, static_cast<std::uint32_t>(len % width), &c);
        s.add(c);
    }
    return s;
}

TEST(RtlCycleCount, SweepW8) {
    const sweep_result s = sweep(8);
    EXPECT_EQ(s.calls, 41036u);
    EXPECT_EQ(s.latency, 2951196u);
    EXPECT_EQ(s.digest, 14221249103024589332ull);
}

TEST(RtlCycleCount, SweepW16) {
    const sweep_result s = sweep(16);
    EXPECT_EQ(s.calls, 41036u);
    EXPECT_EQ(s.latency, 1518482u);
    EXPECT_EQ(s.digest, 3411902090919542281ull);
}

}  // namespace
