// Scenario keys of the host side: host memory and the host bus (PCIe or PCI-X), each declared once
// and used twice: as the global keys every host takes, and as a host's own keys (hosts.<i>.pcie.*,
// ...) that inherit the global ones key by key while unset. Sources of the defaults:
// docs/calibration.md.
#include <algorithm>

#include <boost/json.hpp>

#include "config/units.h"
#include "host_identity.h"
#include "schema_parts.h"

namespace rnic::platform {

using namespace config::literals;

namespace {

// Host memory's timing: what a host's own host_memory object may change (its size stays global:
// the workloads lay out and check every host's buffers against host_memory.size).
config::node& declare_memory_timing(config::node& mem) {
    mem.time("latency", "80ns", "Access latency (DDR4-3200, loaded latency of a server part)", 0, 10_us);
    mem.rate("bandwidth", "25.6GBps",
             "Bandwidth of the memory port DMA shares (one DDR4-3200 channel; raise it for Gen4/Gen5 x16 links)", 1e9,
             1e13);
    return mem;
}

void declare_bus_kind(config::node& bus) {
    bus.enumeration("kind", "pcie",
                    "pcie: a PCIe link (keys under pcie); pcix: a shared 64-bit PCI-X segment (keys under pcix), the "
                    "host bus of seed 001's marker argument",
                    {"pcie", "pcix"});
}

config::node& declare_pcie_keys(config::node& pcie) {
    pcie.integer("generation", 3, "PCIe generation: 1/2 use 8b/10b at 2.5/5 GT/s, 3/4/5 128b/130b at 8/16/32 GT/s", 1,
                 5);
    pcie.integer("lanes", 8, "Lane count", 1, 16).allowed({1, 2, 4, 8, 16});
    pcie.size("max_payload", "256B", "Max payload size (MPS) of a TLP (a common server setting)", 128, 4096);
    pcie.size("max_read_request", "512B", "Max read request size (MRRS) (Linux's default for most devices)", 128, 4096);
    pcie.size("read_completion_boundary", "64B", "Read completion boundary (RCB) of the root complex (x86: 64 bytes)",
              64, 128);
    pcie.boolean("rcb_completions", false,
                 "Root complex returns one completion per RCB instead of per MPS (seen on older chipsets, pcie-bench)");
    pcie.integer("tags", 32,
                 "Outstanding non-posted requests (tags) of the endpoint (5-bit tags; 8-bit up to 256, "
                 "10-bit up to 768)",
                 1, 1024);
    pcie.boolean("ecrc", false, "Append a 4-byte ECRC to every TLP");
    pcie.boolean("addr64", false,
                 "4DW headers for every memory request (DMA addresses above 4 GiB, e.g. an IOMMU's); otherwise 3DW "
                 "below 4 GiB as the spec requires");
    pcie.time(
        "completion_latency", "410ns",
        "Root-complex turnaround of a read before host memory's own time; fitted with the DMA engine's datapath to "
        "pcie-bench's DMA read latency on a Xeon E5-2620v3, Gen3 x8 (546 ns at 64 B; docs/calibration.md)",
        0, 100_us);
    pcie.integer("tlps_per_ack", 0,
                 "0: ACK and UpdateFC DLLPs at the PCIe spec's recommended rates (as the pcie-bench model); N: one of "
                 "each per N TLPs",
                 0, 64);
    pcie.integer("posted_header_credits", 64,
                 "Posted-header flow-control credits of the root port (0: infinite); chosen not to limit", 0, 4096);
    pcie.integer("posted_data_credits", 1024,
                 "Posted-data credits of the root port, 16 bytes each (0: infinite); chosen not to limit", 0, 65536);
    pcie.integer("nonposted_header_credits", 64,
                 "Non-posted-header credits of the root port (0: infinite); chosen not to limit", 0, 4096);
    pcie.time("credit_return", "100ns",
              "From a TLP's arrival until its credits come back in an UpdateFC (root-complex processing)", 0, 100_us);
    pcie.time("posted_write_cost", "20ns", "CPU cost of issuing a posted MMIO store (doorbell)", 0, 10_us);
    return pcie;
}

config::node& declare_pcix_keys(config::node& pcix) {
    pcix.frequency("clock", "133.33MHz", "Bus clock (PCI-X 133: 1066 MB/s peak on 64 bits)", 33e6, 533.33e6);
    pcix.integer("width", 8, "Data bus width in bytes (64-bit bus)", 4, 8).allowed({4, 8});
    pcix.number("arbitration_cycles", 1, "Clocks of REQ#/GNT# hand-over per transaction not hidden by the previous one",
                0, 16);
    pcix.number("target_response_cycles", 2, "DEVSEL# decode clocks: 1 (A), 2 (B), 3 (C), 4 (subtractive)", 1, 8);
    pcix.number("turnaround_cycles", 1, "Idle clocks between transactions", 0, 8);
    pcix.integer("max_read_byte_count", 512,
                 "MMRBC of the PCI-X Command register (reset value 512; Intel recommends 4096 for 10GbE)", 512, 4096)
        .allowed({512, 1024, 2048, 4096});
    pcix.integer("max_outstanding_splits", 4,
                 "Outstanding split transactions of the device (Command register; reset value 1)", 1, 32)
        .allowed({1, 2, 3, 4, 8, 12, 16, 32});
    pcix.size("max_write_burst", "512B",
              "Bytes of a DMA write burst before the host bridge disconnects at an allowable disconnect boundary", 128,
              4096);
    pcix.size("split_completion_bytes", "0B",
              "Largest split completion the bridge returns (0: the whole request in one)", 0, 4096);
    pcix.time("completion_latency", "500ns", "Host-bridge turnaround of a read request before host memory's own time",
              0, 100_us);
    pcix.time("posted_write_cost", "20ns", "CPU cost of issuing a posted MMIO store (doorbell)", 0, 10_us);
    return pcix;
}

}  // namespace

void declare_host_memory(config::node& root) {
    auto& mem = root.object("host_memory",
                            "Host DRAM behind the root complex (every host's; a named host's hosts.<i>.host_memory "
                            "changes its latency and bandwidth)");
    mem.size("size", "64MiB", "Bytes of host memory (the same on every host)", 16_MiB, 4_GiB);
    declare_memory_timing(mem);
}

void declare_pcie(config::node& root) {
    auto& bus = root.object("host_bus",
                            "Which bus joins host and RNIC (every host's; a named host's hosts.<i>.host_bus.kind "
                            "chooses its own)");
    declare_bus_kind(bus);
    bus.enumeration("transport", "simulated",
                    "What drives host a's side of the bus: simulated (the host-CPU model runs the driver and the "
                    "workload in-process) or qemu (a Linux guest in QEMU, whose x-pci-proxy-dev forwards configuration "
                    "and BAR accesses here and whose RAM is host a's memory; keys under qemu). Host b stays simulated",
                    {"simulated", "qemu"});

    declare_pcie_keys(root.object("pcie",
                                  "PCIe link between host and RNIC (every host's; a named host's hosts.<i>.pcie "
                                  "overrides it key by key)"));
    auto& qemu = root.object("qemu", "The QEMU guest behind host a's bus when host_bus.transport is qemu");
    qemu.integer("fd", -1,
                 "An inherited, connected UNIX stream socket whose other end is QEMU's x-pci-proxy-dev fd (a "
                 "socketpair made by the launcher); -1: none",
                 -1, 65535);
    qemu.string("listen", "",
                "A UNIX socket path to listen on; the first connection is the proxy's socket (the launcher connects "
                "and hands its end to QEMU as x-pci-proxy-dev,fd=N)");
    qemu.time("open_timeout", "60s", "Wall-clock time to wait for the connection on qemu.listen", 1_ms, 3600_s);
    qemu.boolean("realtime", true,
                 "Keep simulated time from running ahead of wall-clock time (the guest runs in real time under TCG)");
    qemu.time("realtime_slack", "1ms",
              "How far simulated time may run ahead of wall-clock time (as peer.realtime_slack)", 0, 10_s);
    qemu.time("poll_interval", "20us",
              "Simulated time advanced per step while waiting for the guest (a message ends the wait at once)", 100_ns,
              10_ms);

    declare_pcix_keys(root.object("pcix",
                                  "PCI-X segment between host and RNIC when host_bus.kind is pcix (every host's; a "
                                  "named host's hosts.<i>.pcix overrides it key by key)"));
}

void declare_host_bus(config::node& host) {
    // Declared by the same code as the global keys, then each leaf made to inherit its global twin.
    declare_memory_timing(host.object("host_memory",
                                      "This host's memory timing; a key left unset (null) takes its host_memory.* "
                                      "value, as hosts beyond the array do"))
        .inherit_leaves_from("host_memory");
    auto& bus = host.object("host_bus", "This host's bus; unset: host_bus.kind");
    declare_bus_kind(bus);
    bus.inherit_leaves_from("host_bus");
    declare_pcie_keys(host.object("pcie", "This host's PCIe link; a key left unset (null) takes its pcie.* value"))
        .inherit_leaves_from("pcie");
    declare_pcix_keys(host.object("pcix", "This host's PCI-X segment; a key left unset (null) takes its pcix.* value"))
        .inherit_leaves_from("pcix");
}

}  // namespace rnic::platform

namespace rnic::platform {

std::string check_qemu(const config::scenario& s) {
    const bool qemu = s.get_string("host_bus.transport") == "qemu";
    const bool has_fd = s.get_int("qemu.fd") >= 0, has_path = !s.get_string("qemu.listen").empty();
    if (!qemu) {
        if (has_fd) return "qemu.fd: only used with host_bus.transport \"qemu\"";
        if (has_path) return "qemu.listen: only used with host_bus.transport \"qemu\"";
        return "";
    }
    if (has_fd == has_path) {
        return "qemu.fd: host_bus.transport \"qemu\" needs exactly one of qemu.fd (an inherited socket) and "
               "qemu.listen (a UNIX socket path)";
    }
    if (s.get_string("topology.kind") != "back_to_back") {
        return "host_bus.transport: \"qemu\" replaces host a of a back_to_back topology only (topology.kind is \"" +
               s.get_string("topology.kind") + "\")";
    }
    if (s.get_string("peer.kind") != "simulated") {
        return "host_bus.transport: \"qemu\" needs the simulated host b (peer.kind is \"" + s.get_string("peer.kind") +
               "\")";
    }
    const std::string host_a_kind = s.value_key(host_setting_key(s, 0, "host_bus.kind"));
    if (s.get_string(host_a_kind) != "pcie") {
        // The global key keeps its message; host a's own key is named as the one to change.
        return host_a_kind == "host_bus.kind"
                   ? "host_bus.transport: \"qemu\" attaches the RNIC as a PCI function: host_bus.kind must be \"pcie\""
                   : host_a_kind +
                         ": host_bus.transport \"qemu\" attaches the RNIC to host a as a PCI function: "
                         "host a's bus must be \"pcie\"";
    }
    const std::string type = s.get_string("workload.type");
    if (type != "perf_server" && type != "rping") {
        // Host a's program is the guest's: host b must run a peer a guest can talk to over the wire.
        return "workload.type: with host_bus.transport \"qemu\" host b runs the guest's peer: use workload.type "
               "\"rping\" (workload.rping.role is the guest's: \"client\" against host b's server, \"server\" for host "
               "b's client) or \"perf_server\"";
    }
    return "";
}

}  // namespace rnic::platform

namespace rnic::platform {

namespace {

// The objects a named host may have of its own on the host side (hosts.<i>.<object>).
constexpr const char* kHostSideObjects[] = {"host_bus", "pcie", "pcix", "host_memory"};

}  // namespace

std::string host_setting_key(const config::scenario& s, int host, const std::string& key) {
    const std::string own = "hosts." + std::to_string(host);
    return s.has(own) ? own + "." + key : key;
}

std::string host_bus_key_set(const config::scenario& s, std::size_t host) {
    for (const char* object : kHostSideObjects) {
        const std::string at = "hosts." + std::to_string(host) + "." + object;
        const std::string key = first_key_set(s.get_json(at), at);
        if (!key.empty()) return key;
    }
    return "";
}

std::string check_host_buses(const config::scenario& s) {
    const std::size_t named = std::min(s.array_size("hosts"), static_cast<std::size_t>(host_count(s)));
    if (s.get_string("peer.kind") == "socket" && named > 1) {
        const std::string key = host_bus_key_set(s, 1);
        if (!key.empty()) {
            return key +
                   ": host b is the real machine behind the socket bridge (peer.kind \"socket\"); it has no "
                   "simulated bus or memory to set";
        }
    }
    if (s.get_string("host_bus.transport") == "qemu") {
        const std::string key = first_key_set(s.get_json("hosts.0.pcix"), "hosts.0.pcix");
        if (!key.empty()) {
            return key +
                   ": host a is the QEMU guest's (host_bus.transport \"qemu\"), attached over PCIe: it has no "
                   "PCI-X segment";
        }
    }
    // What the PCIe model requires of every host's sizes, named by the key that gave the value.
    for (int host = 0; host < host_count(s); ++host) {
        for (const char* size : {"pcie.max_payload", "pcie.max_read_request", "pcie.read_completion_boundary"}) {
            const std::string key = s.value_key(host_setting_key(s, host, size));
            const std::uint64_t v = s.get_size(key);
            if ((v & (v - 1)) != 0) return key + ": " + std::to_string(v) + " is not a power of two";
        }
    }
    return "";
}

boost::json::object host_side_settings(const config::scenario& s, int host, const std::string& object) {
    boost::json::object out;
    // hosts.0 always exists (the array has at least two elements): its object lists the per-host leaves.
    for (const auto& leaf : s.get_json("hosts.0." + object).as_object()) {
        const std::string key = s.value_key(host_setting_key(s, host, object + "." + std::string(leaf.key())));
        out[leaf.key()] = s.get_json(key);
    }
    return out;
}

}  // namespace rnic::platform
