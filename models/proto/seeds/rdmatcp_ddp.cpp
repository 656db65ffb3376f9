#include "proto/seeds/rdmatcp_ddp.h"

#include <cstring>

#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"

namespace rnic::proto::rdmatcp_map {

namespace ddp = proto::ddp;
using proto::get_be32;
using proto::get_be64;
using proto::put_be32;

namespace {

// DDP control byte (RFC 5041 §4.2): T, L; RDMAP control byte (RFC 5040 §4.2): the opcode's 4 bits.
constexpr std::uint8_t kTaggedBit = 0x80;
constexpr std::uint8_t kLastBit = 0x40;
std::uint8_t opcode_of(const std::uint8_t* ulpdu) {
    return ulpdu[1] & 0x0F;
}
constexpr std::uint8_t op(ddp::opcode o) {
    return static_cast<std::uint8_t>(o);
}

// Untagged header fields (RFC 5041 §4.4): RsvdULP at 2, QN at 6, MSN at 10, MO at 14.
constexpr std::size_t kQnAt = 6, kMsnAt = 10, kMoAt = 14;

bool is_send_opcode(std::uint8_t o) {
    return o == op(ddp::opcode::send) || o == op(ddp::opcode::send_invalidate) || o == op(ddp::opcode::send_se) ||
           o == op(ddp::opcode::send_se_invalidate) || o == op(ddp::opcode::immediate) ||
           o == op(ddp::opcode::immediate_se);
}

void put_word(segment_parts& out, std::size_t word, std::uint32_t v) {
    put_be32(out.control + 4 * word, v);
}

std::uint32_t word(const rt::segment_view& seg, std::size_t i) {
    return get_be32(seg.control + 4 * i);
}

}  // namespace

const char* to_string(refusal r) {
    switch (r) {
    case refusal::none:
        return "none";
    case refusal::truncated:
        return "ULPDU shorter than its DDP header";
    case refusal::atomic:
        return "RFC 7306 atomic operation (RDMA/TCP has no message type for it)";
    case refusal::unexpected_opcode:
        return "RDMAP opcode RDMA/TCP cannot carry with this DDP header";
    case refusal::unknown_queue:
        return "untagged queue number RDMA/TCP cannot carry";
    case refusal::bad_read_request:
        return "RDMA Read Request not exactly one 28-byte header at MO 0";
    case refusal::no_read_request:
        return "RDMA Read Response with no received RDMA Read Request to answer";
    case refusal::too_long:
        return "segment longer than the 16-bit Segment Length";
    }
    return "?";
}

refusal to_segment(session& s, const std::uint8_t* ulpdu, std::size_t len, segment_parts& out) {
    if (len < 2 || len < ddp::header_size_from_control(ulpdu[0])) return refusal::truncated;
    if (segment_length(len) > rt::kMaxSegmentLength) return refusal::too_long;
    const bool tagged = (ulpdu[0] & kTaggedBit) != 0;
    const bool last = (ulpdu[0] & kLastBit) != 0;
    const std::uint8_t opcode = opcode_of(ulpdu);
    const std::size_t header = tagged ? ddp::kTaggedHeaderSize : ddp::kUntaggedHeaderSize;
    rt::header& h = out.header;
    h = rt::header{};
    h.connection_id = *s.connection_id;
    std::memset(out.control, 0, sizeof out.control);
    out.control[0] = ulpdu[0];
    out.control[1] = ulpdu[1];
    out.payload = ulpdu + header;
    out.payload_len = len - header;
    if (tagged) {
        const std::uint32_t stag = get_be32(ulpdu + 2);
        const std::uint64_t to = get_be64(ulpdu + 6);
        if (opcode == op(ddp::opcode::rdma_write)) {
            h.type = rt::message_type::rdma_write;
            h.begin = h.end = true;  // one DDP segment, one RDMA_Write message (header comment)
            h.order = rt::kOrderUnconditional;
            h.buffer_id = stag;
            h.buffer_offset = static_cast<std::uint32_t>(to);
            h.rdma_length = static_cast<std::uint32_t>(out.payload_len);
            put_word(out, 1, static_cast<std::uint32_t>(to >> 32));
            h.message_number = s.tx_next_message++;
        } else if (opcode == op(ddp::opcode::read_response)) {
            if (s.rx_read_requests.empty()) return refusal::no_read_request;
            h.type = rt::message_type::read_response;
            h.begin = !s.tx_response_open;
            h.end = last;
            h.order = rt::kOrderUnconditional;
            if (h.begin) s.tx_response_base_to = to;
            // §3.4 Data Offset: payload bytes of the message before this segment.
            h.data_offset = static_cast<std::uint32_t>(to - s.tx_response_base_to);
            h.message_number = s.rx_read_requests.front();
            put_word(out, 1, stag);
            put_word(out, 2, static_cast<std::uint32_t>(to >> 32));
            put_word(out, 3, static_cast<std::uint32_t>(to));
            s.tx_response_open = !last;
            if (last) s.rx_read_requests.pop_front();
        } else {
            return refusal::unexpected_opcode;
        }
    } else {
        const std::uint32_t qn = get_be32(ulpdu + kQnAt);
        const std::uint32_t msn = get_be32(ulpdu + kMsnAt);
        const std::uint32_t mo = get_be32(ulpdu + kMoAt);
        const std::uint32_t rsvd_ulp = get_be32(ulpdu + 2);
        if (qn == ddp::kQueueAtomicResponse || opcode == op(ddp::opcode::atomic_request) ||
            opcode == op(ddp::opcode::atomic_response)) {
            return refusal::atomic;
        }
        if (qn == ddp::kQueueSend || qn == ddp::kQueueTerminate) {
            const bool ok = qn == ddp::kQueueSend ? is_send_opcode(opcode) : opcode == op(ddp::opcode::terminate);
            if (!ok) return refusal::unexpected_opcode;
            h.type = rt::message_type::send;
            h.begin = mo == 0;
            h.end = last;
            h.order = 0;
            h.data_offset = mo;
            put_word(out, 1, rsvd_ulp);
            put_word(out, 2, qn);
            put_word(out, 3, msn);
            if (qn == ddp::kQueueSend && s.tx_send_open) {
                h.message_number = s.tx_send_number;
            } else {
                h.message_number = s.tx_next_message++;
            }
            if (qn == ddp::kQueueSend) {
                s.tx_send_open = !last;
                s.tx_send_number = h.message_number;
            }
        } else if (qn == ddp::kQueueReadRequest) {
            if (opcode != op(ddp::opcode::read_request)) return refusal::unexpected_opcode;
            if (out.payload_len != ddp::kReadRequestSize || mo != 0) return refusal::bad_read_request;
            const std::uint8_t* rr = out.payload;  // sink STag, sink TO, size, source STag, source TO
            h.type = rt::message_type::read_request;
            h.begin = h.end = true;  // §3.3: exactly one segment
            h.order = 0;
            h.buffer_id = get_be32(rr + 16);
            const std::uint64_t src_to = get_be64(rr + 20);
            h.buffer_offset = static_cast<std::uint32_t>(src_to);
            h.rdma_length = get_be32(rr + 12);
            put_word(out, 1, rsvd_ulp);
            put_word(out, 2, msn);
            put_word(out, 3, mo);
            put_word(out, 4, get_be32(rr));
            std::memcpy(out.control + 20, rr + 4, 8);  // sink TO, both words, big-endian as in RDMAP
            put_word(out, 7, static_cast<std::uint32_t>(src_to >> 32));
            out.payload_len = 0;  // §3.3: no payload data
            h.message_number = s.tx_next_message++;
            s.tx_read_requests.push_back(h.message_number);
        } else {
            return refusal::unknown_queue;
        }
    }
    out.control_len = 4u * control_words(h.type);
    return refusal::none;
}

bool encode(const segment_parts& p, std::vector<std::uint8_t>& out) {
    return rt::encode(p.header, p.control, p.control_len, p.payload, p.payload_len, out);
}

bool to_ulpdu(const rt::segment_view& seg, std::vector<std::uint8_t>& ulpdu, std::string* why) {
    auto fail = [why](const char* what) {
        if (why != nullptr) *why = what;
        return false;
    };
    const rt::header& h = seg.header;
    if (seg.control_len != 4u * control_words(h.type)) return fail("Control Data length does not fit the type");
    const std::uint8_t ctrl = seg.control[0], rdmap = seg.control[1];
    if (seg.control[2] != 0 || seg.control[3] != 0) return fail("non-zero bytes after the DDP/RDMAP control bytes");
    const bool tagged = (ctrl & kTaggedBit) != 0;
    const bool last = (ctrl & kLastBit) != 0;
    const std::uint8_t opcode = rdmap & 0x0F;
    std::uint8_t hdr[ddp::kUntaggedHeaderSize] = {};
    hdr[0] = ctrl;
    hdr[1] = rdmap;
    switch (h.type) {
    case rt::message_type::rdma_write: {
        if (!tagged || opcode != op(ddp::opcode::rdma_write)) {
            return fail("RDMA_Write carrying another DDP/RDMAP header");
        }
        if (!h.begin || !h.end) return fail("RDMA_Write segment without both B and E");
        put_be32(hdr + 2, h.buffer_id);
        put_be32(hdr + 6, word(seg, 1));
        put_be32(hdr + 10, h.buffer_offset);
        ulpdu.assign(hdr, hdr + ddp::kTaggedHeaderSize);
        break;
    }
    case rt::message_type::read_response: {
        if (!tagged || opcode != op(ddp::opcode::read_response)) {
            return fail("RDMA_Read_Response carrying another DDP/RDMAP header");
        }
        if (h.end != last) return fail("E bit differs from the DDP last flag");
        std::memcpy(hdr + 2, seg.control + 4, 12);  // STag, TO 63-32, TO 31-0
        ulpdu.assign(hdr, hdr + ddp::kTaggedHeaderSize);
        break;
    }
    case rt::message_type::send: {
        const std::uint32_t qn = word(seg, 2);
        if (tagged || (qn != ddp::kQueueSend && qn != ddp::kQueueTerminate)) {
            return fail("Send carrying a tagged or non-Send/Terminate DDP header");
        }
        if (word(seg, 4) != 0) return fail("non-zero reserved Control Data word");
        if (h.end != last) return fail("E bit differs from the DDP last flag");
        if (h.begin != (h.data_offset == 0)) return fail("B bit differs from Data Offset 0");
        std::memcpy(hdr + 2, seg.control + 4, 12);  // RsvdULP, QN, MSN
        put_be32(hdr + kMoAt, h.data_offset);
        ulpdu.assign(hdr, hdr + ddp::kUntaggedHeaderSize);
        break;
    }
    case rt::message_type::read_request: {
        if (tagged || opcode != op(ddp::opcode::read_request)) {
            return fail("RDMA_Read_Request carrying another DDP/RDMAP header");
        }
        if (word(seg, 8) != 0 || word(seg, 9) != 0) return fail("non-zero reserved Control Data word");
        std::memcpy(hdr + 2, seg.control + 4, 4);  // RsvdULP
        put_be32(hdr + kQnAt, ddp::kQueueReadRequest);
        std::memcpy(hdr + kMsnAt, seg.control + 8, 8);  // MSN, MO
        ulpdu.assign(hdr, hdr + ddp::kUntaggedHeaderSize);
        std::uint8_t rr[ddp::kReadRequestSize];
        std::memcpy(rr, seg.control + 16, 12);  // sink STag, sink TO
        put_be32(rr + 12, h.rdma_length);
        put_be32(rr + 16, h.buffer_id);
        put_be32(rr + 20, word(seg, 7));
        put_be32(rr + 24, h.buffer_offset);
        ulpdu.insert(ulpdu.end(), rr, rr + sizeof rr);
        return true;
    }
    }
    ulpdu.insert(ulpdu.end(), seg.payload, seg.payload + seg.payload_len);
    return true;
}

bool carries_terminate(const rt::segment_view& seg) {
    return seg.header.type == rt::message_type::send && seg.control_len >= 12 && word(seg, 2) == ddp::kQueueTerminate;
}

bool accept_in_order(session& s, const rt::header& h, std::size_t payload_len, std::string* why, bool terminate) {
    auto fail = [why](const std::string& what) {
        if (why != nullptr) *why = what;
        return false;
    };
    if (h.type == rt::message_type::read_response) {
        // §3.4: the number of the originating Read Request; RDMAP answers them in order.
        if (s.tx_read_requests.empty() || h.message_number != s.tx_read_requests.front()) {
            return fail("RDMA_Read_Response message number " + std::to_string(h.message_number) +
                        " answers none of our outstanding RDMA_Read_Requests in order");
        }
        if (h.begin == s.rx_response_open) {
            return fail(h.begin ? "RDMA_Read_Response begins before the previous one ended"
                                : "RDMA_Read_Response continues a message that never began");
        }
        if (!h.begin && h.data_offset != s.rx_response_next_offset) {
            return fail("RDMA_Read_Response Data Offset " + std::to_string(h.data_offset) + ", expected " +
                        std::to_string(s.rx_response_next_offset));
        }
        s.rx_response_next_offset = h.data_offset + static_cast<std::uint32_t>(payload_len);
        s.rx_response_open = !h.end;
        if (h.end) s.tx_read_requests.pop_front();
        return true;
    }
    // Send, RDMA_Write, RDMA_Read_Request: one sequence (§3.4); a message's segments are sent
    // together (§4). Only QN 0 Sends span segments here; their number stays while they are open.
    const bool continues = h.type == rt::message_type::send && !h.begin;
    if (continues) {
        if (!s.rx_send_open || h.message_number != s.rx_send_number) {
            return fail("Send segment continues message " + std::to_string(h.message_number) +
                        (s.rx_send_open ? ", the open one is " + std::to_string(s.rx_send_number)
                                        : std::string(", which never began")));
        }
        if (h.data_offset != s.rx_send_next_offset) {
            return fail("Send Data Offset " + std::to_string(h.data_offset) + ", expected " +
                        std::to_string(s.rx_send_next_offset));
        }
    } else {
        if (s.rx_send_open && !terminate) {
            return fail(std::string(rt::to_string(h.type)) + " message " + std::to_string(h.message_number) +
                        " begins before Send message " + std::to_string(s.rx_send_number) + " ended (§4)");
        }
        if (!s.rx_started) {
            s.rx_started = true;  // §3.4: the first number is random; learn it
            s.rx_next_message = h.message_number;
        }
        if (h.message_number != s.rx_next_message) {
            return fail(std::string(rt::to_string(h.type)) + " message number " + std::to_string(h.message_number) +
                        ", expected " + std::to_string(s.rx_next_message));
        }
        ++s.rx_next_message;
        if (h.type == rt::message_type::read_request) s.rx_read_requests.push_back(h.message_number);
    }
    if (h.type == rt::message_type::send) {
        s.rx_send_open = !h.end;
        s.rx_send_number = h.message_number;
        s.rx_send_next_offset = h.data_offset + static_cast<std::uint32_t>(payload_len);
    }
    return true;
}

bool plausible_number(const session& s, const rt::header& h) {
    if (h.type == rt::message_type::read_response) {
        for (const std::uint32_t n : s.tx_read_requests) {
            if (n == h.message_number) return true;
        }
        return false;
    }
    if (!s.rx_started) return true;  // nothing received in order yet: no reference
    // A message still to come, or the Send still open, within a window of 2^16 messages.
    const std::uint32_t base = s.rx_send_open ? s.rx_send_number : s.rx_next_message;
    return static_cast<std::uint32_t>(h.message_number - base) < 65536u;
}

std::uint64_t id_source::next() {
    // splitmix64: a well-mixed sequence from a counter (deterministic, not cryptographic; the
    // platform needs repeatable runs, §3.4's unguessable generator is a deployment concern).
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace rnic::proto::rdmatcp_map
