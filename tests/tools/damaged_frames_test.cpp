// rnic-pcap-check on damaged frames and on empty or rule-breaking captures (issue 19, item 6):
// a bad IPv4 header checksum is treated like a bad TCP checksum (a warning: the frame is dropped as
// a receiver drops it), a damaged frame never opens a connection, an out-of-range MSN is an error,
// and a capture without a single frame is an error.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "test_support.h"

namespace rnic::tools_test {
namespace {

using ddp::opcode;

// A good conversation whose data frame (the Send) is followed by a damaged copy of itself.
capture with_damaged_copy(const std::function<void(bytes&)>& damage) {
    capture cap;
    session s(cap);
    s.handshake();
    s.exchange(request_v1(false, true), reply_v1(false, true));
    s.send(k_initiator, s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(100))), false);
    bytes copy = cap.frames.back().data;
    damage(copy);
    cap.add(copy);
    s.ack(k_responder);
    s.close();
    return cap;
}

constexpr std::size_t kIp = 14, kTcp = 14 + 20;

TEST(DamagedFrames, BadIpv4HeaderChecksumIsAWarningLikeABadTcpChecksum) {
    const auto r = check_capture(with_damaged_copy([](bytes& f) { f[kIp + 8] ^= 0x01; }));  // TTL
    EXPECT_TRUE(r.ok()) << all_issues(r);
    EXPECT_EQ(r.capture_errors, 0u);
    EXPECT_EQ(r.warnings(), 1u) << all_issues(r);
    EXPECT_TRUE(has_issue(r, check::category::tcp, "IPv4 header checksum", check::severity::warning)) << all_issues(r);
    ASSERT_EQ(r.connections.size(), 1u);
    EXPECT_EQ(r.connections[0].warnings(), 1u);  // charged to the connection its 4-tuple names
}

TEST(DamagedFrames, CorruptedPortOpensNoPhantomConnection) {
    // The source port's low bit flipped: the TCP checksum fails, the 4-tuple names no connection.
    const auto r = check_capture(with_damaged_copy([](bytes& f) { f[kTcp + 1] ^= 0x01; }));
    EXPECT_TRUE(r.ok()) << all_issues(r);
    EXPECT_EQ(r.connections.size(), 1u) << all_issues(r);
    EXPECT_EQ(r.damaged_frames, 1u);
    EXPECT_TRUE(has_issue(r, check::category::capture, "matches no connection", check::severity::warning))
        << all_issues(r);
}

TEST(DamagedFrames, CorruptedAddressOpensNoPhantomConnection) {
    // The IPv4 source address damaged: both checksums fail.
    const auto r = check_capture(with_damaged_copy([](bytes& f) { f[kIp + 13] ^= 0x40; }));
    EXPECT_TRUE(r.ok()) << all_issues(r);
    EXPECT_EQ(r.connections.size(), 1u) << all_issues(r);
    EXPECT_EQ(r.damaged_frames, 1u);
}

TEST(DamagedFrames, DamagedSynOpensNoConnectionEither) {
    capture cap;
    session s(cap);
    s.handshake();
    bytes syn = cap.frames.front().data;
    syn[kTcp + 3] ^= 0x10;  // destination port
    cap.add(syn);
    s.exchange(request_v1(false, true), reply_v1(false, true));
    s.close();
    const auto r = check_capture(cap);
    EXPECT_TRUE(r.ok()) << all_issues(r);
    EXPECT_EQ(r.connections.size(), 1u) << all_issues(r);
}

TEST(DamagedFrames, UnparsableFrameWithAGoodIpChecksumIsStillAnError) {
    // IPv4 total length beyond the frame, the header checksum recomputed: no checksum explains it.
    capture cap = with_damaged_copy([](bytes& f) {
        f[kIp + 2] = 0x3f;
        f[kIp + 10] = f[kIp + 11] = 0;
        const std::uint16_t sum = net::internet_checksum(f.data() + kIp, 20);
        f[kIp + 10] = static_cast<std::uint8_t>(sum >> 8);
        f[kIp + 11] = static_cast<std::uint8_t>(sum);
    });
    const auto r = check_capture(cap);
    EXPECT_EQ(r.capture_errors, 1u) << all_issues(r);
    EXPECT_FALSE(r.ok());
}

TEST(DamagedFrames, CaptureWithoutFramesIsAnError) {
    capture cap;
    const auto r = check_capture(cap);
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(has_issue(r, check::category::capture, "no frame at all")) << all_issues(r);
    temp_file file("empty.pcap");
    ASSERT_TRUE(cap.write(file.path()));
    const command_result t = run_command(std::string(RNIC_PCAP_CHECK) + " " + file.path());
    EXPECT_EQ(t.exit_code, 1) << t.out;
    EXPECT_NE(t.out.find("the capture holds no frame at all"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("FAILED"), std::string::npos) << t.out;
}

TEST(DamagedFrames, SendWithAnMsnOutOfRangeIsAnError) {
    capture cap;
    session s(cap);
    s.handshake();
    s.exchange(request_v1(false, true), reply_v1(false, true));
    s.send(k_initiator, s.fpdu(k_initiator, s.messages(k_initiator).send(opcode::send, pattern(16))));
    s.send(k_initiator, s.fpdu(k_initiator, messages::untagged(opcode::send, 0, 5, 0, true, pattern(16))));
    s.close();
    const auto r = check_capture(cap);
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(has_issue(r, check::category::header, "MSN 5 on QN 0")) << all_issues(r);
}

// The platform's own capture of platform/scenarios/mixed.json (1% corruption each way, caught by
// the checksums and recovered by retransmission) passes, with the damaged frames as warnings and
// only the workload's four connections.
TEST(DamagedFrames, MixedScenarioCapturePasses) {
    temp_file pcap("mixed-scenario.pcap");
    const command_result sim =
        run_command(std::string(RNIC_SIM) + " --scenario " + RNIC_SOURCE_DIR +
                    "/platform/scenarios/mixed.json --log off --pcap " + pcap.path() + " >/dev/null");
    ASSERT_EQ(sim.exit_code, 0) << sim.out;
    const command_result t = run_command(std::string(RNIC_PCAP_CHECK) + " " + pcap.path());
    EXPECT_EQ(t.exit_code, 0) << t.out;
    EXPECT_NE(t.out.find("summary: 4 connections"), std::string::npos) << t.out.substr(t.out.rfind("summary"));
    EXPECT_EQ(count_of(t.out, "error ["), 0u);
    EXPECT_GT(count_of(t.out, "warning [capture]") + count_of(t.out, "warning [tcp]"), 0u);
}

}  // namespace
}  // namespace rnic::tools_test
