// VI/TCP (seed 003, draft-dicecco-vitcp-01) behind the framing interface: each ULPDU the RDMA
// engine emits becomes one VI segment (§3: segment header, RDMA header on RdmaWrite and
// RdmaReadRequest, payload, the trailer CRC when the CE exchange agreed it), one VI segment per TCP
// segment (§2.2.2.2.3 RECOMMENDED). How DDP/RDMAP maps onto VI: proto/seeds/vitcp_ddp.h. The CE
// exchange before full operation is the firmware's (firmware/firmware_vitcp.cpp,
// proto/seeds/vitcp_ce.h); it hands over the agreed CRC and RDMA Read Window in mpa_settings.
//
// Per connection (frame_options::conn) the framing keeps a session, started afresh by
// make_deframer: message numbers, open messages, the Read Requests each side has outstanding (the
// sink of ours, which no VI segment carries).
//
// Receive: in order, the codec's checks (Version, Type, lengths, options, CRC) then the message
// rules (vitcp_map::accept_in_order). Out of order, on the urgent receive path (§3.7), from the
// segment start a TCP segment's urgent pointer names: the same codec checks and
// vitcp_map::accept_out_of_order; everything else is left to buffering.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "framing/framing.h"
#include "proto/seeds/vitcp_ddp.h"

namespace rnic {

class vitcp_framing final : public framing {
public:
    // `seed`: the first message numbers' generator (deterministic runs).
    vitcp_framing(std::uint32_t bytes_per_cycle, std::uint64_t seed) : width_(bytes_per_cycle), state_(seed) {}

    framing_kind kind() const override { return framing_kind::vitcp; }
    datapath_model model() const override { return datapath_model::tlm; }
    // No markers; CRC, MULPDU and RDMA Read Window as the CE exchange settled them.
    mpa_settings settle(const mpa_settings& negotiated) const override;

    std::size_t tx_room(std::size_t ulpdu_len) const override;
    // An upper bound (the RdmaWrite overhead): the length depends on the type; frame_wire_length is exact.
    std::size_t wire_length(std::size_t ulpdu_len, const frame_options& options, std::uint32_t pos) const override;
    std::size_t frame_wire_length(const std::uint8_t* ulpdu, std::size_t ulpdu_len, const frame_options& options,
                                  std::uint32_t pos) const override;
    // Appends nothing (a refusal, proto::vitcp_map::refusal) for a ULPDU VI/TCP cannot carry. At
    // Reliable Reception every segment carries the Message ACK of what was placed by
    // options.at_ps (§3.2), and the RDMA engine's Terminate, which VI/TCP has no segment for,
    // becomes a NOP reporting the message in error with its VI Error Type (proto/seeds/vitcp_ack.h).
    datapath_cycles build(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                          std::vector<std::uint8_t>& out) override;
    // Reliable Reception: a NOP when the peer has not yet been told of every message placed by
    // options.at_ps (§3.2 Notes on NOP); nothing otherwise.
    datapath_cycles build_acknowledgement(const frame_options& options, std::uint32_t pos,
                                          std::vector<std::uint8_t>& out) override;
    // The same segment again (§2.2.2.2.5: "the same data as the original ... including all VI layer
    // headers and trailers"): the headers recorded for `pos`, the payload from the ULPDU.
    void reframe(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                 std::vector<std::uint8_t>& out) const override;

    bool placement_breaks(const frame_options&, std::uint32_t, std::size_t, std::size_t,
                          std::vector<std::uint32_t>*) const override {
        return false;  // nothing sits between a segment's payload bytes
    }

    std::unique_ptr<frame_deframer> make_deframer(const frame_options& options, frame_sink sink) override;
    // Out of order from a VI segment start the urgent pointer located (§3.7, rx_path::urgent): each
    // whole segment the codec accepts (Segment Length, CRC when negotiated) whose Write or Read
    // Response proto::vitcp_map::accept_out_of_order can place; stops at the first that must wait
    // for the messages before it, false at the first that is not a segment.
    bool deframe_whole(const frame_options& options, std::uint32_t pos, const std::uint8_t* data, std::size_t len,
                       const frame_sink& sink) override;
    // Segment starts come from the TCP header's urgent pointer, not from the bytes.
    bool locates_frames() const override { return false; }
    bool locate_frame(const frame_options&, const std::uint8_t*, std::size_t, std::uint32_t,
                      std::uint32_t*) const override {
        return false;
    }
    std::size_t split_frame_reach(const frame_options&) const override { return 0; }
    bool carries_atomics() const override { return false; }  // §3.2 Type: no atomic type
    // By the connection's reliability level (proto/seeds/vitcp_errors.h): only at Unreliable
    // Delivery, and only for an RdmaWrite's protection error or a Send's descriptor error.
    bool connection_survives(std::uint32_t conn, rx_message_error e) const override;

    proto::vitcp_map::refusal last_refusal() const { return last_refusal_; }
    const proto::vitcp_map::session* session_of(std::uint32_t conn) const;

    static constexpr std::size_t kReframeHistory = 4096;

private:
    struct sent_headers {
        proto::vitcp::header header;
        std::optional<proto::vitcp::rdma_header> rdma;
    };
    struct conn_state {
        proto::vitcp_map::session session;
        bool tx_started = false;
        std::map<std::uint32_t, sent_headers> sent;  // position -> headers, for reframe
    };
    std::uint64_t beats(std::size_t wire) const { return (wire + width_ - 1) / width_; }
    std::uint32_t next_first_message();
    // The connection's transmit state, its message numbers started on first use.
    conn_state& tx_state(const frame_options& options);
    // Appends a NOP carrying the acknowledgement fields due at options.at_ps.
    datapath_cycles append_nop(conn_state& c, const frame_options& options, std::vector<std::uint8_t>& out);

    std::uint32_t width_;
    std::uint64_t state_;
    std::map<std::uint32_t, conn_state> conns_;
    proto::vitcp_map::refusal last_refusal_ = proto::vitcp_map::refusal::none;
    friend class vitcp_deframer;
};

}  // namespace rnic
