// Builds iWARP captures with the protocol library for the rnic-pcap-check and Wireshark tests:
// a TCP session (handshake, MPA Request/Reply, FPDUs, ACKs, FIN) between an initiator
// 10.0.0.1:40000 and a responder 10.0.0.2:5201, written frame by frame into a Capture.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"
#include "proto/net.h"

namespace rnic::tools_test {

namespace ddp = proto::ddp;
namespace mpa = proto::mpa;
namespace net = proto::net;

using bytes = std::vector<std::uint8_t>;

struct frame {
    std::uint64_t time_ns = 0;
    bytes data;
};

// Frames in capture order; one clock shared by every session written into it.
struct capture {
    std::vector<frame> frames;
    std::uint64_t clock_ns = 1'700'000'000'000'000'000ull;
    void add(bytes wire);
    // Writes a classic pcap (PcapWriter); false on an I/O error.
    bool write(const std::string& path) const;
};

enum side : int { k_initiator = 0, k_responder = 1 };
inline side peer_of(side s) {
    return s == k_initiator ? k_responder : k_initiator;
}

// DDP/RDMAP ULPDUs of one sending side, with its per-queue MSN bookkeeping (RFC 5041: the first
// MSN of each queue is 1, +1 per message).
class messages {
public:
    bytes send(ddp::opcode op, const bytes& payload, std::uint32_t invalidate_stag = 0);
    // One message in segments of at most `chunk` payload bytes (MO and L set accordingly).
    std::vector<bytes> send_segments(ddp::opcode op, const bytes& payload, std::size_t chunk);
    bytes write(std::uint32_t stag, std::uint64_t to, const bytes& payload, bool last = true);
    bytes read_response(std::uint32_t stag, std::uint64_t to, const bytes& payload, bool last = true);
    bytes read_request(const ddp::read_request& rr);
    bytes terminate(const ddp::terminate& t);
    bytes immediate(bool se, std::uint64_t data);
    bytes atomic_request(const ddp::atomic_request& req);
    bytes atomic_response(const ddp::atomic_response& resp);
    // Raw building blocks (no MSN bookkeeping).
    static bytes untagged(ddp::opcode op, std::uint32_t qn, std::uint32_t msn, std::uint32_t mo, bool last,
                          const bytes& payload, std::uint32_t invalidate_stag = 0);
    static bytes tagged(ddp::opcode op, std::uint32_t stag, std::uint64_t to, bool last, const bytes& payload);
    std::uint32_t next_msn(std::uint32_t qn) const { return msn_[qn]; }

private:
    bytes untagged_message(ddp::opcode op, std::uint32_t qn, const bytes& payload, std::uint32_t inv = 0);
    std::uint32_t msn_[4] = {1, 1, 1, 1};
};

bytes pattern(std::size_t n, std::uint8_t seed = 0);

// One TCP connection. Every send() writes one segment and, unless told otherwise, the peer's ACK.
class session {
public:
    session(capture& capture, std::uint16_t initiator_port = 40000, std::uint16_t responder_port = 5201,
            std::uint32_t initiator_isn = 0x1000'0000u, std::uint32_t responder_isn = 0x2000'0000u);

    void handshake();  // SYN, SYN-ACK, ACK
    // Sends the Request (initiator) and the Reply (responder), each in its own segment, and sets
    // up both directions' framing (Markers per the M bits, CRC if either C bit).
    void exchange(const mpa::request_reply& request, const mpa::request_reply& reply);
    void close();  // FIN from the initiator, FIN-ACK from the responder, final ACK

    // One segment carrying `bytes` at the side's next sequence number.
    void send(side from, const bytes& data, bool ack = true);
    // Splits `bytes` into segments of the given sizes (the last size repeats).
    void send_split(side from, const bytes& data, const std::vector<std::size_t>& sizes, bool ack = true);
    // A segment at an explicit sequence number; the side's next sequence number does not move.
    // With bad_checksum the TCP checksum field is wrong.
    void send_at(side from, std::uint32_t seq, const bytes& data, bool bad_checksum = false);
    // Advances the side's sequence number without writing anything (a segment the capture lost).
    void skip(side from, std::size_t n) { seq_[from] += static_cast<std::uint32_t>(n); }
    void ack(side from);  // pure ACK of everything the peer sent
    std::uint32_t next_seq(side s) const { return seq_[s]; }

    // Frames one ULPDU for the side at its current marker position and records its opcode.
    bytes fpdu(side from, const bytes& ulpdu);
    // Frames several ULPDUs back to back.
    bytes fpdus(side from, const std::vector<bytes>& ulpdus);
    // Frames each ULPDU and sends it in its own segment (what tshark needs with Markers).
    void send_each(side from, const std::vector<bytes>& ulpdus);

    bool markers(side from) const { return markers_[from]; }
    bool crc() const { return crc_; }
    std::uint32_t marker_pos(side from) const { return pos_[from]; }
    const std::vector<std::uint8_t>& opcodes(side from) const { return opcodes_[from]; }
    std::size_t fpdu_count(side from) const { return opcodes_[from].size(); }
    // Segments of a Marker direction that end exactly on a 512-byte Marker position (tshark
    // 4.0.17 loses sync on them; docs/wireshark-notes.md).
    std::size_t marker_boundary_segments() const { return marker_boundary_segments_; }

    tools_test::messages& messages(side s) { return messages_[s]; }
    std::uint16_t port(side s) const { return port_[s]; }

private:
    void frame(side from, std::uint32_t seq, std::uint8_t flags, const bytes& payload, bool corrupt_checksum = false);

    capture& cap_;
    net::endpoints ep_[2];
    std::uint16_t port_[2];
    std::uint32_t seq_[2];
    std::uint16_t ip_id_[2] = {1, 1};
    bool full_operation_ = false;
    bool markers_[2] = {false, false};
    bool crc_ = true;
    std::uint32_t pos_[2] = {0, 0};       // marker-space position of the next Full-Operation byte
    std::uint32_t fo_start_[2] = {0, 0};  // sequence number of the first Full-Operation byte
    std::vector<std::uint8_t> opcodes_[2];
    std::size_t marker_boundary_segments_ = 0;
    tools_test::messages messages_[2];
};

// Convenience MPA frames.
mpa::request_reply request_v1(bool marker, bool crc);
mpa::request_reply reply_v1(bool marker, bool crc);

}  // namespace rnic::tools_test
