// RDMA/TCP (seed 000) behind the framing interface, by plain calls (no SystemC time): two framings
// stand for the two NICs of one connection. Every DDP/RDMAP message type the platform sends becomes
// the seed's segment type (§3.1-§3.3) with the Connection ID, message numbers, order, padding and
// CRC the codec checks, and comes back as the same ULPDU; the receive side rejects bad CRCs, bad
// lengths, foreign Connection IDs and messages out of sequence; §5's out-of-order candidates are
// placed only when the header, Connection ID, message number and CRC pass and the order field
// allows it, and are left to buffering otherwise.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "framing/framing_factory.h"
#include "framing/rdmatcp_framing.h"
#include "proto/ddp_rdmap.h"
#include "proto/seeds/rdmatcp.h"

namespace rnic::test {
namespace {

namespace ddp = proto::ddp;
namespace rt = proto::rdmatcp;
using bytes = std::vector<std::uint8_t>;

constexpr std::uint32_t kConn = 3;

bytes patterned(std::size_t n, std::uint8_t seed) {
    bytes b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 13);
    return b;
}

bytes ulpdu(const ddp::header& h, const bytes& payload) {
    bytes u(h.size());
    ddp::encode(h, u.data());
    u.insert(u.end(), payload.begin(), payload.end());
    return u;
}

bytes tagged_ulpdu(ddp::opcode op, std::uint32_t stag, std::size_t n, std::uint64_t to, bool last, std::uint8_t seed) {
    ddp::header h;
    h.tagged = true;
    h.last = last;
    h.opcode = op;
    h.stag = stag;
    h.tagged_offset = to;
    return ulpdu(h, patterned(n, seed));
}

bytes write_ulpdu(std::size_t n, std::uint64_t to, bool last = true, std::uint8_t seed = 1) {
    return tagged_ulpdu(ddp::opcode::rdma_write, 0xA1B2C3D4, n, to, last, seed);
}

bytes send_ulpdu(std::size_t n, std::uint32_t msn, std::uint32_t mo, bool last, ddp::opcode op = ddp::opcode::send,
                 std::uint32_t inv = 0, std::uint8_t seed = 2) {
    ddp::header h;
    h.last = last;
    h.opcode = op;
    h.invalidate_stag = inv;
    h.queue = ddp::kQueueSend;
    h.msn = msn;
    h.mo = mo;
    return ulpdu(h, patterned(n, seed));
}

bytes read_request_ulpdu(std::uint32_t msn) {
    ddp::header h;
    h.opcode = ddp::opcode::read_request;
    h.queue = ddp::kQueueReadRequest;
    h.msn = msn;
    ddp::read_request rr;
    rr.sink_stag = 0x11223344;
    rr.sink_to = 0x0102030405060708ull;
    rr.size = 3000;
    rr.src_stag = 0x55667788;
    rr.src_to = 0x8877665544332211ull;
    bytes body(ddp::kReadRequestSize);
    ddp::encode(rr, body.data());
    return ulpdu(h, body);
}

bytes read_response_ulpdu(std::size_t n, std::uint64_t to, bool last, std::uint8_t seed = 3) {
    return tagged_ulpdu(ddp::opcode::read_response, 0x11223344, n, to, last, seed);  // the sink STag
}

bytes terminate_ulpdu() {
    ddp::header h;
    h.opcode = ddp::opcode::terminate;
    h.queue = ddp::kQueueTerminate;
    h.msn = 1;
    return ulpdu(h, bytes(28, 0));
}

framing_params params(std::uint64_t seed) {
    framing_params p;
    p.kind = framing_kind::rdmatcp;
    p.seed = seed;
    return p;
}

frame_options opts() {
    frame_options o;
    o.conn = kConn;
    o.markers = false;
    return o;
}

// One NIC's side of the connection: its framing, its in-order deframer, what it received.
struct side {
    explicit side(std::uint64_t seed) : f(make_framing(params(seed))) {
        deframer = f->make_deframer(opts(), [this](const std::uint8_t* u, std::size_t n, const datapath_cycles&) {
            got.emplace_back(u, u + n);
        });
    }
    bytes send(const bytes& u) {
        bytes out;
        f->build(u.data(), u.size(), opts(), pos, out);
        pos += static_cast<std::uint32_t>(out.size());
        return out;
    }
    const proto::rdmatcp_map::session& session() const {
        return *static_cast<const rdmatcp_framing&>(*f).session_of(kConn);
    }
    std::unique_ptr<framing> f;
    std::unique_ptr<frame_deframer> deframer;
    std::vector<bytes> got;
    std::uint32_t pos = 0;
};

rt::segment_view parsed(const bytes& wire) {
    std::string error;
    const auto v = rt::parse(wire.data(), wire.size(), &error);
    EXPECT_TRUE(v) << error;
    return v ? *v : rt::segment_view{};
}

TEST(RdmaTcpFramingIf, EveryMessageTypeIsTheSeedsSegmentAndComesBackAsTheSameUlpdu) {
    side a(1), b(2);  // a: the MPA Initiator, sends first
    // RDMA Write -> RDMA_Write (§3.2), one message per DDP segment.
    const bytes w = write_ulpdu(1001, 0x123456789ABCull);
    const bytes ww = a.send(w);
    EXPECT_EQ(ww.size(), a.f->wire_length(w.size(), opts(), 0));
    EXPECT_EQ(ww.size() % 4, 0u);  // §3.4 padding
    rt::segment_view v = parsed(ww);
    EXPECT_EQ(v.header.type, rt::message_type::rdma_write);
    EXPECT_TRUE(v.header.begin && v.header.end);
    EXPECT_EQ(v.header.buffer_id, 0xA1B2C3D4u);
    EXPECT_EQ(v.header.buffer_offset, 0x56789ABCu);
    EXPECT_EQ(v.header.rdma_length, 1001u);
    EXPECT_EQ(v.header.order, rt::kOrderUnconditional);
    EXPECT_EQ(v.payload_len, 1001u);
    const std::uint64_t id = v.header.connection_id;
    EXPECT_EQ(*a.session().connection_id, id);
    const std::uint32_t first = v.header.message_number;

    // Send in two DDP segments -> one Send message of two segments (§3.1): B, E, Data Offset = MO.
    const bytes s1 = a.send(send_ulpdu(600, 7, 0, false, ddp::opcode::send_se_invalidate, 0xCAFE));
    const bytes s2 = a.send(send_ulpdu(300, 7, 600, true, ddp::opcode::send_se_invalidate, 0xCAFE));
    v = parsed(s1);
    EXPECT_EQ(v.header.type, rt::message_type::send);
    EXPECT_TRUE(v.header.begin && !v.header.end);
    EXPECT_EQ(v.header.data_offset, 0u);
    EXPECT_EQ(v.header.order, 0u);
    EXPECT_EQ(v.header.message_number, first + 1);
    EXPECT_EQ(v.header.connection_id, id);
    v = parsed(s2);
    EXPECT_TRUE(!v.header.begin && v.header.end);
    EXPECT_EQ(v.header.data_offset, 600u);
    EXPECT_EQ(v.header.message_number, first + 1);  // all segments of a message carry its number

    // RDMA Read Request -> RDMA_Read_Request (§3.3): one segment, no payload, Buffer = source.
    const bytes rq = a.send(read_request_ulpdu(1));
    v = parsed(rq);
    EXPECT_EQ(v.header.type, rt::message_type::read_request);
    EXPECT_EQ(v.payload_len, 0u);
    EXPECT_EQ(v.header.buffer_id, 0x55667788u);
    EXPECT_EQ(v.header.buffer_offset, 0x44332211u);
    EXPECT_EQ(v.header.rdma_length, 3000u);
    EXPECT_EQ(v.header.message_number, first + 2);  // one sequence for Send, Write, Read Request

    // b receives all of it in arbitrary chunks, learns the Connection ID, gets the same ULPDUs.
    bytes stream;
    for (const bytes* s : {&ww, &s1, &s2, &rq}) stream.insert(stream.end(), s->begin(), s->end());
    for (std::size_t at = 0; at < stream.size(); at += 7) {
        ASSERT_EQ(b.deframer->feed(stream.data() + at, std::min<std::size_t>(7, stream.size() - at)),
                  deframe_status::ok)
            << b.deframer->error_name() << ": " << b.deframer->error_detail();
    }
    ASSERT_EQ(b.got.size(), 4u);
    EXPECT_EQ(b.got[0], w);
    EXPECT_EQ(b.got[1], send_ulpdu(600, 7, 0, false, ddp::opcode::send_se_invalidate, 0xCAFE));
    EXPECT_EQ(b.got[2], send_ulpdu(300, 7, 600, true, ddp::opcode::send_se_invalidate, 0xCAFE));
    EXPECT_EQ(b.got[3], read_request_ulpdu(1));
    EXPECT_EQ(*b.session().connection_id, id);

    // b answers: RDMA Read Response -> RDMA_Read_Response (§3.1) carrying the request's number,
    // under a's Connection ID (§3.4: the same value in both directions).
    const bytes r1 = b.send(read_response_ulpdu(1400, 0x0102030405060708ull, false));
    const bytes r2 = b.send(read_response_ulpdu(1600, 0x0102030405060708ull + 1400, true));
    v = parsed(r1);
    EXPECT_EQ(v.header.type, rt::message_type::read_response);
    EXPECT_EQ(v.header.connection_id, id);
    EXPECT_EQ(v.header.message_number, first + 2);
    EXPECT_TRUE(v.header.begin && !v.header.end);
    EXPECT_EQ(v.header.data_offset, 0u);
    v = parsed(r2);
    EXPECT_EQ(v.header.message_number, first + 2);
    EXPECT_EQ(v.header.data_offset, 1400u);
    EXPECT_TRUE(!v.header.begin && v.header.end);
    // b's own sequence starts elsewhere (its own random start); a Terminate is a Send message.
    const bytes t = b.send(terminate_ulpdu());
    EXPECT_EQ(parsed(t).header.type, rt::message_type::send);
    bytes back = r1;
    back.insert(back.end(), r2.begin(), r2.end());
    back.insert(back.end(), t.begin(), t.end());
    ASSERT_EQ(a.deframer->feed(back.data(), back.size()), deframe_status::ok) << a.deframer->error_detail();
    ASSERT_EQ(a.got.size(), 3u);
    EXPECT_EQ(a.got[0], read_response_ulpdu(1400, 0x0102030405060708ull, false));
    EXPECT_EQ(a.got[1], read_response_ulpdu(1600, 0x0102030405060708ull + 1400, true));
    EXPECT_EQ(a.got[2], terminate_ulpdu());
    EXPECT_TRUE(a.session().tx_read_requests.empty());
}

TEST(RdmaTcpFramingIf, ReframeGivesTheBytesBuildGave) {
    side a(1);
    std::vector<std::pair<bytes, bytes>> sent;  // ULPDU, frame
    std::vector<std::uint32_t> at;
    for (const bytes& u : {write_ulpdu(10, 0), send_ulpdu(100, 1, 0, false), send_ulpdu(7, 1, 100, true),
                           read_request_ulpdu(1), write_ulpdu(3, 99)}) {
        at.push_back(a.pos);
        sent.emplace_back(u, a.send(u));
    }
    for (std::size_t i = 0; i < sent.size(); ++i) {
        bytes again;
        a.f->reframe(sent[i].first.data(), sent[i].first.size(), opts(), at[i], again);
        EXPECT_EQ(again, sent[i].second) << i;
    }
}

TEST(RdmaTcpFramingIf, SettlesWithoutMarkersWithTheCrcAndAFramePerSegment) {
    const std::unique_ptr<framing> f = make_framing(params(1));
    mpa_settings n;
    n.tx_markers = n.rx_markers = true;
    n.crc = false;
    n.max_ulpdu = 1454;  // RFC 5044 §6 at EMSS 1460
    const mpa_settings s = f->settle(n);
    EXPECT_FALSE(s.tx_markers || s.rx_markers);
    EXPECT_TRUE(s.crc);
    EXPECT_EQ(s.max_ulpdu, 1430u);
    EXPECT_EQ(f->wire_length(s.max_ulpdu, opts(), 0), 1460u);  // exactly one TCP segment (§2)
    for (std::size_t len = 14; len < 200; ++len) EXPECT_LE(f->wire_length(len, opts(), 0), len + f->tx_room(len));
    EXPECT_FALSE(f->locates_frames());
    EXPECT_EQ(f->split_frame_reach(opts()), 0u);
}

TEST(RdmaTcpFramingIf, AtomicsAndUnanswerableResponsesAreRefusedWithAName) {
    side a(1);
    ddp::header h;
    h.opcode = ddp::opcode::atomic_request;
    h.queue = ddp::kQueueReadRequest;
    bytes out;
    const bytes atomic = ulpdu(h, bytes(ddp::kAtomicRequestSize, 0));
    a.f->build(atomic.data(), atomic.size(), opts(), 0, out);
    EXPECT_TRUE(out.empty());
    const auto& r = static_cast<const rdmatcp_framing&>(*a.f);
    EXPECT_EQ(r.last_refusal(), proto::rdmatcp_map::refusal::atomic);
    h.opcode = ddp::opcode::atomic_response;
    h.queue = ddp::kQueueAtomicResponse;
    const bytes aresp = ulpdu(h, bytes(ddp::kAtomicResponseSize, 0));
    a.f->build(aresp.data(), aresp.size(), opts(), 0, out);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(r.last_refusal(), proto::rdmatcp_map::refusal::atomic);
    const bytes resp = read_response_ulpdu(10, 0, true);
    a.f->build(resp.data(), resp.size(), opts(), 0, out);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(r.last_refusal(), proto::rdmatcp_map::refusal::no_read_request);
    const bytes shorty(5, 0);
    a.f->build(shorty.data(), shorty.size(), opts(), 0, out);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(r.last_refusal(), proto::rdmatcp_map::refusal::truncated);
    // Nothing refused moved the numbering: the next message is the first.
    const bytes w = a.send(write_ulpdu(4, 0));
    EXPECT_EQ(parsed(w).header.message_number, a.session().tx_next_message - 1);
}

// The receive side's checks: each damage is named and stops the stream.
struct damaged_case {
    const char* what;
    std::size_t at;
    std::uint8_t xor_mask;
    deframe_status want;
    const char* name_has;
};

TEST(RdmaTcpFramingIf, InOrderReceiveRejectsBadCrcLengthVersionAndConnectionId) {
    side a(1);
    const bytes w = a.send(write_ulpdu(100, 0));
    const std::vector<damaged_case> cases = {
        {"payload bit", 60, 0x01, deframe_status::crc_error, "crc_mismatch"},
        {"CRC byte", w.size() - 1, 0x80, deframe_status::crc_error, "crc_mismatch"},
        {"version", 0, 0x03, deframe_status::framing_error, "bad_version"},
        {"segment length below the header", 3, 0x9C, deframe_status::framing_error, "length_too_short"},  // 140 -> 16
        {"connection id", 8, 0x10, deframe_status::crc_error, "crc_mismatch"},  // the CRC covers it
    };
    for (const damaged_case& c : cases) {
        side b(2);
        bytes bad = w;
        bad[c.at] ^= c.xor_mask;
        EXPECT_EQ(b.deframer->feed(bad.data(), bad.size()), c.want) << c.what;
        EXPECT_NE(b.deframer->error_name().find(c.name_has), std::string::npos)
            << c.what << ": " << b.deframer->error_name();
        EXPECT_TRUE(b.got.empty()) << c.what;
        EXPECT_EQ(b.deframer->feed(w.data(), w.size()), deframe_status::framing_error) << c.what << ": stays failed";
    }
    // A well-formed segment (good CRC) under another Connection ID than the one learned (§3.4).
    side b(2);
    ASSERT_EQ(b.deframer->feed(w.data(), w.size()), deframe_status::ok);
    side other(77);
    const bytes foreign = other.send(write_ulpdu(100, 0));
    EXPECT_EQ(b.deframer->feed(foreign.data(), foreign.size()), deframe_status::framing_error);
    EXPECT_EQ(b.deframer->error_name(), "RDMA/TCP connection_id_mismatch");
    EXPECT_EQ(b.got.size(), 1u);
}

TEST(RdmaTcpFramingIf, InOrderReceiveHoldsTheMessageSequence) {
    side a(1);
    const bytes m0 = a.send(write_ulpdu(10, 0));
    const bytes m1 = a.send(write_ulpdu(10, 10));
    const bytes m2 = a.send(send_ulpdu(10, 1, 0, true));
    {
        side b(2);  // m1 lost: m2 carries the wrong number
        ASSERT_EQ(b.deframer->feed(m0.data(), m0.size()), deframe_status::ok);
        EXPECT_EQ(b.deframer->feed(m2.data(), m2.size()), deframe_status::framing_error);
        EXPECT_EQ(b.deframer->error_name(), "RDMA/TCP message order");
        EXPECT_NE(b.deframer->error_detail().find("expected"), std::string::npos) << b.deframer->error_detail();
    }
    {
        side b(2);  // a Send segment continuing a message that never began
        ASSERT_EQ(b.deframer->feed(m0.data(), m0.size()), deframe_status::ok);
        ASSERT_EQ(b.deframer->feed(m1.data(), m1.size()), deframe_status::ok);
        side a2(1);
        a2.send(write_ulpdu(10, 0));
        a2.send(write_ulpdu(10, 10));
        const bytes cont = a2.send(send_ulpdu(10, 1, 40, true));  // MO 40: B clear
        EXPECT_EQ(b.deframer->feed(cont.data(), cont.size()), deframe_status::framing_error);
        EXPECT_NE(b.deframer->error_detail().find("never began"), std::string::npos) << b.deframer->error_detail();
    }
    {
        // A Terminate cuts into an open Send (the QP failed mid-message): delivered, the stream ends.
        side x(1), y(2);
        const bytes open_send = x.send(send_ulpdu(100, 1, 0, false));
        const bytes term = x.send(terminate_ulpdu());
        ASSERT_EQ(y.deframer->feed(open_send.data(), open_send.size()), deframe_status::ok);
        EXPECT_EQ(y.deframer->feed(term.data(), term.size()), deframe_status::ok) << y.deframer->error_detail();
        ASSERT_EQ(y.got.size(), 2u);
        EXPECT_EQ(y.got[1], terminate_ulpdu());
        // Any other message there is out of order (§4).
        side z(2);
        side x2(1);
        const bytes open2 = x2.send(send_ulpdu(100, 1, 0, false));
        const bytes w = x2.send(write_ulpdu(10, 0));
        ASSERT_EQ(z.deframer->feed(open2.data(), open2.size()), deframe_status::ok);
        EXPECT_EQ(z.deframer->feed(w.data(), w.size()), deframe_status::framing_error);
        EXPECT_NE(z.deframer->error_detail().find("before Send message"), std::string::npos)
            << z.deframer->error_detail();
    }
    {
        // A Read Response that answers none of our Read Requests (§3.4).
        side x(1), y(2), z(5);
        const bytes rq = x.send(read_request_ulpdu(1));
        ASSERT_EQ(y.deframer->feed(rq.data(), rq.size()), deframe_status::ok);
        const bytes resp = y.send(read_response_ulpdu(10, 0, true));
        ASSERT_EQ(x.deframer->feed(resp.data(), resp.size()), deframe_status::ok);
        EXPECT_EQ(z.deframer->feed(resp.data(), resp.size()), deframe_status::framing_error);
        EXPECT_NE(z.deframer->error_detail().find("outstanding"), std::string::npos) << z.deframer->error_detail();
    }
}

TEST(RdmaTcpFramingIf, ControlDataThatDoesNotFitTheTypeIsAFramingError) {
    // A well-formed seed segment (good CRC) whose Control Data is not what the type carries.
    side b(2);
    rt::header h;
    h.type = rt::message_type::rdma_write;
    h.connection_id = 42;
    h.rdma_length = 4;
    const std::uint8_t control[4] = {0x80 | 0x40 | 0x01, 0x40 | 0x00, 0, 0};  // CLEN 1, not 2
    const std::uint8_t payload[4] = {1, 2, 3, 4};
    bytes wire;
    ASSERT_TRUE(rt::encode(h, control, sizeof control, payload, sizeof payload, wire));
    EXPECT_EQ(b.deframer->feed(wire.data(), wire.size()), deframe_status::framing_error);
    EXPECT_EQ(b.deframer->error_name(), "RDMA/TCP control data");
    EXPECT_TRUE(b.got.empty());
}

// ---- §5, out of order on the aligned receive path ---------------------------------------------

struct ooo_result {
    bool frame = false;
    std::vector<bytes> placed;
};

ooo_result offer(side& s, std::uint32_t pos, const std::uint8_t* data, std::size_t len) {
    ooo_result r;
    r.frame = s.f->deframe_whole(
        opts(), pos, data, len,
        [&](const std::uint8_t* u, std::size_t n, const datapath_cycles&) { r.placed.emplace_back(u, u + n); });
    return r;
}

TEST(RdmaTcpFramingOoo, PlacesAlignedWritesAndReadResponsesThatPassEveryCheck) {
    side a(1), b(2);
    const bytes first = a.send(write_ulpdu(100, 0));
    ASSERT_EQ(b.deframer->feed(first.data(), first.size()), deframe_status::ok);  // b knows the ID now
    const std::uint32_t lost_at = a.pos;
    const bytes lost = a.send(write_ulpdu(1000, 100));
    const std::uint32_t w_at = a.pos;
    const bytes w = a.send(write_ulpdu(1000, 1100));
    const bytes w2 = a.send(write_ulpdu(500, 2100));
    // One TCP segment carrying two whole segments after a loss: both placed (§5 "aligned").
    bytes seg = w;
    seg.insert(seg.end(), w2.begin(), w2.end());
    ooo_result r = offer(b, w_at, seg.data(), seg.size());
    EXPECT_TRUE(r.frame);
    ASSERT_EQ(r.placed.size(), 2u);
    EXPECT_EQ(r.placed[0], write_ulpdu(1000, 1100));
    EXPECT_EQ(r.placed[1], write_ulpdu(500, 2100));
    // A trailing partial segment is left for the in-order path, not counted as a false candidate.
    r = offer(b, w_at, seg.data(), w.size() + 100);
    EXPECT_TRUE(r.frame);
    EXPECT_EQ(r.placed.size(), 1u);
    // The in-order state did not move: the lost segment and the rest still go through in order.
    bytes rest = lost;
    rest.insert(rest.end(), seg.begin(), seg.end());
    ASSERT_EQ(b.deframer->feed(rest.data(), rest.size()), deframe_status::ok) << b.deframer->error_detail();
    EXPECT_EQ(b.got.size(), 4u);
    EXPECT_EQ(lost_at + lost.size(), w_at);

    // b asks, a answers in three segments; the second is lost, the third is placed out of order
    // (its number is one of b's outstanding Read Requests).
    const bytes rq = b.send(read_request_ulpdu(1));
    ASSERT_EQ(a.deframer->feed(rq.data(), rq.size()), deframe_status::ok);
    const bytes r1 = a.send(read_response_ulpdu(100, 0x0102030405060708ull, false));
    a.send(read_response_ulpdu(100, 0x0102030405060708ull + 100, false));
    const std::uint32_t r3_at = a.pos;
    const bytes r3 = a.send(read_response_ulpdu(100, 0x0102030405060708ull + 200, true));
    ASSERT_EQ(b.deframer->feed(r1.data(), r1.size()), deframe_status::ok);
    r = offer(b, r3_at, r3.data(), r3.size());
    EXPECT_TRUE(r.frame);
    ASSERT_EQ(r.placed.size(), 1u);
    EXPECT_EQ(r.placed[0], read_response_ulpdu(100, 0x0102030405060708ull + 200, true));
    // The same segment once the request is answered: no outstanding request carries its number.
    side b2(2);
    ASSERT_EQ(b2.deframer->feed(first.data(), first.size()), deframe_status::ok);
    EXPECT_FALSE(offer(b2, r3_at, r3.data(), r3.size()).frame);
}

TEST(RdmaTcpFramingOoo, SendsAndReadRequestsWaitForTheirOrder) {
    side a(1), b(2);
    const bytes first = a.send(write_ulpdu(100, 0));
    ASSERT_EQ(b.deframer->feed(first.data(), first.size()), deframe_status::ok);
    a.send(write_ulpdu(100, 100));  // lost
    const std::uint32_t at = a.pos;
    const bytes s = a.send(send_ulpdu(100, 1, 0, true));
    ooo_result r = offer(b, at, s.data(), s.size());
    EXPECT_TRUE(r.frame);           // a good segment, not a false candidate ...
    EXPECT_TRUE(r.placed.empty());  // ... but order 0 (§3.4): processed only in order
    const std::uint32_t at2 = a.pos;
    const bytes rq = a.send(read_request_ulpdu(1));
    r = offer(b, at2, rq.data(), rq.size());
    EXPECT_TRUE(r.frame);
    EXPECT_TRUE(r.placed.empty());
}

TEST(RdmaTcpFramingOoo, FalseCandidatesGoToBuffering) {
    side a(1), b(2);
    const bytes first = a.send(write_ulpdu(100, 0));
    ASSERT_EQ(b.deframer->feed(first.data(), first.size()), deframe_status::ok);
    a.send(write_ulpdu(100, 100));  // lost
    const std::uint32_t at = a.pos;
    const bytes w = a.send(write_ulpdu(1200, 200, true, 9));
    // Re-segmented by a middlebox: the TCP segment starts inside an RDMA segment.
    for (const std::size_t cut : {4u, 8u, 40u, 44u, 400u, 1000u}) {
        const ooo_result r = offer(b, at + static_cast<std::uint32_t>(cut), w.data() + cut, w.size() - cut);
        EXPECT_FALSE(r.frame) << cut;
        EXPECT_TRUE(r.placed.empty()) << cut;
    }
    // A position that is not a multiple of 4 cannot start a segment (§5: every segment does).
    EXPECT_FALSE(offer(b, at + 2, w.data(), w.size()).frame);
    // A good CRC is required: a flipped payload bit.
    bytes bad = w;
    bad[100] ^= 4;
    EXPECT_FALSE(offer(b, at, bad.data(), bad.size()).frame);
    // Another connection's segment (the Connection ID, §5's decisive check).
    side other(99);
    const bytes foreign = other.send(write_ulpdu(1200, 200));
    EXPECT_FALSE(offer(b, at, foreign.data(), foreign.size()).frame);
    // A payload that is itself a whole valid segment of this connection, but from long ago: the
    // message-number check rejects it ("Checking the message number ... enhances the confidence").
    side a2(1);
    const bytes stale = a2.send(write_ulpdu(100, 0));  // a's first segment again: its number is used
    ASSERT_EQ(stale, first);
    EXPECT_FALSE(offer(b, at, stale.data(), stale.size()).frame);
    // And the real one passes.
    EXPECT_EQ(offer(b, at, w.data(), w.size()).placed.size(), 1u);
    // Random bytes.
    EXPECT_FALSE(offer(b, at, bytes(600, 0x5A).data(), 600).frame);
}

TEST(RdmaTcpFramingOoo, NothingIsPlacedBeforeTheConnectionIdIsKnown) {
    side a(1), b(2);
    a.send(write_ulpdu(100, 0));  // lost: b has received nothing
    const std::uint32_t at = a.pos;
    const bytes w = a.send(write_ulpdu(100, 100));
    EXPECT_FALSE(offer(b, at, w.data(), w.size()).frame);
}

TEST(RdmaTcpFramingIf, ARestartedConnectionStartsAFreshSession) {
    side a(1);
    const std::uint64_t id1 = parsed(a.send(write_ulpdu(4, 0))).header.connection_id;
    a.deframer = a.f->make_deframer(opts(), [](const std::uint8_t*, std::size_t, const datapath_cycles&) {});
    a.pos = 0;
    const std::uint64_t id2 = parsed(a.send(write_ulpdu(4, 0))).header.connection_id;
    EXPECT_NE(id1, id2);
}

TEST(RdmaTcpFramingIf, TheSameSeedGivesTheSameIdsAndNumbers) {
    side a(7), b(7), c(8);
    const bytes x = a.send(write_ulpdu(4, 0)), y = b.send(write_ulpdu(4, 0)), z = c.send(write_ulpdu(4, 0));
    EXPECT_EQ(x, y);
    EXPECT_NE(parsed(x).header.connection_id, parsed(z).header.connection_id);
}

TEST(RdmaTcpFramingIf, TheRtlDatapathIsMpaOnly) {
    framing_params p = params(1);
    p.model = datapath_model::rtl;
    EXPECT_THROW(make_framing(p), std::invalid_argument);
}

// Bad input never gets through: every single-bit flip of a stream of every type is caught (the
// CRC-32 finds all of them, or a damaged length leaves the deframer waiting), nothing damaged is
// delivered in order or placed out of order, and random bytes are refused without a crash.
TEST(RdmaTcpFramingIf, NoDamagedByteIsEverDeliveredOrPlaced) {
    side a(1);
    bytes stream;
    const std::vector<bytes> ulpdus = {write_ulpdu(33, 8), write_ulpdu(50, 41), send_ulpdu(21, 1, 0, true),
                                       read_request_ulpdu(2)};
    for (const bytes& u : ulpdus) {
        const bytes w = a.send(u);
        stream.insert(stream.end(), w.begin(), w.end());
    }
    auto is_original = [&](const bytes& u) {
        for (const bytes& o : ulpdus)
            if (o == u) return true;
        return false;
    };
    for (std::size_t byte = 0; byte < stream.size(); ++byte) {
        for (int bit = 0; bit < 8; ++bit) {
            bytes bad = stream;
            bad[byte] ^= static_cast<std::uint8_t>(1u << bit);
            side b(2);
            const deframe_status st = b.deframer->feed(bad.data(), bad.size());
            ASSERT_LT(b.got.size(), ulpdus.size()) << byte << "." << bit;  // the damaged one never arrives
            for (std::size_t i = 0; i < b.got.size(); ++i) ASSERT_EQ(b.got[i], ulpdus[i]) << byte << "." << bit;
            if (st != deframe_status::ok) {
                EXPECT_FALSE(b.deframer->error_name().empty());
            }
            // Out of order, after the first segment taught c the Connection ID: the second Write is
            // placed only when undamaged.
            side c(2);
            const std::size_t first = a.f->wire_length(ulpdus[0].size(), opts(), 0);
            ASSERT_EQ(c.deframer->feed(stream.data(), first), deframe_status::ok);
            const ooo_result r = offer(c, static_cast<std::uint32_t>(first), bad.data() + first, bad.size() - first);
            for (const bytes& u : r.placed) EXPECT_TRUE(is_original(u)) << byte << "." << bit;
            if (byte < first) {
                EXPECT_EQ(r.placed.size(), 1u);  // the damage lies before: the Write is good
            }
        }
    }
    std::uint32_t x = 12345;
    for (int round = 0; round < 200; ++round) {
        bytes junk(1 + round * 7);
        for (auto& v : junk) v = static_cast<std::uint8_t>((x = x * 1103515245u + 12345u) >> 24);
        if (round % 2 == 0) junk[0] = rt::kVersion;  // get past the Version check now and then
        side b(2);
        b.deframer->feed(junk.data(), junk.size());
        EXPECT_TRUE(b.got.empty());
        EXPECT_TRUE(offer(b, 0, junk.data(), junk.size()).placed.empty());
    }
}

}  // namespace
}  // namespace rnic::test
