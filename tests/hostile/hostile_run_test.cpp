// Bounded runs of the hostile peer (workload.type = hostile) through rnic-sim: in both modes host
// a's memory outside the grants is untouched, every violation draws the Terminate the RFCs
// require, the well-behaved QP completes intact, and the run ends (no hang) with status ok.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::uint64_t u64(const boost::json::value& v, const char* key) { return v.at(key).to_number<std::uint64_t>(); }

boost::json::value hostile_run(const std::string& tag, const std::vector<std::string>& extra, sim_run* r) {
    const std::string results = temp_path("hostile-" + tag + ".json");
    std::vector<std::string> args = {"--set", "workload.type=hostile", "--results", results, "--log", "off"};
    args.insert(args.end(), extra.begin(), extra.end());
    *r = run_sim(args);
    return read_json(results);
}

TEST(HostilePeer, GrammarRunKeepsEveryInvariant) {
    sim_run r;
    const boost::json::value v =
        hostile_run("grammar", {"--set", "workload.hostile.episodes=12", "--seed", "3"}, &r);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const boost::json::value& h = v.at("hostile");
    EXPECT_EQ(u64(h, "episodes"), 12u);
    EXPECT_EQ(u64(h, "violations_sent"), 12u);
    EXPECT_GT(u64(h, "fpdus_sent"), 12u);
    EXPECT_EQ(u64(h, "bytes_outside_grants"), 0u) << boost::json::serialize(h);
    EXPECT_EQ(u64(h, "shadow_bytes"), 94208u);  // every byte of the arena: 8 regions, receives, guards
    EXPECT_EQ(u64(h, "answered_as_required"), 12u) << boost::json::serialize(h.at("findings"));
    EXPECT_EQ(u64(h, "answered_wrongly"), 0u);
    EXPECT_EQ(u64(h, "unanswered"), 0u);
    EXPECT_GE(h.at("classes").as_object().size(), 8u);
    EXPECT_TRUE(h.at("good_qp").at("ok").as_bool());
    EXPECT_EQ(u64(h.at("good_qp"), "operations"), 24u);
    // Host a's RNIC sent a Terminate for every violation but the peer's own Terminates.
    const auto& classes = h.at("classes").as_object();
    const std::uint64_t peer_terms = classes.contains("peer_terminate") ? u64(classes.at("peer_terminate"), "sent") : 0;
    EXPECT_EQ(v.at("modules").at("a.rnic").at("rdma").at("terminates_sent").to_number<std::uint64_t>(),
              12u - peer_terms);
}

TEST(HostilePeer, MutateRunKeepsEveryInvariant) {
    sim_run r;
    const boost::json::value v = hostile_run(
        "mutate", {"--set", "workload.hostile.mode=mutate", "--set", "workload.hostile.episodes=12", "--seed", "5"}, &r);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const boost::json::value& h = v.at("hostile");
    EXPECT_EQ(h.at("mode").as_string(), "mutate");
    EXPECT_EQ(u64(h, "episodes"), 12u);
    EXPECT_EQ(u64(h, "bytes_outside_grants"), 0u) << boost::json::serialize(h);
    EXPECT_EQ(u64(h, "unanswered"), 0u);
    EXPECT_TRUE(h.at("good_qp").at("ok").as_bool());
    // Damage to the headers draws Terminates of several kinds.
    EXPECT_GE(h.at("outcomes").as_object().size(), 3u) << boost::json::serialize(h.at("outcomes"));
}

TEST(HostilePeer, SameSeedSameResults) {
    sim_run r1, r2;
    const boost::json::value a = hostile_run("seed-a", {"--set", "workload.hostile.episodes=20", "--seed", "9"}, &r1);
    const boost::json::value b = hostile_run("seed-b", {"--set", "workload.hostile.episodes=20", "--seed", "9"}, &r2);
    EXPECT_EQ(boost::json::serialize(a.at("hostile")), boost::json::serialize(b.at("hostile")));
    EXPECT_EQ(a.at("simulated_time_ps"), b.at("simulated_time_ps"));
}

TEST(HostilePeer, BadScenarioValuesAreRefusedByName) {
    for (const std::string bad : {"workload.hostile.mode=fuzz", "workload.hostile.episodes=0",
                                   "workload.hostile.max_payload=4KiB", "workload.hostile.answer_timeout=0ns"}) {
        const sim_run r = run_sim({"--set", "workload.type=hostile", "--set", bad});
        EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
        EXPECT_NE(r.output.find(bad.substr(0, bad.find('='))), std::string::npos) << r.output;
    }
}

TEST(HostilePeer, HelpScenarioListsTheKeys) {
    const sim_run r = run_sim({"--help-scenario"});
    for (const char* key : {"workload.hostile.mode", "workload.hostile.episodes", "workload.hostile.max_good",
                            "workload.hostile.max_payload", "workload.hostile.answer_timeout"})
        EXPECT_NE(r.output.find(key), std::string::npos) << key;
}

}  // namespace
}  // namespace rnic::test
