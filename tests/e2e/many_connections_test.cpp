// Many connections on one NIC: send regions shared with the reassembly pool instead of carved per
// connection (rnic.buffer.send_regions = shared), so that hundreds or thousands of QPs fit.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

// `qps` QPs of 4 KiB Writes on one NIC pair, send regions shared, contexts behind the default cache.
std::vector<std::string> many_qps(int qps, int iterations, const std::string& host_memory) {
    const std::string n = std::to_string(qps);
    return {"workload.qps=" + n,
            "rnic.rdma.max_qp=" + n,
            "rnic.tcp.max_connections=" + n,
            "workload.sizes=[4096]",
            "workload.iterations=" + std::to_string(iterations),
            "workload.buffer=64MiB",
            "host_memory.size=" + host_memory,
            "rnic.buffer.send_regions=shared",
            "rnic.context_cache.enabled=true"};
}

TEST(ManyConnections, ReservedRegionsRefuseWhatSharedOnesRun) {
    // 64 connections x 256 KiB of send region do not fit 4 MiB when carved...
    const sim_run refused = run_sim({"--set", "workload.qps=64", "--set", "workload.sizes=[4096]"});
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_NE(refused.output.find("workload.qps"), std::string::npos) << refused.output;
    // ...but run when the bytes they hold share the memory, under loss, every byte checked.
    const boost::json::value v =
        run_ok("shared64", {"workload.qps=64", "workload.sizes=[4096]", "workload.iterations=100",
                            "rnic.buffer.send_regions=shared", "link.a_to_b.loss=0.01"});
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    // Each QP walks its 16 KiB slice of the 1 MiB buffer: the whole buffer is compared.
    EXPECT_EQ(u64(v.at("integrity").at("bytes_checked")), 1u << 20);
    EXPECT_EQ(u64(v.at("workload").at("rows").at(0).at("iterations")), 64u * 100);
    const auto& buf = v.at("modules").at("a.rnic").at("buffer").as_object();
    EXPECT_EQ(buf.at("send_regions").as_string(), "shared");
    EXPECT_EQ(u64(buf.at("tx_regions_bytes")), 0u);  // nothing carved
    EXPECT_GT(u64(buf.at("send_held_peak_bytes")), 0u);
    EXPECT_LE(u64(buf.at("occupancy_peak_bytes")), u64(buf.at("capacity_bytes")));
    // The per-connection peaks add up to at least the shared peak (they need not peak together).
    EXPECT_GE(u64(v.at("modules").at("a.rnic").at("toe").at("tx_held_peak_sum_bytes")),
              u64(buf.at("send_held_peak_bytes")));
}

// The upper bound of issue 15: 4096 QPs on one NIC, each its own TCP connection and context, every
// byte checked; one more QP is refused before simulation, naming the key.
TEST(ManyConnections, FourThousandNinetySixQpsRunAndOneMoreIsRefused) {
    const boost::json::value v = run_ok("qps4096", many_qps(4096, 2, "512MiB"));
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(v.at("integrity").at("bytes_checked")), 4096u * 2 * 4096);  // every byte each QP wrote
    EXPECT_EQ(u64(v.at("workload").at("rows").at(0).at("iterations")), 4096u * 2);
    EXPECT_EQ(v.at("modules").at("b.rnic").at("toe").at("connections").as_array().size(), 4096u);
    const auto& cache = v.at("modules").at("b.rnic").at("rdma").at("context_cache").as_object();
    // Every QP's context is fetched at least once through the default 256-entry cache.
    EXPECT_GE(u64(cache.at("qp").at("misses")), 4096u);
    EXPECT_GT(u64(cache.at("writebacks")), 0u);
    for (const char* key : {"workload.qps=4097", "rnic.rdma.max_qp=4097"}) {
        const sim_run refused = run_sim({"--set", key});
        EXPECT_EQ(refused.exit_code, 2) << refused.output;
        const std::string name = std::string(key).substr(0, std::string(key).find('='));
        EXPECT_NE(refused.output.find(name + ": 4097 is out of range"), std::string::npos) << refused.output;
    }
}

TEST(ManyConnections, AThousandQpsBehindTheContextCache) {
    const boost::json::value v = run_ok("qps1024", many_qps(1024, 20, "256MiB"));
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(v.at("workload").at("rows").at(0).at("iterations")), 1024u * 20);
    const auto& cache = v.at("modules").at("b.rnic").at("rdma").at("context_cache").as_object();
    // 1024 QPs on the default 256-entry cache: contexts come and go over PCIe.
    EXPECT_GT(u64(cache.at("misses")), 1024u);
    EXPECT_GT(u64(cache.at("writebacks")), 0u);
    EXPECT_LT(cache.at("hit_rate").to_number<double>(), 1.0);
}

}  // namespace
}  // namespace rnic::test
