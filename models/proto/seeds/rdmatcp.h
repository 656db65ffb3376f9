// RDMA/TCP segments (draft-williams-rdmatcp-00, seed 000): the segment format of §3 with its
// four message types, the CRC-32 with generator 0xDB710641 (§3.4), the §5 rule for finding the
// next segment in the TCP stream, and the §5 framing recovery after a loss (assume the RDMA
// segment is aligned with the TCP segment, validate its header, otherwise fall back to buffering).
//
// Wire layout (§3.1-§3.3; all numeric fields big-endian, §3):
//   word 0  Version (8) | res (4) B E typ (2) | Segment Length (16)
//   word 1-2  Connection ID (64)
//   word 3  Message Number (32)
//   word 4  order (16) | res. (8) | CLEN (8)
//   Send / RDMA_Read_Response:     word 5 Data Offset                         (24-byte header)
//   RDMA_Write / RDMA_Read_Request: word 5-7 Buffer ID, Buffer offset, Length  (32-byte header)
//   Control Data (4*CLEN bytes) | Payload Data | Padding (0-3) | CRC-32
//
// Choices where the draft is ambiguous (each tested in tests/seeds/rdmatcp_test.cpp):
//  - The 4 "res" bits of byte 1 "are reserved and not used by the RDMA mechanism. They may be
//    used by the client protocol" (§3.4): carried as Header::client_bits, never checked.
//  - The 8-bit "res." of word 4 has no definition in §3.4 (the "Res" text speaks of four bits).
//    Read literally it is simply reserved: encode() writes Header::reserved (zero by default) and
//    decoding rejects a non-zero value (ErrorCode::reserved_bits) unless ignore_reserved_bits.
//  - Segment Length counts "the RDMA segment header and payload up to, but not including, the
//    padding and CRC" (§3.4): the control data lies before the padding, so it is counted.
//  - The CRC "is calculated across the entire segment" (§3.4): header, control data, payload
//    and padding, i.e. every byte before the CRC field (this is also what seed 003 §3.6 spells
//    out). Parameters and field byte order: see crc_db710641() in proto/crc32c.h.
//  - Padding "MUST be set to zero by the sender and ignored by the receiver" (§3.4): its value
//    is never checked (only the CRC, which covers it, can object).
//  - Header consistency rules the draft implies and the decoder enforces: Segment Length >=
//    header + 4*CLEN; an RDMA_Read_Request "always consist[s] of exactly one segment and
//    contain[s] no payload data" (§3.3), so its Segment Length is exactly header + 4*CLEN and
//    both B and E are set; "The first segment of a message must have a data offset of zero"
//    (§3.4), so a Send/RDMA_Read_Response segment with B set has Data Offset 0; the RDMA Length
//    of an RDMA_Write is "the total number of bytes in the entire message" (§3.4), read as
//    payload bytes (control data "is not part of the RDMA transfer"), so a segment's payload
//    never exceeds it and a single-segment (B and E) write carries exactly RDMA Length bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rnic::proto::rdmatcp {

// §3.4 Type (2 bits).
enum class message_type : std::uint8_t { send = 0, rdma_write = 1, read_request = 2, read_response = 3 };
const char* to_string(message_type);
// RDMA_Write and RDMA_Read_Request carry Buffer ID / offset / RDMA Length instead of Data Offset.
constexpr bool has_buffer_fields(message_type t) {
    return t == message_type::rdma_write || t == message_type::read_request;
}

constexpr std::uint8_t kVersion = 1;               // §3.4 "This document defines version 1"
constexpr std::size_t kDataOffsetHeaderSize = 24;  // Send, RDMA_Read_Response (§3.1)
constexpr std::size_t kBufferHeaderSize = 32;      // RDMA_Write, RDMA_Read_Request (§3.2, §3.3)
constexpr std::size_t kCrcSize = 4;
constexpr std::size_t kMaxSegmentLength = 65535;       // 16-bit Segment Length
constexpr std::size_t kMaxControlWords = 255;          // 8-bit CLEN
constexpr std::uint16_t kOrderUnconditional = 0xFFFF;  // §3.4: "may be done immediately"

constexpr std::size_t header_size(message_type t) {
    return has_buffer_fields(t) ? kBufferHeaderSize : kDataOffsetHeaderSize;
}
// §3.4 Padding: 0-3 bytes making the segment a multiple of 4.
constexpr std::size_t pad_length(std::size_t segment_length) {
    return (4 - segment_length % 4) % 4;
}
// §5: from the start of a segment, the next one begins Segment Length "rounded up to the next
// multiple of four ... and adding four (for the CRC)" bytes further on.
constexpr std::size_t wire_length(std::size_t segment_length) {
    return segment_length + pad_length(segment_length) + kCrcSize;
}
// Largest payload of a segment of type `t` with `control_words` words of control data whose
// wire bytes fit in `emss` (one RDMA segment per TCP segment, as §2 recommends) and whose
// Segment Length fits 16 bits. 0 for RDMA_Read_Request, or when not even an empty one fits.
std::size_t max_payload(std::size_t emss, message_type t, std::size_t control_words = 0);
// Wire bytes of a segment that are not payload: header, control data, padding and CRC.
std::size_t overhead(message_type t, std::size_t control_words, std::size_t payload_len);

struct header {
    std::uint8_t version = kVersion;
    std::uint8_t client_bits = 0;  // the 4 "res" bits of byte 1 (client protocol's, §3.4)
    bool begin = true;             // B
    bool end = true;               // E
    message_type type = message_type::send;
    std::uint16_t segment_length = 0;  // encode() fills it in
    std::uint64_t connection_id = 0;
    std::uint32_t message_number = 0;
    std::uint16_t order = 0;
    std::uint8_t reserved = 0;                                        // the 8-bit "res." of word 4
    std::uint8_t clen = 0;                                            // control data words; encode() fills it in
    std::uint32_t data_offset = 0;                                    // Send, RDMA_Read_Response
    std::uint32_t buffer_id = 0, buffer_offset = 0, rdma_length = 0;  // RDMA_Write, RDMA_Read_Request
    std::size_t size() const { return header_size(type); }
    std::size_t control_length() const { return 4u * clen; }
};

// Writes h.size() bytes exactly as given (segment_length and clen included; client_bits masked
// to 4 bits). For building test input; encode() below is the normal way to make a segment.
void encode_header(const header& h, std::uint8_t* out);

struct segment {
    rdmatcp::header header;
    std::vector<std::uint8_t> control;  // multiple of 4 bytes, at most 255 words
    std::vector<std::uint8_t> payload;
};

// Appends the whole segment (header, control data, payload, zero padding, CRC) to `out`, with
// Segment Length and CLEN computed from the sizes (h.segment_length and h.clen are ignored).
// Fails, leaving `out` unchanged, when the control data is not whole words or longer than 255
// words, an RDMA_Read_Request has payload, or the Segment Length would exceed 65535.
bool encode(const header& h, const std::uint8_t* control, std::size_t control_len, const std::uint8_t* payload,
            std::size_t payload_len, std::vector<std::uint8_t>& out, std::string* error = nullptr);
// Whole segment as a new vector; empty when encode() above would fail.
std::vector<std::uint8_t> encode(const segment& s);

enum class error_code : std::uint8_t {
    none,
    truncated,             // fewer bytes than the header or the whole segment needs
    bad_version,           // Version != 1
    reserved_bits,         // the 8-bit res. field is non-zero
    length_too_short,      // Segment Length < header + 4*CLEN
    unexpected_payload,    // RDMA_Read_Request with payload (§3.3)
    bad_flags,             // RDMA_Read_Request without both B and E (§3.3)
    bad_data_offset,       // first segment (B) of a Send/Read Response with Data Offset != 0
    rdma_length_mismatch,  // RDMA_Write payload above RDMA Length, or != it in a B+E segment
    connection_id_mismatch,
    crc_mismatch,
};
const char* to_string(error_code);

struct decode_options {
    bool ignore_reserved_bits = false;
    bool check_crc = true;
    std::optional<std::uint64_t> connection_id;  // when set, segments must carry this ID
};

// Decodes the fixed header at `data` (needs header_size(type) bytes; version and fields are not
// judged here).
std::optional<header> decode_header(const std::uint8_t* data, std::size_t len, std::string* error,
                                    error_code* code = nullptr);

// The header rules listed at the top of this file plus version, reserved bits and (if set)
// connection ID. Needs no more than the header itself. Returns ErrorCode::none when all hold.
error_code check_header(const header& h, const decode_options& options, std::string* error);

// A decoded segment pointing into the caller's buffer.
struct segment_view {
    rdmatcp::header header;
    const std::uint8_t* control = nullptr;
    std::size_t control_len = 0;
    const std::uint8_t* payload = nullptr;
    std::size_t payload_len = 0;
    std::uint32_t crc = 0;        // as received
    std::size_t wire_length = 0;  // wire_length(segment_length)
};

// Decodes and checks the segment at the start of `data` (bytes after it are not looked at), in
// this order: Version, length of the fixed header, Segment Length >= header size, length of the
// whole segment, CRC, then the remaining check_header() rules.
std::optional<segment_view> parse(const std::uint8_t* data, std::size_t len, std::string* error,
                                  error_code* code = nullptr, const decode_options& options = {});
std::optional<segment> decode(const std::uint8_t* data, std::size_t len, std::string* error, error_code* code = nullptr,
                              const decode_options& options = {});

// Receive side of the in-order TCP byte stream: finds each segment by the §5 length rule,
// checks it like parse() and hands it to the sink (in place when the whole segment lies in one
// chunk, otherwise from an internal buffer). The Connection ID is "selected by the client side
// ... included in the first message segment ... then used for all subsequent segments sent in
// either direction" (§3.4): unless configured, it is learned from the first segment and every
// later segment must carry it. The first error is fatal; nothing more is consumed.
class deframer {
public:
    struct config {
        std::optional<std::uint64_t> connection_id;
        bool ignore_reserved_bits = false;
        bool check_crc = true;
    };
    using sink_fn = std::function<void(const segment_view& segment)>;  // pointers valid during the call

    deframer(const config& cfg, sink_fn sink);

    error_code feed(const std::uint8_t* data, std::size_t len);

    error_code error() const { return error_; }
    const std::string& error_detail() const { return error_detail_; }
    std::uint64_t segments() const { return segments_; }
    std::uint64_t bytes_consumed() const { return bytes_consumed_; }
    bool at_segment_boundary() const { return buffer_.empty(); }
    const std::optional<std::uint64_t>& connection_id() const { return cfg_.connection_id; }

private:
    bool precheck(const std::uint8_t* first4);
    void deliver(const std::uint8_t* data, std::size_t len);
    void fail(error_code err, const std::string& detail);

    config cfg_;
    sink_fn sink_;
    std::vector<std::uint8_t> buffer_;
    std::uint64_t segment_start_ = 0;
    error_code error_ = error_code::none;
    std::string error_detail_;
    std::uint64_t segments_ = 0, bytes_consumed_ = 0;
};

// ---------------------------------------------------------------------------------------------
// §5 framing recovery. After a TCP segment was lost, the next in-order segment boundary is not
// known until the retransmission arrives. The draft's recommended method: "assume that the RDMA
// segment is aligned with a TCP segment, and verify the correctness of the header fields of the
// RDMA segment. If these header fields are not correct, then the NIC should fall back to
// buffering the packet until it can be processed in order" -- the random 64-bit Connection ID
// makes a false match a matter of "pure chance", and "checking the message number, CRC, and other
// fields only enhances the confidence".
//
// Recovery::assess() applies this to the payload of one TCP segment received out of order:
//  - candidate 0 is offset 0 (the alignment assumption). Every segment starts at a stream
//    offset that is a multiple of 4 (each segment's wire length is, and the first starts at
//    stream offset 0, §5), so when the caller passes the TCP segment's stream offset, a
//    candidate at a non-multiple of 4 is rejected at once;
//  - a candidate is accepted when its header is complete in the bytes and passes, in order:
//    Version, Connection ID, reserved bits, the header consistency rules (check_header), the
//    message-number window (optional) and, when the whole segment lies in the bytes, the CRC;
//  - after an accepted candidate, the next one is found by the §5 length rule, until the bytes
//    end, a candidate is rejected, or a segment runs past the end (a partial tail: header
//    validated, CRC not checkable; accepted unless Config::accept_partial is false);
//  - Strategy::scan_words (an extension, NOT in the draft): when candidate 0 is rejected, try
//    every later offset that can be a segment start (4-aligned in the stream when the stream
//    offset is known, else every offset) and resynchronize at the first accepted one.
// The verdict says whether (part of) the bytes can be processed directly or all of them must be
// buffered. Whether an accepted candidate is a true segment start only the sender knows; tests
// count accepted candidates at wrong offsets as false matches.
class recovery {
public:
    enum class strategy : std::uint8_t { assume_aligned, scan_words };
    struct settings {
        std::uint64_t connection_id = 0;
        bool ignore_reserved_bits = false;
        bool check_crc = true;
        bool accept_partial = true;
        // Message-number plausibility. Send, RDMA_Write and RDMA_Read_Request share one sequence
        // (§3.4): accepted when (number - next_message_number) mod 2^32 < message_window.
        // RDMA_Read_Response carries the number of one of our requests: accepted when
        // (number - read_response_first) mod 2^32 < read_responses_outstanding.
        bool check_message_number = false;
        std::uint32_t next_message_number = 0;
        std::uint32_t message_window = 256;
        std::uint32_t read_response_first = 0;
        std::uint32_t read_responses_outstanding = 0;
        recovery::strategy strategy = recovery::strategy::assume_aligned;
    };

    enum class reason : std::uint8_t {
        accepted,
        misaligned,        // stream offset not a multiple of 4
        truncated_header,  // the header does not fit in the bytes
        bad_version,
        connection_id,
        reserved_bits,
        inconsistent_header,  // a check_header() rule
        message_number,
        crc,
        incomplete,  // whole segment not in the bytes and accept_partial == false
    };
    static constexpr std::size_t kReasonCount = 10;
    static const char* to_string(reason);

    struct candidate {
        std::size_t offset = 0;
        recovery::reason reason = recovery::reason::truncated_header;
        std::string detail;
        bool header_decoded = false;  // header holds the decoded fields
        rdmatcp::header header;
        std::size_t wire_length = 0;  // of the segment this candidate announces (if decoded)
        bool complete = false;        // the whole segment lies in the bytes
        bool crc_checked = false;
    };

    enum class verdict : std::uint8_t {
        aligned,         // candidate 0 accepted: process directly from offset 0
        resynchronized,  // scan_words found a later accepted candidate; bytes before it: buffer
        buffer,          // nothing accepted: buffer the whole TCP segment (§5)
    };
    static const char* to_string(verdict);

    struct assessment {
        recovery::verdict verdict = recovery::verdict::buffer;
        std::vector<candidate> candidates;  // every candidate examined, in order
        std::size_t first_segment = 0;      // offset of the first accepted segment (len if none)
        std::size_t accepted_end = 0;       // [first_segment, accepted_end): accepted segments
        std::size_t segments = 0;           // accepted candidates
        bool partial_tail = false;          // the last accepted segment continues after the bytes
    };

    struct counters {
        std::uint64_t assessed = 0, aligned = 0, resynchronized = 0, buffered = 0;
        std::uint64_t candidates = 0;
        std::uint64_t by_reason[kReasonCount] = {};
    };

    explicit recovery(const settings& cfg) : cfg_(cfg) {}

    // `data`/`len`: the payload of one TCP segment. `stream_offset`: its first byte's offset from
    // the first byte of the stream (TCP sequence number minus ISN minus 1), mod 2^32, if known.
    assessment assess(const std::uint8_t* data, std::size_t len,
                      std::optional<std::uint32_t> stream_offset = std::nullopt);
    // Examines one candidate start (no chain, no statistics).
    candidate examine(const std::uint8_t* data, std::size_t len, std::size_t offset,
                      std::optional<std::uint32_t> stream_offset = std::nullopt) const;

    recovery::settings& config() { return cfg_; }
    const recovery::settings& config() const { return cfg_; }
    const recovery::counters& stats() const { return stats_; }

private:
    recovery::settings cfg_;
    recovery::counters stats_;
};

}  // namespace rnic::proto::rdmatcp
