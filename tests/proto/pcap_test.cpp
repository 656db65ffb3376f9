// Classic pcap writer/reader, and an end-to-end check that Wireshark's iWARP dissectors
// (tshark) decode our MPA Request/Reply and FPDUs with good CRCs (wireshark-iwarp.md).
#include "proto/pcap.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <unistd.h>

#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"
#include "proto/net.h"
#include "test_util.h"

namespace rnic::proto {
namespace {

std::string temp_path(const std::string& name) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return ::testing::TempDir() + "rnic_proto_" + info->name() + "_" + std::to_string(::getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(Pcap, WriteThenReadBack) {
    const std::string path = temp_path("rt.pcap");
    std::mt19937_64 rng(1);
    std::vector<std::vector<std::uint8_t>> frames = {test::random_bytes(rng, 60), test::random_bytes(rng, 1514), {}};
    const std::uint64_t times[] = {0, 1'234'567'891ull, 5'000'000'000'123ull};
    {
        pcap_writer w;
        EXPECT_FALSE(w.is_open());
        std::string error;
        ASSERT_TRUE(w.open(path, &error)) << error;
        EXPECT_TRUE(w.is_open());
        for (std::size_t i = 0; i < frames.size(); ++i) w.write(times[i], frames[i].data(), frames[i].size());
        EXPECT_EQ(w.records(), 3u);
        EXPECT_TRUE(w.good());
    }  // destructor closes
    const auto bytes = read_file(path);
    ASSERT_GE(bytes.size(), 24u);
    EXPECT_EQ(get_le32(bytes.data()), 0xa1b23c4du);
    EXPECT_EQ(get_le32(bytes.data() + 16), 262144u);
    EXPECT_EQ(get_le32(bytes.data() + 20), 1u);
    std::string error;
    const auto records = read_pcap(path, &error);
    ASSERT_TRUE(records) << error;
    ASSERT_EQ(records->size(), frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
        EXPECT_EQ((*records)[i].time_ns, times[i]);
        EXPECT_EQ((*records)[i].data, frames[i]);
        EXPECT_EQ((*records)[i].original_length, frames[i].size());
    }
    std::remove(path.c_str());
}

// Frames of one picosecond from several capture points come out ordered by capture point, whatever
// the order they were written in; frames of one point keep their order; times stay in order.
TEST(Pcap, SamePicosecondFramesAreOrderedBySource) {
    const std::string path = temp_path("order.pcap");
    auto frame = [](std::uint8_t tag) { return std::vector<std::uint8_t>(60, tag); };
    {
        pcap_writer w;
        ASSERT_TRUE(w.open(path, nullptr));
        const unsigned a = w.add_source(), b = w.add_source();
        EXPECT_EQ(a, 0u);
        EXPECT_EQ(b, 1u);
        const auto f1 = frame(1), f2 = frame(2), f3 = frame(3), f4 = frame(4), f5 = frame(5);
        w.write_at(1'000'500, b, f1.data(), f1.size());
        w.write_at(1'000'500, a, f2.data(), f2.size());
        w.write_at(1'000'500, b, f3.data(), f3.size());
        w.write_at(1'000'501, b, f4.data(), f4.size());  // same nanosecond, a later picosecond
        w.write_at(1'000'501, a, f5.data(), f5.size());
        EXPECT_EQ(w.records(), 3u);  // the first picosecond's frames are out; the last is held
    }                                // closing writes the held frames
    std::string error;
    const auto recs = read_pcap(path, &error);
    ASSERT_TRUE(recs.has_value()) << error;
    ASSERT_EQ(recs->size(), 5u);
    const std::uint8_t expected[] = {2, 1, 3, 5, 4};
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ((*recs)[i].data.at(0), expected[i]) << "record " << i;
        EXPECT_EQ((*recs)[i].time_ns, 1000u) << "record " << i;
    }
    std::remove(path.c_str());
}

TEST(Pcap, OversizedFrameIsCutToSnaplen) {
    const std::string path = temp_path("big.pcap");
    std::vector<std::uint8_t> big(kPcapSnaplen + 10, 0xAB);
    pcap_writer w;
    ASSERT_TRUE(w.open(path, nullptr));
    w.write(1, big.data(), big.size());
    w.close();
    EXPECT_FALSE(w.is_open());
    w.write(2, big.data(), 1);  // ignored when closed
    const auto records = read_pcap(path, nullptr);
    ASSERT_TRUE(records);
    ASSERT_EQ(records->size(), 1u);
    EXPECT_EQ((*records)[0].data.size(), kPcapSnaplen);
    EXPECT_EQ((*records)[0].original_length, big.size());
    std::remove(path.c_str());
}

TEST(Pcap, ReadsBigEndianMicrosecondFiles) {
    const std::string path = temp_path("be.pcap");
    std::vector<std::uint8_t> f(24 + 16 + 3, 0);
    put_be32(f.data(), kPcapMagicMicroseconds);
    put_be16(f.data() + 4, 2);
    put_be16(f.data() + 6, 4);
    put_be32(f.data() + 16, 65535);
    put_be32(f.data() + 20, 1);
    put_be32(f.data() + 24, 7);       // seconds
    put_be32(f.data() + 28, 250000);  // microseconds
    put_be32(f.data() + 32, 3);
    put_be32(f.data() + 36, 3);
    f[40] = 1;
    f[41] = 2;
    f[42] = 3;
    write_file(path, f);
    std::string error;
    const auto records = read_pcap(path, &error);
    ASSERT_TRUE(records) << error;
    ASSERT_EQ(records->size(), 1u);
    EXPECT_EQ((*records)[0].time_ns, 7'250'000'000ull);
    EXPECT_EQ((*records)[0].data, (std::vector<std::uint8_t>{1, 2, 3}));
    std::remove(path.c_str());
}

void expect_read_error(const std::string& path, const std::string& text) {
    std::string error;
    EXPECT_FALSE(read_pcap(path, &error));
    EXPECT_NE(error.find(path), std::string::npos) << error;
    EXPECT_NE(error.find(text), std::string::npos) << error;
}

TEST(Pcap, ReadErrors) {
    expect_read_error(temp_path("missing.pcap"), "No such file");

    const std::string path = temp_path("bad.pcap");
    write_file(path, std::vector<std::uint8_t>(10, 0xa1));
    expect_read_error(path, "truncated pcap file header");

    write_file(path, std::vector<std::uint8_t>(24, 0x11));
    expect_read_error(path, "not a pcap file (magic 0x11111111)");

    std::vector<std::uint8_t> ng(28, 0);
    put_le32(ng.data(), 0x0A0D0D0A);
    write_file(path, ng);
    expect_read_error(path, "pcapng");

    {
        pcap_writer w;
        ASSERT_TRUE(w.open(path, nullptr));
        const std::uint8_t frame[100] = {};
        w.write(0, frame, sizeof frame);
    }
    auto good = read_file(path);
    write_file(path, std::vector<std::uint8_t>(good.begin(), good.end() - 1));
    expect_read_error(path, "record 1 at offset 24: truncated record data (99 of 100 bytes)");
    write_file(path, std::vector<std::uint8_t>(good.begin(), good.begin() + 30));
    expect_read_error(path, "truncated record header");
    std::remove(path.c_str());
}

TEST(Pcap, OpenErrorNamesPathAndReason) {
    pcap_writer w;
    std::string error;
    const std::string path = "/nonexistent-dir-for-rnic-test/x.pcap";
    EXPECT_FALSE(w.open(path, &error));
    EXPECT_FALSE(w.is_open());
    EXPECT_NE(error.find(path), std::string::npos) << error;
    EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

// ---------------------------------------------------------------------------------------------
// tshark end to end

bool have_tshark() {
    return std::system("command -v tshark >/dev/null 2>&1") == 0;
}

std::string run(const std::string& command) {
    std::string out;
    FILE* p = ::popen(command.c_str(), "r");
    if (p == nullptr) return out;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) != 0) out.append(buf, n);
    ::pclose(p);
    return out;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// One TCP connection between 10.0.0.1:40000 (initiator) and 10.0.0.2:5201 (responder),
// written as a capture with consistent sequence numbers.
class capture {
public:
    explicit capture(const std::string& path) { EXPECT_TRUE(writer_.open(path, nullptr)); }

    void handshake() {
        send(true, {}, net::tcp_flags::kSyn);
        send(false, {}, net::tcp_flags::kSyn | net::tcp_flags::kAck);
        send(true, {}, net::tcp_flags::kAck);
    }

    // Returns the TCP sequence number of the payload's first byte.
    std::uint32_t send(bool from_initiator, const std::vector<std::uint8_t>& payload,
                       std::uint8_t flags = net::tcp_flags::kAck | net::tcp_flags::kPsh) {
        side& me = from_initiator ? initiator_ : responder_;
        side& peer = from_initiator ? responder_ : initiator_;
        net::endpoints ep;
        ep.src_mac = me.mac;
        ep.dst_mac = peer.mac;
        ep.src_ip = me.ip;
        ep.dst_ip = peer.ip;
        net::tcp_header tcp;
        tcp.src_port = me.port;
        tcp.dst_port = peer.port;
        tcp.seq = me.next_seq;
        tcp.ack = (flags & net::tcp_flags::kAck) != 0 ? peer.next_seq : 0;
        tcp.flags = flags;
        tcp.window = 65535;
        if ((flags & net::tcp_flags::kSyn) != 0) tcp.mss = 1460;
        std::vector<std::uint8_t> frame;
        net::ipv4_header ip;
        ip.identification = ++ip_id_;
        net::build_tcp_frame(ep, ip, tcp, payload.data(), payload.size(), frame);
        writer_.write(time_ns_ += 1000, frame.data(), frame.size());
        const std::uint32_t seq = me.next_seq;
        me.next_seq += static_cast<std::uint32_t>(payload.size()) + ((flags & net::tcp_flags::kSyn) != 0 ? 1 : 0);
        return seq;
    }

    void close() { writer_.close(); }

private:
    struct side {
        net::mac_address mac;
        std::uint32_t ip;
        std::uint16_t port;
        std::uint32_t next_seq;
    };
    pcap_writer writer_;
    side initiator_{{0x02, 0, 0, 0, 0, 0x01}, 0x0a000001, 40000, 1000};
    side responder_{{0x02, 0, 0, 0, 0, 0x02}, 0x0a000002, 5201, 0xFFFFFE00u};  // wraps during the run
    std::uint64_t time_ns_ = 0;
    std::uint16_t ip_id_ = 0;
};

std::vector<std::uint8_t> send_ulpdu(std::uint32_t msn, const std::vector<std::uint8_t>& payload) {
    ddp::header h;
    h.opcode = ddp::opcode::send;
    h.msn = msn;
    std::vector<std::uint8_t> u(h.size());
    ddp::encode(h, u.data());
    u.insert(u.end(), payload.begin(), payload.end());
    return u;
}

// tshark 4.0's "-T fields -e iwarp_mpa.crc_check" prints only the CRC value; the verdict
// "(Good CRC32)" / "(Bad CRC32, should be ...)" is in the field's display text, so this reads
// the verbose (-V) dissection instead.
std::string tshark_verbose(const std::string& path) {
    return run("tshark -r '" + path + "' --disable-protocol rpcordma --disable-protocol smb_direct -V 2>/dev/null");
}

TEST(PcapTshark, MpaRequestReplyAndSendFpduDecodeWithGoodCrc) {
    if (!have_tshark()) GTEST_SKIP() << "tshark not on PATH";
    const std::string path = temp_path("mpa.pcap");
    capture cap(path);
    cap.handshake();
    mpa::request_reply req;
    req.crc = true;
    cap.send(true, mpa::encode(req));
    mpa::request_reply rep = req;
    rep.request = false;
    cap.send(false, mpa::encode(rep));
    // The test-vector Send (test-vectors.md §5), then one from the responder.
    cap.send(true, test::hex("001e4143 00000000 00000000 00000001 00000000 68656c6c 6f206977 61727021 85c55345"));
    std::vector<std::uint8_t> fpdu;
    const auto u = send_ulpdu(1, test::bytes("reply from the responder"));
    mpa::build_fpdu(u.data(), u.size(), true, false, 0, fpdu);
    cap.send(false, fpdu);
    // A bad one: the test-vector Send with its MSN changed after the CRC was computed.
    cap.send(true, test::hex("001e4143 00000000 00000000 00000002 00000000 68656c6c 6f206977 61727021 85c55345"));
    cap.close();

    const std::string out = tshark_verbose(path);
    EXPECT_EQ(count(out, "(Good CRC32)"), 2u) << out;
    EXPECT_EQ(count(out, "Bad CRC32"), 1u) << out;
    EXPECT_EQ(count(out, "Malformed"), 0u) << out;
    EXPECT_EQ(count(out, "Request frame header"), 1u);
    EXPECT_EQ(count(out, "Reply frame header"), 1u);
    std::remove(path.c_str());
}

// Markers both ways (Wireshark needs them symmetric, and one FPDU per segment): leading
// Markers, inner Markers, a Marker right after the PAD, across a sequence-number wrap.
TEST(PcapTshark, MarkedFpdusDecodeWithGoodCrc) {
    if (!have_tshark()) GTEST_SKIP() << "tshark not on PATH";
    const std::string path = temp_path("markers.pcap");
    capture cap(path);
    cap.handshake();
    mpa::request_reply req;
    req.crc = true;
    req.marker = true;
    cap.send(true, mpa::encode(req));
    mpa::request_reply rep = req;
    rep.request = false;
    cap.send(false, mpa::encode(rep));

    std::mt19937_64 rng(3);
    std::size_t fpdus = 0;
    for (const bool from_initiator : {true, false}) {
        std::uint32_t pos = 0;  // marker space starts at each direction's first FPDU
        std::uint32_t msn = 1;
        // Sizes: Fig. 5-like, big with two Markers, then one ending exactly before a Marker
        // position (so the Marker follows the PAD), then small ones.
        for (int i = 0; i < 8; ++i) {
            std::size_t payload = 24;
            if (i == 1) payload = 1200;
            const std::size_t to_marker = 512 - pos % 512;
            if (i == 2) payload = to_marker - 2 - 18;  // 2 + 18-byte header + payload, PAD 0
            if (i > 2) payload = rng() % 600;
            const auto u = send_ulpdu(msn++, test::random_bytes(rng, payload));
            std::vector<std::uint8_t> fpdu;
            mpa::build_fpdu(u.data(), u.size(), true, true, pos, fpdu);
            if (i == 2) {
                EXPECT_EQ(fpdu.size(), to_marker + 8);
                EXPECT_EQ(get_be32(fpdu.data() + to_marker), to_marker);
            }
            pos += static_cast<std::uint32_t>(fpdu.size());
            cap.send(from_initiator, fpdu);
            ++fpdus;
        }
    }
    cap.close();

    const std::string out = tshark_verbose(path);
    EXPECT_EQ(count(out, "(Good CRC32)"), fpdus) << out;
    EXPECT_EQ(count(out, "Bad CRC32"), 0u) << out;
    EXPECT_EQ(count(out, "Malformed"), 0u) << out;
    std::remove(path.c_str());
}

}  // namespace
}  // namespace rnic::proto
