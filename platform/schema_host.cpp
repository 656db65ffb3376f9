// Scenario keys of the host side: host memory and the host bus (PCIe).
#include "config/units.h"
#include "schema_parts.h"

namespace rnic::platform {

using namespace config::literals;

void declare_host_memory(config::Node& root) {
    auto& mem = root.object("host_memory", "Host DRAM behind the root complex (same for both hosts)");
    mem.size("size", "64MiB", "Bytes of host memory", 16_MiB, 4_GiB);
    mem.time("latency", "80ns", "Access latency (DDR4-3200, loaded latency of a server part)", 0, 10_us);
    mem.rate("bandwidth", "25.6GBps", "Bandwidth of the memory port (one DDR4-3200 channel)", 1e9, 1e13);
}

void declare_pcie(config::Node& root) {
    auto& pcie = root.object("pcie", "PCIe link between host and RNIC (same for both hosts)");
    pcie.integer("generation", 3, "PCIe generation: 1/2 use 8b/10b at 2.5/5 GT/s, 3/4/5 128b/130b at 8/16/32 GT/s", 1, 5);
    pcie.integer("lanes", 8, "Lane count", 1, 16).allowed({1, 2, 4, 8, 16});
    pcie.size("max_payload", "256B", "Max payload size (MPS) of a TLP", 128, 4096);
    pcie.size("max_read_request", "512B", "Max read request size (MRRS)", 128, 4096);
    pcie.size("read_completion_boundary", "64B", "Read completion boundary (RCB)", 64, 128);
    pcie.integer("tags", 32, "Outstanding non-posted requests (tags) of the endpoint", 1, 1024);
    pcie.boolean("ecrc", false, "Append a 4-byte ECRC to every TLP");
    pcie.time("completion_latency", "450ns",
              "Root-complex turnaround of a read before memory; with 80 ns DRAM gives ~550 ns for a 64 B DMA read on "
              "Gen3 x8 (pcie-bench, Neugebauer et al., SIGCOMM 2018)",
              0, 100_us);
    pcie.integer("tlps_per_ack", 4, "TLPs per ACK DLLP (data-link overhead)", 1, 64);
    pcie.time("posted_write_cost", "20ns", "CPU cost of issuing a posted MMIO store (doorbell)", 0, 10_us);
}

}  // namespace rnic::platform
