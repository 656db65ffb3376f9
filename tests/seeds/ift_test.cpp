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

using seeds_test::bytes;
using seeds_test::hex;
using seeds_test::to_hex;

bytes make_frame(const bytes& header, const bytes& payload) {
    return encode(frame{header, payload});
}

// §3.1 second figure: an unaligned frame. A 14-byte DDP header (a tagged DDP header's size)
// puts the Header CRC at offset 18 and a 7-byte payload puts the Payload CRC at offset 29:
// neither is padded to a word. CRC values: CRC32c (iSCSI), least significant byte first; they
// were computed by a separate bit-serial implementation, not by this library.
TEST(Ift, ByteExactUnalignedFrame) {
    bytes header;
    for (int i = 0; i < 14; ++i) header.push_back(static_cast<std::uint8_t>(0x80 + i));
    const bytes wire = make_frame(header, seeds_test::text("IFT!abc"));
    EXPECT_EQ(to_hex(wire), to_hex(hex("000e 0007"                        // header_size 14, payload_size 7
                                       "80818283 84858687 88898a8b 8c8d"  // DDP header
                                       "1663d48b"                         // Header CRC (over bytes 0..17)
                                       "49465421 616263"                  // DDP payload "IFT!abc"
                                       "e0e7a384")));                     // Payload CRC
    EXPECT_EQ(wire.size(), frame_length(14, 7));
    EXPECT_EQ(wire.size(), 33u);
    EXPECT_EQ(get_le32(wire.data() + 18), crc32c(wire.data(), 18));
    EXPECT_EQ(get_le32(wire.data() + 29), crc32c(wire.data() + 22, 7));
}

TEST(Ift, EmptyPayloadStillHasPayloadCrc) {
    const bytes wire = make_frame(hex("112233"), {});
    EXPECT_EQ(to_hex(wire), to_hex(hex("0003 0000 112233 ea271c21 00000000")));
    std::string err;
    const auto f = decode(wire.data(), wire.size(), &err);
    ASSERT_TRUE(f) << err;
    EXPECT_EQ(f->header, hex("112233"));
    EXPECT_TRUE(f->payload.empty());
}

TEST(Ift, SizeFieldsAreBigEndian) {
    const bytes wire = make_frame(bytes(0x0102, 0xAA), bytes(0x0304, 0xBB));
    EXPECT_EQ(wire[0], 0x01);
    EXPECT_EQ(wire[1], 0x02);
    EXPECT_EQ(wire[2], 0x03);
    EXPECT_EQ(wire[3], 0x04);
    EXPECT_EQ(frame_length_at(wire.data(), wire.size()), 12u + 0x0102 + 0x0304);
    EXPECT_EQ(frame_length_at(wire.data(), 3), 0u);
}

TEST(Ift, RoundTripsRandomFramesIncludingExtremes) {
    std::mt19937_64 rng(1);
    std::vector<std::pair<std::size_t, std::size_t>> sizes = {{0, 0},  {0, 1},     {1, 0},     {14, 0},
                                                              {18, 1}, {65535, 0}, {0, 65535}, {65535, 65535}};
    for (int i = 0; i < 200; ++i)
        sizes.emplace_back(seeds_test::uniform(rng, 0, 64), seeds_test::uniform(rng, 0, 3000));
    for (const auto& [h, p] : sizes) {
        const bytes header = seeds_test::random_bytes(rng, h);
        const bytes payload = seeds_test::random_bytes(rng, p);
        bytes wire = make_frame(header, payload);
        ASSERT_EQ(wire.size(), frame_length(h, p));
        wire.push_back(0x5A);  // bytes after the frame are not looked at
        std::string err;
        error_code code = error_code::truncated;
        const auto f = decode(wire.data(), wire.size(), &err, &code);
        ASSERT_TRUE(f) << err;
        EXPECT_EQ(code, error_code::none);
        EXPECT_EQ(f->header, header);
        EXPECT_EQ(f->payload, payload);
    }
}

TEST(Ift, EncodeRefusesOversizedParts) {
    bytes out = {1, 2, 3};
    const bytes big(65536, 0);
    EXPECT_FALSE(encode(big.data(), big.size(), nullptr, 0, out));
    EXPECT_FALSE(encode(nullptr, 0, big.data(), big.size(), out));
    EXPECT_EQ(out, (bytes{1, 2, 3}));
    EXPECT_TRUE(encode(frame{big, {}}).empty());
}

error_code decode_error(const bytes& wire, const decode_options& options = {}) {
    std::string err;
    error_code code = error_code::none;
    const auto f = parse(wire.data(), wire.size(), &err, &code, options);
    EXPECT_EQ(f.has_value(), code == error_code::none);
    if (!f) {
        EXPECT_FALSE(err.empty());
    }
    return code;
}

// Header CRC covers sizes + DDP header; Payload CRC covers only the payload (§3.1).
TEST(Ift, CrcCoverageBitByBit) {
    const bytes header = hex("0102030405060708090a0b0c0d0e");
    const bytes payload = seeds_test::text("payload bytes!");
    const bytes wire = make_frame(header, payload);
    const std::size_t header_crc = 4 + header.size();
    const std::size_t payload_start = header_crc + 4;
    for (std::size_t bit = 0; bit < wire.size() * 8; ++bit) {
        const std::size_t byte = bit / 8;
        const error_code e = decode_error(seeds_test::flipped(wire, bit));
        if (byte < 4) {
            // A changed size moves the fields: never accepted.
            EXPECT_TRUE(e == error_code::header_crc_mismatch || e == error_code::truncated)
                << "bit " << bit << " " << to_string(e);
        } else if (byte < payload_start) {
            EXPECT_EQ(e, error_code::header_crc_mismatch) << "bit " << bit;  // DDP header or Header CRC
        } else {
            EXPECT_EQ(e, error_code::payload_crc_mismatch)
                << "bit " << bit;  // payload or Payload CRC: header still good
        }
    }
}

TEST(Ift, EveryDecodeError) {
    const bytes wire = make_frame(hex("aabbccdd"), hex("0102030405"));
    // truncated: at every length short of the frame
    for (std::size_t n = 0; n < wire.size(); ++n) {
        const bytes cut(wire.begin(), wire.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_EQ(decode_error(cut), error_code::truncated) << n;
    }
    decode_options o;
    o.min_header_size = 8;
    EXPECT_EQ(decode_error(wire, o), error_code::header_size_out_of_range);
    o = {};
    o.max_header_size = 3;
    EXPECT_EQ(decode_error(wire, o), error_code::header_size_out_of_range);
    o = {};
    o.max_payload_size = 4;
    EXPECT_EQ(decode_error(wire, o), error_code::payload_size_out_of_range);
    o.max_payload_size = 5;
    EXPECT_EQ(decode_error(wire, o), error_code::none);
    EXPECT_EQ(decode_error(seeds_test::flipped(wire, 8 * 5)), error_code::header_crc_mismatch);
    EXPECT_EQ(decode_error(seeds_test::flipped(wire, 8 * 13)), error_code::payload_crc_mismatch);
    // The header is judged before the payload: with both corrupted, the header error wins.
    EXPECT_EQ(decode_error(seeds_test::flipped(seeds_test::flipped(wire, 8 * 13), 8 * 5)),
              error_code::header_crc_mismatch);
    // A good header followed by a truncated payload is "truncated", not a payload CRC error.
    const bytes partial(wire.begin(), wire.begin() + 14);
    EXPECT_EQ(decode_error(partial), error_code::truncated);
    std::string err;
    EXPECT_FALSE(decode(partial.data(), partial.size(), &err));
    EXPECT_NE(err.find("truncated"), std::string::npos);
    EXPECT_FALSE(decode(nullptr, 0, nullptr));  // null error/code pointers are allowed
    for (error_code e :
         {error_code::none, error_code::truncated, error_code::header_size_out_of_range,
          error_code::payload_size_out_of_range, error_code::header_crc_mismatch, error_code::payload_crc_mismatch})
        EXPECT_STRNE(to_string(e), "unknown");
}

TEST(Ift, Sizes) {
    EXPECT_EQ(kOverhead, 12u);
    EXPECT_EQ(frame_length(14, 1000), 1026u);
    EXPECT_EQ(max_payload(1460, 14), 1434u);  // 1460 - 12 - 14
    EXPECT_EQ(max_payload(1460, 18), 1430u);
    EXPECT_EQ(max_payload(26, 14), 0u);
    EXPECT_EQ(max_payload(25, 14), 0u);
    EXPECT_EQ(max_payload(27, 14), 1u);
    EXPECT_EQ(max_payload(200000, 14), 65535u);
    for (std::size_t emss = 0; emss < 2000; emss += 7)
        for (std::size_t h : {0u, 14u, 18u, 46u})
            if (max_payload(emss, h) != 0) {
                EXPECT_LE(frame_length(h, max_payload(emss, h)), emss);
            }
}

// ---------------------------------------------------------------------------------------------
// Deframer

struct collected {
    std::vector<frame> frames;
    std::vector<bool> ok;
    std::vector<std::pair<bytes, std::size_t>> headers;  // header, announced payload size
    std::vector<bytes> pieces_joined;                    // per frame
};

deframer::handler_set collect(collected& c) {
    deframer::handler_set h;
    h.header = [&c](const std::uint8_t* p, std::size_t n, std::size_t payload_size) {
        c.headers.emplace_back(bytes(p, p + n), payload_size);
        c.pieces_joined.emplace_back();
    };
    h.payload_piece = [&c](std::size_t offset, const std::uint8_t* p, std::size_t n) {
        ASSERT_FALSE(c.pieces_joined.empty());
        ASSERT_EQ(offset, c.pieces_joined.back().size());
        c.pieces_joined.back().insert(c.pieces_joined.back().end(), p, p + n);
    };
    h.frame = [&c](const frame_view& v, bool ok) {
        c.frames.push_back(
            frame{bytes(v.header, v.header + v.header_size), bytes(v.payload, v.payload + v.payload_size)});
        c.ok.push_back(ok);
        EXPECT_EQ(v.wire_length, frame_length(v.header_size, v.payload_size));
    };
    return h;
}

TEST(IftDeframer, RandomFramesRandomChunks) {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 40; ++round) {
        std::vector<frame> sent;
        bytes stream;
        for (int i = 0; i < 30; ++i) {
            frame f{seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 40)),
                    seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 700))};
            const bytes w = encode(f);
            stream.insert(stream.end(), w.begin(), w.end());
            sent.push_back(std::move(f));
        }
        collected c;
        deframer d({}, collect(c));
        seeds_test::feed_in_chunks(stream, rng, round % 2 == 0 ? 64 : 3000, [&](const std::uint8_t* p, std::size_t n) {
            ASSERT_EQ(d.feed(p, n), error_code::none) << d.error_detail();
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
    const bytes header = hex("00112233445566778899aabbccdd");
    const bytes payload(500, 0x42);
    const bytes wire = encode(frame{header, payload});
    collected c;
    deframer d({}, collect(c));
    const std::size_t header_end = 4 + header.size() + 4;
    for (std::size_t i = 0; i < wire.size(); ++i) {
        ASSERT_EQ(d.feed(&wire[i], 1), error_code::none);
        EXPECT_EQ(c.headers.size(), i + 1 >= header_end ? 1u : 0u) << i;
        EXPECT_EQ(c.frames.size(), i + 1 == wire.size() ? 1u : 0u) << i;
        if (i + 1 >= header_end) {
            EXPECT_EQ(c.pieces_joined.back().size(), std::min(i + 1 - header_end, payload.size()));
        }
    }
}

TEST(IftDeframer, HeaderCrcErrorIsFatal) {
    const bytes a = encode(frame{hex("01020304"), hex("aabb")});
    bytes b = encode(frame{hex("05060708"), hex("ccdd")});
    b[5] ^= 0x01;  // DDP header byte of the second frame
    const bytes c3 = encode(frame{hex("090a0b0c"), hex("eeff")});
    const bytes stream = seeds_test::cat({a, b, c3});
    for (std::size_t chunk : {std::size_t{1}, std::size_t{5}, stream.size()}) {
        collected c;
        deframer d({}, collect(c));
        error_code e = error_code::none;
        for (std::size_t pos = 0; pos < stream.size(); pos += chunk)
            e = d.feed(stream.data() + pos, std::min(chunk, stream.size() - pos));
        EXPECT_EQ(e, error_code::header_crc_mismatch);
        EXPECT_EQ(d.error(), error_code::header_crc_mismatch);
        EXPECT_NE(d.error_detail().find("stream byte " + std::to_string(a.size())), std::string::npos)
            << d.error_detail();
        EXPECT_EQ(c.frames.size(), 1u);
        EXPECT_EQ(c.headers.size(), 1u);                                         // the bad header is never handed up
        EXPECT_EQ(d.feed(a.data(), a.size()), error_code::header_crc_mismatch);  // stays failed
        EXPECT_EQ(c.frames.size(), 1u);
    }
}

TEST(IftDeframer, PayloadCrcErrorStopsByDefaultOrIsReportedAndSkipped) {
    const bytes a = encode(frame{hex("01020304"), hex("aabb")});
    bytes b = encode(frame{hex("05060708"), hex("ccdd")});
    b[4 + 4 + 4] ^= 0x80;  // first payload byte of the second frame
    const bytes c3 = encode(frame{hex("090a0b0c"), hex("eeff")});
    const bytes stream = seeds_test::cat({a, b, c3});
    {
        collected c;
        deframer d({}, collect(c));
        EXPECT_EQ(d.feed(stream.data(), stream.size()), error_code::payload_crc_mismatch);
        EXPECT_EQ(c.frames.size(), 1u);
        EXPECT_EQ(c.headers.size(), 2u);  // the second header was good and delivered
        EXPECT_EQ(d.payload_crc_errors(), 1u);
    }
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, stream.size()}) {
        deframer::config cfg;
        cfg.stop_on_payload_crc_error = false;
        collected c;
        deframer d(cfg, collect(c));
        for (std::size_t pos = 0; pos < stream.size(); pos += chunk)
            ASSERT_EQ(d.feed(stream.data() + pos, std::min(chunk, stream.size() - pos)), error_code::none);
        ASSERT_EQ(c.frames.size(), 3u);
        EXPECT_EQ(c.ok, (std::vector<bool>{true, false, true}));
        EXPECT_EQ(c.frames[2].payload, hex("eeff"));
        EXPECT_EQ(d.payload_crc_errors(), 1u);
        EXPECT_EQ(d.frames(), 3u);
    }
}

TEST(IftDeframer, LimitsAreFatal) {
    const bytes wire = encode(frame{bytes(20, 1), bytes(100, 2)});
    deframer::config cfg;
    cfg.limits.max_payload_size = 99;
    deframer d(cfg, {});
    EXPECT_EQ(d.feed(wire.data(), 3), error_code::none);
    EXPECT_EQ(d.feed(wire.data() + 3, 1), error_code::payload_size_out_of_range);
    cfg = {};
    cfg.limits.min_header_size = 21;
    deframer d2(cfg, {});
    EXPECT_EQ(d2.feed(wire.data(), wire.size()), error_code::header_size_out_of_range);
}

TEST(IftDeframer, WithoutFrameHandlerPayloadIsOnlyStreamed) {
    const bytes wire = encode(frame{hex("0102"), bytes(1000, 7)});
    std::size_t streamed = 0;
    deframer::handler_set h;
    h.payload_piece = [&](std::size_t, const std::uint8_t*, std::size_t n) { streamed += n; };
    deframer d({}, h);
    std::mt19937_64 rng(3);
    seeds_test::feed_in_chunks(
        wire, rng, 50, [&](const std::uint8_t* p, std::size_t n) { ASSERT_EQ(d.feed(p, n), error_code::none); });
    EXPECT_EQ(streamed, 1000u);
    EXPECT_EQ(d.frames(), 1u);
}

}  // namespace
}  // namespace rnic::proto::ift
