// The NIC's transmit model, end to end: segments built as the link drains
// (rnic.tcp.tx_ahead_frames) and several complete FPDUs packed into one segment with markers
// (rnic.mpa.pack_fpdus, RFC 5044 Appendix A), and one connection at 100 Gb/s through the buffer
// memory's one port (rnic.buffer.port_order) and through a pipelined transmit engine
// (rnic.tcp.tx_interval_cycles); frames booked in time order (rnic.tcp.tx_order, link.order).
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

double first_row_goodput(const boost::json::value& v) {
    return v.at("workload").at("rows").at(0).at("goodput_gbps").to_number<double>();
}

// Segments generated as the link drains (rnic.tcp.tx_ahead_frames): unsent data stays unsent
// instead of queueing in front of the link, so a hole is repaired after about one round trip
// and the receiver holds about a bandwidth-delay product out of order, not the sender's window.
TEST(TransmitModel, SegmentsGeneratedAsTheLinkDrainsShrinkTheReassemblyPeak) {
    std::uint64_t peak[2] = {};
    for (int paced = 0; paced < 2; ++paced) {
        const std::string results = temp_path(std::string("paced-") + std::to_string(paced) + ".json");
        const sim_run r = run_sim({"--set",     "workload.sizes=[16384]",
                                   "--set",     "workload.iterations=300",
                                   "--set",     "workload.queue_depth=64",
                                   "--set",     "rnic.tcp.send_buffer=1MiB",
                                   "--set",     "rnic.tcp.receive_buffer=1MiB",
                                   "--set",     "link.rate=1Gbps",
                                   "--set",     "rnic.buffer.capacity=3MiB",
                                   "--set",     "link.a_to_b.loss=0.01",
                                   "--set",     std::string("rnic.tcp.tx_ahead_frames=") + (paced ? "2" : "0"),
                                   "--results", results,
                                   "--log",     "error"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        const boost::json::value v = read_json(results);
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        const boost::json::value& a = v.at("modules").at("a.rnic").at("toe");
        EXPECT_GT(u64(a.at("connections").at(0).at("fast_retransmits")), 10u);  // losses were repaired
        if (paced)
            EXPECT_GT(u64(a.at("tx_paced_waits")), 0u);
        else
            EXPECT_EQ(a.as_object().if_contains("tx_paced_waits"), nullptr);
        peak[paced] = u64(v.at("modules").at("b.rnic").at("buffer").at("rx_reassembly_peak_bytes"));
    }
    // 1 Gb/s over a 2 m cable: the product is well under 16 KiB; the unpaced window is 1 MiB.
    EXPECT_LT(peak[1], 16u * 1024);
    EXPECT_GT(peak[0], 64u * 1024);
}

// One connection at 100 Gb/s: the send stream's appends and the segment reads share the buffer
// memory's port (64 B x 500 MHz, twice what 100 Gb/s needs). Booked in call order, a segment read
// booked after the header build left the port idle meanwhile and the next append waited behind it,
// capping the connection near 61 Gb/s; served in time order it runs close to the line.
TEST(TransmitModel, BufferPortServedInTimeOrderCarriesOneConnectionAt100Gbps) {
    double goodput[2] = {};
    const char* order[2] = {"call", "time"};
    for (int i = 0; i < 2; ++i) {
        sim_run r;
        const boost::json::value v =
            run_with_sets(std::string("port-order-") + order[i],
                          {"workload.sizes=[16384]", "workload.iterations=400", "workload.queue_depth=64",
                           "link.rate=100Gbps", "pcie.generation=4", "pcie.lanes=16", "rnic.mpa.crc_bytes_per_cycle=32",
                           "rnic.tcp.tx_ahead_frames=8", std::string("rnic.buffer.port_order=") + order[i],
                           // The transmitter before 2026-11-29 (call order, one frame in the pipeline at a
                           // time), under which the port's order decided the rate.
                           "rnic.tcp.tx_order=call", "link.order=call", "rnic.tcp.tx_interval_cycles=0"},
                          &r);
        ASSERT_EQ(r.exit_code, 0) << r.output;
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        goodput[i] = v.at("workload").at("rows").at(0).at("goodput_gbps").to_number<double>();
    }
    EXPECT_LT(goodput[0], 66.0);
    EXPECT_GT(goodput[1], 85.0);
}

// One connection at 100 Gb/s, 1500-byte MTU, study (a)'s NIC: with one frame in the transmit
// pipeline at a time (40 cycles = 80 ns a frame), the framer's appends, which arrive in pairs, leave
// the wire idle after about one frame in six and cap the connection near 89 Gb/s; a pipelined engine
// with the same 80 ns latency taking a frame every 20 cycles runs it at the wire's payload rate
// (93.3 Gb/s with the 544-byte last frame of each Write).
TEST(TransmitModel, APipelinedTransmitEngineLiftsThe100GbpsCapToTheWire) {
    double goodput[2] = {};
    const char* interval[2] = {"0", "20"};
    for (int i = 0; i < 2; ++i) {
        const boost::json::value v = run_ok(
            std::string("tx-interval-") + interval[i],
            {"workload.sizes=[16384]", "workload.iterations=1000", "workload.queue_depth=16", "link.rate=100Gbps",
             "link.propagation=500ns", "pcie.generation=4", "pcie.lanes=16", "pcie.tags=32",
             "rnic.mpa.crc_bytes_per_cycle=32", "rnic.dma.channels=4", "rnic.dma.max_outstanding_reads=32",
             "host_memory.bandwidth=25.6GBps", "rnic.tcp.tx_ahead_frames=8", "rnic.rx_path=aligned",
             "rnic.tcp.tx_order=call", "link.order=call", std::string("rnic.tcp.tx_interval_cycles=") + interval[i]});
        ASSERT_TRUE(v.as_object().contains("integrity"));
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        goodput[i] = first_row_goodput(v);
    }
    EXPECT_LT(goodput[0], 90.0);
    EXPECT_GT(goodput[1], 92.0);
    EXPECT_LT(goodput[1], 93.4);
}

// 64 QPs of 4 KiB Writes on one NIC, no loss, 8 frames ahead. Booked in call order, frames built
// for appends ahead in local time count as ahead at kernel time and refuse the connections woken
// then while the wire is idle: a tenth of the throughput is lost and the unsent bytes pile up in the
// send streams. Booked in time order (engine and link), pacing costs nothing against the whole
// window queued, and one connection's frames still arrive in order (no out-of-order segment).
TEST(TransmitModel, TimeOrderedTransmitBookingLetsManyConnectionsPaceAtFullRate) {
    const auto run = [](const std::string& order, const std::string& ahead) {
        const boost::json::value v = run_ok(
            "tx-order-" + order + "-" + ahead,
            {"workload.qps=64", "workload.sizes=[4096]", "workload.iterations=100", "rnic.buffer.send_regions=shared",
             "rnic.tcp.tx_order=" + order, "link.order=" + order, "rnic.tcp.tx_ahead_frames=" + ahead});
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        EXPECT_EQ(u64(v.at("modules").at("b.rnic").at("toe").at("rx_out_of_order_segments")), 0u) << order << ahead;
        return v;
    };
    const auto held = [](const boost::json::value& v) {
        return u64(v.at("modules").at("a.rnic").at("buffer").at("send_held_peak_bytes"));
    };
    const boost::json::value queued = run("call", "0");
    const boost::json::value call_paced = run("call", "8");
    const boost::json::value time_queued = run("time", "0");
    const boost::json::value time_paced = run("time", "8");
    EXPECT_LT(first_row_goodput(call_paced), 0.95 * first_row_goodput(queued));
    EXPECT_GT(held(call_paced), 1024u * 1024);
    EXPECT_GT(first_row_goodput(time_paced), 0.999 * first_row_goodput(queued));
    EXPECT_GT(first_row_goodput(time_queued), 0.999 * first_row_goodput(queued));
    EXPECT_LT(held(time_paced), 128u * 1024);
}

// The same paced run twice gives the same results (outside the wall clock) and the same capture.
TEST(TransmitModel, LinkPacedRunsAreDeterministic) {
    std::string text[2], pcap[2];
    for (int i = 0; i < 2; ++i) {
        const std::string results = temp_path("paced-det-" + std::to_string(i) + ".json");
        const std::string capture = temp_path("paced-det-" + std::to_string(i) + ".pcap");
        const sim_run r =
            run_sim({"--set", "workload.iterations=200", "--set", "link.a_to_b.loss=0.01", "--set",
                     "rnic.tcp.tx_ahead_frames=2", "--results", results, "--pcap", capture, "--log", "error"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        boost::json::value v = read_json(results);
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        v.as_object().erase("wallclock");
        text[i] = boost::json::serialize(v);
        pcap[i] = read_file(capture);
    }
    EXPECT_EQ(text[0], text[1]);
    EXPECT_EQ(pcap[0], pcap[1]);
    EXPECT_GT(pcap[0].size(), 100000u);
}

// 64-byte Writes faster than a 1 Gb/s link takes them: FPDUs wait in the send stream, so TCP can
// pack them; with markers only rnic.mpa.pack_fpdus lets it (RFC 5044 Appendix A), and the marker
// stream stays valid, placeable out of order, and checked by rnic-pcap-check.
TEST(TransmitModel, MarkedFpdusArePackedOnlyWhenAllowed) {
    std::uint64_t segments[2] = {};
    double goodput[2] = {};
    for (int pack = 0; pack < 2; ++pack) {
        const std::string results = temp_path(std::string("pack-") + std::to_string(pack) + ".json");
        const std::string capture = temp_path(std::string("pack-") + std::to_string(pack) + ".pcap");
        const sim_run r = run_sim({"--set",     "rnic.mpa.markers=true",
                                   "--set",     "rnic.rx_path=markers",
                                   "--set",     "workload.sizes=[64]",
                                   "--set",     "workload.iterations=4000",
                                   "--set",     "workload.queue_depth=32",
                                   "--set",     "link.rate=1Gbps",
                                   "--set",     "link.a_to_b.loss=0.01",
                                   "--set",     "rnic.tcp.tx_ahead_frames=2",
                                   "--set",     std::string("rnic.mpa.pack_fpdus=") + (pack ? "true" : "false"),
                                   "--results", results,
                                   "--pcap",    capture,
                                   "--log",     "error"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        const boost::json::value v = read_json(results);
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        const boost::json::value& a = v.at("modules").at("a.rnic");
        EXPECT_EQ(u64(a.at("framer").at("tx_fpdus")), 4000u);
        segments[pack] = u64(a.at("toe").at("connections").at(0).at("segments_sent"));
        goodput[pack] = v.at("workload").at("rows").at(0).at("goodput_gbps").to_number<double>();
        // Lost segments left holes; FPDUs behind them were found by their markers and placed.
        EXPECT_GT(u64(v.at("modules").at("b.rnic").at("framer").at("ooo_fpdus_placed")), 0u);
        const std::string check = pcap_check(capture);
        EXPECT_NE(check.find("4000 FPDUs, 0 bad CRC, 0 framing errors"), std::string::npos) << check;
        EXPECT_NE(check.find("exit=0"), std::string::npos) << check;
    }
    EXPECT_GE(segments[0], 4000u);  // one FPDU per segment
    EXPECT_LT(segments[1], 1000u);  // several per segment
    EXPECT_GT(goodput[1], 1.3 * goodput[0]);
}

}  // namespace
}  // namespace rnic::test
