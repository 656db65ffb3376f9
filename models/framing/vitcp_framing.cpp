#include "framing/vitcp_framing.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "proto/ddp_rdmap.h"

namespace rnic {

namespace vt = proto::vitcp;
namespace map = proto::vitcp_map;
namespace ack = proto::vitcp_ack;

namespace {
// The class of error a Terminate ULPDU of the RDMA engine reports (RFC 5040 §4.8), or nullopt when
// the ULPDU is no Terminate.
std::optional<ack::vi_error> terminate_class(const std::uint8_t* ulpdu, std::size_t len) {
    namespace ddp = proto::ddp;
    const auto h = ddp::decode_header(ulpdu, len, nullptr);
    if (!h || h->tagged || h->opcode != ddp::opcode::terminate || h->queue != ddp::kQueueTerminate) return std::nullopt;
    const auto t = ddp::decode_terminate(ulpdu + ddp::kUntaggedHeaderSize, len - ddp::kUntaggedHeaderSize, nullptr);
    if (!t) return ack::vi_error::transport;
    return ack::from_terminate(static_cast<std::uint8_t>(t->layer), t->etype);
}

peer_error_kind to_peer_error(ack::vi_error e) {
    switch (e) {
    case ack::vi_error::none:
        return peer_error_kind::none;
    case ack::vi_error::memory_protection:
        return peer_error_kind::memory_protection;
    case ack::vi_error::descriptor:
        return peer_error_kind::descriptor;
    case ack::vi_error::transport:
        return peer_error_kind::transport;
    }
    return peer_error_kind::transport;
}
}  // namespace

// The in-order receive side of one connection: the codec's Deframer finds each segment by its
// Segment Length and checks it; accept_in_order holds the message rules and rebuilds the DDP
// segment, which goes on to the RDMA engine. A NOP carries nothing for it.
class vitcp_deframer final : public frame_deframer {
public:
    vitcp_deframer(const vitcp_framing& owner, map::session& session, bool crc, frame_sink sink)
        : owner_(owner),
          session_(session),
          sink_(std::move(sink)),
          deframer_(vt::deframer::config{crc, {}, session.level == proto::vitcp_ce::reliability::unreliable},
                    [this](const vt::segment_view& seg) { on_segment(seg); }) {}

    deframe_status feed(const std::uint8_t* data, std::size_t len) override {
        if (failed_) return failed_crc_ ? deframe_status::crc_error : deframe_status::framing_error;
        const vt::error_code e = deframer_.feed(data, len);
        if (failed_) return failed_crc_ ? deframe_status::crc_error : deframe_status::framing_error;
        if (e == vt::error_code::none) return deframe_status::ok;
        fail_at_expected();
        error_name_ = std::string("VI/TCP ") + vt::to_string(e);
        error_detail_ = deframer_.error_detail();
        failed_ = true;
        return e == vt::error_code::crc_mismatch ? deframe_status::crc_error : deframe_status::framing_error;
    }
    std::string error_name() const override { return error_name_; }
    const std::string& error_detail() const override { return error_detail_; }
    bool delivering_in_error() const override { return in_error_; }
    void landed(std::uint64_t at_ps) override { landed_ps_ = std::max(landed_ps_, at_ps); }
    peer_acknowledgement take_peer_acknowledgement() override { return std::exchange(report_, {}); }

private:
    // Reliable Reception: the Message ACK and Remote Error Code of a checked segment from the peer
    // (§3.2), as the engine completes work requests by them.
    void take_fields(const vt::header& h) {
        const ack::tracker::verdict v = session_.sent_messages.on_fields({h.message_ack, h.remote_error});
        if (v.placed) {
            report_.placed = true;
            report_.placed_through = v.placed_through;
        }
        if (v.error != ack::vi_error::none) {
            report_.error = to_peer_error(v.error);
            report_.error_named = v.error_named;
            report_.placed_through = v.placed_through;
        }
    }
    // The stream failed at the message expected next (its header cannot be trusted): where a
    // Reliable Reception error report points (§3.2).
    void fail_at_expected() { session_.rx_failed = map::expected_message(session_); }

    void on_segment(const vt::segment_view& seg) {
        if (failed_) return;
        // A segment the codec passed only because the connection may survive a CRC error (the
        // Deframer's continue_after_crc_error, Unreliable Delivery): whether this message's type
        // survives it is vitcp_errors.h's (§3.6 option 2).
        if (!seg.crc_ok && !map::connection_survives(session_.level, map::message_error::crc, seg.header.type)) {
            failed_ = true;
            failed_crc_ = true;
            fail_at_expected();
            error_name_ = "VI/TCP crc_mismatch";
            error_detail_ = std::string("trailer CRC of ") + vt::to_string(seg.header.type) + " message " +
                            std::to_string(seg.header.message_number) + " does not match, at stream byte " +
                            std::to_string(deframer_.bytes_consumed()) +
                            " (§3.6: " + proto::vitcp_ce::to_string(session_.level) + " closes the connection)";
            return;
        }
        if (session_.acknowledges) take_fields(seg.header);
        std::string why;
        if (!map::accept_in_order(session_, seg, ulpdu_, &why, &immediate_)) {
            failed_ = true;
            session_.rx_failed = seg.header.message_number;  // its checks passed: the number is its own
            error_name_ = "VI/TCP message order";
            error_detail_ = why + " at stream byte " + std::to_string(deframer_.bytes_consumed());
            return;
        }
        const std::uint64_t b = owner_.beats(seg.wire_length);
        // §3.2 Transmit Error, §3.6 option 2: the message is in error, the connection goes on; the
        // RDMA engine completes its receive in error (placement_ext::in_error).
        in_error_ = !seg.crc_ok || seg.header.transmit_error;
        // An error the RDMA engine finds in it is reported against its number (§3.2; a Read
        // Response's is its request's, which is how the draft numbers it).
        const bool counted = ack::acknowledged(seg.header.type);
        if (seg.header.type != vt::segment_type::nop) session_.rx_delivering = seg.header.message_number;
        landed_ps_ = 0;
        if (!ulpdu_.empty()) sink_(ulpdu_.data(), ulpdu_.size(), {b, b});  // empty: a NOP
        if (!immediate_.empty()) sink_(immediate_.data(), immediate_.size(), {0, 0});
        session_.rx_delivering.reset();
        in_error_ = false;
        // Reliable Reception: a whole message the RDMA engine took without an error (it would have
        // sent a Terminate, which reports the error instead) is acknowledged once it has landed.
        if (session_.acknowledges && counted && seg.header.eom && !session_.acks.in_error()) {
            session_.acks.placed(seg.header.message_number, landed_ps_);
        }
    }

    const vitcp_framing& owner_;
    map::session& session_;
    frame_sink sink_;
    vt::deframer deframer_;
    std::vector<std::uint8_t> ulpdu_;
    std::vector<std::uint8_t> immediate_;  // RFC 7306 Immediate Data an RdmaWrite carried (§3.2 IdV)
    bool failed_ = false;
    bool failed_crc_ = false;
    bool in_error_ = false;        // during sink_: the segment's message is in error (Unreliable Delivery)
    std::uint64_t landed_ps_ = 0;  // when the segment being delivered has landed (landed())
    peer_acknowledgement report_;  // the peer's Message ACKs since the last take
    std::string error_name_;
    std::string error_detail_;
};

mpa_settings vitcp_framing::settle(const mpa_settings& negotiated) const {
    mpa_settings s = negotiated;
    s.tx_markers = s.rx_markers = false;  // VI/TCP has none (§3.7's Urgent Marker is TCP urgent data)
    return s;
}

std::size_t vitcp_framing::tx_room(std::size_t) const {
    return map::kMaxAdded;
}

std::size_t vitcp_framing::wire_length(std::size_t ulpdu_len, const frame_options& options, std::uint32_t) const {
    return ulpdu_len + map::kMaxAdded - (options.crc ? 0 : vt::kTrailerSize);
}

std::size_t vitcp_framing::frame_wire_length(const std::uint8_t* ulpdu, std::size_t ulpdu_len,
                                             const frame_options& options, std::uint32_t) const {
    return map::wire_length(ulpdu, ulpdu_len, options.crc);
}

std::uint32_t vitcp_framing::next_first_message() {
    // splitmix64 (deterministic from the seed): §3.2 "The initial Message Number may be varied".
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::uint32_t>(z ^ (z >> 31));
}

vitcp_framing::conn_state& vitcp_framing::tx_state(const frame_options& options) {
    conn_state& c = conns_[options.conn];
    c.session.crc = options.crc;
    if (!c.tx_started) {
        c.tx_started = true;
        c.session.tx_next_message = next_first_message();
    }
    return c;
}

datapath_cycles vitcp_framing::append_nop(conn_state& c, const frame_options& options, std::vector<std::uint8_t>& out) {
    const std::size_t before = out.size();
    if (!vt::encode(map::make_nop(c.session, c.session.acks.carry(options.at_ps)), out)) return {0, 0};
    const std::uint64_t b = beats(out.size() - before);
    return {b, b};
}

datapath_cycles vitcp_framing::build(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options,
                                     std::uint32_t pos, std::vector<std::uint8_t>& out) {
    conn_state& c = tx_state(options);
    map::session& s = c.session;
    if (s.acknowledges) {
        if (const auto e = terminate_class(ulpdu, len)) {
            // VI/TCP has no Terminate. At Reliable Reception the peer learns of the error from the
            // Message ACK naming the message in error and the VI Error Type (§3.2, §3.6 option 2:
            // "a message ack MUST be sent ... indicating an Unrecoverable Transport Error"); the
            // connection then closes as at the other reliable level.
            last_refusal_ = map::refusal::none;
            s.acks.failed(map::message_in_error(s), *e);
            return append_nop(c, options, out);
        }
    }
    vt::segment seg;
    last_refusal_ = map::to_segment(s, ulpdu, len, seg);
    if (last_refusal_ != map::refusal::none) return {0, 0};
    if (s.acknowledges) {
        // §3.2: "Message ACKs may be included in any VI Message Segment".
        const ack::ack_fields f = s.acks.carry(options.at_ps);
        seg.header.message_ack = f.message_ack;
        seg.header.remote_error = f.remote_error;
    }
    const std::size_t before = out.size();
    if (!vt::encode(seg, out)) return {0, 0};  // to_segment checked every limit encode has
    c.sent[pos] = sent_headers{seg.header, seg.rdma};
    if (c.sent.size() > kReframeHistory) c.sent.erase(c.sent.begin());
    if (s.acknowledges && ack::acknowledged(seg.header.type)) {
        s.sent_messages.sent(seg.header.message_number, options.stream_offset + (out.size() - before));
    }
    const std::uint64_t b = beats(out.size() - before);
    return {b, b};
}

datapath_cycles vitcp_framing::build_acknowledgement(const frame_options& options, std::uint32_t,
                                                     std::vector<std::uint8_t>& out) {
    const auto it = conns_.find(options.conn);
    if (it == conns_.end() || !it->second.session.acknowledges || !it->second.session.acks.owed(options.at_ps)) {
        return {0, 0};
    }
    return append_nop(tx_state(options), options, out);
}

void vitcp_framing::reframe(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                            std::vector<std::uint8_t>& out) const {
    const auto conn = conns_.find(options.conn);
    if (conn == conns_.end()) return;
    const auto it = conn->second.sent.find(pos);
    if (it == conn->second.sent.end()) return;
    vt::segment seg;
    seg.header = it->second.header;
    seg.rdma = it->second.rdma;
    seg.crc = options.crc;
    const std::size_t header = len > 0 && (ulpdu[0] & 0x80) != 0 ? 14 : 18;
    if (vt::has_payload(seg.header.type) && len >= header) seg.payload.assign(ulpdu + header, ulpdu + len);
    vt::encode(seg, out);
}

bool vitcp_framing::connection_survives(std::uint32_t conn, rx_message_error e) const {
    const auto it = conns_.find(conn);
    if (it == conns_.end()) return false;
    return e == rx_message_error::protection
               ? map::connection_survives(it->second.session.level, map::message_error::protection,
                                          vt::segment_type::rdma_write)
               : map::connection_survives(it->second.session.level, map::message_error::descriptor,
                                          vt::segment_type::send);
}

const map::session* vitcp_framing::session_of(std::uint32_t conn) const {
    const auto it = conns_.find(conn);
    return it == conns_.end() ? nullptr : &it->second.session;
}

std::unique_ptr<frame_deframer> vitcp_framing::make_deframer(const frame_options& options, frame_sink sink) {
    conn_state& c = conns_[options.conn];
    c = conn_state{};  // a new connection on this id: nothing of the last one's carries over
    c.session.crc = options.crc;
    c.session.read_window = options.read_window;
    // The two reliable levels react to errors alike (vitcp_errors.h); Reliable Reception also
    // acknowledges (vitcp_ack.h).
    c.session.level = options.unreliable           ? proto::vitcp_ce::reliability::unreliable
                      : options.reliable_reception ? proto::vitcp_ce::reliability::reliable_reception
                                                   : proto::vitcp_ce::reliability::reliable_delivery;
    c.session.acknowledges = options.reliable_reception && !options.unreliable;
    return std::make_unique<vitcp_deframer>(*this, c.session, options.crc, std::move(sink));
}

bool vitcp_framing::deframe_whole(const frame_options& options, std::uint32_t, const std::uint8_t* data,
                                  std::size_t len, const frame_sink& sink) {
    const auto conn = conns_.find(options.conn);
    if (conn == conns_.end()) return false;
    const map::session& s = conn->second.session;
    std::vector<std::uint8_t> ulpdu;
    std::size_t at = 0;
    while (at < len) {
        std::string why;
        vt::error_code code = vt::error_code::none;
        const auto seg = vt::parse(data + at, len - at, s.crc, &why, &code);
        if (!seg) {
            // A segment cut by the TCP segment's end (re-segmented on the way) stays for the in-order
            // path; anything else at a located start is no segment.
            if (code == vt::error_code::truncated) break;
            return false;
        }
        const map::ooo_verdict v = map::accept_out_of_order(s, *seg, ulpdu, &why);
        if (v == map::ooo_verdict::implausible) return false;
        if (v == map::ooo_verdict::wait) break;
        const std::uint64_t b = beats(seg->wire_length);
        sink(ulpdu.data(), ulpdu.size(), {b, b});
        at += seg->wire_length;
    }
    return true;
}

}  // namespace rnic
