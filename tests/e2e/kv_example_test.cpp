// The verbs example (platform/workloads/kv_example.cpp, workload.type = kv_example) run through rnic-sim:
// lookups by RDMA Read and updates under a CmpSwap lock, with one client and with several clients
// contending for the same keys (clean and under loss); and the proof that its mutual-exclusion check
// can fail: without the lock, updates are lost and the run says so.
#include <gtest/gtest.h>

#include <map>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

struct kv_run {
    sim_run run;
    boost::json::value results;
    std::map<std::string, const boost::json::object*> rows;  // by op
};

kv_run run_kv(const std::string& tag, std::vector<std::string> args, int expect_exit) {
    kv_run r;
    const std::string results = temp_path(tag + ".json");
    args.insert(args.end(), {"--results", results, "--log", "error"});
    r.run = run_sim(args);
    EXPECT_EQ(r.run.exit_code, expect_exit) << r.run.output;
    if (r.run.exit_code != 0 && r.run.exit_code != 1) return r;
    r.results = read_json(results);
    for (const auto& row : r.results.at("workload").at("rows").as_array()) {
        r.rows[std::string(row.at("op").as_string())] = &row.as_object();
    }
    return r;
}

// Every row the example writes, with its verdict.
void expect_all_checks_pass(const kv_run& r) {
    for (const char* op : {"lookup (RDMA Read)", "locked update", "lock refused, retry", "no lost update",
                           "lock held at release", "final values", "server table check"}) {
        ASSERT_TRUE(r.rows.count(op)) << "no row " << op << "\n" << r.run.output;
        EXPECT_TRUE(r.rows.at(op)->at("integrity_ok").as_bool()) << op << ": " << r.run.output;
    }
    EXPECT_EQ(r.results.at("status").as_string(), "ok");
    EXPECT_TRUE(r.results.at("integrity").at("ok").as_bool());
}

TEST(KvExample, OneClientLooksUpAndUpdatesWithoutContention) {
    const std::string pcap = temp_path("kv-one.pcap");
    const kv_run r =
        run_kv("kv-one", {"--set", "workload.type=kv_example", "--set", "workload.iterations=20", "--pcap", pcap}, 0);
    ASSERT_FALSE(r.rows.empty());
    expect_all_checks_pass(r);
    // Eight keys found, at least one RDMA Read each (more where a hash collision makes it probe on).
    EXPECT_GE(u64(r.rows.at("lookup (RDMA Read)")->at("iterations")), 8u);
    EXPECT_EQ(u64(r.rows.at("locked update")->at("iterations")), 20u);
    // Alone, the client always finds the lock free.
    EXPECT_EQ(u64(r.rows.at("lock refused, retry")->at("iterations")), 0u);
    // Each update: CmpSwap, Read, Write, CmpSwap; the server's RNIC executed the atomics.
    EXPECT_EQ(u64(r.results.at("operations").at("locked update").at("count")), 20u);
    // What went over the wire is clean iWARP (every FPDU's CRC and header checked).
    const std::string report = pcap_check(pcap);
    EXPECT_NE(report.find("exit=0"), std::string::npos) << report;
}

TEST(KvExample, ContendingClientsLoseNoUpdate) {
    // The README's command: four clients, 100 updates each, all on the same two keys.
    const kv_run r = run_kv("kv-four", {"--scenario", "platform/scenarios/kv-example.json"}, 0);
    ASSERT_FALSE(r.rows.empty());
    expect_all_checks_pass(r);
    EXPECT_EQ(u64(r.rows.at("locked update")->at("iterations")), 400u);
    // The lock really was contended: some CmpSwaps found it held and were retried.
    EXPECT_GT(u64(r.rows.at("lock refused, retry")->at("iterations")), 0u);
    for (const char* host : {"a.rnic", "b.rnic"}) {
        EXPECT_EQ(u64(r.results.at("modules").at(host).at("cp").at("connections_established")), 4u) << host;
    }
}

TEST(KvExample, ContendingClientsUnderLossAndReordering) {
    std::vector<std::string> args = {"--scenario", "platform/scenarios/kv-example.json",
                                     "--set",      "workload.qps=8",
                                     "--set",      "workload.iterations=30"};
    for (const char* dir : {"link.a_to_b.", "link.b_to_a."}) {
        args.insert(args.end(), {"--set", std::string(dir) + "loss=0.02", "--set", std::string(dir) + "reorder=0.03"});
    }
    const kv_run r = run_kv("kv-lossy", args, 0);
    ASSERT_FALSE(r.rows.empty());
    expect_all_checks_pass(r);
    EXPECT_EQ(u64(r.rows.at("locked update")->at("iterations")), 240u);
    // The faults really hit the connections: TCP had to retransmit.
    std::uint64_t retransmitted = 0;
    for (const char* host : {"a.rnic", "b.rnic"}) {
        for (const auto& c : r.results.at("modules").at(host).at("toe").at("connections").as_array()) {
            retransmitted += u64(c.at("bytes_retransmitted"));
        }
    }
    EXPECT_GT(retransmitted, 0u);
}

TEST(KvExample, WithoutTheLockUpdatesAreLostAndTheRunFails) {
    // Same contention, but the clients read-modify-write without taking the lock: concurrent
    // updates read the same version and overwrite each other. The example must notice.
    const kv_run r = run_kv(
        "kv-nolock", {"--scenario", "platform/scenarios/kv-example.json", "--set", "workload.inject=skip_lock"}, 1);
    ASSERT_FALSE(r.rows.empty());
    EXPECT_EQ(r.results.at("status").as_string(), "failed");
    ASSERT_TRUE(r.rows.count("update without lock"));
    ASSERT_TRUE(r.rows.count("no lost update"));
    EXPECT_FALSE(r.rows.at("no lost update")->at("integrity_ok").as_bool());
    EXPECT_FALSE(r.rows.at("server table check")->at("integrity_ok").as_bool());
    EXPECT_NE(std::string(r.results.at("workload").at("error").as_string()).find("read by two updates"),
              std::string::npos)
        << r.run.output;
}

TEST(KvExample, SixtyFourClientsNeedNoBufferSlicesAndSkipLockIsItsOwn) {
    // The example's memory does not come from workload.buffer (64 slices of 1 MiB would be smaller
    // than the default 64 KiB message size); the NIC buffer is what must hold 64 connections' send
    // streams (64 x 256 KiB).
    const kv_run r = run_kv("kv-64",
                            {"--set", "workload.type=kv_example", "--set", "workload.qps=64", "--set",
                             "workload.iterations=4", "--set", "rnic.buffer.capacity=32MiB"},
                            0);
    ASSERT_FALSE(r.rows.empty());
    expect_all_checks_pass(r);
    EXPECT_EQ(u64(r.rows.at("locked update")->at("iterations")), 256u);
    // skip_lock means nothing to the other workloads: the scenario is refused before simulation.
    const sim_run bad = run_sim({"--set", "workload.inject=skip_lock", "--log", "error"});
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    EXPECT_NE(bad.output.find("workload.inject: \"skip_lock\" applies to workload.type \"kv_example\" only"),
              std::string::npos)
        << bad.output;
}

}  // namespace
}  // namespace rnic::test
