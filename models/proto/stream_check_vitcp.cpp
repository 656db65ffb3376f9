#include "proto/stream_check_vitcp.h"

#include <algorithm>
#include <iterator>
#include <sstream>
#include <tuple>

#include "proto/bytes.h"
#include "proto/net.h"
#include "proto/seeds/vitcp_ce.h"

namespace rnic::proto::check {

namespace vt = proto::vitcp;
namespace map = proto::vitcp_map;

namespace {

const char* kDirName[2] = {"active -> passive", "passive -> active"};

std::string ip_text(std::uint32_t ip) {
    return std::to_string(ip >> 24) + "." + std::to_string(ip >> 16 & 0xff) + "." + std::to_string(ip >> 8 & 0xff) +
           "." + std::to_string(ip & 0xff);
}

// --no-checksum: a frame whose IPv4 or TCP checksum is wrong is taken as if it were right.
bool fix_checksums(std::vector<std::uint8_t>& f) {
    constexpr std::size_t kIp = net::kEthernetHeaderSize;
    if (f.size() < kIp + net::kIpv4HeaderSize) return false;
    const std::size_t ihl = static_cast<std::size_t>(f[kIp] & 0x0F) * 4;
    const std::size_t total = get_be16(f.data() + kIp + 2);
    if (ihl < net::kIpv4HeaderSize || kIp + total > f.size() || total < ihl + 20) return false;
    put_be16(f.data() + kIp + 10, 0);
    put_be16(f.data() + kIp + 10, net::internet_checksum(f.data() + kIp, ihl));
    std::uint8_t* th = f.data() + kIp + ihl;
    const std::size_t tcp_len = total - ihl;
    put_be16(th + 16, 0);
    const std::uint32_t src = get_be32(f.data() + kIp + 12), dst = get_be32(f.data() + kIp + 16);
    const std::uint32_t pseudo =
        (src >> 16) + (src & 0xFFFF) + (dst >> 16) + (dst & 0xFFFF) + f[kIp + 9] + static_cast<std::uint32_t>(tcp_len);
    const std::uint32_t sum = net::checksum_partial(th, tcp_len, pseudo);
    put_be16(th + 16, static_cast<std::uint16_t>(~sum & 0xFFFFu));
    return true;
}

}  // namespace

std::size_t vi_tcp_capture_report::error_count() const {
    std::size_t n = errors.size();
    for (const auto& c : connections) n += c.errors.size();
    return n;
}

// ---------------------------------------------------------------------------------------------
// One connection's two byte streams

void vi_tcp_streams::error(int dir, const std::string& text, bool crc) {
    const std::string full = std::string(dir >= 0 ? kDirName[dir] : "connection") + ": " + text;
    rep_.errors.push_back(full);
    if (crc) rep_.crc_errors.push_back(full);
    if (dir >= 0) {
        dirs_[dir].failed = true;
        // The other direction's Read Window check counts Read Requests answered in this one; with
        // this one unchecked from here that count stops, so the check would report a follow-on.
        dirs_[1 - dir].receiver.read_window = 0xFFFF;
    }
}

void vi_tcp_streams::feed(int dir, const std::uint8_t* data, std::size_t len) {
    dir_state& d = dirs_[dir];
    rep_.dir[dir].bytes += len;
    if (d.failed || ce_failed_) {
        rep_.dir[dir].unchecked_bytes += len;
        return;
    }
    if (!d.ce_done) {
        d.pending.insert(d.pending.end(), data, data + len);
        try_ce();
        return;
    }
    this->data(dir, data, len);
}

void vi_tcp_streams::try_ce() {
    // §4.1: the ConnectRequest of the side that opened TCP comes first; the answer follows it.
    dir_state& a = dirs_[0];
    dir_state& p = dirs_[1];
    if (!request_) {
        if (!p.pending.empty() && a.pending.empty()) {
            ce_failed_ = true;
            rep_.ce = "the passive side sent first";
            error(1,
                  "stream byte 0: bytes before any ConnectRequest (§4.1: the active side sends the ConnectRequest "
                  "first)");
            return;
        }
        const std::size_t need = vitcp_ce::ce_segment_length(a.pending.data(), a.pending.size());
        if (need == 0 || a.pending.size() < need) return;
        std::string why;
        const auto seg = vt::decode(a.pending.data(), need, false, &why);
        if (!seg || seg->header.type != vt::segment_type::connect_request) {
            ce_failed_ = true;
            rep_.ce = "no ConnectRequest";
            error(0, "stream byte 0: not a VI/TCP ConnectRequest (" +
                         (seg ? std::string("a ") + vt::to_string(seg->header.type) : why) +
                         "); a VI/TCP capture (rnic.framing=vitcp)? try --framing mpa");
            return;
        }
        request_ = seg->ce;
        request_len_ = need;
    }
    const std::size_t need = vitcp_ce::ce_segment_length(p.pending.data(), p.pending.size());
    if (need == 0 || p.pending.size() < need) return;
    std::string why;
    const auto seg = vt::decode(p.pending.data(), need, false, &why);
    if (!seg) {
        ce_failed_ = true;
        rep_.ce = "bad answer";
        error(1, "stream byte 0: bad answer to the ConnectRequest: " + why);
        return;
    }
    switch (seg->header.type) {
    case vt::segment_type::connect_accept: {
        const auto g = vt::negotiate(*request_, *seg->ce, &why);
        if (!g) {
            ce_failed_ = true;
            rep_.ce = "ConnectAccept does not fit the ConnectRequest";
            error(1, "stream byte 0: ConnectAccept does not fit the ConnectRequest: " + why);
            return;
        }
        const auto level = vitcp_ce::reliability_of(request_->attributes);
        acknowledging_ = level == vitcp_ce::reliability::reliable_reception;
        rep_.connected = true;
        rep_.crc = g->crc;
        rep_.ce = std::string("ConnectRequest -> ConnectAccept: ") + (level ? vitcp_ce::to_string(*level) : "?") +
                  ", MTU " + std::to_string(g->mtu) + ", RDMA Read Window " + std::to_string(g->rdma_read_window) +
                  ", CRC " + (g->crc ? "on" : "off") +
                  (g->request_urgent_marker || g->accept_urgent_marker ? ", Urgent Marker offered" : "");
        for (int d = 0; d < 2; ++d) dirs_[d].receiver.read_window = g->rdma_read_window;
        // §3.7: "the end receiving the Urgent Marker Option MAY designate": the active side after
        // the Accept's option, the passive side after the Request's.
        a.may_mark = g->accept_urgent_marker;
        p.may_mark = g->request_urgent_marker;
        break;
    }
    case vt::segment_type::connect_reject:
    case vt::segment_type::connect_no_match: {
        refused_ = true;
        const auto code = static_cast<vitcp_ce::refusal>(seg->header.remote_error.is_error_code);
        rep_.ce = std::string("ConnectRequest -> ") + vt::to_string(seg->header.type) +
                  (seg->header.type == vt::segment_type::connect_reject
                       ? std::string(" (IS Error Code ") + std::to_string(seg->header.remote_error.is_error_code) +
                             ": " + vitcp_ce::to_string(code) + ")"
                       : std::string());
        break;
    }
    default:
        ce_failed_ = true;
        rep_.ce = "no answer";
        error(1, std::string("stream byte 0: expected ConnectAccept, ConnectReject or ConnectNoMatch, got ") +
                     vt::to_string(seg->header.type));
        return;
    }
    // Both CE segments are known: what follows them in each direction is data (or, after a
    // refusal, must not be there: §4.2/§4.3 close TCP).
    std::vector<std::uint8_t> rest[2] = {
        std::vector<std::uint8_t>(a.pending.begin() + static_cast<std::ptrdiff_t>(request_len_), a.pending.end()),
        std::vector<std::uint8_t>(p.pending.begin() + static_cast<std::ptrdiff_t>(need), p.pending.end())};
    a.base = request_len_;
    p.base = need;
    for (int d = 0; d < 2; ++d) {
        dirs_[d].pending.clear();
        dirs_[d].ce_done = true;
    }
    start_data();
    for (int d = 0; d < 2; ++d) {
        if (!rest[d].empty()) data(d, rest[d].data(), rest[d].size());
    }
}

void vi_tcp_streams::start_data() {
    for (int d = 0; d < 2; ++d) {
        vt::deframer::config cfg;
        cfg.crc_negotiated = rep_.crc;
        dirs_[d].receiver.crc = rep_.crc;
        dirs_[d].deframer =
            std::make_unique<vt::deframer>(cfg, [this, d](const vt::segment_view& seg) { on_segment(d, seg); });
    }
}

void vi_tcp_streams::data(int dir, const std::uint8_t* p, std::size_t len) {
    dir_state& d = dirs_[dir];
    if (d.failed) {
        rep_.dir[dir].unchecked_bytes += len;
        return;
    }
    if (refused_) {
        error(dir,
              std::to_string(len) + " bytes after the refused CE exchange (§4.2, §4.3: the TCP connection closes)");
        rep_.dir[dir].unchecked_bytes += len;
        return;
    }
    const std::uint64_t before = d.deframer->bytes_consumed();
    const vt::error_code e = d.deframer->feed(p, len);
    if (e != vt::error_code::none && !d.failed) {
        error(dir,
              "VI segment at stream byte " + std::to_string(d.offset) + " (after the CE segment): " + vt::to_string(e) +
                  ": " + d.deframer->error_detail(),
              e == vt::error_code::crc_mismatch);
    }
    if (d.failed) {
        const std::uint64_t used = d.deframer->bytes_consumed() - before;
        rep_.dir[dir].unchecked_bytes += len > used ? len - used : 0;
    }
}

void vi_tcp_streams::on_segment(int dir, const vt::segment_view& seg) {
    dir_state& d = dirs_[dir];
    if (d.failed) return;
    const std::uint64_t at = d.offset;
    d.offset += seg.wire_length;
    d.starts.insert(d.base + at);
    std::string why;
    std::vector<std::uint8_t> immediate;
    if (!map::accept_in_order(d.receiver, seg, ulpdu_, &why, &immediate)) {
        error(dir, "VI segment at stream byte " + std::to_string(at) + " (after the CE segment): " + why);
        return;
    }
    if (acknowledging_) {
        check_ack(dir, seg, at);
        if (d.failed) return;
        if (vitcp_ack::acknowledged(seg.header.type) && seg.header.eom)
            d.completed.push_back(seg.header.message_number);
    }
    dir_state& other = dirs_[1 - dir];
    if (seg.header.type == vt::segment_type::read_request) {
        // The other direction carries its response, with this number (§3.2).
        other.receiver.tx_read_requests.push_back({seg.header.message_number, 0, 0});
    }
    if (seg.header.type == vt::segment_type::read_response && seg.header.eom &&
        !other.receiver.rx_read_requests.empty()) {
        other.receiver.rx_read_requests.pop_front();  // answered: a place in the Read Window again
    }
    vi_tcp_direction_report& r = rep_.dir[dir];
    ++r.segments;
    r.payload_bytes += seg.payload_len;
    ++r.by_type[vt::to_string(seg.header.type)];
}

void vi_tcp_streams::check_ack(int dir, const vt::segment_view& seg, std::uint64_t at) {
    dir_state& d = dirs_[dir];
    dir_state& other = dirs_[1 - dir];
    const vt::header& h = seg.header;
    // An error report names the message in error (§3.2), which need not be complete; the connection
    // then closes, and no later report counts.
    if (h.remote_error.pack() != 0 || h.message_ack == d.last_ack) return;
    // A new value: the last message the other direction completed that this side acknowledges,
    // every one before it included. 0 before any (the draft has no "none yet") is never new.
    const auto it = std::find(other.completed.begin(), other.completed.end(), h.message_ack);
    if (it == other.completed.end()) {
        error(dir, "VI segment at stream byte " + std::to_string(at) + " (after the CE segment): Message ACK " +
                       std::to_string(h.message_ack) + " (after " + std::to_string(d.last_ack) +
                       ") names no message the other direction had completed and not yet had acknowledged "
                       "(§3.2 Reliable Reception)");
        return;
    }
    other.completed.erase(other.completed.begin(), std::next(it));
    d.last_ack = h.message_ack;
}

void vi_tcp_streams::urgent(int dir, std::uint64_t stream_offset, std::uint64_t frame_no) {
    dirs_[dir].urgent.emplace_back(stream_offset, frame_no);
}

void vi_tcp_streams::check_urgent(int dir) {
    dir_state& d = dirs_[dir];
    const std::uint64_t checked_end = d.base + d.offset;  // segments up to here passed every check
    std::set<std::uint64_t> reported;
    for (const auto& [at, frame] : d.urgent) {
        if (!reported.insert(at).second) continue;  // a retransmission repeats the same claim
        ++rep_.dir[dir].urgent_marks;
        const std::string where =
            "frame " + std::to_string(frame) + ": URG with the urgent pointer at stream byte " + std::to_string(at);
        if (!d.may_mark) {
            // §3.7: "Unless and until the Urgent Marker Option was received from the remote end ..., no
            // TCP data may be designated as urgent."
            rep_.errors.push_back(std::string(kDirName[dir]) + ": " + where +
                                  ", but the other end's CE segment did not carry the Urgent Marker option (§3.7)");
            continue;
        }
        if (at < d.base || at >= checked_end) continue;  // the CE segment, or bytes the checks did not reach
        if (d.starts.count(at) == 0) {
            // §3.7: "MUST never designate any data other than the first byte of a VI segment as urgent"; the
            // pointer names the urgent byte itself, not the one after it (RFC 1122 §4.2.2.4).
            const auto next = d.starts.upper_bound(at);
            const auto prev = next == d.starts.begin() ? d.starts.end() : std::prev(next);
            std::string near;
            if (prev != d.starts.end()) near = "; the VI segment around it starts at byte " + std::to_string(*prev);
            rep_.errors.push_back(std::string(kDirName[dir]) + ": " + where +
                                  ", which is not the first byte of a VI segment (§3.7)" + near);
        }
    }
}

void vi_tcp_streams::finish() {
    for (int d = 0; d < 2; ++d) check_urgent(d);
    if (!ce_failed_ && !dirs_[0].ce_done) {
        rep_.ce = request_ ? "ConnectRequest without an answer" : "no ConnectRequest";
        if (!dirs_[0].pending.empty() || !dirs_[1].pending.empty()) {
            error(-1, "the capture ends inside the CE exchange (" + rep_.ce + ")");
        }
        return;
    }
    for (int d = 0; d < 2; ++d) {
        const dir_state& x = dirs_[d];
        if (x.failed || !x.deframer || x.deframer->at_segment_boundary()) continue;
        error(d, "the capture ends inside the VI segment at stream byte " + std::to_string(x.offset) +
                     " (after the CE segment)");
    }
}

// ---------------------------------------------------------------------------------------------
// The capture

namespace {

struct half {
    bool syn = false;
    std::uint32_t isn = 0;
    std::uint64_t next = 0;                                    // next in-order stream offset
    std::map<std::uint64_t, std::vector<std::uint8_t>> ahead;  // out-of-order data by offset
};

struct conn {
    vi_tcp_connection_report rep;  // copied into the capture's report at the end (streams point here)
    std::uint32_t ip[2] = {};
    std::uint16_t port[2] = {};
    half h[2];
    std::unique_ptr<vi_tcp_streams> streams;
};

}  // namespace

vi_tcp_capture_report check_vitcp_capture(const std::vector<pcap_record>& records, bool verify_checksums) {
    vi_tcp_capture_report report;
    std::map<std::tuple<std::uint32_t, std::uint16_t, std::uint32_t, std::uint16_t>, std::unique_ptr<conn>> conns;
    std::vector<conn*> order;
    for (const pcap_record& rec : records) {
        ++report.frames;
        const std::uint64_t frame_no = report.frames;
        if (net::frame_ethertype(rec.data.data(), rec.data.size()) != net::kEtherTypeIpv4) continue;
        std::string why;
        std::vector<std::uint8_t> copy;
        auto parsed = net::parse_tcp_frame(rec.data.data(), rec.data.size(), &why);
        const std::uint8_t* bytes = rec.data.data();
        if (!parsed && !verify_checksums) {
            copy = rec.data;
            if (fix_checksums(copy)) parsed = net::parse_tcp_frame(copy.data(), copy.size(), &why);
            bytes = copy.data();
        }
        if (!parsed) {
            report.errors.push_back("frame " + std::to_string(frame_no) + ": " + why +
                                    (verify_checksums ? " (--no-checksum takes frames with bad checksums)" : ""));
            continue;
        }
        ++report.tcp_frames;
        const net::tcp_header& t = parsed->tcp;
        const auto key = std::make_tuple(parsed->ip.src, t.src_port, parsed->ip.dst, t.dst_port);
        const auto rkey = std::make_tuple(parsed->ip.dst, t.dst_port, parsed->ip.src, t.src_port);
        conn* c = nullptr;
        int dir = 0;
        if (auto it = conns.find(key); it != conns.end()) {
            c = it->second.get();
            dir = 0;
        } else if (auto r = conns.find(rkey); r != conns.end()) {
            c = r->second.get();
            dir = 1;
        } else {
            const bool syn = (t.flags & net::tcp_flags::kSyn) != 0, ack = (t.flags & net::tcp_flags::kAck) != 0;
            if (!syn || ack) {
                if (parsed->payload_len > 0) {
                    report.errors.push_back("frame " + std::to_string(frame_no) + ": " + ip_text(parsed->ip.src) + ":" +
                                            std::to_string(t.src_port) +
                                            " sends data on a connection whose SYN the capture does not hold");
                }
                continue;
            }
            auto fresh = std::make_unique<conn>();
            fresh->ip[0] = parsed->ip.src;
            fresh->port[0] = t.src_port;
            fresh->ip[1] = parsed->ip.dst;
            fresh->port[1] = t.dst_port;
            fresh->rep.name = ip_text(fresh->ip[0]) + ":" + std::to_string(fresh->port[0]) + " -> " +
                              ip_text(fresh->ip[1]) + ":" + std::to_string(fresh->port[1]);
            fresh->streams = std::make_unique<vi_tcp_streams>(fresh->rep);
            c = fresh.get();
            order.push_back(c);
            conns.emplace(key, std::move(fresh));
        }
        half& h = c->h[dir];
        if ((t.flags & net::tcp_flags::kSyn) != 0) {
            if (!h.syn) {
                h.syn = true;
                h.isn = t.seq;
            }
            continue;  // our TCP puts no data on a SYN
        }
        if (!h.syn || parsed->payload_len == 0) continue;
        const std::uint64_t off = static_cast<std::uint32_t>(t.seq - h.isn - 1);
        if ((t.flags & net::tcp_flags::kUrg) != 0) c->streams->urgent(dir, off + t.urgent_pointer, frame_no);
        const std::uint8_t* payload = bytes + parsed->payload_offset;
        std::size_t len = parsed->payload_len;
        if (off + len <= h.next) continue;  // a retransmission of what is in already
        if (off > h.next) {
            h.ahead[off].assign(payload, payload + len);
            continue;
        }
        const std::size_t skip = static_cast<std::size_t>(h.next - off);
        c->streams->feed(dir, payload + skip, len - skip);
        h.next = off + len;
        for (auto it = h.ahead.begin(); it != h.ahead.end() && it->first <= h.next;) {
            const std::uint64_t end = it->first + it->second.size();
            if (end > h.next) {
                const std::size_t s = static_cast<std::size_t>(h.next - it->first);
                c->streams->feed(dir, it->second.data() + s, it->second.size() - s);
                h.next = end;
            }
            it = h.ahead.erase(it);
        }
    }
    for (conn* c : order) {
        c->streams->finish();
        for (int d = 0; d < 2; ++d) {
            if (!c->h[d].ahead.empty()) {
                c->rep.errors.push_back(std::string(kDirName[d]) + ": a hole at stream byte " +
                                        std::to_string(c->h[d].next) + " that the capture never fills");
            }
        }
        report.connections.push_back(c->rep);
    }
    return report;
}

std::string format_vitcp_report(const vi_tcp_capture_report& r, bool verbose) {
    std::ostringstream o;
    o << "VI/TCP (seed 003): " << r.frames << " frames, " << r.tcp_frames << " TCP, " << r.connections.size()
      << " connection(s)\n";
    for (const std::string& e : r.errors) o << "  error: " << e << "\n";
    for (const vi_tcp_connection_report& c : r.connections) {
        o << "connection " << c.name << "\n  CE: " << (c.ce.empty() ? "none" : c.ce) << "\n";
        for (int d = 0; d < 2; ++d) {
            const vi_tcp_direction_report& x = c.dir[d];
            o << "  " << kDirName[d] << ": " << x.bytes << " stream bytes, " << x.segments << " VI segments checked, "
              << x.payload_bytes << " payload bytes";
            if (x.unchecked_bytes != 0) o << ", " << x.unchecked_bytes << " bytes unchecked";
            if (x.urgent_marks != 0) o << ", " << x.urgent_marks << " urgent marks (§3.7)";
            o << "\n";
            if (verbose) {
                for (const auto& [type, n] : x.by_type) o << "    " << type << ": " << n << "\n";
            }
        }
        for (const std::string& e : c.errors) o << "  error: " << e << "\n";
    }
    o << (r.error_count() == 0 ? "OK" : std::to_string(r.error_count()) + " error(s)") << "\n";
    return o.str();
}

}  // namespace rnic::proto::check
