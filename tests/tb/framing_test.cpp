// The framing interface (models/framing/framing.h) by plain calls, no SystemC time: each framing
// answers what the other blocks ask consistently with the codecs in models/proto. Frames built
// through the interface are the codec's bytes (RFC 5044 §4 build_fpdu; seed 001 §3.1 ift::encode),
// on the TLM and the RTL datapath; re-framing gives the same bytes; the send room covers every
// frame; the placement breaks fall exactly where the codec put Markers between payload bytes
// (RFC 5044 §4.3); deframing, out-of-order deframing and Marker-led location find the frames.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "framing/framing_factory.h"
#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"
#include "proto/seeds/ift.h"

namespace rnic::test {
namespace {

namespace mpa = proto::mpa;
namespace ddp = proto::ddp;
namespace ift = proto::ift;
using bytes = std::vector<std::uint8_t>;

// A tagged RDMA Write ULPDU: 14 header bytes, then `payload` patterned bytes.
bytes write_ulpdu(std::size_t payload, std::uint8_t seed = 1) {
    ddp::header h;
    h.tagged = true;
    h.opcode = ddp::opcode::rdma_write;
    h.stag = 0x1234;
    h.tagged_offset = 0x1000;
    bytes u(h.size() + payload);
    ddp::encode(h, u.data());
    for (std::size_t i = 0; i < payload; ++i) u[h.size() + i] = static_cast<std::uint8_t>(seed + i * 7);
    return u;
}

framing_params mpa_params(datapath_model model = datapath_model::tlm, std::uint32_t width = 16) {
    framing_params p;
    p.model = model;
    p.bytes_per_cycle = width;
    return p;
}

framing_params ift_params() {
    framing_params p;
    p.kind = framing_kind::ift;
    return p;
}

const std::size_t kLengths[] = {0, 1, 2, 3, 100, 494, 495, 496, 508, 1000, 1448, 4000, 9000};
const std::uint32_t kPositions[] = {0, 4, 8, 500, 504, 508, 512, 1020, 4096 + 12, 0xfffffff0u};

TEST(MpaFramingIf, BuildAndReframeGiveTheCodecBytesOnBothDatapaths) {
    for (const auto& p : {mpa_params(), mpa_params(datapath_model::rtl, 16), mpa_params(datapath_model::rtl, 8)}) {
        const std::unique_ptr<framing> f = make_framing(p);
        EXPECT_EQ(f->kind(), framing_kind::mpa);
        EXPECT_EQ(f->model(), p.model);
        for (const std::size_t len : kLengths) {
            const bytes u = write_ulpdu(len);
            for (const std::uint32_t pos : kPositions) {
                for (const bool markers : {false, true}) {
                    for (const bool crc : {false, true}) {
                        bytes codec, built, reframed;
                        mpa::build_fpdu(u.data(), u.size(), crc, markers, pos, codec);
                        const datapath_cycles c = f->build(u.data(), u.size(), {markers, crc}, pos, built);
                        f->reframe(u.data(), u.size(), {markers, crc}, pos, reframed);
                        EXPECT_EQ(built, codec) << len << " at " << pos << " markers " << markers;
                        EXPECT_EQ(reframed, codec);
                        EXPECT_EQ(f->wire_length(u.size(), {markers, crc}, pos), codec.size());
                        // One bus word per cycle, as the datapath interface promises (tests/rtl).
                        EXPECT_EQ(c.beats, (codec.size() + p.bytes_per_cycle - 1) / p.bytes_per_cycle);
                    }
                }
            }
        }
    }
}

TEST(MpaFramingIf, SendRoomCoversEveryFrameAndIsTheBoundTheEngineUsed) {
    const std::unique_ptr<framing> f = make_framing(mpa_params());
    for (std::size_t len = 0; len <= 9000; len += 7) {
        // Unchanged from the RDMA engine's own formula before the interface (no figure moves).
        EXPECT_EQ(f->tx_room(len), 2 + 3 + 4 + 4 * (len / 512 + 2));
        for (std::uint32_t pos = 0; pos < 1024; pos += 4) {
            for (const bool markers : {false, true}) {
                EXPECT_LE(f->wire_length(len, {markers, true}, pos), len + f->tx_room(len)) << len << " at " << pos;
            }
        }
    }
}

// Payload offsets at which the codec put a Marker between two payload bytes of the FPDU it built
// at `pos` from a ULPDU with `header` header bytes: the stream index of each payload byte, found by
// skipping the Markers the codec inserted (every multiple of 512 in marker space, RFC 5044 §4.3).
std::vector<std::uint32_t> codec_breaks(const bytes& wire, std::uint32_t pos, std::size_t header, std::size_t payload) {
    std::vector<std::size_t> index;  // wire index of each non-Marker byte
    for (std::size_t i = 0; i < wire.size(); ++i) {
        if ((pos + static_cast<std::uint32_t>(i)) % mpa::kMarkerInterval >= mpa::kMarkerSize) index.push_back(i);
    }
    std::vector<std::uint32_t> breaks;
    const std::size_t first = mpa::kLengthFieldSize + header;
    for (std::size_t o = 1; o < payload; ++o) {
        if (index[first + o] != index[first + o - 1] + 1) breaks.push_back(static_cast<std::uint32_t>(o));
    }
    return breaks;
}

TEST(MpaFramingIf, PlacementBreaksFallWhereTheCodecPutMarkers) {
    const std::unique_ptr<framing> f = make_framing(mpa_params());
    for (const std::size_t len : kLengths) {
        const bytes u = write_ulpdu(len);
        for (std::uint32_t pos = 0; pos < 2048; pos += 4) {
            bytes wire;
            mpa::build_fpdu(u.data(), u.size(), true, true, pos, wire);
            std::vector<std::uint32_t> breaks;
            ASSERT_TRUE(f->placement_breaks({true, true}, pos, ddp::kTaggedHeaderSize, len, &breaks));
            EXPECT_EQ(breaks, codec_breaks(wire, pos, ddp::kTaggedHeaderSize, len)) << len << " at " << pos;
        }
    }
    std::vector<std::uint32_t> none{99};
    EXPECT_FALSE(f->placement_breaks({false, true}, 0, ddp::kTaggedHeaderSize, 4000, &none));
    EXPECT_EQ(none, std::vector<std::uint32_t>{99});  // untouched: a plain write
}

TEST(MpaFramingIf, MarkerBreaksOfTheCodec) {
    // A payload right after the Marker at 0: the next Marker is 508 bytes on.
    EXPECT_EQ(mpa::marker_breaks(4, 1448), (std::vector<std::uint32_t>{508, 1016}));
    EXPECT_TRUE(mpa::marker_breaks(4, 508).empty());  // ending exactly at a Marker needs no break
    EXPECT_EQ(mpa::marker_breaks(500, 100), (std::vector<std::uint32_t>{12}));
    EXPECT_EQ(mpa::marker_breaks(513, 600), (std::vector<std::uint32_t>{508}));         // a start inside a Marker
    EXPECT_EQ(mpa::marker_breaks(0xfffffff0u, 100), (std::vector<std::uint32_t>{16}));  // wraps at 2^32
    // ULPDU_Length behind the leading Marker at 0, then 14 header bytes: the payload is at 20.
    EXPECT_EQ(mpa::ulpdu_byte_position(0, 14), 20u);
    EXPECT_EQ(mpa::ulpdu_byte_position(500, 14), 520u);  // the Marker at 512 skipped
}

// The stream of frames built through `f` at consecutive positions from 0, and their ULPDUs.
bytes frame_stream(framing& f, const frame_options& o, const std::vector<bytes>& ulpdus,
                   std::vector<std::uint32_t>* starts = nullptr) {
    bytes stream;
    for (const bytes& u : ulpdus) {
        if (starts != nullptr) starts->push_back(static_cast<std::uint32_t>(stream.size()));
        f.build(u.data(), u.size(), o, static_cast<std::uint32_t>(stream.size()), stream);
    }
    return stream;
}

std::vector<bytes> sample() {
    return {write_ulpdu(100), write_ulpdu(1448, 3), write_ulpdu(0), write_ulpdu(3000, 5)};
}

TEST(MpaFramingIf, InOrderDeframerReturnsTheUlpdusAndStopsAtACrcError) {
    for (const auto& p : {mpa_params(), mpa_params(datapath_model::rtl, 16)}) {
        const std::unique_ptr<framing> f = make_framing(p);
        const frame_options o{true, true};
        bytes stream = frame_stream(*f, o, sample());
        std::vector<bytes> got;
        auto d = f->make_deframer(
            o, [&](const std::uint8_t* u, std::size_t n, const datapath_cycles&) { got.emplace_back(u, u + n); });
        for (std::size_t at = 0; at < stream.size(); at += 7) {
            ASSERT_EQ(d->feed(stream.data() + at, std::min<std::size_t>(7, stream.size() - at)), deframe_status::ok);
        }
        EXPECT_EQ(got, sample());
        // A flipped payload bit in the second frame: a CRC error (RFC 5044 §8 code 2), nothing after it.
        stream[300] ^= 0x10;
        got.clear();
        auto bad = f->make_deframer(
            o, [&](const std::uint8_t* u, std::size_t n, const datapath_cycles&) { got.emplace_back(u, u + n); });
        EXPECT_EQ(bad->feed(stream.data(), stream.size()), deframe_status::crc_error);
        EXPECT_EQ(got.size(), 1u);
        EXPECT_EQ(bad->error_name(), "crc_mismatch");
        EXPECT_FALSE(bad->error_detail().empty());
    }
}

TEST(MpaFramingIf, MarkersLocateAFrameOutOfOrderAndItDeframesThere) {
    const std::unique_ptr<framing> f = make_framing(mpa_params());
    EXPECT_TRUE(f->locates_frames());
    const frame_options o{true, true};
    std::vector<std::uint32_t> starts;
    const bytes stream = frame_stream(*f, o, sample(), &starts);
    // A segment that begins inside the second frame: Markers that point back at it are passed
    // over; the first frame starting in the segment with a Marker inside it is found.
    const std::uint32_t seg = starts[1] + 600;
    std::size_t k = 2;
    auto has_marker = [&](std::size_t i) {
        const std::uint32_t end = i + 1 < starts.size() ? starts[i + 1] : static_cast<std::uint32_t>(stream.size());
        const std::uint32_t m = (starts[i] + 511) / 512 * 512;
        return m + mpa::kMarkerSize <= end;
    };
    while (k < starts.size() && !has_marker(k)) ++k;
    ASSERT_LT(k, starts.size());
    std::uint32_t start = 0;
    ASSERT_TRUE(f->locate_frame(o, stream.data() + seg, stream.size() - seg, seg, &start));
    EXPECT_EQ(start, starts[k]);
    std::vector<bytes> got;
    EXPECT_TRUE(f->deframe_whole(
        o, starts[2], stream.data() + starts[2], stream.size() - starts[2],
        [&](const std::uint8_t* u, std::size_t n, const datapath_cycles&) { got.emplace_back(u, u + n); }));
    EXPECT_EQ(got, (std::vector<bytes>{sample()[2], sample()[3]}));
    // A corrupted frame there is not one: nothing of it is delivered.
    bytes bad(stream.begin() + starts[2], stream.end());
    bad[8] ^= 0x01;
    got.clear();
    EXPECT_FALSE(f->deframe_whole(
        o, starts[2], bad.data(), bad.size(),
        [&](const std::uint8_t* u, std::size_t n, const datapath_cycles&) { got.emplace_back(u, u + n); }));
    EXPECT_TRUE(got.empty());
    // Without Markers nothing locates a frame; joining split frames needs Markers and the TLM datapath.
    EXPECT_FALSE(f->locate_frame({false, true}, stream.data(), stream.size(), 0, &start));
    EXPECT_GT(f->split_frame_reach(o), 2 * (mpa::kMaxUlpduLength + 2));
    EXPECT_EQ(f->split_frame_reach({false, true}), 0u);
    EXPECT_EQ(make_framing(mpa_params(datapath_model::rtl))->split_frame_reach(o), 0u);
}

TEST(MpaFramingIf, SettlesWhatTheNegotiationSettled) {
    const std::unique_ptr<framing> f = make_framing(mpa_params());
    mpa_settings s;
    s.tx_markers = true;
    s.crc = false;
    s.max_ulpdu = 1000;
    const mpa_settings r = f->settle(s);
    EXPECT_TRUE(r.tx_markers);
    EXPECT_FALSE(r.rx_markers);
    EXPECT_FALSE(r.crc);
    EXPECT_EQ(r.max_ulpdu, 1000u);
}

// ---- IFT (seed 001) ----------------------------------------------------------------------------

TEST(IftFramingIf, BuildAndReframeGiveTheCodecBytes) {
    const std::unique_ptr<framing> f = make_framing(ift_params());
    EXPECT_EQ(f->kind(), framing_kind::ift);
    EXPECT_EQ(f->model(), datapath_model::tlm);
    for (const std::size_t len : kLengths) {
        const bytes u = write_ulpdu(len);
        bytes codec, built, reframed;
        // Seed 001 §3.1: the DDP header under the Header CRC, the rest is the payload.
        ift::encode(u.data(), ddp::kTaggedHeaderSize, u.data() + ddp::kTaggedHeaderSize, len, codec);
        const datapath_cycles c = f->build(u.data(), u.size(), {}, 1234, built);
        f->reframe(u.data(), u.size(), {}, 1234, reframed);
        EXPECT_EQ(built, codec);
        EXPECT_EQ(reframed, codec);
        EXPECT_EQ(f->wire_length(u.size(), {}, 0), codec.size());
        EXPECT_EQ(codec.size(), ift::kOverhead + u.size());
        EXPECT_EQ(c.beats, (codec.size() + 15) / 16);
        EXPECT_LE(codec.size(), u.size() + f->tx_room(u.size()));
        std::vector<std::uint32_t> breaks;
        EXPECT_FALSE(f->placement_breaks({}, 0, ddp::kTaggedHeaderSize, len, &breaks));  // nothing between bytes
    }
}

TEST(IftFramingIf, SettlesWithoutMarkersWithCrcsAndTheLargerOverhead) {
    const std::unique_ptr<framing> f = make_framing(ift_params());
    mpa_settings s;
    s.tx_markers = s.rx_markers = true;
    s.crc = false;
    s.max_ulpdu = 1454;
    const mpa_settings r = f->settle(s);
    EXPECT_FALSE(r.tx_markers);
    EXPECT_FALSE(r.rx_markers);
    EXPECT_TRUE(r.crc);
    EXPECT_EQ(r.max_ulpdu, 1448u);  // 12 bytes per frame where MPA's MULPDU allowed for 6 + PAD
}

TEST(IftFramingIf, DeframesInOrderAndOutOfOrderButLocatesNothing) {
    const std::unique_ptr<framing> f = make_framing(ift_params());
    std::vector<std::uint32_t> starts;
    bytes stream = frame_stream(*f, {}, sample(), &starts);
    std::vector<bytes> got;
    auto d = f->make_deframer(
        {}, [&](const std::uint8_t* u, std::size_t n, const datapath_cycles&) { got.emplace_back(u, u + n); });
    for (std::size_t at = 0; at < stream.size(); at += 5) {
        ASSERT_EQ(d->feed(stream.data() + at, std::min<std::size_t>(5, stream.size() - at)), deframe_status::ok);
    }
    EXPECT_EQ(got, sample());
    got.clear();
    EXPECT_TRUE(f->deframe_whole(
        {}, starts[1], stream.data() + starts[1], stream.size() - starts[1] - 10,
        [&](const std::uint8_t* u, std::size_t n, const datapath_cycles&) { got.emplace_back(u, u + n); }));
    EXPECT_EQ(got, (std::vector<bytes>{sample()[1], sample()[2]}));  // the last frame is cut: left alone
    std::uint32_t start = 0;
    EXPECT_FALSE(f->locates_frames());
    EXPECT_FALSE(f->locate_frame({}, stream.data(), stream.size(), 0, &start));
    EXPECT_EQ(f->split_frame_reach({}), 0u);
    // A flipped payload bit: a Payload CRC error, reported as a CRC error.
    stream[starts[1] + 100] ^= 1;
    auto bad = f->make_deframer({}, [](const std::uint8_t*, std::size_t, const datapath_cycles&) {});
    EXPECT_EQ(bad->feed(stream.data(), stream.size()), deframe_status::crc_error);
    EXPECT_EQ(bad->error_name().rfind("IFT ", 0), 0u);
}

TEST(IftFramingIf, TheRtlDatapathIsMpaOnly) {
    framing_params p = ift_params();
    p.model = datapath_model::rtl;
    EXPECT_THROW(make_framing(p), std::invalid_argument);
}

}  // namespace
}  // namespace rnic::test
