// The Verilated framing blocks (rtl/*.sv) against the C++ codecs of models/proto: the CRC32c
// engine on the RFC 3720 B.4 / test-vectors.md answers and on every length, start lane and
// byte-enable pattern; the transmit datapath byte for byte against proto::mpa::build_fpdu on the
// RFC 5044 Fig. 5/6 FPDUs and on every ULPDU length and marker alignment; the receive datapath
// against proto::mpa::Deframer, damaged FPDUs included. Both bus widths (8 and 16 bytes).
// Plain calls (no sc_start): the blocks are clocked by the adapter, not by the kernel.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "framing/fpdu_datapath.h"
#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "proto/mpa.h"
#include "rtl/rtl_fpdu_datapath.h"

namespace {

using rnic::datapath_cycles;
using rnic::fpdu_rx_result;
namespace mpa = rnic::proto::mpa;
using bytes = std::vector<std::uint8_t>;

bytes hex(const std::string& s) {
    bytes out;
    std::string digits;
    for (char c : s)
        if (std::isxdigit(static_cast<unsigned char>(c))) digits += c;
    for (std::size_t i = 0; i + 1 < digits.size(); i += 2)
        out.push_back(static_cast<std::uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
    return out;
}

bytes random_bytes(std::mt19937& rng, std::size_t n) {
    bytes b(n);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    return b;
}

// One datapath per width per process, never destroyed: the Verilated models must not outlive
// Verilator's thread context, which is a static of its own.
rnic::rtl::rtl_fpdu_datapath& rtl(std::uint32_t width) {
    static rnic::rtl::rtl_fpdu_datapath* w8 = nullptr;
    static rnic::rtl::rtl_fpdu_datapath* w16 = nullptr;
    auto*& p = width == 8 ? w8 : w16;
    if (p == nullptr) {
        rnic::rtl::rtl_datapath_options o;
        o.bytes_per_cycle = width;
        o.name = "rtl_w" + std::to_string(width);
        p = rnic::rtl::make_rtl_datapath(o).release();
    }
    return *p;
}

class RtlWidth : public ::testing::TestWithParam<std::uint32_t> {
protected:
    std::uint32_t width_bytes() const { return GetParam(); }
    rnic::rtl::rtl_fpdu_datapath& dp() { return rtl(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Widths, RtlWidth, ::testing::Values(8u, 16u),
                         [](const auto& p) { return "w" + std::to_string(p.param); });

// ---------------------------------------------------------------------------------------------
// CRC32c engine

TEST_P(RtlWidth, CrcKnownAnswers) {
    struct kat {
        bytes msg;
        std::uint32_t crc;
    };
    bytes inc(32), dec(32);
    for (int i = 0; i < 32; ++i) {
        inc[i] = static_cast<std::uint8_t>(i);
        dec[i] = static_cast<std::uint8_t>(31 - i);
    }
    const std::string fox = "The quick brown fox jumps over the lazy dog";
    const std::vector<kat> kats = {
        {bytes{'1', '2', '3', '4', '5', '6', '7', '8', '9'}, 0xE3069283u},  // check value
        {bytes{}, 0x00000000u},
        {bytes{'a'}, 0xC1D04330u},
        {bytes{'a', 'b', 'c'}, 0x364B3FB7u},
        {bytes(fox.begin(), fox.end()), 0x22620404u},
        {bytes(32, 0x00), 0x8A9136AAu},  // RFC 3720 B.4
        {bytes(32, 0xFF), 0x62A8AB43u},
        {inc, 0x46DD794Eu},
        {dec, 0x113FDB5Cu},
        {hex("01c00000 00000000 00000000 00000000 14000000 00000400 00000014 00000018 28000000 00000000 "
             "02000000 00000000"),
         0xD9963A56u},
    };
    for (const kat& k : kats) {
        for (std::uint32_t lane = 0; lane < width_bytes(); ++lane) {
            EXPECT_EQ(dp().crc32c(k.msg.data(), k.msg.size(), lane, nullptr), k.crc)
                << k.msg.size() << " bytes from lane " << lane;
        }
    }
}

TEST_P(RtlWidth, CrcEveryLengthAndStartLane) {
    std::mt19937 rng(11);
    const bytes data = random_bytes(rng, 300);
    for (std::size_t len = 1; len <= data.size(); ++len) {
        const std::uint32_t want = rnic::proto::crc32c(data.data(), len);
        for (std::uint32_t lane = 0; lane < width_bytes(); ++lane) {
            datapath_cycles c;
            ASSERT_EQ(dp().crc32c(data.data(), len, lane, &c), want) << len << " bytes from lane " << lane;
            ASSERT_EQ(c.beats, (len + lane + width_bytes() - 1) / width_bytes());  // one bus word per cycle
        }
    }
}

TEST_P(RtlWidth, CrcEveryByteEnablePatternOfOneWord) {
    std::mt19937 rng(12);
    const bytes word = random_bytes(rng, width_bytes());
    const std::uint32_t patterns = width_bytes() == 8 ? 1u << 8 : 1u << 16;
    for (std::uint32_t be = 0; be < patterns; ++be) {
        bytes picked;
        for (std::uint32_t j = 0; j < width_bytes(); ++j)
            if (be >> j & 1) picked.push_back(word[j]);
        ASSERT_EQ(dp().crc32c_words(word.data(), &be, 1, nullptr), rnic::proto::crc32c(picked.data(), picked.size()))
            << "byte enables 0x" << std::hex << be;
    }
}

TEST_P(RtlWidth, CrcRandomMultiWordByteEnables) {
    std::mt19937 rng(13);
    for (int trial = 0; trial < 2000; ++trial) {
        const std::size_t nwords = 1 + rng() % 12;
        const bytes words = random_bytes(rng, nwords * width_bytes());
        std::vector<std::uint32_t> be(nwords);
        bytes picked;
        for (std::size_t i = 0; i < nwords; ++i) {
            be[i] = static_cast<std::uint32_t>(rng()) & ((width_bytes() == 32 ? 0 : (1u << width_bytes())) - 1u);
            for (std::uint32_t j = 0; j < width_bytes(); ++j)
                if (be[i] >> j & 1) picked.push_back(words[i * width_bytes() + j]);
        }
        ASSERT_EQ(dp().crc32c_words(words.data(), be.data(), nwords, nullptr),
                  rnic::proto::crc32c(picked.data(), picked.size()))
            << "trial " << trial;
    }
}

// ---------------------------------------------------------------------------------------------
// Transmit datapath: Marker insertion and CRC append

// Fig. 5: the first FPDU of the stream starts with a Marker (FPDUPTR 0) that the CRC covers.
TEST_P(RtlWidth, Rfc5044Figure5) {
    bytes u = hex("4143 00000000 00000000 00000001 00000000");
    u.resize(42, 0);
    bytes out;
    dp().build_fpdu(u.data(), u.size(), true, true, 0, out);
    EXPECT_EQ(out, hex("00000000 002a4143 00000000 00000000 00000001 00000000 00000000 00000000 00000000 "
                       "00000000 00000000 00000000 52239983"));
}

// Fig. 6: the second FPDU starts at 0x1ec; the Marker at 0x200 carries FPDUPTR 0x14.
TEST_P(RtlWidth, Rfc5044Figure6) {
    bytes u = hex("4143 00000000 00000000 00000002 00000000");
    u.resize(42, 0);
    bytes out;
    dp().build_fpdu(u.data(), u.size(), true, true, 0x1ec, out);
    EXPECT_EQ(out, hex("002a4143 00000000 00000000 00000002 00000000 00000014 00000000 00000000 00000000 "
                       "00000000 00000000 00000000 84925898"));
}

// test-vectors.md §5: FPDUs without Markers, CRC on (these decode with Good CRC in tshark).
TEST_P(RtlWidth, UnmarkedFpduVectors) {
    const std::vector<std::string> fpdus = {
        "001e4143 00000000 00000000 00000001 00000000 68656c6c 6f206977 61727021 85c55345",
        "001bc140 00001234 00000000 00001000 57575757 57575757 57575757 57000000 1efd8370",
        "002e4141 00000000 00000001 00000001 00000000 0000aaaa 00000000 00002000 00000040 0000bbbb 00000000 "
        "00003000 3c052e56",
        "00154144 00000055 00000000 00000002 00000000 696e7600 ed7725d5",
        "001a4148 00000000 00000000 00000004 00000000 11223344 55667788 0ba77a64",
        "00164147 00000000 00000002 00000002 00000000 20020000 56e88a9c",
        "00124143 00000000 00000000 00000001 00000000 587be8c4",
        "000ec140 00000001 00000000 00000000 ebd34c5f",
    };
    for (const std::string& f : fpdus) {
        const bytes want = hex(f);
        const std::size_t len = rnic::proto::get_be16(want.data());
        bytes out;
        const datapath_cycles c = dp().build_fpdu(want.data() + 2, len, true, false, 0, out);
        EXPECT_EQ(out, want) << f;
        EXPECT_EQ(c.beats, (want.size() + width_bytes() - 1) / width_bytes());
        fpdu_rx_result r;
        dp().check_fpdu(want.data(), want.size(), true, false, 0, r);
        EXPECT_EQ(r.error, mpa::deframe_error::none) << f;
        EXPECT_EQ(r.ulpdu, bytes(want.begin() + 2, want.begin() + 2 + static_cast<std::ptrdiff_t>(len)));
    }
}

// Every ULPDU length 0..1100 (FPDUs with zero, one and two inner Markers, every PAD) at positions
// around the Marker boundary, and every 4-aligned position for a set of lengths; bytes against
// build_fpdu, and the cycles against the TLM model's ceil(bytes / width).
TEST_P(RtlWidth, TransmitMatchesCodecEveryLengthAndAlignment) {
    std::mt19937 rng(21);
    const bytes payload = random_bytes(rng, 1100);
    auto check = [&](std::size_t len, bool crc, bool markers, std::uint32_t pos) {
        bytes want, got;
        mpa::build_fpdu(payload.data(), len, crc, markers, pos, want);
        const datapath_cycles c = dp().build_fpdu(payload.data(), len, crc, markers, pos, got);
        ASSERT_TRUE(got == want) << "len " << len << " crc " << crc << " markers " << markers << " pos " << pos;
        ASSERT_EQ(c.beats, (want.size() + width_bytes() - 1) / width_bytes()) << "len " << len << " pos " << pos;
        // One or two cycles of pipeline on top (the CRC word follows the last input word): what
        // rnic.mpa.cycles_per_fpdu stands for in the TLM model.
        ASSERT_GE(c.latency, c.beats + 1) << "len " << len << " pos " << pos;
        ASSERT_LE(c.latency, c.beats + 2) << "len " << len << " pos " << pos;
    };
    for (std::size_t len = 0; len <= payload.size(); ++len) {
        for (std::uint32_t pos : {0u, 4u, 256u, 496u, 500u, 504u, 508u, 0xFFFFFE00u, 0xFFFFFFFCu}) {
            check(len, true, true, pos);
        }
        check(len, true, false, 0);
        check(len, false, false, 12);
        check(len, false, true, 508);
    }
    for (std::size_t len : {0u, 1u, 2u, 3u, 13u, 42u, 482u, 503u, 506u, 507u, 510u, 1018u, 1100u}) {
        for (std::uint32_t pos = 0; pos < 1024; pos += 4) check(len, true, true, pos);
    }
}

// A stream of FPDUs built one after the other (the datapath keeps the marker-space position
// itself), interleaved with another connection's stream (which reloads it).
TEST_P(RtlWidth, TransmitStreamsOfFpdus) {
    std::mt19937 rng(22);
    std::uint32_t pos[2] = {0, 0x1ec};
    bytes want[2], got[2];
    for (int i = 0; i < 400; ++i) {
        const int conn = static_cast<int>(rng() % 2);
        const bytes u = random_bytes(rng, rng() % 1500);
        const std::size_t before = want[conn].size();
        mpa::build_fpdu(u.data(), u.size(), true, true, pos[conn], want[conn]);
        dp().build_fpdu(u.data(), u.size(), true, true, pos[conn], got[conn]);
        pos[conn] += static_cast<std::uint32_t>(want[conn].size() - before);
    }
    EXPECT_TRUE(got[0] == want[0]);
    EXPECT_TRUE(got[1] == want[1]);
    EXPECT_GT(want[0].size() + want[1].size(), 400u * 600u);
}

// ---------------------------------------------------------------------------------------------
// Receive datapath: Marker removal and CRC check

TEST_P(RtlWidth, ReceiveMatchesCodecEveryLengthAndAlignment) {
    std::mt19937 rng(31);
    const bytes payload = random_bytes(rng, 1100);
    auto tlm = rnic::make_tlm_datapath(width_bytes());
    for (std::size_t len = 0; len <= payload.size(); len += (len < 600 ? 1 : 7)) {
        for (std::uint32_t pos : {0u, 4u, 496u, 508u, 0xFFFFFFFCu}) {
            for (bool markers : {true, false}) {
                bytes wire;
                mpa::build_fpdu(payload.data(), len, true, markers, pos, wire);
                fpdu_rx_result r;
                const datapath_cycles c = dp().check_fpdu(wire.data(), wire.size(), true, markers, pos, r);
                ASSERT_EQ(r.error, mpa::deframe_error::none) << "len " << len << " pos " << pos;
                ASSERT_TRUE(r.ulpdu == bytes(payload.begin(), payload.begin() + static_cast<std::ptrdiff_t>(len)))
                    << "len " << len << " pos " << pos << " got " << r.ulpdu.size() << " bytes";
                ASSERT_EQ(r.crc_computed, r.crc_received);
                ASSERT_EQ(c.beats, (wire.size() + width_bytes() - 1) / width_bytes());
                ASSERT_GE(c.latency, c.beats + 1);
                ASSERT_LE(c.latency, c.beats + 2);
            }
        }
    }
}

// Damage: every single-bit flip of an FPDU with an inner Marker is a CRC error (the CRC covers the
// Markers, §4.4); without CRC a damaged FPDUPTR is a Marker error (§8 code 3), as in the codec.
TEST_P(RtlWidth, ReceiveRejectsDamageLikeTheCodec) {
    std::mt19937 rng(32);
    const bytes u = random_bytes(rng, 300);
    const std::uint32_t pos = 0x100;
    bytes wire;
    mpa::build_fpdu(u.data(), u.size(), true, true, pos, wire);
    auto tlm = rnic::make_tlm_datapath(width_bytes());
    for (std::size_t bit = 0; bit < wire.size() * 8; ++bit) {
        bytes bad = wire;
        bad[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
        if (bit / 8 < 2) continue;  // a damaged ULPDU_Length changes the delineation, not this block's job
        fpdu_rx_result r, t;
        dp().check_fpdu(bad.data(), bad.size(), true, true, pos, r);
        tlm->check_fpdu(bad.data(), bad.size(), true, true, pos, t);
        ASSERT_EQ(r.error, mpa::deframe_error::crc_mismatch) << "bit " << bit;
        ASSERT_EQ(t.error, r.error) << "bit " << bit;
        ASSERT_EQ(r.crc_received, t.crc_received);
        ASSERT_EQ(r.crc_computed, t.crc_computed);
    }
    bytes nocrc;
    mpa::build_fpdu(u.data(), u.size(), false, true, pos, nocrc);
    const std::size_t marker_at = 0x200 - pos;
    ASSERT_EQ(rnic::proto::get_be16(nocrc.data() + marker_at + 2), 0x200 - pos);
    nocrc[marker_at + 2] ^= 0x01;  // FPDUPTR 0x0100 -> 0x0000
    fpdu_rx_result r, t;
    dp().check_fpdu(nocrc.data(), nocrc.size(), false, true, pos, r);
    tlm->check_fpdu(nocrc.data(), nocrc.size(), false, true, pos, t);
    EXPECT_EQ(r.error, mpa::deframe_error::marker_invalid);
    EXPECT_EQ(t.error, r.error);
    EXPECT_EQ(r.bad_marker_pos, 0x200u);
    EXPECT_EQ(r.bad_marker_ptr, 0x0000u);
    EXPECT_EQ(r.expected_ptr, 0x100u);
    EXPECT_EQ(t.bad_marker_pos, r.bad_marker_pos);
    // The two low bits of FPDUPTR are not compared (FPDUs are 4-byte aligned).
    nocrc[marker_at + 2] ^= 0x01;
    nocrc[marker_at + 3] ^= 0x03;
    dp().check_fpdu(nocrc.data(), nocrc.size(), false, true, pos, r);
    EXPECT_EQ(r.error, mpa::deframe_error::none);
}

// The delineation over the RTL datapath against proto::mpa::Deframer on a marked stream cut at
// random points.
TEST_P(RtlWidth, DeframerOverRtlMatchesCodecDeframer) {
    std::mt19937 rng(41);
    bytes stream;
    std::vector<bytes> sent;
    std::uint32_t pos = 0;
    for (int i = 0; i < 300; ++i) {
        sent.push_back(random_bytes(rng, rng() % 1400));
        const std::size_t before = stream.size();
        mpa::build_fpdu(sent.back().data(), sent.back().size(), true, true, pos, stream);
        pos += static_cast<std::uint32_t>(stream.size() - before);
    }
    mpa::deframer::config cfg;
    cfg.markers = true;
    std::vector<bytes> got_rtl, got_codec;
    std::uint64_t beats = 0;
    rnic::datapath_deframer d(dp(), cfg, [&](const std::uint8_t* p, std::size_t n, const datapath_cycles& c) {
        got_rtl.emplace_back(p, p + n);
        beats += c.beats;
    });
    mpa::deframer ref(cfg, [&](const std::uint8_t* p, std::size_t n) { got_codec.emplace_back(p, p + n); });
    for (std::size_t at = 0; at < stream.size();) {
        const std::size_t n = std::min<std::size_t>(1 + rng() % 3000, stream.size() - at);
        ASSERT_EQ(d.feed(stream.data() + at, n), mpa::deframe_error::none) << d.error_detail();
        ASSERT_EQ(ref.feed(stream.data() + at, n), mpa::deframe_error::none);
        at += n;
    }
    EXPECT_TRUE(got_rtl == sent) << got_rtl.size() << " ULPDUs of " << sent.size();
    EXPECT_TRUE(got_codec == sent);
    EXPECT_GE(beats, stream.size() / width_bytes());

    // A flipped payload bit further on: both report a CRC error at the same FPDU.
    stream[stream.size() / 2] ^= 0x10;
    std::size_t n_rtl = 0, n_codec = 0;
    rnic::datapath_deframer d2(dp(), cfg, [&](const std::uint8_t*, std::size_t, const datapath_cycles&) { ++n_rtl; });
    mpa::deframer ref2(cfg, [&](const std::uint8_t*, std::size_t) { ++n_codec; });
    EXPECT_EQ(d2.feed(stream.data(), stream.size()), mpa::deframe_error::crc_mismatch);
    EXPECT_EQ(ref2.feed(stream.data(), stream.size()), mpa::deframe_error::crc_mismatch);
    EXPECT_EQ(n_rtl, n_codec);
    EXPECT_EQ(d2.error_detail(), ref2.error_detail());
}

}  // namespace
