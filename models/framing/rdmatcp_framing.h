// RDMA/TCP (seed 000, draft-williams-rdmatcp-00) behind the framing interface: each ULPDU becomes
// one RDMA/TCP segment (§3: Send, RDMA_Write, RDMA_Read_Request, RDMA_Read_Response; the 64-bit
// Connection ID; message number and order; padding; the CRC-32 with generator 0xDB710641), built
// and checked by the proto::rdmatcp codec, one segment per TCP segment (§2 RECOMMENDED) and
// FPDU-aligned. How DDP/RDMAP maps onto the seed's types: proto/seeds/rdmatcp_ddp.h.
//
// Unlike MPA and IFT the frames depend on per-connection state (§3.4): the Connection ID, the
// message numbers, which Read Request a Read Response answers. The framing keeps one session per
// connection (frame_options::conn), started afresh by make_deframer (the framer's start of full
// operation). The Connection ID: the side that sends the first segment picks it (RFC 5044 §7.1.2
// makes that the MPA Initiator: the Responder holds its frames until the Initiator's first one
// arrives), the other side learns it from that first segment and uses it in both directions.
//
// Receive: in order, the codec's checks (Version, length, CRC, header rules, Connection ID) then
// the message-sequence rules (proto::rdmatcp_map::accept_in_order); out of order on the aligned path, §5:
// assume the TCP segment starts with an RDMA segment, check its header with the Connection ID and
// the message number as the extra checks and the CRC, and place what passes and what its order
// field lets be processed at once; everything else is left to buffering.
#pragma once

#include <cstdint>
#include <map>

#include "framing/framing.h"
#include "proto/seeds/rdmatcp_ddp.h"

namespace rnic {

class rdmatcp_framing final : public framing {
public:
    // `seed`: the Connection IDs' and first message numbers' generator (deterministic runs).
    rdmatcp_framing(std::uint32_t bytes_per_cycle, std::uint64_t seed) : width_(bytes_per_cycle), ids_(seed) {}

    framing_kind kind() const override { return framing_kind::rdmatcp; }
    datapath_model model() const override { return datapath_model::tlm; }
    mpa_settings settle(const mpa_settings& negotiated) const override;

    std::size_t tx_room(std::size_t ulpdu_len) const override;
    std::size_t wire_length(std::size_t ulpdu_len, const frame_options& options, std::uint32_t pos) const override;
    // Appends nothing (a refusal, proto::rdmatcp_map::refusal) for a ULPDU the seed cannot carry.
    datapath_cycles build(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                          std::vector<std::uint8_t>& out) override;
    // The header build() used at `pos` again (kept per connection, the last kReframeHistory frames).
    void reframe(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                 std::vector<std::uint8_t>& out) const override;

    bool placement_breaks(const frame_options&, std::uint32_t, std::size_t, std::size_t,
                          std::vector<std::uint32_t>*) const override {
        return false;  // nothing sits between a segment's payload bytes
    }

    std::unique_ptr<frame_deframer> make_deframer(const frame_options& options, frame_sink sink) override;
    bool deframe_whole(const frame_options& options, std::uint32_t pos, const std::uint8_t* data, std::size_t len,
                       const frame_sink& sink) override;
    bool locates_frames() const override { return false; }
    bool locate_frame(const frame_options&, const std::uint8_t*, std::size_t, std::uint32_t,
                      std::uint32_t*) const override {
        return false;  // no Markers: a segment is found only where one is assumed to start (§5)
    }
    std::size_t split_frame_reach(const frame_options&) const override { return 0; }
    bool carries_atomics() const override { return false; }  // §3.4 Type: four types, none atomic

    // Why the last build() appended nothing (none after a successful one).
    proto::rdmatcp_map::refusal last_refusal() const { return last_refusal_; }
    // The connection's session (tests, diagnostics); nullptr before make_deframer.
    const proto::rdmatcp_map::session* session_of(std::uint32_t conn) const;

    static constexpr std::size_t kReframeHistory = 4096;

private:
    struct conn_state {
        proto::rdmatcp_map::session session;
        std::map<std::uint32_t, proto::rdmatcp::header> sent;  // position -> header, for reframe
    };
    std::uint64_t beats(std::size_t wire) const { return (wire + width_ - 1) / width_; }
    void deliver(const proto::rdmatcp::segment_view& seg, std::vector<std::uint8_t>& ulpdu,
                 const frame_sink& sink) const;

    std::uint32_t width_;
    proto::rdmatcp_map::id_source ids_;
    std::map<std::uint32_t, conn_state> conns_;
    proto::rdmatcp_map::refusal last_refusal_ = proto::rdmatcp_map::refusal::none;
    friend class rdmatcp_deframer;
};

}  // namespace rnic
