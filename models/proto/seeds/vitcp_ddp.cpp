#include "proto/seeds/vitcp_ddp.h"

#include <algorithm>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "proto/ddp_rdmap.h"

namespace rnic::proto::vitcp_map {

namespace ddp = proto::ddp;

namespace {

// DDP control byte (RFC 5041 §4.2): T, L; RDMAP control byte (RFC 5040 §4.2): opcode in bits 3-0.
constexpr std::uint8_t kTaggedBit = 0x80;
constexpr std::uint8_t kLastBit = 0x40;
constexpr std::uint8_t op(ddp::opcode o) {
    return static_cast<std::uint8_t>(o);
}
// Untagged header fields (RFC 5041 §4.4): RsvdULP at 2, QN at 6, MSN at 10 (not read here), MO at 14.
constexpr std::size_t kRsvdUlpAt = 2, kQnAt = 6, kMoAt = 14;
constexpr std::uint8_t kTransmitErrorBit = 0x20;  // §3.2 Type/Flags bit 5

std::size_t segment_bytes(vt::segment_type t, std::size_t payload, bool crc) {
    return vt::overhead(t, crc) + payload;
}

}  // namespace

const char* to_string(refusal r) {
    switch (r) {
    case refusal::none:
        return "none";
    case refusal::truncated:
        return "ULPDU shorter than its DDP header";
    case refusal::unsupported:
        return "RDMAP message VI/TCP has no segment type or field for";
    case refusal::unknown_queue:
        return "untagged queue number VI/TCP cannot carry";
    case refusal::bad_read_request:
        return "RDMA Read Request not exactly one 28-byte header at MO 0";
    case refusal::no_read_request:
        return "RDMA Read Response with no received RDMA Read Request to answer";
    case refusal::too_long:
        return "segment longer than the 16-bit Segment Length";
    }
    return "?";
}

std::size_t wire_length(const std::uint8_t* ulpdu, std::size_t len, bool crc) {
    if (len < 2 || len < ddp::header_size_from_control(ulpdu[0])) return 0;
    const std::uint8_t opcode = ulpdu[1] & 0x0F;
    if ((ulpdu[0] & kTaggedBit) != 0) {
        const auto t =
            opcode == op(ddp::opcode::rdma_write) ? vt::segment_type::rdma_write : vt::segment_type::read_response;
        return segment_bytes(t, len - ddp::kTaggedHeaderSize, crc);
    }
    if (opcode == op(ddp::opcode::read_request)) return segment_bytes(vt::segment_type::read_request, 0, crc);
    if (opcode == op(ddp::opcode::immediate)) return segment_bytes(vt::segment_type::rdma_write, 0, crc);
    return segment_bytes(vt::segment_type::send, len - ddp::kUntaggedHeaderSize, crc);
}

refusal to_segment(session& s, const std::uint8_t* ulpdu, std::size_t len, vt::segment& out) {
    if (len < 2 || len < ddp::header_size_from_control(ulpdu[0])) return refusal::truncated;
    const bool tagged = (ulpdu[0] & kTaggedBit) != 0;
    const bool last = (ulpdu[0] & kLastBit) != 0;
    const std::uint8_t opcode = ulpdu[1] & 0x0F;
    out = vt::segment{};
    out.crc = s.crc;
    vt::header& h = out.header;
    const std::uint8_t* payload = nullptr;
    std::size_t payload_len = 0;
    if (tagged) {
        const std::uint32_t stag = get_be32(ulpdu + 2);
        const std::uint64_t to = get_be64(ulpdu + 6);
        payload = ulpdu + ddp::kTaggedHeaderSize;
        payload_len = len - ddp::kTaggedHeaderSize;
        if (opcode == op(ddp::opcode::rdma_write)) {
            if (segment_bytes(vt::segment_type::rdma_write, payload_len, s.crc) > vt::kMaxSegmentLength)
                return refusal::too_long;
            h.type = vt::segment_type::rdma_write;
            h.eom = true;  // one DDP segment, one VI message (header comment)
            out.rdma = vt::rdma_header{to, stag, static_cast<std::uint32_t>(payload_len)};
            h.message_number = s.tx_next_message++;
        } else if (opcode == op(ddp::opcode::read_response)) {
            if (s.rx_read_requests.empty()) return refusal::no_read_request;
            if (segment_bytes(vt::segment_type::read_response, payload_len, s.crc) > vt::kMaxSegmentLength)
                return refusal::too_long;
            h.type = vt::segment_type::read_response;
            if (!s.tx_response_open) s.tx_response_base_to = to;
            // §3.2 Data Offset: payload bytes of this message in earlier segments.
            h.data_offset = static_cast<std::uint32_t>(to - s.tx_response_base_to);
            h.eom = last;
            h.message_number = s.rx_read_requests.front();  // §3.2: the Request's number
            s.tx_response_open = !last;
            if (last) s.rx_read_requests.pop_front();
        } else {
            return refusal::unsupported;
        }
    } else {
        const std::uint32_t qn = get_be32(ulpdu + kQnAt);
        const std::uint32_t mo = get_be32(ulpdu + kMoAt);
        payload = ulpdu + ddp::kUntaggedHeaderSize;
        payload_len = len - ddp::kUntaggedHeaderSize;
        if (qn == ddp::kQueueSend && opcode == op(ddp::opcode::immediate)) {
            // RFC 7306 Immediate Data (alone, or closing an RDMA Write with Immediate): VI's RDMA
            // Write with immediate data, a zero-length RdmaWrite whose Immediate Data is valid (§3.2).
            std::string unused;
            const auto imm = ddp::decode_immediate(payload, payload_len, &unused);
            if (!imm || payload_len != ddp::kImmediateDataSize || mo != 0 || !last || *imm > 0xFFFFFFFFull)
                return refusal::unsupported;
            h.type = vt::segment_type::rdma_write;
            h.eom = true;
            h.immediate_valid = true;
            h.immediate_data = static_cast<std::uint32_t>(*imm);
            out.rdma = vt::rdma_header{0, 0, 0};
            h.message_number = s.tx_next_message++;
            payload_len = 0;
        } else if (qn == ddp::kQueueSend) {
            // Plain Send only: VI has no Solicited Event, no Invalidate STag, no 64-bit Immediate.
            if (opcode != op(ddp::opcode::send) || get_be32(ulpdu + kRsvdUlpAt) != 0) return refusal::unsupported;
            if (segment_bytes(vt::segment_type::send, payload_len, s.crc) > vt::kMaxSegmentLength)
                return refusal::too_long;
            h.type = vt::segment_type::send;
            h.data_offset = mo;
            h.eom = last;
            h.message_number = s.tx_send_open ? s.tx_send_number : s.tx_next_message++;
            s.tx_send_open = !last;
            s.tx_send_number = h.message_number;
        } else if (qn == ddp::kQueueReadRequest) {
            if (opcode != op(ddp::opcode::read_request)) return refusal::unsupported;
            if (payload_len != ddp::kReadRequestSize || mo != 0) return refusal::bad_read_request;
            std::string unused;
            const auto rr = ddp::decode_read_request(payload, payload_len, &unused);
            if (!rr) return refusal::bad_read_request;
            h.type = vt::segment_type::read_request;
            h.eom = true;  // §3.2 Data Offset: a single-segment message
            out.rdma = vt::rdma_header{rr->src_to, rr->src_stag, rr->size};
            h.message_number = s.tx_next_message++;
            s.tx_read_requests.push_back({h.message_number, rr->sink_stag, rr->sink_to});
            payload_len = 0;
        } else if (qn == ddp::kQueueTerminate || qn == ddp::kQueueAtomicResponse) {
            return refusal::unsupported;
        } else {
            return refusal::unknown_queue;
        }
    }
    out.payload.assign(payload, payload + payload_len);
    return refusal::none;
}

bool accept_in_order(session& s, const vt::segment_view& seg, std::vector<std::uint8_t>& ulpdu, std::string* why,
                     std::vector<std::uint8_t>* immediate) {
    auto fail = [why](const std::string& what) {
        if (why != nullptr) *why = what;
        return false;
    };
    const vt::header& h = seg.header;
    const std::string name = std::string(vt::to_string(h.type)) + " message " + std::to_string(h.message_number);
    if (h.transmit_error && !connection_survives(s.level, message_error::transmit_error, h.type)) {
        return fail(name + " has the Transmit Error bit: the whole message is in error (§3.2, §2.2.2.2.5)");
    }
    ulpdu.clear();
    if (immediate != nullptr) immediate->clear();
    ddp::header d;
    switch (h.type) {
    case vt::segment_type::nop:
        return true;  // §3.2: not a VI message; carries ACK fields only
    case vt::segment_type::read_response: {
        if (s.tx_read_requests.empty() || h.message_number != s.tx_read_requests.front().number) {
            return fail(name + " answers none of our outstanding RdmaReadRequests in order");
        }
        const std::uint32_t expected = s.rx_response_open ? s.rx_response_next_offset : 0;
        if (h.data_offset != expected) {
            return fail(name + " Data Offset " + std::to_string(h.data_offset) + ", expected " +
                        std::to_string(expected));
        }
        const pending_read& r = s.tx_read_requests.front();
        d.tagged = true;
        d.last = h.eom;
        d.opcode = ddp::opcode::read_response;
        d.stag = r.sink_stag;
        d.tagged_offset = r.sink_to + h.data_offset;
        s.rx_response_next_offset = h.data_offset + static_cast<std::uint32_t>(seg.payload_len);
        s.rx_response_open = !h.eom;
        if (h.eom) s.tx_read_requests.pop_front();
        break;
    }
    case vt::segment_type::send:
    case vt::segment_type::rdma_write:
    case vt::segment_type::read_request: {
        if (s.rx_open) {
            // §2.2.2.2.3: "All segments for one VI message will be transmitted before the next
            // message is started" (Read Responses excepted, above).
            if (h.message_number != s.rx_open_number) {
                return fail(name + " begins before message " + std::to_string(s.rx_open_number) +
                            " ended (§2.2.2.2.3)");
            }
            if (h.data_offset != s.rx_next_offset) {
                return fail(name + " Data Offset " + std::to_string(h.data_offset) + ", expected " +
                            std::to_string(s.rx_next_offset));
            }
        } else {
            if (h.data_offset != 0) {
                return fail(name + " starts with Data Offset " + std::to_string(h.data_offset) + " (§3.2: 0)");
            }
            if (!s.rx_started) {
                s.rx_started = true;  // §3.2: the initial number "may be varied"; learn it
                s.rx_next_message = h.message_number;
            }
            if (h.message_number != s.rx_next_message) {
                return fail(name + ": expected message number " + std::to_string(s.rx_next_message));
            }
            ++s.rx_next_message;
        }
        if (h.type == vt::segment_type::read_request) {
            // §2.2.2.2.6: the negotiated limit of outstanding RDMA Reads per VI.
            if (s.rx_read_requests.size() >= s.read_window) {
                return fail(name + " exceeds the negotiated RDMA Read Window of " + std::to_string(s.read_window) +
                            " outstanding RDMA Reads (§2.2.2.2.6)");
            }
            s.rx_read_requests.push_back(h.message_number);
            d.tagged = false;
            d.opcode = ddp::opcode::read_request;
            d.queue = ddp::kQueueReadRequest;
            d.msn = s.rx_read_msn++;
            ulpdu.resize(ddp::kUntaggedHeaderSize + ddp::kReadRequestSize);
            ddp::encode(d, ulpdu.data());
            ddp::read_request rr;
            rr.size = seg.rdma->length;
            rr.src_stag = seg.rdma->memory_handle;
            rr.src_to = seg.rdma->address;
            ddp::encode(rr, ulpdu.data() + ddp::kUntaggedHeaderSize);  // sink STag/TO 0 (header comment)
            return true;
        }
        s.rx_open = !h.eom;
        s.rx_open_number = h.message_number;
        s.rx_next_offset = h.data_offset + static_cast<std::uint32_t>(seg.payload_len);
        d.last = h.eom;
        if (h.type == vt::segment_type::send) {
            d.tagged = false;
            d.opcode = ddp::opcode::send;
            d.queue = ddp::kQueueSend;
            d.msn = s.rx_send_msn;
            d.mo = h.data_offset;
            if (h.eom) ++s.rx_send_msn;
        } else {
            // A Write of several segments keeps its RDMA Address; Data Offset places each (§3.4).
            d.tagged = true;
            d.opcode = ddp::opcode::rdma_write;
            d.stag = seg.rdma->memory_handle;
            d.tagged_offset = seg.rdma->address + h.data_offset;
            if (h.eom && h.immediate_valid) {
                // §3.2: "If the Immediate Data Valid bit is set, then the Immediate Data must be
                // delivered to the user": RFC 7306's Immediate Data message, on the Send queue.
                if (immediate == nullptr) return fail(name + " carries Immediate Data nobody takes");
                ddp::header m;
                m.opcode = ddp::opcode::immediate;
                m.queue = ddp::kQueueSend;
                m.msn = s.rx_send_msn++;
                immediate->resize(m.size() + ddp::kImmediateDataSize);
                ddp::encode(m, immediate->data());
                ddp::encode_immediate(h.immediate_data, immediate->data() + m.size());
            }
        }
        break;
    }
    default:
        return fail(std::string(vt::to_string(h.type)) + " segment after the connection was established (§4)");
    }
    if (immediate != nullptr && !immediate->empty() && seg.payload_len == 0 && h.data_offset == 0) {
        return true;  // a zero-length RdmaWrite only carries the Immediate Data
    }
    ulpdu.resize(d.size());
    ddp::encode(d, ulpdu.data());
    ulpdu.insert(ulpdu.end(), seg.payload, seg.payload + seg.payload_len);
    return true;
}

const char* to_string(ooo_verdict v) {
    switch (v) {
    case ooo_verdict::place:
        return "place";
    case ooo_verdict::wait:
        return "wait";
    case ooo_verdict::implausible:
        return "implausible";
    }
    return "?";
}

ooo_verdict accept_out_of_order(const session& s, const vt::segment_view& seg, std::vector<std::uint8_t>& ulpdu,
                                std::string* why) {
    auto verdict = [why](ooo_verdict v, const std::string& what) {
        if (why != nullptr) *why = what;
        return v;
    };
    const vt::header& h = seg.header;
    ulpdu.clear();
    // A message in error is the in-order path's to report (§3.2); it is never placed.
    if (h.transmit_error) return verdict(ooo_verdict::wait, "Transmit Error bit");
    ddp::header d;
    d.tagged = true;
    d.last = h.eom;
    if (h.type == vt::segment_type::rdma_write) {
        if (s.rx_started) {
            // A message still to come (or the open one) within 2^16 messages: beyond that no
            // message of this connection is in flight, so the bytes are not a segment start.
            const std::uint32_t base = s.rx_open ? s.rx_open_number : s.rx_next_message;
            if (static_cast<std::uint32_t>(h.message_number - base) >= 65536u) {
                return verdict(ooo_verdict::implausible, "RdmaWrite message number " +
                                                             std::to_string(h.message_number) + " far from " +
                                                             std::to_string(base));
            }
        }
        // Immediate Data is a message on the Send queue (RFC 7306 via §3.2): in order only.
        if (h.immediate_valid || seg.payload_len == 0)
            return verdict(ooo_verdict::wait, "RdmaWrite with Immediate Data");
        d.opcode = ddp::opcode::rdma_write;
        d.stag = seg.rdma->memory_handle;
        d.tagged_offset = seg.rdma->address + h.data_offset;
    } else if (h.type == vt::segment_type::read_response) {
        const auto r = std::find_if(s.tx_read_requests.begin(), s.tx_read_requests.end(),
                                    [&](const pending_read& p) { return p.number == h.message_number; });
        if (r == s.tx_read_requests.end()) {
            return verdict(ooo_verdict::implausible,
                           "RdmaReadResponse " + std::to_string(h.message_number) + " answers no Read Request of ours");
        }
        if (seg.payload_len == 0) return verdict(ooo_verdict::wait, "empty RdmaReadResponse");
        d.opcode = ddp::opcode::read_response;
        d.stag = r->sink_stag;
        d.tagged_offset = r->sink_to + h.data_offset;
    } else {
        return verdict(ooo_verdict::wait, std::string(vt::to_string(h.type)) + " waits for the messages before it");
    }
    ulpdu.resize(d.size());
    ddp::encode(d, ulpdu.data());
    ulpdu.insert(ulpdu.end(), seg.payload, seg.payload + seg.payload_len);
    return ooo_verdict::place;
}

std::uint32_t expected_message(const session& s) {
    return s.rx_open ? s.rx_open_number : s.rx_next_message;
}

std::uint32_t message_in_error(const session& s) {
    if (s.rx_delivering) return *s.rx_delivering;
    if (s.rx_failed) return *s.rx_failed;
    return expected_message(s);
}

vt::segment make_nop(const session& s, const vitcp_ack::ack_fields& fields) {
    vt::segment nop;
    nop.crc = s.crc;
    nop.header.type = vt::segment_type::nop;
    nop.header.eom = true;
    nop.header.message_number = s.tx_next_message - 1;  // the last message sent (§3.2 Notes on NOP)
    nop.header.message_ack = fields.message_ack;
    nop.header.remote_error = fields.remote_error;
    return nop;
}

std::vector<std::uint8_t> pad_for_retransmission(const std::uint8_t* segment, std::size_t len, bool crc) {
    std::string unused;
    const auto v = vt::parse(segment, len, crc, &unused);
    if (!v || v->wire_length != len) return {};
    std::vector<std::uint8_t> out(segment, segment + len);
    // "substituting zero ... for the original but maintaining the correct size" (§2.2.2.2.5).
    const std::size_t from = static_cast<std::size_t>(v->payload - segment);
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(from),
              out.begin() + static_cast<std::ptrdiff_t>(from + v->payload_len), 0);
    out[1] |= kTransmitErrorBit;
    if (v->crc_present) put_le32(out.data() + len - vt::kTrailerSize, crc_db710641(out.data(), len - vt::kTrailerSize));
    return out;
}

}  // namespace rnic::proto::vitcp_map
