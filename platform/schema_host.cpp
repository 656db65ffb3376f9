// Scenario keys of the host side: host memory and the host bus (PCIe or PCI-X). Sources of the
// defaults: docs/calibration.md.
#include "config/units.h"
#include "schema_parts.h"

namespace rnic::platform {

using namespace config::literals;

void declare_host_memory(config::Node& root) {
    auto& mem = root.object("host_memory", "Host DRAM behind the root complex (same for both hosts)");
    mem.size("size", "64MiB", "Bytes of host memory", 16_MiB, 4_GiB);
    mem.time("latency", "80ns", "Access latency (DDR4-3200, loaded latency of a server part)", 0, 10_us);
    mem.rate("bandwidth", "25.6GBps",
             "Bandwidth of the memory port DMA shares (one DDR4-3200 channel; raise it for Gen4/Gen5 x16 links)", 1e9,
             1e13);
}

void declare_pcie(config::Node& root) {
    auto& bus = root.object("host_bus", "Which bus joins host and RNIC (same for both hosts)");
    bus.enumeration("kind", "pcie",
                    "pcie: a PCIe link (keys under pcie); pcix: a shared 64-bit PCI-X segment (keys under pcix), the "
                    "host bus of seed 001's marker argument",
                    {"pcie", "pcix"});
    bus.enumeration("transport", "simulated",
                    "What drives host a's side of the bus: simulated (the host-CPU model runs the driver and the "
                    "workload in-process) or qemu (a Linux guest in QEMU, whose x-pci-proxy-dev forwards configuration "
                    "and BAR accesses here and whose RAM is host a's memory; keys under qemu). Host b stays simulated",
                    {"simulated", "qemu"});

    auto& pcie = root.object("pcie", "PCIe link between host and RNIC (same for both hosts)");
    pcie.integer("generation", 3, "PCIe generation: 1/2 use 8b/10b at 2.5/5 GT/s, 3/4/5 128b/130b at 8/16/32 GT/s", 1, 5);
    pcie.integer("lanes", 8, "Lane count", 1, 16).allowed({1, 2, 4, 8, 16});
    pcie.size("max_payload", "256B", "Max payload size (MPS) of a TLP (a common server setting)", 128, 4096);
    pcie.size("max_read_request", "512B", "Max read request size (MRRS) (Linux's default for most devices)", 128, 4096);
    pcie.size("read_completion_boundary", "64B", "Read completion boundary (RCB) of the root complex (x86: 64 bytes)",
              64, 128);
    pcie.boolean("rcb_completions", false,
                 "Root complex returns one completion per RCB instead of per MPS (seen on older chipsets, pcie-bench)");
    pcie.integer("tags", 32, "Outstanding non-posted requests (tags) of the endpoint (5-bit tags; 8-bit up to 256, "
                             "10-bit up to 768)",
                 1, 1024);
    pcie.boolean("ecrc", false, "Append a 4-byte ECRC to every TLP");
    pcie.boolean("addr64", false,
                 "4DW headers for every memory request (DMA addresses above 4 GiB, e.g. an IOMMU's); otherwise 3DW "
                 "below 4 GiB as the spec requires");
    pcie.time("completion_latency", "410ns",
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
    qemu.time("realtime_slack", "1ms", "How far simulated time may run ahead of wall-clock time (as peer.realtime_slack)",
              0, 10_s);
    qemu.time("poll_interval", "20us",
              "Simulated time advanced per step while waiting for the guest (a message ends the wait at once)", 100_ns,
              10_ms);

    auto& pcix = root.object("pcix", "PCI-X segment between host and RNIC when host_bus.kind is pcix");
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
}

}  // namespace rnic::platform

namespace rnic::platform {

std::string check_qemu(const config::Scenario& s) {
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
    if (s.get_string("host_bus.kind") != "pcie") {
        return "host_bus.transport: \"qemu\" attaches the RNIC as a PCI function: host_bus.kind must be \"pcie\"";
    }
    const std::string type = s.get_string("workload.type");
    if (type != "perf_server" && (type != "rping" || s.get_string("workload.rping.role") != "client")) {
        // Host a's program is the guest's: host b must run a server a guest can talk to over the wire.
        return "workload.type: with host_bus.transport \"qemu\" the guest is the client of host b's server: use "
               "workload.type \"rping\" (with workload.rping.role \"client\") or \"perf_server\"";
    }
    return "";
}

}  // namespace rnic::platform
