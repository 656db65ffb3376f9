#include "scenario_schema.h"

#include "schema_parts.h"

#include "config/scenario.h"
#include "config/units.h"
#include "host_identity.h"
#include "proto/net.h"

#include <cstdio>

namespace rnic::platform {

using namespace config::literals;

namespace {

void declare_simulation(config::node& root) {
    auto& sim = root.object("simulation", "Kernel settings");
    sim.integer("seed", 1,
                "Seed of every random choice (TCP initial sequence numbers, payload patterns); --seed overrides", 0);
    sim.time("quantum", "1us", "Global TLM quantum: how far a host CPU may run ahead before it synchronises", 1_ns,
             1_ms);
    sim.time("time_limit", "10s", "Simulated-time limit; the run stops there even if the workload is not done", 1_us,
             3600_s);
    sim.time("watchdog", "1s",
             "Stuck-run watchdog: a run whose NICs take no work request, write no completion, send or receive no "
             "frame and execute no firmware command for this long while the workload is not done stops with "
             "status 'stuck' (exit 1) and a diagnostic dump (results key watchdog); 0 turns it off. Off with a "
             "real peer or a QEMU guest",
             0_ns, 3600_s);
    sim.enumeration("resource_order", "time",
                    "How the shared resources without a key of their own serve requests that the loosely-timed blocks "
                    "hand over out of time order: each direction of a PCIe link, host memory's DMA port, the DMA "
                    "channels, the RDMA engine's pipelines and the MPA CRC datapaths. call: each request after every "
                    "request handed over before it, the model before 2026-11-29 (a WQE fetch waits behind CQE writes a "
                    "completion handler booked for later, leaving the link idle); time (default): the earliest idle "
                    "gap at or after the request is ready, as an arbiter would (posted PCIe writes keep their order). "
                    "The TCP transmitter and the links have their own keys (rnic.tcp.tx_order, link.order), buffer "
                    "memory its port_order",
                    {"call", "time"});
    sim.boolean("live_objects", false,
                "Add the results section live_objects: per RNIC at the end of the run, the QPs, CQs, valid STags, "
                "buffer-memory regions and TCP connections (and those in TIME-WAIT) still alive, for leak checks");
}

void declare_link(config::node& root) {
    auto& link = root.object("link", "The Ethernet link between the two hosts");
    link.rate("rate", "100Gbps", "Line rate", 1e6, 1.6e12);
    link.time("propagation", "10ns",
              "One-way propagation delay (default: a back-to-back cable of about 2 m at 5 ns/m; 100 m of fibre is "
              "500ns)",
              0, 1_s);
    link.integer("mtu", 1500, "IP MTU in bytes (standard Ethernet 1500, jumbo up to 9000)", 576, 9000);
    link.enumeration("order", "time",
                     "How each link's wire serves frames handed over out of time order: call (each frame after "
                     "every frame handed over before it, the model before 2026-11-29) or time (default: the earliest "
                     "idle gap at or after the frame is ready; what rnic.tcp.tx_order = time needs)",
                     {"call", "time"});
    for (const char* dir : {"a_to_b", "b_to_a"}) {
        declare_faults(link.object(dir, std::string("Faults on frames from host ") + dir[0] + " to host " + dir[5] +
                                            " (each seeded from simulation.seed)"),
                       "");
    }
}

void declare_hosts(config::node& root) {
    auto& hosts = root.array("hosts",
                             "The hosts by index, each with host memory, a host bus and an RNIC; a host named here may "
                             "set its own link (star, "
                             "leaf_spine), bus and memory timing (hosts beyond the array: derived, see topology.hosts)",
                             2, 256);
    hosts.defaults({{{"name", "a"}, {"mac", "02:00:00:00:00:0a"}, {"ipv4", "10.0.0.1"}},
                    {{"name", "b"}, {"mac", "02:00:00:00:00:0b"}, {"ipv4", "10.0.0.2"}}});
    auto& host = hosts.element();
    host.string("name", "host", "Host name (the top of its modules' hierarchical names)");
    host.string("mac", "02:00:00:00:00:01", "The RNIC's station MAC address");
    host.string("ipv4", "10.0.0.1", "The RNIC's IPv4 address");
    host.enumeration("mpa_rtr", "same",
                     "This RNIC's ready-to-receive messages when they differ from rnic.mpa.rtr (two NICs with no "
                     "RTR option in common, RFC 6581 §9.2)",
                     {"same", "write,read", "write", "read"});
    host.enumeration("vitcp_reliability", "same",
                     "This RNIC's VI/TCP reliability level when it differs from rnic.vitcp.reliability (two ends "
                     "whose levels differ: the passive end refuses with ConnectReject, seed 003 §3.3)",
                     {"same", "unreliable", "reliable_delivery", "reliable_reception"});
    host.size("buffer_capacity", "0B",
              "This RNIC's buffer memory capacity when it differs from rnic.buffer.capacity (0: the same): NICs "
              "of different sizes on one network",
              0, 4_GiB);
    declare_host_link(host);
    declare_host_bus(host);
}

// Host b replaced by a real machine behind a socket bridge (models/link/socket_bridge.h), e.g. a
// QEMU guest running Linux soft-iWARP (tools/siw-peer). hosts.1.ipv4 is then the real peer's address;
// host a learns its MAC by ARP.
void declare_peer(config::node& root) {
    auto& peer = root.object("peer", "What is at the far end of the link (host b): the simulated host or a real one");
    peer.enumeration("kind", "simulated",
                     "\"simulated\": host b is simulated; \"socket\": host b is a real machine whose Ethernet frames "
                     "come over a TCP socket in QEMU's -netdev socket format (tools/siw-peer/README.md)",
                     {"simulated", "socket"});
    peer.string("address", "127.0.0.1", "Where the peer's socket is (host name or numeric address)");
    peer.integer("port", 0, "The peer's socket port (required with kind \"socket\")", 0, 65535);
    peer.boolean("listen", false, "Listen on address:port for the peer to connect, instead of connecting to it");
    peer.time("open_timeout", "10s", "Wall-clock time to wait for the connection before giving up", 1_ms, 3600_s);
    peer.boolean("realtime", true,
                 "Keep simulated time from running ahead of wall-clock time while the peer is connected");
    peer.time("realtime_slack", "1ms", "How far simulated time may run ahead of wall-clock time", 0, 10_s);
    peer.time("poll_interval", "20us", "Simulated time between two polls of the socket", 100_ns, 10_ms);
}

// A host's own buffer_capacity below what buffer memory needs at all (rnic.buffer.capacity's floor).
std::string check_host_buffers(const config::scenario& s) {
    for (std::size_t i = 0; i < s.array_size("hosts"); ++i) {
        const std::string key = "hosts." + std::to_string(i) + ".buffer_capacity";
        const std::uint64_t bytes = s.get_size(key);
        if (bytes != 0 && bytes < 64_KiB) {
            return key + ": " + std::to_string(bytes) +
                   " bytes is less than the 64 KiB a NIC's buffer memory needs "
                   "(0 keeps rnic.buffer.capacity)";
        }
    }
    return "";
}

std::string check_peer(const config::scenario& s) {
    if (s.get_string("peer.kind") == "socket" && s.get_int("peer.port") == 0) {
        return "peer.port: kind \"socket\" needs the peer's socket port (1-65535)";
    }
    if (s.get_string("peer.kind") == "socket" && s.get_string("workload.type") != "rping") {
        // The other workloads run their server program on the simulated host b, which a real peer
        // replaces: they would wait for it until the time limit.
        return "workload.type: \"" + s.get_string("workload.type") +
               "\" needs the simulated host b; with peer.kind \"socket\" the real peer runs rping, so use "
               "workload.type \"rping\"";
    }
    return "";
}

config::schema build() {
    config::schema schema;
    config::node& root = schema.root();
    root.string("name", "unnamed", "Scenario name, copied into the results");
    declare_simulation(root);
    declare_link(root);
    declare_hosts(root);
    declare_peer(root);
    declare_topology(root);
    declare_switch(root);
    declare_host_memory(root);
    declare_pcie(root);
    declare_rnic(root);
    declare_workload(root);
    schema.add_check(check_topology);
    schema.add_check(check_host_buses);
    schema.add_check(check_powers_of_two);
    schema.add_check(check_host_buffers);
    schema.add_check(check_rx_path);
    schema.add_check(check_peer_to_peer);
    schema.add_check(check_sack_recovery);
    schema.add_check(check_framing);
    schema.add_check(check_atomics);
    schema.add_check(check_peer);
    schema.add_check(check_qemu);
    schema.add_check(check_workload);
    schema.add_check(check_context_cache);
    schema.add_check(check_fabric_workload);
    schema.verify();
    return schema;
}

}  // namespace

const config::schema& scenario_schema() {
    static const config::schema schema = build();
    return schema;
}

}  // namespace rnic::platform
