// Input format of fuzz_tcp_connection (shared with the seed generator make_corpus.cpp).
//
// Config (fixed size, little-endian; see fuzz_tcp_connection.cpp for how each maps to a Config):
//   u16 bits, u32 iss, u16 mss, u16 send_buffer, u16 receive_buffer, u8 window_scale,
//   u8 initial_window, u8 dupack_threshold, u8 max_retransmits, u8 rto_min, u8 time_wait
// Then operations until the input ends, each an opcode byte (mod kOpCount) and its fields:
//   connect | listen | close | abort
//   segment    u8 flags, u8 mode, seq (i16 delta or u32), ack (i16 delta or u32), u16 window,
//              [options], u16 payload length (low 11 bits)
//   time       u8 kind, u16 amount: kind bit 0 jumps to next_deadline(), else now advances by
//              amount << (kind >> 1 & 31) ns; due timers then fire
//   send       u16 length, u8 flags (bit 0: mark an FPDU boundary at the end of it)
//   consume    u16 length                       cork / one_boundary   u8 on
//   set_iss    u32                              mark_boundary         i16 delta from the queued end
// Relative sequence numbers: seq = IRS + 1 + bytes delivered + delta (the next byte the Connection
// expects), ack = ISS + 1 + bytes sent + delta (everything sent so far). SACK blocks in options:
// i16 left delta from ISS + 1 + bytes acked, u16 length. Payload bytes are a fixed function of
// their sequence number, so that every delivered byte can be checked.
#pragma once

#include <cstdint>
#include <vector>

namespace rnic::fuzz::tcp_format {

enum op : std::uint8_t {
    k_connect = 0,
    k_listen,
    k_segment,
    k_time,
    k_send,
    k_close,
    k_abort,
    k_consume,
    k_cork,
    k_set_iss,
    k_one_boundary,
    k_mark_boundary,
    k_op_count
};

// Config bits.
constexpr std::uint16_t kCfgAnyRemotePort = 1;  // remote_port 0 (a listener takes it from the SYN)
constexpr std::uint16_t kCfgSack = 2;
constexpr std::uint16_t kCfgNoWindowScaling = 4;
constexpr std::uint16_t kCfgOwnerConsumes = 8;
constexpr std::uint16_t kCfgOneBoundary = 16;
constexpr std::uint16_t kCfgDelayedAck = 32;

// Segment mode bits.
constexpr std::uint8_t kSeqAbsolute = 1;
constexpr std::uint8_t kAckAbsolute = 2;
constexpr std::uint8_t kWrongSrcPort = 4;
constexpr std::uint8_t kWrongDstPort = 8;
constexpr std::uint8_t kHasOptions = 16;
constexpr std::uint8_t kNullPayload = 32;

// Option bits: then u16 mss, u8 window_scale, u32 TSval + u32 TSecr, blocks, as present.
constexpr std::uint8_t kOptMss = 1;
constexpr std::uint8_t kOptWindowScale = 2;
constexpr std::uint8_t kOptSackPermitted = 4;
constexpr std::uint8_t kOptTimestamps = 8;
constexpr unsigned kOptSackBlockShift = 4;  // bits 4-6: number of SACK blocks

constexpr std::uint16_t kLocalPort = 5000;
constexpr std::uint16_t kRemotePort = 6000;

// The peer's payload byte at sequence number `seq`.
inline std::uint8_t stream_byte(std::uint32_t seq) {
    return static_cast<std::uint8_t>(((seq * 2654435761u) >> 24) ^ seq);
}

// Little-endian writer for the seed generator.
struct writer {
    std::vector<std::uint8_t> bytes;
    writer& u8(unsigned v) {
        bytes.push_back(static_cast<std::uint8_t>(v));
        return *this;
    }
    writer& u16(unsigned v) { return u8(v & 0xFF).u8((v >> 8) & 0xFF); }
    writer& u32(std::uint32_t v) { return u16(v & 0xFFFF).u16(v >> 16); }
    writer& i16(int v) { return u16(static_cast<std::uint16_t>(static_cast<std::int16_t>(v))); }
};

}  // namespace rnic::fuzz::tcp_format
