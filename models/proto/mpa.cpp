// MPA framing (RFC 5044 §4, §6, §7.1.1, §8) and RFC 6581 enhanced Request/Reply frames.
#include "proto/mpa.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "proto/bytes.h"
#include "proto/crc32c.h"

namespace rnic::proto::mpa {
namespace {

constexpr std::uint32_t kInterval = static_cast<std::uint32_t>(kMarkerInterval);

// Bytes from marker-space position `pos` to the next Marker boundary (512 when on one).
std::size_t to_next_boundary(std::uint32_t pos) {
    return kInterval - pos % kInterval;
}

template <typename... Args>
std::string format(const char* fmt, Args... args) {
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

// Appends FPDU bytes to `out`, inserting a Marker (§4.2) before any byte that would land on a
// multiple of 512 in marker space. `len_pos` is where this FPDU's ULPDU_Length field sits; a
// Marker at the FPDU's very first position precedes ULPDU_Length and therefore carries 0 (§4.3).
class marked_writer {
public:
    marked_writer(std::vector<std::uint8_t>& out, std::uint32_t stream_pos)
        : out_(out),
          first_pos_(stream_pos),
          pos_(stream_pos),
          len_pos_(stream_pos % kInterval == 0 ? stream_pos + static_cast<std::uint32_t>(kMarkerSize) : stream_pos) {}

    // Copies `n` bytes from `src`, or writes `n` zeros when src is null.
    void write(const std::uint8_t* src, std::size_t n) {
        while (n != 0) {
            if (pos_ % kInterval == 0) marker();
            const std::size_t run = std::min(n, to_next_boundary(pos_));
            if (src != nullptr) {
                out_.insert(out_.end(), src, src + run);
                src += run;
            } else {
                out_.insert(out_.end(), run, std::uint8_t{0});
            }
            pos_ += static_cast<std::uint32_t>(run);
            n -= run;
        }
    }

    // §4.4: a Marker immediately following the PAD belongs to (and is covered by) this FPDU.
    void marker_if_on_boundary() {
        if (pos_ % kInterval == 0) marker();
    }

private:
    void marker() {
        const std::uint32_t fpduptr = pos_ == first_pos_ ? 0 : pos_ - len_pos_;
        std::uint8_t m[kMarkerSize] = {0, 0, 0, 0};
        put_be16(m + 2, static_cast<std::uint16_t>(fpduptr));
        out_.insert(out_.end(), m, m + kMarkerSize);
        pos_ += static_cast<std::uint32_t>(kMarkerSize);
    }

    std::vector<std::uint8_t>& out_;
    const std::uint32_t first_pos_;
    std::uint32_t pos_;
    const std::uint32_t len_pos_;
};

void append_crc(std::vector<std::uint8_t>& out, std::size_t covered_from, bool crc, std::uint8_t field[kCrcSize]) {
    const std::uint32_t value = crc ? crc32c(out.data() + covered_from, out.size() - covered_from) : 0;
    put_le32(field, value);  // test-vectors.md §1.2: conventional CRC, little-endian
}

void build_unmarked(const std::uint8_t* ulpdu, std::size_t ulpdu_len, std::size_t pad, bool crc,
                    std::vector<std::uint8_t>& out) {
    const std::size_t start = out.size();
    std::uint8_t len_field[kLengthFieldSize];
    put_be16(len_field, static_cast<std::uint16_t>(ulpdu_len));
    out.insert(out.end(), len_field, len_field + kLengthFieldSize);
    out.insert(out.end(), ulpdu, ulpdu + ulpdu_len);
    out.insert(out.end(), pad, std::uint8_t{0});
    std::uint8_t crc_field[kCrcSize];
    append_crc(out, start, crc, crc_field);
    out.insert(out.end(), crc_field, crc_field + kCrcSize);
}

void build_marked(const std::uint8_t* ulpdu, std::size_t ulpdu_len, std::size_t pad, bool crc, std::uint32_t stream_pos,
                  std::vector<std::uint8_t>& out) {
    const std::size_t start = out.size();
    marked_writer writer(out, stream_pos);
    std::uint8_t len_field[kLengthFieldSize];
    put_be16(len_field, static_cast<std::uint16_t>(ulpdu_len));
    writer.write(len_field, kLengthFieldSize);
    writer.write(ulpdu, ulpdu_len);
    writer.write(nullptr, pad);
    writer.marker_if_on_boundary();
    std::uint8_t crc_field[kCrcSize];
    append_crc(out, start, crc, crc_field);
    writer.write(crc_field, kCrcSize);  // a Marker inside the CRC field (unaligned stream) is not covered
}

// RFC 5044 §7.1.1 keys, RFC 6581 §6 flag bits of byte 16.
constexpr char kRequestKey[] = "MPA ID Req Frame";
constexpr char kReplyKey[] = "MPA ID Rep Frame";
constexpr std::size_t kKeySize = 16;
constexpr std::uint8_t kFlagMarker = 0x80;
constexpr std::uint8_t kFlagCrc = 0x40;
constexpr std::uint8_t kFlagReject = 0x20;
constexpr std::uint8_t kFlagEnhanced = 0x10;
constexpr std::uint8_t kFlagReservedMask = 0x0F;
// RFC 6581 §9 word: |A|B| IRD(14) |C|D| ORD(14)|
constexpr std::uint16_t kControlHigh = 0x8000;  // A in the IRD half, C in the ORD half
constexpr std::uint16_t kControlLow = 0x4000;   // B in the IRD half, D in the ORD half
constexpr std::uint16_t kIrdOrdMask = 0x3FFF;

std::uint16_t pack_half(std::uint16_t value, bool high, bool low) {
    return static_cast<std::uint16_t>((value & kIrdOrdMask) | (high ? kControlHigh : 0) | (low ? kControlLow : 0));
}

void set_error(std::string* error, std::string text) {
    if (error != nullptr) *error = std::move(text);
}

}  // namespace

std::size_t pad_length(std::size_t ulpdu_len) {
    return (4 - (kLengthFieldSize + ulpdu_len) % 4) % 4;
}

std::size_t max_ulpdu(std::size_t emss, bool markers) {
    std::size_t overhead = kLengthFieldSize + kCrcSize + emss % 4;
    if (markers) overhead += kMarkerSize * ((emss + kMarkerInterval - 1) / kMarkerInterval);
    const std::size_t mulpdu = emss > overhead ? emss - overhead : 0;
    return std::clamp(mulpdu, kMinMulpdu, kMaxUlpduLength);
}

std::size_t fpdu_wire_length(std::size_t ulpdu_len, bool markers, std::uint32_t stream_pos) {
    const std::size_t unmarked = kLengthFieldSize + ulpdu_len + pad_length(ulpdu_len) + kCrcSize;
    if (!markers) return unmarked;
    // Marker k sits at wire offset first + 512k and has first + 508k FPDU bytes before it; it is
    // part of this FPDU while that is less than the FPDU's own byte count.
    const std::size_t first = to_next_boundary(stream_pos) % kMarkerInterval;
    if (unmarked <= first) return unmarked;
    const std::size_t step = kMarkerInterval - kMarkerSize;
    const std::size_t markers_inside = (unmarked - first + step - 1) / step;
    return unmarked + markers_inside * kMarkerSize;
}

void build_fpdu(const std::uint8_t* ulpdu, std::size_t ulpdu_len, bool crc, bool markers, std::uint32_t stream_pos,
                std::vector<std::uint8_t>& out) {
    if (ulpdu_len > kMaxUlpduLength) return;
    const std::size_t pad = pad_length(ulpdu_len);
    out.reserve(out.size() + fpdu_wire_length(ulpdu_len, markers, stream_pos));
    if (markers)
        build_marked(ulpdu, ulpdu_len, pad, crc, stream_pos, out);
    else
        build_unmarked(ulpdu, ulpdu_len, pad, crc, out);
}

std::uint32_t ulpdu_byte_position(std::uint32_t fpdu_pos, std::size_t offset) {
    std::uint64_t pos = fpdu_pos;
    std::uint64_t left = kLengthFieldSize + offset;
    while (true) {
        if (pos % kInterval < kMarkerSize) pos += kMarkerSize - pos % kInterval;  // a Marker here
        if (left == 0) break;
        const std::uint64_t step = std::min<std::uint64_t>(kInterval - pos % kInterval, left);
        pos += step;
        left -= step;
    }
    return static_cast<std::uint32_t>(pos);  // modulo 2^32, which the interval divides
}

std::vector<std::uint32_t> marker_breaks(std::uint32_t first_pos, std::uint32_t len) {
    std::vector<std::uint32_t> breaks;
    std::uint64_t pos = first_pos;
    if (pos % kInterval < kMarkerSize) pos += kMarkerSize - pos % kInterval;
    std::uint32_t off = 0;
    while (off < len) {
        const std::uint64_t next_marker = (pos / kInterval + 1) * kInterval;
        const std::uint64_t run = next_marker - pos;
        if (run >= static_cast<std::uint64_t>(len - off)) break;
        off += static_cast<std::uint32_t>(run);
        breaks.push_back(off);
        pos = next_marker + kMarkerSize;
    }
    return breaks;
}

const char* to_string(deframe_error e) {
    switch (e) {
    case deframe_error::none:
        return "none";
    case deframe_error::crc_mismatch:
        return "crc_mismatch";
    case deframe_error::ulpdu_too_long:
        return "ulpdu_too_long";
    case deframe_error::marker_invalid:
        return "marker_invalid";
    }
    return "unknown";
}

// ---------------------------------------------------------------------------------------------
// Deframer

deframer::deframer(const config& cfg, sink_fn sink) : cfg_(cfg), sink_(std::move(sink)), pos_(cfg.stream_pos) {}

// A Marker starts at every multiple of 512. Like build_fpdu(), a stream that starts 1-3 bytes
// past a boundary (which MPA never produces) is taken to start with FPDU bytes.
bool deframer::in_marker() const {
    return cfg_.markers && (pos_ % kInterval == 0 || marker_active_);
}

void deframer::advance(std::size_t n) {
    bytes_consumed_ += n;
    pos_ += static_cast<std::uint32_t>(n);
}

void deframer::fail(deframe_error err, std::string detail) {
    error_ = err;
    error_detail_ = std::move(detail);
}

deframe_error deframer::feed(const std::uint8_t* data, std::size_t len) {
    while (len != 0 && error_ == deframe_error::none) {
        std::size_t used = 0;
        if (in_marker()) {
            used = consume_marker_bytes(data, len);
        } else {
            if (field_ == field::length && got_ == 0) used = try_whole_fpdu(data, len);
            if (used == 0 && error_ == deframe_error::none) used = consume_field_bytes(data, len);
        }
        data += used;
        len -= used;
    }
    return error_;
}

// Fast path: a complete FPDU without Markers lies in `data`; check it and deliver it in place.
// Returns 0 (nothing consumed) when the slow path has to handle it.
std::size_t deframer::try_whole_fpdu(const std::uint8_t* data, std::size_t len) {
    if (len < kLengthFieldSize) return 0;
    const std::size_t ulpdu_len = get_be16(data);
    if (ulpdu_len > cfg_.max_ulpdu) return 0;  // the slow path reports it
    const std::size_t covered = kLengthFieldSize + ulpdu_len + pad_length(ulpdu_len);
    const std::size_t total = covered + kCrcSize;
    if (len < total) return 0;
    if (cfg_.markers && to_next_boundary(pos_) < total) return 0;  // a Marker falls inside

    if (!leading_marker_) fpdu_start_byte_ = bytes_consumed_;
    fpdu_pos_ = pos_;
    ulpdu_len_ = ulpdu_len;
    if (cfg_.crc) {
        const std::uint32_t computed = crc32c_extend(leading_marker_ ? crc_reg_ : 0, data, covered);
        const std::uint32_t received = get_le32(data + covered);
        if (computed != received) {
            advance(total);
            fail(deframe_error::crc_mismatch, crc_detail(received, computed));
            return total;
        }
    }
    advance(total);
    if (!marker_problem_.empty()) {
        fail(deframe_error::marker_invalid, marker_problem_);
        return total;
    }
    field_ = field::length;
    got_ = 0;
    leading_marker_ = false;
    ++fpdus_;
    if (sink_) sink_(data + kLengthFieldSize, ulpdu_len);
    return total;
}

// A Marker that starts between FPDUs belongs to the next FPDU and starts its CRC coverage
// (§4.3, §4.4 case 2); any other Marker before the CRC field is covered by the current FPDU's
// CRC (§4.3 "All MPA Markers are included in the containing FPDU CRC calculation").
void deframer::begin_marker() {
    if (at_fpdu_boundary()) {
        leading_marker_ = true;
        fpdu_start_byte_ = bytes_consumed_;
        crc_reg_ = 0;
        marker_covered_ = true;
        marker_expected_ = 0;
    } else {
        marker_covered_ = !(field_ == field::crc && got_ > 0);
        marker_expected_ = pos_ - fpdu_pos_;
    }
}

std::size_t deframer::consume_marker_bytes(const std::uint8_t* data, std::size_t len) {
    const std::size_t offset = pos_ % kInterval;
    if (offset == 0) begin_marker();
    const std::size_t n = std::min(len, kMarkerSize - offset);
    std::memcpy(marker_bytes_ + offset, data, n);
    if (marker_covered_ && cfg_.crc) crc_reg_ = crc32c_extend(crc_reg_, data, n);
    advance(n);
    marker_active_ = offset + n < kMarkerSize;
    if (!marker_active_) check_marker();
    return n;
}

// §4.2: FPDUPTR counts from ULPDU_Length to the Marker; its two low bits are treated as zero.
// A mismatch is held until the FPDU's CRC has been found good (§8 code 3).
void deframer::check_marker() {
    const std::uint32_t expected = marker_expected_ & 0xFFFCu;
    const std::uint32_t fpduptr = get_be16(marker_bytes_ + 2) & 0xFFFCu;
    if (fpduptr != expected && marker_problem_.empty()) {
        marker_problem_ = format(
            "Marker at stream byte %llu (marker-space position %u) has FPDUPTR %u, expected %u for "
            "the FPDU starting at stream byte %llu",
            static_cast<unsigned long long>(bytes_consumed_ - kMarkerSize),
            static_cast<unsigned>(pos_ - static_cast<std::uint32_t>(kMarkerSize)), static_cast<unsigned>(fpduptr),
            static_cast<unsigned>(expected), static_cast<unsigned long long>(fpdu_start_byte_));
    }
}

void deframer::start_length_field() {
    fpdu_pos_ = pos_;
    if (!leading_marker_) {
        fpdu_start_byte_ = bytes_consumed_;
        crc_reg_ = 0;
    }
}

void deframer::finish_length_field() {
    ulpdu_len_ = get_be16(length_bytes_);
    if (ulpdu_len_ > cfg_.max_ulpdu) {
        fail(deframe_error::ulpdu_too_long,
             format("ULPDU_Length %zu of the FPDU starting at stream byte %llu exceeds the maximum %zu", ulpdu_len_,
                    static_cast<unsigned long long>(fpdu_start_byte_), cfg_.max_ulpdu));
        return;
    }
    body_len_ = ulpdu_len_ + pad_length(ulpdu_len_);
    if (buffer_.size() < ulpdu_len_) buffer_.resize(ulpdu_len_);
    field_ = field::body;
    got_ = 0;
}

std::size_t deframer::consume_field_bytes(const std::uint8_t* data, std::size_t len) {
    if (field_ == field::length && got_ == 0) start_length_field();
    std::size_t n = len;
    if (cfg_.markers) n = std::min(n, to_next_boundary(pos_));
    switch (field_) {
    case field::length:
        n = std::min(n, kLengthFieldSize - got_);
        std::memcpy(length_bytes_ + got_, data, n);
        break;
    case field::body: {
        n = std::min(n, body_len_ - got_);
        // PAD bytes are covered by the CRC but not delivered (§4.1).
        if (got_ < ulpdu_len_) std::memcpy(buffer_.data() + got_, data, std::min(n, ulpdu_len_ - got_));
        break;
    }
    case field::crc:
        n = std::min(n, kCrcSize - got_);
        std::memcpy(crc_bytes_ + got_, data, n);
        break;
    }
    if (field_ != field::crc && cfg_.crc) crc_reg_ = crc32c_extend(crc_reg_, data, n);
    advance(n);
    got_ += n;
    if (field_ == field::length && got_ == kLengthFieldSize) {
        finish_length_field();
    } else if (field_ == field::body && got_ == body_len_) {
        field_ = field::crc;
        got_ = 0;
    } else if (field_ == field::crc && got_ == kCrcSize) {
        finish_fpdu();
    }
    return n;
}

void deframer::finish_fpdu() {
    if (cfg_.crc) {
        const std::uint32_t received = get_le32(crc_bytes_);
        if (received != crc_reg_) {
            fail(deframe_error::crc_mismatch, crc_detail(received, crc_reg_));
            return;
        }
    }
    if (!marker_problem_.empty()) {
        fail(deframe_error::marker_invalid, marker_problem_);
        return;
    }
    field_ = field::length;
    got_ = 0;
    leading_marker_ = false;
    ++fpdus_;
    if (sink_) sink_(buffer_.data(), ulpdu_len_);
}

std::string deframer::crc_detail(std::uint32_t received, std::uint32_t computed) const {
    return format(
        "CRC mismatch in the FPDU starting at stream byte %llu (ULPDU_Length %zu): "
        "received 0x%08x, computed 0x%08x",
        static_cast<unsigned long long>(fpdu_start_byte_), ulpdu_len_, static_cast<unsigned>(received),
        static_cast<unsigned>(computed));
}

// ---------------------------------------------------------------------------------------------
// Request / Reply frames

std::vector<std::uint8_t> encode(const request_reply& frame) {
    std::size_t pd_total = frame.private_data.size() + (frame.enhanced ? kEnhancedDataSize : 0);
    pd_total = std::min<std::size_t>(pd_total, 0xFFFF);
    std::vector<std::uint8_t> out(kRequestReplyHeaderSize + pd_total, 0);
    std::memcpy(out.data(), frame.request ? kRequestKey : kReplyKey, kKeySize);
    out[16] = static_cast<std::uint8_t>((frame.marker ? kFlagMarker : 0) | (frame.crc ? kFlagCrc : 0) |
                                        (frame.reject ? kFlagReject : 0) | (frame.enhanced ? kFlagEnhanced : 0) |
                                        (frame.reserved_bits & kFlagReservedMask));
    out[17] = frame.revision;
    put_be16(out.data() + 18, static_cast<std::uint16_t>(pd_total));
    std::size_t at = kRequestReplyHeaderSize;
    if (frame.enhanced) {
        put_be16(out.data() + at, pack_half(frame.ird, frame.peer_to_peer, frame.zero_length_send_rtr));
        put_be16(out.data() + at + 2, pack_half(frame.ord, frame.zero_length_write_rtr, frame.zero_length_read_rtr));
        at += kEnhancedDataSize;
    }
    std::copy_n(frame.private_data.begin(), out.size() - at, out.begin() + static_cast<std::ptrdiff_t>(at));
    return out;
}

std::size_t request_reply_length(const std::uint8_t* data, std::size_t avail) {
    if (avail < kRequestReplyHeaderSize) return 0;
    return kRequestReplyHeaderSize + get_be16(data + 18);
}

std::optional<request_reply> decode(const std::uint8_t* data, std::size_t len, std::string* error, parse_error* code) {
    return decode(data, len, error, decode_options{}, code);
}

std::optional<request_reply> decode(const std::uint8_t* data, std::size_t len, std::string* error,
                                    const decode_options& options, parse_error* code) {
    if (len < kRequestReplyHeaderSize) {
        set_code(code, parse_error::short_input);
        set_error(error, format("MPA Request/Reply: %zu bytes, the header alone needs 20", len));
        return std::nullopt;
    }
    request_reply f;
    if (std::memcmp(data, kRequestKey, kKeySize) == 0) {
        f.request = true;
    } else if (std::memcmp(data, kReplyKey, kKeySize) == 0) {
        f.request = false;
    } else {
        set_code(code, parse_error::bad_magic);
        set_error(error, "MPA Request/Reply: Key is neither \"MPA ID Req Frame\" nor \"MPA ID Rep Frame\"");
        return std::nullopt;
    }
    const std::uint8_t flags = data[16];
    f.revision = data[17];
    const std::size_t pd_len = get_be16(data + 18);
    if (pd_len > kMaxPrivateData) {
        set_code(code, parse_error::bad_length);
        set_error(error, format("MPA Request/Reply: PD_Length %zu exceeds 512 (RFC 5044 §7.1.1)", pd_len));
        return std::nullopt;
    }
    if (len < kRequestReplyHeaderSize + pd_len) {
        set_code(code, parse_error::short_input);
        set_error(error, format("MPA Request/Reply: PD_Length %zu but only %zu bytes of Private Data present", pd_len,
                                len - kRequestReplyHeaderSize));
        return std::nullopt;
    }
    f.marker = (flags & kFlagMarker) != 0;
    f.crc = (flags & kFlagCrc) != 0;
    f.reject = (flags & kFlagReject) != 0;
    f.enhanced = (flags & kFlagEnhanced) != 0;
    f.reserved_bits = flags & kFlagReservedMask;
    if (!options.ignore_reserved_bits) {
        if (f.reserved_bits != 0) {
            set_code(code, parse_error::reserved_bits);
            set_error(error, format("MPA Request/Reply: Res bits 0x%02x must be zero", f.reserved_bits));
            return std::nullopt;
        }
        if (f.request && f.reject) {
            set_code(code, parse_error::reserved_bits);
            set_error(error, "MPA Request: R (reject) bit set; it is reserved in a Request");
            return std::nullopt;
        }
    }
    if (f.revision != 1 && f.revision != 2) {
        set_code(code, parse_error::bad_version);
        set_error(error, format("MPA Request/Reply: Rev %u is neither 1 nor 2", static_cast<unsigned>(f.revision)));
        return std::nullopt;
    }
    const std::uint8_t* pd = data + kRequestReplyHeaderSize;
    std::size_t ulp_pd_len = pd_len;
    if (f.enhanced) {
        if (f.revision < 2) {
            set_code(code, parse_error::inconsistent);
            set_error(error, "MPA Request/Reply: S (enhanced) flag needs Rev 2 (RFC 6581 §6)");
            return std::nullopt;
        }
        if (pd_len < kEnhancedDataSize) {
            set_code(code, parse_error::bad_length);
            set_error(error, format("MPA Request/Reply: S flag set but PD_Length %zu leaves no room for "
                                    "the 4-byte IRD/ORD word (RFC 6581 §9)",
                                    pd_len));
            return std::nullopt;
        }
        const std::uint16_t ird_half = get_be16(pd);
        const std::uint16_t ord_half = get_be16(pd + 2);
        f.peer_to_peer = (ird_half & kControlHigh) != 0;
        f.zero_length_send_rtr = (ird_half & kControlLow) != 0;
        f.zero_length_write_rtr = (ord_half & kControlHigh) != 0;
        f.zero_length_read_rtr = (ord_half & kControlLow) != 0;
        f.ird = ird_half & kIrdOrdMask;
        f.ord = ord_half & kIrdOrdMask;
        pd += kEnhancedDataSize;
        ulp_pd_len -= kEnhancedDataSize;
    }
    f.private_data.assign(pd, pd + ulp_pd_len);
    set_code(code, parse_error::none);
    return f;
}

}  // namespace rnic::proto::mpa
