// proto/stream_check.h: the capture checker behind rnic-pcap-check, fed in memory with captures
// built by capture_builder.h. Good captures must pass with exact counts; every kind of damage
// must be reported in its category.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "test_support.h"

namespace rnic::tools_test {
namespace {

using check::category;
using check::severity;
using ddp::opcode;

// The report's direction index for a sending side.
std::size_t dir_of(side side) {
    return side == k_initiator ? check::k_to_responder : check::k_to_initiator;
}

void expect_matches(const check::capture_report& r, const scenario& sc) {
    ASSERT_TRUE(r.ok()) << all_issues(r);
    ASSERT_EQ(r.connections.size(), sc.connections.size());
    for (std::size_t i = 0; i < sc.connections.size(); ++i) {
        SCOPED_TRACE("connection " + std::to_string(i + 1));
        const check::connection_report& c = r.connections[i];
        const written_connection& w = sc.connections[i];
        EXPECT_EQ(c.initiator_ip, 0x0a000001u);
        EXPECT_EQ(c.responder_ip, 0x0a000002u);
        EXPECT_EQ(c.initiator_port, w.initiator_port);
        EXPECT_EQ(c.responder_port, w.responder_port);
        EXPECT_TRUE(c.roles_from_mpa);
        EXPECT_TRUE(c.negotiated);
        EXPECT_FALSE(c.rejected);
        EXPECT_EQ(c.revision, w.revision);
        EXPECT_EQ(c.crc, w.crc);
        for (const side side : {k_initiator, k_responder}) {
            SCOPED_TRACE(side == k_initiator ? "initiator -> responder" : "responder -> initiator");
            const check::direction_report& d = c.directions[dir_of(side)];
            EXPECT_TRUE(d.full_operation);
            EXPECT_EQ(d.markers, w.markers[side]);
            EXPECT_EQ(d.fpdus, w.opcodes[side].size());
            EXPECT_EQ(d.opcode_sequence, w.opcodes[side]);
            EXPECT_EQ(std::accumulate(d.opcodes.begin(), d.opcodes.end(), std::uint64_t{0}), d.fpdus);
            EXPECT_EQ(d.bad_crcs + d.framing_errors + d.header_errors + d.tcp_errors, 0u);
            EXPECT_EQ(d.missing_bytes, 0u);
            EXPECT_EQ(d.unchecked_bytes, 0u);
            EXPECT_TRUE(d.fin);
        }
    }
}

std::uint64_t count_op(const check::direction_report& d, opcode op) {
    return d.opcodes[static_cast<std::size_t>(op)];
}

// ---- good captures

TEST(StreamCheck, AllOpcodesRevision1) {
    const scenario sc = all_opcodes_rev1();
    const auto r = check_capture(sc.capture);
    expect_matches(r, sc);
    const auto& to_resp = r.connections[0].directions[check::k_to_responder];
    const auto& to_init = r.connections[0].directions[check::k_to_initiator];
    // Every opcode of RFC 5040 and RFC 7306 appears.
    for (unsigned op = 0; op <= static_cast<unsigned>(opcode::atomic_response); ++op)
        EXPECT_GT(to_resp.opcodes[op] + to_init.opcodes[op], 0u) << "opcode " << op;
    EXPECT_EQ(count_op(to_resp, opcode::rdma_write), 3u);
    EXPECT_EQ(count_op(to_resp, opcode::send), 4u);  // "hello iwarp!" and the 3-segment message
    EXPECT_EQ(to_resp.atomic_fetch_add, 1u);
    EXPECT_EQ(to_resp.atomic_compare_swap, 1u);
    EXPECT_EQ(to_resp.messages, 12u);  // 15 FPDUs, 3 of them not last (Write 1, Send 2)
    EXPECT_EQ(count_op(to_init, opcode::read_response), 2u);
    EXPECT_EQ(count_op(to_init, opcode::atomic_response), 2u);
    ASSERT_EQ(to_init.terminates.size(), 1u);
    EXPECT_NE(to_init.terminates[0].find("layer LLP (2), error type 0x0, error code 0x02 (MPA CRC error)"),
              std::string::npos)
        << to_init.terminates[0];
    ASSERT_TRUE(r.connections[0].request.has_value());
    EXPECT_EQ(std::string(r.connections[0].request->private_data.begin(), r.connections[0].request->private_data.end()),
              "rnic-vp");
    // Stream accounting: everything after the Request (20 + 7 bytes) or the Reply is FPDUs.
    EXPECT_EQ(to_resp.stream_bytes, 20u + 7u + to_resp.fpdu_bytes);
    EXPECT_EQ(to_init.stream_bytes, 20u + to_init.fpdu_bytes);
    EXPECT_EQ(r.warnings(), 0u) << all_issues(r);
}

TEST(StreamCheck, EnhancedRevision2) {
    const scenario sc = enhanced_rev2();
    const auto r = check_capture(sc.capture);
    expect_matches(r, sc);
    const auto& c = r.connections[0];
    ASSERT_TRUE(c.request && c.reply);
    EXPECT_TRUE(c.request->enhanced);
    EXPECT_EQ(c.request->ird, 16);
    EXPECT_EQ(c.request->ord, 16);
    EXPECT_TRUE(c.request->peer_to_peer);
    EXPECT_EQ(c.reply->ird, 8);
    EXPECT_EQ(c.reply->ord, 8);
    EXPECT_EQ(std::string(c.request->private_data.begin(), c.request->private_data.end()), "ulp-pd");
}

TEST(StreamCheck, MarkersBothWays) {
    const scenario sc = markers_both_ways();
    expect_matches(check_capture(sc.capture), sc);
    EXPECT_EQ(sc.connections[0].marker_boundary_segments, 0u);
}

// The generator reproduces RFC 5044 Fig. 5 and Fig. 6 byte for byte (test-vectors.md §2).
TEST(StreamCheck, MarkerScenarioCarriesTheRfcFigures) {
    const scenario sc = markers_both_ways();
    const bytes fig5 = {0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x41, 0x43, 0, 0, 0, 0,
                        0,    0,    0,    0,    0,    0,    0,    0x01, 0, 0, 0, 0};
    const bytes fig5_crc = {0x52, 0x23, 0x99, 0x83};
    const bytes fig6 = {0x00, 0x2a, 0x41, 0x43, 0, 0, 0, 0, 0,    0,    0,    0,
                        0,    0,    0,    0x02, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x14};
    const bytes fig6_crc = {0x84, 0x92, 0x58, 0x98};
    auto contains = [&](const bytes& start, const bytes& end, std::size_t total) {
        for (const frame& f : sc.capture.frames) {
            if (f.data.size() < 54 + total) continue;
            const std::uint8_t* p = f.data.data() + 54;  // Ethernet + IPv4 + TCP without options
            if (f.data.size() == 54 + total && std::equal(start.begin(), start.end(), p) &&
                std::equal(end.begin(), end.end(), p + total - 4))
                return true;
        }
        return false;
    };
    EXPECT_TRUE(contains(fig5, fig5_crc, 52));
    EXPECT_TRUE(contains(fig6, fig6_crc, 52));
}

TEST(StreamCheck, TerminateAfterWrite) {
    const scenario sc = terminate_after_write();
    const auto r = check_capture(sc.capture);
    expect_matches(r, sc);
    const auto& to_init = r.connections[0].directions[check::k_to_initiator];
    ASSERT_EQ(to_init.terminates.size(), 1u);
    EXPECT_NE(to_init.terminates[0].find(
                  "layer RDMAP (0), error type 0x1, error code 0x00, HdrCt M D, DDP segment length 32"),
              std::string::npos)
        << to_init.terminates[0];
}

TEST(StreamCheck, SeveralConnectionsInOneCapture) {
    const scenario sc = everything();
    const auto r = check_capture(sc.capture);
    expect_matches(r, sc);
    EXPECT_EQ(r.connections.size(), 4u);
}

TEST(StreamCheck, TwoInterleavedConnections) {
    const scenario sc = two_connections();
    expect_matches(check_capture(sc.capture), sc);
    EXPECT_EQ(sc.connections[1].marker_boundary_segments, 0u);
}

TEST(StreamCheck, RetransmissionsDuplicatesAndReordering) {
    const scenario sc = tcp_disorder();
    const auto r = check_capture(sc.capture);
    expect_matches(r, sc);
    const auto& d = r.connections[0].directions[check::k_to_responder];
    EXPECT_EQ(d.fpdus, 10u);
    EXPECT_EQ(d.retransmitted_bytes, 400u + 100u);  // the duplicate and the overlap
    EXPECT_EQ(d.out_of_order_segments, 1u);
    // The segment with the bad TCP checksum is dropped with a warning; its retransmission counts.
    EXPECT_EQ(r.warnings(), 1u);
    EXPECT_TRUE(has_issue(r, category::tcp, "TCP checksum", severity::warning)) << all_issues(r);
}

TEST(StreamCheck, BadChecksumsAcceptedWhenNotVerified) {
    const scenario sc = tcp_disorder();
    check::options o;
    o.verify_checksums = false;
    const auto r = check_capture(sc.capture, o);
    ASSERT_TRUE(r.ok()) << all_issues(r);
    EXPECT_EQ(r.warnings(), 0u);
    EXPECT_EQ(r.connections[0].directions[check::k_to_responder].retransmitted_bytes, 300u + 400u + 100u);
}

TEST(StreamCheck, RandomMarkerStreamsWithSequenceWrap) {
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const scenario sc = markers_random(seed);
        const auto r = check_capture(sc.capture);
        expect_matches(r, sc);
        EXPECT_TRUE(r.connections[0].directions[check::k_to_initiator].markers);
        EXPECT_FALSE(r.connections[0].directions[check::k_to_responder].markers);
    }
}

TEST(StreamCheck, NoHandshakeAndCrcOff) {
    const scenario sc = no_handshake_no_crc();
    const auto r = check_capture(sc.capture);
    ASSERT_TRUE(r.ok()) << all_issues(r);
    const auto& c = r.connections[0];
    EXPECT_FALSE(c.crc);
    EXPECT_EQ(c.directions[check::k_to_responder].fpdus, 2u);
    EXPECT_EQ(c.directions[check::k_to_initiator].fpdus, 1u);
    EXPECT_FALSE(c.directions[check::k_to_responder].syn);
}

TEST(StreamCheck, KeepsAnFpduLogWhenAsked) {
    const scenario sc = terminate_after_write();
    check::options o;
    o.keep_fpdu_log = true;
    const auto r = check_capture(sc.capture, o);
    const auto& log = r.connections[0].directions[check::k_to_responder].fpdu_log;
    ASSERT_EQ(log.size(), 1u);
    EXPECT_TRUE(log[0].header_ok);
    EXPECT_EQ(log[0].header.opcode, opcode::rdma_write);
    EXPECT_EQ(log[0].header.stag, 0x1234u);
    EXPECT_EQ(log[0].ulpdu_length, 27u);
    EXPECT_EQ(log[0].wire_length, 36u);
    EXPECT_EQ(log[0].stream_offset, 0u);
}

TEST(StreamCheck, SameFourTupleReusedIsTwoConnections) {
    capture cap;
    for (const std::uint32_t isn : {0x100u, 0x90000u}) {
        session s(cap, 40000, 5201, isn, isn + 0x5000);
        s.handshake();
        s.exchange(request_v1(false, true), reply_v1(false, true));
        s.send(k_initiator, s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(10))));
        s.close();
    }
    const auto r = check_capture(cap);
    ASSERT_TRUE(r.ok()) << all_issues(r);
    ASSERT_EQ(r.connections.size(), 2u);
    for (const auto& c : r.connections) EXPECT_EQ(c.directions[check::k_to_responder].fpdus, 1u);
}

TEST(StreamCheck, IgnoresFramesThatAreNotTcp) {
    capture cap = terminate_after_write().capture;
    bytes arp(60, 0);
    arp[12] = 0x08;
    arp[13] = 0x06;
    cap.add(arp);
    const auto r = check_capture(cap);
    EXPECT_TRUE(r.ok()) << all_issues(r);
    EXPECT_EQ(r.other_frames, 1u);
    EXPECT_EQ(r.frames, r.tcp_frames + 1);
}

TEST(StreamCheck, ReportTextNamesEverything) {
    const scenario sc = all_opcodes_rev1();
    const std::string text = check::format_report(check_capture(sc.capture), false);
    EXPECT_NE(text.find("connection 1: 10.0.0.1:40000 -> 10.0.0.2:5201"), std::string::npos) << text;
    EXPECT_NE(text.find("MPA revision 1, CRC on, markers initiator->responder off, responder->initiator off"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("initiator -> responder: 15 FPDUs"), std::string::npos) << text;
    EXPECT_NE(text.find("Atomic Request (10) 2 [FetchAdd 1, CmpSwap 1]"), std::string::npos) << text;
    EXPECT_NE(text.find("summary: 1 connection, 21 FPDUs, 0 bad CRC"), std::string::npos) << text;
    EXPECT_NE(text.find(": OK\n"), std::string::npos) << text;
}

// ---- damaged captures

// A v1 session (CRC on, no Markers unless the frames say otherwise) whose FPDUs `body` writes.
capture run_session(const std::function<void(session&)>& body, const mpa::request_reply& req = request_v1(false, true),
                    const mpa::request_reply& rep = reply_v1(false, true), bool close = true) {
    capture cap;
    session s(cap);
    s.handshake();
    s.exchange(req, rep);
    body(s);
    if (close) s.close();
    return cap;
}

TEST(StreamCheckErrors, FlippedPayloadBitIsACrcError) {
    const capture cap = run_session([](session& s) {
        messages& m = s.messages(k_initiator);
        s.send(k_initiator, s.fpdu(k_initiator, m.send(opcode::send, pattern(50))));
        bytes bad = s.fpdu(k_initiator, m.send(opcode::send, pattern(60)));
        bad[30] ^= 0x10;
        s.send(k_initiator, bad);
        s.send(k_initiator, s.fpdu(k_initiator, m.send(opcode::send, pattern(70))));
    });
    const auto r = check_capture(cap);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    const auto& d = r.connections[0].directions[check::k_to_responder];
    EXPECT_EQ(d.bad_crcs, 1u);
    EXPECT_EQ(d.fpdus, 1u);  // the deframer stops at the bad FPDU
    EXPECT_EQ(d.unchecked_bytes, mpa::fpdu_wire_length(18 + 70, false, 0));
    EXPECT_TRUE(has_issue(r, category::crc, "CRC mismatch in the FPDU starting at stream byte 76")) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::framing, "not checked", severity::warning)) << all_issues(r);
}

TEST(StreamCheckErrors, UlpduLengthShorterThanTheDdpHeader) {
    const capture cap = run_session([](session& s) {
        bytes u = s.messages(k_initiator).send(opcode::send, pattern(20));
        u.resize(10);  // consistent ULPDU_Length and CRC, but no room for the 18-byte header
        s.send(k_initiator, s.fpdu(k_initiator, u));
        s.send(k_initiator, s.fpdu(k_initiator, messages::untagged(opcode::send, 0, 1, 0, true, pattern(5))));
    });
    const auto r = check_capture(cap);
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::header, "ULPDU of 10 bytes: DDP untagged header: 10 bytes, needs 18"))
        << all_issues(r);
    EXPECT_EQ(r.connections[0].directions[check::k_to_responder].fpdus, 2u);
}

TEST(StreamCheckErrors, UlpduLengthBeyondTheEndOfTheStream) {
    const capture cap = run_session([](session& s) {
        bytes f = s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(40)));
        proto::put_be16(f.data(), 1000);
        s.send(k_initiator, f);
    });
    const auto r = check_capture(cap);
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    EXPECT_EQ(r.connections[0].directions[check::k_to_responder].framing_errors, 1u);
    EXPECT_TRUE(has_issue(r, category::framing,
                          "stream ends inside the FPDU at stream byte 0: 64 bytes present, ULPDU_Length 1000 needs "
                          "1008 (connection closed)"))
        << all_issues(r);
}

TEST(StreamCheckErrors, IncompleteFpduAtTheEndOfTheCaptureIsAWarning) {
    const capture cap = run_session(
        [](session& s) {
            const bytes f = s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(40)));
            s.send(k_initiator, bytes(f.begin(), f.begin() + 20));
        },
        request_v1(false, true), reply_v1(false, true), false);
    const auto r = check_capture(cap);
    EXPECT_TRUE(r.ok()) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::framing, "(capture ends)", severity::warning)) << all_issues(r);
}

TEST(StreamCheckErrors, MissingSegmentIsAGap) {
    std::uint32_t hole_seq = 0;
    std::size_t hole_len = 0;
    const capture cap = run_session([&](session& s) {
        messages& m = s.messages(k_initiator);
        s.send(k_initiator, s.fpdu(k_initiator, m.send(opcode::send, pattern(50))));
        const bytes lost = s.fpdu(k_initiator, m.send(opcode::send, pattern(60)));
        hole_seq = s.next_seq(k_initiator);
        hole_len = lost.size();
        s.skip(k_initiator, lost.size());
        s.send(k_initiator, s.fpdu(k_initiator, m.send(opcode::send, pattern(70))));
    });
    const auto r = check_capture(cap);
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    const auto& d = r.connections[0].directions[check::k_to_responder];
    EXPECT_EQ(d.tcp_errors, 1u);
    EXPECT_EQ(d.missing_bytes, hole_len);
    EXPECT_EQ(d.fpdus, 1u);
    EXPECT_TRUE(has_issue(r, category::tcp,
                          "missing " + std::to_string(hole_len) + " bytes at seq " + std::to_string(hole_seq)))
        << all_issues(r);
}

TEST(StreamCheckErrors, LostLastSegmentIsFoundThroughTheAck) {
    const capture cap = run_session(
        [](session& s) {
            const bytes lost = s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(50)));
            s.skip(k_initiator, lost.size());
            s.ack(k_responder);
        },
        request_v1(false, true), reply_v1(false, true), false);
    const auto r = check_capture(cap);
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::tcp, "missing 76 bytes")) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::tcp, "(acknowledged by the peer)")) << all_issues(r);
}

TEST(StreamCheckErrors, BadChecksumNeverRetransmitted) {
    const capture cap = run_session([](session& s) {
        messages& m = s.messages(k_initiator);
        const bytes f = s.fpdu(k_initiator, m.send(opcode::send, pattern(50)));
        s.send_at(k_initiator, s.next_seq(k_initiator), f, true);
        s.skip(k_initiator, f.size());
        s.send(k_initiator, s.fpdu(k_initiator, m.send(opcode::send, pattern(70))));
    });
    const auto r = check_capture(cap);
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::tcp, "TCP checksum", severity::warning)) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::tcp, "missing 76 bytes")) << all_issues(r);
}

TEST(StreamCheckErrors, RejectedConnection) {
    mpa::request_reply rep = reply_v1(false, true);
    rep.reject = true;
    rep.private_data = {'n', 'o'};
    const capture cap = run_session([](session&) {}, request_v1(false, true), rep);
    const auto r = check_capture(cap);
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    const auto& c = r.connections[0];
    EXPECT_TRUE(c.rejected);
    EXPECT_FALSE(c.negotiated);
    EXPECT_EQ(c.negotiation_errors, 1u);
    EXPECT_TRUE(has_issue(r, category::reject, "rejects the connection (R = 1), private data \"no\"")) << all_issues(r);
    EXPECT_NE(check::format_report(r, false).find("connection rejected"), std::string::npos);
}

TEST(StreamCheckErrors, NoNegotiation) {
    capture cap;
    session s(cap);
    s.handshake();
    bytes f;
    const bytes u = messages::untagged(opcode::send, 0, 1, 0, true, pattern(30));
    mpa::build_fpdu(u.data(), u.size(), true, false, 0, f);
    s.send(k_initiator, f);
    s.close();
    const auto r = check_capture(cap);
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::negotiation, "missing negotiation")) << all_issues(r);
    EXPECT_FALSE(r.connections[0].negotiated);
    EXPECT_EQ(r.connections[0].directions[check::k_to_responder].unchecked_bytes, f.size());
}

TEST(StreamCheckErrors, RequestWithoutReply) {
    capture cap;
    session s(cap);
    s.handshake();
    s.send(k_initiator, mpa::encode(request_v1(false, true)));
    s.close();
    const auto r = check_capture(cap);
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::negotiation, "sent an MPA Request but no Reply came back")) << all_issues(r);
}

TEST(StreamCheckErrors, ReplyRevisionAboveTheRequest) {
    mpa::request_reply rep = reply_v1(false, true);
    rep.revision = 2;
    const auto r = check_capture(run_session([](session&) {}, request_v1(false, true), rep));
    EXPECT_TRUE(has_issue(r, category::negotiation, "MPA Reply has revision 2, above the Request's 1"))
        << all_issues(r);
}

TEST(StreamCheckErrors, MpaReservedBits) {
    mpa::request_reply req = request_v1(false, true);
    req.reserved_bits = 0x08;  // what Linux siw sends
    const capture cap = run_session(
        [](session& s) {
            s.send(k_initiator, s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(5))));
        },
        req);
    const auto strict = check_capture(cap);
    EXPECT_EQ(strict.errors(), 1u) << all_issues(strict);
    EXPECT_TRUE(has_issue(strict, category::negotiation, "MPA Request has Res bits 0x8 set")) << all_issues(strict);
    EXPECT_TRUE(strict.connections[0].negotiated);  // still followed
    check::options lenient;
    lenient.strict_reserved_bits = false;
    EXPECT_TRUE(check_capture(cap, lenient).ok());
}

TEST(StreamCheckErrors, MarkerWithWrongFpduptr) {
    const capture cap = run_session(
        [](session& s) {
            bytes f = s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(40)));
            f[3] = 8;  // the leading Marker must carry FPDUPTR 0; keep the CRC right
            proto::put_le32(f.data() + f.size() - 4, proto::crc32c(f.data(), f.size() - 4));
            s.send(k_initiator, f);
        },
        request_v1(false, true), reply_v1(true, true));
    const auto r = check_capture(cap);
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    EXPECT_EQ(r.connections[0].directions[check::k_to_responder].framing_errors, 1u);
    EXPECT_TRUE(has_issue(r, category::framing, "has FPDUPTR 8, expected 0")) << all_issues(r);
}

mpa::request_reply p2p(bool request) {
    mpa::request_reply f = request ? request_v1(false, true) : reply_v1(false, true);
    f.revision = 2;
    f.enhanced = true;
    f.peer_to_peer = true;
    f.zero_length_send_rtr = true;
    f.ird = f.ord = 4;
    return f;
}

TEST(StreamCheckErrors, PeerToPeerWithoutRtr) {
    const auto r = check_capture(run_session(
        [](session& s) {
            s.send(k_initiator, s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(5))));
        },
        p2p(true), p2p(false)));
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::negotiation, "must be an RTR indication")) << all_issues(r);
}

TEST(StreamCheckErrors, PeerToPeerRtrNotOffered) {
    const auto r = check_capture(run_session(
        [](session& s) { s.send(k_initiator, s.fpdu(k_initiator, s.messages(k_initiator).write(1, 0, {}))); },
        p2p(true), p2p(false)));
    EXPECT_EQ(r.errors(), 1u) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::negotiation, "zero-length RDMA Write was not offered")) << all_issues(r);
}

TEST(StreamCheckErrors, TruncatedRecordAndUnparsableFrame) {
    const scenario sc = terminate_after_write();
    check::stream_checker checker;
    const frame& f = sc.capture.frames[0];
    checker.add_frame(f.time_ns, f.data.data(), f.data.size() - 4, f.data.size());
    // IPv4 total length beyond the frame with a header checksum that verifies: no damage in
    // transit explains it, the frame cannot be parsed (an error).
    bytes broken = sc.capture.frames[1].data;
    broken[16] = 0x3f;
    broken[24] = broken[25] = 0;
    const std::uint16_t sum = net::internet_checksum(broken.data() + 14, 20);
    broken[24] = static_cast<std::uint8_t>(sum >> 8);
    broken[25] = static_cast<std::uint8_t>(sum);
    checker.add_frame(f.time_ns, broken.data(), broken.size());
    // IHL 6: the header no longer verifies its checksum - damaged in transit, dropped (a warning).
    bytes damaged = sc.capture.frames[1].data;
    damaged[14] = 0x46;
    checker.add_frame(f.time_ns, damaged.data(), damaged.size());
    const auto& r = checker.finish();
    EXPECT_EQ(r.capture_errors, 2u);
    EXPECT_EQ(r.warning_count, 1u) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::capture,
                          "frame 1: only " + std::to_string(f.data.size() - 4) + " of its " +
                              std::to_string(f.data.size()) + " bytes were captured"))
        << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::capture, "frame 2:")) << all_issues(r);
}

// ---- DDP / RDMAP header checks, one damaged ULPDU each

struct header_case {
    const char* name;
    std::function<std::vector<bytes>(messages&)> ulpdus;
    const char* expected;
    bool reserved;  // a reserved-bit violation: accepted with strict_reserved_bits off
};

bytes with(bytes b, std::size_t at, std::uint8_t value) {
    b.at(at) = value;
    return b;
}

ddp::terminate simple_terminate() {
    ddp::terminate t;
    t.layer = ddp::term_layer::rdma;
    t.etype = ddp::term::kRdmaRemoteOperation;
    t.code = ddp::term::kRdmaUnexpectedOpcode;
    return t;
}

bytes atomic_body(ddp::atomic_opcode op) {
    ddp::atomic_request a;
    a.op = op;
    bytes b(ddp::kAtomicRequestSize);
    ddp::encode(a, b.data());
    return b;
}

const header_case kHeaderCases[] = {
    {"ddp_version",
     [](messages& m) {
         bytes b = m.send(opcode::send, pattern(4));
         return std::vector<bytes>{with(b, 0, static_cast<std::uint8_t>((b[0] & 0xFC) | 2))};
     },
     "DDP version (DV) 2, expected 1", false},
    {"rdmap_version",
     [](messages& m) {
         bytes b = m.send(opcode::send, pattern(4));
         return std::vector<bytes>{with(b, 1, b[1] & 0x3F)};
     },
     "RDMAP version (RV) 0, expected 1", false},
    {"reserved_opcode",
     [](messages& m) {
         bytes b = m.send(opcode::send, pattern(4));
         return std::vector<bytes>{with(b, 1, static_cast<std::uint8_t>((b[1] & 0xF0) | 12))};
     },
     "reserved RDMAP opcode 12", false},
    {"send_tagged",
     [](messages&) { return std::vector<bytes>{messages::tagged(opcode::send, 1, 0, true, pattern(4))}; },
     "Send (opcode 3) uses the untagged buffer model but T = 1", false},
    {"write_untagged",
     [](messages&) { return std::vector<bytes>{messages::untagged(opcode::rdma_write, 0, 1, 0, true, pattern(4))}; },
     "RDMA Write (opcode 0) uses the tagged buffer model but T = 0", false},
    {"read_response_untagged",
     [](messages&) { return std::vector<bytes>{messages::untagged(opcode::read_response, 0, 1, 0, true, pattern(4))}; },
     "RDMA Read Response (opcode 2) uses the tagged buffer model but T = 0", false},
    {"send_on_qn1",
     [](messages&) { return std::vector<bytes>{messages::untagged(opcode::send, 1, 1, 0, true, pattern(4))}; },
     "Send (opcode 3) on QN 1, expected QN 0", false},
    {"read_request_on_qn0",
     [](messages&) {
         return std::vector<bytes>{messages::untagged(opcode::read_request, 0, 1, 0, true, bytes(28, 0))};
     },
     "RDMA Read Request (opcode 1) on QN 0, expected QN 1", false},
    {"terminate_on_qn0",
     [](messages&) {
         return std::vector<bytes>{
             messages::untagged(opcode::terminate, 0, 1, 0, true, ddp::encode(simple_terminate()))};
     },
     "Terminate (opcode 7) on QN 0, expected QN 2", false},
    {"atomic_response_on_qn1",
     [](messages&) {
         return std::vector<bytes>{messages::untagged(opcode::atomic_response, 1, 1, 0, true, bytes(12, 0))};
     },
     "Atomic Response (opcode 11) on QN 1, expected QN 3", false},
    {"atomic_request_on_qn3",
     [](messages&) {
         return std::vector<bytes>{
             messages::untagged(opcode::atomic_request, 3, 1, 0, true, atomic_body(ddp::atomic_opcode::fetch_add))};
     },
     "Atomic Request (opcode 10) on QN 3, expected QN 1", false},
    {"immediate_on_qn2",
     [](messages&) { return std::vector<bytes>{messages::untagged(opcode::immediate, 2, 1, 0, true, bytes(8, 0))}; },
     "Immediate Data (opcode 8) on QN 2, expected QN 0", false},
    {"short_read_request",
     [](messages&) {
         return std::vector<bytes>{messages::untagged(opcode::read_request, 1, 1, 0, true, bytes(20, 0))};
     },
     "RDMA Read Request carries 20 bytes after the DDP header, expected 28", false},
    {"long_immediate",
     [](messages&) {
         return std::vector<bytes>{messages::untagged(opcode::immediate_se, 0, 1, 0, true, bytes(12, 0))};
     },
     "Immediate Data with SE carries 12 bytes after the DDP header, expected 8", false},
    {"short_atomic_response",
     [](messages&) {
         return std::vector<bytes>{messages::untagged(opcode::atomic_response, 3, 1, 0, true, bytes(8, 0))};
     },
     "Atomic Response header: 8 bytes, needs 12", false},
    {"segmented_read_request",
     [](messages&) {
         return std::vector<bytes>{messages::untagged(opcode::read_request, 1, 1, 0, false, bytes(28, 0))};
     },
     "RDMA Read Request must be a single DDP segment (L = 1, MO 0), got L = 0 MO 0", false},
    {"unassigned_aopcode",
     [](messages&) {
         return std::vector<bytes>{messages::untagged(opcode::atomic_request, 1, 1, 0, true,
                                                      atomic_body(static_cast<ddp::atomic_opcode>(1)))};
     },
     "Atomic Request with unassigned AOpCode 1", false},
    {"terminate_reserved_layer",
     [](messages& m) {
         ddp::terminate t = simple_terminate();
         t.layer = static_cast<ddp::term_layer>(3);
         return std::vector<bytes>{m.terminate(t)};
     },
     "Terminate with reserved layer 3", false},
    {"short_terminate",
     [](messages& m) {
         ddp::terminate t = simple_terminate();
         t.d = true;
         t.ddp_header = bytes(14, 0x80);
         bytes b = m.terminate(t);
         b.resize(b.size() - 3);
         return std::vector<bytes>{b};
     },
     "Terminate with D set: terminated DDP header", false},
    {"first_msn_2",
     [](messages&) { return std::vector<bytes>{messages::untagged(opcode::send, 0, 2, 0, true, pattern(4))}; },
     "MSN 2 on QN 0, expected 1 (next message)", false},
    {"msn_reused",
     [](messages& m) {
         return std::vector<bytes>{m.send(opcode::send, pattern(4)),
                                   messages::untagged(opcode::send, 0, 1, 0, true, pattern(4))};
     },
     "MSN 1 on QN 0, expected 2 (next message)", false},
    {"message_hole",
     [](messages&) {
         return std::vector<bytes>{messages::untagged(opcode::send, 0, 1, 0, false, pattern(100)),
                                   messages::untagged(opcode::send, 0, 1, 200, true, pattern(50))};
     },
     "message MSN 1 on QN 0: 2 segments carry 150 bytes, but the last one ends at message offset 250", false},
    {"last_not_highest_mo",
     [](messages&) {
         return std::vector<bytes>{messages::untagged(opcode::send, 0, 1, 100, false, pattern(100)),
                                   messages::untagged(opcode::send, 0, 1, 0, true, pattern(50))};
     },
     "the L segment must carry the highest MO", false},
    {"ddp_rsvd",
     [](messages& m) {
         bytes b = m.send(opcode::send, pattern(4));
         return std::vector<bytes>{with(b, 0, b[0] | 0x04)};
     },
     "DDP control Rsvd bits 0x1 set", true},
    {"rdmap_rsv",
     [](messages& m) {
         bytes b = m.send(opcode::send, pattern(4));
         return std::vector<bytes>{with(b, 1, b[1] | 0x20)};
     },
     "RDMAP control Rsv bits 0x2 set", true},
    {"invalidate_stag_on_send", [](messages& m) { return std::vector<bytes>{m.send(opcode::send, pattern(4), 0x77)}; },
     "Send: Invalidate STag field 0x00000077 must be zero", true},
    {"terminate_reserved",
     [](messages& m) {
         bytes b = m.terminate(simple_terminate());
         return std::vector<bytes>{with(b, ddp::kUntaggedHeaderSize + 3, 1)};
     },
     "Terminate: reserved bits after HdrCt set", true},
    {"atomic_reserved",
     [](messages& m) {
         bytes b = m.atomic_request(ddp::atomic_request{});
         return std::vector<bytes>{with(b, ddp::kUntaggedHeaderSize, 0x80)};
     },
     "Atomic Request: reserved bits before AOpCode", true},
};

class HeaderErrors : public ::testing::TestWithParam<header_case> {};

TEST_P(HeaderErrors, AreReported) {
    const header_case& hc = GetParam();
    std::size_t written = 0;
    const capture cap = run_session([&](session& s) {
        const std::vector<bytes> ulpdus = hc.ulpdus(s.messages(k_initiator));
        written = ulpdus.size();
        s.send(k_initiator, s.fpdus(k_initiator, ulpdus));
    });
    const auto r = check_capture(cap);
    const auto& d = r.connections.at(0).directions[check::k_to_responder];
    EXPECT_EQ(d.fpdus, written);
    EXPECT_GE(d.header_errors, 1u);
    EXPECT_EQ(r.errors(), d.header_errors) << all_issues(r);
    EXPECT_TRUE(has_issue(r, category::header, hc.expected)) << all_issues(r);
    check::options lenient;
    lenient.strict_reserved_bits = false;
    EXPECT_EQ(check_capture(cap, lenient).ok(), hc.reserved) << all_issues(check_capture(cap, lenient));
}

INSTANTIATE_TEST_SUITE_P(StreamCheck, HeaderErrors, ::testing::ValuesIn(kHeaderCases),
                         [](const ::testing::TestParamInfo<header_case>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace rnic::tools_test
