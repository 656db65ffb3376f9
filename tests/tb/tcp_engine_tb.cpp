// tcp_engine through its sockets: the test is the remote peer (frames in at eth_rx, frames out at
// eth_tx, parsed with the proto codecs) and the framing unit (FPDU bytes in at stream_tx_in, the
// in-order stream out at stream_rx_out). Checks the three-way handshake (RFC 9293 §3.5), data
// delivered and acknowledged, an out-of-order segment held until the hole is filled and then
// delivered in order (RFC 9293 §3.10.7.4), and a lost segment retransmitted after the RTO
// (RFC 6298) with the same bytes; the per-segment pipeline costs show in the frames' times.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <numeric>
#include <optional>

#include "buffer/buffer_memory.h"
#include "core/stream.h"
#include "framing/framing_factory.h"
#include "proto/net.h"
#include "tb_support.h"
#include "toe/tcp_engine.h"

namespace rnic::test {
namespace {

namespace net = proto::net;
using bytes = std::vector<std::uint8_t>;
sc_core::sc_time ns(double v) {
    return sc_core::sc_time(v, sc_core::SC_NS);
}
sc_core::sc_time us(double v) {
    return sc_core::sc_time(v, sc_core::SC_US);
}

const net::mac_address kNicMac{0x02, 0, 0, 0, 0, 0x0a};
const net::mac_address kPeerMac{0x52, 0x54, 0, 0, 0, 0x02};
constexpr std::uint32_t kNicIp = 0x0a000001, kPeerIp = 0x0a000002;
constexpr std::uint16_t kNicPort = 4791, kPeerPort = 40000;
constexpr std::uint32_t kPeerIss = 1000;

// The control processor, the RDMA engine and the framer's out-of-order port, as the engine sees them.
struct toe_stubs : sc_core::sc_module, toe_conn_events_if, toe_tx_progress_if, framer_ooo_if {
    sc_core::sc_port<reassembly_if> reasm_out;  // as the framer: what it placed, recorded with the engine
    std::vector<std::pair<std::uint32_t, toe_event>> events;
    std::vector<std::uint64_t> acked;     // acknowledged send-stream offsets, as reported
    std::uint64_t offered = 0;            // out-of-order segments offered for placement
    std::vector<std::uint32_t> released;  // connections the engine freed (connection_released)
    explicit toe_stubs(const sc_core::sc_module_name& n) : sc_module(n), reasm_out("reasm_out") {}
    std::vector<std::uint16_t> event_ports;  // the local port each event names (refused: the listening port)
    void on_tcp_event(std::uint32_t conn, toe_event ev, std::uint16_t port) override {
        events.emplace_back(conn, ev);
        event_ports.push_back(port);
    }
    void on_tx_acked(std::uint32_t, std::uint64_t off, const sc_core::sc_time&) override { acked.push_back(off); }
    // When set, an offered segment is placed whole, landing in host memory this long after the offer.
    std::optional<sc_core::sc_time> place_landing;
    placement_landing last;
    std::size_t place_out_of_order(std::uint32_t conn, std::uint64_t offset, const std::uint8_t*, std::size_t len,
                                   sc_core::sc_time&) override {
        ++offered;
        last = {};
        if (!place_landing) return 0;  // nothing placed: the engine buffers the segment
        last = {len, *place_landing};
        reasm_out->note_placed(conn, offset, static_cast<std::uint32_t>(len));
        return len;
    }
    std::size_t place_split_fpdus(std::uint32_t, std::uint64_t, const std::uint8_t*, std::size_t, std::uint64_t,
                                  std::size_t, sc_core::sc_time&) override {
        return 0;
    }
    std::size_t split_fpdu_reach(std::uint32_t) const override { return 0; }
    placement_landing last_placement() const override { return last; }
    void connection_released(std::uint32_t conn) override { released.push_back(conn); }
};

struct toe_bench : sc_core::sc_module {
    std::unique_ptr<framing> frames;  // the device's framing (MPA, TLM datapath)
    buffer_memory buffer;
    tcp_engine toe;
    tb_initiator wire, framer;
    tb_sink eth_out, rx_out, dma;
    toe_stubs stubs;
    std::uint32_t nic_iss = 0;  // learnt from the SYN-ACK
    std::uint32_t conn = 0;
    std::uint16_t peer_port = kPeerPort;  // the source port of peer_sends

    explicit toe_bench(const sc_core::sc_module_name& n, tcp_engine_params p = tcp_engine_params{},
                       framing_params fp = framing_params{}, buffer_memory_params bp = buffer_memory_params{})
        : sc_module(n),
          frames(make_framing(fp)),
          buffer("buffer", bp),
          toe("toe", p, buffer, *frames),
          wire("wire"),
          framer("framer"),
          eth_out("eth_out"),
          rx_out("rx_out"),
          dma("dma"),
          stubs("stubs") {
        toe.set_station({kNicMac, kNicIp});
        toe.add_neighbour(kPeerIp, kPeerMac);
        toe.buf_out.bind(buffer.mem_in);
        toe.dma_out.bind(dma.in);
        toe.stream_rx_out.bind(rx_out.in);
        toe.eth_tx.bind(eth_out.in);
        wire.out.bind(toe.eth_rx);
        framer.out.bind(toe.stream_tx_in);
        toe.conn_events_out.bind(stubs);
        toe.tx_progress_out.bind(stubs);
        toe.ooo_out.bind(stubs);
        stubs.reasm_out.bind(toe.reasm_in);
    }
    // A segment from the peer; seq/ack as absolute sequence numbers.
    void peer_sends(std::uint8_t flags, std::uint32_t seq, std::uint32_t ack, const bytes& payload = {},
                    bool syn_options = false) {
        net::endpoints ep{kPeerMac, kNicMac, kPeerIp, kNicIp};
        net::ipv4_header ip;
        ip.src = kPeerIp;
        ip.dst = kNicIp;
        net::tcp_header t;
        t.src_port = peer_port;
        t.dst_port = kNicPort;
        t.seq = seq;
        t.ack = ack;
        t.flags = flags;
        t.window = 0xffff;
        if (syn_options) t.mss = 1460;
        bytes f;
        net::build_tcp_frame(ep, ip, t, payload.data(), payload.size(), f);
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        send_frame_bytes(wire.out, f.data(), f.size(), d);
    }
    net::parsed_tcp_frame frame(std::size_t i) const {
        std::string error;
        const auto f = net::parse_tcp_frame(eth_out.items.at(i).data.data(), eth_out.items.at(i).data.size(), &error);
        EXPECT_TRUE(f) << error;
        return f.value_or(net::parsed_tcp_frame{});
    }
    bytes payload(std::size_t i) const {
        const net::parsed_tcp_frame f = frame(i);
        const bytes& d = eth_out.items.at(i).data;
        return bytes(d.begin() + static_cast<std::ptrdiff_t>(f.payload_offset),
                     d.begin() + static_cast<std::ptrdiff_t>(f.payload_offset + f.payload_len));
    }
    // Passive open: listen, SYN in, SYN-ACK out, ACK in.
    void handshake() {
        toe.tcp_listen(kNicPort);
        peer_sends(net::tcp_flags::kSyn, kPeerIss, 0, {}, true);
        sc_core::sc_start(us(1));
        ASSERT_EQ(eth_out.items.size(), 1u);
        nic_iss = frame(0).tcp.seq;
        peer_sends(net::tcp_flags::kAck, kPeerIss + 1, nic_iss + 1);
        sc_core::sc_start(us(1));
        ASSERT_EQ(stubs.events.size(), 1u);
        conn = stubs.events[0].first;
    }
    bytes delivered() const {
        bytes all;
        for (const auto& it : rx_out.items) all.insert(all.end(), it.data.begin(), it.data.end());
        return all;
    }
    std::uint64_t stat(const char* key) const {
        boost::json::object o;
        toe.report_stats(o);
        return o.contains(key) ? o[key].to_number<std::uint64_t>() : 0;
    }
    boost::json::array connections() const {
        boost::json::object o;
        toe.report_stats(o);
        return o["connections"].as_array();
    }
    // Both directions closed, the peer first: its FIN, our close, its ACK of our FIN.
    void passive_close() {
        peer_sends(net::tcp_flags::kFin | net::tcp_flags::kAck, kPeerIss + 1, nic_iss + 1);
        sc_core::sc_start(us(10));
        toe.tcp_close(conn);
        sc_core::sc_start(us(10));
        peer_sends(net::tcp_flags::kAck, kPeerIss + 2, nic_iss + 2);
        sc_core::sc_start(us(10));
    }
};

bytes pattern(std::size_t n, std::uint8_t first) {
    bytes b(n);
    std::iota(b.begin(), b.end(), first);
    return b;
}

TEST(TcpEngineTb, PassiveOpenAnswersASynAndIsEstablishedByTheAck) {
    toe_bench b("b");
    b.toe.tcp_listen(kNicPort);
    b.peer_sends(net::tcp_flags::kSyn, kPeerIss, 0, {}, true);
    sc_core::sc_start(us(1));
    ASSERT_EQ(b.eth_out.items.size(), 1u);
    const net::parsed_tcp_frame synack = b.frame(0);
    EXPECT_EQ(synack.eth.dst, kPeerMac);
    EXPECT_EQ(synack.eth.src, kNicMac);
    EXPECT_EQ(synack.ip.src, kNicIp);
    EXPECT_EQ(synack.ip.dst, kPeerIp);
    EXPECT_EQ(synack.tcp.src_port, kNicPort);
    EXPECT_EQ(synack.tcp.dst_port, kPeerPort);
    EXPECT_EQ(synack.tcp.flags & (net::tcp_flags::kSyn | net::tcp_flags::kAck),
              net::tcp_flags::kSyn | net::tcp_flags::kAck);
    EXPECT_EQ(synack.tcp.ack, kPeerIss + 1);
    ASSERT_TRUE(synack.tcp.mss.has_value());
    EXPECT_EQ(*synack.tcp.mss, 1460u);  // MTU 1500 - 40
    // The receive pipeline (50 cycles) then the transmit pipeline (40 cycles) at 500 MHz.
    EXPECT_GE(b.eth_out.items[0].at, ns(180));
    EXPECT_TRUE(b.stubs.events.empty());  // not established before the ACK
    b.peer_sends(net::tcp_flags::kAck, kPeerIss + 1, synack.tcp.seq + 1);
    sc_core::sc_start(us(1));
    ASSERT_EQ(b.stubs.events.size(), 1u);
    EXPECT_EQ(b.stubs.events[0].second, toe_event::established);
    EXPECT_EQ(b.toe.tcp_local_port(b.stubs.events[0].first), kNicPort);
    EXPECT_EQ(b.eth_out.items.size(), 1u);  // an ACK of a SYN-ACK is not answered
}

TEST(TcpEngineTb, SegmentsToNoConnectionAreAnsweredWithAResetButASynIsDropped) {
    toe_bench b("b");
    // A SYN to a port nobody listens on is dropped unanswered (the model's choice: hosts start
    // together, and a client's SYN retransmission finds its server listening by then).
    b.peer_sends(net::tcp_flags::kSyn, kPeerIss, 0, {}, true);
    sc_core::sc_start(us(1));
    EXPECT_TRUE(b.eth_out.items.empty());
    // A segment with ACK (e.g. of a connection long gone): <SEQ=SEG.ACK><RST> (RFC 9293 §3.10.7.1).
    b.peer_sends(net::tcp_flags::kAck | net::tcp_flags::kPsh, 5000, 777, pattern(10, 1));
    sc_core::sc_start(us(1));
    ASSERT_EQ(b.eth_out.items.size(), 1u);
    const auto rst = b.frame(0);
    EXPECT_EQ(rst.tcp.flags, net::tcp_flags::kRst);
    EXPECT_EQ(rst.tcp.seq, 777u);
    EXPECT_EQ(rst.tcp.src_port, kNicPort);
    EXPECT_EQ(rst.tcp.dst_port, kPeerPort);
    EXPECT_EQ(rst.eth.dst, kPeerMac);
    EXPECT_EQ(rst.ip.dst, kPeerIp);
    // Without ACK (a FIN alone): <SEQ=0><ACK=SEG.SEQ+SEG.LEN><RST,ACK>, the FIN counting one.
    b.peer_sends(net::tcp_flags::kFin, 6000, 0, pattern(4, 1));
    sc_core::sc_start(us(1));
    ASSERT_EQ(b.eth_out.items.size(), 2u);
    EXPECT_EQ(b.frame(1).tcp.flags, net::tcp_flags::kRst | net::tcp_flags::kAck);
    EXPECT_EQ(b.frame(1).tcp.seq, 0u);
    EXPECT_EQ(b.frame(1).tcp.ack, 6000u + 4u + 1u);
    // A reset is never answered.
    b.peer_sends(net::tcp_flags::kRst, 5010, 0);
    sc_core::sc_start(us(1));
    EXPECT_EQ(b.eth_out.items.size(), 2u);
    EXPECT_EQ(b.stat("rx_no_connection"), 4u);
    EXPECT_EQ(b.stat("tx_resets_no_connection"), 2u);
    EXPECT_TRUE(b.stubs.events.empty());
}

TEST(TcpEngineTb, UnlistenRefusesTheNextSynWithAResetAndKeepsTheEstablishedConnection) {
    toe_bench b("b");
    b.handshake();  // one connection established on kNicPort
    EXPECT_TRUE(b.toe.tcp_unlisten(kNicPort));
    EXPECT_FALSE(b.toe.tcp_unlisten(kNicPort));      // no longer listening
    EXPECT_FALSE(b.toe.tcp_unlisten(kNicPort + 1));  // never listened
    // A new peer's SYN to the closed port: <SEQ=0><ACK=SEG.SEQ+1><RST,ACK> (RFC 9293 §3.10.7.1).
    b.peer_port = kPeerPort + 1;
    const std::size_t before = b.eth_out.items.size();
    b.peer_sends(net::tcp_flags::kSyn, kPeerIss, 0, {}, true);
    sc_core::sc_start(us(10));
    ASSERT_EQ(b.eth_out.items.size(), before + 1);
    const auto rst = b.frame(before);
    EXPECT_EQ(rst.tcp.flags, net::tcp_flags::kRst | net::tcp_flags::kAck);
    EXPECT_EQ(rst.tcp.seq, 0u);
    EXPECT_EQ(rst.tcp.ack, kPeerIss + 1);
    EXPECT_EQ(rst.tcp.dst_port, kPeerPort + 1);
    EXPECT_EQ(b.connections().size(), 1u);  // the SYN made no connection
    // The connection taken before the unlisten still carries data.
    b.peer_port = kPeerPort;
    const bytes data = pattern(100, 9);
    b.peer_sends(net::tcp_flags::kAck | net::tcp_flags::kPsh, kPeerIss + 1, b.nic_iss + 1, data);
    sc_core::sc_start(us(10));
    EXPECT_EQ(b.delivered(), data);
    // Listening again: the next SYN is answered with a SYN-ACK.
    b.toe.tcp_listen(kNicPort);
    b.peer_port = kPeerPort + 2;
    const std::size_t again = b.eth_out.items.size();
    b.peer_sends(net::tcp_flags::kSyn, kPeerIss, 0, {}, true);
    sc_core::sc_start(us(10));
    ASSERT_EQ(b.eth_out.items.size(), again + 1);
    EXPECT_EQ(b.frame(again).tcp.flags & (net::tcp_flags::kSyn | net::tcp_flags::kAck),
              net::tcp_flags::kSyn | net::tcp_flags::kAck);
}

TEST(TcpEngineTb, UnlistenResetsAHalfOpenHandshakeOnThePort) {
    toe_bench b("b");
    b.toe.tcp_listen(kNicPort);
    b.peer_sends(net::tcp_flags::kSyn, kPeerIss, 0, {}, true);
    sc_core::sc_start(us(1));
    ASSERT_EQ(b.eth_out.items.size(), 1u);  // SYN-ACK: SYN-RECEIVED
    const std::uint32_t iss = b.frame(0).tcp.seq;
    EXPECT_TRUE(b.toe.tcp_unlisten(kNicPort));
    sc_core::sc_start(us(10));
    ASSERT_EQ(b.eth_out.items.size(), 2u);
    const auto rst = b.frame(1);
    EXPECT_EQ(rst.tcp.flags & net::tcp_flags::kRst, net::tcp_flags::kRst);
    EXPECT_EQ(rst.tcp.seq, iss + 1);  // SND.NXT after our SYN (RFC 9293 §3.10.5)
    EXPECT_EQ(b.stat("connections_freed"), 1u);
    // The peer's ACK of the SYN-ACK now finds no connection: a reset, nothing established.
    b.peer_sends(net::tcp_flags::kAck, kPeerIss + 1, iss + 1);
    sc_core::sc_start(us(10));
    ASSERT_EQ(b.eth_out.items.size(), 3u);
    EXPECT_EQ(b.frame(2).tcp.flags, net::tcp_flags::kRst);
    for (const auto& e : b.stubs.events) EXPECT_NE(e.second, toe_event::established);
}

TEST(TcpEngineTb, InOrderDataIsDeliveredAndAcknowledged) {
    toe_bench b("b");
    b.handshake();
    const bytes data = pattern(300, 1);
    b.peer_sends(net::tcp_flags::kAck | net::tcp_flags::kPsh, kPeerIss + 1, b.nic_iss + 1, data);
    sc_core::sc_start(us(10));
    EXPECT_EQ(b.delivered(), data);
    EXPECT_EQ(b.rx_out.items.at(0).conn, b.conn);
    ASSERT_EQ(b.eth_out.items.size(), 2u);
    const auto ack = b.frame(1);
    EXPECT_EQ(ack.tcp.flags & net::tcp_flags::kAck, net::tcp_flags::kAck);
    EXPECT_EQ(ack.tcp.ack, kPeerIss + 1 + 300);
    EXPECT_EQ(ack.payload_len, 0u);
}

TEST(TcpEngineTb, OutOfOrderSegmentIsHeldAndDeliveredInOrderOnceTheHoleFills) {
    toe_bench b("b");
    b.handshake();
    const bytes first = pattern(500, 1), second = pattern(400, 0x90);
    const std::uint32_t seq0 = kPeerIss + 1;
    // The second segment arrives first: nothing is delivered, a duplicate ACK asks for the hole.
    b.peer_sends(net::tcp_flags::kAck, seq0 + 500, b.nic_iss + 1, second);
    sc_core::sc_start(us(10));
    EXPECT_TRUE(b.rx_out.items.empty());
    EXPECT_EQ(b.stubs.offered, 1u);  // offered to the framer for direct placement first
    ASSERT_EQ(b.eth_out.items.size(), 2u);
    EXPECT_EQ(b.frame(1).tcp.ack, seq0);
    EXPECT_EQ(b.buffer.occupancy(), 400u);  // held in buffer memory
    // The hole fills: both segments' bytes go up in stream order, and the ACK covers both.
    b.peer_sends(net::tcp_flags::kAck, seq0, b.nic_iss + 1, first);
    sc_core::sc_start(us(10));
    bytes want = first;
    want.insert(want.end(), second.begin(), second.end());
    EXPECT_EQ(b.delivered(), want);
    EXPECT_EQ(b.frame(b.eth_out.items.size() - 1).tcp.ack, seq0 + 900);
    EXPECT_EQ(b.buffer.occupancy(), 0u);
}

TEST(TcpEngineTb, FramesPlacedOutOfOrderFillTheWriteQueueToTheHostBusAndHoldTheNextSegmentBack) {
    // rnic.tcp.rx_placement_backlog: bytes on their way to host memory hold the receive pipeline
    // back while they exceed the write queue, whether they went up in order or were placed out of
    // order by the framer.
    tcp_engine_params p;
    p.rx_placement_backlog = 1000;
    toe_bench b("b", p);
    b.handshake();
    b.stubs.place_landing = us(50);
    const std::uint32_t seq0 = kPeerIss + 1;
    // Out of order, placed whole by the framer, landing 50 us later: 1200 bytes > the 1000-byte queue.
    b.peer_sends(net::tcp_flags::kAck, seq0 + 500, b.nic_iss + 1, pattern(1200, 7));
    sc_core::sc_start(us(1));
    EXPECT_EQ(b.stubs.offered, 1u);
    EXPECT_EQ(b.buffer.occupancy(), 0u);  // placed, nothing held in buffer memory
    const std::size_t acks_before = b.eth_out.items.size();
    // The next segment cannot enter the pipeline until the placed bytes have landed.
    b.peer_sends(net::tcp_flags::kAck, seq0 + 1700, b.nic_iss + 1, pattern(100, 3));
    sc_core::sc_start(us(100));
    ASSERT_GT(b.eth_out.items.size(), acks_before);
    EXPECT_GE(b.eth_out.items[acks_before].at, us(50));
    boost::json::object o;
    b.toe.report_stats(o);
    ASSERT_TRUE(o.contains("placement"));
    EXPECT_EQ(o["placement"].as_object()["stalls"].to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(o["placement"].as_object()["peak_bytes"].to_number<std::uint64_t>(), 1200u);
}

TEST(TcpEngineTb, AFullWriteQueueToTheHostBusFillsTheIngressFifoAndItDrops) {
    // A receiver slower on its bus than on its port: frames waiting for the write queue wait in the
    // ingress FIFO (rnic.tcp.rx_ingress_frames), and once it is full, with no buffer memory to spill
    // into, the next frame is dropped (seed 001 §5.3's bufferless NIC behind a slow host bus).
    tcp_engine_params p;
    p.rx_placement_backlog = 1000;
    p.rx_ingress_frames = 1;
    p.rx_ingress_buffer = 0;
    toe_bench b("b", p);
    b.handshake();
    b.stubs.place_landing = us(50);
    const std::uint32_t seq0 = kPeerIss + 1;
    // Placed out of order, landing 50 us later: the queue stays over its 1000 bytes until then.
    b.peer_sends(net::tcp_flags::kAck, seq0 + 500, b.nic_iss + 1, pattern(1200, 7));
    sc_core::sc_start(us(1));
    // The next frame waits in the FIFO for the queue; the one after finds the FIFO full.
    b.peer_sends(net::tcp_flags::kAck, seq0 + 1700, b.nic_iss + 1, pattern(100, 3));
    sc_core::sc_start(us(1));
    b.peer_sends(net::tcp_flags::kAck, seq0 + 1800, b.nic_iss + 1, pattern(100, 4));
    sc_core::sc_start(us(100));
    boost::json::object o;
    b.toe.report_stats(o);
    const boost::json::object& ingress = o["ingress"].as_object();
    EXPECT_EQ(ingress.at("drops").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(ingress.at("peak_waiting_frames").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(b.stubs.offered, 2u);  // the dropped frame never reached the framer
}

// rnic.tcp.tx_interval_cycles: a pipelined transmit engine takes a new frame every interval while
// each frame still spends tx_cycles_per_segment (40 cycles, 80 ns at 500 MHz) in it. Three FPDUs
// appended at once leave as three segments; returns when each left, relative to the append.
std::vector<sc_core::sc_time> three_segment_departures(double interval_cycles) {
    tcp_engine_params p;
    p.tx_cycles_per_segment = 40;
    p.tx_interval_cycles = interval_cycles;
    toe_bench b("b", p);
    b.handshake();
    const std::size_t before = b.eth_out.items.size();
    stream_ext ext;
    ext.conn = b.conn;
    const bytes fpdu = pattern(200, 5);
    const sc_core::sc_time appended = sc_core::sc_time_stamp();
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(send_stream(b.framer.out, ext, fpdu.data(), fpdu.size(), d), tlm::TLM_OK_RESPONSE);
    sc_core::sc_start(us(10));
    std::vector<sc_core::sc_time> at;
    for (std::size_t i = before; i < b.eth_out.items.size(); ++i) {
        EXPECT_EQ(b.payload(i), fpdu);
        at.push_back(b.eth_out.items[i].at - appended);
    }
    return at;
}

TEST(TcpEngineTb, AnUnpipelinedTransmitEngineHoldsOneFrameAtATime) {
    const std::vector<sc_core::sc_time> at = three_segment_departures(0);  // 0: the interval is the latency
    ASSERT_EQ(at.size(), 3u);
    EXPECT_GE(at[0], sc_core::sc_time(80, sc_core::SC_NS));
    EXPECT_GE(at[1] - at[0], sc_core::sc_time(80, sc_core::SC_NS));
    EXPECT_GE(at[2] - at[1], sc_core::sc_time(80, sc_core::SC_NS));
}

TEST(TcpEngineTb, APipelinedTransmitEngineStartsAFrameEveryIntervalWithTheSameLatency) {
    const std::vector<sc_core::sc_time> at = three_segment_departures(10);  // a frame every 20 ns
    ASSERT_EQ(at.size(), 3u);
    EXPECT_GE(at[0], sc_core::sc_time(80, sc_core::SC_NS));  // each frame still takes 80 ns
    EXPECT_LT(at[1] - at[0], sc_core::sc_time(80, sc_core::SC_NS));
    EXPECT_LT(at[2] - at[1], sc_core::sc_time(80, sc_core::SC_NS));
    EXPECT_GE(at[1] - at[0], sc_core::sc_time(20, sc_core::SC_NS));
}

TEST(TcpEngineTb, StreamBytesGoOutAsASegmentAndTheAckIsReported) {
    toe_bench b("b");
    b.handshake();
    const bytes fpdu = pattern(200, 7);
    stream_ext ext;
    ext.conn = b.conn;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(send_stream(b.framer.out, ext, fpdu.data(), fpdu.size(), d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.toe.tcp_send_stream_end(b.conn), 200u);  // the send-stream offset after these bytes
    sc_core::sc_start(us(10));
    ASSERT_EQ(b.eth_out.items.size(), 2u);  // the SYN-ACK, then the data segment
    const auto seg = b.frame(1);
    EXPECT_EQ(seg.tcp.seq, b.nic_iss + 1);
    EXPECT_EQ(b.payload(1), fpdu);
    EXPECT_EQ(b.buffer.occupancy(), 200u);  // kept until acknowledged
    b.peer_sends(net::tcp_flags::kAck, kPeerIss + 1, b.nic_iss + 1 + 200);
    sc_core::sc_start(us(10));
    ASSERT_FALSE(b.stubs.acked.empty());
    EXPECT_EQ(b.stubs.acked.back(), 200u);
    EXPECT_EQ(b.buffer.occupancy(), 0u);
    EXPECT_EQ(b.toe.tcp_retransmitted_bytes(), 0u);
}

TEST(TcpEngineTb, RetransmitFromHostKeepsFramesWithoutAHostCopyUntilAcknowledged) {
    // rnic.tcp.retransmit_from = host lets the send ring go once a frame is sent, since it can be
    // fetched again from host memory; a frame without a host copy (control FPDUs, inline data, a
    // payload over several pages) must stay until acknowledged, and everything after it with it.
    tcp_engine_params p;
    p.retransmit_from_host = true;
    toe_bench b("b", p);
    b.handshake();
    auto append = [&](const bytes& data, std::uint64_t host_addr) {
        stream_ext ext;
        ext.conn = b.conn;
        refetch_ext refetch;  // the RDMA engine attaches it only to a ULPDU with a host copy
        refetch.host_addr = host_addr;
        refetch.host_len = static_cast<std::uint32_t>(data.size());
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        ASSERT_EQ(
            send_stream(b.framer.out, ext, data.data(), data.size(), d, nullptr, host_addr != 0 ? &refetch : nullptr),
            tlm::TLM_OK_RESPONSE);
    };
    append(pattern(100, 1), 0x10000);  // refetchable: let go once sent
    append(pattern(200, 2), 0);        // no host copy: held
    append(pattern(300, 3), 0x20000);  // refetchable, but behind the held one in the ring
    sc_core::sc_start(us(10));
    EXPECT_EQ(b.buffer.occupancy(), 500u);  // from the held frame to the end of the stream
    b.peer_sends(net::tcp_flags::kAck, kPeerIss + 1, b.nic_iss + 1 + 300);  // acknowledges it
    sc_core::sc_start(us(10));
    EXPECT_EQ(b.buffer.occupancy(), 0u);
}

TEST(TcpEngineTb, ARecordTheFramingCannotBuildAgainIsRetransmittedFromTheRingAndCounted) {
    // Re-framing from host memory asks the framing to build the frame again; RDMA/TCP keeps the
    // header it sent per connection and position, and has none for a frame it never built (here the
    // bench appends straight to the engine). The engine must not read past the empty result: it
    // sends the staged bytes and counts the failure (before the fix: a read past an empty vector).
    tcp_engine_params p;
    p.retransmit_from_host = true;
    framing_params fp;
    fp.kind = framing_kind::rdmatcp;
    toe_bench b("b", p, fp);
    b.handshake();
    const bytes data = pattern(300, 7);
    stream_ext ext;
    ext.conn = b.conn;
    refetch_ext refetch;
    refetch.host_addr = 0x10000;
    refetch.host_len = static_cast<std::uint32_t>(data.size());
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(send_stream(b.framer.out, ext, data.data(), data.size(), d, nullptr, &refetch), tlm::TLM_OK_RESPONSE);
    sc_core::sc_start(us(10));
    ASSERT_EQ(b.eth_out.items.size(), 2u);  // SYN-ACK and the data
    sc_core::sc_start(us(2000));            // no ACK: the RTO fires and the frame is fetched again
    ASSERT_GE(b.eth_out.items.size(), 3u);
    EXPECT_GE(b.toe.tx_refetch_failures(), 1u);
    EXPECT_EQ(b.payload(2), data);  // the ring still held it: the same bytes go out
}

TEST(TcpEngineTb, UnknownConnectionOnStreamTxIsRefused) {
    toe_bench b("b");
    stream_ext ext;
    ext.conn = 42;
    const bytes x(10, 1);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(send_stream(b.framer.out, ext, x.data(), x.size(), d), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_TRUE(b.eth_out.items.empty());
}

TEST(TcpEngineTb, LostSegmentIsRetransmittedAfterTheRto) {
    toe_bench b("b");
    b.handshake();
    const bytes fpdu = pattern(600, 3);
    stream_ext ext;
    ext.conn = b.conn;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(send_stream(b.framer.out, ext, fpdu.data(), fpdu.size(), d), tlm::TLM_OK_RESPONSE);
    sc_core::sc_start(us(10));
    ASSERT_EQ(b.eth_out.items.size(), 2u);
    const sc_core::sc_time sent = b.eth_out.items[1].at;
    // No ACK comes (the segment was lost): the RTO, never below rto_min (200 us), fires once.
    sc_core::sc_start(us(190));
    EXPECT_EQ(b.eth_out.items.size(), 2u);
    sc_core::sc_start(us(2000));
    ASSERT_GE(b.eth_out.items.size(), 3u);
    EXPECT_GE(b.eth_out.items[2].at - sent, us(200));
    const auto again = b.frame(2);
    EXPECT_EQ(again.tcp.seq, b.nic_iss + 1);
    EXPECT_EQ(b.payload(2), fpdu);  // the same bytes, read back from buffer memory
    EXPECT_EQ(b.toe.tcp_retransmitted_bytes(), 600u * (b.eth_out.items.size() - 2));
    // Acknowledged now: no more retransmissions.
    b.peer_sends(net::tcp_flags::kAck, kPeerIss + 1, b.nic_iss + 1 + 600);
    sc_core::sc_start(us(10));
    const std::size_t frames = b.eth_out.items.size();
    sc_core::sc_start(us(5000));
    EXPECT_EQ(b.eth_out.items.size(), frames);
}

TEST(TcpEngineTb, CorruptChecksumIsDroppedAndCounted) {
    toe_bench b("b");
    b.handshake();
    net::endpoints ep{kPeerMac, kNicMac, kPeerIp, kNicIp};
    net::ipv4_header ip;
    ip.src = kPeerIp;
    ip.dst = kNicIp;
    net::tcp_header t;
    t.src_port = kPeerPort;
    t.dst_port = kNicPort;
    t.seq = kPeerIss + 1;
    t.ack = b.nic_iss + 1;
    t.flags = net::tcp_flags::kAck;
    t.window = 0xffff;
    const bytes data = pattern(50, 1);
    bytes f;
    net::build_tcp_frame(ep, ip, t, data.data(), data.size(), f);
    f.back() ^= 0xff;  // a payload byte: the TCP checksum no longer matches
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    send_frame_bytes(b.wire.out, f.data(), f.size(), d);
    sc_core::sc_start(us(10));
    EXPECT_TRUE(b.rx_out.items.empty());
    EXPECT_EQ(b.stat("rx_bad_frames"), 1u);
}

// ---- connection lifecycle: a closed connection released by its owner is freed -------------

TEST(TcpEngineTb, ClosedConnectionIsFreedOnlyWhenReleasedAndItsIdServesTheNextConnection) {
    toe_bench b("b");
    const std::uint64_t all_free = b.buffer.rx_free();
    b.handshake();
    const std::uint32_t first = b.conn;
    EXPECT_EQ(b.buffer.rx_free(), all_free - tcp_engine_params{}.send_buffer);  // its send region
    b.passive_close();
    ASSERT_EQ(b.connections().at(0).as_object().at("state").as_string(), "CLOSED");
    // Closed but still its owner's: the id stays valid and nothing is freed.
    EXPECT_EQ(b.toe.tcp_local_port(first), kNicPort);
    EXPECT_TRUE(b.stubs.released.empty());
    EXPECT_EQ(b.stat("connections_freed"), 0u);
    b.toe.tcp_release(first);
    EXPECT_EQ(b.stubs.released, std::vector<std::uint32_t>{first});  // the framer forgets it
    EXPECT_EQ(b.toe.tcp_local_port(first), 0u);                      // the id names nothing now
    EXPECT_EQ(b.buffer.rx_free(), all_free);                         // the region is back
    // A new peer connection takes the freed id and starts clean.
    b.peer_port = kPeerPort + 1;
    b.stubs.events.clear();
    b.eth_out.items.clear();
    b.handshake();
    EXPECT_EQ(b.conn, first);
    EXPECT_EQ(b.toe.tcp_local_port(b.conn), kNicPort);
    // Both stay in the results, in the order they were opened.
    const boost::json::array conns = b.connections();
    ASSERT_EQ(conns.size(), 2u);
    EXPECT_EQ(conns[0].as_object().at("state").as_string(), "CLOSED");
    EXPECT_EQ(conns[0].as_object().at("remote_port").to_number<int>(), kPeerPort);
    EXPECT_EQ(conns[1].as_object().at("state").as_string(), "ESTABLISHED");
    EXPECT_EQ(conns[1].as_object().at("remote_port").to_number<int>(), kPeerPort + 1);
    EXPECT_EQ(b.stat("connections_opened"), 2u);
    EXPECT_EQ(b.stat("connections_freed"), 1u);
}

TEST(TcpEngineTb, ReleasedWhileClosingIsFreedAfterTimeWait) {
    toe_bench b("b");
    b.handshake();
    // We close first: FIN-WAIT-1; the owner lets go at once (as a QP's graceful close does).
    b.toe.tcp_close(b.conn);
    b.toe.tcp_release(b.conn);
    sc_core::sc_start(us(10));
    b.peer_sends(net::tcp_flags::kAck, kPeerIss + 1, b.nic_iss + 2);  // our FIN acknowledged
    b.peer_sends(net::tcp_flags::kFin | net::tcp_flags::kAck, kPeerIss + 1, b.nic_iss + 2);
    sc_core::sc_start(us(10));
    EXPECT_EQ(b.connections().at(0).as_object().at("state").as_string(), "TIME-WAIT");
    EXPECT_TRUE(b.stubs.released.empty());  // TIME-WAIT still holds the connection (RFC 9293 §3.6.1)
    sc_core::sc_start(us(1100));            // 2MSL of the model: 1 ms
    EXPECT_EQ(b.stubs.released, std::vector<std::uint32_t>{b.conn});
    EXPECT_EQ(b.stat("connections_freed"), 1u);
}

TEST(TcpEngineTb, PassiveConnectionResetBeforeEstablishedIsFreedWithoutAnOwner) {
    toe_bench b("b");
    b.toe.tcp_listen(kNicPort);
    b.peer_sends(net::tcp_flags::kSyn, kPeerIss, 0, {}, true);
    sc_core::sc_start(us(1));
    ASSERT_EQ(b.eth_out.items.size(), 1u);  // SYN-ACK
    b.peer_sends(net::tcp_flags::kRst, kPeerIss + 1, 0);
    sc_core::sc_start(us(10));
    // Nobody ever heard of it (no established event), so nobody has to release it: freed at once.
    ASSERT_EQ(b.stubs.events.size(), 1u);
    EXPECT_EQ(b.stubs.events[0].second, toe_event::released);
    ASSERT_EQ(b.stubs.released.size(), 1u);
    EXPECT_EQ(b.stat("connections_freed"), 1u);
}

TEST(TcpEngineTb, FullConnectionTableRefusesNewConnectionsUntilOneIsFreed) {
    tcp_engine_params p;
    p.max_connections = 1;
    toe_bench b("b", p);
    b.handshake();
    const std::uint32_t first = b.conn;
    // A second peer: no slot, its SYN is dropped and counted.
    b.peer_port = kPeerPort + 1;
    const std::size_t frames = b.eth_out.items.size();
    b.peer_sends(net::tcp_flags::kSyn, kPeerIss, 0, {}, true);
    sc_core::sc_start(us(10));
    EXPECT_EQ(b.eth_out.items.size(), frames);
    EXPECT_EQ(b.stat("connections_refused_table_full"), 1u);
    EXPECT_EQ(b.toe.tcp_connect({kPeerIp, 5000, 6000}), -1);
    EXPECT_EQ(b.stat("connections_refused_table_full"), 2u);
    // The first one closes and is released: the slot serves the second peer's next SYN.
    b.peer_port = kPeerPort;
    b.passive_close();
    b.toe.tcp_release(first);
    b.peer_port = kPeerPort + 1;
    b.stubs.events.clear();
    b.eth_out.items.clear();
    b.handshake();
    EXPECT_EQ(b.conn, first);
    EXPECT_EQ(b.stat("connections_refused_table_full"), 2u);
}

// Issue 19: with send regions reserved in buffer memory, a connection that gets none is refused by
// name, never left to time out. Buffer memory here holds one 256 KiB region.
TEST(TcpEngineTb, ASynThatGetsNoSendRegionIsResetAtOnceAndReportedRefused) {
    buffer_memory_params bp;
    bp.capacity = 300 * 1024;
    toe_bench b("b", tcp_engine_params{}, framing_params{}, bp);
    b.handshake();  // the first connection takes the only region
    const std::uint32_t first = b.conn;
    // A second peer's SYN: no region, so <SEQ=0><ACK=SEG.SEQ+1><CTL=RST,ACK> (RFC 9293 §3.10.7.1)
    // at once, and the refusal reported with the listening port.
    b.peer_port = kPeerPort + 1;
    const std::size_t before = b.eth_out.items.size();
    b.stubs.events.clear();
    b.stubs.event_ports.clear();
    b.peer_sends(net::tcp_flags::kSyn, kPeerIss + 1000, 0, {}, true);
    sc_core::sc_start(us(10));
    ASSERT_EQ(b.eth_out.items.size(), before + 1);
    const auto rst = b.frame(before);
    EXPECT_EQ(rst.tcp.flags, net::tcp_flags::kRst | net::tcp_flags::kAck);
    EXPECT_EQ(rst.tcp.seq, 0u);
    EXPECT_EQ(rst.tcp.ack, kPeerIss + 1000 + 1);
    EXPECT_EQ(rst.tcp.src_port, kNicPort);
    EXPECT_EQ(rst.tcp.dst_port, kPeerPort + 1);
    ASSERT_EQ(b.stubs.events.size(), 1u);
    EXPECT_EQ(b.stubs.events[0].second, toe_event::refused);
    EXPECT_EQ(b.stubs.event_ports[0], kNicPort);
    EXPECT_EQ(b.stat("connections_refused_no_send_region"), 1u);
    EXPECT_EQ(b.stat("connections_refused_table_full"), 0u);
    EXPECT_EQ(b.connections().size(), 1u);  // the SYN made no connection
    // An active open is refused the same way, and says why: not the table, the region.
    EXPECT_EQ(b.toe.tcp_connect({kPeerIp, 5000, 6000}), toe_ctl_if::kNoSendRegion);
    EXPECT_EQ(b.stat("connections_refused_no_send_region"), 2u);
    // Once the first connection is closed and released, its region serves the next peer.
    b.peer_port = kPeerPort;
    b.passive_close();
    b.toe.tcp_release(first);
    b.peer_port = kPeerPort + 2;
    b.stubs.events.clear();
    b.eth_out.items.clear();
    b.handshake();
    EXPECT_EQ(b.stubs.events[0].second, toe_event::established);
    EXPECT_EQ(b.stat("connections_refused_no_send_region"), 2u);
}

}  // namespace
}  // namespace rnic::test
