// IFT (seed 001, draft-williams-iwarp-ift-00) behind the framing interface: a frame is two 16-bit
// size fields, the DDP header, a Header CRC, the payload and a Payload CRC (§3.1); no Markers, no
// padding, CRCs always (§5.3). Built and checked by the proto::ift codec, charged as the TLM
// datapath is (one bus word per cycle); there is no RTL model of an IFT datapath.
#pragma once

#include <cstdint>

#include "framing/framing.h"

namespace rnic {

class ift_framing final : public framing {
public:
    explicit ift_framing(std::uint32_t bytes_per_cycle) : width_(bytes_per_cycle) {}

    framing_kind kind() const override { return framing_kind::ift; }
    datapath_model model() const override { return datapath_model::tlm; }
    mpa_settings settle(const mpa_settings& negotiated) const override;

    std::size_t tx_room(std::size_t ulpdu_len) const override;
    std::size_t wire_length(std::size_t ulpdu_len, const frame_options& options, std::uint32_t pos) const override;
    datapath_cycles build(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                          std::vector<std::uint8_t>& out) override;
    void reframe(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                 std::vector<std::uint8_t>& out) const override;

    bool placement_breaks(const frame_options&, std::uint32_t, std::size_t, std::size_t,
                          std::vector<std::uint32_t>*) const override {
        return false;  // nothing sits between a frame's payload bytes
    }

    std::unique_ptr<frame_deframer> make_deframer(const frame_options& options, frame_sink sink) override;
    bool deframe_whole(const frame_options& options, std::uint32_t pos, const std::uint8_t* data, std::size_t len,
                       const frame_sink& sink) override;
    bool locates_frames() const override { return false; }
    bool locate_frame(const frame_options&, const std::uint8_t*, std::size_t, std::uint32_t,
                      std::uint32_t*) const override {
        return false;  // no Markers: a frame is found only where one is assumed to start (seed 000 §5)
    }
    std::size_t split_frame_reach(const frame_options&) const override { return 0; }

private:
    std::uint64_t beats(std::size_t wire) const { return (wire + width_ - 1) / width_; }
    std::uint32_t width_;
};

}  // namespace rnic
