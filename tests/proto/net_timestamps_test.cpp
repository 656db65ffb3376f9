// TCP timestamps option (RFC 7323 §3: kind 8, length 10, TSval and TSecr) in TcpHeader: encoded
// size and layout, the 40-byte option limit together with SACK blocks, and parsing.
#include <gtest/gtest.h>

#include <cstring>
#include <utility>

#include "proto/bytes.h"
#include "proto/net.h"
#include "test_util.h"

namespace rnic::proto::net {
namespace {

using test::hex;
using timestamps = std::pair<std::uint32_t, std::uint32_t>;

constexpr std::size_t kOptionsAt = kEthernetHeaderSize + kIpv4HeaderSize + kTcpBaseHeaderSize;

endpoints make_endpoints() {
    endpoints ep;
    ep.src_mac = {0x02, 0, 0, 0, 0, 0x0a};
    ep.dst_mac = {0x02, 0, 0, 0, 0, 0x0b};
    ep.src_ip = 0xc0a80001;
    ep.dst_ip = 0xc0a80002;
    return ep;
}

std::vector<std::uint8_t> build(const tcp_header& tcp, const std::vector<std::uint8_t>& payload = {}) {
    std::vector<std::uint8_t> frame;
    build_tcp_frame(make_endpoints(), ipv4_header{}, tcp, payload.data(), payload.size(), frame);
    return frame;
}

// The option bytes of a built frame, as lower-case hex grouped in 32-bit words.
std::string option_hex(const std::vector<std::uint8_t>& frame) {
    const std::size_t data_offset =
        static_cast<std::size_t>(frame[kEthernetHeaderSize + kIpv4HeaderSize + 12] >> 4) * 4;
    return test::to_hex(frame.data() + kOptionsAt, data_offset - kTcpBaseHeaderSize);
}

// A data segment whose options area is replaced by `options` (a multiple of 4 bytes), with the
// lengths and both checksums made right again.
std::vector<std::uint8_t> with_raw_options(const std::vector<std::uint8_t>& options) {
    tcp_header tcp;
    tcp.src_port = 7;
    tcp.dst_port = 9;
    tcp.flags = tcp_flags::kAck;
    const auto payload = test::bytes("data");
    std::vector<std::uint8_t> frame(kOptionsAt + options.size() + payload.size());
    std::memcpy(frame.data() + kOptionsAt, options.data(), options.size());
    std::memcpy(frame.data() + kOptionsAt + options.size(), payload.data(), payload.size());
    // Headers of the same segment without options, then data offset, lengths and checksums fixed.
    std::vector<std::uint8_t> plain = build(tcp, payload);
    std::memcpy(frame.data(), plain.data(), kOptionsAt);
    std::uint8_t* ip = frame.data() + kEthernetHeaderSize;
    put_be16(ip + 2, static_cast<std::uint16_t>(frame.size() - kEthernetHeaderSize));
    put_be16(ip + 10, 0);
    put_be16(ip + 10, internet_checksum(ip, kIpv4HeaderSize));
    std::uint8_t* th = ip + kIpv4HeaderSize;
    th[12] = static_cast<std::uint8_t>(((kTcpBaseHeaderSize + options.size()) / 4) << 4);
    put_be16(th + 16, 0);
    const std::size_t tcp_len = frame.size() - kEthernetHeaderSize - kIpv4HeaderSize;
    std::uint8_t pseudo[12] = {};
    std::memcpy(pseudo, ip + 12, 8);
    pseudo[9] = kIpProtocolTcp;
    put_be16(pseudo + 10, static_cast<std::uint16_t>(tcp_len));
    const std::uint32_t sum = checksum_partial(th, tcp_len, checksum_partial(pseudo, sizeof pseudo));
    put_be16(th + 16, static_cast<std::uint16_t>(~sum));
    return frame;
}

TEST(TcpTimestamps, AbsentByDefault) {
    tcp_header h;
    EXPECT_FALSE(h.timestamps);
    EXPECT_EQ(h.options_size(), 0u);
    const auto frame = build(h);
    const auto p = parse_tcp_frame(frame.data(), frame.size(), nullptr);
    ASSERT_TRUE(p);
    EXPECT_FALSE(p->tcp.timestamps);
}

TEST(TcpTimestamps, AloneTakesTwelveBytesWithTwoNops) {
    tcp_header h;
    h.flags = tcp_flags::kAck;
    h.timestamps = timestamps{0x01020304u, 0xA0B0C0D0u};
    EXPECT_EQ(h.options_size(), 12u);
    EXPECT_EQ(h.size(), 32u);
    const auto frame = build(h);
    EXPECT_EQ(option_hex(frame), "0101080a 01020304 a0b0c0d0");
}

TEST(TcpTimestamps, SynOptionOrder) {
    tcp_header h;
    h.flags = tcp_flags::kSyn;
    h.mss = 1460;
    h.window_scale = 7;
    h.sack_permitted = true;
    h.timestamps = timestamps{0x11223344u, 0};
    EXPECT_EQ(h.options_size(), 24u);
    // MSS, NOP + window scale, 2 NOPs + SACK-permitted, 2 NOPs + timestamps.
    EXPECT_EQ(option_hex(build(h)), "020405b4 01030307 01010402 0101080a 11223344 00000000");
}

TEST(TcpTimestamps, BuildThenParseRoundTrip) {
    for (const timestamps& ts : {timestamps{0, 0}, timestamps{1, 0xFFFFFFFFu}, timestamps{0xFFFFFFFFu, 0x80000000u},
                                 timestamps{0xDEADBEEFu, 0x12345678u}}) {
        tcp_header h;
        h.src_port = 4791;
        h.dst_port = 50000;
        h.seq = 0xFFFFFFFEu;
        h.ack = 17;
        h.flags = tcp_flags::kAck | tcp_flags::kPsh;
        h.window = 512;
        h.timestamps = ts;
        h.sack_blocks = {{10, 20}};
        const auto payload = test::bytes("timestamped payload");
        const auto frame = build(h, payload);
        std::string error;
        const auto p = parse_tcp_frame(frame.data(), frame.size(), &error);
        ASSERT_TRUE(p) << error;
        ASSERT_TRUE(p->tcp.timestamps);
        EXPECT_EQ(p->tcp.timestamps->first, ts.first);
        EXPECT_EQ(p->tcp.timestamps->second, ts.second);
        ASSERT_EQ(p->tcp.sack_blocks.size(), 1u);
        EXPECT_EQ(p->tcp.sack_blocks[0].left, 10u);
        EXPECT_EQ(p->tcp.sack_blocks[0].right, 20u);
        EXPECT_FALSE(p->tcp.mss);
        EXPECT_EQ(p->payload_len, payload.size());
        EXPECT_EQ(p->payload_offset, kOptionsAt + 12 + 12);
    }
}

TEST(TcpTimestamps, ThreeSackBlocksFitBesideTimestamps) {
    tcp_header h;
    h.flags = tcp_flags::kAck;
    h.timestamps = timestamps{5, 6};
    h.sack_blocks = {{100, 200}, {300, 400}, {500, 600}, {700, 800}};
    EXPECT_EQ(h.options_size(), 40u);  // 12 + 4 + 3 * 8: the fourth block is dropped
    const auto frame = build(h);
    EXPECT_EQ(option_hex(frame),
              "0101080a 00000005 00000006 0101051a 00000064 000000c8 0000012c 00000190 000001f4 00000258");
    const auto p = parse_tcp_frame(frame.data(), frame.size(), nullptr);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->tcp.sack_blocks.size(), 3u);
    EXPECT_EQ(p->tcp.sack_blocks[2].left, 500u);  // dropped from the end: the first three stay
    ASSERT_TRUE(p->tcp.timestamps);
    EXPECT_EQ(*p->tcp.timestamps, (timestamps{5, 6}));
}

TEST(TcpTimestamps, WithAllSynOptionsOnlyOneSackBlockFits) {
    tcp_header h;
    h.mss = 9000;
    h.window_scale = 14;
    h.sack_permitted = true;
    h.timestamps = timestamps{1, 2};
    h.sack_blocks = {{1, 2}, {3, 4}};
    EXPECT_EQ(h.options_size(), 36u);  // 24 + 4 + 8: a second block would need 44
    const auto frame = build(h);
    const auto p = parse_tcp_frame(frame.data(), frame.size(), nullptr);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->tcp.sack_blocks.size(), 1u);
    EXPECT_EQ(p->tcp.sack_blocks[0].left, 1u);
    EXPECT_EQ(p->tcp.mss.value_or(0), 9000);
    EXPECT_EQ(p->tcp.window_scale.value_or(0), 14);
    EXPECT_TRUE(p->tcp.sack_permitted);
    EXPECT_EQ(*p->tcp.timestamps, (timestamps{1, 2}));
}

// Every combination of the options stays within the 40-byte option space, is a multiple of 4,
// and parses back to what was given (SACK blocks: the ones that fit, from the front).
TEST(TcpTimestamps, NoCombinationExceedsTheOptionSpace) {
    for (unsigned mask = 0; mask < 16; ++mask) {
        for (std::size_t blocks = 0; blocks <= 6; ++blocks) {
            SCOPED_TRACE("mask " + std::to_string(mask) + ", blocks " + std::to_string(blocks));
            tcp_header h;
            if (mask & 1) h.mss = 536;
            if (mask & 2) h.window_scale = 3;
            h.sack_permitted = (mask & 4) != 0;
            if (mask & 8) h.timestamps = timestamps{mask, static_cast<std::uint32_t>(blocks)};
            for (std::size_t b = 0; b < blocks; ++b)
                h.sack_blocks.push_back({static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b + 1)});
            const std::size_t size = h.options_size();
            EXPECT_LE(size, 40u);
            EXPECT_EQ(size % 4, 0u);
            const auto frame = build(h, test::bytes("p"));
            ASSERT_EQ(frame.size(), kOptionsAt + size + 1);
            std::string error;
            const auto p = parse_tcp_frame(frame.data(), frame.size(), &error);
            ASSERT_TRUE(p) << error;
            EXPECT_EQ(p->tcp.mss, h.mss);
            EXPECT_EQ(p->tcp.window_scale, h.window_scale);
            EXPECT_EQ(p->tcp.sack_permitted, h.sack_permitted);
            EXPECT_EQ(p->tcp.timestamps, h.timestamps);
            ASSERT_LE(p->tcp.sack_blocks.size(), blocks);
            if (blocks > 0) {
                EXPECT_GE(p->tcp.sack_blocks.size(), 1u);  // at least one always fits
            }
            for (std::size_t b = 0; b < p->tcp.sack_blocks.size(); ++b) {
                EXPECT_EQ(p->tcp.sack_blocks[b].left, h.sack_blocks[b].left);
                EXPECT_EQ(p->tcp.sack_blocks[b].right, h.sack_blocks[b].right);
            }
            EXPECT_EQ(p->payload_len, 1u);
        }
    }
}

TEST(TcpTimestamps, ParsesLinuxStyleSyn) {
    // MSS 1460, SACK-permitted, timestamps (TSval 0x11223344, TSecr 0), NOP, window scale 7.
    const auto f = with_raw_options(hex("020405b4 0402080a 11223344 00000000 01030307"));
    std::string error;
    const auto p = parse_tcp_frame(f.data(), f.size(), &error);
    ASSERT_TRUE(p) << error;
    ASSERT_TRUE(p->tcp.timestamps);
    EXPECT_EQ(p->tcp.timestamps->first, 0x11223344u);
    EXPECT_EQ(p->tcp.timestamps->second, 0u);
    EXPECT_EQ(p->tcp.mss.value_or(0), 1460);
    EXPECT_TRUE(p->tcp.sack_permitted);
    EXPECT_EQ(p->tcp.window_scale.value_or(0), 7);
    EXPECT_EQ(p->payload_len, 4u);
}

TEST(TcpTimestamps, ParsesLinuxStyleDataSegmentWithSack) {
    // NOP NOP TS, NOP NOP SACK with one block (what Linux sends on an established connection).
    const auto f = with_raw_options(hex("0101080a 0000abcd 0000dcba 0101050a 00001000 00002000"));
    const auto p = parse_tcp_frame(f.data(), f.size(), nullptr);
    ASSERT_TRUE(p);
    EXPECT_EQ(*p->tcp.timestamps, (timestamps{0xabcd, 0xdcba}));
    ASSERT_EQ(p->tcp.sack_blocks.size(), 1u);
    EXPECT_EQ(p->tcp.sack_blocks[0].right, 0x2000u);
}

TEST(TcpTimestamps, WrongLengthIsAnError) {
    // Length 8 and 12 (with enough bytes present), and length 10 running past the options.
    for (const char* opts : {"0808aaaa bbbbcccc", "080c0000 00000000 00000000", "0101080a 00000000"}) {
        SCOPED_TRACE(opts);
        const auto f = with_raw_options(hex(opts));
        std::string error;
        EXPECT_FALSE(parse_tcp_frame(f.data(), f.size(), &error));
        EXPECT_NE(error.find("TCP option kind 8"), std::string::npos) << error;
    }
}

TEST(TcpTimestamps, UnknownKindsAreStillSkipped) {
    // Kind 30 (MPTCP), length 4, then timestamps: the unknown option does not hide the next one.
    const auto f = with_raw_options(hex("1e040000 0101080a 00000001 00000002"));
    std::string error;
    const auto p = parse_tcp_frame(f.data(), f.size(), &error);
    ASSERT_TRUE(p) << error;
    EXPECT_EQ(*p->tcp.timestamps, (timestamps{1, 2}));
}

}  // namespace
}  // namespace rnic::proto::net
