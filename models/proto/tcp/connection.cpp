// TCP connection state machine: see connection.h. Section references are to RFC 9293 unless noted.
// This file: construction, user calls, introspection, sequence conversion and segment arrival;
// receive.cpp, sack_recovery.cpp and send.cpp hold the rest of the class.
#include "proto/tcp/connection.h"

#include <algorithm>
#include <cstring>

#include "proto/tcp/connection_internal.h"

namespace rnic::proto::tcp {

const char* to_string(tcp::state s) {
    switch (s) {
    case tcp::state::closed:
        return "CLOSED";
    case tcp::state::listen:
        return "LISTEN";
    case tcp::state::syn_sent:
        return "SYN-SENT";
    case tcp::state::syn_received:
        return "SYN-RECEIVED";
    case tcp::state::established:
        return "ESTABLISHED";
    case tcp::state::fin_wait_1:
        return "FIN-WAIT-1";
    case tcp::state::fin_wait_2:
        return "FIN-WAIT-2";
    case tcp::state::close_wait:
        return "CLOSE-WAIT";
    case tcp::state::closing:
        return "CLOSING";
    case tcp::state::last_ack:
        return "LAST-ACK";
    case tcp::state::time_wait:
        return "TIME-WAIT";
    }
    return "?";
}

// ---------------------------------------------------------------------------------------------
// detail::OffsetQueue

namespace detail {

void offset_queue::push_back(std::uint64_t v) {
    if (size_ == buf_.size()) {
        std::vector<std::uint64_t> grown(buf_.empty() ? 64 : buf_.size() * 2);
        for (std::size_t i = 0; i < size_; ++i) grown[i] = at(i);
        buf_.swap(grown);
        head_ = 0;
    }
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
}

void offset_queue::pop_front() {
    if (size_ == 0) return;
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
}

std::uint64_t offset_queue::last_in(std::uint64_t lo, std::uint64_t hi) const {
    // First index whose element is > hi.
    std::size_t a = 0, b = size_;
    while (a < b) {
        const std::size_t mid = a + (b - a) / 2;
        if (at(mid) <= hi) {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    if (a == 0) return 0;
    const std::uint64_t v = at(a - 1);
    return v > lo ? v : 0;
}

std::uint64_t offset_queue::first_in(std::uint64_t lo, std::uint64_t hi) const {
    // First index whose element is > lo.
    std::size_t a = 0, b = size_;
    while (a < b) {
        const std::size_t mid = a + (b - a) / 2;
        if (at(mid) <= lo) {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    if (a == size_) return 0;
    const std::uint64_t v = at(a);
    return v <= hi ? v : 0;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Construction, state

connection::connection(const tcp::config& cfg, env& env) : cfg_(cfg), env_(env) {
    if (cfg_.mss == 0) cfg_.mss = 1;
    cfg_.window_scale = std::min(cfg_.window_scale, kMaxWindowShift);
    const std::uint64_t max_window = std::uint64_t{65535} << kMaxWindowShift;
    if (cfg_.receive_buffer == 0) cfg_.receive_buffer = 1;
    if (cfg_.receive_buffer > max_window) cfg_.receive_buffer = static_cast<std::uint32_t>(max_window);
    if (cfg_.dupack_threshold == 0) cfg_.dupack_threshold = 1;
    if (cfg_.initial_window_segments == 0) cfg_.initial_window_segments = 1;
    if (cfg_.rto_min_ns == 0) cfg_.rto_min_ns = 1;
    if (cfg_.rto_max_ns < cfg_.rto_min_ns) cfg_.rto_max_ns = cfg_.rto_min_ns;
    cfg_.rto_initial_ns = std::clamp(cfg_.rto_initial_ns, cfg_.rto_min_ns, cfg_.rto_max_ns);
    mss_ = cfg_.mss;
    rto_ = cfg_.rto_initial_ns;
    cwnd_ = std::uint64_t{cfg_.initial_window_segments} * mss_;
    ssthresh_ = kMaxCwnd;
    hdr_.sack_blocks.reserve(kMaxSackBlocks);
    ooo_.reserve(kMaxOooIntervals + 1);
    if (cfg_.sack_recovery) sb_.reserve(kMaxScoreboard + 1);
}

void connection::reset_sequence_state() {
    snd_una_ = snd_nxt_ = snd_max_ = 0;
    snd_wnd_ = max_snd_wnd_ = 0;
    snd_wl1_ = snd_wl2_ = 0;
    snd_shift_ = rcv_shift_ = 0;
    ws_ok_ = sack_ok_ = false;
    mss_ = cfg_.mss;
    cwnd_ = std::uint64_t{cfg_.initial_window_segments} * mss_;
    ssthresh_ = kMaxCwnd;
    ca_acc_ = 0;
    dupacks_ = 0;
    in_recovery_ = first_partial_ = false;
    recover_ = 0;
    ecn_ok_ = ece_pending_ = cwr_pending_ = false;
    ecn_recover_ = 0;
    sb_.clear();
    high_rxt_ = rescue_rxt_ = 0;
    rtt_active_ = false;
    srtt_ = rttvar_ = 0;
    rto_ = cfg_.rto_initial_ns;
    rexmit_count_ = 0;
    syn_lost_ = false;
    rto_deadline_ = delack_deadline_ = persist_deadline_ = tw_deadline_ = kNever;
    persist_backoff_ = 0;
    probe_outstanding_ = false;
    irs_ = 0;
    rcv_nxt_ = rcv_adv_ = 0;
    rcv_delivered_ = 0;
    ack_now_ = false;
    delack_segs_ = 0;
    fin_pending_ = false;
    fin_rseq_ = 0;
    ooo_.clear();
    sack_recent_n_ = 0;
}

void connection::set_state(tcp::state s) {
    if (s == state_) return;
    const tcp::state from = state_;
    state_ = s;
    env_.state_changed(from, s);
}

void connection::enter_closed() {
    rto_deadline_ = delack_deadline_ = persist_deadline_ = tw_deadline_ = kNever;
    probe_outstanding_ = false;
    ack_now_ = false;
    set_state(tcp::state::closed);
}

void connection::enter_time_wait(u64 now) {
    rto_deadline_ = persist_deadline_ = delack_deadline_ = kNever;
    probe_outstanding_ = false;
    tw_deadline_ = add_sat(now, cfg_.time_wait_ns);
    set_state(tcp::state::time_wait);
}

bool connection::sending_state() const {
    switch (state_) {
    case tcp::state::established:
    case tcp::state::close_wait:
    case tcp::state::fin_wait_1:
    case tcp::state::closing:
    case tcp::state::last_ack:
        return true;
    default:
        return false;
    }
}

bool connection::synchronized() const {
    switch (state_) {
    case tcp::state::closed:
    case tcp::state::listen:
    case tcp::state::syn_sent:
        return false;
    default:
        return true;
    }
}

bool connection::fin_acked() const {
    return fin_queued_ && snd_una_ >= data_end() + 1;
}

// ---------------------------------------------------------------------------------------------
// User calls

void connection::reset_stream_state() {
    stream_end_ = acked_off_ = 0;
    fin_queued_ = false;
    boundaries_.clear();
    unconsumed_ = 0;
}

void connection::connect(u64 now) {
    if (state_ != tcp::state::closed) return;
    if (opened_) reset_stream_state();  // reuse after a previous connection
    opened_ = true;
    reset_sequence_state();
    passive_ = false;
    remote_port_ = cfg_.remote_port;
    set_state(tcp::state::syn_sent);
    send_syn(now);
    finish(now);
}

void connection::set_iss(std::uint32_t iss) {
    if (state_ == tcp::state::closed) cfg_.iss = iss;
}

void connection::listen() {
    if (state_ != tcp::state::closed) return;
    if (opened_) reset_stream_state();
    opened_ = true;
    reset_sequence_state();
    passive_ = true;
    remote_port_ = cfg_.remote_port;
    set_state(tcp::state::listen);
}

std::size_t connection::send_space() const {
    if (fin_queued_) return 0;
    const u64 used = stream_end_ - acked_off_;
    return used >= cfg_.send_buffer ? 0 : static_cast<std::size_t>(cfg_.send_buffer - used);
}

void connection::on_send_data(u64 now, std::size_t len) {
    len = std::min(len, send_space());
    if (len == 0) return;
    stream_end_ += len;
    if (!corked_) output(now);
    finish(now);
}

void connection::on_transmit_ready(u64 now) {
    if (!waiting_for_owner_) return;
    waiting_for_owner_ = false;
    output(now);
    finish(now);
}

void connection::set_cork(u64 now, bool corked) {
    if (corked_ == corked) return;
    corked_ = corked;
    if (!corked_) {
        output(now);
        finish(now);
    }
}

void connection::mark_boundary(std::uint64_t stream_offset) {
    if (stream_offset == 0 || stream_offset <= acked_off_) return;
    if (!boundaries_.empty() && stream_offset <= boundaries_.back()) return;
    boundaries_.push_back(stream_offset);
}

void connection::close(u64 now) {
    switch (state_) {
    case tcp::state::listen:
    case tcp::state::syn_sent:
        enter_closed();
        return;
    case tcp::state::syn_received:
        // §3.10.4: queued until ESTABLISHED is reached, then FIN-WAIT-1.
        fin_queued_ = true;
        return;
    case tcp::state::established:
        fin_queued_ = true;
        set_state(tcp::state::fin_wait_1);
        break;
    case tcp::state::close_wait:
        fin_queued_ = true;
        set_state(tcp::state::last_ack);
        break;
    default:
        return;  // closed, or already closing
    }
    output(now);
    finish(now);
}

void connection::abort(u64 now) {
    (void)now;
    switch (state_) {
    case tcp::state::syn_received:
    case tcp::state::established:
    case tcp::state::fin_wait_1:
    case tcp::state::fin_wait_2:
    case tcp::state::close_wait:
        // §3.10.5: <SEQ=SND.NXT><CTL=RST>. snd_max is what the peer expects once everything
        // in flight has arrived; if it does not match, RFC 5961 challenge ACK + our reply in
        // CLOSED resolves it.
        send_rst(remote_port_, wire_seq(snd_max_), 0, false);
        break;
    default:
        break;
    }
    if (state_ != tcp::state::closed) enter_closed();
}

void connection::receive_consumed(u64 now, std::size_t len) {
    if (!cfg_.owner_consumes) return;
    unconsumed_ -= std::min<u64>(len, unconsumed_);
    switch (state_) {
    case tcp::state::established:
    case tcp::state::fin_wait_1:
    case tcp::state::fin_wait_2:
        break;
    default:
        return;
    }
    // RFC 1122 §4.2.3.3: send a window update once the window can move by a useful amount.
    const u64 edge = rcv_nxt_ + receive_space();
    if (edge > rcv_adv_) {
        const u64 inc = edge - rcv_adv_;
        const u64 half = cfg_.receive_buffer / 2;
        const bool was_zero = rcv_adv_ <= rcv_nxt_;
        if ((was_zero && inc >= std::min<u64>(half, mss_)) || inc >= std::min<u64>(half, 2 * u64{mss_})) {
            send_ack(now);
        }
    }
    finish(now);
}

// ---------------------------------------------------------------------------------------------
// Introspection

std::uint64_t connection::bytes_in_flight() const {
    return snd_nxt_ - snd_una_;
}

std::uint32_t connection::cwnd() const {
    return static_cast<std::uint32_t>(std::min<u64>(cwnd_, UINT32_MAX));
}

std::uint32_t connection::ssthresh() const {
    return static_cast<std::uint32_t>(std::min<u64>(ssthresh_, UINT32_MAX));
}

std::uint64_t connection::send_stream_sent() const {
    return snd_max_ <= 1 ? 0 : std::min(snd_max_ - 1, stream_end_);
}

std::uint64_t connection::receive_window() const {
    return rcv_adv_ > rcv_nxt_ ? rcv_adv_ - rcv_nxt_ : 0;
}

// Receive-stream offset = sequence offset from the IRS - (RCV.NXT - bytes delivered): the SYN's.
std::uint64_t connection::held_run_start(u64 at) const {
    const u64 base = rcv_nxt_ - rcv_delivered_;
    for (const interval& iv : ooo_) {
        if (iv.start < at + base && iv.end >= at + base) return iv.start - base;
    }
    return at;
}

std::uint64_t connection::held_run_end(u64 at) const {
    const u64 base = rcv_nxt_ - rcv_delivered_;
    for (const interval& iv : ooo_) {
        if (iv.start <= at + base && iv.end > at + base) return iv.end - base;
    }
    return at;
}

bool connection::copy_held(u64 from, u64 to, std::uint8_t* out) const {
    if (to <= from) return true;
    const u64 base = rcv_nxt_ - rcv_delivered_;
    const auto it = std::find_if(ooo_.begin(), ooo_.end(),
                                 [&](const interval& iv) { return iv.start <= from + base && iv.end >= to + base; });
    if (it == ooo_.end() || ooo_buf_.empty()) return false;
    const std::size_t size = ooo_buf_.size();
    for (u64 k = from + base; k < to + base;) {
        const auto pos = static_cast<std::size_t>(k % size);
        const std::size_t chunk = static_cast<std::size_t>(std::min<u64>(to + base - k, size - pos));
        std::memcpy(out + (k - from - base), ooo_buf_.data() + pos, chunk);
        k += chunk;
    }
    return true;
}

std::size_t connection::out_of_order_bytes() const {
    u64 n = 0;
    for (const interval& iv : ooo_) n += iv.end - iv.start;
    return static_cast<std::size_t>(n);
}

std::uint64_t connection::next_deadline() const {
    return std::min({rto_deadline_, delack_deadline_, persist_deadline_, tw_deadline_});
}

// ---------------------------------------------------------------------------------------------
// Sequence conversion

connection::s64 connection::unwrap_ack(std::uint32_t ack) const {
    const auto d = static_cast<std::int32_t>(ack - wire_seq(snd_una_));
    return static_cast<s64>(snd_una_) + d;
}

connection::s64 connection::unwrap_seq(std::uint32_t seq) const {
    const auto d = static_cast<std::int32_t>(seq - wire_ack());
    return static_cast<s64>(rcv_nxt_) + d;
}

// ---------------------------------------------------------------------------------------------
// Segment arrival (§3.10.7)

void connection::on_segment(u64 now, const net::tcp_header& h, const std::uint8_t* payload, std::size_t len, bool ce) {
    ++stats_.segments_received;
    if (ce) ++stats_.ecn_ce_received;
    if (ecn_ok_ && synchronized() && h.src_port == remote_port_ && h.dst_port == cfg_.local_port &&
        !(h.flags & (tf::kSyn | tf::kRst))) {
        // RFC 3168 §6.1.3: CWR ends the echo; CE (even on the same packet) starts it again, and a
        // CE-marked data segment is acknowledged at once.
        if (h.flags & tf::kCwr) ece_pending_ = false;
        if (ce) {
            ece_pending_ = true;
            if (len > 0) ack_now_ = true;
        }
    }
    const bool syn = (h.flags & tf::kSyn) != 0;
    const bool rst = (h.flags & tf::kRst) != 0;
    const bool fin = (h.flags & tf::kFin) != 0;
    if ((len > 0 && payload == nullptr) || h.dst_port != cfg_.local_port || (syn && (rst || fin))) {
        ++stats_.bad_segments;
        return;
    }
    if (state_ == tcp::state::listen) {
        if (cfg_.remote_port != 0 && h.src_port != cfg_.remote_port) {
            ++stats_.bad_segments;
            return;
        }
    } else if (state_ != tcp::state::closed && h.src_port != remote_port_) {
        ++stats_.bad_segments;
        return;
    }
    switch (state_) {
    case tcp::state::closed:
        segment_closed(h, len);
        return;
    case tcp::state::listen:
        segment_listen(now, h);
        break;
    case tcp::state::syn_sent:
        segment_syn_sent(now, h);
        break;
    default:
        segment_synchronized(now, h, payload, len);
        break;
    }
    finish(now);
}

void connection::segment_closed(const net::tcp_header& h, std::size_t len) {
    if (h.flags & tf::kRst) return;
    if (h.flags & tf::kAck) {
        send_rst(h.src_port, h.ack, 0, false);
    } else {
        const std::uint32_t seg_len =
            static_cast<std::uint32_t>(len) + ((h.flags & tf::kSyn) ? 1 : 0) + ((h.flags & tf::kFin) ? 1 : 0);
        send_rst(h.src_port, 0, h.seq + seg_len, true);
    }
}

void connection::negotiate(const net::tcp_header& syn) {
    const std::uint32_t peer_mss = (syn.mss && *syn.mss > 0) ? *syn.mss : kDefaultMss;
    mss_ = std::max<std::uint32_t>(1, std::min<std::uint32_t>(cfg_.mss, peer_mss));
    if (cfg_.window_scaling && syn.window_scale) {
        ws_ok_ = true;
        snd_shift_ = std::min(*syn.window_scale, kMaxWindowShift);
        rcv_shift_ = cfg_.window_scale;
    } else {
        ws_ok_ = false;
        snd_shift_ = rcv_shift_ = 0;
    }
    sack_ok_ = cfg_.sack && syn.sack_permitted;
    // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR, an ECN-setup SYN-ACK ECE alone.
    const bool ece = (syn.flags & tf::kEce) != 0, cwr = (syn.flags & tf::kCwr) != 0;
    ecn_ok_ = cfg_.ecn && ece && (state_ == tcp::state::listen ? cwr : !cwr);
    // RFC 5681 §3.1: the initial window is one segment if the SYN or SYN-ACK was lost.
    cwnd_ = (syn_lost_ ? 1 : std::uint64_t{cfg_.initial_window_segments}) * mss_;
    ssthresh_ = kMaxCwnd;
}

void connection::segment_listen(u64 now, const net::tcp_header& h) {
    if (h.flags & tf::kRst) return;
    if (h.flags & tf::kAck) {
        send_rst(h.src_port, h.ack, 0, false);
        ++stats_.bad_segments;
        return;
    }
    if (!(h.flags & tf::kSyn)) {
        ++stats_.bad_segments;
        return;
    }
    // Data and FIN on a SYN are not accepted (not acknowledged); the peer sends them again.
    remote_port_ = h.src_port;
    irs_ = h.seq;
    rcv_nxt_ = 1;
    negotiate(h);
    snd_wnd_ = max_snd_wnd_ = h.window;  // never scaled in a SYN
    snd_wl1_ = 0;
    snd_wl2_ = 0;
    set_state(tcp::state::syn_received);
    send_syn(now);
}

void connection::segment_syn_sent(u64 now, const net::tcp_header& h) {
    const bool ack = (h.flags & tf::kAck) != 0;
    const bool rst = (h.flags & tf::kRst) != 0;
    s64 a = 0;
    if (ack) {
        a = unwrap_ack(h.ack);
        if (a <= 0 || a > static_cast<s64>(snd_max_)) {
            if (!rst) send_rst(h.src_port, h.ack, 0, false);
            ++stats_.bad_segments;
            return;
        }
    }
    if (rst) {
        if (ack) {
            enter_closed();  // connection refused
        } else {
            ++stats_.bad_segments;
        }
        return;
    }
    if (!(h.flags & tf::kSyn)) {
        ++stats_.bad_segments;
        return;
    }
    irs_ = h.seq;
    rcv_nxt_ = 1;
    negotiate(h);
    snd_wnd_ = max_snd_wnd_ = h.window;
    snd_wl1_ = 0;
    snd_wl2_ = a;
    if (ack) {
        rcv_adv_ = rcv_nxt_ + std::min<u64>(receive_space(), 65535);  // what our SYN announced
        set_state(tcp::state::established);
        on_new_ack(now, static_cast<u64>(a));
        ack_now_ = true;
        output(now);
        if (ack_now_) send_ack(now);
    } else {
        // Simultaneous open (§3.5): answer with SYN-ACK (our SYN again, now with ACK).
        set_state(tcp::state::syn_received);
        send_syn(now);
    }
}

void connection::segment_synchronized(u64 now, const net::tcp_header& h, const std::uint8_t* payload, std::size_t len) {
    bool syn = (h.flags & tf::kSyn) != 0;
    bool fin = (h.flags & tf::kFin) != 0;
    const bool rst = (h.flags & tf::kRst) != 0;
    const bool ack = (h.flags & tf::kAck) != 0;

    if (state_ == tcp::state::syn_received && syn && !ack && h.seq == irs_) {
        send_syn(now);  // the peer repeated its SYN: our SYN-ACK was lost
        return;
    }

    const s64 seg_seq = unwrap_seq(h.seq);
    const u64 seg_len = len + (syn ? 1 : 0) + (fin ? 1 : 0);
    const bool pure = seg_len == 0;
    if (rcv_adv_ < rcv_nxt_) rcv_adv_ = rcv_nxt_;
    const s64 rn = static_cast<s64>(rcv_nxt_);
    const s64 wnd = static_cast<s64>(rcv_adv_ - rcv_nxt_);

    // Step 2 (RFC 5961 §3.2): RST only when it hits RCV.NXT exactly; challenge ACK when in window.
    if (rst) {
        if (seg_seq == rn) {
            if (state_ == tcp::state::syn_received && passive_) {
                reset_sequence_state();
                remote_port_ = cfg_.remote_port;
                set_state(tcp::state::listen);
            } else {
                enter_closed();
            }
            return;
        }
        ++stats_.bad_segments;
        if (seg_seq > rn && seg_seq < rn + std::max<s64>(wnd, 1)) send_ack(now);
        return;
    }

    // Step 1: acceptability and trimming to the window.
    s64 start = seg_seq;
    const std::uint8_t* data = payload;
    std::size_t dlen = len;
    bool old = false;
    bool need_ack = false;  // applied once the segment passed the SYN and ACK checks
    bool repeated_fin = false;
    if (pure) {
        if (start > rn + wnd) {
            ++stats_.bad_segments;  // no reply to a bare ACK: two desynchronized ends would
            return;                 // otherwise ACK each other forever
        }
        old = start < rn;  // a stale ACK: its acknowledgment is still looked at, no reply
    } else if (start + static_cast<s64>(seg_len) <= rn) {
        // Everything already received: a retransmission. ACK it (our ACK may have been lost).
        ++stats_.duplicate_segments;
        need_ack = true;
        old = true;
        repeated_fin = fin;
        syn = fin = false;
        dlen = 0;
    } else {
        const bool fin_only = fin && !syn && len == 0;
        if (start > rn + wnd || (start == rn + wnd && start != rn && !fin_only)) {
            ++stats_.bad_segments;  // beyond the window (a lone FIN right at the edge is kept)
            send_ack(now);
            return;
        }
        if (start < rn) {  // trim what we already have
            s64 drop = rn - start;
            if (syn) {
                syn = false;
                --drop;
                ++start;
            }
            const auto d = static_cast<std::size_t>(std::min<s64>(drop, static_cast<s64>(dlen)));
            data += d;
            dlen -= d;
            start += static_cast<s64>(d);
        }
        const s64 right = rn + wnd;
        if (start + static_cast<s64>(dlen) + (syn ? 1 : 0) > right) {
            // Data beyond the right edge is dropped, and the FIN with it; a FIN right after data
            // that fits exactly is kept (it takes no buffer space).
            const s64 keep = std::max<s64>(0, right - start - (syn ? 1 : 0));
            dlen = static_cast<std::size_t>(keep);
            fin = false;
            need_ack = true;
        }
        if (fin_pending_ && start + static_cast<s64>(dlen) > static_cast<s64>(fin_rseq_)) {
            // Nothing can follow the FIN already seen beyond a gap.
            dlen = static_cast<std::size_t>(std::max<s64>(0, static_cast<s64>(fin_rseq_) - start));
            fin = false;
        }
    }

    // Step 4 (RFC 5961 §4): a SYN in a synchronized state gets a challenge ACK.
    if (syn) {
        ++stats_.bad_segments;
        send_ack(now);
        return;
    }
    // Step 5: no ACK, no processing.
    if (!ack) {
        ++stats_.bad_segments;
        return;
    }
    if (!process_ack(now, h, seg_seq, pure && !old, pure)) return;
    if (need_ack) ack_now_ = true;
    if (repeated_fin && state_ == tcp::state::time_wait) {
        tw_deadline_ = add_sat(now, cfg_.time_wait_ns);  // §3.10.7.4: restart the 2 MSL timeout
    }

    // Steps 7 and 8: text and FIN.
    if (dlen > 0 || fin) {
        switch (state_) {
        case tcp::state::established:
        case tcp::state::fin_wait_1:
        case tcp::state::fin_wait_2: {
            bool fin_ok = true;
            if (dlen > 0) fin_ok = receive_data(now, static_cast<u64>(start), data, dlen);
            if (fin && fin_ok && !fin_pending_) {
                const u64 fin_pos = static_cast<u64>(start) + dlen;
                if (fin_pos >= rcv_nxt_ && (ooo_.empty() || ooo_.back().end <= fin_pos)) {
                    fin_pending_ = true;
                    fin_rseq_ = fin_pos;
                    ack_now_ = true;
                }
            }
            if (fin_pending_ && fin_rseq_ == rcv_nxt_) receive_fin(now);
            break;
        }
        default:
            ack_now_ = true;  // the peer's FIN is already in: nothing after it can be valid
            break;
        }
    }

    output(now);
    if (ack_now_ && synchronized()) send_ack(now);
}

// Steps 5 for synchronized states. Returns false when the segment is to be dropped.
bool connection::process_ack(u64 now, const net::tcp_header& h, s64 seg_seq, bool may_dup, bool bare) {
    const s64 a = unwrap_ack(h.ack);
    if (state_ == tcp::state::syn_received) {
        if (a > static_cast<s64>(snd_una_) && a <= static_cast<s64>(snd_max_)) {
            snd_wnd_ = u64{h.window} << snd_shift_;
            max_snd_wnd_ = std::max(max_snd_wnd_, snd_wnd_);
            snd_wl1_ = seg_seq;
            snd_wl2_ = a;
            set_state(tcp::state::established);
            if (fin_queued_) set_state(tcp::state::fin_wait_1);
        } else {
            send_rst(h.src_port, h.ack, 0, false);
            ++stats_.bad_segments;
            return false;
        }
    }
    // Unacceptable acknowledgments: reply with an ACK (§3.10.7.4), except to a bare ACK (see
    // the sequence check), so that two ends that disagree cannot start an ACK storm.
    if (a > static_cast<s64>(snd_max_)) {  // acknowledges something not yet sent
        ++stats_.bad_segments;
        if (!bare) send_ack(now);
        return false;
    }
    // RFC 5961 §5.2: acceptable if SND.UNA - MAX.SND.WND <= SEG.ACK.
    const s64 lowest = static_cast<s64>(snd_una_) - static_cast<s64>(std::max<u64>(max_snd_wnd_, 65535));
    if (a < lowest || a < 0) {
        ++stats_.bad_segments;
        if (!bare) send_ack(now);
        return false;
    }
    const u64 new_wnd = u64{h.window} << snd_shift_;
    const bool dup = may_dup && a == static_cast<s64>(snd_una_) && snd_max_ > snd_una_ && new_wnd == snd_wnd_ &&
                     !probe_outstanding_ && snd_wnd_ > 0;
    bool sack_dup = false;
    if (sack_mode()) {
        // RFC 6675 §5: every ACK updates the scoreboard. An ACK that SACKs new data counts as a
        // duplicate even if its window changed (RFC 6675 §2, the SACK-based definition).
        const bool newly = sack_update(h, std::max<u64>(snd_una_, static_cast<u64>(a)));
        sack_dup = newly && may_dup && a == static_cast<s64>(snd_una_) && snd_max_ > snd_una_ && !probe_outstanding_ &&
                   snd_wnd_ > 0;
    }
    if (a >= static_cast<s64>(snd_una_) && (snd_wl1_ < seg_seq || (snd_wl1_ == seg_seq && snd_wl2_ <= a))) {
        snd_wnd_ = new_wnd;
        snd_wl1_ = seg_seq;
        snd_wl2_ = a;
        max_snd_wnd_ = std::max(max_snd_wnd_, snd_wnd_);
    }
    if (ecn_ok_ && (h.flags & tf::kEce) && state_ != tcp::state::syn_received) {
        ++stats_.ecn_ece_received;
        // RFC 3168 §6.1.2: react as to a loss (halve the window, no retransmission), at most once
        // per window of data, and not again while fast recovery already reduced it.
        if (!in_recovery_ && snd_una_ >= ecn_recover_ && snd_max_ > 1) {
            ssthresh_ = reduced_ssthresh();
            cwnd_ = ssthresh_;
            ecn_recover_ = snd_max_;
            cwr_pending_ = true;
            ++stats_.ecn_cwnd_reductions;
        }
    }
    if (a > static_cast<s64>(snd_una_)) {
        on_new_ack(now, static_cast<u64>(a));
    } else if (dup || sack_dup) {
        on_dupack(now);
    } else if (sack_mode() && in_recovery_) {
        sack_transmit(now);  // RFC 6675 §5 (B)/(C) for any ACK during recovery
    }
    if (snd_wnd_ == 0 && snd_una_ < snd_max_ && !probe_outstanding_ && sending_state()) {
        // The window closed with data outstanding: stop retransmitting into it and probe with
        // the persist timer instead (the first unacknowledged octet serves as the probe).
        probe_outstanding_ = true;
        snd_nxt_ = snd_una_;
        rto_deadline_ = kNever;
    } else if (probe_outstanding_ && snd_wnd_ > 0) {
        // The window opened: the probe byte, if still unacknowledged, is sent again as ordinary
        // data.
        probe_outstanding_ = false;
        persist_deadline_ = kNever;
        persist_backoff_ = 0;
        if (snd_una_ < snd_max_) snd_nxt_ = snd_una_;
    } else if (probe_outstanding_ && snd_una_ >= snd_max_) {
        // The probe got in but the window still reads zero (scaling rounds a few bytes of space
        // down to 0): keep probing, with the persist timer and its backoff left as they are.
        probe_outstanding_ = false;
    }
    switch (state_) {
    case tcp::state::fin_wait_1:
        if (fin_acked()) set_state(tcp::state::fin_wait_2);
        break;
    case tcp::state::closing:
        if (fin_acked()) enter_time_wait(now);
        break;
    case tcp::state::last_ack:
        if (fin_acked()) {
            enter_closed();
            return false;
        }
        break;
    default:
        break;
    }
    return true;
}

void connection::on_new_ack(u64 now, u64 ack) {
    const u64 acked = ack - snd_una_;
    const u64 flight_before = snd_max_ - snd_una_;
    rexmit_count_ = 0;
    if (rtt_active_ && ack >= rtt_seq_) {
        rtt_sample(now - rtt_start_);
        rtt_active_ = false;
    }
    snd_una_ = ack;
    if (snd_nxt_ < snd_una_) snd_nxt_ = snd_una_;
    if (sack_mode()) sack_trim();

    const u64 off = std::min(snd_una_ - 1, stream_end_);
    if (off > acked_off_) {
        acked_off_ = off;
        while (!boundaries_.empty() && boundaries_.at(0) <= off) boundaries_.pop_front();
        env_.acked(off);
    }

    if (in_recovery_ && sack_mode()) {
        if (ack >= recover_) {
            // RFC 6675 §5 (A): the cumulative ACK covers RecoveryPoint. cwnd stays at ssthresh;
            // the scoreboard above SND.UNA is kept.
            in_recovery_ = false;
            dupacks_ = 0;
            ca_acc_ = 0;
        } else {
            // (B)/(C); RFC 6298 §5.3 restarts the timer on an ACK of new data.
            arm_rto(now);
            sack_transmit(now);
            return;
        }
    } else if (in_recovery_) {
        if (ack >= recover_) {
            // RFC 6582 §3.2 step 3, full acknowledgment: deflate.
            const u64 flight = snd_max_ - snd_una_;
            cwnd_ = std::min(ssthresh_, std::max<u64>(flight, mss_) + mss_);
            in_recovery_ = false;
            dupacks_ = 0;
            ca_acc_ = 0;
        } else {
            // Partial acknowledgment: retransmit the next hole, partial window deflation.
            cwnd_ = cwnd_ > acked ? cwnd_ - acked : 0;
            if (acked >= mss_) cwnd_ += mss_;
            cwnd_ = std::max<u64>(cwnd_, mss_);
            retransmit_first(now);
            if (first_partial_) {
                first_partial_ = false;
                arm_rto(now);
            }
            return;
        }
    } else {
        dupacks_ = 0;
        // RFC 5681 §3.1 with byte counting; grow only while the window is actually used.
        if (cwnd_ < ssthresh_) {
            if (flight_before * 2 >= cwnd_) cwnd_ += std::min<u64>(acked, mss_);
        } else if (flight_before + 2 * u64{mss_} >= cwnd_) {
            ca_acc_ += acked;
            if (ca_acc_ >= cwnd_) {
                ca_acc_ -= cwnd_;
                cwnd_ += mss_;
            }
        }
        cwnd_ = std::min(cwnd_, kMaxCwnd);
    }

    // RFC 6298 §5.2/5.3.
    if (snd_una_ >= snd_max_) {
        rto_deadline_ = kNever;
    } else {
        arm_rto(now);
    }
}

void connection::on_dupack(u64 now) {
    if (sack_mode()) {
        sack_dupack(now);
        return;
    }
    ++stats_.dupacks_received;
    if (in_recovery_) {
        cwnd_ = std::min(cwnd_ + mss_, kMaxCwnd);  // RFC 6582 §3.2 step 4 (inflation)
        return;
    }
    if (++dupacks_ != cfg_.dupack_threshold) return;
    if (snd_una_ < recover_) return;  // RFC 6582 §3.2 step 2: still in the previous episode
    ssthresh_ = reduced_ssthresh();
    recover_ = snd_max_;
    in_recovery_ = true;
    first_partial_ = true;
    ++stats_.fast_retransmits;
    retransmit_first(now);
    cwnd_ = ssthresh_ + u64{cfg_.dupack_threshold} * mss_;
}

}  // namespace rnic::proto::tcp
