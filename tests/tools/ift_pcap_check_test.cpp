// rnic-pcap-check --framing ift (seed 001, draft-williams-iwarp-ift-00) on captures the platform
// writes with rnic.framing=ift: a clean run, a flipped payload byte (Payload CRC), a flipped DDP
// header byte (Header CRC), and the wrong --framing either way.
#include <gtest/gtest.h>

#include <cstring>

#include "proto/bytes.h"
#include "proto/net.h"
#include "proto/pcap.h"
#include "proto/seeds/ift.h"
#include "test_support.h"

namespace rnic::tools_test {
namespace {

void simulate(const std::string& framing, const std::string& pcap) {
    simulate_capture(framing, pcap, "--set 'workload.sizes=[64,4096,20000]' --set workload.iterations=20");
}

command_result run_tool(const std::string& args) {
    return run_pcap_check(args);
}

// Recomputes the IPv4 header and TCP checksums of an Ethernet/IPv4/TCP frame in place.
void fix_checksums(std::vector<std::uint8_t>& f) {
    std::uint8_t* ip = f.data() + net::kEthernetHeaderSize;
    const std::size_t ihl = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
    const std::size_t total = proto::get_be16(ip + 2);
    proto::put_be16(ip + 10, 0);
    proto::put_be16(ip + 10, net::internet_checksum(ip, ihl));
    std::uint8_t* tcp = ip + ihl;
    const std::size_t tcp_len = total - ihl;
    std::uint8_t pseudo[12];
    std::memcpy(pseudo, ip + 12, 8);
    pseudo[8] = 0;
    pseudo[9] = ip[9];
    proto::put_be16(pseudo + 10, static_cast<std::uint16_t>(tcp_len));
    proto::put_be16(tcp + 16, 0);
    const std::uint32_t sum = net::checksum_partial(tcp, tcp_len, net::checksum_partial(pseudo, sizeof pseudo));
    proto::put_be16(tcp + 16, static_cast<std::uint16_t>(~sum & 0xFFFFu));
}

enum class flip { payload, header };

struct flipped {
    std::size_t frame = 0;         // 1-based record number
    std::size_t payload_size = 0;  // of the IFT frame hit
};

// Copies `in` to `out` with one byte flipped in the first TCP segment that starts with a whole,
// good IFT frame carrying payload: its first payload byte, or a byte of its DDP header. The TCP
// checksum is fixed, so only the IFT CRCs can catch the change.
flipped flip_byte(const std::string& in, const std::string& out, flip what) {
    std::string error;
    auto records = proto::read_pcap(in, &error);
    EXPECT_TRUE(records) << error;
    flipped hit;
    if (!records) return hit;
    for (std::size_t i = 0; i < records->size() && hit.frame == 0; ++i) {
        std::vector<std::uint8_t>& f = (*records)[i].data;
        const auto p = net::parse_tcp_frame(f.data(), f.size(), nullptr);
        if (!p || p->payload_len == 0) continue;
        const std::uint8_t* seg = f.data() + p->payload_offset;
        const std::size_t n = proto::ift::frame_length_at(seg, p->payload_len);
        if (n == 0 || n > p->payload_len) continue;
        const auto v = proto::ift::parse(seg, n, nullptr);  // the MPA Request/Reply does not parse
        if (!v || v->payload_size == 0) continue;
        const std::size_t at = what == flip::payload ? proto::ift::kPrefixSize + v->header_size + proto::ift::kCrcSize
                                                     : proto::ift::kPrefixSize + 4;  // the STag / QN field
        f[p->payload_offset + at] ^= 0x01;
        fix_checksums(f);
        EXPECT_TRUE(net::parse_tcp_frame(f.data(), f.size(), &error)) << error;
        hit.frame = i + 1;
        hit.payload_size = v->payload_size;
    }
    EXPECT_NE(hit.frame, 0u) << "no IFT data frame in " << in;
    write_capture_file(out, *records);
    return hit;
}

check::options ift_options() {
    check::options o;
    o.framing = check::framing::ift;
    return o;
}

TEST(IftPcapCheck, PlatformCaptureIsCleanWithFramingIft) {
    temp_file pcap("ift-clean.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate("ift", pcap.path()));
    const command_result r = run_tool("--framing ift " + pcap.path());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("then IFT framing (Header CRC and Payload CRC, no markers)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" IFT frames, 0 bad CRC, 0 framing errors, 0 header errors, 0 other errors"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find(" FPDUs"), std::string::npos) << r.out;

    const check::capture_report rep = check_file(pcap.path(), ift_options());
    ASSERT_EQ(rep.connections.size(), 1u) << all_issues(rep);
    EXPECT_TRUE(rep.ok()) << all_issues(rep);
    const check::connection_report& c = rep.connections[0];
    EXPECT_TRUE(c.negotiated);
    const check::direction_report& data = c.directions[check::k_to_responder];
    EXPECT_EQ(data.framing, check::framing::ift);
    EXPECT_FALSE(data.markers);
    EXPECT_EQ(data.bad_crcs, 0u);
    EXPECT_GT(data.fpdus, 0u);
    // 20 Writes of each size: 20000 bytes take more than one frame, 64 and 4096 one each.
    EXPECT_GT(data.opcodes[static_cast<unsigned>(ddp::opcode::rdma_write)], 60u);
    EXPECT_EQ(data.fpdu_bytes - data.ulpdu_bytes, data.fpdus * proto::ift::kOverhead);  // no padding, no markers
    const std::string n = std::to_string(data.fpdus + c.directions[check::k_to_initiator].fpdus);
    EXPECT_NE(r.out.find("summary: 1 connection, " + n + " IFT frames, 0 bad CRC"), std::string::npos) << r.out;
}

TEST(IftPcapCheck, FlippedPayloadByteIsAPayloadCrcError) {
    temp_file pcap("ift-payload-src.pcap");
    temp_file bad("ift-payload-bad.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate("ift", pcap.path()));
    const flipped hit = flip_byte(pcap.path(), bad.path(), flip::payload);
    ASSERT_NE(hit.frame, 0u);
    const command_result r = run_tool("--framing ift " + bad.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_EQ(count_of(r.out, "error [crc] frame " + std::to_string(hit.frame) + ", "), 1u) << r.out;
    EXPECT_NE(r.out.find("bad IFT Payload CRC in the frame at stream byte "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" IFT frames, 1 bad CRC, 0 framing errors, 0 header errors, 0 other errors"),
              std::string::npos)
        << r.out;

    const check::capture_report rep = check_file(bad.path(), ift_options());
    EXPECT_TRUE(has_issue(rep, check::category::crc, "Payload CRC")) << all_issues(rep);
    EXPECT_FALSE(has_issue(rep, check::category::crc, "Header CRC")) << all_issues(rep);
    // The framing survives: the frames after the bad one are still checked.
    const check::capture_report good = check_file(pcap.path(), ift_options());
    ASSERT_EQ(rep.connections.size(), 1u);
    ASSERT_EQ(good.connections.size(), 1u);
    auto frames = [](const check::connection_report& c) { return c.directions[0].fpdus + c.directions[1].fpdus; };
    EXPECT_EQ(frames(rep.connections[0]) + 1, frames(good.connections[0]));
    for (const check::direction_report& d : rep.connections[0].directions) {
        EXPECT_EQ(d.header_errors, 0u) << all_issues(rep);
        EXPECT_EQ(d.unchecked_bytes, 0u);
    }
}

TEST(IftPcapCheck, FlippedHeaderByteIsAHeaderCrcError) {
    temp_file pcap("ift-header-src.pcap");
    temp_file bad("ift-header-bad.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate("ift", pcap.path()));
    const flipped hit = flip_byte(pcap.path(), bad.path(), flip::header);
    ASSERT_NE(hit.frame, 0u);
    const command_result r = run_tool("--framing ift " + bad.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("error [crc] frame " + std::to_string(hit.frame) + ", 10.0.0."), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("bad IFT Header CRC in the frame at stream byte "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" IFT frames, 1 bad CRC, "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("try --framing"), std::string::npos) << r.out;  // a damaged IFT frame, not MPA

    const check::capture_report rep = check_file(bad.path(), ift_options());
    EXPECT_TRUE(has_issue(rep, check::category::crc, "Header CRC")) << all_issues(rep);
    EXPECT_FALSE(has_issue(rep, check::category::crc, "Payload CRC")) << all_issues(rep);
    ASSERT_EQ(rep.connections.size(), 1u);
    const auto& dirs = rep.connections[0].directions;
    EXPECT_GT(dirs[0].unchecked_bytes + dirs[1].unchecked_bytes, 0u);  // the framing is lost
}

TEST(IftPcapCheck, IftCaptureWithoutFramingIftFailsWithAHint) {
    temp_file pcap("ift-as-mpa.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate("ift", pcap.path()));
    const command_result r = run_tool(pcap.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("IFT? try --framing ift"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("summary: 1 connection, 0 FPDUs, "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(": FAILED"), std::string::npos) << r.out;
}

TEST(IftPcapCheck, MpaCaptureWithFramingIftFailsCleanly) {
    temp_file pcap("mpa-as-ift.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate("mpa", pcap.path()));
    ASSERT_EQ(run_tool(pcap.path()).exit_code, 0);  // a good MPA capture
    const command_result r = run_tool("--framing ift " + pcap.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("error [framing] frame "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("MPA? try --framing mpa"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("summary: 1 connection, 0 IFT frames, "), std::string::npos) << r.out;
}

TEST(IftPcapCheck, FramingOptionIsChecked) {
    // rdmatcp (seed 000) and vitcp (seed 003) are values now.
    const command_result r = run_tool("--framing bogus x.pcap");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("--framing needs mpa, ift, rdmatcp or vitcp, got \"bogus\""), std::string::npos) << r.out;
}

}  // namespace
}  // namespace rnic::tools_test
