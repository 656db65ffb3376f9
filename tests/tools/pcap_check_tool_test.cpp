// The rnic-pcap-check command: summary output and exit status (0 clean, 1 errors, 2 unreadable)
// on captures written with PcapWriter.
#include <gtest/gtest.h>

#include <fstream>

#include "test_support.h"

namespace rnic::tools_test {
namespace {

using ddp::opcode;

const std::string kTool = RNIC_PCAP_CHECK;

command_result run_tool(const std::string& args, bool with_stderr = false) {
    return run_command(kTool + " " + args, with_stderr);
}

void write_capture(const capture& cap, const temp_file& file) {
    ASSERT_TRUE(cap.write(file.path())) << file.path();
}

class GoodCaptures : public ::testing::TestWithParam<scenario (*)()> {};

TEST_P(GoodCaptures, PassWithTheirCounts) {
    const scenario sc = GetParam()();
    temp_file file(sc.name + ".pcap");
    write_capture(sc.capture, file);
    const command_result r = run_tool(file.path());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("summary: " + std::to_string(sc.connections.size()) + " connection" +
                         (sc.connections.size() == 1 ? "" : "s") + ", " + std::to_string(sc.fpdus()) +
                         " FPDUs, 0 bad CRC, 0 framing errors, 0 header errors, 0 other errors"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(count_of(r.out, "  result: OK"), sc.connections.size()) << r.out;
    for (const written_connection& w : sc.connections) {
        EXPECT_NE(r.out.find("initiator -> responder: " + std::to_string(w.opcodes[k_initiator].size()) + " FPDUs"),
                  std::string::npos)
            << r.out;
        EXPECT_NE(r.out.find("responder -> initiator: " + std::to_string(w.opcodes[k_responder].size()) + " FPDUs"),
                  std::string::npos)
            << r.out;
    }
}

INSTANTIATE_TEST_SUITE_P(Tool, GoodCaptures,
                         ::testing::Values(&all_opcodes_rev1, &enhanced_rev2, &markers_both_ways,
                                           &terminate_after_write, &everything, &two_connections, &tcp_disorder,
                                           &no_handshake_no_crc),
                         [](const ::testing::TestParamInfo<scenario (*)()>& p) { return p.param().name; });

TEST(Tool, PrintsEndpointsMpaAndOpcodes) {
    const scenario sc = markers_both_ways();
    temp_file file("markers.pcap");
    write_capture(sc.capture, file);
    const command_result r = run_tool(file.path());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("connection 1: 10.0.0.1:40000 -> 10.0.0.2:5201"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("MPA revision 1, CRC on, markers initiator->responder on, responder->initiator on"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("Immediate Data (8) 1, Immediate Data with SE (9) 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Terminate frame"), std::string::npos) << r.out;
}

TEST(Tool, VerboseListsEveryFpdu) {
    const scenario sc = all_opcodes_rev1();
    temp_file file("verbose.pcap");
    write_capture(sc.capture, file);
    const command_result r = run_tool("--verbose " + file.path());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(count_of(r.out, " wire bytes, ULPDU "), sc.fpdus()) << r.out;
    EXPECT_NE(r.out.find("tcp: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("RDMA Write (0) L STag 0x00001234 TO 0x1000, 13 payload bytes"), std::string::npos) << r.out;
}

TEST(Tool, FlippedBitFailsWithACrcError) {
    capture cap;
    session s(cap);
    s.handshake();
    s.exchange(request_v1(false, true), reply_v1(false, true));
    bytes f = s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(100)));
    f[50] ^= 0x01;
    s.send(k_initiator, f);
    s.close();
    temp_file file("flipped.pcap");
    write_capture(cap, file);
    const command_result r = run_tool(file.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("errors: 1 bad CRC"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("error [crc] frame 7: CRC mismatch"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("FAILED"), std::string::npos) << r.out;
}

TEST(Tool, MissingSegmentFails) {
    capture cap;
    session s(cap);
    s.handshake();
    s.exchange(request_v1(false, true), reply_v1(false, true));
    s.skip(k_initiator, s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(100))).size());
    s.send(k_initiator, s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(10))));
    s.close();
    temp_file file("gap.pcap");
    write_capture(cap, file);
    const command_result r = run_tool(file.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("error [tcp] missing 124 bytes at seq"), std::string::npos) << r.out;
}

TEST(Tool, RejectedConnectionFails) {
    capture cap;
    session s(cap);
    s.handshake();
    mpa::request_reply rep = reply_v1(false, true);
    rep.reject = true;
    s.exchange(request_v1(false, true), rep);
    s.close();
    temp_file file("reject.pcap");
    write_capture(cap, file);
    const command_result r = run_tool(file.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("connection rejected"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("error [reject]"), std::string::npos) << r.out;
}

TEST(Tool, LenientAcceptsReservedBits) {
    capture cap;
    session s(cap);
    s.handshake();
    mpa::request_reply req = request_v1(false, true);
    req.reserved_bits = 0x08;
    s.exchange(req, reply_v1(false, true));
    bytes u = s.messages(k_initiator).send(opcode::send, pattern(8));
    u[0] |= 0x04;  // DDP Rsvd
    s.send(k_initiator, s.fpdu(k_initiator, u));
    s.close();
    temp_file file("reserved.pcap");
    write_capture(cap, file);
    const command_result strict = run_tool(file.path());
    EXPECT_EQ(strict.exit_code, 1) << strict.out;
    EXPECT_NE(strict.out.find("Res bits 0x8"), std::string::npos) << strict.out;
    EXPECT_NE(strict.out.find("DDP control Rsvd bits"), std::string::npos) << strict.out;
    const command_result lenient = run_tool("--lenient " + file.path());
    EXPECT_EQ(lenient.exit_code, 0) << lenient.out;
}

TEST(Tool, UnreadableFilesExitWithTwo) {
    temp_file missing("does-not-exist.pcap");
    command_result r = run_tool(missing.path(), true);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(missing.path()), std::string::npos) << r.out;

    temp_file garbage("garbage.pcap");
    {
        std::ofstream out(garbage.path(), std::ios::binary);
        out << "this is not a capture file at all";
    }
    r = run_tool(garbage.path(), true);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(garbage.path()), std::string::npos) << r.out;
}

TEST(Tool, UsageErrors) {
    EXPECT_EQ(run_tool("").exit_code, 2);
    EXPECT_EQ(run_tool("--frobnicate x.pcap").exit_code, 2);
    EXPECT_EQ(run_tool("a.pcap b.pcap").exit_code, 2);
    const command_result help = run_tool("--help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("usage: rnic-pcap-check"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace rnic::tools_test
