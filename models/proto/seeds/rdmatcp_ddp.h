// DDP/RDMAP segments (ULPDUs) in the terms of RDMA/TCP (seed 000, draft-williams-rdmatcp-00): the
// translation both ways and the per-connection state the seed's fields need (§3.4: the Connection
// ID, the message numbers). Plain C++, no SystemC; rdmatcp_framing puts it behind the framing
// interface. Every choice below is repeated, with the section, in docs/framings.md.
//
// Which seed type (§3.4 Type) a ULPDU becomes:
//   tagged, RDMAP RDMA Write                 -> RDMA_Write, one segment per DDP segment (B and E)
//   tagged, RDMAP RDMA Read Response         -> RDMA_Read_Response (B: first DDP segment, E: L)
//   untagged QN 0 (Send, Send with Invalidate, with Solicited Event, both; RFC 7306 Immediate
//   Data) and QN 2 (Terminate)              -> Send (B: MO == 0, E: L, Data Offset = MO)
//   untagged QN 1, RDMAP RDMA Read Request   -> RDMA_Read_Request (Buffer ID/offset = the source
//                                               STag/TO, RDMA Length = the Read Message Size)
//   anything else (RFC 7306 Atomic Request and Response) is refused: no seed type carries it.
// The DDP/RDMAP fields the seed's header has no place for travel as Control Data, which §3.4 gives
// the client protocol ("typically ... header information for the client protocol"); word 0 is
// always the DDP and RDMAP control bytes as sent, then two zero bytes:
//   RDMA_Write          (CLEN 2)  w0 | TO bits 63-32                     (Buffer offset: TO 31-0)
//   RDMA_Read_Response  (CLEN 4)  w0 | STag | TO 63-32 | TO 31-0
//   Send                (CLEN 5)  w0 | RsvdULP/Invalidate STag | QN | MSN | 0
//   RDMA_Read_Request   (CLEN 10) w0 | RsvdULP | MSN | MO | sink STag | sink TO 63-32 |
//                                 sink TO 31-0 | source TO 63-32 | 0 | 0
// The CLENs are chosen so that every type's Segment Length is the ULPDU length + 26: the framer
// knows a frame's wire length from its ULPDU's length alone (framing::wire_length).
//
// Why a Write's DDP segments are separate RDMA/TCP messages: RDMA Length is "the total number of
// bytes in the entire message ... repeated in each segment" (§3.4), which the NIC's transmit path
// does not know when it frames one DDP segment; each DDP segment is therefore a whole RDMA_Write
// message whose RDMA Length is its own payload, and RDMAP's last-segment bit rides in word 0.
//
// Order (§3.4): Send and RDMA_Read_Request 0 (RFC 5040 §5.5: a Send is delivered, a Read Request
// processed, only after every earlier message); RDMA_Write and RDMA_Read_Response 0xFFFF (tagged
// placement in any order, RFC 5041 §5.3). The receiver places out of order only segments whose
// order field allows it (rdmatcp_framing::deframe_whole).
//
// Message numbers (§3.4): Send, RDMA_Write and RDMA_Read_Request share one sequence per direction,
// starting at a random value; all segments of a message carry its number; an RDMA_Read_Response
// carries the number of the Read Request it answers (the oldest one not yet answered: RDMAP
// answers Read Requests in order, RFC 5040 §5.5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "proto/seeds/rdmatcp.h"

namespace rnic::proto::rdmatcp_map {

namespace rt = proto::rdmatcp;

// Segment Length minus ULPDU length, for every type (see the CLENs above).
constexpr std::size_t kLengthAdded = 26;
constexpr std::size_t segment_length(std::size_t ulpdu_len) {
    return ulpdu_len + kLengthAdded;
}
constexpr std::size_t wire_length(std::size_t ulpdu_len) {
    return rt::wire_length(segment_length(ulpdu_len));
}
// The most a frame adds to its ULPDU: 26, padding up to 3, the CRC.
constexpr std::size_t kMaxAdded = kLengthAdded + 3 + rt::kCrcSize;
// Control Data words of each type (indexed by MessageType).
constexpr std::uint8_t control_words(rt::message_type t) {
    return t == rt::message_type::send           ? 5
           : t == rt::message_type::rdma_write   ? 2
           : t == rt::message_type::read_request ? 10
                                                 : 4;
}

// Why a ULPDU cannot be carried.
enum class refusal : std::uint8_t {
    none,
    truncated,          // shorter than its DDP header (or than a Read Request)
    atomic,             // RFC 7306 Atomic Request/Response: no seed type (§3.4 Type) carries them
    unexpected_opcode,  // an RDMAP opcode that does not belong with its DDP model or queue
    unknown_queue,      // an untagged queue other than 0, 1, 2 (and 3, atomic)
    bad_read_request,   // a Read Request that is not exactly the 28-byte RDMAP header, or MO != 0
    no_read_request,    // a Read Response with no received Read Request to answer (§3.4)
    too_long,           // Segment Length would exceed 16 bits
};
const char* to_string(refusal);

// Per-connection state both directions share.
struct session {
    // §3.4: "selected by the client side ... included in the first message segment sent ... used
    // for all subsequent segments sent in either direction". Unset until we send first (we pick
    // it) or receive first (we learn it).
    std::optional<std::uint64_t> connection_id;

    // transmit
    bool tx_started = false;
    std::uint32_t tx_next_message = 0;  // next Send/Write/Read Request number
    bool tx_send_open = false;          // a Send message (QN 0) has segments still to come
    std::uint32_t tx_send_number = 0;
    bool tx_response_open = false;  // a Read Response has segments still to come
    std::uint64_t tx_response_base_to = 0;
    std::deque<std::uint32_t> tx_read_requests;  // our Read Requests' numbers, not yet answered
    std::deque<std::uint32_t> rx_read_requests;  // received Read Requests' numbers, not yet answered

    // receive, in order
    bool rx_started = false;
    std::uint32_t rx_next_message = 0;
    bool rx_send_open = false;
    std::uint32_t rx_send_number = 0;
    std::uint32_t rx_send_next_offset = 0;
    bool rx_response_open = false;
    std::uint32_t rx_response_next_offset = 0;
};

// A ULPDU as a seed segment: the header (segment_length and clen are filled by rt::encode), the
// Control Data and where the payload lies in the ULPDU.
struct segment_parts {
    rt::header header;
    std::uint8_t control[40] = {};
    std::size_t control_len = 0;
    const std::uint8_t* payload = nullptr;
    std::size_t payload_len = 0;
};

// Classifies the ULPDU, numbers it from `s` (advancing the transmit state) and fills `out`.
// `s.connection_id` must be set. On a refusal `s` is unchanged.
refusal to_segment(session& s, const std::uint8_t* ulpdu, std::size_t len, segment_parts& out);

// Appends the whole segment of `parts` (rt::encode).
bool encode(const segment_parts& parts, std::vector<std::uint8_t>& out);

// The ULPDU a checked segment carries, rebuilt from its header and Control Data. False (with
// `why`) when the Control Data does not fit the type: its length, word 0's zero bytes, the DDP/RDMAP
// control bytes against the type, the zero words, the B/E bits against MO and L.
bool to_ulpdu(const rt::segment_view& seg, std::vector<std::uint8_t>& ulpdu, std::string* why);

// The in-order receive rules of the message sequence (§3.4, §4): a new Send/Write/Read Request
// message carries the next number, later segments of a message its number and the next Data
// Offset; a Read Response answers our oldest unanswered Read Request. Updates `s`; false with
// `why` on a violation. A Terminate (`terminate`: a Send segment carrying QN 2) may cut into an open
// Send: it is the last message of the stream (RFC 5040 §5.4), sent when the QP fails mid-message.
bool accept_in_order(session& s, const rt::header& h, std::size_t payload_len, std::string* why,
                     bool terminate = false);
// Whether a checked segment carries an RDMAP Terminate (a Send whose Control Data names QN 2).
bool carries_terminate(const rt::segment_view& seg);

// Out of order (§5 "Checking the message number ... only enhances the confidence"): whether the
// header's number could belong to a message that is still to come in order.
bool plausible_number(const session& s, const rt::header& h);

// Pseudo-random 64-bit values for Connection IDs and first message numbers (§3.4 "selected at
// random"; RECOMMENDED unguessable). Deterministic from the seed, so runs repeat exactly.
class id_source {
public:
    explicit id_source(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();

private:
    std::uint64_t state_;
};

}  // namespace rnic::proto::rdmatcp_map
