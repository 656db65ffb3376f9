#include "toe/tcp_engine.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/mem_access.h"
#include "core/sim_log.h"
#include "core/stream.h"
#include "toe/tcp_engine_connection.h"

namespace rnic {

using toe_detail::time_ns;

tcp_engine::tcp_engine(const sc_core::sc_module_name& name, const tcp_engine_params& params, buffer_memory& buffer,
                       const framing& framing)
    : sc_module(name),
      stream_tx_in("stream_tx_in"),
      stream_rx_out("stream_rx_out"),
      eth_tx("eth_tx"),
      eth_rx("eth_rx"),
      buf_out("buf_out"),
      dma_out("dma_out"),
      ctl_in("ctl_in"),
      conn_events_out("conn_events_out"),
      tx_progress_out("tx_progress_out"),
      ooo_out("ooo_out"),
      reasm_in("reasm_in"),
      tx_wire_(params.tx_order),
      params_(params),
      buffer_(buffer),
      reassembly_(buffer),
      framing_(framing),
      tx_pipe_(params.tx_order),
      placing_(params.rx_placement_backlog),
      rng_state_(params.seed * 0x9e3779b97f4a7c15ULL + 1) {
    stream_tx_in.register_b_transport(this, &tcp_engine::stream_tx_b_transport);
    eth_rx.register_b_transport(this, &tcp_engine::eth_rx_b_transport);
    ctl_in.bind(*this);
    reasm_in.bind(reassembly_);
    SC_HAS_PROCESS(tcp_engine);
    SC_METHOD(timer_method);
    sensitive << timer_event_;
    dont_initialize();
    if (params_.honour_pause) {
        SC_METHOD(mac_tx_method);
        sensitive << mac_tx_event_;
        dont_initialize();
    }
    if (params_.tx_ahead_frames > 0) {
        SC_METHOD(tx_ready_method);
        sensitive << tx_ready_event_;
        dont_initialize();
    }
}

tcp_engine::~tcp_engine() = default;

std::uint64_t tcp_engine::next_iss() {
    // splitmix64: deterministic per seed, independent of the library's distributions.
    std::uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint64_t tcp_engine::tcp_send_stream_end(std::uint32_t conn) const {
    const connection* c = find(conn);
    return c != nullptr ? c->appended() : 0;
}

std::size_t tcp_engine::tcp_send_space(std::uint32_t conn) const {
    const connection* c = find(conn);
    if (c == nullptr) return 0;
    // With shared send regions the memory the connections share bounds every stream too.
    const std::size_t space =
        static_cast<std::size_t>(std::min<std::uint64_t>(c->tcp().send_space(), buffer_.send_free()));
    if (!params_.retransmit_from_host) return space;
    // Data is fetched from the host just in time: only what the windows let TCP send now (plus one
    // segment), so unsent data does not sit in NIC buffer memory either.
    const tcp::connection& t = c->tcp();
    const std::uint64_t window = std::min<std::uint64_t>(t.cwnd(), t.send_window()) + t.effective_mss();
    const std::uint64_t limit = t.send_stream_acked() + window;
    const std::uint64_t queued = c->appended();
    return queued >= limit ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>(space, limit - queued));
}

void tcp_engine::count_live(std::uint32_t* live, std::uint32_t* time_wait) const {
    *live = 0;
    *time_wait = 0;
    for (const auto& c : conns_) {
        if (!c) continue;
        ++*live;
        *time_wait += c->tcp().state() == tcp::state::time_wait;
    }
}

std::uint16_t tcp_engine::tcp_effective_mss(std::uint32_t conn) const {
    const connection* c = find(conn);
    return c == nullptr ? 0 : static_cast<std::uint16_t>(c->tcp().effective_mss());
}

tcp_addresses tcp_engine::tcp_addresses_of(std::uint32_t conn) const {
    tcp_addresses a;
    if (const connection* c = find(conn)) {
        a.local_ip = station_.ip;
        a.remote_ip = c->remote_ip();
        a.local_port = c->local_port();
        a.remote_port = c->remote_port();
    }
    return a;
}

std::uint16_t tcp_engine::tcp_local_port(std::uint32_t conn) const {
    const connection* c = find(conn);
    return c == nullptr ? 0 : c->local_port();
}

void tcp_engine::tcp_one_fpdu_per_segment(std::uint32_t conn, bool on) {
    if (connection* c = find(conn)) c->tcp().set_one_boundary_per_segment(on);
}

void tcp_engine::tcp_mark_urgent(std::uint32_t conn) {
    if (connection* c = find(conn)) c->urgent.start(c->appended());
}

void tcp_engine::stream_tx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    stream_ext* ext = get_stream_ext(gp);
    connection* c = ext != nullptr ? find(ext->conn) : nullptr;
    const std::size_t len = gp.get_data_length();
    if (c == nullptr || len > c->tcp().send_space() || len > buffer_.send_free()) {
        RNIC_MLOG_D(
            error, toe, delay,
            "stream_tx_in: " << (c == nullptr ? "unknown connection" : "no send space") << " for " << len << " bytes");
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    if (params_.retransmit_from_host) {
        connection::fpdu_record r;
        r.stream_off = c->appended();
        r.length = static_cast<std::uint32_t>(len);
        const refetch_ext* refetch = find_ext<refetch_ext>(gp);
        if (refetch != nullptr && refetch->host_addr != 0 && refetch->header_len <= sizeof r.header) {
            r.host_addr = refetch->host_addr;
            r.payload_len = refetch->host_len;
            r.header_len = refetch->header_len;
            std::memcpy(r.header, refetch->header, refetch->header_len);
            r.fpdu_pos = refetch->frame_pos;
            // The framing's per-connection state (RDMA/TCP, VI/TCP) is keyed by the connection.
            r.options = {refetch->markers, refetch->crc, ext->conn};
        }
        c->records.push_back(r);
    }
    c->urgent.segment_start(c->appended());  // each append is one frame (VI/TCP: one VI segment)
    c->append(gp.get_data_ptr(), len, delay);
    if (params_.tx_ahead_frames > 0) c->appended_at.emplace_back(c->appended(), sim_now() + delay);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    if (c->in_callback > 0) {
        // Appended from inside one of this connection's own callbacks (e.g. a Terminate sent while
        // a segment is being delivered): the state machine takes it when that call returns.
        c->deferred += len;
        return;
    }
    c->ctx_delay = delay;
    // Segments end on FPDU boundaries when possible (RFC 5044 §5).
    c->tcp().mark_boundary(c->appended());
    c->tcp().on_send_data(time_ns(sim_now() + delay), len);
    reschedule_timer();
}

void tcp_engine::transmit_segment(connection& c, const net::tcp_header& header, std::uint64_t stream_offset,
                                  std::size_t len) {
    sc_core::sc_time delay = c.ctx_delay;
    // When the frame was decided (as may_transmit counted the frames ahead): a retransmission now.
    const sc_core::sc_time decided = stream_offset >= c.sent_high ? decision_time(c) : sim_now() + delay;
    if (params_.tx_ahead_frames > 0 && len > 0 && stream_offset >= c.sent_high) {
        // New data built when the link had room: not before its last byte was appended.
        while (!c.appended_at.empty() && c.appended_at.front().first <= stream_offset) c.appended_at.pop_front();
        for (const auto& [end, at] : c.appended_at) {
            if (end < stream_offset + len) continue;
            if (at > sim_now() + delay) delay = at - sim_now();
            break;
        }
    }
    through_tx_pipeline(delay);
    // The payload moves from the send stream in buffer memory straight into the frame; with
    // retransmit_from_host a retransmission is fetched again from host memory instead.
    const std::size_t hdr = net::tcp_frame_header_size(header);
    frame_scratch_.resize(hdr + len);
    const bool retransmission = len > 0 && stream_offset < c.sent_high;
    if (retransmission && params_.retransmit_from_host) {
        refetch(c, stream_offset, len, frame_scratch_.data() + hdr, delay);
    } else {
        read_send_ring(c, stream_offset, frame_scratch_.data() + hdr, len, delay);
        if (retransmission) tx_retransmitted_from_buffer_ += len;
    }
    if (stream_offset + len > c.sent_high) {
        c.sent_high = stream_offset + len;
        // Sent once: the host still has the payload, so the NIC need not hold it any longer, except
        // for frames that cannot be fetched again (no host copy, or a payload over several pages):
        // their bytes stay in the ring until acknowledged, or a retransmission would read whatever
        // was appended over them.
        if (params_.retransmit_from_host) c.release_until(c.refetchable_until(c.sent_high));
    }
    const auto it = neighbours_.find(c.remote_ip());
    net::endpoints ep;
    ep.src_mac = station_.mac;
    ep.dst_mac = it != neighbours_.end() ? it->second.mac : net::kBroadcastMac;  // filled in on ARP reply
    ep.src_ip = station_.ip;
    ep.dst_ip = c.remote_ip();
    net::ipv4_header ip;
    ip.identification = static_cast<std::uint16_t>(tx_frames_);
    // RFC 3168 §6.1.4/§6.1.5: new data is ECN-capable; pure ACKs, SYNs and retransmissions are not.
    if (c.tcp().ecn_active() && len > 0 && !retransmission) ip.dscp_ecn = net::ecn::kEct0;
    if (const auto urgent = c.urgent.pointer_for(stream_offset, len)) {
        // Seed 003 §3.7: the urgent byte is the first byte of the first VI segment in the segment.
        net::tcp_header marked = header;
        marked.flags |= net::tcp_flags::kUrg;
        marked.urgent_pointer = *urgent;
        net::finish_tcp_frame(ep, ip, marked, frame_scratch_.data(), len);
    } else {
        net::finish_tcp_frame(ep, ip, header, frame_scratch_.data(), len);
    }
    ++tx_frames_;
    if (it == neighbours_.end()) {
        hold_for_arp(c.remote_ip(), frame_scratch_, delay);
        return;
    }
    c.last_wire_start =
        send_frame(frame_scratch_.data(), frame_scratch_.size(), c.id(), delay,
                   params_.tx_order == booking::backfill ? c.last_wire_start : sc_core::SC_ZERO_TIME, &decided);
}

void tcp_engine::through_tx_pipeline(sc_core::sc_time& delay) {
    // The pipeline takes a new frame every tx_interval_cycles and each frame spends
    // tx_cycles_per_segment in it; an interval of 0 (or one at least the latency) holds one frame at
    // a time, the model before the interval existed.
    const double latency = params_.tx_cycles_per_segment;
    const double interval =
        params_.tx_interval_cycles > 0 && params_.tx_interval_cycles < latency ? params_.tx_interval_cycles : latency;
    tx_pipe_.reserve_lt(delay, cycles_time(interval, params_.clock_hz));
    if (interval < latency) delay += cycles_time(latency - interval, params_.clock_hz);
}

sc_core::sc_time tcp_engine::wire_time(std::size_t frame_bytes) const {
    // Preamble and SFD, the frame (at least 60 bytes), FCS and IFG at line rate, as the link counts.
    const double on_wire = 8.0 + static_cast<double>(std::max<std::size_t>(frame_bytes, 60)) + 4.0 + 12.0;
    return transfer_time(on_wire, params_.line_rate_bps);
}

std::size_t tcp_engine::frames_ahead(const sc_core::sc_time& at) const {
    if (params_.honour_pause) return mac_held_.size() + (mac_wire_free_ > at ? 1 : 0);
    return tx_wire_.ahead(at);
}

sc_core::sc_time tcp_engine::decision_time(const connection& c) const {
    sc_core::sc_time at = sim_now() + c.ctx_delay;
    if (params_.tx_order == booking::in_order) return at;
    // In time order a new segment is decided no earlier than its first byte is in the send stream:
    // a wake-up at kernel time for bytes appended ahead in local time decides at their time.
    for (const auto& [end, appended] : c.appended_at) {
        if (end <= c.sent_high) continue;
        return std::max(at, appended);
    }
    return at;
}

bool tcp_engine::may_transmit(connection& c) {
    if (params_.tx_ahead_frames == 0) return true;
    const sc_core::sc_time at = decision_time(c);
    if (frames_ahead(at) < params_.tx_ahead_frames) return true;
    if (!c.tx_waiting) {
        c.tx_waiting = true;
        // In time order each connection retries when there is room at its own decision time.
        if (params_.tx_order == booking::backfill && !params_.honour_pause) {
            c.tx_retry_at = tx_wire_.room_at(at, params_.tx_ahead_frames);
        }
        tx_waiting_.push_back(c.id());
        ++tx_paced_waits_;
        schedule_tx_ready();
    }
    return false;
}

void tcp_engine::schedule_tx_ready() {
    if (tx_waiting_.empty()) return;
    const sc_core::sc_time now = sim_now();
    tx_wire_.forget_before(now);
    if (params_.honour_pause) {
        // The MAC's own queue: mac_tx_method wakes the waiting connections as frames start.
        if (frames_ahead(now) < params_.tx_ahead_frames) tx_ready_event_.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    if (params_.tx_order == booking::backfill) {
        sc_core::sc_time at = find(tx_waiting_.front())->tx_retry_at;
        for (const std::uint32_t id : tx_waiting_) at = std::min(at, find(id)->tx_retry_at);
        tx_ready_event_.notify(at > now ? at - now : sc_core::SC_ZERO_TIME);
        return;
    }
    // Room for one more once all but tx_ahead_frames - 1 of the queued frames have left the wire.
    const sc_core::sc_time at = tx_wire_.room_at(now, params_.tx_ahead_frames);
    tx_ready_event_.notify(at - now);  // an earlier pending notification wins, as it should
}

void tcp_engine::tx_ready_method() {
    const sc_core::sc_time now = sim_now();
    // Each waiting connection in turn while the link has room; one that fills it again goes to the
    // back of the queue (round robin between connections, as a NIC's transmit scheduler serves them).
    const bool own_times = params_.tx_order == booking::backfill && !params_.honour_pause;
    for (std::size_t turns = tx_waiting_.size(); turns > 0 && !tx_waiting_.empty(); --turns) {
        if (!own_times && frames_ahead(now) >= params_.tx_ahead_frames) break;
        connection* c = find(tx_waiting_.front());
        tx_waiting_.pop_front();
        if (own_times && c->tx_retry_at > now) {  // not its time yet: keep its place in the turn
            tx_waiting_.push_back(c->id());
            continue;
        }
        c->tx_waiting = false;
        c->ctx_delay = sc_core::SC_ZERO_TIME;
        c->tcp().on_transmit_ready(time_ns(now));
    }
    schedule_tx_ready();
    reschedule_timer();
}

sc_core::sc_time tcp_engine::send_frame(const std::uint8_t* frame, std::size_t len, std::uint32_t conn,
                                        sc_core::sc_time& delay, const sc_core::sc_time& not_before,
                                        const sc_core::sc_time* decided) {
    const sc_core::sc_time now = sim_now();
    sc_core::sc_time start = now + delay;
    // The record is kept for link pacing, and in time order also to keep each connection's frames in
    // sequence on the wire (frames may pass each other in the pipeline and take earlier gaps).
    if ((params_.tx_ahead_frames > 0 || params_.tx_order == booking::backfill) && !params_.honour_pause) {
        tx_wire_.forget_before(now);  // frames gone by now hold nothing back (every time asked is later)
        start = tx_wire_.book(decided != nullptr ? *decided : now + delay, now + delay, wire_time(len), not_before);
        // In time order the frame goes to the link when its slot starts, so that the link's wire
        // (link.order = time) gives it the slot the engine booked, ahead of later-booked frames.
        if (params_.tx_order == booking::backfill) delay = start - now;
    }
    if (params_.honour_pause) {
        // Flow control on: the MAC's queue, paced at line rate and held while paused.
        mac_held_.push_back({std::vector<std::uint8_t>(frame, frame + len), conn, now + delay});
        mac_schedule();
        return start;
    }
    send_frame_bytes(eth_tx, frame, len, delay);
    return start;
}

void tcp_engine::mac_schedule() {
    if (mac_held_.empty()) return;
    const sc_core::sc_time now = sim_now();
    const sc_core::sc_time start = std::max({mac_held_.front().ready, mac_wire_free_, paused_until_, now});
    mac_tx_event_.cancel();
    mac_tx_event_.notify(start - now);
}

void tcp_engine::mac_tx_method() {
    const sc_core::sc_time now = sim_now();
    while (!mac_held_.empty() && mac_held_.front().ready <= now && mac_wire_free_ <= now && paused_until_ <= now) {
        held_frame f = std::move(mac_held_.front());
        mac_held_.pop_front();
        mac_wire_free_ = now + wire_time(f.bytes.size());
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        send_frame_bytes(eth_tx, f.bytes.data(), f.bytes.size(), delay);
    }
    mac_schedule();
    if (!tx_waiting_.empty())
        tx_ready_event_.notify(mac_wire_free_ > now ? mac_wire_free_ - now : sc_core::SC_ZERO_TIME);
}

void tcp_engine::handle_mac_control(const std::uint8_t* frame, std::size_t len, const sc_core::sc_time& arrival) {
    std::uint16_t quanta = 0;
    const auto opcode = net::mac_control_opcode(frame, len);
    if (opcode == net::kMacControlPfc) {
        std::string error;
        const auto pfc = net::parse_pfc_frame(frame, len, &error);
        if (!pfc || (pfc->class_enable & 1u) == 0) {
            ++mac_control_ignored_;  // malformed, or for priorities this NIC does not send on
            return;
        }
        quanta = pfc->quanta[0];
    } else if (opcode == net::kMacControlPause && len >= net::kEthernetHeaderSize + 4) {
        quanta =
            static_cast<std::uint16_t>(frame[net::kEthernetHeaderSize + 2] << 8 | frame[net::kEthernetHeaderSize + 3]);
    } else {
        ++mac_control_ignored_;
        return;
    }
    // The pause in force ends here, whether it ran out or this frame replaces it.
    if (paused_until_ > pause_began_) paused_total_ += std::min(arrival, paused_until_) - pause_began_;
    pause_began_ = arrival;
    paused_until_ = arrival + transfer_time(static_cast<double>(quanta) * 64.0, params_.line_rate_bps);  // 512 bits
    if (quanta == 0)
        ++resume_frames_;
    else
        ++pause_frames_;
    mac_schedule();
}

void tcp_engine::hold_for_arp(std::uint32_t ip, const std::vector<std::uint8_t>& frame, sc_core::sc_time& delay) {
    unresolved& u = unresolved_[ip];
    if (u.frames.size() >= params_.arp_queue_frames) {
        u.frames.pop_front();
        ++arp_queue_drops_;
        RNIC_MLOG_D(debug, toe, delay,
                    "ARP: too many frames waiting for " << net::format_ipv4(ip) << ", oldest dropped");
    }
    u.frames.push_back(frame);
    ++arp_held_frames_;
    const sc_core::sc_time now = sim_now() + delay;
    if (u.asked && now < u.asked_at + params_.arp_retry) return;
    u.asked = true;
    u.asked_at = now;
    const std::vector<std::uint8_t> request = net::build_arp_request(station_.mac, station_.ip, ip);
    through_tx_pipeline(delay);
    ++arp_requests_sent_;
    RNIC_MLOG_D(debug, toe, delay, "ARP: who has " << net::format_ipv4(ip) << "?");
    send_frame(request.data(), request.size(), 0, delay);
}

void tcp_engine::handle_arp(const std::uint8_t* frame, std::size_t len, sc_core::sc_time& delay) {
    std::string error;
    const auto f = net::parse_arp_frame(frame, len, &error);
    if (!f) {
        ++rx_bad_arp_;
        RNIC_MLOG_D(debug, toe, delay, "dropped a bad ARP frame: " << error);
        return;
    }
    const net::arp_packet& a = f->arp;
    ++(a.operation == net::arp_op::kRequest ? arp_requests_received_ : arp_replies_received_);
    if (a.sender_ip == 0 || a.sender_ip == station_.ip) return;  // a probe, or our own address in use
    // RFC 826: update a known sender; learn a new one only from packets meant for us.
    auto it = neighbours_.find(a.sender_ip);
    const bool for_us = a.target_ip == station_.ip;
    if (it != neighbours_.end()) {
        if (!it->second.is_static) it->second.mac = a.sender_mac;
    } else if (for_us) {
        it = neighbours_.emplace(a.sender_ip, neighbour{a.sender_mac, false}).first;
        ++arp_learned_;
        RNIC_MLOG_D(debug, toe, delay,
                    "ARP: " << net::format_ipv4(a.sender_ip) << " is at " << net::format_mac(a.sender_mac));
    }
    if (for_us && a.operation == net::arp_op::kRequest) {
        const std::vector<std::uint8_t> reply = net::build_arp_reply(a, station_.mac);
        through_tx_pipeline(delay);
        ++arp_replies_sent_;
        send_frame(reply.data(), reply.size(), 0, delay);
    }
    if (it == neighbours_.end()) return;
    const auto waiting = unresolved_.find(a.sender_ip);
    if (waiting == unresolved_.end()) return;
    std::deque<std::vector<std::uint8_t>> frames = std::move(waiting->second.frames);
    unresolved_.erase(waiting);
    for (std::vector<std::uint8_t>& held : frames) {
        std::copy(it->second.mac.begin(), it->second.mac.end(), held.begin());  // Ethernet destination
        send_frame(held.data(), held.size(), 0, delay);
    }
}

void tcp_engine::read_send_ring(connection& c, std::uint64_t stream_offset, std::uint8_t* out, std::size_t len,
                                sc_core::sc_time& delay) {
    // The send stream lives in a ring of send_buffer bytes in NIC buffer memory: a read wraps.
    for (std::size_t done = 0; done < len;) {
        const std::uint64_t pos = (stream_offset + done) % params_.send_buffer;
        const std::size_t chunk = std::min<std::size_t>(len - done, params_.send_buffer - pos);
        mem_read(buf_out, c.buffer_base() + pos, out + done, chunk, delay);
        done += chunk;
    }
}

void tcp_engine::refetch(connection& c, std::uint64_t stream_offset, std::size_t len, std::uint8_t* out,
                         sc_core::sc_time& delay) {
    const std::uint64_t end = stream_offset + len;
    for (const connection::fpdu_record& r : c.records) {
        const std::uint64_t r_end = r.stream_off + r.length;
        if (r_end <= stream_offset) continue;
        if (r.stream_off >= end) break;
        const std::uint64_t from = std::max(stream_offset, r.stream_off);
        const std::uint64_t to = std::min(end, r_end);
        std::uint8_t* dst = out + (from - stream_offset);
        const std::size_t n = static_cast<std::size_t>(to - from);
        if (r.host_addr == 0) {
            // Control FPDUs (Terminate, ...) have no copy in host memory: read the staged bytes.
            read_send_ring(c, from, dst, n, delay);
            tx_retransmitted_from_buffer_ += n;
            continue;
        }
        // Fetch the payload again and have the framing frame it exactly as the first time (same
        // position, same options): the bytes come out identical unless the host changed its buffer.
        refetch_ulpdu_.assign(r.header, r.header + r.header_len);
        refetch_ulpdu_.resize(static_cast<std::size_t>(r.header_len) + r.payload_len);
        if (r.payload_len > 0) {
            mem_read(dma_out, r.host_addr, refetch_ulpdu_.data() + r.header_len, r.payload_len, delay);
            ++tx_refetch_dma_reads_;
        }
        refetch_fpdu_.clear();
        framing_.reframe(refetch_ulpdu_.data(), refetch_ulpdu_.size(), r.options, r.fpdu_pos, refetch_fpdu_);
        const auto at = static_cast<std::size_t>(from - r.stream_off);
        if (refetch_fpdu_.size() < at + n) {
            // The framing could not build this frame again (it keeps no state for the record, or does
            // not re-frame from host memory): a model inconsistency, never the peer's doing. Send what
            // the send ring still holds at these positions rather than read past the frame, and
            // count it so that a run that needed it says so.
            ++tx_refetch_failures_;
            RNIC_MLOG_D(error, toe, delay,
                        "connection " << c.id() << ": the framing re-framed " << refetch_fpdu_.size() << " of the "
                                      << r.length << " bytes at stream offset " << r.stream_off
                                      << "; retransmitting the staged bytes");
            read_send_ring(c, from, dst, n, delay);
            continue;
        }
        std::memcpy(dst, refetch_fpdu_.data() + at, n);
        tx_refetched_from_host_ += n;
        // Model self-check against the staging copy (zero time): a mismatch means the host changed
        // the buffer before the work request completed, which real hardware would send as is.
        shadow_.resize(n);
        for (std::size_t done = 0; done < n;) {
            const std::uint64_t pos = (from + done) % params_.send_buffer;
            const std::size_t chunk = std::min<std::size_t>(n - done, params_.send_buffer - pos);
            buffer_.peek(c.buffer_base() + pos, shadow_.data() + done, chunk);
            done += chunk;
        }
        if (std::memcmp(shadow_.data(), dst, n) != 0) ++tx_refetch_mismatches_;
    }
}

bool tcp_engine::admit_ingress(std::uint32_t bytes, const sc_core::sc_time& arrival) {
    if (params_.rx_ingress_frames == 0) return true;  // unbounded: the pipeline only delays
    // Frames the pipeline has started by now have left the queue.
    while (!ingress_.empty() && ingress_.front().start <= arrival) {
        if (ingress_.front().spilled) ingress_spilled_bytes_ -= ingress_.front().bytes;
        ingress_.pop_front();
    }
    sc_core::sc_time start = std::max(arrival, rx_pipe_.free_at());
    // A full write queue to the host bus holds the frame back too (wait_for_placement_room), so a
    // receiver slower on its bus than its port fills this FIFO and then drops, as hardware would.
    if (placing_.bounded()) start = std::max(start, from_ps(placing_.peek_room_at(to_ps(start))));
    if (start <= arrival) return true;  // the pipeline takes it at once: no wait
    bool spilled = false;
    if (ingress_.size() >= params_.rx_ingress_frames) {
        if (ingress_spilled_bytes_ + bytes > params_.rx_ingress_buffer) {
            ++ingress_stats_.drops;
            return false;
        }
        spilled = true;
        ingress_spilled_bytes_ += bytes;
        ++ingress_stats_.spilled_frames;
        ingress_stats_.peak_spilled_bytes = std::max(ingress_stats_.peak_spilled_bytes, ingress_spilled_bytes_);
    }
    ingress_.push_back({start, bytes, spilled});
    ingress_stats_.peak_frames = std::max<std::uint64_t>(ingress_stats_.peak_frames, ingress_.size());
    return true;
}

void tcp_engine::wait_for_placement_room(sc_core::sc_time& delay) {
    if (!placing_.bounded()) return;
    // The pipeline would start this frame at `start`; with the write queue to the host bus full it
    // starts when enough placements have landed.
    const sc_core::sc_time now = sim_now();
    const sc_core::sc_time start = std::max(now + delay, rx_pipe_.free_at());
    const std::uint64_t room = placing_.room_at(to_ps(start));
    if (room > to_ps(start)) delay = from_ps(room) - now;
}

void tcp_engine::eth_rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    if (params_.honour_pause &&
        net::frame_ethertype(gp.get_data_ptr(), gp.get_data_length()) == net::kEtherTypeMacControl) {
        // Consumed by the MAC, before the receive pipeline.
        handle_mac_control(gp.get_data_ptr(), gp.get_data_length(), sim_now() + delay);
        return;
    }
    ++rx_frames_;
    if (!admit_ingress(static_cast<std::uint32_t>(gp.get_data_length()), sim_now() + delay)) return;
    wait_for_placement_room(delay);
    rx_pipe_.reserve_lt(delay, cycles_time(params_.rx_cycles_per_segment, params_.clock_hz));
    if (net::frame_ethertype(gp.get_data_ptr(), gp.get_data_length()) == net::kEtherTypeArp) {
        handle_arp(gp.get_data_ptr(), gp.get_data_length(), delay);
        return;
    }
    std::string error;
    const auto frame = net::parse_tcp_frame(gp.get_data_ptr(), gp.get_data_length(), &error);
    if (!frame) {
        ++rx_bad_frames_;
        RNIC_MLOG_D(debug, toe, delay, "dropped a bad frame: " << error);
        return;
    }
    const bool broadcast = frame->eth.dst == net::mac_address{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (frame->eth.dst != station_.mac && !broadcast) {
        ++rx_wrong_mac_;
        return;
    }
    if (frame->ip.dst != station_.ip) {
        ++rx_no_connection_;
        return;
    }
    // The first connection of the 4-tuple (in creation order) that is not closed.
    connection* c = nullptr;
    if (const auto same = by_tuple_.find({frame->tcp.dst_port, frame->tcp.src_port, frame->ip.src});
        same != by_tuple_.end()) {
        for (const std::uint32_t id : same->second) {
            const connection& conn = *conns_[id];
            if (conn.tcp().state() != tcp::state::closed) {
                c = conns_[id].get();
                break;
            }
        }
    }
    const bool syn_only = (frame->tcp.flags & (net::tcp_flags::kSyn | net::tcp_flags::kAck)) == net::tcp_flags::kSyn;
    if (c == nullptr && syn_only &&
        std::find(listen_ports_.begin(), listen_ports_.end(), frame->tcp.dst_port) != listen_ports_.end()) {
        const std::uint64_t no_region_before = no_region_refusals_;
        c = create_connection(frame->tcp.dst_port, frame->ip.src, frame->tcp.src_port);
        if (c != nullptr) {
            c->tcp().listen();
        } else if (no_region_refusals_ != no_region_before) {
            // No send region for it in buffer memory: the SYN is refused at once with a reset
            // (<SEQ=0><ACK=SEG.SEQ+1><CTL=RST,ACK>, RFC 9293 §3.10.7.1), so the peer's connect
            // fails now instead of retrying its SYN until its negotiation timeout, and the
            // firmware fails the accept waiting on this port by name (no_buffer_memory). A full
            // connection table still drops the SYN (below).
            ++rx_no_connection_;
            send_reset_for(*frame, delay);
            conn_events_out->on_tcp_event(0, toe_event::refused, frame->tcp.dst_port);
            return;
        }
    }
    if (c == nullptr) {
        ++rx_no_connection_;
        RNIC_MLOG_D(debug, toe, delay, "no connection for a segment to port " << frame->tcp.dst_port);
        // Anything but a SYN for no connection is answered with a reset (RFC 9293 §3.10.7.1). A SYN is
        // dropped, unanswered, which departs from the RFC (a SYN to a closed port draws a reset): the
        // platform's hosts start together, so a client may connect before its server listens, and
        // its SYN retransmission finds the port open; with a full table the peer retries too. A port
        // the driver closed (unlisten) is past start-up: its SYN is refused as the RFC says.
        const bool unlistened = std::find(unlistened_ports_.begin(), unlistened_ports_.end(), frame->tcp.dst_port) !=
                                unlistened_ports_.end();
        if (!syn_only || unlistened) send_reset_for(*frame, delay);
        return;
    }
    if (!admit_out_of_order(*c, *frame, gp.get_data_ptr() + frame->payload_offset, delay)) return;
    c->ctx_delay = delay;
    ++c->in_callback;
    c->tcp().on_segment(time_ns(sim_now() + delay), frame->tcp, gp.get_data_ptr() + frame->payload_offset,
                        frame->payload_len, (frame->ip.dscp_ecn & net::ecn::kMask) == net::ecn::kCe);
    --c->in_callback;
    if (c->deferred > 0) {
        const std::size_t len = c->deferred;
        c->deferred = 0;
        c->tcp().mark_boundary(c->appended());
        c->tcp().on_send_data(time_ns(sim_now() + c->ctx_delay), len);
    }
    if (c->close_deferred) {
        // Closed from inside the callback (after a Terminate): the FIN follows the deferred bytes.
        c->close_deferred = false;
        c->tcp().close(time_ns(sim_now() + c->ctx_delay));
    }
    reassembly_.account(c->id(), c->tcp().out_of_order_bytes(), delay);
    reschedule_timer();
}

void tcp_engine::send_reset_for(const net::parsed_tcp_frame& f, sc_core::sc_time& delay) {
    // RFC 9293 §3.10.7.1 (no connection, state CLOSED): a reset is never answered; otherwise
    // <SEQ=SEG.ACK><CTL=RST> when the segment carries an ACK, else <SEQ=0><ACK=SEG.SEQ+SEG.LEN>
    // <CTL=RST,ACK>, SEG.LEN counting SYN and FIN.
    if ((f.tcp.flags & net::tcp_flags::kRst) != 0) return;
    net::tcp_header h;
    h.src_port = f.tcp.dst_port;
    h.dst_port = f.tcp.src_port;
    if ((f.tcp.flags & net::tcp_flags::kAck) != 0) {
        h.seq = f.tcp.ack;
        h.flags = net::tcp_flags::kRst;
    } else {
        const std::uint32_t len = static_cast<std::uint32_t>(f.payload_len) +
                                  ((f.tcp.flags & net::tcp_flags::kSyn) != 0 ? 1 : 0) +
                                  ((f.tcp.flags & net::tcp_flags::kFin) != 0 ? 1 : 0);
        h.seq = 0;
        h.ack = f.tcp.seq + len;
        h.flags = net::tcp_flags::kRst | net::tcp_flags::kAck;
    }
    through_tx_pipeline(delay);
    net::endpoints ep;
    ep.src_mac = station_.mac;
    ep.dst_mac = f.eth.src;  // back to where it came from
    ep.src_ip = station_.ip;
    ep.dst_ip = f.ip.src;
    net::ipv4_header ip;
    ip.identification = static_cast<std::uint16_t>(tx_frames_);
    frame_scratch_.resize(net::tcp_frame_header_size(h));
    net::finish_tcp_frame(ep, ip, h, frame_scratch_.data(), 0);
    ++tx_frames_;
    ++tx_resets_no_connection_;
    send_frame(frame_scratch_.data(), frame_scratch_.size(), 0, delay);
}

void tcp_engine::report_stats(boost::json::object& out) const {
    out["tx_frames"] = tx_frames_;
    out["rx_frames"] = rx_frames_;
    out["rx_bad_frames"] = rx_bad_frames_;
    if (params_.honour_pause) {
        const sc_core::sc_time now = sim_now();
        const sc_core::sc_time running = paused_until_ > pause_began_
                                             ? std::min(now, paused_until_) - std::min(now, pause_began_)
                                             : sc_core::SC_ZERO_TIME;
        out["flow_control"] = {{"pause_frames_received", pause_frames_},
                               {"resume_frames_received", resume_frames_},
                               {"ignored_mac_control_frames", mac_control_ignored_},
                               {"paused_ps", to_ps(paused_total_ + running)}};
    }
    out["rx_no_connection"] = rx_no_connection_;
    // Only when sent, so that results without any keep their exact keys.
    if (tx_resets_no_connection_ > 0) out["tx_resets_no_connection"] = tx_resets_no_connection_;
    out["rx_wrong_mac"] = rx_wrong_mac_;
    out["rx_out_of_order_segments"] = rx_ooo_segments_;
    out["rx_drops_buffer_full"] = rx_drops_buffer_full_;
    out["rx_bytes_buffered"] = reassembly_.bytes_buffered();
    // Only when a segment arrived out of order, so that results without any keep their exact keys.
    if (rx_ooo_segments_ > 0) {
        out["rx_connections_with_hole_peak"] = reassembly_.connections_with_hole_peak();
        out["rx_connections_with_hole_at_reassembly_peak"] = reassembly_.connections_with_hole_at_pool_peak();
    }
    out["tx_retransmitted_from_buffer_bytes"] = tx_retransmitted_from_buffer_;
    out["tx_refetched_from_host_bytes"] = tx_refetched_from_host_;
    out["tx_refetch_dma_reads"] = tx_refetch_dma_reads_;
    out["tx_refetch_mismatches"] = tx_refetch_mismatches_;
    if (tx_refetch_failures_ != 0) out["tx_refetch_failures"] = tx_refetch_failures_;  // new key, only when it happened
    // Only with link-paced generation, so that results without it keep their exact keys.
    if (params_.tx_ahead_frames > 0) out["tx_paced_waits"] = tx_paced_waits_;
    out["arp"] = {{"requests_sent", arp_requests_sent_},
                  {"replies_sent", arp_replies_sent_},
                  {"requests_received", arp_requests_received_},
                  {"replies_received", arp_replies_received_},
                  {"learned", arp_learned_},
                  {"frames_held", arp_held_frames_},
                  {"queue_drops", arp_queue_drops_},
                  {"bad_frames", rx_bad_arp_}};
    report_connections(out);  // connections, rx_reassembly_peak_sum_bytes, tx_held_peak_sum_bytes
    out["tx_pipe_busy_ps"] = to_ps(tx_pipe_.busy_total());
    out["rx_pipe_busy_ps"] = to_ps(rx_pipe_.busy_total());
    out["ingress"] = {{"drops", ingress_stats_.drops},
                      {"spilled_frames", ingress_stats_.spilled_frames},
                      {"peak_waiting_frames", ingress_stats_.peak_frames},
                      {"peak_spilled_bytes", ingress_stats_.peak_spilled_bytes}};
    if (placing_.bounded()) {
        // Only with a bounded write queue (rnic.tcp.rx_placement_backlog), so results without it stay as they were.
        out["placement"] = {{"backlog_bytes", params_.rx_placement_backlog},
                            {"peak_bytes", placing_.peak_bytes()},
                            {"stalls", placing_.stalls()},
                            {"stall_ps", placing_.stall_ps()}};
    }
}

}  // namespace rnic
