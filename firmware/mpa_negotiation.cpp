#include "firmware/mpa_negotiation.h"

#include <algorithm>

#include "proto/ddp_rdmap.h"

namespace rnic::fw {

namespace mpa = proto::mpa;

namespace {
constexpr std::uint16_t kNoNeg = mpa::kIrdOrdNoNegotiation;

std::uint8_t offered_rtrs(const mpa::request_reply& f) {
    return static_cast<std::uint8_t>((f.zero_length_write_rtr ? rtr::kWrite : 0) |
                                     (f.zero_length_read_rtr ? rtr::kRead : 0));
}
std::string rtr_list(std::uint8_t types) {
    std::string s;
    if ((types & rtr::kWrite) != 0) s += "write";
    if ((types & rtr::kRead) != 0) s += s.empty() ? "read" : ", read";
    return s.empty() ? "none" : s;
}

std::string rtr_list(const mpa::request_reply& f) {
    std::string s = rtr_list(offered_rtrs(f));
    if (f.zero_length_send_rtr) s = s == "none" ? "send" : s + ", send";
    if (f.zero_length_read_rtr && f.ird == 0) s += " (read with IRD 0)";
    return s;
}
}  // namespace

const char* to_string(rtr_kind k) {
    switch (k) {
    case rtr_kind::none:
        return "none";
    case rtr_kind::write:
        return "zero-length RDMA Write";
    case rtr_kind::read:
        return "zero-length RDMA Read";
    }
    return "?";
}

mpa::request_reply make_request(const negotiation_policy& us) {
    mpa::request_reply req;
    req.request = true;
    req.marker = us.markers;
    req.crc = us.crc;
    req.revision = static_cast<std::uint8_t>(us.revision);
    if (us.revision >= 2) {
        req.enhanced = true;  // RFC 6581 §9: the IRD/ORD word leads the private data
        // §9.1: the initiator IRD is what it can hold, so at most the device's limit (0x3FFF,
        // "the ULP negotiates", passes as it is).
        req.ird = us.ird == kNoNeg ? kNoNeg : std::min(us.ird, us.max_ird);
        req.ord = us.ord == kNoNeg ? kNoNeg : std::min(us.ord, us.max_ord);
        if (us.peer_to_peer) {
            // §9.2: A = 1 and one flag per RTR option this side can send.
            req.peer_to_peer = true;
            req.zero_length_write_rtr = (us.rtr_types & rtr::kWrite) != 0;
            req.zero_length_read_rtr = (us.rtr_types & rtr::kRead) != 0;
        }
    }
    return req;
}

responder_outcome answer_request(const mpa::request_reply& req, const negotiation_policy& us) {
    responder_outcome out;
    mpa::request_reply& rep = out.reply;
    rep.request = false;
    rep.marker = us.markers;
    rep.crc = us.crc || req.crc;
    // RFC 6581 §10: answer an enhanced Request in kind, an unenhanced one unenhanced; a revision 1
    // device answers revision 1.
    rep.revision = static_cast<std::uint8_t>(std::min<int>(req.revision, us.revision));
    if (rep.revision < 2 || !req.enhanced) return out;
    rep.enhanced = true;
    // §9.1: our IRD serves the initiator's ORD, our ORD stays within the initiator's IRD; 0x3FFF
    // leaves the value to the ULP (answered with 0x3FFF, the local value unchanged).
    const std::uint16_t ird_cap = std::min(us.ird, us.max_ird), ord_cap = std::min(us.ord, us.max_ord);
    out.ird = req.ord == kNoNeg ? ird_cap : std::min<std::uint32_t>(req.ord, ird_cap);
    out.ord = req.ird == kNoNeg ? ord_cap : std::min<std::uint32_t>(req.ird, ord_cap);
    if (req.peer_to_peer) {
        // §9.2: match A; grant the initiator's options we support, else propose all of ours.
        rep.peer_to_peer = true;
        const std::uint8_t common = offered_rtrs(req) & us.rtr_types;
        const std::uint8_t granted = common != 0 ? common : us.rtr_types;
        rep.zero_length_write_rtr = (granted & rtr::kWrite) != 0;
        rep.zero_length_read_rtr = (granted & rtr::kRead) != 0;
        // §9.1: an initiator that will not read still needs one inbound Read for a Read RTR.
        if (rep.zero_length_read_rtr && out.ird == 0 && us.max_ird > 0) out.ird = 1;
        out.expect_rtr = true;
    }
    rep.ird = req.ord == kNoNeg ? kNoNeg : static_cast<std::uint16_t>(out.ird);
    rep.ord = req.ird == kNoNeg ? kNoNeg : static_cast<std::uint16_t>(out.ord);
    return out;
}

initiator_outcome conclude_reply(const mpa::request_reply& sent, const mpa::request_reply& reply,
                                 const negotiation_policy& us) {
    initiator_outcome out;
    auto fail = [&out](std::uint8_t code, std::string why) {
        out.ok = false;
        out.terminate_code = code;
        out.why = std::move(why);
        return out;
    };
    if (sent.enhanced && reply.enhanced) {
        // §9.1: our IRD at least the responder's ORD, our ORD at most its IRD; 0x3FFF: unchanged.
        out.ord = std::min(us.ord, us.max_ord);
        if (reply.ird != kNoNeg) out.ord = std::min<std::uint32_t>(out.ord, reply.ird);
        if (reply.ord == kNoNeg) {
            out.ird = std::min(us.ird, us.max_ird);
        } else if (reply.ord > us.max_ird) {
            return fail(proto::ddp::term::kMpaInsufficientIrd, "the responder's ORD " + std::to_string(reply.ord) +
                                                                   " exceeds this device's IRD limit " +
                                                                   std::to_string(us.max_ird));
        } else {
            out.ird = reply.ord;
        }
    }
    if (!sent.peer_to_peer && reply.enhanced && reply.peer_to_peer) {
        // §9.2: "The responder MUST set Control Flag A to 0 if Control Flag A is 0 in the request."
        // Our first ULP message serves as its RTR anyway, so the stream works; say so.
        out.warning = "the Reply sets A (peer-to-peer) though the Request did not; no RTR is sent";
    }
    if (sent.peer_to_peer) {
        if (!reply.enhanced || !reply.peer_to_peer) {
            return fail(proto::ddp::term::kMpaNoMatchingRtr,
                        "the Reply does not take the peer-to-peer model (no enhanced word with A = 1)");
        }
        // §9.2: send one of the RTRs the responder accepts; a Write needs no answer, so it comes first.
        const std::uint8_t usable = offered_rtrs(reply) & us.rtr_types;
        if ((usable & rtr::kWrite) != 0) {
            out.rtr = rtr_kind::write;
        } else if ((usable & rtr::kRead) != 0 && reply.ird != 0) {
            out.rtr = rtr_kind::read;
        } else {
            return fail(proto::ddp::term::kMpaNoMatchingRtr, "no RTR option in common: the responder accepts " +
                                                                 rtr_list(reply) + ", this device sends " +
                                                                 rtr_list(us.rtr_types));
        }
    }
    out.ok = true;
    return out;
}

}  // namespace rnic::fw
