// The shared-buffer switch through its sockets: a player drives frames into port_in_<i> at given
// times and a sink per port_out_<i> records what is handed over and when (the start of each frame's
// transmission). Expected times are worked out here from the wire format: at 10 Gb/s a byte takes
// 800 ps, a frame of L >= 60 bytes takes 8 + L + 4 + 12 bytes of wire time, its last bit leaves
// 12 bytes before that.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>

#include "core/stream.h"
#include "link/ethernet_link.h"
#include "proto/net.h"
#include "switch/ethernet_switch.h"
#include "tb_support.h"
#include "dt_rule.h"

namespace rnic::test {
namespace {

namespace net = proto::net;
using sc_core::sc_time;

constexpr std::uint64_t kBytePs = 800;  // one byte at 10 Gb/s

sc_time ps(std::uint64_t v) {
    return sc_time(static_cast<double>(v), sc_core::SC_PS);
}
sc_time ns(std::uint64_t v) {
    return ps(v * 1000);
}
sc_time us(std::uint64_t v) {
    return ps(v * 1000000);
}
// Wire time of a frame (preamble/SFD, frame padded to 60, FCS, IFG) and its last bit.
sc_time wire(std::uint64_t len) {
    return ps((8 + std::max<std::uint64_t>(len, 60) + 4 + 12) * kBytePs);
}
sc_time last_bit(std::uint64_t len) {
    return ps((8 + std::max<std::uint64_t>(len, 60) + 4) * kBytePs);
}

net::mac_address host_mac(int i) {
    return {0x02, 0x00, 0x00, 0x00, 0x00, static_cast<std::uint8_t>(i + 1)};
}

// A frame of `len` bytes with a local experimental EtherType (IEEE 802 0x88B5), filled with `tag`.
std::vector<std::uint8_t> raw_frame(const net::mac_address& dst, const net::mac_address& src, std::size_t len,
                                    std::uint8_t tag) {
    std::vector<std::uint8_t> f(len, tag);
    std::copy(dst.begin(), dst.end(), f.begin());
    std::copy(src.begin(), src.end(), f.begin() + 6);
    f[12] = 0x88;
    f[13] = 0xb5;
    return f;
}

// An Ethernet/IPv4/TCP frame of exactly `len` bytes (54 bytes of headers, the rest payload).
std::vector<std::uint8_t> tcp_frame(const net::mac_address& dst, const net::mac_address& src, std::uint32_t src_ip,
                                    std::uint32_t dst_ip, std::uint16_t sport, std::uint16_t dport, std::size_t len,
                                    std::uint8_t tos = 0) {
    net::endpoints ep;
    ep.src_mac = src;
    ep.dst_mac = dst;
    ep.src_ip = src_ip;
    ep.dst_ip = dst_ip;
    net::ipv4_header ip;
    ip.dscp_ecn = tos;
    net::tcp_header h;
    h.src_port = sport;
    h.dst_port = dport;
    h.seq = 1000;
    h.ack = 1;
    h.flags = net::tcp_flags::kAck;
    h.window = 512;
    const std::vector<std::uint8_t> payload(len - 54, static_cast<std::uint8_t>(sport));
    std::vector<std::uint8_t> out;
    net::build_tcp_frame(ep, ip, h, payload.data(), payload.size(), out);
    return out;
}

std::vector<std::uint8_t> pfc_frame(std::uint16_t quanta, std::uint8_t class_enable = 0x01) {
    net::pfc_frame p;
    p.class_enable = class_enable;
    for (std::uint16_t& q : p.quanta) q = quanta;
    return net::build_pfc_frame(host_mac(40), p);
}

// Sends frames into the switch's ports at given times, from one thread.
struct frame_player : sc_core::sc_module {
    struct shot {
        sc_time at;
        int port;
        std::vector<std::uint8_t> frame;
        tlm::tlm_command command;
        tlm::tlm_response_status* status;
    };
    std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<frame_player>>> out;
    std::vector<shot> shots;

    SC_HAS_PROCESS(frame_player);
    frame_player(const sc_core::sc_module_name& n, int ports) : sc_module(n) {
        for (int i = 0; i < ports; ++i) {
            out.push_back(std::make_unique<tlm_utils::simple_initiator_socket<frame_player>>(
                ("out_" + std::to_string(i)).c_str()));
        }
        SC_THREAD(run);
    }
    void run() {
        std::stable_sort(shots.begin(), shots.end(), [](const shot& a, const shot& b) { return a.at < b.at; });
        for (shot& s : shots) {
            if (s.at > sc_core::sc_time_stamp()) wait(s.at - sc_core::sc_time_stamp());
            sc_time delay = sc_core::SC_ZERO_TIME;
            tlm::tlm_generic_payload gp;
            gp.set_command(s.command);
            gp.set_data_ptr(s.frame.empty() ? nullptr : s.frame.data());
            gp.set_data_length(static_cast<unsigned>(s.frame.size()));
            gp.set_streaming_width(static_cast<unsigned>(s.frame.size()));
            gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            (*out[s.port])->b_transport(gp, delay);
            if (s.status != nullptr) *s.status = gp.get_response_status();
        }
    }
};

struct switch_bench {
    ethernet_switch sw;
    frame_player player;
    std::vector<std::unique_ptr<tb_sink>> sinks;

    switch_bench(const std::string& prefix, const ethernet_switch_params& p)
        : sw((prefix + "sw").c_str(), p), player((prefix + "player").c_str(), p.ports) {
        for (int i = 0; i < p.ports; ++i) {
            player.out[i]->bind(*sw.port_in[i]);
            sinks.push_back(std::make_unique<tb_sink>((prefix + "sink_" + std::to_string(i)).c_str()));
            sw.port_out[i]->bind(sinks.back()->in);
        }
    }
    void send(sc_time at, int port, std::vector<std::uint8_t> frame, tlm::tlm_command command = tlm::TLM_WRITE_COMMAND,
              tlm::tlm_response_status* status = nullptr) {
        player.shots.push_back({at, port, std::move(frame), command, status});
    }
    const std::vector<tb_sink::item>& got(int port) const { return sinks[port]->items; }
};

ethernet_switch_params params_10g(int ports) {
    ethernet_switch_params p;
    p.ports = ports;
    p.rate_bps = 10e9;
    p.latency = ns(500);
    p.buffer_bytes = 1 << 20;
    return p;
}

// params_10g with PFC: pause above 3000 bytes of an ingress, resume at 1000, 4000 of headroom.
ethernet_switch_params pfc_params_10g(int ports) {
    ethernet_switch_params p = params_10g(ports);
    p.pfc = true;
    p.pfc_xoff = 3000;
    p.pfc_xon = 1000;
    p.pfc_headroom = 4000;
    return p;
}

bool is_pfc(const tb_sink::item& it, std::uint16_t quanta) {
    const auto pfc = net::parse_pfc_frame(it.data.data(), it.data.size(), nullptr);
    return pfc && pfc->class_enable == 0x01 && pfc->quanta[0] == quanta;
}

TEST(SwitchTb, SecondFrameWaitsOneSerialisation) {
    switch_bench b("", params_10g(4));
    b.sw.add_route(host_mac(2), {2});
    const sc_time t0 = us(1);
    b.send(t0, 0, raw_frame(host_mac(2), host_mac(0), 1000, 0xa0));
    b.send(t0, 1, raw_frame(host_mac(2), host_mac(1), 600, 0xa1));
    b.send(t0 + us(5), 0, raw_frame(host_mac(2), host_mac(0), 100, 0xa2));  // finds the port idle
    sc_core::sc_start(us(10));

    ASSERT_EQ(b.got(2).size(), 3u);
    EXPECT_EQ(b.got(2)[0].at, t0 + ns(500));
    EXPECT_EQ(b.got(2)[0].data, raw_frame(host_mac(2), host_mac(0), 1000, 0xa0));
    EXPECT_EQ(b.got(2)[1].at, t0 + ns(500) + wire(1000));  // 819.2 ns behind the first
    EXPECT_EQ(b.got(2)[1].data, raw_frame(host_mac(2), host_mac(1), 600, 0xa1));
    EXPECT_EQ(b.got(2)[2].at, t0 + us(5) + ns(500));
    for (int p : {0, 1, 3}) EXPECT_TRUE(b.got(p).empty()) << p;
    EXPECT_EQ(b.sw.counters(2).frames_out, 3u);
    EXPECT_EQ(b.sw.counters(2).bytes_out, 1700u);
    EXPECT_EQ(b.sw.counters(0).frames_in, 2u);
    EXPECT_EQ(b.sw.buffer().queue_peak(2), 1600u);
}

TEST(SwitchTb, StoreAndForwardAndCutThroughLatency) {
    ethernet_switch_params p = params_10g(4);
    p.port_rate_bps = {10e9, 10e9, 10e9, 100e9};
    switch_bench sf("sf_", p);
    p.mode = forwarding_mode::cut_through;
    switch_bench ct("ct_", p);
    for (switch_bench* b : {&sf, &ct}) {
        for (int i = 1; i < 4; ++i) b->sw.add_route(host_mac(i), {i});
        // A: 100 bytes to a port of the same rate. B: 1500 bytes, longer on the wire than the
        // latency. C: 100 bytes to a faster port.
        b->send(us(1), 0, raw_frame(host_mac(1), host_mac(0), 100, 1));
        b->send(us(5), 0, raw_frame(host_mac(2), host_mac(0), 1500, 2));
        b->send(us(9), 0, raw_frame(host_mac(3), host_mac(0), 100, 3));
    }
    sc_core::sc_start(us(12));
    for (int i = 1; i < 4; ++i) {
        ASSERT_EQ(sf.got(i).size(), 1u);
        ASSERT_EQ(ct.got(i).size(), 1u);
    }
    // Store-and-forward: arrival (last bit) + latency.
    EXPECT_EQ(sf.got(1)[0].at, us(1) + ns(500));
    EXPECT_EQ(sf.got(2)[0].at, us(5) + ns(500));
    EXPECT_EQ(sf.got(3)[0].at, us(9) + ns(500));
    // Cut-through: first bit + latency = arrival - (8 + 100 + 4) bytes + 500 ns = arrival + 410.4 ns.
    EXPECT_EQ(ct.got(1)[0].at, us(1) + ns(500) - last_bit(100));
    EXPECT_EQ(ct.got(1)[0].at, us(1) + ps(410400));
    // 1512 bytes take 1209.6 ns > 500 ns: first bit + latency is in the past, so at once.
    EXPECT_EQ(ct.got(2)[0].at, us(5));
    // 10 Gb/s in, 100 Gb/s out: stored and forwarded.
    EXPECT_EQ(ct.got(3)[0].at, us(9) + ns(500));
}

TEST(SwitchTb, FramesCrossLinksWithoutDoubleCountedWireTime) {
    // host a -> link -> switch port 0 -> switch port 1 -> link -> host b, all at 10 Gb/s.
    ethernet_link_params lp;
    lp.rate_bps = 10e9;
    lp.propagation = ns(100);
    ethernet_link link_a("link_a", lp), link_b("link_b", lp);
    ethernet_switch sw("sw", params_10g(2));
    sw.add_route(host_mac(1), {1});
    tb_initiator host_a("host_a"), host_b("host_b");
    tb_sink rx_a("rx_a"), rx_b("rx_b");
    host_a.out.bind(link_a.port_a_in);
    link_a.port_a_out.bind(rx_a.in);
    link_a.port_b_out.bind(*sw.port_in[0]);
    sw.port_out[0]->bind(link_a.port_b_in);
    host_b.out.bind(link_b.port_a_in);
    link_b.port_a_out.bind(rx_b.in);
    link_b.port_b_out.bind(*sw.port_in[1]);
    sw.port_out[1]->bind(link_b.port_b_in);

    for (std::uint8_t tag : {1, 2}) {  // back to back at time 0
        std::vector<std::uint8_t> f = raw_frame(host_mac(1), host_mac(0), 1000, tag);
        sc_time d = sc_core::SC_ZERO_TIME;
        send_frame_bytes(host_a.out, f.data(), f.size(), d);
    }
    sc_core::sc_start(us(10));
    // Link a: the first frame's last bit reaches the switch at 809.6 + 100 ns, the second one
    // frame later. The switch starts them 500 ns after that; link b serialises and propagates.
    const sc_time in1 = last_bit(1000) + ns(100), in2 = in1 + wire(1000);
    const sc_time out1 = in1 + ns(500), out2 = std::max(in2 + ns(500), out1 + wire(1000));
    ASSERT_EQ(rx_b.items.size(), 2u);
    EXPECT_EQ(rx_b.items[0].at, out1 + last_bit(1000) + ns(100));
    EXPECT_EQ(rx_b.items[1].at, out2 + last_bit(1000) + ns(100));
    EXPECT_EQ(rx_b.items[0].at, ps(2319200));
    EXPECT_EQ(rx_b.items[1].at, ps(3138400));
    EXPECT_EQ(rx_b.items[1].data[20], 2);
    EXPECT_TRUE(rx_a.items.empty());
}

TEST(SwitchTb, DynamicThresholdDropsExactlyAtTheLimit) {
    ethernet_switch_params p = params_10g(4);
    p.buffer_bytes = 9000;
    p.alpha = 1.0;
    switch_bench b("", p);
    b.sw.add_route(host_mac(2), {2});
    const int admitted = dt_capacity(9000, 1.0, 1000);
    ASSERT_EQ(admitted, 5);  // the 5th meets the limit with equality: 4000 + 1000 = 9000 - 4000
    const sc_time t0 = us(1);
    for (int i = 0; i <= admitted; ++i) {
        b.send(t0, i % 2, raw_frame(host_mac(2), host_mac(i % 2), 1000, static_cast<std::uint8_t>(i)));
    }
    b.send(t0 + us(10), 0, raw_frame(host_mac(2), host_mac(0), 1000, 0x77));  // after the queue drained
    sc_core::sc_start(us(20));

    ASSERT_EQ(b.got(2).size(), static_cast<std::size_t>(admitted) + 1);
    for (int i = 0; i < admitted; ++i) {
        EXPECT_EQ(b.got(2)[i].data[20], i);
        EXPECT_EQ(b.got(2)[i].at, t0 + ns(500) + wire(1000) * i);
    }
    EXPECT_EQ(b.got(2)[admitted].data[20], 0x77);
    EXPECT_EQ(b.got(2)[admitted].at, t0 + us(10) + ns(500));
    EXPECT_EQ(b.sw.counters(2).drops_dt_threshold, 1u);
    EXPECT_EQ(b.sw.counters(2).drops_buffer_full, 0u);
    EXPECT_EQ(b.sw.buffer().queue_peak(2), 5000u);
    EXPECT_EQ(b.sw.buffer().total_peak(), 5000u);
}

TEST(SwitchTb, EcnMarksAboveTheThresholdWithAValidChecksum) {
    ethernet_switch_params p = params_10g(3);
    p.ecn = true;
    p.ecn_threshold = 2000;
    switch_bench b("", p);
    b.sw.add_route(host_mac(2), {2});
    const std::uint8_t tos[] = {net::ecn::kEct0,          net::ecn::kEct0,        net::ecn::kEct0,
                                0xb8 | net::ecn::kNotEct, 0xb8 | net::ecn::kEct1, net::ecn::kCe};
    // Queue before each: 0, 1000, 2000, 3000, 4000, 5000 bytes.
    const std::uint8_t expected[] = {net::ecn::kEct0,          net::ecn::kEct0,      net::ecn::kCe,
                                     0xb8 | net::ecn::kNotEct, 0xb8 | net::ecn::kCe, net::ecn::kCe};
    for (int i = 0; i < 6; ++i) {
        b.send(us(1), 0,
               tcp_frame(host_mac(2), host_mac(0), 0x0a000001, 0x0a000003, static_cast<std::uint16_t>(40000 + i), 4791,
                         1000, tos[i]));
    }
    sc_core::sc_start(us(10));
    ASSERT_EQ(b.got(2).size(), 6u);
    for (int i = 0; i < 6; ++i) {
        const std::vector<std::uint8_t>& f = b.got(2)[i].data;
        std::string error;
        const auto parsed = net::parse_tcp_frame(f.data(), f.size(), &error);  // checks both checksums
        ASSERT_TRUE(parsed) << i << ": " << error;
        EXPECT_EQ(parsed->tcp.src_port, 40000 + i);
        EXPECT_EQ(parsed->ip.dscp_ecn, expected[i]) << i;
    }
    EXPECT_EQ(b.sw.counters(2).ecn_marked, 2u);  // ECT(0) at 2000, ECT(1) at 4000
}

TEST(SwitchTb, PfcPauseAtXoffAndResumeAtXon) {
    const ethernet_switch_params p = pfc_params_10g(3);
    switch_bench b("", p);
    b.sw.add_route(host_mac(2), {2});
    const sc_time t0 = us(1);
    for (int i = 0; i < 5; ++i) b.send(t0, 0, raw_frame(host_mac(2), host_mac(0), 1000, static_cast<std::uint8_t>(i)));
    sc_core::sc_start(us(20));

    // The 4th frame takes ingress 0 to 4000 > 3000 bytes: pause at once on port 0. The ingress is
    // back at 1000 <= xon when the 4th frame's last bit has left port 2.
    ASSERT_EQ(b.got(0).size(), 2u);
    EXPECT_EQ(b.got(0)[0].at, t0);
    EXPECT_TRUE(is_pfc(b.got(0)[0], 0xFFFF));
    const std::vector<std::uint8_t>& pause = b.got(0)[0].data;
    EXPECT_TRUE(std::equal(net::kMacControlAddress.begin(), net::kMacControlAddress.end(), pause.begin()));
    const net::mac_address src = b.sw.port_mac(0);
    EXPECT_TRUE(std::equal(src.begin(), src.end(), pause.begin() + 6));
    const sc_time fourth_start = t0 + ns(500) + wire(1000) * 3;
    EXPECT_EQ(b.got(0)[1].at, fourth_start + last_bit(1000));
    EXPECT_EQ(b.got(0)[1].at, t0 + ps(3767200));
    EXPECT_TRUE(is_pfc(b.got(0)[1], 0));
    ASSERT_EQ(b.got(2).size(), 5u);  // nothing dropped, nothing delayed by the PFC frames on port 0
    EXPECT_EQ(b.got(2)[4].at, t0 + ns(500) + wire(1000) * 4);
    EXPECT_EQ(b.sw.counters(0).pause_sent, 1u);
    EXPECT_EQ(b.sw.counters(0).resume_sent, 1u);
    EXPECT_EQ(b.sw.counters(0).frames_out, 0u);  // PFC frames are not data
    EXPECT_EQ(b.sw.buffer().ingress_peak(0), 5000u);
}

TEST(SwitchTb, PfcPauseIsResentWhileAboveXonAndGoesAheadOfData) {
    const ethernet_switch_params p = pfc_params_10g(3);
    switch_bench b("", p);
    b.sw.add_route(host_mac(2), {2});
    b.sw.add_route(host_mac(0), {0});
    const sc_time t0 = us(1);
    // Port 2's peer pauses it (0xFFFF quanta = 3355.392 us) before the data comes, and again 3 ms
    // later, then resumes it at t0 + 4 ms.
    b.send(t0 - ns(100), 2, pfc_frame(0xFFFF));
    b.send(t0 - ns(100) + us(3000), 2, pfc_frame(0xFFFF));
    const sc_time resume = t0 + us(4000);
    b.send(resume, 2, pfc_frame(0));
    for (int i = 0; i < 5; ++i) b.send(t0, 0, raw_frame(host_mac(2), host_mac(0), 1000, static_cast<std::uint8_t>(i)));
    // Port 1 sends two frames to host 0 that are ready at t0 - 100 ns: when the pause is due, the
    // first is on port 0's wire and the second waits in the queue. The pause goes between them.
    b.send(t0 - ns(600), 1, raw_frame(host_mac(0), host_mac(1), 1400, 0x55));
    b.send(t0 - ns(600), 1, raw_frame(host_mac(0), host_mac(1), 1400, 0x56));
    sc_core::sc_start(t0 + us(6000));

    // Re-sent every half pause time: 0xFFFF * 256 bit times = 1677.696 us at 10 Gb/s.
    const sc_time half = ps(0xFFFFull * 32 * kBytePs);
    ASSERT_EQ(half, us(1677) + ns(696));
    std::vector<tb_sink::item> pfc, data;
    for (const auto& it : b.got(0)) {
        (net::frame_ethertype(it.data.data(), it.data.size()) == net::kEtherTypeMacControl ? pfc : data).push_back(it);
    }
    ASSERT_EQ(data.size(), 2u);
    ASSERT_EQ(pfc.size(), 4u);
    EXPECT_EQ(data[0].at, t0 - ns(100));
    const sc_time first_pause = t0 - ns(100) + wire(1400);
    EXPECT_EQ(pfc[0].at, first_pause);
    EXPECT_EQ(data[1].at, first_pause + wire(60));  // a PFC frame is 60 bytes
    EXPECT_EQ(data[1].data[20], 0x56);
    EXPECT_EQ(pfc[1].at, first_pause + half);
    EXPECT_EQ(pfc[2].at, first_pause + half * 2);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(is_pfc(pfc[i], 0xFFFF)) << i;
    // Port 2 restarts at the resume; the 4th frame's last bit brings ingress 0 down to xon.
    ASSERT_EQ(b.got(2).size(), 5u);
    EXPECT_EQ(b.got(2)[0].at, resume);
    EXPECT_EQ(pfc[3].at, resume + wire(1000) * 3 + last_bit(1000));
    EXPECT_TRUE(is_pfc(pfc[3], 0));
    EXPECT_EQ(b.sw.counters(0).pause_sent, 3u);
    EXPECT_EQ(b.sw.counters(0).resume_sent, 1u);
    EXPECT_EQ(b.sw.counters(2).pause_received, 2u);
    EXPECT_EQ(b.sw.counters(2).resume_received, 1u);
    EXPECT_EQ(b.sw.time_paused(2), resume - (t0 - ns(100)));
}

TEST(SwitchTb, ReceivedPauseStopsTheOutputForItsQuanta) {
    switch_bench b("", params_10g(3));
    b.sw.add_route(host_mac(1), {1});
    // 1000 quanta of 512 bit times at 10 Gb/s: 51.2 us.
    const sc_time tp = us(1), pause = ps(1000 * 64 * kBytePs);
    ASSERT_EQ(pause, ns(51200));
    b.send(tp, 1, pfc_frame(1000));
    b.send(tp + us(1), 0, raw_frame(host_mac(1), host_mac(0), 200, 1));  // ready at tp + 1.5 us
    b.send(tp + us(1), 0, raw_frame(host_mac(1), host_mac(0), 200, 2));  // queued behind it
    // A pause for priority 1 only does not concern the switch's single class.
    b.send(tp + us(100), 1, pfc_frame(1000, 0x02));
    b.send(tp + us(101), 0, raw_frame(host_mac(1), host_mac(0), 1500, 3));  // starts at tp + 101.5 us
    // A pause arriving while that frame is on the wire: it finishes, the next one waits.
    const sc_time t2 = tp + us(101) + ns(600);
    b.send(t2, 1, pfc_frame(0xFFFF));
    b.send(tp + us(102), 0, raw_frame(host_mac(1), host_mac(0), 200, 4));
    // Quanta 0 resumes at once.
    const sc_time t3 = tp + us(150);
    b.send(t3, 1, pfc_frame(0));
    sc_core::sc_start(us(300));

    ASSERT_EQ(b.got(1).size(), 4u);
    EXPECT_EQ(b.got(1)[0].at, tp + pause);
    EXPECT_EQ(b.got(1)[1].at, tp + pause + wire(200));
    EXPECT_EQ(b.got(1)[2].at, tp + us(101) + ns(500));
    EXPECT_EQ(b.got(1)[2].data[20], 3);
    EXPECT_EQ(b.got(1)[3].at, t3);
    EXPECT_EQ(b.sw.counters(1).pause_received, 2u);
    EXPECT_EQ(b.sw.counters(1).resume_received, 1u);
    EXPECT_EQ(b.sw.counters(1).mac_control_other, 1u);
    EXPECT_EQ(b.sw.time_paused(1), pause + (t3 - t2));
    EXPECT_TRUE(b.got(0).empty());  // PFC frames are not forwarded
    EXPECT_TRUE(b.got(2).empty());
}

TEST(SwitchFlowHash, CoversTheFiveTupleOnly) {
    const auto f = [](std::uint32_t s, std::uint32_t d, std::uint16_t sp, std::uint16_t dp) {
        return tcp_frame(host_mac(9), host_mac(0), s, d, sp, dp, 200);
    };
    const auto h = [](const std::vector<std::uint8_t>& v, std::uint64_t salt = 7) {
        return ecmp_flow_hash(v.data(), v.size(), salt);
    };
    const std::vector<std::uint8_t> base = f(0x0a000001, 0x0a000002, 40000, 4791);
    // Not part of the key: MACs, TTL, payload, IP identification.
    std::vector<std::uint8_t> other = base;
    other[5] = 0x42;
    other[22] = 3;
    other[100] ^= 0xff;
    other[19] = 9;
    EXPECT_EQ(h(base), h(other));
    // Each field of the 5-tuple, and the salt, is.
    EXPECT_NE(h(base), h(f(0x0a000009, 0x0a000002, 40000, 4791)));
    EXPECT_NE(h(base), h(f(0x0a000001, 0x0a000009, 40000, 4791)));
    EXPECT_NE(h(base), h(f(0x0a000001, 0x0a000002, 40001, 4791)));
    EXPECT_NE(h(base), h(f(0x0a000001, 0x0a000002, 40000, 4792)));
    std::vector<std::uint8_t> udp = base;
    udp[23] = 17;
    EXPECT_NE(h(base), h(udp));
    EXPECT_NE(h(base), h(base, 8));
    // Non-IP frames hash on their MACs.
    const std::vector<std::uint8_t> raw = raw_frame(host_mac(9), host_mac(0), 100, 1);
    EXPECT_EQ(h(raw), h(raw_frame(host_mac(9), host_mac(0), 300, 2)));
    EXPECT_NE(h(raw), h(raw_frame(host_mac(9), host_mac(1), 100, 1)));
    // Whatever the frame, no reading past its end.
    for (std::size_t len = 0; len <= base.size(); ++len)
        (void)h(std::vector<std::uint8_t>(base.begin(), base.begin() + len));
}

TEST(SwitchTb, EcmpSpreadsFlowsAndKeepsEachFlowOnOnePort) {
    ethernet_switch_params p = params_10g(6);
    p.seed = 12345;
    switch_bench b("", p);
    const std::vector<int> group{2, 3, 4, 5};
    b.sw.add_route(host_mac(9), group);
    constexpr int kFlows = 32, kFramesPerFlow = 4;
    for (int k = 0; k < kFramesPerFlow; ++k) {
        for (int flow = 0; flow < kFlows; ++flow) {
            b.send(us(1) + us(2) * (k * kFlows + flow), flow % 2,
                   tcp_frame(host_mac(9), host_mac(flow % 2), 0x0a000001 + static_cast<std::uint32_t>(flow % 2),
                             0x0a000010, static_cast<std::uint16_t>(50000 + flow), 4791, 128));
        }
    }
    sc_core::sc_start(us(300));

    std::map<int, std::set<int>> ports_of_flow;
    std::size_t total = 0;
    for (int port : group) {
        EXPECT_FALSE(b.got(port).empty()) << "no flow hashed to port " << port;
        for (const auto& it : b.got(port)) {
            const auto parsed = net::parse_tcp_frame(it.data.data(), it.data.size(), nullptr);
            ASSERT_TRUE(parsed);
            const int flow = parsed->tcp.src_port - 50000;
            ports_of_flow[flow].insert(port);
            const std::uint64_t hash = ecmp_flow_hash(it.data.data(), it.data.size(), p.seed);
            EXPECT_EQ(port, group[hash % group.size()]);
        }
        total += b.got(port).size();
    }
    EXPECT_EQ(total, static_cast<std::size_t>(kFlows * kFramesPerFlow));
    ASSERT_EQ(ports_of_flow.size(), static_cast<std::size_t>(kFlows));
    for (const auto& [flow, ports] : ports_of_flow) EXPECT_EQ(ports.size(), 1u) << "flow " << flow;
    EXPECT_TRUE(b.got(0).empty());
    EXPECT_TRUE(b.got(1).empty());
}

TEST(SwitchTb, BroadcastAndUnknownUnicastAreFlooded) {
    switch_bench b("", params_10g(4));
    b.sw.add_route(host_mac(1), {1});
    const std::vector<std::uint8_t> arp = net::build_arp_request(host_mac(1), 0x0a000002, 0x0a000004);
    b.send(us(1), 1, arp);
    b.send(us(5), 2, raw_frame(host_mac(7), host_mac(2), 300, 0x33));  // nobody has a route to host 7
    b.send(us(9), 1, raw_frame(host_mac(1), host_mac(1), 300, 0x44));  // routed back to its ingress
    sc_core::sc_start(us(20));

    for (int port : {0, 2, 3}) {
        ASSERT_GE(b.got(port).size(), 1u) << port;
        EXPECT_EQ(b.got(port)[0].data, arp);
        EXPECT_EQ(b.got(port)[0].at, us(1) + ns(500));
    }
    for (int port : {0, 1, 3}) {
        const auto& items = b.got(port);
        const bool has =
            std::any_of(items.begin(), items.end(), [](const tb_sink::item& it) { return it.data[20] == 0x33; });
        EXPECT_TRUE(has) << port;
    }
    EXPECT_EQ(b.got(0).size(), 2u);
    EXPECT_EQ(b.got(1).size(), 1u);
    EXPECT_EQ(b.got(2).size(), 1u);
    EXPECT_EQ(b.got(3).size(), 2u);
    EXPECT_EQ(b.sw.counters(1).flooded, 1u);
    EXPECT_EQ(b.sw.counters(2).flooded, 1u);
    EXPECT_EQ(b.sw.counters(1).filtered, 1u);
    EXPECT_EQ(b.sw.buffer().ingress_peak(1), 3 * arp.size());  // one copy per output
}

TEST(SwitchTb, BadAndShortFramesAreCountedAndDropped) {
    ethernet_switch_params p = params_10g(3);
    p.ecn = true;
    p.ecn_threshold = 0;  // every ECN-capable packet would be marked
    p.mtu = 1500;
    switch_bench b("", p);
    b.sw.add_route(host_mac(2), {1, 2});
    std::vector<std::uint8_t> garbage_ip = raw_frame(host_mac(2), host_mac(0), 40, 0xff);
    garbage_ip[12] = 0x08;  // IPv4, version 15, IHL 15 words: beyond the frame
    garbage_ip[13] = 0x00;
    std::vector<std::uint8_t> short_ip = raw_frame(host_mac(2), host_mac(0), 20, 0x45);
    short_ip[12] = 0x08;
    short_ip[13] = 0x00;
    std::vector<std::uint8_t> truncated_pfc = pfc_frame(0xFFFF);
    truncated_pfc.resize(20);
    std::vector<std::uint8_t> mac_control_stub = pfc_frame(0xFFFF);
    mac_control_stub.resize(15);  // not even a whole opcode
    std::vector<std::uint8_t> pause_8023 = pfc_frame(0xFFFF);
    pause_8023[14] = 0x00;  // opcode 0x0001
    pause_8023[15] = 0x01;
    tlm::tlm_response_status read_status = tlm::TLM_INCOMPLETE_RESPONSE;
    b.send(us(1), 0, {});
    b.send(us(2), 0, std::vector<std::uint8_t>(5, 0xff));
    b.send(us(3), 0, std::vector<std::uint8_t>(13, 0xff));
    b.send(us(4), 0, raw_frame(host_mac(2), host_mac(0), 1515, 0));  // one byte over 1500 + 14
    b.send(us(5), 0, truncated_pfc);
    b.send(us(6), 0, mac_control_stub);
    b.send(us(7), 0, pause_8023);
    b.send(us(8), 0, raw_frame(host_mac(2), host_mac(0), 100, 0), tlm::TLM_READ_COMMAND, &read_status);
    b.send(us(9), 0, garbage_ip);
    b.send(us(10), 0, short_ip);
    b.send(us(11), 0, raw_frame(host_mac(2), host_mac(0), 1514, 0));  // exactly at the MTU
    sc_core::sc_start(us(20));

    const ethernet_switch::port_counters& c = b.sw.counters(0);
    EXPECT_EQ(c.frames_in, 11u);
    EXPECT_EQ(c.bad_frames, 7u);  // 0, 5, 13, 1515 bytes, truncated PFC, 15-byte MAC control, READ
    EXPECT_EQ(c.mac_control_other, 1u);
    EXPECT_EQ(read_status, tlm::TLM_COMMAND_ERROR_RESPONSE);
    std::vector<std::vector<std::uint8_t>> delivered;
    for (int port : {1, 2}) {
        for (const auto& it : b.got(port)) delivered.push_back(it.data);
    }
    ASSERT_EQ(delivered.size(), 3u);  // the two malformed IPv4 packets (unmarked) and the MTU-sized frame
    EXPECT_NE(std::find(delivered.begin(), delivered.end(), garbage_ip), delivered.end());
    EXPECT_NE(std::find(delivered.begin(), delivered.end(), short_ip), delivered.end());
    EXPECT_TRUE(b.got(0).empty());
}

TEST(SwitchTb, StatsReportQueueOccupancyPerInterval) {
    ethernet_switch_params p = params_10g(3);
    p.stats_interval = us(1);
    switch_bench b("", p);
    b.sw.add_route(host_mac(2), {2});
    for (int i = 0; i < 3; ++i) b.send(sc_core::SC_ZERO_TIME, 0, raw_frame(host_mac(2), host_mac(0), 1000, 1));
    b.send(us(3), 1, raw_frame(host_mac(7), host_mac(1), 100, 2));  // flooded to ports 0 and 2
    sc_core::sc_start(ns(4500));

    // Queue 2 holds 3000 bytes until the first frame's last bit at 500 + 809.6 ns, then 2000 until
    // 2128.8 ns, 1000 until 2948 ns, 0, and the flooded 100 bytes from 3 us to 3589.6 ns:
    //   [0, 1 us): 3000   [1, 2): 3000   [2, 3): 2000   [3, 4): 100   [4, 4.5]: 0
    EXPECT_EQ(b.sw.occupancy_maxima(2), (std::vector<std::uint64_t>{3000, 3000, 2000, 100, 0}));
    EXPECT_EQ(b.sw.occupancy_maxima(0), (std::vector<std::uint64_t>{0, 0, 0, 100, 0}));
    boost::json::object stats;
    b.sw.report_stats(stats);
    const boost::json::object& port2 = stats["port_2"].as_object();
    EXPECT_EQ(port2.at("frames_out").to_number<std::uint64_t>(), 4u);
    EXPECT_EQ(port2.at("bytes_out").to_number<std::uint64_t>(), 3100u);
    EXPECT_EQ(port2.at("queue_peak_bytes").to_number<std::uint64_t>(), 3000u);
    EXPECT_EQ(port2.at("occupancy_max_bytes").as_array().size(), 5u);
    EXPECT_EQ(port2.at("occupancy_max_bytes").as_array()[2].to_number<std::uint64_t>(), 2000u);
    EXPECT_EQ(port2.at("drops").as_object().at("dt_threshold").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(stats["port_1"].as_object().at("flooded").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(stats["buffer_peak_bytes"].to_number<std::uint64_t>(), 3000u);
    EXPECT_EQ(stats["mode"].as_string(), "store_and_forward");
}

}  // namespace
}  // namespace rnic::test
