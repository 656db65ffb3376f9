// Ethernet II / IPv4 / TCP headers: encode, parse and checksum (RFC 791, RFC 9293, RFC 1071).
// Plain C++, no SystemC: used by the TCP engine model, the link's pcap writer and by tools.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proto/parse_error.h"

namespace rnic::proto::net {

using mac_address = std::array<std::uint8_t, 6>;

constexpr std::size_t kEthernetHeaderSize = 14;
constexpr std::size_t kIpv4HeaderSize = 20;     // we never send IPv4 options
constexpr std::size_t kTcpBaseHeaderSize = 20;  // without options
constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
constexpr std::uint16_t kEtherTypeArp = 0x0806;
constexpr std::uint8_t kIpProtocolTcp = 6;

namespace tcp_flags {
constexpr std::uint8_t kFin = 0x01;
constexpr std::uint8_t kSyn = 0x02;
constexpr std::uint8_t kRst = 0x04;
constexpr std::uint8_t kPsh = 0x08;
constexpr std::uint8_t kAck = 0x10;
constexpr std::uint8_t kUrg = 0x20;  // the urgent pointer is significant (RFC 9293 §3.1)
constexpr std::uint8_t kEce = 0x40;  // ECN-Echo (RFC 3168 §6.1)
constexpr std::uint8_t kCwr = 0x80;  // Congestion Window Reduced (RFC 3168 §6.1)
}  // namespace tcp_flags

struct ethernet_header {
    mac_address dst{};
    mac_address src{};
    std::uint16_t ethertype = kEtherTypeIpv4;
};

struct ipv4_header {
    std::uint8_t dscp_ecn = 0;
    std::uint16_t total_length = 0;  // filled by encode from the payload size
    std::uint16_t identification = 0;
    bool dont_fragment = true;
    std::uint8_t ttl = 64;
    std::uint8_t protocol = kIpProtocolTcp;
    std::uint32_t src = 0;  // host byte order, e.g. 10.0.0.1 == 0x0a000001
    std::uint32_t dst = 0;
};

// One SACK block (RFC 2018): [left, right) in sequence space.
struct sack_block {
    std::uint32_t left = 0;
    std::uint32_t right = 0;
};

struct tcp_header {
    std::uint16_t src_port = 0;
    std::uint16_t dst_port = 0;
    std::uint32_t seq = 0;
    std::uint32_t ack = 0;
    std::uint8_t flags = 0;    // tcp_flags::*
    std::uint16_t window = 0;  // as on the wire (before scaling)
    // RFC 9293 §3.1: an offset from `seq`, meaningful only with tcp_flags::urg (0 on the wire
    // otherwise). Which byte it names is the user's convention: VI/TCP's Urgent Marker points at
    // the urgent byte itself (seed 003 §3.7, after RFC 1122), not past it.
    std::uint16_t urgent_pointer = 0;
    // Options. Encoded in the order MSS, window scale, SACK-permitted, timestamps, SACK, each
    // NOP-padded to a 4-byte boundary: 4 + 4 + 4 + 12 + (4 + 8n) bytes. The option space is 40
    // bytes (the 4-bit data offset); encode never writes more: what does not fit of the SACK
    // blocks is dropped from the end (alone 4 blocks fit, with timestamps 3, with timestamps and
    // all three SYN options 1). Parsing keeps every block it finds.
    std::optional<std::uint16_t> mss;          // kind 2, SYN only
    std::optional<std::uint8_t> window_scale;  // kind 3, SYN only
    bool sack_permitted = false;               // kind 4, SYN only
    std::vector<sack_block> sack_blocks;       // kind 5, at most 4 (3 in practice)
    // RFC 7323 §3 timestamps (kind 8, length 10): {TSval, TSecr}. Encoded before the SACK blocks.
    std::optional<std::pair<std::uint32_t, std::uint32_t>> timestamps;

    std::size_t options_size() const;  // padded to a multiple of 4
    std::size_t size() const { return kTcpBaseHeaderSize + options_size(); }
};

// Frame-level addressing for one TCP connection.
struct endpoints {
    mac_address src_mac{};
    mac_address dst_mac{};
    std::uint32_t src_ip = 0;
    std::uint32_t dst_ip = 0;
};

// RFC 1071 one's-complement sum over `len` bytes, folded, starting from `initial` (not inverted).
// Sums 64 bytes per step with AVX2 where the CPU has it, otherwise checksum_partial_portable.
std::uint32_t checksum_partial(const std::uint8_t* data, std::size_t len, std::uint32_t initial = 0);
// The same sum without vector instructions (the reference the vector path is tested against).
// `wide_sum` is a sum of little-endian 32-bit words already taken from the bytes before `data`
// (at an even offset), added before the fold.
std::uint32_t checksum_partial_portable(const std::uint8_t* data, std::size_t len, std::uint32_t initial = 0,
                                        std::uint64_t wide_sum = 0);
// Final inverted 16-bit Internet checksum of a buffer.
std::uint16_t internet_checksum(const std::uint8_t* data, std::size_t len);

// Appends Ethernet + IPv4 + TCP headers and the payload to `out` (no FCS: captures and the
// link model carry frames without it; the link accounts for the FCS bytes in its timing).
// Fills IPv4 total length, IPv4 header checksum and the TCP checksum (with pseudo-header).
void build_tcp_frame(const endpoints& ep, const ipv4_header& ip, const tcp_header& tcp, const std::uint8_t* payload,
                     std::size_t payload_len, std::vector<std::uint8_t>& out);

// Bytes of Ethernet + IPv4 + TCP headers (with options) in front of the payload.
std::size_t tcp_frame_header_size(const tcp_header& tcp);
// Writes the headers and checksums into frame[0, tcp_frame_header_size(tcp)) for a payload of
// `payload_len` bytes already in place right behind them: lets a caller move the payload from its
// buffer straight into the frame, with no intermediate copy.
void finish_tcp_frame(const endpoints& ep, const ipv4_header& ip, const tcp_header& tcp, std::uint8_t* frame,
                      std::size_t payload_len);

struct parsed_tcp_frame {
    ethernet_header eth;
    ipv4_header ip;
    tcp_header tcp;
    std::size_t payload_offset = 0;  // from the start of the frame
    std::size_t payload_len = 0;
};

// Parses an Ethernet/IPv4/TCP frame and verifies the IPv4 header checksum and the TCP checksum.
// On failure returns std::nullopt and puts a message naming the field and offset in *error.
// *code (may be null) is none on success, otherwise: short_input (frame ends inside the Ethernet
// or IPv4 header, or before the IPv4 total length), unsupported (EtherType not IPv4, IPv4
// fragment, protocol not TCP), bad_version (IP version not 4), bad_length (IHL < 5 words, TCP
// segment shorter than 20 bytes, TCP data offset < 5 words, a TCP option with a bad length),
// inconsistent (IPv4 total length below the IHL, TCP data offset beyond the segment),
// bad_checksum (IPv4 header or TCP checksum).
std::optional<parsed_tcp_frame> parse_tcp_frame(const std::uint8_t* frame, std::size_t len, std::string* error,
                                                parse_error* code = nullptr);

// ARP for IPv4 over Ethernet (RFC 826): hardware type 1, protocol type 0x0800, lengths 6 and 4.
constexpr std::size_t kArpPacketSize = 28;
constexpr std::size_t kMinFrameSize = 60;  // Ethernet minimum without FCS; ARP frames are padded to it
constexpr mac_address kBroadcastMac{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
namespace arp_op {
constexpr std::uint16_t kRequest = 1;
constexpr std::uint16_t kReply = 2;
}  // namespace arp_op

struct arp_packet {
    std::uint16_t operation = arp_op::kRequest;
    mac_address sender_mac{};
    std::uint32_t sender_ip = 0;  // host byte order
    mac_address target_mac{};     // zero in a request
    std::uint32_t target_ip = 0;
};

struct parsed_arp_frame {
    ethernet_header eth;
    arp_packet arp;
};

// Appends an Ethernet frame carrying `arp` (EtherType 0x0806), zero-padded to 60 bytes.
void build_arp_frame(const mac_address& eth_dst, const mac_address& eth_src, const arp_packet& arp,
                     std::vector<std::uint8_t>& out);
// A broadcast "who has target_ip? tell sender_ip" frame.
std::vector<std::uint8_t> build_arp_request(const mac_address& sender_mac, std::uint32_t sender_ip,
                                            std::uint32_t target_ip);
// The unicast answer of the station (my_mac, request.target_ip) to `request`.
std::vector<std::uint8_t> build_arp_reply(const arp_packet& request, const mac_address& my_mac);

// The frame's EtherType, or nullopt when it is shorter than an Ethernet header.
std::optional<std::uint16_t> frame_ethertype(const std::uint8_t* frame, std::size_t len);

// Parses an Ethernet frame carrying an IPv4-over-Ethernet ARP packet (padding after it is ignored).
// *code: short_input (frame ends before the 28-byte packet), unsupported (EtherType not ARP, hardware
// type not Ethernet, protocol type not IPv4, operation not request or reply), bad_length (hardware
// or protocol address length not 6 / 4).
std::optional<parsed_arp_frame> parse_arp_frame(const std::uint8_t* frame, std::size_t len, std::string* error,
                                                parse_error* code = nullptr);

// ECN field of the IPv4 TOS byte (RFC 3168 §5): the two low bits.
namespace ecn {
constexpr std::uint8_t kNotEct = 0;
constexpr std::uint8_t kEct1 = 1;
constexpr std::uint8_t kEct0 = 2;
constexpr std::uint8_t kCe = 3;
constexpr std::uint8_t kMask = 3;
}  // namespace ecn

enum class ecn_mark {
    not_ipv4,    // not an IPv4 packet with a whole header in the frame: left alone
    not_ect,     // Not-ECT: a router never marks it (RFC 3168 §5)
    marked,      // ECT(0) or ECT(1) became CE
    already_ce,  // CE stays CE
};

// What a congested router does to a packet it forwards (RFC 3168 §5): sets CE in an ECN-capable
// IPv4 packet and updates the header checksum incrementally (RFC 1624 eqn. 3), so a header whose
// checksum was wrong stays wrong. The frame must hold the whole IPv4 header (IHL words).
ecn_mark mark_ecn_ce(std::uint8_t* frame, std::size_t len);

// IEEE 802.3 Annex 31B MAC control frames: EtherType 0x8808, a 2-byte opcode; PAUSE is opcode
// 0x0001, IEEE 802.1Qbb priority-based flow control (PFC) opcode 0x0101, both sent to the
// reserved group address 01:80:C2:00:00:01 and never forwarded by a bridge.
constexpr std::uint16_t kEtherTypeMacControl = 0x8808;
constexpr std::uint16_t kMacControlPause = 0x0001;
constexpr std::uint16_t kMacControlPfc = 0x0101;
constexpr mac_address kMacControlAddress{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
// Opcode (2), priority-enable vector (2: a reserved octet, then bit n for priority n), eight
// 2-byte pause times in quanta of 512 bit times at the port's rate (802.1Qbb §36.1.3.3).
constexpr std::size_t kPfcFrameSize = kEthernetHeaderSize + 2 + 2 + 8 * 2;
constexpr std::uint16_t kPfcMaxQuanta = 0xFFFF;

struct pfc_frame {
    std::uint8_t class_enable = 0;          // bit n set: quanta[n] applies to priority n
    std::array<std::uint16_t, 8> quanta{};  // 0 resumes that priority at once
};

// The MAC control opcode of a frame with EtherType 0x8808, or nullopt for another EtherType or
// a frame too short to hold the opcode.
std::optional<std::uint16_t> mac_control_opcode(const std::uint8_t* frame, std::size_t len);
// A PFC frame from `src` to 01:80:C2:00:00:01, zero-padded to the 60-byte minimum.
std::vector<std::uint8_t> build_pfc_frame(const mac_address& src, const pfc_frame& pfc);
// Parses a PFC frame (the reserved octet of the enable vector is ignored, as 802.1Qbb asks).
// *code: short_input (fewer than 34 bytes), unsupported (EtherType not 0x8808, opcode not 0x0101).
std::optional<pfc_frame> parse_pfc_frame(const std::uint8_t* frame, std::size_t len, std::string* error,
                                         parse_error* code = nullptr);

std::string format_ipv4(std::uint32_t addr);  // "10.0.0.1"
std::optional<std::uint32_t> parse_ipv4(const std::string& text);
std::string format_mac(const mac_address& mac);  // "02:00:00:00:00:01"

}  // namespace rnic::proto::net
