// The one place that chooses a device's framing and the model of its datapath (TLM codecs or the
// Verilated RTL); rnic_device calls it and hands the framing to the framer, the TCP engine and the
// RDMA engine. A new framing is a sibling of mpa_framing/ift_framing/rdmatcp_framing and one case here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "framing/framing.h"

namespace rnic {

struct framing_params {
    framing_kind kind = framing_kind::mpa;  // rnic.framing
    // CRC/Marker datapath: the TLM model (proto codecs) or the Verilated RTL (rtl/, 8 or 16 bytes
    // wide; MPA only).
    datapath_model model = datapath_model::tlm;
    std::uint32_t bytes_per_cycle = 16;  // datapath width (128-bit bus)
    double clock_hz = 500e6;             // the RTL's VCD time axis
    std::string rtl_vcd;                 // RTL only: VCD of the first FPDU sent and received
    std::uint64_t seed = 0;              // RDMA/TCP: its Connection IDs and first message numbers
};

// Throws std::invalid_argument for an RTL width that was not Verilated.
std::unique_ptr<framing> make_framing(const framing_params& params);

}  // namespace rnic
