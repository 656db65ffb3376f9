// PCIe link and endpoint between the host (root complex) and the RNIC.
//  - mmio_in  <- host CPU loads/stores to BAR0;   mmio_out -> the RNIC's register file
//  - dma_in   <- the RNIC's DMA engine (bus master); mem_out -> host memory behind the root complex
//  - msix_in  <- the RNIC raises an MSI-X vector;  irq_out -> the host's interrupt controller
// Each direction of the link is a timed resource. Transfers are cut into TLPs exactly as the spec
// requires (MRRS and 4 KB boundaries for read requests, read-completion boundary and MPS for
// completions, MPS for writes) and each TLP costs header + data-link + physical framing bytes at the
// link's rate (generation, lanes and line encoding). TLPs are counted by type.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "core/stats.h"
#include "core/timed_resource.h"

namespace rnic {

struct pcie_params {
    int generation = 3;                  // 1..5
    int lanes = 8;                       // 1, 2, 4, 8, 16
    std::uint32_t max_payload = 256;     // MPS bytes
    std::uint32_t max_read_request = 512;  // MRRS bytes
    std::uint32_t read_completion_boundary = 64;
    int tags = 32;                       // outstanding non-posted requests
    bool ecrc = false;
    // Root-complex turnaround for a read: request arrival to first completion leaving, excluding the
    // memory access itself (host_memory adds that). Chosen so that a 64-byte DMA read round trip on
    // Gen3 x8 comes to about 550 ns (pcie-bench, Neugebauer et al., SIGCOMM 2018).
    sc_core::sc_time completion_latency = sc_core::sc_time(450, sc_core::SC_NS);
    // One ACK DLLP (8 bytes on the wire) per this many TLPs, and flow-control updates alike.
    int tlps_per_ack = 4;
    // Time a posted MMIO store costs the issuing CPU (write-combining buffer, uncached store).
    sc_core::sc_time posted_write_cost = sc_core::sc_time(20, sc_core::SC_NS);

    double lane_bytes_per_second() const;   // after line encoding
    std::uint32_t tlp_overhead_bytes() const;  // per TLP: framing, sequence, header, (ECRC), LCRC
};

class pcie_endpoint : public sc_core::sc_module, public stats_reporter {
public:
    tlm_utils::simple_target_socket<pcie_endpoint> mmio_in;
    tlm_utils::simple_initiator_socket<pcie_endpoint> mmio_out;
    tlm_utils::simple_target_socket<pcie_endpoint> dma_in;
    tlm_utils::simple_initiator_socket<pcie_endpoint> mem_out;
    tlm_utils::multi_passthrough_target_socket<pcie_endpoint> msix_in;  // RDMA engine and control processor
    tlm_utils::simple_initiator_socket<pcie_endpoint> irq_out;

    pcie_endpoint(const sc_core::sc_module_name& name, const pcie_params& params);

    void report_stats(boost::json::object& out) const override;

    struct tlp_counts {
        std::uint64_t mwr = 0, mrd = 0, cpld = 0, cpl = 0, msi = 0, dllp = 0;
        std::uint64_t mwr_bytes = 0, cpld_bytes = 0;   // payload bytes
        std::uint64_t wire_bytes = 0;                  // everything on the lanes
    };
    const tlp_counts& upstream() const { return up_; }
    const tlp_counts& downstream() const { return down_; }

private:
    void mmio_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void dma_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void msix_b_transport(int initiator, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    // Puts one TLP with `payload` data bytes on a direction; returns its finish time.
    sc_core::sc_time send_tlp(timed_resource& dir, tlp_counts& counts, const sc_core::sc_time& ready,
                              std::uint32_t payload);
    sc_core::sc_time dma_write(std::uint64_t addr, std::uint32_t len, const sc_core::sc_time& ready);
    sc_core::sc_time dma_read(std::uint64_t addr, std::uint32_t len, const sc_core::sc_time& ready,
                              const sc_core::sc_time& memory_time);

    pcie_params params_;
    double link_bps_;
    timed_resource up_link_;    // device -> host
    timed_resource down_link_;  // host -> device
    tlp_counts up_, down_;
    std::uint64_t dma_errors_ = 0;
};

}  // namespace rnic
