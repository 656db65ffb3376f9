// rdma_engine through its sockets, with the context memory beside it and stubs for everything else:
// a scripted inbound DDP/RDMAP stream goes into ulpdu_rx_in, host memory is a small target behind
// dma_out, the framer is a sink on ulpdu_tx_out. Checks placement (tagged Write, Send into a posted
// receive, Read Request answered by Read Responses), the access checks of RFC 5041 §7.1 and RFC 5040
// §7 (the right Terminate, nothing written), out-of-order placement, and CQEs with their fields.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstring>
#include <numeric>

#include "core/stream.h"
#include "framing/framing_factory.h"
#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"
#include "rdma/context_memory.h"
#include "rdma/rdma_engine.h"
#include "rnic/regmap.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

namespace ddp = proto::ddp;
using bytes = std::vector<std::uint8_t>;
sc_core::sc_time ns(double v) {
    return sc_core::sc_time(v, sc_core::SC_NS);
}

constexpr std::uint32_t kConn = 7;
constexpr std::uint64_t kSqRing = 0x1000, kRqRing = 0x2000, kCqRing = 0x3000;
constexpr std::uint64_t kRegion = 0x10000;   // a registered region of 4 KiB
constexpr std::uint64_t kRecvBuf = 0x20000;  // receive buffers, registered with local write
constexpr std::uint32_t kPd = 5;
const sc_core::sc_time kMemLatency = ns(100);

// Host memory behind the DMA engine: 256 KiB, a fixed latency per access, every write recorded.
struct host_mem : sc_core::sc_module {
    // One port for the engine, one for the context memory (simple sockets: usable before elaboration).
    tlm_utils::simple_target_socket<host_mem> in, ctx_in;
    bytes mem = bytes(256 * 1024, 0);
    std::vector<std::pair<std::uint64_t, std::size_t>> writes;
    explicit host_mem(const sc_core::sc_module_name& n) : sc_module(n), in("in"), ctx_in("ctx_in") {
        in.register_b_transport(this, &host_mem::b_transport);
        ctx_in.register_b_transport(this, &host_mem::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
        const std::uint64_t a = gp.get_address();
        const std::size_t len = gp.get_data_length();
        if (a + len > mem.size()) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            return;
        }
        if (gp.is_read()) {
            std::memcpy(gp.get_data_ptr(), mem.data() + a, len);
        } else {
            std::memcpy(mem.data() + a, gp.get_data_ptr(), len);
            writes.emplace_back(a, len);
        }
        delay += kMemLatency;
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    bytes at(std::uint64_t a, std::size_t n) const { return bytes(mem.begin() + a, mem.begin() + a + n); }
};

// The TCP engine as the RDMA engine sees it: room for everything, closes recorded.
struct toe_stub : sc_core::sc_module, toe_ctl_if {
    std::vector<std::uint32_t> closed, released;
    explicit toe_stub(const sc_core::sc_module_name& n) : sc_module(n) {}
    int tcp_connect(const tcp_open_params&) override { return -1; }
    bool tcp_listen(std::uint16_t) override { return false; }
    bool tcp_unlisten(std::uint16_t) override { return false; }
    void tcp_close(std::uint32_t conn) override { closed.push_back(conn); }
    void tcp_abort(std::uint32_t conn) override { closed.push_back(conn); }
    void tcp_release(std::uint32_t conn) override { released.push_back(conn); }
    std::uint64_t tcp_send_stream_end(std::uint32_t) const override { return 0; }
    std::size_t tcp_send_space(std::uint32_t) const override { return 1 << 20; }
    std::uint16_t tcp_effective_mss(std::uint32_t) const override { return 1460; }
    std::uint16_t tcp_local_port(std::uint32_t) const override { return 0; }
    tcp_addresses tcp_addresses_of(std::uint32_t) const override { return {}; }
    void tcp_one_fpdu_per_segment(std::uint32_t, bool) override {}
    std::uint64_t tcp_retransmitted_bytes() const override { return 0; }
};

struct rdma_bench : sc_core::sc_module {
    std::unique_ptr<framing> frames;  // the device's framing (MPA, TLM datapath)
    rdma_engine rdma;
    context_memory ctx;
    host_mem host;
    toe_stub toe;
    tb_initiator framer;  // ULPDUs from the framing unit
    tb_sink tx_out, irq;  // ULPDUs to the framing unit; MSI-X requests
    std::uint32_t qpn = 0, cqn = 0, stag = 0, recv_stag = 0;

    explicit rdma_bench(const sc_core::sc_module_name& n,
                        std::uint32_t region_access = regmap::mr_access::remote_write | regmap::mr_access::remote_read,
                        const rdma_engine_params& params = rdma_engine_params{})
        : sc_module(n),
          frames(make_framing(framing_params{})),
          rdma("rdma", params, *frames),
          ctx("ctx", context_memory_params{}),
          host("host"),
          toe("toe"),
          framer("framer"),
          tx_out("tx_out"),
          irq("irq") {
        rdma.ctx_out.bind(ctx.ctx_in);
        rdma.dma_out.bind(host.in);
        ctx.dma_out.bind(host.ctx_in);
        rdma.irq_out.bind(irq.in);
        rdma.ulpdu_tx_out.bind(tx_out.in);
        rdma.toe_out.bind(toe);
        framer.out.bind(rdma.ulpdu_rx_in);
        // What the firmware would program (through rdma_ctl_if, the engine's control export).
        cqn = static_cast<std::uint32_t>(rdma.create_cq({kCqRing, 16, 1}));
        qpn = static_cast<std::uint32_t>(rdma.create_qp({kSqRing, 16, kRqRing, 16, cqn, cqn, kPd}));
        // A zero-based region (TO 0 is its first byte), and the receive buffers' region.
        stag = static_cast<std::uint32_t>(rdma.register_mr({kRegion, 4096, region_access, kPd, 0}));
        recv_stag = static_cast<std::uint32_t>(
            rdma.register_mr({kRecvBuf, 8192, regmap::mr_access::local_write, kPd, kRecvBuf}));
        qp_stream s;
        s.conn = kConn;
        s.max_ulpdu = 1000;
        rdma.qp_connect(qpn, s);
    }
    // One ULPDU in from the framer; returns the TLM delay it took.
    sc_core::sc_time deliver(const bytes& ulpdu, stream_kind kind = stream_kind::data,
                             tlm::tlm_response_status* status = nullptr) {
        stream_ext ext;
        ext.conn = kConn;
        ext.kind = kind;
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        const auto st = send_stream(framer.out, ext, ulpdu.data(), ulpdu.size(), d);
        if (status != nullptr) *status = st;
        return d;
    }
    void post_receive(std::uint32_t index, std::uint64_t wr_id, std::uint64_t addr, std::uint32_t len) {
        std::uint8_t* rqe = host.mem.data() + kRqRing + (index % 16) * regmap::kRecvWqeSize;
        proto::put_le64(rqe + regmap::rqe_off::wr_id, wr_id);
        proto::put_le64(rqe + regmap::rqe_off::addr, addr);
        proto::put_le32(rqe + regmap::rqe_off::length, len);
        proto::put_le32(rqe + regmap::rqe_off::stag, recv_stag);
        rdma.doorbell_in->rq_doorbell(qpn, index + 1, sc_core::SC_ZERO_TIME);
    }
    std::uint64_t stat(const char* key) const {
        boost::json::object o;
        rdma.report_stats(o);
        return o[key].to_number<std::uint64_t>();
    }
    std::uint8_t qp_state() const { return static_cast<std::uint8_t>(rdma.qp_query(qpn) & 0xff); }
};

bytes tagged_write(std::uint32_t stag, std::uint64_t to, const bytes& payload, bool last = true) {
    ddp::header h;
    h.tagged = true;
    h.last = last;
    h.opcode = ddp::opcode::rdma_write;
    h.stag = stag;
    h.tagged_offset = to;
    bytes u(ddp::kTaggedHeaderSize);
    ddp::encode(h, u.data());
    u.insert(u.end(), payload.begin(), payload.end());
    return u;
}

bytes untagged(ddp::opcode op, std::uint32_t queue, std::uint32_t msn, std::uint32_t mo, const bytes& body,
               bool last = true) {
    ddp::header h;
    h.tagged = false;
    h.last = last;
    h.opcode = op;
    h.queue = queue;
    h.msn = msn;
    h.mo = mo;
    bytes u(ddp::kUntaggedHeaderSize);
    ddp::encode(h, u.data());
    u.insert(u.end(), body.begin(), body.end());
    return u;
}

bytes pattern(std::size_t n, std::uint8_t first) {
    bytes b(n);
    std::iota(b.begin(), b.end(), first);
    return b;
}

// The Terminate the engine sent (the only ULPDU on tx_out), decoded.
ddp::terminate sent_terminate(const rdma_bench& b) {
    EXPECT_EQ(b.tx_out.items.size(), 1u);
    if (b.tx_out.items.empty()) return {};
    const bytes& u = b.tx_out.items.back().data;
    std::string error;
    const auto h = ddp::decode_header(u.data(), u.size(), &error);
    EXPECT_TRUE(h && !h->tagged && h->opcode == ddp::opcode::terminate && h->queue == ddp::kQueueTerminate) << error;
    EXPECT_EQ(b.tx_out.items.back().conn, kConn);
    const auto t =
        ddp::decode_terminate(u.data() + ddp::kUntaggedHeaderSize, u.size() - ddp::kUntaggedHeaderSize, &error);
    EXPECT_TRUE(t) << error;
    return t.value_or(ddp::terminate{});
}

TEST(RdmaEngineTb, TaggedWriteIsPlacedAtItsOffsetInTheRegion) {
    rdma_bench b("b");
    const bytes payload = pattern(200, 0x10);
    const sc_core::sc_time d = b.deliver(tagged_write(b.stag, 300, payload));
    EXPECT_EQ(b.host.at(kRegion + 300, 200), payload);
    EXPECT_EQ(b.host.at(kRegion + 299, 1), bytes{0});
    EXPECT_EQ(b.host.at(kRegion + 500, 1), bytes{0});
    // 12 cycles at 500 MHz of header parse and checks, then one DMA write.
    EXPECT_EQ(d, ns(24) + kMemLatency);
    EXPECT_EQ(b.stat("placed_bytes"), 200u);
    EXPECT_EQ(b.stat("rx_segments"), 1u);
    EXPECT_TRUE(b.tx_out.items.empty());  // a Write is answered by nothing
    EXPECT_EQ(b.qp_state(), static_cast<std::uint8_t>(regmap::qp_state::rts));
}

TEST(RdmaEngineTb, ReceivePipelineSerialisesBackToBackSegments) {
    rdma_bench b("b");
    b.deliver(tagged_write(b.stag, 0, pattern(16, 0)));
    // The second one, also at delay 0, waits for the first's 24 ns in the receive pipeline.
    EXPECT_EQ(b.deliver(tagged_write(b.stag, 16, pattern(16, 0))), ns(48) + kMemLatency);
}

TEST(RdmaEngineTb, SendLandsInThePostedReceiveAndCompletesWithACqe) {
    rdma_bench b("b");
    b.post_receive(0, 0xabcdef0012345678ull, kRecvBuf + 64, 1024);
    const bytes first = pattern(700, 1), second = pattern(300, 0x80);
    b.deliver(untagged(ddp::opcode::send_se, ddp::kQueueSend, 1, 0, first, false));
    EXPECT_EQ(b.stat("cqes"), 0u);  // not before the last segment (RFC 5040 §5.5)
    b.deliver(untagged(ddp::opcode::send_se, ddp::kQueueSend, 1, 700, second, true));
    EXPECT_EQ(b.host.at(kRecvBuf + 64, 700), first);
    EXPECT_EQ(b.host.at(kRecvBuf + 764, 300), second);
    ASSERT_EQ(b.stat("cqes"), 1u);
    const std::uint8_t* cqe = b.host.mem.data() + kCqRing;
    namespace off = regmap::cqe_off;
    EXPECT_EQ(proto::get_le64(cqe + off::wr_id), 0xabcdef0012345678ull);
    EXPECT_EQ(proto::get_le32(cqe + off::byte_len), 1000u);
    EXPECT_EQ(cqe[off::opcode], static_cast<std::uint8_t>(regmap::wr_opcode::send));
    EXPECT_EQ(cqe[off::status], 0u);
    EXPECT_EQ(proto::get_le16(cqe + off::qpn), b.qpn);
    EXPECT_EQ(proto::get_le32(cqe + off::wqe_index), 0u);
    // Phase 1 on the first pass, the solicited flag of Send with SE, the receive bit.
    EXPECT_EQ(proto::get_le32(cqe + off::owner), regmap::cqe_owner::kPhase |
                                                     std::uint32_t{regmap::cqe_flags::solicited} << off::kFlagsShift |
                                                     regmap::cqe_owner::kReceive);
    EXPECT_EQ(b.stat("recv_completions"), 1u);
    EXPECT_TRUE(b.irq.items.empty());  // the CQ is not armed
}

TEST(RdmaEngineTb, ArmedCqRaisesItsVectorOnTheNextCompletion) {
    rdma_bench b("b");
    b.rdma.doorbell_in->cq_arm(b.cqn, sc_core::SC_ZERO_TIME);
    b.post_receive(0, 1, kRecvBuf, 64);
    b.post_receive(1, 2, kRecvBuf + 64, 64);
    b.deliver(untagged(ddp::opcode::send, ddp::kQueueSend, 1, 0, pattern(8, 0)));
    ASSERT_EQ(b.irq.items.size(), 1u);
    EXPECT_EQ(b.irq.items[0].address, 1u);  // the CQ's vector
    // One interrupt per arm: the second completion raises nothing.
    b.deliver(untagged(ddp::opcode::send, ddp::kQueueSend, 2, 0, pattern(8, 0)));
    EXPECT_EQ(b.irq.items.size(), 1u);
    EXPECT_EQ(proto::get_le64(b.host.mem.data() + kCqRing + regmap::kCqeSize + regmap::cqe_off::wr_id), 2u);
    EXPECT_EQ(b.stat("interrupts"), 1u);
}

TEST(RdmaEngineTb, ReadRequestIsAnsweredByReadResponsesFromTheRegion) {
    rdma_bench b("b");
    const bytes src = pattern(2500, 3);
    std::memcpy(b.host.mem.data() + kRegion + 1000, src.data(), src.size());
    ddp::read_request rr;
    rr.sink_stag = 0x4242;
    rr.sink_to = 0x900000;
    rr.size = 2500;
    rr.src_stag = b.stag;
    rr.src_to = 1000;
    bytes body(ddp::kReadRequestSize);
    ddp::encode(rr, body.data());
    b.deliver(untagged(ddp::opcode::read_request, ddp::kQueueReadRequest, 1, 0, body));
    sc_core::sc_start(ns(10000));  // the transmit thread sends the responses
    // MULPDU 1000: 986 payload bytes beside the 14-byte tagged header (RFC 5041 §5.2).
    const auto segs = ddp::segment_message(2500, 1000, true);
    ASSERT_EQ(segs.size(), 3u);
    ASSERT_EQ(b.tx_out.items.size(), 3u);
    bytes got;
    for (std::size_t i = 0; i < 3; ++i) {
        const bytes& u = b.tx_out.items[i].data;
        std::string error;
        const auto h = ddp::decode_header(u.data(), u.size(), &error);
        ASSERT_TRUE(h) << error;
        EXPECT_TRUE(h->tagged);
        EXPECT_EQ(h->opcode, ddp::opcode::read_response);
        EXPECT_EQ(h->stag, 0x4242u);
        EXPECT_EQ(h->tagged_offset, 0x900000u + segs[i].offset);
        EXPECT_EQ(h->last, i == 2);
        EXPECT_EQ(u.size(), ddp::kTaggedHeaderSize + segs[i].length);
        got.insert(got.end(), u.begin() + ddp::kTaggedHeaderSize, u.end());
    }
    EXPECT_EQ(got, src);
    EXPECT_EQ(b.stat("read_responses_sent"), 1u);
    // Responses leave in time order, each after its source read.
    EXPECT_LT(b.tx_out.items[0].at, b.tx_out.items[2].at);
    EXPECT_GE(b.tx_out.items[0].at, kMemLatency);
}

struct rejected {
    ddp::term_layer layer;
    std::uint8_t etype, code;
};

void expect_rejected_write(rdma_bench& b, const bytes& ulpdu, const rejected& want) {
    const std::size_t writes = b.host.writes.size();
    b.deliver(ulpdu);
    EXPECT_EQ(b.host.writes.size() - writes, 1u);  // the QP error CQE only: no payload
    EXPECT_EQ(b.host.at(kRegion, 4096), bytes(4096, 0));
    const ddp::terminate t = sent_terminate(b);
    EXPECT_EQ(t.layer, want.layer);
    EXPECT_EQ(t.etype, want.etype);
    EXPECT_EQ(t.code, want.code);
    // The offending DDP header rides in the Terminate (RFC 5040 §4.8: M and D set).
    EXPECT_TRUE(t.d);
    EXPECT_TRUE(t.m);
    EXPECT_EQ(t.ddp_segment_length, ulpdu.size());
    EXPECT_EQ(t.ddp_header, bytes(ulpdu.begin(), ulpdu.begin() + ddp::kTaggedHeaderSize));
    EXPECT_EQ(b.qp_state(), static_cast<std::uint8_t>(regmap::qp_state::error));
    EXPECT_EQ(b.stat("terminates_sent"), 1u);
    EXPECT_EQ(b.stat("placed_bytes"), 0u);
    // The QP error entry on the receive CQ (docs/architecture.md, QP states).
    const std::uint8_t* cqe = b.host.mem.data() + kCqRing;
    EXPECT_EQ(cqe[regmap::cqe_off::opcode], regmap::kCqeOpcodeQpError);
    // A later segment is not placed: the stream is dead (RFC 5040 §6.2).
    b.deliver(tagged_write(b.stag, 0, pattern(16, 1)));
    EXPECT_EQ(b.host.at(kRegion, 16), bytes(16, 0));
    EXPECT_EQ(b.stat("rx_dropped"), 1u);
}

TEST(RdmaEngineTb, WriteToAnUnknownStagIsTerminatedAndNotPlaced) {
    rdma_bench b("b");
    // STag index 0x3f was never registered (the low 8 bits are the key).
    expect_rejected_write(b, tagged_write((b.stag & 0xff) | 0x3f00, 0, pattern(64, 1)),
                          {ddp::term_layer::ddp, ddp::term::kDdpTaggedBuffer, ddp::term::kDdpTaggedInvalidStag});
}

TEST(RdmaEngineTb, DestroyingAQpInErrorReleasesItsConnectionOnce) {
    rdma_bench b("b");
    // The QP's stream dies (a Write to an unknown STag): Error, and its connection is closed ...
    b.deliver(tagged_write((b.stag & 0xff) | 0x3f00, 0, pattern(64, 1)));
    ASSERT_EQ(b.qp_state(), static_cast<std::uint8_t>(regmap::qp_state::error));
    EXPECT_EQ(b.toe.closed, std::vector<std::uint32_t>{kConn});
    // ... but stays the QP's until the QP is destroyed: only then may the TCP engine reuse its id.
    EXPECT_TRUE(b.toe.released.empty());
    ASSERT_EQ(b.rdma.destroy_qp(b.qpn), 0);
    EXPECT_EQ(b.toe.released, std::vector<std::uint32_t>{kConn});
    // A QP that never ran on a connection releases none.
    const int idle = b.rdma.create_qp({kSqRing, 16, kRqRing, 16, b.cqn, b.cqn, kPd});
    ASSERT_GE(idle, 0);
    ASSERT_EQ(b.rdma.destroy_qp(static_cast<std::uint32_t>(idle)), 0);
    EXPECT_EQ(b.toe.released.size(), 1u);
}

TEST(RdmaEngineTb, WritePastTheRegionIsABoundsError) {
    rdma_bench b("b");
    // 4090 + 64 runs past the 4 KiB region (RFC 5041 §7.1: base or bounds).
    expect_rejected_write(b, tagged_write(b.stag, 4090, pattern(64, 1)),
                          {ddp::term_layer::ddp, ddp::term::kDdpTaggedBuffer, ddp::term::kDdpTaggedBaseOrBounds});
}

TEST(RdmaEngineTb, WriteWithoutRemoteWriteRightIsAnAccessRightsError) {
    rdma_bench b("b", regmap::mr_access::remote_read);
    expect_rejected_write(b, tagged_write(b.stag, 0, pattern(64, 1)),
                          {ddp::term_layer::rdma, ddp::term::kRdmaRemoteProtection, ddp::term::kRdmaAccessRights});
}

TEST(RdmaEngineTb, ReadRequestWithoutRemoteReadRightIsTerminatedAndSendsNoData) {
    rdma_bench b("b", regmap::mr_access::remote_write);
    ddp::read_request rr;
    rr.sink_stag = 1;
    rr.size = 100;
    rr.src_stag = b.stag;
    bytes body(ddp::kReadRequestSize);
    ddp::encode(rr, body.data());
    b.deliver(untagged(ddp::opcode::read_request, ddp::kQueueReadRequest, 1, 0, body));
    sc_core::sc_start(ns(10000));
    const ddp::terminate t = sent_terminate(b);  // and no Read Response
    EXPECT_EQ(t.layer, ddp::term_layer::rdma);
    EXPECT_EQ(t.etype, ddp::term::kRdmaRemoteProtection);
    EXPECT_EQ(t.code, ddp::term::kRdmaAccessRights);
    EXPECT_EQ(b.stat("read_responses_sent"), 0u);
}

TEST(RdmaEngineTb, SendWithoutAPostedReceiveIsANoBufferError) {
    rdma_bench b("b");
    b.deliver(untagged(ddp::opcode::send, ddp::kQueueSend, 1, 0, pattern(32, 0)));
    const ddp::terminate t = sent_terminate(b);
    EXPECT_EQ(t.layer, ddp::term_layer::ddp);
    EXPECT_EQ(t.etype, ddp::term::kDdpUntaggedBuffer);
    EXPECT_EQ(t.code, ddp::term::kDdpUntaggedNoBuffer);
    EXPECT_EQ(t.ddp_header.size(), ddp::kUntaggedHeaderSize);
    EXPECT_EQ(b.host.at(kRecvBuf, 32), bytes(32, 0));
}

TEST(RdmaEngineTb, SendLongerThanThePostedBufferIsTooLongAndNotPlaced) {
    rdma_bench b("b");
    b.post_receive(0, 9, kRecvBuf, 16);
    b.deliver(untagged(ddp::opcode::send, ddp::kQueueSend, 1, 0, pattern(17, 1)));
    const ddp::terminate t = sent_terminate(b);
    EXPECT_EQ(t.code, ddp::term::kDdpUntaggedMessageTooLong);
    EXPECT_EQ(b.host.at(kRecvBuf, 17), bytes(17, 0));
}

TEST(RdmaEngineTb, OutOfOrderWriteIsPlacedWhenSafeAndRefusedWithoutTerminateOtherwise) {
    rdma_bench b("b");
    tlm::tlm_response_status st = tlm::TLM_INCOMPLETE_RESPONSE;
    b.deliver(tagged_write(b.stag, 64, pattern(32, 7)), stream_kind::out_of_order, &st);
    EXPECT_EQ(st, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.host.at(kRegion + 64, 32), pattern(32, 7));
    EXPECT_EQ(b.stat("placed_out_of_order_bytes"), 32u);
    // A bad STag out of order: refused, no Terminate, the QP stays in RTS (the in-order path judges it).
    b.deliver(tagged_write((b.stag & 0xff) | 0x3f00, 0, pattern(32, 7)), stream_kind::out_of_order, &st);
    EXPECT_EQ(st, tlm::TLM_GENERIC_ERROR_RESPONSE);
    // A Send is never placed out of order.
    b.post_receive(0, 1, kRecvBuf, 64);
    b.deliver(untagged(ddp::opcode::send, ddp::kQueueSend, 1, 0, pattern(8, 0)), stream_kind::out_of_order, &st);
    EXPECT_EQ(st, tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(b.host.at(kRecvBuf, 8), bytes(8, 0));
    EXPECT_TRUE(b.tx_out.items.empty());
    EXPECT_EQ(b.qp_state(), static_cast<std::uint8_t>(regmap::qp_state::rts));
}

TEST(RdmaEngineTb, CqOverrunSendsTheQpWhoseCompletionWasLostToErrorAndOthersCarryOn) {
    rdma_bench b("b");
    // A second QP with a CQ of its own, on another connection.
    constexpr std::uint64_t kSq2 = 0x5000, kRq2 = 0x5800, kCq2 = 0x6000;
    const auto cq2 = static_cast<std::uint32_t>(b.rdma.create_cq({kCq2, 16, 2}));
    const auto qp2 = static_cast<std::uint32_t>(b.rdma.create_qp({kSq2, 16, kRq2, 16, cq2, cq2, kPd}));
    qp_stream s2;
    s2.conn = kConn + 1;
    s2.max_ulpdu = 1000;
    ASSERT_TRUE(b.rdma.qp_connect(qp2, s2));
    // Sixteen Sends fill the first QP's 16-entry CQ; the driver consumes nothing.
    for (std::uint32_t i = 0; i < 16; ++i) {
        b.post_receive(i, 100 + i, kRecvBuf + 64 * i, 64);
        b.deliver(untagged(ddp::opcode::send, ddp::kQueueSend, i + 1, 0, pattern(8, static_cast<std::uint8_t>(i))));
    }
    ASSERT_EQ(b.stat("cqes"), 16u);
    EXPECT_EQ(b.qp_state(), static_cast<std::uint8_t>(regmap::qp_state::rts));
    // The seventeenth completion finds no room: it is lost, and so the QP can no longer account for
    // its work: Error, and the peer is told (RDMAP Local Catastrophic Error).
    b.post_receive(16, 116, kRecvBuf, 64);
    b.deliver(untagged(ddp::opcode::send, ddp::kQueueSend, 17, 0, pattern(8, 0x11)));
    sc_core::sc_start(ns(2000));  // the engine's transmit thread takes it from there
    EXPECT_GE(b.stat("cq_overruns"), 1u);
    EXPECT_EQ(b.stat("cq_overrun_qp_errors"), 1u);
    EXPECT_EQ(b.qp_state(), static_cast<std::uint8_t>(regmap::qp_state::error));
    // query_qp says a Terminate was sent though its layer, type and code are all 0 (RDMAP Local
    // Catastrophic Error): the valid bit, not the fields, tells (it used to read as "none").
    namespace q = regmap::query_qp_result;
    const std::uint32_t word = b.rdma.qp_query(b.qpn);
    EXPECT_EQ(word & q::kTerminateValid, q::kTerminateValid);
    EXPECT_EQ(word & q::kTerminateReceived, 0u);
    EXPECT_EQ(word >> q::kCodeShift, 0u);
    // The driver is told asynchronously (verbs IBV_EVENT_CQ_ERR): one event naming the CQ, however
    // many completions it lost; acknowledged, it is gone.
    EXPECT_EQ(b.rdma.async_event(),
              static_cast<std::uint32_t>(regmap::async_event::cq_error) << regmap::kAsyncEventTypeShift | b.cqn);
    b.rdma.ack_async_event();
    EXPECT_EQ(b.rdma.async_event(), 0u);
    const ddp::terminate t = sent_terminate(b);
    EXPECT_EQ(t.layer, ddp::term_layer::rdma);
    EXPECT_EQ(t.etype, ddp::term::kRdmaLocalCatastrophic);
    EXPECT_EQ(t.code, 0u);
    EXPECT_EQ(b.toe.closed, std::vector<std::uint32_t>{kConn});
    // The other QP carries on: a Send into its posted receive completes on its own CQ.
    std::uint8_t* rqe = b.host.mem.data() + kRq2;
    proto::put_le64(rqe + regmap::rqe_off::wr_id, 0x2222);
    proto::put_le64(rqe + regmap::rqe_off::addr, kRecvBuf + 2048);
    proto::put_le32(rqe + regmap::rqe_off::length, 64);
    proto::put_le32(rqe + regmap::rqe_off::stag, b.recv_stag);
    b.rdma.doorbell_in->rq_doorbell(qp2, 1, sc_core::SC_ZERO_TIME);
    stream_ext ext;
    ext.conn = kConn + 1;
    const bytes u = untagged(ddp::opcode::send, ddp::kQueueSend, 1, 0, pattern(8, 0x40));
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(send_stream(b.framer.out, ext, u.data(), u.size(), d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.host.at(kRecvBuf + 2048, 8), pattern(8, 0x40));
    EXPECT_EQ(proto::get_le64(b.host.mem.data() + kCq2 + regmap::cqe_off::wr_id), 0x2222u);
    EXPECT_EQ(static_cast<std::uint8_t>(b.rdma.qp_query(qp2) & 0xff), static_cast<std::uint8_t>(regmap::qp_state::rts));
}

TEST(RdmaEngineTb, UlpduOnAnUnknownConnectionIsDropped) {
    rdma_bench b("b");
    stream_ext ext;
    ext.conn = kConn + 1;
    const bytes u = tagged_write(b.stag, 0, pattern(8, 1));
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    send_stream(b.framer.out, ext, u.data(), u.size(), d);
    EXPECT_EQ(b.stat("rx_dropped"), 1u);
    EXPECT_EQ(b.host.at(kRegion, 8), bytes(8, 0));
}

// ---- WQE fetches in flight across QPs (rnic.rdma.wqe_fetch_depth) ------------------------------

constexpr std::uint64_t kFanSq = 0x30000, kFanRq = 0x38000;  // per extra QP: 16 slots of each
constexpr std::uint32_t kFanRemoteStag = 0x1234;

// A bench whose engine serves `qps` QPs (the bench's own and qps - 1 more, each on a connection of
// its own), each with one posted 64-byte RDMA Write of its own bytes, doorbells rung at time 0.
struct fanout_bench {
    rdma_bench b;
    std::vector<std::uint32_t> qpns;
    fanout_bench(const sc_core::sc_module_name& n, std::uint32_t depth, std::uint32_t qps)
        : b(n, regmap::mr_access::remote_write | regmap::mr_access::remote_read, params(depth)) {
        qpns.push_back(b.qpn);
        for (std::uint32_t i = 1; i < qps; ++i) {
            const auto q = static_cast<std::uint32_t>(
                b.rdma.create_qp({kFanSq + i * 0x400, 16, kFanRq + i * 0x400, 16, b.cqn, b.cqn, kPd}));
            qp_stream s;
            s.conn = kConn + i;
            s.max_ulpdu = 1000;
            EXPECT_TRUE(b.rdma.qp_connect(q, s));
            qpns.push_back(q);
        }
        for (std::uint32_t i = 0; i < qps; ++i) post_write(i, ring(i), payload(i), kRecvBuf + 64 * i);
    }
    static rdma_engine_params params(std::uint32_t depth) {
        rdma_engine_params p;
        p.wqe_fetch_depth = depth;
        return p;
    }
    static bytes payload(std::uint32_t i) { return pattern(64, static_cast<std::uint8_t>(0x10 * i + 1)); }
    static std::uint64_t ring(std::uint32_t i) { return i == 0 ? kSqRing : kFanSq + i * 0x400; }
    // QP i's WQE at slot 0 of `sq`: a signaled RDMA Write of `data`, put at `src` in the receive region.
    void post_write(std::uint32_t i, std::uint64_t sq, const bytes& data, std::uint64_t src) {
        std::memcpy(b.host.mem.data() + src, data.data(), data.size());
        std::uint8_t* wqe = b.host.mem.data() + sq;
        std::memset(wqe, 0, regmap::kSendWqeSize);
        namespace off = regmap::sqe_off;
        wqe[off::opcode] = static_cast<std::uint8_t>(regmap::wr_opcode::rdma_write);
        wqe[off::flags] = regmap::wr_flags::signaled;
        proto::put_le64(wqe + off::wr_id, 1000 + i);
        proto::put_le64(wqe + off::local_addr, src);
        proto::put_le32(wqe + off::length, static_cast<std::uint32_t>(data.size()));
        proto::put_le32(wqe + off::local_stag, b.recv_stag);
        proto::put_le32(wqe + off::remote_stag, kFanRemoteStag);
        b.rdma.doorbell_in->sq_doorbell(qpns[i], 1, sc_core::SC_ZERO_TIME);
    }
    // The payload of the one tagged Write sent on QP i's connection (empty: none, or more than one).
    bytes sent_on(std::uint32_t i) const {
        bytes found;
        int count = 0;
        for (const auto& item : b.tx_out.items) {
            if (item.conn != static_cast<std::int64_t>(kConn + i)) continue;
            ++count;
            const auto h = ddp::decode_header(item.data.data(), item.data.size(), nullptr);
            if (h && h->tagged && h->stag == kFanRemoteStag) {
                found.assign(item.data.begin() + ddp::kTaggedHeaderSize, item.data.end());
            }
        }
        return count == 1 ? found : bytes{};
    }
    sc_core::sc_time last_sent() const {
        sc_core::sc_time last = sc_core::SC_ZERO_TIME;
        for (const auto& item : b.tx_out.items) last = std::max(last, item.at);
        return last;
    }
};

TEST(RdmaEngineTb, WqeFetchesInFlightSendManyQpsWorkSoonerWithTheSameBytes) {
    constexpr std::uint32_t kQps = 8;
    fanout_bench serial("serial", 1, kQps), ahead("ahead", 8, kQps);
    sc_core::sc_start(ns(20000));
    for (fanout_bench* f : {&serial, &ahead}) {
        ASSERT_EQ(f->b.tx_out.items.size(), kQps) << f->b.name();
        for (std::uint32_t i = 0; i < kQps; ++i) EXPECT_EQ(f->sent_on(i), fanout_bench::payload(i)) << i;
        EXPECT_EQ(f->b.stat("wqes"), kQps);  // (their completions wait for TCP acknowledgements)
    }
    // One at a time, every QP's turn waits for its own WQE read (100 ns here); eight in flight, the
    // reads overlap and only the first is waited for in full.
    EXPECT_GE(serial.last_sent() - ahead.last_sent(), (kQps - 2) * kMemLatency)
        << serial.last_sent() << " vs " << ahead.last_sent();
    // The QPs go out in the same round-robin order either way.
    for (std::uint32_t k = 0; k < kQps; ++k) EXPECT_EQ(serial.b.tx_out.items[k].conn, ahead.b.tx_out.items[k].conn);
    boost::json::object stats;
    ahead.b.rdma.report_stats(stats);
    ASSERT_TRUE(stats.contains("wqe_prefetch"));
    EXPECT_EQ(stats["wqe_prefetch"].at("fetches").to_number<std::uint64_t>(), kQps);
    EXPECT_EQ(stats["wqe_prefetch"].at("used").to_number<std::uint64_t>(), kQps);
    EXPECT_EQ(stats["wqe_prefetch"].at("stale").to_number<std::uint64_t>(), 0u);
    // Only the first turn issued its own read; every other QP's was read ahead of its turn.
    EXPECT_EQ(stats["wqe_prefetch"].at("read_at_turn").to_number<std::uint64_t>(), 1u);
    // Depth 1 reports nothing new: results of scenarios without the key keep their keys.
    boost::json::object serial_stats;
    serial.b.rdma.report_stats(serial_stats);
    EXPECT_FALSE(serial_stats.contains("wqe_prefetch"));
}

TEST(RdmaEngineTb, AQpMadeAnewWhileItsWqesAreReadAheadSendsItsOwnWork) {
    fanout_bench f("f", 4, 2);
    // At 50 ns the first QP's turn still waits for its WQE read (100 ns); the second QP's read was
    // issued with it and is held for that QP's turn.
    sc_core::sc_start(ns(50));
    boost::json::object held;
    f.b.rdma.report_stats(held);
    EXPECT_EQ(held["wqe_prefetch"].at("fetches").to_number<std::uint64_t>(), 2u);
    EXPECT_EQ(held["wqe_prefetch"].at("used").to_number<std::uint64_t>(), 1u);
    const std::uint32_t old_qpn = f.qpns[1];
    ASSERT_TRUE(f.b.rdma.qp_modify(old_qpn, static_cast<std::uint8_t>(regmap::qp_state::error)));
    ASSERT_EQ(f.b.rdma.destroy_qp(old_qpn), 0);
    // A new QP takes the number and the same ring, with other work in the same slot: a read of the
    // old QP's slot still held would send the old bytes.
    const auto q =
        static_cast<std::uint32_t>(f.b.rdma.create_qp({fanout_bench::ring(1), 16, kFanRq, 16, f.b.cqn, f.b.cqn, kPd}));
    ASSERT_EQ(q, old_qpn);
    qp_stream s;
    s.conn = kConn + 1;
    s.max_ulpdu = 1000;
    ASSERT_TRUE(f.b.rdma.qp_connect(q, s));
    const bytes fresh = pattern(64, 0xc0);
    f.post_write(1, fanout_bench::ring(1), fresh, kRecvBuf + 0x400);
    sc_core::sc_start(ns(20000));
    EXPECT_EQ(f.sent_on(0), fanout_bench::payload(0));
    EXPECT_EQ(f.sent_on(1), fresh);  // not the destroyed QP's WQE, read ahead before it went
}

}  // namespace
}  // namespace rnic::test
