// IFT framing (rnic.framing = ift, seed 001) end to end: the frames on the wire are IFT frames with
// good Header and Payload CRCs, data arrives intact under loss with aligned placement (the CRCs vouch
// for a frame found at a segment start) and with buffering, and a corrupted frame is caught by the
// IFT CRCs and answered with a Terminate; retransmissions from host memory are re-framed as IFT.
#include <gtest/gtest.h>

#include <sstream>

#include "proto/seeds/ift.h"
#include "run_helpers.h"

namespace rnic::test {
namespace {

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

std::vector<std::uint8_t> from_hex(const std::string& hex) {
    std::vector<std::uint8_t> out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return out;
}

TEST(IftFraming, TheWireCarriesIftFramesWithGoodCrcs) {
    const std::string pcap = temp_path("ift-wire.pcap");
    const std::string results = temp_path("ift-wire.json");
    const sim_run r = run_sim({"--set", "rnic.framing=ift", "--set", "workload.sizes=[100,3000]", "--set",
                               "workload.iterations=4", "--pcap", pcap, "--results", results, "--log", "off"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(read_json(results).at("integrity").at("ok").as_bool());
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    // Host A's data segments (no loss: each starts with a frame); the 20-byte MPA Request is shorter.
    std::istringstream payloads(shell("tshark -r " + pcap +
                                      " -Y 'ip.src == 10.0.0.1 && tcp.len > 40' -T fields "
                                      "-e tcp.payload 2>/dev/null"));
    std::size_t frames = 0, segments = 0, payload_bytes = 0;
    for (std::string hex; std::getline(payloads, hex);) {
        if (hex.empty()) continue;
        ++segments;
        const std::vector<std::uint8_t> seg = from_hex(hex);
        std::size_t at = 0;
        while (at < seg.size()) {
            const std::size_t n = proto::ift::frame_length_at(seg.data() + at, seg.size() - at);
            ASSERT_GT(n, 0u);
            ASSERT_LE(n, seg.size() - at) << "a frame runs past its segment";
            std::string error;
            const auto f = proto::ift::parse(seg.data() + at, n, &error);  // checks both CRCs
            ASSERT_TRUE(f) << error;
            EXPECT_EQ(f->header_size, 14u);  // tagged DDP header of an RDMA Write
            payload_bytes += f->payload_size;
            ++frames;
            at += n;
        }
    }
    EXPECT_GT(segments, 0u);
    EXPECT_GE(frames, 8u);
    EXPECT_EQ(payload_bytes, 4u * 100 + 4u * 3000);  // every Write's bytes, framed once
}

class IftUnderLoss : public ::testing::TestWithParam<const char*> {};

TEST_P(IftUnderLoss, EveryByteArrives) {
    const std::string path = GetParam();
    const std::string results = temp_path("ift-loss-" + path + ".json");
    const sim_run r = run_sim({"--set", "rnic.framing=ift", "--set", "rnic.rx_path=" + path, "--set",
                               "link.a_to_b.loss=0.01", "--set", "workload.sizes=[4096,65536]", "--set",
                               "workload.iterations=200", "--results", results, "--log", "off"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    const auto& framer = v.at("modules").at("b.rnic").at("framer");
    EXPECT_EQ(u64(framer.at("crc_errors")), 0u);
    if (path == "aligned") {
        EXPECT_GT(u64(framer.at("ooo_fpdus_placed")), 0u);  // frames placed ahead of the hole
    } else {
        EXPECT_EQ(u64(framer.at("ooo_fpdus_placed")), 0u);
        EXPECT_GT(u64(v.at("modules").at("b.rnic").at("toe").at("rx_out_of_order_segments")), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Paths, IftUnderLoss, ::testing::Values("aligned", "buffering"));

// Retransmission from host memory re-frames through the device's framing, so IFT frames come out as
// the first time (refused before the framing was one interface: the TCP engine built MPA FPDUs).
TEST(Ift, RetransmitsFromHostMemoryWithTheSameFrames) {
    const std::string results = temp_path("ift-rtx-host.json");
    const sim_run r = run_sim({"--set", "rnic.framing=ift", "--set", "rnic.tcp.retransmit_from=host", "--set",
                               "link.a_to_b.loss=0.02", "--set", "workload.sizes=[4096,20000]", "--set",
                               "workload.iterations=200", "--results", results, "--log", "error"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    const auto& toe = v.at("modules").at("a.rnic").at("toe");
    EXPECT_GT(u64(toe.at("tx_refetched_from_host_bytes")), 0u);
    EXPECT_EQ(u64(toe.at("tx_refetch_mismatches")), 0u);  // re-framed bytes equal the originals
    EXPECT_EQ(u64(v.at("modules").at("b.rnic").at("framer").at("crc_errors")), 0u);
}

TEST(IftFraming, CorruptionPastTheChecksumsIsCaughtByTheIftCrcs) {
    const std::string results = temp_path("ift-corrupt.json");
    const sim_run r = run_sim({"--set", "rnic.framing=ift", "--set", "link.a_to_b.corrupt=0.01", "--set",
                               "link.a_to_b.corrupt_fixes_checksum=true", "--set", "workload.sizes=[4096]", "--set",
                               "workload.iterations=500", "--results", results, "--log", "off"});
    EXPECT_NE(r.exit_code, 0);
    const boost::json::value v = read_json(results);
    const auto& b = v.at("modules").at("b.rnic");
    EXPECT_GE(u64(b.at("framer").at("crc_errors")), 1u);
    EXPECT_EQ(u64(b.at("rdma").at("terminates_sent")), 1u);
    EXPECT_EQ(u64(b.at("rdma").at("llp_errors")), 1u);
}

TEST(IftFraming, MarkersDoNotExistInIft) {
    const sim_run r = run_sim({"--set", "rnic.framing=ift", "--set", "rnic.mpa.markers=true"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("rnic.framing"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace rnic::test
