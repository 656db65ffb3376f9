// VI/TCP segments (draft-dicecco-vitcp-01, seed 003): the VI Segment Header (§3.2), the
// Connection Establishment header with options (§3.3), the RDMA header (§3.4) and the optional
// trailer CRC (§3.5, §3.6, generator 0xDB710641), plus the MTU / RDMA-read-window / CRC
// negotiation of ConnectRequest and ConnectAccept. All numeric fields big-endian (§3).
//
//   VI Segment Header (24)   Version | Eom IdV TrE Type(5) | Segment Length
//                            Data Offset | Immediate Data | Message Number | Message ACK
//                            Rx Descriptors Posted (16) | Remote Error Code (16)
//   RDMA Header (16)         RdmaWrite, RdmaReadRequest: RDMA Address (64) | Memory Handle | RDMA Length
//   CE Header (140 + opts)   ConnectRequest, ConnectAccept
//   VI Payload Data          Send, RdmaWrite, RdmaReadResponse
//   VI Trailer (4)           CRC, when present; not aligned (§3.5)
//
// Choices where the draft is ambiguous or contradictory (each tested in tests/seeds/vitcp_test.cpp):
//  - Segment Length (§3.2) "containing the length of the VI segment including the VI Segment
//    Header and VI Segment trailer" and "can be added to the byte location ... of the first byte
//    of this segment to get the first byte position of the next segment", but also "The total
//    length exceeds the value contained in the Segment Length by the length of the trailer".
//    The first two sentences, §3.6 ("a receiver can determine by means of the segment length if
//    there is a CRC included" in a ConnectReject) and §3.3 (without an explicit End of Option
//    List the CRC would be "interpreted as an option", i.e. it lies inside the Segment Length)
//    all say the trailer is counted; the third sentence is treated as an erratum.
//  - CRC coverage (§3.6 (a)): "the entire VI segment including all VI headers and trailers"
//    with zero in the CRC field, divided without a further x^32 factor; the value therefore is
//    crc_db710641(segment bytes before the CRC field). Field byte order: see proto/crc32c.h.
//  - "RdmaRead" segments carry the RDMA header (§3.1): read as RdmaReadRequest (the only one of
//    the two read types that names a remote buffer; RdmaReadResponse is listed with payload).
//  - Options (§3.3): Type and Length are 16 bits each; Length counts the whole option (the CRC
//    option has "Length = 4 (no data)"); End of Option List is the 2-byte Type 0 alone. A known
//    option (CRC, Urgent Marker) with a Length other than 4, or any option with Length < 4 or
//    running past the segment, is malformed (ErrorCode::bad_option); unknown options are skipped.
//    After an End of Option List only the trailer may follow (no padding, §3.5).
//  - A ConnectRequest/ConnectAccept has a trailer iff it carries the CRC option (§3.5, §3.6);
//    ConnectReject/ConnectNoMatch iff Segment Length is 28 rather than 24 (§3.6); all other
//    types iff the connection negotiated the CRC (the caller says so).
//  - Single-segment messages (RdmaReadRequest and the four connection types, §3.2 Data Offset:
//    "All other VI messages MUST consist of a single VI segment") must have Data Offset 0.
//    NOP is "not a VI message": its Data Offset is not checked.
//  - Reserved bits (Remote Error Code bits 7-3, Calling Attributes bits 15-7) are written as given
//    and rejected when non-zero unless DecodeOptions::ignore_reserved_bits.
//  - Calling Attributes name one reliability level: exactly one of UR/RD/RR must be set. The
//    figure labels bits 4 and 3 both "RWE"; the text (bit 3 RDMA Write, bit 4 RDMA Read) wins.
//  - Immediate Data Valid and Immediate Data are kept as received for every type; receivers
//    ignore them for types without immediate data (§3.2), see supports_immediate_data().
//  - RDMA Read Window negotiation is not spelled out; like the MTU (§3.3) the agreed value is
//    the lesser of the two proposals, carried in the ConnectAccept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rnic::proto::vitcp {

// §3.2 Type (5 bits).
enum class segment_type : std::uint8_t {
    send = 0,
    rdma_write = 1,
    read_request = 2,
    read_response = 3,
    nop = 4,
    connect_request = 5,
    connect_accept = 6,
    connect_reject = 7,
    connect_no_match = 8,
};
constexpr std::uint8_t kMaxSegmentType = 8;
const char* to_string(segment_type);

constexpr bool has_rdma_header(segment_type t) {
    return t == segment_type::rdma_write || t == segment_type::read_request;
}
constexpr bool has_ce_header(segment_type t) {
    return t == segment_type::connect_request || t == segment_type::connect_accept;
}
constexpr bool has_payload(segment_type t) {
    return t == segment_type::send || t == segment_type::rdma_write || t == segment_type::read_response;
}
constexpr bool is_single_segment_message(segment_type t) {
    return t == segment_type::read_request || t == segment_type::connect_request || t == segment_type::connect_accept ||
           t == segment_type::connect_reject || t == segment_type::connect_no_match;
}
// VI Architecture: Send and RDMA Write carry immediate data.
constexpr bool supports_immediate_data(segment_type t) {
    return t == segment_type::send || t == segment_type::rdma_write;
}

constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kSegmentHeaderSize = 24;
constexpr std::size_t kRdmaHeaderSize = 16;
constexpr std::size_t kDiscriminatorSize = 64;
constexpr std::size_t kCeFixedSize = 4 + 4 + kDiscriminatorSize + 4 + kDiscriminatorSize;  // 140
constexpr std::size_t kTrailerSize = 4;
constexpr std::size_t kMaxSegmentLength = 65535;
constexpr std::uint16_t kOptionEnd = 0;
constexpr std::uint16_t kOptionCrc = 1;
constexpr std::uint16_t kOptionUrgentMarker = 2;
constexpr std::size_t kOptionHeaderSize = 4;  // Type + Length
constexpr std::size_t kOptionEndSize = 2;     // Type only

// Header bytes before the payload (segment header, RDMA header; not the CE header).
constexpr std::size_t fixed_headers_size(segment_type t) {
    return kSegmentHeaderSize + (has_rdma_header(t) ? kRdmaHeaderSize : 0);
}
// Largest payload of a Send/RdmaWrite/RdmaReadResponse segment whose Segment Length fits both
// `emss` (one VI segment per TCP segment, §2.2.2.2.3) and 16 bits; 0 for other types.
std::size_t max_payload(std::size_t emss, segment_type t, bool crc);
// Wire bytes of a non-CE segment that are not payload: headers and trailer.
constexpr std::size_t overhead(segment_type t, bool crc) {
    return fixed_headers_size(t) + (crc ? kTrailerSize : 0);
}

// Remote Error Code (§3.2): IS Error Code (bits 15-8) | reserved (7-3) | UTE | VDE | MPE.
struct remote_error_code {
    std::uint8_t is_error_code = 0;
    bool transport_error = false;          // UTE, bit 2
    bool descriptor_error = false;         // VDE, bit 1
    bool memory_protection_error = false;  // MPE, bit 0
    std::uint8_t reserved = 0;             // bits 7-3 (5 bits)
    std::uint16_t pack() const;
    static remote_error_code unpack(std::uint16_t v);
};

struct header {
    std::uint8_t version = kVersion;
    segment_type type = segment_type::send;
    bool eom = true;                   // bit 7: End of Message
    bool immediate_valid = false;      // bit 6
    bool transmit_error = false;       // bit 5
    std::uint16_t segment_length = 0;  // includes headers and trailer; encode() fills it in
    std::uint32_t data_offset = 0;
    std::uint32_t immediate_data = 0;
    std::uint32_t message_number = 0;
    std::uint32_t message_ack = 0;
    std::uint16_t rx_descriptors_posted = 0;
    remote_error_code remote_error;
};

// Writes the 24-byte segment header exactly as given (type masked to 5 bits).
void encode_header(const header& h, std::uint8_t* out);
// Reads the 24-byte segment header; fails only on short input.
std::optional<header> decode_header(const std::uint8_t* data, std::size_t len, std::string* error);

struct rdma_header {
    std::uint64_t address = 0;
    std::uint32_t memory_handle = 0;
    std::uint32_t length = 0;  // total bytes of the message (§3.4)
};

// Calling Attributes (§3.3), bit 0 = LSB.
struct attributes {
    bool unreliable = false;               // bit 0
    bool reliable_delivery = true;         // bit 1
    bool reliable_reception = false;       // bit 2
    bool rdma_write_enable = false;        // bit 3
    bool rdma_read_enable = false;         // bit 4
    bool descriptor_flow_control = false;  // bit 5
    bool peer_to_peer = false;             // bit 6
    std::uint16_t reserved = 0;            // bits 15-7, as a 9-bit value
    std::uint16_t pack() const;
    static attributes unpack(std::uint16_t v);
    int reliability_bits() const { return int{unreliable} + int{reliable_delivery} + int{reliable_reception}; }
};

struct option {
    std::uint16_t type = 0;
    std::vector<std::uint8_t> data;  // Length on the wire = 4 + data.size()
};

struct ce_header {
    vitcp::attributes attributes;
    std::uint32_t mtu = 0;
    std::vector<std::uint8_t> calling_discriminator;  // at most 64 bytes; its size is the length field
    std::uint16_t rdma_read_window = 0;
    std::vector<std::uint8_t> called_discriminator;  // at most 64 bytes
    std::vector<option> options;                     // in wire order; never kOptionEnd (see end_of_options)
    bool end_of_options = true;                      // an explicit End of Option List follows the options
    bool has_option(std::uint16_t type) const;
    // Bytes on the wire: 140 + options (+2 for the End of Option List).
    std::size_t size() const;
};

struct segment {
    vitcp::header header;
    std::optional<rdma_header> rdma;  // present iff has_rdma_header(type)
    std::optional<ce_header> ce;      // present iff has_ce_header(type)
    std::vector<std::uint8_t> payload;
    bool crc = false;  // a VI Trailer (CRC) follows
};

// Appends the whole segment with Segment Length computed (header.segment_length is ignored) and
// the trailer CRC when s.crc. Fails, leaving `out` unchanged, on: a type above 8; an RDMA or CE
// header missing or present against the type; payload for a type without payload; a
// discriminator above 64 bytes; an option of type 0 or longer than 65535; a CE segment whose
// s.crc differs from its CRC option, or with the CRC option but no End of Option List (§3.3);
// a Segment Length above 65535.
bool encode(const segment& s, std::vector<std::uint8_t>& out, std::string* error = nullptr);
std::vector<std::uint8_t> encode(const segment& s);  // empty on failure

enum class error_code : std::uint8_t {
    none,
    truncated,  // fewer bytes than the header or Segment Length needs
    bad_version,
    bad_type,                  // Type 9-31
    length_too_short,          // Segment Length below the headers (+ trailer) of the type
    length_mismatch,           // ConnectReject/NoMatch not 24/28; bytes after End of Option List
    unexpected_payload,        // payload in a type without payload
    bad_option,                // malformed option
    missing_end_of_options,    // CRC option without an explicit End of Option List (§3.3)
    bad_discriminator_length,  // above 64
    bad_attributes,            // not exactly one reliability level
    reserved_bits,             // Remote Error Code or Calling Attributes reserved bits set
    bad_data_offset,           // single-segment message with Data Offset != 0
    crc_mismatch,
};
const char* to_string(error_code);

struct decode_options {
    bool ignore_reserved_bits = false;
    bool check_crc = true;
};

struct segment_view {
    vitcp::header header;
    std::optional<rdma_header> rdma;
    std::optional<ce_header> ce;
    const std::uint8_t* payload = nullptr;
    std::size_t payload_len = 0;
    bool crc_present = false;
    std::uint32_t crc = 0;        // as received, when present
    std::size_t wire_length = 0;  // == Segment Length
    // False only from a Deframer told to go on past CRC errors (Config::continue_after_crc_error):
    // every other check passed, the trailer did not match.
    bool crc_ok = true;
};

// Decodes and checks the segment at the start of `data` (bytes after it are not looked at).
// `crc_negotiated`: whether this connection's ConnectRequest and ConnectAccept both carried
// the CRC option (decides the trailer of every type except the four connection types). Order of
// checks: header length, version, type, Segment Length against the bytes, trailer presence and
// the structure (options, lengths), the CRC, then field values (reserved bits, attributes,
// discriminator lengths, Data Offset).
std::optional<segment_view> parse(const std::uint8_t* data, std::size_t len, bool crc_negotiated, std::string* error,
                                  error_code* code = nullptr, const decode_options& options = {});
std::optional<segment> decode(const std::uint8_t* data, std::size_t len, bool crc_negotiated, std::string* error,
                              error_code* code = nullptr, const decode_options& options = {});

// Connection establishment (§3.3, §3.6, §2.2.2.2.6).
struct local_parameters {
    vitcp::attributes attributes;
    std::uint32_t mtu = 0;
    std::uint16_t rdma_read_window = 0;
    bool crc = false;            // this end wants the CRC
    bool urgent_marker = false;  // this end sends the Urgent Marker option
};
// The ConnectRequest CE header of the active side.
ce_header make_request(const local_parameters& local, std::vector<std::uint8_t> calling_discriminator,
                       std::vector<std::uint8_t> called_discriminator);
// The passive side's ConnectAccept CE header for `request`: MTU and RDMA Read Window the lesser
// of the two; the CRC option only if the request carried it and local.crc (§3.6).
ce_header make_accept(const ce_header& request, const local_parameters& local);
struct agreement {
    std::uint32_t mtu = 0;
    std::uint16_t rdma_read_window = 0;
    bool crc = false;                    // trailer CRC on every later segment (§3.5)
    bool request_urgent_marker = false;  // the accepting end may mark urgent data (§3.7)
    bool accept_urgent_marker = false;   // the requesting end may mark urgent data
};
// What a ConnectRequest/ConnectAccept pair establishes; fails when the reliability levels or
// the peer-to-peer bits differ (§3.3), the Accept raises the MTU or the RDMA Read Window above
// the request, or the Accept carries the CRC option without the Request (§3.6).
std::optional<agreement> negotiate(const ce_header& request, const ce_header& accept, std::string* error);

// Receive side of the in-order TCP byte stream: each segment is Segment Length bytes (trailer
// included), so framing does not depend on the CRC; each is checked like parse() and handed to
// the sink (in place when whole in one chunk). The first error is fatal.
class deframer {
public:
    struct config {
        bool crc_negotiated = false;
        decode_options decode;
        // §3.6 option 2 at Unreliable Delivery ("The connection may continue"): a segment whose
        // only fault is its CRC is delivered with crc_ok false instead of stopping the Deframer.
        // Segment Length is then trusted; if it was the corrupted field, the next segment's
        // checks fail and deframing stops there.
        bool continue_after_crc_error = false;
    };
    using sink_fn = std::function<void(const segment_view& segment)>;  // pointers valid during the call

    deframer(const config& cfg, sink_fn sink);

    error_code feed(const std::uint8_t* data, std::size_t len);
    // Call once the ConnectRequest/ConnectAccept exchange decided (negotiate().crc); applies to
    // segments not yet delivered.
    void set_crc_negotiated(bool crc) { cfg_.crc_negotiated = crc; }

    error_code error() const { return error_; }
    const std::string& error_detail() const { return error_detail_; }
    std::uint64_t segments() const { return segments_; }
    std::uint64_t bytes_consumed() const { return bytes_consumed_; }
    bool at_segment_boundary() const { return buffer_.empty(); }

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

}  // namespace rnic::proto::vitcp
