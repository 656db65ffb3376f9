// The rnic-pcap-check command: summary output and exit status (0 clean, 1 errors, 2 unreadable)
// on captures written with PcapWriter.
#include <gtest/gtest.h>

#include <fstream>

#include "test_support.h"

namespace rnic::tools_test {
namespace {

using ddp::Opcode;

const std::string kTool = RNIC_PCAP_CHECK;

CommandResult run_tool(const std::string& args, bool with_stderr = false) {
    return run_command(kTool + " " + args, with_stderr);
}

void write_capture(const Capture& cap, const TempFile& file) { ASSERT_TRUE(cap.write(file.path())) << file.path(); }

class GoodCaptures : public ::testing::TestWithParam<Scenario (*)()> {};

TEST_P(GoodCaptures, PassWithTheirCounts) {
    const Scenario sc = GetParam()();
    TempFile file(sc.name + ".pcap");
    write_capture(sc.capture, file);
    const CommandResult r = run_tool(file.path());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("summary: " + std::to_string(sc.connections.size()) + " connection" +
                         (sc.connections.size() == 1 ? "" : "s") + ", " + std::to_string(sc.fpdus()) +
                         " FPDUs, 0 bad CRC, 0 framing errors, 0 header errors, 0 other errors"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(count_of(r.out, "  result: OK"), sc.connections.size()) << r.out;
    for (const WrittenConnection& w : sc.connections) {
        EXPECT_NE(r.out.find("initiator -> responder: " + std::to_string(w.opcodes[kInitiator].size()) + " FPDUs"),
                  std::string::npos)
            << r.out;
        EXPECT_NE(r.out.find("responder -> initiator: " + std::to_string(w.opcodes[kResponder].size()) + " FPDUs"),
                  std::string::npos)
            << r.out;
    }
}

INSTANTIATE_TEST_SUITE_P(Tool, GoodCaptures,
                         ::testing::Values(&all_opcodes_rev1, &enhanced_rev2, &markers_both_ways, &terminate_after_write,
                                           &everything, &two_connections, &tcp_disorder, &no_handshake_no_crc),
                         [](const ::testing::TestParamInfo<Scenario (*)()>& p) { return p.param().name; });

TEST(Tool, PrintsEndpointsMpaAndOpcodes) {
    const Scenario sc = markers_both_ways();
    TempFile file("markers.pcap");
    write_capture(sc.capture, file);
    const CommandResult r = run_tool(file.path());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("connection 1: 10.0.0.1:40000 -> 10.0.0.2:5201"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("MPA revision 1, CRC on, markers initiator->responder on, responder->initiator on"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("Immediate Data (8) 1, Immediate Data with SE (9) 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Terminate frame"), std::string::npos) << r.out;
}

TEST(Tool, VerboseListsEveryFpdu) {
    const Scenario sc = all_opcodes_rev1();
    TempFile file("verbose.pcap");
    write_capture(sc.capture, file);
    const CommandResult r = run_tool("--verbose " + file.path());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(count_of(r.out, " wire bytes, ULPDU "), sc.fpdus()) << r.out;
    EXPECT_NE(r.out.find("tcp: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("RDMA Write (0) L STag 0x00001234 TO 0x1000, 13 payload bytes"), std::string::npos) << r.out;
}

TEST(Tool, FlippedBitFailsWithACrcError) {
    Capture cap;
    Session s(cap);
    s.handshake();
    s.exchange(request_v1(false, true), reply_v1(false, true));
    Bytes f = s.fpdu(kInitiator, s.messages(kInitiator).send(Opcode::send, pattern(100)));
    f[50] ^= 0x01;
    s.send(kInitiator, f);
    s.close();
    TempFile file("flipped.pcap");
    write_capture(cap, file);
    const CommandResult r = run_tool(file.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("errors: 1 bad CRC"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("error [crc] frame 7: CRC mismatch"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("FAILED"), std::string::npos) << r.out;
}

TEST(Tool, MissingSegmentFails) {
    Capture cap;
    Session s(cap);
    s.handshake();
    s.exchange(request_v1(false, true), reply_v1(false, true));
    s.skip(kInitiator, s.fpdu(kInitiator, s.messages(kInitiator).send(Opcode::send, pattern(100))).size());
    s.send(kInitiator, s.fpdu(kInitiator, s.messages(kInitiator).send(Opcode::send, pattern(10))));
    s.close();
    TempFile file("gap.pcap");
    write_capture(cap, file);
    const CommandResult r = run_tool(file.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("error [tcp] missing 124 bytes at seq"), std::string::npos) << r.out;
}

TEST(Tool, RejectedConnectionFails) {
    Capture cap;
    Session s(cap);
    s.handshake();
    mpa::RequestReply rep = reply_v1(false, true);
    rep.reject = true;
    s.exchange(request_v1(false, true), rep);
    s.close();
    TempFile file("reject.pcap");
    write_capture(cap, file);
    const CommandResult r = run_tool(file.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("connection rejected"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("error [reject]"), std::string::npos) << r.out;
}

TEST(Tool, LenientAcceptsReservedBits) {
    Capture cap;
    Session s(cap);
    s.handshake();
    mpa::RequestReply req = request_v1(false, true);
    req.reserved_bits = 0x08;
    s.exchange(req, reply_v1(false, true));
    Bytes u = s.messages(kInitiator).send(Opcode::send, pattern(8));
    u[0] |= 0x04;  // DDP Rsvd
    s.send(kInitiator, s.fpdu(kInitiator, u));
    s.close();
    TempFile file("reserved.pcap");
    write_capture(cap, file);
    const CommandResult strict = run_tool(file.path());
    EXPECT_EQ(strict.exit_code, 1) << strict.out;
    EXPECT_NE(strict.out.find("Res bits 0x8"), std::string::npos) << strict.out;
    EXPECT_NE(strict.out.find("DDP control Rsvd bits"), std::string::npos) << strict.out;
    const CommandResult lenient = run_tool("--lenient " + file.path());
    EXPECT_EQ(lenient.exit_code, 0) << lenient.out;
}

TEST(Tool, UnreadableFilesExitWithTwo) {
    TempFile missing("does-not-exist.pcap");
    CommandResult r = run_tool(missing.path(), true);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(missing.path()), std::string::npos) << r.out;

    TempFile garbage("garbage.pcap");
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
    const CommandResult help = run_tool("--help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("usage: rnic-pcap-check"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace rnic::tools_test
