// The MPA Request/Reply negotiation rules of RFC 5044 §7.1 and RFC 6581 §9 as pure functions: what
// an initiator asks for, how a responder answers, and what the initiator concludes from the Reply
// (the stream's IRD/ORD, the ready-to-receive message to send, or the Terminate to send instead).
// No SystemC and no HAL calls (only its rtr types), so the rules are unit-tested on their own (tests/proto).
#pragma once

#include <cstdint>
#include <string>

#include "cp/firmware_hal.h"
#include "proto/mpa.h"

namespace rnic::fw {

// rtr (the RTR bit set) and rtr_kind are the HAL's: the firmware tells the control processor which
// RTR a stream starts with (cp/firmware_hal.h).

// This side's wishes and abilities for one connection.
struct negotiation_policy {
    int revision = 1;                                   // 1 (RFC 5044) or 2 (RFC 6581)
    bool markers = false;                               // M: we want markers in what we receive
    bool crc = true;                                    // C
    std::uint16_t ird = 16, ord = 16;                   // wished (0x3FFF: no automatic negotiation)
    std::uint16_t max_ird = 16, max_ord = 16;           // the device's limits
    bool peer_to_peer = false;                          // initiator: ask for an explicit RTR (flag A)
    std::uint8_t rtr_types = rtr::kWrite | rtr::kRead;  // RTR messages this device can send and accept
};

// The initiator's MPA Request (RFC 5044 §7.1.1; RFC 6581 §9 when revision 2).
proto::mpa::request_reply make_request(const negotiation_policy& us);

struct responder_outcome {
    proto::mpa::request_reply reply;  // the Reply to send (reject and private data are the caller's)
    std::uint32_t ird = 0, ord = 0;   // the stream's limits at this side (when the Reply is enhanced)
    bool expect_rtr = false;          // peer-to-peer: the initiator's RTR is the first FPDU
};
// The responder's answer to a valid Request (RFC 6581 §9.1 and §9.2; §10: answer in kind).
responder_outcome answer_request(const proto::mpa::request_reply& req, const negotiation_policy& us);

struct initiator_outcome {
    bool ok = false;
    // !ok: the LLP/MPA error code of the Terminate to send (RFC 6581 §8: 6 insufficient IRD,
    // 7 no matching RTR option) and why, for the log.
    std::uint8_t terminate_code = 0;
    std::string why;
    std::uint32_t ird = 0, ord = 0;  // the stream's limits at this side (when both frames were enhanced)
    rtr_kind rtr = rtr_kind::none;
    std::string warning;  // ok, but the Reply broke a rule that did not matter here
};
// What the initiator makes of an accepting Reply to its Request `sent`.
initiator_outcome conclude_reply(const proto::mpa::request_reply& sent, const proto::mpa::request_reply& reply,
                                 const negotiation_policy& us);

const char* to_string(rtr_kind k);

}  // namespace rnic::fw
