// Every bad topology, switch or cross-host workload key is refused before simulation, naming the key
// (docs/architecture.md, "Fabric").
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

void expect_refused(const std::vector<std::string>& sets, const std::vector<std::string>& must_contain) {
    std::vector<std::string> args;
    for (const std::string& s : sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    const sim_run r = run_sim(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    for (const std::string& s : must_contain) EXPECT_NE(r.output.find(s), std::string::npos) << s << " in: " << r.output;
    EXPECT_EQ(r.output.find("status:"), std::string::npos) << "simulated anyway: " << r.output;
}

TEST(FabricValidation, BackToBackHasTwoHosts) {
    expect_refused({"topology.hosts=4"}, {"topology.hosts", "exactly 2 hosts"});
}

TEST(FabricValidation, TooManyHostsForTheSwitchPorts) {
    expect_refused({"topology.kind=star", "topology.hosts=65"}, {"topology.hosts", "64 ports"});
    expect_refused({"topology.kind=star", "topology.hosts=9", "topology.switch_ports=8"},
                   {"topology.hosts", "topology.switch_ports"});
    expect_refused({"topology.kind=star", "topology.hosts=300"}, {"topology.hosts"});  // above the key's range
}

TEST(FabricValidation, LeafCountMustDivideTheHosts) {
    expect_refused({"topology.kind=leaf_spine", "topology.hosts=10", "topology.leaves=3"},
                   {"topology.leaves", "do not divide 10 hosts"});
}

TEST(FabricValidation, LeafAndSpinePortsMustSuffice) {
    expect_refused({"topology.kind=leaf_spine", "topology.hosts=16", "topology.leaves=2", "topology.spines=2",
                    "topology.switch_ports=8"},
                   {"topology.switch_ports", "8 host ports and 2 uplinks"});
    expect_refused({"topology.kind=leaf_spine", "topology.hosts=16", "topology.leaves=16", "topology.spines=1",
                    "topology.switch_ports=8"},
                   {"topology.leaves", "16 ports on every spine"});
}

TEST(FabricValidation, DuplicateAddressesAreRefused) {
    // Host 1 named with the address host 2 derives.
    expect_refused({"topology.kind=star", "topology.hosts=4", "hosts.1.ipv4=10.0.0.3"},
                   {"hosts.1.ipv4", "10.0.0.3", "host 2"});
    // Two named hosts with one MAC behind a switch (back to back it is allowed: nothing forwards by it).
    expect_refused({"topology.kind=star", "topology.hosts=3", "hosts.1.mac=02:00:00:00:00:0a"},
                   {"hosts.1.mac", "hosts.0"});
    expect_refused({"topology.kind=star", "topology.hosts=3", "hosts.1.name=a"}, {"hosts.1.name"});
    expect_refused({"topology.kind=star", "topology.hosts=3", "hosts.1.mac=02:00:00:00:0b"}, {"hosts.1.mac"});
}

TEST(FabricValidation, MoreNamedHostsThanTheTopologyHas) {
    expect_refused({"topology.kind=star", "topology.hosts=2",
                    R"(hosts=[{"name":"a","ipv4":"10.0.0.1"},{"name":"b","ipv4":"10.0.0.2"},{"name":"c","ipv4":"10.0.0.3"}])"},
                   {"hosts:", "3 hosts named"});
}

TEST(FabricValidation, SwitchThresholdsMustBeOrdered) {
    expect_refused({"switch.pfc.xon=128KiB", "switch.pfc.xoff=64KiB"}, {"switch.pfc.xon"});
}

TEST(FabricValidation, PfcHeadroomMustLeaveASharedBuffer) {
    expect_refused({"topology.kind=star", "topology.hosts=33", "switch.pfc.enabled=true", "switch.buffer=1MiB",
                    "switch.pfc.headroom=32KiB"},
                   {"switch.pfc.headroom", "33 ports"});
}

TEST(FabricValidation, ARealPeerNeedsBackToBack) {
    expect_refused({"topology.kind=star", "topology.hosts=2", "peer.kind=socket", "peer.port=5000",
                    "workload.type=rping"},
                   {"peer.kind"});
}

TEST(FabricValidation, IncastKeysAreChecked) {
    const std::vector<std::string> star = {"topology.kind=star", "topology.hosts=4", "workload.type=incast"};
    auto with = [&star](std::initializer_list<std::string> more) {
        std::vector<std::string> v = star;
        v.insert(v.end(), more);
        return v;
    };
    expect_refused(with({"workload.incast.receiver=4"}), {"workload.incast.receiver", "does not exist"});
    expect_refused(with({"workload.incast.senders=4"}), {"workload.incast.senders", "need 5 hosts"});
    expect_refused(with({"workload.qps=3", "workload.incast.size=1000"}), {"workload.incast.size"});
    expect_refused(with({"workload.qps=32"}), {"rnic.rdma.max_qp", "3 senders x workload.qps 32"});
    expect_refused(with({"workload.incast.size=32MiB"}), {"workload.incast.size", "host_memory.size"});
}

TEST(FabricValidation, TrafficMatrixKeysAreChecked) {
    expect_refused({"topology.kind=star", "topology.hosts=40", "workload.type=all_to_all"},
                   {"rnic.rdma.max_qp", "78 per host"});
    expect_refused({"topology.kind=star", "topology.hosts=20", "workload.type=all_to_all", "rnic.rdma.max_qp=64",
                    "rnic.tcp.max_connections=64"},
                   {"rnic.buffer.capacity", "38 connections"});
    expect_refused({"topology.kind=star", "topology.hosts=4", "workload.type=permutation", "workload.matrix.size=16MiB"},
                   {"workload.matrix.size"});
}

TEST(FabricValidation, TwoHostWorkloadHostsMustExistAndDiffer) {
    expect_refused({"topology.kind=star", "topology.hosts=3", "workload.client=3"}, {"workload.client", "does not exist"});
    expect_refused({"topology.kind=star", "topology.hosts=3", "workload.client=2", "workload.server=2"},
                   {"workload.server", "must differ"});
    expect_refused({"workload.client=1", "workload.server=0"}, {"workload.client", "back_to_back"});
}

}  // namespace
}  // namespace rnic::test
