// workload.type = rping between the two simulated hosts: librdmacm rping's exchange (client on host
// a, server on host b), 20 pings of 3000 bytes, the data validated on both sides, and the wire
// decoded by tshark and rnic-pcap-check: per ping two Sends each way carrying the 16-byte
// big-endian rping_rdma_info, one RDMA Read of the client's start buffer, one RDMA Write of the echo.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "run_helpers.h"

namespace rnic::test {
namespace {

std::vector<std::string> tshark_lines(const std::string& pcap, const std::string& filter, const std::string& fields) {
    const std::string out =
        shell("tshark -r " + pcap + " --disable-protocol rpcordma --disable-protocol smb_direct -Y '" + filter +
              "' -T fields -E separator=/t -E occurrence=a " + fields + " 2>/dev/null");
    std::vector<std::string> v;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);) {
        if (!l.empty()) v.push_back(l);
    }
    return v;
}

std::size_t count_fpdus(const std::string& pcap, const std::string& filter) {
    // One frame can carry several FPDUs; tshark lists every occurrence's opcode with commas.
    std::size_t n = 0;
    for (const std::string& l : tshark_lines(pcap, filter, "-e iwarp_rdma.opcode"))
        n += 1 + std::count(l.begin(), l.end(), ',');
    return n;
}

std::vector<std::string> rping_args(const std::string& results, const std::string& pcap) {
    return {"--set", "workload.type=rping", "--set", "simulation.time_limit=1s", "--results", results, "--pcap", pcap};
}

const boost::json::object* row_of(const boost::json::value& r, const std::string& op) {
    for (const auto& row : r.at("workload").at("rows").as_array()) {
        if (row.at("op").as_string() == op) return &row.as_object();
    }
    return nullptr;
}

TEST(Rping, TwentyPingsOf3000BytesValidatedOnBothSidesAndDecodedOnTheWire) {
    const std::string results = temp_path("rping.json"), pcap = temp_path("rping.pcap");
    const sim_run run = run_sim(rping_args(results, pcap));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const boost::json::value r = read_json(results);
    EXPECT_EQ(r.at("status").as_string(), "ok");
    for (const char* op : {"rping client", "rping server"}) {
        const boost::json::object* row = row_of(r, op);
        ASSERT_NE(row, nullptr) << op;
        EXPECT_EQ(row->at("iterations").to_number<std::uint64_t>(), 20u) << op;
        EXPECT_EQ(row->at("size").to_number<std::uint64_t>(), 3000u) << op;
        EXPECT_EQ(row->at("errors").to_number<std::uint64_t>(), 0u) << op;
        EXPECT_TRUE(row->at("integrity_ok").as_bool()) << op;
        EXPECT_GT(row->at("latency_ns").at("min").to_number<double>(), 0.0) << op;
    }
    // Both sides checked 20 x 3000 bytes: the client its echo, the server rping's pattern.
    EXPECT_EQ(r.at("integrity").at("bytes_checked").to_number<std::uint64_t>(), 2u * 20u * 3000u);
    EXPECT_EQ(r.at("integrity").at("bytes_mismatched").to_number<std::uint64_t>(), 0u);
    EXPECT_GT(r.at("workload").at("connect_latency_ns").to_number<double>(), 0.0);

    const std::string check = pcap_check(pcap);
    EXPECT_NE(check.find("exit=0"), std::string::npos) << check;

    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    // 20 pings: 4 Sends (opcode 3), 1 RDMA Read Request (1); the 3000-byte Read Response (2) and
    // Write (0) each span several FPDUs (MULPDU < 3000 with a 1500-byte MTU).
    EXPECT_EQ(count_fpdus(pcap, "iwarp_rdma.opcode == 3"), 80u);
    EXPECT_EQ(count_fpdus(pcap, "iwarp_rdma.opcode == 1"), 20u);
    EXPECT_GE(count_fpdus(pcap, "iwarp_rdma.opcode == 2"), 40u);
    EXPECT_GE(count_fpdus(pcap, "iwarp_rdma.opcode == 0"), 40u);
    // Every Send is a 16-byte rping_rdma_info: the client's carry its buffer's address, rkey and
    // size 3000 (0x00000bb8) big-endian; the server's go-aheads are 16 zero bytes.
    std::size_t client_sends = 0, server_sends = 0;
    for (const std::string& l : tshark_lines(pcap, "iwarp_rdma.opcode == 3", "-e ip.src -e data.data")) {
        const std::string src = l.substr(0, l.find('\t')), hex = l.substr(l.find('\t') + 1);
        ASSERT_EQ(hex.size(), 32u) << l;
        if (src == "10.0.0.1") {
            ++client_sends;
            EXPECT_EQ(hex.substr(24), "00000bb8") << l;
            EXPECT_NE(hex.substr(16, 8), "00000000") << l;  // an rkey
        } else {
            ++server_sends;
            EXPECT_EQ(hex, std::string(32, '0')) << l;
        }
    }
    EXPECT_EQ(client_sends, 40u);
    EXPECT_EQ(server_sends, 40u);
    // The Read Responses carry rping's text: "rdma-ping-0: ABCD..." first, "rdma-ping-19: TUVW..." last.
    std::string reads;
    for (const std::string& l : tshark_lines(pcap, "iwarp_rdma.opcode == 2", "-e data.data")) reads += l + "\n";
    EXPECT_NE(reads.find("72646d612d70696e672d303a2041424344"), std::string::npos);    // rdma-ping-0: ABCD
    EXPECT_NE(reads.find("72646d612d70696e672d31393a2054555657"), std::string::npos);  // rdma-ping-19: TUVW
}

TEST(Rping, MpaRevision2WithoutCrcAsSoftIwarpDefaults) {
    // siw's defaults: MPA revision 2 with the IRD/ORD word, CRC off when neither side asks.
    const std::string results = temp_path("rping-rev2.json"), pcap = temp_path("rping-rev2.pcap");
    std::vector<std::string> args = rping_args(results, pcap);
    for (const char* kv : {"rnic.mpa.revision=2", "rnic.mpa.crc=false", "workload.rping.count=5"}) {
        args.push_back("--set");
        args.push_back(kv);
    }
    const sim_run run = run_sim(args);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const boost::json::value r = read_json(results);
    EXPECT_EQ(r.at("integrity").at("bytes_checked").to_number<std::uint64_t>(), 2u * 5u * 3000u);
    const std::string check = pcap_check(pcap);
    EXPECT_NE(check.find("exit=0"), std::string::npos) << check;
    if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
    // Request and Reply are revision 2, C = 0, and carry the 4-byte IRD/ORD word (IRD = ORD = 1,
    // what rping asks for) as their only private data.
    const auto rr = tshark_lines(pcap, "iwarp_mpa.key.req || iwarp_mpa.key.rep",
                                 "-e iwarp_mpa.rev -e iwarp_mpa.crc_flag -e iwarp_mpa.pdlength");
    ASSERT_EQ(rr.size(), 2u);
    for (const std::string& l : rr) EXPECT_EQ(l, "2\t0\t4");
}

TEST(Rping, BadSizesAndRolesAreRejectedBeforeTheRun) {
    sim_run run = run_sim({"--set", "workload.type=rping", "--set", "workload.rping.size=25"});
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("workload.rping.size"), std::string::npos) << run.output;
    run = run_sim({"--set", "workload.type=rping", "--set", "workload.rping.role=both"});
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("workload.rping.role"), std::string::npos) << run.output;
}

TEST(Rping, CorruptionOnTheWireEndsTheRunWithAnErrorNotAMismatchOrACrash) {
    // Damage that gets past TCP's checksum is caught by the MPA CRC: the connection ends with a
    // Terminate and rping reports the failed step (exit status 1), no silent bad data.
    const std::string results = temp_path("rping-corrupt.json"), pcap = temp_path("rping-corrupt.pcap");
    std::vector<std::string> args = rping_args(results, pcap);
    for (const char* kv : {"link.a_to_b.corrupt=0.05", "link.a_to_b.corrupt_fixes_checksum=true"}) {
        args.push_back("--set");
        args.push_back(kv);
    }
    const sim_run run = run_sim(args);
    EXPECT_EQ(run.exit_code, 1) << run.output;
    const boost::json::value r = read_json(results);
    EXPECT_EQ(r.at("status").as_string(), "failed");
    EXPECT_EQ(r.at("integrity").at("bytes_mismatched").to_number<std::uint64_t>(), 0u);
}

}  // namespace
}  // namespace rnic::test
