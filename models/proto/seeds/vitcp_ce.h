// VI/TCP connection establishment (draft-dicecco-vitcp-01, seed 003 §4): the active (§4.2) and
// passive (§4.3) state machines as plain classes, no SystemC and no HAL, so the firmware
// (firmware/vitcp_connection.*) drives them and tests/seeds/vitcp_ce_test.cpp checks them alone.
// They produce the CE segments to send (bytes, via proto::vitcp::encode) and consume the peer's
// from the start-up bytes; the TCP connection itself (open, close) is the caller's.
//
// Choices where the draft is open (repeated in docs/framings.md):
//  - Discriminators (§2.2.2.2.1, §3.3): the platform's accept is per TCP port, so the Called
//    Discriminator is the 2-byte port the active side connects to (big-endian) and the Calling
//    Discriminator its own local port. A passive side matches the Called Discriminator against
//    the port it listens on; anything else is a ConnectNoMatch.
//  - Refusal reason: a ConnectReject carries it in the IS Error Code of its Remote Error Code
//    (§3.2: "Implementation Specific ... outside the scope of this document"), values below.
//  - An invalid ConnectRequest (§4.3 names no event for one: its Incoming state knows only a
//    ConnectRequest, a timeout and the TCP close) is refused like one that cannot be met: a
//    version-1 ConnectReject naming the reason (an unsupported Version, a malformed option, any
//    other rule of §3.2/§3.3), then the TCP connection closes. A peer speaking another version
//    learns at least that this end does not. Unknown options are no reason: "A receiver MUST
//    ignore any unsupported or unknown options" (§3.3).
//  - CE segments carry Message Number 0; they are not part of the data message sequence, whose
//    first number the framing picks (§3.2 "The initial Message Number may be varied").
//  - A ConnectReject/ConnectNoMatch carries a trailer CRC when this end proposed the CRC (§3.6
//    MAY; the receiver sees it from Segment Length 28).
//  - The RDMA Read Window agreed is the lesser of the two (proto::vitcp::make_accept); 0 is a
//    legal agreement (no RDMA Reads on the connection).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/seeds/vitcp.h"

namespace rnic::proto::vitcp_ce {

namespace vt = proto::vitcp;

// §3.3 Calling Attributes bits 0-2: one of them.
enum class reliability : std::uint8_t { unreliable, reliable_delivery, reliable_reception };
const char* to_string(reliability r);
vt::attributes attributes_for(reliability r, bool peer_to_peer);
std::optional<reliability> reliability_of(const vt::attributes& a);

// Why a connection was refused: the IS Error Code of the ConnectReject (implementation specific).
enum class refusal : std::uint8_t {
    none = 0,
    consumer_rejected = 1,      // the VI consumer said no (the driver's reject command)
    reliability_mismatch = 2,   // §3.3: "The reliability level of the two ends ... must match"
    peer_to_peer_mismatch = 3,  // §3.3: "the peer-to-peer bit must match"
    bad_request = 4,            // the ConnectRequest broke a rule of §3.3/§3.6
    unsupported_version = 5,    // §3.2 Version: this end speaks version 1 only
    bad_option = 6,             // §3.3 Options: a malformed option (length), or no End of Option List before a CRC
};
constexpr std::uint8_t kMaxRefusal = 6;
const char* to_string(refusal r);

// What this end proposes in its CE header.
struct proposal {
    reliability level = reliability::reliable_delivery;
    std::uint32_t mtu = 1u << 20;              // VI MTU: the largest transfer of one descriptor (§2.2.1)
    std::uint16_t rdma_read_window = 16;       // outstanding RDMA Reads this end can hold (§2.2.2.2.6)
    bool crc = false;                          // CRC option (§3.6)
    bool urgent_marker = false;                // Urgent Marker option (§3.7)
    bool peer_to_peer = false;                 // P2P bit (§3.3)
    bool rdma_write = true, rdma_read = true;  // RDMA Write/Read Enable
};

// What a connection runs with once Connected.
struct agreement {
    reliability level = reliability::reliable_delivery;
    std::uint32_t mtu = 0;
    std::uint16_t rdma_read_window = 0;
    bool crc = false;                // every later segment carries the trailer (§3.5)
    bool may_mark_urgent = false;    // the peer sent the Urgent Marker option: we may mark (§3.7)
    bool peer_marks_urgent = false;  // we sent it: the peer may mark what we receive
};

std::vector<std::uint8_t> port_discriminator(std::uint16_t port);

// §4.2. Disconnected -> (VipConnectRequest: open TCP) Connecting -> (TCP established: send
// ConnectRequest) Pending Accept -> (ConnectAccept) Connected; Reject, NoMatch, a bad answer, a
// timeout or a TCP failure go back to Disconnected (the caller closes TCP).
class active {
public:
    enum class state : std::uint8_t { disconnected, connecting, pending_accept, connected };
    enum class result : std::uint8_t {
        need_more,       // the answer is not whole yet
        connected,       // agreement() holds what was negotiated
        rejected,        // ConnectReject; reason() from its IS Error Code
        no_match,        // ConnectNoMatch: nobody listens with that discriminator
        protocol_error,  // not a valid answer (why())
    };

    active(const proposal& us, std::uint16_t local_port, std::uint16_t remote_port);

    void connect_request();  // Disconnected -> Connecting
    // Connecting -> Pending Accept: the ConnectRequest segment to send.
    std::vector<std::uint8_t> tcp_established();
    // Test mode (rnic.vitcp.raw_connect_requests): Connecting -> Pending Accept with `request`, the
    // ConnectRequest bytes the caller built (perhaps breaking a rule, to see the peer refuse it);
    // returned as they are. The answer is judged against what of them decodes.
    std::vector<std::uint8_t> tcp_established(std::vector<std::uint8_t> request);
    // Pending Accept: the start-up bytes received so far. On anything but need_more, consumed()
    // is the answer's length (further bytes are the peer's first data segments).
    result on_bytes(const std::uint8_t* data, std::size_t len);
    void tcp_failed_or_closed() { state_ = state::disconnected; }
    void timeout() { state_ = state::disconnected; }

    state current() const { return state_; }
    const agreement& agreed() const { return agreed_; }
    refusal reason() const { return reason_; }
    const std::string& why() const { return why_; }
    std::size_t consumed() const { return consumed_; }

private:
    proposal us_;
    std::uint16_t local_port_, remote_port_;
    state state_ = state::disconnected;
    vt::ce_header sent_;
    agreement agreed_;
    refusal reason_ = refusal::none;
    std::string why_;
    std::size_t consumed_ = 0;
};

// §4.3. Listening -> (TCP accepted) Incoming -> (ConnectRequest) Matching -> (discriminator
// match) Pending Accept -> (VipConnectAccept: ConnectAccept) Connected; no match: ConnectNoMatch,
// VipConnectReject or attributes that cannot match: ConnectReject; a timeout or TCP close: out.
class passive {
public:
    enum class state : std::uint8_t { listening, incoming, matching, pending_accept, connected, disconnected };
    // invalid: a whole CE segment that is no valid ConnectRequest; send refuse() (a ConnectReject
    // with reason()) and close TCP.
    enum class result : std::uint8_t { need_more, request, invalid, protocol_error };

    explicit passive(std::uint16_t listen_port) : port_(listen_port) {}

    void tcp_accepted();  // Listening -> Incoming
    // Incoming: parses the ConnectRequest from the start-up bytes; on `request` the state is
    // Pending Accept (discriminator matched) or Matching (it did not: send no_match()).
    result on_bytes(const std::uint8_t* data, std::size_t len);
    bool discriminator_matches() const { return matched_; }
    // Matching -> Disconnected: the ConnectNoMatch to send.
    std::vector<std::uint8_t> no_match();
    // Pending Accept: the answer to send, a ConnectAccept (-> Connected) or, when the request
    // cannot be met (reliability level, P2P bit), a ConnectReject (-> Disconnected, reason()).
    std::vector<std::uint8_t> accept(const proposal& us);
    // Pending Accept -> Disconnected: the ConnectReject to send (VipConnectReject).
    std::vector<std::uint8_t> reject(refusal why = refusal::consumer_rejected);
    // After on_bytes said invalid: the ConnectReject naming reason() to send.
    std::vector<std::uint8_t> refuse();
    void timeout_or_tcp_closed() { state_ = state::disconnected; }

    state current() const { return state_; }
    const vt::ce_header& request() const { return request_; }
    const agreement& agreed() const { return agreed_; }
    refusal reason() const { return reason_; }
    const std::string& why() const { return why_; }
    std::size_t consumed() const { return consumed_; }

private:
    std::vector<std::uint8_t> answer(vt::segment_type t, refusal why);

    std::uint16_t port_;
    state state_ = state::listening;
    vt::ce_header request_;
    bool matched_ = false;
    bool invalid_ = false;  // on_bytes found an invalid ConnectRequest: refuse() may answer it
    agreement agreed_;
    refusal reason_ = refusal::none;
    std::string why_;
    std::size_t consumed_ = 0;
};

// Start-up bytes: the length of the CE segment at their start once its Segment Length is in
// (0 before the first 4 bytes arrive); a segment is whole when the bytes reach it.
std::size_t ce_segment_length(const std::uint8_t* data, std::size_t len);

}  // namespace rnic::proto::vitcp_ce
