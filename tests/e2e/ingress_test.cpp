// The bounded ingress queue (rnic.tcp.rx_ingress_frames / rx_ingress_buffer): bursts of 64-byte
// Writes against a slow receive pipeline. Drops are recovered by TCP, so every run still completes
// with every byte in place; what changes is where frames wait and how many are lost.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

boost::json::value run_bursts(const std::string& name, const std::string& frames, const std::string& buffer) {
    const std::string results = temp_path("ingress-" + name + ".json");
    const sim_run r = run_sim({"--set", "workload.sizes=[64]", "--set", "workload.iterations=2000", "--set",
                               "workload.queue_depth=256", "--set", "rnic.tcp.rx_cycles_per_segment=200", "--set",
                               "rnic.tcp.rx_ingress_frames=" + frames, "--set", "rnic.tcp.rx_ingress_buffer=" + buffer,
                               "--results", results, "--log", "off"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    return v;
}

const boost::json::value& ingress_of(const boost::json::value& v) {
    return v.at("modules").at("b.rnic").at("toe").at("ingress");
}

TEST(Ingress, UnboundedQueueOnlyDelays) {
    const boost::json::value v = run_bursts("unbounded", "0", "0B");
    EXPECT_EQ(u64(ingress_of(v).at("drops")), 0u);
    EXPECT_EQ(u64(ingress_of(v).at("peak_waiting_frames")), 0u);  // not tracked: nothing is bounded
}

TEST(Ingress, AFullFifoDropsAndTcpRecovers) {
    const boost::json::value v = run_bursts("fifo", "32", "0B");
    const auto& in = ingress_of(v);
    EXPECT_GT(u64(in.at("drops")), 0u);
    EXPECT_EQ(u64(in.at("peak_waiting_frames")), 32u);
    EXPECT_EQ(u64(in.at("spilled_frames")), 0u);
    // What was dropped came again.
    EXPECT_GT(u64(v.at("modules").at("a.rnic").at("toe").at("tx_retransmitted_from_buffer_bytes")), 0u);
}

TEST(Ingress, BufferMemoryBehindTheFifoAbsorbsTheBurst) {
    const boost::json::value v = run_bursts("spill", "32", "256KiB");
    const auto& in = ingress_of(v);
    EXPECT_EQ(u64(in.at("drops")), 0u);
    EXPECT_GT(u64(in.at("spilled_frames")), 0u);
    EXPECT_GT(u64(in.at("peak_spilled_bytes")), 0u);
    EXPECT_LE(u64(in.at("peak_spilled_bytes")), 256u * 1024);
    EXPECT_GT(u64(in.at("peak_waiting_frames")), 32u);
}

TEST(Ingress, ASmallSpillAreaFillsAndThenDrops) {
    const boost::json::value v = run_bursts("small-spill", "32", "4KiB");
    const auto& in = ingress_of(v);
    EXPECT_GT(u64(in.at("drops")), 0u);
    EXPECT_GT(u64(in.at("spilled_frames")), 0u);
    EXPECT_LE(u64(in.at("peak_spilled_bytes")), 4096u);
}

// Markers put every 64-byte FPDU in a segment of its own, so retransmissions cannot coalesce; with
// NewReno (one hole per round trip) the FIFO-only NIC advances only by retransmission timeouts
// (study d). SACK-based recovery (RFC 6675, opt-in) repairs all holes of a window at once.
TEST(Ingress, MarkersBehindASmallFifoNeedSackRecovery) {
    const auto run = [](const std::string& name, std::vector<std::string> extra) {
        const std::string results = temp_path("ingress-markers-" + name + ".json");
        std::vector<std::string> args = {"--set",     "workload.sizes=[64]",
                                         "--set",     "workload.iterations=4000",
                                         "--set",     "workload.queue_depth=256",
                                         "--set",     "rnic.rx_path=markers",
                                         "--set",     "rnic.mpa.markers=true",
                                         "--set",     "rnic.tcp.rx_cycles_per_segment=200",
                                         "--set",     "rnic.tcp.rx_ingress_frames=32",
                                         "--set",     "simulation.time_limit=50ms",
                                         "--results", results,
                                         "--log",     "off"};
        args.insert(args.end(), extra.begin(), extra.end());
        const sim_run r = run_sim(args);
        return std::make_pair(r, read_json(results));
    };
    const auto [newreno, nv] = run("newreno", {});
    EXPECT_EQ(newreno.exit_code, 1) << newreno.output;
    EXPECT_NE(newreno.output.find("incomplete: time limit reached"), std::string::npos) << newreno.output;
    const auto [sack, sv] = run("sack", {"--set", "rnic.tcp.sack=true", "--set", "rnic.tcp.sack_recovery=true"});
    ASSERT_EQ(sack.exit_code, 0) << sack.output;
    EXPECT_EQ(sv.at("status").as_string(), "ok");
    EXPECT_TRUE(sv.at("integrity").at("ok").as_bool());
    EXPECT_GT(u64(ingress_of(sv).at("drops")), 0u);  // the FIFO still overflows; recovery is what changed
}

}  // namespace
}  // namespace rnic::test
