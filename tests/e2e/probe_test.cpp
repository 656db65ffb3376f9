// Protocol probes end to end (workload.type = probe): each error class of RFC 5040 §7, RFC 5041 §7
// and RFC 7306 §8 that a peer can cause, judged by the probe on both hosts and decoded here from
// the wire by tshark; and the feature probes (Immediate Data ordering, zero-based offsets, masked
// atomics, response order, QP states).
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "run_helpers.h"

namespace rnic::test {
namespace {

sim_run run_probe(const std::string& probe, const std::string& pcap, const std::string& results,
                  std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--set",     "workload.type=probe",
                                     "--set",     "workload.probe=" + probe,
                                     "--set",     "rnic.rdma.raw_ulpdu_wqes=true",
                                     "--pcap",    pcap,
                                     "--results", results,
                                     "--log",     "off"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_sim(args);
}

struct error_case {
    const char* probe;
    // Terminate control fields as tshark prints them: layer, error type, error code.
    const char* layer;
    const char* etype;
    const char* code;
    std::size_t terminated_header;  // bytes of the terminated DDP header (14 tagged, 18 untagged) and RDMA header (28)
};

// gtest prints the case by its probe name.
void PrintTo(const error_case& e, std::ostream* os) {
    *os << e.probe;
}

// The table is this test's own reading of the RFCs (independent of the probe's).
const error_case kErrors[] = {
    {"invalid_stag", "0x01", "0x01", "0x00", 14},            // DDP, tagged buffer, invalid STag
    {"out_of_bounds", "0x01", "0x01", "0x01", 14},           // DDP, tagged buffer, base or bounds
    {"pd_mismatch", "0x01", "0x01", "0x02", 14},             // DDP, tagged buffer, STag not associated
    {"access_rights", "0x00", "0x01", "0x02", 14},           // RDMAP, remote protection, access rights
    {"read_invalid_stag", "0x00", "0x01", "0x00", 18 + 28},  // RDMAP, remote protection, invalid STag; the Read
                                                             // Request header too (RFC 5040 §7.1 rule 3, Figure 10)
    {"misaligned_atomic", "0x00", "0x02", "0x07", 18},       // RDMAP, remote operation, catastrophic (stream)
    {"unexpected_opcode", "0x00", "0x02", "0x06", 18},       // RDMAP, remote operation, unexpected opcode
    {"invalid_queue", "0x01", "0x02", "0x01", 18},           // DDP, untagged buffer, invalid QN
    {"no_receive_buffer", "0x01", "0x02", "0x02", 18},       // DDP, untagged buffer, no buffer available
    {"msn_out_of_range", "0x01", "0x02", "0x03", 18},        // DDP, untagged buffer, MSN range not valid
    {"message_too_long", "0x01", "0x02", "0x05", 18},        // DDP, untagged buffer, message too long
    {"too_many_reads", "0x01", "0x02", "0x02", 18},          // DDP, untagged buffer (queue 1), no buffer
    {"invalidate_bad_stag", "0x00", "0x01", "0x09", 18},     // RDMAP, remote protection, cannot invalidate
    {"local_invalidate", "0x01", "0x01", "0x00", 14},        // the invalidated STag is invalid to the peer
    {"send_invalidate", "0x01", "0x01", "0x00", 14},
};

class ErrorProbe : public ::testing::TestWithParam<error_case> {};

TEST_P(ErrorProbe, TargetTerminatesAsTheRfcsRequireAndBothQpsFail) {
    const error_case& e = GetParam();
    const std::string pcap = temp_path(std::string("probe-") + e.probe + ".pcap");
    const std::string results = temp_path(std::string("probe-") + e.probe + ".json");
    const sim_run r = run_probe(e.probe, pcap, results);
    // The probe itself checks: the server's QP error completion names the Terminate it sent, the
    // client's names the one it received, both QPs are in Error, the server's memory is unchanged.
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    const auto& a = v.at("modules").at("a.rnic").at("rdma").as_object();
    const auto& b = v.at("modules").at("b.rnic").at("rdma").as_object();
    EXPECT_EQ(b.at("terminates_sent").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(a.at("terminates_received").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(a.at("terminates_sent").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(b.at("qps").as_array().at(0).at("state").as_string(), "error");
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    // Exactly one Terminate on the wire, from host b, with the RFC's layer, type and code; the
    // M and D bits set and the offending DDP header carried back.
    const std::vector<std::string> terms = lines(tshark(
        pcap, "iwarp_rdma.opcode == 7",
        "-e ip.src -e iwarp_rdma.term_layer -e iwarp_rdma.term_etype_rdma -e iwarp_rdma.term_etype_ddp "
        "-e iwarp_rdma.term_errcode_rdma -e iwarp_rdma.term_errcode_ddp_tagged -e iwarp_rdma.term_errcode_ddp_untagged "
        "-e iwarp_rdma.term_hdrct_m -e iwarp_rdma.hdrct_d -e iwarp_rdma.term_ddp_h -e iwarp_mpa.ulpdulength"));
    ASSERT_EQ(terms.size(), 1u) << tshark(pcap, "iwarp_rdma.opcode == 7", "-e frame.number");
    std::vector<std::string> field;
    std::istringstream f(terms[0]);
    for (std::string x; std::getline(f, x, '\t');) field.push_back(x);
    field.resize(11);
    // tshark puts the type and the code in the field of the layer that reported them.
    const std::string src = field[0], layer = field[1];
    const std::string etype = field[2] + field[3], code = field[4] + field[5] + field[6];
    const std::string m = field[7], d = field[8], header = field[9], ulpdu_length = field[10];
    EXPECT_EQ(src, "10.0.0.2");
    EXPECT_EQ(layer, e.layer);
    EXPECT_EQ(etype, e.etype);
    EXPECT_EQ(code, e.code);
    EXPECT_EQ(m, "1");
    EXPECT_EQ(d, "1");
    // The Terminate's ULPDU: its untagged DDP header (18), the control word (4), the DDP Segment
    // Length (2) and the whole terminated header. (tshark 4.0 shows only 14 bytes of an untagged
    // terminated header when the terminated segment had no payload: docs/wireshark-notes.md.)
    // (The frame may carry other FPDUs too: their lengths are listed with commas.)
    EXPECT_NE(("," + ulpdu_length + ",").find("," + std::to_string(18 + 4 + 2 + e.terminated_header) + ","),
              std::string::npos)
        << ulpdu_length;
    if (std::string(e.probe) == "msn_out_of_range") {
        EXPECT_EQ(header.substr(2 * 10, 8), "00000005") << "the terminated header is the offending one: " << header;
    }
    // The stream then closes from both sides: nothing is left half-open.
    EXPECT_EQ(lines(tshark(pcap, "tcp.flags.fin == 1", "-e ip.src")).size(), 2u);
    EXPECT_TRUE(lines(tshark(pcap, "tcp.flags.reset == 1", "-e ip.src")).empty());
    // rnic-pcap-check agrees: the FPDUs and CRCs are sound; a header no correct sender can produce
    // (sent raw on purpose) is flagged as the one error.
    const std::string check = pcap_check(pcap);
    const std::string p = e.probe;
    if (p == "unexpected_opcode" || p == "invalid_queue" || p == "msn_out_of_range") {
        EXPECT_NE(check.find("0 bad CRC, 0 framing errors, 1 header errors"), std::string::npos) << check;
    } else {
        EXPECT_NE(check.find("exit=0"), std::string::npos) << check;
    }
}

INSTANTIATE_TEST_SUITE_P(Rfc, ErrorProbe, ::testing::ValuesIn(kErrors),
                         [](const ::testing::TestParamInfo<error_case>& i) { return std::string(i.param.probe); });

class FeatureProbe : public ::testing::TestWithParam<const char*> {};

TEST_P(FeatureProbe, PassesItsChecksWithoutATerminate) {
    const std::string probe = GetParam();
    const std::string pcap = temp_path("probe-" + probe + ".pcap");
    const std::string results = temp_path("probe-" + probe + ".json");
    const sim_run r = run_probe(probe, pcap, results);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    for (const char* host : {"a.rnic", "b.rnic"}) {
        EXPECT_EQ(v.at("modules").at(host).at("rdma").at("terminates_sent").to_number<std::uint64_t>(), 0u) << host;
    }
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    if (probe == "write_imm") {
        // 20 Writes each followed by Immediate Data (opcode 8), then one Immediate Data with SE (9).
        // (A frame may carry several FPDUs: count opcodes, not frames.)
        std::size_t imm = 0, imm_se = 0;
        for (const std::string& l : lines(tshark(pcap, "iwarp_rdma.opcode", "-e iwarp_rdma.opcode"))) {
            std::istringstream ops(l);
            for (std::string op; std::getline(ops, op, ',');) {
                imm += op == "0x08";
                imm_se += op == "0x09";
            }
        }
        EXPECT_EQ(imm, 20u);
        EXPECT_EQ(imm_se, 1u);
    }
    if (probe == "response_order") {
        // Host b's responses in request order: Atomic Response (11), Read Response (2) ... per request.
        std::string seq;
        for (const std::string& l :
             lines(tshark(pcap, "ip.src == 10.0.0.2 && iwarp_rdma.opcode", "-e iwarp_rdma.opcode"))) {
            std::istringstream ops(l);
            for (std::string op; std::getline(ops, op, ',');) {
                const std::string kind = op == "0x0b" ? "A" : op == "0x02" ? "R" : "?";
                if (seq.empty() || seq.back() != kind[0]) seq += kind;
            }
        }
        EXPECT_EQ(seq, "ARARA");
    }
    if (probe == "listen_backlog") {
        // The peer's handshake completes against the listening port (no RST); the MPA Reply waits
        // for the accept, 200 us after the Request.
        EXPECT_TRUE(lines(tshark(pcap, "tcp.flags.reset == 1", "-e ip.src")).empty());
        const auto req = lines(tshark(pcap, "iwarp_mpa.key.req", "-e frame.time_relative"));
        const auto rep = lines(tshark(pcap, "iwarp_mpa.key.rep", "-e frame.time_relative"));
        ASSERT_EQ(req.size(), 1u);
        ASSERT_EQ(rep.size(), 1u);
        EXPECT_GE(std::stod(rep[0]) - std::stod(req[0]), 150e-6) << req[0] << " " << rep[0];
    }
    if (probe == "mpa_timeout") {
        // The Request is never answered; 10 ms later (rnic.mpa.timeout) the client closes, and the
        // server, whose connection waited in the backlog, closes its half too: no half-open stream.
        EXPECT_TRUE(lines(tshark(pcap, "iwarp_mpa.key.rep", "-e frame.number")).empty());
        const auto req = lines(tshark(pcap, "iwarp_mpa.key.req", "-e frame.time_relative"));
        const auto fins = lines(tshark(pcap, "tcp.flags.fin == 1", "-e ip.src -e frame.time_relative"));
        ASSERT_EQ(req.size(), 1u);
        ASSERT_EQ(fins.size(), 2u);
        EXPECT_EQ(fins[0].substr(0, fins[0].find('\t')), "10.0.0.1");
        EXPECT_EQ(fins[1].substr(0, fins[1].find('\t')), "10.0.0.2");
        const double fin_at = std::stod(fins[0].substr(fins[0].find('\t') + 1));
        EXPECT_NEAR(fin_at - std::stod(req[0]), 10e-3, 0.1e-3) << fins[0];
        EXPECT_TRUE(lines(tshark(pcap, "tcp.flags.reset == 1", "-e ip.src")).empty());
    }
    if (probe == "unlisten") {
        // Host b (10.0.0.2) resets twice: the backlog peer (its MPA Request never answered) when the
        // port closes, and the SYN that came after (RFC 9293 §3.10.7.1: <SEQ=0><ACK=SEG.SEQ+1><RST,ACK>).
        const auto resets =
            lines(tshark(pcap, "tcp.flags.reset == 1", "-e ip.src -e tcp.srcport -e tcp.dstport -e tcp.flags.ack"));
        ASSERT_EQ(resets.size(), 2u) << tshark(pcap, "tcp", "-e frame.number -e ip.src -e tcp.flags.str");
        EXPECT_EQ(resets[0].substr(0, resets[0].find('\t')), "10.0.0.2");
        EXPECT_NE(resets[0].find("\t40001\t"), std::string::npos) << resets[0];
        EXPECT_EQ(resets[1].substr(0, resets[1].find('\t')), "10.0.0.2");
        EXPECT_NE(resets[1].find("\t40002\t"), std::string::npos) << resets[1];
        // One MPA Reply only: the accepted peer's; the backlog peer's Request was never answered.
        EXPECT_EQ(lines(tshark(pcap, "iwarp_mpa.key.req", "-e frame.number")).size(), 2u);
        EXPECT_EQ(lines(tshark(pcap, "iwarp_mpa.key.rep", "-e frame.number")).size(), 1u);
    }
    if (probe == "qp_states" || probe == "abort") {
        EXPECT_EQ(lines(tshark(pcap, "tcp.flags.fin == 1", "-e ip.src")).size(), 2u);
        EXPECT_TRUE(lines(tshark(pcap, "iwarp_rdma.opcode == 7", "-e ip.src")).empty());
    }
}

INSTANTIATE_TEST_SUITE_P(Rfc, FeatureProbe,
                         ::testing::Values("write_imm", "zero_based", "masked_atomics", "response_order", "qp_states",
                                           "abort", "listen_backlog", "mpa_timeout", "unlisten"));

// Issue 19: NIC buffer memory without a send region for one more connection. Whichever NIC holds
// fewer regions (hosts.N.buffer_capacity = 700 KiB: two 256 KiB regions and room to receive) refuses
// the third connection by name, and a connection freed lets the next one in.
class SendRegionsProbe : public ::testing::TestWithParam<int> {};

TEST_P(SendRegionsProbe, TheNicThatRunsOutRefusesByNameAndRecovers) {
    const int short_host = GetParam();  // 0: the client (active side), 1: the server (passive side)
    const std::string tag = short_host == 0 ? "client" : "server";
    const std::string results = temp_path("probe-send-regions-" + tag + ".json");
    const std::string pcap = temp_path("probe-send-regions-" + tag + ".pcap");
    const sim_run r = run_sim({"--set", "workload.type=probe", "--set", "workload.probe=send_regions", "--set",
                               "hosts." + std::to_string(short_host) + ".buffer_capacity=700KiB", "--results", results,
                               "--pcap", pcap, "--log", "warn"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    const auto refused = [&](const char* host) {
        const boost::json::object& toe = v.at("modules").at(host).at("toe").as_object();
        return toe.contains("connections_refused_no_send_region")
                   ? toe.at("connections_refused_no_send_region").to_number<std::uint64_t>()
                   : 0;
    };
    EXPECT_EQ(refused("a.rnic"), short_host == 0 ? 1u : 0u);
    EXPECT_EQ(refused("b.rnic"), short_host == 1 ? 1u : 0u);
    if (short_host == 0) {
        EXPECT_NE(r.output.find("connect: no buffer memory"), std::string::npos) << r.output;
    } else {
        EXPECT_NE(r.output.find("accept on port 18515 fails: no send region in buffer memory"), std::string::npos)
            << r.output;
    }
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    // The refused connection is the third, from port 41001: refused at home it never reaches the wire;
    // refused by the server its SYN is answered <SEQ=0><ACK=SEG.SEQ+1><RST,ACK> (RFC 9293 §3.10.7.1).
    const auto syns =
        lines(tshark(pcap, "tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.srcport == 41001", "-e frame.number"));
    const auto resets =
        lines(tshark(pcap, "tcp.flags.reset == 1", "-e ip.src -e tcp.dstport -e tcp.flags.ack -e tcp.seq_raw"));
    if (short_host == 0) {
        EXPECT_TRUE(syns.empty()) << syns.size();
        EXPECT_TRUE(resets.empty()) << resets.size();
    } else {
        EXPECT_EQ(syns.size(), 1u);
        ASSERT_EQ(resets.size(), 1u);
        EXPECT_EQ(resets[0], "10.0.0.2\t41001\t1\t0") << resets[0];
    }
    // The connection after the recovery (port 41002) negotiates: one MPA Reply more than Requests refused.
    EXPECT_EQ(lines(tshark(pcap, "iwarp_mpa.key.rep && tcp.dstport == 41002", "-e frame.number")).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Issue19, SendRegionsProbe, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) { return i.param == 0 ? "Client" : "Server"; });

// The probe says what it needs instead of running something else.
TEST(ProbeNegative, SendRegionsNeedsReservedRegionsAndASmallNic) {
    // Shared regions; a NIC with one region; regions that fill the memory to the byte (768 KiB).
    for (const char* kv :
         {"rnic.buffer.send_regions=shared", "hosts.1.buffer_capacity=300KiB", "hosts.1.buffer_capacity=768KiB"}) {
        const sim_run r = run_sim(
            {"--set", "workload.type=probe", "--set", "workload.probe=send_regions", "--set", kv, "--log", "off"});
        EXPECT_EQ(r.exit_code, 1) << kv << "\n" << r.output;
        EXPECT_NE(r.output.find("probe 'send_regions' needs"), std::string::npos) << r.output;
    }
}

// Without the test mode a raw ULPDU is refused by the device, not sent: the probe cannot provoke the
// Terminate and says so.
TEST(ProbeNegative, RawUlpdusNeedTheTestMode) {
    const std::string results = temp_path("probe-raw-off.json");
    const sim_run r = run_sim({"--set", "workload.type=probe", "--set", "workload.probe=unexpected_opcode", "--results",
                               results, "--log", "off"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "failed");
    EXPECT_EQ(v.at("modules").at("b.rnic").at("rdma").at("terminates_sent").to_number<std::uint64_t>(), 0u);
    EXPECT_GE(v.at("modules").at("a.rnic").at("rdma").at("bad_wqes").to_number<std::uint64_t>(), 1u);
    EXPECT_NE(r.output.find("QP error completion"), std::string::npos) << r.output;
}

// Masked atomics with PCIe AtomicOps: no AtomicOp can apply a mask, so the unit reads the word
// and CASes the computed value in (RFC 7306 §5.1 results, PCIe Base Spec §6.15 transactions).
TEST(ProbeAtomicOps, MaskedAtomicsAsReadAndCas) {
    const std::string results = temp_path("probe-masked-atomicop.json");
    const sim_run r = run_sim({"--set", "workload.type=probe", "--set", "workload.probe=masked_atomics", "--set",
                               "rnic.rdma.atomics=pcie_atomicop", "--results", results, "--log", "off"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok");
    // Masked FetchAdd: read + CAS; masked CmpSwap that matches: read + CAS; one that does not: read
    // only; plain FetchAdd: one AtomicOp. Three AtomicOps in all, no retries (nobody else writes).
    EXPECT_EQ(v.at("modules").at("b.rnic").at("rdma").at("atomic_ops_issued").to_number<std::uint64_t>(), 3u);
    EXPECT_EQ(v.at("modules").at("b.pcie").at("upstream").at("atomic").to_number<std::uint64_t>(), 3u);
    EXPECT_EQ(v.at("modules").at("b.rnic").at("rdma").at("atomic_cas_retries").to_number<std::uint64_t>(), 0u);
}

TEST(ProbeAtomicOps, PcixCannotUseAtomicOps) {
    const sim_run r = run_sim({"--set", "host_bus.kind=pcix", "--set", "rnic.rdma.atomics=pcie_atomicop"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("rnic.rdma.atomics"), std::string::npos) << r.output;
}

TEST(ProbeNegative, UnknownProbeIsAConfigurationError) {
    const sim_run r = run_sim({"--set", "workload.type=probe", "--set", "workload.probe=nonsense"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("workload.probe"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace rnic::test
