// MPA: Marker PDU Aligned framing for TCP (RFC 5044), with the enhanced connection setup of
// RFC 6581. Transmit side: build_fpdu() frames one ULPDU (markers, PAD, CRC32c). Receive side:
// Deframer turns the in-order TCP byte stream back into ULPDUs. Plus the MPA Request/Reply
// frames exchanged before Full Operation (RFC 5044 §7.1).
//
// "Marker-space position": the TCP sequence number of a byte minus the sequence number of the
// first Marker of that direction (the first byte of Full Operation), modulo 2^32. Markers sit
// at every position that is a multiple of 512 (RFC 5044 §4.3); 2^32 is a multiple of 512, so
// sequence-number wrap needs no special handling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "proto/parse_error.h"

namespace rnic::proto::mpa {

constexpr std::size_t kMarkerInterval = 512;
constexpr std::size_t kMarkerSize = 4;
constexpr std::size_t kLengthFieldSize = 2;
constexpr std::size_t kCrcSize = 4;
constexpr std::size_t kMinMulpdu = 128;         // RFC 5044 §4.5: MULPDU never below 128
constexpr std::size_t kMaxUlpduLength = 65535;  // ULPDU_Length is 16 bits (§4.1)

// PAD octets after a ULPDU so that ULPDU_Length + ULPDU + PAD is a multiple of 4 (§4.1).
std::size_t pad_length(std::size_t ulpdu_len);

// MULPDU for an effective MSS (§4.5): EMSS - (6 + 4*ceil(EMSS/512) + EMSS mod 4) with markers,
// EMSS - (6 + EMSS mod 4) without; never below 128 and never above 65535.
std::size_t max_ulpdu(std::size_t emss, bool markers);

// Bytes the FPDU occupies on the wire when its first byte sits at marker-space position
// `stream_pos` (ignored without markers): 2 + ULPDU + PAD + CRC, plus 4 per Marker inside it
// (a leading Marker at `stream_pos` and one right after the PAD included).
std::size_t fpdu_wire_length(std::size_t ulpdu_len, bool markers, std::uint32_t stream_pos);

// Appends one FPDU carrying `ulpdu` to `out` (§4.1-§4.4): [Marker] ULPDU_Length, ULPDU,
// PAD (zero), CRC, with a Marker inserted at every multiple of 512 of marker space that falls
// before the end of the FPDU. Every Marker before the CRC field is covered by the CRC. The CRC
// field holds the conventional CRC32c little-endian (test-vectors.md §1.2), or zeros with
// crc == false. ULPDUs longer than 65535 bytes cannot be framed: `out` is left unchanged.
void build_fpdu(const std::uint8_t* ulpdu, std::size_t ulpdu_len, bool crc, bool markers, std::uint32_t stream_pos,
                std::vector<std::uint8_t>& out);

// Marker-space position of byte `offset` of the ULPDU in an FPDU with markers that starts at
// `fpdu_pos`: past a leading Marker, the 2-byte ULPDU_Length and `offset` ULPDU bytes, skipping the
// Markers among them and one that sits right at that byte (§4.3).
std::uint32_t ulpdu_byte_position(std::uint32_t fpdu_pos, std::size_t offset);

// Offsets o (0 < o < len, ascending) in a run of `len` ULPDU bytes whose first byte sits at
// marker-space position `first_pos` at which a Marker sat between byte o-1 and byte o (§4.3). If
// first_pos falls inside a Marker, the run starts right after it. What a DMA engine that cannot
// skip Markers breaks a placement at (seed 001 §6).
std::vector<std::uint32_t> marker_breaks(std::uint32_t first_pos, std::uint32_t len);

// Receive-side errors (RFC 5044 §8 codes 2 and 3, plus a ULPDU longer than the receiver allows).
enum class deframe_error { none, crc_mismatch, ulpdu_too_long, marker_invalid };
const char* to_string(deframe_error);

// Receive side of one half connection in Full Operation: fed the in-order TCP byte stream,
// reassembles FPDUs across arbitrary chunk boundaries, removes Markers, checks the CRC and the
// Markers' FPDUPTR, and hands each good ULPDU to the sink. A whole FPDU that lies inside one
// chunk and contains no Marker is checked and delivered in place (no copy); otherwise the ULPDU
// is gathered into an internal buffer that is reused. After the first error nothing more is
// consumed or delivered (§8: "MUST NOT pass or deliver any additional FPDUs").
class deframer {
public:
    struct config {
        bool markers = false;
        bool crc = true;
        std::uint32_t stream_pos = 0;   // marker-space position of the first byte fed
        std::size_t max_ulpdu = 65535;  // larger ULPDU_Length values are an error
    };
    // Called once per good FPDU; the pointer is valid only during the call.
    using sink_fn = std::function<void(const std::uint8_t* ulpdu, std::size_t len)>;

    deframer(const config& cfg, sink_fn sink);

    // Consumes all of `data` unless an error occurs. Returns DeframeError::none or the first
    // error (also on every later call); error_detail() then says what and at which stream byte.
    deframe_error feed(const std::uint8_t* data, std::size_t len);

    deframe_error error() const { return error_; }
    const std::string& error_detail() const { return error_detail_; }
    std::uint64_t fpdus() const { return fpdus_; }                    // good FPDUs delivered
    std::uint64_t bytes_consumed() const { return bytes_consumed_; }  // stream bytes consumed
    // True between FPDUs, i.e. no partial FPDU (or leading Marker) is buffered.
    bool at_fpdu_boundary() const { return field_ == field::length && got_ == 0 && !leading_marker_; }

private:
    enum class field { length, body, crc };

    bool in_marker() const;
    void begin_marker();
    std::string crc_detail(std::uint32_t received, std::uint32_t computed) const;
    std::size_t try_whole_fpdu(const std::uint8_t* data, std::size_t len);
    std::size_t consume_marker_bytes(const std::uint8_t* data, std::size_t len);
    std::size_t consume_field_bytes(const std::uint8_t* data, std::size_t len);
    void start_length_field();
    void finish_length_field();
    void finish_fpdu();
    void check_marker();
    void fail(deframe_error err, std::string detail);
    void advance(std::size_t n);

    config cfg_;
    sink_fn sink_;
    field field_ = field::length;
    std::size_t got_ = 0;        // bytes of the current field received so far
    std::size_t ulpdu_len_ = 0;  // of the FPDU in progress
    std::size_t body_len_ = 0;   // ULPDU + PAD
    std::uint8_t length_bytes_[2] = {};
    std::uint8_t crc_bytes_[4] = {};
    std::uint8_t marker_bytes_[4] = {};
    std::uint32_t crc_reg_ = 0;    // conventional CRC32c of the covered bytes so far
    bool leading_marker_ = false;  // a Marker immediately preceding ULPDU_Length was consumed
    bool marker_active_ = false;   // inside a Marker whose first byte was consumed
    bool marker_covered_ = false;  // the Marker being received counts towards the CRC
    std::uint32_t marker_expected_ = 0;
    std::uint32_t pos_ = 0;              // marker-space position of the next byte
    std::uint32_t fpdu_pos_ = 0;         // marker-space position of ULPDU_Length of this FPDU
    std::uint64_t fpdu_start_byte_ = 0;  // stream byte (counted from the first byte fed) where it began
    std::string marker_problem_;         // first bad Marker of this FPDU, reported once the CRC is good
    std::vector<std::uint8_t> buffer_;
    deframe_error error_ = deframe_error::none;
    std::string error_detail_;
    std::uint64_t fpdus_ = 0;
    std::uint64_t bytes_consumed_ = 0;
};

// MPA Request/Reply frame (RFC 5044 §7.1.1, RFC 6581 §6 and §9).
struct request_reply {
    bool request = true;  // "MPA ID Req Frame" vs "MPA ID Rep Frame"
    bool marker = false, crc = false, reject = false;
    std::uint8_t revision = 1;
    bool enhanced = false;      // S flag (RFC 6581); then the first 4 bytes of private data are the IRD/ORD word:
    bool peer_to_peer = false;  // A bit
    bool zero_length_send_rtr = false;       // B bit
    bool zero_length_write_rtr = false;      // C bit
    bool zero_length_read_rtr = false;       // D bit
    std::uint16_t ird = 0, ord = 0;          // 14 bits each; 0x3FFF = no automatic negotiation
    std::vector<std::uint8_t> private_data;  // the ULP's private data (excluding the RFC 6581 word)
    // The 4 "Res" bits (low nibble of byte 16). Encoded as given; zero on a valid frame.
    // decode() rejects non-zero values unless DecodeOptions::ignore_reserved_bits.
    std::uint8_t reserved_bits = 0;
};

constexpr std::size_t kRequestReplyHeaderSize = 20;
constexpr std::size_t kMaxPrivateData = 512;
constexpr std::size_t kEnhancedDataSize = 4;  // RFC 6581 §9 IRD/ORD word
constexpr std::uint16_t kIrdOrdNoNegotiation = 0x3FFF;

// Encodes the frame as given (no validation, so tests can build bad frames too). PD_Length
// counts the RFC 6581 word when `enhanced`; private data that would not fit the 16-bit
// PD_Length is cut off.
std::vector<std::uint8_t> encode(const request_reply& frame);

// Bytes the frame at `data` needs in total (20 + PD_Length), or 0 when fewer than 20 bytes are
// available. PD_Length is not judged here: decode() reports a PD_Length above 512.
std::size_t request_reply_length(const std::uint8_t* data, std::size_t avail);

struct decode_options {
    // RFC 5044 §7.1.1 says Res "MUST be set to zero when sending, and not checked on
    // reception", and that R is not checked in a Request; Linux siw sets Res bit 0x08 (GSO).
    // By default decode() is strict and reports them; set this to accept them (they are then
    // returned in reserved_bits / reject).
    bool ignore_reserved_bits = false;
};

// Decodes a complete frame (the first 20 + PD_Length bytes of `data`; bytes after it are not
// looked at). On error returns nullopt and a message naming the offending field in *error
// (error may be null). *code (may be null) is set to ParseError::none on success, otherwise to
// short_input (under 20 bytes, or fewer Private Data bytes than PD_Length), bad_magic (Key),
// bad_length (PD_Length > 512, or S set with PD_Length < 4), reserved_bits (Res, or R in a
// Request, unless ignore_reserved_bits), bad_version (Rev not 1 or 2), inconsistent (S with Rev 1).
std::optional<request_reply> decode(const std::uint8_t* data, std::size_t len, std::string* error,
                                    parse_error* code = nullptr);
std::optional<request_reply> decode(const std::uint8_t* data, std::size_t len, std::string* error,
                                    const decode_options& options, parse_error* code = nullptr);

}  // namespace rnic::proto::mpa
