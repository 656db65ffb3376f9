// VI/TCP segments (draft-dicecco-vitcp-01, seed 003): byte-exact segments after the §3.2-§3.5
// figures, bit positions of Type/Flags, Remote Error Code and Calling Attributes, round trips of
// every type, Segment Length including the trailer, the trailer CRC's coverage (§3.6), options,
// every decode error, sizes, CE negotiation and the deframer.
#include "proto/seeds/vitcp.h"

#include <gtest/gtest.h>

#include <random>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "seeds_test_util.h"

namespace rnic::proto::vitcp {
namespace {

using seeds_test::bytes;
using seeds_test::hex;
using seeds_test::to_hex;
using seeds_test::zeros;

segment make(segment_type t, bool crc = false) {
    segment s;
    s.header.type = t;
    s.crc = crc;
    if (has_rdma_header(t)) s.rdma = rdma_header{};
    if (has_ce_header(t)) {
        s.ce = ce_header{};
        if (crc) s.ce->options.push_back({kOptionCrc, {}});
    }
    return s;
}

bytes enc(const segment& s) {
    bytes out;
    std::string err;
    EXPECT_TRUE(encode(s, out, &err)) << err;
    return out;
}

// Recomputes the trailer after a test edited a segment that has one.
void reseal(bytes& b) {
    const std::size_t end = b.size() - 4;
    put_le32(b.data() + end, crc_db710641(b.data(), end));
}

// §3.2 header + payload + §3.5 trailer. Type/Flags = Eom 1 | IdV 1 | TrE 0 | Type 00000 = 0xC0;
// Segment Length = 24 + 5 + 4 (trailer included) = 0x21; Remote Error Code = IS 0xAB, UTE, MPE =
// 0xAB05. CRC: generator 0xDB710641 over the 29 bytes before the trailer, computed by a separate
// bit-serial implementation, least significant byte first, not word aligned (§3.5).
TEST(ViTcp, ByteExactSendWithTrailer) {
    segment s = make(segment_type::send, true);
    header& h = s.header;
    h.eom = true;
    h.immediate_valid = true;
    h.data_offset = 0x10;
    h.immediate_data = 0xDEADBEEF;
    h.message_number = 0x124;
    h.message_ack = 0x123;
    h.rx_descriptors_posted = 7;
    h.remote_error.is_error_code = 0xAB;
    h.remote_error.transport_error = true;
    h.remote_error.memory_protection_error = true;
    s.payload = hex("5051525354");
    EXPECT_EQ(to_hex(enc(s)), to_hex(hex("01 c0 0021"    // Version | Type/Flags | Segment Length
                                         "00000010"      // Data Offset
                                         "deadbeef"      // Immediate Data
                                         "00000124"      // Message Number
                                         "00000123"      // Message ACK
                                         "0007 ab05"     // Rx Descriptors Posted | Remote Error Code
                                         "50515253 54"   // VI Payload Data
                                         "d195c446")));  // VI Trailer (CRC)
}

// §3.4 RDMA header after the segment header. Type/Flags = TrE | RdmaWrite = 0x21; 24+16+8 = 0x30.
TEST(ViTcp, ByteExactRdmaWriteWithoutTrailer) {
    segment s = make(segment_type::rdma_write);
    s.header.eom = false;
    s.header.transmit_error = true;
    s.header.message_number = 0x123;
    s.header.rx_descriptors_posted = 0x10;
    s.rdma = rdma_header{0x0011223344556677ull, 0x8899AABB, 0x500};
    s.payload = hex("6061626364656667");
    EXPECT_EQ(to_hex(enc(s)), to_hex(hex("01 21 0030 00000000 00000000 00000123 00000000 0010 0000"
                                         "00112233 44556677"  // RDMA Address
                                         "8899aabb"           // Registered Memory Handle
                                         "00000500"           // RDMA Length
                                         "60616263 64656667")));
}

ce_header sample_ce() {
    ce_header c;
    c.attributes = attributes{};
    c.attributes.reliable_delivery = true;
    c.attributes.rdma_write_enable = true;
    c.attributes.peer_to_peer = true;
    c.mtu = 9000;
    c.calling_discriminator = seeds_test::text("client-1");
    c.rdma_read_window = 4;
    c.called_discriminator = seeds_test::text("service");
    c.options = {{kOptionCrc, {}}, {kOptionUrgentMarker, {}}};
    c.end_of_options = true;
    return c;
}

// §3.3 CE header: Calling Attributes 0x004A (P2P bit 6, RDMA Write bit 3, Reliable Delivery
// bit 1), 64-byte discriminator fields, options CRC (1,4), Urgent Marker (2,4), End (0), then
// the trailer: 24 + 140 + 10 + 4 = 178 = 0xB2.
TEST(ViTcp, ByteExactConnectRequestWithOptionsAndTrailer) {
    segment s = make(segment_type::connect_request, true);
    s.header.message_number = 0x77;
    s.ce = sample_ce();
    const bytes expected = seeds_test::cat({
        hex("01 85 00b2 00000000 00000000 00000077 00000000 0000 0000"),
        hex("004a 0008"),                             // Calling Attributes | Calling Discriminator Length
        hex("00002328"),                              // MTU Size 9000
        seeds_test::text("client-1"), zeros(64 - 8),  // Calling Discriminator
        hex("0004 0007"),                             // Calling RDMA Read Window | Called Discriminator Length
        seeds_test::text("service"), zeros(64 - 7),   // Called Discriminator
        hex("0001 0004  0002 0004  0000"),            // Options: CRC, Urgent Marker, End
        hex("a3faef80"),                              // VI Trailer
    });
    EXPECT_EQ(to_hex(enc(s)), to_hex(expected));
    EXPECT_EQ(expected.size(), 178u);
}

// §3.6: ConnectReject carries no payload; the Segment Length (24 or 28) tells whether a CRC is there.
TEST(ViTcp, ConnectRejectCrcByLength) {
    segment s = make(segment_type::connect_reject, true);
    s.header.message_number = 0x77;
    const bytes with = enc(s);
    EXPECT_EQ(to_hex(with), to_hex(hex("01 87 001c 00000000 00000000 00000077 00000000 0000 0000 ae383dba")));
    s.crc = false;
    const bytes without = enc(s);
    EXPECT_EQ(without.size(), 24u);
    std::string err;
    for (const bool negotiated : {false, true}) {  // independent of the connection's CRC setting
        auto a = decode(with.data(), with.size(), negotiated, &err);
        ASSERT_TRUE(a) << err;
        EXPECT_TRUE(a->crc);
        auto b = decode(without.data(), without.size(), negotiated, &err);
        ASSERT_TRUE(b) << err;
        EXPECT_FALSE(b->crc);
    }
}

bytes header_bytes(const header& h) {
    bytes b(kSegmentHeaderSize);
    encode_header(h, b.data());
    return b;
}

TEST(ViTcp, BitPositions) {
    header h;
    h.eom = false;
    EXPECT_EQ(header_bytes(h)[1], 0x00);
    h.eom = true;
    EXPECT_EQ(header_bytes(h)[1], 0x80);  // Eom: bit 7
    h = {};
    h.eom = false;
    h.immediate_valid = true;
    EXPECT_EQ(header_bytes(h)[1], 0x40);  // IdV: bit 6
    h.immediate_valid = false;
    h.transmit_error = true;
    EXPECT_EQ(header_bytes(h)[1], 0x20);  // TrE: bit 5
    h.transmit_error = false;
    for (std::uint8_t t = 0; t <= kMaxSegmentType; ++t) {
        h.type = static_cast<segment_type>(t);
        EXPECT_EQ(header_bytes(h)[1], t);  // Type: bits 4-0
        EXPECT_STRNE(to_string(h.type), "unknown");
    }
    h.type = static_cast<segment_type>(0xFF);
    EXPECT_EQ(header_bytes(h)[1], 0x1F);  // masked to 5 bits
    // Remote Error Code: IS (15-8) | reserved (7-3) | UTE (2) | VDE (1) | MPE (0)
    remote_error_code r;
    r.memory_protection_error = true;
    EXPECT_EQ(r.pack(), 0x0001);
    r = {};
    r.descriptor_error = true;
    EXPECT_EQ(r.pack(), 0x0002);
    r = {};
    r.transport_error = true;
    EXPECT_EQ(r.pack(), 0x0004);
    r = {};
    r.reserved = 0x1F;
    EXPECT_EQ(r.pack(), 0x00F8);
    r = {};
    r.is_error_code = 0xC3;
    EXPECT_EQ(r.pack(), 0xC300);
    for (std::uint32_t v = 0; v <= 0xFFFF; v += 0x0101)
        EXPECT_EQ(remote_error_code::unpack(static_cast<std::uint16_t>(v)).pack(), v);
    // Calling Attributes: bit 0 UR, 1 RD, 2 RR, 3 RDMA Write, 4 RDMA Read, 5 DFC, 6 P2P, 15-7 reserved
    attributes a;
    a.reliable_delivery = false;
    EXPECT_EQ(a.pack(), 0x0000);
    const std::pair<bool attributes::*, std::uint16_t> bits[] = {
        {&attributes::unreliable, 0x01},         {&attributes::reliable_delivery, 0x02},
        {&attributes::reliable_reception, 0x04}, {&attributes::rdma_write_enable, 0x08},
        {&attributes::rdma_read_enable, 0x10},   {&attributes::descriptor_flow_control, 0x20},
        {&attributes::peer_to_peer, 0x40}};
    for (const auto& [member, value] : bits) {
        attributes x;
        x.reliable_delivery = false;
        x.*member = true;
        EXPECT_EQ(x.pack(), value);
        EXPECT_TRUE(attributes::unpack(value).*member);
    }
    a.reserved = 0x1FF;
    EXPECT_EQ(a.pack(), 0xFF80);
    for (std::uint32_t v = 0; v <= 0xFFFF; v += 0x0111)
        EXPECT_EQ(attributes::unpack(static_cast<std::uint16_t>(v)).pack(), v);
}

TEST(ViTcp, RoundTripEveryTypeWithAndWithoutCrc) {
    std::mt19937_64 rng(21);
    for (int i = 0; i < 600; ++i) {
        const auto t = static_cast<segment_type>(i % 9);
        const bool crc = (i / 9) % 2 == 0;
        segment s = make(t, crc);
        header& h = s.header;
        h.eom = (rng() & 1) != 0;
        h.immediate_valid = (rng() & 1) != 0;
        h.transmit_error = (rng() & 1) != 0;
        h.data_offset = is_single_segment_message(t) ? 0 : static_cast<std::uint32_t>(rng());
        h.immediate_data = static_cast<std::uint32_t>(rng());
        h.message_number = static_cast<std::uint32_t>(rng());
        h.message_ack = static_cast<std::uint32_t>(rng());
        h.rx_descriptors_posted = static_cast<std::uint16_t>(rng());
        h.remote_error.is_error_code = static_cast<std::uint8_t>(rng());
        h.remote_error.transport_error = (rng() & 1) != 0;
        h.remote_error.descriptor_error = (rng() & 1) != 0;
        h.remote_error.memory_protection_error = (rng() & 1) != 0;
        if (s.rdma) *s.rdma = rdma_header{rng(), static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng())};
        if (s.ce) {
            ce_header& c = *s.ce;
            c.attributes = attributes::unpack(static_cast<std::uint16_t>(rng() & 0x78));
            c.attributes.reliable_reception = true;
            c.mtu = static_cast<std::uint32_t>(rng());
            c.rdma_read_window = static_cast<std::uint16_t>(rng());
            c.calling_discriminator = seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 64));
            c.called_discriminator = seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 64));
            if (rng() & 1) c.options.push_back({kOptionUrgentMarker, {}});
            c.options.push_back(
                {0x7777, seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 9))});  // unknown: kept
            c.end_of_options = crc || (rng() & 1) != 0;
        }
        if (has_payload(t)) s.payload = seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 300));
        const bytes wire = enc(s);
        ASSERT_FALSE(wire.empty());
        EXPECT_EQ(get_be16(wire.data() + 2), wire.size()) << "Segment Length includes the trailer";
        std::string err;
        error_code code = error_code::crc_mismatch;
        const auto d = decode(wire.data(), wire.size(), crc, &err, &code);
        ASSERT_TRUE(d) << to_string(t) << ": " << err;
        EXPECT_EQ(code, error_code::none);
        const header& g = d->header;
        EXPECT_EQ(g.type, t);
        EXPECT_EQ(g.eom, h.eom);
        EXPECT_EQ(g.immediate_valid, h.immediate_valid);
        EXPECT_EQ(g.transmit_error, h.transmit_error);
        EXPECT_EQ(g.segment_length, wire.size());
        EXPECT_EQ(g.data_offset, h.data_offset);
        EXPECT_EQ(g.immediate_data, h.immediate_data);
        EXPECT_EQ(g.message_number, h.message_number);
        EXPECT_EQ(g.message_ack, h.message_ack);
        EXPECT_EQ(g.rx_descriptors_posted, h.rx_descriptors_posted);
        EXPECT_EQ(g.remote_error.pack(), h.remote_error.pack());
        EXPECT_EQ(d->crc, crc);
        EXPECT_EQ(d->payload, s.payload);
        ASSERT_EQ(d->rdma.has_value(), s.rdma.has_value());
        if (s.rdma) {
            EXPECT_EQ(d->rdma->address, s.rdma->address);
            EXPECT_EQ(d->rdma->memory_handle, s.rdma->memory_handle);
            EXPECT_EQ(d->rdma->length, s.rdma->length);
        }
        ASSERT_EQ(d->ce.has_value(), s.ce.has_value());
        if (s.ce) {
            EXPECT_EQ(d->ce->attributes.pack(), s.ce->attributes.pack());
            EXPECT_EQ(d->ce->mtu, s.ce->mtu);
            EXPECT_EQ(d->ce->rdma_read_window, s.ce->rdma_read_window);
            EXPECT_EQ(d->ce->calling_discriminator, s.ce->calling_discriminator);
            EXPECT_EQ(d->ce->called_discriminator, s.ce->called_discriminator);
            EXPECT_EQ(d->ce->end_of_options, s.ce->end_of_options);
            ASSERT_EQ(d->ce->options.size(), s.ce->options.size());
            for (std::size_t k = 0; k < s.ce->options.size(); ++k) {
                EXPECT_EQ(d->ce->options[k].type, s.ce->options[k].type);
                EXPECT_EQ(d->ce->options[k].data, s.ce->options[k].data);
            }
        }
        EXPECT_EQ(enc(*d), wire) << "re-encoding gives the same bytes";
    }
}

error_code decode_error(const bytes& wire, bool crc, const decode_options& options = {}) {
    std::string err;
    error_code code = error_code::none;
    const auto v = parse(wire.data(), wire.size(), crc, &err, &code, options);
    EXPECT_EQ(v.has_value(), code == error_code::none);
    if (!v) {
        EXPECT_FALSE(err.empty());
    }
    return code;
}

// §3.6: the CRC covers the entire segment, all headers (CE header and options included) and
// payload; bytes of other segments are not covered.
TEST(ViTcp, CrcCoverageBitByBit) {
    segment send = make(segment_type::send, true);
    send.payload = seeds_test::text("covered payload");
    segment write = make(segment_type::rdma_write, true);
    write.payload = seeds_test::text("x");
    segment req = make(segment_type::connect_request, true);
    req.ce = sample_ce();
    for (const segment& s : {send, write, req}) {
        const bytes wire = enc(s);
        const std::size_t options_start = kSegmentHeaderSize + kCeFixedSize;
        for (std::size_t bit = 0; bit < wire.size() * 8; ++bit) {
            const std::size_t byte = bit / 8;
            const error_code e = decode_error(seeds_test::flipped(wire, bit), true);
            if (byte == 0) {
                EXPECT_EQ(e, error_code::bad_version);
            } else if (byte < 4 || (s.ce && byte >= options_start && byte < wire.size() - 4)) {
                EXPECT_NE(e, error_code::none) << "Type/Length/option bit " << bit;  // structure changes
            } else {
                EXPECT_EQ(e, error_code::crc_mismatch) << to_string(s.header.type) << " bit " << bit;
            }
        }
    }
    // Without a negotiated CRC there is no trailer and nothing but the structure is judged.
    segment plain = send;
    plain.crc = false;
    const bytes wire = enc(plain);
    EXPECT_EQ(decode_error(seeds_test::flipped(wire, 8 * 30), false), error_code::none);
    // The next segment's bytes are outside this segment's CRC.
    const bytes two = seeds_test::cat({enc(send), enc(send)});
    for (std::size_t byte = enc(send).size(); byte < two.size(); ++byte) {
        bytes t = two;
        t[byte] ^= 0x10;
        EXPECT_EQ(decode_error(t, true), error_code::none);
    }
}

TEST(ViTcp, OptionsListEndsAtEndOfOptionListOrSegmentEnd) {
    segment s = make(segment_type::connect_accept);
    s.ce->options = {{0x1234, hex("aabbcc")}, {kOptionUrgentMarker, {}}};
    s.ce->end_of_options = false;  // no CRC: the list may run to the end of the segment
    bytes wire = enc(s);
    EXPECT_EQ(wire.size(), 24u + 140 + 7 + 4);
    std::string err;
    auto d = decode(wire.data(), wire.size(), false, &err);
    ASSERT_TRUE(d) << err;
    EXPECT_FALSE(d->ce->end_of_options);
    EXPECT_EQ(d->ce->options.size(), 2u);
    EXPECT_EQ(d->ce->options[0].data, hex("aabbcc"));
    EXPECT_FALSE(d->ce->has_option(kOptionCrc));
    EXPECT_TRUE(d->ce->has_option(kOptionUrgentMarker));
    s.ce->options.clear();  // no options at all, with or without the End
    EXPECT_TRUE(decode(enc(s).data(), 164, false, &err)) << err;
    s.ce->end_of_options = true;
    EXPECT_EQ(enc(s).size(), 166u);
    EXPECT_TRUE(decode(enc(s).data(), 166, false, &err)) << err;
}

// With the CRC option the ConnectRequest/Accept has a trailer whatever the connection setting is.
TEST(ViTcp, CeTrailerFollowsTheCrcOption) {
    segment s = make(segment_type::connect_accept, true);
    const bytes wire = enc(s);
    EXPECT_EQ(wire.size(), 24u + 140 + 4 + 2 + 4);
    std::string err;
    auto d = decode(wire.data(), wire.size(), false, &err);
    ASSERT_TRUE(d) << err;
    EXPECT_TRUE(d->crc);
    segment n = make(segment_type::connect_accept, false);
    d = decode(enc(n).data(), enc(n).size(), true, &err);
    ASSERT_TRUE(d) << err;
    EXPECT_FALSE(d->crc);
}

TEST(ViTcp, EveryDecodeError) {
    segment base = make(segment_type::send, true);
    base.payload = hex("01020304");
    const bytes good = enc(base);
    ASSERT_EQ(decode_error(good, true), error_code::none);
    // truncated
    for (std::size_t n = 0; n < good.size(); ++n)
        EXPECT_EQ(decode_error(bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)), true),
                  error_code::truncated)
            << n;
    // bad_version
    bytes b = good;
    b[0] = 2;
    EXPECT_EQ(decode_error(b, true), error_code::bad_version);
    // bad_type: 9..31
    for (std::uint8_t t : {9, 17, 31}) {
        b = good;
        b[1] = static_cast<std::uint8_t>((b[1] & 0xE0) | t);
        EXPECT_EQ(decode_error(b, true), error_code::bad_type) << int{t};
    }
    // length_too_short
    b = good;
    put_be16(b.data() + 2, 23);
    EXPECT_EQ(decode_error(b, true), error_code::length_too_short);
    {
        segment n = make(segment_type::nop, true);
        bytes w = enc(n);  // 28 bytes
        put_be16(w.data() + 2, 26);
        EXPECT_EQ(decode_error(w, true), error_code::length_too_short);
        segment wr = make(segment_type::rdma_write);
        w = enc(wr);  // 40 bytes
        put_be16(w.data() + 2, 39);
        EXPECT_EQ(decode_error(w, false), error_code::length_too_short);
        segment ce = make(segment_type::connect_request);
        w = enc(ce);
        put_be16(w.data() + 2, 163);
        EXPECT_EQ(decode_error(w, false), error_code::length_too_short);
    }
    // length_mismatch: ConnectReject of neither 24 nor 28; bytes after the End of Option List
    {
        segment rj = make(segment_type::connect_no_match);
        bytes w = enc(rj);
        w.resize(32, 0);
        for (std::uint16_t len : {25, 27, 29, 32}) {
            put_be16(w.data() + 2, len);
            EXPECT_EQ(decode_error(w, false), error_code::length_mismatch) << len;
        }
        segment ce = make(segment_type::connect_request);
        w = enc(ce);  // 166: options = End only
        w.push_back(0xEE);
        put_be16(w.data() + 2, static_cast<std::uint16_t>(w.size()));
        EXPECT_EQ(decode_error(w, false), error_code::length_mismatch);
        segment cc = make(segment_type::connect_request, true);
        w = enc(cc);  // CRC option, End, trailer
        w.insert(w.end() - 4, 0xEE);
        put_be16(w.data() + 2, static_cast<std::uint16_t>(w.size()));
        reseal(w);
        EXPECT_EQ(decode_error(w, false), error_code::length_mismatch);
    }
    // unexpected_payload
    {
        segment n = make(segment_type::nop);
        bytes w = enc(n);
        w.insert(w.end(), {1, 2, 3});
        put_be16(w.data() + 2, static_cast<std::uint16_t>(w.size()));
        EXPECT_EQ(decode_error(w, false), error_code::unexpected_payload);
        segment rr = make(segment_type::read_request, true);
        w = enc(rr);
        w.insert(w.end() - 4, 0x55);
        put_be16(w.data() + 2, static_cast<std::uint16_t>(w.size()));
        reseal(w);
        EXPECT_EQ(decode_error(w, true), error_code::unexpected_payload);
    }
    // bad_option
    {
        auto with_option = [](const bytes& option) {
            segment ce = make(segment_type::connect_request);
            ce.ce->end_of_options = false;
            bytes w = enc(ce);
            w.insert(w.end(), option.begin(), option.end());
            put_be16(w.data() + 2, static_cast<std::uint16_t>(w.size()));
            return w;
        };
        EXPECT_EQ(decode_error(with_option(hex("1234 0004")), false), error_code::none);             // unknown, skipped
        EXPECT_EQ(decode_error(with_option(hex("1234 0002")), false), error_code::bad_option);       // Length < 4
        EXPECT_EQ(decode_error(with_option(hex("1234 0009 aabb")), false), error_code::bad_option);  // past the end
        EXPECT_EQ(decode_error(with_option(hex("12")), false), error_code::bad_option);              // 1 byte left
        EXPECT_EQ(decode_error(with_option(hex("1234 00")), false), error_code::bad_option);  // no room for Length
        EXPECT_EQ(decode_error(with_option(hex("0002 0005 00")), false),
                  error_code::bad_option);  // Urgent Marker Length 5
        EXPECT_EQ(decode_error(with_option(hex("0001 0008 00000000 0000")), false),
                  error_code::bad_option);  // CRC Length 8
    }
    // missing_end_of_options: the CRC option without an explicit End (§3.3)
    {
        for (std::uint32_t msg = 0;; ++msg) {
            segment ce = make(segment_type::connect_request);
            ce.header.message_number = msg;
            ce.ce->options = {{0x0009, {}}};  // the encoder refuses this segment: build it by hand
            ce.ce->end_of_options = false;
            bytes w = enc(ce);
            put_be16(w.data() + 164, kOptionCrc);  // the option becomes the CRC option ...
            w.resize(w.size() + 4);                // ... and a trailer follows
            put_be16(w.data() + 2, static_cast<std::uint16_t>(w.size()));
            reseal(w);
            if (get_be16(w.data() + w.size() - 4) == 0) continue;  // a CRC starting 00 00 would read as End
            EXPECT_EQ(decode_error(w, false), error_code::missing_end_of_options);
            break;
        }
        segment ce = make(segment_type::connect_request, true);
        ce.ce->end_of_options = false;
        bytes out;
        std::string err;
        EXPECT_FALSE(encode(ce, out, &err));  // the encoder refuses to build it
    }
    // bad_discriminator_length
    {
        segment ce = make(segment_type::connect_accept, true);
        bytes w = enc(ce);
        put_be16(w.data() + 24 + 2, 65);
        reseal(w);
        EXPECT_EQ(decode_error(w, false), error_code::bad_discriminator_length);
        w = enc(ce);
        put_be16(w.data() + 24 + 74, 200);
        reseal(w);
        EXPECT_EQ(decode_error(w, false), error_code::bad_discriminator_length);
        w = enc(ce);
        put_be16(w.data() + 24 + 74, 64);
        reseal(w);
        EXPECT_EQ(decode_error(w, false), error_code::none);
    }
    // bad_attributes: exactly one reliability level
    {
        segment ce = make(segment_type::connect_request, true);
        for (std::uint16_t attrs : {0x0000, 0x0003, 0x0006, 0x0007}) {
            bytes w = enc(ce);
            put_be16(w.data() + 24, attrs);
            reseal(w);
            EXPECT_EQ(decode_error(w, false), error_code::bad_attributes) << attrs;
        }
    }
    // reserved_bits: Remote Error Code bits 7-3, Calling Attributes bits 15-7
    {
        b = good;
        b[23] |= 0x08;
        reseal(b);
        EXPECT_EQ(decode_error(b, true), error_code::reserved_bits);
        decode_options o;
        o.ignore_reserved_bits = true;
        EXPECT_EQ(decode_error(b, true, o), error_code::none);
        segment ce = make(segment_type::connect_request, true);
        bytes w = enc(ce);
        w[24] |= 0x80;  // bit 15
        reseal(w);
        EXPECT_EQ(decode_error(w, false), error_code::reserved_bits);
        EXPECT_EQ(decode_error(w, false, o), error_code::none);
        w = enc(ce);
        w[25] |= 0x80;  // bit 7
        reseal(w);
        EXPECT_EQ(decode_error(w, false), error_code::reserved_bits);
    }
    // bad_data_offset: single-segment messages start at offset 0; NOP is not a message
    for (segment_type t :
         {segment_type::read_request, segment_type::connect_request, segment_type::connect_accept,
          segment_type::connect_reject, segment_type::connect_no_match, segment_type::nop, segment_type::send}) {
        segment s = make(t, true);
        s.header.data_offset = 0x100;
        const bytes w = enc(s);
        EXPECT_EQ(decode_error(w, true), is_single_segment_message(t) ? error_code::bad_data_offset : error_code::none)
            << to_string(t);
    }
    // crc_mismatch, and check_crc = false
    b = seeds_test::flipped(good, 8 * 25);
    EXPECT_EQ(decode_error(b, true), error_code::crc_mismatch);
    decode_options no_crc;
    no_crc.check_crc = false;
    EXPECT_EQ(decode_error(b, true, no_crc), error_code::none);
    for (int e = 0; e <= static_cast<int>(error_code::crc_mismatch); ++e)
        EXPECT_STRNE(to_string(static_cast<error_code>(e)), "unknown");
}

// Framing never depends on the CRC setting (Segment Length includes the trailer), but a receiver
// that is wrong about it sees the trailer as payload, or payload as trailer.
TEST(ViTcp, WrongCrcSettingConsequences) {
    segment s = make(segment_type::send, true);
    s.payload = hex("0102");
    const bytes with = enc(s);
    std::string err;
    auto d = decode(with.data(), with.size(), false, &err);
    ASSERT_TRUE(d) << err;
    EXPECT_EQ(d->payload.size(), 6u);  // payload + trailer
    segment nop = make(segment_type::nop, true);
    EXPECT_EQ(decode_error(enc(nop), false), error_code::unexpected_payload);
    s.crc = false;
    s.payload = hex("0102030405");
    EXPECT_EQ(decode_error(enc(s), true), error_code::crc_mismatch);
}

TEST(ViTcp, EncodeRefusals) {
    bytes out = {7};
    std::string err;
    segment s = make(segment_type::send);
    s.rdma = rdma_header{};
    EXPECT_FALSE(encode(s, out, &err));
    s = make(segment_type::rdma_write);
    s.rdma.reset();
    EXPECT_FALSE(encode(s, out, &err));
    s = make(segment_type::nop);
    s.payload = {1};
    EXPECT_FALSE(encode(s, out, &err));
    s = make(segment_type::connect_request);
    s.ce.reset();
    EXPECT_FALSE(encode(s, out, &err));
    s = make(segment_type::connect_request);
    s.ce->calling_discriminator.assign(65, 1);
    EXPECT_FALSE(encode(s, out, &err));
    s = make(segment_type::connect_request);
    s.ce->options.push_back({kOptionEnd, {}});
    EXPECT_FALSE(encode(s, out, &err));
    s = make(segment_type::connect_request);
    s.crc = true;  // without the CRC option
    EXPECT_FALSE(encode(s, out, &err));
    s = make(segment_type::send);
    s.header.type = static_cast<segment_type>(9);
    EXPECT_FALSE(encode(s, out, &err));
    s = make(segment_type::send, true);
    s.payload.assign(65535 - 28 + 1, 0);
    EXPECT_FALSE(encode(s, out, &err));
    s.payload.pop_back();
    EXPECT_TRUE(encode(s, out, &err)) << err;
    EXPECT_EQ(out.size(), 1u + 65535);
    EXPECT_EQ(out[0], 7);
    EXPECT_TRUE(encode(make(segment_type::connect_request, true)).size() > 0);
}

TEST(ViTcp, Sizes) {
    EXPECT_EQ(kCeFixedSize, 140u);
    EXPECT_EQ(fixed_headers_size(segment_type::send), 24u);
    EXPECT_EQ(fixed_headers_size(segment_type::rdma_write), 40u);
    EXPECT_EQ(fixed_headers_size(segment_type::read_request), 40u);
    EXPECT_EQ(fixed_headers_size(segment_type::read_response), 24u);
    EXPECT_EQ(max_payload(1460, segment_type::send, false), 1436u);
    EXPECT_EQ(max_payload(1460, segment_type::send, true), 1432u);
    EXPECT_EQ(max_payload(1460, segment_type::rdma_write, true), 1416u);
    EXPECT_EQ(max_payload(1460, segment_type::nop, true), 0u);
    EXPECT_EQ(max_payload(100000, segment_type::send, false), 65535u - 24);
    EXPECT_EQ(max_payload(20, segment_type::send, false), 0u);
    EXPECT_EQ(overhead(segment_type::rdma_write, true), 44u);
    EXPECT_EQ(sample_ce().size(), 140u + 10);
}

// ---------------------------------------------------------------------------------------------
// Connection establishment

TEST(ViTcpNegotiation, MtuReadWindowAndCrc) {
    local_parameters active;
    active.attributes.reliable_reception = true;
    active.attributes.reliable_delivery = false;
    active.mtu = 9000;
    active.rdma_read_window = 8;
    active.crc = true;
    local_parameters passive = active;
    passive.mtu = 1500;
    passive.rdma_read_window = 16;
    passive.urgent_marker = true;
    const ce_header req = make_request(active, seeds_test::text("me"), seeds_test::text("svc"));
    EXPECT_TRUE(req.has_option(kOptionCrc));
    EXPECT_TRUE(req.end_of_options);
    const ce_header acc = make_accept(req, passive);
    EXPECT_EQ(acc.mtu, 1500u);            // the lesser (§3.3)
    EXPECT_EQ(acc.rdma_read_window, 8u);  // the lesser (choice)
    std::string err;
    auto g = negotiate(req, acc, &err);
    ASSERT_TRUE(g) << err;
    EXPECT_EQ(g->mtu, 1500u);
    EXPECT_EQ(g->rdma_read_window, 8u);
    EXPECT_TRUE(g->crc);
    EXPECT_FALSE(g->request_urgent_marker);
    EXPECT_TRUE(g->accept_urgent_marker);
    // Only one end wants the CRC: no CRC.
    passive.crc = false;
    g = negotiate(req, make_accept(req, passive), &err);
    ASSERT_TRUE(g);
    EXPECT_FALSE(g->crc);
    active.crc = false;
    passive.crc = true;
    const ce_header req2 = make_request(active, {}, {});
    const ce_header acc2 = make_accept(req2, passive);
    EXPECT_FALSE(acc2.has_option(kOptionCrc));  // "only if the associated ConnectRequest contained" it
    // Refusals
    ce_header bad = acc2;
    bad.options.push_back({kOptionCrc, {}});
    EXPECT_FALSE(negotiate(req2, bad, &err));
    bad = acc;
    bad.mtu = 9001;
    EXPECT_FALSE(negotiate(req, bad, &err));
    bad = acc;
    bad.rdma_read_window = 9;
    EXPECT_FALSE(negotiate(req, bad, &err));
    bad = acc;
    bad.attributes.reliable_reception = false;
    bad.attributes.reliable_delivery = true;
    EXPECT_FALSE(negotiate(req, bad, &err));
    bad = acc;
    bad.attributes.peer_to_peer = true;
    EXPECT_FALSE(negotiate(req, bad, &err));
    bad = acc;
    bad.attributes.rdma_read_enable = true;  // need not match
    bad.attributes.descriptor_flow_control = true;
    EXPECT_TRUE(negotiate(req, bad, &err));
}

// ---------------------------------------------------------------------------------------------
// Deframer

TEST(ViTcpDeframer, ConnectAcceptThenCrcSegmentsInRandomChunks) {
    std::mt19937_64 rng(31);
    local_parameters local;
    local.mtu = 4000;
    local.rdma_read_window = 4;
    local.crc = true;
    const ce_header request = make_request(local, seeds_test::text("a"), seeds_test::text("b"));
    for (int round = 0; round < 20; ++round) {
        bytes stream;
        segment accept = make(segment_type::connect_accept, true);
        accept.ce = make_accept(request, local);
        const bytes a = enc(accept);
        stream.insert(stream.end(), a.begin(), a.end());
        std::vector<segment> sent;
        for (int i = 0; i < 40; ++i) {
            const auto t = static_cast<segment_type>(rng() % 5);  // Send .. NOP
            segment s = make(t, true);
            s.header.message_number = static_cast<std::uint32_t>(i);
            if (has_payload(t)) s.payload = seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 1200));
            const bytes w = enc(s);
            stream.insert(stream.end(), w.begin(), w.end());
            sent.push_back(s);
        }
        std::vector<segment_view> views;
        std::vector<bytes> payloads;
        deframer* self = nullptr;
        deframer d({}, [&](const segment_view& v) {
            views.push_back(v);
            payloads.emplace_back(v.payload, v.payload + v.payload_len);
            if (v.header.type == segment_type::connect_accept) {
                std::string err;
                const auto g = negotiate(request, *v.ce, &err);
                ASSERT_TRUE(g) << err;
                self->set_crc_negotiated(g->crc);
            }
        });
        self = &d;
        seeds_test::feed_in_chunks(stream, rng, round % 2 ? 30 : 3000, [&](const std::uint8_t* p, std::size_t n) {
            ASSERT_EQ(d.feed(p, n), error_code::none) << d.error_detail();
        });
        EXPECT_TRUE(d.at_segment_boundary());
        EXPECT_EQ(d.bytes_consumed(), stream.size());
        ASSERT_EQ(views.size(), sent.size() + 1);
        for (std::size_t i = 0; i < sent.size(); ++i) {
            EXPECT_EQ(views[i + 1].header.type, sent[i].header.type);
            EXPECT_TRUE(views[i + 1].crc_present);
            EXPECT_EQ(payloads[i + 1], sent[i].payload);
        }
    }
}

TEST(ViTcpDeframer, ErrorsAreFatal) {
    segment s = make(segment_type::send, true);
    s.payload = hex("0102");
    const bytes a = enc(s);
    bytes b = a;
    b[25] ^= 1;  // payload bit: CRC mismatch
    const bytes stream = seeds_test::cat({a, b, a});
    for (std::size_t chunk : {std::size_t{1}, std::size_t{6}, stream.size()}) {
        deframer::config cfg;
        cfg.crc_negotiated = true;
        int delivered = 0;
        deframer d(cfg, [&](const segment_view&) { ++delivered; });
        error_code e = error_code::none;
        for (std::size_t pos = 0; pos < stream.size(); pos += chunk)
            e = d.feed(stream.data() + pos, std::min(chunk, stream.size() - pos));
        EXPECT_EQ(e, error_code::crc_mismatch);
        EXPECT_EQ(delivered, 1);
        EXPECT_NE(d.error_detail().find("stream byte " + std::to_string(a.size())), std::string::npos)
            << d.error_detail();
    }
    // The first word is judged before the rest of the segment arrives.
    for (const bytes& first : {hex("02 00 0020"), hex("01 0a 0020"), hex("01 00 0010")}) {
        deframer d({}, {});
        EXPECT_EQ(d.feed(first.data(), 3), error_code::none);
        const error_code e = d.feed(first.data() + 3, 1);
        EXPECT_NE(e, error_code::none);
        EXPECT_EQ(d.bytes_consumed(), 4u);
    }
    deframer d({}, {});
    const bytes zero_len = hex("01 00 0000");
    EXPECT_EQ(d.feed(zero_len.data(), 4), error_code::length_too_short);  // never loops on length 0
}

}  // namespace
}  // namespace rnic::proto::vitcp
