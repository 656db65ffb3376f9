// IFT framing (draft-williams-iwarp-ift-00, seed 001): byte-exact frames after the §3.1 figures,
// round trips, CRC coverage (Header CRC: sizes + DDP header; Payload CRC: payload only), every
// decode error, sizes, and the deframer with early header delivery (§5.1) on random chunks.
#include "proto/seeds/ift.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "seeds_test_util.h"

namespace rnic::proto::ift {
namespace {

using seeds_test::Bytes;
using seeds_test::hex;
using seeds_test::to_hex;

Bytes make_frame(const Bytes& header, const Bytes& payload) { return encode(Frame{header, payload}); }

// §3.1 second figure: an unaligned frame. A 14-byte DDP header (a tagged DDP header's size)
// puts the Header CRC at offset 18 and a 7-byte payload puts the Payload CRC at offset 29:
// neither is padded to a word. CRC values: CRC32c (iSCSI), least significant byte first; they
// were computed by a separate bit-serial implementation, not by this library.
TEST(Ift, ByteExactUnalignedFrame) {
    Bytes header;
    for (int i = 0; i < 14; ++i) header.push_back(static_cast<std::uint8_t>(0x80 + i));
    const Bytes wire = make_frame(header, seeds_test::text("IFT!abc"));
    EXPECT_EQ(to_hex(wire), to_hex(hex("000e 0007"                              // header_size 14, payload_size 7
                                       "80818283 84858687 88898a8b 8c8d"        // DDP header
                                       "1663d48b"                               // Header CRC (over bytes 0..17)
                                       "49465421 616263"                        // DDP payload "IFT!abc"
                                       "e0e7a384")));                           // Payload CRC
    EXPECT_EQ(wire.size(), frame_length(14, 7));
    EXPECT_EQ(wire.size(), 33u);
    EXPECT_EQ(get_le32(wire.data() + 18), crc32c(wire.data(), 18));
    EXPECT_EQ(get_le32(wire.data() + 29), crc32c(wire.data() + 22, 7));
}

TEST(Ift, EmptyPayloadStillHasPayloadCrc) {
    const Bytes wire = make_frame(hex("112233"), {});
    EXPECT_EQ(to_hex(wire), to_hex(hex("0003 0000 112233 ea271c21 00000000")));
    std::string err;
    const auto f = decode(wire.data(), wire.size(), &err);
    ASSERT_TRUE(f) << err;
    EXPECT_EQ(f->header, hex("112233"));
    EXPECT_TRUE(f->payload.empty());
}

TEST(Ift, SizeFieldsAreBigEndian) {
    const Bytes wire = make_frame(Bytes(0x0102, 0xAA), Bytes(0x0304, 0xBB));
    EXPECT_EQ(wire[0], 0x01);
    EXPECT_EQ(wire[1], 0x02);
    EXPECT_EQ(wire[2], 0x03);
    EXPECT_EQ(wire[3], 0x04);
    EXPECT_EQ(frame_length_at(wire.data(), wire.size()), 12u + 0x0102 + 0x0304);
    EXPECT_EQ(frame_length_at(wire.data(), 3), 0u);
}

TEST(Ift, RoundTripsRandomFramesIncludingExtremes) {
    std::mt19937_64 rng(1);
    std::vector<std::pair<std::size_t, std::size_t>> sizes = {{0, 0}, {0, 1}, {1, 0}, {14, 0}, {18, 1},
                                                              {65535, 0}, {0, 65535}, {65535, 65535}};
    for (int i = 0; i < 200; ++i) sizes.emplace_back(seeds_test::uniform(rng, 0, 64), seeds_test::uniform(rng, 0, 3000));
    for (const auto& [h, p] : sizes) {
        const Bytes header = seeds_test::random_bytes(rng, h);
        const Bytes payload = seeds_test::random_bytes(rng, p);
        Bytes wire = make_frame(header, payload);
        ASSERT_EQ(wire.size(), frame_length(h, p));
        wire.push_back(0x5A);  // bytes after the frame are not looked at
        std::string err;
        ErrorCode code = ErrorCode::truncated;
        const auto f = decode(wire.data(), wire.size(), &err, &code);
        ASSERT_TRUE(f) << err;
        EXPECT_EQ(code, ErrorCode::none);
        EXPECT_EQ(f->header, header);
        EXPECT_EQ(f->payload, payload);
    }
}

TEST(Ift, EncodeRefusesOversizedParts) {
    Bytes out = {1, 2, 3};
    const Bytes big(65536, 0);
    EXPECT_FALSE(encode(big.data(), big.size(), nullptr, 0, out));
    EXPECT_FALSE(encode(nullptr, 0, big.data(), big.size(), out));
    EXPECT_EQ(out, (Bytes{1, 2, 3}));
    EXPECT_TRUE(encode(Frame{big, {}}).empty());
}

ErrorCode decode_error(const Bytes& wire, const DecodeOptions& options = {}) {
    std::string err;
    ErrorCode code = ErrorCode::none;
    const auto f = parse(wire.data(), wire.size(), &err, &code, options);
    EXPECT_EQ(f.has_value(), code == ErrorCode::none);
    if (!f) { EXPECT_FALSE(err.empty()); }
    return code;
}

// Header CRC covers sizes + DDP header; Payload CRC covers only the payload (§3.1).
TEST(Ift, CrcCoverageBitByBit) {
    const Bytes header = hex("0102030405060708090a0b0c0d0e");
    const Bytes payload = seeds_test::text("payload bytes!");
    const Bytes wire = make_frame(header, payload);
    const std::size_t header_crc = 4 + header.size();
    const std::size_t payload_start = header_crc + 4;
    for (std::size_t bit = 0; bit < wire.size() * 8; ++bit) {
        const std::size_t byte = bit / 8;
        const ErrorCode e = decode_error(seeds_test::flipped(wire, bit));
        if (byte < 4) {
            // A changed size moves the fields: never accepted.
            EXPECT_TRUE(e == ErrorCode::header_crc_mismatch || e == ErrorCode::truncated) << "bit " << bit << " " << to_string(e);
        } else if (byte < payload_start) {
            EXPECT_EQ(e, ErrorCode::header_crc_mismatch) << "bit " << bit;  // DDP header or Header CRC
        } else {
            EXPECT_EQ(e, ErrorCode::payload_crc_mismatch) << "bit " << bit;  // payload or Payload CRC: header still good
        }
    }
}

TEST(Ift, EveryDecodeError) {
    const Bytes wire = make_frame(hex("aabbccdd"), hex("0102030405"));
    // truncated: at every length short of the frame
    for (std::size_t n = 0; n < wire.size(); ++n) {
        const Bytes cut(wire.begin(), wire.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_EQ(decode_error(cut), ErrorCode::truncated) << n;
    }
    DecodeOptions o;
    o.min_header_size = 8;
    EXPECT_EQ(decode_error(wire, o), ErrorCode::header_size_out_of_range);
    o = {};
    o.max_header_size = 3;
    EXPECT_EQ(decode_error(wire, o), ErrorCode::header_size_out_of_range);
    o = {};
    o.max_payload_size = 4;
    EXPECT_EQ(decode_error(wire, o), ErrorCode::payload_size_out_of_range);
    o.max_payload_size = 5;
    EXPECT_EQ(decode_error(wire, o), ErrorCode::none);
    EXPECT_EQ(decode_error(seeds_test::flipped(wire, 8 * 5)), ErrorCode::header_crc_mismatch);
    EXPECT_EQ(decode_error(seeds_test::flipped(wire, 8 * 13)), ErrorCode::payload_crc_mismatch);
    // The header is judged before the payload: with both corrupted, the header error wins.
    EXPECT_EQ(decode_error(seeds_test::flipped(seeds_test::flipped(wire, 8 * 13), 8 * 5)), ErrorCode::header_crc_mismatch);
    // A good header followed by a truncated payload is "truncated", not a payload CRC error.
    const Bytes partial(wire.begin(), wire.begin() + 14);
    EXPECT_EQ(decode_error(partial), ErrorCode::truncated);
    std::string err;
    EXPECT_FALSE(decode(partial.data(), partial.size(), &err));
    EXPECT_NE(err.find("truncated"), std::string::npos);
    EXPECT_FALSE(decode(nullptr, 0, nullptr));  // null error/code pointers are allowed
    for (ErrorCode e : {ErrorCode::none, ErrorCode::truncated, ErrorCode::header_size_out_of_range, ErrorCode::payload_size_out_of_range,
                    ErrorCode::header_crc_mismatch, ErrorCode::payload_crc_mismatch})
        EXPECT_STRNE(to_string(e), "unknown");
}

TEST(Ift, Sizes) {
    EXPECT_EQ(kOverhead, 12u);
    EXPECT_EQ(frame_length(14, 1000), 1026u);
    EXPECT_EQ(max_payload(1460, 14), 1434u);   // 1460 - 12 - 14
    EXPECT_EQ(max_payload(1460, 18), 1430u);
    EXPECT_EQ(max_payload(26, 14), 0u);
    EXPECT_EQ(max_payload(25, 14), 0u);
    EXPECT_EQ(max_payload(27, 14), 1u);
    EXPECT_EQ(max_payload(200000, 14), 65535u);
    for (std::size_t emss = 0; emss < 2000; emss += 7)
        for (std::size_t h : {0u, 14u, 18u, 46u})
            if (max_payload(emss, h) != 0) { EXPECT_LE(frame_length(h, max_payload(emss, h)), emss); }
}

// ---------------------------------------------------------------------------------------------
// Deframer

struct Collected {
    std::vector<Frame> frames;
    std::vector<bool> ok;
    std::vector<std::pair<Bytes, std::size_t>> headers;  // header, announced payload size
    std::vector<Bytes> pieces_joined;                    // per frame
};

Deframer::HandlerSet collect(Collected& c) {
    Deframer::HandlerSet h;
    h.header = [&c](const std::uint8_t* p, std::size_t n, std::size_t payload_size) {
        c.headers.emplace_back(Bytes(p, p + n), payload_size);
        c.pieces_joined.emplace_back();
    };
    h.payload_piece = [&c](std::size_t offset, const std::uint8_t* p, std::size_t n) {
        ASSERT_FALSE(c.pieces_joined.empty());
        ASSERT_EQ(offset, c.pieces_joined.back().size());
        c.pieces_joined.back().insert(c.pieces_joined.back().end(), p, p + n);
    };
    h.frame = [&c](const FrameView& v, bool ok) {
        c.frames.push_back(Frame{Bytes(v.header, v.header + v.header_size), Bytes(v.payload, v.payload + v.payload_size)});
        c.ok.push_back(ok);
        EXPECT_EQ(v.wire_length, frame_length(v.header_size, v.payload_size));
    };
    return h;
}

TEST(IftDeframer, RandomFramesRandomChunks) {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 40; ++round) {
        std::vector<Frame> sent;
        Bytes stream;
        for (int i = 0; i < 30; ++i) {
            Frame f{seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 40)),
                    seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 700))};
            const Bytes w = encode(f);
            stream.insert(stream.end(), w.begin(), w.end());
            sent.push_back(std::move(f));
        }
        Collected c;
        Deframer d({}, collect(c));
        seeds_test::feed_in_chunks(stream, rng, round % 2 == 0 ? 64 : 3000, [&](const std::uint8_t* p, std::size_t n) {
            ASSERT_EQ(d.feed(p, n), ErrorCode::none) << d.error_detail();
        });
        EXPECT_TRUE(d.at_frame_boundary());
        EXPECT_EQ(d.frames(), sent.size());
        EXPECT_EQ(d.bytes_consumed(), stream.size());
        ASSERT_EQ(c.frames.size(), sent.size());
        for (std::size_t i = 0; i < sent.size(); ++i) {
            EXPECT_EQ(c.frames[i].header, sent[i].header);
            EXPECT_EQ(c.frames[i].payload, sent[i].payload);
            EXPECT_TRUE(c.ok[i]);
            EXPECT_EQ(c.headers[i].first, sent[i].header);
            EXPECT_EQ(c.headers[i].second, sent[i].payload.size());
            EXPECT_EQ(c.pieces_joined[i], sent[i].payload);
        }
    }
}

// §5.1: the header is verified and usable before the payload has arrived.
TEST(IftDeframer, HeaderDeliveredAsSoonAsHeaderCrcArrives) {
    const Bytes header = hex("00112233445566778899aabbccdd");
    const Bytes payload(500, 0x42);
    const Bytes wire = encode(Frame{header, payload});
    Collected c;
    Deframer d({}, collect(c));
    const std::size_t header_end = 4 + header.size() + 4;
    for (std::size_t i = 0; i < wire.size(); ++i) {
        ASSERT_EQ(d.feed(&wire[i], 1), ErrorCode::none);
        EXPECT_EQ(c.headers.size(), i + 1 >= header_end ? 1u : 0u) << i;
        EXPECT_EQ(c.frames.size(), i + 1 == wire.size() ? 1u : 0u) << i;
        if (i + 1 >= header_end) { EXPECT_EQ(c.pieces_joined.back().size(), std::min(i + 1 - header_end, payload.size())); }
    }
}

TEST(IftDeframer, HeaderCrcErrorIsFatal) {
    const Bytes a = encode(Frame{hex("01020304"), hex("aabb")});
    Bytes b = encode(Frame{hex("05060708"), hex("ccdd")});
    b[5] ^= 0x01;  // DDP header byte of the second frame
    const Bytes c3 = encode(Frame{hex("090a0b0c"), hex("eeff")});
    const Bytes stream = seeds_test::cat({a, b, c3});
    for (std::size_t chunk : {std::size_t{1}, std::size_t{5}, stream.size()}) {
        Collected c;
        Deframer d({}, collect(c));
        ErrorCode e = ErrorCode::none;
        for (std::size_t pos = 0; pos < stream.size(); pos += chunk)
            e = d.feed(stream.data() + pos, std::min(chunk, stream.size() - pos));
        EXPECT_EQ(e, ErrorCode::header_crc_mismatch);
        EXPECT_EQ(d.error(), ErrorCode::header_crc_mismatch);
        EXPECT_NE(d.error_detail().find("stream byte " + std::to_string(a.size())), std::string::npos) << d.error_detail();
        EXPECT_EQ(c.frames.size(), 1u);
        EXPECT_EQ(c.headers.size(), 1u);  // the bad header is never handed up
        EXPECT_EQ(d.feed(a.data(), a.size()), ErrorCode::header_crc_mismatch);  // stays failed
        EXPECT_EQ(c.frames.size(), 1u);
    }
}

TEST(IftDeframer, PayloadCrcErrorStopsByDefaultOrIsReportedAndSkipped) {
    const Bytes a = encode(Frame{hex("01020304"), hex("aabb")});
    Bytes b = encode(Frame{hex("05060708"), hex("ccdd")});
    b[4 + 4 + 4] ^= 0x80;  // first payload byte of the second frame
    const Bytes c3 = encode(Frame{hex("090a0b0c"), hex("eeff")});
    const Bytes stream = seeds_test::cat({a, b, c3});
    {
        Collected c;
        Deframer d({}, collect(c));
        EXPECT_EQ(d.feed(stream.data(), stream.size()), ErrorCode::payload_crc_mismatch);
        EXPECT_EQ(c.frames.size(), 1u);
        EXPECT_EQ(c.headers.size(), 2u);  // the second header was good and delivered
        EXPECT_EQ(d.payload_crc_errors(), 1u);
    }
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, stream.size()}) {
        Deframer::Config cfg;
        cfg.stop_on_payload_crc_error = false;
        Collected c;
        Deframer d(cfg, collect(c));
        for (std::size_t pos = 0; pos < stream.size(); pos += chunk)
            ASSERT_EQ(d.feed(stream.data() + pos, std::min(chunk, stream.size() - pos)), ErrorCode::none);
        ASSERT_EQ(c.frames.size(), 3u);
        EXPECT_EQ(c.ok, (std::vector<bool>{true, false, true}));
        EXPECT_EQ(c.frames[2].payload, hex("eeff"));
        EXPECT_EQ(d.payload_crc_errors(), 1u);
        EXPECT_EQ(d.frames(), 3u);
    }
}

TEST(IftDeframer, LimitsAreFatal) {
    const Bytes wire = encode(Frame{Bytes(20, 1), Bytes(100, 2)});
    Deframer::Config cfg;
    cfg.limits.max_payload_size = 99;
    Deframer d(cfg, {});
    EXPECT_EQ(d.feed(wire.data(), 3), ErrorCode::none);
    EXPECT_EQ(d.feed(wire.data() + 3, 1), ErrorCode::payload_size_out_of_range);
    cfg = {};
    cfg.limits.min_header_size = 21;
    Deframer d2(cfg, {});
    EXPECT_EQ(d2.feed(wire.data(), wire.size()), ErrorCode::header_size_out_of_range);
}

TEST(IftDeframer, WithoutFrameHandlerPayloadIsOnlyStreamed) {
    const Bytes wire = encode(Frame{hex("0102"), Bytes(1000, 7)});
    std::size_t streamed = 0;
    Deframer::HandlerSet h;
    h.payload_piece = [&](std::size_t, const std::uint8_t*, std::size_t n) { streamed += n; };
    Deframer d({}, h);
    std::mt19937_64 rng(3);
    seeds_test::feed_in_chunks(wire, rng, 50, [&](const std::uint8_t* p, std::size_t n) { ASSERT_EQ(d.feed(p, n), ErrorCode::none); });
    EXPECT_EQ(streamed, 1000u);
    EXPECT_EQ(d.frames(), 1u);
}

}  // namespace
}  // namespace rnic::proto::ift
