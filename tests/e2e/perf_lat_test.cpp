// perftest-style latency workloads (write_lat, send_lat, read_lat, atomic_lat) through rnic-sim:
// perftest's columns, data checked, and the relations between the latencies that the model must
// keep (larger messages take longer; a Read costs a host DMA round trip more than a Write's half
// round trip; an atomic no less than an 8-byte Read).
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

struct lat_run {
    sim_run run;
    boost::json::value results;
};

lat_run run_lat(const std::string& type, const std::string& sizes, std::vector<std::string> extra = {}) {
    const std::string results = temp_path("lat-" + type + ".json");
    std::vector<std::string> args = {"--set",     "workload.type=" + type,
                                     "--set",     "workload.sizes=" + sizes,
                                     "--set",     "workload.iterations=200",
                                     "--results", results,
                                     "--log",     "off"};
    args.insert(args.end(), extra.begin(), extra.end());
    lat_run r;
    r.run = run_sim(args);
    r.results = read_json(results);
    return r;
}

double median_us(const boost::json::value& v, std::size_t row) {
    return v.at("workload").at("rows").at(row).at("latency_ns").at("p50").to_number<double>() / 1000.0;
}

TEST(PerfLat, WriteLatencyPingPongPrintsPerftestColumns) {
    const lat_run r = run_lat("write_lat", "[8,4096]");
    EXPECT_EQ(r.run.exit_code, 0) << r.run.output;
    EXPECT_EQ(r.results.at("status").as_string(), "ok");
    EXPECT_NE(r.run.output.find("t_typical[usec]"), std::string::npos) << r.run.output;
    EXPECT_NE(r.run.output.find("99.9% percentile[usec]"), std::string::npos) << r.run.output;
    const auto& rows = r.results.at("workload").at("rows").as_array();
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& row : rows) {
        EXPECT_EQ(row.at("iterations").to_number<std::uint64_t>(), 200u);
        EXPECT_TRUE(row.at("integrity_ok").as_bool());
        const auto& lat = row.at("latency_ns");
        EXPECT_GT(lat.at("min").to_number<double>(), 0.0);
        EXPECT_LE(lat.at("min").to_number<double>(), lat.at("p50").to_number<double>());
        EXPECT_LE(lat.at("p50").to_number<double>(), lat.at("p999").to_number<double>());
    }
    EXPECT_GT(median_us(r.results, 1), median_us(r.results, 0));  // 4 KiB takes longer than 8 bytes
}

TEST(PerfLat, SendLatencyPingPong) {
    const lat_run r = run_lat("send_lat", "[8,4096]");
    EXPECT_EQ(r.run.exit_code, 0) << r.run.output;
    EXPECT_EQ(r.results.at("status").as_string(), "ok");
    EXPECT_GT(median_us(r.results, 1), median_us(r.results, 0));
}

TEST(PerfLat, ReadCostsMoreThanWriteAndAtomicsNoLessThanReads) {
    const lat_run w = run_lat("write_lat", "[8]");
    const lat_run rd = run_lat("read_lat", "[8]");
    const lat_run fa = run_lat("atomic_lat", "[8]");
    const lat_run cs = run_lat("atomic_lat", "[8]", {"--set", "workload.lat_atomic=cmp_swap"});
    for (const lat_run* r : {&w, &rd, &fa, &cs}) {
        EXPECT_EQ(r->run.exit_code, 0) << r->run.output;
        EXPECT_EQ(r->results.at("status").as_string(), "ok");
    }
    // A Read is a full round trip plus the responder's host DMA read; a Write's ping-pong latency is
    // half a round trip plus the responder CPU's poll.
    EXPECT_GT(median_us(rd.results, 0), median_us(w.results, 0));
    // An atomic is a Read-like round trip with a read-modify-write at the responder.
    EXPECT_GE(median_us(fa.results, 0), median_us(rd.results, 0));
    EXPECT_GE(median_us(cs.results, 0), median_us(rd.results, 0));
    // The workload checked every returned original (0, 1, 2, ...): 216 operations incl. warm-up.
    EXPECT_EQ(fa.results.at("workload").at("rows").at(0).at("errors").to_number<std::uint64_t>(), 0u);
}

TEST(PerfLat, ReadReturnsTheServersBytes) {
    const lat_run r = run_lat("read_lat", "[100,65536]");
    EXPECT_EQ(r.run.exit_code, 0) << r.run.output;
    const auto& rows = r.results.at("workload").at("rows").as_array();
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& row : rows) EXPECT_TRUE(row.at("integrity_ok").as_bool());
    EXPECT_GT(median_us(r.results, 1), median_us(r.results, 0));
}

// perftest -a: every power of two from 2 bytes up to what fits the buffer (half of it here).
TEST(PerfLat, AllSizesRunsEveryPowerOfTwoThatFits) {
    const lat_run r = run_lat(
        "write_lat", "[8]",
        {"--set", "workload.all_sizes=true", "--set", "workload.buffer=64KiB", "--set", "workload.iterations=20"});
    EXPECT_EQ(r.run.exit_code, 0) << r.run.output;
    const auto& rows = r.results.at("workload").at("rows").as_array();
    ASSERT_EQ(rows.size(), 15u);  // 2 .. 32 KiB
    std::uint64_t expect = 2;
    for (const auto& row : rows) {
        EXPECT_EQ(row.at("size").to_number<std::uint64_t>(), expect);
        EXPECT_TRUE(row.at("integrity_ok").as_bool());
        expect *= 2;
    }
}

TEST(PerfLat, MessagesLargerThanHalfTheBufferAreRefused) {
    const lat_run r = run_lat("write_lat", "[8]", {"--set", "workload.buffer=4KiB", "--set", "workload.sizes=[4096]"});
    EXPECT_NE(r.run.exit_code, 0);
    EXPECT_NE(r.run.output.find("does not fit"), std::string::npos) << r.run.output;
}

}  // namespace
}  // namespace rnic::test
