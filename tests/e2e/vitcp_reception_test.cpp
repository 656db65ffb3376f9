// VI/TCP at Reliable Reception (seed 003 §3.2, rnic.vitcp.reliability = reliable_reception) end to
// end: a send descriptor completes only when the peer's Message ACK arrives, and the peer sends
// it only after the data is in its host memory; the captures carry the Message ACK (in a NOP when
// the receiver has nothing else to send) and no Message ACK at Reliable Delivery; every descriptor
// completes under loss; and a peer's error reaches the sender's descriptor as the peer's VI Error
// Type (the vi_* probes check the statuses, tests/e2e/vitcp_test.cpp ViTcpReliability).
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "proto/net.h"
#include "proto/pcap.h"
#include "proto/seeds/vitcp.h"
#include "retransmit_from_host_check.h"
#include "run_helpers.h"

namespace rnic::test {
namespace {

namespace vt = proto::vitcp;

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

constexpr std::uint32_t kHostA = 0x0a000001;  // 10.0.0.1, the client

// The VI segments of a capture (no loss: every TCP payload holds whole segments), with the time
// the frame reached the receiving port.
struct wire_segment {
    std::uint64_t time_ns = 0;
    bool from_a = false;
    vt::header header;
};

std::vector<wire_segment> vi_segments(const std::string& pcap) {
    std::string error;
    const auto records = proto::read_pcap(pcap, &error);
    EXPECT_TRUE(records) << error;
    std::vector<wire_segment> out;
    if (!records) return out;
    for (const proto::pcap_record& r : *records) {
        const auto f = proto::net::parse_tcp_frame(r.data.data(), r.data.size(), &error);
        if (!f || f->payload_len == 0) continue;
        const std::uint8_t* p = r.data.data() + f->payload_offset;
        std::size_t at = 0;
        while (at < f->payload_len) {
            const auto v = vt::parse(p + at, f->payload_len - at, /*crc_negotiated=*/false, &error);
            if (!v) {
                ADD_FAILURE() << "not a VI segment at " << r.time_ns << " ns: " << error;
                return out;
            }
            out.push_back({r.time_ns, f->ip.src == kHostA, v->header});
            at += v->wire_length;
        }
    }
    return out;
}

struct one_send {
    double latency_ns = 0;                // the client's post to its completion
    std::uint64_t last_data_ns = 0;       // the Send's last segment reached the server
    std::uint32_t message = 0;            // its Message Number
    std::optional<std::uint64_t> ack_ns;  // the first segment from the server acknowledging it
    std::optional<vt::segment_type> ack_type;
    bool any_ack_field = false;  // a segment from the server with a non-zero Message ACK
};

// One 4 KiB Send from the client into a receive of the server, whose host memory takes 5 us per
// access (placement is slow), at `level`.
one_send run_one_send(const std::string& level) {
    const std::string trace = temp_path("vitcp-rr-send-" + level + ".csv");
    write_file(trace, "0, 1, 0, send, 4096, 0\n");
    const std::string pcap = temp_path("vitcp-rr-send-" + level + ".pcap");
    const std::string results = temp_path("vitcp-rr-send-" + level + ".json");
    const sim_run r =
        run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.reliability=" + level, "--set",
                 "workload.type=trace", "--set", "workload.trace=" + trace, "--set", "hosts.1.host_memory.latency=5us",
                 "--pcap", pcap, "--results", results, "--log", "off"});
    one_send out;
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (r.exit_code != 0) return out;
    const boost::json::value v = read_json(results);
    const auto& op = v.at("workload").at("operation_log").as_array().at(0);
    EXPECT_EQ(op.at("status").as_string(), "success");
    EXPECT_EQ(op.at("data").as_string(), "ok");
    out.latency_ns = op.at("complete_ns").to_number<double>() - op.at("post_ns").to_number<double>();
    for (const wire_segment& s : vi_segments(pcap)) {
        if (s.from_a && s.header.type == vt::segment_type::send && s.header.eom) {
            out.last_data_ns = s.time_ns;
            out.message = s.header.message_number;
        }
    }
    for (const wire_segment& s : vi_segments(pcap)) {
        if (s.from_a || vt::has_ce_header(s.header.type)) continue;
        if (s.header.message_ack != 0 || s.header.remote_error.pack() != 0) out.any_ack_field = true;
        if (!out.ack_ns && out.last_data_ns != 0 && s.header.message_ack == out.message &&
            s.header.remote_error.pack() == 0) {
            out.ack_ns = s.time_ns;
            out.ack_type = s.header.type;
        }
    }
    EXPECT_NE(out.last_data_ns, 0u) << "no Send on the wire";
    return out;
}

TEST(ViTcpReliableReception, ASendCompletesOnlyOnThePeersMessageAckWhichFollowsPlacement) {
    const one_send rr = run_one_send("reliable_reception");
    const one_send rd = run_one_send("reliable_delivery");
    ASSERT_TRUE(rr.ack_ns) << "no Message ACK of the Send from the server";
    // §3.2 Notes on NOP: the server has nothing else to send, so a NOP carries it.
    EXPECT_EQ(*rr.ack_type, vt::segment_type::nop);
    // "Message ACK should not be indicated ... until ... message data has been written to host
    // memory and the associated completion information has been written": with 5 us per host
    // memory access at the server, the ACK leaves well after the data arrived.
    const double ack_after_data = static_cast<double>(*rr.ack_ns - rr.last_data_ns);
    EXPECT_GE(ack_after_data, 5000.0) << "the Message ACK did not wait for placement";
    // "the Message ACK field ... will be used [to] determine when transmit Descriptors will be
    // completed": the client's descriptor completes after the ACK reached it, so its latency
    // exceeds the time from the data's arrival to the ACK's.
    EXPECT_GT(rr.latency_ns, ack_after_data) << "completed before the Message ACK arrived";
    // The same Send at Reliable Delivery completes on TCP's acknowledgement, sooner than the
    // Message ACK could have arrived (so the check above is one a wrong completion would fail),
    // and nothing on the wire carries a Message ACK (§3.2: "should set the value to zero").
    EXPECT_LT(rd.latency_ns, ack_after_data);
    EXPECT_FALSE(rd.ack_ns);
    EXPECT_FALSE(rd.any_ack_field);
}

// Bulk transfers at Reliable Reception under loss both ways: every descriptor completes (each on
// a Message ACK; the NOPs and data segments that carry them are retransmitted like any other
// segment) and every byte arrives.
class ViTcpReliableReceptionUnderLoss : public ::testing::TestWithParam<const char*> {};

TEST_P(ViTcpReliableReceptionUnderLoss, EveryDescriptorCompletesOnItsMessageAck) {
    const std::string type = GetParam();
    const std::string results = temp_path("vitcp-rr-loss-" + type + ".json");
    const sim_run r = run_sim({"--set",     "rnic.framing=vitcp",
                               "--set",     "rnic.vitcp.crc=true",
                               "--set",     "rnic.vitcp.reliability=reliable_reception",
                               "--set",     "workload.type=" + type,
                               "--set",     "workload.sizes=[4096,65536]",
                               "--set",     "workload.iterations=100",
                               "--set",     "link.a_to_b.loss=0.01",
                               "--set",     "link.b_to_a.loss=0.01",
                               "--results", results,
                               "--log",     "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    const auto& server = v.at("modules").at("b.rnic").at("framer").as_object();
    // The server only receives bulk data: its Message ACKs go out in NOPs.
    ASSERT_NE(server.if_contains("tx_acknowledgement_frames"), nullptr);
    EXPECT_GT(u64(server.at("tx_acknowledgement_frames")), 0u);
    EXPECT_EQ(u64(server.at("tx_acknowledgement_frames")), u64(server.at("tx_fpdus"))) << "it sends nothing else";
    for (const char* host : {"a.rnic", "b.rnic"}) {
        const auto& rdma = v.at("modules").at(host).at("rdma").as_object();
        EXPECT_EQ(rdma.at("qps").as_array().at(0).at("state").as_string(), "rts") << host;
        EXPECT_EQ(rdma.if_contains("remote_errors_reported"), nullptr) << host;
    }
}

INSTANTIATE_TEST_SUITE_P(Workloads, ViTcpReliableReceptionUnderLoss, ::testing::Values("write_bw", "send_bw"));

// Deterministic: the NOPs' timing (when what was placed has landed) repeats bit for bit.
TEST(ViTcpReliableReception, TheSameSeedGivesTheSameResultsAndPcap) {
    const boost::json::value modules = expect_same_results_and_pcap(
        "vitcp-rr-det",
        {"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.reliability=reliable_reception", "--set",
         "workload.type=send_bw", "--set", "link.a_to_b.loss=0.01", "--set", "link.b_to_a.loss=0.01", "--set",
         "workload.sizes=[4096,30000]", "--set", "workload.iterations=60", "--set", "simulation.seed=7"});
    ASSERT_TRUE(modules.is_object());
    EXPECT_GT(u64(modules.at("b.rnic").at("framer").at("tx_acknowledgement_frames")), 0u);
}

// Retransmissions from host memory at Reliable Reception: the recorded headers include the Message
// ACK the first transmission carried, so the re-framed segment is the same bytes (§2.2.2.2.5).
class ViTcpReliableReceptionRetransmitFromHost : public ::testing::TestWithParam<const char*> {};

TEST_P(ViTcpReliableReceptionRetransmitFromHost, ReframedRetransmissionsAreTheSameBytes) {
    check_retransmit_from_host("vitcp", GetParam(), {"rnic.vitcp.reliability=reliable_reception"});
}

INSTANTIATE_TEST_SUITE_P(Workloads, ViTcpReliableReceptionRetransmitFromHost,
                         ::testing::Values("write_bw", "read_bw", "send_bw"));

// Every operation VI/TCP carries, on two QPs under loss, at Reliable Reception: Writes, Writes with
// Immediate (the Immediate Data's receive completes before the ACK that covers it goes out), Reads
// (completed by their response, §3.2) and Sends all complete successfully, and the VIPL example's
// descriptors too.
TEST(ViTcpReliableReception, EveryOperationAndEveryViplDescriptorCompletes) {
    const std::string trace = temp_path("vitcp-rr-ops.csv");
    write_file(trace,
               "0, 1, 0, write, 4096, 0\n"
               "0, 2, 1, send, 3000, 8192\n"
               "1, 3, 0, write_imm, 20000, 16384\n"
               "after:1, 4, 0, read, 4096, 0\n"
               "2, 5, 1, read, 30000, 65536\n"
               "after:3, 6, 1, send, 64, 131072\n"
               "3, 7, 0, write_imm, 1, 200000\n"
               "after:5, 8, 1, write, 70000, 262144\n");
    const std::string results = temp_path("vitcp-rr-ops.json");
    const sim_run r = run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.crc=true", "--set",
                               "rnic.vitcp.reliability=reliable_reception", "--set", "workload.type=trace", "--set",
                               "workload.trace=" + trace, "--set", "link.a_to_b.loss=0.02", "--set",
                               "link.b_to_a.loss=0.02", "--results", results, "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    const auto& log = v.at("workload").at("operation_log").as_array();
    ASSERT_EQ(log.size(), 8u);
    for (const auto& op : log) EXPECT_EQ(op.at("status").as_string(), "success") << boost::json::serialize(op);

    const std::string vipl = temp_path("vitcp-rr-vipl.json");
    const sim_run rv = run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.reliability=reliable_reception",
                                "--set", "workload.type=vipl_example", "--set", "workload.sizes=[64,4096,30000]",
                                "--set", "workload.iterations=30", "--set", "link.a_to_b.loss=0.01", "--set",
                                "link.b_to_a.loss=0.01", "--results", vipl, "--log", "off"});
    ASSERT_EQ(rv.exit_code, 0) << rv.output;
    const boost::json::value w = read_json(vipl);
    EXPECT_EQ(w.at("status").as_string(), "ok");
    EXPECT_TRUE(w.at("integrity").at("ok").as_bool());
    for (const char* op : {"vipl_send", "vipl_rdma_write", "vipl_rdma_read", "vipl_recv"}) {
        EXPECT_EQ(u64(w.at("operations").at(op).at("count")), 30u) << op;
    }
}

}  // namespace
}  // namespace rnic::test
