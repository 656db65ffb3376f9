// MPA (RFC 5044) behind the framing interface: FPDUs with ULPDU_Length, PAD, CRC32c and, when
// negotiated, a Marker every 512 bytes of marker space. Frames are built and checked by an
// fpdu_datapath (the TLM codecs or the Verilated RTL, chosen by make_framing); what the other blocks
// ask (room, wire lengths, Marker positions, re-framing) comes from the proto::mpa codec.
#pragma once

#include <memory>

#include "framing/fpdu_datapath.h"
#include "framing/framing.h"

namespace rnic {

class mpa_framing final : public framing {
public:
    explicit mpa_framing(std::unique_ptr<fpdu_datapath> datapath);

    framing_kind kind() const override { return framing_kind::mpa; }
    datapath_model model() const override { return datapath_->model(); }
    mpa_settings settle(const mpa_settings& negotiated) const override { return negotiated; }

    std::size_t tx_room(std::size_t ulpdu_len) const override;
    // tx_room's bound: what an FPDU with Markers can add to a ULPDU of `ulpdu_len` bytes.
    static std::size_t marker_bound(std::size_t ulpdu_len);
    std::size_t wire_length(std::size_t ulpdu_len, const frame_options& options, std::uint32_t pos) const override;
    datapath_cycles build(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                          std::vector<std::uint8_t>& out) override;
    void reframe(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                 std::vector<std::uint8_t>& out) const override;

    bool placement_breaks(const frame_options& options, std::uint32_t frame_pos, std::size_t header_len,
                          std::size_t payload_len, std::vector<std::uint32_t>* breaks) const override;

    std::unique_ptr<frame_deframer> make_deframer(const frame_options& options, frame_sink sink) override;
    bool deframe_whole(const frame_options& options, std::uint32_t pos, const std::uint8_t* data, std::size_t len,
                       const frame_sink& sink) override;
    bool locates_frames() const override { return true; }
    bool locate_frame(const frame_options& options, const std::uint8_t* data, std::size_t len, std::uint32_t pos,
                      std::uint32_t* start) const override;
    std::size_t split_frame_reach(const frame_options& options) const override;

private:
    std::unique_ptr<fpdu_datapath> datapath_;
};

}  // namespace rnic
