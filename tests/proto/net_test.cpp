// Ethernet/IPv4/TCP codecs (RFC 791, RFC 9293, RFC 1071, RFC 2018, RFC 7323).
#include "proto/net.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "proto/bytes.h"
#include "test_util.h"

namespace rnic::proto::net {
namespace {

using test::hex;

TEST(InternetChecksum, ClassicIpv4Header) {
    auto header = hex("4500 0073 0000 4000 4011 0000 c0a8 0001 c0a8 00c7");
    EXPECT_EQ(internet_checksum(header.data(), header.size()), 0xb861);
    put_be16(header.data() + 10, 0xb861);
    EXPECT_EQ(internet_checksum(header.data(), header.size()), 0);
}

TEST(InternetChecksum, Rfc1071ExampleAndOddLength) {
    const auto data = hex("0001 f203 f4f5 f6f7");  // RFC 1071 §3: sum 0xddf2
    EXPECT_EQ(checksum_partial(data.data(), data.size()), 0xddf2u);
    EXPECT_EQ(internet_checksum(data.data(), data.size()), 0x220d);
    const std::uint8_t one = 0x01;
    EXPECT_EQ(checksum_partial(&one, 1), 0x0100u);  // odd byte padded with zero on the right
    // Partial sums chain (even-length pieces).
    EXPECT_EQ(checksum_partial(data.data() + 4, 4, checksum_partial(data.data(), 4)), 0xddf2u);
    EXPECT_EQ(checksum_partial(nullptr, 0, 0x1ffff), 0x1u);  // initial value gets folded
}

endpoints make_endpoints() {
    endpoints ep;
    ep.src_mac = {0x02, 0, 0, 0, 0, 0x01};
    ep.dst_mac = {0x02, 0, 0, 0, 0, 0x02};
    ep.src_ip = 0x0a000001;
    ep.dst_ip = 0x0a000002;
    return ep;
}

tcp_header syn_header() {
    tcp_header tcp;
    tcp.src_port = 40000;
    tcp.dst_port = 5201;
    tcp.seq = 0xFFFFFF00u;
    tcp.ack = 0;
    tcp.flags = tcp_flags::kSyn;
    tcp.window = 65535;
    tcp.mss = 1460;
    tcp.window_scale = 7;
    tcp.sack_permitted = true;
    return tcp;
}

std::vector<std::uint8_t> build(const tcp_header& tcp, const std::vector<std::uint8_t>& payload,
                                const ipv4_header& ip = ipv4_header{}) {
    std::vector<std::uint8_t> frame;
    build_tcp_frame(make_endpoints(), ip, tcp, payload.data(), payload.size(), frame);
    return frame;
}

// The one's complement sum as RFC 1071 writes it: big-endian 16-bit words, carries folded back.
std::uint32_t reference_sum(const std::uint8_t* p, std::size_t len, std::uint32_t initial) {
    std::uint64_t sum = initial;
    for (std::size_t i = 0; i + 1 < len; i += 2) sum += std::uint32_t{p[i]} << 8 | p[i + 1];
    if (len % 2 != 0) sum += std::uint32_t{p[len - 1]} << 8;
    while ((sum >> 16) != 0) sum = (sum & 0xFFFFu) + (sum >> 16);
    return static_cast<std::uint32_t>(sum);
}

// The wide little-endian sum gives exactly the reference's value, zero representation included:
// every length 0..300, every start alignment, random bytes, all-zero and all-0xFF bytes, and
// initial values 0, folded, unfolded and 0xFFFF.
TEST(InternetChecksum, WideSumEqualsTheSixteenBitSum) {
    std::mt19937_64 rng(7);
    std::vector<std::uint8_t> buf(320);
    const std::uint32_t initials[] = {0, 1, 0xFFFF, 0x1ABCD, 0xFFFFFFFFu};
    for (int pattern = 0; pattern < 3; ++pattern) {
        for (auto& b : buf) b = pattern == 0 ? static_cast<std::uint8_t>(rng()) : pattern == 1 ? 0 : 0xFF;
        for (std::size_t start = 0; start < 8; ++start) {
            for (std::size_t len = 0; len + start <= 308; ++len) {
                for (std::uint32_t initial : initials) {
                    ASSERT_EQ(checksum_partial(buf.data() + start, len, initial),
                              reference_sum(buf.data() + start, len, initial))
                        << "pattern " << pattern << " start " << start << " length " << len << " initial " << initial;
                }
            }
        }
    }
    // Bytes whose sum is a non-zero multiple of 0xFFFF fold to 0xFFFF, never to 0.
    const std::uint8_t cancel[] = {0x12, 0x34, 0xED, 0xCB};
    EXPECT_EQ(checksum_partial(cancel, sizeof cancel), 0xFFFFu);
}

// The vector sum (64 bytes per step from 256 bytes on, where the CPU has AVX2) equals the
// portable 8-byte sum and the 16-bit reference: every length across the threshold (whole blocks
// and every tail), every start alignment, jumbo frames; random, all-zero and all-0xFF bytes;
// several initial values.
TEST(InternetChecksum, VectorSumEqualsThePortableSum) {
    std::mt19937_64 rng(11);
    std::vector<std::uint8_t> buf(9100);
    const std::uint32_t initials[] = {0, 0xFFFF, 0x1ABCD};
    std::vector<std::size_t> lengths;
    for (std::size_t len = 240; len <= 400; ++len) lengths.push_back(len);
    for (std::size_t len : {255u, 256u, 1460u, 1480u, 1500u, 4096u, 8960u, 9000u, 9001u}) lengths.push_back(len);
    for (int pattern = 0; pattern < 3; ++pattern) {
        for (auto& b : buf) b = pattern == 0 ? static_cast<std::uint8_t>(rng()) : pattern == 1 ? 0 : 0xFF;
        for (std::size_t start = 0; start < 33; ++start) {
            for (std::size_t len : lengths) {
                for (std::uint32_t initial : initials) {
                    const std::uint8_t* p = buf.data() + start;
                    const std::uint32_t want = reference_sum(p, len, initial);
                    ASSERT_EQ(checksum_partial_portable(p, len, initial), want) << "portable, length " << len;
                    ASSERT_EQ(checksum_partial(p, len, initial), want)
                        << "pattern " << pattern << " start " << start << " length " << len << " initial " << initial;
                }
            }
        }
    }
}

TEST(TcpFrame, BuildThenParseSyn) {
    ipv4_header ip;
    ip.identification = 0x1234;
    ip.ttl = 33;
    ip.dscp_ecn = 0x02;
    const auto frame = build(syn_header(), {}, ip);
    ASSERT_EQ(frame.size(), 14u + 20 + 20 + 12);
    std::string error;
    const auto p = parse_tcp_frame(frame.data(), frame.size(), &error);
    ASSERT_TRUE(p) << error;
    EXPECT_EQ(p->eth.src, make_endpoints().src_mac);
    EXPECT_EQ(p->eth.dst, make_endpoints().dst_mac);
    EXPECT_EQ(p->eth.ethertype, kEtherTypeIpv4);
    EXPECT_EQ(p->ip.total_length, 52);
    EXPECT_EQ(p->ip.identification, 0x1234);
    EXPECT_EQ(p->ip.ttl, 33);
    EXPECT_EQ(p->ip.dscp_ecn, 0x02);
    EXPECT_TRUE(p->ip.dont_fragment);
    EXPECT_EQ(p->ip.src, 0x0a000001u);
    EXPECT_EQ(p->ip.dst, 0x0a000002u);
    EXPECT_EQ(p->tcp.src_port, 40000);
    EXPECT_EQ(p->tcp.dst_port, 5201);
    EXPECT_EQ(p->tcp.seq, 0xFFFFFF00u);
    EXPECT_EQ(p->tcp.flags, tcp_flags::kSyn);
    EXPECT_EQ(p->tcp.window, 65535);
    EXPECT_EQ(p->tcp.mss, std::optional<std::uint16_t>(1460));
    EXPECT_EQ(p->tcp.window_scale, std::optional<std::uint8_t>(7));
    EXPECT_TRUE(p->tcp.sack_permitted);
    EXPECT_TRUE(p->tcp.sack_blocks.empty());
    EXPECT_EQ(p->payload_offset, frame.size());
    EXPECT_EQ(p->payload_len, 0u);
    // Checksums verify independently.
    EXPECT_EQ(internet_checksum(frame.data() + 14, 20), 0);
}

// RFC 9293 §3.1: the urgent pointer is written at bytes 18-19 of the TCP header and read back; it
// is sent as zero when URG is clear (the field is meaningful only with URG).
TEST(TcpFrame, UrgentPointerTravelsWithUrgOnly) {
    tcp_header tcp;
    tcp.src_port = 5201;
    tcp.dst_port = 40000;
    tcp.seq = 77;
    tcp.flags = tcp_flags::kAck | tcp_flags::kUrg;
    tcp.urgent_pointer = 0x0102;
    const auto payload = test::bytes("urgent byte first");
    auto frame = build(tcp, payload);
    EXPECT_EQ(frame[14 + 20 + 13], tcp_flags::kAck | tcp_flags::kUrg);
    EXPECT_EQ(frame[14 + 20 + 18], 0x01);
    EXPECT_EQ(frame[14 + 20 + 19], 0x02);
    auto p = parse_tcp_frame(frame.data(), frame.size(), nullptr);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->tcp.flags, tcp_flags::kAck | tcp_flags::kUrg);
    EXPECT_EQ(p->tcp.urgent_pointer, 0x0102);
    tcp.flags = tcp_flags::kAck;  // a stale pointer without URG is not sent
    frame = build(tcp, payload);
    EXPECT_EQ(frame[14 + 20 + 18], 0);
    EXPECT_EQ(frame[14 + 20 + 19], 0);
    p = parse_tcp_frame(frame.data(), frame.size(), nullptr);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->tcp.urgent_pointer, 0);
}

TEST(TcpFrame, PayloadAndSackBlocks) {
    tcp_header tcp;
    tcp.src_port = 5201;
    tcp.dst_port = 40000;
    tcp.seq = 1;
    tcp.ack = 1000;
    tcp.flags = tcp_flags::kAck | tcp_flags::kPsh;
    tcp.sack_blocks = {{100, 200}, {300, 400}, {0xFFFFFFF0u, 0x10}};
    EXPECT_EQ(tcp.options_size(), 4u + 24);
    const auto payload = test::bytes("an odd-length payload");
    const auto frame = build(tcp, payload);
    const auto p = parse_tcp_frame(frame.data(), frame.size(), nullptr);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->tcp.sack_blocks.size(), 3u);
    EXPECT_EQ(p->tcp.sack_blocks[2].left, 0xFFFFFFF0u);
    EXPECT_EQ(p->tcp.sack_blocks[2].right, 0x10u);
    EXPECT_EQ(p->tcp.flags, tcp_flags::kAck | tcp_flags::kPsh);
    EXPECT_FALSE(p->tcp.mss);
    EXPECT_EQ(std::vector<std::uint8_t>(frame.begin() + static_cast<std::ptrdiff_t>(p->payload_offset), frame.end()),
              payload);
    EXPECT_EQ(p->payload_len, payload.size());
}

TEST(TcpOptions, SizesAndLimits) {
    tcp_header h;
    EXPECT_EQ(h.options_size(), 0u);
    h.mss = 1460;
    EXPECT_EQ(h.options_size(), 4u);
    h.window_scale = 2;
    EXPECT_EQ(h.options_size(), 8u);
    h.sack_permitted = true;
    EXPECT_EQ(h.options_size(), 12u);
    EXPECT_EQ(h.size(), 32u);
    // 40 bytes of option space: with the SYN options only 3 SACK blocks fit, alone 4.
    h.sack_blocks.assign(5, sack_block{1, 2});
    EXPECT_EQ(h.options_size(), 12u + 4 + 24);
    tcp_header s;
    s.sack_blocks.assign(5, sack_block{1, 2});
    EXPECT_EQ(s.options_size(), 4u + 32);
    const auto frame = build(s, {});
    const auto p = parse_tcp_frame(frame.data(), frame.size(), nullptr);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->tcp.sack_blocks.size(), 4u);
}

// Recomputes the IPv4 header checksum and the TCP checksum of a frame after a test edited it.
void refresh_checksums(std::vector<std::uint8_t>& f) {
    std::uint8_t* ip = f.data() + 14;
    const std::size_t ihl = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
    put_be16(ip + 10, 0);
    put_be16(ip + 10, internet_checksum(ip, ihl));
    const std::size_t tcp_len = get_be16(ip + 2) - ihl;
    std::uint8_t* tcp = ip + ihl;
    put_be16(tcp + 16, 0);
    std::uint8_t pseudo[12];
    std::memcpy(pseudo, ip + 12, 8);
    pseudo[8] = 0;
    pseudo[9] = ip[9];
    put_be16(pseudo + 10, static_cast<std::uint16_t>(tcp_len));
    const std::uint32_t sum = checksum_partial(tcp, tcp_len, checksum_partial(pseudo, 12));
    put_be16(tcp + 16, static_cast<std::uint16_t>(~sum));
}

// Replaces the TCP options with `options` (a multiple of 4 bytes) and fixes lengths and sums.
std::vector<std::uint8_t> with_raw_options(const std::vector<std::uint8_t>& options) {
    tcp_header tcp;
    tcp.src_port = 1;
    tcp.dst_port = 2;
    auto f = build(tcp, test::bytes("xy"));
    f.insert(f.begin() + 54, options.begin(), options.end());
    f[14 + 20 + 12] = static_cast<std::uint8_t>(((20 + options.size()) / 4) << 4);
    put_be16(f.data() + 16, static_cast<std::uint16_t>(get_be16(f.data() + 16) + options.size()));
    refresh_checksums(f);
    return f;
}

TEST(TcpOptions, ParsesLinuxStyleSynOptions) {
    // MSS 1460, SACK-permitted, timestamps, NOP, window scale 7.
    const auto f = with_raw_options(hex("020405b4 0402080a 11223344 00000000 01030307"));
    std::string error;
    const auto p = parse_tcp_frame(f.data(), f.size(), &error);
    ASSERT_TRUE(p) << error;
    EXPECT_EQ(p->tcp.mss.value_or(0), 1460);
    EXPECT_TRUE(p->tcp.sack_permitted);
    EXPECT_EQ(p->tcp.window_scale.value_or(0), 7);
    EXPECT_EQ(p->payload_len, 2u);
}

TEST(TcpOptions, StopsAtEndOfOptionList) {
    const auto f = with_raw_options(hex("00ffffff"));
    EXPECT_TRUE(parse_tcp_frame(f.data(), f.size(), nullptr));
}

TEST(TcpOptions, BadOptionLengths) {
    for (const char* opts : {"02030000", "0401ffff", "03040000", "050a0000", "01010102", "080a0000"}) {
        SCOPED_TRACE(opts);
        const auto f = with_raw_options(hex(opts));
        std::string error;
        EXPECT_FALSE(parse_tcp_frame(f.data(), f.size(), &error));
        EXPECT_NE(error.find("TCP option kind"), std::string::npos) << error;
    }
}

std::vector<std::uint8_t> plain_frame() {
    tcp_header tcp;
    tcp.src_port = 40000;
    tcp.dst_port = 5201;
    tcp.flags = tcp_flags::kAck;
    return build(tcp, test::bytes("payload!"));
}

void expect_parse_error(const std::vector<std::uint8_t>& f, const std::string& text) {
    std::string error;
    EXPECT_FALSE(parse_tcp_frame(f.data(), f.size(), &error));
    EXPECT_NE(error.find(text), std::string::npos) << "error was: " << error;
}

TEST(TcpFrameErrors, ShortFrame) {
    const auto f = plain_frame();
    expect_parse_error({f.begin(), f.begin() + 10}, "too short for an Ethernet header");
    expect_parse_error({f.begin(), f.begin() + 30}, "too short for an IPv4 header");
}

TEST(TcpFrameErrors, WrongEtherType) {
    auto f = plain_frame();
    put_be16(f.data() + 12, 0x86dd);
    expect_parse_error(f, "EtherType 0x86dd");
}

TEST(TcpFrameErrors, IpVersion) {
    auto f = plain_frame();
    f[14] = 0x65;
    expect_parse_error(f, "version field at offset 14 is 6");
}

TEST(TcpFrameErrors, Ihl) {
    auto f = plain_frame();
    f[14] = 0x44;
    expect_parse_error(f, "IHL");
    auto g = plain_frame();
    g.resize(14 + 40);
    g[14] = 0x4F;  // 60-byte header in a frame with 40 bytes of IP
    expect_parse_error(g, "IHL");
}

TEST(TcpFrameErrors, BadIpChecksum) {
    auto f = plain_frame();
    const std::uint16_t good = get_be16(f.data() + 24);
    f[24] ^= 0x01;
    char expected[8];
    std::snprintf(expected, sizeof expected, "0x%04x", good);
    expect_parse_error(f, std::string("IPv4 header checksum at offset 24 is"));
    expect_parse_error(f, std::string("expected ") + expected);
}

TEST(TcpFrameErrors, NotTcp) {
    auto f = plain_frame();
    f[14 + 9] = 17;  // UDP, with a valid IPv4 header checksum
    put_be16(f.data() + 24, 0);
    put_be16(f.data() + 24, internet_checksum(f.data() + 14, 20));
    expect_parse_error(f, "protocol 17");
}

TEST(TcpFrameErrors, BadDataOffset) {
    auto f = plain_frame();
    f[14 + 20 + 12] = 0x40;
    refresh_checksums(f);
    expect_parse_error(f, "data offset");
    auto g = plain_frame();
    g[14 + 20 + 12] = 0xF0;  // 60 bytes, segment has 28
    refresh_checksums(g);
    expect_parse_error(g, "data offset");
}

TEST(TcpFrameErrors, BadTcpChecksum) {
    auto f = plain_frame();
    f.back() ^= 0x40;  // payload bit
    expect_parse_error(f, "TCP checksum at offset 50 is");
    // The expected value is the checksum that the corrupted segment would need.
    std::string error;
    parse_tcp_frame(f.data(), f.size(), &error);
    auto fixed = f;
    refresh_checksums(fixed);
    char expected[8];
    std::snprintf(expected, sizeof expected, "0x%04x", get_be16(fixed.data() + 50));
    EXPECT_NE(error.find(std::string("expected ") + expected), std::string::npos) << error;
}

TEST(TcpFrameErrors, TotalLengthBeyondFrame) {
    auto f = plain_frame();
    f.pop_back();
    expect_parse_error(f, "total length");
    auto g = plain_frame();
    put_be16(g.data() + 16, 19);  // shorter than the IPv4 header
    put_be16(g.data() + 24, 0);
    put_be16(g.data() + 24, internet_checksum(g.data() + 14, 20));
    expect_parse_error(g, "total length 19");
}

TEST(TcpFrameErrors, TcpHeaderShorterThan20) {
    auto f = plain_frame();
    put_be16(f.data() + 16, 20 + 12);
    put_be16(f.data() + 24, 0);
    put_be16(f.data() + 24, internet_checksum(f.data() + 14, 20));
    expect_parse_error(f, "shorter than a TCP header");
}

TEST(TcpFrameErrors, Fragment) {
    auto f = plain_frame();
    put_be16(f.data() + 20, 0x2000);  // MF
    refresh_checksums(f);
    expect_parse_error(f, "fragment");
}

TEST(TcpFrame, EthernetPaddingIsNotPayload) {
    tcp_header tcp;
    tcp.flags = tcp_flags::kAck;
    auto f = build(tcp, {});
    ASSERT_EQ(f.size(), 54u);
    f.resize(60, 0);  // minimum Ethernet frame without FCS
    const auto p = parse_tcp_frame(f.data(), f.size(), nullptr);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->payload_len, 0u);
}

TEST(TcpFrame, IpHeaderAddressesOverrideEndpoints) {
    ipv4_header ip;
    ip.src = 0xC0A80001;
    ip.dst = 0xC0A80002;
    tcp_header tcp;
    const auto f = build(tcp, {}, ip);
    const auto p = parse_tcp_frame(f.data(), f.size(), nullptr);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->ip.src, 0xC0A80001u);
    EXPECT_EQ(p->ip.dst, 0xC0A80002u);
}

TEST(Addresses, FormatAndParseIpv4) {
    EXPECT_EQ(format_ipv4(0x0a000001), "10.0.0.1");
    EXPECT_EQ(format_ipv4(0xFFFFFFFF), "255.255.255.255");
    EXPECT_EQ(format_ipv4(0), "0.0.0.0");
    EXPECT_EQ(parse_ipv4("10.0.0.1"), std::optional<std::uint32_t>(0x0a000001));
    EXPECT_EQ(parse_ipv4("192.168.100.254"), std::optional<std::uint32_t>(0xC0A864FE));
    EXPECT_EQ(parse_ipv4("0.0.0.0"), std::optional<std::uint32_t>(0));
    for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.4 ", " 1.2.3.4", "a.b.c.d",
                            "1..2.3", "1234.1.1.1", "1.2.3.", "-1.2.3.4", "1.2.3.4/24"}) {
        EXPECT_FALSE(parse_ipv4(bad)) << bad;
    }
    for (std::uint32_t a : {0x01020304u, 0x7F000001u, 0xDEADBEEFu}) EXPECT_EQ(parse_ipv4(format_ipv4(a)), a);
}

TEST(Addresses, FormatMac) {
    EXPECT_EQ(format_mac({0x02, 0x00, 0x00, 0xab, 0xCD, 0x01}), "02:00:00:ab:cd:01");
}

}  // namespace
}  // namespace rnic::proto::net
