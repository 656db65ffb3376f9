#include "framing/rdmatcp_framing.h"

#include <utility>

#include "framing/mpa_framing.h"

namespace rnic {

namespace rt = proto::rdmatcp;
namespace map = proto::rdmatcp_map;

// The in-order receive side of one connection: the codec's Deframer finds and checks each segment
// (§5 length rule; Version, lengths, CRC, header rules); here the Connection ID is held to the
// session's (§3.4), the message sequence to accept_in_order, and the ULPDU is rebuilt.
class rdmatcp_deframer final : public frame_deframer {
public:
    rdmatcp_deframer(const rdmatcp_framing& owner, map::session& session, frame_sink sink)
        : owner_(owner),
          session_(session),
          sink_(std::move(sink)),
          deframer_(rt::deframer::config{}, [this](const rt::segment_view& seg) { on_segment(seg); }) {}

    deframe_status feed(const std::uint8_t* data, std::size_t len) override {
        if (failed_) return deframe_status::framing_error;
        const rt::error_code e = deframer_.feed(data, len);
        if (failed_) return deframe_status::framing_error;
        if (e == rt::error_code::none) return deframe_status::ok;
        error_name_ = std::string("RDMA/TCP ") + rt::to_string(e);
        error_detail_ = deframer_.error_detail();
        failed_ = true;
        return e == rt::error_code::crc_mismatch ? deframe_status::crc_error : deframe_status::framing_error;
    }
    std::string error_name() const override { return error_name_; }
    const std::string& error_detail() const override { return error_detail_; }

private:
    void on_segment(const rt::segment_view& seg) {
        if (failed_) return;  // the codec goes on through a chunk; nothing after an error counts
        const std::uint64_t id = seg.header.connection_id;
        std::string why;
        if (session_.connection_id && *session_.connection_id != id) {
            fail("RDMA/TCP connection_id_mismatch", "Connection ID " + std::to_string(id) + ", the connection's is " +
                                                        std::to_string(*session_.connection_id) + " (§3.4)");
            return;
        }
        session_.connection_id = id;  // §3.4: learned from the first segment when the peer chose it
        if (!map::to_ulpdu(seg, ulpdu_, &why)) {
            fail("RDMA/TCP control data", std::string(rt::to_string(seg.header.type)) + ": " + why);
            return;
        }
        if (!map::accept_in_order(session_, seg.header, seg.payload_len, &why, map::carries_terminate(seg))) {
            fail("RDMA/TCP message order", why);
            return;
        }
        owner_.deliver(seg, ulpdu_, sink_);
    }
    void fail(const char* name, const std::string& detail) {
        failed_ = true;
        error_name_ = name;
        error_detail_ = detail + " at stream byte " + std::to_string(deframer_.bytes_consumed());
    }

    const rdmatcp_framing& owner_;
    map::session& session_;
    frame_sink sink_;
    rt::deframer deframer_;
    std::vector<std::uint8_t> ulpdu_;
    bool failed_ = false;
    std::string error_name_;
    std::string error_detail_;
};

mpa_settings rdmatcp_framing::settle(const mpa_settings& negotiated) const {
    // No markers and a CRC in every segment (§3.4). A segment adds 26 bytes more than an MPA FPDU
    // without markers (proto/seeds/rdmatcp_ddp.h: Segment Length = ULPDU + 26, then padding and the CRC,
    // where MPA adds 2 before and the same padding and CRC after), so the MULPDU the firmware computed
    // for MPA (RFC 5044 §6) drops by 24 to keep one RDMA segment per TCP segment (§2).
    mpa_settings s = negotiated;
    s.tx_markers = s.rx_markers = false;
    s.crc = true;
    constexpr std::size_t kMoreThanMpa = map::kLengthAdded - 2;
    s.max_ulpdu = negotiated.max_ulpdu > kMoreThanMpa ? negotiated.max_ulpdu - kMoreThanMpa : 0;
    return s;
}

std::size_t rdmatcp_framing::tx_room(std::size_t) const {
    return map::kMaxAdded;
}

std::size_t rdmatcp_framing::wire_length(std::size_t ulpdu_len, const frame_options&, std::uint32_t) const {
    return map::wire_length(ulpdu_len);
}

datapath_cycles rdmatcp_framing::build(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options,
                                       std::uint32_t pos, std::vector<std::uint8_t>& out) {
    conn_state& c = conns_[options.conn];
    map::session& s = c.session;
    if (!s.connection_id) s.connection_id = ids_.next();  // we send first: we are the client (§3.4)
    if (!s.tx_started) {
        s.tx_started = true;
        s.tx_next_message = static_cast<std::uint32_t>(ids_.next());  // §3.4: SHOULD be random
    }
    map::segment_parts parts;
    last_refusal_ = map::to_segment(s, ulpdu, len, parts);
    if (last_refusal_ != map::refusal::none) return {0, 0};
    const std::size_t before = out.size();
    map::encode(parts, out);
    c.sent[pos] = parts.header;
    if (c.sent.size() > kReframeHistory) c.sent.erase(c.sent.begin());
    const std::uint64_t b = beats(out.size() - before);
    return {b, b};
}

void rdmatcp_framing::reframe(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options,
                              std::uint32_t pos, std::vector<std::uint8_t>& out) const {
    // The header build() gave depends on state that has moved on: take it as recorded for this
    // position; the Control Data and payload follow from the ULPDU alone (a scratch session, so
    // nothing here changes what comes next).
    const auto conn = conns_.find(options.conn);
    if (conn == conns_.end()) return;
    const auto it = conn->second.sent.find(pos);
    if (it == conn->second.sent.end()) return;
    map::session scratch;
    scratch.connection_id = it->second.connection_id;
    scratch.rx_read_requests.assign(1, it->second.message_number);
    map::segment_parts parts;
    if (map::to_segment(scratch, ulpdu, len, parts) != map::refusal::none) return;
    parts.header = it->second;
    map::encode(parts, out);
}

const map::session* rdmatcp_framing::session_of(std::uint32_t conn) const {
    const auto it = conns_.find(conn);
    return it == conns_.end() ? nullptr : &it->second.session;
}

void rdmatcp_framing::deliver(const rt::segment_view& seg, std::vector<std::uint8_t>& ulpdu,
                              const frame_sink& sink) const {
    const std::uint64_t b = beats(seg.wire_length);
    sink(ulpdu.data(), ulpdu.size(), {b, b});
}

std::unique_ptr<frame_deframer> rdmatcp_framing::make_deframer(const frame_options& options, frame_sink sink) {
    conn_state& c = conns_[options.conn];
    c = conn_state{};  // a new connection on this id: nothing of the last one's carries over
    return std::make_unique<rdmatcp_deframer>(*this, c.session, std::move(sink));
}

bool rdmatcp_framing::deframe_whole(const frame_options& options, std::uint32_t pos, const std::uint8_t* data,
                                    std::size_t len, const frame_sink& sink) {
    // §5: "assume that the RDMA segment is aligned with a TCP segment, and verify the correctness of
    // the header fields"; the Connection ID "selected at random" is the decisive check, "the message
    // number, CRC, and other fields only enhance the confidence". What fails goes to buffering.
    const auto conn = conns_.find(options.conn);
    if (conn == conns_.end() || !conn->second.session.connection_id) return false;  // nothing to check against
    const map::session& s = conn->second.session;
    rt::recovery::settings cfg;
    cfg.connection_id = *s.connection_id;
    cfg.accept_partial = false;  // whole segments only; a partial tail stays for the in-order path
    const rt::recovery recovery(cfg);
    std::vector<std::uint8_t> ulpdu;
    std::size_t at = 0;
    while (at < len) {
        const rt::recovery::candidate c = recovery.examine(data, len, at, pos);
        if (c.reason == rt::recovery::reason::incomplete) break;
        if (c.reason != rt::recovery::reason::accepted) return false;
        if (!map::plausible_number(s, c.header)) return false;
        // §3.4 order: only what may be "done immediately when received" is placed now; a Send or
        // Read Request waits for the messages before it (in order, through buffering).
        if (c.header.order != rt::kOrderUnconditional) break;
        std::string why;
        rt::decode_options decode;
        decode.connection_id = cfg.connection_id;
        const auto seg = rt::parse(data + at, c.wire_length, &why, nullptr, decode);
        if (!seg || !map::to_ulpdu(*seg, ulpdu, &why)) return false;
        deliver(*seg, ulpdu, sink);
        at += c.wire_length;
    }
    return true;
}

}  // namespace rnic
