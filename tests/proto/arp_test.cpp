// ARP for IPv4 over Ethernet (RFC 826): build and parse, checked against frames Linux 6.1 sent
// (captured with QEMU filter-dump between two tools/siw-peer guests, 10.0.0.1 asking for 10.0.0.2).
#include <gtest/gtest.h>

#include "proto/bytes.h"
#include "proto/net.h"
#include "test_util.h"

namespace rnic::proto::net {
namespace {

using test::hex;

// Linux's frames as captured (42 bytes: QEMU's socket netdev carries them unpadded).
const std::vector<std::uint8_t> kLinuxRequest =
    hex("ffffffffffff 525400000001 0806 0001 0800 06 04 0001 525400000001 0a000001 000000000000 0a000002");
const std::vector<std::uint8_t> kLinuxReply =
    hex("525400000001 525400000002 0806 0001 0800 06 04 0002 525400000002 0a000002 525400000001 0a000001");
const mac_address kMac1{0x52, 0x54, 0x00, 0x00, 0x00, 0x01};
const mac_address kMac2{0x52, 0x54, 0x00, 0x00, 0x00, 0x02};

std::vector<std::uint8_t> padded(std::vector<std::uint8_t> f) {
    f.resize(kMinFrameSize, 0);
    return f;
}

TEST(Arp, ParsesARequestFromLinux) {
    std::string error;
    parse_error code = parse_error::io;
    const auto f = parse_arp_frame(kLinuxRequest.data(), kLinuxRequest.size(), &error, &code);
    ASSERT_TRUE(f) << error;
    EXPECT_EQ(code, parse_error::none);
    EXPECT_EQ(f->eth.dst, kBroadcastMac);
    EXPECT_EQ(f->eth.src, kMac1);
    EXPECT_EQ(f->arp.operation, arp_op::kRequest);
    EXPECT_EQ(f->arp.sender_mac, kMac1);
    EXPECT_EQ(f->arp.sender_ip, 0x0a000001u);
    EXPECT_EQ(f->arp.target_mac, mac_address{});
    EXPECT_EQ(f->arp.target_ip, 0x0a000002u);
}

TEST(Arp, ParsesAReplyFromLinuxAndIgnoresPadding) {
    for (const auto& frame : {kLinuxReply, padded(kLinuxReply)}) {
        std::string error;
        const auto f = parse_arp_frame(frame.data(), frame.size(), &error);
        ASSERT_TRUE(f) << error;
        EXPECT_EQ(f->arp.operation, arp_op::kReply);
        EXPECT_EQ(f->arp.sender_mac, kMac2);
        EXPECT_EQ(f->arp.sender_ip, 0x0a000002u);
        EXPECT_EQ(f->arp.target_mac, kMac1);
        EXPECT_EQ(f->arp.target_ip, 0x0a000001u);
    }
}

TEST(Arp, OurRequestIsLinuxsRequestPaddedTo60Bytes) {
    const auto ours = build_arp_request(kMac1, 0x0a000001, 0x0a000002);
    EXPECT_EQ(ours, padded(kLinuxRequest));
}

TEST(Arp, OurReplyToLinuxsRequestIsWhatLinuxAnswers) {
    const auto req = parse_arp_frame(kLinuxRequest.data(), kLinuxRequest.size(), nullptr);
    ASSERT_TRUE(req);
    EXPECT_EQ(build_arp_reply(req->arp, kMac2), padded(kLinuxReply));
}

TEST(Arp, RoundTripsEveryField) {
    arp_packet a;
    a.operation = arp_op::kReply;
    a.sender_mac = {1, 2, 3, 4, 5, 6};
    a.sender_ip = 0xc0a80a0b;
    a.target_mac = {0xa, 0xb, 0xc, 0xd, 0xe, 0xf};
    a.target_ip = 0x7f000001;
    std::vector<std::uint8_t> frame = {0xee};  // appends behind what is there
    build_arp_frame(a.target_mac, a.sender_mac, a, frame);
    ASSERT_EQ(frame.size(), 1 + kMinFrameSize);
    const auto f = parse_arp_frame(frame.data() + 1, frame.size() - 1, nullptr);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->eth.dst, a.target_mac);
    EXPECT_EQ(f->eth.src, a.sender_mac);
    EXPECT_EQ(f->arp.sender_mac, a.sender_mac);
    EXPECT_EQ(f->arp.sender_ip, a.sender_ip);
    EXPECT_EQ(f->arp.target_mac, a.target_mac);
    EXPECT_EQ(f->arp.target_ip, a.target_ip);
    EXPECT_EQ(frame_ethertype(frame.data() + 1, frame.size() - 1), kEtherTypeArp);
}

struct bad_case {
    const char* what;
    std::size_t offset;  // byte to change (or the length to cut to, for short_input)
    std::uint8_t value;
    parse_error code;
    const char* message_part;
};

TEST(Arp, RejectsWhatIsNotIpv4OverEthernetArp) {
    const bad_case cases[] = {
        {"short", 41, 0, parse_error::short_input, "41 bytes, need 42"},
        {"ethertype ipv4", 13, 0x00, parse_error::unsupported, "EtherType 0x0800"},
        {"hardware type 6", 15, 0x06, parse_error::unsupported, "hardware type 6"},
        {"protocol ipv6", 16, 0x86, parse_error::unsupported, "protocol type 0x8600"},
        {"hardware length 8", 18, 0x08, parse_error::bad_length, "address lengths 8/4"},
        {"protocol length 16", 19, 0x10, parse_error::bad_length, "address lengths 6/16"},
        {"operation 3 (RARP)", 21, 0x03, parse_error::unsupported, "operation 3"},
    };
    for (const bad_case& c : cases) {
        std::vector<std::uint8_t> f = kLinuxRequest;
        if (c.code == parse_error::short_input) {
            f.resize(c.offset);
        } else {
            f[c.offset] = c.value;
        }
        std::string error;
        parse_error code = parse_error::none;
        EXPECT_FALSE(parse_arp_frame(f.data(), f.size(), &error, &code)) << c.what;
        EXPECT_EQ(code, c.code) << c.what;
        EXPECT_NE(error.find(c.message_part), std::string::npos) << c.what << ": " << error;
    }
    EXPECT_FALSE(parse_arp_frame(nullptr, 0, nullptr));  // nothing at all, no crash
    EXPECT_EQ(frame_ethertype(kLinuxRequest.data(), 13), std::nullopt);
}

}  // namespace
}  // namespace rnic::proto::net
