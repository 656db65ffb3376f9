// Per-host host bus and memory timing (hosts.<i>.pcie.*, .pcix.*, .host_bus.kind, .host_memory.*;
// README "Host bus and its calibration"): a receiver on a slower bus than its sender is limited by
// its own bus, unset keys follow the global ones key by key, every key that cannot apply is refused
// before simulation naming it, and the same seed gives the same results.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

double num(const boost::json::value& v) {
    return v.to_number<double>();
}

// Back to back at 100 Gb/s, 16 KiB RDMA Writes from host a (PCIe Gen4 x16) to host b (`b_bus`), the
// NICs with a 64 KiB write queue toward their bus (without one the receive side never waits for its
// bus: WithoutAWriteQueueTheReceiverDoesNotFeelItsBus).
std::vector<std::string> slow_receiver(const std::vector<std::string>& b_bus) {
    std::vector<std::string> sets = {"link.rate=100Gbps",       "workload.sizes=[16384]",
                                     "workload.iterations=400", "hosts.0.pcie.generation=4",
                                     "hosts.0.pcie.lanes=16",   "rnic.tcp.rx_placement_backlog=64KiB"};
    sets.insert(sets.end(), b_bus.begin(), b_bus.end());
    return sets;
}

TEST(HostBus, AReceiverOnASlowerBusIsLimitedByIt) {
    const boost::json::value r =
        run_ok("slow_rx", slow_receiver({"hosts.1.pcie.generation=3", "hosts.1.pcie.lanes=4"}));
    ASSERT_FALSE(r.as_object().contains("failed"));
    EXPECT_TRUE(r.at("integrity").at("ok").as_bool());
    const auto& a = r.at("modules").at("a.pcie");
    const auto& b = r.at("modules").at("b.pcie");
    EXPECT_EQ(a.at("generation"), 4);
    EXPECT_EQ(a.at("lanes"), 16);
    EXPECT_EQ(b.at("generation"), 3);
    EXPECT_EQ(b.at("lanes"), 4);
    // Gen3 x4 carries about 31.5 Gb/s of 128b/130b symbols a direction, less TLP and DLLP overhead.
    const double b_tlp_gbps = num(b.at("tlp_gbps_per_direction"));
    EXPECT_GT(b_tlp_gbps, 25.0);
    EXPECT_LT(b_tlp_gbps, 31.6);
    const double goodput = num(r.at("workload").at("rows").at(0).at("goodput_gbps"));
    EXPECT_LE(goodput, b_tlp_gbps);
    EXPECT_GT(goodput, 0.85 * b_tlp_gbps) << "not held at host b's bus";
    // Over the transfer, host b's DMA writes keep its link busy; host a's reads leave its Gen4 x16
    // mostly idle (busy time includes the connection set-up: a little above 1 is possible).
    const double elapsed_ps = num(r.at("workload").at("rows").at(0).at("elapsed_ns")) * 1000;
    EXPECT_GT(num(b.at("upstream_busy_ps")) / elapsed_ps, 0.9);
    EXPECT_LT(num(a.at("downstream_busy_ps")) / elapsed_ps, 0.3);
    // The receive pipeline waited for the write queue.
    EXPECT_GT(num(r.at("modules").at("b.rnic").at("toe").at("placement").at("stalls")), 0);

    // The same run with host b on host a's bus: more than twice the goodput (the CRC datapath, 16 bytes a
    // cycle, is then the limit near 62 Gb/s), so host b's bus was the limit.
    const boost::json::value fast =
        run_ok("fast_rx", slow_receiver({"hosts.1.pcie.generation=4", "hosts.1.pcie.lanes=16"}));
    ASSERT_FALSE(fast.as_object().contains("failed"));
    EXPECT_GT(num(fast.at("workload").at("rows").at(0).at("goodput_gbps")), 2.0 * goodput);
}

TEST(HostBus, WithoutAWriteQueueTheReceiverDoesNotFeelItsBus) {
    // The model's behaviour before rnic.tcp.rx_placement_backlog (its default, 0): placements are
    // timed on the bus but never hold the receive pipeline, so goodput passes host b's bus.
    std::vector<std::string> sets = slow_receiver({"hosts.1.pcie.generation=3", "hosts.1.pcie.lanes=4"});
    sets.push_back("rnic.tcp.rx_placement_backlog=0B");
    const boost::json::value r = run_ok("unbounded_rx", sets);
    ASSERT_FALSE(r.as_object().contains("failed"));
    EXPECT_GT(num(r.at("workload").at("rows").at(0).at("goodput_gbps")),
              1.5 * num(r.at("modules").at("b.pcie").at("tlp_gbps_per_direction")));
    EXPECT_FALSE(r.at("modules").at("b.rnic").at("toe").as_object().contains("placement"));
}

TEST(HostBus, UnsetKeysFollowTheGlobalKeysOneByOne) {
    // Host b sets only its lane count and host a only its memory latency; everything else is global.
    const boost::json::value r =
        run_ok("inherit_bus", {"pcie.generation=4", "hosts.1.pcie.lanes=4", "hosts.0.host_memory.latency=200ns",
                               "host_memory.bandwidth=51.2GBps", "workload.sizes=[4096]", "workload.iterations=20"});
    ASSERT_FALSE(r.as_object().contains("failed"));
    const auto& m = r.at("modules");
    EXPECT_EQ(m.at("a.pcie").at("generation"), 4);
    EXPECT_EQ(m.at("a.pcie").at("lanes"), 8);
    EXPECT_EQ(m.at("b.pcie").at("generation"), 4);
    EXPECT_EQ(m.at("b.pcie").at("lanes"), 4);
    // The effective settings, in the scenario's notation, once any host has keys of its own.
    const auto& a_bus = m.at("a.pcie").at("settings");
    const auto& b_bus = m.at("b.pcie").at("settings");
    EXPECT_EQ(a_bus.at("kind"), "pcie");
    EXPECT_EQ(b_bus.at("lanes"), 4);
    EXPECT_EQ(b_bus.at("generation"), 4);
    EXPECT_EQ(b_bus.at("max_payload"), "256B");
    EXPECT_EQ(m.at("a.mem").at("settings").at("latency"), "200ns");
    EXPECT_EQ(m.at("a.mem").at("settings").at("bandwidth"), "51.2GBps");
    EXPECT_EQ(m.at("b.mem").at("settings").at("latency"), "80ns");
    EXPECT_FALSE(m.at("b.mem").at("settings").as_object().contains("size"));  // every host's, not per host
    // The echo keeps what was written: null where a host takes the global key.
    const auto& hosts = r.at("scenario").at("hosts");
    EXPECT_TRUE(hosts.at(1).at("pcie").at("generation").is_null());
    EXPECT_EQ(hosts.at(1).at("pcie").at("lanes"), 4);
    EXPECT_TRUE(hosts.at(0).at("pcie").at("lanes").is_null());
}

TEST(HostBus, WithoutPerHostKeysTheResultsHaveNoSettings) {
    const boost::json::value r = run_ok("no_settings", {"workload.sizes=[4096]", "workload.iterations=20"});
    ASSERT_FALSE(r.as_object().contains("failed"));
    EXPECT_FALSE(r.at("modules").at("a.pcie").as_object().contains("settings"));
    EXPECT_FALSE(r.at("modules").at("b.mem").as_object().contains("settings"));
}

TEST(HostBus, OneHostOnPciX) {
    // Host b alone on a PCI-X segment: its report and settings say so, host a stays on PCIe.
    const boost::json::value r =
        run_ok("pcix_b", {"hosts.1.host_bus.kind=pcix", "hosts.1.pcix.max_read_byte_count=4096", "link.rate=10Gbps",
                          "workload.sizes=[16384]", "workload.iterations=50"});
    ASSERT_FALSE(r.as_object().contains("failed"));
    EXPECT_TRUE(r.at("integrity").at("ok").as_bool());
    const auto& m = r.at("modules");
    EXPECT_EQ(m.at("a.pcie").at("kind"), "pcie");
    EXPECT_EQ(m.at("b.pcie").at("kind"), "pcix");
    EXPECT_EQ(m.at("b.pcie").at("settings").at("kind"), "pcix");
    EXPECT_EQ(m.at("b.pcie").at("settings").at("max_read_byte_count"), 4096);
    EXPECT_EQ(m.at("b.pcie").at("settings").at("clock"), "133.33MHz");
    EXPECT_FALSE(m.at("a.pcie").at("settings").as_object().contains("clock"));
}

TEST(HostBus, PerHostKeysWorkInAStarAndDerivedHostsTakeTheGlobalKeys) {
    const boost::json::value r =
        run_ok("star_bus", {"topology.kind=star", "topology.hosts=3", "hosts.1.pcie.lanes=4", "pcie.lanes=16",
                            "workload.sizes=[4096]", "workload.iterations=20"});
    ASSERT_FALSE(r.as_object().contains("failed"));
    const auto& m = r.at("modules");
    EXPECT_EQ(m.at("a.pcie").at("lanes"), 16);
    EXPECT_EQ(m.at("b.pcie").at("lanes"), 4);
    EXPECT_EQ(m.at("h2.pcie").at("lanes"), 16);
    EXPECT_EQ(m.at("h2.pcie").at("settings").at("lanes"), 16);
}

TEST(HostBus, SameSeedSameResults) {
    auto strip = [](boost::json::value v) {
        v.as_object().erase("wallclock");
        return boost::json::serialize(v);
    };
    const std::vector<std::string> sets = slow_receiver(
        {"hosts.1.pcie.generation=3", "hosts.1.pcie.lanes=4", "link.a_to_b.loss=0.001", "workload.iterations=200"});
    const boost::json::value a = run_ok("bus_det_a", sets);
    const boost::json::value b = run_ok("bus_det_b", sets);
    ASSERT_FALSE(a.as_object().contains("failed"));
    EXPECT_EQ(strip(a), strip(b));
}

TEST(HostBusValidation, KeysOfAHostBeyondTheTopologyAreRefused) {
    // back_to_back has hosts 0 and 1: a third named host with a bus key of its own.
    const std::string three = R"(hosts=[{"name":"a","mac":"02:00:00:00:00:0a","ipv4":"10.0.0.1"},)"
                              R"({"name":"b","mac":"02:00:00:00:00:0b","ipv4":"10.0.0.2"},)"
                              R"({"name":"c","mac":"02:00:00:00:00:0c","ipv4":"10.0.0.3","pcie":{"lanes":4}}])";
    expect_refused({three}, {"hosts.2.pcie.lanes", "host 2 does not exist", "back_to_back"});
    expect_refused({"topology.kind=star", "topology.hosts=2", three}, {"hosts.2.pcie.lanes", "topology.hosts is 2"});
    // An override cannot name an element the array does not have.
    expect_refused({"hosts.2.host_memory.latency=100ns"}, {"hosts.2.host_memory.latency", "out of range"});
}

TEST(HostBusValidation, BadValuesAreRefusedByTheirKey) {
    expect_refused({"hosts.1.pcie.lanes=12"}, {"hosts.1.pcie.lanes", "12"});
    expect_refused({"hosts.0.pcie.generation=6"}, {"hosts.0.pcie.generation"});
    expect_refused({"hosts.0.pcie.max_payload=384B"}, {"hosts.0.pcie.max_payload", "not a power of two"});
    expect_refused({"hosts.1.host_bus.kind=pci"}, {"hosts.1.host_bus.kind", "pci"});
    expect_refused({"hosts.1.pcix.width=6"}, {"hosts.1.pcix.width"});
    expect_refused({"hosts.1.host_memory.bandwidth=1Mbps"}, {"hosts.1.host_memory.bandwidth"});
    // Memory size is every host's (the workloads lay out buffers by it): not a per-host key.
    expect_refused({"hosts.1.host_memory.size=128MiB"}, {"hosts.1.host_memory.size", "unknown key"});
    // A global value no host overrides is still named as the global key.
    expect_refused({"pcie.max_payload=384B"}, {"pcie.max_payload", "not a power of two"});
}

TEST(HostBusValidation, KeysThatCannotApplyToTheirHostAreRefused) {
    // Host b replaced by a real peer has no simulated bus.
    expect_refused({"peer.kind=socket", "peer.port=5000", "workload.type=rping", "hosts.1.pcie.lanes=4"},
                   {"hosts.1.pcie.lanes", "peer.kind"});
    // A QEMU guest as host a sits on PCIe.
    const std::vector<std::string> qemu = {"host_bus.transport=qemu", "qemu.fd=3", "workload.type=rping"};
    std::vector<std::string> sets = qemu;
    sets.push_back("hosts.0.host_bus.kind=pcix");
    expect_refused(sets, {"hosts.0.host_bus.kind", "qemu"});
    sets = qemu;
    sets.push_back("hosts.0.pcix.clock=66MHz");
    expect_refused(sets, {"hosts.0.pcix.clock", "qemu"});
    // PCIe AtomicOps need PCIe on every host.
    expect_refused({"rnic.rdma.atomics=pcie_atomicop", "hosts.1.host_bus.kind=pcix"},
                   {"rnic.rdma.atomics", "hosts.1.host_bus.kind"});
    // Per-host link keys stay refused back to back (one cable has one rate).
    expect_refused({"hosts.1.link.rate=10Gbps"}, {"hosts.1.link.rate", "star or leaf_spine"});
}

}  // namespace
}  // namespace rnic::test
