// IFT framing (draft-williams-iwarp-ift-00 §3.1): encoder, checked decoder and the streaming
// receive side with early header verification (§5.1).
#include "proto/seeds/ift.h"

#include <algorithm>
#include <cstring>

#include "proto/bytes.h"

namespace rnic::proto::ift {
namespace {

void set(std::string* error, error_code* code, error_code kind, std::string message) {
    if (error != nullptr) *error = std::move(message);
    if (code != nullptr) *code = kind;
}

std::string hex32(std::uint32_t v) {
    static const char digits[] = "0123456789abcdef";
    std::string s = "0x";
    for (int shift = 28; shift >= 0; shift -= 4) s += digits[(v >> shift) & 0xFu];
    return s;
}

}  // namespace

const char* to_string(error_code e) {
    switch (e) {
    case error_code::none:
        return "none";
    case error_code::truncated:
        return "truncated";
    case error_code::header_size_out_of_range:
        return "header_size_out_of_range";
    case error_code::payload_size_out_of_range:
        return "payload_size_out_of_range";
    case error_code::header_crc_mismatch:
        return "header_crc_mismatch";
    case error_code::payload_crc_mismatch:
        return "payload_crc_mismatch";
    }
    return "unknown";
}

std::size_t max_payload(std::size_t emss, std::size_t header_size) {
    if (header_size > kMaxHeaderSize || emss < kOverhead + header_size) return 0;
    return std::min(emss - kOverhead - header_size, kMaxPayloadSize);
}

std::size_t frame_length_at(const std::uint8_t* data, std::size_t avail) {
    if (avail < kPrefixSize) return 0;
    return frame_length(get_be16(data), get_be16(data + 2));
}

bool encode(const std::uint8_t* header, std::size_t header_size, const std::uint8_t* payload, std::size_t payload_size,
            std::vector<std::uint8_t>& out) {
    if (header_size > kMaxHeaderSize || payload_size > kMaxPayloadSize) return false;
    const std::size_t base = out.size();
    out.resize(base + frame_length(header_size, payload_size));
    std::uint8_t* p = out.data() + base;
    // §3.1: 16-bit header_size and payload_size (network byte order, see ift.h).
    put_be16(p, static_cast<std::uint16_t>(header_size));
    put_be16(p + 2, static_cast<std::uint16_t>(payload_size));
    if (header_size != 0) std::memcpy(p + kPrefixSize, header, header_size);
    // Header CRC: "covers both the IFT header (header_size and payload_size fields) and the DDP header".
    put_le32(p + kPrefixSize + header_size, crc32c(p, kPrefixSize + header_size));
    std::uint8_t* body = p + kPrefixSize + header_size + kCrcSize;
    if (payload_size != 0) std::memcpy(body, payload, payload_size);
    // Payload CRC: "covers only the DDP payload"; no padding before it (§3.1, §5.2).
    put_le32(body + payload_size, crc32c(body, payload_size));
    return true;
}

std::vector<std::uint8_t> encode(const frame& frame) {
    std::vector<std::uint8_t> out;
    encode(frame.header.data(), frame.header.size(), frame.payload.data(), frame.payload.size(), out);
    return out;
}

std::optional<frame_view> parse(const std::uint8_t* data, std::size_t len, std::string* error, error_code* code,
                                const decode_options& options) {
    if (len < kPrefixSize) {
        set(error, code, error_code::truncated,
            "IFT frame truncated: " + std::to_string(len) + " bytes, header_size/payload_size need 4");
        return std::nullopt;
    }
    frame_view v;
    v.header_size = get_be16(data);
    v.payload_size = get_be16(data + 2);
    if (v.header_size < options.min_header_size || v.header_size > options.max_header_size) {
        set(error, code, error_code::header_size_out_of_range,
            "IFT header_size " + std::to_string(v.header_size) + " outside [" +
                std::to_string(options.min_header_size) + ", " + std::to_string(options.max_header_size) + "]");
        return std::nullopt;
    }
    if (v.payload_size > options.max_payload_size) {
        set(error, code, error_code::payload_size_out_of_range,
            "IFT payload_size " + std::to_string(v.payload_size) + " above the limit " +
                std::to_string(options.max_payload_size));
        return std::nullopt;
    }
    v.wire_length = frame_length(v.header_size, v.payload_size);
    const std::size_t header_end = kPrefixSize + v.header_size;  // offset of the Header CRC
    if (len < header_end + kCrcSize) {
        set(error, code, error_code::truncated,
            "IFT frame truncated: " + std::to_string(len) + " bytes, header and Header CRC need " +
                std::to_string(header_end + kCrcSize));
        return std::nullopt;
    }
    v.header = data + kPrefixSize;
    v.header_crc = get_le32(data + header_end);
    const std::uint32_t header_computed = crc32c(data, header_end);
    if (v.header_crc != header_computed) {
        set(error, code, error_code::header_crc_mismatch,
            "IFT Header CRC mismatch: received " + hex32(v.header_crc) + ", computed " + hex32(header_computed));
        return std::nullopt;
    }
    if (len < v.wire_length) {
        set(error, code, error_code::truncated,
            "IFT frame truncated: " + std::to_string(len) + " bytes, frame needs " + std::to_string(v.wire_length));
        return std::nullopt;
    }
    v.payload = data + header_end + kCrcSize;
    v.payload_crc = get_le32(v.payload + v.payload_size);
    const std::uint32_t payload_computed = crc32c(v.payload, v.payload_size);
    if (v.payload_crc != payload_computed) {
        set(error, code, error_code::payload_crc_mismatch,
            "IFT Payload CRC mismatch: received " + hex32(v.payload_crc) + ", computed " + hex32(payload_computed));
        return std::nullopt;
    }
    if (code != nullptr) *code = error_code::none;
    return v;
}

std::optional<frame> decode(const std::uint8_t* data, std::size_t len, std::string* error, error_code* code,
                            const decode_options& options) {
    const auto v = parse(data, len, error, code, options);
    if (!v) return std::nullopt;
    frame f;
    f.header.assign(v->header, v->header + v->header_size);
    f.payload.assign(v->payload, v->payload + v->payload_size);
    return f;
}

// ---------------------------------------------------------------------------------------------
// Deframer

deframer::deframer(const config& cfg, handler_set handlers) : cfg_(cfg), handlers_(std::move(handlers)) {}

error_code deframer::feed(const std::uint8_t* data, std::size_t len) {
    while (len != 0 && error_ == error_code::none) {
        std::size_t n = at_frame_boundary() ? try_whole_frame(data, len) : 0;
        if (n == 0) n = consume(data, len);
        data += n;
        len -= n;
        bytes_consumed_ += n;
    }
    return error_;
}

// Fast path: a whole good frame inside the chunk is checked and delivered in place. Anything
// unusual (partial frame, limits, CRC errors) is left to the field-by-field path, which then
// reports it exactly as it would for a frame split across chunks.
std::size_t deframer::try_whole_frame(const std::uint8_t* data, std::size_t len) {
    const std::size_t need = frame_length_at(data, len);
    if (need == 0 || len < need) return 0;  // not whole in this chunk
    const auto v = parse(data, need, nullptr, nullptr, cfg_.limits);
    if (!v) return 0;
    if (handlers_.header) handlers_.header(v->header, v->header_size, v->payload_size);
    if (handlers_.payload_piece && v->payload_size != 0) handlers_.payload_piece(0, v->payload, v->payload_size);
    if (handlers_.frame) handlers_.frame(*v, true);
    ++frames_;
    frame_start_ += v->wire_length;
    return v->wire_length;
}

std::size_t deframer::consume(const std::uint8_t* data, std::size_t len) {
    switch (field_) {
    case field::prefix:
    case field::header_crc:
    case field::payload_crc: {
        const std::size_t n = std::min<std::size_t>(4 - got_, len);
        std::memcpy(small_ + got_, data, n);
        got_ += n;
        if (got_ == 4) {
            if (field_ == field::prefix) {
                finish_prefix();
            } else if (field_ == field::header_crc) {
                finish_header_crc();
            } else {
                finish_frame();
            }
        }
        return n;
    }
    case field::header: {
        const std::size_t n = std::min(header_size_ - got_, len);
        header_buf_.insert(header_buf_.end(), data, data + n);
        header_crc_.update(data, n);
        got_ += n;
        if (got_ == header_size_) {
            field_ = field::header_crc;
            got_ = 0;
        }
        return n;
    }
    case field::payload: {
        const std::size_t n = std::min(payload_size_ - got_, len);
        payload_crc_.update(data, n);
        if (handlers_.frame) payload_buf_.insert(payload_buf_.end(), data, data + n);
        if (handlers_.payload_piece) handlers_.payload_piece(got_, data, n);
        got_ += n;
        if (got_ == payload_size_) {
            field_ = field::payload_crc;
            got_ = 0;
        }
        return n;
    }
    }
    return len;  // unreachable
}

void deframer::finish_prefix() {
    header_size_ = get_be16(small_);
    payload_size_ = get_be16(small_ + 2);
    got_ = 0;
    if (header_size_ < cfg_.limits.min_header_size || header_size_ > cfg_.limits.max_header_size) {
        fail(error_code::header_size_out_of_range, "header_size " + std::to_string(header_size_) + " outside [" +
                                                       std::to_string(cfg_.limits.min_header_size) + ", " +
                                                       std::to_string(cfg_.limits.max_header_size) + "]");
        return;
    }
    if (payload_size_ > cfg_.limits.max_payload_size) {
        fail(error_code::payload_size_out_of_range, "payload_size " + std::to_string(payload_size_) +
                                                        " above the limit " +
                                                        std::to_string(cfg_.limits.max_payload_size));
        return;
    }
    header_crc_.reset();
    header_crc_.update(small_, kPrefixSize);
    header_buf_.clear();
    field_ = header_size_ == 0 ? field::header_crc : field::header;
}

bool deframer::finish_header_crc() {
    const std::uint32_t received = get_le32(small_);
    got_ = 0;
    if (received != header_crc_.value()) {
        fail(error_code::header_crc_mismatch,
             "Header CRC received " + hex32(received) + ", computed " + hex32(header_crc_.value()));
        return false;
    }
    if (handlers_.header) handlers_.header(header_buf_.data(), header_size_, payload_size_);
    payload_buf_.clear();
    payload_crc_.reset();
    field_ = payload_size_ == 0 ? field::payload_crc : field::payload;
    return true;
}

void deframer::finish_frame() {
    const std::uint32_t received = get_le32(small_);
    const bool ok = received == payload_crc_.value();
    got_ = 0;
    if (!ok) {
        ++payload_crc_errors_;
        if (cfg_.stop_on_payload_crc_error) {
            fail(error_code::payload_crc_mismatch,
                 "Payload CRC received " + hex32(received) + ", computed " + hex32(payload_crc_.value()));
            return;
        }
    }
    if (handlers_.frame) {
        frame_view v;
        v.header = header_buf_.data();
        v.header_size = header_size_;
        v.payload = payload_buf_.data();
        v.payload_size = payload_size_;
        v.payload_crc = received;
        v.wire_length = frame_length(header_size_, payload_size_);
        v.header_crc = header_crc_.value();  // equal to the received value (checked before)
        handlers_.frame(v, ok);
    }
    ++frames_;
    frame_start_ += frame_length(header_size_, payload_size_);
    field_ = field::prefix;
}

void deframer::fail(error_code err, std::string detail) {
    error_ = err;
    error_detail_ = std::string(to_string(err)) + " in the IFT frame starting at stream byte " +
                    std::to_string(frame_start_) + ": " + std::move(detail);
}

}  // namespace rnic::proto::ift
