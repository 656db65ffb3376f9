// CRC32c and Ethernet CRC-32: test-vectors.md §1 / §1.1 (RFC 3720 App. B.4), the residue
// property, hardware vs table path, streaming, and Boost.CRC as an independent reference.
#include "proto/crc32c.h"

#include <gtest/gtest.h>

#include <boost/crc.hpp>
#include <cstring>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "proto/bytes.h"
#include "test_util.h"

namespace rnic::proto {
namespace {

using test::hex;

std::uint32_t both(const std::string& s) {
    const std::uint32_t fast = crc32c(s.data(), s.size());
    EXPECT_EQ(fast, crc32c_portable(s.data(), s.size())) << "input \"" << s << "\"";
    return fast;
}

TEST(Crc32c, CatalogueVectors) {
    EXPECT_EQ(both("123456789"), 0xE3069283u);
    EXPECT_EQ(both(""), 0x00000000u);
    EXPECT_EQ(both("a"), 0xC1D04330u);
    EXPECT_EQ(both("abc"), 0x364B3FB7u);
    EXPECT_EQ(both("The quick brown fox jumps over the lazy dog"), 0x22620404u);
}

struct known_answer {
    std::vector<std::uint8_t> input;
    std::vector<std::uint8_t> wire;  // as printed in RFC 3720 App. B.4
    std::uint32_t value;
};

std::vector<known_answer> rfc3720_vectors() {
    std::vector<std::uint8_t> inc(32), dec(32);
    std::iota(inc.begin(), inc.end(), std::uint8_t{0});
    for (std::size_t i = 0; i < 32; ++i) dec[i] = static_cast<std::uint8_t>(31 - i);
    return {
        {std::vector<std::uint8_t>(32, 0x00), hex("aa36918a"), 0x8A9136AAu},
        {std::vector<std::uint8_t>(32, 0xFF), hex("43aba862"), 0x62A8AB43u},
        {inc, hex("4e79dd46"), 0x46DD794Eu},
        {dec, hex("5cdb3f11"), 0x113FDB5Cu},
        {hex("01c00000 00000000 00000000 00000000 14000000 00000400 00000014 00000018 "
             "28000000 00000000 02000000 00000000"),
         hex("563a96d9"), 0xD9963A56u},
    };
}

TEST(Crc32c, Rfc3720KnownAnswers) {
    for (const auto& v : rfc3720_vectors()) {
        const std::uint32_t crc = crc32c(v.input.data(), v.input.size());
        EXPECT_EQ(crc, v.value);
        EXPECT_EQ(crc32c_portable(v.input.data(), v.input.size()), v.value);
        // The RFC's wire bytes are the conventional value stored little-endian (§1.2).
        std::uint8_t wire[4];
        put_le32(wire, crc);
        EXPECT_EQ(std::vector<std::uint8_t>(wire, wire + 4), v.wire);
    }
}

// crc32c(M ‖ le32(crc32c(M))) is the constant residue 0x48674BC7 for every M.
TEST(Crc32c, Residue) {
    std::mt19937_64 rng(1);
    for (std::size_t len : {0u, 1u, 3u, 4u, 17u, 64u, 1000u}) {
        auto m = test::random_bytes(rng, len);
        const std::uint32_t crc = crc32c(m.data(), m.size());
        m.resize(len + 4);
        put_le32(m.data() + len, crc);
        EXPECT_EQ(crc32c(m.data(), m.size()), 0x48674BC7u) << "len " << len;
    }
}

TEST(Crc32c, HardwareMatchesPortableAllLengthsAndAlignments) {
    std::mt19937_64 rng(2);
    const auto buf = test::random_bytes(rng, 300 + 16);
    if (!crc32c_uses_hardware()) std::cout << "note: SSE4.2 not available, comparing the table path with itself\n";
    for (std::size_t len = 0; len <= 300; ++len) {
        const std::size_t align = rng() % 16;
        ASSERT_EQ(crc32c(buf.data() + align, len), crc32c_portable(buf.data() + align, len))
            << "len " << len << " offset " << align;
    }
}

TEST(Crc32c, StreamingInRandomChunksEqualsOneShot) {
    std::mt19937_64 rng(3);
    for (int round = 0; round < 200; ++round) {
        const auto data = test::random_bytes(rng, rng() % 2000);
        crc32c_stream stream;
        std::size_t at = 0;
        while (at < data.size()) {
            const std::size_t n = std::min<std::size_t>(data.size() - at, rng() % 40);
            stream.update(data.data() + at, n);
            at += n;
        }
        ASSERT_EQ(stream.value(), crc32c(data.data(), data.size()));
        ASSERT_EQ(crc32c_extend(crc32c(data.data(), data.size() / 2), data.data() + data.size() / 2,
                                data.size() - data.size() / 2),
                  stream.value());
        stream.reset();
        EXPECT_EQ(stream.value(), 0u);
    }
}

TEST(Crc32c, MatchesBoostCrc) {
    std::mt19937_64 rng(4);
    for (int round = 0; round < 500; ++round) {
        const auto data = test::random_bytes(rng, rng() % 4096);
        boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> reference;
        reference.process_bytes(data.data(), data.size());
        ASSERT_EQ(crc32c(data.data(), data.size()), reference.checksum());
        ASSERT_EQ(crc32c_portable(data.data(), data.size()), reference.checksum());
    }
}

TEST(EthernetFcs, CheckValueAndBoost) {
    EXPECT_EQ(ethernet_fcs("123456789", 9), 0xCBF43926u);
    EXPECT_EQ(ethernet_fcs("", 0), 0u);
    std::mt19937_64 rng(5);
    for (int round = 0; round < 200; ++round) {
        const auto data = test::random_bytes(rng, rng() % 1600);
        boost::crc_32_type reference;
        reference.process_bytes(data.data(), data.size());
        ASSERT_EQ(ethernet_fcs(data.data(), data.size()), reference.checksum());
    }
}

}  // namespace
}  // namespace rnic::proto
