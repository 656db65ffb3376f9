// DDP / RDMAP header codecs (RFC 5041 §4, RFC 5040 §4, RFC 7306 §5-§6).
#include "proto/ddp_rdmap.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "proto/bytes.h"

namespace rnic::proto::ddp {
namespace {

// DDP control byte |T|L|Rsvd(4)|DV(2)| and RDMAP control byte |RV(2)|Rsv(2)|Opcode(4)|.
constexpr std::uint8_t kTaggedBit = 0x80;
constexpr std::uint8_t kLastBit = 0x40;
constexpr std::uint8_t kVersionMask = 0x03;
constexpr std::uint8_t kOpcodeMask = 0x0F;
// Terminate control word, first 19 bits: Layer(4) EType(4) Code(8) M D R.
constexpr std::uint8_t kHdrCtM = 0x80;
constexpr std::uint8_t kHdrCtD = 0x40;
constexpr std::uint8_t kHdrCtR = 0x20;
constexpr std::size_t kSegmentLengthSize = 2;

bool check_length(const char* what, std::size_t need, std::size_t len, std::string* error, parse_error* code) {
    if (len >= need) return true;
    set_code(code, parse_error::short_input);
    if (error != nullptr) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s: %zu bytes, needs %zu", what, len, need);
        *error = buf;
    }
    return false;
}

}  // namespace

const char* to_string(opcode op) {
    switch (op) {
    case opcode::rdma_write:
        return "RDMA Write";
    case opcode::read_request:
        return "RDMA Read Request";
    case opcode::read_response:
        return "RDMA Read Response";
    case opcode::send:
        return "Send";
    case opcode::send_invalidate:
        return "Send with Invalidate";
    case opcode::send_se:
        return "Send with SE";
    case opcode::send_se_invalidate:
        return "Send with SE and Invalidate";
    case opcode::terminate:
        return "Terminate";
    case opcode::immediate:
        return "Immediate Data";
    case opcode::immediate_se:
        return "Immediate Data with SE";
    case opcode::atomic_request:
        return "Atomic Request";
    case opcode::atomic_response:
        return "Atomic Response";
    }
    return "reserved opcode";
}

bool is_tagged(opcode op) {
    return op == opcode::rdma_write || op == opcode::read_response;
}

const char* to_string(atomic_opcode op) {
    switch (op) {
    case atomic_opcode::fetch_add:
        return "FetchAdd";
    case atomic_opcode::compare_swap:
        return "CmpSwap";
    }
    return "unassigned AOpCode";
}

std::size_t encode(const header& h, std::uint8_t* out) {
    out[0] = static_cast<std::uint8_t>((h.tagged ? kTaggedBit : 0) | (h.last ? kLastBit : 0) |
                                       (h.ddp_version & kVersionMask));
    out[1] = static_cast<std::uint8_t>(((h.rdmap_version & kVersionMask) << 6) |
                                       (static_cast<std::uint8_t>(h.opcode) & kOpcodeMask));
    if (h.tagged) {
        put_be32(out + 2, h.stag);
        put_be64(out + 6, h.tagged_offset);
        return kTaggedHeaderSize;
    }
    put_be32(out + 2, h.invalidate_stag);
    put_be32(out + 6, h.queue);
    put_be32(out + 10, h.msn);
    put_be32(out + 14, h.mo);
    return kUntaggedHeaderSize;
}

std::optional<header> decode_header(const std::uint8_t* data, std::size_t len, std::string* error, parse_error* code) {
    if (!check_length("DDP header", 1, len, error, code)) return std::nullopt;
    header h;
    h.tagged = (data[0] & kTaggedBit) != 0;
    if (!check_length(h.tagged ? "DDP tagged header" : "DDP untagged header", h.size(), len, error, code))
        return std::nullopt;
    h.last = (data[0] & kLastBit) != 0;
    h.ddp_version = data[0] & kVersionMask;
    h.rdmap_version = static_cast<std::uint8_t>(data[1] >> 6);
    h.opcode = static_cast<opcode>(data[1] & kOpcodeMask);
    if (h.tagged) {
        h.stag = get_be32(data + 2);
        h.tagged_offset = get_be64(data + 6);
    } else {
        h.invalidate_stag = get_be32(data + 2);
        h.queue = get_be32(data + 6);
        h.msn = get_be32(data + 10);
        h.mo = get_be32(data + 14);
    }
    set_code(code, parse_error::none);
    return h;
}

void encode(const read_request& rr, std::uint8_t* out) {
    put_be32(out, rr.sink_stag);
    put_be64(out + 4, rr.sink_to);
    put_be32(out + 12, rr.size);
    put_be32(out + 16, rr.src_stag);
    put_be64(out + 20, rr.src_to);
}

std::optional<read_request> decode_read_request(const std::uint8_t* data, std::size_t len, std::string* error,
                                                parse_error* code) {
    if (!check_length("RDMA Read Request header", kReadRequestSize, len, error, code)) return std::nullopt;
    read_request rr;
    rr.sink_stag = get_be32(data);
    rr.sink_to = get_be64(data + 4);
    rr.size = get_be32(data + 12);
    rr.src_stag = get_be32(data + 16);
    rr.src_to = get_be64(data + 20);
    set_code(code, parse_error::none);
    return rr;
}

void encode(const atomic_request& req, std::uint8_t* out) {
    put_be32(out, static_cast<std::uint32_t>(req.op) & kOpcodeMask);  // 28 reserved bits, AOpCode
    put_be32(out + 4, req.request_id);
    put_be32(out + 8, req.stag);
    put_be64(out + 12, req.tagged_offset);
    put_be64(out + 20, req.add_or_swap_data);
    put_be64(out + 28, req.add_or_swap_mask);
    put_be64(out + 36, req.compare_data);
    put_be64(out + 44, req.compare_mask);
}

std::optional<atomic_request> decode_atomic_request(const std::uint8_t* data, std::size_t len, std::string* error,
                                                    parse_error* code) {
    if (!check_length("Atomic Request header", kAtomicRequestSize, len, error, code)) return std::nullopt;
    atomic_request req;
    req.op = static_cast<atomic_opcode>(data[3] & kOpcodeMask);
    req.request_id = get_be32(data + 4);
    req.stag = get_be32(data + 8);
    req.tagged_offset = get_be64(data + 12);
    req.add_or_swap_data = get_be64(data + 20);
    req.add_or_swap_mask = get_be64(data + 28);
    req.compare_data = get_be64(data + 36);
    req.compare_mask = get_be64(data + 44);
    set_code(code, parse_error::none);
    return req;
}

void encode(const atomic_response& resp, std::uint8_t* out) {
    put_be32(out, resp.request_id);
    put_be64(out + 4, resp.original_value);
}

std::optional<atomic_response> decode_atomic_response(const std::uint8_t* data, std::size_t len, std::string* error,
                                                      parse_error* code) {
    if (!check_length("Atomic Response header", kAtomicResponseSize, len, error, code)) return std::nullopt;
    atomic_response resp;
    resp.request_id = get_be32(data);
    resp.original_value = get_be64(data + 4);
    set_code(code, parse_error::none);
    return resp;
}

void encode_immediate(std::uint64_t data, std::uint8_t* out) {
    put_be64(out, data);
}

std::optional<std::uint64_t> decode_immediate(const std::uint8_t* data, std::size_t len, std::string* error,
                                              parse_error* code) {
    if (!check_length("Immediate Data", kImmediateDataSize, len, error, code)) return std::nullopt;
    set_code(code, parse_error::none);
    return get_be64(data);
}

std::vector<std::uint8_t> encode(const terminate& term) {
    // Sized once up front (one allocation; also keeps GCC 12's -Warray-bounds quiet).
    const std::size_t ddp_part = term.d ? kSegmentLengthSize + term.ddp_header.size() : 0;
    const std::size_t rdma_part = term.r ? term.rdma_header.size() : 0;
    std::vector<std::uint8_t> out(kTerminateControlSize + ddp_part + rdma_part, 0);
    out[0] = static_cast<std::uint8_t>((static_cast<std::uint8_t>(term.layer) << 4) | (term.etype & 0x0F));
    out[1] = term.code;
    out[2] = static_cast<std::uint8_t>((term.m ? kHdrCtM : 0) | (term.d ? kHdrCtD : 0) | (term.r ? kHdrCtR : 0));
    std::uint8_t* p = out.data() + kTerminateControlSize;
    if (term.d) {
        put_be16(p, term.ddp_segment_length);
        p = std::copy(term.ddp_header.begin(), term.ddp_header.end(), p + kSegmentLengthSize);
    }
    if (term.r) std::copy(term.rdma_header.begin(), term.rdma_header.end(), p);
    return out;
}

std::optional<terminate> decode_terminate(const std::uint8_t* data, std::size_t len, std::string* error,
                                          parse_error* code) {
    if (!check_length("Terminate header", kTerminateControlSize, len, error, code)) return std::nullopt;
    terminate term;
    term.layer = static_cast<term_layer>(data[0] >> 4);
    term.etype = data[0] & 0x0F;
    term.code = data[1];
    term.m = (data[2] & kHdrCtM) != 0;
    term.d = (data[2] & kHdrCtD) != 0;
    term.r = (data[2] & kHdrCtR) != 0;
    std::size_t at = kTerminateControlSize;
    if (term.d) {
        // The terminated header's own T bit tells its size (14 tagged / 18 untagged).
        if (!check_length("Terminate with D set: DDP Segment Length and DDP control byte", at + kSegmentLengthSize + 1,
                          len, error, code))
            return std::nullopt;
        term.ddp_segment_length = get_be16(data + at);
        at += kSegmentLengthSize;
        const std::size_t hdr_size = header_size_from_control(data[at]);
        if (!check_length("Terminate with D set: terminated DDP header", at + hdr_size, len, error, code))
            return std::nullopt;
        term.ddp_header.assign(data + at, data + at + hdr_size);
        at += hdr_size;
    }
    if (term.r) {
        if (!check_length("Terminate with R set: terminated RDMA header", at + kReadRequestSize, len, error, code))
            return std::nullopt;
        term.rdma_header.assign(data + at, data + at + kReadRequestSize);
    }
    set_code(code, parse_error::none);
    return term;
}

std::vector<segment> segment_message(std::size_t message_len, std::size_t max_ulpdu, bool tagged) {
    const std::size_t header = tagged ? kTaggedHeaderSize : kUntaggedHeaderSize;
    if (max_ulpdu < header) return {};
    if (message_len > std::numeric_limits<std::uint32_t>::max()) return {};  // §5.2: < 2^32
    if (message_len == 0) return {segment{0, 0, true}};
    const std::size_t per_segment = max_ulpdu - header;
    if (per_segment == 0) return {};
    std::vector<segment> segments;
    segments.reserve((message_len + per_segment - 1) / per_segment);
    for (std::size_t offset = 0; offset < message_len; offset += per_segment) {
        const std::size_t length = std::min(per_segment, message_len - offset);
        segments.push_back(segment{offset, length, offset + length == message_len});
    }
    return segments;
}

}  // namespace rnic::proto::ddp
