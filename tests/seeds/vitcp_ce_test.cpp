// VI/TCP connection establishment (seed 003 §4): the active (§4.2) and passive (§4.3) state
// machines without SystemC: the ConnectRequest on the wire, the negotiated options (CRC, Urgent
// Marker, RDMA Read Window, MTU, reliability level), refusal with its reason (an invalid
// ConnectRequest too: an unsupported version, a malformed option), unknown options ignored, ConnectNoMatch,
// answers split across chunks, bad answers, and the states each event leads to.
#include "proto/seeds/vitcp_ce.h"

#include <gtest/gtest.h>

#include <random>

#include "proto/bytes.h"

namespace rnic::proto::vitcp_ce {
namespace {

using bytes = std::vector<std::uint8_t>;

struct pair_run {
    active a;
    passive p;
    bytes request;
    pair_run(const proposal& us, std::uint16_t local, std::uint16_t remote, std::uint16_t listen)
        : a(us, local, remote), p(listen) {
        a.connect_request();
        request = a.tcp_established();
        p.tcp_accepted();
    }
};

TEST(ViTcpCe, ActiveSendsAConnectRequestWithItsProposal) {
    proposal us;
    us.level = reliability::reliable_reception;
    us.mtu = 65536;
    us.rdma_read_window = 8;
    us.crc = true;
    us.urgent_marker = true;
    active a(us, 40000, 5000);
    EXPECT_EQ(a.current(), active::state::disconnected);
    EXPECT_TRUE(a.tcp_established().empty());  // no TCP open asked for yet
    a.connect_request();
    EXPECT_EQ(a.current(), active::state::connecting);
    const bytes req = a.tcp_established();
    EXPECT_EQ(a.current(), active::state::pending_accept);
    std::string err;
    const auto seg = vt::decode(req.data(), req.size(), false, &err);
    ASSERT_TRUE(seg) << err;
    EXPECT_EQ(seg->header.type, vt::segment_type::connect_request);
    EXPECT_TRUE(seg->crc);  // §3.6: a ConnectRequest has a CRC iff it has the CRC option
    const vt::ce_header& ce = *seg->ce;
    EXPECT_TRUE(ce.attributes.reliable_reception);
    EXPECT_FALSE(ce.attributes.reliable_delivery);
    EXPECT_TRUE(ce.attributes.rdma_write_enable && ce.attributes.rdma_read_enable);
    EXPECT_EQ(ce.mtu, 65536u);
    EXPECT_EQ(ce.rdma_read_window, 8u);
    EXPECT_TRUE(ce.has_option(vt::kOptionCrc));
    EXPECT_TRUE(ce.has_option(vt::kOptionUrgentMarker));
    EXPECT_EQ(ce.called_discriminator, (bytes{0x13, 0x88}));   // port 5000
    EXPECT_EQ(ce.calling_discriminator, (bytes{0x9C, 0x40}));  // port 40000
    // Byte 1: EOM | type 5; bytes 24-25: Calling Attributes bit 2 (RR), 3, 4 = 0x001C.
    EXPECT_EQ(req[1], 0x85);
    EXPECT_EQ(get_be16(req.data() + 24), 0x001C);
}

TEST(ViTcpCe, AcceptNegotiatesTheLesserValuesAndTheCommonOptions) {
    proposal act;
    act.mtu = 1u << 20;
    act.rdma_read_window = 16;
    act.crc = true;
    act.urgent_marker = false;
    pair_run r(act, 40000, 5000, 5000);
    ASSERT_EQ(r.p.on_bytes(r.request.data(), r.request.size()), passive::result::request);
    EXPECT_TRUE(r.p.discriminator_matches());
    EXPECT_EQ(r.p.current(), passive::state::pending_accept);
    proposal pas;
    pas.mtu = 32768;
    pas.rdma_read_window = 4;
    pas.crc = true;
    pas.urgent_marker = true;
    const bytes acc = r.p.accept(pas);
    ASSERT_FALSE(acc.empty());
    EXPECT_EQ(r.p.current(), passive::state::connected);
    EXPECT_EQ(r.p.agreed().mtu, 32768u);
    EXPECT_EQ(r.p.agreed().rdma_read_window, 4u);
    EXPECT_TRUE(r.p.agreed().crc);
    EXPECT_FALSE(r.p.agreed().may_mark_urgent);   // the active end did not offer it
    EXPECT_TRUE(r.p.agreed().peer_marks_urgent);  // we offered it

    ASSERT_EQ(r.a.on_bytes(acc.data(), acc.size()), active::result::connected) << r.a.why();
    EXPECT_EQ(r.a.current(), active::state::connected);
    EXPECT_EQ(r.a.consumed(), acc.size());
    EXPECT_EQ(r.a.agreed().mtu, 32768u);
    EXPECT_EQ(r.a.agreed().rdma_read_window, 4u);
    EXPECT_TRUE(r.a.agreed().crc);
    EXPECT_TRUE(r.a.agreed().may_mark_urgent);  // §3.7: the end receiving the option may mark
    EXPECT_FALSE(r.a.agreed().peer_marks_urgent);
    EXPECT_EQ(r.a.agreed().level, reliability::reliable_delivery);
}

TEST(ViTcpCe, CrcOnlyWhenBothEndsAskForIt) {
    for (int mask = 0; mask < 4; ++mask) {
        proposal act, pas;
        act.crc = (mask & 1) != 0;
        pas.crc = (mask & 2) != 0;
        pair_run r(act, 1, 2, 2);
        ASSERT_EQ(r.p.on_bytes(r.request.data(), r.request.size()), passive::result::request);
        const bytes acc = r.p.accept(pas);
        ASSERT_EQ(r.a.on_bytes(acc.data(), acc.size()), active::result::connected) << r.a.why();
        EXPECT_EQ(r.a.agreed().crc, mask == 3) << mask;
        EXPECT_EQ(r.p.agreed().crc, mask == 3) << mask;
        // §3.5: the Accept carries a trailer iff it carries the CRC option (only with the Request's).
        EXPECT_EQ(acc.size(), vt::kSegmentHeaderSize + vt::kCeFixedSize + (mask == 3 ? 4 + 2 + 4 : 2)) << mask;
    }
}

TEST(ViTcpCe, TheAnswerMayArriveInPiecesAndDataMayFollowIt) {
    pair_run r(proposal{}, 1, 2, 2);
    ASSERT_EQ(r.p.on_bytes(r.request.data(), r.request.size()), passive::result::request);
    bytes acc = r.p.accept(proposal{});
    const std::size_t ce_len = acc.size();
    acc.insert(acc.end(), {1, 2, 3, 4, 5});  // the passive side's first data segment, behind it
    for (std::size_t n : {std::size_t{0}, std::size_t{3}, std::size_t{24}, ce_len - 1}) {
        EXPECT_EQ(r.a.on_bytes(acc.data(), n), active::result::need_more) << n;
    }
    ASSERT_EQ(r.a.on_bytes(acc.data(), acc.size()), active::result::connected);
    EXPECT_EQ(r.a.consumed(), ce_len);
}

TEST(ViTcpCe, ReliabilityMismatchIsRejectedWithItsReason) {
    proposal act, pas;
    act.level = reliability::unreliable;
    pas.level = reliability::reliable_reception;
    pair_run r(act, 1, 2, 2);
    ASSERT_EQ(r.p.on_bytes(r.request.data(), r.request.size()), passive::result::request);
    const bytes rej = r.p.accept(pas);
    EXPECT_EQ(r.p.current(), passive::state::disconnected);
    EXPECT_EQ(r.p.reason(), refusal::reliability_mismatch);
    EXPECT_NE(r.p.why().find("unreliable delivery"), std::string::npos) << r.p.why();
    EXPECT_EQ(rej.size(), vt::kSegmentHeaderSize);  // no CRC asked: no trailer
    EXPECT_EQ(rej[1], 0x87);                        // EOM | ConnectReject
    ASSERT_EQ(r.a.on_bytes(rej.data(), rej.size()), active::result::rejected);
    EXPECT_EQ(r.a.reason(), refusal::reliability_mismatch);
    EXPECT_EQ(r.a.current(), active::state::disconnected);
}

TEST(ViTcpCe, PeerToPeerBitsMustMatch) {
    proposal act, pas;
    act.peer_to_peer = true;
    pair_run r(act, 1, 2, 2);
    ASSERT_EQ(r.p.on_bytes(r.request.data(), r.request.size()), passive::result::request);
    const bytes rej = r.p.accept(pas);
    ASSERT_EQ(r.a.on_bytes(rej.data(), rej.size()), active::result::rejected);
    EXPECT_EQ(r.a.reason(), refusal::peer_to_peer_mismatch);
}

TEST(ViTcpCe, ConsumerRejectCarriesACrcWhenTheRequestAskedForOne) {
    proposal act;
    act.crc = true;
    pair_run r(act, 1, 2, 2);
    ASSERT_EQ(r.p.on_bytes(r.request.data(), r.request.size()), passive::result::request);
    const bytes rej = r.p.reject();
    EXPECT_EQ(rej.size(), vt::kSegmentHeaderSize + vt::kTrailerSize);  // §3.6: length 28 says so
    ASSERT_EQ(r.a.on_bytes(rej.data(), rej.size()), active::result::rejected);
    EXPECT_EQ(r.a.reason(), refusal::consumer_rejected);
    EXPECT_NE(r.a.why().find("VI consumer"), std::string::npos);
}

TEST(ViTcpCe, UnknownDiscriminatorGetsConnectNoMatch) {
    pair_run r(proposal{}, 1, 7777, 5000);  // the active side asks for port 7777's VI
    ASSERT_EQ(r.p.on_bytes(r.request.data(), r.request.size()), passive::result::request);
    EXPECT_FALSE(r.p.discriminator_matches());
    EXPECT_EQ(r.p.current(), passive::state::matching);
    EXPECT_TRUE(r.p.accept(proposal{}).empty());  // not in Pending Accept
    const bytes nm = r.p.no_match();
    EXPECT_EQ(r.p.current(), passive::state::disconnected);
    ASSERT_EQ(r.a.on_bytes(nm.data(), nm.size()), active::result::no_match);
    EXPECT_NE(r.a.why().find("7777"), std::string::npos);
}

TEST(ViTcpCe, BadAnswersAreProtocolErrorsNamingWhat) {
    pair_run r(proposal{}, 1, 2, 2);
    // A second ConnectRequest instead of an answer.
    EXPECT_EQ(r.a.on_bytes(r.request.data(), r.request.size()), active::result::protocol_error);
    EXPECT_NE(r.a.why().find("ConnectRequest"), std::string::npos) << r.a.why();
    EXPECT_EQ(r.a.current(), active::state::disconnected);

    pair_run r2(proposal{}, 1, 2, 2);
    ASSERT_EQ(r2.p.on_bytes(r2.request.data(), r2.request.size()), passive::result::request);
    bytes acc = r2.p.accept(proposal{});
    acc[0] = 2;  // Version
    EXPECT_EQ(r2.a.on_bytes(acc.data(), acc.size()), active::result::protocol_error);
    EXPECT_NE(r2.a.why().find("Version"), std::string::npos) << r2.a.why();

    // An Accept raising the RDMA Read Window above the proposal (offset 24+4+4+64 = 96).
    pair_run r3(proposal{}, 1, 2, 2);
    ASSERT_EQ(r3.p.on_bytes(r3.request.data(), r3.request.size()), passive::result::request);
    bytes acc3 = r3.p.accept(proposal{});
    put_be16(acc3.data() + 96, 0x4000);
    EXPECT_EQ(r3.a.on_bytes(acc3.data(), acc3.size()), active::result::protocol_error);
    EXPECT_NE(r3.a.why().find("RDMA Read Window"), std::string::npos) << r3.a.why();

    // A Segment Length below the header: judged once 24 bytes are in, never waits forever.
    pair_run r4(proposal{}, 1, 2, 2);
    bytes tiny(24, 0);
    tiny[0] = 1;
    tiny[1] = 0x86;
    put_be16(tiny.data() + 2, 8);
    EXPECT_EQ(r4.a.on_bytes(tiny.data(), 4), active::result::need_more);
    EXPECT_EQ(r4.a.on_bytes(tiny.data(), tiny.size()), active::result::protocol_error);
}

TEST(ViTcpCe, PassiveRefusesWhatIsNotAValidConnectRequest) {
    passive p(2);
    p.tcp_accepted();
    proposal us;
    active a(us, 1, 2);
    a.connect_request();
    bytes req = a.tcp_established();
    req[25] |= 0x03;  // two reliability levels in the Calling Attributes (UR and RD)
    EXPECT_EQ(p.on_bytes(req.data(), req.size()), passive::result::invalid);
    EXPECT_EQ(p.reason(), refusal::bad_request);
    EXPECT_EQ(p.current(), passive::state::disconnected);

    passive p2(2);
    p2.tcp_accepted();
    const bytes nop = vt::encode([] {
        vt::segment s;
        s.header.type = vt::segment_type::nop;
        return s;
    }());
    EXPECT_EQ(p2.on_bytes(nop.data(), nop.size()), passive::result::invalid);
    EXPECT_NE(p2.why().find("NOP"), std::string::npos) << p2.why();
    EXPECT_EQ(p2.reason(), refusal::bad_request);
}

// The ConnectReject that answers an invalid ConnectRequest names why, and the active side reads
// the reason back from its IS Error Code (§3.2).
refusal refusal_seen_by_active(const bytes& request, passive::result* got, std::string* why) {
    active a(proposal{}, 1, 2);
    a.connect_request();
    (void)a.tcp_established(request);
    passive p(2);
    p.tcp_accepted();
    *got = p.on_bytes(request.data(), request.size());
    *why = p.why();
    const bytes answer = p.refuse();
    EXPECT_TRUE(p.refuse().empty()) << "answered once";
    std::string detail;
    const auto v = vt::parse(answer.data(), answer.size(), false, &detail);
    EXPECT_TRUE(v) << detail;
    if (!v) return refusal::none;
    EXPECT_EQ(v->header.type, vt::segment_type::connect_reject);
    EXPECT_EQ(v->header.version, vt::kVersion);
    EXPECT_EQ(a.on_bytes(answer.data(), answer.size()), active::result::rejected);
    EXPECT_EQ(a.reason(), p.reason());
    EXPECT_NE(a.why().find(to_string(p.reason())), std::string::npos) << a.why();
    return a.reason();
}

vt::segment good_request() {
    vt::segment s;
    s.header.type = vt::segment_type::connect_request;
    vt::local_parameters local;
    local.mtu = 4096;
    local.rdma_read_window = 4;
    s.ce = vt::make_request(local, port_discriminator(1), port_discriminator(2));
    return s;
}

TEST(ViTcpCe, AnInvalidConnectRequestIsRefusedWithItsReason) {
    passive::result got{};
    std::string why;
    // §3.2 Version: this end speaks version 1.
    vt::segment v2 = good_request();
    v2.header.version = 2;
    EXPECT_EQ(refusal_seen_by_active(vt::encode(v2), &got, &why), refusal::unsupported_version);
    EXPECT_EQ(got, passive::result::invalid);
    EXPECT_NE(why.find("Version 2"), std::string::npos) << why;
    // §3.3: the CRC option has "Length = 4"; one of 8 is malformed.
    vt::segment bad = good_request();
    bad.ce->options.push_back({vt::kOptionCrc, {0, 0, 0, 0}});
    bad.crc = true;
    bytes encoded = vt::encode(bad);
    ASSERT_FALSE(encoded.empty());
    EXPECT_EQ(refusal_seen_by_active(encoded, &got, &why), refusal::bad_option);
    EXPECT_NE(why.find("option"), std::string::npos) << why;
    // Anything else wrong: the generic reason.
    vt::segment two_levels = good_request();
    two_levels.ce->attributes.unreliable = true;
    EXPECT_EQ(refusal_seen_by_active(vt::encode(two_levels), &got, &why), refusal::bad_request);
}

TEST(ViTcpCe, AnUnknownOptionIsIgnoredAndTheConnectionIsAccepted) {
    // §3.3: "A receiver MUST ignore any unsupported or unknown options."
    vt::segment s = good_request();
    s.ce->options.insert(s.ce->options.begin(), {0x4242, {0xde, 0xad, 0xbe, 0xef}});
    const bytes request = vt::encode(s);
    ASSERT_FALSE(request.empty());
    proposal us;
    us.level = reliability::reliable_delivery;
    active a(us, 1, 2);
    a.connect_request();
    EXPECT_EQ(a.tcp_established(request), request) << "sent as built (test mode)";
    passive p(2);
    p.tcp_accepted();
    ASSERT_EQ(p.on_bytes(request.data(), request.size()), passive::result::request);
    ASSERT_TRUE(p.discriminator_matches());
    const bytes accept = p.accept(us);
    ASSERT_EQ(p.current(), passive::state::connected);
    ASSERT_EQ(a.on_bytes(accept.data(), accept.size()), active::result::connected) << a.why();
    EXPECT_EQ(a.agreed().rdma_read_window, 4u);
    EXPECT_EQ(a.agreed().mtu, 4096u);
    EXPECT_EQ(a.agreed().level, reliability::reliable_delivery);
}

TEST(ViTcpCe, AnAcceptCannotFitARequestThatDidNotDecode) {
    vt::segment v2 = good_request();
    v2.header.version = 2;
    active a(proposal{}, 1, 2);
    a.connect_request();
    (void)a.tcp_established(vt::encode(v2));
    // An Accept made for a valid request of the same parameters: the active side's own request
    // did not decode, so nothing was proposed that it could fit.
    passive p(2);
    p.tcp_accepted();
    const bytes good = vt::encode(good_request());
    ASSERT_EQ(p.on_bytes(good.data(), good.size()), passive::result::request);
    const bytes accept = p.accept(proposal{});
    EXPECT_EQ(a.on_bytes(accept.data(), accept.size()), active::result::protocol_error);
}

TEST(ViTcpCe, TimeoutsAndTcpFailuresLeadToDisconnected) {
    active a(proposal{}, 1, 2);
    a.connect_request();
    a.tcp_failed_or_closed();  // §4.2: TCP setup fail
    EXPECT_EQ(a.current(), active::state::disconnected);
    a.connect_request();
    (void)a.tcp_established();
    a.timeout();  // §4.2: Pending Accept, Timeout
    EXPECT_EQ(a.current(), active::state::disconnected);
    passive p(2);
    EXPECT_EQ(p.current(), passive::state::listening);
    p.tcp_accepted();
    EXPECT_EQ(p.current(), passive::state::incoming);
    p.timeout_or_tcp_closed();  // §4.3: Incoming, Timeout
    EXPECT_EQ(p.current(), passive::state::disconnected);
}

}  // namespace
}  // namespace rnic::proto::vitcp_ce

namespace rnic::proto::vitcp_ce {
namespace {

// Bad input never crashes: random bytes and random damage to a good CE segment, fed whole and in
// every prefix, end in need_more or a protocol error that names what is wrong (never "connected"
// from junk that is not a ConnectAccept for this request).
TEST(ViTcpCe, RandomAndDamagedAnswersNeverCrash) {
    std::mt19937_64 rng(20261126);
    pair_run good(proposal{}, 1, 2, 2);
    ASSERT_EQ(good.p.on_bytes(good.request.data(), good.request.size()), passive::result::request);
    const bytes accept = good.p.accept(proposal{});
    for (int i = 0; i < 3000; ++i) {
        bytes junk;
        if (i % 2 == 0) {
            junk.resize(rng() % 300);
            for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
        } else {
            junk = accept;
            for (int k = 0; k < 3; ++k) junk[rng() % junk.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        }
        active a(proposal{}, 1, 2);
        a.connect_request();
        (void)a.tcp_established();
        const active::result r = a.on_bytes(junk.data(), junk.size());
        if (r == active::result::protocol_error) {
            EXPECT_FALSE(a.why().empty());
        }
        if (r == active::result::connected) {
            EXPECT_LE(a.agreed().rdma_read_window, 16u);  // never above what we proposed
        }
        passive p(2);
        p.tcp_accepted();
        const passive::result pr = p.on_bytes(junk.data(), junk.size());
        if (pr == passive::result::protocol_error) {
            EXPECT_FALSE(p.why().empty());
        }
    }
}

}  // namespace
}  // namespace rnic::proto::vitcp_ce
