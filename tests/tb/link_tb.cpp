// The Ethernet link through its sockets: serialisation with preamble/SFD/FCS/IFG, propagation,
// order, pcap, oversize frames.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/stream.h"
#include "link/ethernet_link.h"
#include "proto/pcap.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

struct link_bench {
    ethernet_link link;
    tb_initiator a, b;
    tb_sink a_rx, b_rx;
    explicit link_bench(const ethernet_link_params& p) : link("link", p), a("a"), b("b"), a_rx("a_rx"), b_rx("b_rx") {
        a.out.bind(link.port_a_in);
        b.out.bind(link.port_b_in);
        link.port_a_out.bind(a_rx.in);
        link.port_b_out.bind(b_rx.in);
    }
    void send(tb_initiator& from, std::size_t len, std::uint8_t fill) {
        std::vector<std::uint8_t> f(len, fill);
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        send_frame_bytes(from.out, f.data(), f.size(), d);
    }
};

TEST(LinkTb, FramesArriveAfterSerialisationAndPropagation) {
    ethernet_link_params p;
    p.rate_bps = 10e9;
    p.propagation = sc_core::sc_time(1, sc_core::SC_US);
    link_bench b(p);
    const std::string pcap_path = "/tmp/rnic-link-tb-" + std::to_string(::getpid()) + ".pcap";
    proto::pcap_writer pcap;
    std::string err;
    ASSERT_TRUE(pcap.open(pcap_path, &err)) << err;
    b.link.set_pcap(&pcap);

    b.send(b.a, 1514, 0x11);  // a full frame
    b.send(b.a, 60, 0x22);    // a minimum frame queues behind it
    b.send(b.b, 100, 0x33);   // the other direction is independent
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
    pcap.close();

    ASSERT_EQ(b.b_rx.items.size(), 2u);
    ASSERT_EQ(b.a_rx.items.size(), 1u);
    // 8 preamble/SFD + 1514 + 4 FCS = 1526 bytes = 1220.8 ns at 10 Gb/s, then 1 us of fibre.
    EXPECT_EQ(b.b_rx.items[0].at, sc_core::sc_time(1220.8 + 1000.0, sc_core::SC_NS));
    // The second frame waits for the first one and its 12-byte gap (9.6 ns): 1526 + 12 + 72 bytes.
    EXPECT_EQ(b.b_rx.items[1].at, sc_core::sc_time((1526 + 12 + 72) * 0.8 + 1000.0, sc_core::SC_NS));
    EXPECT_EQ(b.b_rx.items[0].data, std::vector<std::uint8_t>(1514, 0x11));
    EXPECT_EQ(b.a_rx.items[0].at, sc_core::sc_time((8 + 100 + 4) * 0.8 + 1000.0, sc_core::SC_NS));

    std::string error;
    const auto records = proto::read_pcap(pcap_path, &error);
    ASSERT_TRUE(records) << error;
    ASSERT_EQ(records->size(), 3u);
    EXPECT_EQ((*records)[0].data.size(), 100u);  // in arrival order: the short b->a frame lands first
    EXPECT_EQ((*records)[1].time_ns, 2220u);
    std::remove(pcap_path.c_str());
}

TEST(LinkTb, OversizeFramesAreDroppedAndCounted) {
    link_bench b(ethernet_link_params{});
    b.send(b.a, 1515, 0);  // 1500 MTU + 14 header is the limit
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
    EXPECT_TRUE(b.b_rx.items.empty());
    boost::json::object stats;
    b.link.report_stats(stats);
    EXPECT_EQ(stats["a_to_b"].as_object()["oversize_drops"].to_number<std::uint64_t>(), 1u);
}

}  // namespace
}  // namespace rnic::test
