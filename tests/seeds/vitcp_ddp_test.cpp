// DDP/RDMAP segments as VI/TCP segments (seed 003) and back, without SystemC: each RDMAP message
// the RDMA engine emits maps onto its VI type with the right header fields, the receive side
// rebuilds the same DDP segment, messages go one at a time with Read Responses interleaved
// (§2.2.2.2.3), message numbers and Data Offsets are held, the negotiated RDMA Read Window
// (§2.2.2.2.6), the CRC option, the Transmit Error bit and the padded retransmission of
// §2.2.2.2.5, and every refusal.
#include "proto/seeds/vitcp_ddp.h"

#include <gtest/gtest.h>

#include <random>

#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"

namespace rnic::proto::vitcp_map {
namespace {

using bytes = std::vector<std::uint8_t>;

bytes payload_of(std::size_t n, std::uint8_t seed) {
    bytes b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + 7 * i);
    return b;
}

bytes ddp_segment(const ddp::header& h, const bytes& payload) {
    bytes out(h.size());
    ddp::encode(h, out.data());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

bytes send_ulpdu(std::uint32_t msn, std::uint32_t mo, bool last, const bytes& payload) {
    ddp::header h;
    h.opcode = ddp::opcode::send;
    h.queue = ddp::kQueueSend;
    h.msn = msn;
    h.mo = mo;
    h.last = last;
    return ddp_segment(h, payload);
}

bytes tagged_ulpdu(ddp::opcode op, std::uint32_t stag, std::uint64_t to, bool last, const bytes& payload) {
    ddp::header h;
    h.tagged = true;
    h.opcode = op;
    h.stag = stag;
    h.tagged_offset = to;
    h.last = last;
    return ddp_segment(h, payload);
}

bytes read_request_ulpdu(std::uint32_t msn, std::uint32_t sink_stag, std::uint64_t sink_to, std::uint32_t size,
                         std::uint32_t src_stag, std::uint64_t src_to) {
    ddp::header h;
    h.opcode = ddp::opcode::read_request;
    h.queue = ddp::kQueueReadRequest;
    h.msn = msn;
    bytes out(h.size() + ddp::kReadRequestSize);
    ddp::encode(h, out.data());
    ddp::encode(ddp::read_request{sink_stag, sink_to, size, src_stag, src_to}, out.data() + h.size());
    return out;
}

// One end's transmit state and the other end's receive state, wired through the codec.
struct link {
    session tx, rx;
    bytes wire;
    std::string why;
    explicit link(bool crc = false, std::uint32_t first = 1000) {
        tx.crc = rx.crc = crc;
        tx.tx_next_message = first;
    }
    // Sends one ULPDU; returns the segment (checked by the codec) or nothing on refusal.
    std::optional<vt::segment> send(const bytes& ulpdu) {
        vt::segment s;
        if (to_segment(tx, ulpdu.data(), ulpdu.size(), s) != refusal::none) return std::nullopt;
        wire = vt::encode(s);
        EXPECT_EQ(wire.size(), wire_length(ulpdu.data(), ulpdu.size(), tx.crc));
        return s;
    }
    // Receives the last sent segment in order; the rebuilt ULPDU.
    std::optional<bytes> receive() {
        std::string err;
        const auto v = vt::parse(wire.data(), wire.size(), rx.crc, &err);
        EXPECT_TRUE(v) << err;
        if (!v) return std::nullopt;
        bytes ulpdu;
        if (!accept_in_order(rx, *v, ulpdu, &why)) return std::nullopt;
        return ulpdu;
    }
};

TEST(ViTcpMap, SendOfThreeSegmentsIsOneMessageAndComesBackTheSame) {
    link l;
    for (std::uint32_t i = 0; i < 3; ++i) {
        const bytes u = send_ulpdu(1, 1000 * i, i == 2, payload_of(1000, static_cast<std::uint8_t>(i)));
        const auto s = l.send(u);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->header.type, vt::segment_type::send);
        EXPECT_EQ(s->header.message_number, 1000u);  // every segment of a message carries its number
        EXPECT_EQ(s->header.data_offset, 1000 * i);
        EXPECT_EQ(s->header.eom, i == 2);
        EXPECT_EQ(l.wire.size(), 24u + 1000);  // no CRC negotiated: no trailer
        const auto back = l.receive();
        ASSERT_TRUE(back) << l.why;
        EXPECT_EQ(*back, u);  // MSN 1: the first Send message
    }
    // The next Send is message 1001 and MSN 2.
    const bytes u2 = send_ulpdu(2, 0, true, payload_of(10, 9));
    ASSERT_EQ(l.send(u2)->header.message_number, 1001u);
    EXPECT_EQ(*l.receive(), u2);
}

TEST(ViTcpMap, WriteCarriesTheRdmaHeaderAndPlacesWhereTheDdpSegmentDid) {
    link l(true);
    const bytes u = tagged_ulpdu(ddp::opcode::rdma_write, 0x1234, 0x1'0000'0042ull, false, payload_of(700, 3));
    const auto s = l.send(u);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->header.type, vt::segment_type::rdma_write);
    ASSERT_TRUE(s->rdma);
    EXPECT_EQ(s->rdma->address, 0x1'0000'0042ull);
    EXPECT_EQ(s->rdma->memory_handle, 0x1234u);
    EXPECT_EQ(s->rdma->length, 700u);
    EXPECT_TRUE(s->header.eom);  // one DDP segment, one VI message
    EXPECT_EQ(l.wire.size(), 24u + 16 + 700 + 4);
    const auto back = l.receive();
    ASSERT_TRUE(back) << l.why;
    // Rebuilt with L set (the VI message ends here); all else as sent.
    bytes expected = u;
    expected[0] |= 0x40;
    EXPECT_EQ(*back, expected);
}

TEST(ViTcpMap, ReadRequestAndInterleavedResponsesRoundTrip) {
    link req(false, 500), resp(false, 9000);  // requester -> responder, responder -> requester
    const bytes rr = read_request_ulpdu(1, 0x77, 0x5000, 3000, 0x99, 0x8000'0000ull);
    const auto s = req.send(rr);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->header.type, vt::segment_type::read_request);
    EXPECT_EQ(s->rdma->address, 0x8000'0000ull);  // the source: what the peer reads
    EXPECT_EQ(s->rdma->memory_handle, 0x99u);
    EXPECT_EQ(s->rdma->length, 3000u);
    EXPECT_EQ(req.wire.size(), 40u);
    ASSERT_EQ(req.tx.tx_read_requests.size(), 1u);
    EXPECT_EQ(req.tx.tx_read_requests.front().sink_stag, 0x77u);  // kept here, not on the wire
    const auto at_responder = req.receive();
    ASSERT_TRUE(at_responder) << req.why;
    // The responder's engine sees a Read Request with sink STag 0, TO 0 and the real source.
    std::string err;
    const auto rq = ddp::decode_read_request(at_responder->data() + 18, 28, &err);
    ASSERT_TRUE(rq);
    EXPECT_EQ(rq->sink_stag, 0u);
    EXPECT_EQ(rq->sink_to, 0u);
    EXPECT_EQ(rq->src_stag, 0x99u);
    EXPECT_EQ(rq->size, 3000u);

    // The responder's session learned the Request; it answers in two segments, a Send of its own
    // in between (§2.2.2.2.3: Read Responses may interleave with any other message).
    resp.tx.rx_read_requests = req.rx.rx_read_requests;
    resp.rx.tx_read_requests = req.tx.tx_read_requests;
    const bytes r1 = tagged_ulpdu(ddp::opcode::read_response, 0, 0, false, payload_of(1500, 1));
    const bytes send_a = send_ulpdu(1, 0, false, payload_of(100, 2));
    const bytes r2 = tagged_ulpdu(ddp::opcode::read_response, 0, 1500, true, payload_of(1500, 3));
    const bytes send_b = send_ulpdu(1, 100, true, payload_of(50, 4));
    const auto s1 = resp.send(send_a);
    ASSERT_TRUE(s1);
    ASSERT_TRUE(resp.receive()) << resp.why;
    const auto s2 = resp.send(r1);
    ASSERT_TRUE(s2);
    EXPECT_EQ(s2->header.type, vt::segment_type::read_response);
    EXPECT_EQ(s2->header.message_number, 500u);  // §3.2: the Request's number
    EXPECT_EQ(s2->header.data_offset, 0u);
    EXPECT_FALSE(s2->rdma);
    const auto b1 = resp.receive();
    ASSERT_TRUE(b1) << resp.why;
    EXPECT_EQ(*b1, tagged_ulpdu(ddp::opcode::read_response, 0x77, 0x5000, false, payload_of(1500, 1)));
    const auto s3 = resp.send(r2);
    ASSERT_TRUE(s3);
    EXPECT_EQ(s3->header.data_offset, 1500u);
    EXPECT_TRUE(s3->header.eom);
    const auto b2 = resp.receive();
    ASSERT_TRUE(b2) << resp.why;
    EXPECT_EQ(*b2, tagged_ulpdu(ddp::opcode::read_response, 0x77, 0x5000 + 1500, true, payload_of(1500, 3)));
    EXPECT_TRUE(resp.rx.tx_read_requests.empty());  // answered
    EXPECT_TRUE(resp.tx.rx_read_requests.empty());
    ASSERT_TRUE(resp.send(send_b));
    ASSERT_TRUE(resp.receive()) << resp.why;
}

// RFC 7306 Immediate Data (what closes an RDMA Write with Immediate) travels as VI's RDMA Write with
// immediate data: a zero-length RdmaWrite with Immediate Data Valid (§3.2); the receiver hands the
// RDMA engine the Immediate Data message again, numbered on the Send queue.
TEST(ViTcpMap, ImmediateDataRidesAZeroLengthRdmaWriteWithImmediateDataValid) {
    link l(true);
    ddp::header h;
    h.opcode = ddp::opcode::immediate;
    h.queue = ddp::kQueueSend;
    h.msn = 1;
    bytes imm(ddp::kImmediateDataSize);
    ddp::encode_immediate(0x12345678, imm.data());
    const bytes u = ddp_segment(h, imm);
    const auto s = l.send(u);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->header.type, vt::segment_type::rdma_write);
    EXPECT_TRUE(s->header.immediate_valid);
    EXPECT_EQ(s->header.immediate_data, 0x12345678u);
    EXPECT_TRUE(s->payload.empty());
    EXPECT_EQ(l.wire.size(), 24u + 16 + 4);
    std::string err;
    const auto v = vt::parse(l.wire.data(), l.wire.size(), true, &err);
    ASSERT_TRUE(v) << err;
    bytes write, immediate;
    ASSERT_TRUE(accept_in_order(l.rx, *v, write, &l.why, &immediate)) << l.why;
    EXPECT_TRUE(write.empty());  // zero length: nothing to place
    EXPECT_EQ(immediate, u);
    // A 64-bit value has no VI form.
    ddp::encode_immediate(0x1'0000'0000ull, imm.data());
    vt::segment out;
    const bytes big = ddp_segment(h, imm);
    EXPECT_EQ(to_segment(l.tx, big.data(), big.size(), out), refusal::unsupported);
    // Without a place for it, the Immediate Data is refused, never dropped (§3.2 "must be delivered").
    session fresh;
    fresh.crc = true;
    EXPECT_FALSE(accept_in_order(fresh, *v, write, &l.why));
    EXPECT_NE(l.why.find("Immediate Data nobody takes"), std::string::npos) << l.why;
}

vt::segment_view view_of(const bytes& wire, bool crc = false) {
    std::string err;
    const auto v = vt::parse(wire.data(), wire.size(), crc, &err);
    EXPECT_TRUE(v) << err;
    return *v;
}

bytes seg_bytes(vt::segment_type t, std::uint32_t number, std::uint32_t offset, bool eom, std::size_t payload = 10) {
    vt::segment s;
    s.header.type = t;
    s.header.message_number = number;
    s.header.data_offset = offset;
    s.header.eom = eom;
    if (vt::has_rdma_header(t)) s.rdma = vt::rdma_header{0x1000, 5, static_cast<std::uint32_t>(payload)};
    if (vt::has_payload(t)) s.payload = payload_of(payload, 1);
    return vt::encode(s);
}

TEST(ViTcpMap, InOrderRulesRefuseWhatTheDraftForbids) {
    bytes u;
    std::string why;
    {
        session s;  // a second message starts while a Send is open (§2.2.2.2.3)
        ASSERT_TRUE(accept_in_order(s, view_of(seg_bytes(vt::segment_type::send, 7, 0, false)), u, &why));
        EXPECT_FALSE(accept_in_order(s, view_of(seg_bytes(vt::segment_type::rdma_write, 8, 0, true)), u, &why));
        EXPECT_NE(why.find("before message 7 ended"), std::string::npos) << why;
    }
    {
        session s;  // a gap in the Data Offsets
        ASSERT_TRUE(accept_in_order(s, view_of(seg_bytes(vt::segment_type::send, 7, 0, false)), u, &why));
        EXPECT_FALSE(accept_in_order(s, view_of(seg_bytes(vt::segment_type::send, 7, 20, true)), u, &why));
        EXPECT_NE(why.find("Data Offset 20, expected 10"), std::string::npos) << why;
    }
    {
        session s;  // a skipped message number
        ASSERT_TRUE(accept_in_order(s, view_of(seg_bytes(vt::segment_type::send, 7, 0, true)), u, &why));
        EXPECT_FALSE(accept_in_order(s, view_of(seg_bytes(vt::segment_type::send, 9, 0, true)), u, &why));
        EXPECT_NE(why.find("expected message number 8"), std::string::npos) << why;
    }
    {
        session s;  // a first segment with a non-zero Data Offset
        EXPECT_FALSE(accept_in_order(s, view_of(seg_bytes(vt::segment_type::send, 7, 5, true)), u, &why));
    }
    {
        session s;  // a Read Response nobody asked for
        EXPECT_FALSE(accept_in_order(s, view_of(seg_bytes(vt::segment_type::read_response, 7, 0, true)), u, &why));
        EXPECT_NE(why.find("outstanding"), std::string::npos) << why;
    }
    {
        session s;  // a CE segment after establishment
        vt::segment ce;
        ce.header.type = vt::segment_type::connect_reject;
        EXPECT_FALSE(accept_in_order(s, view_of(vt::encode(ce)), u, &why));
    }
    {
        session s;  // NOP: carries nothing, changes no sequence
        vt::segment nop;
        nop.header.type = vt::segment_type::nop;
        nop.header.message_number = 12345;
        ASSERT_TRUE(accept_in_order(s, view_of(vt::encode(nop)), u, &why));
        EXPECT_TRUE(u.empty());
        EXPECT_FALSE(s.rx_started);
    }
}

TEST(ViTcpMap, ReadRequestsBeyondTheNegotiatedWindowAreAnError) {
    session s;
    s.read_window = 2;
    bytes u;
    std::string why;
    for (std::uint32_t n = 0; n < 2; ++n) {
        ASSERT_TRUE(accept_in_order(s, view_of(seg_bytes(vt::segment_type::read_request, n, 0, true, 0)), u, &why))
            << why;
    }
    EXPECT_FALSE(accept_in_order(s, view_of(seg_bytes(vt::segment_type::read_request, 2, 0, true, 0)), u, &why));
    EXPECT_NE(why.find("RDMA Read Window of 2"), std::string::npos) << why;
    // Answering one frees a place.
    session again;
    again.read_window = 1;
    ASSERT_TRUE(accept_in_order(again, view_of(seg_bytes(vt::segment_type::read_request, 0, 0, true, 0)), u, &why));
    vt::segment out;
    const bytes r = tagged_ulpdu(ddp::opcode::read_response, 0, 0, true, payload_of(8, 0));
    ASSERT_EQ(to_segment(again, r.data(), r.size(), out), refusal::none);
    EXPECT_TRUE(accept_in_order(again, view_of(seg_bytes(vt::segment_type::read_request, 1, 0, true, 0)), u, &why))
        << why;
}

TEST(ViTcpMap, WhatVitcpCannotCarryIsRefusedAndChangesNothing) {
    session s;
    s.tx_next_message = 42;
    vt::segment out;
    auto refuse = [&](const bytes& u) { return to_segment(s, u.data(), u.size(), out); };
    ddp::header se;
    se.opcode = ddp::opcode::send_se;
    se.queue = 0;
    EXPECT_EQ(refuse(ddp_segment(se, {})), refusal::unsupported);
    ddp::header inv = se;
    inv.opcode = ddp::opcode::send;
    inv.invalidate_stag = 5;  // RsvdULP / Invalidate STag: no VI field
    EXPECT_EQ(refuse(ddp_segment(inv, {})), refusal::unsupported);
    ddp::header term = se;
    term.opcode = ddp::opcode::terminate;
    term.queue = ddp::kQueueTerminate;
    EXPECT_EQ(refuse(ddp_segment(term, payload_of(28, 0))), refusal::unsupported);
    ddp::header atomic = se;
    atomic.opcode = ddp::opcode::atomic_request;
    atomic.queue = 1;
    EXPECT_EQ(refuse(ddp_segment(atomic, payload_of(52, 0))), refusal::unsupported);
    ddp::header q9 = se;
    q9.opcode = ddp::opcode::send;
    q9.queue = 9;
    EXPECT_EQ(refuse(ddp_segment(q9, {})), refusal::unknown_queue);
    bytes short_rr = read_request_ulpdu(1, 1, 1, 1, 1, 1);
    short_rr.pop_back();
    EXPECT_EQ(refuse(short_rr), refusal::bad_read_request);
    EXPECT_EQ(refuse(tagged_ulpdu(ddp::opcode::read_response, 0, 0, true, {})), refusal::no_read_request);
    EXPECT_EQ(refuse(bytes{0x80, 0x40, 0}), refusal::truncated);
    EXPECT_EQ(refuse(tagged_ulpdu(ddp::opcode::rdma_write, 1, 0, true, bytes(65535 - 40 + 1, 0))), refusal::too_long);
    EXPECT_EQ(refuse(tagged_ulpdu(ddp::opcode::send, 1, 0, true, {})), refusal::unsupported);  // tagged Send
    EXPECT_EQ(s.tx_next_message, 42u);
    EXPECT_TRUE(s.tx_read_requests.empty());
    EXPECT_FALSE(s.tx_send_open);
}

TEST(ViTcpMap, CrcOptionPutsATrailerOnEverySegmentAndCatchesDamage) {
    link l(true);
    const bytes u = send_ulpdu(1, 0, true, payload_of(200, 5));
    ASSERT_TRUE(l.send(u));
    EXPECT_EQ(l.wire.size(), 24u + 200 + 4);
    bytes bad = l.wire;
    bad[100] ^= 0x01;
    std::string err;
    vt::error_code code = vt::error_code::none;
    EXPECT_FALSE(vt::parse(bad.data(), bad.size(), true, &err, &code));
    EXPECT_EQ(code, vt::error_code::crc_mismatch);
    EXPECT_TRUE(l.receive());
}

TEST(ViTcpMap, RetransmissionPaddingKeepsSizeAndSetsTransmitError) {
    for (const bool crc : {false, true}) {
        link l(crc);
        const bytes u = tagged_ulpdu(ddp::opcode::rdma_write, 9, 0x40, true, payload_of(300, 7));
        ASSERT_TRUE(l.send(u));
        const bytes original = l.wire;
        const bytes padded = pad_for_retransmission(original.data(), original.size(), crc);
        ASSERT_EQ(padded.size(), original.size()) << crc;  // "maintaining the correct size"
        EXPECT_EQ(padded[1], original[1] | 0x20);          // Transmit Error, Type/Flags bit 5
        EXPECT_TRUE(std::equal(padded.begin() + 2, padded.begin() + 40, original.begin() + 2));  // headers
        for (std::size_t i = 40; i < 340; ++i) ASSERT_EQ(padded[i], 0) << i;
        std::string err;
        const auto v = vt::parse(padded.data(), padded.size(), crc, &err);  // a valid segment, good CRC
        ASSERT_TRUE(v) << err;
        EXPECT_TRUE(v->header.transmit_error);
        bytes ulpdu;
        std::string why;
        EXPECT_FALSE(accept_in_order(l.rx, *v, ulpdu, &why));  // §3.2: the whole message in error
        EXPECT_NE(why.find("Transmit Error"), std::string::npos) << why;
    }
    EXPECT_TRUE(pad_for_retransmission(nullptr, 0, false).empty());
    const bytes junk(30, 0xEE);
    EXPECT_TRUE(pad_for_retransmission(junk.data(), junk.size(), false).empty());
}

}  // namespace
}  // namespace rnic::proto::vitcp_map

namespace rnic::proto::vitcp_map {
namespace {

// Bad input never crashes: every segment the codec accepts from damaged good segments goes
// through the in-order rules (which may refuse it, naming why), and every ULPDU, even junk, through
// to_segment (which may refuse it).
TEST(ViTcpMap, DamagedSegmentsAndJunkUlpdusNeverCrash) {
    std::mt19937_64 rng(7);
    link l(true);
    std::vector<bytes> good;
    for (std::uint32_t i = 0; i < 4; ++i) {
        ASSERT_TRUE(l.send(send_ulpdu(1, 100 * i, i == 3, payload_of(100, 1))));
        good.push_back(l.wire);
    }
    ASSERT_TRUE(l.send(read_request_ulpdu(1, 1, 2, 3, 4, 5)));
    good.push_back(l.wire);
    std::size_t refused = 0;
    for (int i = 0; i < 5000; ++i) {
        bytes seg = good[rng() % good.size()];
        seg[rng() % seg.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        const auto v = vt::parse(seg.data(), seg.size(), /*crc_negotiated=*/false, nullptr);  // CRC not checked
        if (!v) continue;
        session s;
        bytes ulpdu;
        std::string why;
        if (!accept_in_order(s, *v, ulpdu, &why)) {
            EXPECT_FALSE(why.empty());
            ++refused;
        }
        bytes junk(rng() % 80);
        for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
        session tx;
        vt::segment out;
        (void)to_segment(tx, junk.data(), junk.size(), out);
    }
    EXPECT_GT(refused, 0u);
}

}  // namespace
}  // namespace rnic::proto::vitcp_map
