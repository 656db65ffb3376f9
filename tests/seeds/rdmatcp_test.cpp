// RDMA/TCP segments (draft-williams-rdmatcp-00, seed 000): byte-exact segments of all four
// message types after the §3.1-§3.3 figures, bit positions, round trips, padding, CRC coverage,
// every decode error, sizes, the §5 next-segment rule and the in-order deframer.
#include "proto/seeds/rdmatcp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "seeds_test_util.h"

namespace rnic::proto::rdmatcp {
namespace {

using seeds_test::bytes;
using seeds_test::hex;
using seeds_test::to_hex;

constexpr std::uint64_t kConn = 0x0102030405060708ull;

header make_header(message_type t, bool b, bool e, std::uint32_t msg) {
    header h;
    h.type = t;
    h.begin = b;
    h.end = e;
    h.connection_id = kConn;
    h.message_number = msg;
    return h;
}

bytes seg(const header& h, const bytes& control, const bytes& payload) {
    bytes out;
    std::string err;
    EXPECT_TRUE(encode(h, control.data(), control.size(), payload.data(), payload.size(), out, &err)) << err;
    return out;
}

// A segment exactly as given (Segment Length and CLEN from `h`), padded/cut to the wire length
// that Segment Length announces, with a correct CRC: for building inconsistent input.
bytes craft(const header& h, const bytes& body) {
    bytes out(h.size());
    encode_header(h, out.data());
    out.insert(out.end(), body.begin(), body.end());
    const std::size_t covered = std::max(wire_length(h.segment_length) - kCrcSize, h.size());
    out.resize(covered, 0);
    out.resize(covered + kCrcSize);
    put_le32(out.data() + covered, crc_db710641(out.data(), covered));
    return out;
}

// Recomputes the CRC after a test edited a segment.
void reseal(bytes& s) {
    const std::size_t covered = wire_length(get_be16(s.data() + 2)) - kCrcSize;
    put_le32(s.data() + covered, crc_db710641(s.data(), covered));
}

// §3.1: Send. Byte 1 = res 1010 | B=1 | E=0 | typ 00 = 0xA8. Segment Length = 24 header + 4
// control + 5 payload = 33 (0x21); 3 bytes of padding; CRC-32 (generator 0xDB710641, value
// computed by a separate bit-serial implementation) least significant byte first.
TEST(RdmaTcp, ByteExactSend) {
    header h = make_header(message_type::send, true, false, 0x11223344);
    h.client_bits = 0xA;
    h.order = 5;
    const bytes wire = seg(h, hex("c0c1c2c3"), hex("a0a1a2a3a4"));
    EXPECT_EQ(to_hex(wire), to_hex(hex("01 a8 0021"         // Version | res B E typ | Segment Length
                                       "01020304 05060708"  // Connection ID
                                       "11223344"           // Message Number
                                       "0005 00 01"         // order | res. | CLEN
                                       "00000000"           // Data Offset
                                       "c0c1c2c3"           // Control Data
                                       "a0a1a2a3 a4"        // Payload Data
                                       "000000"             // Padding
                                       "b9fb55a5")));       // CRC-32
}

// §3.2: RDMA_Write. Byte 1 = B=0 E=1 typ 01 = 0x05. 32-byte header + 6 payload = 38 (0x26), pad 2.
TEST(RdmaTcp, ByteExactRdmaWrite) {
    header h = make_header(message_type::rdma_write, false, true, 0x11223345);
    h.buffer_id = 0xCAFEBABE;
    h.buffer_offset = 0x1000;
    h.rdma_length = 0x20;
    const bytes wire = seg(h, {}, hex("b0b1b2b3b4b5"));
    EXPECT_EQ(to_hex(wire), to_hex(hex("01 05 0026 01020304 05060708 11223345 0000 00 00"
                                       "cafebabe"  // RDMA Buffer ID
                                       "00001000"  // RDMA Buffer offset
                                       "00000020"  // RDMA Length
                                       "b0b1b2b3 b4b5 0000"
                                       "f1398464")));
}

// §3.3: RDMA_Read_Request. B=E=1 typ 10 = 0x0E; order 0xFFFF; 8 bytes of control data (CLEN 2);
// no payload, no padding: 32 + 8 = 40 (0x28).
TEST(RdmaTcp, ByteExactReadRequest) {
    header h = make_header(message_type::read_request, true, true, 0x11223346);
    h.order = kOrderUnconditional;
    h.buffer_id = 0xABCD;
    h.buffer_offset = 0x200;
    h.rdma_length = 0x10000;
    const bytes wire = seg(h, hex("d0d1d2d3d4d5d6d7"), {});
    EXPECT_EQ(to_hex(wire), to_hex(hex("01 0e 0028 01020304 05060708 11223346 ffff 00 02"
                                       "0000abcd 00000200 00010000"
                                       "d0d1d2d3 d4d5d6d7"
                                       "5825565e")));
}

// §3.1: RDMA_Read_Response, message number of the request. B=E=1 typ 11 = 0x0F; 24 + 4 = 28.
TEST(RdmaTcp, ByteExactReadResponse) {
    const bytes wire = seg(make_header(message_type::read_response, true, true, 0x11223346), {}, hex("e0e1e2e3"));
    EXPECT_EQ(to_hex(wire), to_hex(hex("01 0f 001c 01020304 05060708 11223346 0000 00 00 00000000"
                                       "e0e1e2e3 c98ebaff")));
}

TEST(RdmaTcp, Byte1BitPositions) {
    auto byte1 = [](std::uint8_t client, bool b, bool e, message_type t) {
        header h = make_header(t, b, e, 0);
        h.client_bits = client;
        bytes out(h.size());
        encode_header(h, out.data());
        return out[1];
    };
    EXPECT_EQ(byte1(0, false, false, message_type::send), 0x00);
    EXPECT_EQ(byte1(0, true, false, message_type::send), 0x08);         // B: bit 3
    EXPECT_EQ(byte1(0, false, true, message_type::send), 0x04);         // E: bit 2
    EXPECT_EQ(byte1(0, false, false, message_type::rdma_write), 0x01);  // typ: bits 1-0
    EXPECT_EQ(byte1(0, false, false, message_type::read_request), 0x02);
    EXPECT_EQ(byte1(0, false, false, message_type::read_response), 0x03);
    EXPECT_EQ(byte1(0x1, false, false, message_type::send), 0x10);  // res: bits 7-4
    EXPECT_EQ(byte1(0x8, false, false, message_type::send), 0x80);
    EXPECT_EQ(byte1(0xFF, false, false, message_type::send), 0xF0);  // masked to 4 bits
}

TEST(RdmaTcp, SizesPerType) {
    EXPECT_EQ(header_size(message_type::send), 24u);
    EXPECT_EQ(header_size(message_type::read_response), 24u);
    EXPECT_EQ(header_size(message_type::rdma_write), 32u);
    EXPECT_EQ(header_size(message_type::read_request), 32u);
    EXPECT_EQ(max_payload(1460, message_type::send), 1432u);  // floor4(1460 - 4 - 24)
    EXPECT_EQ(max_payload(1460, message_type::rdma_write), 1424u);
    EXPECT_EQ(max_payload(1460, message_type::send, 2), 1424u);
    EXPECT_EQ(max_payload(1461, message_type::send), 1432u);  // padding eats odd bytes
    EXPECT_EQ(max_payload(1460, message_type::read_request), 0u);
    EXPECT_EQ(max_payload(27, message_type::send), 0u);
    EXPECT_EQ(max_payload(200000, message_type::send), 65535u - 24);
    EXPECT_EQ(overhead(message_type::send, 0, 1432), 28u);
    EXPECT_EQ(overhead(message_type::send, 0, 1), 31u);  // 24 + 3 pad + 4
    EXPECT_EQ(overhead(message_type::rdma_write, 1, 0), 40u);
    for (message_type t : {message_type::send, message_type::rdma_write, message_type::read_response})
        for (std::size_t cw : {0u, 1u, 5u})
            for (std::size_t emss = 0; emss < 3000; emss += 3) {
                const std::size_t p = max_payload(emss, t, cw);
                if (p == 0) continue;
                const std::size_t fixed = header_size(t) + 4 * cw;
                EXPECT_LE(wire_length(fixed + p), emss);
                EXPECT_GT(wire_length(fixed + p + 1), emss) << emss;  // the largest that fits
            }
}

TEST(RdmaTcp, PaddingRule) {
    for (std::size_t n = 0; n < 12; ++n) {
        const bytes payload(n, 0xEE);
        const bytes wire = seg(make_header(message_type::send, true, true, 1), {}, payload);
        const std::size_t seglen = 24 + n;
        EXPECT_EQ(get_be16(wire.data() + 2), seglen);  // excludes padding and CRC (§3.4)
        EXPECT_EQ(pad_length(seglen), (4 - n % 4) % 4);
        EXPECT_EQ(wire.size() % 4, 0u);
        EXPECT_EQ(wire.size(), wire_length(seglen));
        for (std::size_t i = seglen; i < seglen + pad_length(seglen); ++i) EXPECT_EQ(wire[i], 0) << "padding is zero";
    }
    // "ignored by the receiver": non-zero padding with a correct CRC decodes.
    bytes wire = seg(make_header(message_type::send, true, true, 1), {}, hex("01"));
    wire[25] = 0xFF;
    wire[27] = 0x11;
    std::string err;
    EXPECT_FALSE(decode(wire.data(), wire.size(), &err));  // the CRC covers the padding ...
    reseal(wire);
    const auto s = decode(wire.data(), wire.size(), &err);  // ... but its value is not judged
    ASSERT_TRUE(s) << err;
    EXPECT_EQ(s->payload, hex("01"));
}

TEST(RdmaTcp, RoundTripEveryFieldAndType) {
    std::mt19937_64 rng(2);
    for (int i = 0; i < 400; ++i) {
        segment s;
        header& h = s.header;
        h.type = static_cast<message_type>(i % 4);
        h.client_bits = static_cast<std::uint8_t>(rng() & 0xF);
        h.begin = (rng() & 1) != 0;
        h.end = (rng() & 1) != 0;
        h.connection_id = rng();
        h.message_number = static_cast<std::uint32_t>(rng());
        h.order = static_cast<std::uint16_t>(rng());
        s.control = seeds_test::random_bytes(rng, 4 * seeds_test::uniform(rng, 0, 4));
        if (h.type != message_type::read_request)
            s.payload = seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 100));
        if (h.type == message_type::read_request) h.begin = h.end = true;
        if (has_buffer_fields(h.type)) {
            h.buffer_id = static_cast<std::uint32_t>(rng());
            h.buffer_offset = static_cast<std::uint32_t>(rng());
            h.rdma_length = h.type == message_type::rdma_write && h.begin && h.end
                                ? static_cast<std::uint32_t>(s.payload.size())
                                : static_cast<std::uint32_t>(s.payload.size() + (rng() & 0xFFFF));
        } else {
            h.data_offset = h.begin ? 0 : static_cast<std::uint32_t>(rng());
        }
        const bytes wire = encode(s);
        ASSERT_FALSE(wire.empty());
        std::string err;
        error_code code = error_code::crc_mismatch;
        const auto d = decode(wire.data(), wire.size(), &err, &code);
        ASSERT_TRUE(d) << err;
        EXPECT_EQ(code, error_code::none);
        const header& g = d->header;
        EXPECT_EQ(g.version, 1);
        EXPECT_EQ(g.client_bits, h.client_bits);
        EXPECT_EQ(g.begin, h.begin);
        EXPECT_EQ(g.end, h.end);
        EXPECT_EQ(g.type, h.type);
        EXPECT_EQ(g.segment_length, h.size() + s.control.size() + s.payload.size());
        EXPECT_EQ(g.connection_id, h.connection_id);
        EXPECT_EQ(g.message_number, h.message_number);
        EXPECT_EQ(g.order, h.order);
        EXPECT_EQ(g.reserved, 0);
        EXPECT_EQ(g.clen, s.control.size() / 4);
        EXPECT_EQ(g.data_offset, h.data_offset);
        EXPECT_EQ(g.buffer_id, h.buffer_id);
        EXPECT_EQ(g.buffer_offset, h.buffer_offset);
        EXPECT_EQ(g.rdma_length, h.rdma_length);
        EXPECT_EQ(d->control, s.control);
        EXPECT_EQ(d->payload, s.payload);
        const auto v = parse(wire.data(), wire.size(), &err);
        ASSERT_TRUE(v);
        EXPECT_EQ(v->wire_length, wire.size());
        EXPECT_EQ(v->crc, get_le32(wire.data() + wire.size() - 4));
    }
}

TEST(RdmaTcp, EncodeRefusals) {
    bytes out = {9};
    std::string err;
    const header send = make_header(message_type::send, true, true, 0);
    const bytes three(3, 0), big_control(256 * 4, 0), one(1, 0), huge(65535, 0);
    EXPECT_FALSE(encode(send, three.data(), 3, nullptr, 0, out, &err));
    EXPECT_FALSE(encode(send, big_control.data(), big_control.size(), nullptr, 0, out, &err));
    EXPECT_FALSE(encode(make_header(message_type::read_request, true, true, 0), nullptr, 0, one.data(), 1, out, &err));
    EXPECT_NE(err.find("§3.3"), std::string::npos);
    EXPECT_FALSE(encode(send, nullptr, 0, huge.data(), 65535 - 23, out, &err));
    EXPECT_TRUE(encode(send, nullptr, 0, huge.data(), 65535 - 24, out, &err));
    EXPECT_EQ(out.size(), 1 + wire_length(65535));
    EXPECT_EQ(out[0], 9);
}

error_code decode_error(const bytes& wire, const decode_options& options = {}) {
    std::string err;
    error_code code = error_code::none;
    const auto v = parse(wire.data(), wire.size(), &err, &code, options);
    EXPECT_EQ(v.has_value(), code == error_code::none);
    if (!v) {
        EXPECT_FALSE(err.empty());
    }
    return code;
}

// §3.4: the CRC covers the entire segment (header, control, payload, padding); bytes of the next
// segment are not covered.
TEST(RdmaTcp, CrcCoverageBitByBit) {
    header h = make_header(message_type::rdma_write, true, false, 77);
    h.rdma_length = 100;
    const bytes one = seg(h, hex("0a0b0c0d"), seeds_test::text("payload, 23 bytes long."));
    ASSERT_EQ(pad_length(get_be16(one.data() + 2)), 1u);
    for (std::size_t bit = 0; bit < one.size() * 8; ++bit) {
        const std::size_t byte = bit / 8;
        const error_code e = decode_error(seeds_test::flipped(one, bit));
        if (byte == 0) {
            EXPECT_EQ(e, error_code::bad_version);
        } else if (byte == 2 || byte == 3) {
            EXPECT_NE(e, error_code::none) << "Segment Length bit " << bit;
        } else {
            EXPECT_EQ(e, error_code::crc_mismatch) << "bit " << bit;  // incl. padding and the CRC field
        }
    }
    // Without the CRC check the payload and padding are not judged at all.
    decode_options no_crc;
    no_crc.check_crc = false;
    EXPECT_EQ(decode_error(seeds_test::flipped(one, 8 * 50), no_crc), error_code::none);
    // Bytes beyond the segment (here: the next segment) are outside its coverage.
    bytes two = seeds_test::cat({one, seg(make_header(message_type::send, true, true, 78), {}, hex("01020304"))});
    for (std::size_t byte = one.size(); byte < two.size(); ++byte) {
        bytes t = two;
        t[byte] ^= 0xFF;
        EXPECT_EQ(decode_error(t), error_code::none) << byte;
    }
}

TEST(RdmaTcp, EveryDecodeError) {
    const bytes good = seg(make_header(message_type::send, true, true, 5), hex("01020304"), hex("aabbcc"));
    ASSERT_EQ(decode_error(good), error_code::none);
    // truncated: first word, header, whole segment
    for (std::size_t n = 1; n < good.size(); ++n)
        EXPECT_EQ(decode_error(bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n))),
                  error_code::truncated)
            << n;
    EXPECT_EQ(decode_error({}), error_code::truncated);
    // bad_version
    for (std::uint8_t v : {0, 2, 0xFF}) {
        bytes b = good;
        b[0] = v;
        reseal(b);
        EXPECT_EQ(decode_error(b), error_code::bad_version);
    }
    // reserved_bits: the 8-bit res. of word 4 (strict), accepted on request
    {
        bytes b = good;
        b[18] = 0x40;
        reseal(b);
        EXPECT_EQ(decode_error(b), error_code::reserved_bits);
        decode_options o;
        o.ignore_reserved_bits = true;
        EXPECT_EQ(decode_error(b, o), error_code::none);
        std::string err;
        EXPECT_EQ(decode(b.data(), b.size(), &err, nullptr, o)->header.reserved, 0x40);
    }
    // the 4 client res bits are never an error
    {
        bytes b = good;
        b[1] |= 0xF0;
        reseal(b);
        EXPECT_EQ(decode_error(b), error_code::none);
    }
    // length_too_short: Segment Length below header, and below header + control
    {
        header h = make_header(message_type::send, true, true, 5);
        h.segment_length = 20;
        EXPECT_EQ(decode_error(craft(h, {})), error_code::length_too_short);
        h.segment_length = 24;
        h.clen = 1;
        EXPECT_EQ(decode_error(craft(h, {})), error_code::length_too_short);
        h.segment_length = 28;
        EXPECT_EQ(decode_error(craft(h, hex("01020304"))), error_code::none);
    }
    // unexpected_payload and bad_flags (RDMA_Read_Request, §3.3)
    {
        header h = make_header(message_type::read_request, true, true, 5);
        h.segment_length = 33;
        EXPECT_EQ(decode_error(craft(h, hex("ff"))), error_code::unexpected_payload);
        h.segment_length = 32;
        EXPECT_EQ(decode_error(craft(h, {})), error_code::none);
        for (auto [b, e] : {std::pair{false, true}, std::pair{true, false}, std::pair{false, false}}) {
            h.begin = b;
            h.end = e;
            EXPECT_EQ(decode_error(craft(h, {})), error_code::bad_flags);
        }
    }
    // bad_data_offset: first segment of a Send / Read Response must have offset 0
    for (message_type t : {message_type::send, message_type::read_response}) {
        header h = make_header(t, true, false, 5);
        h.data_offset = 8;
        h.segment_length = 24;
        EXPECT_EQ(decode_error(craft(h, {})), error_code::bad_data_offset) << to_string(t);
        h.begin = false;  // a later segment may have any offset
        EXPECT_EQ(decode_error(craft(h, {})), error_code::none);
    }
    // rdma_length_mismatch
    {
        header h = make_header(message_type::rdma_write, true, false, 5);
        h.rdma_length = 3;
        h.segment_length = 32 + 4;
        EXPECT_EQ(decode_error(craft(h, hex("01020304"))), error_code::rdma_length_mismatch);  // 4 > 3
        h.rdma_length = 4;
        EXPECT_EQ(decode_error(craft(h, hex("01020304"))), error_code::none);
        h.end = true;
        h.rdma_length = 5;  // single segment: must be equal
        EXPECT_EQ(decode_error(craft(h, hex("01020304"))), error_code::rdma_length_mismatch);
    }
    // connection_id_mismatch
    {
        decode_options o;
        o.connection_id = kConn;
        EXPECT_EQ(decode_error(good, o), error_code::none);
        o.connection_id = kConn + 1;
        EXPECT_EQ(decode_error(good, o), error_code::connection_id_mismatch);
    }
    EXPECT_EQ(decode_error(seeds_test::flipped(good, 8 * 30)), error_code::crc_mismatch);
    for (int e = 0; e <= static_cast<int>(error_code::crc_mismatch); ++e)
        EXPECT_STRNE(to_string(static_cast<error_code>(e)), "unknown");
    for (int t = 0; t < 4; ++t) EXPECT_STRNE(to_string(static_cast<message_type>(t)), "unknown");
}

// §5: "noting the length field ..., rounding up to the next multiple of four ... and adding
// four (for the CRC)" finds every segment start.
TEST(RdmaTcp, NextSegmentRuleWalksTheStream) {
    std::mt19937_64 rng(4);
    bytes stream;
    std::vector<std::size_t> starts;
    for (int i = 0; i < 200; ++i) {
        starts.push_back(stream.size());
        const auto t = static_cast<message_type>(i % 4);
        header h = make_header(t, true, true, static_cast<std::uint32_t>(i));
        bytes payload =
            t == message_type::read_request ? bytes{} : seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 50));
        if (t == message_type::rdma_write) h.rdma_length = static_cast<std::uint32_t>(payload.size());
        const bytes s = seg(h, seeds_test::random_bytes(rng, 4 * seeds_test::uniform(rng, 0, 3)), payload);
        stream.insert(stream.end(), s.begin(), s.end());
    }
    std::vector<std::size_t> walked;
    for (std::size_t pos = 0; pos < stream.size(); pos += wire_length(get_be16(stream.data() + pos + 2)))
        walked.push_back(pos);
    EXPECT_EQ(walked, starts);
    for (std::size_t s : starts) EXPECT_EQ(s % 4, 0u);  // every segment starts 4-aligned
}

// ---------------------------------------------------------------------------------------------
// Deframer

struct built {
    bytes stream;
    std::vector<segment> segments;
};

built build_stream(std::mt19937_64& rng, std::size_t count, std::uint64_t conn) {
    built b;
    std::uint32_t msg = static_cast<std::uint32_t>(rng());
    for (std::size_t i = 0; i < count; ++i) {
        segment s;
        s.header = make_header(static_cast<message_type>(rng() % 4), true, true, msg++);
        s.header.connection_id = conn;
        s.control = seeds_test::random_bytes(rng, 4 * seeds_test::uniform(rng, 0, 2));
        if (s.header.type != message_type::read_request)
            s.payload = seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 900));
        if (s.header.type == message_type::rdma_write)
            s.header.rdma_length = static_cast<std::uint32_t>(s.payload.size());
        const bytes w = encode(s);
        b.stream.insert(b.stream.end(), w.begin(), w.end());
        b.segments.push_back(std::move(s));
    }
    return b;
}

TEST(RdmaTcpDeframer, RandomSegmentsRandomChunksLearnsConnectionId) {
    std::mt19937_64 rng(12);
    for (int round = 0; round < 30; ++round) {
        const std::uint64_t conn = rng();
        const built b = build_stream(rng, 40, conn);
        std::vector<segment> got;
        deframer d({}, [&](const segment_view& v) {
            got.push_back(segment{v.header, bytes(v.control, v.control + v.control_len),
                                  bytes(v.payload, v.payload + v.payload_len)});
        });
        seeds_test::feed_in_chunks(b.stream, rng, round % 2 ? 40 : 2000, [&](const std::uint8_t* p, std::size_t n) {
            ASSERT_EQ(d.feed(p, n), error_code::none) << d.error_detail();
        });
        EXPECT_TRUE(d.at_segment_boundary());
        EXPECT_EQ(d.bytes_consumed(), b.stream.size());
        ASSERT_EQ(got.size(), b.segments.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].header.message_number, b.segments[i].header.message_number);
            EXPECT_EQ(got[i].header.type, b.segments[i].header.type);
            EXPECT_EQ(got[i].control, b.segments[i].control);
            EXPECT_EQ(got[i].payload, b.segments[i].payload);
        }
        ASSERT_TRUE(d.connection_id());
        EXPECT_EQ(*d.connection_id(), conn);
    }
}

TEST(RdmaTcpDeframer, ForeignConnectionIdAfterTheFirstSegmentIsFatal) {
    const bytes a = seg(make_header(message_type::send, true, true, 1), {}, hex("01"));
    header other = make_header(message_type::send, true, true, 2);
    other.connection_id = kConn ^ 1;
    const bytes b = seg(other, {}, hex("02"));
    const bytes stream = seeds_test::cat({a, b});
    for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, stream.size()}) {
        int delivered = 0;
        deframer d({}, [&](const segment_view&) { ++delivered; });
        error_code e = error_code::none;
        for (std::size_t pos = 0; pos < stream.size(); pos += chunk)
            e = d.feed(stream.data() + pos, std::min(chunk, stream.size() - pos));
        EXPECT_EQ(e, error_code::connection_id_mismatch);
        EXPECT_EQ(delivered, 1);
        EXPECT_NE(d.error_detail().find("stream byte " + std::to_string(a.size())), std::string::npos)
            << d.error_detail();
    }
    deframer::config cfg;
    cfg.connection_id = kConn ^ 1;  // configured: the first segment must match too
    deframer d(cfg, {});
    EXPECT_EQ(d.feed(a.data(), a.size()), error_code::connection_id_mismatch);
}

TEST(RdmaTcpDeframer, FirstWordJudgedBeforeTheRestArrives) {
    deframer d({}, {});
    const bytes bad_version = hex("02000020");
    EXPECT_EQ(d.feed(bad_version.data(), 4), error_code::bad_version);
    deframer d2({}, {});
    const bytes short_len = hex("01 01 0018");  // RDMA_Write with Segment Length 24 < 32
    EXPECT_EQ(d2.feed(short_len.data(), 2), error_code::none);
    EXPECT_EQ(d2.feed(short_len.data() + 2, 2), error_code::length_too_short);
    EXPECT_EQ(d2.bytes_consumed(), 4u);
    deframer d3({}, {});
    bytes crc_bad = seg(make_header(message_type::send, true, true, 1), {}, hex("01"));
    crc_bad.back() ^= 1;
    EXPECT_EQ(d3.feed(crc_bad.data(), crc_bad.size()), error_code::crc_mismatch);
    EXPECT_EQ(d3.segments(), 0u);
}

}  // namespace
}  // namespace rnic::proto::rdmatcp
