// The RTL-backed framing datapath: rtl/mpa_tx_datapath.sv, rtl/mpa_rx_datapath.sv and
// rtl/crc32c_engine.sv, Verilated as C++ models (models/rtl/CMakeLists.txt) and driven clock by
// clock behind framing/fpdu_datapath.h. Selected with rnic.mpa.model = "rtl".
//
// The models are plain C++ objects owned by the datapath (not sc_modules): a datapath can be made
// at any time, and a run evaluates them only inside the framer's calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "framing/fpdu_datapath.h"

namespace rnic::rtl {

struct rtl_datapath_options {
    std::uint32_t bytes_per_cycle = 16;  // 8 (64-bit bus) or 16 (128-bit bus): the widths Verilated
    std::string vcd_path;                // non-empty: trace the first transmitted and the first received FPDU
    double clock_hz = 500e6;             // for the VCD's time axis
    std::string name = "rtl";            // prefix of the Verilated modules' names
};

class rtl_fpdu_datapath : public fpdu_datapath {
public:
    // The CRC engine over `nwords` bus words with any byte-enable pattern: word i is
    // data[i*W .. i*W+W-1], lane j enabled by bit j of be[i].
    virtual std::uint32_t crc32c_words(const std::uint8_t* data, const std::uint32_t* be, std::size_t nwords,
                                       datapath_cycles* cycles) = 0;
    // Clock cycles run so far by all three blocks (configuration cycles included).
    virtual std::uint64_t clock_cycles() const = 0;
};

bool rtl_width_supported(std::uint32_t bytes_per_cycle);
// Throws std::invalid_argument for a width that was not Verilated.
std::unique_ptr<rtl_fpdu_datapath> make_rtl_datapath(const rtl_datapath_options& options);

}  // namespace rnic::rtl
