// The tools tests' captures (see scenarios.h).
#include "scenarios.h"

#include <random>

namespace rnic::tools_test {
namespace {

using ddp::opcode;

bytes text(const std::string& s) {
    return bytes(s.begin(), s.end());
}

written_connection record(const session& s, std::uint8_t revision) {
    written_connection w;
    w.initiator_port = s.port(k_initiator);
    w.responder_port = s.port(k_responder);
    w.opcodes = {s.opcodes(k_initiator), s.opcodes(k_responder)};
    w.markers = {s.markers(k_initiator), s.markers(k_responder)};
    w.crc = s.crc();
    w.revision = revision;
    w.marker_boundary_segments = s.marker_boundary_segments();
    return w;
}

ddp::atomic_request fetch_add(std::uint32_t id) {
    ddp::atomic_request r;
    r.op = ddp::atomic_opcode::fetch_add;
    r.request_id = id;
    r.stag = 0x1234;
    r.tagged_offset = 0x1000;
    r.add_or_swap_data = 5;
    r.compare_mask = ~std::uint64_t{0};
    return r;
}

ddp::atomic_request compare_swap(std::uint32_t id) {
    ddp::atomic_request r;
    r.op = ddp::atomic_opcode::compare_swap;
    r.request_id = id;
    r.stag = 0x1234;
    r.tagged_offset = 0x1008;
    r.add_or_swap_data = 0x1111;
    r.add_or_swap_mask = ~std::uint64_t{0};
    r.compare_data = 41;
    r.compare_mask = ~std::uint64_t{0};
    return r;
}

ddp::terminate rdma_invalid_stag_terminate() {
    // test-vectors.md §5: layer RDMA, etype 1 (remote protection), code 0 (invalid STag), M + D,
    // DDP segment length 32 and the terminated tagged DDP header.
    ddp::terminate t;
    t.layer = ddp::term_layer::rdma;
    t.etype = ddp::term::kRdmaRemoteProtection;
    t.code = ddp::term::kRdmaInvalidStag;
    t.m = true;
    t.d = true;
    t.ddp_segment_length = 32;
    t.ddp_header = messages::tagged(opcode::rdma_write, 0x1234, 0x1000, true, {});
    return t;
}

ddp::terminate mpa_crc_terminate() {
    ddp::terminate t;
    t.layer = ddp::term_layer::llp;
    t.etype = ddp::term::kLlpMpa;
    t.code = ddp::term::kMpaCrcError;
    return t;
}

}  // namespace

std::size_t scenario::fpdus() const {
    std::size_t n = 0;
    for (const auto& c : connections) n += c.fpdus();
    return n;
}

static written_connection build_all_opcodes_rev1(capture& cap, std::uint16_t port) {
    session s(cap, port, 5201, 0x1000'0000u + port * 0x10000u, 0x2000'0000u + port * 0x10000u);
    s.handshake();
    mpa::request_reply req = request_v1(false, true);
    req.private_data = text("rnic-vp");
    s.exchange(req, reply_v1(false, true));
    messages& mi = s.messages(k_initiator);
    messages& mr = s.messages(k_responder);

    // Several FPDUs per segment and FPDUs split across segments (2-byte and 7-byte pieces too).
    const std::vector<bytes> batch1 = {
        mi.write(0x1234, 0x1000, bytes(13, 'W')),
        mi.write(0x1235, 0, pattern(700, 1), false),
        mi.write(0x1235, 700, pattern(300, 2), true),
        mi.read_request(ddp::read_request{0xaaaa, 0x2000, 64, 0xbbbb, 0x3000}),
        mi.send(opcode::send, text("hello iwarp!")),
        mi.send(opcode::send_invalidate, text("inv"), 0x55),
        mi.send(opcode::send_se, pattern(33, 3)),
        mi.send(opcode::send_se_invalidate, pattern(5, 4), 0x66),
    };
    s.send_split(k_initiator, s.fpdus(k_initiator, batch1), {100, 7, 1460, 2, 300, 1460});

    // The Read Response in two DDP segments, and a Send.
    const bytes data = pattern(64, 9);
    const std::vector<bytes> batch2 = {
        mr.read_response(0xaaaa, 0x2000, bytes(data.begin(), data.begin() + 40), false),
        mr.read_response(0xaaaa, 0x2000 + 40, bytes(data.begin() + 40, data.end()), true),
        mr.send(opcode::send, text("responder says hi")),
    };
    s.send(k_responder, s.fpdus(k_responder, batch2));

    std::vector<bytes> batch3 = mi.send_segments(opcode::send, pattern(2500, 5), 1000);
    batch3.push_back(mi.immediate(false, 0x1122334455667788ull));
    batch3.push_back(mi.immediate(true, 0x8877665544332211ull));
    batch3.push_back(mi.atomic_request(fetch_add(7)));
    batch3.push_back(mi.atomic_request(compare_swap(8)));
    s.send_split(k_initiator, s.fpdus(k_initiator, batch3), {1460});

    const std::vector<bytes> batch4 = {
        mr.atomic_response(ddp::atomic_response{7, 41}),
        mr.atomic_response(ddp::atomic_response{8, 41}),
    };
    s.send_split(k_responder, s.fpdus(k_responder, batch4), {50});
    s.send(k_responder, s.fpdu(k_responder, mr.terminate(mpa_crc_terminate())));
    s.close();
    return record(s, 1);
}

scenario all_opcodes_rev1() {
    scenario sc;
    sc.name = "all_opcodes_rev1";
    sc.connections.push_back(build_all_opcodes_rev1(sc.capture, 40000));
    return sc;
}

static written_connection build_enhanced_rev2(capture& cap, std::uint16_t port) {
    session s(cap, port, 5201, 0x1000'0000u + port * 0x10000u, 0x2000'0000u + port * 0x10000u);
    s.handshake();
    mpa::request_reply req = request_v1(false, true);
    req.revision = 2;
    req.enhanced = true;
    req.ird = 16;
    req.ord = 16;
    req.peer_to_peer = true;
    req.zero_length_send_rtr = true;
    req.zero_length_write_rtr = true;
    req.private_data = text("ulp-pd");
    mpa::request_reply rep = req;
    rep.request = false;
    rep.ird = 8;
    rep.ord = 8;
    rep.zero_length_write_rtr = false;
    rep.private_data.clear();
    s.exchange(req, rep);
    messages& mi = s.messages(k_initiator);
    messages& mr = s.messages(k_responder);
    s.send(k_initiator, s.fpdu(k_initiator, mi.send(opcode::send, {})));  // the RTR: zero-length Send
    s.send(k_initiator, s.fpdus(k_initiator, {mi.read_request(ddp::read_request{0x10, 0, 256, 0x20, 0x400}),
                                              mi.write(0x30, 0x8000, pattern(600, 6))}));
    s.send(k_responder,
           s.fpdus(k_responder, {mr.read_response(0x10, 0, pattern(256, 7)), mr.send(opcode::send_se, text("done"))}));
    s.close();
    return record(s, 2);
}

scenario enhanced_rev2() {
    scenario sc;
    sc.name = "enhanced_rev2";
    sc.connections.push_back(build_enhanced_rev2(sc.capture, 40000));
    return sc;
}

static written_connection build_markers_both_ways(capture& cap, std::uint16_t port) {
    session s(cap, port, 5201, 0x1000'0000u + port * 0x10000u, 0x2000'0000u + port * 0x10000u);
    s.handshake();
    s.exchange(request_v1(true, true), reply_v1(true, true));
    messages& mi = s.messages(k_initiator);
    messages& mr = s.messages(k_responder);
    // RFC 5044 Fig. 5 from the responder: leading Marker, Send MSN 1 of 24 zero bytes.
    s.send(k_responder, s.fpdu(k_responder, mr.send(opcode::send, bytes(24, 0))));
    // Fig. 6 setting from the initiator: a 492-byte first FPDU, then the Fig. 6 FPDU at 0x1ec
    // with the Marker at 0x200 inside it.
    s.send(k_initiator, s.fpdu(k_initiator, mi.send(opcode::send, bytes(464, 0))));
    s.send(k_initiator, s.fpdu(k_initiator, mi.send(opcode::send, bytes(24, 0))));
    s.send_each(k_initiator, {
                                 mi.write(0x1234, 0x1000, pattern(200, 1)),
                                 mi.read_request(ddp::read_request{0xaaaa, 0x2000, 300, 0xbbbb, 0x3000}),
                                 mi.send(opcode::send_invalidate, text("inv"), 0x55),
                                 mi.send(opcode::send_se, pattern(410, 2)),
                                 mi.send(opcode::send_se_invalidate, pattern(77, 3), 0x56),
                                 mi.immediate(false, 1),
                                 mi.immediate(true, 2),
                                 mi.atomic_request(fetch_add(1)),
                                 mi.atomic_request(compare_swap(2)),
                                 mi.write(0x1234, 0x2000, pattern(480, 4)),
                             });
    s.send_each(k_responder, {
                                 mr.read_response(0xaaaa, 0x2000, pattern(300, 5)),
                                 mr.atomic_response(ddp::atomic_response{1, 10}),
                                 mr.atomic_response(ddp::atomic_response{2, 15}),
                                 mr.send(opcode::send, pattern(333, 6)),
                                 mr.terminate(rdma_invalid_stag_terminate()),
                             });
    s.close();
    return record(s, 1);
}

scenario markers_both_ways() {
    scenario sc;
    sc.name = "markers_both_ways";
    sc.connections.push_back(build_markers_both_ways(sc.capture, 40000));
    return sc;
}

static written_connection build_terminate_after_write(capture& cap, std::uint16_t port) {
    session s(cap, port, 5201, 0x1000'0000u + port * 0x10000u, 0x2000'0000u + port * 0x10000u);
    s.handshake();
    s.exchange(request_v1(false, true), reply_v1(false, true));
    s.send(k_initiator, s.fpdu(k_initiator, s.messages(k_initiator).write(0x1234, 0x1000, bytes(13, 'W'))));
    s.send(k_responder, s.fpdu(k_responder, s.messages(k_responder).terminate(rdma_invalid_stag_terminate())));
    s.close();
    return record(s, 1);
}

scenario terminate_after_write() {
    scenario sc;
    sc.name = "terminate_after_write";
    sc.connections.push_back(build_terminate_after_write(sc.capture, 40000));
    return sc;
}

scenario everything() {
    scenario sc;
    sc.name = "everything";
    sc.connections.push_back(build_all_opcodes_rev1(sc.capture, 40000));
    sc.connections.push_back(build_enhanced_rev2(sc.capture, 40001));
    sc.connections.push_back(build_markers_both_ways(sc.capture, 40002));
    sc.connections.push_back(build_terminate_after_write(sc.capture, 40003));
    return sc;
}

scenario two_connections() {
    scenario sc;
    sc.name = "two_connections";
    session a(sc.capture, 40000, 5201, 0x11110000u, 0x22220000u);
    session b(sc.capture, 40001, 5201, 0x33330000u, 0x44440000u);
    a.handshake();
    b.handshake();
    a.exchange(request_v1(false, true), reply_v1(false, true));
    b.exchange(request_v1(true, true), reply_v1(true, true));
    for (int i = 0; i < 6; ++i) {
        const side side = i % 2 == 0 ? k_initiator : k_responder;
        a.send(side, a.fpdus(side, {a.messages(side).send(opcode::send, pattern(100 + 50 * i, 1)),
                                    a.messages(side).write(0x77, 0x1000 * i, pattern(40, 2))}));
        b.send(side, b.fpdu(side, b.messages(side).send(opcode::send_se, pattern(60 + 70 * i, 3))));
    }
    b.close();
    a.close();
    sc.connections.push_back(record(a, 1));
    sc.connections.push_back(record(b, 1));
    return sc;
}

scenario tcp_disorder() {
    scenario sc;
    sc.name = "tcp_disorder";
    session s(sc.capture);
    s.handshake();
    s.exchange(request_v1(false, true), reply_v1(false, true));
    std::vector<bytes> ulpdus;
    for (int i = 0; i < 10; ++i)
        ulpdus.push_back(
            s.messages(k_initiator).send(opcode::send, pattern(100 + 37 * static_cast<std::size_t>(i), 1)));
    const bytes stream = s.fpdus(k_initiator, ulpdus);
    auto part = [&](std::size_t from, std::size_t to) {
        return bytes(stream.begin() + static_cast<std::ptrdiff_t>(from),
                     stream.begin() + static_cast<std::ptrdiff_t>(to));
    };
    const std::uint32_t base = s.next_seq(k_initiator);
    s.send_at(k_initiator, base, part(0, 300));
    s.send_at(k_initiator, base + 700, part(700, 1000));             // ahead of a hole
    s.send_at(k_initiator, base + 300, part(300, 700));              // fills it
    s.send_at(k_initiator, base + 300, part(300, 700));              // duplicate
    s.send_at(k_initiator, base + 1000, part(1000, 1300), true);     // bad TCP checksum: dropped...
    s.send_at(k_initiator, base + 1000, part(1000, 1300));           // ...and retransmitted
    s.send_at(k_initiator, base + 1200, part(1200, stream.size()));  // overlaps 100 bytes
    s.skip(k_initiator, stream.size());
    s.ack(k_responder);
    s.send(k_responder, s.fpdu(k_responder, s.messages(k_responder).send(opcode::send, text("ok"))));
    s.close();
    sc.connections.push_back(record(s, 1));
    return sc;
}

scenario markers_random(std::uint64_t seed) {
    scenario sc;
    sc.name = "markers_random";
    std::mt19937_64 rng(seed);
    session s(sc.capture, 40000, 5201, 0xFFFFF000u, 0xFFFFFF00u);
    s.handshake();
    s.exchange(request_v1(true, true), reply_v1(false, true));  // Markers only towards the initiator
    for (int round = 0; round < 6; ++round) {
        for (const side side : {k_initiator, k_responder}) {
            std::vector<bytes> ulpdus;
            const int n = 1 + static_cast<int>(rng() % 6);
            for (int i = 0; i < n; ++i) {
                const std::size_t len = rng() % 3000;
                if (rng() % 2 == 0)
                    ulpdus.push_back(s.messages(side).send(opcode::send, pattern(len, static_cast<std::uint8_t>(i))));
                else
                    ulpdus.push_back(s.messages(side).write(0x99, rng() % 100000, pattern(len, 5)));
            }
            const bytes stream = s.fpdus(side, ulpdus);
            std::vector<std::size_t> sizes;
            for (int i = 0; i < 20; ++i) sizes.push_back(1 + rng() % 1460);
            s.send_split(side, stream, sizes);
        }
    }
    s.close();
    sc.connections.push_back(record(s, 1));
    return sc;
}

scenario no_handshake_no_crc() {
    scenario sc;
    sc.name = "no_handshake_no_crc";
    session s(sc.capture);
    s.exchange(request_v1(false, false), reply_v1(false, false));
    s.send(k_initiator, s.fpdus(k_initiator, {s.messages(k_initiator).send(opcode::send, pattern(99, 1)),
                                              s.messages(k_initiator).write(1, 2, pattern(3, 1))}));
    s.send(k_responder, s.fpdu(k_responder, s.messages(k_responder).send(opcode::send, pattern(10, 1))));
    s.close();
    sc.connections.push_back(record(s, 1));
    return sc;
}

}  // namespace rnic::tools_test
