// VI/TCP's Urgent Marker receive path (rnic.rx_path = urgent, seed 003 §3.7) end to end: with
// the option offered, every data segment on the wire carries URG with the urgent pointer on the
// first byte of its VI segment (and none does without the option); out-of-order RDMA Writes are
// placed directly from the start the pointer names, so the receiver buffers far less than on the
// buffering path, and every byte arrives intact under loss, reordering and re-segmentation
// (re-segmented pieces without a marked start are buffered, none is a false candidate); Sends
// wait for the in-order path; the same seed gives the same results and pcap; and the settings the
// path cannot run with are refused at start.
#include <gtest/gtest.h>

#include "proto/net.h"
#include "proto/pcap.h"
#include "proto/seeds/vitcp.h"
#include "run_helpers.h"

namespace rnic::test {
namespace {

namespace vt = proto::vitcp;
namespace net = proto::net;

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

// VI/TCP with the CRC and the Urgent Marker option, received on the urgent path.
std::vector<std::string> urgent_settings() {
    return {"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.crc=true", "--set", "rnic.vitcp.urgent_marker=true",
            "--set", "rnic.rx_path=urgent"};
}

std::vector<std::string> urgent_args(const std::string& results, const std::vector<std::string>& more) {
    std::vector<std::string> args = urgent_settings();
    args.insert(args.end(), {"--results", results, "--log", "off"});
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// Data segments of the capture (after the CE segments, no CRC option) with and without URG; a marked one must
// point at its own first byte (one VI segment per TCP segment, §2.2.2.2.3).
struct marks {
    std::size_t data = 0, marked = 0, pointer_at_start = 0;
};

marks count_marks(const std::string& pcap) {
    marks m;
    std::string error;
    const auto records = proto::read_pcap(pcap, &error);
    EXPECT_TRUE(records) << error;
    if (!records) return m;
    for (const auto& rec : *records) {
        const auto f = net::parse_tcp_frame(rec.data.data(), rec.data.size(), nullptr);
        if (!f || f->payload_len == 0) continue;
        const auto v = vt::parse(rec.data.data() + f->payload_offset, f->payload_len, /*crc=*/false, nullptr);
        if (!v || vt::has_ce_header(v->header.type)) continue;
        ++m.data;
        if ((f->tcp.flags & net::tcp_flags::kUrg) == 0) continue;
        ++m.marked;
        if (f->tcp.urgent_pointer == 0) ++m.pointer_at_start;
    }
    return m;
}

TEST(ViTcpUrgent, EveryDataSegmentIsMarkedOnlyWhenTheOptionWasOffered) {
    for (const bool offered : {true, false}) {
        const std::string pcap = temp_path(std::string("vitcp-urg-marks-") + (offered ? "on" : "off") + ".pcap");
        const std::string results = temp_path("vitcp-urg-marks.json");
        std::vector<std::string> args = {
            "--set",     "rnic.framing=vitcp",
            "--set",     std::string("rnic.vitcp.urgent_marker=") + (offered ? "true" : "false"),
            "--set",     "workload.type=read_bw",
            "--set",     "workload.sizes=[4096]",
            "--set",     "workload.iterations=20",
            "--pcap",    pcap,
            "--results", results,
            "--log",     "off"};
        const sim_run r = run_sim(args);
        ASSERT_EQ(r.exit_code, 0) << r.output;
        const marks m = count_marks(pcap);
        EXPECT_GT(m.data, 40u);  // 20 Read Requests one way, 20 x 3 responses the other
        EXPECT_EQ(m.marked, offered ? m.data : 0u) << (offered ? "on" : "off");
        EXPECT_EQ(m.pointer_at_start, m.marked);
    }
}

class ViTcpUrgentFaults : public ::testing::TestWithParam<const char*> {};

TEST_P(ViTcpUrgentFaults, WritesArePlacedFromTheMarkedStartAndEveryByteArrives) {
    const std::string fault = GetParam();
    const std::string results = temp_path("vitcp-urg-" + fault + ".json");
    std::vector<std::string> kvs = {"loss=0.01"};
    if (fault == "reorder") kvs = {"reorder=0.03", "reorder_delay=4us"};
    if (fault == "resegment") kvs = {"resegment=0.3", "loss=0.01"};
    std::vector<std::string> more = {"--set", "workload.sizes=[4096,65536]", "--set", "workload.iterations=150"};
    for (const std::string& kv : kvs) more.insert(more.end(), {"--set", "link.a_to_b." + kv});
    const sim_run r = run_sim(urgent_args(results, more));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    const auto& b = v.at("modules").at("b.rnic");
    const auto& framer = b.at("framer");
    EXPECT_EQ(u64(b.at("rdma").at("placed_bytes")), 150u * (4096 + 65536));  // each byte once
    EXPECT_GT(u64(framer.at("ooo_fpdus_placed")), 0u);
    EXPECT_EQ(u64(framer.at("ooo_false_candidates")), 0u);  // our sender's pointers are right
    EXPECT_EQ(u64(framer.at("crc_errors")), 0u);
    EXPECT_EQ(u64(framer.at("framing_errors")), 0u);
    EXPECT_EQ(u64(framer.at("in_order_already_placed")), u64(framer.at("ooo_fpdus_placed")));
    EXPECT_GT(u64(b.at("rdma").at("placed_out_of_order_bytes")), 0u);
    if (fault == "resegment") {
        // A piece that starts inside a VI segment has no marked start of its own: buffered.
        EXPECT_GT(u64(v.at("modules").at("link").at("a_to_b").at("faults").at("resegmented")), 0u);
        EXPECT_GT(u64(framer.at("ooo_segments_unmarked")), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Faults, ViTcpUrgentFaults, ::testing::Values("loss", "reorder", "resegment"));

TEST(ViTcpUrgent, TheUrgentPathBuffersLessThanBufferingUnderTheSameLoss) {
    std::uint64_t buffered[2] = {};
    for (int i = 0; i < 2; ++i) {
        const std::string results = temp_path(std::string("vitcp-urg-vs-buf-") + std::to_string(i) + ".json");
        const sim_run r = run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.urgent_marker=true", "--set",
                                   i == 0 ? "rnic.rx_path=urgent" : "rnic.rx_path=buffering", "--set",
                                   "link.a_to_b.loss=0.01", "--set", "workload.sizes=[65536]", "--set",
                                   "workload.iterations=150", "--results", results, "--log", "off"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        const boost::json::value v = read_json(results);
        EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
        buffered[i] = u64(v.at("modules").at("b.rnic").at("toe").at("rx_bytes_buffered"));
    }
    EXPECT_GT(buffered[1], 0u);
    EXPECT_LT(buffered[0] * 10, buffered[1]) << "urgent " << buffered[0] << ", buffering " << buffered[1];
}

TEST(ViTcpUrgent, SendsWaitForTheInOrderPath) {
    const std::string results = temp_path("vitcp-urg-send.json");
    const sim_run r =
        run_sim(urgent_args(results, {"--set", "workload.type=send_bw", "--set", "link.a_to_b.loss=0.01", "--set",
                                      "workload.sizes=[65536]", "--set", "workload.iterations=60"}));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    const auto& framer = v.at("modules").at("b.rnic").at("framer");
    EXPECT_GT(u64(framer.at("ooo_segments_offered")), 0u);
    EXPECT_EQ(u64(framer.at("ooo_fpdus_placed")), 0u);  // a Send's placement depends on the ones before it
    EXPECT_EQ(u64(framer.at("ooo_false_candidates")), 0u);
}

TEST(ViTcpUrgent, TheSameSeedGivesTheSameResultsAndPcap) {
    std::vector<std::string> args = urgent_settings();
    args.insert(args.end(),
                {"--set", "link.a_to_b.loss=0.01", "--set", "link.a_to_b.resegment=0.1", "--set",
                 "workload.sizes=[4096,30000]", "--set", "workload.iterations=60", "--set", "simulation.seed=7"});
    expect_same_results_and_pcap("vitcp-urg-det", args);
}

TEST(ViTcpUrgent, SettingsThePathCannotRunWithAreRefusedAtStart) {
    // Another framing has no urgent marks; without our option the peer never marks (§3.7).
    const sim_run mpa = run_sim({"--set", "rnic.rx_path=urgent"});
    EXPECT_EQ(mpa.exit_code, 2);
    EXPECT_NE(mpa.output.find("rnic.rx_path: \"urgent\" is VI/TCP's Urgent Marker"), std::string::npos) << mpa.output;
    const sim_run no_option = run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.rx_path=urgent"});
    EXPECT_EQ(no_option.exit_code, 2);
    EXPECT_NE(no_option.output.find("set rnic.vitcp.urgent_marker to true"), std::string::npos) << no_option.output;
}

}  // namespace
}  // namespace rnic::test
