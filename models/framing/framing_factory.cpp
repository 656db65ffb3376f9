#include "framing/framing_factory.h"

#include <stdexcept>

#include "framing/ift_framing.h"
#include "framing/mpa_framing.h"
#include "framing/rdmatcp_framing.h"
#include "framing/vitcp_framing.h"
#include "rtl/rtl_fpdu_datapath.h"

namespace rnic {

std::unique_ptr<framing> make_framing(const framing_params& params) {
    if (params.kind == framing_kind::ift) {
        if (params.model == datapath_model::rtl) throw std::invalid_argument("the RTL datapath builds MPA FPDUs only");
        return std::make_unique<ift_framing>(params.bytes_per_cycle);
    }
    if (params.kind == framing_kind::rdmatcp) {
        if (params.model == datapath_model::rtl) throw std::invalid_argument("the RTL datapath builds MPA FPDUs only");
        return std::make_unique<rdmatcp_framing>(params.bytes_per_cycle, params.seed);
    }
    if (params.kind == framing_kind::vitcp) {
        if (params.model == datapath_model::rtl) throw std::invalid_argument("the RTL datapath builds MPA FPDUs only");
        return std::make_unique<vitcp_framing>(params.bytes_per_cycle, params.seed);
    }
    if (params.model == datapath_model::rtl) {
        rtl::rtl_datapath_options o;
        o.bytes_per_cycle = params.bytes_per_cycle;
        o.clock_hz = params.clock_hz;
        o.vcd_path = params.rtl_vcd;
        return std::make_unique<mpa_framing>(rtl::make_rtl_datapath(o));
    }
    return std::make_unique<mpa_framing>(make_tlm_datapath(params.bytes_per_cycle));
}

}  // namespace rnic
