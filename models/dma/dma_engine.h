// Bus-master DMA engine of the RNIC. NIC blocks (the RDMA engine, the control processor) issue host
// memory reads and writes on dma_in (one binding per client); the engine runs each on one of its
// channels and issues it to the host bus (pcie_out: the PCIe endpoint or the PCI-X bridge), which
// cuts it into TLPs or bus transactions. Errors from the host (refused DMA) are passed back.
//
// A transfer is a plain TLM READ/WRITE of a contiguous host range, or carries a dma_ext (dma_ext.h)
// with a scatter/gather list (given, or fetched by the engine from a ring of SG elements in host
// memory) and the positions of markers in the data (given by the client, which asks the framing). The engine issues one bus transfer per
// contiguous host piece: per SG element, and, when it must fragment at markers (markers =
// fragment: a general-purpose DMA, seed 001 §6), per marker-free run inside an element. Transfers,
// marker fragments and the bus's TLPs/transactions are counted either way. A piece the host
// refuses ends the transfer with the bus's error: earlier pieces have landed (they were separate
// bus transfers), later ones are not issued. A malformed request (SG lengths that do not add up to
// the data length, marker breaks out of order, an SG ring that cannot supply the elements) is
// refused with TLM_GENERIC_ERROR_RESPONSE and an error log line before anything is issued.
//
// Timing of a channel: each bus transfer costs `setup_cycles` of the channel's control pipeline
// (descriptor decode, address translation, request scheduling; transfers of one channel overlap on
// the bus); the data then streams through the channel's datapath at bytes_per_cycle x clock, from
// the first completion on (reads) or from the issue (writes). A transfer finishes when both the bus
// and the datapath are done. Clients share the channels: a transfer takes the channel whose
// datapath frees first. At most max_outstanding_reads bus read transfers are in flight at once.
#pragma once

#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "core/stats.h"
#include "core/timed_resource.h"
#include "dma/dma_ext.h"
#include "dma/latency_histogram.h"
#include "host/atomic_op_ext.h"
#include "host/bus_txn_ext.h"
#include "host/occupancy_pool.h"

namespace rnic {

enum class dma_marker_mode { skip, fragment };

// The layout of one scatter/gather element in host memory: the descriptor format of the device the
// engine serves (the RNIC's is regmap.h's, filled in by rnic_device). Elements are little-endian:
// a 64-bit address, a 32-bit length and 32-bit flags at the given offsets; `last_flag` in the flags
// ends the list. size 0: the engine has no format and refuses transfers that ask it to fetch a ring.
struct sg_element_format {
    std::uint32_t size = 0;
    std::uint32_t addr_offset = 0, length_offset = 0, flags_offset = 0;
    std::uint32_t last_flag = 0;
};

struct dma_params {
    int channels = 4;
    // How each channel's control pipeline and datapath serve transfers booked out of time order
    // (simulation.resource_order).
    booking order = booking::in_order;
    double clock_hz = 500e6;
    // Cycles to set up one bus transfer (descriptor decode, address translation, TLP scheduling).
    double setup_cycles = 8;
    // Effective bytes per cycle through one channel's datapath; 7.25 x 500 MHz = 3.6 GB/s, fitted to
    // the slope of pcie-bench's single-DMA read latency over transfer size (docs/calibration.md).
    double bytes_per_cycle = 7.25;
    // Bus read transfers in flight across the engine (0: only the bus's own tag limit applies).
    int max_outstanding_reads = 32;
    dma_marker_mode markers = dma_marker_mode::skip;
    sg_element_format sge;  // for rings of SG elements (dma_ext::sgl_ring)
};

class dma_engine : public sc_core::sc_module, public stats_reporter {
public:
    tlm_utils::multi_passthrough_target_socket<dma_engine> dma_in;
    tlm_utils::simple_initiator_socket<dma_engine> pcie_out;

    dma_engine(const sc_core::sc_module_name& name, const dma_params& params);
    void report_stats(boost::json::object& out) const override;
    const dma_params& params() const { return params_; }

    struct channel_stats {
        std::uint64_t transfers = 0, reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
        std::uint64_t bus_transfers = 0, marker_fragments = 0, sg_elements = 0;
        std::uint64_t descriptor_fetches = 0, descriptor_bytes = 0, bus_packets = 0, errors = 0;
    };
    channel_stats totals() const;
    const latency_histogram& read_latency() const { return read_latency_; }

private:
    struct channel {
        timed_resource setup;     // control pipeline, per bus transfer
        timed_resource datapath;  // data streaming
        channel_stats stats;
        std::string track;
    };
    struct piece {
        std::uint64_t host_addr;
        std::uint32_t nic_off;
        std::uint32_t len;
        bool marker_split;  // starts right after a marker
    };
    void b_transport(int client, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // One bus transfer issued at `ready` on channel `ch`; returns its finish and status.
    tlm::tlm_response_status bus_transfer(channel& ch, tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data,
                                          std::uint32_t len, const sc_core::sc_time& ready, sc_core::sc_time* issued,
                                          sc_core::sc_time* finish, bus_txn_ext* bx, atomic_op_ext* aop = nullptr);
    bool fetch_sgl(channel& ch, const dma_ext& ext, sc_core::sc_time& t, std::vector<sg_element>* sg,
                   std::string* error, tlm::tlm_response_status* status);
    void fail(tlm::tlm_generic_payload& gp, channel& ch, const sc_core::sc_time& delay, tlm::tlm_response_status status,
              const std::string& why);

    dma_params params_;
    sc_core::sc_time setup_time_;
    double datapath_ticks_per_byte_ = 0;  // 0: no datapath limit
    std::vector<channel> channels_;
    occupancy_pool reads_;
    latency_histogram read_latency_;
    std::uint64_t bad_requests_ = 0;
    tlm::tlm_generic_payload scratch_;  // the bus transfer being issued
    // A transfer's SG list and pieces, kept between transfers so that their storage is reused (a
    // target never waits, so one transfer is worked out at a time).
    std::vector<sg_element> sg_scratch_;
    std::vector<piece> pieces_scratch_;
};

}  // namespace rnic
