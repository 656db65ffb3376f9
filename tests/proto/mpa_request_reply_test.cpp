// MPA Request/Reply frames (RFC 5044 §7.1.1, RFC 6581 §6, §9): test-vectors.md §4 byte-exact
// both ways, and every decode error.
#include <gtest/gtest.h>

#include "proto/bytes.h"
#include "proto/mpa.h"
#include "test_util.h"

namespace rnic::proto::mpa {
namespace {

using test::hex;
using test::to_hex;

struct frame_vector {
    const char* name;
    request_reply frame;
    const char* wire;
};

request_reply make(bool request, std::uint8_t revision) {
    request_reply f;
    f.request = request;
    f.revision = revision;
    return f;
}

std::vector<frame_vector> vectors() {
    std::vector<frame_vector> v;
    request_reply f = make(true, 1);
    f.crc = true;
    v.push_back({"req_v1_crc", f, "4d504120 49442052 65712046 72616d65 40010000"});
    f.request = false;
    v.push_back({"rep_v1_crc", f, "4d504120 49442052 65702046 72616d65 40010000"});
    f = make(true, 1);
    f.marker = true;
    f.crc = true;
    v.push_back({"req_v1_markers_crc", f, "4d504120 49442052 65712046 72616d65 c0010000"});
    f = make(false, 1);
    f.crc = true;
    f.reject = true;
    f.private_data = test::bytes("no");
    v.push_back({"rep_v1_reject", f, "4d504120 49442052 65702046 72616d65 60010002 6e6f"});
    f = make(true, 2);
    f.crc = true;
    f.enhanced = true;
    f.ird = 16;
    f.ord = 16;
    f.peer_to_peer = true;
    f.zero_length_send_rtr = true;
    f.private_data = test::bytes("ulp-pd");
    v.push_back({"req_v2_p2p_send_rtr", f, "4d504120 49442052 65712046 72616d65 5002000a c0100010 756c702d 7064"});
    f = make(true, 2);
    f.enhanced = true;
    f.ird = 8;
    f.ord = 8;
    f.peer_to_peer = true;
    f.zero_length_write_rtr = true;
    v.push_back({"req_v2_siw_p2p_write_rtr", f, "4d504120 49442052 65712046 72616d65 10020004 80088008"});
    return v;
}

void expect_same(const request_reply& a, const request_reply& b) {
    EXPECT_EQ(a.request, b.request);
    EXPECT_EQ(a.marker, b.marker);
    EXPECT_EQ(a.crc, b.crc);
    EXPECT_EQ(a.reject, b.reject);
    EXPECT_EQ(a.revision, b.revision);
    EXPECT_EQ(a.enhanced, b.enhanced);
    EXPECT_EQ(a.peer_to_peer, b.peer_to_peer);
    EXPECT_EQ(a.zero_length_send_rtr, b.zero_length_send_rtr);
    EXPECT_EQ(a.zero_length_write_rtr, b.zero_length_write_rtr);
    EXPECT_EQ(a.zero_length_read_rtr, b.zero_length_read_rtr);
    EXPECT_EQ(a.ird, b.ird);
    EXPECT_EQ(a.ord, b.ord);
    EXPECT_EQ(a.private_data, b.private_data);
    EXPECT_EQ(a.reserved_bits, b.reserved_bits);
}

TEST(MpaRequestReply, TestVectorsEncodeByteExact) {
    for (const auto& v : vectors()) {
        SCOPED_TRACE(v.name);
        EXPECT_EQ(to_hex(encode(v.frame)), to_hex(hex(v.wire)));
    }
}

TEST(MpaRequestReply, TestVectorsDecode) {
    for (const auto& v : vectors()) {
        SCOPED_TRACE(v.name);
        const auto wire = hex(v.wire);
        EXPECT_EQ(request_reply_length(wire.data(), wire.size()), wire.size());
        std::string error;
        const auto f = decode(wire.data(), wire.size(), &error);
        ASSERT_TRUE(f) << error;
        expect_same(*f, v.frame);
    }
}

TEST(MpaRequestReply, ReadRtrAndNoNegotiationValues) {
    request_reply f = make(false, 2);
    f.enhanced = true;
    f.ird = kIrdOrdNoNegotiation;
    f.ord = 0x1234;
    f.zero_length_read_rtr = true;
    const auto wire = encode(f);
    EXPECT_EQ(get_be32(wire.data() + 20), 0x3FFF5234u);
    const auto back = decode(wire.data(), wire.size(), nullptr);
    ASSERT_TRUE(back);
    expect_same(*back, f);
}

TEST(MpaRequestReply, LengthNeedsWholeHeader) {
    const auto wire = hex("4d504120 49442052 65702046 72616d65 60010002 6e6f");
    EXPECT_EQ(request_reply_length(wire.data(), 19), 0u);
    EXPECT_EQ(request_reply_length(wire.data(), 20), 22u);
    // Bytes after the frame (e.g. a pipelined FPDU) are not part of it.
    auto longer = wire;
    longer.push_back(0xEE);
    const auto f = decode(longer.data(), longer.size(), nullptr);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->private_data, test::bytes("no"));
}

TEST(MpaRequestReply, MaximumPrivateData) {
    request_reply f = make(true, 2);
    f.enhanced = true;
    f.private_data.assign(kMaxPrivateData - kEnhancedDataSize, 0x5A);
    const auto wire = encode(f);
    ASSERT_EQ(wire.size(), kRequestReplyHeaderSize + kMaxPrivateData);
    const auto back = decode(wire.data(), wire.size(), nullptr);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->private_data.size(), 508u);
}

// Decoding `wire` must fail with a message containing `field`.
void expect_error(const std::vector<std::uint8_t>& wire, const std::string& field) {
    std::string error;
    EXPECT_FALSE(decode(wire.data(), wire.size(), &error));
    EXPECT_NE(error.find(field), std::string::npos) << "error was: " << error;
    EXPECT_FALSE(decode(wire.data(), wire.size(), nullptr));  // a null error pointer is fine
}

std::vector<std::uint8_t> good_request() {
    return hex("4d504120 49442052 65712046 72616d65 40010000");
}

TEST(MpaRequestReply, ErrorShortHeader) {
    const auto wire = good_request();
    expect_error(std::vector<std::uint8_t>(wire.begin(), wire.begin() + 19), "header");
}

TEST(MpaRequestReply, ErrorBadKey) {
    auto wire = good_request();
    wire[12] = 'X';
    expect_error(wire, "Key");
}

TEST(MpaRequestReply, ErrorPrivateDataTooLong) {
    request_reply f = make(true, 1);
    f.private_data.assign(513, 1);
    expect_error(encode(f), "PD_Length 513");
}

TEST(MpaRequestReply, ErrorPrivateDataTruncated) {
    request_reply f = make(true, 1);
    f.private_data.assign(10, 1);
    auto wire = encode(f);
    wire.pop_back();
    expect_error(wire, "PD_Length 10");
}

TEST(MpaRequestReply, ErrorReservedBits) {
    auto wire = good_request();
    wire[16] |= 0x08;  // the Res bit Linux siw uses for its GSO experiment
    expect_error(wire, "Res bits");
    decode_options lenient;
    lenient.ignore_reserved_bits = true;  // RFC 5044 §7.1.1: "not checked on reception"
    const auto f = decode(wire.data(), wire.size(), nullptr, lenient);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->reserved_bits, 0x08);
    EXPECT_TRUE(f->crc);
}

TEST(MpaRequestReply, ErrorRejectBitInRequest) {
    auto wire = good_request();
    wire[16] |= 0x20;
    expect_error(wire, "R (reject)");
    decode_options lenient;
    lenient.ignore_reserved_bits = true;
    EXPECT_TRUE(decode(wire.data(), wire.size(), nullptr, lenient));
}

TEST(MpaRequestReply, ErrorRevision) {
    for (const std::uint8_t rev : {std::uint8_t{0}, std::uint8_t{3}, std::uint8_t{255}}) {
        auto wire = good_request();
        wire[17] = rev;
        expect_error(wire, "Rev " + std::to_string(rev));
    }
}

TEST(MpaRequestReply, ErrorEnhancedNeedsRevision2) {
    request_reply f = make(true, 1);
    f.enhanced = true;
    expect_error(encode(f), "S (enhanced) flag needs Rev 2");
}

TEST(MpaRequestReply, ErrorEnhancedWithoutRoomForIrdOrd) {
    auto wire = hex("4d504120 49442052 65712046 72616d65 10020003 800880");
    expect_error(wire, "IRD/ORD");
}

TEST(MpaRequestReply, ReplyMayCarryRejectAndRevision2WithoutEnhanced) {
    request_reply f = make(false, 2);
    f.reject = true;
    const auto wire = encode(f);
    const auto back = decode(wire.data(), wire.size(), nullptr);
    ASSERT_TRUE(back);
    expect_same(*back, f);
}

}  // namespace
}  // namespace rnic::proto::mpa
