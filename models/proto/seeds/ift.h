// IFT: "iWARP Framing for TCP" (draft-williams-iwarp-ift-00, seed 001), an alternative to MPA.
// A frame is
//   header_size (16) | payload_size (16) | DDP header | Header CRC | DDP payload | Payload CRC
// (§3.1). There is no padding ("no padding is added to align the CRC", §3.1) and there are no
// markers (§5.3). The Header CRC covers the two size fields and the DDP header; the Payload CRC
// covers only the DDP payload (§3.1), so a receiver can verify the header, and with it the
// placement information, before the payload has arrived (§5.1).
//
// Choices where the draft is silent (each tested in tests/seeds/ift_test.cpp):
//  - Byte order of header_size/payload_size: the draft does not say. Network byte order
//    (big-endian), the order of every other field in the DDP/RDMAP stack.
//  - CRC algorithm and placement: "CRC-32c algorithm as defined in [iSCSI]" (§3.1); iSCSI sends
//    the conventional CRC32c value least significant byte first (RFC 3720 App. B.4), exactly as
//    MPA does in this project (put_le32).
//  - The Payload CRC is always present, also when payload_size == 0 (the §3.1 figure shows it
//    unconditionally); it is then the CRC32c of nothing, 0x00000000.
//  - header_size == 0 is legal at this layer (the draft only says it is the number of bytes in
//    the DDP header); DecodeOptions/Deframer::Config can demand a minimum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "proto/crc32c.h"

namespace rnic::proto::ift {

constexpr std::size_t kPrefixSize = 4;                         // header_size + payload_size
constexpr std::size_t kCrcSize = 4;                            // each of Header CRC and Payload CRC
constexpr std::size_t kOverhead = kPrefixSize + 2 * kCrcSize;  // 12 bytes per frame besides DDP header and payload
constexpr std::size_t kMaxHeaderSize = 65535;                  // 16-bit header_size
constexpr std::size_t kMaxPayloadSize = 65535;                 // 16-bit payload_size

// Wire length of a frame: 12 + header + payload (no padding).
constexpr std::size_t frame_length(std::size_t header_size, std::size_t payload_size) {
    return kOverhead + header_size + payload_size;
}

// Largest DDP payload whose frame (with a DDP header of `header_size` bytes) fits in `emss`
// bytes of TCP payload, capped at 65535; 0 if not even an empty payload fits.
std::size_t max_payload(std::size_t emss, std::size_t header_size);

// Bytes the frame starting at `data` occupies (from its two size fields), or 0 when fewer than
// kPrefixSize bytes are available.
std::size_t frame_length_at(const std::uint8_t* data, std::size_t avail);

// Appends one frame to `out`. Returns false (and leaves `out` unchanged) when the header or the
// payload is longer than 65535 bytes.
bool encode(const std::uint8_t* header, std::size_t header_size, const std::uint8_t* payload, std::size_t payload_size,
            std::vector<std::uint8_t>& out);

struct frame {
    std::vector<std::uint8_t> header;   // the DDP header (header_size bytes)
    std::vector<std::uint8_t> payload;  // the DDP payload (payload_size bytes)
};
// Whole frame as a new vector; empty when encode() above would fail.
std::vector<std::uint8_t> encode(const frame& frame);

enum class error_code : std::uint8_t {
    none,
    truncated,                  // fewer bytes than the frame needs
    header_size_out_of_range,   // header_size outside [min_header_size, max_header_size]
    payload_size_out_of_range,  // payload_size above max_payload_size
    header_crc_mismatch,        // Header CRC does not match size fields + DDP header
    payload_crc_mismatch,       // Payload CRC does not match the DDP payload
};
const char* to_string(error_code);

struct decode_options {
    std::size_t min_header_size = 0;
    std::size_t max_header_size = kMaxHeaderSize;
    std::size_t max_payload_size = kMaxPayloadSize;
};

// A decoded frame pointing into the caller's buffer.
struct frame_view {
    const std::uint8_t* header = nullptr;
    std::size_t header_size = 0;
    const std::uint8_t* payload = nullptr;
    std::size_t payload_size = 0;
    std::uint32_t header_crc = 0;  // as received (and checked)
    std::uint32_t payload_crc = 0;
    std::size_t wire_length = 0;  // frame_length(header_size, payload_size)
};

// Checks and decodes the frame at the start of `data` (bytes after it are not looked at).
// The size fields are checked against the options before anything else is read; the Header CRC
// is checked before the Payload CRC. On failure returns nullopt, *code (if non-null) gets the
// kind and *error (if non-null) a message naming the field.
std::optional<frame_view> parse(const std::uint8_t* data, std::size_t len, std::string* error,
                                error_code* code = nullptr, const decode_options& options = {});
// Same, copying the header and payload out.
std::optional<frame> decode(const std::uint8_t* data, std::size_t len, std::string* error, error_code* code = nullptr,
                            const decode_options& options = {});

// Receive side: fed the in-order TCP byte stream in arbitrary chunks (§4: IFT receives all data
// in order). Per frame it
//   1. checks the Header CRC as soon as the size fields, the DDP header and the Header CRC are in
//      and calls HandlerSet::header (§5.1: the header can be acted upon before the payload);
//   2. passes payload bytes to HandlerSet::payload_piece as they arrive (not yet verified);
//   3. checks the Payload CRC and calls HandlerSet::frame with the whole frame.
// A Header CRC error, or a size outside the configured limits, is fatal: the framing can no
// longer be trusted and nothing more is consumed. A Payload CRC error leaves the framing intact;
// §5 leaves the action to the next layer, so by default it is fatal as well ("typical action may
// be to close the connection"), and with Config::stop_on_payload_crc_error == false the frame is
// delivered with payload_ok == false and deframing continues.
class deframer {
public:
    struct config {
        decode_options limits;
        bool stop_on_payload_crc_error = true;
    };
    struct handler_set {
        // After the Header CRC checked good. Pointer valid only during the call.
        std::function<void(const std::uint8_t* header, std::size_t header_size, std::size_t payload_size)> header;
        // Payload bytes [offset, offset + len) of the current frame, unverified.
        std::function<void(std::size_t offset, const std::uint8_t* data, std::size_t len)> payload_piece;
        // The complete frame. Pointers valid only during the call. When this handler is empty
        // the payload is not gathered (only payload_piece sees it).
        std::function<void(const frame_view& frame, bool payload_ok)> frame;
    };

    deframer(const config& cfg, handler_set handlers);

    // Consumes all of `data` unless a fatal error occurs; returns ErrorCode::none or the first fatal
    // error (also on every later call).
    error_code feed(const std::uint8_t* data, std::size_t len);

    error_code error() const { return error_; }
    const std::string& error_detail() const { return error_detail_; }
    std::uint64_t frames() const { return frames_; }  // frames delivered (good or not)
    std::uint64_t payload_crc_errors() const { return payload_crc_errors_; }
    std::uint64_t bytes_consumed() const { return bytes_consumed_; }
    bool at_frame_boundary() const { return field_ == field::prefix && got_ == 0; }

private:
    enum class field { prefix, header, header_crc, payload, payload_crc };

    std::size_t try_whole_frame(const std::uint8_t* data, std::size_t len);
    std::size_t consume(const std::uint8_t* data, std::size_t len);
    void finish_prefix();
    bool finish_header_crc();
    void finish_frame();
    void fail(error_code err, std::string detail);

    config cfg_;
    handler_set handlers_;
    field field_ = field::prefix;
    std::size_t got_ = 0;         // bytes of the current field received
    std::uint8_t small_[4] = {};  // prefix / CRC bytes
    std::size_t header_size_ = 0, payload_size_ = 0;
    std::vector<std::uint8_t> header_buf_, payload_buf_;
    crc32c_stream header_crc_, payload_crc_;
    std::uint64_t frame_start_ = 0;  // stream byte where the current frame began
    error_code error_ = error_code::none;
    std::string error_detail_;
    std::uint64_t frames_ = 0, payload_crc_errors_ = 0, bytes_consumed_ = 0;
};

}  // namespace rnic::proto::ift
