// Typed parse errors (proto/parse_error.h): for every wire parser of the protocol library, one
// input per ParseError kind it can produce, checking the code; success sets ParseError::none
// (overwriting whatever the caller left in it), and the message string is still filled.
#include "proto/parse_error.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"
#include "proto/net.h"
#include "proto/pcap.h"

namespace rnic::proto {
namespace {

using bytes = std::vector<std::uint8_t>;

// ---------------------------------------------------------------- to_string

TEST(ParseErrorEnum, ToStringNamesEveryValue) {
    const parse_error all[] = {
        parse_error::none,          parse_error::short_input, parse_error::bad_magic,    parse_error::bad_version,
        parse_error::reserved_bits, parse_error::bad_length,  parse_error::inconsistent, parse_error::bad_checksum,
        parse_error::unsupported,   parse_error::io};
    for (std::size_t i = 0; i < std::size(all); ++i) {
        for (std::size_t j = 0; j < i; ++j) EXPECT_STRNE(to_string(all[i]), to_string(all[j]));
    }
    EXPECT_STREQ(to_string(parse_error::none), "none");
    EXPECT_STREQ(to_string(parse_error::short_input), "short input");
}

// ---------------------------------------------------------------- mpa::decode

mpa::request_reply request(std::uint8_t revision = 1) {
    mpa::request_reply f;
    f.request = true;
    f.revision = revision;
    f.crc = true;
    return f;
}

// Runs both decode overloads (the options one with default options) and checks they agree.
parse_error mpa_code(const bytes& wire, std::size_t len, const mpa::decode_options* options = nullptr) {
    parse_error code = parse_error::io;  // a stale value that every outcome must overwrite
    std::string error;
    const auto f =
        options ? mpa::decode(wire.data(), len, &error, *options, &code) : mpa::decode(wire.data(), len, &error, &code);
    EXPECT_EQ(f.has_value(), code == parse_error::none);
    EXPECT_EQ(error.empty(), code == parse_error::none) << error;
    if (options == nullptr) {
        parse_error code2 = parse_error::io;
        mpa::decode(wire.data(), len, nullptr, mpa::decode_options{}, &code2);
        EXPECT_EQ(code2, code);
    }
    return code;
}
parse_error mpa_code(const bytes& wire) {
    return mpa_code(wire, wire.size());
}

TEST(ParseErrorMpa, SuccessSetsNone) {
    EXPECT_EQ(mpa_code(mpa::encode(request())), parse_error::none);
    auto rep = request(2);
    rep.request = false;
    rep.enhanced = true;
    rep.private_data = {1, 2, 3};
    EXPECT_EQ(mpa_code(mpa::encode(rep)), parse_error::none);
}

TEST(ParseErrorMpa, ShortInput) {
    const bytes wire = mpa::encode(request());
    EXPECT_EQ(mpa_code(wire, 19), parse_error::short_input);
    EXPECT_EQ(mpa_code(wire, 0), parse_error::short_input);
    auto f = request();
    f.private_data.assign(10, 0xAB);
    const bytes with_pd = mpa::encode(f);
    EXPECT_EQ(mpa_code(with_pd, with_pd.size() - 1), parse_error::short_input);  // Private Data cut short
}

TEST(ParseErrorMpa, BadMagic) {
    bytes wire = mpa::encode(request());
    wire[0] ^= 0x20;
    EXPECT_EQ(mpa_code(wire), parse_error::bad_magic);
}

TEST(ParseErrorMpa, BadLength) {
    bytes wire = mpa::encode(request());
    wire.resize(20 + 513, 0);
    put_be16(wire.data() + 18, 513);  // PD_Length above 512
    EXPECT_EQ(mpa_code(wire), parse_error::bad_length);
    // S set, Rev 2, but PD_Length 2 leaves no room for the IRD/ORD word.
    auto f = request(2);
    f.enhanced = true;
    bytes enh = mpa::encode(f);
    ASSERT_EQ(enh.size(), 24u);
    put_be16(enh.data() + 18, 2);
    EXPECT_EQ(mpa_code(enh, 22), parse_error::bad_length);
}

TEST(ParseErrorMpa, ReservedBits) {
    auto f = request();
    f.reserved_bits = 0x08;  // what Linux siw sets
    const bytes res = mpa::encode(f);
    EXPECT_EQ(mpa_code(res), parse_error::reserved_bits);
    mpa::decode_options lenient;
    lenient.ignore_reserved_bits = true;
    EXPECT_EQ(mpa_code(res, res.size(), &lenient), parse_error::none);

    f = request();
    f.reject = true;  // R is reserved in a Request
    const bytes rej = mpa::encode(f);
    EXPECT_EQ(mpa_code(rej), parse_error::reserved_bits);
    EXPECT_EQ(mpa_code(rej, rej.size(), &lenient), parse_error::none);
}

TEST(ParseErrorMpa, BadVersion) {
    EXPECT_EQ(mpa_code(mpa::encode(request(3))), parse_error::bad_version);
    EXPECT_EQ(mpa_code(mpa::encode(request(0))), parse_error::bad_version);
}

TEST(ParseErrorMpa, Inconsistent) {
    auto f = request(1);
    f.enhanced = true;  // S needs Rev 2
    EXPECT_EQ(mpa_code(mpa::encode(f)), parse_error::inconsistent);
}

TEST(ParseErrorMpa, MessageStillGivenAndNullCodeAccepted) {
    bytes wire = mpa::encode(request());
    wire[0] ^= 0x20;
    std::string error;
    EXPECT_FALSE(mpa::decode(wire.data(), wire.size(), &error));
    EXPECT_NE(error.find("Key"), std::string::npos) << error;
    std::string error2;
    parse_error code = parse_error::none;
    EXPECT_FALSE(mpa::decode(wire.data(), wire.size(), &error2, &code));
    EXPECT_EQ(error2, error);
    EXPECT_EQ(code, parse_error::bad_magic);
    EXPECT_FALSE(mpa::decode(wire.data(), wire.size(), nullptr, mpa::decode_options{}, nullptr));
}

// ---------------------------------------------------------------- ddp decoders

template <typename Decode>
parse_error ddp_code(Decode decode, const bytes& input, std::size_t len) {
    parse_error code = parse_error::io;
    std::string error;
    const bool ok = decode(input.data(), len, &error, &code).has_value();
    EXPECT_EQ(ok, code == parse_error::none);
    EXPECT_EQ(error.empty(), ok) << error;
    return code;
}

#define DDP_DECODER(fn) \
    [](const std::uint8_t* d, std::size_t l, std::string* e, parse_error* c) { return fn(d, l, e, c); }

TEST(ParseErrorDdp, HeaderShortInputAndNone) {
    const auto dec = DDP_DECODER(ddp::decode_header);
    bytes tagged(ddp::kTaggedHeaderSize, 0);
    tagged[0] = 0xC1;  // T, L, DV 1
    bytes untagged(ddp::kUntaggedHeaderSize, 0);
    untagged[0] = 0x41;
    EXPECT_EQ(ddp_code(dec, tagged, 0), parse_error::short_input);
    EXPECT_EQ(ddp_code(dec, tagged, ddp::kTaggedHeaderSize - 1), parse_error::short_input);
    EXPECT_EQ(ddp_code(dec, untagged, ddp::kUntaggedHeaderSize - 1), parse_error::short_input);
    EXPECT_EQ(ddp_code(dec, tagged, ddp::kTaggedHeaderSize), parse_error::none);
    EXPECT_EQ(ddp_code(dec, untagged, ddp::kUntaggedHeaderSize), parse_error::none);
    // Reserved bits are not checked on receive (RFC 5041 §4.1): still none.
    untagged[0] = 0x7D;
    EXPECT_EQ(ddp_code(dec, untagged, ddp::kUntaggedHeaderSize), parse_error::none);
}

TEST(ParseErrorDdp, FixedSizeHeadersShortInputAndNone) {
    struct test_case {
        const char* name;
        std::function<bool(const std::uint8_t*, std::size_t, std::string*, parse_error*)> decode;
        std::size_t size;
    };
    const test_case cases[] = {
        {"read_request",
         [](auto d, auto l, auto e, auto c) { return ddp::decode_read_request(d, l, e, c).has_value(); },
         ddp::kReadRequestSize},
        {"atomic_request",
         [](auto d, auto l, auto e, auto c) { return ddp::decode_atomic_request(d, l, e, c).has_value(); },
         ddp::kAtomicRequestSize},
        {"atomic_response",
         [](auto d, auto l, auto e, auto c) { return ddp::decode_atomic_response(d, l, e, c).has_value(); },
         ddp::kAtomicResponseSize},
        {"immediate", [](auto d, auto l, auto e, auto c) { return ddp::decode_immediate(d, l, e, c).has_value(); },
         ddp::kImmediateDataSize},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        const bytes input(c.size, 0x5A);
        for (std::size_t len : {std::size_t{0}, c.size - 1}) {
            parse_error code = parse_error::none;
            std::string error;
            EXPECT_FALSE(c.decode(input.data(), len, &error, &code));
            EXPECT_EQ(code, parse_error::short_input);
            EXPECT_FALSE(error.empty());
        }
        parse_error code = parse_error::io;
        EXPECT_TRUE(c.decode(input.data(), c.size, nullptr, &code));
        EXPECT_EQ(code, parse_error::none);
    }
}

TEST(ParseErrorDdp, TerminateShortInputAndNone) {
    const auto dec = DDP_DECODER(ddp::decode_terminate);
    ddp::terminate t;
    t.layer = ddp::term_layer::ddp;
    t.d = true;
    t.r = true;
    t.ddp_segment_length = 100;
    t.ddp_header.assign(ddp::kTaggedHeaderSize, 0);
    t.ddp_header[0] = 0xC1;  // tagged: 14 bytes
    t.rdma_header.assign(ddp::kReadRequestSize, 0x33);
    const bytes full = ddp::encode(t);
    ASSERT_EQ(full.size(), 4u + 2 + 14 + 28);
    EXPECT_EQ(ddp_code(dec, full, full.size()), parse_error::none);
    EXPECT_EQ(ddp_code(dec, full, 3), parse_error::short_input);                // control word
    EXPECT_EQ(ddp_code(dec, full, 6), parse_error::short_input);                // D: no DDP control byte
    EXPECT_EQ(ddp_code(dec, full, 4 + 2 + 13), parse_error::short_input);       // D: terminated header cut
    EXPECT_EQ(ddp_code(dec, full, full.size() - 1), parse_error::short_input);  // R: RDMA header cut
    ddp::terminate plain;
    const bytes control = ddp::encode(plain);
    EXPECT_EQ(ddp_code(dec, control, control.size()), parse_error::none);
}

// ---------------------------------------------------------------- net::parse_tcp_frame

constexpr std::size_t kIp = net::kEthernetHeaderSize;     // 14
constexpr std::size_t kTcp = kIp + net::kIpv4HeaderSize;  // 34

bytes tcp_frame(std::size_t payload_len = 8) {
    net::endpoints ep;
    ep.src_mac = {0x02, 0, 0, 0, 0, 0x01};
    ep.dst_mac = {0x02, 0, 0, 0, 0, 0x02};
    ep.src_ip = 0x0a000001;
    ep.dst_ip = 0x0a000002;
    net::tcp_header tcp;
    tcp.src_port = 40000;
    tcp.dst_port = 5201;
    tcp.seq = 1000;
    tcp.flags = net::tcp_flags::kAck;
    tcp.window = 1000;
    const bytes payload(payload_len, 0x42);
    bytes frame;
    net::build_tcp_frame(ep, net::ipv4_header{}, tcp, payload.data(), payload.size(), frame);
    return frame;
}

void fix_ip_checksum(bytes& f) {
    put_be16(f.data() + kIp + 10, 0);
    put_be16(f.data() + kIp + 10, net::internet_checksum(f.data() + kIp, net::kIpv4HeaderSize));
}

void fix_tcp_checksum(bytes& f) {
    const std::size_t tcp_len = get_be16(f.data() + kIp + 2) - net::kIpv4HeaderSize;
    const std::uint32_t src = get_be32(f.data() + kIp + 12);
    const std::uint32_t dst = get_be32(f.data() + kIp + 16);
    const std::uint32_t pseudo = (src >> 16) + (src & 0xFFFFu) + (dst >> 16) + (dst & 0xFFFFu) +
                                 std::uint32_t{f[kIp + 9]} + static_cast<std::uint32_t>(tcp_len);
    put_be16(f.data() + kTcp + 16, 0);
    const std::uint32_t sum = net::checksum_partial(f.data() + kTcp, tcp_len, pseudo);
    put_be16(f.data() + kTcp + 16, static_cast<std::uint16_t>(~sum & 0xFFFFu));
}

parse_error net_code(const bytes& f, std::size_t len) {
    parse_error code = parse_error::io;
    std::string error;
    const bool ok = net::parse_tcp_frame(f.data(), len, &error, &code).has_value();
    EXPECT_EQ(ok, code == parse_error::none);
    EXPECT_EQ(error.empty(), ok) << error;
    return code;
}
parse_error net_code(const bytes& f) {
    return net_code(f, f.size());
}

TEST(ParseErrorNet, SuccessSetsNone) {
    bytes f = tcp_frame();
    EXPECT_EQ(net_code(f), parse_error::none);
    // The helpers produce valid checksums (needed by the cases below).
    fix_ip_checksum(f);
    fix_tcp_checksum(f);
    EXPECT_EQ(net_code(f), parse_error::none);
}

TEST(ParseErrorNet, ShortInput) {
    const bytes f = tcp_frame();
    EXPECT_EQ(net_code(f, 0), parse_error::short_input);
    EXPECT_EQ(net_code(f, net::kEthernetHeaderSize - 1), parse_error::short_input);
    EXPECT_EQ(net_code(f, kTcp - 1), parse_error::short_input);      // inside the IPv4 header
    EXPECT_EQ(net_code(f, f.size() - 1), parse_error::short_input);  // before the IPv4 total length
    // IHL of 6 words on a frame that ends right after 20 bytes of IPv4 header.
    bytes g = tcp_frame(0);
    g[kIp] = 0x46;
    EXPECT_EQ(net_code(g, kTcp), parse_error::short_input);
}

TEST(ParseErrorNet, Unsupported) {
    bytes arp = tcp_frame();
    put_be16(arp.data() + 12, net::kEtherTypeArp);
    EXPECT_EQ(net_code(arp), parse_error::unsupported);
    bytes frag = tcp_frame();
    put_be16(frag.data() + kIp + 6, 0x2000);  // MF
    fix_ip_checksum(frag);
    EXPECT_EQ(net_code(frag), parse_error::unsupported);
    bytes udp = tcp_frame();
    udp[kIp + 9] = 17;
    fix_ip_checksum(udp);
    EXPECT_EQ(net_code(udp), parse_error::unsupported);
}

TEST(ParseErrorNet, BadVersion) {
    bytes f = tcp_frame();
    f[kIp] = 0x65;  // version 6, IHL 5
    EXPECT_EQ(net_code(f), parse_error::bad_version);
}

TEST(ParseErrorNet, BadLength) {
    bytes ihl = tcp_frame();
    ihl[kIp] = 0x44;  // IHL 16 bytes
    EXPECT_EQ(net_code(ihl), parse_error::bad_length);

    bytes seg = tcp_frame();
    put_be16(seg.data() + kIp + 2, static_cast<std::uint16_t>(net::kIpv4HeaderSize + 10));  // 10-byte segment
    fix_ip_checksum(seg);
    EXPECT_EQ(net_code(seg), parse_error::bad_length);

    bytes doff = tcp_frame();
    doff[kTcp + 12] = 0x40;  // data offset 16 bytes
    EXPECT_EQ(net_code(doff), parse_error::bad_length);

    // The 4 payload bytes become an MSS option of length 3 (data offset 6 words).
    bytes opt = tcp_frame(4);
    opt[kTcp + 12] = 0x60;
    opt[kTcp + 20] = 2;
    opt[kTcp + 21] = 3;
    fix_tcp_checksum(opt);
    EXPECT_EQ(net_code(opt), parse_error::bad_length);
    // ... and an option whose length runs past the option area.
    opt[kTcp + 20] = 30;
    opt[kTcp + 21] = 8;
    fix_tcp_checksum(opt);
    EXPECT_EQ(net_code(opt), parse_error::bad_length);
    // A well-formed option (MSS, length 4) there parses.
    opt[kTcp + 20] = 2;
    opt[kTcp + 21] = 4;
    fix_tcp_checksum(opt);
    EXPECT_EQ(net_code(opt), parse_error::none);
}

TEST(ParseErrorNet, Inconsistent) {
    bytes tl = tcp_frame();
    put_be16(tl.data() + kIp + 2, 10);  // total length below the 20-byte header
    fix_ip_checksum(tl);
    EXPECT_EQ(net_code(tl), parse_error::inconsistent);

    bytes doff = tcp_frame(0);
    doff[kTcp + 12] = 0xF0;  // data offset 60 bytes, segment has 20
    EXPECT_EQ(net_code(doff), parse_error::inconsistent);
}

TEST(ParseErrorNet, BadChecksum) {
    bytes ip = tcp_frame();
    ip[kIp + 10] ^= 0x01;
    EXPECT_EQ(net_code(ip), parse_error::bad_checksum);
    bytes tcp = tcp_frame();
    tcp.back() ^= 0x01;
    EXPECT_EQ(net_code(tcp), parse_error::bad_checksum);
}

// ---------------------------------------------------------------- read_pcap

class ParseErrorPcap : public ::testing::Test {
protected:
    std::string path(const std::string& name) {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string p =
            ::testing::TempDir() + "rnic_perr_" + info->name() + "_" + std::to_string(::getpid()) + "_" + name;
        paths_.push_back(p);
        return p;
    }
    std::string write(const std::string& name, const bytes& content) {
        const std::string p = path(name);
        std::ofstream f(p, std::ios::binary);
        f.write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(content.size()));
        return p;
    }
    static bytes header(std::uint32_t magic = kPcapMagicNanoseconds) {
        bytes h(24, 0);
        put_le32(h.data(), magic);
        put_le16(h.data() + 4, 2);
        put_le16(h.data() + 6, 4);
        put_le32(h.data() + 16, kPcapSnaplen);
        put_le32(h.data() + 20, kPcapLinktypeEthernet);
        return h;
    }
    static bytes with_record(std::uint32_t incl_len, std::size_t data_bytes) {
        bytes b = header();
        bytes rec(16, 0);
        put_le32(rec.data() + 8, incl_len);
        put_le32(rec.data() + 12, incl_len);
        b.insert(b.end(), rec.begin(), rec.end());
        b.insert(b.end(), data_bytes, 0x77);
        return b;
    }
    static parse_error code_of(const std::string& p) {
        parse_error code = parse_error::bad_checksum;  // stale value every outcome must overwrite
        std::string error;
        const bool ok = read_pcap(p, &error, &code).has_value();
        EXPECT_EQ(ok, code == parse_error::none);
        EXPECT_EQ(error.empty(), ok) << error;
        return code;
    }
    void TearDown() override {
        for (const auto& p : paths_) std::remove(p.c_str());
    }

private:
    std::vector<std::string> paths_;
};

TEST_F(ParseErrorPcap, SuccessSetsNone) {
    EXPECT_EQ(code_of(write("empty.pcap", header())), parse_error::none);
    EXPECT_EQ(code_of(write("one.pcap", with_record(60, 60))), parse_error::none);
    const std::string p = path("written.pcap");
    {
        pcap_writer w;
        ASSERT_TRUE(w.open(p, nullptr));
        const bytes frame = tcp_frame();
        w.write(123, frame.data(), frame.size());
    }
    EXPECT_EQ(code_of(p), parse_error::none);
}

TEST_F(ParseErrorPcap, Io) {
    EXPECT_EQ(code_of(path("does_not_exist.pcap")), parse_error::io);
    EXPECT_EQ(code_of(::testing::TempDir()), parse_error::io);  // a directory: open or read fails
}

TEST_F(ParseErrorPcap, ShortInput) {
    EXPECT_EQ(code_of(write("zero.pcap", {})), parse_error::short_input);
    bytes h = header();
    h.resize(23);
    EXPECT_EQ(code_of(write("hdr.pcap", h)), parse_error::short_input);
    bytes rec_hdr = header();
    rec_hdr.resize(24 + 15, 0);
    EXPECT_EQ(code_of(write("rechdr.pcap", rec_hdr)), parse_error::short_input);
    EXPECT_EQ(code_of(write("recdata.pcap", with_record(100, 99))), parse_error::short_input);
}

TEST_F(ParseErrorPcap, Unsupported) {
    EXPECT_EQ(code_of(write("ng.pcapng", header(0x0A0D0D0Au))), parse_error::unsupported);
}

TEST_F(ParseErrorPcap, BadMagic) {
    EXPECT_EQ(code_of(write("zeros.pcap", bytes(24, 0))), parse_error::bad_magic);
    EXPECT_EQ(code_of(write("swapped.pcap", header(0xD4C3B2A1u))), parse_error::none);  // big-endian is valid
}

TEST_F(ParseErrorPcap, BadLength) {
    EXPECT_EQ(code_of(write("huge.pcap", with_record(0xFFFFFFFFu, 0))), parse_error::bad_length);
}

}  // namespace
}  // namespace rnic::proto
