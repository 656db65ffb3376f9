// The RDMA engine's context cache through rnic-sim: exact hits and misses for small cases, the PCIe
// traffic a miss makes (one MRd per fetch, one MWr per dirty write-back, counted by the PCIe model),
// nothing added when the cache is off, and the message rate falling once the active QPs exceed it.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

boost::json::value run_writes(const std::string& name, std::vector<std::string> sets) {
    const std::string results = temp_path(name + ".json");
    std::vector<std::string> args = {"--set",     "workload.type=write_bw",
                                     "--set",     "workload.sizes=[64]",
                                     "--set",     "rnic.tcp.send_buffer=16KiB",
                                     "--results", results,
                                     "--log",     "off"};
    for (const std::string& s : sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    const sim_run run = run_sim(args);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    return v;
}

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}
const boost::json::value& cache_of(const boost::json::value& r, const char* host) {
    return r.at("modules").at(std::string(host) + ".rnic").at("rdma").at("context_cache");
}
double rate(const boost::json::value& r) {
    return r.at("workload").at("rows").at(0).at("message_rate_mpps").to_number<double>();
}

const std::vector<std::string> kTwoEntries = {"rnic.context_cache.enabled=true", "rnic.context_cache.entries=2",
                                              "rnic.context_cache.associativity=2",
                                              "rnic.context_cache.stag_entries=2"};

TEST(ContextCache, FourQpsOnTwoEntriesMissOnEveryReceivedWrite) {
    // One Write outstanding per QP: the client serves the QPs round robin, so the server sees
    // QP 0, 1, 2, 3, 0, ... and an LRU cache of two holds none of them when it comes back.
    std::vector<std::string> sets = kTwoEntries;
    for (const char* s : {"workload.qps=4", "workload.iterations=200", "workload.queue_depth=1"}) sets.push_back(s);
    const boost::json::value on = run_writes("cc-4qp", sets);
    const boost::json::value& b = cache_of(on, "b");
    EXPECT_EQ(u64(b.at("qp").at("accesses")), 800u);
    EXPECT_EQ(u64(b.at("qp").at("misses")), 800u);
    EXPECT_EQ(u64(b.at("qp").at("writebacks")), 798u);  // every QP access writes (MSN, state)
    EXPECT_EQ(u64(b.at("stag").at("misses")), 1u);      // one region, fetched once
    EXPECT_EQ(u64(b.at("rx_fetches")), 801u);
    EXPECT_EQ(u64(b.at("fetch_bytes")), 800u * 256 + 64);
    const boost::json::value& a = cache_of(on, "a");
    EXPECT_EQ(u64(a.at("qp").at("accesses")), 1600u);  // each Write: its turn on the send queue, its completion
    EXPECT_GE(u64(a.at("qp").at("misses")), 1590u);
    // The fetches and write-backs are real TLPs: the server's PCIe counts one MRd per fetch and one
    // MWr per write-back (256 bytes fit MRRS and MPS) more than without the cache.
    sets.erase(sets.begin(), sets.begin() + 4);
    const boost::json::value off = run_writes("cc-4qp-off", sets);
    const auto& up_on = on.at("modules").at("b.pcie").at("upstream");
    const auto& up_off = off.at("modules").at("b.pcie").at("upstream");
    EXPECT_EQ(u64(up_on.at("mrd")) - u64(up_off.at("mrd")), 801u);
    EXPECT_EQ(u64(up_on.at("mwr")) - u64(up_off.at("mwr")), 798u);
    EXPECT_GT(b.at("miss_latency_mean_ns").to_number<double>(), 100.0);
    EXPECT_GE(b.at("miss_latency_max_ns").to_number<double>(), b.at("miss_latency_mean_ns").to_number<double>());
}

TEST(ContextCache, TwoQpsOnTwoEntriesHitAfterWarmUp) {
    std::vector<std::string> sets = kTwoEntries;
    for (const char* s : {"workload.qps=2", "workload.iterations=300"}) sets.push_back(s);
    const boost::json::value r = run_writes("cc-2qp", sets);
    for (const char* host : {"a", "b"}) {
        const boost::json::value& c = cache_of(r, host);
        EXPECT_EQ(u64(c.at("qp").at("misses")), 2u) << host;
        EXPECT_EQ(u64(c.at("stag").at("misses")), 1u) << host;
        EXPECT_EQ(u64(c.at("writebacks")), 0u) << host;
        EXPECT_EQ(u64(c.at("dma_errors")), 0u) << host;
    }
}

TEST(ContextCache, OffByDefaultAddsNoStatistics) {
    const boost::json::value r = run_writes("cc-off", {"workload.iterations=50"});
    EXPECT_FALSE(r.at("modules").at("b.rnic").at("rdma").as_object().contains("context_cache"));
}

TEST(ContextCache, MessageRateFallsOnceActiveQpsExceedTheCache) {
    const std::vector<std::string> cache = {"rnic.context_cache.enabled=true", "rnic.context_cache.entries=4",
                                            "rnic.context_cache.associativity=4", "workload.iterations=300"};
    auto with = [&](const std::string& qps, bool on) {
        std::vector<std::string> s = on ? cache : std::vector<std::string>{"workload.iterations=300"};
        s.push_back("workload.qps=" + qps);
        return rate(run_writes("cc-rate-" + qps + (on ? "-on" : "-off"), s));
    };
    const double fits = with("4", true), spills = with("8", true);
    const double off4 = with("4", false), off8 = with("8", false);
    EXPECT_GT(fits, 0.97 * off4);   // all hits after warm-up: close to no cache
    EXPECT_LT(spills, 0.8 * fits);  // every turn of a QP misses
    EXPECT_GT(off8, 0.97 * off4);   // without the cache more QPs do not cost
}

TEST(ContextCache, BadGeometryIsRefused) {
    const sim_run r = run_sim({"--set", "rnic.context_cache.enabled=true", "--set", "rnic.context_cache.entries=12",
                               "--set", "rnic.context_cache.associativity=8"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("rnic.context_cache.associativity"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace rnic::test
