// Every bad topology, switch or cross-host workload key is refused before simulation, naming the key
// (docs/architecture.md, "Fabric").
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

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
    expect_refused(
        {"topology.kind=star", "topology.hosts=2",
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
    expect_refused(
        {"topology.kind=star", "topology.hosts=2", "peer.kind=socket", "peer.port=5000", "workload.type=rping"},
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
    expect_refused(
        {"topology.kind=star", "topology.hosts=4", "workload.type=permutation", "workload.matrix.size=16MiB"},
        {"workload.matrix.size"});
}

// hosts.N.buffer_capacity gives one NIC its own buffer memory: the send-region checks hold for the
// smallest, and name its key; below buffer memory's floor it is refused.
TEST(FabricValidation, APerHostBufferCapacityIsCheckedAsTheSmallest) {
    expect_refused({"workload.qps=3", "hosts.1.buffer_capacity=768KiB"},
                   {"hosts.1.buffer_capacity", "3 connections need 786432 bytes"});
    // 16 x 256 KiB fill the default 4 MiB exactly: no room to receive a segment (issue 19).
    expect_refused({"workload.qps=16"}, {"rnic.buffer.capacity", "one segment (1460 bytes)"});
    expect_refused({"hosts.0.buffer_capacity=32KiB"}, {"hosts.0.buffer_capacity", "less than the 64 KiB"});
    expect_refused({"topology.kind=star", "topology.hosts=20", "workload.type=all_to_all", "rnic.rdma.max_qp=64",
                    "rnic.tcp.max_connections=64", "rnic.buffer.capacity=64MiB", "hosts.1.buffer_capacity=4MiB"},
                   {"hosts.1.buffer_capacity", "38 connections"});
}

TEST(FabricValidation, TwoHostWorkloadHostsMustExistAndDiffer) {
    expect_refused({"topology.kind=star", "topology.hosts=3", "workload.client=3"},
                   {"workload.client", "does not exist"});
    expect_refused({"topology.kind=star", "topology.hosts=3", "workload.client=2", "workload.server=2"},
                   {"workload.server", "must differ"});
    expect_refused({"workload.client=1", "workload.server=0"}, {"workload.client", "back_to_back"});
}

TEST(FabricValidation, PerHostLinkKeysNeedAHostLinkOfTheirOwn) {
    // Back to back there is one cable and no switch: link.* says it all.
    expect_refused({"hosts.0.link.rate=10Gbps"}, {"hosts.0.link.rate", "back_to_back", "link.a_to_b"});
    expect_refused({"hosts.1.link.from_switch.burst.loss_bad=0.5"}, {"hosts.1.link.from_switch.burst.loss_bad"});
    expect_refused({"hosts.1.link.to_switch.corrupt_fixes_checksum=true"},
                   {"hosts.1.link.to_switch.corrupt_fixes_checksum"});
    // A named host beyond topology.hosts.
    expect_refused({"topology.kind=star", "topology.hosts=2",
                    R"(hosts=[{"name":"a","ipv4":"10.0.0.1"},{"name":"b","ipv4":"10.0.0.2"},)"
                    R"({"name":"c","ipv4":"10.0.0.3","link":{"propagation":"1us"}}])"},
                   {"hosts.2.link.propagation", "host 2 does not exist", "topology.hosts is 2"});
}

TEST(FabricValidation, LinkValuesOutOfRangeAreRefused) {
    const std::vector<std::string> star = {"topology.kind=star", "topology.hosts=3"};
    auto with = [&star](std::initializer_list<std::string> more) {
        std::vector<std::string> v = star;
        v.insert(v.end(), more);
        return v;
    };
    expect_refused(with({"hosts.1.link.rate=2Tbps"}), {"hosts.1.link.rate", "out of range"});
    expect_refused(with({"hosts.1.link.rate=10Gbs"}), {"hosts.1.link.rate", "unknown unit"});
    expect_refused(with({"hosts.0.link.propagation=2s"}), {"hosts.0.link.propagation", "out of range"});
    expect_refused(with({"hosts.0.link.to_switch.loss=1.5"}), {"hosts.0.link.to_switch.loss", "out of range"});
    expect_refused(with({"hosts.0.link.from_switch.reorder=-0.1"}), {"hosts.0.link.from_switch.reorder"});
    expect_refused(with({"hosts.0.link.to_switch.los=0.1"}), {"hosts.0.link.to_switch.los", "did you mean \"loss\""});
    expect_refused(with({"topology.uplink.up.loss=2"}), {"topology.uplink.up.loss", "out of range"});
    expect_refused(with({"topology.uplink.down.burst.good_to_bad=1.01"}),
                   {"topology.uplink.down.burst.good_to_bad", "out of range"});
    expect_refused(with({"topology.uplink.down.reorder_delay=5"}), {"topology.uplink.down.reorder_delay"});
    // null unsets a per-host key; it is no value for a key that inherits nothing.
    expect_refused(with({"topology.uplink.up.duplicate=null"}), {"topology.uplink.up.duplicate", "got null"});
}

TEST(FabricValidation, UnreadableLossTracesNameTheirKey) {
    const std::string missing = "traces/no-such-trace.txt";
    expect_refused({"topology.kind=star", "topology.hosts=3", "hosts.1.link.to_switch.loss_trace=" + missing},
                   {"hosts.1.link.to_switch.loss_trace", missing});
    // Inherited by every host: the key that set it is named.
    expect_refused({"topology.kind=star", "topology.hosts=3", "link.b_to_a.loss_trace=" + missing},
                   {"link.b_to_a.loss_trace", missing});
    expect_refused({"topology.kind=leaf_spine", "topology.hosts=4", "topology.uplink.down.loss_trace=" + missing},
                   {"topology.uplink.down.loss_trace", missing});
}

}  // namespace
}  // namespace rnic::test
