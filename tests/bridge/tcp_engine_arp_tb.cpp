// ARP in the TCP engine, through its real sockets: it answers requests for its own address only,
// resolves an unknown peer before its first segment (holding the segment until the reply), asks again
// when TCP retransmits, and keeps static neighbour entries as they are.
#include <gtest/gtest.h>

#include "buffer/buffer_memory.h"
#include "engine_stubs.h"
#include "core/stream.h"
#include "framing/framing_factory.h"
#include "proto/net.h"
#include "tb_support.h"
#include "toe/tcp_engine.h"

namespace rnic::test {
namespace {

namespace net = proto::net;
using bytes = std::vector<std::uint8_t>;

const net::mac_address kNicMac{0x02, 0, 0, 0, 0, 0x0a};
const net::mac_address kPeerMac{0x52, 0x54, 0, 0, 0, 0x02};
const net::mac_address kOtherMac{0x52, 0x54, 0, 0, 0, 0x77};
constexpr std::uint32_t kNicIp = 0x0a000001, kPeerIp = 0x0a000002;

struct arp_bench : sc_core::sc_module {
    std::unique_ptr<framing> frames;  // the device's framing (MPA, TLM datapath)
    buffer_memory buffer;
    tcp_engine toe;
    tb_initiator wire;    // frames from the network into eth_rx
    tb_initiator framer;  // stands for the framing unit (stream_tx_in must be bound)
    tb_sink eth_out, rx_out, dma;
    engine_stubs stubs;
    bool connect_at_start = false;

    explicit arp_bench(const sc_core::sc_module_name& n)
        : sc_module(n),
          frames(make_framing(framing_params{})),
          buffer("buffer", buffer_memory_params{}),
          toe("toe", tcp_engine_params{}, buffer, *frames),
          wire("wire"),
          framer("framer"),
          eth_out("eth_out"),
          rx_out("rx_out"),
          dma("dma"),
          stubs("stubs") {
        toe.set_station({kNicMac, kNicIp});
        toe.buf_out.bind(buffer.mem_in);
        toe.dma_out.bind(dma.in);
        toe.stream_rx_out.bind(rx_out.in);
        toe.eth_tx.bind(eth_out.in);
        wire.out.bind(toe.eth_rx);
        framer.out.bind(toe.stream_tx_in);
        toe.conn_events_out.bind(stubs);
        toe.tx_progress_out.bind(stubs);
        toe.ooo_out.bind(stubs);
        SC_HAS_PROCESS(arp_bench);
        SC_THREAD(start_thread);
    }
    void start_thread() {
        if (!connect_at_start) return;
        tcp_open_params p;
        p.remote_ip = kPeerIp;
        p.remote_port = 4791;
        p.local_port = 50000;
        ASSERT_GE(toe.tcp_connect(p), 0);
    }
    void inject(const bytes& frame) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        send_frame_bytes(wire.out, frame.data(), frame.size(), d);
    }
    std::uint64_t arp_stat(const char* key) {
        boost::json::object o;
        toe.report_stats(o);
        return o["arp"].as_object()[key].to_number<std::uint64_t>();
    }
    // The TCP frames sent so far (ARP frames left out).
    std::vector<net::parsed_tcp_frame> tcp_frames() const {
        std::vector<net::parsed_tcp_frame> out;
        for (const auto& it : eth_out.items) {
            if (net::frame_ethertype(it.data.data(), it.data.size()) != net::kEtherTypeIpv4) continue;
            std::string error;
            auto f = net::parse_tcp_frame(it.data.data(), it.data.size(), &error);
            EXPECT_TRUE(f) << error;
            if (f) out.push_back(*f);
        }
        return out;
    }
    std::size_t arp_frames() const {
        std::size_t n = 0;
        for (const auto& it : eth_out.items)
            n += net::frame_ethertype(it.data.data(), it.data.size()) == net::kEtherTypeArp;
        return n;
    }
};

bytes arp_from(const net::mac_address& mac, std::uint32_t ip, std::uint32_t target, std::uint16_t op,
               const net::mac_address& eth_dst = net::kBroadcastMac) {
    net::arp_packet a;
    a.operation = op;
    a.sender_mac = mac;
    a.sender_ip = ip;
    a.target_ip = target;
    if (op == net::arp_op::kReply) a.target_mac = kNicMac;
    bytes f;
    net::build_arp_frame(eth_dst, mac, a, f);
    return f;
}

TEST(TcpEngineArp, AnswersRequestsForItsOwnAddressOnly) {
    arp_bench b("b");
    b.inject(arp_from(kPeerMac, kPeerIp, kNicIp, net::arp_op::kRequest));
    b.inject(arp_from(kPeerMac, kPeerIp, 0x0a000009, net::arp_op::kRequest));  // someone else's address
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
    ASSERT_EQ(b.eth_out.items.size(), 1u);
    // "10.0.0.1 is at 02:00:00:00:00:0a", to the asker, padded to 60 bytes.
    const bytes expected = {0x52, 0x54, 0, 0, 0, 2, 0x02, 0,  0, 0, 0, 0x0a, 0x08, 0x06, 0, 1, 0x08, 0,  6, 4, 0,
                            2,    0x02, 0, 0, 0, 0, 0x0a, 10, 0, 0, 1, 0x52, 0x54, 0,    0, 0, 2,    10, 0, 0, 2};
    bytes want = expected;
    want.resize(60, 0);
    EXPECT_EQ(b.eth_out.items[0].data, want);
    EXPECT_EQ(b.arp_stat("requests_received"), 2u);
    EXPECT_EQ(b.arp_stat("replies_sent"), 1u);
    EXPECT_EQ(b.arp_stat("learned"), 1u);
}

TEST(TcpEngineArp, ResolvesThePeerBeforeTheFirstSegmentAndAsksAgainOnRetransmission) {
    arp_bench b("b");
    b.connect_at_start = true;
    // Connect: only an ARP request goes out; the SYN waits for the answer.
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
    ASSERT_EQ(b.eth_out.items.size(), 1u);
    EXPECT_EQ(b.eth_out.items[0].data, net::build_arp_request(kNicMac, kNicIp, kPeerIp));
    EXPECT_TRUE(b.tcp_frames().empty());
    // No answer: the SYN's retransmission (initial RTO 1 ms) asks again.
    sc_core::sc_start(sc_core::sc_time(1500, sc_core::SC_US));
    EXPECT_EQ(b.arp_frames(), 2u);
    EXPECT_TRUE(b.tcp_frames().empty());
    EXPECT_EQ(b.arp_stat("frames_held"), 2u);
    // The reply releases both held SYNs, now addressed to the peer's MAC.
    b.inject(arp_from(kPeerMac, kPeerIp, kNicIp, net::arp_op::kReply, kNicMac));
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
    const auto segs = b.tcp_frames();
    ASSERT_EQ(segs.size(), 2u);
    for (const auto& f : segs) {
        EXPECT_EQ(f.eth.dst, kPeerMac);
        EXPECT_EQ(f.eth.src, kNicMac);
        EXPECT_EQ(f.ip.dst, kPeerIp);
        EXPECT_EQ(f.tcp.dst_port, 4791);
        EXPECT_EQ(f.tcp.flags & net::tcp_flags::kSyn, net::tcp_flags::kSyn);
    }
    EXPECT_EQ(b.arp_stat("replies_received"), 1u);
    EXPECT_EQ(b.arp_stat("learned"), 1u);
    // Resolved: the next retransmission goes straight out, without asking.
    const std::size_t arps = b.arp_frames();
    sc_core::sc_start(sc_core::sc_time(5, sc_core::SC_MS));
    EXPECT_EQ(b.arp_frames(), arps);
    EXPECT_GT(b.tcp_frames().size(), 2u);
}

TEST(TcpEngineArp, StaticNeighbourIsUsedAsIsAndNeverReplaced) {
    arp_bench b("b");
    b.connect_at_start = true;
    b.toe.add_neighbour(kPeerIp, kPeerMac);
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
    ASSERT_EQ(b.eth_out.items.size(), 1u);  // the SYN at once, no ARP
    ASSERT_EQ(b.tcp_frames().size(), 1u);
    EXPECT_EQ(b.tcp_frames()[0].eth.dst, kPeerMac);
    // Someone claims the peer's address with another MAC: answered, but the static entry stays.
    b.inject(arp_from(kOtherMac, kPeerIp, kNicIp, net::arp_op::kRequest));
    sc_core::sc_start(sc_core::sc_time(3, sc_core::SC_MS));  // SYN retransmissions
    EXPECT_EQ(b.arp_stat("replies_sent"), 1u);
    EXPECT_EQ(b.arp_stat("requests_sent"), 0u);
    const auto segs = b.tcp_frames();
    ASSERT_GE(segs.size(), 2u);
    for (const auto& f : segs) EXPECT_EQ(f.eth.dst, kPeerMac);
}

TEST(TcpEngineArp, BadArpFramesAreCountedAndIgnored) {
    arp_bench b("b");
    bytes bad = arp_from(kPeerMac, kPeerIp, kNicIp, net::arp_op::kRequest);
    bad[18] = 8;  // hardware address length
    b.inject(bad);
    b.inject(bytes(bad.begin(), bad.begin() + 20));  // cut inside the ARP packet
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
    EXPECT_TRUE(b.eth_out.items.empty());
    EXPECT_EQ(b.arp_stat("bad_frames"), 2u);
    EXPECT_EQ(b.arp_stat("learned"), 0u);
}

}  // namespace
}  // namespace rnic::test
