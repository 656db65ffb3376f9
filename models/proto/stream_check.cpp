// Capture checker: TCP reassembly per direction, MPA negotiation (RFC 5044 §7.1, RFC 6581 §9),
// FPDU reframing (mpa::Deframer, or ift::Deframer for seed 001) and DDP/RDMAP header checks
// (RFC 5040, RFC 5041, RFC 7306).
#include "proto/stream_check.h"
#include "proto/stream_check_text.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "proto/net.h"
#include "proto/pcap.h"
#include "proto/seeds/ift.h"
#include "proto/stream_check_rdmatcp.h"

namespace rnic::proto::check {
namespace {

constexpr char kRequestKey[] = "MPA ID Req Frame";
constexpr char kReplyKey[] = "MPA ID Rep Frame";
constexpr std::size_t kKeySize = 16;
constexpr std::size_t kMaxUlpdu = 65535;
// Stream bytes kept from the start of Full Operation to tell an IFT stream from an MPA one when the
// first frame fails: the size fields, the largest DDP header and the Header CRC.
constexpr std::size_t kFirstBytes = ift::kPrefixSize + ddp::kUntaggedHeaderSize + ift::kCrcSize;

// True when `p` starts with an IFT frame whose size fields fit a DDP header and whose Header CRC
// is good (a CRC32c match by chance is 1 in 2^32).
bool looks_like_ift(const std::uint8_t* p, std::size_t len) {
    if (len < ift::kPrefixSize) return false;
    const std::size_t header_size = get_be16(p);
    if (header_size != ddp::kTaggedHeaderSize && header_size != ddp::kUntaggedHeaderSize) return false;
    const std::size_t crc_at = ift::kPrefixSize + header_size;
    return len >= crc_at + ift::kCrcSize && get_le32(p + crc_at) == crc32c(p, crc_at);
}

// True when `p` starts with what an MPA FPDU starts with (RFC 5044 §4.1, RFC 5041 §4.2): a
// ULPDU_Length that holds a DDP header, DDP version 1 and RDMAP version 1, also behind a Marker.
// In an IFT frame those bytes are header_size (14 or 18) and the high bits of payload_size.
bool looks_like_mpa(const std::uint8_t* p, std::size_t len) {
    for (const std::size_t at : {std::size_t{0}, mpa::kMarkerSize}) {
        if (len < at + 4) return false;
        const std::uint8_t* f = p + at;
        const bool versions = (f[2] & 0x03) == 1 && (f[3] >> 6) == 1;
        if (versions && get_be16(f) >= ddp::header_size_from_control(f[2])) return true;
    }
    return false;
}

// The text after "<code> in the IFT frame starting at stream byte N: " of ift::Deframer::error_detail().
std::string ift_detail(const std::string& detail) {
    const std::size_t at = detail.find(": ");
    return at == std::string::npos ? detail : detail.substr(at + 2);
}

// Fixed RDMAP header size after the untagged DDP header for the opcodes whose message is exactly
// that header (RFC 5040 §4.4, RFC 7306 §5.2, §6.2); 0 for the others.
std::size_t fixed_message_size(ddp::Opcode op) {
    switch (op) {
        case ddp::Opcode::read_request: return ddp::kReadRequestSize;
        case ddp::Opcode::atomic_request: return ddp::kAtomicRequestSize;
        case ddp::Opcode::atomic_response: return ddp::kAtomicResponseSize;
        case ddp::Opcode::immediate:
        case ddp::Opcode::immediate_se: return ddp::kImmediateDataSize;
        default: return 0;
    }
}

// RFC 5040 §4.1 Figure 4 and RFC 7306 §4.1 Figure 2: the untagged queue of each opcode.
std::uint32_t expected_queue(ddp::Opcode op) {
    switch (op) {
        case ddp::Opcode::read_request:
        case ddp::Opcode::atomic_request: return ddp::kQueueReadRequest;
        case ddp::Opcode::terminate: return ddp::kQueueTerminate;
        case ddp::Opcode::atomic_response: return ddp::kQueueAtomicResponse;
        default: return ddp::kQueueSend;
    }
}

const char* layer_name(unsigned layer) {
    switch (layer) {
        case 0: return "RDMAP";
        case 1: return "DDP";
        case 2: return "LLP";
        default: return "reserved layer";
    }
}

const char* mpa_error_name(unsigned code) {
    switch (code) {
        case ddp::term::kMpaConnectionLost: return "TCP connection closed, terminated or lost";
        case ddp::term::kMpaCrcError: return "MPA CRC error";
        case ddp::term::kMpaMarkerLengthMismatch: return "MPA Marker and ULPDU_Length mismatch";
        case ddp::term::kMpaInvalidRequestReply: return "invalid MPA Request/Reply";
        case ddp::term::kMpaLocalCatastrophic: return "local catastrophic error";
        case ddp::term::kMpaInsufficientIrd: return "insufficient IRD resources";
        case ddp::term::kMpaNoMatchingRtr: return "no matching RTR option";
        default: return nullptr;
    }
}

std::string describe_terminate(const ddp::Terminate& t) {
    const unsigned layer = static_cast<unsigned>(t.layer);
    std::string s = format("layer %s (%u), error type 0x%x, error code 0x%02x", layer_name(layer), layer,
                           static_cast<unsigned>(t.etype), static_cast<unsigned>(t.code));
    if (t.layer == ddp::TermLayer::llp && t.etype == ddp::term::kLlpMpa && mpa_error_name(t.code) != nullptr)
        s += format(" (%s)", mpa_error_name(t.code));
    if (t.m || t.d || t.r) {
        s += ", HdrCt";
        if (t.m) s += " M";
        if (t.d) s += " D";
        if (t.r) s += " R";
    }
    if (t.d) s += format(", DDP segment length %u", static_cast<unsigned>(t.ddp_segment_length));
    return s;
}

// Recomputes the TCP checksum (and with fix_ip the IPv4 header checksum) of a frame in place;
// false when the headers do not have a consistent layout or, without fix_ip, when the IPv4 header
// checksum is wrong (a damaged header rather than a checksum left to offload).
bool fix_checksums(std::vector<std::uint8_t>& f, bool fix_ip) {
    constexpr std::size_t at = net::kEthernetHeaderSize;
    if (f.size() < at + net::kIpv4HeaderSize) return false;
    std::uint8_t* ip = f.data() + at;
    const std::size_t ihl = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
    const std::size_t total = get_be16(ip + 2);
    if (ihl < net::kIpv4HeaderSize || total < ihl + net::kTcpBaseHeaderSize || at + total > f.size()) return false;
    if (!fix_ip && net::internet_checksum(ip, ihl) != 0) return false;
    put_be16(ip + 10, 0);
    put_be16(ip + 10, net::internet_checksum(ip, ihl));
    std::uint8_t* tcp = ip + ihl;
    const std::size_t tcp_len = total - ihl;
    std::uint8_t pseudo[12];
    std::memcpy(pseudo, ip + 12, 8);
    pseudo[8] = 0;
    pseudo[9] = ip[9];
    put_be16(pseudo + 10, static_cast<std::uint16_t>(tcp_len));
    put_be16(tcp + 16, 0);
    const std::uint32_t sum = net::checksum_partial(tcp, tcp_len, net::checksum_partial(pseudo, sizeof pseudo));
    put_be16(tcp + 16, static_cast<std::uint16_t>(~sum & 0xFFFFu));
    return true;
}

struct Message {
    std::uint64_t bytes = 0;    // payload bytes of all segments so far
    std::uint64_t max_end = 0;  // highest MO + length so far
    std::uint32_t segments = 0;
    std::uint64_t first_frame = 0;
};

struct Queue {
    std::uint32_t next_msn = 1;  // RFC 5041 §4.3: the first MSN of every queue is 1
    std::map<std::uint32_t, Message> open;
};

struct Key {
    std::uint32_t ip_lo, ip_hi;
    std::uint16_t port_lo, port_hi;
    bool operator<(const Key& o) const {
        return std::tie(ip_lo, port_lo, ip_hi, port_hi) < std::tie(o.ip_lo, o.port_lo, o.ip_hi, o.port_hi);
    }
};

Key make_key(std::uint32_t a_ip, std::uint16_t a_port, std::uint32_t b_ip, std::uint16_t b_port) {
    if (std::tie(a_ip, a_port) <= std::tie(b_ip, b_port)) return Key{a_ip, b_ip, a_port, b_port};
    return Key{b_ip, a_ip, b_port, a_port};
}

}  // namespace

const char* to_string(Severity s) { return s == Severity::error ? "error" : "warning"; }


const char* to_string(Category c) {
    switch (c) {
        case Category::capture: return "capture";
        case Category::tcp: return "tcp";
        case Category::negotiation: return "negotiation";
        case Category::reject: return "reject";
        case Category::crc: return "crc";
        case Category::framing: return "framing";
        case Category::header: return "header";
    }
    return "unknown";
}

std::uint64_t ConnectionReport::errors() const {
    std::uint64_t n = negotiation_errors;
    for (const auto& d : directions) n += d.bad_crcs + d.framing_errors + d.header_errors + d.tcp_errors;
    return n;
}

std::uint64_t ConnectionReport::warnings() const {
    return warning_count + directions[0].warning_count + directions[1].warning_count;
}

std::uint64_t CaptureReport::errors() const {
    std::uint64_t n = capture_errors;
    for (const auto& c : connections) n += c.errors();
    return n;
}

std::uint64_t CaptureReport::warnings() const {
    std::uint64_t n = warning_count;
    for (const auto& c : connections) n += c.warnings();
    return n;
}

// ---------------------------------------------------------------------------------------------

struct StreamChecker::Impl {
    struct Conn;

    enum class Phase { handshake, waiting_peer, full, stopped };

    struct Dir {
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
        Phase phase = Phase::handshake;
        std::vector<std::uint8_t> pre;  // bytes before Full Operation
        std::optional<mpa::RequestReply> frame;
        bool stopped_by_error = false;
        std::unique_ptr<mpa::Deframer> deframer;      // Framing::mpa
        std::unique_ptr<ift::Deframer> ift_deframer;  // Framing::ift
        bool rdmatcp = false;                         // Framing::rdmatcp: Conn::rdmatcp deframes
        std::uint64_t fpdu_start = 0;  // Full-Operation stream offset of the next FPDU
        std::uint8_t head[8] = {};     // its first bytes
        std::size_t head_len = 0;
        std::uint8_t first[kFirstBytes] = {};  // the first bytes of Full Operation
        std::size_t first_len = 0;
        bool expect_rtr = false;       // RFC 6581 peer-to-peer: the first FPDU must be an RTR
        std::map<std::uint32_t, Queue> queues;
        DirectionReport rep;
    };

    struct Conn {
        std::uint32_t ip[2] = {0, 0};
        std::uint16_t port[2] = {0, 0};
        Dir dir[2];
        int syn_sender = -1;  // direction that sent a SYN without ACK
        int initiator = -1;   // direction that sent the MPA Request
        ConnectionReport rep;
        std::unique_ptr<RdmaTcpStreams> rdmatcp;  // Framing::rdmatcp, both directions
        Conn() {
            for (int i = 0; i < 2; ++i) {
                dir[i].conn = this;
                dir[i].index = i;
            }
        }
    };

    Options opt;
    CaptureReport report;
    std::vector<std::unique_ptr<Conn>> conns;
    std::map<Key, Conn*> by_key;
    std::uint64_t frame_no = 0;
    std::uint64_t time_ns = 0;
    bool finished = false;
    std::vector<std::uint8_t> ulpdu_buf;  // an IFT frame's DDP header and payload, joined

    explicit Impl(const Options& o) : opt(o) {}

    // ---- issues

    void store(std::vector<Issue>& list, Severity sev, Category cat, std::uint64_t frame, std::string text) {
        if (list.size() < opt.max_issues) list.push_back(Issue{sev, cat, frame, std::move(text)});
    }

    void capture_issue(Severity sev, std::string text) {
        if (sev == Severity::error)
            ++report.capture_errors;
        else
            ++report.warning_count;
        store(report.issues, sev, Category::capture, frame_no, std::move(text));
    }

    // Connection-level issue (negotiation, reject or a warning).
    void conn_issue(Conn& c, Severity sev, Category cat, std::string text, std::uint64_t frame) {
        if (sev == Severity::error)
            ++c.rep.negotiation_errors;
        else
            ++c.rep.warning_count;
        store(c.rep.issues, sev, cat, frame, std::move(text));
    }

    void dir_issue(Dir& d, Severity sev, Category cat, std::string text, std::uint64_t frame) {
        if (sev == Severity::error) {
            switch (cat) {
                case Category::crc: ++d.rep.bad_crcs; break;
                case Category::framing: ++d.rep.framing_errors; break;
                case Category::header: ++d.rep.header_errors; break;
                case Category::tcp: ++d.rep.tcp_errors; break;
                default:
                    conn_issue(*d.conn, sev, cat, std::move(text), frame);
                    return;
            }
        } else {
            ++d.rep.warning_count;
        }
        store(d.rep.issues, sev, cat, frame, std::move(text));
    }

    std::string dir_name(const Dir& d) const {
        const Conn& c = *d.conn;
        return endpoint(c.ip[d.index], c.port[d.index]) + " -> " + endpoint(c.ip[1 - d.index], c.port[1 - d.index]);
    }

    // ---- frames

    void add_frame(std::uint64_t t, const std::uint8_t* data, std::size_t len, std::size_t original_length) {
        if (finished) return;
        ++frame_no;
        time_ns = t;
        ++report.frames;
        if (len < net::kEthernetHeaderSize || get_be16(data + 12) != net::kEtherTypeIpv4) {
            ++report.other_frames;
            return;
        }
        constexpr std::size_t kProtocolAt = net::kEthernetHeaderSize + 9;
        if (len >= net::kEthernetHeaderSize + net::kIpv4HeaderSize && data[kProtocolAt] != net::kIpProtocolTcp) {
            ++report.other_frames;
            return;
        }
        ++report.tcp_frames;
        if (original_length > len) {
            capture_issue(Severity::error, format("frame %llu: only %zu of its %zu bytes were captured (snaplen)",
                                                  static_cast<ull>(frame_no), len, original_length));
            return;
        }
        std::string error;
        auto parsed = net::parse_tcp_frame(data, len, &error);
        if (parsed) {
            process(*parsed, data);
            return;
        }
        // A damaged frame? A wrong IPv4 header checksum or a wrong TCP checksum means a receiver
        // drops the frame (RFC 791 §3.1, RFC 9293 §3.1), as the fabric's fault injector counts on:
        // a warning, whichever checksum failed; a hole no retransmission fills is the error. Its
        // headers cannot be trusted, so it never opens a connection: it is charged to the
        // connection whose 4-tuple it carries, if there is one, else to the capture.
        std::vector<std::uint8_t> copy(data, data + len);
        const bool ip_ok = ipv4_header_checksum_ok(data, len);
        std::optional<net::ParsedTcpFrame> fixed;
        if (fix_checksums(copy, true)) fixed = net::parse_tcp_frame(copy.data(), copy.size(), nullptr);
        if (!opt.verify_checksums) {
            if (!fixed) {
                capture_issue(Severity::error, format("frame %llu: %s", static_cast<ull>(frame_no), error.c_str()));
                return;
            }
            process(*fixed, copy.data());
            return;
        }
        if (!fixed && ip_ok) {
            // Sound IPv4 header, yet no TCP segment can be read from it: not a checksum matter.
            capture_issue(Severity::error, format("frame %llu: %s", static_cast<ull>(frame_no), error.c_str()));
            return;
        }
        const std::string what = format("frame %llu: %s; frame dropped", static_cast<ull>(frame_no), error.c_str());
        Conn* c = fixed ? existing_connection(*fixed) : nullptr;
        if (c == nullptr) {
            ++report.damaged_frames;
            capture_issue(Severity::warning, what + " (it matches no connection of the capture)");
            return;
        }
        touch(*c);
        dir_issue(c->dir[direction_of(*c, *fixed)], Severity::warning, Category::tcp, what, frame_no);
    }

    static bool ipv4_header_checksum_ok(const std::uint8_t* data, std::size_t len) {
        constexpr std::size_t at = net::kEthernetHeaderSize;
        if (len < at + net::kIpv4HeaderSize) return false;
        const std::size_t ihl = static_cast<std::size_t>(data[at] & 0x0F) * 4;
        if (ihl < net::kIpv4HeaderSize || at + ihl > len) return false;
        return net::internet_checksum(data + at, ihl) == 0;
    }

    // The connection a frame's 4-tuple names, without creating one.
    Conn* existing_connection(const net::ParsedTcpFrame& p) {
        const auto it = by_key.find(make_key(p.ip.src, p.tcp.src_port, p.ip.dst, p.tcp.dst_port));
        return it == by_key.end() ? nullptr : it->second;
    }

    int direction_of(const Conn& c, const net::ParsedTcpFrame& p) const {
        return p.ip.src == c.ip[0] && p.tcp.src_port == c.port[0] ? 0 : 1;
    }

    // Payload, FIN or RST seen: a new SYN on the same 4-tuple then starts a new connection.
    bool has_traffic(const Conn& c) const {
        for (const Dir& d : c.dir)
            if (d.rep.segments != 0 || d.fin || d.rep.rst) return true;
        return false;
    }

    Conn& new_connection(const net::ParsedTcpFrame& p, const Key& key) {
        auto c = std::make_unique<Conn>();
        c->ip[0] = p.ip.src;
        c->port[0] = p.tcp.src_port;
        c->ip[1] = p.ip.dst;
        c->port[1] = p.tcp.dst_port;
        c->rep.first_frame = frame_no;
        c->rep.first_time_ns = time_ns;
        for (Dir& d : c->dir) d.rep.framing = opt.framing;
        Conn& ref = *c;
        conns.push_back(std::move(c));
        by_key[key] = &ref;
        return ref;
    }

    Conn& connection_for(const net::ParsedTcpFrame& p) {
        const Key key = make_key(p.ip.src, p.tcp.src_port, p.ip.dst, p.tcp.dst_port);
        auto it = by_key.find(key);
        if (it == by_key.end()) return new_connection(p, key);
        Conn& c = *it->second;
        // A new SYN (not a retransmitted one) on a used 4-tuple starts a new connection.
        const bool syn_only = (p.tcp.flags & net::tcp_flags::syn) != 0 && (p.tcp.flags & net::tcp_flags::ack) == 0;
        if (syn_only) {
            const Dir& d = c.dir[direction_of(c, p)];
            const bool same_syn = d.syn && d.isn == p.tcp.seq;  // a retransmitted SYN
            if (!same_syn && (d.syn || has_traffic(c))) return new_connection(p, key);
        }
        return c;
    }

    void touch(Conn& c) {
        c.rep.last_frame = frame_no;
        c.rep.last_time_ns = time_ns;
    }

    // Offset of `seq` relative to the stream start, unwrapped around the delivery point.
    static std::int64_t rel_of(const Dir& d, std::uint32_t seq) {
        const std::uint32_t next = d.base + static_cast<std::uint32_t>(d.delivered);
        return static_cast<std::int64_t>(d.delivered) + static_cast<std::int32_t>(seq - next);
    }

    void process(const net::ParsedTcpFrame& p, const std::uint8_t* frame) {
        Conn& c = connection_for(p);
        touch(c);
        const int di = direction_of(c, p);
        Dir& d = c.dir[di];
        Dir& peer = c.dir[1 - di];
        const std::uint8_t flags = p.tcp.flags;
        const bool syn = (flags & net::tcp_flags::syn) != 0;
        const bool ack = (flags & net::tcp_flags::ack) != 0;
        if (syn) {
            if (!ack && c.syn_sender < 0) c.syn_sender = di;
            if (!d.syn) {
                d.syn = true;
                d.rep.syn = true;
                d.isn = p.tcp.seq;
                if (!d.base_known) {
                    d.base = p.tcp.seq + 1;
                    d.base_known = true;
                }
            }
        }
        const std::uint32_t data_seq = p.tcp.seq + (syn ? 1u : 0u);
        if (p.payload_len != 0) {
            ++d.rep.segments;
            segment(d, data_seq, frame + p.payload_offset, p.payload_len);
        }
        if ((flags & net::tcp_flags::fin) != 0) {
            if (!d.base_known) {
                d.base = data_seq;
                d.base_known = true;
            }
            const std::int64_t end = rel_of(d, data_seq + static_cast<std::uint32_t>(p.payload_len));
            if (!d.fin && end >= 0) {
                d.fin = true;
                d.rep.fin = true;
                d.fin_rel = static_cast<std::uint64_t>(end);
            }
        }
        if ((flags & net::tcp_flags::rst) != 0) d.rep.rst = true;
        if (ack && peer.base_known) {
            const std::int64_t r = rel_of(peer, p.tcp.ack);
            if (r >= 0 && (!peer.ack_known || static_cast<std::uint64_t>(r) > peer.acked)) {
                peer.acked = static_cast<std::uint64_t>(r);
                peer.ack_known = true;
            }
        }
    }

    void segment(Dir& d, std::uint32_t seq, const std::uint8_t* data, std::size_t len) {
        if (!d.base_known) {
            d.base = seq;
            d.base_known = true;
        }
        std::int64_t rel = rel_of(d, seq);
        if (d.fin && rel + static_cast<std::int64_t>(len) > static_cast<std::int64_t>(d.fin_rel)) {
            dir_issue(d, Severity::warning, Category::tcp,
                      format("frame %llu: %zu payload bytes at seq %u lie beyond the FIN; ignored",
                             static_cast<ull>(frame_no), len, static_cast<unsigned>(seq)),
                      frame_no);
            const std::int64_t keep = static_cast<std::int64_t>(d.fin_rel) - rel;
            if (keep <= 0) return;
            len = static_cast<std::size_t>(keep);
        }
        const std::int64_t end = rel + static_cast<std::int64_t>(len);
        const auto delivered = static_cast<std::int64_t>(d.delivered);
        if (end <= delivered) {
            d.rep.retransmitted_bytes += len;
            return;
        }
        if (rel < delivered) {
            const auto skip = static_cast<std::size_t>(delivered - rel);
            d.rep.retransmitted_bytes += skip;
            data += skip;
            len -= skip;
            rel = delivered;
        }
        if (rel > delivered) {
            ++d.rep.out_of_order_segments;
            auto& slot = d.pending[static_cast<std::uint64_t>(rel)];
            if (slot.size() < len) slot.assign(data, data + len);
            return;
        }
        deliver(d, data, len);
        while (!d.pending.empty() && d.pending.begin()->first <= d.delivered) {
            const std::uint64_t start = d.pending.begin()->first;
            std::vector<std::uint8_t> bytes = std::move(d.pending.begin()->second);
            d.pending.erase(d.pending.begin());
            if (start + bytes.size() <= d.delivered) {
                d.rep.retransmitted_bytes += bytes.size();
                continue;
            }
            const std::size_t off = static_cast<std::size_t>(d.delivered - start);
            d.rep.retransmitted_bytes += off;
            deliver(d, bytes.data() + off, bytes.size() - off);
        }
    }

    void deliver(Dir& d, const std::uint8_t* data, std::size_t len) {
        d.delivered += len;
        d.rep.stream_bytes += len;
        switch (d.phase) {
            case Phase::stopped: d.rep.unchecked_bytes += len; break;
            case Phase::handshake:
                d.pre.insert(d.pre.end(), data, data + len);
                parse_request_reply(d);
                break;
            case Phase::waiting_peer: d.pre.insert(d.pre.end(), data, data + len); break;
            case Phase::full: feed(d, data, len); break;
        }
    }

    void stop(Dir& d, bool by_error) {
        d.phase = Phase::stopped;
        d.stopped_by_error = by_error;
        d.rep.unchecked_bytes += d.pre.size();
        d.pre.clear();
        d.pre.shrink_to_fit();
    }

    // ---- MPA Request / Reply

    void parse_request_reply(Dir& d) {
        Conn& c = *d.conn;
        if (d.pre.size() < kKeySize) return;
        const bool is_request = std::memcmp(d.pre.data(), kRequestKey, kKeySize) == 0;
        const bool is_reply = std::memcmp(d.pre.data(), kReplyKey, kKeySize) == 0;
        if (!is_request && !is_reply) {
            std::string first;
            for (std::size_t i = 0; i < 8; ++i) first += format("%02x", static_cast<unsigned>(d.pre[i]));
            conn_issue(c, Severity::error, Category::negotiation,
                       format("%s: no MPA Request/Reply at the start of the stream (first bytes %s...): "
                              "missing negotiation, the stream is not checked",
                              dir_name(d).c_str(), first.c_str()),
                       frame_no);
            stop(d, true);
            return;
        }
        const std::size_t need = mpa::request_reply_length(d.pre.data(), d.pre.size());
        if (need == 0) return;
        std::string error;
        mpa::DecodeOptions lenient;
        lenient.ignore_reserved_bits = true;
        const bool pd_too_long = need - mpa::kRequestReplyHeaderSize > mpa::kMaxPrivateData;
        if (!pd_too_long && d.pre.size() < need) return;
        auto f = mpa::decode(d.pre.data(), d.pre.size(), &error, lenient);
        if (!f) {
            conn_issue(c, Severity::error, Category::negotiation,
                       format("%s: %s", dir_name(d).c_str(), error.c_str()), frame_no);
            stop(d, true);
            return;
        }
        const char* what = f->request ? "MPA Request" : "MPA Reply";
        if (opt.strict_reserved_bits) {
            if (f->reserved_bits != 0)
                conn_issue(c, Severity::error, Category::negotiation,
                           format("%s: %s has Res bits 0x%x set (RFC 5044 §7.1.1: must be zero)",
                                  dir_name(d).c_str(), what, static_cast<unsigned>(f->reserved_bits)),
                           frame_no);
            if (f->request && f->reject)
                conn_issue(c, Severity::error, Category::negotiation,
                           format("%s: MPA Request has the R bit set (reserved in a Request)", dir_name(d).c_str()),
                           frame_no);
        }
        d.frame = std::move(f);
        d.pre.erase(d.pre.begin(), d.pre.begin() + static_cast<std::ptrdiff_t>(need));
        d.phase = Phase::waiting_peer;
        negotiate(c);
    }

    void negotiate(Conn& c) {
        if (c.dir[0].phase != Phase::waiting_peer || c.dir[1].phase != Phase::waiting_peer) return;
        const bool r0 = c.dir[0].frame->request, r1 = c.dir[1].frame->request;
        if (r0 == r1) {
            conn_issue(c, Severity::error, Category::negotiation,
                       r0 ? "both sides sent an MPA Request" : "both sides sent an MPA Reply, no Request", frame_no);
            stop(c.dir[0], true);
            stop(c.dir[1], true);
            return;
        }
        Dir& to_resp = r0 ? c.dir[0] : c.dir[1];
        Dir& to_init = r0 ? c.dir[1] : c.dir[0];
        c.initiator = to_resp.index;
        const mpa::RequestReply& req = *to_resp.frame;
        const mpa::RequestReply& rep = *to_init.frame;
        c.rep.request = req;
        c.rep.reply = rep;
        c.rep.revision = rep.revision;
        auto neg_error = [&](const std::string& text) {
            conn_issue(c, Severity::error, Category::negotiation, text, frame_no);
        };
        if (rep.revision > req.revision)
            neg_error(format("MPA Reply has revision %u, above the Request's %u", static_cast<unsigned>(rep.revision),
                             static_cast<unsigned>(req.revision)));
        if (rep.enhanced && !req.enhanced)
            neg_error("MPA Reply has the S flag (RFC 6581 enhanced setup) but the Request did not");
        if (req.enhanced && rep.enhanced) {
            for (const mpa::RequestReply* f : {&req, &rep}) {
                const bool rtr_bits = f->zero_length_send_rtr || f->zero_length_write_rtr || f->zero_length_read_rtr;
                if (!f->peer_to_peer && rtr_bits)
                    neg_error(format("MPA %s: RTR flags B/C/D set with A = 0 (RFC 6581 §9.2: must be 0)",
                                     f->request ? "Request" : "Reply"));
            }
            if (req.peer_to_peer != rep.peer_to_peer && !rep.reject)
                neg_error("MPA Reply's A (peer-to-peer) flag does not match the Request's (RFC 6581 §9.2)");
            if (req.peer_to_peer && rep.peer_to_peer && !rep.reject) {
                if (!rep.zero_length_send_rtr && !rep.zero_length_write_rtr && !rep.zero_length_read_rtr)
                    neg_error("MPA Reply in peer-to-peer mode offers no RTR option (RFC 6581 §9.2)");
                to_resp.expect_rtr = true;
            }
        }
        if (rep.reject) {
            c.rep.rejected = true;
            std::string pd;
            for (const std::uint8_t b : rep.private_data) pd += (b >= 0x20 && b < 0x7F) ? static_cast<char>(b) : '.';
            conn_issue(c, Severity::error, Category::reject,
                       format("MPA Reply rejects the connection (R = 1)%s%s%s", pd.empty() ? "" : ", private data \"",
                              pd.c_str(), pd.empty() ? "" : "\""),
                       frame_no);
            stop(to_resp, false);
            stop(to_init, false);
            return;
        }
        c.rep.negotiated = true;
        // IFT: Header and Payload CRC always; RDMA/TCP: a CRC-32 in every segment (seed 000 §3.4).
        c.rep.crc = req.crc || rep.crc || opt.framing != Framing::mpa;
        if (opt.framing != Framing::mpa) {
            // Seed 001 §5.3, seed 000 §3: neither has Markers; a Request/Reply asking for them is MPA's.
            for (const mpa::RequestReply* f : {&req, &rep})
                if (f->marker)
                    neg_error(format("MPA %s asks for Markers (M = 1), but %s framing has none (%s): MPA FPDUs? "
                                     "try --framing mpa",
                                     f->request ? "Request" : "Reply", opt.framing == Framing::ift ? "IFT" : "RDMA/TCP",
                                     opt.framing == Framing::ift ? "draft-williams-iwarp-ift-00 §5.3"
                                                                 : "draft-williams-rdmatcp-00 §3"));
        }
        // RFC 5044 §7.1.1: the Request's M asks for Markers towards the initiator, the Reply's M
        // for Markers towards the responder.
        start_full_operation(to_resp, rep.marker);
        start_full_operation(to_init, req.marker);
    }

    void start_full_operation(Dir& d, bool markers) {
        d.phase = Phase::full;
        d.rep.full_operation = true;
        Dir* dp = &d;
        if (opt.framing == Framing::rdmatcp) {
            Conn& c = *d.conn;
            if (!c.rdmatcp) {
                c.rdmatcp = std::make_unique<RdmaTcpStreams>(
                    [this, &c](int dir, const RdmaTcpStreams::Segment& seg) { on_rdmatcp_segment(c.dir[dir], seg); });
            }
            d.rdmatcp = true;
        } else if (opt.framing == Framing::ift) {
            ift::Deframer::Config cfg;
            // The platform puts exactly the DDP header under the Header CRC (models/framing/mpa_framer.cpp).
            cfg.limits.min_header_size = ddp::kTaggedHeaderSize;
            cfg.limits.max_header_size = ddp::kUntaggedHeaderSize;
            cfg.stop_on_payload_crc_error = false;  // the framing survives a Payload CRC error (§5)
            ift::Deframer::Handlers h;
            h.frame = [this, dp](const ift::FrameView& f, bool payload_ok) { on_ift_frame(*dp, f, payload_ok); };
            d.ift_deframer = std::make_unique<ift::Deframer>(cfg, std::move(h));
        } else {
            d.rep.markers = markers;
            mpa::Deframer::Config cfg;
            cfg.markers = markers;
            cfg.crc = d.conn->rep.crc;
            cfg.stream_pos = 0;  // the Marker base is the first byte of Full Operation (RFC 5044 §4.3)
            cfg.max_ulpdu = kMaxUlpdu;
            d.deframer = std::make_unique<mpa::Deframer>(
                cfg, [this, dp](const std::uint8_t* ulpdu, std::size_t len) { on_ulpdu(*dp, ulpdu, len); });
        }
        std::vector<std::uint8_t> early = std::move(d.pre);
        d.pre.clear();
        if (!early.empty()) feed(d, early.data(), early.size());
    }

    // ---- FPDUs

    std::uint64_t bytes_consumed(const Dir& d) const {
        if (d.rdmatcp) return d.conn->rdmatcp->bytes_consumed(d.index);
        return d.ift_deframer ? d.ift_deframer->bytes_consumed() : d.deframer->bytes_consumed();
    }
    // What the frames of a direction are called in the issues.
    static const char* frame_word(const Dir& d) {
        return d.rdmatcp ? "RDMA/TCP segment" : d.ift_deframer ? "IFT frame" : "FPDU";
    }

    void feed(Dir& d, const std::uint8_t* data, std::size_t len) {
        const std::uint64_t chunk_start = bytes_consumed(d);
        const std::uint64_t chunk_end = chunk_start + len;
        for (std::uint64_t i = d.first_len; i < kFirstBytes && i < chunk_end; ++i)
            if (i >= chunk_start) d.first[d.first_len++] = data[i - chunk_start];
        if (d.ift_deframer) {
            feed_ift(d, data, len, chunk_start);
            return;
        }
        if (d.rdmatcp) {
            feed_rdmatcp(d, data, len, chunk_start);
            return;
        }
        const mpa::DeframeError err = d.deframer->feed(data, len);
        collect_head(d, data, chunk_start, chunk_end);
        if (err == mpa::DeframeError::none) return;
        const std::uint64_t used = d.deframer->bytes_consumed() - chunk_start;
        const Category cat = err == mpa::DeframeError::crc_mismatch ? Category::crc : Category::framing;
        std::string text = format("frame %llu: %s", static_cast<ull>(frame_no), d.deframer->error_detail().c_str());
        // An IFT stream read as MPA fails at its first frame (ULPDU_Length = the IFT header_size).
        if (d.rep.fpdus == 0 && d.fpdu_start == 0 && looks_like_ift(d.first, d.first_len))
            text += " (the stream starts with an IFT frame with a good Header CRC: IFT? try --framing ift)";
        dir_issue(d, Severity::error, cat, text, frame_no);
        stop(d, true);
        d.rep.unchecked_bytes += len - used;
    }

    // The first bytes of the FPDU / IFT frame that starts at fpdu_start, for the end-of-stream report.
    static void collect_head(Dir& d, const std::uint8_t* data, std::uint64_t chunk_start, std::uint64_t chunk_end) {
        for (std::uint64_t i = d.fpdu_start + d.head_len; d.head_len < sizeof d.head && i < chunk_end; ++i)
            if (i >= chunk_start) d.head[d.head_len++] = data[i - chunk_start];
    }

    void feed_ift(Dir& d, const std::uint8_t* data, std::size_t len, std::uint64_t chunk_start) {
        const ift::Error err = d.ift_deframer->feed(data, len);
        collect_head(d, data, chunk_start, chunk_start + len);
        if (err == ift::Error::none) return;
        const std::uint64_t used = d.ift_deframer->bytes_consumed() - chunk_start;
        const std::string detail = ift_detail(d.ift_deframer->error_detail());
        std::string text;
        Category cat = Category::framing;
        if (err == ift::Error::header_crc_mismatch) {
            cat = Category::crc;
            text = format("frame %llu, %s: bad IFT Header CRC in the frame at stream byte %llu (%s); the framing is "
                          "lost, the direction is not checked further",
                          static_cast<ull>(frame_no), dir_name(d).c_str(), static_cast<ull>(d.fpdu_start),
                          detail.c_str());
        } else {
            text = format("frame %llu, %s: IFT frame at stream byte %llu: %s", static_cast<ull>(frame_no),
                          dir_name(d).c_str(), static_cast<ull>(d.fpdu_start), detail.c_str());
        }
        if (d.rep.fpdus == 0 && d.fpdu_start == 0 && looks_like_mpa(d.first, d.first_len))
            text += " (the stream starts like an MPA FPDU: MPA? try --framing mpa)";
        dir_issue(d, Severity::error, cat, text, frame_no);
        stop(d, true);
        d.rep.unchecked_bytes += len - used;
    }

    void feed_rdmatcp(Dir& d, const std::uint8_t* data, std::size_t len, std::uint64_t chunk_start) {
        const auto failure = d.conn->rdmatcp->feed(d.index, data, len);
        if (!failure) return;
        const std::uint64_t used = d.conn->rdmatcp->bytes_consumed(d.index) - chunk_start;
        std::string text = format("frame %llu, %s: %s", static_cast<ull>(frame_no), dir_name(d).c_str(),
                                  failure->text.c_str());
        if (failure->crc) text += "; the direction is not checked further";
        if (d.rep.fpdus == 0 && d.fpdu_start == 0 && looks_like_mpa(d.first, d.first_len))
            text += " (the stream starts like an MPA FPDU: MPA? try --framing mpa)";
        dir_issue(d, Severity::error, failure->crc ? Category::crc : Category::framing, text, frame_no);
        stop(d, true);
        d.rep.unchecked_bytes += len > used ? len - used : 0;
    }

    // One RDMA/TCP segment with a good CRC, the connection's Connection ID and its place in the
    // message sequence; its ULPDU gets the DDP/RDMAP checks.
    void on_rdmatcp_segment(Dir& d, const RdmaTcpStreams::Segment& seg) {
        d.fpdu_start = seg.stream_offset;
        FpduInfo info;
        info.frame = frame_no;
        info.stream_offset = seg.stream_offset;
        info.wire_length = seg.wire_length;
        info.ulpdu_length = seg.ulpdu_len;
        ++d.rep.fpdus;
        d.rep.fpdu_bytes += seg.wire_length;
        d.rep.ulpdu_bytes += seg.ulpdu_len;
        check_ulpdu(d, seg.ulpdu, seg.ulpdu_len, info);
        if (opt.keep_fpdu_log) d.rep.fpdu_log.push_back(info);
        d.fpdu_start = seg.stream_offset + seg.wire_length;
        d.head_len = 0;
    }

    // One IFT frame; its Header CRC is good (ift::Deframer stops at a bad one).
    void on_ift_frame(Dir& d, const ift::FrameView& f, bool payload_ok) {
        const std::uint64_t end = d.fpdu_start + f.wire_length;
        ulpdu_buf.assign(f.header, f.header + f.header_size);
        ulpdu_buf.insert(ulpdu_buf.end(), f.payload, f.payload + f.payload_size);
        if (!payload_ok) {
            dir_issue(d, Severity::error, Category::crc,
                      format("frame %llu, %s: bad IFT Payload CRC in the frame at stream byte %llu (%zu payload "
                             "bytes): received 0x%08x, computed 0x%08x",
                             static_cast<ull>(frame_no), dir_name(d).c_str(), static_cast<ull>(d.fpdu_start),
                             f.payload_size, static_cast<unsigned>(f.payload_crc),
                             static_cast<unsigned>(crc32c(f.payload, f.payload_size))),
                      frame_no);
            // The DDP header is verified by its own CRC: keep the message tracking in step.
            const auto h = ddp::decode_header(ulpdu_buf.data(), ulpdu_buf.size(), nullptr);
            if (h && !h->tagged && h->size() == f.header_size) {
                auto ignore = [](const std::string&) {};
                track_message(d, *h, f.payload_size, ignore);
            }
        } else {
            FpduInfo info;
            info.frame = frame_no;
            info.stream_offset = d.fpdu_start;
            info.wire_length = f.wire_length;
            info.ulpdu_length = ulpdu_buf.size();
            ++d.rep.fpdus;
            d.rep.fpdu_bytes += f.wire_length;
            d.rep.ulpdu_bytes += ulpdu_buf.size();
            const std::size_t ddp_size = ddp::header_size_from_control(f.header[0]);  // header_size >= 14
            if (f.header_size != ddp_size)
                dir_issue(d, Severity::error, Category::header,
                          format("frame %llu, IFT frame at stream byte %llu: header_size %zu, but the DDP header "
                                 "(T = %d) is %zu bytes",
                                 static_cast<ull>(frame_no), static_cast<ull>(d.fpdu_start), f.header_size,
                                 (f.header[0] & 0x80) != 0 ? 1 : 0, ddp_size),
                          frame_no);
            check_ulpdu(d, ulpdu_buf.data(), ulpdu_buf.size(), info);
            if (opt.keep_fpdu_log) d.rep.fpdu_log.push_back(info);
        }
        d.fpdu_start = end;
        d.head_len = 0;
    }

    // ULPDU_Length of the FPDU at fpdu_start, when enough of it was seen.
    std::optional<std::size_t> pending_ulpdu_length(const Dir& d) const {
        const std::size_t skip = d.rep.markers && d.fpdu_start % mpa::kMarkerInterval == 0 ? mpa::kMarkerSize : 0;
        if (d.head_len < skip + 2) return std::nullopt;
        return get_be16(d.head + skip);
    }

    void on_ulpdu(Dir& d, const std::uint8_t* ulpdu, std::size_t len) {
        const std::uint64_t end = d.deframer->bytes_consumed();
        FpduInfo info;
        info.frame = frame_no;
        info.stream_offset = d.fpdu_start;
        info.wire_length = static_cast<std::size_t>(end - d.fpdu_start);
        info.ulpdu_length = len;
        ++d.rep.fpdus;
        d.rep.fpdu_bytes += info.wire_length;
        d.rep.ulpdu_bytes += len;
        check_ulpdu(d, ulpdu, len, info);
        if (opt.keep_fpdu_log) d.rep.fpdu_log.push_back(info);
        d.fpdu_start = end;
        d.head_len = 0;
    }

    void check_ulpdu(Dir& d, const std::uint8_t* p, std::size_t len, FpduInfo& info) {
        const std::string where = format("frame %llu, %s at stream byte %llu", static_cast<ull>(frame_no),
                                         frame_word(d), static_cast<ull>(d.fpdu_start));
        auto header_error = [&](const std::string& text) {
            dir_issue(d, Severity::error, Category::header, where + ": " + text, frame_no);
        };
        if (opt.keep_fpdu_log) info.head.assign(p, p + std::min(len, kFpduHeadBytes));
        if (len >= 2) {
            const unsigned raw = p[1] & 0x0F;
            ++d.rep.opcodes[raw];
            d.rep.opcode_sequence.push_back(static_cast<std::uint8_t>(raw));
        }
        std::string error;
        const auto h = ddp::decode_header(p, len, &error);
        if (!h) {
            header_error(format("ULPDU of %zu bytes: %s", len, error.c_str()));
            if (d.expect_rtr) rtr_check(d, nullptr, 0, where);
            return;
        }
        info.header_ok = true;
        info.header = *h;
        if (h->last) ++d.rep.messages;
        const unsigned op = static_cast<unsigned>(h->opcode);
        if (h->ddp_version != 1)
            header_error(format("DDP version (DV) %u, expected 1", static_cast<unsigned>(h->ddp_version)));
        if (h->rdmap_version != 1)
            header_error(format("RDMAP version (RV) %u, expected 1", static_cast<unsigned>(h->rdmap_version)));
        if (opt.strict_reserved_bits) {
            if ((p[0] & 0x3C) != 0)
                header_error(format("DDP control Rsvd bits 0x%x set (must be zero)",
                                    static_cast<unsigned>((p[0] >> 2) & 0xF)));
            if ((p[1] & 0x30) != 0)
                header_error(format("RDMAP control Rsv bits 0x%x set (must be zero)",
                                    static_cast<unsigned>((p[1] >> 4) & 0x3)));
        }
        if (op > static_cast<unsigned>(ddp::Opcode::atomic_response)) {
            header_error(format("reserved RDMAP opcode %u", op));
            if (d.expect_rtr) rtr_check(d, &*h, 0, where);
            return;
        }
        const ddp::Opcode opcode = h->opcode;
        if (h->tagged != ddp::is_tagged(opcode)) {
            header_error(format("%s (opcode %u) uses the %s buffer model but T = %d", opcode_name(op), op,
                                ddp::is_tagged(opcode) ? "tagged" : "untagged", h->tagged ? 1 : 0));
        }
        const std::size_t payload_len = len - h->size();
        const std::uint8_t* payload = p + h->size();
        if (d.expect_rtr) rtr_check(d, &*h, payload_len, where, payload);
        if (h->tagged) return;

        const std::uint32_t qn = expected_queue(opcode);
        if (!ddp::is_tagged(opcode) && h->queue != qn)
            header_error(format("%s (opcode %u) on QN %u, expected QN %u", opcode_name(op), op,
                                static_cast<unsigned>(h->queue), static_cast<unsigned>(qn)));
        if (opt.strict_reserved_bits && !carries_invalidate_stag(opcode) && h->invalidate_stag != 0)
            header_error(format("%s: Invalidate STag field 0x%08x must be zero for this opcode", opcode_name(op),
                                static_cast<unsigned>(h->invalidate_stag)));
        const std::size_t fixed = fixed_message_size(opcode);
        if (fixed != 0 || opcode == ddp::Opcode::terminate) {
            if (!h->last || h->mo != 0)
                header_error(format("%s must be a single DDP segment (L = 1, MO 0), got L = %d MO %u", opcode_name(op),
                                    h->last ? 1 : 0, static_cast<unsigned>(h->mo)));
        }
        if (fixed != 0 && payload_len != fixed)
            header_error(format("%s carries %zu bytes after the DDP header, expected %zu", opcode_name(op), payload_len,
                                fixed));
        switch (opcode) {
            case ddp::Opcode::read_request:
                if (!ddp::decode_read_request(payload, payload_len, &error)) header_error(error);
                break;
            case ddp::Opcode::atomic_request: {
                const auto req = ddp::decode_atomic_request(payload, payload_len, &error);
                if (!req) {
                    header_error(error);
                    break;
                }
                if (req->op == ddp::AtomicOpcode::fetch_add)
                    ++d.rep.atomic_fetch_add;
                else if (req->op == ddp::AtomicOpcode::compare_swap)
                    ++d.rep.atomic_compare_swap;
                else
                    header_error(format("Atomic Request with unassigned AOpCode %u", static_cast<unsigned>(req->op)));
                const bool reserved_set =
                    payload[0] != 0 || payload[1] != 0 || payload[2] != 0 || (payload[3] & 0xF0) != 0;
                if (opt.strict_reserved_bits && reserved_set)
                    header_error(format("Atomic Request: reserved bits before AOpCode 0x%07x set (must be zero)",
                                        static_cast<unsigned>(get_be32(payload) >> 4)));
                break;
            }
            case ddp::Opcode::atomic_response:
                if (!ddp::decode_atomic_response(payload, payload_len, &error)) header_error(error);
                break;
            case ddp::Opcode::immediate:
            case ddp::Opcode::immediate_se:
                if (!ddp::decode_immediate(payload, payload_len, &error)) header_error(error);
                break;
            case ddp::Opcode::terminate: {
                const auto term = ddp::decode_terminate(payload, payload_len, &error);
                if (!term) {
                    header_error(error);
                    break;
                }
                if (static_cast<unsigned>(term->layer) > static_cast<unsigned>(ddp::TermLayer::llp))
                    header_error(format("Terminate with reserved layer %u", static_cast<unsigned>(term->layer)));
                if (opt.strict_reserved_bits && ((payload[2] & 0x1F) != 0 || payload[3] != 0))
                    header_error("Terminate: reserved bits after HdrCt set (must be zero)");
                if (d.rep.terminates.size() < opt.max_issues)
                    d.rep.terminates.push_back(format("frame %llu: ", static_cast<ull>(frame_no)) +
                                               describe_terminate(*term));
                break;
            }
            default: break;
        }
        track_message(d, *h, payload_len, header_error);
    }

    // RFC 5041 §4.3/§5.2: per queue, MSNs start at 1 and grow by one per message; the segments
    // of a message share its MSN, the one with L = 1 carries the highest MO, and together they
    // cover the message without holes.
    template <typename ErrorFn>
    void track_message(Dir& d, const ddp::Header& h, std::size_t payload_len, ErrorFn& header_error) {
        Queue& q = d.queues[h.queue];
        auto it = q.open.find(h.msn);
        if (it == q.open.end()) {
            if (h.msn != q.next_msn)
                header_error(format("MSN %u on QN %u, expected %u (next message) or the MSN of an unfinished message",
                                    static_cast<unsigned>(h.msn), static_cast<unsigned>(h.queue),
                                    static_cast<unsigned>(q.next_msn)));
            it = q.open.emplace(h.msn, Message{}).first;
            it->second.first_frame = frame_no;
            q.next_msn = h.msn + 1;
        }
        Message& m = it->second;
        const std::uint64_t end = std::uint64_t{h.mo} + payload_len;
        m.bytes += payload_len;
        m.max_end = std::max(m.max_end, end);
        ++m.segments;
        if (!h.last) return;
        if (end < m.max_end) {
            header_error(format("last segment of message MSN %u on QN %u ends at MO %llu, but an earlier segment "
                                "reached %llu (the L segment must carry the highest MO)",
                                static_cast<unsigned>(h.msn), static_cast<unsigned>(h.queue), static_cast<ull>(end),
                                static_cast<ull>(m.max_end)));
        } else if (m.bytes != end) {
            header_error(format("message MSN %u on QN %u: %u segments carry %llu bytes, but the last one ends at "
                                "message offset %llu (missing or overlapping segments)",
                                static_cast<unsigned>(h.msn), static_cast<unsigned>(h.queue), m.segments,
                                static_cast<ull>(m.bytes), static_cast<ull>(end)));
        }
        q.open.erase(it);
    }

    // RFC 6581 §9.2/§9.3: in peer-to-peer mode the initiator's first FPDU is one of the RTR
    // indications the Reply offers (zero-length Send, Write or Read), or a Terminate.
    void rtr_check(Dir& d, const ddp::Header* h, std::size_t payload_len, const std::string& where,
                   const std::uint8_t* payload = nullptr) {
        d.expect_rtr = false;
        const mpa::RequestReply& rep = *d.conn->rep.reply;
        const char* kind = nullptr;
        bool offered = false;
        if (h != nullptr) {
            switch (h->opcode) {
                case ddp::Opcode::send:
                    if (payload_len == 0) {
                        kind = "zero-length Send";
                        offered = rep.zero_length_send_rtr;
                    }
                    break;
                case ddp::Opcode::rdma_write:
                    if (payload_len == 0) {
                        kind = "zero-length RDMA Write";
                        offered = rep.zero_length_write_rtr;
                    }
                    break;
                case ddp::Opcode::read_request:
                    if (payload != nullptr && payload_len >= ddp::kReadRequestSize && get_be32(payload + 12) == 0) {
                        kind = "zero-length RDMA Read Request";
                        offered = rep.zero_length_read_rtr;
                    }
                    break;
                case ddp::Opcode::terminate:
                    kind = "Terminate";
                    offered = true;
                    break;
                default: break;
            }
        }
        Conn& c = *d.conn;
        if (kind == nullptr) {
            conn_issue(c, Severity::error, Category::negotiation,
                       where + ": RFC 6581 peer-to-peer mode: the initiator's first FPDU must be an RTR indication "
                               "(zero-length Send, RDMA Write or RDMA Read), got " +
                           (h != nullptr ? std::string(opcode_name(static_cast<unsigned>(h->opcode))) +
                                               format(" with %zu payload bytes", payload_len)
                                         : std::string("an undecodable ULPDU")),
                       frame_no);
        } else if (!offered) {
            conn_issue(c, Severity::error, Category::negotiation,
                       where + ": RFC 6581 RTR indication " + kind + " was not offered in the MPA Reply", frame_no);
        }
    }

    // ---- end of capture

    void finish_direction(Conn& c, Dir& d) {
        // Holes: between delivered data and buffered data, and up to what FIN/ACK prove was sent.
        std::uint64_t pos = d.delivered;
        bool gap = false;
        auto hole = [&](std::uint64_t from, std::uint64_t to, const char* why) {
            gap = true;
            d.rep.missing_bytes += to - from;
            dir_issue(d, Severity::error, Category::tcp,
                      format("missing %llu bytes at seq %u (stream byte %llu)%s", static_cast<ull>(to - from),
                             static_cast<unsigned>(d.base + static_cast<std::uint32_t>(from)), static_cast<ull>(from),
                             why),
                      0);
        };
        std::uint64_t after_gap = 0;
        for (const auto& [start, bytes] : d.pending) {
            if (start > pos) hole(pos, start, "");
            const std::uint64_t end = start + bytes.size();
            if (end > pos) {
                after_gap += end - std::max(start, pos);
                pos = end;
            }
        }
        if (d.base_known) {
            std::uint64_t known_end = pos;
            if (d.fin) known_end = std::max(known_end, d.fin_rel);
            if (d.ack_known) known_end = std::max(known_end, d.fin ? std::min(d.acked, d.fin_rel) : d.acked);
            if (known_end > pos) hole(pos, known_end, d.fin ? " (before the FIN)" : " (acknowledged by the peer)");
        }
        d.rep.unchecked_bytes += after_gap;
        if (gap && after_gap != 0)
            dir_issue(d, Severity::warning, Category::tcp,
                      format("%llu captured bytes after the first hole are not checked", static_cast<ull>(after_gap)),
                      0);

        if (d.phase == Phase::waiting_peer) d.rep.unchecked_bytes += d.pre.size();
        if (d.phase == Phase::handshake && !d.pre.empty()) {
            conn_issue(c, Severity::error, Category::negotiation,
                       format("%s: stream ends inside the MPA Request/Reply (%zu bytes)", dir_name(d).c_str(),
                              d.pre.size()),
                       0);
        }
        const bool at_boundary = d.rdmatcp        ? d.conn->rdmatcp->at_segment_boundary(d.index)
                                 : d.ift_deframer ? d.ift_deframer->at_frame_boundary()
                                                  : d.deframer && d.deframer->at_fpdu_boundary();
        if (d.phase == Phase::full && !gap && !at_boundary) {
            const std::uint64_t have = bytes_consumed(d) - d.fpdu_start;
            std::string text = format("stream ends inside the %s at stream byte %llu: %llu bytes present",
                                      frame_word(d), static_cast<ull>(d.fpdu_start),
                                      static_cast<ull>(have));
            if (d.ift_deframer) {
                if (d.head_len >= ift::kPrefixSize)
                    text += format(", header_size %u and payload_size %u need %zu",
                                   static_cast<unsigned>(get_be16(d.head)), static_cast<unsigned>(get_be16(d.head + 2)),
                                   ift::frame_length_at(d.head, d.head_len));
            } else if (d.rdmatcp) {
                // the codec's Deframer holds the partial segment; its length is not reported here
            } else if (const auto ulen = pending_ulpdu_length(d)) {
                const std::size_t need =
                    mpa::fpdu_wire_length(*ulen, d.rep.markers, static_cast<std::uint32_t>(d.fpdu_start));
                text += format(", ULPDU_Length %zu needs %zu", *ulen, need);
            }
            if (d.fin || d.rep.rst)
                dir_issue(d, Severity::error, Category::framing, text + " (connection closed)", 0);
            else
                dir_issue(d, Severity::warning, Category::framing, text + " (capture ends)", 0);
        }
        for (const auto& [qn, q] : d.queues)
            for (const auto& [msn, m] : q.open)
                dir_issue(d, Severity::warning, Category::header,
                          format("message MSN %u on QN %u (from frame %llu) never got its last segment",
                                 static_cast<unsigned>(msn), static_cast<unsigned>(qn),
                                 static_cast<ull>(m.first_frame)),
                          0);
        if (d.stopped_by_error && d.rep.unchecked_bytes != 0 && !gap)
            dir_issue(d, Severity::warning, Category::framing,
                      format("%llu stream bytes after the error not checked", static_cast<ull>(d.rep.unchecked_bytes)),
                      0);
    }

    void finish_connection(Conn& c) {
        for (Dir& d : c.dir) finish_direction(c, d);
        const bool payload = c.dir[0].rep.stream_bytes + c.dir[1].rep.stream_bytes + c.dir[0].pending.size() +
                                 c.dir[1].pending.size() !=
                             0;
        if (!payload) {
            conn_issue(c, Severity::warning, Category::negotiation, "no TCP payload in either direction", 0);
        } else if (!c.rep.negotiated && !c.rep.rejected) {
            for (const Dir& d : c.dir) {
                const Dir& other = c.dir[1 - d.index];
                if (d.phase == Phase::waiting_peer && other.phase == Phase::handshake && other.pre.empty())
                    conn_issue(c, Severity::error, Category::negotiation,
                               format("%s sent an MPA %s but no %s came back", dir_name(d).c_str(),
                                      d.frame->request ? "Request" : "Reply", d.frame->request ? "Reply" : "Request"),
                               0);
            }
        }
        int init = c.initiator;
        c.rep.roles_from_mpa = init >= 0;
        if (init < 0) init = c.syn_sender >= 0 ? c.syn_sender : 0;
        c.rep.initiator_ip = c.ip[init];
        c.rep.initiator_port = c.port[init];
        c.rep.responder_ip = c.ip[1 - init];
        c.rep.responder_port = c.port[1 - init];
        c.rep.directions[kToResponder] = std::move(c.dir[init].rep);
        c.rep.directions[kToInitiator] = std::move(c.dir[1 - init].rep);
    }

    const CaptureReport& finish() {
        if (finished) return report;
        finished = true;
        if (report.frames == 0) capture_issue(Severity::error, "the capture holds no frame at all");
        for (auto& c : conns) {
            finish_connection(*c);
            report.connections.push_back(std::move(c->rep));
        }
        conns.clear();
        by_key.clear();
        return report;
    }
};

// ---------------------------------------------------------------------------------------------

StreamChecker::StreamChecker(const Options& options) : impl_(std::make_unique<Impl>(options)) {}
StreamChecker::~StreamChecker() = default;

void StreamChecker::add_frame(std::uint64_t time_ns, const std::uint8_t* data, std::size_t len,
                              std::size_t original_length) {
    impl_->add_frame(time_ns, data, len, original_length);
}

const CaptureReport& StreamChecker::finish() { return impl_->finish(); }

std::optional<CaptureReport> check_pcap_file(const std::string& path, const Options& options, std::string* error) {
    auto records = read_pcap(path, error);
    if (!records) return std::nullopt;
    StreamChecker checker(options);
    for (const PcapRecord& r : *records) checker.add_frame(r.time_ns, r.data.data(), r.data.size(), r.original_length);
    return checker.finish();
}

}  // namespace rnic::proto::check
