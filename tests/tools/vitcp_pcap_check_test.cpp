// rnic-pcap-check --framing vitcp (seed 003, draft-dicecco-vitcp-01) on captures the platform
// writes with rnic.framing=vitcp: a clean run with Reads both ways (requests one way, responses the
// other) with and without the CRC option; a flipped payload byte (the trailer CRC); a Read
// Response whose message number names no Read Request and a Send out of sequence (both with a good
// CRC, so only the message rules catch them); a ConnectAccept that raises the RDMA Read Window
// above the ConnectRequest's (§3.3); a segment the capture loses (a hole never filled); a refused
// connection (ConnectReject with its reason: not an error of the capture); and the wrong
// --framing either way; the Urgent Marker (§3.7): a capture whose data segments carry URG on their
// first byte is clean, a pointer one byte off and URG without the other end's option are errors;
// at Reliable Reception (§3.2) every Message ACK names a message the other direction completed.
// Damaged captures are checked with --no-checksum (the damage breaks the TCP
// checksum), and through the library (proto/stream_check_vitcp.h).
#include <gtest/gtest.h>

#include <functional>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "proto/net.h"
#include "proto/pcap.h"
#include "proto/seeds/vitcp.h"
#include "proto/stream_check_vitcp.h"
#include "test_support.h"

namespace rnic::tools_test {
namespace {

namespace vt = proto::vitcp;

void simulate(const std::string& pcap, const std::string& extra = "--set rnic.vitcp.crc=true") {
    simulate_capture("vitcp", pcap,
                     extra +
                         " --set workload.type=read_bw --set 'workload.sizes=[64,4096,20000]' "
                         "--set workload.iterations=20");
}

// Copies `in` to `out` after `edit` changed the first TCP segment that starts with a whole VI
// segment of type `type`; `recrc` recomputes its trailer CRC. Returns the 1-based record changed.
std::size_t damage(const std::string& in, const std::string& out, vt::segment_type type, bool crc,
                   const std::function<void(std::uint8_t* seg, std::size_t len)>& edit, bool recrc,
                   std::size_t skip = 0) {
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
        const auto v = vt::parse(seg, p->payload_len, crc, nullptr);
        if (!v || v->header.type != type) continue;
        if (skip > 0) {
            --skip;
            continue;
        }
        edit(seg, v->wire_length);
        if (recrc && v->crc_present) {
            const std::size_t covered = v->wire_length - vt::kTrailerSize;
            proto::put_le32(seg + covered, proto::crc_db710641(seg, covered));
        }
        hit = i + 1;
    }
    EXPECT_NE(hit, 0u) << "no " << vt::to_string(type) << " segment in " << in;
    write_capture_file(out, *records);
    return hit;
}

check::vi_tcp_capture_report check_lib(const std::string& path, bool checksums) {
    std::string error;
    auto records = proto::read_pcap(path, &error);
    EXPECT_TRUE(records) << error;
    return records ? check::check_vitcp_capture(*records, checksums) : check::vi_tcp_capture_report{};
}

TEST(ViTcpPcapCheck, PlatformCapturesAreClean) {
    for (const char* crc : {"true", "false"}) {
        temp_file pcap(std::string("vitcp-clean-") + crc + ".pcap");
        ASSERT_NO_FATAL_FAILURE(simulate(pcap.path(), std::string("--set rnic.vitcp.crc=") + crc));
        const command_result r = run_pcap_check("--verbose --framing vitcp " + pcap.path());
        EXPECT_EQ(r.exit_code, 0) << r.out;
        EXPECT_NE(r.out.find(std::string("ConnectRequest -> ConnectAccept: reliable delivery, MTU 1048576, RDMA Read "
                                         "Window 16, CRC ") +
                             (std::string(crc) == "true" ? "on" : "off")),
                  std::string::npos)
            << r.out;
        const check::vi_tcp_capture_report rep = check_lib(pcap.path(), true);
        ASSERT_EQ(rep.connections.size(), 1u);
        EXPECT_EQ(rep.error_count(), 0u) << r.out;
        const auto& c = rep.connections[0];
        EXPECT_TRUE(c.connected);
        EXPECT_EQ(c.dir[0].by_type.at("RdmaReadRequest"), 60u);
        EXPECT_GE(c.dir[1].by_type.at("RdmaReadResponse"), 60u);
        EXPECT_EQ(c.dir[1].payload_bytes, 20u * (64 + 4096 + 20000));
        EXPECT_EQ(c.dir[0].unchecked_bytes + c.dir[1].unchecked_bytes, 0u);
    }
}

TEST(ViTcpPcapCheck, FlippedPayloadByteIsACrcError) {
    temp_file pcap("vitcp-payload-src.pcap"), bad("vitcp-payload-bad.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate(pcap.path()));
    ASSERT_NE(damage(
                  pcap.path(), bad.path(), vt::segment_type::read_response, true,
                  [](std::uint8_t* seg, std::size_t len) { seg[len - 10] ^= 0x20; }, false),
              0u);
    const command_result r = run_pcap_check("--no-checksum --framing vitcp " + bad.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("passive -> active: VI segment at stream byte "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("crc_mismatch"), std::string::npos) << r.out;
    const check::vi_tcp_capture_report rep = check_lib(bad.path(), false);
    ASSERT_EQ(rep.connections.size(), 1u);
    EXPECT_EQ(rep.connections[0].crc_errors.size(), 1u);
    EXPECT_GT(rep.connections[0].dir[1].unchecked_bytes, 0u);  // the direction is not checked further
    // Without --no-checksum the damaged frame is refused by its TCP checksum, named by number.
    const command_result strict = run_pcap_check("--framing vitcp " + bad.path());
    EXPECT_EQ(strict.exit_code, 1) << strict.out;
    EXPECT_NE(strict.out.find("--no-checksum"), std::string::npos) << strict.out;
}

TEST(ViTcpPcapCheck, MessageOrderIsHeldWithGoodCrcs) {
    temp_file pcap("vitcp-num-src.pcap"), bad("vitcp-num-bad.pcap"), bad2("vitcp-off-bad.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate(pcap.path()));
    // A Read Response whose Message Number (bytes 12-15) names no Read Request (§3.2).
    ASSERT_NE(damage(
                  pcap.path(), bad.path(), vt::segment_type::read_response, true,
                  [](std::uint8_t* seg, std::size_t) { seg[15] ^= 0x40; }, true),
              0u);
    check::vi_tcp_capture_report rep = check_lib(bad.path(), false);
    ASSERT_EQ(rep.connections.size(), 1u);
    ASSERT_EQ(rep.connections[0].errors.size(), 1u);
    EXPECT_NE(rep.connections[0].errors[0].find("answers none of our outstanding RdmaReadRequests"), std::string::npos)
        << rep.connections[0].errors[0];
    EXPECT_TRUE(rep.connections[0].crc_errors.empty());
    // A Read Request with a Data Offset (bytes 4-7): a single-segment message (§3.2).
    ASSERT_NE(damage(
                  pcap.path(), bad2.path(), vt::segment_type::read_request, true,
                  [](std::uint8_t* seg, std::size_t) { seg[7] = 8; }, true, 3),
              0u);
    rep = check_lib(bad2.path(), false);
    ASSERT_EQ(rep.connections.size(), 1u);
    ASSERT_FALSE(rep.connections[0].errors.empty());
    EXPECT_NE(rep.connections[0].errors[0].find("active -> passive"), std::string::npos)
        << rep.connections[0].errors[0];
    EXPECT_NE(rep.connections[0].errors[0].find("Data Offset"), std::string::npos) << rep.connections[0].errors[0];
}

TEST(ViTcpPcapCheck, AnAcceptRaisingTheReadWindowIsACeError) {
    temp_file pcap("vitcp-ce-src.pcap"), bad("vitcp-ce-bad.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate(pcap.path()));
    // RDMA Read Window: CE header bytes 72-73, after the 24-byte segment header.
    ASSERT_NE(damage(
                  pcap.path(), bad.path(), vt::segment_type::connect_accept, true,
                  [](std::uint8_t* seg, std::size_t) { proto::put_be16(seg + 24 + 72, 0x100); }, true),
              0u);
    const command_result r = run_pcap_check("--no-checksum --framing vitcp " + bad.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("ConnectAccept does not fit the ConnectRequest: ConnectAccept RDMA Read Window 256 above "
                         "the proposed 16"),
              std::string::npos)
        << r.out;
}

TEST(ViTcpPcapCheck, ASegmentTheCaptureLostIsAHole) {
    temp_file pcap("vitcp-hole-src.pcap"), cut("vitcp-hole-cut.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate(pcap.path()));
    std::string error;
    auto records = proto::read_pcap(pcap.path(), &error);
    ASSERT_TRUE(records) << error;
    // Drop the first Read Response frame (no loss in the run, so nothing fills the hole).
    for (std::size_t i = 0; i < records->size(); ++i) {
        const auto& f = (*records)[i].data;
        const auto p = net::parse_tcp_frame(f.data(), f.size(), nullptr);
        if (!p || p->payload_len == 0) continue;
        const auto v = vt::parse(f.data() + p->payload_offset, p->payload_len, true, nullptr);
        if (v && v->header.type == vt::segment_type::read_response) {
            records->erase(records->begin() + static_cast<std::ptrdiff_t>(i));
            break;
        }
    }
    write_capture_file(cut.path(), *records);
    const command_result r = run_pcap_check("--framing vitcp " + cut.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("passive -> active: a hole at stream byte "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("that the capture never fills"), std::string::npos) << r.out;
}

TEST(ViTcpPcapCheck, ARefusedConnectionShowsItsReason) {
    temp_file pcap("vitcp-reject.pcap");
    // The run fails (the connect is refused), so it is started by hand rather than by simulate_capture.
    const std::string cmd = "cd " + shell_quote(RNIC_SOURCE_DIR) + " && " + shell_quote(RNIC_SIM) +
                            " --set rnic.framing=vitcp --set hosts.1.vitcp_reliability=unreliable --set "
                            "workload.iterations=2 --log off --pcap " +
                            shell_quote(pcap.path());
    const command_result sim = run_command(cmd, true);
    ASSERT_EQ(sim.exit_code, 1) << sim.out;
    const command_result r = run_pcap_check("--framing vitcp " + pcap.path());
    EXPECT_EQ(r.exit_code, 0) << r.out;  // a refusal is the protocol working, not a broken capture
    EXPECT_NE(r.out.find("ConnectRequest -> ConnectReject (IS Error Code 2: reliability levels differ"),
              std::string::npos)
        << r.out;
}

// Copies `in` to `out` after `edit` changed the TCP header (flags byte, urgent pointer) of the
// `nth` data frame after the CE exchange; returns the 1-based record changed.
std::size_t edit_tcp(const std::string& in, const std::string& out, std::size_t nth,
                     const std::function<void(std::uint8_t* tcp_header)>& edit) {
    std::string error;
    auto records = proto::read_pcap(in, &error);
    EXPECT_TRUE(records) << error;
    if (!records) return 0;
    std::size_t data_frames = 0;
    for (std::size_t i = 0; i < records->size(); ++i) {
        std::vector<std::uint8_t>& f = (*records)[i].data;
        const auto p = net::parse_tcp_frame(f.data(), f.size(), nullptr);
        if (!p || p->payload_len == 0) continue;
        const auto v = vt::parse(f.data() + p->payload_offset, p->payload_len, false, nullptr);
        if (!v || vt::has_ce_header(v->header.type) || data_frames++ != nth) continue;
        edit(f.data() + 14 + (f[14] & 0x0F) * 4u);  // Ethernet, then IPv4's IHL
        write_capture_file(out, *records);
        return i + 1;
    }
    ADD_FAILURE() << "fewer than " << nth + 1 << " data frames in " << in;
    return 0;
}

TEST(ViTcpPcapCheck, UrgentMarksOnSegmentStartsAreClean) {
    temp_file pcap("vitcp-urgent-clean.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate(pcap.path(),
                                     "--set rnic.vitcp.urgent_marker=true --set rnic.rx_path=urgent "
                                     "--set link.a_to_b.loss=0.01 --set link.b_to_a.loss=0.01"));
    const command_result r = run_pcap_check("--framing vitcp " + pcap.path());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("Urgent Marker offered"), std::string::npos) << r.out;
    const check::vi_tcp_capture_report rep = check_lib(pcap.path(), true);
    ASSERT_EQ(rep.connections.size(), 1u);
    // 20 x 3 Read Requests one way; every response segment the other (each VI segment once).
    EXPECT_EQ(rep.connections[0].dir[0].segments, 60u);
    EXPECT_EQ(rep.connections[0].dir[0].urgent_marks, 60u);
    EXPECT_EQ(rep.connections[0].dir[1].urgent_marks, rep.connections[0].dir[1].segments);
}

TEST(ViTcpPcapCheck, AnUrgentPointerOffByOneIsAnError) {
    temp_file pcap("vitcp-urgent-src.pcap"), bad("vitcp-urgent-bad.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate(pcap.path(), "--set rnic.vitcp.urgent_marker=true --set rnic.rx_path=urgent"));
    // RFC 9293 §3.1's reading (the byte after the urgent data) instead of the seed's (§3.7: the
    // urgent byte itself): the pointer moves one past the segment's first byte.
    const std::size_t frame = edit_tcp(pcap.path(), bad.path(), 3, [](std::uint8_t* tcp) {
        EXPECT_NE(tcp[13] & 0x20, 0);
        tcp[19] = static_cast<std::uint8_t>(tcp[19] + 1);
    });
    ASSERT_NE(frame, 0u);
    const command_result r = run_pcap_check("--no-checksum --framing vitcp " + bad.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("frame " + std::to_string(frame) + ": URG with the urgent pointer at stream byte "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("which is not the first byte of a VI segment (§3.7)"), std::string::npos) << r.out;
}

TEST(ViTcpPcapCheck, UrgentDataWithoutTheOtherEndsOptionIsAnError) {
    temp_file pcap("vitcp-urgent-none-src.pcap"), bad("vitcp-urgent-none-bad.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate(pcap.path(), "--set rnic.vitcp.crc=false"));
    const std::size_t frame = edit_tcp(pcap.path(), bad.path(), 0, [](std::uint8_t* tcp) {
        tcp[13] |= 0x20;  // URG, pointer 0: the first byte of the segment, but no option was received
        tcp[18] = tcp[19] = 0;
    });
    ASSERT_NE(frame, 0u);
    const command_result r = run_pcap_check("--no-checksum --framing vitcp " + bad.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("did not carry the Urgent Marker option (§3.7)"), std::string::npos) << r.out;
}

// Reliable Reception (§3.2): Reads one way (the Read Responses carry the Message ACKs of the Read
// Requests) and Writes the other (the receiver's NOPs carry them) are clean; a Message ACK naming
// a message that was never sent is an error, in either kind of segment.
TEST(ViTcpPcapCheck, ReliableReceptionMessageAcksNameCompletedMessages) {
    const std::string rr = "--set rnic.vitcp.crc=true --set rnic.vitcp.reliability=reliable_reception";
    temp_file reads("vitcp-rr-reads.pcap"), writes("vitcp-rr-writes.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate(reads.path(), rr));
    ASSERT_NO_FATAL_FAILURE(simulate_capture("vitcp", writes.path(),
                                             rr + " --set workload.type=write_bw --set 'workload.sizes=[64,4096]' "
                                                  "--set workload.iterations=20"));
    for (const std::string& path : {reads.path(), writes.path()}) {
        const command_result r = run_pcap_check("--verbose --framing vitcp " + path);
        EXPECT_EQ(r.exit_code, 0) << r.out;
        EXPECT_NE(r.out.find("ConnectRequest -> ConnectAccept: reliable reception"), std::string::npos) << r.out;
    }
    const check::vi_tcp_capture_report clean = check_lib(writes.path(), true);
    ASSERT_EQ(clean.connections.size(), 1u);
    EXPECT_GT(clean.connections[0].dir[1].by_type.count("NOP"), 0u) << "the Write receiver's Message ACKs ride in NOPs";
    // Message ACK: segment header bytes 16-19.
    const auto never_sent = [](std::uint8_t* seg, std::size_t) { seg[16] ^= 0x80; };
    for (const auto& [in, type] :
         {std::pair{reads.path(), vt::segment_type::read_response}, std::pair{writes.path(), vt::segment_type::nop}}) {
        temp_file bad("vitcp-rr-bad.pcap");
        ASSERT_NE(damage(in, bad.path(), type, true, never_sent, true), 0u);
        const check::vi_tcp_capture_report rep = check_lib(bad.path(), false);
        ASSERT_EQ(rep.connections.size(), 1u);
        ASSERT_EQ(rep.connections[0].errors.size(), 1u) << vt::to_string(type);
        EXPECT_NE(rep.connections[0].errors[0].find("passive -> active"), std::string::npos)
            << rep.connections[0].errors[0];
        EXPECT_NE(rep.connections[0].errors[0].find("names no message the other direction had completed"),
                  std::string::npos)
            << rep.connections[0].errors[0];
        EXPECT_TRUE(rep.connections[0].crc_errors.empty());
    }
}

TEST(ViTcpPcapCheck, WrongFramingEitherWayFails) {
    temp_file vi("vitcp-as-mpa.pcap"), mpa("mpa-as-vitcp.pcap");
    ASSERT_NO_FATAL_FAILURE(simulate(vi.path()));
    ASSERT_NO_FATAL_FAILURE(simulate_capture("mpa", mpa.path(), "--set workload.iterations=2"));
    command_result r = run_pcap_check(vi.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    r = run_pcap_check("--framing vitcp " + mpa.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("not a VI/TCP ConnectRequest"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("try --framing mpa"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace rnic::tools_test
