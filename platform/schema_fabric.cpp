// Scenario keys of the fabric: how many hosts, how they are joined (back to back, one switch, leaves
// and spines), and the switch model's parameters; and the checks that refuse a topology that cannot
// be built, naming the key (docs/architecture.md, "Fabric").
#include <algorithm>
#include <map>

#include "config/units.h"
#include "host_identity.h"
#include "schema_parts.h"

namespace rnic::platform {

using namespace config::literals;

void declare_topology(config::node& root) {
    auto& topo = root.object("topology", "How the hosts are joined");
    topo.enumeration("kind", "back_to_back",
                     "back_to_back: two hosts on one link (hosts a and b); star: every host on one switch; "
                     "leaf_spine: hosts under leaf switches, every leaf joined to every spine, ECMP across spines",
                     {"back_to_back", "star", "leaf_spine"});
    topo.integer("hosts", 2,
                 "Hosts in a star or leaf_spine (back_to_back has 2); hosts beyond the `hosts` array get derived "
                 "names h<i>, MACs 02:00:00:01:<i/256>:<i%256> and addresses 10.0.<i/250>.<i%250+1>",
                 2, 256);
    topo.integer("switch_ports", 64, "Ports of each switch (a 64-port 100GbE ASIC)", 2, 512);
    topo.integer("leaves", 2, "leaf_spine: leaf switches; each carries topology.hosts / leaves hosts", 1, 256);
    topo.integer("spines", 2, "leaf_spine: spine switches; every leaf has one uplink to each", 1, 256);
    auto& up = topo.object("uplink", "leaf_spine: the links between leaves and spines");
    up.rate("rate", "100Gbps", "Line rate of a leaf-spine link", 1e6, 1.6e12);
    up.time("propagation", "100ns", "One-way propagation of a leaf-spine link (about 20 m of fibre)", 0, 1_s);
    // Every uplink takes the same faults, each drawing from its own seeded generators.
    declare_faults(up.object("up", "Faults on frames from a leaf to a spine, on every uplink"), "");
    declare_faults(up.object("down", "Faults on frames from a spine to a leaf, on every uplink"), "");
}

void declare_switch(config::node& root) {
    auto& sw = root.object("switch", "Every switch of a star or leaf_spine (models/switch)");
    sw.enumeration("mode", "cut_through",
                   "cut_through: a frame may leave once its header is in (port-to-port latency from its first bit); "
                   "store_and_forward: once all of it is in",
                   {"cut_through", "store_and_forward"});
    sw.time("latency", "450ns",
            "Port-to-port pipeline latency (assumption: shared-buffer 100GbE ASICs quote 400-500 ns cut-through)", 0,
            1_ms);
    sw.size("buffer", "16MiB",
            "Packet buffer shared by all output queues (assumption: a Tomahawk-class ASIC, 16 MB for 32 x 100GbE)",
            4_KiB, 1_GiB);
    sw.number("alpha", 1,
              "Dynamic threshold (Choudhury and Hahne): an output queue may grow while it holds less than alpha x "
              "the free buffer (ASICs offer 1/128..8; 1 is a common default)",
              1.0 / 1024, 1024);
    auto& ecn = sw.object("ecn", "ECN marking (RFC 3168) on output queues");
    ecn.boolean("enabled", false, "Mark CE on ECN-capable packets that find the output queue above the threshold");
    ecn.size("threshold", "100KiB", "Output-queue bytes above which packets are marked (assumption; DCTCP-style K)", 0,
             1_GiB);
    auto& pfc = sw.object("pfc", "IEEE 802.1Qbb priority flow control (one priority): a lossless fabric");
    pfc.boolean("enabled", false, "Pause an ingress port's sender when its buffered bytes exceed xoff");
    pfc.size("xoff", "96KiB", "Ingress bytes at which a PAUSE goes out", 0, 1_GiB);
    pfc.size("xon", "64KiB", "Ingress bytes at or below which the pause is lifted", 0, 1_GiB);
    pfc.size("headroom", "32KiB",
             "Per-ingress reserve for what is in flight after the PAUSE (at least twice the link's bandwidth-delay "
             "product plus two frames and the response time)",
             0, 1_GiB);
    sw.time("stats_interval", "10us", "Queue occupancy is reported as the maximum of each such interval", 1_ns, 1_s);
}

namespace {

std::string check_identities(const config::scenario& s) {
    const int n = host_count(s);
    const std::size_t named = s.array_size("hosts");
    if (named > static_cast<std::size_t>(n)) {
        for (std::size_t i = static_cast<std::size_t>(n); i < named; ++i) {
            std::string key = host_link_key_set(s, i);
            if (key.empty()) key = host_bus_key_set(s, i);
            if (!key.empty()) {
                return key + ": host " + std::to_string(i) + " does not exist (" +
                       (s.get_string("topology.kind") == "back_to_back" ? std::string("back_to_back has 2 hosts")
                                                                        : "topology.hosts is " + std::to_string(n)) +
                       ")";
            }
        }
        return "hosts: " + std::to_string(named) + " hosts named but the topology has " + std::to_string(n) +
               " (topology.hosts)";
    }
    const bool switched = s.get_string("topology.kind") != "back_to_back";
    std::map<std::string, std::string> names, macs, addrs;  // value -> key of the first host using it
    for (int i = 0; i < n; ++i) {
        const host_identity id = identity_of(s, i);
        const std::string at =
            id.key == "topology.hosts" ? "host " + std::to_string(i) + " (derived from topology.hosts)" : id.key;
        if (!proto::net::parse_ipv4(id.ipv4)) {
            return id.key + ".ipv4: expected a dotted IPv4 address such as \"10.0.0.1\", got \"" + id.ipv4 + "\"";
        }
        proto::net::mac_address mac{};
        if (!parse_mac(id.mac, &mac)) {
            return id.key + ".mac: expected a MAC address such as \"02:00:00:00:00:0a\", got \"" + id.mac + "\"";
        }
        for (auto [map, what, value] : {std::tuple{&names, "name", id.name}, std::tuple{&addrs, "ipv4", id.ipv4},
                                        std::tuple{&macs, "mac", id.mac}}) {
            // Two NICs on one cable may share a MAC (nothing forwards by it); a switch may not.
            if (map == &macs && !switched) continue;
            const auto [it, fresh] = map->emplace(value, at);
            if (!fresh) {
                return (id.key == "topology.hosts" ? it->second : id.key) + "." + what + ": \"" + value +
                       "\" is also the " + what + " of " + (id.key == "topology.hosts" ? at : it->second);
            }
        }
    }
    return "";
}

}  // namespace

std::string check_topology(const config::scenario& s) {
    const std::string kind = s.get_string("topology.kind");
    const auto hosts = s.get_int("topology.hosts");
    const auto ports = s.get_int("topology.switch_ports");
    if (kind == "back_to_back" && hosts != 2) {
        return "topology.hosts: back_to_back joins exactly 2 hosts (got " + std::to_string(hosts) +
               "); use topology.kind \"star\" or \"leaf_spine\" for more";
    }
    if (kind != "back_to_back" && s.get_string("peer.kind") != "simulated") {
        return "peer.kind: a real peer replaces host b of a back_to_back topology only (topology.kind is \"" + kind +
               "\")";
    }
    if (kind == "star" && hosts > ports) {
        return "topology.hosts: " + std::to_string(hosts) + " hosts do not fit one switch of " + std::to_string(ports) +
               " ports (topology.switch_ports)";
    }
    if (kind == "leaf_spine") {
        const auto leaves = s.get_int("topology.leaves");
        const auto spines = s.get_int("topology.spines");
        if (hosts % leaves != 0) {
            return "topology.leaves: " + std::to_string(leaves) + " leaves do not divide " + std::to_string(hosts) +
                   " hosts (topology.hosts) evenly";
        }
        if (hosts / leaves + spines > ports) {
            return "topology.switch_ports: a leaf needs " + std::to_string(hosts / leaves) + " host ports and " +
                   std::to_string(spines) + " uplinks, more than its " + std::to_string(ports) + " ports";
        }
        if (leaves > ports) {
            return "topology.leaves: " + std::to_string(leaves) + " leaves need " + std::to_string(leaves) +
                   " ports on every spine, more than its " + std::to_string(ports) + " (topology.switch_ports)";
        }
    }
    if (kind != "back_to_back" && s.get_bool("switch.pfc.enabled")) {
        // Every port of a switch reserves its headroom out of the shared buffer.
        std::int64_t busiest = hosts;  // star: one port per host
        if (kind == "leaf_spine") {
            busiest = std::max(hosts / s.get_int("topology.leaves") + s.get_int("topology.spines"),
                               s.get_int("topology.leaves"));
        }
        const std::uint64_t reserved = static_cast<std::uint64_t>(busiest) * s.get_size("switch.pfc.headroom");
        if (reserved >= s.get_size("switch.buffer")) {
            return "switch.pfc.headroom: " + std::to_string(busiest) + " ports x " +
                   std::to_string(s.get_size("switch.pfc.headroom")) + " bytes of headroom leave nothing of the " +
                   std::to_string(s.get_size("switch.buffer")) + "-byte switch.buffer to share";
        }
    }
    if (s.get_size("switch.pfc.xon") > s.get_size("switch.pfc.xoff")) {
        return "switch.pfc.xon: " + std::to_string(s.get_size("switch.pfc.xon")) + " bytes is above switch.pfc.xoff (" +
               std::to_string(s.get_size("switch.pfc.xoff")) + ")";
    }
    const std::string links = check_host_links(s);
    return links.empty() ? check_identities(s) : links;
}

}  // namespace rnic::platform
