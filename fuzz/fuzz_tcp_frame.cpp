// libFuzzer target: net::parse_tcp_frame (Ethernet II / IPv4 / TCP with options, RFC 791,
// RFC 9293, RFC 2018, RFC 7323) and, as its inverse, net::build_tcp_frame.
//
// Input: byte 0 selects (bit 0) whether the IPv4 header checksum and the TCP checksum of the frame
// are recomputed before parsing (so that mutations get past the checksums into the option
// parser); bytes 1.. are the frame. The same bytes 1.. are also read as the fields of a header
// that is built and parsed back (phase 2).
// Invariants:
//  - phase 1: a parsed frame has payload_offset + payload_len <= len, exactly 14 + IPv4 total
//    length, and a payload that starts behind the TCP header; rebuilding the frame from the parsed
//    fields (options re-encoded within 40 bytes) parses again to the same fields, SACK blocks
//    being a non-empty prefix of the parsed ones when there were any;
//  - phase 2: any header built from input fields has at most 40 bytes of options, a multiple of 4,
//    builds to tcp_frame_header_size() + payload bytes, and parses back to the same fields.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "proto/bytes.h"
#include "proto/net.h"

namespace net = rnic::proto::net;
using rnic::fuzz::fuzz_input;

namespace {

constexpr std::size_t kIpAt = net::kEthernetHeaderSize;

void fix_checksums(std::vector<std::uint8_t>& f) {
    using rnic::proto::get_be16;
    using rnic::proto::put_be16;
    if (f.size() < kIpAt + net::kIpv4HeaderSize) return;
    std::uint8_t* ip = f.data() + kIpAt;
    const std::size_t ihl = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
    if (ihl < net::kIpv4HeaderSize || kIpAt + ihl > f.size()) return;
    put_be16(ip + 10, 0);
    put_be16(ip + 10, net::internet_checksum(ip, ihl));
    const std::size_t total = get_be16(ip + 2);
    if (total < ihl + net::kTcpBaseHeaderSize || kIpAt + total > f.size()) return;
    const std::size_t tcp_len = total - ihl;
    std::uint8_t* tcp = ip + ihl;
    put_be16(tcp + 16, 0);
    std::uint8_t pseudo[12] = {};
    std::memcpy(pseudo, ip + 12, 8);
    pseudo[9] = ip[9];
    put_be16(pseudo + 10, static_cast<std::uint16_t>(tcp_len));
    const std::uint32_t sum = net::checksum_partial(tcp, tcp_len, net::checksum_partial(pseudo, sizeof pseudo));
    put_be16(tcp + 16, static_cast<std::uint16_t>(~sum));
}

// Builds a frame from `tcp` (+ IPv4 fields, payload), parses it back and checks every field.
void build_and_check(const net::ipv4_header& ip, const net::tcp_header& tcp, const std::uint8_t* payload,
                     std::size_t payload_len) {
    const std::size_t options = tcp.options_size();
    FUZZ_CHECK(options <= 40 && options % 4 == 0);
    FUZZ_CHECK(net::tcp_frame_header_size(tcp) == kIpAt + net::kIpv4HeaderSize + net::kTcpBaseHeaderSize + options);
    net::endpoints ep;
    ep.src_mac = {2, 0, 0, 0, 0, 1};
    ep.dst_mac = {2, 0, 0, 0, 0, 2};
    ep.src_ip = 0x0a000001;
    ep.dst_ip = 0x0a000002;
    std::vector<std::uint8_t> frame = {0xEE};  // build appends: this byte must stay untouched
    net::build_tcp_frame(ep, ip, tcp, payload, payload_len, frame);
    FUZZ_CHECK(frame[0] == 0xEE);
    FUZZ_CHECK(frame.size() == 1 + net::tcp_frame_header_size(tcp) + payload_len);
    std::string error;
    const auto p = net::parse_tcp_frame(frame.data() + 1, frame.size() - 1, &error);
    if (!p) std::fprintf(stderr, "rebuilt frame does not parse: %s\n", error.c_str());
    FUZZ_CHECK(p);
    FUZZ_CHECK(p->payload_len == payload_len && p->payload_offset + payload_len == frame.size() - 1);
    FUZZ_CHECK(payload_len == 0 || std::memcmp(frame.data() + 1 + p->payload_offset, payload, payload_len) == 0);
    FUZZ_CHECK(p->ip.src == (ip.src != 0 ? ip.src : ep.src_ip) && p->ip.dst == (ip.dst != 0 ? ip.dst : ep.dst_ip));
    FUZZ_CHECK(p->ip.dscp_ecn == ip.dscp_ecn && p->ip.identification == ip.identification &&
               p->ip.dont_fragment == ip.dont_fragment && p->ip.ttl == ip.ttl);
    const net::tcp_header& q = p->tcp;
    FUZZ_CHECK(q.src_port == tcp.src_port && q.dst_port == tcp.dst_port && q.seq == tcp.seq && q.ack == tcp.ack &&
               q.flags == tcp.flags && q.window == tcp.window);
    FUZZ_CHECK(q.mss == tcp.mss && q.window_scale == tcp.window_scale && q.sack_permitted == tcp.sack_permitted &&
               q.timestamps == tcp.timestamps);
    FUZZ_CHECK(q.sack_blocks.size() <= tcp.sack_blocks.size() && q.sack_blocks.size() <= 4);
    FUZZ_CHECK(tcp.sack_blocks.empty() || !q.sack_blocks.empty());  // at least one block always fits
    for (std::size_t i = 0; i < q.sack_blocks.size(); ++i)
        FUZZ_CHECK(q.sack_blocks[i].left == tcp.sack_blocks[i].left &&
                   q.sack_blocks[i].right == tcp.sack_blocks[i].right);
    // Reparsing reported exactly the SACK blocks that options_size() counted.
    std::size_t fixed =
        (tcp.mss ? 4 : 0) + (tcp.window_scale ? 4 : 0) + (tcp.sack_permitted ? 4 : 0) + (tcp.timestamps ? 12 : 0);
    FUZZ_CHECK(options == fixed + (q.sack_blocks.empty() ? 0 : 4 + 8 * q.sack_blocks.size()));
}

void phase1(const std::uint8_t* frame, std::size_t len) {
    std::string error;
    const auto p = net::parse_tcp_frame(frame, len, &error);
    if (!p) {
        FUZZ_CHECK(!error.empty());
        return;
    }
    FUZZ_CHECK(p->payload_offset <= len && p->payload_len <= len - p->payload_offset);
    FUZZ_CHECK(p->payload_offset + p->payload_len == kIpAt + p->ip.total_length);
    FUZZ_CHECK(p->payload_offset >= kIpAt + net::kIpv4HeaderSize + net::kTcpBaseHeaderSize);
    FUZZ_CHECK(p->ip.protocol == net::kIpProtocolTcp && p->eth.ethertype == net::kEtherTypeIpv4);
    build_and_check(p->ip, p->tcp, frame + p->payload_offset, p->payload_len);
}

void phase2(fuzz_input& in) {
    net::ipv4_header ip;
    ip.dscp_ecn = in.u8();
    ip.identification = in.u16();
    ip.dont_fragment = in.flag();
    ip.ttl = in.u8();
    ip.src = in.flag() ? in.u32() : 0;
    ip.dst = in.flag() ? in.u32() : 0;
    net::tcp_header tcp;
    tcp.src_port = in.u16();
    tcp.dst_port = in.u16();
    tcp.seq = in.u32();
    tcp.ack = in.u32();
    tcp.flags = in.u8();
    tcp.window = in.u16();
    const std::uint8_t opts = in.u8();
    if (opts & 1) tcp.mss = in.u16();
    if (opts & 2) tcp.window_scale = in.u8();
    tcp.sack_permitted = (opts & 4) != 0;
    if (opts & 8) {
        const std::uint32_t tsval = in.u32();
        tcp.timestamps = std::make_pair(tsval, in.u32());
    }
    const std::size_t blocks = (opts >> 4) & 7;
    for (std::size_t i = 0; i < blocks; ++i) {
        const std::uint32_t left = in.u32();
        tcp.sack_blocks.push_back({left, in.u32()});
    }
    std::size_t payload_len = 0;
    const std::uint8_t* payload = in.take(in.u8(), payload_len);
    build_and_check(ip, tcp, payload, payload_len);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    if (data[0] & 1) {
        std::vector<std::uint8_t> copy(data + 1, data + size);
        fix_checksums(copy);
        phase1(copy.data(), copy.size());
    } else {
        phase1(data + 1, size - 1);
    }
    fuzz_input in(data + 1, size - 1);
    phase2(in);
    return 0;
}
