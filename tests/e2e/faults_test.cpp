// Every receive path under every kind of network fault: each posted byte arrives correct, every
// operation completes, and the fault really happened (its counter moved).
#include <gtest/gtest.h>

#include <tuple>

#include "run_helpers.h"

namespace rnic::test {
namespace {

struct fault_case {
    const char* name;
    std::vector<std::string> settings;  // applied to both directions
    const char* counter;                // under modules.link.a_to_b.faults
};

const fault_case kFaults[] = {
    {"loss", {"loss=0.01"}, "dropped_random"},
    {"burst", {"burst.good_to_bad=0.005", "burst.bad_to_good=0.3"}, "dropped_burst"},
    {"reorder", {"reorder=0.03", "reorder_delay=4us"}, "reordered"},
    {"duplicate", {"duplicate=0.03"}, "duplicated"},
    {"corrupt", {"corrupt=0.01"}, "corrupted"},
    {"resegment", {"resegment=0.3"}, "resegmented"},
};

const char* const kPaths[] = {"buffering", "markers", "aligned"};

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

class FaultsAndPaths : public testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(FaultsAndPaths, EveryByteArrivesAndEveryWriteCompletes) {
    const fault_case& fc = kFaults[std::get<0>(GetParam())];
    const std::string path = kPaths[std::get<1>(GetParam())];
    const std::string results = temp_path(std::string(fc.name) + "-" + path + ".json");
    std::vector<std::string> args = {
        "--set",     "workload.sizes=[256,4096,20000]",
        "--set",     "workload.iterations=150",
        "--set",     "rnic.rx_path=" + path,
        "--set",     std::string("rnic.mpa.markers=") + (path == "markers" ? "true" : "false"),
        "--results", results,
        "--log",     "error"};
    for (const std::string& kv : fc.settings) {
        args.insert(args.end(), {"--set", "link.a_to_b." + kv, "--set", "link.b_to_a." + kv});
    }
    const sim_run r = run_sim(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_GT(u64(v.at("integrity").at("bytes_checked")), 0u);
    EXPECT_EQ(u64(v.at("operations").at("rdma_write").at("count")), 450u);
    const auto& a = v.at("modules").at("a.rnic").as_object();
    const auto& b = v.at("modules").at("b.rnic").as_object();
    EXPECT_EQ(u64(a.at("rdma").at("cqes")), 450u);  // all signaled writes completed, none flushed
    EXPECT_EQ(u64(a.at("rdma").at("flushed")), 0u);
    EXPECT_GT(u64(v.at("modules").at("link").at("a_to_b").at("faults").at(fc.counter)), 0u) << fc.counter;
    // Placement happened exactly once per byte, whether in order or out of order.
    EXPECT_EQ(u64(b.at("rdma").at("placed_bytes")), 150u * (256 + 4096 + 20000));
    if (std::string(fc.name) == "corrupt") {
        EXPECT_GT(u64(b.at("toe").at("rx_bad_frames")) + u64(a.at("toe").at("rx_bad_frames")), 0u);
    }
    // Loss and reordering leave holes, so out-of-order data must wait (buffering) or be placed.
    const bool reordering =
        std::string(fc.name) == "loss" || std::string(fc.name) == "burst" || std::string(fc.name) == "reorder";
    if (reordering && path == "buffering") {
        EXPECT_GT(u64(b.at("toe").at("rx_bytes_buffered")), 0u);
        EXPECT_EQ(u64(b.at("rdma").at("placed_out_of_order_bytes")), 0u);
    }
    if ((fc.name == std::string("loss") || fc.name == std::string("burst")) && path != "buffering") {
        EXPECT_GT(u64(b.at("rdma").at("placed_out_of_order_bytes")), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(AllFaults, FaultsAndPaths, testing::Combine(testing::Range(0, 6), testing::Range(0, 3)),
                         [](const testing::TestParamInfo<std::tuple<int, int>>& p) {
                             return std::string(kFaults[std::get<0>(p.param)].name) + "_" +
                                    kPaths[std::get<1>(p.param)];
                         });

TEST(Faults, BuffersPlacedDirectlyNeedLessNicMemoryThanBuffering) {
    std::uint64_t peak[3] = {};
    for (int p = 0; p < 3; ++p) {
        const std::string results = temp_path(std::string("peak-") + kPaths[p] + ".json");
        const sim_run r = run_sim({"--scenario", std::string("platform/scenarios/rx-") + kPaths[p] + ".json", "--set",
                                   "workload.iterations=200", "--results", results, "--log", "error"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        const boost::json::value v = read_json(results);
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        peak[p] = u64(v.at("modules").at("b.rnic").at("buffer").at("rx_reassembly_peak_bytes"));
    }
    EXPECT_GT(peak[0], 10 * (peak[1] + 1));  // markers place almost everything directly
    EXPECT_GT(peak[0], 10 * (peak[2] + 1));  // so does the alignment assumption on an unsplit stream
}

// NIC-memory traffic: every out-of-order byte the buffering path holds is written into the
// reassembly store once and read back once, and the totals add up (buffer.moved_bytes).
TEST(Faults, ReassemblyTrafficIsCountedInBothDirections) {
    const std::string results = temp_path("moved.json");
    const sim_run r = run_sim({"--scenario", "platform/scenarios/rx-buffering.json", "--set", "workload.iterations=200",
                               "--results", results, "--log", "error"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    const boost::json::value& b = v.at("modules").at("b.rnic");
    const std::uint64_t held = u64(b.at("toe").at("rx_bytes_buffered"));
    ASSERT_GT(held, 0u);
    const boost::json::value& mem = b.at("buffer");
    EXPECT_EQ(u64(mem.at("charged_bytes")), 2 * held);
    EXPECT_EQ(u64(mem.at("moved_bytes")),
              u64(mem.at("read_bytes")) + u64(mem.at("write_bytes")) + u64(mem.at("charged_bytes")));
}

// A re-segmenting middlebox cuts FPDUs across segments; behind a loss those pieces arrive out of
// order. With markers the receiver finds where each FPDU starts and places it once all its pieces
// are held (rnic.mpa.join_split_fpdus, RFC 5044 Appendix A) instead of holding everything until
// the hole is filled.
TEST(Faults, MarkersJoinFpdusSplitAcrossSegments) {
    std::uint64_t peak[2] = {}, split[2] = {};
    for (int join = 0; join < 2; ++join) {
        const std::string results = temp_path(std::string("join-") + std::to_string(join) + ".json");
        const std::string capture = temp_path(std::string("join-") + std::to_string(join) + ".pcap");
        const sim_run r =
            run_sim({"--scenario", "platform/scenarios/rx-markers.json", "--set", "link.a_to_b.resegment=1", "--set",
                     "link.a_to_b.loss=0.01", "--set", "workload.iterations=200", "--set",
                     std::string("rnic.mpa.join_split_fpdus=") + (join ? "true" : "false"), "--results", results,
                     "--pcap", capture, "--log", "error"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        const boost::json::value v = read_json(results);
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        EXPECT_GT(u64(v.at("modules").at("link").at("a_to_b").at("faults").at("resegmented")), 100u);
        const boost::json::value& b = v.at("modules").at("b.rnic");
        peak[join] = u64(b.at("buffer").at("rx_reassembly_peak_bytes"));
        const auto* n = b.at("framer").as_object().if_contains("ooo_split_fpdus_placed");
        split[join] = n != nullptr ? u64(*n) : 0;
        EXPECT_EQ(n != nullptr, join == 1);  // the key exists only where joining is on
    }
    EXPECT_GT(split[1], 100u);
    // Without joining, everything behind a hole waits (tens of KiB); with it, at most the pieces of
    // the FPDUs whose partners have not arrived yet.
    EXPECT_GT(peak[0], 32u * 1024);
    EXPECT_LT(peak[1], 8u * 1024);
}

// Without the window clamp the receiver invites more than its reassembly memory holds.
TEST(Faults, FullNicBufferDropsSegmentsAndTcpRecovers) {
    const std::string results = temp_path("small-buffer.json");
    const sim_run r = run_sim({"--set", "rnic.buffer.capacity=288KiB", "--set", "link.a_to_b.loss=0.02", "--set",
                               "workload.sizes=[4096,20000]", "--set", "workload.iterations=200", "--set",
                               "rnic.tcp.window_clamp=none", "--results", results, "--log", "error"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_GT(u64(v.at("modules").at("b.rnic").at("toe").at("rx_drops_buffer_full")), 0u);
    EXPECT_LE(u64(v.at("modules").at("b.rnic").at("buffer").at("rx_reassembly_peak_bytes")), 32u * 1024);
}

// The same run with the window clamped to the reassembly memory (the default on the buffering
// path, rnic.tcp.window_clamp=auto): the peer is never invited to send what would not fit, so
// nothing is dropped for want of memory (whether that is faster depends on the window the memory
// allows against the bandwidth-delay product: study (b) measures it).
TEST(Faults, WindowClampedToReassemblyMemoryDropsNothing) {
    const char* clamp[2] = {"none", "auto"};
    for (int i = 0; i < 2; ++i) {
        const std::string results = temp_path(std::string("clamp-") + clamp[i] + ".json");
        const sim_run r =
            run_sim({"--set", "rnic.buffer.capacity=288KiB", "--set", "link.a_to_b.loss=0.02", "--set",
                     "workload.sizes=[4096,20000]", "--set", "workload.iterations=200", "--set",
                     std::string("rnic.tcp.window_clamp=") + clamp[i], "--results", results, "--log", "error"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        const boost::json::value v = read_json(results);
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        const boost::json::value& b = v.at("modules").at("b.rnic");
        const std::uint64_t drops = u64(b.at("toe").at("rx_drops_buffer_full"));
        if (i == 0) {
            EXPECT_GT(drops, 0u);
        } else {
            EXPECT_EQ(drops, 0u);
            EXPECT_GT(u64(b.at("toe").at("rx_bytes_buffered")), 0u);  // reassembly did happen
            EXPECT_LE(u64(b.at("buffer").at("rx_reassembly_peak_bytes")), 32u * 1024);
        }
    }
}

TEST(Faults, LossTraceDropsTheListedFrames) {
    const std::string results = temp_path("trace.json");
    const sim_run r =
        run_sim({"--set", "link.a_to_b.loss_trace=traces/loss-burst.txt", "--set", "workload.sizes=[4096]", "--set",
                 "workload.iterations=300", "--results", results, "--log", "error"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(v.at("modules").at("link").at("a_to_b").at("faults").at("dropped_trace")), 7u);
    const sim_run bad = run_sim({"--set", "link.a_to_b.loss_trace=/nonexistent/trace.txt"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.output.find("link.a_to_b.loss_trace"), std::string::npos) << bad.output;
}

TEST(Faults, CorruptionThatPassesTheChecksumsIsCaughtByTheMpaCrcAndTerminates) {
    const std::string results = temp_path("crc.json");
    const sim_run r = run_sim({"--set", "link.a_to_b.corrupt=0.01", "--set", "link.a_to_b.corrupt_fixes_checksum=true",
                               "--set", "workload.iterations=300", "--results", results, "--log", "off"});
    EXPECT_EQ(r.exit_code, 1) << r.output;  // the run fails, cleanly and at once
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "failed");
    const auto& a = v.at("modules").at("a.rnic").as_object();
    const auto& b = v.at("modules").at("b.rnic").as_object();
    EXPECT_GE(u64(b.at("framer").at("crc_errors")), 1u);
    EXPECT_GE(u64(b.at("rdma").at("terminates_sent")), 1u);
    EXPECT_GE(u64(a.at("rdma").at("terminates_received")), 1u);
    EXPECT_GE(u64(a.at("rdma").at("flushed")), 1u);
    // Nothing corrupt was placed: every byte that reached host b's memory before the error is intact.
    EXPECT_EQ(u64(v.at("integrity").at("bytes_mismatched")), 0u);
}

TEST(Faults, RetransmissionsComeFromHostMemoryOrFromNicBuffer) {
    std::uint64_t peak[2] = {};
    const char* const sources[] = {"buffer", "host"};
    for (int i = 0; i < 2; ++i) {
        const std::string results = temp_path(std::string("rtx-") + sources[i] + ".json");
        const sim_run r = run_sim({"--set", std::string("rnic.tcp.retransmit_from=") + sources[i], "--set",
                                   "link.a_to_b.loss=0.02", "--set", "workload.sizes=[4096,20000]", "--set",
                                   "workload.iterations=200", "--results", results, "--log", "error"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        const boost::json::value v = read_json(results);
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        const auto& toe = v.at("modules").at("a.rnic").at("toe").as_object();
        const std::uint64_t from_buffer = u64(toe.at("tx_retransmitted_from_buffer_bytes"));
        const std::uint64_t from_host = u64(toe.at("tx_refetched_from_host_bytes"));
        if (i == 0) {
            EXPECT_GT(from_buffer, 0u);
            EXPECT_EQ(from_host, 0u);
        } else {
            EXPECT_EQ(from_buffer, 0u);
            EXPECT_GT(from_host, 0u);
            EXPECT_GT(u64(toe.at("tx_refetch_dma_reads")), 0u);
            EXPECT_EQ(u64(toe.at("tx_refetch_mismatches")), 0u);  // re-framed bytes equal the originals
        }
        peak[i] = u64(v.at("modules").at("a.rnic").at("buffer").at("occupancy_peak_bytes"));
    }
    EXPECT_LT(peak[1] * 10, peak[0]);  // host refetch keeps transmit data out of NIC memory
}

// A bad RDMA Write gets the Terminate RFC 5041 §7 requires, decoded from the wire by tshark; the
// sender's work requests are flushed and the target memory is untouched.
TEST(Faults, BadRdmaWritesAreAnsweredWithTheRfcTerminate) {
    struct expectation {
        const char* inject;
        const char* code;  // DDP tagged-buffer error code
    };
    for (const expectation& e : {expectation{"invalid_stag", "0x00"}, expectation{"out_of_bounds", "0x01"}}) {
        SCOPED_TRACE(e.inject);
        const std::string results = temp_path(std::string("inject-") + e.inject + ".json");
        const std::string pcap = temp_path(std::string("inject-") + e.inject + ".pcap");
        const sim_run r =
            run_sim({"--set", std::string("workload.inject=") + e.inject, "--set", "workload.sizes=[64]", "--set",
                     "workload.iterations=20", "--pcap", pcap, "--results", results, "--log", "off"});
        EXPECT_EQ(r.exit_code, 1) << r.output;
        const boost::json::value v = read_json(results);
        EXPECT_EQ(v.at("status").as_string(), "failed");
        const auto& a = v.at("modules").at("a.rnic").at("rdma").as_object();
        const auto& b = v.at("modules").at("b.rnic").at("rdma").as_object();
        EXPECT_EQ(u64(b.at("terminates_sent")), 1u);
        EXPECT_EQ(u64(a.at("terminates_received")), 1u);
        EXPECT_GE(u64(a.at("flushed")), 1u);
        EXPECT_EQ(u64(b.at("placed_bytes")), 0u);  // nothing reached host b's memory
        if (!have_tshark()) continue;
        const std::string out =
            shell("tshark -r " + pcap + " --disable-protocol rpcordma --disable-protocol smb_direct " +
                  "-Y 'iwarp_rdma.opcode == 7' -T fields -e iwarp_rdma.term_layer " +
                  "-e iwarp_rdma.term_etype_ddp -e iwarp_rdma.term_errcode_ddp_tagged " +
                  "-e iwarp_rdma.hdrct_d 2>/dev/null");
        // Layer DDP (1), tagged buffer error (1), the code, and the terminated DDP header included (D).
        EXPECT_EQ(out.substr(0, out.find('\n')), std::string("0x01\t0x01\t") + e.code + "\t1") << out;
    }
}

TEST(Faults, RxPathMarkersWithoutMarkersIsRejected) {
    const sim_run r = run_sim({"--set", "rnic.rx_path=markers"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("rnic.rx_path"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace rnic::test
