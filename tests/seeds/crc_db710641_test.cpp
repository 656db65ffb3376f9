// The seeds' CRC-32 with generator 0xDB710641 (draft-williams-rdmatcp-00 §3.4,
// draft-dicecco-vitcp-01 §3.6): the polynomial as the drafts write it, a bit-at-a-time reference
// written here against the table-driven library code, the literal §3.6 (a)-(e) procedure
// (long division of the whole segment with a zeroed CRC field) against crc_db710641() of the
// bytes before the field, the check value, streaming, residue, and Boost.CRC when available.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "seeds_test_util.h"

#ifdef RNIC_HAVE_BOOST_CRC
#include <boost/crc.hpp>
#endif

namespace rnic::proto {
namespace {

using seeds_test::bytes;

// Bit-at-a-time, LSB-first register, reflected polynomial: the Ethernet algorithm with the
// seeds' generator. Written independently of the slicing tables in crc32c.cpp.
std::uint32_t reference(const std::uint8_t* p, std::size_t n) {
    std::uint32_t poly_msb_first = 0xDB710641u;
    std::uint32_t reflected = 0;
    for (int i = 0; i < 32; ++i)
        if ((poly_msb_first >> i) & 1u) reflected |= 1u << (31 - i);
    std::uint32_t reg = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i) {
        reg ^= p[i];
        for (int b = 0; b < 8; ++b) reg = (reg & 1u) ? (reg >> 1) ^ reflected : reg >> 1;
    }
    return ~reg;
}

std::uint32_t crc_of(const std::string& s) {
    return crc_db710641(s.data(), s.size());
}

TEST(CrcDb710641, PolynomialIsTheDraftsTermList) {
    // 000 §3.4 / 003 §3.6: x^32 + x^31 + x^30 + x^28 + x^27 + x^25 + x^24 + x^22 + x^21 + x^20
    //                      + x^16 + x^10 + x^9 + x^6 + 1
    std::uint64_t g = 0;
    for (int e : {32, 31, 30, 28, 27, 25, 24, 22, 21, 20, 16, 10, 9, 6, 0}) g |= std::uint64_t{1} << e;
    EXPECT_EQ(g & 0xFFFFFFFFu, 0xDB710641u);  // "In hex format with the x^32 term removed"
    // "the standard ethernet polynomial with a left-right reversal": reverse the 33 bits of
    // 0x104C11DB7 (IEEE 802.3).
    std::uint64_t ethernet = 0x104C11DB7u, reversed = 0;
    for (int i = 0; i <= 32; ++i)
        if ((ethernet >> i) & 1u) reversed |= std::uint64_t{1} << (32 - i);
    EXPECT_EQ(reversed, g);
}

TEST(CrcDb710641, CheckValueAndSmallVectors) {
    EXPECT_EQ(crc_of("123456789"), kCrcDb710641Check);
    EXPECT_EQ(kCrcDb710641Check, 0xE07E661Eu);
    EXPECT_EQ(crc_of(""), 0x00000000u);
    for (const std::string s : {"a", "abc", "123456789", "The quick brown fox jumps over the lazy dog"})
        EXPECT_EQ(crc_of(s), reference(reinterpret_cast<const std::uint8_t*>(s.data()), s.size())) << s;
    // Not the Ethernet CRC and not CRC32c: a different generator gives different values.
    EXPECT_NE(crc_of("123456789"), ethernet_fcs("123456789", 9));
    EXPECT_NE(crc_of("123456789"), crc32c("123456789", 9));
}

TEST(CrcDb710641, TableMatchesBitwiseReferenceOnRandomInputs) {
    std::mt19937_64 rng(0xDB710641);
    for (int iter = 0; iter < 2000; ++iter) {
        const std::size_t n = seeds_test::uniform(rng, 0, 300);
        const std::size_t misalign = seeds_test::uniform(rng, 0, 7);  // unaligned start pointers
        bytes buf = seeds_test::random_bytes(rng, n + misalign);
        const std::uint8_t* p = buf.data() + misalign;
        ASSERT_EQ(crc_db710641(p, n), reference(p, n)) << "length " << n << " misalign " << misalign;
    }
}

#ifdef RNIC_HAVE_BOOST_CRC
TEST(CrcDb710641, MatchesBoostCrcWithTheChosenParameters) {
    // width 32, poly 0xDB710641, init 0xFFFFFFFF, xorout 0xFFFFFFFF, reflected in and out.
    std::mt19937_64 rng(7);
    for (int iter = 0; iter < 200; ++iter) {
        const bytes data = seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 2000));
        boost::crc_optimal<32, 0xDB710641u, 0xFFFFFFFFu, 0xFFFFFFFFu, true, true> b;
        b.process_bytes(data.data(), data.size());
        ASSERT_EQ(crc_db710641(data.data(), data.size()), b.checksum());
    }
}
#endif

// 003 §3.6 (a)-(e), literally: M(x) is the whole segment with zero in the CRC field; the first
// 32 bits are complemented; M(x) is divided by G(x) (no extra x^32 factor); R(x) is complemented
// and placed in the CRC field. Bit order: Ethernet's, each octet least significant bit first,
// the first bit being the coefficient of x^(n-1). The CRC field is the last 32 bits, and the
// coefficient of x^k of R(x) goes to the bit that held x^k in M(x).
bytes literal_section_3_6(bytes segment, std::size_t crc_offset) {
    std::memset(segment.data() + crc_offset, 0, 4);  // (a)
    std::vector<int> bits;
    for (std::uint8_t byte : segment)
        for (int b = 0; b < 8; ++b) bits.push_back((byte >> b) & 1);
    for (int i = 0; i < 32; ++i) bits[i] ^= 1;  // (b)
    // (c), (d): long division over GF(2), highest coefficient first.
    const std::uint64_t g = 0x1DB710641u;
    std::uint64_t rem = 0;  // 33-bit window
    for (int bit : bits) {
        rem = (rem << 1) | static_cast<std::uint64_t>(bit);
        if (rem & (std::uint64_t{1} << 32)) rem ^= g;
    }
    // (e): complement, then x^31 .. x^0 into the field's bits in M(x) order.
    const std::uint32_t r = ~static_cast<std::uint32_t>(rem);
    for (int k = 0; k < 32; ++k) {
        const int coefficient = (r >> (31 - k)) & 1;  // k-th bit of the field carries x^(31-k)
        std::uint8_t& byte = segment[crc_offset + static_cast<std::size_t>(k / 8)];
        byte = static_cast<std::uint8_t>(byte | (coefficient << (k % 8)));
    }
    return segment;
}

TEST(CrcDb710641, Section36ProcedureEqualsCrcOfBytesBeforeTheFieldStoredLittleEndian) {
    std::mt19937_64 rng(36);
    for (int iter = 0; iter < 200; ++iter) {
        const std::size_t body = seeds_test::uniform(rng, 24, 200);  // a VI segment has >= 24 header bytes
        bytes seg = seeds_test::random_bytes(rng, body + 4);
        const bytes literal = literal_section_3_6(seg, body);
        bytes ours = seg;
        put_le32(ours.data() + body, crc_db710641(ours.data(), body));
        ASSERT_EQ(seeds_test::to_hex(literal), seeds_test::to_hex(ours)) << "body " << body;
    }
}

TEST(CrcDb710641, ZeroedFieldMustNotBeFedToTheTableAlgorithm) {
    // The mistake §3.6 invites: running the table algorithm over the segment *with* the zeroed
    // field multiplies by x^32 twice.
    const bytes body = seeds_test::text("VI segment body of some length");
    bytes with_zero = body;
    with_zero.resize(body.size() + 4, 0);
    EXPECT_NE(crc_db710641(with_zero.data(), with_zero.size()), crc_db710641(body.data(), body.size()));
}

TEST(CrcDb710641, ResidueOfAGoodSegmentIsConstant) {
    std::mt19937_64 rng(99);
    for (int iter = 0; iter < 100; ++iter) {
        bytes seg = seeds_test::random_bytes(rng, seeds_test::uniform(rng, 1, 500));
        const std::uint32_t crc = crc_db710641(seg.data(), seg.size());
        seg.resize(seg.size() + 4);
        put_le32(seg.data() + seg.size() - 4, crc);
        ASSERT_EQ(crc_db710641(seg.data(), seg.size()), kCrcDb710641Residue);
    }
}

TEST(CrcDb710641, StreamingEqualsOneShotForAnySplit) {
    std::mt19937_64 rng(5);
    for (int iter = 0; iter < 300; ++iter) {
        const bytes data = seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 600));
        crc_db710641_stream c;
        std::size_t pos = 0;
        while (pos < data.size()) {
            const std::size_t n = std::min(seeds_test::uniform(rng, 0, 40), data.size() - pos);
            c.update(data.data() + pos, n);
            pos += n;
        }
        ASSERT_EQ(c.value(), crc_db710641(data.data(), data.size()));
        // extend(crc(A), B) == crc(A ‖ B)
        const std::size_t cut = data.empty() ? 0 : seeds_test::uniform(rng, 0, data.size());
        ASSERT_EQ(crc_db710641_extend(crc_db710641(data.data(), cut), data.data() + cut, data.size() - cut), c.value());
    }
    crc_db710641_stream c;
    c.update("xyz", 3);
    c.reset();
    EXPECT_EQ(c.value(), 0u);
    c.update("123456789", 9);
    EXPECT_EQ(c.value(), kCrcDb710641Check);
    EXPECT_EQ(crc_db710641_extend(0, "123456789", 9), kCrcDb710641Check);
}

TEST(CrcDb710641, ExistingCrcsUnchanged) {
    EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
    EXPECT_EQ(ethernet_fcs("123456789", 9), 0xCBF43926u);
}

}  // namespace
}  // namespace rnic::proto
