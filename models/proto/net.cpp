// Ethernet II / IPv4 (RFC 791) / TCP (RFC 9293) header encode and parse, Internet checksum
// (RFC 1071), TCP options MSS / window scale / timestamps (RFC 7323) / SACK (RFC 2018).
#include "proto/net.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "proto/bytes.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RNIC_NET_HAVE_AVX2 1
#include <immintrin.h>
#else
#define RNIC_NET_HAVE_AVX2 0
#endif

namespace rnic::proto::net {
namespace {

#if RNIC_NET_HAVE_AVX2
// The bulk of checksum_partial on CPUs with AVX2 (chosen at run time, like CRC32c's SSE4.2; the
// library is built without -mavx2): the same little-endian 32-bit words the portable loop sums,
// widened to 64-bit lanes and added 64 bytes per step. The total is the same integer as the
// portable loop's (no lane can overflow below 2^35 bytes), so every checksum is unchanged.
// Consumes whole 64-byte blocks, advancing `data` and `len`.
__attribute__((target("avx2"))) std::uint64_t dword_sum_avx2(const std::uint8_t*& data, std::size_t& len) {
    const __m256i zero = _mm256_setzero_si256();
    __m256i a = zero, b = zero, c = zero, d = zero;
    while (len >= 64) {
        const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data));
        const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + 32));
        a = _mm256_add_epi64(a, _mm256_unpacklo_epi32(v0, zero));
        b = _mm256_add_epi64(b, _mm256_unpackhi_epi32(v0, zero));
        c = _mm256_add_epi64(c, _mm256_unpacklo_epi32(v1, zero));
        d = _mm256_add_epi64(d, _mm256_unpackhi_epi32(v1, zero));
        data += 64;
        len -= 64;
    }
    const __m256i s = _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d));
    alignas(32) std::uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

bool cpu_has_avx2() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
}
const bool kHaveAvx2 = cpu_has_avx2();
// Below this many bytes (headers, small segments) the call and the final reduction cost more than
// the vector loop saves: the portable sum does them.
constexpr std::size_t kAvx2MinBytes = 256;
#endif

constexpr std::uint8_t kOptEnd = 0;
constexpr std::uint8_t kOptNop = 1;
constexpr std::uint8_t kOptMss = 2;
constexpr std::uint8_t kOptWindowScale = 3;
constexpr std::uint8_t kOptSackPermitted = 4;
constexpr std::uint8_t kOptSack = 5;
constexpr std::uint8_t kOptTimestamps = 8;
constexpr std::size_t kTimestampsSize = 10;  // kind, length, TSval, TSecr
constexpr std::size_t kMaxTcpOptions = 40;   // data offset is 4 bits: 60 - 20
constexpr std::size_t kSackBlockSize = 8;
constexpr std::size_t kMaxSackBlocks = 4;
constexpr std::uint16_t kIpFlagDontFragment = 0x4000;
constexpr std::uint16_t kIpFlagMoreFragments = 0x2000;
constexpr std::uint16_t kIpFragmentOffsetMask = 0x1FFF;

template <typename... Args>
std::string format(const char* fmt, Args... args) {
    char buf[200];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

std::uint32_t fold(std::uint64_t sum) {
    while ((sum >> 16) != 0) sum = (sum & 0xFFFFu) + (sum >> 16);
    return static_cast<std::uint32_t>(sum);
}

// The checksum field value that would make a region verify, given the folded sum of the
// region including the (wrong) `field` value: remove the field (one's complement subtraction
// is addition of its complement) and invert.
std::uint16_t checksum_without(std::uint32_t folded_sum, std::uint16_t field) {
    return static_cast<std::uint16_t>(~fold(std::uint64_t{folded_sum} + static_cast<std::uint16_t>(~field)));
}

// RFC 9293 §3.1: pseudo-header = source, destination, zero, protocol, TCP length.
std::uint32_t pseudo_header_sum(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol, std::size_t tcp_len) {
    const std::uint64_t sum = std::uint64_t{src >> 16} + (src & 0xFFFFu) + (dst >> 16) + (dst & 0xFFFFu) + protocol +
                              static_cast<std::uint16_t>(tcp_len);
    return fold(sum);
}

// Options are laid out so that each starts on a 4-byte boundary: MSS (4), NOP + window
// scale (4), 2 NOPs + SACK-permitted (4), 2 NOPs + timestamps (12), 2 NOPs + SACK (2 + 8n).
// The options before SACK take at most 24 bytes; of the SACK blocks only as many as fit the
// 40-byte option space are written, the first ones (the rest is dropped from the end).
std::size_t fixed_options_size(const tcp_header& h) {
    return (h.mss ? 4 : 0) + (h.window_scale ? 4 : 0) + (h.sack_permitted ? 4 : 0) +
           (h.timestamps ? 2 + kTimestampsSize : 0);
}

std::size_t sack_blocks_that_fit(const tcp_header& h) {
    if (h.sack_blocks.empty()) return 0;
    const std::size_t room = kMaxTcpOptions - fixed_options_size(h);
    const std::size_t fit = room >= 4 + kSackBlockSize ? (room - 4) / kSackBlockSize : 0;
    return std::min({h.sack_blocks.size(), fit, kMaxSackBlocks});
}

void encode_options(const tcp_header& h, std::uint8_t* o) {
    if (h.mss) {
        o[0] = kOptMss;
        o[1] = 4;
        put_be16(o + 2, *h.mss);
        o += 4;
    }
    if (h.window_scale) {
        o[0] = kOptNop;
        o[1] = kOptWindowScale;
        o[2] = 3;
        o[3] = *h.window_scale;
        o += 4;
    }
    if (h.sack_permitted) {
        o[0] = kOptNop;
        o[1] = kOptNop;
        o[2] = kOptSackPermitted;
        o[3] = 2;
        o += 4;
    }
    if (h.timestamps) {
        o[0] = kOptNop;
        o[1] = kOptNop;
        o[2] = kOptTimestamps;
        o[3] = static_cast<std::uint8_t>(kTimestampsSize);
        put_be32(o + 4, h.timestamps->first);
        put_be32(o + 8, h.timestamps->second);
        o += 2 + kTimestampsSize;
    }
    const std::size_t blocks = sack_blocks_that_fit(h);
    if (blocks != 0) {
        o[0] = kOptNop;
        o[1] = kOptNop;
        o[2] = kOptSack;
        o[3] = static_cast<std::uint8_t>(2 + blocks * kSackBlockSize);
        o += 4;
        for (std::size_t i = 0; i < blocks; ++i, o += kSackBlockSize) {
            put_be32(o, h.sack_blocks[i].left);
            put_be32(o + 4, h.sack_blocks[i].right);
        }
    }
}

bool option_error(std::string* error, parse_error* code, std::string text) {
    set_code(code, parse_error::bad_length);
    if (error != nullptr) *error = std::move(text);
    return false;
}

// Parses the TCP options area; `base` is its offset in the frame (for messages).
bool parse_options(const std::uint8_t* o, std::size_t len, std::size_t base, tcp_header& h, std::string* error,
                   parse_error* code) {
    std::size_t i = 0;
    while (i < len) {
        const std::uint8_t kind = o[i];
        if (kind == kOptEnd) break;
        if (kind == kOptNop) {
            ++i;
            continue;
        }
        if (i + 1 >= len || o[i + 1] < 2 || i + o[i + 1] > len) {
            return option_error(error, code,
                                format("TCP option kind %u at offset %zu has a bad or missing length",
                                       static_cast<unsigned>(kind), base + i));
        }
        const std::size_t opt_len = o[i + 1];
        const std::uint8_t* v = o + i + 2;
        const bool size_ok =
            (kind == kOptMss && opt_len == 4) || (kind == kOptWindowScale && opt_len == 3) ||
            (kind == kOptSackPermitted && opt_len == 2) ||
            (kind == kOptSack && opt_len >= 2 + kSackBlockSize && (opt_len - 2) % kSackBlockSize == 0) ||
            (kind == kOptTimestamps && opt_len == kTimestampsSize) || (kind > kOptSack && kind != kOptTimestamps);
        if (!size_ok) {
            return option_error(error, code,
                                format("TCP option kind %u at offset %zu has length %zu", static_cast<unsigned>(kind),
                                       base + i, opt_len));
        }
        if (kind == kOptMss) h.mss = get_be16(v);
        if (kind == kOptWindowScale) h.window_scale = v[0];
        if (kind == kOptSackPermitted) h.sack_permitted = true;
        if (kind == kOptSack) {
            for (std::size_t b = 0; b + kSackBlockSize <= opt_len - 2; b += kSackBlockSize)
                h.sack_blocks.push_back(sack_block{get_be32(v + b), get_be32(v + b + 4)});
        }
        if (kind == kOptTimestamps) h.timestamps = std::make_pair(get_be32(v), get_be32(v + 4));
        i += opt_len;  // unknown kinds are skipped by their length
    }
    return true;
}

bool fail_parse(std::string* error, parse_error* code, parse_error kind, std::string text) {
    set_code(code, kind);
    if (error != nullptr) *error = std::move(text);
    return false;
}

bool parse_ipv4_header(const std::uint8_t* frame, std::size_t len, parsed_tcp_frame& f, std::size_t& ihl,
                       std::string* error, parse_error* code) {
    const std::size_t at = kEthernetHeaderSize;
    const std::uint8_t* ip = frame + at;
    if (len < at + kIpv4HeaderSize)
        return fail_parse(error, code, parse_error::short_input,
                          format("frame of %zu bytes too short for an IPv4 header at offset %zu", len, at));
    if ((ip[0] >> 4) != 4)
        return fail_parse(
            error, code, parse_error::bad_version,
            format("IPv4 version field at offset %zu is %u, not 4", at, static_cast<unsigned>(ip[0] >> 4)));
    ihl = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
    if (ihl < kIpv4HeaderSize || at + ihl > len)
        return fail_parse(error, code, ihl < kIpv4HeaderSize ? parse_error::bad_length : parse_error::short_input,
                          format("IPv4 IHL at offset %zu gives a %zu-byte header (frame has %zu bytes)", at, ihl, len));
    const std::uint16_t sum = internet_checksum(ip, ihl);
    if (sum != 0) {
        const std::uint16_t field = get_be16(ip + 10);
        const std::uint16_t expected = checksum_without(static_cast<std::uint16_t>(~sum), field);
        return fail_parse(error, code, parse_error::bad_checksum,
                          format("IPv4 header checksum at offset %zu is 0x%04x, expected 0x%04x", at + 10,
                                 static_cast<unsigned>(field), static_cast<unsigned>(expected)));
    }
    f.ip.dscp_ecn = ip[1];
    f.ip.total_length = get_be16(ip + 2);
    f.ip.identification = get_be16(ip + 4);
    const std::uint16_t frag = get_be16(ip + 6);
    f.ip.dont_fragment = (frag & kIpFlagDontFragment) != 0;
    f.ip.ttl = ip[8];
    f.ip.protocol = ip[9];
    f.ip.src = get_be32(ip + 12);
    f.ip.dst = get_be32(ip + 16);
    if (f.ip.total_length < ihl || at + f.ip.total_length > len)
        return fail_parse(error, code, f.ip.total_length < ihl ? parse_error::inconsistent : parse_error::short_input,
                          format("IPv4 total length %u at offset %zu does not fit the %zu-byte frame",
                                 static_cast<unsigned>(f.ip.total_length), at + 2, len));
    if ((frag & (kIpFlagMoreFragments | kIpFragmentOffsetMask)) != 0)
        return fail_parse(error, code, parse_error::unsupported,
                          format("IPv4 fragment (flags/offset 0x%04x at offset %zu) is not supported",
                                 static_cast<unsigned>(frag), at + 6));
    if (f.ip.protocol != kIpProtocolTcp)
        return fail_parse(
            error, code, parse_error::unsupported,
            format("IPv4 protocol %u at offset %zu is not TCP", static_cast<unsigned>(f.ip.protocol), at + 9));
    return true;
}

bool parse_tcp_header(const std::uint8_t* frame, std::size_t ihl, parsed_tcp_frame& f, std::string* error,
                      parse_error* code) {
    const std::size_t at = kEthernetHeaderSize + ihl;
    const std::uint8_t* tcp = frame + at;
    const std::size_t tcp_len = f.ip.total_length - ihl;
    if (tcp_len < kTcpBaseHeaderSize)
        return fail_parse(error, code, parse_error::bad_length,
                          format("TCP segment at offset %zu is %zu bytes, shorter than a TCP header", at, tcp_len));
    const std::size_t data_offset = static_cast<std::size_t>(tcp[12] >> 4) * 4;
    if (data_offset < kTcpBaseHeaderSize || data_offset > tcp_len)
        return fail_parse(
            error, code, data_offset < kTcpBaseHeaderSize ? parse_error::bad_length : parse_error::inconsistent,
            format("TCP data offset at offset %zu gives %zu bytes (segment has %zu)", at + 12, data_offset, tcp_len));
    const std::uint32_t sum = fold(std::uint64_t{pseudo_header_sum(f.ip.src, f.ip.dst, f.ip.protocol, tcp_len)} +
                                   checksum_partial(tcp, tcp_len));
    if (sum != 0xFFFFu) {
        const std::uint16_t field = get_be16(tcp + 16);
        const std::uint16_t expected = checksum_without(sum, field);
        return fail_parse(error, code, parse_error::bad_checksum,
                          format("TCP checksum at offset %zu is 0x%04x, expected 0x%04x", at + 16,
                                 static_cast<unsigned>(field), static_cast<unsigned>(expected)));
    }
    f.tcp.src_port = get_be16(tcp);
    f.tcp.dst_port = get_be16(tcp + 2);
    f.tcp.seq = get_be32(tcp + 4);
    f.tcp.ack = get_be32(tcp + 8);
    f.tcp.flags = tcp[13];
    f.tcp.window = get_be16(tcp + 14);
    f.tcp.urgent_pointer = get_be16(tcp + 18);
    if (!parse_options(tcp + kTcpBaseHeaderSize, data_offset - kTcpBaseHeaderSize, at + kTcpBaseHeaderSize, f.tcp,
                       error, code))
        return false;
    f.payload_offset = at + data_offset;
    f.payload_len = tcp_len - data_offset;
    return true;
}

// The portable sum, inlined into both public entry points (most calls are short headers).
[[gnu::always_inline]] inline std::uint32_t portable_sum(const std::uint8_t* data, std::size_t len,
                                                         std::uint32_t initial, std::uint64_t wide_sum) {
    // RFC 1071 §2: the one's complement sum is independent of byte order (§2(B)) and may be formed
    // over wider words with the carries folded back at the end (§2(C)). So the bytes are summed
    // as the machine's own little-endian 32-bit halves of 8-byte loads, and the folded 16-bit
    // result is byte-swapped into network order. The value returned is the one the plain
    // big-endian 16-bit sum folds to: 0 only when `initial` and every byte are 0, otherwise the
    // same residue modulo 0xFFFF in [1, 0xFFFF].
    std::uint64_t a = 0, b = 0, c = 0, d = 0;  // four chains, for the pipelines
    while (len >= 32) {
        std::uint64_t w[4];
        std::memcpy(w, data, sizeof w);
        a += (w[0] & 0xFFFFFFFFu) + (w[0] >> 32);
        b += (w[1] & 0xFFFFFFFFu) + (w[1] >> 32);
        c += (w[2] & 0xFFFFFFFFu) + (w[2] >> 32);
        d += (w[3] & 0xFFFFFFFFu) + (w[3] >> 32);
        data += 32;
        len -= 32;
    }
    std::uint64_t sum = wide_sum + a + b + c + d;  // each below 2^33 per 32 bytes: no overflow below 2^35 bytes
    while (len >= 8) {
        std::uint64_t w;
        std::memcpy(&w, data, sizeof w);
        sum += (w & 0xFFFFFFFFu) + (w >> 32);
        data += 8;
        len -= 8;
    }
    if (len >= 4) {
        std::uint32_t w;
        std::memcpy(&w, data, sizeof w);
        sum += w;
        data += 4;
        len -= 4;
    }
    if (len >= 2) {
        sum += std::uint32_t{data[0]} | std::uint32_t{data[1]} << 8;
        data += 2;
        len -= 2;
    }
    if (len != 0) sum += data[0];  // odd byte padded with zero (its network-order word is data[0] << 8)
    const std::uint32_t folded = fold(sum);
    const std::uint32_t network = ((folded & 0xFFu) << 8) | (folded >> 8);
    return fold(std::uint64_t{initial} + network);
}

}  // namespace

std::size_t tcp_header::options_size() const {
    const std::size_t blocks = sack_blocks_that_fit(*this);
    return fixed_options_size(*this) + (blocks != 0 ? 4 + blocks * kSackBlockSize : 0);
}

#if RNIC_NET_HAVE_AVX2
namespace {
// A payload-sized buffer: the wide sum of its leading 64-byte blocks is one more term of the
// portable sum of the rest. Kept out of line so the short calls carry none of it.
[[gnu::noinline]] std::uint32_t checksum_partial_avx2(const std::uint8_t* data, std::size_t len,
                                                      std::uint32_t initial) {
    const std::uint64_t bulk = dword_sum_avx2(data, len);
    return portable_sum(data, len, initial, bulk);
}
}  // namespace
#endif

std::uint32_t checksum_partial(const std::uint8_t* data, std::size_t len, std::uint32_t initial) {
#if RNIC_NET_HAVE_AVX2
    if (len >= kAvx2MinBytes && kHaveAvx2) return checksum_partial_avx2(data, len, initial);
#endif
    return portable_sum(data, len, initial, 0);
}

std::uint32_t checksum_partial_portable(const std::uint8_t* data, std::size_t len, std::uint32_t initial,
                                        std::uint64_t wide_sum) {
    return portable_sum(data, len, initial, wide_sum);
}

std::uint16_t internet_checksum(const std::uint8_t* data, std::size_t len) {
    return static_cast<std::uint16_t>(~checksum_partial(data, len) & 0xFFFFu);
}

std::size_t tcp_frame_header_size(const tcp_header& tcp) {
    return kEthernetHeaderSize + kIpv4HeaderSize + tcp.size();
}

void build_tcp_frame(const endpoints& ep, const ipv4_header& ip, const tcp_header& tcp, const std::uint8_t* payload,
                     std::size_t payload_len, std::vector<std::uint8_t>& out) {
    const std::size_t start = out.size();
    out.resize(start + tcp_frame_header_size(tcp));
    if (payload_len != 0) out.insert(out.end(), payload, payload + payload_len);
    finish_tcp_frame(ep, ip, tcp, out.data() + start, payload_len);
}

void finish_tcp_frame(const endpoints& ep, const ipv4_header& ip, const tcp_header& tcp, std::uint8_t* p,
                      std::size_t payload_len) {
    const std::size_t tcp_len = tcp.size() + payload_len;

    std::memcpy(p, ep.dst_mac.data(), 6);
    std::memcpy(p + 6, ep.src_mac.data(), 6);
    put_be16(p + 12, kEtherTypeIpv4);

    std::uint8_t* iph = p + kEthernetHeaderSize;
    iph[0] = 0x45;  // version 4, IHL 5: no IPv4 options
    iph[1] = ip.dscp_ecn;
    put_be16(iph + 2, static_cast<std::uint16_t>(kIpv4HeaderSize + tcp_len));
    put_be16(iph + 4, ip.identification);
    put_be16(iph + 6, ip.dont_fragment ? kIpFlagDontFragment : 0);
    iph[8] = ip.ttl;
    iph[9] = ip.protocol;
    put_be16(iph + 10, 0);
    // Addresses come from the Endpoints unless the caller set them in the IPv4 header.
    put_be32(iph + 12, ip.src != 0 ? ip.src : ep.src_ip);
    put_be32(iph + 16, ip.dst != 0 ? ip.dst : ep.dst_ip);
    put_be16(iph + 10, internet_checksum(iph, kIpv4HeaderSize));

    std::uint8_t* th = iph + kIpv4HeaderSize;
    put_be16(th, tcp.src_port);
    put_be16(th + 2, tcp.dst_port);
    put_be32(th + 4, tcp.seq);
    put_be32(th + 8, tcp.ack);
    th[12] = static_cast<std::uint8_t>((tcp.size() / 4) << 4);
    th[13] = tcp.flags;
    put_be16(th + 14, tcp.window);
    put_be16(th + 16, 0);
    put_be16(th + 18, (tcp.flags & tcp_flags::kUrg) != 0 ? tcp.urgent_pointer : 0);
    encode_options(tcp, th + kTcpBaseHeaderSize);
    const std::uint32_t sum =
        checksum_partial(th, tcp_len, pseudo_header_sum(get_be32(iph + 12), get_be32(iph + 16), ip.protocol, tcp_len));
    put_be16(th + 16, static_cast<std::uint16_t>(~sum & 0xFFFFu));
}

std::optional<parsed_tcp_frame> parse_tcp_frame(const std::uint8_t* frame, std::size_t len, std::string* error,
                                                parse_error* code) {
    if (len < kEthernetHeaderSize) {
        fail_parse(error, code, parse_error::short_input,
                   format("frame of %zu bytes too short for an Ethernet header", len));
        return std::nullopt;
    }
    parsed_tcp_frame f;
    std::memcpy(f.eth.dst.data(), frame, 6);
    std::memcpy(f.eth.src.data(), frame + 6, 6);
    f.eth.ethertype = get_be16(frame + 12);
    if (f.eth.ethertype != kEtherTypeIpv4) {
        fail_parse(error, code, parse_error::unsupported,
                   format("EtherType 0x%04x at offset 12 is not IPv4", static_cast<unsigned>(f.eth.ethertype)));
        return std::nullopt;
    }
    std::size_t ihl = 0;
    if (!parse_ipv4_header(frame, len, f, ihl, error, code)) return std::nullopt;
    if (!parse_tcp_header(frame, ihl, f, error, code)) return std::nullopt;
    set_code(code, parse_error::none);
    return f;
}

void build_arp_frame(const mac_address& eth_dst, const mac_address& eth_src, const arp_packet& arp,
                     std::vector<std::uint8_t>& out) {
    const std::size_t at = out.size();
    out.resize(at + kMinFrameSize, 0);
    std::uint8_t* p = out.data() + at;
    std::memcpy(p, eth_dst.data(), 6);
    std::memcpy(p + 6, eth_src.data(), 6);
    put_be16(p + 12, kEtherTypeArp);
    std::uint8_t* a = p + kEthernetHeaderSize;
    put_be16(a, 1);  // hardware type: Ethernet
    put_be16(a + 2, kEtherTypeIpv4);
    a[4] = 6;
    a[5] = 4;
    put_be16(a + 6, arp.operation);
    std::memcpy(a + 8, arp.sender_mac.data(), 6);
    put_be32(a + 14, arp.sender_ip);
    std::memcpy(a + 18, arp.target_mac.data(), 6);
    put_be32(a + 24, arp.target_ip);
}

std::vector<std::uint8_t> build_arp_request(const mac_address& sender_mac, std::uint32_t sender_ip,
                                            std::uint32_t target_ip) {
    arp_packet arp;
    arp.operation = arp_op::kRequest;
    arp.sender_mac = sender_mac;
    arp.sender_ip = sender_ip;
    arp.target_ip = target_ip;
    std::vector<std::uint8_t> out;
    build_arp_frame(kBroadcastMac, sender_mac, arp, out);
    return out;
}

std::vector<std::uint8_t> build_arp_reply(const arp_packet& request, const mac_address& my_mac) {
    arp_packet arp;
    arp.operation = arp_op::kReply;
    arp.sender_mac = my_mac;
    arp.sender_ip = request.target_ip;
    arp.target_mac = request.sender_mac;
    arp.target_ip = request.sender_ip;
    std::vector<std::uint8_t> out;
    build_arp_frame(request.sender_mac, my_mac, arp, out);
    return out;
}

std::optional<std::uint16_t> frame_ethertype(const std::uint8_t* frame, std::size_t len) {
    if (len < kEthernetHeaderSize) return std::nullopt;
    return get_be16(frame + 12);
}

std::optional<parsed_arp_frame> parse_arp_frame(const std::uint8_t* frame, std::size_t len, std::string* error,
                                                parse_error* code) {
    auto bad = [&](parse_error kind, std::string text) -> std::optional<parsed_arp_frame> {
        set_code(code, kind);
        if (error != nullptr) *error = std::move(text);
        return std::nullopt;
    };
    if (len < kEthernetHeaderSize + kArpPacketSize) {
        return bad(parse_error::short_input, format("ARP frame: %zu bytes, need %zu (Ethernet header + ARP packet)",
                                                    len, kEthernetHeaderSize + kArpPacketSize));
    }
    parsed_arp_frame f;
    std::memcpy(f.eth.dst.data(), frame, 6);
    std::memcpy(f.eth.src.data(), frame + 6, 6);
    f.eth.ethertype = get_be16(frame + 12);
    if (f.eth.ethertype != kEtherTypeArp) {
        return bad(parse_error::unsupported,
                   format("ARP frame: EtherType 0x%04x at offset 12, not 0x0806", f.eth.ethertype));
    }
    const std::uint8_t* a = frame + kEthernetHeaderSize;
    const std::uint16_t htype = get_be16(a), ptype = get_be16(a + 2);
    if (htype != 1)
        return bad(parse_error::unsupported, format("ARP: hardware type %u at offset 14, not 1 (Ethernet)", htype));
    if (ptype != kEtherTypeIpv4) {
        return bad(parse_error::unsupported,
                   format("ARP: protocol type 0x%04x at offset 16, not 0x0800 (IPv4)", ptype));
    }
    if (a[4] != 6 || a[5] != 4) {
        return bad(parse_error::bad_length,
                   format("ARP: address lengths %u/%u at offset 18, expected 6/4", a[4], a[5]));
    }
    f.arp.operation = get_be16(a + 6);
    if (f.arp.operation != arp_op::kRequest && f.arp.operation != arp_op::kReply) {
        return bad(parse_error::unsupported,
                   format("ARP: operation %u at offset 20, not 1 (request) or 2 (reply)", f.arp.operation));
    }
    std::memcpy(f.arp.sender_mac.data(), a + 8, 6);
    f.arp.sender_ip = get_be32(a + 14);
    std::memcpy(f.arp.target_mac.data(), a + 18, 6);
    f.arp.target_ip = get_be32(a + 24);
    set_code(code, parse_error::none);
    return f;
}

ecn_mark mark_ecn_ce(std::uint8_t* frame, std::size_t len) {
    if (len < kEthernetHeaderSize + kIpv4HeaderSize || get_be16(frame + 12) != kEtherTypeIpv4)
        return ecn_mark::not_ipv4;
    std::uint8_t* ip = frame + kEthernetHeaderSize;
    const std::size_t ihl = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
    if ((ip[0] >> 4) != 4 || ihl < kIpv4HeaderSize || kEthernetHeaderSize + ihl > len) return ecn_mark::not_ipv4;
    const std::uint8_t field = ip[1] & ecn::kMask;
    if (field == ecn::kNotEct) return ecn_mark::not_ect;
    if (field == ecn::kCe) return ecn_mark::already_ce;
    // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m the 16-bit word holding the TOS byte.
    const std::uint16_t old_word = get_be16(ip);
    ip[1] = static_cast<std::uint8_t>(ip[1] | ecn::kCe);
    const std::uint16_t new_word = get_be16(ip);
    const std::uint16_t old_sum = get_be16(ip + 10);
    const std::uint32_t sum =
        fold(std::uint64_t{static_cast<std::uint16_t>(~old_sum)} + static_cast<std::uint16_t>(~old_word) + new_word);
    put_be16(ip + 10, static_cast<std::uint16_t>(~sum & 0xFFFFu));
    return ecn_mark::marked;
}

std::optional<std::uint16_t> mac_control_opcode(const std::uint8_t* frame, std::size_t len) {
    if (len < kEthernetHeaderSize + 2 || get_be16(frame + 12) != kEtherTypeMacControl) return std::nullopt;
    return get_be16(frame + kEthernetHeaderSize);
}

std::vector<std::uint8_t> build_pfc_frame(const mac_address& src, const pfc_frame& pfc) {
    std::vector<std::uint8_t> out(kMinFrameSize, 0);
    std::memcpy(out.data(), kMacControlAddress.data(), 6);
    std::memcpy(out.data() + 6, src.data(), 6);
    put_be16(out.data() + 12, kEtherTypeMacControl);
    std::uint8_t* p = out.data() + kEthernetHeaderSize;
    put_be16(p, kMacControlPfc);
    put_be16(p + 2, pfc.class_enable);
    for (std::size_t i = 0; i < pfc.quanta.size(); ++i) put_be16(p + 4 + 2 * i, pfc.quanta[i]);
    return out;
}

std::optional<pfc_frame> parse_pfc_frame(const std::uint8_t* frame, std::size_t len, std::string* error,
                                         parse_error* code) {
    auto bad = [&](parse_error kind, std::string text) -> std::optional<pfc_frame> {
        set_code(code, kind);
        if (error != nullptr) *error = std::move(text);
        return std::nullopt;
    };
    if (len < kPfcFrameSize) {
        return bad(parse_error::short_input,
                   format("PFC frame: %zu bytes, need %zu (Ethernet header, opcode, enable vector, 8 times)", len,
                          kPfcFrameSize));
    }
    const std::uint16_t ethertype = get_be16(frame + 12);
    if (ethertype != kEtherTypeMacControl) {
        return bad(parse_error::unsupported, format("PFC frame: EtherType 0x%04x at offset 12, not 0x8808", ethertype));
    }
    const std::uint8_t* p = frame + kEthernetHeaderSize;
    const std::uint16_t opcode = get_be16(p);
    if (opcode != kMacControlPfc) {
        return bad(parse_error::unsupported,
                   format("PFC frame: MAC control opcode 0x%04x at offset 14, not 0x0101", opcode));
    }
    pfc_frame f;
    f.class_enable = p[3];  // p[2] is the reserved octet
    for (std::size_t i = 0; i < f.quanta.size(); ++i) f.quanta[i] = get_be16(p + 4 + 2 * i);
    set_code(code, parse_error::none);
    return f;
}

std::string format_ipv4(std::uint32_t addr) {
    return format("%u.%u.%u.%u", static_cast<unsigned>(addr >> 24), static_cast<unsigned>((addr >> 16) & 0xFFu),
                  static_cast<unsigned>((addr >> 8) & 0xFFu), static_cast<unsigned>(addr & 0xFFu));
}

// Strict dotted quad: four decimal parts 0-255 of 1-3 digits, no leading zeros (which some
// parsers read as octal), no spaces or signs.
std::optional<std::uint32_t> parse_ipv4(const std::string& text) {
    std::uint32_t addr = 0;
    std::size_t i = 0;
    for (int part = 0; part < 4; ++part) {
        if (part != 0) {
            if (i >= text.size() || text[i] != '.') return std::nullopt;
            ++i;
        }
        const std::size_t begin = i;
        unsigned value = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - begin < 3) {
            value = value * 10 + static_cast<unsigned>(text[i] - '0');
            ++i;
        }
        const std::size_t digits = i - begin;
        if (digits == 0 || value > 255 || (digits > 1 && text[begin] == '0')) return std::nullopt;
        addr = (addr << 8) | value;
    }
    if (i != text.size()) return std::nullopt;
    return addr;
}

std::string format_mac(const mac_address& mac) {
    return format("%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

}  // namespace rnic::proto::net
