// VI/TCP's Urgent Marker (seed 003 §3.7) without SystemC: the sender marks only the first byte of
// a VI segment, only after the peer's option (start), the first segment start inside each TCP
// segment, with the pointer naming the urgent byte itself (RFC 1122's reading the seed requires);
// the receiver takes the named byte as a segment start only when URG is set and the byte is in the
// segment; and the out-of-order rules (vitcp_map::accept_out_of_order) place Writes and Read
// Responses exactly as the in-order path would, leave what depends on earlier messages to it,
// and reject numbers no message of the connection can have.
#include <gtest/gtest.h>

#include "proto/ddp_rdmap.h"
#include "proto/seeds/vitcp_ddp.h"
#include "proto/seeds/vitcp_urgent.h"

namespace rnic::proto {
namespace {

using bytes = std::vector<std::uint8_t>;
namespace vt = vitcp;
namespace map = vitcp_map;

TEST(ViTcpUrgent, NothingIsMarkedBeforeThePeersOption) {
    vitcp_urgent::marker m;
    m.segment_start(0);
    m.segment_start(100);
    EXPECT_FALSE(m.on());
    EXPECT_FALSE(m.pointer_for(0, 1460));  // §3.7: "Unless and until the Urgent Marker Option was received"
    EXPECT_EQ(m.starts_held(), 0u);
}

TEST(ViTcpUrgent, TheFirstSegmentStartInsideEachTcpSegmentIsMarked) {
    vitcp_urgent::marker m;
    m.start(164);          // the CE segment ends at 164: the first data segment starts there
    m.segment_start(100);  // before start(): never marked
    m.segment_start(164);
    m.segment_start(1624);
    m.segment_start(1700);
    m.segment_start(1700);  // repeated: ignored
    EXPECT_EQ(m.starts_held(), 3u);
    EXPECT_EQ(m.pointer_for(164, 1460), std::optional<std::uint16_t>(0));  // aligned: the pointer is 0
    // A TCP segment starting inside a VI segment: the urgent byte is the next segment's first byte.
    EXPECT_EQ(m.pointer_for(1000, 1460), std::optional<std::uint16_t>(624));
    EXPECT_EQ(m.pointer_for(1625, 100), std::optional<std::uint16_t>(75));
    // No VI segment starts inside [1000, 1624): nothing to mark.
    EXPECT_FALSE(m.pointer_for(1000, 624));
    EXPECT_FALSE(m.pointer_for(1701, 5000));
    EXPECT_FALSE(m.pointer_for(164, 0));
    m.acked(1624);  // acknowledged bytes are never sent again
    EXPECT_EQ(m.starts_held(), 2u);
    EXPECT_FALSE(m.pointer_for(164, 1460));
    EXPECT_EQ(m.pointer_for(1624, 10), std::optional<std::uint16_t>(0));
}

TEST(ViTcpUrgent, APointerBeyondSixteenBitsIsNotMarked) {
    vitcp_urgent::marker m;
    m.start(0);
    m.segment_start(70000);
    EXPECT_FALSE(m.pointer_for(0, 80000));
    EXPECT_EQ(m.pointer_for(5000, 80000), std::optional<std::uint16_t>(65000));
}

TEST(ViTcpUrgent, TheReceiverTakesTheNamedByteOnlyWhenUrgIsSetAndTheByteIsInTheSegment) {
    EXPECT_EQ(vitcp_urgent::located_start(5000, 1460, true, 0), std::optional<std::uint64_t>(5000));
    EXPECT_EQ(vitcp_urgent::located_start(5000, 1460, true, 1459), std::optional<std::uint64_t>(6459));
    EXPECT_FALSE(vitcp_urgent::located_start(5000, 1460, true, 1460));  // RFC 9293 §3.8.5: may run ahead
    EXPECT_FALSE(vitcp_urgent::located_start(5000, 1460, false, 10));   // URG clear: the field means nothing
}

// A whole VI segment as the sender's session frames it, parsed back as a receiver sees it.
struct framed {
    bytes wire;
    std::optional<vt::segment_view> view;
};

framed frame(map::session& tx, const bytes& ulpdu) {
    framed f;
    vt::segment s;
    EXPECT_EQ(map::to_segment(tx, ulpdu.data(), ulpdu.size(), s), map::refusal::none);
    f.wire = vt::encode(s);
    std::string why;
    f.view = vt::parse(f.wire.data(), f.wire.size(), tx.crc, &why);
    EXPECT_TRUE(f.view) << why;
    return f;
}

bytes ddp_bytes(const ddp::header& h, std::size_t payload) {
    bytes out(h.size());
    ddp::encode(h, out.data());
    for (std::size_t i = 0; i < payload; ++i) out.push_back(static_cast<std::uint8_t>(i * 13 + 1));
    return out;
}

bytes write_ulpdu(std::uint32_t stag, std::uint64_t to, std::size_t payload) {
    ddp::header h;
    h.tagged = true;
    h.opcode = ddp::opcode::rdma_write;
    h.stag = stag;
    h.tagged_offset = to;
    h.last = true;
    return ddp_bytes(h, payload);
}

bytes send_ulpdu(std::uint32_t msn, std::size_t payload) {
    ddp::header h;
    h.opcode = ddp::opcode::send;
    h.queue = ddp::kQueueSend;
    h.msn = msn;
    h.last = true;
    return ddp_bytes(h, payload);
}

TEST(ViTcpUrgent, AnOutOfOrderWriteIsPlacedAsTheInOrderPathWouldRebuildIt) {
    map::session tx, rx;
    tx.crc = rx.crc = true;
    tx.tx_next_message = 40;
    const framed first = frame(tx, write_ulpdu(0x11, 0x1000, 100));
    const framed second = frame(tx, write_ulpdu(0x11, 0x1064, 1400));
    // The first arrives in order; the second, ahead of a hole, is looked at out of order.
    bytes in_order, ooo;
    std::string why;
    ASSERT_TRUE(map::accept_in_order(rx, *first.view, in_order, &why)) << why;
    const map::session before = rx;
    ASSERT_EQ(map::accept_out_of_order(rx, *second.view, ooo, &why), map::ooo_verdict::place) << why;
    EXPECT_EQ(rx.rx_next_message, before.rx_next_message);  // the in-order state is untouched
    bytes later;
    ASSERT_TRUE(map::accept_in_order(rx, *second.view, later, &why)) << why;
    EXPECT_EQ(ooo, later);  // the same DDP segment the in-order path delivers afterwards
}

TEST(ViTcpUrgent, SendsReadRequestsAndImmediateDataWaitForTheMessagesBeforeThem) {
    map::session tx, rx;
    tx.tx_next_message = 7;
    bytes out;
    std::string why;
    const framed send = frame(tx, send_ulpdu(1, 300));
    EXPECT_EQ(map::accept_out_of_order(rx, *send.view, out, &why), map::ooo_verdict::wait);
    EXPECT_TRUE(out.empty());
    ddp::header imm;
    imm.opcode = ddp::opcode::immediate;
    imm.queue = ddp::kQueueSend;
    imm.msn = 2;
    bytes imm_ulpdu(imm.size() + ddp::kImmediateDataSize);
    ddp::encode(imm, imm_ulpdu.data());
    ddp::encode_immediate(0x1234, imm_ulpdu.data() + imm.size());
    const framed with_immediate = frame(tx, imm_ulpdu);
    EXPECT_EQ(map::accept_out_of_order(rx, *with_immediate.view, out, &why), map::ooo_verdict::wait);
    // §3.2: a message with the Transmit Error bit is the in-order path's to report.
    framed bad = frame(tx, write_ulpdu(1, 0, 10));
    bad.view->header.transmit_error = true;
    EXPECT_EQ(map::accept_out_of_order(rx, *bad.view, out, &why), map::ooo_verdict::wait);
}

TEST(ViTcpUrgent, NumbersNoMessageCanHaveAreNotSegmentStarts) {
    map::session tx, rx;
    tx.tx_next_message = 100;
    bytes out;
    std::string why;
    const framed w = frame(tx, write_ulpdu(1, 0, 10));
    ASSERT_TRUE(map::accept_in_order(rx, *w.view, out, &why)) << why;  // the receiver expects 101 next
    framed far = frame(tx, write_ulpdu(1, 0, 10));
    far.view->header.message_number = 101 + 70000;
    EXPECT_EQ(map::accept_out_of_order(rx, *far.view, out, &why), map::ooo_verdict::implausible);
    far.view->header.message_number = 99;  // already received
    EXPECT_EQ(map::accept_out_of_order(rx, *far.view, out, &why), map::ooo_verdict::implausible);
    far.view->header.message_number = 101 + 3;  // a message still to come
    EXPECT_EQ(map::accept_out_of_order(rx, *far.view, out, &why), map::ooo_verdict::place);
}

TEST(ViTcpUrgent, AReadResponseIsPlacedAtTheSinkOfTheRequestItAnswers) {
    map::session requester, responder_tx, responder_rx;
    requester.tx_next_message = 10;
    responder_tx.tx_next_message = 900;
    ddp::header rq;
    rq.opcode = ddp::opcode::read_request;
    rq.queue = ddp::kQueueReadRequest;
    rq.msn = 1;
    bytes rr(rq.size() + ddp::kReadRequestSize);
    ddp::encode(rq, rr.data());
    ddp::encode(ddp::read_request{0x55, 0x7000, 3000, 0x66, 0x2000}, rr.data() + rq.size());
    const framed request = frame(requester, rr);
    bytes at_responder;
    std::string why;
    ASSERT_TRUE(map::accept_in_order(responder_rx, *request.view, at_responder, &why)) << why;
    responder_tx.rx_read_requests = responder_rx.rx_read_requests;
    // The responder's engine answers with sink STag 0 (it never saw the sink) from TO 0.
    ddp::header resp;
    resp.tagged = true;
    resp.opcode = ddp::opcode::read_response;
    resp.tagged_offset = 0;
    resp.last = false;
    const framed first_half = frame(responder_tx, ddp_bytes(resp, 1500));
    EXPECT_EQ(first_half.view->header.data_offset, 0u);
    resp.tagged_offset = 1500;
    resp.last = true;
    const framed second_half = frame(responder_tx, ddp_bytes(resp, 1500));
    ASSERT_EQ(second_half.view->header.data_offset, 1500u);
    bytes out;
    ASSERT_EQ(map::accept_out_of_order(requester, *second_half.view, out, &why), map::ooo_verdict::place) << why;
    std::string derr;
    const auto d = ddp::decode_header(out.data(), out.size(), &derr);
    ASSERT_TRUE(d) << derr;
    EXPECT_EQ(d->stag, 0x55u);                    // the sink the requester kept
    EXPECT_EQ(d->tagged_offset, 0x7000u + 1500);  // sink TO + Data Offset
    // A Read Response whose number answers none of our Read Requests is not a segment start.
    framed stray = second_half;
    stray.view->header.message_number += 1;
    EXPECT_EQ(map::accept_out_of_order(requester, *stray.view, out, &why), map::ooo_verdict::implausible);
}

}  // namespace
}  // namespace rnic::proto
