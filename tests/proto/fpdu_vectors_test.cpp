// test-vectors.md §5: the FPDU of every opcode, built from the DDP/RDMAP encoders and
// mpa::build_fpdu (no Markers, CRC on), byte-exact; then deframed and decoded back.
#include <gtest/gtest.h>

#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"
#include "test_util.h"

namespace rnic::proto {
namespace {

using ddp::header;
using ddp::opcode;
using test::hex;
using test::to_hex;

header untagged(opcode op, std::uint32_t queue, std::uint32_t msn) {
    header h;
    h.opcode = op;
    h.queue = queue;
    h.msn = msn;
    return h;
}

header tagged(opcode op, std::uint32_t stag, std::uint64_t to) {
    header h;
    h.tagged = true;
    h.opcode = op;
    h.stag = stag;
    h.tagged_offset = to;
    return h;
}

// DDP header followed by `rest`.
std::vector<std::uint8_t> ulpdu(const header& h, const std::vector<std::uint8_t>& rest = {}) {
    std::vector<std::uint8_t> out(h.size());
    ddp::encode(h, out.data());
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
}

std::vector<std::uint8_t> fpdu(const std::vector<std::uint8_t>& u) {
    std::vector<std::uint8_t> out;
    mpa::build_fpdu(u.data(), u.size(), true, false, 0, out);
    return out;
}

struct vector {
    const char* name;
    std::vector<std::uint8_t> ulpdu;
    const char* wire;
};

std::vector<vector> vectors() {
    std::vector<vector> v;
    v.push_back({"send", ulpdu(untagged(opcode::send, ddp::kQueueSend, 1), test::bytes("hello iwarp!")),
                 "001e4143 00000000 00000000 00000001 00000000 68656c6c 6f206977 61727021 85c55345"});
    v.push_back({"rdma_write", ulpdu(tagged(opcode::rdma_write, 0x1234, 0x1000), std::vector<std::uint8_t>(13, 'W')),
                 "001bc140 00001234 00000000 00001000 57575757 57575757 57575757 57000000 1efd8370"});
    {
        std::vector<std::uint8_t> rr(ddp::kReadRequestSize);
        ddp::encode(ddp::read_request{0xaaaa, 0x2000, 64, 0xbbbb, 0x3000}, rr.data());
        v.push_back({"read_request", ulpdu(untagged(opcode::read_request, ddp::kQueueReadRequest, 1), rr),
                     "002e4141 00000000 00000001 00000001 00000000 0000aaaa 00000000 00002000"
                     "00000040 0000bbbb 00000000 00003000 3c052e56"});
    }
    {
        header h = untagged(opcode::send_invalidate, ddp::kQueueSend, 2);
        h.invalidate_stag = 0x55;
        v.push_back({"send_invalidate", ulpdu(h, test::bytes("inv")),
                     "00154144 00000055 00000000 00000002 00000000 696e7600 ed7725d5"});
    }
    {
        ddp::atomic_request req;
        req.op = ddp::atomic_opcode::fetch_add;
        req.request_id = 7;
        req.stag = 0x1234;
        req.tagged_offset = 0x1000;
        req.add_or_swap_data = 5;
        req.compare_mask = ~0ull;
        std::vector<std::uint8_t> body(ddp::kAtomicRequestSize);
        ddp::encode(req, body.data());
        v.push_back({"atomic_request", ulpdu(untagged(opcode::atomic_request, ddp::kQueueReadRequest, 2), body),
                     "0046414a 00000000 00000001 00000002 00000000 00000000 00000007 00001234"
                     "00000000 00001000 00000000 00000005 00000000 00000000 00000000 00000000"
                     "ffffffff ffffffff 27ec3efd"});
    }
    {
        std::vector<std::uint8_t> body(ddp::kAtomicResponseSize);
        ddp::encode(ddp::atomic_response{7, 41}, body.data());
        v.push_back({"atomic_response", ulpdu(untagged(opcode::atomic_response, ddp::kQueueAtomicResponse, 1), body),
                     "001e414b 00000000 00000003 00000001 00000000 00000007 00000000 00000029 b9ebafe8"});
    }
    {
        std::vector<std::uint8_t> body(ddp::kImmediateDataSize);
        ddp::encode_immediate(0x1122334455667788ull, body.data());
        v.push_back({"immediate", ulpdu(untagged(opcode::immediate, ddp::kQueueSend, 4), body),
                     "001a4148 00000000 00000000 00000004 00000000 11223344 55667788 0ba77a64"});
    }
    {
        ddp::terminate t;
        t.layer = ddp::term_layer::rdma;
        t.etype = ddp::term::kRdmaRemoteProtection;
        t.code = ddp::term::kRdmaInvalidStag;
        t.m = t.d = true;
        t.ddp_segment_length = 32;
        t.ddp_header.resize(ddp::kTaggedHeaderSize);
        ddp::encode(tagged(opcode::rdma_write, 0x1234, 0x1000), t.ddp_header.data());
        v.push_back({"terminate_rdma", ulpdu(untagged(opcode::terminate, ddp::kQueueTerminate, 1), ddp::encode(t)),
                     "00264147 00000000 00000002 00000001 00000000 0100c000 0020c140 00001234"
                     "00000000 00001000 2c04a23a"});
    }
    {
        ddp::terminate t;
        t.layer = ddp::term_layer::llp;
        t.etype = ddp::term::kLlpMpa;
        t.code = ddp::term::kMpaCrcError;
        v.push_back({"terminate_llp", ulpdu(untagged(opcode::terminate, ddp::kQueueTerminate, 2), ddp::encode(t)),
                     "00164147 00000000 00000002 00000002 00000000 20020000 56e88a9c"});
    }
    v.push_back({"zero_length_send", ulpdu(untagged(opcode::send, ddp::kQueueSend, 1)),
                 "00124143 00000000 00000000 00000001 00000000 587be8c4"});
    v.push_back(
        {"zero_length_write", ulpdu(tagged(opcode::rdma_write, 1, 0)), "000ec140 00000001 00000000 00000000 ebd34c5f"});
    return v;
}

TEST(FpduVectors, EveryOpcodeByteExact) {
    for (const auto& v : vectors()) {
        SCOPED_TRACE(v.name);
        EXPECT_EQ(to_hex(fpdu(v.ulpdu)), to_hex(hex(v.wire)));
    }
}

TEST(FpduVectors, DeframeAndDecodeBack) {
    std::vector<std::uint8_t> stream;
    const auto all = vectors();
    for (const auto& v : all) {
        const auto w = hex(v.wire);
        stream.insert(stream.end(), w.begin(), w.end());
    }
    std::vector<std::vector<std::uint8_t>> got;
    mpa::deframer d({}, [&](const std::uint8_t* p, std::size_t n) { got.emplace_back(p, p + n); });
    ASSERT_EQ(d.feed(stream.data(), stream.size()), mpa::deframe_error::none) << d.error_detail();
    ASSERT_EQ(got.size(), all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
        SCOPED_TRACE(all[i].name);
        EXPECT_EQ(got[i], all[i].ulpdu);
        const auto h = ddp::decode_header(got[i].data(), got[i].size(), nullptr);
        ASSERT_TRUE(h);
        EXPECT_TRUE(h->last);
        EXPECT_EQ(h->tagged, ddp::is_tagged(h->opcode));
    }
    // Spot checks of the decoded bodies.
    const auto term = ddp::decode_terminate(got[7].data() + 18, got[7].size() - 18, nullptr);
    ASSERT_TRUE(term);
    EXPECT_EQ(term->ddp_segment_length, 32);
    EXPECT_EQ(to_hex(term->ddp_header), "c1400000 12340000 00000000 1000");
    const auto rr = ddp::decode_read_request(got[2].data() + 18, got[2].size() - 18, nullptr);
    ASSERT_TRUE(rr);
    EXPECT_EQ(rr->size, 64u);
    EXPECT_EQ(rr->src_to, 0x3000u);
}

// test-vectors.md §5 "Negative": the Send with the CRC's lowest bit flipped.
TEST(FpduVectors, FlippedCrcBitIsRejected) {
    auto w = hex("001e4143 00000000 00000000 00000001 00000000 68656c6c 6f206977 61727021 85c55345");
    w[w.size() - 4] ^= 0x01;
    int delivered = 0;
    mpa::deframer d({}, [&](const std::uint8_t*, std::size_t) { ++delivered; });
    EXPECT_EQ(d.feed(w.data(), w.size()), mpa::deframe_error::crc_mismatch);
    EXPECT_EQ(delivered, 0);
}

}  // namespace
}  // namespace rnic::proto
