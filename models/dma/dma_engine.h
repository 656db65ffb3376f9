// Bus-master DMA engine of the RNIC. NIC blocks (the RDMA engine, the control processor) issue host
// memory reads and writes on dma_in (one binding per client, each client served by its own channel
// when there are enough); the engine charges its per-transfer set-up cost and forwards them to the
// PCIe endpoint, which cuts them into TLPs. Errors from the host (refused DMA) are passed back.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "core/stats.h"
#include "core/timed_resource.h"

namespace rnic {

struct dma_params {
    int channels = 4;
    double clock_hz = 500e6;
    // Cycles to set up one transfer (descriptor decode, address translation, TLP scheduling).
    double setup_cycles = 8;
};

class dma_engine : public sc_core::sc_module, public stats_reporter {
public:
    tlm_utils::multi_passthrough_target_socket<dma_engine> dma_in;
    tlm_utils::simple_initiator_socket<dma_engine> pcie_out;

    dma_engine(const sc_core::sc_module_name& name, const dma_params& params);
    void report_stats(boost::json::object& out) const override;

private:
    void b_transport(int client, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void end_of_elaboration() override;

    struct channel_stats {
        std::uint64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0, errors = 0;
    };
    dma_params params_;
    std::vector<timed_resource> channels_;
    std::vector<channel_stats> stats_;
};

}  // namespace rnic
