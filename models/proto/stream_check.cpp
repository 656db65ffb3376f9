// Capture checker: frames and TCP reassembly per direction, the issues, the end of the capture and
// the API. MPA negotiation and FPDU reframing are in stream_check_mpa.cpp, the DDP/RDMAP header
// checks in stream_check_ddp.cpp (stream_check_impl.h lists the parts).
#include "proto/stream_check.h"
#include "proto/stream_check_impl.h"
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

// Recomputes the TCP checksum (and with fix_ip the IPv4 header checksum) of a frame in place;
// false when the headers do not have a consistent layout or, without fix_ip, when the IPv4 header
// checksum is wrong (a damaged header rather than a checksum left to offload).
bool fix_checksums(std::vector<std::uint8_t>& f, bool fix_ip) {
    constexpr std::size_t kAt = net::kEthernetHeaderSize;
    if (f.size() < kAt + net::kIpv4HeaderSize) return false;
    std::uint8_t* ip = f.data() + kAt;
    const std::size_t ihl = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
    const std::size_t total = get_be16(ip + 2);
    if (ihl < net::kIpv4HeaderSize || total < ihl + net::kTcpBaseHeaderSize || kAt + total > f.size()) return false;
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

}  // namespace

using internal::make_key;

const char* to_string(severity s) {
    return s == severity::error ? "error" : "warning";
}

const char* to_string(category c) {
    switch (c) {
    case category::capture:
        return "capture";
    case category::tcp:
        return "tcp";
    case category::negotiation:
        return "negotiation";
    case category::reject:
        return "reject";
    case category::crc:
        return "crc";
    case category::framing:
        return "framing";
    case category::header:
        return "header";
    }
    return "unknown";
}

std::uint64_t connection_report::errors() const {
    std::uint64_t n = negotiation_errors;
    for (const auto& d : directions) n += d.bad_crcs + d.framing_errors + d.header_errors + d.tcp_errors;
    return n;
}

std::uint64_t connection_report::warnings() const {
    return warning_count + directions[0].warning_count + directions[1].warning_count;
}

std::uint64_t capture_report::errors() const {
    std::uint64_t n = capture_errors;
    for (const auto& c : connections) n += c.errors();
    return n;
}

std::uint64_t capture_report::warnings() const {
    std::uint64_t n = warning_count;
    for (const auto& c : connections) n += c.warnings();
    return n;
}

// ---------------------------------------------------------------------------------------------

void stream_checker::Impl::store(std::vector<issue>& list, severity sev, category cat, std::uint64_t frame,
                                 std::string text) {
    if (list.size() < opt.max_issues) list.push_back(issue{sev, cat, frame, std::move(text)});
}

void stream_checker::Impl::capture_issue(severity sev, std::string text) {
    if (sev == severity::error)
        ++report.capture_errors;
    else
        ++report.warning_count;
    store(report.issues, sev, category::capture, frame_no, std::move(text));
}

void stream_checker::Impl::conn_issue(Conn& c, severity sev, category cat, std::string text, std::uint64_t frame) {
    if (sev == severity::error)
        ++c.rep.negotiation_errors;
    else
        ++c.rep.warning_count;
    store(c.rep.issues, sev, cat, frame, std::move(text));
}

void stream_checker::Impl::dir_issue(dir_state& d, severity sev, category cat, std::string text, std::uint64_t frame) {
    if (sev == severity::error) {
        switch (cat) {
        case category::crc:
            ++d.rep.bad_crcs;
            break;
        case category::framing:
            ++d.rep.framing_errors;
            break;
        case category::header:
            ++d.rep.header_errors;
            break;
        case category::tcp:
            ++d.rep.tcp_errors;
            break;
        default:
            conn_issue(*d.conn, sev, cat, std::move(text), frame);
            return;
        }
    } else {
        ++d.rep.warning_count;
    }
    store(d.rep.issues, sev, cat, frame, std::move(text));
}

std::string stream_checker::Impl::dir_name(const dir_state& d) const {
    const Conn& c = *d.conn;
    return endpoint(c.ip[d.index], c.port[d.index]) + " -> " + endpoint(c.ip[1 - d.index], c.port[1 - d.index]);
}

void stream_checker::Impl::add_frame(std::uint64_t t, const std::uint8_t* data, std::size_t len,
                                     std::size_t original_length) {
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
        capture_issue(severity::error, format("frame %llu: only %zu of its %zu bytes were captured (snaplen)",
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
    std::optional<net::parsed_tcp_frame> fixed;
    if (fix_checksums(copy, true)) fixed = net::parse_tcp_frame(copy.data(), copy.size(), nullptr);
    if (!opt.verify_checksums) {
        if (!fixed) {
            capture_issue(severity::error, format("frame %llu: %s", static_cast<ull>(frame_no), error.c_str()));
            return;
        }
        process(*fixed, copy.data());
        return;
    }
    if (!fixed && ip_ok) {
        // Sound IPv4 header, yet no TCP segment can be read from it: not a checksum matter.
        capture_issue(severity::error, format("frame %llu: %s", static_cast<ull>(frame_no), error.c_str()));
        return;
    }
    const std::string what = format("frame %llu: %s; frame dropped", static_cast<ull>(frame_no), error.c_str());
    Conn* c = fixed ? existing_connection(*fixed) : nullptr;
    if (c == nullptr) {
        ++report.damaged_frames;
        capture_issue(severity::warning, what + " (it matches no connection of the capture)");
        return;
    }
    touch(*c);
    dir_issue(c->dir[direction_of(*c, *fixed)], severity::warning, category::tcp, what, frame_no);
}

bool stream_checker::Impl::ipv4_header_checksum_ok(const std::uint8_t* data, std::size_t len) {
    constexpr std::size_t kAt = net::kEthernetHeaderSize;
    if (len < kAt + net::kIpv4HeaderSize) return false;
    const std::size_t ihl = static_cast<std::size_t>(data[kAt] & 0x0F) * 4;
    if (ihl < net::kIpv4HeaderSize || kAt + ihl > len) return false;
    return net::internet_checksum(data + kAt, ihl) == 0;
}

stream_checker::Impl::Conn* stream_checker::Impl::existing_connection(const net::parsed_tcp_frame& p) {
    const auto it = by_key.find(make_key(p.ip.src, p.tcp.src_port, p.ip.dst, p.tcp.dst_port));
    return it == by_key.end() ? nullptr : it->second;
}

int stream_checker::Impl::direction_of(const Conn& c, const net::parsed_tcp_frame& p) const {
    return p.ip.src == c.ip[0] && p.tcp.src_port == c.port[0] ? 0 : 1;
}

bool stream_checker::Impl::has_traffic(const Conn& c) const {
    for (const dir_state& d : c.dir)
        if (d.rep.segments != 0 || d.fin || d.rep.rst) return true;
    return false;
}

stream_checker::Impl::Conn& stream_checker::Impl::new_connection(const net::parsed_tcp_frame& p, const conn_key& key) {
    auto c = std::make_unique<Conn>();
    c->ip[0] = p.ip.src;
    c->port[0] = p.tcp.src_port;
    c->ip[1] = p.ip.dst;
    c->port[1] = p.tcp.dst_port;
    c->rep.first_frame = frame_no;
    c->rep.first_time_ns = time_ns;
    for (dir_state& d : c->dir) d.rep.framing = opt.framing;
    Conn& ref = *c;
    conns.push_back(std::move(c));
    by_key[key] = &ref;
    return ref;
}

stream_checker::Impl::Conn& stream_checker::Impl::connection_for(const net::parsed_tcp_frame& p) {
    const conn_key key = make_key(p.ip.src, p.tcp.src_port, p.ip.dst, p.tcp.dst_port);
    auto it = by_key.find(key);
    if (it == by_key.end()) return new_connection(p, key);
    Conn& c = *it->second;
    // A new SYN (not a retransmitted one) on a used 4-tuple starts a new connection.
    const bool syn_only = (p.tcp.flags & net::tcp_flags::kSyn) != 0 && (p.tcp.flags & net::tcp_flags::kAck) == 0;
    if (syn_only) {
        const dir_state& d = c.dir[direction_of(c, p)];
        const bool same_syn = d.syn && d.isn == p.tcp.seq;  // a retransmitted SYN
        if (!same_syn && (d.syn || has_traffic(c))) return new_connection(p, key);
    }
    return c;
}

void stream_checker::Impl::touch(Conn& c) {
    c.rep.last_frame = frame_no;
    c.rep.last_time_ns = time_ns;
}

std::int64_t stream_checker::Impl::rel_of(const dir_state& d, std::uint32_t seq) {
    const std::uint32_t next = d.base + static_cast<std::uint32_t>(d.delivered);
    return static_cast<std::int64_t>(d.delivered) + static_cast<std::int32_t>(seq - next);
}

void stream_checker::Impl::process(const net::parsed_tcp_frame& p, const std::uint8_t* frame) {
    Conn& c = connection_for(p);
    touch(c);
    const int di = direction_of(c, p);
    dir_state& d = c.dir[di];
    dir_state& peer = c.dir[1 - di];
    const std::uint8_t flags = p.tcp.flags;
    const bool syn = (flags & net::tcp_flags::kSyn) != 0;
    const bool ack = (flags & net::tcp_flags::kAck) != 0;
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
    if ((flags & net::tcp_flags::kFin) != 0) {
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
    if ((flags & net::tcp_flags::kRst) != 0) d.rep.rst = true;
    if (ack && peer.base_known) {
        const std::int64_t r = rel_of(peer, p.tcp.ack);
        if (r >= 0 && (!peer.ack_known || static_cast<std::uint64_t>(r) > peer.acked)) {
            peer.acked = static_cast<std::uint64_t>(r);
            peer.ack_known = true;
        }
    }
}

void stream_checker::Impl::segment(dir_state& d, std::uint32_t seq, const std::uint8_t* data, std::size_t len) {
    if (!d.base_known) {
        d.base = seq;
        d.base_known = true;
    }
    std::int64_t rel = rel_of(d, seq);
    if (d.fin && rel + static_cast<std::int64_t>(len) > static_cast<std::int64_t>(d.fin_rel)) {
        dir_issue(d, severity::warning, category::tcp,
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

void stream_checker::Impl::deliver(dir_state& d, const std::uint8_t* data, std::size_t len) {
    d.delivered += len;
    d.rep.stream_bytes += len;
    switch (d.phase) {
    case phase::stopped:
        d.rep.unchecked_bytes += len;
        break;
    case phase::handshake:
        d.pre.insert(d.pre.end(), data, data + len);
        parse_request_reply(d);
        break;
    case phase::waiting_peer:
        d.pre.insert(d.pre.end(), data, data + len);
        break;
    case phase::full:
        feed(d, data, len);
        break;
    }
}

void stream_checker::Impl::stop(dir_state& d, bool by_error) {
    d.phase = phase::stopped;
    d.stopped_by_error = by_error;
    d.rep.unchecked_bytes += d.pre.size();
    d.pre.clear();
    d.pre.shrink_to_fit();
}

void stream_checker::Impl::finish_direction(Conn& c, dir_state& d) {
    // Holes: between delivered data and buffered data, and up to what FIN/ACK prove was sent.
    std::uint64_t pos = d.delivered;
    bool gap = false;
    auto hole = [&](std::uint64_t from, std::uint64_t to, const char* why) {
        gap = true;
        d.rep.missing_bytes += to - from;
        dir_issue(d, severity::error, category::tcp,
                  format("missing %llu bytes at seq %u (stream byte %llu)%s", static_cast<ull>(to - from),
                         static_cast<unsigned>(d.base + static_cast<std::uint32_t>(from)), static_cast<ull>(from), why),
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
        dir_issue(d, severity::warning, category::tcp,
                  format("%llu captured bytes after the first hole are not checked", static_cast<ull>(after_gap)), 0);

    if (d.phase == phase::waiting_peer) d.rep.unchecked_bytes += d.pre.size();
    if (d.phase == phase::handshake && !d.pre.empty()) {
        conn_issue(
            c, severity::error, category::negotiation,
            format("%s: stream ends inside the MPA Request/Reply (%zu bytes)", dir_name(d).c_str(), d.pre.size()), 0);
    }
    const bool at_boundary = d.rdmatcp        ? d.conn->rdmatcp->at_segment_boundary(d.index)
                             : d.ift_deframer ? d.ift_deframer->at_frame_boundary()
                                              : d.deframer && d.deframer->at_fpdu_boundary();
    if (d.phase == phase::full && !gap && !at_boundary) {
        const std::uint64_t have = bytes_consumed(d) - d.fpdu_start;
        std::string text = format("stream ends inside the %s at stream byte %llu: %llu bytes present", frame_word(d),
                                  static_cast<ull>(d.fpdu_start), static_cast<ull>(have));
        if (d.ift_deframer) {
            if (d.head_len >= ift::kPrefixSize)
                text += format(", header_size %u and payload_size %u need %zu", static_cast<unsigned>(get_be16(d.head)),
                               static_cast<unsigned>(get_be16(d.head + 2)), ift::frame_length_at(d.head, d.head_len));
        } else if (d.rdmatcp) {
            // the codec's Deframer holds the partial segment; its length is not reported here
        } else if (const auto ulen = pending_ulpdu_length(d)) {
            const std::size_t need =
                mpa::fpdu_wire_length(*ulen, d.rep.markers, static_cast<std::uint32_t>(d.fpdu_start));
            text += format(", ULPDU_Length %zu needs %zu", *ulen, need);
        }
        if (d.fin || d.rep.rst)
            dir_issue(d, severity::error, category::framing, text + " (connection closed)", 0);
        else
            dir_issue(d, severity::warning, category::framing, text + " (capture ends)", 0);
    }
    for (const auto& [qn, q] : d.queues)
        for (const auto& [msn, m] : q.open)
            dir_issue(d, severity::warning, category::header,
                      format("message MSN %u on QN %u (from frame %llu) never got its last segment",
                             static_cast<unsigned>(msn), static_cast<unsigned>(qn), static_cast<ull>(m.first_frame)),
                      0);
    if (d.stopped_by_error && d.rep.unchecked_bytes != 0 && !gap)
        dir_issue(d, severity::warning, category::framing,
                  format("%llu stream bytes after the error not checked", static_cast<ull>(d.rep.unchecked_bytes)), 0);
}

void stream_checker::Impl::finish_connection(Conn& c) {
    for (dir_state& d : c.dir) finish_direction(c, d);
    const bool payload =
        c.dir[0].rep.stream_bytes + c.dir[1].rep.stream_bytes + c.dir[0].pending.size() + c.dir[1].pending.size() != 0;
    if (!payload) {
        conn_issue(c, severity::warning, category::negotiation, "no TCP payload in either direction", 0);
    } else if (!c.rep.negotiated && !c.rep.rejected) {
        for (const dir_state& d : c.dir) {
            const dir_state& other = c.dir[1 - d.index];
            if (d.phase == phase::waiting_peer && other.phase == phase::handshake && other.pre.empty())
                conn_issue(c, severity::error, category::negotiation,
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
    c.rep.directions[k_to_responder] = std::move(c.dir[init].rep);
    c.rep.directions[k_to_initiator] = std::move(c.dir[1 - init].rep);
}

const capture_report& stream_checker::Impl::finish() {
    if (finished) return report;
    finished = true;
    if (report.frames == 0) capture_issue(severity::error, "the capture holds no frame at all");
    for (auto& c : conns) {
        finish_connection(*c);
        report.connections.push_back(std::move(c->rep));
    }
    conns.clear();
    by_key.clear();
    return report;
}

// ---------------------------------------------------------------------------------------------

stream_checker::stream_checker(const options& options) : impl_(std::make_unique<Impl>(options)) {}
stream_checker::~stream_checker() = default;

void stream_checker::add_frame(std::uint64_t time_ns, const std::uint8_t* data, std::size_t len,
                               std::size_t original_length) {
    impl_->add_frame(time_ns, data, len, original_length);
}

const capture_report& stream_checker::finish() {
    return impl_->finish();
}

std::optional<capture_report> check_pcap_file(const std::string& path, const options& options, std::string* error) {
    auto records = read_pcap(path, error);
    if (!records) return std::nullopt;
    stream_checker checker(options);
    for (const pcap_record& r : *records) checker.add_frame(r.time_ns, r.data.data(), r.data.size(), r.original_length);
    return checker.finish();
}

}  // namespace rnic::proto::check
