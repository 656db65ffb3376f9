// PCIe link and endpoint between the host (root complex) and the RNIC: a host_interface whose bus
// is one PCIe link (sockets and MSI-X table: host/host_interface.h).
//
// Each direction of the link is a timed resource. Transfers are cut into TLPs exactly as the spec
// requires (PCIe Base Spec §2.2.7, §2.3.1.1): read requests at MRRS and 4 KB boundaries, completions
// at the read-completion boundary and MPS (or at every RCB, as older root complexes do), writes at
// MPS and 4 KB. A TLP costs, at the link's rate after line encoding (8b/10b for Gen1/2, 128b/130b
// for Gen3-5):
//   8 bytes of framing and data-link layer (Gen1/2: STP, sequence number, LCRC, END; Gen3+: the
//   4-byte STP token that carries the sequence number, and LCRC), a 3DW (12 B) header, or 4DW (16 B)
//   for a memory request above 4 GiB (or always, with addr64), 4 bytes of ECRC when enabled, and
//   the payload.
// Data-link overhead: ACK and UpdateFC DLLPs (8 bytes each) at the rates the spec recommends for
// the link width and MPS (Base Spec rev 5.0 tables 3-7..3-9 and 2-46..2-48) and SKP ordered sets
// (4 symbols per 1538), charged to the direction of the TLPs they answer as a share of its bandwidth
// (the convention of the pcie-bench model, Neugebauer et al., SIGCOMM 2018); or, with
// tlps_per_ack = N > 0, one ACK and one UpdateFC DLLP per N TLPs.
// Reads: at most `tags` non-posted requests are outstanding across all transfers; the root complex
// answers each after `completion_latency` plus host memory's own time. Upstream requests need the
// root port's flow-control credits (posted header/data, non-posted header), returned
// `credit_return` after each TLP arrives; completions need none (an endpoint advertises infinite
// completion credits). TLPs and DLLPs are counted per direction and type, and every TLP can go to
// the transaction timeline.
#pragma once

#include <cstdint>
#include <string>

#include "core/timed_resource.h"
#include "host/atomic_op_ext.h"
#include "host/host_interface.h"
#include "host/occupancy_pool.h"

namespace rnic {

struct pcie_params {
    int generation = 3;                           // 1..5
    int lanes = 8;                                // 1, 2, 4, 8, 16
    std::uint32_t max_payload = 256;              // MPS bytes, 128..4096
    std::uint32_t max_read_request = 512;         // MRRS bytes, 128..4096
    std::uint32_t read_completion_boundary = 64;  // RCB of the root complex: 64 or 128
    bool rcb_completions = false;                 // completions cut at every RCB (not only the first)
    int tags = 32;                                // outstanding non-posted requests (0 = unlimited)
    bool ecrc = false;
    bool addr64 = false;  // 4DW headers for every memory request
    // Root-complex turnaround of a read: request arrival to its completion being ready, excluding
    // host memory's own latency and bandwidth (host_memory adds those). Fitted to pcie-bench's DMA
    // read latency on a Xeon E5-2620v3, Gen3 x8 (docs/calibration.md).
    sc_core::sc_time completion_latency = sc_core::sc_time(410, sc_core::SC_NS);
    // 0: ACK/UpdateFC DLLPs at the spec's recommended rates; N: one of each per N TLPs.
    int tlps_per_ack = 0;
    // Flow-control credits the root port advertises for upstream requests (0 = infinite) and the
    // time from a TLP's arrival until its credits come back in an UpdateFC.
    std::uint32_t posted_header_credits = 64;
    std::uint32_t posted_data_credits = 1024;  // units of 16 bytes
    std::uint32_t nonposted_header_credits = 64;
    sc_core::sc_time credit_return = sc_core::sc_time(100, sc_core::SC_NS);
    // Time a posted MMIO store costs the issuing CPU (write-combining buffer, uncached store).
    sc_core::sc_time posted_write_cost = sc_core::sc_time(20, sc_core::SC_NS);
    // How each direction of the link serves TLPs handed over out of time order. The loosely-timed
    // blocks behind the DMA engine book TLPs at their local times, not in time order: a completion
    // handler running ahead books the MWrs of several CQEs before the WQE fetch that is ready first.
    // in_order puts each TLP after every TLP booked before it (the model so far); backfill gives it
    // the earliest idle gap at or after it is ready, as the link's transmitter would, except that a
    // posted request never starts before one handed over earlier (PCIe Base Spec §2.4.1: posted
    // requests do not pass posted requests), so data still lands before its completion entry.
    booking order = booking::in_order;
    // The function's MSI-X table and PBA in BAR0: the device behind the endpoint declares them
    // (the platform's host assembly fills them from the RNIC's regmap.h; default: no table).
    msix_layout msix;

    // Bytes per second of all lanes after line encoding.
    double raw_bytes_per_second() const;
    // Share of the raw bandwidth taken by ACK and UpdateFC DLLPs at the spec's rates and by SKP
    // ordered sets (tlps_per_ack == 0); SKP only otherwise.
    double overhead_share() const;
    // Rate at which TLP bytes cross the link.
    double tlp_bytes_per_second() const { return raw_bytes_per_second() * (1.0 - overhead_share()); }
    // Bytes of one TLP besides its payload: framing + data link (8), header (12 or 16), ECRC.
    std::uint32_t tlp_overhead(bool four_dw) const { return 8 + (four_dw ? 16 : 12) + (ecrc ? 4 : 0); }
    // Spec ACK / UpdateFC interval for this width and MPS, in bytes of link traffic.
    std::uint32_t ack_interval_bytes() const;
};

class pcie_endpoint : public host_interface {
public:
    pcie_endpoint(const sc_core::sc_module_name& name, const pcie_params& params);

    const char* bus_kind() const override { return "pcie"; }
    const pcie_params& params() const { return params_; }

    struct tlp_counts {
        std::uint64_t mwr = 0, mrd = 0, cpld = 0, cpl = 0, msi = 0;  // TLPs by type
        std::uint64_t atomic = 0, atomic_bytes = 0;                  // AtomicOp requests (§6.15)
        std::uint64_t hdr_3dw = 0, hdr_4dw = 0;                      // of the above, by header size
        std::uint64_t ack = 0, update_fc = 0;                        // DLLPs
        std::uint64_t mwr_bytes = 0, cpld_bytes = 0;                 // payload bytes
        std::uint64_t wire_bytes = 0;                                // everything on the lanes
        std::uint64_t tlps() const { return mwr + mrd + cpld + cpl + msi + atomic; }
    };
    const tlp_counts& upstream() const { return up_; }      // device -> host
    const tlp_counts& downstream() const { return down_; }  // host -> device
    const timed_resource& upstream_link() const { return up_link_; }
    const timed_resource& downstream_link() const { return down_link_; }

protected:
    void mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override;
    void dma_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay, bus_txn_ext* ext) override;
    sc_core::sc_time send_msi(std::uint64_t address, std::uint32_t data, const sc_core::sc_time& ready) override;
    void report_bus_stats(boost::json::object& out) const override;

private:
    enum class tlp_type { mwr, mrd, cpld, cpl, msi, atomic };
    struct direction {
        timed_resource link;
        tlp_counts counts;
        std::uint64_t ack_acc = 0;           // link bytes since the last ACK / UpdateFC (spec-rate mode)
        sc_core::sc_time last_posted_start;  // backfill: start of the latest posted TLP
        std::string track;                   // timeline track
    };
    // Puts one TLP on a direction when it is ready; returns when it has crossed. Fills `ext`.
    sc_core::sc_time send_tlp(direction& dir, tlp_type type, const sc_core::sc_time& ready, std::uint32_t payload,
                              std::uint64_t addr, bool four_dw, bus_txn_ext* ext);
    bool four_dw(std::uint64_t addr, std::uint32_t len) const;
    sc_core::sc_time dma_write(tlm::tlm_generic_payload& gp, const sc_core::sc_time& ready, bus_txn_ext* ext);
    sc_core::sc_time dma_read(tlm::tlm_generic_payload& gp, const sc_core::sc_time& ready, bus_txn_ext* ext);
    sc_core::sc_time dma_atomic(tlm::tlm_generic_payload& gp, atomic_op_ext& aop, const sc_core::sc_time& ready,
                                bus_txn_ext* ext);

    pcie_params params_;
    double tlp_rate_;        // bytes/s of TLP traffic
    double ticks_per_byte_;  // the same as simulation-time resolution units per byte
    std::uint32_t ack_interval_;
    direction up_dir_, down_dir_;
    timed_resource& up_link_;
    timed_resource& down_link_;
    tlp_counts& up_;
    tlp_counts& down_;
    occupancy_pool tags_, posted_hdr_, posted_data_, nonposted_hdr_;
    std::uint64_t dma_read_bytes_ = 0, dma_write_bytes_ = 0, atomic_ops_ = 0;
    tlm::tlm_generic_payload mem_scratch_;  // a read request's access to host memory
};

}  // namespace rnic
