// DDP/RDMAP segments (what the RDMA engine emits and expects) as VI/TCP segments
// (draft-dicecco-vitcp-01, seed 003) and back, with the per-connection state VI/TCP's header needs
// (§3.2 Message Number, Data Offset; the outstanding RDMA Reads of §2.2.2.2.6). Plain C++, no
// SystemC; vitcp_framing puts it behind the framing interface. Choices are repeated, with the
// section, in docs/framings.md.
//
// Which VI segment a ULPDU becomes:
//   untagged QN 0, RDMAP Send             -> Send: Data Offset = MO, End of Message = L
//   tagged, RDMAP RDMA Write              -> RdmaWrite, one VI message per DDP segment: RDMA
//                                            Address = TO, Memory Handle = STag, RDMA Length =
//                                            its payload (§3.4's total is not known when one DDP
//                                            segment is framed), Data Offset 0, EOM set
//   untagged QN 1, RDMA Read Request      -> RdmaReadRequest: Address = source TO, Handle = source
//                                            STag, Length = Read size; the sink STag/TO stay here
//   tagged, RDMA Read Response            -> RdmaReadResponse: Message Number of the Request it
//                                            answers (§3.2), Data Offset = TO - the response's
//                                            first TO, EOM = L, no RDMA header
//   untagged QN 0, RFC 7306 Immediate Data -> a zero-length RdmaWrite with Immediate Data Valid and
//   (RDMA Write with Immediate sends     the value in Immediate Data (§3.2; VI's RDMA Write with
//    the Write, then this message)       immediate data), when the value fits VI's 32 bits
//   anything else (Send with Invalidate or Solicited Event, Terminate, a 64-bit Immediate Data,
//   atomics) is refused: VI/TCP has no field for it.
// Receive rebuilds the DDP/RDMAP segment: Send MSNs counted from 1 per message (RFC 5041 §5.1),
// Read Request MSNs likewise on QN 1 with sink STag 0 and sink TO 0 (the responder's Read Response
// carries them back, and its framing takes the Data Offset from them), a Read Response's STag and
// TO from the sink of the Read Request this end sent.
//
// Messages (§2.2.2.2.3): a message's segments go out before the next message starts, except that
// Read Response segments may come between segments of any other message (but not of another Read
// Response). Message numbers: one sequence per direction for Send, RdmaWrite and
// RdmaReadRequest, starting at a value the caller picks (§3.2 "may be varied"); the receiver
// learns the first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "proto/seeds/vitcp.h"
#include "proto/seeds/vitcp_ack.h"
#include "proto/seeds/vitcp_errors.h"

namespace rnic::proto::vitcp_map {

namespace vt = proto::vitcp;

// The most a VI segment adds to its ULPDU: RdmaWrite's 24 + 16 - 14 = 26, the trailer 4.
constexpr std::size_t kMaxAdded = 26 + vt::kTrailerSize;
// Wire bytes of the VI segment carrying `ulpdu` (its DDP control byte, RDMAP opcode and length).
std::size_t wire_length(const std::uint8_t* ulpdu, std::size_t len, bool crc);

enum class refusal : std::uint8_t {
    none,
    truncated,         // shorter than its DDP header
    unsupported,       // an RDMAP message VI/TCP has no segment type or field for
    unknown_queue,     // untagged queue other than 0 and 1
    bad_read_request,  // not exactly one 28-byte Read Request header at MO 0
    no_read_request,   // a Read Response with no received Read Request to answer
    too_long,          // Segment Length would exceed 16 bits
};
const char* to_string(refusal r);

struct pending_read {
    std::uint32_t number = 0;     // the RdmaReadRequest's Message Number
    std::uint32_t sink_stag = 0;  // where its response goes (kept here, not on the wire)
    std::uint64_t sink_to = 0;
};

struct session {
    bool crc = false;                    // negotiated in the CE exchange (§3.5)
    std::uint16_t read_window = 0xFFFF;  // negotiated RDMA Read Window (§2.2.2.2.6)
    // negotiated in the CE exchange (§3.3); decides which errors the connection survives
    // (vitcp_errors.h)
    vitcp_ce::reliability level = vitcp_ce::reliability::reliable_delivery;

    // transmit
    std::uint32_t tx_next_message = 0;
    bool tx_send_open = false;
    std::uint32_t tx_send_number = 0;
    bool tx_response_open = false;
    std::uint64_t tx_response_base_to = 0;
    std::deque<pending_read> tx_read_requests;   // ours, not yet answered
    std::deque<std::uint32_t> rx_read_requests;  // the peer's, not yet answered

    // receive, in order
    bool rx_started = false;
    std::uint32_t rx_next_message = 0;
    bool rx_open = false;  // a Send is open (other messages are one segment here)
    std::uint32_t rx_open_number = 0;
    std::uint32_t rx_next_offset = 0;
    bool rx_response_open = false;
    std::uint32_t rx_response_next_offset = 0;
    std::uint32_t rx_send_msn = 1, rx_read_msn = 1;  // DDP MSNs rebuilt per queue

    // Reliable Reception (§3.2 Message ACK and Remote Error Code, vitcp_ack.h): what this end
    // acknowledges of the peer's messages, and which of ours the peer's acknowledgements complete.
    bool acknowledges = false;
    vitcp_ack::acknowledger acks;
    vitcp_ack::tracker sent_messages;
    // The message whose segment is being handed on (set around the delivery), and the one the
    // in-order stream failed at: where an error found meanwhile is reported (§3.2 "the Message
    // Number of the message segment in error").
    std::optional<std::uint32_t> rx_delivering;
    std::optional<std::uint32_t> rx_failed;
};

// The Message Number the next in-order segment of a new or open Send, RdmaWrite or
// RdmaReadRequest must carry: the open message's, else the next one (0 before the first).
std::uint32_t expected_message(const session& s);
// The number of the message a Reliable Reception error report names (§3.2): the message being
// delivered, else the one the stream failed at, else the expected one.
std::uint32_t message_in_error(const session& s);
// §3.2 Notes on NOP: a NOP carrying `fields`, with "the message number of the last (non RDMA read
// response) message sent" and the trailer per s.crc.
vt::segment make_nop(const session& s, const vitcp_ack::ack_fields& fields);

// Classifies the ULPDU, numbers it from `s` (advancing the transmit state) and fills `out` (a
// whole VI segment, trailer per s.crc). On a refusal `s` is unchanged.
refusal to_segment(session& s, const std::uint8_t* ulpdu, std::size_t len, vt::segment& out);

// In-order receive of a checked segment: the message rules above (next number, Data Offset
// continuity, one message at a time but for Read Responses, Read Responses answering our oldest
// Read Request, at most read_window Read Requests outstanding, the Transmit Error bit) and the
// DDP/RDMAP segment it carries. A Transmit Error bit the connection survives (Unreliable
// Delivery, vitcp_errors.h) is accepted: the caller reports the message in error. NOP carries nothing: true with `ulpdu` empty. An RdmaWrite with
// Immediate Data Valid on its last segment also carries an RFC 7306 Immediate Data message, put in
// `immediate` (empty otherwise; a caller that passes nullptr gets only the Write). False with `why`.
bool accept_in_order(session& s, const vt::segment_view& seg, std::vector<std::uint8_t>& ulpdu, std::string* why,
                     std::vector<std::uint8_t>* immediate = nullptr);

// Out of order (the Urgent Marker receive path, §3.7): what a checked segment found at a located
// VI segment start lets the receiver do before the bytes ahead of it have arrived.
enum class ooo_verdict : std::uint8_t {
    place,        // an RdmaWrite or RdmaReadResponse: its DDP segment is in `ulpdu`, placeable now
    wait,         // a good segment whose effect depends on the messages before it (Send, Read
                  // Request, a Write carrying Immediate Data, NOP): left to the in-order path
    implausible,  // a number that no message of this connection can have: not a segment start
};
// Rebuilds the tagged DDP segment of an RdmaWrite (STag = Memory Handle, TO = Address + Data
// Offset) or an RdmaReadResponse (the sink of the Read Request with its number, TO = sink TO +
// Data Offset), as accept_in_order would, without changing `s`. The extra checks on the candidate:
// a Write's Message Number still to come within 2^16 messages of the next in-order one, a Read
// Response's number one of our outstanding Read Requests, no Transmit Error bit (§3.2).
ooo_verdict accept_out_of_order(const session& s, const vt::segment_view& seg, std::vector<std::uint8_t>& ulpdu,
                                std::string* why);
const char* to_string(ooo_verdict v);

// §2.2.2.2.5: a segment whose original data cannot be sent again keeps its size and headers,
// its payload is zeroed and the Transmit Error bit set (the trailer, when `crc`, recomputed).
// Empty when `segment` is not a whole VI segment.
std::vector<std::uint8_t> pad_for_retransmission(const std::uint8_t* segment, std::size_t len, bool crc);

}  // namespace rnic::proto::vitcp_map
