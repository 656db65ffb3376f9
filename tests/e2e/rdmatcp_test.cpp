// RDMA/TCP framing (rnic.framing = rdmatcp, seed 000) end to end between two NICs through the
// driver: the wire carries the seed's segments (§3) with good CRCs and one Connection ID in both
// directions; Writes, Reads, Sends and a latency workload arrive intact under loss, reordering and
// re-segmentation, on the aligned receive path (§5: placed ahead of a hole when the candidate
// passes) and with buffering; a corrupted segment is caught by the CRC-32 and answered with a
// Terminate; the same seed gives the same results and pcap; what the seed cannot carry (atomics)
// is refused with a named status, and settings it cannot run with are refused at start.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "proto/seeds/rdmatcp.h"
#include "retransmit_from_host_check.h"
#include "run_helpers.h"

namespace rnic::test {
namespace {

namespace rt = proto::rdmatcp;

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

TEST(RdmaTcpFraming, TheWireCarriesSeedSegmentsWithGoodCrcsAndOneConnectionId) {
    const std::string pcap = temp_path("rdmatcp-wire.pcap");
    const std::string results = temp_path("rdmatcp-wire.json");
    const sim_run r = run_sim({"--set", "rnic.framing=rdmatcp", "--set", "workload.type=read_bw", "--set",
                               "workload.sizes=[100,3000]", "--set", "workload.iterations=4", "--pcap", pcap,
                               "--results", results, "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(read_json(results).at("integrity").at("ok").as_bool());
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    std::set<std::uint64_t> ids;
    std::size_t requests = 0, responses = 0, response_bytes = 0;
    for (const char* src : {"10.0.0.1", "10.0.0.2"}) {
        // Data segments only: the MPA Request/Reply (20-odd bytes) are shorter.
        std::istringstream payloads(shell(std::string("tshark -r ") + pcap + " -Y 'ip.src == " + src +
                                          " && tcp.len > 40' -T fields -e tcp.payload 2>/dev/null"));
        for (std::string hex; std::getline(payloads, hex);) {
            if (hex.empty()) continue;
            const std::vector<std::uint8_t> seg = from_hex(hex);
            std::size_t at = 0;
            while (at < seg.size()) {
                std::string error;
                const auto v = rt::parse(seg.data() + at, seg.size() - at, &error);  // CRC, fields
                ASSERT_TRUE(v) << src << ": " << error;
                ASSERT_EQ(at % 4, 0u);  // §5: every segment starts 4-aligned
                ids.insert(v->header.connection_id);
                if (v->header.type == rt::message_type::read_request) ++requests;
                if (v->header.type == rt::message_type::read_response) {
                    ++responses;
                    response_bytes += v->payload_len;
                }
                at += v->wire_length;
            }
        }
    }
    EXPECT_EQ(ids.size(), 1u);  // §3.4: one value, both directions
    EXPECT_EQ(requests, 8u);
    EXPECT_GE(responses, 8u);
    EXPECT_EQ(response_bytes, 4u * 100 + 4u * 3000);
}

struct workload_case {
    const char* type;
    const char* op;        // operations.<op>.count
    const char* receiver;  // the host whose framer receives the bulk data
    const char* loss_dir;  // the link direction carrying it
};

const workload_case kWorkloads[] = {
    {"write_bw", "rdma_write", "b.rnic", "a_to_b"},
    {"read_bw", "rdma_read", "a.rnic", "b_to_a"},
    {"send_bw", "send", "b.rnic", "a_to_b"},
    {"write_lat", "rdma_write", "b.rnic", "a_to_b"},
};

class RdmaTcpUnderLoss : public ::testing::TestWithParam<std::tuple<int, const char*>> {};

TEST_P(RdmaTcpUnderLoss, EveryByteArrives) {
    const workload_case& w = kWorkloads[std::get<0>(GetParam())];
    const std::string path = std::get<1>(GetParam());
    const std::string results = temp_path(std::string("rdmatcp-") + w.type + "-" + path + ".json");
    const bool lat = std::string(w.type).find("_lat") != std::string::npos;
    const sim_run r =
        run_sim({"--set", "rnic.framing=rdmatcp", "--set", std::string("workload.type=") + w.type, "--set",
                 "rnic.rx_path=" + path, "--set", "link.a_to_b.loss=0.01", "--set", "link.b_to_a.loss=0.01", "--set",
                 lat ? "workload.sizes=[64,4096]" : "workload.sizes=[4096,65536]", "--set", "workload.iterations=150",
                 "--results", results, "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    EXPECT_GT(u64(v.at("integrity").at("bytes_checked")), 0u);
    EXPECT_EQ(u64(v.at("operations").at(w.op).at("count")), 300u);
    EXPECT_GT(u64(v.at("modules").at("link").at(w.loss_dir).at("faults").at("dropped_random")), 0u);
    for (const char* host : {"a.rnic", "b.rnic"}) {
        const auto& framer = v.at("modules").at(host).at("framer");
        EXPECT_EQ(u64(framer.at("crc_errors")), 0u) << host;
        EXPECT_EQ(u64(framer.at("framing_errors")), 0u) << host;
    }
    const auto& framer = v.at("modules").at(w.receiver).at("framer");
    const bool tagged = std::string(w.op) != "send";
    if (path == "aligned" && tagged && !lat) {
        // Segments ahead of the hole pass §5's checks; none is a false candidate (one RDMA segment
        // per TCP segment). The RDMA engine places Writes then and declines Read Responses out of
        // order, as it does with MPA and IFT.
        EXPECT_GT(u64(framer.at("ooo_fpdus_found")), 0u);
        EXPECT_EQ(u64(framer.at("ooo_false_candidates")), 0u);
        EXPECT_EQ(u64(framer.at("ooo_fpdus_placed")) + u64(framer.at("ooo_refused_by_rdma")),
                  u64(framer.at("ooo_fpdus_found")));
        if (std::string(w.op) == "rdma_write") {
            EXPECT_GT(u64(framer.at("ooo_fpdus_placed")), 0u);
        }
    }
    if (path == "buffering" || !tagged) {
        // Nothing placed out of order: buffering does not try; a Send's order field is 0 (§3.4).
        EXPECT_EQ(u64(framer.at("ooo_fpdus_placed")), 0u);
    }
    if (!lat) {
        EXPECT_GT(u64(v.at("modules").at(w.receiver).at("toe").at("rx_out_of_order_segments")), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Workloads, RdmaTcpUnderLoss,
                         ::testing::Combine(::testing::Range(0, 4), ::testing::Values("aligned", "buffering")),
                         [](const ::testing::TestParamInfo<std::tuple<int, const char*>>& p) {
                             return std::string(kWorkloads[std::get<0>(p.param)].type) + "_" + std::get<1>(p.param);
                         });

// Reordering, duplication and re-segmentation by a middlebox: a TCP segment that no longer starts
// with an RDMA segment is a false candidate (§5) and goes to buffering; nothing is misplaced.
class RdmaTcpFaults : public ::testing::TestWithParam<const char*> {};

TEST_P(RdmaTcpFaults, AlignedPathKeepsEveryByteIntact) {
    const std::string fault = GetParam();
    const std::string results = temp_path("rdmatcp-fault-" + fault + ".json");
    std::vector<std::string> args = {"--set",     "rnic.framing=rdmatcp",
                                     "--set",     "rnic.rx_path=aligned",
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
    if (fault == "resegment") {
        // Re-cut segments after a hole start inside an RDMA segment: rejected, buffered (§5).
        EXPECT_GT(u64(b.at("framer").at("ooo_false_candidates")), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Faults, RdmaTcpFaults, ::testing::Values("reorder", "resegment", "duplicate"));

TEST(RdmaTcpFraming, TheSameSeedGivesTheSameResultsAndPcap) {
    expect_same_results_and_pcap("rdmatcp-det", {"--set", "rnic.framing=rdmatcp", "--set", "rnic.rx_path=aligned",
                                                 "--set", "workload.type=read_bw", "--set", "link.b_to_a.loss=0.01",
                                                 "--set", "workload.sizes=[4096,30000]", "--set",
                                                 "workload.iterations=60", "--set", "simulation.seed=7"});
}

TEST(RdmaTcpFraming, CorruptionPastTheChecksumsIsCaughtByTheCrc) {
    const std::string results = temp_path("rdmatcp-corrupt.json");
    const sim_run r = run_sim({"--set", "rnic.framing=rdmatcp", "--set", "link.a_to_b.corrupt=0.01", "--set",
                               "link.a_to_b.corrupt_fixes_checksum=true", "--set", "workload.sizes=[4096]", "--set",
                               "workload.iterations=500", "--results", results, "--log", "off"});
    EXPECT_NE(r.exit_code, 0);
    const boost::json::value v = read_json(results);
    const auto& b = v.at("modules").at("b.rnic");
    EXPECT_GE(u64(b.at("framer").at("crc_errors")) + u64(b.at("framer").at("framing_errors")), 1u);
    EXPECT_EQ(u64(b.at("rdma").at("terminates_sent")), 1u);
    EXPECT_EQ(u64(b.at("rdma").at("llp_errors")), 1u);
}

// Writes, Writes with Immediate (RDMA_Write + a Send carrying the RFC 7306 Immediate Data
// message), Reads and Sends of many sizes on two QPs (two TCP connections) under
// loss on the aligned path: every operation succeeds and every byte is checked.
TEST(RdmaTcpFraming, EveryOperationItCanCarryRunsOnTwoQps) {
    const std::string trace = temp_path("rdmatcp-ops.csv");
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
    const std::string results = temp_path("rdmatcp-ops.json");
    const sim_run r =
        run_sim({"--set", "rnic.framing=rdmatcp", "--set", "workload.type=trace", "--set", "workload.trace=" + trace,
                 "--set", "rnic.rx_path=aligned", "--set", "link.a_to_b.loss=0.02", "--set", "link.b_to_a.loss=0.02",
                 "--results", results, "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    EXPECT_TRUE(v.at("integrity").at("ok").as_bool());
    const auto& log = v.at("workload").at("operation_log").as_array();
    ASSERT_EQ(log.size(), 8u);
    for (const auto& op : log) EXPECT_EQ(op.at("status").as_string(), "success") << boost::json::serialize(op);
}

// RFC 7306 atomics: none of the seed's four types carries them (§3.4 Type). The work request
// completes with bad_opcode at the requester; nothing reaches the wire or the responder.
TEST(RdmaTcpFraming, AtomicsAreRefusedAtPostWithBadOpcode) {
    const std::string results = temp_path("rdmatcp-atomic.json");
    const sim_run r = run_sim({"--set", "rnic.framing=rdmatcp", "--set", "workload.type=atomic_bw", "--set",
                               "workload.iterations=5", "--results", results, "--log", "warn"});
    EXPECT_NE(r.output.find("the framing (RDMA/TCP, seed 000) has no message type for atomics"), std::string::npos)
        << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "failed");
    EXPECT_GE(u64(v.at("modules").at("a.rnic").at("rdma").at("bad_wqes")), 1u);
    EXPECT_EQ(u64(v.at("modules").at("b.rnic").at("rdma").at("atomics_executed")), 0u);
    EXPECT_EQ(u64(v.at("modules").at("b.rnic").at("framer").at("framing_errors")), 0u);
}

TEST(RdmaTcpFraming, SettingsItCannotRunWithAreRefusedAtStart) {
    for (const char* kv : {"rnic.mpa.markers=true", "rnic.mpa.model=rtl"}) {
        const sim_run r = run_sim({"--set", "rnic.framing=rdmatcp", "--set", kv});
        EXPECT_EQ(r.exit_code, 2) << kv;
        EXPECT_NE(r.output.find("rnic.framing"), std::string::npos) << kv << ": " << r.output;
    }
}

}  // namespace
}  // namespace rnic::test

namespace rnic::test {
namespace {

// The errors seed 000 names a receiver's checks for (§3.4: an RDMA_Write or RDMA_Read_Request
// naming a buffer it may not use, a Send with no or too small a buffer, Read Requests beyond the
// responder's limit), provoked by the protocol probes over RDMA/TCP: the peer's reaction is the
// RDMAP Terminate (carried as a Send, docs/framings.md) with the code the probe expects, both QPs in
// Error with error completions naming it, the target's memory unchanged (the probe checks those).
class RdmaTcpErrorProbe : public ::testing::TestWithParam<const char*> {};

TEST_P(RdmaTcpErrorProbe, PeerTerminatesAndBothQpsFail) {
    const std::string probe = GetParam();
    const std::string results = temp_path("rdmatcp-probe-" + probe + ".json");
    const sim_run r = run_sim({"--set", "rnic.framing=rdmatcp", "--set", "workload.type=probe", "--set",
                               "workload.probe=" + probe, "--results", results, "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const auto& a = v.at("modules").at("a.rnic");
    const auto& b = v.at("modules").at("b.rnic");
    EXPECT_EQ(b.at("rdma").at("terminates_sent").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(a.at("rdma").at("terminates_received").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(b.at("rdma").at("qps").as_array().at(0).at("state").as_string(), "error");
    EXPECT_EQ(a.at("rdma").at("qps").as_array().at(0).at("state").as_string(), "error");
    // Not a framing error: every segment passed the seed's checks, the RDMAP layer refused it.
    EXPECT_EQ(b.at("framer").at("crc_errors").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(b.at("framer").at("framing_errors").to_number<std::uint64_t>(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Errors, RdmaTcpErrorProbe,
                         ::testing::Values("invalid_stag", "out_of_bounds", "pd_mismatch", "access_rights",
                                           "read_invalid_stag", "too_many_reads", "no_receive_buffer",
                                           "message_too_long"));

}  // namespace
}  // namespace rnic::test

namespace rnic::test {
namespace {

// rnic.tcp.retransmit_from = host: the framing re-frames a retransmission with the segment headers
// it recorded for that stream position (Connection ID and message number, seed 000 §3.4), so the
// bytes equal the first transmission and every byte arrives, for Writes, Reads and Sends
// (retransmit_from_host_check.h says what is checked).
class RdmaTcpRetransmitFromHost : public ::testing::TestWithParam<const char*> {};

TEST_P(RdmaTcpRetransmitFromHost, ReframedRetransmissionsAreTheSameBytesAndEveryByteArrives) {
    check_retransmit_from_host("rdmatcp", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Workloads, RdmaTcpRetransmitFromHost, ::testing::Values("write_bw", "read_bw", "send_bw"));

}  // namespace
}  // namespace rnic::test
