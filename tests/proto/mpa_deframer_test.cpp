// MPA receive side: reassembly across arbitrary chunk boundaries, Marker removal and checking,
// CRC checking and the sticky error state (RFC 5044 §4.3, §4.4, §6, §8).
#include <gtest/gtest.h>

#include <random>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "proto/mpa.h"
#include "test_util.h"

namespace rnic::proto::mpa {
namespace {

struct stream {
    std::vector<std::vector<std::uint8_t>> ulpdus;
    std::vector<std::uint8_t> wire;
    std::vector<std::size_t> fpdu_starts;  // offsets into wire
};

stream make_stream(std::mt19937_64& rng, std::size_t count, std::size_t max_len, bool crc, bool markers,
                   std::uint32_t start_pos) {
    stream s;
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t len = rng() % 8 == 0 ? 0 : rng() % (max_len + 1);
        s.ulpdus.push_back(test::random_bytes(rng, len));
        s.fpdu_starts.push_back(s.wire.size());
        build_fpdu(s.ulpdus.back().data(), len, crc, markers, start_pos + static_cast<std::uint32_t>(s.wire.size()),
                   s.wire);
    }
    return s;
}

struct collector {
    std::vector<std::vector<std::uint8_t>> got;
    deframer::sink_fn sink() {
        return [this](const std::uint8_t* p, std::size_t n) { got.emplace_back(p, p + n); };
    }
};

// Feeds `wire` in chunks: 0 = random sizes, otherwise that fixed size.
deframe_error feed_chunks(deframer& d, const std::vector<std::uint8_t>& wire, std::size_t chunk, std::mt19937_64& rng) {
    std::size_t at = 0;
    deframe_error e = deframe_error::none;
    while (at < wire.size()) {
        std::size_t n = chunk != 0 ? chunk : 1 + rng() % (rng() % 2 == 0 ? 16 : 3000);
        n = std::min(n, wire.size() - at);
        e = d.feed(wire.data() + at, n);
        at += n;
    }
    return e;
}

class DeframerRoundTrip : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(DeframerRoundTrip, ManyFpdusInAnyChunking) {
    const auto [markers, crc] = GetParam();
    std::mt19937_64 rng(markers * 2 + crc + 100);
    for (int round = 0; round < 60; ++round) {
        // Aligned starts are what MPA produces; unaligned ones stress the generic Marker code.
        std::uint32_t start = static_cast<std::uint32_t>(rng());
        if (round % 3 != 0) start &= ~3u;
        if (round % 7 == 0) start = 0;
        const stream s = make_stream(rng, 1 + rng() % 40, round % 2 == 0 ? 100 : 2500, crc, markers, start);
        for (const std::size_t chunk : {std::size_t{0}, std::size_t{1}, std::size_t{7}, s.wire.size()}) {
            collector c;
            deframer d({markers, crc, start, 65535}, c.sink());
            ASSERT_EQ(feed_chunks(d, s.wire, chunk, rng), deframe_error::none) << d.error_detail();
            ASSERT_EQ(c.got, s.ulpdus) << "round " << round << " chunk " << chunk;
            EXPECT_EQ(d.fpdus(), s.ulpdus.size());
            EXPECT_EQ(d.bytes_consumed(), s.wire.size());
            EXPECT_TRUE(d.at_fpdu_boundary());
        }
    }
}

std::string round_trip_name(const ::testing::TestParamInfo<std::tuple<bool, bool>>& param_info) {
    return std::string(std::get<0>(param_info.param) ? "markers" : "no_markers") + "_" +
           (std::get<1>(param_info.param) ? "crc" : "no_crc");
}

INSTANTIATE_TEST_SUITE_P(MarkersCrc, DeframerRoundTrip, ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         round_trip_name);

TEST(Deframer, LargeFpduWithTwoInnerMarkers) {
    std::mt19937_64 rng(5);
    const auto ulpdu = test::random_bytes(rng, 1218);
    std::vector<std::uint8_t> wire;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 32, wire);
    ASSERT_EQ(get_be32(wire.data() + 480), 480u);
    ASSERT_EQ(get_be32(wire.data() + 992), 992u);
    for (std::size_t chunk : {std::size_t{1}, std::size_t{481}, wire.size()}) {
        collector c;
        deframer d({true, true, 32, 65535}, c.sink());
        EXPECT_EQ(feed_chunks(d, wire, chunk, rng), deframe_error::none) << d.error_detail();
        ASSERT_EQ(c.got.size(), 1u);
        EXPECT_EQ(c.got[0], ulpdu);
    }
}

TEST(Deframer, FlippedBitGivesCrcMismatchAndStopsDelivering) {
    std::mt19937_64 rng(6);
    for (const bool markers : {false, true}) {
        const stream s = make_stream(rng, 10, 700, true, markers, 0);
        for (int trial = 0; trial < 40; ++trial) {
            auto wire = s.wire;
            const std::size_t victim = 3 + rng() % 5;  // an FPDU in the middle
            const std::size_t begin = s.fpdu_starts[victim];
            const std::size_t end = s.fpdu_starts[victim + 1];
            const std::size_t bit = begin * 8 + rng() % ((end - begin) * 8);
            wire[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
            collector c;
            deframer d({markers, true, 0, 65535}, c.sink());
            const deframe_error e = feed_chunks(d, wire, trial % 2 == 0 ? 0 : wire.size(), rng);
            // Nothing from the damaged FPDU onwards may be delivered.
            ASSERT_LE(c.got.size(), victim);
            for (std::size_t i = 0; i < c.got.size(); ++i) EXPECT_EQ(c.got[i], s.ulpdus[i]);
            // A flip in ULPDU_Length desynchronises framing (the deframer may simply wait for
            // more bytes); a flip anywhere else, Markers included, is a CRC error.
            const std::size_t len_at = begin + (markers && begin % 512 == 0 ? 4 : 0);
            if (bit / 8 < len_at || bit / 8 >= len_at + 2) {
                EXPECT_EQ(e, deframe_error::crc_mismatch) << d.error_detail();
                EXPECT_EQ(c.got.size(), victim);
            }
        }
    }
}

TEST(Deframer, CrcErrorDetailNamesStreamByte) {
    const std::vector<std::uint8_t> ulpdu(30, 0x11);
    std::vector<std::uint8_t> wire;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, false, 0, wire);
    const std::size_t second = wire.size();
    build_fpdu(ulpdu.data(), ulpdu.size(), true, false, 0, wire);
    wire.back() ^= 0x01;  // lowest bit of the CRC field's last byte
    collector c;
    deframer d({false, true, 0, 65535}, c.sink());
    EXPECT_EQ(d.feed(wire.data(), wire.size()), deframe_error::crc_mismatch);
    EXPECT_EQ(d.error(), deframe_error::crc_mismatch);
    EXPECT_NE(d.error_detail().find("stream byte " + std::to_string(second)), std::string::npos) << d.error_detail();
    EXPECT_EQ(c.got.size(), 1u);
    EXPECT_EQ(d.fpdus(), 1u);
    // Sticky: later input is neither consumed nor delivered.
    const std::uint64_t consumed = d.bytes_consumed();
    std::vector<std::uint8_t> good;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, false, 0, good);
    EXPECT_EQ(d.feed(good.data(), good.size()), deframe_error::crc_mismatch);
    EXPECT_EQ(d.bytes_consumed(), consumed);
    EXPECT_EQ(c.got.size(), 1u);
    EXPECT_STREQ(to_string(deframe_error::crc_mismatch), "crc_mismatch");
}

TEST(Deframer, CrcNotCheckedWhenDisabled) {
    const std::vector<std::uint8_t> ulpdu(30, 0x22);
    std::vector<std::uint8_t> wire;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, false, 0, wire);
    wire.back() ^= 0xFF;
    collector c;
    deframer d({false, false, 0, 65535}, c.sink());
    EXPECT_EQ(d.feed(wire.data(), wire.size()), deframe_error::none);
    ASSERT_EQ(c.got.size(), 1u);
}

TEST(Deframer, TooLongUlpdu) {
    const std::vector<std::uint8_t> ulpdu(200, 0x33);
    std::vector<std::uint8_t> wire;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, false, 0, wire);
    for (const std::size_t chunk : {std::size_t{1}, wire.size()}) {
        collector c;
        deframer d({false, true, 0, 199}, c.sink());
        std::mt19937_64 rng(1);
        EXPECT_EQ(feed_chunks(d, wire, chunk, rng), deframe_error::ulpdu_too_long);
        EXPECT_NE(d.error_detail().find("ULPDU_Length 200"), std::string::npos) << d.error_detail();
        EXPECT_EQ(d.bytes_consumed(), 2u);
        EXPECT_TRUE(c.got.empty());
        EXPECT_STREQ(to_string(d.error()), "ulpdu_too_long");
    }
}

TEST(Deframer, ExactMaxUlpduAccepted) {
    const std::vector<std::uint8_t> ulpdu(199, 0x33);
    std::vector<std::uint8_t> wire;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, false, 0, wire);
    collector c;
    deframer d({false, true, 0, 199}, c.sink());
    EXPECT_EQ(d.feed(wire.data(), wire.size()), deframe_error::none);
    EXPECT_EQ(c.got.size(), 1u);
}

// Rewrites the FPDUPTR of the Marker at `marker_at` and, when `fix_crc`, recomputes the CRC so
// only the Marker is wrong (§8 code 3 applies "in the event that the CRC is valid").
void corrupt_marker(std::vector<std::uint8_t>& fpdu, std::size_t marker_at, std::uint16_t value, bool fix_crc) {
    put_be16(fpdu.data() + marker_at + 2, value);
    if (fix_crc) put_le32(fpdu.data() + fpdu.size() - 4, crc32c(fpdu.data(), fpdu.size() - 4));
}

TEST(Deframer, WrongFpduptrWithGoodCrcIsMarkerInvalid) {
    std::mt19937_64 rng(8);
    const auto ulpdu = test::random_bytes(rng, 1218);
    std::vector<std::uint8_t> wire;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 32, wire);
    corrupt_marker(wire, 992, 996, true);
    collector c;
    deframer d({true, true, 32, 65535}, c.sink());
    EXPECT_EQ(d.feed(wire.data(), wire.size()), deframe_error::marker_invalid);
    EXPECT_NE(d.error_detail().find("FPDUPTR 996, expected 992"), std::string::npos) << d.error_detail();
    EXPECT_TRUE(c.got.empty());
}

TEST(Deframer, WrongFpduptrWithBadCrcIsCrcMismatch) {
    std::mt19937_64 rng(9);
    const auto ulpdu = test::random_bytes(rng, 1218);
    std::vector<std::uint8_t> wire;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 32, wire);
    corrupt_marker(wire, 480, 484, false);
    deframer d({true, true, 32, 65535}, [](const std::uint8_t*, std::size_t) {});
    EXPECT_EQ(d.feed(wire.data(), wire.size()), deframe_error::crc_mismatch);
}

TEST(Deframer, NonZeroLeadingMarkerWithoutCrcIsMarkerInvalid) {
    const std::vector<std::uint8_t> ulpdu(42, 0x44);
    std::vector<std::uint8_t> wire;
    build_fpdu(ulpdu.data(), ulpdu.size(), false, true, 0, wire);
    corrupt_marker(wire, 0, 8, false);
    deframer d({true, false, 0, 65535}, [](const std::uint8_t*, std::size_t) {});
    EXPECT_EQ(d.feed(wire.data(), wire.size()), deframe_error::marker_invalid);
    EXPECT_STREQ(to_string(d.error()), "marker_invalid");
}

// §4.2: reserved bits and the two low FPDUPTR bits are ignored on receive (except for the CRC).
TEST(Deframer, MarkerReservedBitsAndLowPointerBitsIgnored) {
    std::mt19937_64 rng(10);
    const auto ulpdu = test::random_bytes(rng, 1218);
    std::vector<std::uint8_t> wire;
    build_fpdu(ulpdu.data(), ulpdu.size(), true, true, 32, wire);
    wire[480] = 0xAB;
    wire[483] |= 0x03;
    put_le32(wire.data() + wire.size() - 4, crc32c(wire.data(), wire.size() - 4));
    collector c;
    deframer d({true, true, 32, 65535}, c.sink());
    EXPECT_EQ(d.feed(wire.data(), wire.size()), deframe_error::none) << d.error_detail();
    ASSERT_EQ(c.got.size(), 1u);
    EXPECT_EQ(c.got[0], ulpdu);
}

TEST(Deframer, Rfc5044Figures5And6Stream) {
    // Fig. 5's FPDU is the first of the stream; Fig. 6 follows a 492-byte FPDU.
    std::vector<std::uint8_t> wire = test::hex(
        "00000000 002a4143 00000000 00000000 00000001 00000000 00000000 00000000 00000000 00000000 "
        "00000000 00000000 52239983");
    collector c;
    deframer d({true, true, 0, 65535}, c.sink());
    ASSERT_EQ(d.feed(wire.data(), wire.size()), deframe_error::none) << d.error_detail();
    ASSERT_EQ(c.got.size(), 1u);
    EXPECT_EQ(c.got[0].size(), 42u);

    std::vector<std::uint8_t> fig6 = test::hex(
        "002a4143 00000000 00000000 00000002 00000000 00000014 00000000 00000000 00000000 "
        "00000000 00000000 00000000 84925898");
    collector c6;
    deframer d6({true, true, 0x1ec, 65535}, c6.sink());
    std::mt19937_64 rng(1);
    ASSERT_EQ(feed_chunks(d6, fig6, 3, rng), deframe_error::none) << d6.error_detail();
    ASSERT_EQ(c6.got.size(), 1u);
    std::vector<std::uint8_t> expected(fig6.begin() + 2, fig6.begin() + 20);  // DDP header
    expected.resize(42, 0);                                                   // 24 zero bytes
    EXPECT_EQ(c6.got[0], expected);
}

}  // namespace
}  // namespace rnic::proto::mpa
