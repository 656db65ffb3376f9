// RDMA/TCP segments (draft-williams-rdmatcp-00): codec, in-order deframer and §5 recovery.
#include "proto/seeds/rdmatcp.h"

#include <algorithm>
#include <cstring>

#include "proto/bytes.h"
#include "proto/crc32c.h"

namespace rnic::proto::rdmatcp {
namespace {

void set(std::string* error, error_code* code, error_code kind, std::string message) {
    if (error != nullptr) *error = std::move(message);
    if (code != nullptr) *code = kind;
}

std::string hex(std::uint64_t v, int digits) {
    static const char d[] = "0123456789abcdef";
    std::string s = "0x";
    for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) s += d[(v >> shift) & 0xFu];
    return s;
}

// Byte 1: res (bits 7-4) | B (3) | E (2) | typ (1-0), §3.1 figure.
constexpr std::uint8_t kBeginBit = 0x08;
constexpr std::uint8_t kEndBit = 0x04;

}  // namespace

const char* to_string(message_type t) {
    switch (t) {
    case message_type::send:
        return "Send";
    case message_type::rdma_write:
        return "RDMA_Write";
    case message_type::read_request:
        return "RDMA_Read_Request";
    case message_type::read_response:
        return "RDMA_Read_Response";
    }
    return "unknown";
}

const char* to_string(error_code e) {
    switch (e) {
    case error_code::none:
        return "none";
    case error_code::truncated:
        return "truncated";
    case error_code::bad_version:
        return "bad_version";
    case error_code::reserved_bits:
        return "reserved_bits";
    case error_code::length_too_short:
        return "length_too_short";
    case error_code::unexpected_payload:
        return "unexpected_payload";
    case error_code::bad_flags:
        return "bad_flags";
    case error_code::bad_data_offset:
        return "bad_data_offset";
    case error_code::rdma_length_mismatch:
        return "rdma_length_mismatch";
    case error_code::connection_id_mismatch:
        return "connection_id_mismatch";
    case error_code::crc_mismatch:
        return "crc_mismatch";
    }
    return "unknown";
}

std::size_t max_payload(std::size_t emss, message_type t, std::size_t control_words) {
    if (t == message_type::read_request || control_words > kMaxControlWords) return 0;
    const std::size_t fixed = header_size(t) + 4 * control_words;  // a multiple of 4
    if (emss < fixed + kCrcSize) return 0;
    // wire = fixed + roundup4(P) + 4 <= emss  <=>  P <= floor4(emss - 4 - fixed)
    const std::size_t by_emss = (emss - kCrcSize - fixed) & ~std::size_t{3};
    return std::min(by_emss, kMaxSegmentLength - fixed);
}

std::size_t overhead(message_type t, std::size_t control_words, std::size_t payload_len) {
    return wire_length(header_size(t) + 4 * control_words + payload_len) - payload_len;
}

void encode_header(const header& h, std::uint8_t* out) {
    out[0] = h.version;
    out[1] = static_cast<std::uint8_t>(((h.client_bits & 0x0Fu) << 4) | (h.begin ? kBeginBit : 0) |
                                       (h.end ? kEndBit : 0) | (static_cast<std::uint8_t>(h.type) & 0x03u));
    put_be16(out + 2, h.segment_length);
    put_be64(out + 4, h.connection_id);
    put_be32(out + 12, h.message_number);
    put_be16(out + 16, h.order);
    out[18] = h.reserved;
    out[19] = h.clen;
    if (has_buffer_fields(h.type)) {
        put_be32(out + 20, h.buffer_id);
        put_be32(out + 24, h.buffer_offset);
        put_be32(out + 28, h.rdma_length);
    } else {
        put_be32(out + 20, h.data_offset);
    }
}

bool encode(const header& h, const std::uint8_t* control, std::size_t control_len, const std::uint8_t* payload,
            std::size_t payload_len, std::vector<std::uint8_t>& out, std::string* error) {
    auto refuse = [&](const std::string& why) {
        if (error != nullptr) *error = why;
        return false;
    };
    if (control_len % 4 != 0) return refuse("control data must be whole 32-bit words (CLEN, §3.4)");
    if (control_len / 4 > kMaxControlWords) return refuse("control data longer than 255 words (CLEN is 8 bits)");
    if (h.type == message_type::read_request && payload_len != 0)
        return refuse("RDMA_Read_Request messages contain no payload data (§3.3)");
    const std::size_t seglen = h.size() + control_len + payload_len;
    if (seglen > kMaxSegmentLength) return refuse("Segment Length " + std::to_string(seglen) + " exceeds 65535");

    header hh = h;
    hh.segment_length = static_cast<std::uint16_t>(seglen);
    hh.clen = static_cast<std::uint8_t>(control_len / 4);
    const std::size_t base = out.size();
    out.resize(base + wire_length(seglen), 0);  // padding is zero (§3.4)
    std::uint8_t* p = out.data() + base;
    encode_header(hh, p);
    if (control_len != 0) std::memcpy(p + hh.size(), control, control_len);
    if (payload_len != 0) std::memcpy(p + hh.size() + control_len, payload, payload_len);
    // §3.4: "calculated across the entire segment" = all bytes before the CRC field.
    const std::size_t covered = seglen + pad_length(seglen);
    put_le32(p + covered, crc_db710641(p, covered));
    return true;
}

std::vector<std::uint8_t> encode(const segment& s) {
    std::vector<std::uint8_t> out;
    encode(s.header, s.control.data(), s.control.size(), s.payload.data(), s.payload.size(), out);
    return out;
}

std::optional<header> decode_header(const std::uint8_t* data, std::size_t len, std::string* error, error_code* code) {
    if (len < 4) {
        set(error, code, error_code::truncated,
            "RDMA/TCP header truncated: " + std::to_string(len) + " bytes, the first word needs 4");
        return std::nullopt;
    }
    header h;
    h.type = static_cast<message_type>(data[1] & 0x03u);
    if (len < h.size()) {
        set(error, code, error_code::truncated,
            std::string("RDMA/TCP header truncated: ") + std::to_string(len) + " bytes, a " + to_string(h.type) +
                " header needs " + std::to_string(h.size()));
        return std::nullopt;
    }
    h.version = data[0];
    h.client_bits = static_cast<std::uint8_t>(data[1] >> 4);
    h.begin = (data[1] & kBeginBit) != 0;
    h.end = (data[1] & kEndBit) != 0;
    h.segment_length = get_be16(data + 2);
    h.connection_id = get_be64(data + 4);
    h.message_number = get_be32(data + 12);
    h.order = get_be16(data + 16);
    h.reserved = data[18];
    h.clen = data[19];
    if (has_buffer_fields(h.type)) {
        h.buffer_id = get_be32(data + 20);
        h.buffer_offset = get_be32(data + 24);
        h.rdma_length = get_be32(data + 28);
    } else {
        h.data_offset = get_be32(data + 20);
    }
    if (code != nullptr) *code = error_code::none;
    return h;
}

error_code check_header(const header& h, const decode_options& options, std::string* error) {
    error_code code = error_code::none;
    auto fail = [&](error_code e, std::string message) {
        set(error, &code, e, std::move(message));
        return code;
    };
    if (h.version != kVersion)
        return fail(error_code::bad_version, "Version " + std::to_string(h.version) + ", expected 1 (§3.4)");
    if (options.connection_id && h.connection_id != *options.connection_id)
        return fail(error_code::connection_id_mismatch,
                    "Connection ID " + hex(h.connection_id, 16) + ", expected " + hex(*options.connection_id, 16));
    if (h.reserved != 0 && !options.ignore_reserved_bits)
        return fail(error_code::reserved_bits, "reserved byte (word 4, byte 2) is " + hex(h.reserved, 2));
    const std::size_t fixed = h.size() + h.control_length();
    if (h.segment_length < fixed)
        return fail(error_code::length_too_short, "Segment Length " + std::to_string(h.segment_length) +
                                                      " below header " + std::to_string(h.size()) + " + control data " +
                                                      std::to_string(h.control_length()));
    const std::size_t payload = h.segment_length - fixed;
    switch (h.type) {
    case message_type::read_request:
        if (payload != 0)
            return fail(error_code::unexpected_payload,
                        "RDMA_Read_Request with " + std::to_string(payload) + " payload bytes (§3.3)");
        if (!h.begin || !h.end)
            return fail(error_code::bad_flags, "RDMA_Read_Request is exactly one segment: B and E must be set (§3.3)");
        break;
    case message_type::send:
    case message_type::read_response:
        if (h.begin && h.data_offset != 0)
            return fail(error_code::bad_data_offset,
                        "first segment (B) with Data Offset " + std::to_string(h.data_offset) + " (§3.4)");
        break;
    case message_type::rdma_write:
        if (payload > h.rdma_length || (h.begin && h.end && payload != h.rdma_length))
            return fail(error_code::rdma_length_mismatch,
                        "RDMA_Write segment with " + std::to_string(payload) + " payload bytes, RDMA Length " +
                            std::to_string(h.rdma_length) +
                            (h.begin && h.end ? " (single segment: must be equal)" : ""));
        break;
    }
    return error_code::none;
}

std::optional<segment_view> parse(const std::uint8_t* data, std::size_t len, std::string* error, error_code* code,
                                  const decode_options& options) {
    // Structure first (what is needed to find the CRC), then the CRC, then the field rules, so
    // that a corrupted byte anywhere after the first word is reported as a CRC mismatch.
    if (len >= 1 && data[0] != kVersion) {  // judged as soon as the byte is there
        set(error, code, error_code::bad_version, "Version " + std::to_string(data[0]) + ", expected 1 (§3.4)");
        return std::nullopt;
    }
    auto h = decode_header(data, len, error, code);
    if (!h) return std::nullopt;
    if (h->segment_length < h->size()) {
        set(error, code, error_code::length_too_short,
            "Segment Length " + std::to_string(h->segment_length) + " below the " + to_string(h->type) +
                " header size " + std::to_string(h->size()));
        return std::nullopt;
    }
    segment_view v;
    v.header = *h;
    v.wire_length = wire_length(h->segment_length);
    if (len < v.wire_length) {
        set(error, code, error_code::truncated,
            "RDMA/TCP segment truncated: " + std::to_string(len) + " bytes, Segment Length " +
                std::to_string(h->segment_length) + " needs " + std::to_string(v.wire_length) +
                " with padding and CRC");
        return std::nullopt;
    }
    const std::size_t covered = v.wire_length - kCrcSize;
    v.crc = get_le32(data + covered);
    if (options.check_crc) {
        const std::uint32_t computed = crc_db710641(data, covered);
        if (computed != v.crc) {
            set(error, code, error_code::crc_mismatch,
                "CRC-32 received " + hex(v.crc, 8) + ", computed " + hex(computed, 8));
            return std::nullopt;
        }
    }
    const error_code e = check_header(*h, options, error);
    if (e != error_code::none) {
        if (code != nullptr) *code = e;
        return std::nullopt;
    }
    v.control = data + h->size();
    v.control_len = h->control_length();
    v.payload = v.control + v.control_len;
    v.payload_len = h->segment_length - h->size() - v.control_len;
    if (code != nullptr) *code = error_code::none;
    return v;
}

std::optional<segment> decode(const std::uint8_t* data, std::size_t len, std::string* error, error_code* code,
                              const decode_options& options) {
    const auto v = parse(data, len, error, code, options);
    if (!v) return std::nullopt;
    segment s;
    s.header = v->header;
    s.control.assign(v->control, v->control + v->control_len);
    s.payload.assign(v->payload, v->payload + v->payload_len);
    return s;
}

// ---------------------------------------------------------------------------------------------
// Deframer

deframer::deframer(const config& cfg, sink_fn sink) : cfg_(cfg), sink_(std::move(sink)) {}

// Judges the first word before waiting for the rest, so a bad Version or a Segment Length too
// short for its header fails at once rather than after the bytes it claims.
bool deframer::precheck(const std::uint8_t* first4) {
    if (first4[0] != kVersion) {
        fail(error_code::bad_version, "Version " + std::to_string(first4[0]) + ", expected 1");
        return false;
    }
    const auto type = static_cast<message_type>(first4[1] & 0x03u);
    const std::size_t seglen = get_be16(first4 + 2);
    if (seglen < header_size(type)) {
        fail(error_code::length_too_short, "Segment Length " + std::to_string(seglen) + " below the " +
                                               to_string(type) + " header size " + std::to_string(header_size(type)));
        return false;
    }
    return true;
}

void deframer::deliver(const std::uint8_t* data, std::size_t len) {
    decode_options options;
    options.ignore_reserved_bits = cfg_.ignore_reserved_bits;
    options.check_crc = cfg_.check_crc;
    options.connection_id = cfg_.connection_id;
    std::string message;
    error_code code = error_code::none;
    const auto v = parse(data, len, &message, &code, options);
    if (!v) {
        fail(code, message);
        return;
    }
    if (!cfg_.connection_id) cfg_.connection_id = v->header.connection_id;  // learned (§3.4)
    ++segments_;
    segment_start_ += len;
    if (sink_) sink_(*v);
}

error_code deframer::feed(const std::uint8_t* data, std::size_t len) {
    while (len != 0 && error_ == error_code::none) {
        std::size_t n = 0;
        if (buffer_.empty() && len >= 4) {
            if (!precheck(data)) break;
            const std::size_t wl = wire_length(get_be16(data + 2));
            if (len >= wl) {  // whole segment in this chunk: in place
                deliver(data, wl);
                if (error_ != error_code::none) break;
                n = wl;
            }
        }
        if (n == 0) {
            if (buffer_.size() < 4) {
                n = std::min<std::size_t>(4 - buffer_.size(), len);
                buffer_.insert(buffer_.end(), data, data + n);
                if (buffer_.size() == 4) precheck(buffer_.data());  // on failure the loop ends after counting n
            } else {
                const std::size_t wl = wire_length(get_be16(buffer_.data() + 2));
                n = std::min(wl - buffer_.size(), len);
                buffer_.insert(buffer_.end(), data, data + n);
                if (buffer_.size() == wl) {
                    deliver(buffer_.data(), wl);
                    buffer_.clear();
                }
            }
        }
        data += n;
        len -= n;
        bytes_consumed_ += n;
    }
    return error_;
}

void deframer::fail(error_code err, const std::string& detail) {
    error_ = err;
    error_detail_ = std::string(to_string(err)) + " in the RDMA/TCP segment starting at stream byte " +
                    std::to_string(segment_start_) + ": " + detail;
}

// ---------------------------------------------------------------------------------------------
// Recovery (§5)

const char* recovery::to_string(reason r) {
    switch (r) {
    case reason::accepted:
        return "accepted";
    case reason::misaligned:
        return "misaligned";
    case reason::truncated_header:
        return "truncated_header";
    case reason::bad_version:
        return "bad_version";
    case reason::connection_id:
        return "connection_id";
    case reason::reserved_bits:
        return "reserved_bits";
    case reason::inconsistent_header:
        return "inconsistent_header";
    case reason::message_number:
        return "message_number";
    case reason::crc:
        return "crc";
    case reason::incomplete:
        return "incomplete";
    }
    return "unknown";
}

const char* recovery::to_string(verdict v) {
    switch (v) {
    case verdict::aligned:
        return "aligned";
    case verdict::resynchronized:
        return "resynchronized";
    case verdict::buffer:
        return "buffer";
    }
    return "unknown";
}

recovery::candidate recovery::examine(const std::uint8_t* data, std::size_t len, std::size_t offset,
                                      std::optional<std::uint32_t> stream_offset) const {
    candidate c;
    c.offset = offset;
    auto reject = [&](reason r, std::string detail) {
        c.reason = r;
        c.detail = std::move(detail);
        return c;
    };
    if (stream_offset && ((*stream_offset + offset) & 3u) != 0)
        return reject(reason::misaligned, "stream offset not a multiple of 4: no segment can start here (§5)");
    const std::size_t avail = offset <= len ? len - offset : 0;
    const std::uint8_t* p = data + offset;
    if (avail >= 1 && p[0] != kVersion) return reject(reason::bad_version, "Version " + std::to_string(p[0]));
    std::string message;
    const auto h = decode_header(p, avail, &message);
    if (!h) return reject(reason::truncated_header, message);
    c.header_decoded = true;
    c.header = *h;
    c.wire_length = wire_length(h->segment_length);
    c.complete = avail >= c.wire_length;
    if (h->connection_id != cfg_.connection_id)
        return reject(reason::connection_id, "Connection ID " + hex(h->connection_id, 16));
    decode_options options;
    options.ignore_reserved_bits = cfg_.ignore_reserved_bits;
    const error_code e = check_header(*h, options, &message);
    if (e == error_code::reserved_bits) return reject(reason::reserved_bits, message);
    if (e != error_code::none) return reject(reason::inconsistent_header, message);
    if (cfg_.check_message_number) {
        const bool response = h->type == message_type::read_response;
        const std::uint32_t first = response ? cfg_.read_response_first : cfg_.next_message_number;
        const std::uint32_t window = response ? cfg_.read_responses_outstanding : cfg_.message_window;
        if (static_cast<std::uint32_t>(h->message_number - first) >= window)
            return reject(reason::message_number, "Message Number " + std::to_string(h->message_number) + " outside [" +
                                                      std::to_string(first) + ", +" + std::to_string(window) + ")");
    }
    if (c.complete) {
        if (cfg_.check_crc) {
            const std::size_t covered = c.wire_length - kCrcSize;
            const std::uint32_t received = get_le32(p + covered);
            const std::uint32_t computed = crc_db710641(p, covered);
            c.crc_checked = true;
            if (received != computed)
                return reject(reason::crc, "CRC-32 received " + hex(received, 8) + ", computed " + hex(computed, 8));
        }
    } else if (!cfg_.accept_partial) {
        return reject(reason::incomplete,
                      "segment of " + std::to_string(c.wire_length) + " bytes runs past the end of the TCP segment");
    }
    c.reason = reason::accepted;
    return c;
}

recovery::assessment recovery::assess(const std::uint8_t* data, std::size_t len,
                                      std::optional<std::uint32_t> stream_offset) {
    assessment a;
    a.first_segment = len;
    ++stats_.assessed;
    auto record = [&](candidate c) -> const candidate& {
        ++stats_.candidates;
        ++stats_.by_reason[static_cast<std::size_t>(c.reason)];
        a.candidates.push_back(std::move(c));
        return a.candidates.back();
    };
    // Follows the §5 length rule from an accepted candidate.
    auto chain = [&](std::size_t start) {
        a.first_segment = start;
        std::size_t pos = start;
        for (;;) {
            const candidate& c = a.candidates.back();  // accepted, at pos
            ++a.segments;
            if (!c.complete) {
                a.partial_tail = true;
                a.accepted_end = len;
                return;
            }
            pos += c.wire_length;
            a.accepted_end = pos;
            if (pos >= len) return;
            if (record(examine(data, len, pos, stream_offset)).reason != reason::accepted) return;
        }
    };

    if (record(examine(data, len, 0, stream_offset)).reason == reason::accepted) {
        a.verdict = verdict::aligned;
        chain(0);
    } else if (cfg_.strategy == strategy::scan_words) {
        const std::size_t step = stream_offset ? 4 : 1;
        std::size_t o = stream_offset ? (4 - (*stream_offset & 3u)) & 3u : 1;
        if (o == 0) o = 4;
        for (; o + kDataOffsetHeaderSize <= len; o += step) {
            if (record(examine(data, len, o, stream_offset)).reason == reason::accepted) {
                a.verdict = verdict::resynchronized;
                chain(o);
                break;
            }
        }
    }
    switch (a.verdict) {
    case verdict::aligned:
        ++stats_.aligned;
        break;
    case verdict::resynchronized:
        ++stats_.resynchronized;
        break;
    case verdict::buffer:
        ++stats_.buffered;
        break;
    }
    return a;
}

}  // namespace rnic::proto::rdmatcp
