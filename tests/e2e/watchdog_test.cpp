// The stuck-run watchdog (simulation.watchdog): its rule alone, and a run whose link dies for good
// mid-transfer, which it stops long before the time limit with a dump of what was outstanding.
#include <gtest/gtest.h>

#include "run_helpers.h"
#include "watchdog.h"

namespace rnic::test {
namespace {

TEST(StallDetector, StuckOnlyWhenNothingMovedAndWorkIsOutstanding) {
    stall_detector d;
    EXPECT_FALSE(d.look(0, 0, true));    // the first look is the baseline
    EXPECT_FALSE(d.look(5, 100, true));  // progress
    EXPECT_EQ(d.last_progress_ps(), 100u);
    EXPECT_FALSE(d.look(5, 200, false));  // nothing moved, but nothing is outstanding either
    EXPECT_TRUE(d.look(5, 300, true));    // nothing moved while work waits: stuck
    EXPECT_EQ(d.last_progress_ps(), 100u);
    EXPECT_FALSE(d.look(6, 400, true));  // moving again
}

// Host a's link to b goes bad after a few frames and never recovers (Gilbert-Elliott with no way
// back): TCP backs off, the Writes never complete, and without the watchdog the run idles to the
// 10 s time limit.
const std::vector<std::string> kDeadLink = {"--set", "link.a_to_b.burst.good_to_bad=0.01", "--set",
                                            "link.a_to_b.burst.bad_to_good=0"};

// A run that may fail: its results are read whatever the exit status.
boost::json::value run_dead_link(const std::string& tag, const std::vector<std::string>& extra, sim_run* r) {
    const std::string results = temp_path(tag + ".json");
    std::vector<std::string> args = {"--log", "warn", "--results", results};
    args.insert(args.end(), kDeadLink.begin(), kDeadLink.end());
    args.insert(args.end(), extra.begin(), extra.end());
    *r = run_sim(args);
    return read_json(results);
}

TEST(Watchdog, StopsARunWhoseLinkDiedWithADiagnosticDump) {
    sim_run r;
    const boost::json::value v = run_dead_link("watchdog-dead-link", {"--set", "simulation.watchdog=50ms"}, &r);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    const std::string status(v.at("status").as_string());
    EXPECT_EQ(status.rfind("stuck:", 0), 0u) << status;
    const auto stopped = v.at("simulated_time_ps").to_number<std::uint64_t>();
    EXPECT_LT(stopped, 1'000'000'000'000ULL);  // far before the 10 s limit
    const boost::json::value& w = v.at("watchdog");
    EXPECT_EQ(w.at("stopped_at_ps").to_number<std::uint64_t>(), stopped);
    EXPECT_GE(stopped - w.at("last_progress_ps").to_number<std::uint64_t>(), 50'000'000'000ULL);
    // Host a: its QP waits for its Writes, its connection holds unacknowledged bytes and a timer.
    const boost::json::value& a = w.at("hosts").at("a");
    const boost::json::value& qp = a.at("qps").at(0);
    EXPECT_EQ(qp.at("state").as_string(), "rts");
    EXPECT_GT(qp.at("awaiting_completion").to_number<std::uint64_t>(), 0u);
    const boost::json::value& tcp = a.at("tcp_connections").at(0);
    EXPECT_EQ(tcp.at("state").as_string(), "ESTABLISHED");
    EXPECT_GT(tcp.at("bytes_in_flight").to_number<std::uint64_t>(), 0u);
    EXPECT_TRUE(tcp.at("next_timer_ns").is_number());  // the retransmission timer, backed off
    EXPECT_GT(a.at("buffer_occupancy_bytes").to_number<std::uint64_t>(), 0u);
    // And the dump went to stderr.
    EXPECT_NE(r.output.find("watchdog: no progress since"), std::string::npos) << r.output;
}

TEST(Watchdog, OffItLetsTheSameRunIdleToTheTimeLimit) {
    sim_run r;
    const boost::json::value v =
        run_dead_link("watchdog-off", {"--set", "simulation.watchdog=0ns", "--set", "simulation.time_limit=300ms"}, &r);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(v.at("status").as_string(), "incomplete: time limit reached");
    EXPECT_EQ(v.at("simulated_time_ps").to_number<std::uint64_t>(), 300'000'000'000ULL);
    EXPECT_FALSE(v.as_object().contains("watchdog"));
}

TEST(Watchdog, ANegativeIntervalIsRefusedByName) {
    const sim_run r = run_sim({"--set", "simulation.watchdog=-1ms"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("simulation.watchdog"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace rnic::test
