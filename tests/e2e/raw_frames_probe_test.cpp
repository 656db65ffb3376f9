// The probes whose client builds the seeds' segments itself (platform/workloads/probe_raw_frames.cpp,
// docs/protocol-probes.md "Segments the peer builds"): the probe checks every descriptor and the
// server's reaction; here the counters and the wire say the same from outside the probe.
#include <gtest/gtest.h>

#include <optional>

#include "proto/net.h"
#include "proto/pcap.h"
#include "proto/seeds/vitcp.h"
#include "run_helpers.h"

namespace rnic::test {
namespace {

namespace vt = proto::vitcp;

std::uint64_t u64(const boost::json::value& v) {
    return v.to_number<std::uint64_t>();
}

const boost::json::object& rdma_of(const boost::json::value& v, const char* host) {
    return v.at("modules").at(host).at("rdma").as_object();
}
const boost::json::object& framer_of(const boost::json::value& v, const char* host) {
    return v.at("modules").at(host).at("framer").as_object();
}
std::string qp_state(const boost::json::value& v, const char* host) {
    return std::string(rdma_of(v, host).at("qps").as_array().at(0).at("state").as_string());
}

// The first VI segment the server (10.0.0.2) sent: its answer to the ConnectRequest.
std::optional<vt::segment> server_answer(const std::string& pcap) {
    std::string error;
    const auto records = proto::read_pcap(pcap, &error);
    if (!records) return std::nullopt;
    for (const proto::pcap_record& r : *records) {
        const auto f = proto::net::parse_tcp_frame(r.data.data(), r.data.size(), &error);
        if (!f || f->payload_len == 0 || f->ip.src != 0x0a000002) continue;
        return vt::decode(r.data.data() + f->payload_offset, f->payload_len, false, &error);
    }
    return std::nullopt;
}

// Seed 003 §3.2, §3.3: an invalid ConnectRequest is refused with a ConnectReject naming why (IS
// Error Code 5 an unsupported version, 6 a malformed option; docs/framings.md), then TCP closes;
// an unknown option is ignored.
class ViTcpConnectRequestProbe : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(ViTcpConnectRequestProbe, TheServerAnswersAsTheSeedRequires) {
    const std::string probe = std::get<0>(GetParam());
    const int reason = std::get<1>(GetParam());
    const std::string pcap = temp_path("raw-" + probe + ".pcap");
    const std::string results = temp_path("raw-" + probe + ".json");
    const sim_run r = run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.raw_connect_requests=true", "--set",
                               "workload.type=probe", "--set", "workload.probe=" + probe, "--pcap", pcap, "--results",
                               results, "--log", "warn"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const auto answer = server_answer(pcap);
    ASSERT_TRUE(answer);
    if (reason == 0) {
        EXPECT_EQ(answer->header.type, vt::segment_type::connect_accept);
        EXPECT_EQ(qp_state(v, "b.rnic"), "rts");
        return;
    }
    EXPECT_EQ(answer->header.type, vt::segment_type::connect_reject);
    EXPECT_EQ(answer->header.remote_error.is_error_code, reason);
    EXPECT_NE(r.output.find("ConnectReject sent"), std::string::npos) << r.output;
    // No data segment either way after the refusal (§4.3: close TCP).
    EXPECT_EQ(u64(framer_of(v, "a.rnic").at("tx_fpdus")), 0u);
    EXPECT_EQ(u64(framer_of(v, "b.rnic").at("tx_fpdus")), 0u);
}

INSTANTIATE_TEST_SUITE_P(Probes, ViTcpConnectRequestProbe,
                         ::testing::Values(std::make_tuple("vi_ce_version", 5), std::make_tuple("vi_ce_bad_option", 6),
                                           std::make_tuple("vi_ce_unknown_option", 0)),
                         [](const ::testing::TestParamInfo<std::tuple<const char*, int>>& p) {
                             return std::string(std::get<0>(p.param));
                         });

TEST(ViTcpConnectRequestProbe, WithoutTheTestModeTheDeviceRefusesToSendIt) {
    const sim_run r = run_sim({"--set", "rnic.framing=vitcp", "--set", "workload.type=probe", "--set",
                               "workload.probe=vi_ce_version", "--log", "warn"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("rnic.vitcp.raw_connect_requests"), std::string::npos) << r.output;
}

// The Transmit Error bit (seed 003 §3.2) on the wire, in a segment padded as §2.2.2.2.5 says: the
// message is in error at every level; only Unreliable Delivery goes on.
class ViTcpTransmitErrorProbe : public ::testing::TestWithParam<const char*> {};

TEST_P(ViTcpTransmitErrorProbe, TheMessageIsInErrorAndTheLevelDecidesTheConnection) {
    const std::string level = GetParam();
    const std::string results = temp_path("raw-vi-tre-" + level + ".json");
    const sim_run r = run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.crc=true", "--set",
                               "rnic.vitcp.reliability=" + level, "--set", "rnic.rdma.raw_ulpdu_wqes=true", "--set",
                               "workload.type=probe", "--set", "workload.probe=vi_transmit_error", "--results", results,
                               "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const auto& b = rdma_of(v, "b.rnic");
    if (level == "unreliable") {
        EXPECT_EQ(qp_state(v, "b.rnic"), "rts");
        ASSERT_NE(b.if_contains("messages_in_error"), nullptr);
        EXPECT_EQ(u64(b.at("messages_in_error")), 1u);
        EXPECT_EQ(u64(b.at("recv_completions")), 3u);
        EXPECT_EQ(u64(framer_of(v, "b.rnic").at("framing_errors")), 0u);
    } else {
        EXPECT_EQ(qp_state(v, "b.rnic"), "error");
        EXPECT_EQ(u64(framer_of(v, "b.rnic").at("framing_errors")), 1u);
        EXPECT_EQ(u64(b.at("recv_completions")), 1u);
        // Reliable Reception reports it back (§3.2 Message ACK, Unrecoverable Transport Error).
        const auto* reports = framer_of(v, "a.rnic").if_contains("rx_peer_error_reports");
        if (level == "reliable_reception") {
            ASSERT_NE(reports, nullptr);
            EXPECT_EQ(u64(*reports), 1u);
        } else {
            EXPECT_EQ(reports, nullptr);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Levels, ViTcpTransmitErrorProbe,
                         ::testing::Values("unreliable", "reliable_delivery", "reliable_reception"));

// §2.2.2.2.6: the negotiated RDMA Read Window (2 here) bounds the Read Requests a peer may have
// outstanding; a third in the same TCP segment closes the connection at every level, before any
// Read Response is sent.
class ViTcpReadWindowProbe : public ::testing::TestWithParam<const char*> {};

TEST_P(ViTcpReadWindowProbe, OneReadBeyondTheWindowClosesTheConnection) {
    const std::string level = GetParam();
    const std::string results = temp_path("raw-vi-window-" + level + ".json");
    const sim_run r = run_sim({"--set", "rnic.framing=vitcp", "--set", "rnic.vitcp.rdma_read_window=2", "--set",
                               "rnic.vitcp.reliability=" + level, "--set", "rnic.rdma.raw_ulpdu_wqes=true", "--set",
                               "workload.type=probe", "--set", "workload.probe=vi_read_window", "--results", results,
                               "--log", "warn"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    EXPECT_NE(r.output.find("exceeds the negotiated RDMA Read Window of 2 outstanding RDMA Reads"), std::string::npos)
        << r.output;
    EXPECT_EQ(qp_state(v, "b.rnic"), "error");
    EXPECT_EQ(u64(framer_of(v, "b.rnic").at("framing_errors")), 1u);
    EXPECT_EQ(u64(rdma_of(v, "b.rnic").at("read_responses_sent")), 0u);
}

INSTANTIATE_TEST_SUITE_P(Levels, ViTcpReadWindowProbe,
                         ::testing::Values("unreliable", "reliable_delivery", "reliable_reception"));

// Seed 000 §3.4: the Connection ID is the connection's in every segment; the message type inside a
// Send segment must be one RDMAP has. The probe checks the Terminates; here the layer that found it.
TEST(RdmaTcpRawProbe, AnotherConnectionIdIsAFramingErrorAndNothingOfItIsPlaced) {
    const std::string results = temp_path("raw-rdmatcp-id.json");
    const sim_run r = run_sim({"--set", "rnic.framing=rdmatcp", "--set", "rnic.rdma.raw_ulpdu_wqes=true", "--set",
                               "workload.type=probe", "--set", "workload.probe=rdmatcp_connection_id", "--results",
                               results, "--log", "warn"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    EXPECT_NE(r.output.find("connection_id_mismatch"), std::string::npos) << r.output;
    EXPECT_EQ(u64(framer_of(v, "b.rnic").at("framing_errors")), 1u);
    EXPECT_EQ(u64(rdma_of(v, "b.rnic").at("placed_bytes")), 4096u) << "the baseline only";
    EXPECT_EQ(u64(rdma_of(v, "b.rnic").at("terminates_sent")), 1u);
    EXPECT_EQ(u64(rdma_of(v, "a.rnic").at("terminates_received")), 1u);
}

TEST(RdmaTcpRawProbe, AMessageTypeRdmapDoesNotKnowIsAnUnexpectedOpcode) {
    const std::string results = temp_path("raw-rdmatcp-type.json");
    const sim_run r = run_sim({"--set", "rnic.framing=rdmatcp", "--set", "rnic.rdma.raw_ulpdu_wqes=true", "--set",
                               "workload.type=probe", "--set", "workload.probe=rdmatcp_unknown_type", "--results",
                               results, "--log", "off"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    // Every segment passed the seed's checks; the RDMAP layer refused the message.
    EXPECT_EQ(u64(framer_of(v, "b.rnic").at("framing_errors")), 0u);
    EXPECT_EQ(u64(framer_of(v, "b.rnic").at("crc_errors")), 0u);
    EXPECT_EQ(u64(rdma_of(v, "b.rnic").at("terminates_sent")), 1u);
    EXPECT_EQ(u64(rdma_of(v, "a.rnic").at("terminates_received")), 1u);
}

TEST(RawFramesProbe, EachNeedsItsFramingAndTheRawTestMode) {
    for (const char* probe : {"rdmatcp_connection_id", "vi_transmit_error"}) {
        const sim_run r =
            run_sim({"--set", "workload.type=probe", "--set", std::string("workload.probe=") + probe, "--log", "warn"});
        EXPECT_NE(r.exit_code, 0) << probe;
        EXPECT_NE(r.output.find("needs rnic.framing"), std::string::npos) << r.output;
    }
    const sim_run r = run_sim({"--set", "rnic.framing=rdmatcp", "--set", "workload.type=probe", "--set",
                               "workload.probe=rdmatcp_unknown_type", "--log", "warn"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("rnic.rdma.raw_ulpdu_wqes"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace rnic::test
