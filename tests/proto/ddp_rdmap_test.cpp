// DDP / RDMAP header codecs (RFC 5041 §4, RFC 5040 §4, RFC 7306 §5-§6) and segmentation
// (RFC 5041 §5.2).
#include <gtest/gtest.h>

#include <limits>

#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"
#include "test_util.h"

namespace rnic::proto::ddp {
namespace {

using test::hex;
using test::to_hex;

constexpr opcode kAllOpcodes[] = {
    opcode::rdma_write,      opcode::read_request, opcode::read_response,      opcode::send,
    opcode::send_invalidate, opcode::send_se,      opcode::send_se_invalidate, opcode::terminate,
    opcode::immediate,       opcode::immediate_se, opcode::atomic_request,     opcode::atomic_response};

TEST(DdpHeader, RoundTripEveryOpcode) {
    std::uint32_t n = 1;
    for (const opcode op : kAllOpcodes) {
        for (const bool last : {false, true}) {
            header h;
            h.tagged = is_tagged(op);
            h.last = last;
            h.opcode = op;
            h.stag = 0x10000000u + n;
            h.tagged_offset = 0x0123456789ABCDEFull + n;
            h.invalidate_stag = h.tagged ? 0 : 0xC0DE0000u + n;
            h.queue = h.tagged ? 0 : n % 4;
            h.msn = h.tagged ? 0 : 0xFFFFFFF0u + n;
            h.mo = h.tagged ? 0 : 1000 * n;
            std::uint8_t buf[kUntaggedHeaderSize + 1] = {};
            ASSERT_EQ(encode(h, buf), h.size());
            std::string error;
            const auto back = decode_header(buf, h.size(), &error);
            ASSERT_TRUE(back) << error;
            EXPECT_EQ(back->tagged, h.tagged);
            EXPECT_EQ(back->last, last);
            EXPECT_EQ(back->ddp_version, 1);
            EXPECT_EQ(back->rdmap_version, 1);
            EXPECT_EQ(back->opcode, op);
            EXPECT_EQ(back->stag, h.tagged ? h.stag : 0u);
            EXPECT_EQ(back->tagged_offset, h.tagged ? h.tagged_offset : 0);
            EXPECT_EQ(back->invalidate_stag, h.invalidate_stag);
            EXPECT_EQ(back->queue, h.queue);
            EXPECT_EQ(back->msn, h.msn);
            EXPECT_EQ(back->mo, h.mo);
            EXPECT_EQ(buf[h.size()], 0) << "wrote past the header";
            ++n;
        }
    }
}

TEST(DdpHeader, ControlBytesOnTheWire) {
    header send;  // defaults: untagged, last, DV 1, RV 1, Send
    std::uint8_t buf[kUntaggedHeaderSize];
    encode(send, buf);
    EXPECT_EQ(buf[0], 0x41);
    EXPECT_EQ(buf[1], 0x43);
    header write;
    write.tagged = true;
    write.last = false;
    write.opcode = opcode::rdma_write;
    write.ddp_version = 0;
    write.rdmap_version = 0;  // RDMA Consortium version (RFC 5040 §4.1)
    encode(write, buf);
    EXPECT_EQ(buf[0], 0x80);
    EXPECT_EQ(buf[1], 0x00);
}

TEST(DdpHeader, DecodeIgnoresReservedBitsAndKeepsUnknownOpcodes) {
    auto wire = hex("7d 3f 00000000 00000000 00000001 00000000");  // all reserved bits set, opcode 15
    const auto h = decode_header(wire.data(), wire.size(), nullptr);
    ASSERT_TRUE(h);
    EXPECT_FALSE(h->tagged);
    EXPECT_TRUE(h->last);
    EXPECT_EQ(h->ddp_version, 1);
    EXPECT_EQ(h->rdmap_version, 0);
    EXPECT_EQ(static_cast<int>(h->opcode), 15);
    EXPECT_STREQ(to_string(h->opcode), "reserved opcode");
}

TEST(DdpHeader, DecodeShortInput) {
    std::string error;
    EXPECT_FALSE(decode_header(nullptr, 0, &error));
    EXPECT_NE(error.find("DDP header"), std::string::npos);
    const auto tagged = hex("c140 00001234 00000000 000010");
    EXPECT_FALSE(decode_header(tagged.data(), tagged.size(), &error));
    EXPECT_NE(error.find("13 bytes, needs 14"), std::string::npos) << error;
    const auto untagged = hex("4143 00000000 00000000 00000001 000000");
    EXPECT_FALSE(decode_header(untagged.data(), untagged.size(), &error));
    EXPECT_NE(error.find("17 bytes, needs 18"), std::string::npos) << error;
    EXPECT_EQ(header_size_from_control(0xC1), kTaggedHeaderSize);
    EXPECT_EQ(header_size_from_control(0x41), kUntaggedHeaderSize);
}

TEST(DdpOpcodes, NamesAndModel) {
    EXPECT_STREQ(to_string(opcode::send_se_invalidate), "Send with SE and Invalidate");
    EXPECT_STREQ(to_string(opcode::atomic_response), "Atomic Response");
    for (const opcode op : kAllOpcodes) {
        EXPECT_EQ(is_tagged(op), op == opcode::rdma_write || op == opcode::read_response) << to_string(op);
    }
    EXPECT_STREQ(to_string(atomic_opcode::compare_swap), "CmpSwap");
}

TEST(ReadRequest, RoundTripAndShort) {
    read_request rr{0xAAAA, 0x1122334455667788ull, 0xFFFFFFFFu, 0xBBBB, 0x8877665544332211ull};
    std::uint8_t buf[kReadRequestSize];
    encode(rr, buf);
    EXPECT_EQ(to_hex(buf, 8), "0000aaaa 11223344");
    std::string error;
    const auto back = decode_read_request(buf, sizeof buf, &error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(back->sink_stag, rr.sink_stag);
    EXPECT_EQ(back->sink_to, rr.sink_to);
    EXPECT_EQ(back->size, rr.size);
    EXPECT_EQ(back->src_stag, rr.src_stag);
    EXPECT_EQ(back->src_to, rr.src_to);
    EXPECT_FALSE(decode_read_request(buf, 27, &error));
    EXPECT_NE(error.find("RDMA Read Request header: 27 bytes, needs 28"), std::string::npos) << error;
}

TEST(Atomics, RequestRoundTripAndShort) {
    atomic_request req;
    req.op = atomic_opcode::compare_swap;
    req.request_id = 0xDEADBEEF;
    req.stag = 0x1234;
    req.tagged_offset = 0x1000;
    req.add_or_swap_data = 1;
    req.add_or_swap_mask = 2;
    req.compare_data = 3;
    req.compare_mask = 4;
    std::uint8_t buf[kAtomicRequestSize];
    encode(req, buf);
    EXPECT_EQ(get_be32(buf), 2u);
    const auto back = decode_atomic_request(buf, sizeof buf, nullptr);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->op, req.op);
    EXPECT_EQ(back->request_id, req.request_id);
    EXPECT_EQ(back->stag, req.stag);
    EXPECT_EQ(back->tagged_offset, req.tagged_offset);
    EXPECT_EQ(back->add_or_swap_data, 1u);
    EXPECT_EQ(back->add_or_swap_mask, 2u);
    EXPECT_EQ(back->compare_data, 3u);
    EXPECT_EQ(back->compare_mask, 4u);
    std::string error;
    EXPECT_FALSE(decode_atomic_request(buf, 51, &error));
    EXPECT_NE(error.find("51 bytes, needs 52"), std::string::npos) << error;
    // The 28 reserved bits are ignored; an unassigned AOpCode is kept for the engine to reject.
    buf[0] = 0xFF;
    buf[3] = 0xF1;
    const auto odd = decode_atomic_request(buf, sizeof buf, nullptr);
    ASSERT_TRUE(odd);
    EXPECT_EQ(static_cast<int>(odd->op), 1);
}

TEST(Atomics, ResponseAndImmediateRoundTripAndShort) {
    std::uint8_t buf[kAtomicResponseSize];
    encode(atomic_response{7, 0xFEDCBA9876543210ull}, buf);
    const auto back = decode_atomic_response(buf, sizeof buf, nullptr);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->request_id, 7u);
    EXPECT_EQ(back->original_value, 0xFEDCBA9876543210ull);
    EXPECT_FALSE(decode_atomic_response(buf, 11, nullptr));

    std::uint8_t imm[kImmediateDataSize];
    encode_immediate(0x1122334455667788ull, imm);
    EXPECT_EQ(to_hex(imm, 8), "11223344 55667788");
    EXPECT_EQ(decode_immediate(imm, 8, nullptr).value_or(0), 0x1122334455667788ull);
    std::string error;
    EXPECT_FALSE(decode_immediate(imm, 7, &error));
    EXPECT_NE(error.find("Immediate Data"), std::string::npos);
}

TEST(TerminateHeader, ControlWordOnly) {
    terminate t;
    t.layer = term_layer::llp;
    t.etype = term::kLlpMpa;
    t.code = term::kMpaCrcError;
    const auto wire = encode(t);
    EXPECT_EQ(to_hex(wire), "20020000");
    const auto back = decode_terminate(wire.data(), wire.size(), nullptr);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->layer, term_layer::llp);
    EXPECT_EQ(back->code, 2);
    EXPECT_FALSE(back->m || back->d || back->r);
}

TEST(TerminateHeader, WithUntaggedDdpHeaderAndRdmaHeader) {
    header rreq;
    rreq.opcode = opcode::read_request;
    rreq.queue = kQueueReadRequest;
    rreq.msn = 5;
    terminate t;
    t.layer = term_layer::rdma;
    t.etype = term::kRdmaRemoteProtection;
    t.code = term::kRdmaBaseOrBounds;
    t.m = t.d = t.r = true;
    t.ddp_segment_length = 28;
    t.ddp_header.resize(kUntaggedHeaderSize);
    encode(rreq, t.ddp_header.data());
    t.rdma_header.resize(kReadRequestSize);
    encode(read_request{1, 2, 3, 4, 5}, t.rdma_header.data());
    const auto wire = encode(t);
    ASSERT_EQ(wire.size(), 4u + 2 + 18 + 28);
    EXPECT_EQ(to_hex(wire.data(), 4), "0101e000");
    const auto back = decode_terminate(wire.data(), wire.size(), nullptr);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->etype, 1);
    EXPECT_EQ(back->code, 1);
    EXPECT_TRUE(back->m && back->d && back->r);
    EXPECT_EQ(back->ddp_segment_length, 28);
    EXPECT_EQ(back->ddp_header, t.ddp_header);
    EXPECT_EQ(back->rdma_header, t.rdma_header);
}

TEST(TerminateHeader, DecodeErrors) {
    std::string error;
    const auto control = hex("0100c0");
    EXPECT_FALSE(decode_terminate(control.data(), control.size(), &error));
    EXPECT_NE(error.find("Terminate header"), std::string::npos);
    const auto no_ddp_byte = hex("0100c000 0020");
    EXPECT_FALSE(decode_terminate(no_ddp_byte.data(), no_ddp_byte.size(), &error));
    EXPECT_NE(error.find("D set"), std::string::npos) << error;
    const auto short_tagged = hex("0100c000 0020c140 00001234 00000000 000010");
    EXPECT_FALSE(decode_terminate(short_tagged.data(), short_tagged.size(), &error));
    EXPECT_NE(error.find("terminated DDP header: 19 bytes, needs 20"), std::string::npos) << error;
    const auto short_rdma = hex("01012000 00000001");
    EXPECT_FALSE(decode_terminate(short_rdma.data(), short_rdma.size(), &error));
    EXPECT_NE(error.find("terminated RDMA header"), std::string::npos) << error;
}

TEST(Segmentation, EmptyMessageIsOneEmptyLastSegment) {
    const auto s = segment_message(0, 1454, false);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].offset, 0u);
    EXPECT_EQ(s[0].length, 0u);
    EXPECT_TRUE(s[0].last);
    // Even when no payload would fit: the header alone is a valid segment.
    EXPECT_EQ(segment_message(0, kTaggedHeaderSize, true).size(), 1u);
}

TEST(Segmentation, Rfc5041Examples) {
    const auto untagged = segment_message(2048, 1500, false);
    ASSERT_EQ(untagged.size(), 2u);
    EXPECT_EQ(untagged[0].length, 1482u);
    EXPECT_FALSE(untagged[0].last);
    EXPECT_EQ(untagged[1].offset, 1482u);
    EXPECT_EQ(untagged[1].length, 566u);
    EXPECT_TRUE(untagged[1].last);
    const auto tagged = segment_message(2048, 1500, true);
    ASSERT_EQ(tagged.size(), 2u);
    EXPECT_EQ(tagged[0].length, 1486u);
    EXPECT_EQ(tagged[1].offset, 1486u);
    EXPECT_EQ(tagged[1].length, 562u);
}

TEST(Segmentation, ExactMultiplesAndSmallMessages) {
    const auto exact = segment_message(3 * 1436, 1454, false);
    ASSERT_EQ(exact.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(exact[i].offset, i * 1436);
        EXPECT_EQ(exact[i].length, 1436u);
        EXPECT_EQ(exact[i].last, i == 2);
    }
    const auto one = segment_message(1, 1454, true);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].length, 1u);
    EXPECT_TRUE(one[0].last);
    const auto tiny = segment_message(5, kUntaggedHeaderSize + 1, false);
    ASSERT_EQ(tiny.size(), 5u);
    EXPECT_TRUE(tiny[4].last);
}

TEST(Segmentation, ImpossibleRequestsGiveNoSegments) {
    EXPECT_TRUE(segment_message(100, kUntaggedHeaderSize - 1, false).empty());
    EXPECT_TRUE(segment_message(0, kTaggedHeaderSize - 1, true).empty());
    EXPECT_TRUE(segment_message(100, kUntaggedHeaderSize, false).empty());
    EXPECT_TRUE(segment_message(100, 0, true).empty());
    if constexpr (sizeof(std::size_t) > 4) {
        const std::size_t too_long = std::size_t{std::numeric_limits<std::uint32_t>::max()} + 1;
        EXPECT_TRUE(segment_message(too_long, 65535, true).empty());
    }
}

}  // namespace
}  // namespace rnic::proto::ddp
