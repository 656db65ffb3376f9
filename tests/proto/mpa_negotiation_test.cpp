// The firmware's MPA negotiation rules (firmware/mpa_negotiation.h) against RFC 6581 §9: IRD/ORD,
// the peer-to-peer model and its ready-to-receive options, and the Terminates a failed
// negotiation needs. Pure functions: no SystemC.
#include <gtest/gtest.h>

#include "firmware/mpa_negotiation.h"
#include "proto/ddp_rdmap.h"

namespace rnic::fw {
namespace {

namespace mpa = proto::mpa;
namespace term = proto::ddp::term;

negotiation_policy rev2(bool p2p = false, std::uint8_t rtrs = rtr::kWrite | rtr::kRead) {
    negotiation_policy p;
    p.revision = 2;
    p.peer_to_peer = p2p;
    p.rtr_types = rtrs;
    return p;
}

TEST(MpaNegotiation, RevisionOneRequestCarriesNoEnhancedWordEvenIfPeerToPeerIsAsked) {
    negotiation_policy p;
    p.peer_to_peer = true;  // the firmware refuses this combination earlier; the rules stay safe
    const mpa::request_reply req = make_request(p);
    EXPECT_EQ(req.revision, 1);
    EXPECT_FALSE(req.enhanced);
    EXPECT_FALSE(req.peer_to_peer);
}

TEST(MpaNegotiation, PeerToPeerRequestOffersEveryRtrThisDeviceCanSendButNeverTheSendRtr) {
    const mpa::request_reply both = make_request(rev2(true));
    EXPECT_TRUE(both.enhanced);
    EXPECT_TRUE(both.peer_to_peer);
    EXPECT_TRUE(both.zero_length_write_rtr);
    EXPECT_TRUE(both.zero_length_read_rtr);
    EXPECT_FALSE(both.zero_length_send_rtr);
    const mpa::request_reply read_only = make_request(rev2(true, rtr::kRead));
    EXPECT_FALSE(read_only.zero_length_write_rtr);
    EXPECT_TRUE(read_only.zero_length_read_rtr);
    // Client-server: A = 0 and so B, C, D = 0 (§9.2).
    const mpa::request_reply cs = make_request(rev2(false));
    EXPECT_TRUE(cs.enhanced);
    EXPECT_FALSE(cs.peer_to_peer || cs.zero_length_write_rtr || cs.zero_length_read_rtr);
    // The request survives the wire encoding with its flags.
    const auto bytes = mpa::encode(both);
    const auto back = mpa::decode(bytes.data(), bytes.size(), nullptr);
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->peer_to_peer && back->zero_length_write_rtr && back->zero_length_read_rtr);
    EXPECT_EQ(back->ird, 16);
}

TEST(MpaNegotiation, RequestOffersNoMoreThanTheDeviceCanHold) {
    // §9.1: the initiator IRD is "the maximum number of simultaneous inbound RDMA Read Requests
    // that the initiator can support"; a wish above the device's limit is cut to it.
    negotiation_policy us = rev2();
    us.ird = 16;
    us.max_ird = 8;
    us.ord = 16;
    us.max_ord = 4;
    const mpa::request_reply req = make_request(us);
    EXPECT_EQ(req.ird, 8);
    EXPECT_EQ(req.ord, 4);
    // A responder that takes the whole offer leaves the initiator within its limits.
    const responder_outcome r = answer_request(req, rev2());
    const initiator_outcome i = conclude_reply(req, r.reply, us);
    ASSERT_TRUE(i.ok) << i.why;
    EXPECT_EQ(i.ird, 8u);
    EXPECT_EQ(i.ord, 4u);
    // "No automatic negotiation" passes as it is.
    us.ird = mpa::kIrdOrdNoNegotiation;
    EXPECT_EQ(make_request(us).ird, mpa::kIrdOrdNoNegotiation);
}

TEST(MpaNegotiation, ResponderMatchesTheInitiatorsOrdWithItsIrdAndStaysWithinItsIrd) {
    mpa::request_reply req = make_request(rev2());
    req.ird = 4;  // the initiator takes at most 4 inbound Reads
    req.ord = 8;  // and wants to issue 8
    negotiation_policy us = rev2();
    us.ird = 16;
    us.ord = 16;
    const responder_outcome out = answer_request(req, us);
    EXPECT_TRUE(out.reply.enhanced);
    EXPECT_EQ(out.ird, 8u);  // serves the initiator's ORD
    EXPECT_EQ(out.ord, 4u);  // responder ORD <= initiator IRD
    EXPECT_EQ(out.reply.ird, 8);
    EXPECT_EQ(out.reply.ord, 4);
    EXPECT_FALSE(out.expect_rtr);
    // The device limit caps what it offers.
    us.max_ird = 2;
    EXPECT_EQ(answer_request(req, us).reply.ird, 2);
}

TEST(MpaNegotiation, AllOnesLeavesTheValueToTheUlpOnBothSides) {
    mpa::request_reply req = make_request(rev2());
    req.ird = mpa::kIrdOrdNoNegotiation;
    req.ord = mpa::kIrdOrdNoNegotiation;
    negotiation_policy us = rev2();
    us.ird = 5;
    us.ord = 6;
    us.max_ird = us.max_ord = 16;
    const responder_outcome r = answer_request(req, us);
    // §9.1: answered with 0x3FFF, the local values unchanged.
    EXPECT_EQ(r.reply.ird, mpa::kIrdOrdNoNegotiation);
    EXPECT_EQ(r.reply.ord, mpa::kIrdOrdNoNegotiation);
    EXPECT_EQ(r.ird, 5u);
    EXPECT_EQ(r.ord, 6u);
    // The initiator keeps its own values when the Reply says 0x3FFF.
    negotiation_policy init = rev2();
    init.ird = 3;
    init.ord = 7;
    const initiator_outcome i = conclude_reply(make_request(init), r.reply, init);
    ASSERT_TRUE(i.ok) << i.why;
    EXPECT_EQ(i.ird, 3u);
    EXPECT_EQ(i.ord, 7u);
}

TEST(MpaNegotiation, UnenhancedRequestGetsAnUnenhancedReplyAndNothingNegotiated) {
    negotiation_policy v1;
    const responder_outcome r = answer_request(make_request(v1), rev2());
    EXPECT_EQ(r.reply.revision, 1);
    EXPECT_FALSE(r.reply.enhanced);
    EXPECT_EQ(r.ird, 0u);
    EXPECT_EQ(r.ord, 0u);
    // A revision 1 responder answers a revision 2 Request with revision 1.
    const responder_outcome old = answer_request(make_request(rev2(true)), v1);
    EXPECT_EQ(old.reply.revision, 1);
    EXPECT_FALSE(old.reply.enhanced);
    EXPECT_FALSE(old.expect_rtr);
}

TEST(MpaNegotiation, ResponderGrantsTheCommonRtrOptionsOrProposesItsOwn) {
    // Both offered, both supported: both granted; the initiator then prefers the Write.
    const mpa::request_reply req = make_request(rev2(true));
    const responder_outcome both = answer_request(req, rev2());
    EXPECT_TRUE(both.reply.peer_to_peer);
    EXPECT_TRUE(both.reply.zero_length_write_rtr && both.reply.zero_length_read_rtr);
    EXPECT_TRUE(both.expect_rtr);
    const initiator_outcome i = conclude_reply(req, both.reply, rev2(true));
    ASSERT_TRUE(i.ok);
    EXPECT_EQ(i.rtr, rtr_kind::write);
    // Only the Read in common.
    const responder_outcome read = answer_request(req, rev2(false, rtr::kRead));
    EXPECT_FALSE(read.reply.zero_length_write_rtr);
    EXPECT_TRUE(read.reply.zero_length_read_rtr);
    const initiator_outcome ir = conclude_reply(req, read.reply, rev2(true));
    ASSERT_TRUE(ir.ok);
    EXPECT_EQ(ir.rtr, rtr_kind::read);
    // Nothing in common: the responder proposes what it supports (§9.2 "MUST set at least one").
    const mpa::request_reply write_only = make_request(rev2(true, rtr::kWrite));
    const responder_outcome prop = answer_request(write_only, rev2(false, rtr::kRead));
    EXPECT_TRUE(prop.reply.peer_to_peer);
    EXPECT_FALSE(prop.reply.zero_length_write_rtr);
    EXPECT_TRUE(prop.reply.zero_length_read_rtr);
}

TEST(MpaNegotiation, ReadRtrGetsAnInboundReadEvenWhenTheInitiatorWantsNoReads) {
    negotiation_policy init = rev2(true, rtr::kRead);
    init.ord = 0;  // the application will not read
    const responder_outcome r = answer_request(make_request(init), rev2());
    EXPECT_TRUE(r.reply.zero_length_read_rtr);
    EXPECT_EQ(r.ird, 1u);  // §9.1's example: IRD raised to 1 for the Read RTR
    EXPECT_EQ(r.reply.ird, 1);
    // The initiator keeps its ORD of 0 (at most the responder's IRD, and what it asked for) and
    // still sends the Read RTR, which the responder's IRD of 1 takes.
    const initiator_outcome i = conclude_reply(make_request(init), r.reply, init);
    ASSERT_TRUE(i.ok) << i.why;
    EXPECT_EQ(i.ord, 0u);
    EXPECT_EQ(i.rtr, rtr_kind::read);
}

TEST(MpaNegotiation, ReplyWithPeerToPeerToAClientServerRequestWorksButIsReported) {
    const mpa::request_reply req = make_request(rev2(false));
    mpa::request_reply rep = answer_request(req, rev2()).reply;
    ASSERT_FALSE(rep.peer_to_peer);
    EXPECT_TRUE(conclude_reply(req, rep, rev2()).warning.empty());
    rep.peer_to_peer = true;  // violates §9.2 "MUST set Control Flag A to 0 if ... 0 in the request"
    rep.zero_length_write_rtr = true;
    const initiator_outcome i = conclude_reply(req, rep, rev2());
    EXPECT_TRUE(i.ok);
    EXPECT_EQ(i.rtr, rtr_kind::none);
    EXPECT_NE(i.warning.find("A (peer-to-peer)"), std::string::npos) << i.warning;
}

TEST(MpaNegotiation, NoMatchingRtrIsTerminateCodeSeven) {
    const mpa::request_reply write_only = make_request(rev2(true, rtr::kWrite));
    const responder_outcome prop = answer_request(write_only, rev2(false, rtr::kRead));
    const initiator_outcome i = conclude_reply(write_only, prop.reply, rev2(true, rtr::kWrite));
    EXPECT_FALSE(i.ok);
    EXPECT_EQ(i.terminate_code, term::kMpaNoMatchingRtr);
    EXPECT_EQ(i.terminate_code, 7);
    EXPECT_NE(i.why.find("no RTR option in common"), std::string::npos) << i.why;
    EXPECT_NE(i.why.find("accepts read"), std::string::npos) << i.why;
}

TEST(MpaNegotiation, ReplyThatDropsThePeerToPeerModelIsTerminateCodeSeven) {
    const mpa::request_reply req = make_request(rev2(true));
    mpa::request_reply rep = answer_request(req, rev2()).reply;
    rep.peer_to_peer = false;  // violates §9.2 "MUST set Control Flag A to 1"
    const initiator_outcome a = conclude_reply(req, rep, rev2(true));
    EXPECT_FALSE(a.ok);
    EXPECT_EQ(a.terminate_code, term::kMpaNoMatchingRtr);
    // An unenhanced Reply cannot carry the model either.
    mpa::request_reply plain = rep;
    plain.enhanced = false;
    plain.revision = 1;
    EXPECT_EQ(conclude_reply(req, plain, rev2(true)).terminate_code, term::kMpaNoMatchingRtr);
    // Read offered with IRD 0 cannot take the Read RTR.
    mpa::request_reply zero = answer_request(req, rev2(false, rtr::kRead)).reply;
    zero.ird = 0;
    EXPECT_EQ(conclude_reply(req, zero, rev2(true)).terminate_code, term::kMpaNoMatchingRtr);
}

TEST(MpaNegotiation, ResponderOrdAboveTheDevicesIrdLimitIsTerminateCodeSix) {
    negotiation_policy init = rev2();
    init.ird = 4;
    init.max_ird = 4;
    const mpa::request_reply req = make_request(init);
    mpa::request_reply rep = answer_request(req, rev2()).reply;
    EXPECT_EQ(rep.ord, 4);  // a correct responder stays within our IRD
    ASSERT_TRUE(conclude_reply(req, rep, init).ok);
    rep.ord = 9;  // one that does not
    const initiator_outcome i = conclude_reply(req, rep, init);
    EXPECT_FALSE(i.ok);
    EXPECT_EQ(i.terminate_code, term::kMpaInsufficientIrd);
    EXPECT_EQ(i.terminate_code, 6);
    EXPECT_NE(i.why.find("ORD 9"), std::string::npos) << i.why;
}

TEST(MpaNegotiation, InitiatorMirrorsTheRepliesLimits) {
    negotiation_policy init = rev2();
    init.ird = 16;
    init.ord = 16;
    const mpa::request_reply req = make_request(init);
    mpa::request_reply rep = answer_request(req, rev2()).reply;
    rep.ird = 3;  // the responder takes 3 of our Reads at a time
    rep.ord = 2;  // and issues at most 2
    const initiator_outcome i = conclude_reply(req, rep, init);
    ASSERT_TRUE(i.ok);
    EXPECT_EQ(i.ord, 3u);  // our ORD at most the responder's IRD
    EXPECT_EQ(i.ird, 2u);  // our IRD at least the responder's ORD
    EXPECT_EQ(i.rtr, rtr_kind::none);
}

}  // namespace
}  // namespace rnic::fw
