// Several QPs at once, each on its own TCP connection: FetchAdd contention on one counter, the
// bandwidth workloads on slices of the buffers, and the mixed workload (a seeded random sequence of
// every operation checked against a shadow model), clean and under loss, reordering and
// checksum-detected corruption; and proof that the mixed workload's check catches a wrong byte.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

// Loss, reordering and corruption caught by the TCP/IP checksums, both directions.
std::vector<std::string> faults(const std::string& loss, const std::string& reorder, const std::string& corrupt) {
    std::vector<std::string> args;
    for (const char* dir : {"link.a_to_b.", "link.b_to_a."}) {
        args.insert(args.end(),
                    {"--set", std::string(dir) + "loss=" + loss, "--set", std::string(dir) + "reorder=" + reorder,
                     "--set", std::string(dir) + "corrupt=" + corrupt});
    }
    return args;
}

struct run_result {
    sim_run run;
    boost::json::value results;
};

run_result run(const std::string& tag, const std::vector<std::string>& args, int expect_exit = 0) {
    run_result r;
    const std::string results = temp_path(tag + ".json");
    std::vector<std::string> all = args;
    all.insert(all.end(), {"--results", results});
    r.run = run_sim(all);
    EXPECT_EQ(r.run.exit_code, expect_exit) << r.run.output;
    if (r.run.exit_code == 0 || r.run.exit_code == 1) r.results = read_json(results);
    return r;
}

std::vector<std::string> mixed_args(int qps, int ops, int seed) {
    return {"--set", "workload.type=mixed",
            "--set", "workload.qps=" + std::to_string(qps),
            "--set", "workload.iterations=" + std::to_string(ops),
            "--set", "workload.buffer=4MiB",
            "--set", "workload.seed=" + std::to_string(seed),
            "--log", "error"};
}

// Every QP had its own connection, on both hosts, and each one carried traffic.
void expect_connections(const boost::json::value& v, std::size_t qps) {
    for (const char* host : {"a.rnic", "b.rnic"}) {
        const auto& m = v.at("modules").at(host).as_object();
        EXPECT_EQ(u64(m.at("cp").at("connections_established")), qps) << host;
        EXPECT_EQ(u64(m.at("cp").at("connections_failed")), 0u) << host;
        const auto& conns = m.at("toe").at("connections").as_array();
        ASSERT_EQ(conns.size(), qps) << host;
        std::set<std::uint64_t> client_ports;
        for (const auto& c : conns) {
            EXPECT_EQ(c.at("state").as_string(), "ESTABLISHED");
            EXPECT_GT(u64(c.at("bytes_delivered")), 0u);
            client_ports.insert(u64(c.at(host == std::string("a.rnic") ? "local_port" : "remote_port")));
        }
        EXPECT_EQ(client_ports.size(), qps) << "distinct client ports";
    }
}

// ---- FetchAdd contention: 4 QPs x 300 FetchAdd(1) on one counter ------------------------------

// Parameters: loss and reordering on the link; the atomic unit's way to host memory (read-modify-
// write under its lock, or PCIe AtomicOp TLPs).
class AtomicContention : public testing::TestWithParam<std::tuple<bool, const char*>> {};

TEST_P(AtomicContention, ExactTotalAndEveryOriginalOnce) {
    const bool lossy = std::get<0>(GetParam());
    const std::string mode = std::get<1>(GetParam());
    std::vector<std::string> args = {"--set", "workload.type=atomic_bw",   "--set", "workload.qps=4",
                                     "--set", "workload.iterations=300",   "--set", "workload.queue_depth=16",
                                     "--set", "rnic.rdma.atomics=" + mode, "--log", "error"};
    if (lossy) {
        const auto f = faults("0.01", "0.03", "0");
        args.insert(args.end(), f.begin(), f.end());
    }
    const run_result r = run(std::string(lossy ? "atomic-4qp-lossy-" : "atomic-4qp-") + mode, args);
    const boost::json::value& v = r.results;
    EXPECT_EQ(v.at("status").as_string(), "ok");
    // The check: the counter is 1200 and the 1200 returned originals are exactly 0..1199.
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(v.at("integrity").at("bytes_mismatched")), 0u);
    EXPECT_EQ(u64(v.at("integrity").at("bytes_checked")), 1200u * 8 + 8);
    EXPECT_EQ(u64(v.at("operations").at("atomic_fetch_add").at("count")), 1200u);
    EXPECT_EQ(u64(v.at("modules").at("b.rnic").at("rdma").at("atomics_executed")), 1200u);
    EXPECT_EQ(u64(v.at("modules").at("a.rnic").at("rdma").at("cqes")), 1200u);
    // With AtomicOps each FetchAdd is one AtomicOp TLP up the server's PCIe link; without, none.
    const std::uint64_t atomic_tlps = u64(v.at("modules").at("b.pcie").at("upstream").at("atomic"));
    EXPECT_EQ(atomic_tlps, mode == "pcie_atomicop" ? 1200u : 0u);
    EXPECT_EQ(u64(v.at("modules").at("b.rnic").at("rdma").at("atomic_ops_issued")), atomic_tlps);
    expect_connections(v, 4);
    if (lossy) {
        const auto& link = v.at("modules").at("link").as_object();
        EXPECT_GT(u64(link.at("a_to_b").at("faults").at("dropped_random")) +
                      u64(link.at("b_to_a").at("faults").at("dropped_random")),
                  0u);
        EXPECT_GT(u64(link.at("a_to_b").at("faults").at("reordered")), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(MultiQp, AtomicContention,
                         testing::Combine(testing::Bool(), testing::Values("rmw", "pcie_atomicop")),
                         [](const testing::TestParamInfo<std::tuple<bool, const char*>>& p) {
                             return std::string(std::get<0>(p.param) ? "LossAndReordering_" : "Clean_") +
                                    std::get<1>(p.param);
                         });

// ---- The bandwidth workloads on several QPs ---------------------------------------------------

class BandwidthQps : public testing::TestWithParam<const char*> {};

TEST_P(BandwidthQps, EveryQpMovesItsSliceIntact) {
    const std::string type = GetParam();
    const run_result r =
        run("bw-3qp-" + type, {"--set", "workload.type=" + type, "--set", "workload.qps=3", "--set",
                               "workload.sizes=[100,4096,8000]", "--set", "workload.iterations=40", "--log", "error"});
    const boost::json::value& v = r.results;
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    const std::uint64_t bytes = 3u * 40 * (100 + 4096 + 8000);
    // Each QP's 40 messages of each size fit in its slice, so every byte of all three is checked.
    EXPECT_EQ(u64(v.at("integrity").at("bytes_checked")), bytes);
    const auto& rows = v.at("workload").at("rows").as_array();
    ASSERT_EQ(rows.size(), 3u);
    for (const auto& row : rows) EXPECT_EQ(u64(row.at("iterations")), 120u);
    const char* op = type == "send_bw" ? "send" : type == "read_bw" ? "rdma_read" : "rdma_write";
    EXPECT_EQ(u64(v.at("operations").at(op).at("bytes")), bytes);
    // The data went the right way and was placed once.
    const char* placer = type == "read_bw" ? "a.rnic" : "b.rnic";
    EXPECT_EQ(u64(v.at("modules").at(placer).at("rdma").at("placed_bytes")), bytes);
    expect_connections(v, 3);
}

INSTANTIATE_TEST_SUITE_P(MultiQp, BandwidthQps, testing::Values("write_bw", "send_bw", "read_bw"));

// ---- Mixed workload ---------------------------------------------------------------------------

const char* const kKinds[] = {"rdma_write",          "rdma_write_with_imm", "rdma_read",           "send",
                              "send_solicited",      "send_invalidate",     "immediate_data",      "atomic_fetch_add",
                              "atomic_compare_swap", "masked_fetch_add",    "masked_compare_swap", "local_invalidate"};

// Every kind ran, every row's check passed, and the NICs' own counters agree with the mix.
void expect_mixed_ok(const boost::json::value& v, std::uint64_t total_ops) {
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(v.at("integrity").at("bytes_mismatched")), 0u);
    std::uint64_t ops = 0;
    for (const char* k : kKinds) {
        ASSERT_TRUE(v.at("operations").as_object().contains(k)) << k;
        EXPECT_GT(u64(v.at("operations").at(k).at("count")), 0u) << k;
        ops += u64(v.at("operations").at(k).at("count"));
    }
    EXPECT_EQ(ops, total_ops);
    for (const auto& row : v.at("workload").at("rows").as_array()) {
        EXPECT_TRUE(row.at("integrity_ok").as_bool()) << row.at("op").as_string();
        EXPECT_EQ(u64(row.at("errors")), 0u);
    }
    const auto count = [&](const char* k) { return u64(v.at("operations").at(k).at("count")); };
    const auto& a = v.at("modules").at("a.rnic").at("rdma").as_object();
    const auto& b = v.at("modules").at("b.rnic").at("rdma").as_object();
    EXPECT_EQ(u64(a.at("cqes")), total_ops);  // every work request completed, none flushed
    EXPECT_EQ(u64(a.at("flushed")), 0u);
    EXPECT_EQ(u64(b.at("terminates_sent")) + u64(a.at("terminates_sent")), 0u);
    EXPECT_EQ(u64(b.at("remote_invalidates")), count("send_invalidate"));
    EXPECT_EQ(u64(a.at("local_invalidates")), count("local_invalidate"));
    EXPECT_EQ(u64(b.at("immediates_received")), count("immediate_data") + count("rdma_write_with_imm"));
    EXPECT_EQ(u64(b.at("recv_completions")), count("send") + count("send_solicited") + count("send_invalidate") +
                                                 count("immediate_data") + count("rdma_write_with_imm"));
    EXPECT_EQ(u64(b.at("atomics_executed")), count("atomic_fetch_add") + count("atomic_compare_swap") +
                                                 count("masked_fetch_add") + count("masked_compare_swap"));
    // The server's whole 4 MiB buffer, every read, every received message and atomic result.
    EXPECT_GT(u64(v.at("integrity").at("bytes_checked")), 4u << 20);
}

TEST(Mixed, SeededSequenceOnFourQpsIsCorrectAndOnTheWire) {
    const std::string pcap = temp_path("mixed-clean.pcap");
    std::vector<std::string> args = mixed_args(4, 800, 5);
    args.insert(args.end(), {"--pcap", pcap});
    const run_result r = run("mixed-clean", args);
    expect_mixed_ok(r.results, 3200);
    expect_connections(r.results, 4);
    EXPECT_EQ(u64(r.results.at("log").at("errors")), 0u);
    EXPECT_EQ(u64(r.results.at("log").at("warnings")), 0u);
    // Every FPDU of the four connections checks out in the capture (CRCs, DDP/RDMAP headers).
    const std::string check = pcap_check(pcap);
    EXPECT_NE(check.find("4 TCP connections"), std::string::npos) << check;
    EXPECT_NE(check.find("exit=0"), std::string::npos) << check;
    for (const char* opcode :
         {"RDMA Write (0)", "RDMA Read Request (1)", "RDMA Read Response (2)", "Send (3)", "Send with Invalidate (4)",
          "Send with SE (5)", "Immediate Data (8)", "Atomic Request (10)", "Atomic Response (11)"}) {
        EXPECT_NE(check.find(opcode), std::string::npos) << opcode;
    }
}

class MixedUnderFaults : public testing::TestWithParam<const char*> {};

TEST_P(MixedUnderFaults, EveryByteAndEveryAtomicResultCorrect) {
    const std::string path = GetParam();
    std::vector<std::string> args = mixed_args(4, 3000, 11);
    const auto f = faults("0.01", "0.03", "0.01");
    args.insert(args.end(), f.begin(), f.end());
    args.insert(args.end(), {"--set", "rnic.rx_path=" + path, "--set",
                             std::string("rnic.mpa.markers=") + (path == "markers" ? "true" : "false")});
    const run_result r = run("mixed-faults-" + path, args);
    expect_mixed_ok(r.results, 12000);
    expect_connections(r.results, 4);
    const boost::json::value& v = r.results;
    const auto& link = v.at("modules").at("link").as_object();
    for (const char* dir : {"a_to_b", "b_to_a"}) {
        const auto& fc = link.at(dir).at("faults").as_object();
        EXPECT_GT(u64(fc.at("dropped_random")), 0u) << dir;
        EXPECT_GT(u64(fc.at("reordered")), 0u) << dir;
        EXPECT_GT(u64(fc.at("corrupted")), 0u) << dir;
    }
    // The corruption was caught by the checksums and repaired by retransmission.
    EXPECT_GT(u64(v.at("modules").at("a.rnic").at("toe").at("rx_bad_frames")) +
                  u64(v.at("modules").at("b.rnic").at("toe").at("rx_bad_frames")),
              0u);
    std::uint64_t retransmitted = 0;
    for (const auto& c : v.at("modules").at("a.rnic").at("toe").at("connections").as_array()) {
        retransmitted += u64(c.at("bytes_retransmitted"));
    }
    EXPECT_GT(retransmitted, 0u);
    if (path != "buffering") {
        EXPECT_GT(u64(v.at("modules").at("b.rnic").at("rdma").at("placed_out_of_order_bytes")), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(RxPaths, MixedUnderFaults, testing::Values("buffering", "markers", "aligned"));

TEST(Mixed, SameSeedSameRunOtherSeedOtherSequence) {
    std::vector<std::string> args = mixed_args(3, 400, 21);
    const auto f = faults("0.01", "0.02", "0.005");
    args.insert(args.end(), f.begin(), f.end());
    boost::json::value a = run("mixed-det-1", args).results;
    boost::json::value b = run("mixed-det-2", args).results;
    a.as_object().erase("wallclock");
    b.as_object().erase("wallclock");
    EXPECT_EQ(boost::json::serialize(a), boost::json::serialize(b));
    args.insert(args.end(), {"--set", "workload.seed=22"});
    const boost::json::value c = run("mixed-det-3", args).results;
    EXPECT_EQ(c.at("status").as_string(), "ok");
    EXPECT_NE(boost::json::serialize(c.at("operations")), boost::json::serialize(a.at("operations")));
}

TEST(Mixed, EventDrivenCompletions) {
    std::vector<std::string> args = mixed_args(2, 500, 3);
    args.insert(args.end(), {"--set", "workload.completion=event"});
    const run_result r = run("mixed-event", args);
    expect_mixed_ok(r.results, 1000);
    EXPECT_GT(u64(r.results.at("modules").at("a.rnic").at("rdma").at("interrupts")), 0u);
}

// The firmware holds a connection established before the server's accept for it (listen backlog):
// a server that spends 20 us between accepts still gets every connection.
TEST(Mixed, SlowAcceptingServerGetsEveryConnection) {
    std::vector<std::string> args = mixed_args(3, 200, 4);
    args.insert(args.end(), {"--set", "workload.mixed.accept_gap=20us"});
    const run_result r = run("mixed-accept-gap", args);
    expect_mixed_ok(r.results, 600);
    expect_connections(r.results, 3);
}

// The check is real: one byte changed behind the shadow model's back fails the run, and the
// report says where.
TEST(Mixed, CheckCatchesAFlippedByte) {
    std::vector<std::string> args = mixed_args(2, 300, 9);
    args.insert(args.end(), {"--set", "workload.inject=flip_byte"});
    const run_result r = run("mixed-flip", args, 1);
    const boost::json::value& v = r.results;
    EXPECT_EQ(v.at("status").as_string(), "integrity check failed");
    EXPECT_FALSE(v.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(v.at("integrity").at("bytes_mismatched")), 1u);
    bool found = false;
    for (const auto& row : v.at("workload").at("rows").as_array()) {
        if (row.at("op").as_string() == "rdma_write") {
            found = true;
            EXPECT_FALSE(row.at("integrity_ok").as_bool());
            EXPECT_NE(std::string(row.at("integrity_detail").as_string()).find("QP 0 target area: 1 of"),
                      std::string::npos)
                << row.at("integrity_detail").as_string();
        } else {
            EXPECT_TRUE(row.at("integrity_ok").as_bool()) << row.at("op").as_string();
        }
    }
    EXPECT_TRUE(found);
    EXPECT_NE(r.run.output.find("integrity (rdma_write): QP 0 target area"), std::string::npos) << r.run.output;
}

TEST(Mixed, ScenarioFileRuns) {
    const run_result r = run("mixed-scenario", {"--scenario", "platform/scenarios/mixed.json", "--set",
                                                "workload.iterations=300", "--log", "error"});
    expect_mixed_ok(r.results, 1200);
}

// ---- Bad configuration names its key -----------------------------------------------------------

TEST(MultiQpValidation, BadSettingsNameTheirKey) {
    struct bad {
        std::vector<std::string> args;
        const char* key;
    };
    const bad cases[] = {
        {{"--set", "workload.type=mixed", "--set", "workload.qps=8"}, "workload.mixed.max_size:"},
        {{"--set", "workload.qps=32", "--set", "workload.sizes=[65536]"}, "workload.qps:"},
        {{"--set", "workload.qps=65"}, "workload.qps"},
        {{"--set", "workload.inject=flip_byte"}, "workload.inject:"},
        {{"--set", "workload.type=mixed", "--set", "workload.inject=invalid_stag"}, "workload.inject:"},
        {{"--set", "workload.type=mixed", "--set", "workload.mixed.min_size=2KiB", "--set",
          "workload.mixed.max_size=1KiB"},
         "workload.mixed.min_size:"},
    };
    for (const bad& c : cases) {
        const sim_run r = run_sim(c.args);
        EXPECT_EQ(r.exit_code, 2) << r.output;
        EXPECT_NE(r.output.find(c.key), std::string::npos) << r.output;
    }
}

}  // namespace
}  // namespace rnic::test
