// The framing unit's CRC/Marker datapath, behind one narrow interface so that the MPA framing
// (mpa_framing.h) can use either the TLM model (the proto codecs plus a cycle formula) or the RTL
// (rtl/*.sv, Verilated, driven clock by clock): rnic.mpa.model = "tlm" | "rtl" in the scenario,
// chosen by make_framing (framing_factory.h).
//
// Transmit: the datapath inserts the Markers and appends the CRC32c of one FPDU (RFC 5044
// §4.1-§4.4). Receive: it removes the Markers of one whole FPDU, checks their FPDUPTRs and checks
// the CRC (§4.3, §4.4, §8). Both report what it cost in datapath clock cycles. Delineating FPDUs in
// the in-order stream (reading ULPDU_Length) is header logic and stays in C++
// (datapath_deframer below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proto/mpa.h"

namespace rnic {

enum class datapath_model : std::uint8_t { tlm, rtl };

// Cycles of the datapath clock for one FPDU.
struct datapath_cycles {
    // Cycles the datapath is occupied, i.e. its throughput cost, which the framer charges: the
    // output bus words of a transmitted FPDU, the input bus words of a received one.
    std::uint64_t beats = 0;
    // Cycles from the first input word to the last output word (pipeline fill included). The
    // TLM model has no pipeline and reports beats.
    std::uint64_t latency = 0;
};

// What the receive datapath found in one FPDU.
struct fpdu_rx_result {
    proto::mpa::deframe_error error = proto::mpa::deframe_error::none;
    std::uint32_t crc_received = 0, crc_computed = 0;
    std::uint32_t bad_marker_pos = 0;  // marker-space position of the first bad Marker
    std::uint16_t bad_marker_ptr = 0, expected_ptr = 0;
    std::vector<std::uint8_t> ulpdu;  // Markers, ULPDU_Length, PAD and CRC removed
};

class fpdu_datapath {
public:
    virtual ~fpdu_datapath() = default;
    virtual datapath_model model() const = 0;
    // Bus width in bytes.
    virtual std::uint32_t bytes_per_cycle() const = 0;

    // Appends the FPDU carrying `ulpdu` to `out`: the same bytes as proto::mpa::build_fpdu().
    virtual datapath_cycles build_fpdu(const std::uint8_t* ulpdu, std::size_t len, bool crc, bool markers,
                                       std::uint32_t stream_pos, std::vector<std::uint8_t>& out) = 0;
    // Checks one whole FPDU of `wire_len` bytes that starts at marker-space position `stream_pos`
    // (its wire length follows from its ULPDU_Length: proto::mpa::fpdu_wire_length()).
    virtual datapath_cycles check_fpdu(const std::uint8_t* wire, std::size_t wire_len, bool crc, bool markers,
                                       std::uint32_t stream_pos, fpdu_rx_result& result) = 0;
    // The CRC engine alone: conventional CRC32c of `len` bytes starting at byte lane `lane` of the
    // first bus word (an unaligned start).
    virtual std::uint32_t crc32c(const std::uint8_t* data, std::size_t len, std::uint32_t lane,
                                 datapath_cycles* cycles) = 0;
};

// The TLM model: proto::mpa codecs for the bytes, ceil(bytes / width) cycles per FPDU.
std::unique_ptr<fpdu_datapath> make_tlm_datapath(std::uint32_t bytes_per_cycle);

// Receive-side delineation over a datapath: buffers the in-order TCP stream until a whole FPDU is
// there (ULPDU_Length read at the FPDU start, behind a leading Marker if there is one), then hands
// it to the datapath. Same contract as proto::mpa::Deframer (errors, details, nothing delivered
// after the first error), so the MPA framing can use either.
class datapath_deframer {
public:
    using sink_fn = std::function<void(const std::uint8_t* ulpdu, std::size_t len, const datapath_cycles& cycles)>;
    datapath_deframer(fpdu_datapath& datapath, const proto::mpa::deframer::config& cfg, sink_fn sink);

    proto::mpa::deframe_error feed(const std::uint8_t* data, std::size_t len);
    proto::mpa::deframe_error error() const { return error_; }
    const std::string& error_detail() const { return error_detail_; }
    std::uint64_t fpdus() const { return fpdus_; }

private:
    fpdu_datapath& dp_;
    proto::mpa::deframer::config cfg_;
    sink_fn sink_;
    std::vector<std::uint8_t> pending_;  // stream bytes from the start of the next FPDU on
    std::uint32_t pos_;                  // marker-space position of pending_[0]
    std::uint64_t consumed_ = 0;         // stream bytes before pending_[0]
    fpdu_rx_result result_;
    proto::mpa::deframe_error error_ = proto::mpa::deframe_error::none;
    std::string error_detail_;
    std::uint64_t fpdus_ = 0;
};

}  // namespace rnic
