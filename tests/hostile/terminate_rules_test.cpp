// Every Terminate of every protocol probe, read back from the capture with the project's own
// capture checker, against RFC 5040 §4.8, §7.1 and Figure 10 (and RFC 7306 §8.1): which headers a
// Terminate carries and with which header-control bits.
//  - LLP errors and RDMAP local catastrophic errors: no header, M = D = R = 0;
//  - every other error: M = D = 1, the DDP Segment Length and the DDP header of the terminated
//    segment, byte for byte as it arrived;
//  - R = 1 (with the 28-byte RDMA Read Request header, byte for byte) exactly when an RDMAP-layer
//    error terminates an RDMA Read Request (§7.1 rule 3); never for an Atomic Request (RFC 7306
//    §8.1 rule 2) or any other message.
// Error probes must draw exactly one Terminate, with the layer, type and code of
// docs/protocol-probes.md; feature probes none.
#include <gtest/gtest.h>

#include "proto/ddp_rdmap.h"
#include "proto/stream_check.h"
#include "run_helpers.h"

namespace rnic::test {
namespace {

namespace ddp = proto::ddp;
namespace check = proto::check;

struct probe_case {
    const char* name;
    int layer, etype, code;  // -1: no Terminate expected
};
void PrintTo(const probe_case& p, std::ostream* os) {
    *os << p.name;
}

// Every value of workload.probe (platform/scenario_schema.cpp).
const probe_case kProbes[] = {
    {"invalid_stag", 1, 1, 0x00},
    {"out_of_bounds", 1, 1, 0x01},
    {"pd_mismatch", 1, 1, 0x02},
    {"access_rights", 0, 1, 0x02},
    {"read_invalid_stag", 0, 1, 0x00},
    {"misaligned_atomic", 0, 2, 0x07},
    {"unexpected_opcode", 0, 2, 0x06},
    {"invalid_queue", 1, 2, 0x01},
    {"no_receive_buffer", 1, 2, 0x02},
    {"msn_out_of_range", 1, 2, 0x03},
    {"message_too_long", 1, 2, 0x05},
    {"too_many_reads", 1, 2, 0x02},
    {"invalidate_bad_stag", 0, 1, 0x09},
    {"local_invalidate", 1, 1, 0x00},
    {"send_invalidate", 1, 1, 0x00},
    {"write_imm", -1, 0, 0},
    {"zero_based", -1, 0, 0},
    {"masked_atomics", -1, 0, 0},
    {"qp_states", -1, 0, 0},
    {"response_order", -1, 0, 0},
    {"abort", -1, 0, 0},
    {"reject", -1, 0, 0},
    {"verbs_misuse", -1, 0, 0},
    {"peer_to_peer", -1, 0, 0},
    {"responder_waits", -1, 0, 0},
    {"listen_backlog", -1, 0, 0},
    {"mpa_timeout", -1, 0, 0},
    {"held_close", -1, 0, 0},
    // page_list ends with a Write past the region's end: DDP, tagged buffer, base or bounds.
    {"page_list", 1, 1, 0x01},
    {"device_reset", -1, 0, 0},
    {"resource_limits", -1, 0, 0},
    {"unlisten", -1, 0, 0},
    {"send_regions", -1, 0, 0},
    // The overrun QP's RDMAP Local Catastrophic Error: layer 0, type 0, code 0, no headers.
    {"cq_overrun", 0, 0, 0x00},
};

// The probes of the seeds' framings, which this capture checker (MPA's) cannot read: the VI/TCP
// probes (no Terminate exists there; tests/e2e/vitcp_test.cpp ViTcpReliability runs the first
// three at every reliability level, tests/e2e/raw_frames_probe_test.cpp the rest) and the RDMA/TCP
// ones (tests/e2e/raw_frames_probe_test.cpp).
const char* const kViProbes[] = {"vi_errors",           "vi_descriptor",    "vi_crc",
                                 "vi_ce_version",       "vi_ce_bad_option", "vi_ce_unknown_option",
                                 "vi_transmit_error",   "vi_read_window",   "rdmatcp_connection_id",
                                 "rdmatcp_unknown_type"};

class EveryProbe : public ::testing::TestWithParam<probe_case> {};

TEST_P(EveryProbe, TerminatesCarryTheHeadersRfc5040Requires) {
    const probe_case& pc = GetParam();
    const std::string pcap = temp_path(std::string("termrule-") + pc.name + ".pcap");
    std::vector<std::string> args = {"--set",  "workload.type=probe",
                                     "--set",  std::string("workload.probe=") + pc.name,
                                     "--set",  "rnic.rdma.raw_ulpdu_wqes=true",
                                     "--pcap", pcap,
                                     "--log",  "off"};
    if (std::string(pc.name) == "peer_to_peer") args.insert(args.end(), {"--set", "rnic.mpa.revision=2"});
    if (std::string(pc.name) == "send_regions") args.insert(args.end(), {"--set", "hosts.1.buffer_capacity=700KiB"});
    const sim_run r = run_sim(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    check::options o;
    o.keep_fpdu_log = true;
    std::string error;
    const auto rep = check::check_pcap_file(pcap, o, &error);
    ASSERT_TRUE(rep) << error;
    int terminates = 0;
    for (const check::connection_report& c : rep->connections) {
        for (int dir = 0; dir < 2; ++dir) {
            const check::direction_report& d = c.directions[static_cast<std::size_t>(dir)];
            const check::direction_report& other = c.directions[static_cast<std::size_t>(1 - dir)];
            for (const check::fpdu_info& f : d.fpdu_log) {
                if (!f.header_ok || f.header.tagged || f.header.opcode != ddp::opcode::terminate) continue;
                ++terminates;
                SCOPED_TRACE("Terminate in frame " + std::to_string(f.frame));
                ASSERT_GE(f.head.size(), ddp::kUntaggedHeaderSize);
                EXPECT_EQ(f.header.queue, ddp::kQueueTerminate);
                const auto t = ddp::decode_terminate(f.head.data() + ddp::kUntaggedHeaderSize,
                                                     f.head.size() - ddp::kUntaggedHeaderSize, &error);
                ASSERT_TRUE(t) << error;
                const int layer = static_cast<int>(t->layer);
                if (pc.layer >= 0) {
                    EXPECT_EQ(layer, pc.layer);
                    EXPECT_EQ(t->etype, pc.etype);
                    EXPECT_EQ(t->code, pc.code);
                }
                // The Terminate's ULPDU is exactly its parts: header, control, and what HdrCt announces.
                std::size_t want_len = ddp::kUntaggedHeaderSize + ddp::kTerminateControlSize;
                const bool no_headers =
                    t->layer == ddp::term_layer::llp ||
                    (t->layer == ddp::term_layer::rdma && t->etype == ddp::term::kRdmaLocalCatastrophic);
                if (no_headers) {
                    EXPECT_FALSE(t->m || t->d || t->r) << "Figure 10: no header for this error type";
                    EXPECT_EQ(f.ulpdu_length, want_len);
                    continue;
                }
                EXPECT_TRUE(t->m);
                ASSERT_TRUE(t->d) << "Figure 10: the DDP header of the terminated segment is included";
                // The terminated segment: the last FPDU the other side sent with exactly this header.
                const check::fpdu_info* victim = nullptr;
                for (const check::fpdu_info& g : other.fpdu_log) {
                    if (g.head.size() >= t->ddp_header.size() &&
                        std::equal(t->ddp_header.begin(), t->ddp_header.end(), g.head.begin()))
                        victim = &g;
                }
                ASSERT_NE(victim, nullptr) << "the terminated DDP header matches no FPDU of the peer";
                EXPECT_EQ(t->ddp_segment_length, victim->ulpdu_length);
                const bool read_request =
                    victim->header_ok && !victim->header.tagged && victim->header.opcode == ddp::opcode::read_request;
                const bool want_r = t->layer == ddp::term_layer::rdma && read_request;
                EXPECT_EQ(t->r, want_r)
                    << "§7.1: the RDMA header is included for an RDMAP error on a Read Request only";
                want_len += 2 + t->ddp_header.size();
                if (want_r) {
                    ASSERT_EQ(t->rdma_header.size(), ddp::kReadRequestSize);
                    ASSERT_GE(victim->head.size(), ddp::kUntaggedHeaderSize + ddp::kReadRequestSize);
                    EXPECT_TRUE(std::equal(t->rdma_header.begin(), t->rdma_header.end(),
                                           victim->head.begin() + ddp::kUntaggedHeaderSize))
                        << "the terminated Read Request header is copied byte for byte";
                    want_len += ddp::kReadRequestSize;
                }
                EXPECT_EQ(f.ulpdu_length, want_len);
            }
        }
    }
    EXPECT_EQ(terminates, pc.layer >= 0 ? 1 : 0);
}

INSTANTIATE_TEST_SUITE_P(Rfc5040, EveryProbe, ::testing::ValuesIn(kProbes),
                         [](const ::testing::TestParamInfo<probe_case>& i) { return std::string(i.param.name); });

// The list above is every probe the scenario schema offers.
TEST(EveryProbeList, MatchesTheSchema) {
    const sim_run r = run_sim({"--help-scenario"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::size_t at = r.output.find("workload.probe");
    ASSERT_NE(at, std::string::npos);
    const std::string line = r.output.substr(at, r.output.find('\n', r.output.find("resource_limits", at)) - at);
    std::size_t listed = 0;
    for (const probe_case& p : kProbes) {
        EXPECT_NE(line.find(p.name), std::string::npos) << p.name;
        ++listed;
    }
    for (const char* name : kViProbes) {
        EXPECT_NE(line.find(name), std::string::npos) << name;
        ++listed;
    }
    std::size_t commas = 0;
    for (char ch : line.substr(line.find("invalid_stag"))) commas += ch == ',';
    EXPECT_EQ(commas + 1, listed) << line;
}

}  // namespace
}  // namespace rnic::test
