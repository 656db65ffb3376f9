// Connection refusal and driver misuse end to end, through rnic-sim's probes:
//  - reject: the server's driver refuses the client's MPA Request (reject command); the wire must
//    carry an MPA Reply with R = 1 and the private data (RFC 5044 §7.1.5, decoded by tshark), no
//    FPDU, and a FIN from the server; the client's connect returns connection_refused with the data.
//  - verbs_misuse: every misuse of the verbs API returns its error code (checked by the probe, one
//    result row each) and writes an error line with the simulated time (checked here, on stderr).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::string hex(const std::string& s) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out += digits[c >> 4];
        out += digits[c & 0xf];
    }
    return out;
}

sim_run run_probe(const std::string& probe, const std::string& pcap, const std::string& results,
                  const std::string& log) {
    return run_sim({"--set", "workload.type=probe", "--set", "workload.probe=" + probe, "--pcap", pcap, "--results",
                    results, "--log", log});
}

// Every result row of the probe passed; returns how many there were.
std::size_t rows_ok(const boost::json::value& v) {
    std::size_t n = 0;
    for (const auto& row : v.at("workload").at("rows").as_array()) {
        EXPECT_TRUE(row.at("integrity_ok").as_bool()) << boost::json::serialize(row);
        ++n;
    }
    return n;
}

TEST(Reject, MpaReplyWithRejectAndPrivateDataOnTheWire) {
    const std::string pcap = temp_path("reject.pcap");
    const std::string results = temp_path("reject.json");
    const sim_run r = run_probe("reject", pcap, results, "warn");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    EXPECT_GE(rows_ok(v), 10u);
    const auto& cp_a = v.at("modules").at("a.rnic").at("cp").as_object();
    const auto& cp_b = v.at("modules").at("b.rnic").at("cp").as_object();
    EXPECT_EQ(cp_b.at("connections_rejected").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(cp_b.at("connections_established").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(cp_a.at("connections_failed").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(cp_a.at("connections_established").to_number<std::uint64_t>(), 0u);
    // The initiator names the refusal in its log.
    EXPECT_NE(r.output.find("the peer rejected the connection (MPA Reply with R = 1"), std::string::npos) << r.output;
    for (const char* host : {"a.rnic", "b.rnic"}) {
        EXPECT_EQ(v.at("modules").at(host).at("framer").at("tx_fpdus").to_number<std::uint64_t>(), 0u) << host;
    }
    // The project's own capture checker sees the refusal too (and counts it as the one error).
    const std::string check = pcap_check(pcap);
    EXPECT_NE(check.find("Reply rev 1 M0 C1 R1, 45 bytes private data"), std::string::npos) << check;
    EXPECT_NE(check.find("private data \"rnic-vp: no room on this port"), std::string::npos) << check;
    EXPECT_NE(check.find("0 FPDUs, 0 bad CRC"), std::string::npos) << check;
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    const std::vector<std::string> reqs = lines(tshark(pcap, "iwarp_mpa.req", "-e iwarp_mpa.rej_flag"));
    ASSERT_EQ(reqs.size(), 1u);
    const std::vector<std::string> reps = lines(tshark(
        pcap, "iwarp_mpa.rep", "-e ip.src -e iwarp_mpa.rej_flag -e iwarp_mpa.pdlength -e iwarp_mpa.privatedata"));
    ASSERT_EQ(reps.size(), 1u);
    std::vector<std::string> f;
    std::istringstream cols(reps[0]);
    for (std::string c; std::getline(cols, c, '\t');) f.push_back(c);
    ASSERT_EQ(f.size(), 4u) << reps[0];
    EXPECT_TRUE(f[1] == "1" || f[1] == "True") << reps[0];
    const std::string text = "rnic-vp: no room on this port";
    EXPECT_EQ(f[2], std::to_string(text.size() + 16)) << reps[0];
    std::string data = f[3];
    data.erase(std::remove(data.begin(), data.end(), ':'), data.end());
    EXPECT_EQ(data.substr(0, 2 * text.size()), hex(text)) << reps[0];
    EXPECT_EQ(data.size(), 2 * (text.size() + 16)) << reps[0];
    // No FPDU ever: the stream never entered RDMA mode; the responder closed it (FIN).
    EXPECT_EQ(tshark(pcap, "iwarp_mpa.fpdu", "-e frame.number"), "");
    EXPECT_FALSE(lines(tshark(pcap, "tcp.flags.fin == 1 && ip.src == " + f[0], "-e frame.number")).empty());
    EXPECT_EQ(tshark(pcap, "_ws.malformed", "-e frame.number"), "");
}

TEST(VerbsMisuse, EveryMisuseReturnsItsErrorAndLogsItWithTheSimulatedTime) {
    const std::string pcap = temp_path("misuse.pcap");
    const std::string results = temp_path("misuse.json");
    const sim_run r = run_probe("verbs_misuse", pcap, results, "error");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    std::size_t misuses = 0;
    for (const auto& row : v.at("workload").at("rows").as_array()) {
        EXPECT_TRUE(row.at("integrity_ok").as_bool()) << boost::json::serialize(row);
        if (std::string(row.at("op").as_string().c_str()).rfind("misuse: ", 0) == 0) ++misuses;
    }
    EXPECT_GE(misuses, 50u);
    // "[       12.345678 us] error drv  a.verbs: post_send: QP handle: bad handle"
    const std::regex line(R"(^\[ *[0-9]+\.[0-9]{6} us\] error drv +a\.[A-Za-z0-9_.]*verbs: (.*)$)");
    std::vector<std::string> drv_errors;
    for (const std::string& l : lines(r.output)) {
        std::smatch m;
        if (std::regex_match(l, m, line)) drv_errors.push_back(m[1]);
    }
    EXPECT_GE(drv_errors.size(), misuses) << r.output;
    auto logged = [&](const std::string& text) {
        return std::any_of(drv_errors.begin(), drv_errors.end(),
                           [&](const std::string& e) { return e.find(text) != std::string::npos; });
    };
    for (const char* want :
         {"alloc_pd before open: bad state", "post_send: QP handle: bad handle", "post_send: opcode 66: bad opcode",
          "not in RTS: bad state", "post_send: local buffer outside its region: out of bounds",
          "post_recv: buffer outside its region: out of bounds", "post_recv: receive queue of QP",
          "post_send: send queue of QP", "in error: bad state", "destroy_qp: QP handle: bad handle",
          "destroy_cq: CQ handle: bad handle", "reg_mr: region wraps the address space: out of bounds",
          "create_qp: queue depths must be powers of two up to 65536: invalid argument",
          "Read/atomic result region lacks local write access: invalid argument", "dereg_mr: unknown STag",
          "query_stats: null output: invalid argument"}) {
        EXPECT_TRUE(logged(want)) << "no error line with '" << want << "'\n" << r.output;
    }
    // Misuse leaves the device sane: nothing went to Terminate.
    for (const char* host : {"a.rnic", "b.rnic"}) {
        EXPECT_EQ(v.at("modules").at(host).at("rdma").at("terminates_sent").to_number<std::uint64_t>(), 0u) << host;
    }
}

// Issue 19 item 3: every table and ring filled until the next request is refused with its named
// status (the probe checks each), then one entry freed and the request granted; the connection
// the probe runs on completes a Write after all of it.
TEST(ResourceLimits, EveryTableAndRingIsRefusedByNameThenRecovers) {
    const std::string pcap = temp_path("limits.pcap");
    const std::string results = temp_path("limits.json");
    const sim_run r = run_probe("resource_limits", pcap, results, "error");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const boost::json::value v = read_json(results);
    EXPECT_EQ(v.at("status").as_string(), "ok") << r.output;
    std::vector<std::string> checked;
    for (const auto& row : v.at("workload").at("rows").as_array()) {
        EXPECT_TRUE(row.at("integrity_ok").as_bool()) << boost::json::serialize(row);
        checked.emplace_back(row.at("op").as_string().c_str());
    }
    for (const char* want : {"send queue: the next post is refused with ring_full",
                             "send queue: a post succeeds once the completion retired the ring",
                             "STag table: registrations are refused with no_resources when it is full",
                             "STag table: a registration succeeds after one deregistration",
                             "QP table: creates are refused with no_resources when it is full",
                             "QP table: a create succeeds after one destroy",
                             "CQ table: creates are refused with no_resources when it is full",
                             "CQ table: a create succeeds after one destroy",
                             "host memory: alloc_buffer is refused with no_memory when the pool is exhausted",
                             "host memory: create_qp is refused with no_memory (its rings)",
                             "host memory: create_cq succeeds once buffers are freed",
                             "the first connection still works: an RDMA Write completes"}) {
        EXPECT_NE(std::find(checked.begin(), checked.end(), want), checked.end()) << want;
    }
    // Each refusal is logged by name with the simulated time.
    for (const char* want : {"reg_mr: firmware said no resources: no device resources",
                             "create_qp: no device resources", "create_cq: no device resources",
                             "post_send: send queue of QP", "alloc_buffer of", "create_qp rings: no memory"}) {
        EXPECT_NE(r.output.find(want), std::string::npos) << "no error line with '" << want << "'";
    }
    // The tables are full only for the probe's own requests: no Terminate, no refused DMA.
    for (const char* host : {"a.rnic", "b.rnic"}) {
        EXPECT_EQ(v.at("modules").at(host).at("rdma").at("terminates_sent").to_number<std::uint64_t>(), 0u) << host;
    }
    for (const char* mem : {"a.mem", "b.mem"}) {
        EXPECT_EQ(v.at("modules").at(mem).at("dma_refused").to_number<std::uint64_t>(), 0u) << mem;
    }
}

}  // namespace
}  // namespace rnic::test
