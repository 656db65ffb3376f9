#include "dma/dma_engine.h"

#include "core/sim_log.h"

namespace rnic {

dma_engine::dma_engine(const sc_core::sc_module_name& name, const dma_params& params)
    : sc_module(name), dma_in("dma_in"), pcie_out("pcie_out"), params_(params) {
    dma_in.register_b_transport(this, &dma_engine::b_transport);
}

void dma_engine::end_of_elaboration() {
    const int n = params_.channels > 0 ? params_.channels : 1;
    channels_.resize(static_cast<std::size_t>(n));
    stats_.resize(static_cast<std::size_t>(n));
}

void dma_engine::b_transport(int client, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const std::size_t ch = static_cast<std::size_t>(client) % channels_.size();
    // The channel is busy for its set-up; the transfer itself then overlaps on the bus.
    channels_[ch].reserve_lt(delay, cycles_time(params_.setup_cycles, params_.clock_hz));
    pcie_out->b_transport(gp, delay);
    channel_stats& st = stats_[ch];
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
        ++st.errors;
        RNIC_MLOG_D(debug, dma, delay, "channel " << ch << ": transfer at 0x" << std::hex << gp.get_address()
                                                  << std::dec << " failed");
        return;
    }
    if (gp.is_read()) {
        ++st.reads;
        st.read_bytes += gp.get_data_length();
    } else {
        ++st.writes;
        st.write_bytes += gp.get_data_length();
    }
}

void dma_engine::report_stats(boost::json::object& out) const {
    boost::json::array chans;
    channel_stats total;
    for (const channel_stats& s : stats_) {
        chans.push_back({{"reads", s.reads}, {"writes", s.writes}, {"read_bytes", s.read_bytes},
                         {"write_bytes", s.write_bytes}, {"errors", s.errors}});
        total.reads += s.reads;
        total.writes += s.writes;
        total.read_bytes += s.read_bytes;
        total.write_bytes += s.write_bytes;
        total.errors += s.errors;
    }
    out["reads"] = total.reads;
    out["writes"] = total.writes;
    out["read_bytes"] = total.read_bytes;
    out["write_bytes"] = total.write_bytes;
    out["errors"] = total.errors;
    out["channels"] = std::move(chans);
}

}  // namespace rnic
