// VI/TCP (rnic.framing = vitcp, seed 003) end to end between two NICs through the driver: the
// firmware's CE exchange (§4: ConnectRequest, ConnectAccept with the agreed options) replaces the
// MPA Request/Reply, the wire carries VI segments (§3) with good trailer CRCs when negotiated;
// Writes, Reads, Sends and a latency workload arrive intact under loss, reordering, duplication and
// re-segmentation; a corrupted segment is caught by the CRC and the connection closes (§3.6); the
// same seed gives the same results and pcap; a reliability mismatch is refused with ConnectReject
// and its reason (§3.3); what VI/TCP cannot carry (atomics) is refused at post; settings it cannot
// run with are refused at start.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "proto/seeds/vitcp.h"
#include "retransmit_from_host_check.h"
#include "run_helpers.h"

namespace rnic::test {
namespace {

namespace vt = proto::vitcp;

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

std::vector<std::uint8_t> from_hex(const std::string& hex) {
    std::vector<std::uint8_t> out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
}

TEST(ViTcp, CeExchangeThenViSegmentsWithGoodCrcsOnTheWire) {
    const std::string pcap = temp_path("vitcp-wire.pcap");
    const std::string results = temp_path("vitcp-wire.json");
    const sim_run r = run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.crc=true", "--set",
                               "workload.type=read_bw", "--set", "workload.sizes=[100,3000]", "--set",
                               "workload.iterations=4", "--pcap", pcap, "--results", results, "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(read_json(results).at("integrity").at("ok").as_bool());
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    std::size_t requests = 0, responses = 0, response_bytes = 0;
    for (const char* src : {"10.0.0.1", "10.0.0.2"}) {
        std::istringstream payloads(shell(std::string("tshark -r ") + pcap + " -Y 'ip.src == " + src +
                                          " && tcp.len > 0' -T fields -e tcp.payload 2>/dev/null"));
        bool first = true;
        for (std::string hex; std::getline(payloads, hex);) {
            if (hex.empty()) continue;
            const std::vector<std::uint8_t> seg = from_hex(hex);
            std::size_t at = 0;
            while (at < seg.size()) {
                std::string error;
                const auto v = vt::parse(seg.data() + at, seg.size() - at, /*crc_negotiated=*/true, &error);
                ASSERT_TRUE(v) << src << ": " << error;
                if (first) {
                    // §4.1: the active side's ConnectRequest, the passive side's ConnectAccept, both
                    // with the CRC option and so a trailer (§3.6).
                    EXPECT_EQ(v->header.type, std::string(src) == "10.0.0.1" ? vt::segment_type::connect_request
                                                                             : vt::segment_type::connect_accept);
                    ASSERT_TRUE(v->ce);
                    EXPECT_TRUE(v->ce->has_option(vt::kOptionCrc));
                    EXPECT_TRUE(v->crc_present);
                    first = false;
                } else {
                    EXPECT_FALSE(vt::has_ce_header(v->header.type));
                    EXPECT_TRUE(v->crc_present);  // every data segment: both CE segments had the option
                }
                if (v->header.type == vt::segment_type::read_request) ++requests;
                if (v->header.type == vt::segment_type::read_response) {
                    ++responses;
                    response_bytes += v->payload_len;
                }
                at += v->wire_length;
            }
        }
        EXPECT_FALSE(first) << src << " sent nothing";
    }
    EXPECT_EQ(requests, 8u);
    EXPECT_GE(responses, 8u);
    EXPECT_EQ(response_bytes, 4u * 100 + 4u * 3000);
}

struct workload_case {
    const char* type;
    const char* op;        // operations.<op>.count
    const char* receiver;  // the host whose framer receives the bulk data
};

const workload_case kWorkloads[] = {
    {"write_bw", "rdma_write", "b.rnic"},
    {"read_bw", "rdma_read", "a.rnic"},
    {"send_bw", "send", "b.rnic"},
    {"write_lat", "rdma_write", "b.rnic"},
};

class ViTcpUnderLoss : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(ViTcpUnderLoss, EveryByteArrives) {
    const workload_case& w = kWorkloads[std::get<0>(GetParam())];
    const bool crc = std::get<1>(GetParam());
    const std::string results = temp_path(std::string("vitcp-") + w.type + (crc ? "-crc" : "") + ".json");
    const bool lat = std::string(w.type).find("_lat") != std::string::npos;
    const sim_run r =
        run_sim({"--set", "rnic.framing=vitcp", "--set", std::string("rnic.vitcp.crc=") + (crc ? "true" : "false"),
                 "--set", std::string("workload.type=") + w.type, "--set", "link.a_to_b.loss=0.01", "--set",
                 "link.b_to_a.loss=0.01", "--set", lat ? "workload.sizes=[64,4096]" : "workload.sizes=[4096,65536]",
                 "--set", "workload.iterations=150", "--results", results, "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_GT(u64(v.at("integrity").at("bytes_checked")), 0u);
    EXPECT_EQ(u64(v.at("operations").at(w.op).at("count")), 300u);
    EXPECT_GT(u64(v.at("modules").at("link").at("a_to_b").at("faults").at("dropped_random")) +
                  u64(v.at("modules").at("link").at("b_to_a").at("faults").at("dropped_random")),
              0u);
    for (const char* host : {"a.rnic", "b.rnic"}) {
        const auto& framer = v.at("modules").at(host).at("framer");
        EXPECT_EQ(u64(framer.at("crc_errors")), 0u) << host;
        EXPECT_EQ(u64(framer.at("framing_errors")), 0u) << host;
        EXPECT_EQ(u64(framer.at("ooo_fpdus_placed")), 0u) << host;  // buffering only
    }
    EXPECT_GT(u64(v.at("modules").at(w.receiver).at("framer").at("rx_fpdus")), 0u);
}

INSTANTIATE_TEST_SUITE_P(Workloads, ViTcpUnderLoss, ::testing::Combine(::testing::Range(0, 4), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<int, bool>>& p) {
                             return std::string(kWorkloads[std::get<0>(p.param)].type) +
                                    (std::get<1>(p.param) ? "_crc" : "_nocrc");
                         });

class ViTcpFaults : public ::testing::TestWithParam<const char*> {};

TEST_P(ViTcpFaults, EveryByteIntact) {
    const std::string fault = GetParam();
    const std::string results = temp_path("vitcp-fault-" + fault + ".json");
    std::vector<std::string> args = {"--set",     "rnic.framing=vitcp",
                                     "--set",     "rnic.vitcp.crc=true",
                                     "--set",     "workload.sizes=[256,4096,20000]",
                                     "--set",     "workload.iterations=150",
                                     "--results", results,
                                     "--log",     "off"};
    std::vector<std::string> kvs;
    if (fault == "reorder") kvs = {"reorder=0.03", "reorder_delay=4us"};
    if (fault == "resegment") kvs = {"resegment=0.3", "loss=0.01"};
    if (fault == "duplicate") kvs = {"duplicate=0.03"};
    for (const std::string& kv : kvs)
        args.insert(args.end(), {"--set", "link.a_to_b." + kv, "--set", "link.b_to_a." + kv});
    const sim_run r = run_sim(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_EQ(u64(v.at("operations").at("rdma_write").at("count")), 450u);
    const auto& b = v.at("modules").at("b.rnic");
    EXPECT_EQ(u64(b.at("rdma").at("placed_bytes")), 150u * (256 + 4096 + 20000));  // each byte once
    EXPECT_EQ(u64(b.at("framer").at("crc_errors")), 0u);
    EXPECT_EQ(u64(b.at("framer").at("framing_errors")), 0u);
    const char* counter = fault == "reorder" ? "reordered" : fault == "resegment" ? "resegmented" : "duplicated";
    EXPECT_GT(u64(v.at("modules").at("link").at("a_to_b").at("faults").at(counter)), 0u);
}

INSTANTIATE_TEST_SUITE_P(Faults, ViTcpFaults, ::testing::Values("reorder", "resegment", "duplicate"));

TEST(ViTcp, TheSameSeedGivesTheSameResultsAndPcap) {
    expect_same_results_and_pcap(
        "vitcp-det", {"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.crc=true", "--set", "workload.type=read_bw",
                      "--set", "link.b_to_a.loss=0.01", "--set", "workload.sizes=[4096,30000]", "--set",
                      "workload.iterations=60", "--set", "simulation.seed=7"});
}

// §3.6 option 2: a segment with a bad CRC past the TCP checksum; at Reliable Delivery "the
// connection must be closed immediately".
TEST(ViTcp, CorruptionPastTheChecksumsIsCaughtByTheCrcAndClosesTheConnection) {
    const std::string results = temp_path("vitcp-corrupt.json");
    const sim_run r =
        run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.crc=true", "--set", "link.a_to_b.corrupt=0.01",
                 "--set", "link.a_to_b.corrupt_fixes_checksum=true", "--set", "workload.sizes=[4096]", "--set",
                 "workload.iterations=500", "--results", results, "--log", "off"});
    EXPECT_NE(r.exit_code, 0);
    const boost::json::value v = read_json(results);
    const auto& b = v.at("modules").at("b.rnic");
    EXPECT_EQ(u64(b.at("framer").at("crc_errors")), 1u);
    EXPECT_EQ(u64(b.at("framer").at("framing_errors")), 0u);
    EXPECT_EQ(u64(b.at("rdma").at("llp_errors")), 1u);
}

// §3.3: "The reliability level of the two ends of a connection must match": the passive end
// answers ConnectReject, the active end's connect fails naming the reason; TCP closes (§4.2).
TEST(ViTcp, ReliabilityMismatchIsRefusedWithConnectRejectAndItsReason) {
    const std::string pcap = temp_path("vitcp-reject.pcap");
    const sim_run r = run_sim({"--set", "rnic.framing=vitcp", "--set", "hosts.0.vitcp_reliability=reliable_reception",
                               "--set", "workload.iterations=5", "--pcap", pcap, "--log", "warn"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("ConnectReject: reliability levels differ"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("asks for reliable reception, this end runs reliable delivery"), std::string::npos)
        << r.output;
    // The same levels at both ends connect.
    const sim_run ok = run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.reliability=unreliable", "--set",
                                "workload.iterations=5", "--log", "off"});
    EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

// The VIPL-style API (driver/vipl.h) end to end: VipConnectRequest / VipConnectWait+Accept over
// the CE exchange, Send into posted receive descriptors, RDMA Write and RDMA Read descriptors,
// VipSendWait / VipRecvWait, every byte checked by the example, under loss.
TEST(ViTcp, ViplExampleRunsEveryDescriptorKindUnderLoss) {
    const std::string results = temp_path("vitcp-vipl.json");
    const sim_run r =
        run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.crc=true", "--set", "workload.type=vipl_example",
                 "--set", "workload.sizes=[64,4096,30000]", "--set", "workload.iterations=30", "--set",
                 "link.a_to_b.loss=0.01", "--set", "link.b_to_a.loss=0.01", "--results", results, "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    for (const char* op : {"vipl_send", "vipl_rdma_write", "vipl_rdma_read", "vipl_recv"}) {
        EXPECT_EQ(u64(v.at("operations").at(op).at("count")), 30u) << op;
        EXPECT_EQ(u64(v.at("operations").at(op).at("bytes")), 10u * (64 + 4096 + 30000)) << op;
    }
}

// Writes, Writes with Immediate (the Write's segments, then a zero-length RdmaWrite with Immediate
// Data Valid), Reads and Sends of many sizes on two QPs (two TCP connections, two CE exchanges)
// under loss: every operation succeeds and every byte is checked.
TEST(ViTcp, EveryOperationItCanCarryRunsOnTwoQps) {
    const std::string trace = temp_path("vitcp-ops.csv");
    {
        std::ofstream t(trace);
        t << "0, 1, 0, write, 4096, 0\n"
             "0, 2, 1, send, 3000, 8192\n"
             "1, 3, 0, write_imm, 20000, 16384\n"
             "after:1, 4, 0, read, 4096, 0\n"
             "2, 5, 1, read, 30000, 65536\n"
             "after:3, 6, 1, send, 64, 131072\n"
             "3, 7, 0, write_imm, 1, 200000\n"
             "after:5, 8, 1, write, 70000, 262144\n";
    }
    const std::string results = temp_path("vitcp-ops.json");
    const sim_run r =
        run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.crc=true", "--set", "workload.type=trace", "--set",
                 "workload.trace=" + trace, "--set", "link.a_to_b.loss=0.02", "--set", "link.b_to_a.loss=0.02",
                 "--results", results, "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    const auto& log = v.at("workload").at("operation_log").as_array();
    ASSERT_EQ(log.size(), 8u);
    for (const auto& op : log) EXPECT_EQ(op.at("status").as_string(), "success") << boost::json::serialize(op);
}

TEST(ViTcp, AtomicsAreRefusedAtPostWithBadOpcode) {
    const std::string results = temp_path("vitcp-atomic.json");
    const sim_run r = run_sim({"--set", "rnic.framing=vitcp", "--set", "workload.type=atomic_bw", "--set",
                               "workload.iterations=5", "--results", results, "--log", "warn"});
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "failed");
    EXPECT_GE(u64(v.at("modules").at("a.rnic").at("rdma").at("bad_wqes")), 1u);
    EXPECT_EQ(u64(v.at("modules").at("b.rnic").at("rdma").at("atomics_executed")), 0u);
    EXPECT_EQ(u64(v.at("modules").at("b.rnic").at("framer").at("framing_errors")), 0u);
}

// Each reliability level against each error class (seed 003 §3.3, §3.6 option 2; docs/framings.md
// "Reliability levels and errors"): the probes check every descriptor's completion status on both
// ends; here the level's effect on the connection and the counters.
class ViTcpReliability : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(ViTcpReliability, EachLevelReactsToEachErrorClassAsItRequires) {
    const std::string probe = std::get<0>(GetParam());
    const std::string level = std::get<1>(GetParam());
    const std::string results = temp_path("vitcp-rel-" + probe + "-" + level + ".json");
    std::vector<std::string> args = {"--set",     "rnic.framing=vitcp",
                                     "--set",     "rnic.vitcp.crc=true",
                                     "--set",     "rnic.vitcp.reliability=" + level,
                                     "--set",     "workload.type=probe",
                                     "--set",     "workload.probe=" + probe,
                                     "--results", results,
                                     "--log",     "off"};
    if (probe == "vi_crc") {
        for (const char* kv : {"link.a_to_b.corrupt=0.05", "link.a_to_b.corrupt_fixes_checksum=true"}) {
            args.insert(args.end(), {"--set", kv});
        }
    }
    const sim_run r = run_sim(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const auto& b = v.at("modules").at("b.rnic");
    const auto& rdma = b.at("rdma").as_object();
    const std::string state = std::string(rdma.at("qps").as_array().at(0).at("state").as_string());
    if (level == "unreliable") {
        EXPECT_EQ(state, "rts");
        ASSERT_NE(rdma.if_contains("messages_in_error"), nullptr);
        EXPECT_EQ(u64(rdma.at("messages_in_error")),
                  probe == "vi_errors" ? 2u
                  : probe == "vi_descriptor"
                      ? 1u
                      : u64(v.at("modules").at("link").at("a_to_b").at("faults").at("corrupted")));
        EXPECT_EQ(u64(b.at("framer").at("crc_errors")), 0u);  // none ended the stream
        EXPECT_EQ(u64(rdma.at("llp_errors")), 0u);
    } else {
        EXPECT_EQ(state, "error");
        EXPECT_EQ(rdma.if_contains("messages_in_error"), nullptr);
        if (probe == "vi_crc") {
            EXPECT_EQ(u64(b.at("framer").at("crc_errors")), 1u);
            EXPECT_EQ(u64(rdma.at("llp_errors")), 1u);
        } else {
            EXPECT_EQ(u64(rdma.at("protection_errors")), 1u);
        }
        EXPECT_GT(u64(rdma.at("flushed")), 0u);
        // Reliable Reception: the server reports the error in a Message ACK (§3.2), which the client
        // counts (the probe checks the descriptor it names); Reliable Delivery has no such report.
        const auto& a_rdma = v.at("modules").at("a.rnic").at("rdma").as_object();
        const auto& a_framer = v.at("modules").at("a.rnic").at("framer").as_object();
        if (level == "reliable_reception") {
            ASSERT_NE(a_rdma.if_contains("remote_errors_reported"), nullptr);
            EXPECT_EQ(u64(a_rdma.at("remote_errors_reported")), 1u);
            EXPECT_EQ(u64(a_framer.at("rx_peer_error_reports")), 1u);
        } else {
            EXPECT_EQ(a_rdma.if_contains("remote_errors_reported"), nullptr);
            EXPECT_EQ(a_framer.if_contains("rx_peer_error_reports"), nullptr);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(LevelsAndErrors, ViTcpReliability,
                         ::testing::Combine(::testing::Values("vi_errors", "vi_descriptor", "vi_crc"),
                                            ::testing::Values("unreliable", "reliable_delivery", "reliable_reception")),
                         [](const ::testing::TestParamInfo<std::tuple<const char*, const char*>>& p) {
                             return std::string(std::get<0>(p.param)) + "_" + std::get<1>(p.param);
                         });

// The probes need VI/TCP and say so instead of running something else.
TEST(ViTcp, ViProbesRefuseAnotherFraming) {
    const sim_run r = run_sim({"--set", "workload.type=probe", "--set", "workload.probe=vi_errors", "--log", "warn"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("needs rnic.framing = vitcp"), std::string::npos) << r.output;
}

// vi_crc without the CRC option, or without corruption past the TCP checksum, has nothing to show:
// it says what it needs instead of reporting every level's error behaviour as broken.
TEST(ViTcp, CrcProbeSaysItNeedsTheCrcAndLinkCorruption) {
    const std::vector<std::vector<std::string>> incomplete = {
        {},
        {"--set", "rnic.vitcp.crc=true"},
        {"--set", "link.a_to_b.corrupt=0.05", "--set", "link.a_to_b.corrupt_fixes_checksum=true"},
        {"--set", "rnic.vitcp.crc=true", "--set", "link.a_to_b.corrupt=0.05"}};
    for (const auto& extra : incomplete) {
        std::vector<std::string> args = {"--set", "rnic.framing=vitcp",    "--set", "workload.type=probe",
                                         "--set", "workload.probe=vi_crc", "--log", "warn"};
        args.insert(args.end(), extra.begin(), extra.end());
        const sim_run r = run_sim(args);
        EXPECT_EQ(r.exit_code, 1) << r.output;
        EXPECT_NE(r.output.find("probe 'vi_crc' needs rnic.vitcp.crc = true and link corruption"), std::string::npos)
            << r.output;
    }
}

TEST(ViTcp, SettingsItCannotRunWithAreRefusedAtStart) {
    for (const char* kv : {"rnic.mpa.markers=true", "rnic.mpa.model=rtl", "rnic.rx_path=aligned",
                           "rnic.vitcp.reliability=best_effort"}) {
        const sim_run r = run_sim({"--set", "rnic.framing=vitcp", "--set", kv});
        EXPECT_EQ(r.exit_code, 2) << kv;
        EXPECT_TRUE(r.output.find("rnic.framing") != std::string::npos ||
                    r.output.find("rnic.rx_path") != std::string::npos ||
                    r.output.find("rnic.vitcp.reliability") != std::string::npos)
            << kv << ": " << r.output;
    }
}

}  // namespace
}  // namespace rnic::test

namespace rnic::test {
namespace {

// rnic.tcp.retransmit_from = host: the framing re-frames a retransmission with the segment and RDMA
// headers it recorded for that stream position (§2.2.2.2.5: "the same data as the original ...
// including all VI layer headers and trailers"), so the bytes equal the first transmission and
// every byte arrives, for Writes, Reads and Sends (retransmit_from_host_check.h says what is checked).
class ViTcpRetransmitFromHost : public ::testing::TestWithParam<const char*> {};

TEST_P(ViTcpRetransmitFromHost, ReframedRetransmissionsAreTheSameBytesAndEveryByteArrives) {
    check_retransmit_from_host("vitcp", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Workloads, ViTcpRetransmitFromHost, ::testing::Values("write_bw", "read_bw", "send_bw"));

}  // namespace
}  // namespace rnic::test
