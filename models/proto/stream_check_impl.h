// The capture checker's implementation, shared by its files (private to them): the per-direction
// and per-connection state of StreamChecker::Impl and its steps, one file per layer:
//  stream_check.cpp      frames, TCP reassembly per direction, issues, the end of the capture, the API
//  stream_check_mpa.cpp  MPA Request/Reply and negotiation (RFC 5044 §7.1, RFC 6581 §9), Full
//                        Operation: FPDU reframing (mpa::Deframer, ift::Deframer, RDMA/TCP segments)
//  stream_check_ddp.cpp  DDP/RDMAP header checks and message tracking (RFC 5040, 5041, 7306)
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"
#include "proto/net.h"
#include "proto/seeds/ift.h"
#include "proto/stream_check.h"
#include "proto/stream_check_rdmatcp.h"
#include "proto/stream_check_text.h"

namespace rnic::proto::check {
namespace internal {

// Stream bytes kept from the start of Full Operation to tell an IFT stream from an MPA one when the
// first frame fails: the size fields, the largest DDP header and the Header CRC.
constexpr std::size_t kFirstBytes = ift::kPrefixSize + ddp::kUntaggedHeaderSize + ift::kCrcSize;

struct message {
    std::uint64_t bytes = 0;    // payload bytes of all segments so far
    std::uint64_t max_end = 0;  // highest MO + length so far
    std::uint32_t segments = 0;
    std::uint64_t first_frame = 0;
};

struct queue {
    std::uint32_t next_msn = 1;  // RFC 5041 §4.3: the first MSN of every queue is 1
    std::map<std::uint32_t, message> open;
};

struct conn_key {
    std::uint32_t ip_lo, ip_hi;
    std::uint16_t port_lo, port_hi;
    bool operator<(const conn_key& o) const {
        return std::tie(ip_lo, port_lo, ip_hi, port_hi) < std::tie(o.ip_lo, o.port_lo, o.ip_hi, o.port_hi);
    }
};

inline conn_key make_key(std::uint32_t a_ip, std::uint16_t a_port, std::uint32_t b_ip, std::uint16_t b_port) {
    if (std::tie(a_ip, a_port) <= std::tie(b_ip, b_port)) return conn_key{a_ip, b_ip, a_port, b_port};
    return conn_key{b_ip, a_ip, b_port, a_port};
}

}  // namespace internal

struct stream_checker::Impl {
    using message = internal::message;
    using queue = internal::queue;
    using conn_key = internal::conn_key;
    static constexpr std::size_t kFirstBytes = internal::kFirstBytes;

    struct Conn;

    enum class phase { handshake, waiting_peer, full, stopped };

    struct dir_state {
        Conn* conn = nullptr;
        int index = 0;  // 0: sent by endpoint 0 of the connection
        // TCP reassembly. Offsets are relative to `base` (the first stream byte), 64-bit.
        bool base_known = false;
        std::uint32_t base = 0;
        std::uint64_t delivered = 0;
        std::map<std::uint64_t, std::vector<std::uint8_t>> pending;  // ahead-of-sequence data
        bool syn = false;
        std::uint32_t isn = 0;
        bool fin = false;
        std::uint64_t fin_rel = 0;
        bool ack_known = false;
        std::uint64_t acked = 0;  // highest offset the peer acknowledged
        // MPA
        Impl::phase phase = phase::handshake;
        std::vector<std::uint8_t> pre;  // bytes before Full Operation
        std::optional<mpa::request_reply> frame;
        bool stopped_by_error = false;
        std::unique_ptr<mpa::deframer> deframer;      // Framing::mpa
        std::unique_ptr<ift::deframer> ift_deframer;  // Framing::ift
        bool rdmatcp = false;                         // Framing::rdmatcp: Conn::rdmatcp deframes
        std::uint64_t fpdu_start = 0;                 // Full-Operation stream offset of the next FPDU
        std::uint8_t head[8] = {};                    // its first bytes
        std::size_t head_len = 0;
        std::uint8_t first[kFirstBytes] = {};  // the first bytes of Full Operation
        std::size_t first_len = 0;
        bool expect_rtr = false;  // RFC 6581 peer-to-peer: the first FPDU must be an RTR
        std::map<std::uint32_t, queue> queues;
        direction_report rep;
    };

    struct Conn {
        std::uint32_t ip[2] = {0, 0};
        std::uint16_t port[2] = {0, 0};
        dir_state dir[2];
        int syn_sender = -1;  // direction that sent a SYN without ACK
        int initiator = -1;   // direction that sent the MPA Request
        connection_report rep;
        std::unique_ptr<rdma_tcp_streams> rdmatcp;  // Framing::rdmatcp, both directions
        Conn() {
            for (int i = 0; i < 2; ++i) {
                dir[i].conn = this;
                dir[i].index = i;
            }
        }
    };

    options opt;
    capture_report report;
    std::vector<std::unique_ptr<Conn>> conns;
    std::map<conn_key, Conn*> by_key;
    std::uint64_t frame_no = 0;
    std::uint64_t time_ns = 0;
    bool finished = false;
    std::vector<std::uint8_t> ulpdu_buf;  // an IFT frame's DDP header and payload, joined

    explicit Impl(const options& o) : opt(o) {}

    // ---- issues

    void store(std::vector<issue>& list, severity sev, category cat, std::uint64_t frame, std::string text);
    void capture_issue(severity sev, std::string text);
    // Connection-level issue (negotiation, reject or a warning).
    void conn_issue(Conn& c, severity sev, category cat, std::string text, std::uint64_t frame);
    void dir_issue(dir_state& d, severity sev, category cat, std::string text, std::uint64_t frame);
    std::string dir_name(const dir_state& d) const;

    // ---- frames

    void add_frame(std::uint64_t t, const std::uint8_t* data, std::size_t len, std::size_t original_length);
    static bool ipv4_header_checksum_ok(const std::uint8_t* data, std::size_t len);
    // The connection a frame's 4-tuple names, without creating one.
    Conn* existing_connection(const net::parsed_tcp_frame& p);
    int direction_of(const Conn& c, const net::parsed_tcp_frame& p) const;
    // Payload, FIN or RST seen: a new SYN on the same 4-tuple then starts a new connection.
    bool has_traffic(const Conn& c) const;
    Conn& new_connection(const net::parsed_tcp_frame& p, const conn_key& key);
    Conn& connection_for(const net::parsed_tcp_frame& p);
    void touch(Conn& c);
    // Offset of `seq` relative to the stream start, unwrapped around the delivery point.
    static std::int64_t rel_of(const dir_state& d, std::uint32_t seq);
    void process(const net::parsed_tcp_frame& p, const std::uint8_t* frame);
    void segment(dir_state& d, std::uint32_t seq, const std::uint8_t* data, std::size_t len);
    void deliver(dir_state& d, const std::uint8_t* data, std::size_t len);
    void stop(dir_state& d, bool by_error);

    // ---- MPA Request / Reply (stream_check_mpa.cpp, as the FPDUs)

    void parse_request_reply(dir_state& d);
    void negotiate(Conn& c);
    void start_full_operation(dir_state& d, bool markers);

    // ---- FPDUs

    std::uint64_t bytes_consumed(const dir_state& d) const;
    // What the frames of a direction are called in the issues.
    static const char* frame_word(const dir_state& d);
    void feed(dir_state& d, const std::uint8_t* data, std::size_t len);
    // The first bytes of the FPDU / IFT frame that starts at fpdu_start, for the end-of-stream report.
    static void collect_head(dir_state& d, const std::uint8_t* data, std::uint64_t chunk_start,
                             std::uint64_t chunk_end);
    void feed_ift(dir_state& d, const std::uint8_t* data, std::size_t len, std::uint64_t chunk_start);
    void feed_rdmatcp(dir_state& d, const std::uint8_t* data, std::size_t len, std::uint64_t chunk_start);
    // One RDMA/TCP segment with a good CRC, the connection's Connection ID and its place in the
    // message sequence; its ULPDU gets the DDP/RDMAP checks.
    void on_rdmatcp_segment(dir_state& d, const rdma_tcp_streams::segment& seg);
    // One IFT frame; its Header CRC is good (ift::Deframer stops at a bad one).
    void on_ift_frame(dir_state& d, const ift::frame_view& f, bool payload_ok);
    // ULPDU_Length of the FPDU at fpdu_start, when enough of it was seen.
    std::optional<std::size_t> pending_ulpdu_length(const dir_state& d) const;
    void on_ulpdu(dir_state& d, const std::uint8_t* ulpdu, std::size_t len);

    // ---- DDP / RDMAP (stream_check_ddp.cpp)

    void check_ulpdu(dir_state& d, const std::uint8_t* p, std::size_t len, fpdu_info& info);
    // RFC 5041 §4.3/§5.2: per queue, MSNs start at 1 and grow by one per message; the segments
    // of a message share its MSN, the one with L = 1 carries the highest MO, and together they
    // cover the message without holes.
    template <typename ErrorFn>
    void track_message(dir_state& d, const ddp::header& h, std::size_t payload_len, ErrorFn& header_error);
    // RFC 6581 §9.2/§9.3: in peer-to-peer mode the initiator's first FPDU is one of the RTR
    // indications the Reply offers (zero-length Send, Write or Read), or a Terminate.
    void rtr_check(dir_state& d, const ddp::header* h, std::size_t payload_len, const std::string& where,
                   const std::uint8_t* payload = nullptr);

    // ---- end of capture

    void finish_direction(Conn& c, dir_state& d);
    void finish_connection(Conn& c);
    const capture_report& finish();
};

// A template: the MPA layer (IFT frames) and the DDP layer both instantiate it.
template <typename ErrorFn>
void stream_checker::Impl::track_message(dir_state& d, const ddp::header& h, std::size_t payload_len,
                                         ErrorFn& header_error) {
    queue& q = d.queues[h.queue];
    auto it = q.open.find(h.msn);
    if (it == q.open.end()) {
        if (h.msn != q.next_msn)
            header_error(format("MSN %u on QN %u, expected %u (next message) or the MSN of an unfinished message",
                                static_cast<unsigned>(h.msn), static_cast<unsigned>(h.queue),
                                static_cast<unsigned>(q.next_msn)));
        it = q.open.emplace(h.msn, message{}).first;
        it->second.first_frame = frame_no;
        q.next_msn = h.msn + 1;
    }
    message& m = it->second;
    const std::uint64_t end = std::uint64_t{h.mo} + payload_len;
    m.bytes += payload_len;
    m.max_end = std::max(m.max_end, end);
    ++m.segments;
    if (!h.last) return;
    if (end < m.max_end) {
        header_error(
            format("last segment of message MSN %u on QN %u ends at MO %llu, but an earlier segment "
                   "reached %llu (the L segment must carry the highest MO)",
                   static_cast<unsigned>(h.msn), static_cast<unsigned>(h.queue), static_cast<ull>(end),
                   static_cast<ull>(m.max_end)));
    } else if (m.bytes != end) {
        header_error(
            format("message MSN %u on QN %u: %u segments carry %llu bytes, but the last one ends at "
                   "message offset %llu (missing or overlapping segments)",
                   static_cast<unsigned>(h.msn), static_cast<unsigned>(h.queue), m.segments, static_cast<ull>(m.bytes),
                   static_cast<ull>(end)));
    }
    q.open.erase(it);
}

}  // namespace rnic::proto::check
