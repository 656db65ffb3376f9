// Reliable Reception's Message ACK and Remote Error Code (draft-dicecco-vitcp-01, seed 003 §3.2),
// as two plain state machines, one per direction of a connection; no SystemC. vitcp_framing
// (models/framing) puts them on the wire and reports what they decide to the RDMA engine;
// tests/seeds/vitcp_ack_test.cpp checks them. The choices, with the section, are repeated in
// docs/framings.md ("Reliable Reception: Message ACK and Remote Error Code").
//
// §3.2 Message ACK: "When a VI/TCP connection is supporting Reliable Reception level, the Message
// ACK field must be valid and will be used [to] determine when transmit Descriptors will be
// completed. RDMA Reads are completed upon receipt of a valid response." With no error, Message
// ACK is "the Message Number from the last VI Message received without error", and it "should not
// be indicated for messages until both message data has been written to host memory and the
// associated completion information has been written". With an error, Message ACK names "the
// message segment in error" and the VI Error Type of the Remote Error Code says which class of
// error (bit 0 RDMA Memory Protection, bit 1 VI Descriptor, bit 2 Unrecoverable Transport), which
// "is used to update the Status of the VI Descriptor's Control Segment". Message ACKs ride in any
// segment, or in a NOP when the end has nothing else to send (§3.2 Notes on NOP).
//
// What the platform reads into the draft where it is silent:
//  - Cumulative. Messages arrive in order (§2.2.2.2.3) and a reliable level breaks the connection
//    at its first error, so "the last message received without error" acknowledges every message
//    before it too; an error report for message N says that every message before N was placed.
//  - Which messages are counted: Send, RdmaWrite and RdmaReadRequest (the types that take a new
//    Message Number, §3.2). An RdmaReadResponse carries its request's number and completes the
//    Read at the requester (§3.2 "RDMA Reads are completed upon receipt of a valid response"); it
//    is never acknowledged. A NOP is "not a VI message". A Read Request is acknowledged once the
//    responder took it, so that the numbers after it can be.
//  - Nothing received yet: §3.2 has no value for it. Such an end sends Message ACK 0 with no error;
//    a sender takes a Message ACK only when it names one of its own messages that is sent and not
//    yet acknowledged, so the 0 is ignored except when the sender's unacknowledged numbers wrap
//    through 0 before the peer has received the first of them (at most the messages in flight out
//    of 2^32 numbers).
//  - Which VI Error Type an error is (from the Terminate RFC 5040 §7 would send for it): a tagged
//    buffer error (DDP) or RDMAP remote protection error is a Memory Protection Error; an
//    untagged buffer error (DDP: no receive descriptor, one too short, a bad queue or MSN) a
//    Descriptor Error; everything else (CRC, framing, the Transmit Error bit, a Read beyond the
//    window, a catastrophic or remote operation error) an Unrecoverable Transport Error (§3.6
//    option 2 names a CRC error so). The IS Error Code is 0 ("outside the scope").
//  - Several VI Error Type bits in one report: the descriptor takes the first of MPE, VDE, UTE.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

#include "proto/seeds/vitcp.h"

namespace rnic::proto::vitcp_ack {

namespace vt = proto::vitcp;

// §3.2 VI Error Type, one class per report (the sender's descriptor status follows from it).
enum class vi_error : std::uint8_t {
    none,
    memory_protection,  // MPE, bit 0: RDMA Memory Protection Error
    descriptor,         // VDE, bit 1: VI Descriptor Error
    transport,          // UTE, bit 2: Unrecoverable Transport Error
};
const char* to_string(vi_error e);

// The Remote Error Code field for `e` (IS Error Code 0).
vt::remote_error_code remote_error_code(vi_error e);
// The class a received Remote Error Code names (MPE before VDE before UTE; none when no bit is set,
// whatever the IS Error Code).
vi_error from_remote_error_code(const vt::remote_error_code& code);
// The class of the error the RDMA engine reports with a Terminate of this layer (RFC 5040 §4.8:
// 0 RDMAP, 1 DDP, 2 LLP) and error type.
vi_error from_terminate(std::uint8_t layer, std::uint8_t etype);

// Whether a segment of this type takes a Message Number of its own (and is acknowledged).
constexpr bool acknowledged(vt::segment_type t) {
    return t == vt::segment_type::send || t == vt::segment_type::rdma_write || t == vt::segment_type::read_request;
}

// What one segment carries in its Message ACK and Remote Error Code fields.
struct ack_fields {
    std::uint32_t message_ack = 0;
    vt::remote_error_code remote_error;
};

// The receiving end: what it acknowledges, and when.
class acknowledger {
public:
    // Message `number` was received without error; its data and completion are written at
    // `landed_ps` (simulated picoseconds). Calls come in message order.
    void placed(std::uint32_t number, std::uint64_t landed_ps);
    // Message `number` is in error (class `e`): from now on every segment reports it (§3.2).
    // Only the first error counts: the connection is breaking.
    void failed(std::uint32_t number, vi_error e);
    bool in_error() const { return error_ != vi_error::none; }

    // The fields of a segment sent at `now_ps`: the error, or the last message placed by then
    // whose predecessors are placed too, or 0 before any. Records them as carried.
    ack_fields carry(std::uint64_t now_ps);
    // Whether a segment sent at `now_ps` would tell the peer something the last one did not: a
    // NOP is owed (§3.2 Notes on NOP).
    bool owed(std::uint64_t now_ps) const;

private:
    // Advances the acknowledged prefix to the messages landed by `now_ps`.
    void settle(std::uint64_t now_ps);

    std::deque<std::pair<std::uint32_t, std::uint64_t>> landing_;  // placed, landing later
    bool any_ = false;                                             // a message was placed and landed
    std::uint32_t last_ = 0;                                       // the last of them
    vi_error error_ = vi_error::none;
    std::uint32_t error_number_ = 0;
    bool carried_any_ = false;   // a segment carried an acknowledgement of a placed message
    std::uint32_t carried_ = 0;  // the last one carried
    bool error_carried_ = false;
};

// The sending end: which of its messages the peer's Message ACKs acknowledge, in its own send
// stream's offsets (what the RDMA engine completes work requests by).
class tracker {
public:
    // A segment of message `number` was sent and its last byte ends before stream offset `end`.
    // Every segment of a message calls it (its end moves on); numbers come in sending order.
    void sent(std::uint32_t number, std::uint64_t end);

    struct verdict {
        bool placed = false;               // placed_through moved on
        std::uint64_t placed_through = 0;  // every message ending at or before it is placed
        vi_error error = vi_error::none;   // the peer reports this message in error
        bool error_named = false;          // the error names one of our unacknowledged messages
    };
    // The Message ACK and Remote Error Code of a segment from the peer.
    verdict on_fields(const ack_fields& f);

    std::uint64_t placed_through() const { return placed_through_; }
    std::size_t outstanding() const { return outstanding_.size(); }

private:
    // Whether `number` is one of the sent, unacknowledged messages.
    bool names_outstanding(std::uint32_t number) const;

    std::deque<std::pair<std::uint32_t, std::uint64_t>> outstanding_;  // number, end offset
    std::uint64_t placed_through_ = 0;
    bool failed_ = false;
};

}  // namespace rnic::proto::vitcp_ack
