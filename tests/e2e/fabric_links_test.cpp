// Per-host link settings and faults in a fabric, and faults on leaf-spine uplinks
// (docs/architecture.md, "Fabric"): a host's own slower link bounds only its own flows, loss on one
// host's link drops frames on that link alone, loss on uplinks is recovered by TCP, and the same seed
// gives the same results.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

// Frames the link's fault injector dropped in one direction ("a_to_b": host or leaf side sending).
std::uint64_t dropped(const boost::json::value& link, const char* dir) {
    const auto& f = link.at(dir).at("faults");
    return u64(f.at("dropped_random")) + u64(f.at("dropped_burst")) + u64(f.at("dropped_trace"));
}

std::uint64_t retransmitted(const boost::json::object& modules) {
    std::uint64_t bytes = 0;
    for (const auto& kv : modules) {
        const std::string key(kv.key());
        if (key.size() > 5 && key.substr(key.size() - 5) == ".rnic") {
            bytes += u64(kv.value().at("toe").at("tx_retransmitted_from_buffer_bytes"));
        }
    }
    return bytes;
}

// Hosts a, b and c named (so that host 2 may carry keys of its own), h3 derived; `b_link` and `c_link`
// are the JSON of hosts.1.link and hosts.2.link.
std::string three_named_hosts(const std::string& b_link, const std::string& c_link) {
    return R"(hosts=[{"name":"a","mac":"02:00:00:00:00:0a","ipv4":"10.0.0.1"},)"
           R"({"name":"b","mac":"02:00:00:00:00:0b","ipv4":"10.0.0.2","link":)" +
           b_link +
           "},"
           R"({"name":"c","mac":"02:00:00:00:00:0c","ipv4":"10.0.0.3","link":)" +
           c_link + "}]";
}

const std::vector<std::string> kStarPermutation = {"topology.kind=star",          "topology.hosts=4",
                                                   "workload.type=permutation",   "workload.matrix.size=64KiB",
                                                   "workload.matrix.messages=16", "workload.queue_depth=4"};

TEST(FabricLinks, ASlowHostLinkBoundsOnlyItsOwnFlows) {
    // Host c on 10 Gb/s, the others on 100: the flow c sends and the flow it receives stay at or
    // below 10 Gb/s; the two flows between the other hosts run at what PCIe allows (about 28 Gb/s).
    std::vector<std::string> sets = kStarPermutation;
    sets.push_back(three_named_hosts("{}", R"({"rate":"10Gbps"})"));
    const boost::json::value r = run_ok("slow_link", sets);
    ASSERT_FALSE(r.as_object().contains("failed"));
    EXPECT_TRUE(r.at("integrity").at("ok").as_bool());
    const auto& flows = r.at("fabric_workload").at("per_flow").as_array();
    ASSERT_EQ(flows.size(), 4u);
    int slow = 0;
    for (const auto& f : flows) {
        const double gbps = f.at("goodput_gbps").to_number<double>();
        EXPECT_EQ(u64(f.at("bytes")), 16u * 65536) << f;
        if (f.at("src") == "c" || f.at("dst") == "c") {
            ++slow;
            EXPECT_LE(gbps, 10.0) << f;
            EXPECT_GT(gbps, 5.0) << f;  // bounded by the link, not stalled
        } else {
            EXPECT_GT(gbps, 20.0) << f;
        }
    }
    EXPECT_EQ(slow, 2);  // a derangement: c sends once and receives once
    // The link and the switch port facing c run at its rate; everything else at link.rate.
    const auto& m = r.at("modules");
    EXPECT_EQ(m.at("links").at("c").at("rate_gbps").to_number<double>(), 10.0);
    EXPECT_EQ(m.at("links").at("h3").at("rate_gbps").to_number<double>(), 100.0);
    EXPECT_EQ(m.at("switches").at("switch").at("port_2").at("rate_gbps").to_number<double>(), 10.0);
    EXPECT_EQ(m.at("switches").at("switch").at("port_3").at("rate_gbps").to_number<double>(), 100.0);
}

TEST(FabricLinks, UnsetKeysFollowLinkKeys) {
    // Host b sets only its propagation: its rate is link.rate's, as every other host's.
    const boost::json::value r =
        run_ok("inherit", {"topology.kind=star", "topology.hosts=3", "link.rate=40Gbps", "hosts.1.link.propagation=2us",
                           "workload.sizes=[4096]", "workload.iterations=20"});
    ASSERT_FALSE(r.as_object().contains("failed"));
    for (const char* host : {"a", "b", "h2"}) {
        EXPECT_EQ(r.at("modules").at("links").at(host).at("rate_gbps").to_number<double>(), 40.0) << host;
    }
    EXPECT_TRUE(r.at("scenario").at("hosts").at(0).at("link").at("rate").is_null());
    EXPECT_EQ(r.at("scenario").at("hosts").at(1).at("link").at("propagation").as_string(), "2us");
}

TEST(FabricLinks, LossOnOneHostLinkDropsOnlyThere) {
    // b loses frames on their way to the switch, c on their way from it; every other link direction
    // drops nothing, TCP recovers and every byte arrives intact.
    const std::vector<std::string> sets = {
        "topology.kind=star",
        "topology.hosts=4",
        "workload.type=all_to_all",
        "workload.matrix.size=16KiB",
        "workload.matrix.messages=8",
        "workload.queue_depth=4",
        three_named_hosts(R"({"to_switch":{"loss":0.02}})", R"({"from_switch":{"loss":0.02}})")};
    const boost::json::value r = run_ok("host_loss", sets);
    ASSERT_FALSE(r.as_object().contains("failed"));
    EXPECT_TRUE(r.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(r.at("integrity").at("bytes_checked")), 12u * 4 * 16384);
    EXPECT_EQ(u64(r.at("integrity").at("bytes_mismatched")), 0u);
    const auto& links = r.at("modules").at("links");
    EXPECT_GT(dropped(links.at("b"), "a_to_b"), 0u);
    EXPECT_GT(dropped(links.at("c"), "b_to_a"), 0u);
    EXPECT_EQ(dropped(links.at("b"), "b_to_a"), 0u);
    EXPECT_EQ(dropped(links.at("c"), "a_to_b"), 0u);
    for (const char* host : {"a", "h3"}) {
        EXPECT_EQ(dropped(links.at(host), "a_to_b"), 0u) << host;
        EXPECT_EQ(dropped(links.at(host), "b_to_a"), 0u) << host;
    }
    EXPECT_GT(retransmitted(r.at("modules").as_object()), 0u);
}

const std::vector<std::string> kLossyUplinks = {"topology.kind=leaf_spine",
                                                "topology.hosts=8",
                                                "topology.leaves=2",
                                                "topology.spines=2",
                                                "workload.type=incast",
                                                "workload.qps=2",
                                                "workload.incast.size=32KiB",
                                                "workload.incast.rounds=4",
                                                "topology.uplink.up.loss=0.01",
                                                "topology.uplink.down.loss=0.01",
                                                "hosts.1.link.rate=25Gbps"};

TEST(FabricLinks, LossOnUplinksIsRecovered) {
    const boost::json::value r = run_ok("uplink_loss", kLossyUplinks);
    ASSERT_FALSE(r.as_object().contains("failed"));
    EXPECT_TRUE(r.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(r.at("integrity").at("bytes_checked")), 7u * 32768 * 4);
    EXPECT_EQ(u64(r.at("integrity").at("bytes_mismatched")), 0u);
    const auto& m = r.at("modules");
    std::uint64_t up = 0, down = 0;
    for (const auto& kv : m.at("uplinks").as_object()) {
        up += dropped(kv.value(), "a_to_b");  // port a is the leaf
        down += dropped(kv.value(), "b_to_a");
    }
    EXPECT_GT(up, 0u);
    EXPECT_GT(down, 0u);
    for (const auto& kv : m.at("links").as_object()) {
        EXPECT_EQ(dropped(kv.value(), "a_to_b") + dropped(kv.value(), "b_to_a"), 0u) << kv.key();
    }
    EXPECT_GT(retransmitted(m.as_object()), 0u);
    // A host's own rate reaches its leaf's port.
    EXPECT_EQ(m.at("switches").at("leaf0").at("port_1").at("rate_gbps").to_number<double>(), 25.0);
    EXPECT_EQ(m.at("switches").at("leaf0").at("port_0").at("rate_gbps").to_number<double>(), 100.0);
}

TEST(FabricLinks, LossyFabricIsDeterministicPerSeed) {
    auto strip = [](boost::json::value v) {
        v.as_object().erase("wallclock");
        return boost::json::serialize(v);
    };
    std::vector<std::string> sets = kLossyUplinks;
    sets.push_back("hosts.0.link.from_switch.loss=0.01");
    const boost::json::value a = run_ok("links_det_a", sets);
    const boost::json::value b = run_ok("links_det_b", sets);
    ASSERT_FALSE(a.as_object().contains("failed"));
    EXPECT_EQ(strip(a), strip(b));
    sets.push_back("simulation.seed=7");
    const boost::json::value c = run_ok("links_det_c", sets);
    ASSERT_FALSE(c.as_object().contains("failed"));
    EXPECT_TRUE(c.at("integrity").at("ok").as_bool());
    EXPECT_NE(strip(a), strip(c));
}

}  // namespace
}  // namespace rnic::test
