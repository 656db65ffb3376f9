// rnic-pcap-check --framing rdmatcp (seed 000, draft-williams-rdmatcp-00) on captures the platform
// writes with rnic.framing=rdmatcp: a clean run with traffic both ways (Reads: requests one way,
// responses the other), a flipped payload byte (the CRC-32), a segment re-sent under another
// Connection ID and one whose message number is out of sequence (both with a good CRC, so only the
// seed's own rules catch them), a cut stream, and the wrong --framing either way. The damaged
// captures are checked without the TCP checksums (--no-checksum), which the damage breaks.
#include <gtest/gtest.h>

#include <functional>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "proto/net.h"
#include "proto/pcap.h"
#include "proto/seeds/rdmatcp.h"
#include "test_support.h"

namespace rnic::tools_test {
namespace {

namespace rt = proto::rdmatcp;
void simulate(const std::string& framing, const std::string& pcap) {
    // Reads: Read Requests one way, Read Responses the other.
    simulate_capture(framing, pcap,
                     "--set workload.type=read_bw --set 'workload.sizes=[64,4096,20000]' --set workload.iterations=20");
}

command_result run_tool(const std::string& args) {
    return run_pcap_check(args);
}

check::options rdmatcp_options(bool checksums = true) {
    check::options o;
    o.framing = check::framing::rdmatcp;
    o.verify_checksums = checksums;
    return o;
}

// Copies `in` to `out` after `edit` changed the first TCP segment that holds one whole RDMA/TCP
// segment of type `type` with payload; `recrc` recomputes the segment's CRC-32 afterwards. Returns
// the 1-based record number changed (0: none found).
std::size_t damage(const std::string& in, const std::string& out, rt::message_type type,
                   const std::function<void(std::uint8_t* seg, std::size_t len)>& edit, bool recrc) {
    std::string error;
    auto records = proto::read_pcap(in, &error);
    EXPECT_TRUE(records) << error;
    if (!records) return 0;
    std::size_t hit = 0;
    for (std::size_t i = 0; i < records->size() && hit == 0; ++i) {
        std::vector<std::uint8_t>& f = (*records)[i].data;
        const auto p = net::parse_tcp_frame(f.data(), f.size(), nullptr);
        if (!p || p->payload_len == 0) continue;
        std::uint8_t* seg = f.data() + p->payload_offset;
        const auto v = rt::parse(seg, p->payload_len, nullptr);  // the MPA Request/Reply does not parse
        if (!v || v->header.type != type || v->payload_len == 0 || v->wire_length != p->payload_len) continue;
        edit(seg, v->wire_length);
        if (recrc) {
            const std::size_t covered = v->wire_length - rt::kCrcSize;
            proto::put_le32(seg + covered, proto::crc_db710641(seg, covered));
        }
        hit = i + 1;
    }
    EXPECT_NE(hit, 0u) << "no " << rt::to_string(type) << " segment in " << in;
    write_capture_file(out, *records);
    return hit;
}

TEST(RdmaTcpPcapCheck, PlatformCaptureIsCleanWithFramingRdmatcp) {
    temp_file pcap("rdmatcp-clean.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate("rdmatcp", pcap.path()));
    const command_result r = run_tool("--framing rdmatcp " + pcap.path());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("then RDMA/TCP segments (CRC-32 0xDB710641"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" RDMA/TCP segments, 0 bad CRC, 0 framing errors, 0 header errors, 0 other errors"),
              std::string::npos)
        << r.out;
    const check::capture_report rep = check_file(pcap.path(), rdmatcp_options());
    ASSERT_EQ(rep.connections.size(), 1u) << all_issues(rep);
    EXPECT_TRUE(rep.ok()) << all_issues(rep);
    const check::connection_report& c = rep.connections[0];
    const check::direction_report& requests = c.directions[check::k_to_responder];
    const check::direction_report& responses = c.directions[check::k_to_initiator];
    EXPECT_EQ(requests.framing, check::framing::rdmatcp);
    EXPECT_EQ(requests.opcodes[static_cast<unsigned>(ddp::opcode::read_request)], 60u);
    EXPECT_GE(responses.opcodes[static_cast<unsigned>(ddp::opcode::read_response)], 60u);
    // Each segment adds 26 bytes to its ULPDU, then padding to 4 and the CRC (rdmatcp_ddp.h).
    EXPECT_GE(responses.fpdu_bytes - responses.ulpdu_bytes, responses.fpdus * 30);
    EXPECT_LE(responses.fpdu_bytes - responses.ulpdu_bytes, responses.fpdus * 33);
}

TEST(RdmaTcpPcapCheck, FlippedPayloadByteIsACrcError) {
    temp_file pcap("rdmatcp-payload-src.pcap");
    temp_file bad("rdmatcp-payload-bad.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate("rdmatcp", pcap.path()));
    const std::size_t hit = damage(
        pcap.path(), bad.path(), rt::message_type::read_response,
        [](std::uint8_t* seg, std::size_t len) { seg[len - 10] ^= 0x20; }, false);
    ASSERT_NE(hit, 0u);
    const command_result r = run_tool("--no-checksum --framing rdmatcp " + bad.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("error [crc] frame " + std::to_string(hit) + ", "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("RDMA/TCP crc_mismatch"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" RDMA/TCP segments, 1 bad CRC, 0 framing errors, 0 header errors"), std::string::npos)
        << r.out;
}

TEST(RdmaTcpPcapCheck, AnotherConnectionIdIsAFramingError) {
    temp_file pcap("rdmatcp-id-src.pcap");
    temp_file bad("rdmatcp-id-bad.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate("rdmatcp", pcap.path()));
    const std::size_t hit = damage(
        pcap.path(), bad.path(), rt::message_type::read_response,
        [](std::uint8_t* seg, std::size_t) { seg[11] ^= 0x01; }, true);
    ASSERT_NE(hit, 0u);
    const check::capture_report rep = check_file(bad.path(), rdmatcp_options(false));
    EXPECT_FALSE(rep.ok());
    EXPECT_TRUE(has_issue(rep, check::category::framing, "Connection ID")) << all_issues(rep);
    EXPECT_TRUE(has_issue(rep, check::category::framing, "§3.4")) << all_issues(rep);
    ASSERT_EQ(rep.connections.size(), 1u);
    EXPECT_EQ(rep.connections[0].directions[check::k_to_initiator].bad_crcs, 0u);
}

TEST(RdmaTcpPcapCheck, AMessageNumberOutOfSequenceIsAFramingError) {
    temp_file pcap("rdmatcp-num-src.pcap");
    temp_file bad("rdmatcp-num-bad.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate("rdmatcp", pcap.path()));
    // A Read Response whose Message Number names no Read Request (§3.4).
    const std::size_t hit = damage(
        pcap.path(), bad.path(), rt::message_type::read_response,
        [](std::uint8_t* seg, std::size_t) { seg[15] ^= 0x40; }, true);
    ASSERT_NE(hit, 0u);
    const check::capture_report rep = check_file(bad.path(), rdmatcp_options(false));
    EXPECT_TRUE(has_issue(rep, check::category::framing, "answers none of our outstanding")) << all_issues(rep);
    const command_result r = run_tool("--no-checksum --framing rdmatcp " + bad.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find(", 0 bad CRC, 1 framing errors, "), std::string::npos) << r.out;
}

TEST(RdmaTcpPcapCheck, WrongFramingEitherWayFails) {
    temp_file rdmatcp("rdmatcp-as-mpa.pcap");
    temp_file mpa("mpa-as-rdmatcp.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate("rdmatcp", rdmatcp.path()));
    ASSERT_NO_FATAL_FAILURE(simulate("mpa", mpa.path()));
    command_result r = run_tool(rdmatcp.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find(": FAILED"), std::string::npos) << r.out;
    r = run_tool("--framing rdmatcp " + mpa.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("MPA? try --framing mpa"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("summary: 1 connection, 0 RDMA/TCP segments, "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace rnic::tools_test
