// Wireshark agrees with our captures (tshark 4.0.17, ../shared/specs/wireshark-iwarp.md): every
// FPDU written decodes with "(Good CRC32)", nothing is malformed, the MPA Request and Reply are
// recognised and the RDMAP opcodes appear per direction in the order written. rnic-pcap-check
// must agree with tshark on the same files. Skipped when tshark is not installed.
//
// tshark 4.0.17 does not know the Immediate Data opcodes 8/9 by name and mislabels the Atomic
// Response fields, so opcodes are compared as numbers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <utility>

#include "test_support.h"

namespace rnic::tools_test {
namespace {

using ddp::opcode;

const std::string kTshark = "tshark --disable-protocol rpcordma --disable-protocol smb_direct -r ";

struct tshark_view {
    std::string verbose;    // -V
    std::string malformed;  // -Y _ws.malformed
    std::size_t requests = 0, replies = 0;
    // (source port, destination port) -> RDMAP opcodes in frame order
    std::map<std::pair<unsigned, unsigned>, std::vector<std::uint8_t>> opcodes;
};

std::size_t lines(const std::string& s) {
    return count_of(s, "\n");
}

tshark_view run_tshark(const std::string& path) {
    tshark_view v;
    v.verbose = run_command(kTshark + path + " -V").out;
    v.malformed = run_command(kTshark + path + " -Y _ws.malformed").out;
    v.requests = lines(run_command(kTshark + path + " -Y iwarp_mpa.req -T fields -e frame.number").out);
    v.replies = lines(run_command(kTshark + path + " -Y iwarp_mpa.rep -T fields -e frame.number").out);
    const std::string fields =
        run_command(kTshark + path + " -Y iwarp_rdma -T fields -e tcp.srcport -e tcp.dstport -e iwarp_rdma.opcode").out;
    std::istringstream in(fields);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream cols(line);
        std::string src, dst, ops;
        std::getline(cols, src, '\t');
        std::getline(cols, dst, '\t');
        std::getline(cols, ops, '\t');
        auto& seq = v.opcodes[{static_cast<unsigned>(std::stoul(src)), static_cast<unsigned>(std::stoul(dst))}];
        std::istringstream list(ops);  // several FPDUs in one frame: "0x00,0x03"
        std::string op;
        while (std::getline(list, op, ','))
            seq.push_back(static_cast<std::uint8_t>(std::strtoul(op.c_str(), nullptr, 0)));
    }
    return v;
}

std::string hex_list(const std::vector<std::uint8_t>& v) {
    std::string s;
    for (const auto b : v) s += std::to_string(b) + " ";
    return s;
}

class WiresharkAgrees : public ::testing::TestWithParam<scenario (*)()> {};

TEST_P(WiresharkAgrees, EveryFpduDecodesInOrder) {
    if (!tshark_available()) GTEST_SKIP() << "tshark not installed";
    const scenario sc = GetParam()();
    temp_file file("tshark-" + sc.name + ".pcap");
    ASSERT_TRUE(sc.capture.write(file.path()));
    const tshark_view v = run_tshark(file.path());

    EXPECT_EQ(count_of(v.verbose, "(Good CRC32)"), sc.fpdus());
    EXPECT_EQ(count_of(v.verbose, "Bad CRC32"), 0u);
    EXPECT_EQ(v.malformed, "");
    EXPECT_EQ(v.requests, sc.connections.size());
    EXPECT_EQ(v.replies, sc.connections.size());
    for (const written_connection& w : sc.connections) {
        // tshark 4.0.17 treats Markers as both-ways-or-none and miscounts them on a segment that ends
        // exactly on a Marker position: the captures must avoid both.
        EXPECT_EQ(w.markers[k_initiator], w.markers[k_responder]);
        EXPECT_EQ(w.marker_boundary_segments, 0u);
        const auto to_resp = v.opcodes.find({w.initiator_port, w.responder_port});
        const auto to_init = v.opcodes.find({w.responder_port, w.initiator_port});
        ASSERT_NE(to_resp, v.opcodes.end());
        ASSERT_NE(to_init, v.opcodes.end());
        EXPECT_EQ(to_resp->second, w.opcodes[k_initiator])
            << "tshark: " << hex_list(to_resp->second) << "\nwritten: " << hex_list(w.opcodes[k_initiator]);
        EXPECT_EQ(to_init->second, w.opcodes[k_responder])
            << "tshark: " << hex_list(to_init->second) << "\nwritten: " << hex_list(w.opcodes[k_responder]);
    }

    // rnic-pcap-check reads the same file the same way.
    const auto report = check::check_pcap_file(file.path(), check::options{}, nullptr);
    ASSERT_TRUE(report.has_value());
    EXPECT_TRUE(report->ok()) << all_issues(*report);
    ASSERT_EQ(report->connections.size(), sc.connections.size());
    for (std::size_t i = 0; i < sc.connections.size(); ++i) {
        const auto& c = report->connections[i];
        const written_connection& w = sc.connections[i];
        EXPECT_EQ(c.directions[check::k_to_responder].opcode_sequence,
                  v.opcodes.at({w.initiator_port, w.responder_port}));
        EXPECT_EQ(c.directions[check::k_to_initiator].opcode_sequence,
                  v.opcodes.at({w.responder_port, w.initiator_port}));
    }
    EXPECT_EQ(run_command(std::string(RNIC_PCAP_CHECK) + " " + file.path()).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Tshark, WiresharkAgrees,
                         ::testing::Values(&all_opcodes_rev1, &enhanced_rev2, &markers_both_ways,
                                           &terminate_after_write, &everything, &two_connections),
                         [](const ::testing::TestParamInfo<scenario (*)()>& p) { return p.param().name; });

// The revision 2 frames are recognised as such (tshark only warns about Rev != 1 and the S bit).
TEST(WiresharkAgreesOn, Revision2Frames) {
    if (!tshark_available()) GTEST_SKIP() << "tshark not installed";
    const scenario sc = enhanced_rev2();
    temp_file file("tshark-rev2.pcap");
    ASSERT_TRUE(sc.capture.write(file.path()));
    const std::string revs =
        run_command(kTshark + file.path() + " -Y \"iwarp_mpa.req || iwarp_mpa.rep\" -T fields -e iwarp_mpa.rev").out;
    EXPECT_EQ(revs, "2\n2\n");
}

// Both tools flag the same damaged FPDU: tshark shows one "Bad CRC32" (it resynchronises on the
// next FPDU, there being no Markers), rnic-pcap-check one bad CRC and exit status 1.
TEST(WiresharkAgreesOn, FlippedBit) {
    if (!tshark_available()) GTEST_SKIP() << "tshark not installed";
    capture cap;
    session s(cap);
    s.handshake();
    s.exchange(request_v1(false, true), reply_v1(false, true));
    messages& m = s.messages(k_initiator);
    s.send(k_initiator, s.fpdu(k_initiator, m.send(opcode::send, pattern(40))));
    bytes bad = s.fpdu(k_initiator, m.send(opcode::send, pattern(40)));
    bad[25] ^= 0x04;
    s.send(k_initiator, bad);
    s.send(k_initiator, s.fpdu(k_initiator, m.send(opcode::send, pattern(40))));
    s.close();
    temp_file file("tshark-flipped.pcap");
    ASSERT_TRUE(cap.write(file.path()));
    const tshark_view v = run_tshark(file.path());
    EXPECT_EQ(count_of(v.verbose, "Bad CRC32"), 1u);
    EXPECT_EQ(count_of(v.verbose, "(Good CRC32)"), 2u);
    const auto report = check::check_pcap_file(file.path(), check::options{}, nullptr);
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->connections.at(0).directions[check::k_to_responder].bad_crcs, 1u);
    EXPECT_EQ(run_command(std::string(RNIC_PCAP_CHECK) + " " + file.path()).exit_code, 1);
}

}  // namespace
}  // namespace rnic::tools_test
