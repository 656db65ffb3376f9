// MPA transmit framing: size rules (RFC 5044 §4.1, §4.5; test-vectors.md §3), RFC 5044 Fig. 4-6
// (test-vectors.md §2) and Marker placement / CRC coverage (§4.3, §4.4).
#include <gtest/gtest.h>

#include <random>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"
#include "test_util.h"

namespace rnic::proto::mpa {
namespace {

using test::hex;
using test::to_hex;

// Send, Last, QN 0, MSN msn, MO 0 followed by `payload` zero bytes (the RFC 5044 examples).
std::vector<std::uint8_t> zero_send(std::uint32_t msn, std::size_t payload) {
    ddp::header h;
    h.opcode = ddp::opcode::send;
    h.queue = ddp::kQueueSend;
    h.msn = msn;
    std::vector<std::uint8_t> ulpdu(h.size() + payload, 0);
    ddp::encode(h, ulpdu.data());
    return ulpdu;
}

TEST(MpaSizes, PadLength) {
    EXPECT_EQ(pad_length(42), 0u);
    // test-vectors.md §3/§5 label these "PAD 1" and "PAD 3" the other way round, but their hex
    // (and the formula) give: 13-byte Write payload, ULPDU 27 -> 2 + 27 = 29 -> PAD 3;
    // Send "inv", ULPDU 21 -> 23 -> PAD 1.
    EXPECT_EQ(pad_length(27), 3u);
    EXPECT_EQ(pad_length(21), 1u);
    EXPECT_EQ(pad_length(0), 2u);
    EXPECT_EQ(pad_length(24), 2u);
    for (std::size_t len = 0; len < 64; ++len) EXPECT_EQ((2 + len + pad_length(len)) % 4, 0u);
}

TEST(MpaSizes, MaxUlpdu) {
    EXPECT_EQ(max_ulpdu(1460, true), 1442u);
    EXPECT_EQ(max_ulpdu(1460, false), 1454u);
    EXPECT_EQ(max_ulpdu(1448, true), 1430u);
    EXPECT_EQ(max_ulpdu(1448, false), 1442u);
    EXPECT_EQ(max_ulpdu(8960, true), 8882u);
    EXPECT_EQ(max_ulpdu(8960, false), 8954u);
    EXPECT_EQ(max_ulpdu(1461, false), 1461u - 7u);  // EMSS mod 4 = 1
    // §4.5: never below 128, even for a tiny (or zero) EMSS; never above the 16-bit length.
    EXPECT_EQ(max_ulpdu(100, true), 128u);
    EXPECT_EQ(max_ulpdu(0, false), 128u);
    EXPECT_EQ(max_ulpdu(200000, false), 65535u);
}

TEST(MpaSizes, WireLengthWithoutMarkers) {
    EXPECT_EQ(fpdu_wire_length(42, false, 0), 48u);
    EXPECT_EQ(fpdu_wire_length(27, false, 12345), 36u);
    EXPECT_EQ(fpdu_wire_length(0, false, 0), 8u);
}

TEST(MpaSizes, WireLengthCountsMarkers) {
    EXPECT_EQ(fpdu_wire_length(42, true, 0), 52u);         // Fig. 5: leading Marker
    EXPECT_EQ(fpdu_wire_length(42, true, 0x1ec), 52u);     // Fig. 6: inner Marker
    EXPECT_EQ(fpdu_wire_length(42, true, 4), 48u);         // no Marker reached
    EXPECT_EQ(fpdu_wire_length(1218, true, 32), 1232u);    // two inner Markers
    EXPECT_EQ(fpdu_wire_length(42, true, 512 - 48), 48u);  // next Marker right after the CRC
    EXPECT_EQ(fpdu_wire_length(42, true, 512 - 44), 52u);  // Marker right after the PAD
}

TEST(MpaFraming, Rfc5044Figure5FirstFpduWithLeadingMarker) {
    const auto ulpdu = zero_send(1, 24);
    ASSERT_EQ(ulpdu.size(), 0x2au);
    std::vector<std::uint8_t> out;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 0, out);
    EXPECT_EQ(to_hex(out), to_hex(hex("00000000 002a4143 00000000 00000000 00000001 00000000"
                                      "00000000 00000000 00000000 00000000 00000000 00000000"
                                      "52239983")));
    EXPECT_EQ(get_le32(out.data() + out.size() - 4), 0x83992352u);
}

TEST(MpaFraming, Rfc5044Figure6MarkerInsideSecondFpdu) {
    const auto ulpdu = zero_send(2, 24);
    std::vector<std::uint8_t> out;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 0x1ec, out);
    EXPECT_EQ(to_hex(out), to_hex(hex("002a4143 00000000 00000000 00000002 00000000"
                                      "00000014"
                                      "00000000 00000000 00000000 00000000 00000000 00000000"
                                      "84925898")));
    EXPECT_EQ(get_le32(out.data() + out.size() - 4), 0x98589284u);
}

// Fig. 6 in context: a 482-byte-ULPDU first FPDU (492 bytes with its leading Marker) puts the
// second FPDU at stream offset 0x1ec.
TEST(MpaFraming, Rfc5044Figure6AsPartOfAStream) {
    std::vector<std::uint8_t> stream;
    const auto first = zero_send(1, 482 - 18);
    build_fpdu(first.data(), first.size(), true, true, 0, stream);
    ASSERT_EQ(stream.size(), 492u);
    const auto second = zero_send(2, 24);
    build_fpdu(second.data(), second.size(), true, true, static_cast<std::uint32_t>(stream.size()), stream);
    const std::vector<std::uint8_t> fig6(stream.begin() + 0x1ec, stream.end());
    EXPECT_EQ(to_hex(fig6),
              "002a4143 00000000 00000000 00000002 00000000 00000014 00000000 00000000 "
              "00000000 00000000 00000000 00000000 84925898");
}

// Fig. 4 layout: ULPDU_Length 0x0010, octets 0-9, Marker FPDUPTR 0x000C, octets 10-15, PAD 2, CRC.
TEST(MpaFraming, Rfc5044Figure4Layout) {
    std::vector<std::uint8_t> ulpdu(16);
    for (std::size_t i = 0; i < ulpdu.size(); ++i) ulpdu[i] = static_cast<std::uint8_t>(0xA0 + i);
    std::vector<std::uint8_t> out;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 512 - 12, out);
    ASSERT_EQ(out.size(), 2u + 10 + 4 + 6 + 2 + 4);
    EXPECT_EQ(get_be16(out.data()), 0x0010);
    EXPECT_EQ(std::vector<std::uint8_t>(out.begin() + 2, out.begin() + 12),
              std::vector<std::uint8_t>(ulpdu.begin(), ulpdu.begin() + 10));
    EXPECT_EQ(get_be32(out.data() + 12), 0x0000000Cu);
    EXPECT_EQ(std::vector<std::uint8_t>(out.begin() + 16, out.begin() + 22),
              std::vector<std::uint8_t>(ulpdu.begin() + 10, ulpdu.end()));
    EXPECT_EQ(get_be16(out.data() + 22), 0u);                      // PAD
    EXPECT_EQ(get_le32(out.data() + 24), crc32c(out.data(), 24));  // Marker covered
}

// A 1218-byte ULPDU starting 32 bytes past a Marker boundary holds two Markers, FPDUPTR 480
// and 992 (wire distances from ULPDU_Length, the first Marker included in the second).
TEST(MpaFraming, LargeFpduWithTwoInnerMarkers) {
    std::mt19937_64 rng(7);
    const auto ulpdu = test::random_bytes(rng, 1218);
    std::vector<std::uint8_t> out;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 512 + 32, out);
    ASSERT_EQ(out.size(), 1232u);
    EXPECT_EQ(get_be32(out.data() + 480), 480u);
    EXPECT_EQ(get_be32(out.data() + 992), 992u);
    std::vector<std::uint8_t> unmarked(out.begin(), out.begin() + 480);
    unmarked.insert(unmarked.end(), out.begin() + 484, out.begin() + 992);
    unmarked.insert(unmarked.end(), out.begin() + 996, out.end() - 4);
    EXPECT_EQ(get_be16(unmarked.data()), 1218);
    EXPECT_EQ(std::vector<std::uint8_t>(unmarked.begin() + 2, unmarked.end()), ulpdu);  // PAD 0
    EXPECT_EQ(get_le32(out.data() + out.size() - 4), crc32c(out.data(), out.size() - 4));
}

// §4.4: "If there is a Marker immediately following the PAD, the Marker is included in the
// CRC calculation for this FPDU" - and it points back to this FPDU.
TEST(MpaFraming, MarkerRightAfterPadIsCoveredAndPointsBack) {
    const auto ulpdu = zero_send(1, 24);  // 42 bytes: 2 + 42 = 44, PAD 0
    std::vector<std::uint8_t> out;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 512 - 44, out);
    ASSERT_EQ(out.size(), 52u);
    EXPECT_EQ(get_be32(out.data() + 44), 44u);
    EXPECT_EQ(get_le32(out.data() + 48), crc32c(out.data(), 48));
}

TEST(MpaFraming, MarkerRightAfterCrcBelongsToNextFpdu) {
    const auto ulpdu = zero_send(1, 24);
    std::vector<std::uint8_t> out;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 512 - 48, out);
    EXPECT_EQ(out.size(), 48u);
}

TEST(MpaFraming, MarkersAcrossSequenceWrap) {
    const auto ulpdu = zero_send(1, 24);
    std::vector<std::uint8_t> out;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 0xFFFFFFF0u, out);  // Marker at position 0
    ASSERT_EQ(out.size(), 52u);
    EXPECT_EQ(get_be32(out.data() + 16), 16u);
    EXPECT_EQ(get_le32(out.data() + 48), crc32c(out.data(), 48));
}

TEST(MpaFraming, CrcOffGivesZeroField) {
    const auto ulpdu = zero_send(1, 5);
    std::vector<std::uint8_t> out;
    build_fpdu(ulpdu.data(), ulpdu.size(), false, false, 0, out);
    ASSERT_EQ(out.size(), 2u + 23 + 3 + 4);
    EXPECT_EQ(get_be32(out.data() + out.size() - 4), 0u);
    EXPECT_EQ(get_be32(out.data() + out.size() - 8) & 0xFFFFFFu, 0u);  // PAD zero
}

TEST(MpaFraming, AppendsToExistingContent) {
    std::vector<std::uint8_t> out = {1, 2, 3};
    const auto ulpdu = zero_send(1, 0);
    build_fpdu(ulpdu.data(), ulpdu.size(), true, false, 0, out);
    ASSERT_EQ(out.size(), 3u + 24u);
    EXPECT_EQ(out[0], 1);
    EXPECT_EQ(get_be16(out.data() + 3), 18);
    EXPECT_EQ(get_le32(out.data() + out.size() - 4), crc32c(out.data() + 3, 20));
}

TEST(MpaFraming, RefusesUlpduLongerThanLengthField) {
    std::vector<std::uint8_t> big(65536, 0);
    std::vector<std::uint8_t> out = {9};
    build_fpdu(big.data(), big.size(), true, true, 0, out);
    EXPECT_EQ(out.size(), 1u);
}

// Every Marker sits at a multiple of 512 of marker space and carries the distance back to
// ULPDU_Length (0 when leading); wire length matches fpdu_wire_length, for any start position.
TEST(MpaFraming, MarkerPlacementProperty) {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 3000; ++round) {
        const std::size_t len = rng() % 3000;
        const auto pos = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() : (rng() % 2048) & ~3u);
        const auto ulpdu = test::random_bytes(rng, len);
        std::vector<std::uint8_t> out;
        build_fpdu(ulpdu.data(), len, true, true, pos, out);
        ASSERT_EQ(out.size(), fpdu_wire_length(len, true, pos)) << "len " << len << " pos " << pos;
        const std::size_t first = (512 - pos % 512) % 512;
        const bool leading = first == 0;
        const std::size_t len_at = leading ? 4 : 0;
        std::vector<std::uint8_t> data;
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (i >= first && (i - first) % 512 == 0) {
                const std::uint32_t expected = i == 0 ? 0 : static_cast<std::uint32_t>(i - len_at);
                if (i + 4 <= out.size()) {
                    ASSERT_EQ(get_be32(out.data() + i), expected & 0xFFFF);
                }
                i += 3;
                continue;
            }
            data.push_back(out[i]);
        }
        ASSERT_EQ(data.size(), 2 + len + pad_length(len) + 4);
        ASSERT_EQ(std::vector<std::uint8_t>(data.begin() + 2, data.begin() + 2 + static_cast<std::ptrdiff_t>(len)),
                  ulpdu);
    }
}

}  // namespace
}  // namespace rnic::proto::mpa
