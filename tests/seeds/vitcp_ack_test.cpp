// Reliable Reception's Message ACK and Remote Error Code (seed 003 §3.2) without SystemC: the
// receiving end acknowledges a message only once it and every message before it have landed in
// host memory with their completions, names the message in error with its VI Error Type; the
// sending end takes a Message ACK only when it names one of its unacknowledged messages and
// turns it into the send-stream offset through which the peer placed them; the VI Error Type bits
// on the wire; the NOP that carries them alone; and a whole exchange between two sessions through
// the codec.
#include "proto/seeds/vitcp_ack.h"

#include <gtest/gtest.h>

#include "proto/ddp_rdmap.h"
#include "proto/seeds/vitcp_ddp.h"

namespace rnic::proto::vitcp_ack {
namespace {

namespace term = proto::ddp::term;
using bytes = std::vector<std::uint8_t>;

constexpr std::uint8_t kRdmap = 0, kDdp = 1, kLlp = 2;

TEST(ViTcpAck, TerminateClassesBecomeTheirViErrorType) {
    // The Terminates the RDMA engine sends for each error the probes provoke (docs/protocol-probes.md).
    struct row {
        std::uint8_t layer, etype;
        vi_error want;
        const char* what;
    };
    const row table[] = {
        {kDdp, term::kDdpTaggedBuffer, vi_error::memory_protection, "bad STag, bounds, PD (RFC 5041 §7.2)"},
        {kRdmap, term::kRdmaRemoteProtection, vi_error::memory_protection, "access rights (RFC 5040 §7.2)"},
        {kDdp, term::kDdpUntaggedBuffer, vi_error::descriptor, "no receive descriptor, too long, MSN, QN"},
        {kLlp, term::kLlpMpa, vi_error::transport, "CRC, framing (§3.6 option 2)"},
        {kRdmap, term::kRdmaRemoteOperation, vi_error::transport, "unexpected opcode"},
        {kRdmap, term::kRdmaLocalCatastrophic, vi_error::transport, "local catastrophic"},
        {kDdp, term::kDdpLocalCatastrophic, vi_error::transport, "DDP catastrophic"},
    };
    for (const row& r : table) EXPECT_EQ(from_terminate(r.layer, r.etype), r.want) << r.what;
}

TEST(ViTcpAck, ViErrorTypeBitsAreTheDraftsAndTheFirstSetBitWins) {
    // §3.2: bit 0 MPE, bit 1 VDE, bit 2 UTE of the 16-bit Remote Error Code; IS Error Code 0.
    EXPECT_EQ(remote_error_code(vi_error::none).pack(), 0x0000);
    EXPECT_EQ(remote_error_code(vi_error::memory_protection).pack(), 0x0001);
    EXPECT_EQ(remote_error_code(vi_error::descriptor).pack(), 0x0002);
    EXPECT_EQ(remote_error_code(vi_error::transport).pack(), 0x0004);
    for (const vi_error e : {vi_error::none, vi_error::memory_protection, vi_error::descriptor, vi_error::transport}) {
        EXPECT_EQ(from_remote_error_code(vt::remote_error_code::unpack(remote_error_code(e).pack())), e)
            << to_string(e);
    }
    EXPECT_EQ(from_remote_error_code(vt::remote_error_code::unpack(0x0007)), vi_error::memory_protection);
    EXPECT_EQ(from_remote_error_code(vt::remote_error_code::unpack(0x0006)), vi_error::descriptor);
    // An IS Error Code alone reports no VI error.
    EXPECT_EQ(from_remote_error_code(vt::remote_error_code::unpack(0x2A00)), vi_error::none);
}

TEST(ViTcpAck, OnlyMessagesWithTheirOwnNumberAreAcknowledged) {
    EXPECT_TRUE(acknowledged(vt::segment_type::send));
    EXPECT_TRUE(acknowledged(vt::segment_type::rdma_write));
    EXPECT_TRUE(acknowledged(vt::segment_type::read_request));
    EXPECT_FALSE(acknowledged(vt::segment_type::read_response));  // carries its request's number
    EXPECT_FALSE(acknowledged(vt::segment_type::nop));            // "not a VI message"
    EXPECT_FALSE(acknowledged(vt::segment_type::connect_request));
}

TEST(ViTcpAck, AMessageIsAcknowledgedOnlyOnceItHasLanded) {
    acknowledger a;
    EXPECT_FALSE(a.owed(1'000'000));  // nothing received yet
    ack_fields f = a.carry(0);
    EXPECT_EQ(f.message_ack, 0u);  // §3.2 has no "none yet"; the platform sends 0
    EXPECT_EQ(f.remote_error.pack(), 0);
    a.placed(500, 1000);
    EXPECT_FALSE(a.owed(999));
    EXPECT_EQ(a.carry(999).message_ack, 0u) << "acknowledged before its data and completion were written";
    EXPECT_TRUE(a.owed(1000));
    EXPECT_EQ(a.carry(1000).message_ack, 500u);
    EXPECT_FALSE(a.owed(5000)) << "the last segment already carried it";
    EXPECT_EQ(a.carry(5000).message_ack, 500u);  // every later segment repeats it
}

TEST(ViTcpAck, AcknowledgementsAreCumulativeSoALateLandingHoldsBackLaterMessages) {
    acknowledger a;
    a.placed(7, 300);
    a.placed(8, 200);  // landed before 7 did
    a.placed(9, 400);
    EXPECT_FALSE(a.owed(250));
    EXPECT_EQ(a.carry(250).message_ack, 0u) << "8 has landed but 7 has not";
    EXPECT_EQ(a.carry(300).message_ack, 8u);
    EXPECT_TRUE(a.owed(400));
    EXPECT_EQ(a.carry(400).message_ack, 9u);
}

TEST(ViTcpAck, AnErrorNamesItsMessageAndItsClassFromThenOn) {
    acknowledger a;
    a.placed(41, 10);
    EXPECT_EQ(a.carry(10).message_ack, 41u);
    a.placed(42, 50);
    a.failed(43, vi_error::descriptor);
    EXPECT_TRUE(a.in_error());
    EXPECT_TRUE(a.owed(0)) << "the error report is owed at once";
    const ack_fields f = a.carry(0);
    EXPECT_EQ(f.message_ack, 43u);  // §3.2: "the Message Number of the message segment in error"
    EXPECT_TRUE(f.remote_error.descriptor_error);
    EXPECT_FALSE(f.remote_error.memory_protection_error);
    EXPECT_FALSE(f.remote_error.transport_error);
    EXPECT_FALSE(a.owed(100));
    // Only the first error counts, and nothing placed after it is acknowledged.
    a.failed(44, vi_error::memory_protection);
    a.placed(45, 60);
    const ack_fields g = a.carry(100);
    EXPECT_EQ(g.message_ack, 43u);
    EXPECT_EQ(from_remote_error_code(g.remote_error), vi_error::descriptor);
}

TEST(ViTcpAck, TheSenderCompletesThroughTheEndOfTheAcknowledgedMessage) {
    tracker t;
    t.sent(10, 100);
    t.sent(11, 200);
    t.sent(11, 260);  // the second segment of message 11
    t.sent(12, 300);
    EXPECT_EQ(t.outstanding(), 3u);
    tracker::verdict v = t.on_fields({10, {}});
    EXPECT_TRUE(v.placed);
    EXPECT_EQ(v.placed_through, 100u);
    EXPECT_FALSE(t.on_fields({10, {}}).placed) << "a repeated Message ACK moves nothing";
    EXPECT_FALSE(t.on_fields({9, {}}).placed) << "already acknowledged";
    EXPECT_FALSE(t.on_fields({13, {}}).placed) << "not sent yet";
    EXPECT_FALSE(t.on_fields({0, {}}).placed) << "an end that received nothing sends 0";
    v = t.on_fields({11, {}});
    EXPECT_TRUE(v.placed);
    EXPECT_EQ(v.placed_through, 260u) << "a message ends with its last segment";
    EXPECT_EQ(t.outstanding(), 1u);
}

TEST(ViTcpAck, AnErrorReportPlacesEverythingBeforeTheMessageItNames) {
    tracker t;
    for (std::uint32_t n = 0; n < 5; ++n) t.sent(20 + n, 100 * (n + 1));
    EXPECT_TRUE(t.on_fields({20, {}}).placed);
    const tracker::verdict v = t.on_fields({23, remote_error_code(vi_error::memory_protection)});
    EXPECT_EQ(v.error, vi_error::memory_protection);
    EXPECT_TRUE(v.error_named);
    EXPECT_TRUE(v.placed);
    EXPECT_EQ(v.placed_through, 300u) << "21 and 22 were received without error; 23 was not";
    // The connection is breaking: nothing after the first report counts.
    const tracker::verdict after = t.on_fields({24, {}});
    EXPECT_FALSE(after.placed);
    EXPECT_EQ(after.error, vi_error::none);
}

TEST(ViTcpAck, AnErrorInNoneOfOurMessagesMovesNothing) {
    tracker t;
    t.sent(70, 100);
    const tracker::verdict v = t.on_fields({12345, remote_error_code(vi_error::transport)});
    EXPECT_EQ(v.error, vi_error::transport);
    EXPECT_FALSE(v.error_named);
    EXPECT_FALSE(v.placed);
    EXPECT_EQ(v.placed_through, 0u);
}

TEST(ViTcpAck, MessageNumbersWrapThroughZero) {
    tracker t;
    t.sent(0xFFFFFFFEu, 40);
    t.sent(0xFFFFFFFFu, 50);
    t.sent(0, 90);
    t.sent(1, 120);
    const tracker::verdict v = t.on_fields({0, {}});
    EXPECT_TRUE(v.placed);
    EXPECT_EQ(v.placed_through, 90u);
    EXPECT_EQ(t.outstanding(), 1u);
}

// ---- through the codec, with the per-connection session of vitcp_ddp.h ---------------------------

bytes send_ulpdu(std::uint32_t msn, std::uint32_t mo, bool last, std::size_t n) {
    ddp::header h;
    h.opcode = ddp::opcode::send;
    h.queue = ddp::kQueueSend;
    h.msn = msn;
    h.mo = mo;
    h.last = last;
    bytes out(h.size());
    ddp::encode(h, out.data());
    out.resize(out.size() + n, 0x5A);
    return out;
}

TEST(ViTcpAck, ANopCarriesTheFieldsAndTheLastMessageSent) {
    vitcp_map::session s;
    s.crc = true;
    s.tx_next_message = 77;
    const vt::segment nop = vitcp_map::make_nop(s, {76, remote_error_code(vi_error::transport)});
    const bytes wire = vt::encode(nop);
    ASSERT_EQ(wire.size(), vt::kSegmentHeaderSize + vt::kTrailerSize);
    std::string why;
    const auto v = vt::parse(wire.data(), wire.size(), true, &why);
    ASSERT_TRUE(v) << why;
    EXPECT_EQ(v->header.type, vt::segment_type::nop);
    EXPECT_EQ(v->header.message_number, 76u);  // §3.2 Notes on NOP: the last message sent
    EXPECT_EQ(v->header.message_ack, 76u);
    EXPECT_TRUE(v->header.remote_error.transport_error);
    // The receiver's in-order rules take it and hand nothing to the RDMA engine.
    vitcp_map::session rx;
    rx.crc = true;
    bytes ulpdu;
    EXPECT_TRUE(vitcp_map::accept_in_order(rx, *v, ulpdu, &why)) << why;
    EXPECT_TRUE(ulpdu.empty());
}

TEST(ViTcpAck, TheMessageInErrorIsTheOneDeliveredElseWhereTheStreamFailedElseTheNextOne) {
    vitcp_map::session s;
    s.rx_started = true;
    s.rx_next_message = 9;
    EXPECT_EQ(vitcp_map::expected_message(s), 9u);
    EXPECT_EQ(vitcp_map::message_in_error(s), 9u);
    s.rx_open = true;
    s.rx_open_number = 8;
    EXPECT_EQ(vitcp_map::expected_message(s), 8u) << "a Send still open";
    s.rx_failed = 12;
    EXPECT_EQ(vitcp_map::message_in_error(s), 12u);
    s.rx_delivering = 11;
    EXPECT_EQ(vitcp_map::message_in_error(s), 11u);
}

TEST(ViTcpAck, ASendOfThreeSegmentsCompletesOnTheNopThatAcknowledgesItsLastOne) {
    // End A sends; end B receives, places and acknowledges; the bytes go through the codec.
    vitcp_map::session a, b;
    a.tx_next_message = 3000;
    std::uint64_t offset = 0;
    std::vector<std::uint64_t> ends;
    for (std::uint32_t i = 0; i < 3; ++i) {
        const bytes u = send_ulpdu(1, i * 100, i == 2, 100);
        vt::segment seg;
        ASSERT_EQ(vitcp_map::to_segment(a, u.data(), u.size(), seg), vitcp_map::refusal::none);
        const bytes wire = vt::encode(seg);
        offset += wire.size();
        a.sent_messages.sent(seg.header.message_number, offset);
        ends.push_back(offset);
        std::string why;
        const auto v = vt::parse(wire.data(), wire.size(), false, &why);
        ASSERT_TRUE(v) << why;
        bytes ulpdu;
        ASSERT_TRUE(vitcp_map::accept_in_order(b, *v, ulpdu, &why)) << why;
        if (v->header.eom) b.acks.placed(v->header.message_number, 1000 + i);  // landed with its completion
    }
    EXPECT_EQ(a.sent_messages.outstanding(), 1u) << "three segments, one message";
    // Before the last segment landed, B's NOP acknowledges nothing.
    EXPECT_FALSE(b.acks.owed(1001));
    ASSERT_TRUE(b.acks.owed(1002));
    const bytes nop = vt::encode(vitcp_map::make_nop(b, b.acks.carry(1002)));
    std::string why;
    const auto v = vt::parse(nop.data(), nop.size(), false, &why);
    ASSERT_TRUE(v) << why;
    const tracker::verdict got = a.sent_messages.on_fields({v->header.message_ack, v->header.remote_error});
    EXPECT_TRUE(got.placed);
    EXPECT_EQ(got.placed_through, ends.back());
    EXPECT_EQ(got.error, vi_error::none);
}

}  // namespace
}  // namespace rnic::proto::vitcp_ack
