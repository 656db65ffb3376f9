// Capture checker, the MPA layer: the Request/Reply exchange and the negotiation it concludes
// (RFC 5044 §7.1, RFC 6581 §9), the switch to Full Operation and FPDU reframing: MPA FPDUs with
// Markers and CRC (mpa::Deframer), IFT frames (seed 001, ift::Deframer) and RDMA/TCP segments
// (seed 000); each ULPDU goes to the DDP/RDMAP checks of stream_check_ddp.cpp.
#include "proto/stream_check_impl.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "proto/net.h"
#include "proto/seeds/ift.h"
#include "proto/stream_check_rdmatcp.h"
#include "proto/stream_check_text.h"

namespace rnic::proto::check {
namespace {

constexpr char kRequestKey[] = "MPA ID Req Frame";
constexpr char kReplyKey[] = "MPA ID Rep Frame";
constexpr std::size_t kKeySize = 16;
constexpr std::size_t kMaxUlpdu = 65535;

// True when `p` starts with an IFT frame whose size fields fit a DDP header and whose Header CRC
// is good (a CRC32c match by chance is 1 in 2^32).
bool looks_like_ift(const std::uint8_t* p, std::size_t len) {
    if (len < ift::kPrefixSize) return false;
    const std::size_t header_size = get_be16(p);
    if (header_size != ddp::kTaggedHeaderSize && header_size != ddp::kUntaggedHeaderSize) return false;
    const std::size_t crc_at = ift::kPrefixSize + header_size;
    return len >= crc_at + ift::kCrcSize && get_le32(p + crc_at) == crc32c(p, crc_at);
}

// True when `p` starts with what an MPA FPDU starts with (RFC 5044 §4.1, RFC 5041 §4.2): a
// ULPDU_Length that holds a DDP header, DDP version 1 and RDMAP version 1, also behind a Marker.
// In an IFT frame those bytes are header_size (14 or 18) and the high bits of payload_size.
bool looks_like_mpa(const std::uint8_t* p, std::size_t len) {
    for (const std::size_t at : {std::size_t{0}, mpa::kMarkerSize}) {
        if (len < at + 4) return false;
        const std::uint8_t* f = p + at;
        const bool versions = (f[2] & 0x03) == 1 && (f[3] >> 6) == 1;
        if (versions && get_be16(f) >= ddp::header_size_from_control(f[2])) return true;
    }
    return false;
}

// The text after "<code> in the IFT frame starting at stream byte N: " of ift::Deframer::error_detail().
std::string ift_detail(const std::string& detail) {
    const std::size_t at = detail.find(": ");
    return at == std::string::npos ? detail : detail.substr(at + 2);
}

}  // namespace

void stream_checker::Impl::parse_request_reply(dir_state& d) {
    Conn& c = *d.conn;
    if (d.pre.size() < kKeySize) return;
    const bool is_request = std::memcmp(d.pre.data(), kRequestKey, kKeySize) == 0;
    const bool is_reply = std::memcmp(d.pre.data(), kReplyKey, kKeySize) == 0;
    if (!is_request && !is_reply) {
        std::string first;
        for (std::size_t i = 0; i < 8; ++i) first += format("%02x", static_cast<unsigned>(d.pre[i]));
        conn_issue(c, severity::error, category::negotiation,
                   format("%s: no MPA Request/Reply at the start of the stream (first bytes %s...): "
                          "missing negotiation, the stream is not checked",
                          dir_name(d).c_str(), first.c_str()),
                   frame_no);
        stop(d, true);
        return;
    }
    const std::size_t need = mpa::request_reply_length(d.pre.data(), d.pre.size());
    if (need == 0) return;
    std::string error;
    mpa::decode_options lenient;
    lenient.ignore_reserved_bits = true;
    const bool pd_too_long = need - mpa::kRequestReplyHeaderSize > mpa::kMaxPrivateData;
    if (!pd_too_long && d.pre.size() < need) return;
    auto f = mpa::decode(d.pre.data(), d.pre.size(), &error, lenient);
    if (!f) {
        conn_issue(c, severity::error, category::negotiation, format("%s: %s", dir_name(d).c_str(), error.c_str()),
                   frame_no);
        stop(d, true);
        return;
    }
    const char* what = f->request ? "MPA Request" : "MPA Reply";
    if (opt.strict_reserved_bits) {
        if (f->reserved_bits != 0)
            conn_issue(c, severity::error, category::negotiation,
                       format("%s: %s has Res bits 0x%x set (RFC 5044 §7.1.1: must be zero)", dir_name(d).c_str(), what,
                              static_cast<unsigned>(f->reserved_bits)),
                       frame_no);
        if (f->request && f->reject)
            conn_issue(c, severity::error, category::negotiation,
                       format("%s: MPA Request has the R bit set (reserved in a Request)", dir_name(d).c_str()),
                       frame_no);
    }
    d.frame = std::move(f);
    d.pre.erase(d.pre.begin(), d.pre.begin() + static_cast<std::ptrdiff_t>(need));
    d.phase = phase::waiting_peer;
    negotiate(c);
}

void stream_checker::Impl::negotiate(Conn& c) {
    if (c.dir[0].phase != phase::waiting_peer || c.dir[1].phase != phase::waiting_peer) return;
    const bool r0 = c.dir[0].frame->request, r1 = c.dir[1].frame->request;
    if (r0 == r1) {
        conn_issue(c, severity::error, category::negotiation,
                   r0 ? "both sides sent an MPA Request" : "both sides sent an MPA Reply, no Request", frame_no);
        stop(c.dir[0], true);
        stop(c.dir[1], true);
        return;
    }
    dir_state& to_resp = r0 ? c.dir[0] : c.dir[1];
    dir_state& to_init = r0 ? c.dir[1] : c.dir[0];
    c.initiator = to_resp.index;
    const mpa::request_reply& req = *to_resp.frame;
    const mpa::request_reply& rep = *to_init.frame;
    c.rep.request = req;
    c.rep.reply = rep;
    c.rep.revision = rep.revision;
    auto neg_error = [&](const std::string& text) {
        conn_issue(c, severity::error, category::negotiation, text, frame_no);
    };
    if (rep.revision > req.revision)
        neg_error(format("MPA Reply has revision %u, above the Request's %u", static_cast<unsigned>(rep.revision),
                         static_cast<unsigned>(req.revision)));
    if (rep.enhanced && !req.enhanced)
        neg_error("MPA Reply has the S flag (RFC 6581 enhanced setup) but the Request did not");
    if (req.enhanced && rep.enhanced) {
        for (const mpa::request_reply* f : {&req, &rep}) {
            const bool rtr_bits = f->zero_length_send_rtr || f->zero_length_write_rtr || f->zero_length_read_rtr;
            if (!f->peer_to_peer && rtr_bits)
                neg_error(format("MPA %s: RTR flags B/C/D set with A = 0 (RFC 6581 §9.2: must be 0)",
                                 f->request ? "Request" : "Reply"));
        }
        if (req.peer_to_peer != rep.peer_to_peer && !rep.reject)
            neg_error("MPA Reply's A (peer-to-peer) flag does not match the Request's (RFC 6581 §9.2)");
        if (req.peer_to_peer && rep.peer_to_peer && !rep.reject) {
            if (!rep.zero_length_send_rtr && !rep.zero_length_write_rtr && !rep.zero_length_read_rtr)
                neg_error("MPA Reply in peer-to-peer mode offers no RTR option (RFC 6581 §9.2)");
            to_resp.expect_rtr = true;
        }
    }
    if (rep.reject) {
        c.rep.rejected = true;
        std::string pd;
        for (const std::uint8_t b : rep.private_data) pd += (b >= 0x20 && b < 0x7F) ? static_cast<char>(b) : '.';
        conn_issue(c, severity::error, category::reject,
                   format("MPA Reply rejects the connection (R = 1)%s%s%s", pd.empty() ? "" : ", private data \"",
                          pd.c_str(), pd.empty() ? "" : "\""),
                   frame_no);
        stop(to_resp, false);
        stop(to_init, false);
        return;
    }
    c.rep.negotiated = true;
    // IFT: Header and Payload CRC always; RDMA/TCP: a CRC-32 in every segment (seed 000 §3.4).
    c.rep.crc = req.crc || rep.crc || opt.framing != framing::mpa;
    if (opt.framing != framing::mpa) {
        // Seed 001 §5.3, seed 000 §3: neither has Markers; a Request/Reply asking for them is MPA's.
        for (const mpa::request_reply* f : {&req, &rep})
            if (f->marker)
                neg_error(format(
                    "MPA %s asks for Markers (M = 1), but %s framing has none (%s): MPA FPDUs? "
                    "try --framing mpa",
                    f->request ? "Request" : "Reply", opt.framing == framing::ift ? "IFT" : "RDMA/TCP",
                    opt.framing == framing::ift ? "draft-williams-iwarp-ift-00 §5.3" : "draft-williams-rdmatcp-00 §3"));
    }
    // RFC 5044 §7.1.1: the Request's M asks for Markers towards the initiator, the Reply's M
    // for Markers towards the responder.
    start_full_operation(to_resp, rep.marker);
    start_full_operation(to_init, req.marker);
}

void stream_checker::Impl::start_full_operation(dir_state& d, bool markers) {
    d.phase = phase::full;
    d.rep.full_operation = true;
    dir_state* dp = &d;
    if (opt.framing == framing::rdmatcp) {
        Conn& c = *d.conn;
        if (!c.rdmatcp) {
            c.rdmatcp = std::make_unique<rdma_tcp_streams>(
                [this, &c](int dir, const rdma_tcp_streams::segment& seg) { on_rdmatcp_segment(c.dir[dir], seg); });
        }
        d.rdmatcp = true;
    } else if (opt.framing == framing::ift) {
        ift::deframer::config cfg;
        // The platform puts exactly the DDP header under the Header CRC (models/framing/mpa_framer.cpp).
        cfg.limits.min_header_size = ddp::kTaggedHeaderSize;
        cfg.limits.max_header_size = ddp::kUntaggedHeaderSize;
        cfg.stop_on_payload_crc_error = false;  // the framing survives a Payload CRC error (§5)
        ift::deframer::handler_set h;
        h.frame = [this, dp](const ift::frame_view& f, bool payload_ok) { on_ift_frame(*dp, f, payload_ok); };
        d.ift_deframer = std::make_unique<ift::deframer>(cfg, std::move(h));
    } else {
        d.rep.markers = markers;
        mpa::deframer::config cfg;
        cfg.markers = markers;
        cfg.crc = d.conn->rep.crc;
        cfg.stream_pos = 0;  // the Marker base is the first byte of Full Operation (RFC 5044 §4.3)
        cfg.max_ulpdu = kMaxUlpdu;
        d.deframer = std::make_unique<mpa::deframer>(
            cfg, [this, dp](const std::uint8_t* ulpdu, std::size_t len) { on_ulpdu(*dp, ulpdu, len); });
    }
    std::vector<std::uint8_t> early = std::move(d.pre);
    d.pre.clear();
    if (!early.empty()) feed(d, early.data(), early.size());
}

std::uint64_t stream_checker::Impl::bytes_consumed(const dir_state& d) const {
    if (d.rdmatcp) return d.conn->rdmatcp->bytes_consumed(d.index);
    return d.ift_deframer ? d.ift_deframer->bytes_consumed() : d.deframer->bytes_consumed();
}

const char* stream_checker::Impl::frame_word(const dir_state& d) {
    return d.rdmatcp ? "RDMA/TCP segment" : d.ift_deframer ? "IFT frame" : "FPDU";
}

void stream_checker::Impl::feed(dir_state& d, const std::uint8_t* data, std::size_t len) {
    const std::uint64_t chunk_start = bytes_consumed(d);
    const std::uint64_t chunk_end = chunk_start + len;
    for (std::uint64_t i = d.first_len; i < kFirstBytes && i < chunk_end; ++i)
        if (i >= chunk_start) d.first[d.first_len++] = data[i - chunk_start];
    if (d.ift_deframer) {
        feed_ift(d, data, len, chunk_start);
        return;
    }
    if (d.rdmatcp) {
        feed_rdmatcp(d, data, len, chunk_start);
        return;
    }
    const mpa::deframe_error err = d.deframer->feed(data, len);
    collect_head(d, data, chunk_start, chunk_end);
    if (err == mpa::deframe_error::none) return;
    const std::uint64_t used = d.deframer->bytes_consumed() - chunk_start;
    const category cat = err == mpa::deframe_error::crc_mismatch ? category::crc : category::framing;
    std::string text = format("frame %llu: %s", static_cast<ull>(frame_no), d.deframer->error_detail().c_str());
    // An IFT stream read as MPA fails at its first frame (ULPDU_Length = the IFT header_size).
    if (d.rep.fpdus == 0 && d.fpdu_start == 0 && looks_like_ift(d.first, d.first_len))
        text += " (the stream starts with an IFT frame with a good Header CRC: IFT? try --framing ift)";
    dir_issue(d, severity::error, cat, text, frame_no);
    stop(d, true);
    d.rep.unchecked_bytes += len - used;
}

void stream_checker::Impl::collect_head(dir_state& d, const std::uint8_t* data, std::uint64_t chunk_start,
                                        std::uint64_t chunk_end) {
    for (std::uint64_t i = d.fpdu_start + d.head_len; d.head_len < sizeof d.head && i < chunk_end; ++i)
        if (i >= chunk_start) d.head[d.head_len++] = data[i - chunk_start];
}

void stream_checker::Impl::feed_ift(dir_state& d, const std::uint8_t* data, std::size_t len,
                                    std::uint64_t chunk_start) {
    const ift::error_code err = d.ift_deframer->feed(data, len);
    collect_head(d, data, chunk_start, chunk_start + len);
    if (err == ift::error_code::none) return;
    const std::uint64_t used = d.ift_deframer->bytes_consumed() - chunk_start;
    const std::string detail = ift_detail(d.ift_deframer->error_detail());
    std::string text;
    category cat = category::framing;
    if (err == ift::error_code::header_crc_mismatch) {
        cat = category::crc;
        text = format(
            "frame %llu, %s: bad IFT Header CRC in the frame at stream byte %llu (%s); the framing is "
            "lost, the direction is not checked further",
            static_cast<ull>(frame_no), dir_name(d).c_str(), static_cast<ull>(d.fpdu_start), detail.c_str());
    } else {
        text = format("frame %llu, %s: IFT frame at stream byte %llu: %s", static_cast<ull>(frame_no),
                      dir_name(d).c_str(), static_cast<ull>(d.fpdu_start), detail.c_str());
    }
    if (d.rep.fpdus == 0 && d.fpdu_start == 0 && looks_like_mpa(d.first, d.first_len))
        text += " (the stream starts like an MPA FPDU: MPA? try --framing mpa)";
    dir_issue(d, severity::error, cat, text, frame_no);
    stop(d, true);
    d.rep.unchecked_bytes += len - used;
}

void stream_checker::Impl::feed_rdmatcp(dir_state& d, const std::uint8_t* data, std::size_t len,
                                        std::uint64_t chunk_start) {
    const auto failure = d.conn->rdmatcp->feed(d.index, data, len);
    if (!failure) return;
    const std::uint64_t used = d.conn->rdmatcp->bytes_consumed(d.index) - chunk_start;
    std::string text =
        format("frame %llu, %s: %s", static_cast<ull>(frame_no), dir_name(d).c_str(), failure->text.c_str());
    if (failure->crc) text += "; the direction is not checked further";
    if (d.rep.fpdus == 0 && d.fpdu_start == 0 && looks_like_mpa(d.first, d.first_len))
        text += " (the stream starts like an MPA FPDU: MPA? try --framing mpa)";
    dir_issue(d, severity::error, failure->crc ? category::crc : category::framing, text, frame_no);
    stop(d, true);
    d.rep.unchecked_bytes += len > used ? len - used : 0;
}

void stream_checker::Impl::on_rdmatcp_segment(dir_state& d, const rdma_tcp_streams::segment& seg) {
    d.fpdu_start = seg.stream_offset;
    fpdu_info info;
    info.frame = frame_no;
    info.stream_offset = seg.stream_offset;
    info.wire_length = seg.wire_length;
    info.ulpdu_length = seg.ulpdu_len;
    ++d.rep.fpdus;
    d.rep.fpdu_bytes += seg.wire_length;
    d.rep.ulpdu_bytes += seg.ulpdu_len;
    check_ulpdu(d, seg.ulpdu, seg.ulpdu_len, info);
    if (opt.keep_fpdu_log) d.rep.fpdu_log.push_back(info);
    d.fpdu_start = seg.stream_offset + seg.wire_length;
    d.head_len = 0;
}

void stream_checker::Impl::on_ift_frame(dir_state& d, const ift::frame_view& f, bool payload_ok) {
    const std::uint64_t end = d.fpdu_start + f.wire_length;
    ulpdu_buf.assign(f.header, f.header + f.header_size);
    ulpdu_buf.insert(ulpdu_buf.end(), f.payload, f.payload + f.payload_size);
    if (!payload_ok) {
        dir_issue(
            d, severity::error, category::crc,
            format("frame %llu, %s: bad IFT Payload CRC in the frame at stream byte %llu (%zu payload "
                   "bytes): received 0x%08x, computed 0x%08x",
                   static_cast<ull>(frame_no), dir_name(d).c_str(), static_cast<ull>(d.fpdu_start), f.payload_size,
                   static_cast<unsigned>(f.payload_crc), static_cast<unsigned>(crc32c(f.payload, f.payload_size))),
            frame_no);
        // The DDP header is verified by its own CRC: keep the message tracking in step.
        const auto h = ddp::decode_header(ulpdu_buf.data(), ulpdu_buf.size(), nullptr);
        if (h && !h->tagged && h->size() == f.header_size) {
            auto ignore = [](const std::string&) {};
            track_message(d, *h, f.payload_size, ignore);
        }
    } else {
        fpdu_info info;
        info.frame = frame_no;
        info.stream_offset = d.fpdu_start;
        info.wire_length = f.wire_length;
        info.ulpdu_length = ulpdu_buf.size();
        ++d.rep.fpdus;
        d.rep.fpdu_bytes += f.wire_length;
        d.rep.ulpdu_bytes += ulpdu_buf.size();
        const std::size_t ddp_size = ddp::header_size_from_control(f.header[0]);  // header_size >= 14
        if (f.header_size != ddp_size)
            dir_issue(d, severity::error, category::header,
                      format("frame %llu, IFT frame at stream byte %llu: header_size %zu, but the DDP header "
                             "(T = %d) is %zu bytes",
                             static_cast<ull>(frame_no), static_cast<ull>(d.fpdu_start), f.header_size,
                             (f.header[0] & 0x80) != 0 ? 1 : 0, ddp_size),
                      frame_no);
        check_ulpdu(d, ulpdu_buf.data(), ulpdu_buf.size(), info);
        if (opt.keep_fpdu_log) d.rep.fpdu_log.push_back(info);
    }
    d.fpdu_start = end;
    d.head_len = 0;
}

std::optional<std::size_t> stream_checker::Impl::pending_ulpdu_length(const dir_state& d) const {
    const std::size_t skip = d.rep.markers && d.fpdu_start % mpa::kMarkerInterval == 0 ? mpa::kMarkerSize : 0;
    if (d.head_len < skip + 2) return std::nullopt;
    return get_be16(d.head + skip);
}

void stream_checker::Impl::on_ulpdu(dir_state& d, const std::uint8_t* ulpdu, std::size_t len) {
    const std::uint64_t end = d.deframer->bytes_consumed();
    fpdu_info info;
    info.frame = frame_no;
    info.stream_offset = d.fpdu_start;
    info.wire_length = static_cast<std::size_t>(end - d.fpdu_start);
    info.ulpdu_length = len;
    ++d.rep.fpdus;
    d.rep.fpdu_bytes += info.wire_length;
    d.rep.ulpdu_bytes += len;
    check_ulpdu(d, ulpdu, len, info);
    if (opt.keep_fpdu_log) d.rep.fpdu_log.push_back(info);
    d.fpdu_start = end;
    d.head_len = 0;
}

}  // namespace rnic::proto::check
