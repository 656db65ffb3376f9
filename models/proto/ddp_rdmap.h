// DDP (RFC 5041) and RDMAP (RFC 5040, extended by RFC 7306) wire formats: the DDP header with
// the RDMAP control byte, the RDMA Read Request header, the Atomic Request/Response headers,
// Immediate Data, the Terminate header, and segmentation of a message into DDP segments.
// Decoders check lengths only: every decode_* takes an optional trailing `ParseError* code`, set
// to none on success and to short_input (their only failure) otherwise. Whether a field value is acceptable is the engine's decision
// (it must answer with the Terminate that RFC 5040 §7 / RFC 5041 §7 require).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/parse_error.h"

namespace rnic::proto::ddp {

// RDMAP opcodes (RFC 5040 §4.1 Figure 4, RFC 7306 §4.1 Figure 2).
enum class opcode : std::uint8_t {
    rdma_write = 0,
    read_request = 1,
    read_response = 2,
    send = 3,
    send_invalidate = 4,
    send_se = 5,
    send_se_invalidate = 6,
    terminate = 7,
    immediate = 8,
    immediate_se = 9,
    atomic_request = 10,
    atomic_response = 11
};
const char* to_string(opcode);
bool is_tagged(opcode);  // RDMA Write and RDMA Read Response use the tagged buffer model

constexpr std::size_t kTaggedHeaderSize = 14;
constexpr std::size_t kUntaggedHeaderSize = 18;
// Untagged queue numbers (RFC 5040 §4.1, RFC 7306 §10.2).
constexpr std::uint32_t kQueueSend = 0;
constexpr std::uint32_t kQueueReadRequest = 1;
constexpr std::uint32_t kQueueTerminate = 2;
constexpr std::uint32_t kQueueAtomicResponse = 3;

// DDP header + RDMAP control (RFC 5041 §4, RFC 5040 §4.1).
struct header {
    bool tagged = false;
    bool last = true;
    std::uint8_t ddp_version = 1, rdmap_version = 1;
    ddp::opcode opcode = ddp::opcode::send;
    std::uint32_t invalidate_stag =
        0;                   // untagged: the 32-bit field after the RDMAP control byte (RsvdULP / Invalidate STag)
    std::uint32_t stag = 0;  // tagged
    std::uint64_t tagged_offset = 0;           // tagged
    std::uint32_t queue = 0, msn = 0, mo = 0;  // untagged
    std::size_t size() const { return tagged ? kTaggedHeaderSize : kUntaggedHeaderSize; }
};

// Writes size() bytes at `out` and returns that count. Reserved bits are written as zero;
// versions and opcode are masked to their 2/2/4-bit fields.
std::size_t encode(const header& h, std::uint8_t* out);
// Decodes the header at `data` (T bit selects 14 or 18 bytes). Fails only on short input;
// reserved bits are ignored (RFC 5041 §4.1, RFC 5040 §4.1: "not checked on receive").
std::optional<header> decode_header(const std::uint8_t* data, std::size_t len, std::string* error,
                                    parse_error* code = nullptr);
// Header size the T bit of `first_byte` (the DDP control byte) announces.
inline std::size_t header_size_from_control(std::uint8_t first_byte) {
    return (first_byte & 0x80) != 0 ? kTaggedHeaderSize : kUntaggedHeaderSize;
}

// RDMA Read Request header (RFC 5040 §4.4), follows the untagged DDP header.
struct read_request {
    std::uint32_t sink_stag = 0;
    std::uint64_t sink_to = 0;
    std::uint32_t size = 0;
    std::uint32_t src_stag = 0;
    std::uint64_t src_to = 0;
};
constexpr std::size_t kReadRequestSize = 28;
void encode(const read_request& rr, std::uint8_t* out);  // writes kReadRequestSize bytes
std::optional<read_request> decode_read_request(const std::uint8_t* data, std::size_t len, std::string* error,
                                                parse_error* code = nullptr);

// RFC 7306 §5.2.1 Atomic Operation Request header (52 bytes after the untagged header) and
// §5.2.2 Atomic Operation Response header (12 bytes).
enum class atomic_opcode : std::uint8_t { fetch_add = 0, compare_swap = 2 };  // 4-bit AOpCode
struct atomic_request {
    atomic_opcode op = atomic_opcode::fetch_add;  // decode keeps unassigned codes as their raw value
    std::uint32_t request_id = 0;
    std::uint32_t stag = 0;
    std::uint64_t tagged_offset = 0;
    std::uint64_t add_or_swap_data = 0, add_or_swap_mask = 0, compare_data = 0, compare_mask = 0;
};
struct atomic_response {
    std::uint32_t request_id = 0;
    std::uint64_t original_value = 0;
};
constexpr std::size_t kAtomicRequestSize = 52;
constexpr std::size_t kAtomicResponseSize = 12;
constexpr std::size_t kImmediateDataSize = 8;
const char* to_string(atomic_opcode);
void encode(const atomic_request& req, std::uint8_t* out);    // writes kAtomicRequestSize bytes
void encode(const atomic_response& resp, std::uint8_t* out);  // writes kAtomicResponseSize bytes
std::optional<atomic_request> decode_atomic_request(const std::uint8_t* data, std::size_t len, std::string* error,
                                                    parse_error* code = nullptr);
std::optional<atomic_response> decode_atomic_response(const std::uint8_t* data, std::size_t len, std::string* error,
                                                      parse_error* code = nullptr);
// RFC 7306 §6.2 Immediate Data: 8 bytes, network order.
void encode_immediate(std::uint64_t data, std::uint8_t* out);
std::optional<std::uint64_t> decode_immediate(const std::uint8_t* data, std::size_t len, std::string* error,
                                              parse_error* code = nullptr);

// Terminate header (RFC 5040 §4.8): control word Layer(4) EType(4) Error Code(8) HdrCt M/D/R,
// 13 reserved bits; then, when D is set, the DDP Segment Length (16 bits) and the terminated
// DDP header (14 or 18 bytes, per its own T bit); then, when R is set, the terminated RDMA
// header (28 bytes). The M bit only says the DDP Segment Length value is valid.
enum class term_layer : std::uint8_t { rdma = 0, ddp = 1, llp = 2 };
struct terminate {
    term_layer layer = term_layer::rdma;
    std::uint8_t etype = 0, code = 0;
    bool m = false, d = false, r = false;
    std::uint16_t ddp_segment_length = 0;
    std::vector<std::uint8_t> ddp_header;   // written as given when d
    std::vector<std::uint8_t> rdma_header;  // written as given when r
};
constexpr std::size_t kTerminateControlSize = 4;
std::vector<std::uint8_t> encode(const terminate& term);
std::optional<terminate> decode_terminate(const std::uint8_t* data, std::size_t len, std::string* error,
                                          parse_error* code = nullptr);

// RFC 5040 §4.8 Figure 9 / RFC 5041 §7.2 / RFC 5044 §8 + RFC 6581 §8 error types and codes the
// engines put into a Terminate.
namespace term {
// Layer RDMA: error types
constexpr std::uint8_t kRdmaLocalCatastrophic = 0x0;
constexpr std::uint8_t kRdmaRemoteProtection = 0x1;
constexpr std::uint8_t kRdmaRemoteOperation = 0x2;
// Layer RDMA: error codes
constexpr std::uint8_t kRdmaInvalidStag = 0x00;
constexpr std::uint8_t kRdmaBaseOrBounds = 0x01;
constexpr std::uint8_t kRdmaAccessRights = 0x02;
constexpr std::uint8_t kRdmaStagNotAssociated = 0x03;
constexpr std::uint8_t kRdmaToWrap = 0x04;
constexpr std::uint8_t kRdmaInvalidVersion = 0x05;
constexpr std::uint8_t kRdmaUnexpectedOpcode = 0x06;
constexpr std::uint8_t kRdmaCatastrophicStream = 0x07;
constexpr std::uint8_t kRdmaCatastrophicGlobal = 0x08;
constexpr std::uint8_t kRdmaStagCannotInvalidate = 0x09;
constexpr std::uint8_t kRdmaUnspecified = 0xFF;
// Layer DDP: error types and codes (RFC 5041 §7.2)
constexpr std::uint8_t kDdpLocalCatastrophic = 0x0;
constexpr std::uint8_t kDdpTaggedBuffer = 0x1;
constexpr std::uint8_t kDdpUntaggedBuffer = 0x2;
constexpr std::uint8_t kDdpRsvdForLlp = 0x3;
constexpr std::uint8_t kDdpTaggedInvalidStag = 0x00;
constexpr std::uint8_t kDdpTaggedBaseOrBounds = 0x01;
constexpr std::uint8_t kDdpTaggedStagNotAssociated = 0x02;
constexpr std::uint8_t kDdpTaggedToWrap = 0x03;
constexpr std::uint8_t kDdpTaggedInvalidVersion = 0x04;
constexpr std::uint8_t kDdpUntaggedInvalidQn = 0x01;
constexpr std::uint8_t kDdpUntaggedNoBuffer = 0x02;
constexpr std::uint8_t kDdpUntaggedInvalidMsn = 0x03;
constexpr std::uint8_t kDdpUntaggedInvalidMo = 0x04;
constexpr std::uint8_t kDdpUntaggedMessageTooLong = 0x05;
constexpr std::uint8_t kDdpUntaggedInvalidVersion = 0x06;
// Layer LLP, error type 0 = MPA (RFC 5044 §8, RFC 6581 §8)
constexpr std::uint8_t kLlpMpa = 0x0;
constexpr std::uint8_t kMpaConnectionLost = 0x01;
constexpr std::uint8_t kMpaCrcError = 0x02;
constexpr std::uint8_t kMpaMarkerLengthMismatch = 0x03;
constexpr std::uint8_t kMpaInvalidRequestReply = 0x04;
constexpr std::uint8_t kMpaLocalCatastrophic = 0x05;
constexpr std::uint8_t kMpaInsufficientIrd = 0x06;
constexpr std::uint8_t kMpaNoMatchingRtr = 0x07;
}  // namespace term

// One DDP segment of a message (RFC 5041 §5.2): `offset` into the message (the MO, or the TO
// minus the initial TO) and `length` payload bytes; `last` marks the segment with the L bit.
struct segment {
    std::size_t offset = 0;
    std::size_t length = 0;
    bool last = false;
};
// Splits a message into segments whose DDP header + payload fit `max_ulpdu` (the MULPDU).
// A 0-byte message gives one empty last segment (§5.2). Returns an empty vector when no
// payload fits beside the header, or when the message is 2^32 bytes or longer (§5.2).
std::vector<segment> segment_message(std::size_t message_len, std::size_t max_ulpdu, bool tagged);

}  // namespace rnic::proto::ddp
