// TCP connection state machine: see connection.h. Section references are to RFC 9293 unless noted.
#include "proto/tcp/connection.h"

#include <algorithm>
#include <cstring>

namespace rnic::proto::tcp {

namespace tf = net::tcp_flags;

namespace {
constexpr std::uint64_t kMaxCwnd = std::uint64_t{1} << 30;
constexpr std::uint32_t kDefaultMss = 536;  // §3.7.1: when the peer sends no MSS option
constexpr std::uint8_t kMaxWindowShift = 14;  // RFC 7323 §2.3

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}
}  // namespace

const char* to_string(State s) {
    switch (s) {
        case State::closed: return "CLOSED";
        case State::listen: return "LISTEN";
        case State::syn_sent: return "SYN-SENT";
        case State::syn_received: return "SYN-RECEIVED";
        case State::established: return "ESTABLISHED";
        case State::fin_wait_1: return "FIN-WAIT-1";
        case State::fin_wait_2: return "FIN-WAIT-2";
        case State::close_wait: return "CLOSE-WAIT";
        case State::closing: return "CLOSING";
        case State::last_ack: return "LAST-ACK";
        case State::time_wait: return "TIME-WAIT";
    }
    return "?";
}

// ---------------------------------------------------------------------------------------------
// detail::OffsetQueue

namespace detail {

void OffsetQueue::push_back(std::uint64_t v) {
    if (size_ == buf_.size()) {
        std::vector<std::uint64_t> grown(buf_.empty() ? 64 : buf_.size() * 2);
        for (std::size_t i = 0; i < size_; ++i) grown[i] = at(i);
        buf_.swap(grown);
        head_ = 0;
    }
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
}

void OffsetQueue::pop_front() {
    if (size_ == 0) return;
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
}

std::uint64_t OffsetQueue::last_in(std::uint64_t lo, std::uint64_t hi) const {
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

std::uint64_t OffsetQueue::first_in(std::uint64_t lo, std::uint64_t hi) const {
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

Connection::Connection(const Config& cfg, Env& env) : cfg_(cfg), env_(env) {
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

void Connection::reset_sequence_state() {
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

void Connection::set_state(State s) {
    if (s == state_) return;
    const State from = state_;
    state_ = s;
    env_.state_changed(from, s);
}

void Connection::enter_closed() {
    rto_deadline_ = delack_deadline_ = persist_deadline_ = tw_deadline_ = kNever;
    probe_outstanding_ = false;
    ack_now_ = false;
    set_state(State::closed);
}

void Connection::enter_time_wait(u64 now) {
    rto_deadline_ = persist_deadline_ = delack_deadline_ = kNever;
    probe_outstanding_ = false;
    tw_deadline_ = add_sat(now, cfg_.time_wait_ns);
    set_state(State::time_wait);
}

bool Connection::sending_state() const {
    switch (state_) {
        case State::established:
        case State::close_wait:
        case State::fin_wait_1:
        case State::closing:
        case State::last_ack:
            return true;
        default:
            return false;
    }
}

bool Connection::synchronized() const {
    switch (state_) {
        case State::closed:
        case State::listen:
        case State::syn_sent:
            return false;
        default:
            return true;
    }
}

bool Connection::fin_acked() const { return fin_queued_ && snd_una_ >= data_end() + 1; }

// ---------------------------------------------------------------------------------------------
// User calls

void Connection::reset_stream_state() {
    stream_end_ = acked_off_ = 0;
    fin_queued_ = false;
    boundaries_.clear();
    unconsumed_ = 0;
}

void Connection::connect(u64 now) {
    if (state_ != State::closed) return;
    if (opened_) reset_stream_state();  // reuse after a previous connection
    opened_ = true;
    reset_sequence_state();
    passive_ = false;
    remote_port_ = cfg_.remote_port;
    set_state(State::syn_sent);
    send_syn(now);
    finish(now);
}

void Connection::set_iss(std::uint32_t iss) {
    if (state_ == State::closed) cfg_.iss = iss;
}

void Connection::listen() {
    if (state_ != State::closed) return;
    if (opened_) reset_stream_state();
    opened_ = true;
    reset_sequence_state();
    passive_ = true;
    remote_port_ = cfg_.remote_port;
    set_state(State::listen);
}

std::size_t Connection::send_space() const {
    if (fin_queued_) return 0;
    const u64 used = stream_end_ - acked_off_;
    return used >= cfg_.send_buffer ? 0 : static_cast<std::size_t>(cfg_.send_buffer - used);
}

void Connection::on_send_data(u64 now, std::size_t len) {
    len = std::min(len, send_space());
    if (len == 0) return;
    stream_end_ += len;
    if (!corked_) output(now);
    finish(now);
}

void Connection::set_cork(u64 now, bool corked) {
    if (corked_ == corked) return;
    corked_ = corked;
    if (!corked_) {
        output(now);
        finish(now);
    }
}

void Connection::mark_boundary(std::uint64_t stream_offset) {
    if (stream_offset == 0 || stream_offset <= acked_off_) return;
    if (!boundaries_.empty() && stream_offset <= boundaries_.back()) return;
    boundaries_.push_back(stream_offset);
}

void Connection::close(u64 now) {
    switch (state_) {
        case State::listen:
        case State::syn_sent:
            enter_closed();
            return;
        case State::syn_received:
            // §3.10.4: queued until ESTABLISHED is reached, then FIN-WAIT-1.
            fin_queued_ = true;
            return;
        case State::established:
            fin_queued_ = true;
            set_state(State::fin_wait_1);
            break;
        case State::close_wait:
            fin_queued_ = true;
            set_state(State::last_ack);
            break;
        default:
            return;  // closed, or already closing
    }
    output(now);
    finish(now);
}

void Connection::abort(u64 now) {
    (void)now;
    switch (state_) {
        case State::syn_received:
        case State::established:
        case State::fin_wait_1:
        case State::fin_wait_2:
        case State::close_wait:
            // §3.10.5: <SEQ=SND.NXT><CTL=RST>. snd_max is what the peer expects once everything
            // in flight has arrived; if it does not match, RFC 5961 challenge ACK + our reply in
            // CLOSED resolves it.
            send_rst(remote_port_, wire_seq(snd_max_), 0, false);
            break;
        default:
            break;
    }
    if (state_ != State::closed) enter_closed();
}

void Connection::receive_consumed(u64 now, std::size_t len) {
    if (!cfg_.owner_consumes) return;
    unconsumed_ -= std::min<u64>(len, unconsumed_);
    switch (state_) {
        case State::established:
        case State::fin_wait_1:
        case State::fin_wait_2:
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

std::uint64_t Connection::bytes_in_flight() const { return snd_nxt_ - snd_una_; }

std::uint32_t Connection::cwnd() const {
    return static_cast<std::uint32_t>(std::min<u64>(cwnd_, UINT32_MAX));
}

std::uint32_t Connection::ssthresh() const {
    return static_cast<std::uint32_t>(std::min<u64>(ssthresh_, UINT32_MAX));
}

std::uint64_t Connection::send_stream_sent() const {
    return snd_max_ <= 1 ? 0 : std::min(snd_max_ - 1, stream_end_);
}

std::uint64_t Connection::receive_window() const {
    return rcv_adv_ > rcv_nxt_ ? rcv_adv_ - rcv_nxt_ : 0;
}

std::size_t Connection::out_of_order_bytes() const {
    u64 n = 0;
    for (const Interval& iv : ooo_) n += iv.end - iv.start;
    return static_cast<std::size_t>(n);
}

std::uint64_t Connection::next_deadline() const {
    return std::min({rto_deadline_, delack_deadline_, persist_deadline_, tw_deadline_});
}

// ---------------------------------------------------------------------------------------------
// Sequence conversion

Connection::s64 Connection::unwrap_ack(std::uint32_t ack) const {
    const auto d = static_cast<std::int32_t>(ack - wire_seq(snd_una_));
    return static_cast<s64>(snd_una_) + d;
}

Connection::s64 Connection::unwrap_seq(std::uint32_t seq) const {
    const auto d = static_cast<std::int32_t>(seq - wire_ack());
    return static_cast<s64>(rcv_nxt_) + d;
}

// ---------------------------------------------------------------------------------------------
// Segment arrival (§3.10.7)

void Connection::on_segment(u64 now, const net::TcpHeader& h, const std::uint8_t* payload, std::size_t len, bool ce) {
    ++stats_.segments_received;
    if (ce) ++stats_.ecn_ce_received;
    if (ecn_ok_ && synchronized() && h.src_port == remote_port_ && h.dst_port == cfg_.local_port &&
        !(h.flags & (tf::syn | tf::rst))) {
        // RFC 3168 §6.1.3: CWR ends the echo; CE (even on the same packet) starts it again, and a
        // CE-marked data segment is acknowledged at once.
        if (h.flags & tf::cwr) ece_pending_ = false;
        if (ce) {
            ece_pending_ = true;
            if (len > 0) ack_now_ = true;
        }
    }
    const bool syn = (h.flags & tf::syn) != 0;
    const bool rst = (h.flags & tf::rst) != 0;
    const bool fin = (h.flags & tf::fin) != 0;
    if ((len > 0 && payload == nullptr) || h.dst_port != cfg_.local_port || (syn && (rst || fin))) {
        ++stats_.bad_segments;
        return;
    }
    if (state_ == State::listen) {
        if (cfg_.remote_port != 0 && h.src_port != cfg_.remote_port) {
            ++stats_.bad_segments;
            return;
        }
    } else if (state_ != State::closed && h.src_port != remote_port_) {
        ++stats_.bad_segments;
        return;
    }
    switch (state_) {
        case State::closed:
            segment_closed(h, len);
            return;
        case State::listen:
            segment_listen(now, h);
            break;
        case State::syn_sent:
            segment_syn_sent(now, h);
            break;
        default:
            segment_synchronized(now, h, payload, len);
            break;
    }
    finish(now);
}

void Connection::segment_closed(const net::TcpHeader& h, std::size_t len) {
    if (h.flags & tf::rst) return;
    if (h.flags & tf::ack) {
        send_rst(h.src_port, h.ack, 0, false);
    } else {
        const std::uint32_t seg_len = static_cast<std::uint32_t>(len) + ((h.flags & tf::syn) ? 1 : 0) +
                                      ((h.flags & tf::fin) ? 1 : 0);
        send_rst(h.src_port, 0, h.seq + seg_len, true);
    }
}

void Connection::negotiate(const net::TcpHeader& syn) {
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
    const bool ece = (syn.flags & tf::ece) != 0, cwr = (syn.flags & tf::cwr) != 0;
    ecn_ok_ = cfg_.ecn && ece && (state_ == State::listen ? cwr : !cwr);
    // RFC 5681 §3.1: the initial window is one segment if the SYN or SYN-ACK was lost.
    cwnd_ = (syn_lost_ ? 1 : std::uint64_t{cfg_.initial_window_segments}) * mss_;
    ssthresh_ = kMaxCwnd;
}

void Connection::segment_listen(u64 now, const net::TcpHeader& h) {
    if (h.flags & tf::rst) return;
    if (h.flags & tf::ack) {
        send_rst(h.src_port, h.ack, 0, false);
        ++stats_.bad_segments;
        return;
    }
    if (!(h.flags & tf::syn)) {
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
    set_state(State::syn_received);
    send_syn(now);
}

void Connection::segment_syn_sent(u64 now, const net::TcpHeader& h) {
    const bool ack = (h.flags & tf::ack) != 0;
    const bool rst = (h.flags & tf::rst) != 0;
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
    if (!(h.flags & tf::syn)) {
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
        set_state(State::established);
        on_new_ack(now, static_cast<u64>(a));
        ack_now_ = true;
        output(now);
        if (ack_now_) send_ack(now);
    } else {
        // Simultaneous open (§3.5): answer with SYN-ACK (our SYN again, now with ACK).
        set_state(State::syn_received);
        send_syn(now);
    }
}

void Connection::segment_synchronized(u64 now, const net::TcpHeader& h, const std::uint8_t* payload,
                                      std::size_t len) {
    bool syn = (h.flags & tf::syn) != 0;
    bool fin = (h.flags & tf::fin) != 0;
    const bool rst = (h.flags & tf::rst) != 0;
    const bool ack = (h.flags & tf::ack) != 0;

    if (state_ == State::syn_received && syn && !ack && h.seq == irs_) {
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
            if (state_ == State::syn_received && passive_) {
                reset_sequence_state();
                remote_port_ = cfg_.remote_port;
                set_state(State::listen);
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
    bool need_ack = false;       // applied once the segment passed the SYN and ACK checks
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
    if (repeated_fin && state_ == State::time_wait) {
        tw_deadline_ = add_sat(now, cfg_.time_wait_ns);  // §3.10.7.4: restart the 2 MSL timeout
    }

    // Steps 7 and 8: text and FIN.
    if (dlen > 0 || fin) {
        switch (state_) {
            case State::established:
            case State::fin_wait_1:
            case State::fin_wait_2: {
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
bool Connection::process_ack(u64 now, const net::TcpHeader& h, s64 seg_seq, bool may_dup, bool bare) {
    const s64 a = unwrap_ack(h.ack);
    if (state_ == State::syn_received) {
        if (a > static_cast<s64>(snd_una_) && a <= static_cast<s64>(snd_max_)) {
            snd_wnd_ = u64{h.window} << snd_shift_;
            max_snd_wnd_ = std::max(max_snd_wnd_, snd_wnd_);
            snd_wl1_ = seg_seq;
            snd_wl2_ = a;
            set_state(State::established);
            if (fin_queued_) set_state(State::fin_wait_1);
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
        sack_dup = newly && may_dup && a == static_cast<s64>(snd_una_) && snd_max_ > snd_una_ &&
                   !probe_outstanding_ && snd_wnd_ > 0;
    }
    if (a >= static_cast<s64>(snd_una_) && (snd_wl1_ < seg_seq || (snd_wl1_ == seg_seq && snd_wl2_ <= a))) {
        snd_wnd_ = new_wnd;
        snd_wl1_ = seg_seq;
        snd_wl2_ = a;
        max_snd_wnd_ = std::max(max_snd_wnd_, snd_wnd_);
    }
    if (ecn_ok_ && (h.flags & tf::ece) && state_ != State::syn_received) {
        ++stats_.ecn_ece_received;
        // RFC 3168 §6.1.2: react as to a loss (halve the window, no retransmission), at most once
        // per window of data, and not again while fast recovery already reduced it.
        if (!in_recovery_ && snd_una_ >= ecn_recover_ && snd_max_ > 1) {
            const u64 flight = snd_max_ - snd_una_;
            ssthresh_ = std::max<u64>(flight / 2, 2 * u64{mss_});
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
        case State::fin_wait_1:
            if (fin_acked()) set_state(State::fin_wait_2);
            break;
        case State::closing:
            if (fin_acked()) enter_time_wait(now);
            break;
        case State::last_ack:
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

void Connection::on_new_ack(u64 now, u64 ack) {
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

void Connection::on_dupack(u64 now) {
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
    const u64 flight = snd_max_ - snd_una_;
    ssthresh_ = std::max<u64>(flight / 2, 2 * u64{mss_});
    recover_ = snd_max_;
    in_recovery_ = true;
    first_partial_ = true;
    ++stats_.fast_retransmits;
    retransmit_first(now);
    cwnd_ = ssthresh_ + u64{cfg_.dupack_threshold} * mss_;
}

// ---------------------------------------------------------------------------------------------
// SACK-based loss recovery (RFC 6675). The scoreboard sb_ holds the SACKed ranges above SND.UNA as
// half-open sequence-offset ranges; an octet that is neither cumulatively acknowledged nor in sb_
// is "unSACKed". HighRxt, RescueRxt are kept as ends (highest octet + 1), HighACK is snd_una_ - 1,
// HighData is snd_max_ - 1.

bool Connection::sack_update(const net::TcpHeader& h, u64 una) {
    bool newly = false;
    for (const net::SackBlock& b : h.sack_blocks) {
        const s64 l = unwrap_ack(b.left);
        const s64 r = unwrap_ack(b.right);
        // Only blocks strictly above the cumulative ACK and within what was sent (RFC 2018 §4;
        // D-SACK blocks below it, RFC 2883, carry nothing for the scoreboard).
        if (l <= static_cast<s64>(una) || r <= l || r > static_cast<s64>(snd_max_)) continue;
        const u64 lo = static_cast<u64>(l), hi = static_cast<u64>(r);
        // Ranges that overlap or touch [lo, hi) are [i, j).
        std::size_t i = 0;
        while (i < sb_.size() && sb_[i].end < lo) ++i;
        std::size_t j = i;
        u64 had = 0;
        Interval merged{lo, hi};
        while (j < sb_.size() && sb_[j].start <= hi) {
            had += sb_[j].end - sb_[j].start;
            merged.start = std::min(merged.start, sb_[j].start);
            merged.end = std::max(merged.end, sb_[j].end);
            ++j;
        }
        if (i == j && sb_.size() >= kMaxScoreboard) continue;  // bounded: forget this block
        if (merged.end - merged.start > had) newly = true;
        sb_.erase(sb_.begin() + static_cast<std::ptrdiff_t>(i), sb_.begin() + static_cast<std::ptrdiff_t>(j));
        sb_.insert(sb_.begin() + static_cast<std::ptrdiff_t>(i), merged);
    }
    return newly;
}

void Connection::sack_trim() {
    // Ranges below SND.UNA are acknowledged. One that straddles it means the cumulative ACK and
    // the SACK information disagree: it is forgotten rather than SND.UNA be taken as SACKed.
    std::size_t k = 0;
    while (k < sb_.size() && sb_[k].start <= snd_una_) ++k;
    if (k > 0) sb_.erase(sb_.begin(), sb_.begin() + static_cast<std::ptrdiff_t>(k));
}

// IsLost() for any unSACKed octet below sb_[above] and above sb_[above - 1]: DupThresh
// discontiguous SACKed ranges above it, or more than (DupThresh - 1) * SMSS SACKed octets.
bool Connection::sack_hole_lost(std::size_t above) const {
    if (above >= sb_.size()) return false;
    const std::size_t ranges = sb_.size() - above;
    if (ranges >= cfg_.dupack_threshold) return true;
    u64 bytes = 0;
    for (std::size_t k = above; k < sb_.size(); ++k) bytes += sb_[k].end - sb_[k].start;
    return bytes > u64{cfg_.dupack_threshold - 1} * mss_;
}

bool Connection::sack_is_lost(u64 seq) const {
    std::size_t k = 0;
    while (k < sb_.size() && sb_[k].start <= seq) ++k;
    return sack_hole_lost(k);
}

Connection::u64 Connection::sack_hole_end(u64 s) const {
    for (const Interval& iv : sb_) {
        if (iv.start > s) return iv.start;
    }
    return snd_max_;
}

// SetPipe(): octets in [SND.UNA, SND.MAX) not SACKed count once unless IsLost(), and once more
// when at or below HighRxt (retransmitted).
std::uint64_t Connection::sack_pipe() const {
    if (!sack_mode()) return 0;
    // Holes from the top down, so that the SACKed ranges above each are summed once.
    const std::size_t n = sb_.size();
    const u64 hr = std::max(high_rxt_, snd_una_);
    const u64 lost_bytes = u64{cfg_.dupack_threshold - 1} * mss_;
    u64 pipe = 0;
    u64 above = 0;  // SACKed octets above the hole
    for (std::size_t k = n + 1; k-- > 0;) {
        const u64 hole_start = k == 0 ? snd_una_ : sb_[k - 1].end;
        const u64 hole_end = k < n ? sb_[k].start : snd_max_;
        if (k < n) above += sb_[k].end - sb_[k].start;
        const bool lost = k < n && (n - k >= cfg_.dupack_threshold || above > lost_bytes);
        if (hole_end > hole_start) {
            if (!lost) pipe += hole_end - hole_start;
            if (hr > hole_start) pipe += std::min(hr, hole_end) - hole_start;
        }
    }
    return pipe;
}

// A retransmission of the segment starting at s (a segment start: SND.UNA, the end of a SACKed
// range or of an earlier retransmission), cut like retransmit_first() and never reaching into
// SACKed data at `cap`. Returns the end of what was sent (s when nothing was).
Connection::u64 Connection::sack_resend(u64 now, u64 s, u64 cap) {
    const u64 dend = data_end();
    cap = std::min(cap, snd_max_);
    if (s >= dend) {
        if (fin_queued_ && s < snd_max_) {
            send_data_segment(now, s, s, true);
            return s + 1;
        }
        return s;
    }
    if (cap <= s) return s;
    const u64 hi = std::min({s + mss_, dend, cap});
    u64 e = hi;
    if (hi < dend || cfg_.one_boundary_per_segment) {
        const u64 b = cfg_.one_boundary_per_segment ? boundaries_.first_in(s - 1, hi - 1)
                                                    : boundaries_.last_in(s - 1, hi - 1);
        if (b != 0) e = b + 1;
    }
    const bool fin = fin_queued_ && e == dend && snd_max_ > dend;
    send_data_segment(now, s, e, fin);
    return e + (fin ? 1 : 0);
}

// RFC 6675 §5: a duplicate ACK (the scoreboard is already updated).
void Connection::sack_dupack(u64 now) {
    ++stats_.dupacks_received;
    if (in_recovery_) {
        sack_transmit(now);  // (B)/(C)
        return;
    }
    ++dupacks_;
    if (snd_una_ < recover_) return;  // §5.1: not before HighACK reaches the RecoveryPoint of a timeout
    // (1)/(2); (3) Limited Transmit is not used.
    if (dupacks_ < cfg_.dupack_threshold && !sack_is_lost(snd_una_)) return;
    // (4)
    const u64 flight = snd_max_ - snd_una_;
    recover_ = snd_max_;                                            // (4.1)
    ssthresh_ = std::max<u64>(flight / 2, 2 * u64{mss_});           // (4.2), RFC 5681 eq. (4)
    cwnd_ = ssthresh_;
    ca_acc_ = 0;
    in_recovery_ = true;
    ++stats_.fast_retransmits;
    high_rxt_ = rescue_rxt_ = sack_resend(now, snd_una_, sack_hole_end(snd_una_));  // (4.3)
    sack_transmit(now);                                             // (4.4), (4.5)
}

// RFC 6675 §5 (C): NextSeg() and send while cwnd - pipe >= 1 SMSS.
void Connection::sack_transmit(u64 now) {
    if (!in_recovery_ || !sending_state() || probe_outstanding_) return;
    for (;;) {
        const u64 pipe = sack_pipe();
        if (pipe >= cwnd_ || cwnd_ - pipe < mss_) return;
        // The smallest unSACKed octet above HighRxt and below the highest SACKed octet.
        u64 x = std::max(snd_una_, high_rxt_);
        std::size_t k = 0;
        for (; k < sb_.size(); ++k) {
            if (x < sb_[k].start) break;
            if (x < sb_[k].end) x = sb_[k].end;
        }
        const bool hole = k < sb_.size();
        if (hole && sack_hole_lost(k)) {  // rule (1)
            const u64 e = sack_resend(now, x, sb_[k].start);
            if (e <= x) return;
            high_rxt_ = e;  // (C.2)
            continue;
        }
        // Rule (2): new data, within the peer's window, cut like in output().
        if (!corked_ && snd_nxt_ >= snd_max_) {
            const u64 s = snd_max_;
            const u64 dend = data_end();
            if (s < dend) {
                const u64 e = segment_end(s, dend, snd_una_ + snd_wnd_, true);
                if (e > s) {
                    send_data_segment(now, s, e, fin_queued_ && e == dend);
                    continue;
                }
            } else if (s == dend && fin_queued_) {
                send_data_segment(now, s, s, true);
                continue;
            }
        }
        if (hole) {  // rule (3)
            const u64 e = sack_resend(now, x, sb_[k].start);
            if (e <= x) return;
            high_rxt_ = e;
            continue;
        }
        // Rule (4), rescue retransmission: once per recovery, after HighACK passed RescueRxt,
        // one segment holding the highest unSACKed octet. HighRxt is left alone.
        if (snd_una_ > rescue_rxt_ && snd_una_ < snd_max_) {
            const bool top_open = sb_.empty() || sb_.back().end < snd_max_;
            const u64 top = top_open ? snd_max_ - 1 : sb_.back().start - 1;
            u64 hs = snd_una_;  // start of the hole holding `top`
            if (top_open) {
                if (!sb_.empty()) hs = sb_.back().end;
            } else if (sb_.size() >= 2) {
                hs = sb_[sb_.size() - 2].end;
            }
            u64 start = hs;
            if (top < data_end()) {
                // The FPDU holding `top` (it starts after the last FPDU end below it), then the
                // MSS-sized piece of it that holds `top`.
                if (top > hs) {
                    if (const u64 b = boundaries_.last_in(hs - 1, top - 1)) start = b + 1;
                }
                start += (top - start) / mss_ * mss_;
            } else {
                start = top;  // the FIN alone
            }
            rescue_rxt_ = recover_;
            sack_resend(now, start, sack_hole_end(start));
            continue;
        }
        return;
    }
}

// In-window data starting at or after rcv_nxt. Returns false when it had to be dropped.
bool Connection::receive_data(u64 now, u64 start, const std::uint8_t* data, std::size_t len) {
    if (start != rcv_nxt_) {
        const bool kept = store_out_of_order(start, data, len);
        ack_now_ = true;  // RFC 5681 §4.2: immediate duplicate ACK
        return kept;
    }
    const bool had_holes = !ooo_.empty();
    env_.deliver(data, len);
    stats_.bytes_delivered += len;
    rcv_delivered_ += len;
    rcv_nxt_ += len;
    if (cfg_.owner_consumes) unconsumed_ += len;
    if (had_holes) {
        deliver_in_order_from_ring();
        ack_now_ = true;  // filled (part of) a gap: ACK at once
    } else if (!ack_now_) {
        if (cfg_.delayed_ack_ns == 0 || ++delack_segs_ >= 2) {
            ack_now_ = true;
        } else if (delack_deadline_ == kNever) {
            delack_deadline_ = add_sat(now, cfg_.delayed_ack_ns);
        }
    }
    return true;
}

bool Connection::store_out_of_order(u64 s, const std::uint8_t* data, std::size_t len) {
    const u64 e = s + len;
    std::size_t i = 0;
    const std::size_t n = ooo_.size();
    while (i < n && ooo_[i].end < s) ++i;
    if (i < n && ooo_[i].start <= s && ooo_[i].end >= e) {
        ++stats_.duplicate_segments;
        note_sack_arrival(s);
        return true;
    }
    std::size_t j = i;
    while (j < n && ooo_[j].start <= e) ++j;
    if (n - (j - i) + 1 > kMaxOooIntervals) return false;  // too fragmented: drop, the peer resends
    if (ooo_buf_.empty()) ooo_buf_.resize(cfg_.receive_buffer);
    const std::size_t size = ooo_buf_.size();
    for (u64 k = s; k < e;) {
        const auto pos = static_cast<std::size_t>(k % size);
        const std::size_t chunk = static_cast<std::size_t>(std::min<u64>(e - k, size - pos));
        std::memcpy(ooo_buf_.data() + pos, data + (k - s), chunk);
        k += chunk;
    }
    Interval merged{s, e};
    if (i < j) {
        merged.start = std::min(merged.start, ooo_[i].start);
        merged.end = std::max(merged.end, ooo_[j - 1].end);
        ooo_.erase(ooo_.begin() + static_cast<std::ptrdiff_t>(i), ooo_.begin() + static_cast<std::ptrdiff_t>(j));
    }
    ooo_.insert(ooo_.begin() + static_cast<std::ptrdiff_t>(i), merged);
    ++stats_.out_of_order_segments;
    note_sack_arrival(s);
    return true;
}

void Connection::deliver_in_order_from_ring() {
    const std::size_t size = ooo_buf_.size();
    while (!ooo_.empty() && ooo_.front().start <= rcv_nxt_) {
        const Interval iv = ooo_.front();
        ooo_.erase(ooo_.begin());
        while (iv.end > rcv_nxt_) {
            const auto pos = static_cast<std::size_t>(rcv_nxt_ % size);
            const std::size_t chunk = static_cast<std::size_t>(std::min<u64>(iv.end - rcv_nxt_, size - pos));
            env_.deliver(ooo_buf_.data() + pos, chunk);
            stats_.bytes_delivered += chunk;
            rcv_delivered_ += chunk;
            rcv_nxt_ += chunk;
            if (cfg_.owner_consumes) unconsumed_ += chunk;
        }
    }
}

void Connection::note_sack_arrival(u64 start) {
    // RFC 2018 §4: the first block reports the most recent arrival, then the most recent others.
    const std::size_t n = std::min(sack_recent_n_ + 1, kMaxSackBlocks);
    for (std::size_t k = n - 1; k > 0; --k) sack_recent_[k] = sack_recent_[k - 1];
    sack_recent_[0] = start;
    sack_recent_n_ = n;
}

void Connection::receive_fin(u64 now) {
    fin_pending_ = false;
    rcv_nxt_ += 1;
    ack_now_ = true;
    switch (state_) {
        case State::syn_received:
        case State::established:
            set_state(State::close_wait);
            break;
        case State::fin_wait_1:
            if (fin_acked()) {
                enter_time_wait(now);
            } else {
                set_state(State::closing);
            }
            break;
        case State::fin_wait_2:
            enter_time_wait(now);
            break;
        default:
            break;
    }
}

// ---------------------------------------------------------------------------------------------
// Sending

Connection::u64 Connection::receive_space() const {
    const u64 used = cfg_.owner_consumes ? unconsumed_ : 0;
    const u64 space = cfg_.receive_buffer > used ? cfg_.receive_buffer - used : 0;
    return std::min(space, u64{65535} << rcv_shift_);
}

std::uint16_t Connection::advertise_window() {
    if (rcv_adv_ < rcv_nxt_) rcv_adv_ = rcv_nxt_;
    u64 target = rcv_adv_;
    const u64 edge = rcv_nxt_ + receive_space();
    // Receiver SWS avoidance (§3.8.6.2.2): move the right edge only by a useful amount.
    if (edge > rcv_adv_ && edge - rcv_adv_ >= std::min<u64>(cfg_.receive_buffer / 2, mss_)) target = edge;
    const u64 field = std::min<u64>((target - rcv_nxt_) >> rcv_shift_, 65535);
    // rcv_adv_ is the right edge as the peer sees it (scaling rounds down); it never moves back,
    // and is what incoming segments are checked against.
    rcv_adv_ = std::max(rcv_adv_, rcv_nxt_ + (field << rcv_shift_));
    return static_cast<std::uint16_t>(field);
}

void Connection::fill_header(bool with_ack) {
    hdr_.src_port = cfg_.local_port;
    hdr_.dst_port = remote_port_;
    hdr_.ack = with_ack ? wire_ack() : 0;
    hdr_.flags = with_ack ? tf::ack : 0;
    if (with_ack && ece_pending_) hdr_.flags |= tf::ece;  // RFC 3168 §6.1.3: echo until CWR
    hdr_.window = with_ack ? advertise_window() : 0;
    hdr_.mss.reset();
    hdr_.window_scale.reset();
    hdr_.sack_permitted = false;
    hdr_.sack_blocks.clear();
    if (!with_ack || !sack_ok_ || ooo_.empty()) return;
    auto add = [this](const Interval& iv) {
        const net::SackBlock b{irs_ + static_cast<std::uint32_t>(iv.start), irs_ + static_cast<std::uint32_t>(iv.end)};
        for (const net::SackBlock& x : hdr_.sack_blocks) {
            if (x.left == b.left) return;
        }
        if (hdr_.sack_blocks.size() < kMaxSackBlocks) hdr_.sack_blocks.push_back(b);
    };
    for (std::size_t k = 0; k < sack_recent_n_; ++k) {
        const u64 r = sack_recent_[k];
        for (const Interval& iv : ooo_) {
            if (iv.start <= r && r < iv.end) {
                add(iv);
                break;
            }
        }
    }
    for (std::size_t k = ooo_.size(); k > 0 && hdr_.sack_blocks.size() < kMaxSackBlocks; --k) add(ooo_[k - 1]);
}

void Connection::ack_sent() {
    ack_now_ = false;
    delack_segs_ = 0;
    delack_deadline_ = kNever;
}

void Connection::send_syn(u64 now) {
    const bool syn_ack = state_ == State::syn_received;
    hdr_.src_port = cfg_.local_port;
    hdr_.dst_port = remote_port_;
    hdr_.seq = cfg_.iss;
    hdr_.ack = syn_ack ? wire_ack() : 0;
    hdr_.flags = static_cast<std::uint8_t>(tf::syn | (syn_ack ? tf::ack : 0));
    if (syn_ack ? ecn_ok_ : cfg_.ecn) hdr_.flags |= syn_ack ? tf::ece : static_cast<std::uint8_t>(tf::ece | tf::cwr);
    const u64 w = std::min<u64>(receive_space(), 65535);  // RFC 7323 §2.2: never scaled in a SYN
    hdr_.window = static_cast<std::uint16_t>(w);
    if (syn_ack) rcv_adv_ = std::max(rcv_adv_, rcv_nxt_ + w);
    hdr_.mss = cfg_.mss;
    hdr_.window_scale.reset();
    if (syn_ack ? ws_ok_ : cfg_.window_scaling) hdr_.window_scale = cfg_.window_scale;
    hdr_.sack_permitted = syn_ack ? sack_ok_ : cfg_.sack;
    hdr_.sack_blocks.clear();
    env_.transmit(hdr_, 0, 0);
    ++stats_.segments_sent;
    if (snd_max_ == 0) {
        snd_max_ = 1;
        rtt_active_ = true;
        rtt_seq_ = 1;
        rtt_start_ = now;
    } else {
        rtt_active_ = false;  // Karn
    }
    snd_nxt_ = std::max<u64>(snd_nxt_, 1);
    last_send_ = now;
    if (syn_ack) ack_sent();
    if (rto_deadline_ == kNever) arm_rto(now);
}

void Connection::send_ack(u64 now) {
    (void)now;
    if (!synchronized()) return;
    fill_header(true);
    hdr_.seq = wire_seq(snd_max_);
    env_.transmit(hdr_, std::min(snd_max_ > 0 ? snd_max_ - 1 : 0, stream_end_), 0);
    ++stats_.segments_sent;
    ++stats_.acks_sent;
    ack_sent();
}

void Connection::send_rst(std::uint16_t dst_port, std::uint32_t seq, std::uint32_t ack, bool with_ack) {
    hdr_.src_port = cfg_.local_port;
    hdr_.dst_port = dst_port;
    hdr_.seq = seq;
    hdr_.ack = with_ack ? ack : 0;
    hdr_.flags = static_cast<std::uint8_t>(tf::rst | (with_ack ? tf::ack : 0));
    hdr_.window = 0;
    hdr_.mss.reset();
    hdr_.window_scale.reset();
    hdr_.sack_permitted = false;
    hdr_.sack_blocks.clear();
    env_.transmit(hdr_, 0, 0);
    ++stats_.segments_sent;
    ++stats_.rsts_sent;
}

void Connection::send_data_segment(u64 now, u64 start, u64 end, bool fin, bool arm) {
    fill_header(true);
    hdr_.seq = wire_seq(start);
    if (fin) hdr_.flags |= tf::fin;
    if (end > start && end == data_end()) hdr_.flags |= tf::psh;
    const u64 len = end - start;
    if (cwr_pending_ && len > 0 && start >= snd_max_) {
        // RFC 3168 §6.1.2: the first new data packet after the reduction says so.
        hdr_.flags |= tf::cwr;
        cwr_pending_ = false;
        ++stats_.ecn_cwr_sent;
    }
    env_.transmit(hdr_, start - 1, static_cast<std::size_t>(len));
    ++stats_.segments_sent;
    stats_.bytes_sent += len;
    const u64 seg_end = end + (fin ? 1 : 0);
    if (start < snd_max_) {
        stats_.bytes_retransmitted += std::min(end, snd_max_) - start;
        rtt_active_ = false;  // Karn: no sample while anything was retransmitted
    } else if (!rtt_active_) {
        rtt_active_ = true;
        rtt_seq_ = seg_end;
        rtt_start_ = now;
    }
    snd_nxt_ = std::max(snd_nxt_, seg_end);
    snd_max_ = std::max(snd_max_, seg_end);
    last_send_ = now;
    ack_sent();
    if (arm && rto_deadline_ == kNever) arm_rto(now);
}

// Where a segment starting at `s` ends when up to `limit` (send window edge) may be sent.
// Returns s when nothing should be sent now.
Connection::u64 Connection::segment_end(u64 s, u64 dend, u64 limit, bool peer_limited) const {
    auto boundary = [this](u64 lo, u64 hi) -> u64 {  // last (or first) FPDU end in (lo, hi], sequence offsets
        const u64 b = cfg_.one_boundary_per_segment ? boundaries_.first_in(lo - 1, hi - 1)
                                                    : boundaries_.last_in(lo - 1, hi - 1);
        return b == 0 ? 0 : b + 1;
    };
    u64 e = std::min(s + mss_, dend);
    if (e < dend || cfg_.one_boundary_per_segment) {
        if (const u64 b = boundary(s, e)) e = b;
    }
    if (e <= limit) return e;
    if (limit <= s) return s;
    // Limited by the peer's receive window: whole FPDUs that fit go out (an FPDU end is a
    // natural push point), so a small peer window is not wasted. Otherwise (and always when cwnd
    // is the limit: ACKs in flight will open it) sender SWS avoidance (§3.8.6.2.1): a short
    // segment only when nothing is in flight, or when it is a sizeable share of the peer's
    // largest window.
    if (peer_limited) {
        if (const u64 b = boundary(s, limit)) return b;
    }
    if (s == snd_una_ || (limit - s) * 2 >= max_snd_wnd_) return limit;
    return s;
}

void Connection::output(u64 now) {
    if (!sending_state() || corked_) return;
    if (in_recovery_ && sack_mode()) {
        sack_transmit(now);
        return;
    }
    if (snd_una_ == snd_max_ && snd_nxt_ < data_end() && now > last_send_ && now - last_send_ > rto_) {
        // RFC 5681 §4.1: restart from (at most) the initial window after an idle period.
        cwnd_ = std::min<u64>(cwnd_, std::uint64_t{cfg_.initial_window_segments} * mss_);
    }
    for (;;) {
        const u64 s = snd_nxt_;
        const u64 dend = data_end();
        if (s > dend) return;  // everything including the FIN is out
        if (s == dend) {
            if (fin_queued_) send_data_segment(now, s, s, true);  // the FIN takes no buffer space
            return;
        }
        if (probe_outstanding_) return;
        u64 seg_dend = dend;
        if (sack_mode() && s < snd_max_ && !sb_.empty()) {
            // Going back after a timeout (RFC 6675 §5.1): skip what the peer has SACKed and end
            // segments where SACKed data begins ("filling in" the holes it reports).
            const auto it = std::find_if(sb_.begin(), sb_.end(), [s](const Interval& iv) { return s < iv.end; });
            if (it != sb_.end() && it->start <= s) {
                snd_nxt_ = it->end;
                continue;
            }
            seg_dend = std::min(dend, sack_hole_end(s));
        }
        const u64 limit = snd_una_ + std::min(cwnd_, snd_wnd_);
        const u64 e = segment_end(s, seg_dend, limit, snd_wnd_ <= cwnd_);
        if (e <= s) return;
        send_data_segment(now, s, e, fin_queued_ && e == dend);
    }
}

void Connection::retransmit_first(u64 now) {
    if (state_ == State::syn_sent || state_ == State::syn_received) {
        send_syn(now);
        return;
    }
    const u64 s = snd_una_;
    if (s >= snd_max_) return;
    const u64 dend = data_end();
    if (s >= dend) {
        if (fin_queued_) send_data_segment(now, s, s, true);
        return;
    }
    u64 e = std::min(s + mss_, dend);
    if (e < dend || cfg_.one_boundary_per_segment) {
        const u64 b = cfg_.one_boundary_per_segment ? boundaries_.first_in(s - 1, e - 1)
                                                    : boundaries_.last_in(s - 1, e - 1);
        if (b != 0) e = b + 1;
    }
    e = std::min(e, snd_max_);
    send_data_segment(now, s, e, fin_queued_ && e == dend && snd_max_ > dend);
}

void Connection::send_probe(u64 now) {
    // §3.8.6.1: one octet of new data (or the previous probe octet again) past the zero window.
    const u64 dend = data_end();
    const u64 s = snd_una_;
    if (s >= dend) return;
    ++stats_.window_probes;
    const bool timing = rtt_active_;
    send_data_segment(now, s, s + 1, false, false);
    if (!timing) rtt_active_ = false;  // a probe's ACK may come much later: never time a probe
    probe_outstanding_ = true;
    ++persist_backoff_;
}

// End of every entry point: persist vs retransmission timer.
void Connection::finish(u64 now) {
    if (sending_state()) {
        const bool unsent = snd_nxt_ < data_end();
        const bool persist = snd_wnd_ == 0 && ((unsent && snd_una_ >= snd_max_) || probe_outstanding_);
        if (persist) {
            if (persist_deadline_ == kNever) persist_deadline_ = add_sat(now, persist_interval());
            rto_deadline_ = kNever;
            return;
        }
        persist_deadline_ = kNever;
        persist_backoff_ = 0;
        if (snd_una_ < snd_max_) {
            if (rto_deadline_ == kNever) arm_rto(now);
        } else {
            rto_deadline_ = kNever;
        }
    } else if (state_ == State::syn_sent || state_ == State::syn_received) {
        persist_deadline_ = kNever;
        if (rto_deadline_ == kNever) arm_rto(now);
    } else {
        persist_deadline_ = kNever;
        rto_deadline_ = kNever;
        if (state_ != State::fin_wait_2 && state_ != State::time_wait) delack_deadline_ = kNever;
    }
}

// ---------------------------------------------------------------------------------------------
// Timers and RTT (RFC 6298)

void Connection::arm_rto(u64 now) { rto_deadline_ = add_sat(now, rto_); }

Connection::u64 Connection::persist_interval() const {
    u64 v = std::max(rto_, cfg_.rto_min_ns);
    for (std::uint32_t k = 0; k < persist_backoff_ && v < cfg_.rto_max_ns; ++k) v *= 2;
    return std::min(v, cfg_.rto_max_ns);
}

void Connection::rtt_sample(u64 r) {
    if (r == 0) r = 1;
    if (srtt_ == 0) {
        srtt_ = r;
        rttvar_ = r / 2;
    } else {
        const u64 diff = srtt_ > r ? srtt_ - r : r - srtt_;
        rttvar_ = (3 * rttvar_ + diff) / 4;
        srtt_ = (7 * srtt_ + r) / 8;
    }
    const u64 k_rttvar = std::max<u64>(4 * rttvar_, 1);  // G = 1 ns
    rto_ = std::clamp(srtt_ + k_rttvar, cfg_.rto_min_ns, cfg_.rto_max_ns);  // also ends any backoff
}

void Connection::on_rto(u64 now) {
    rto_deadline_ = kNever;
    const bool handshake = state_ == State::syn_sent || state_ == State::syn_received;
    if (!handshake && !sending_state()) return;
    if (snd_una_ >= snd_max_) return;
    if (++rexmit_count_ > cfg_.max_retransmits) {
        abort(now);
        return;
    }
    ++stats_.retransmit_timeouts;
    rto_ = std::min(rto_ * 2, cfg_.rto_max_ns);  // §5.5 back off (kept until the next valid sample)
    rtt_active_ = false;
    if (handshake) {
        syn_lost_ = true;
        send_syn(now);
        return;
    }
    // RFC 5681 §3.1 eq. (4), held constant across repeated timeouts of the same segment.
    if (rexmit_count_ == 1) ssthresh_ = std::max<u64>((snd_max_ - snd_una_) / 2, 2 * u64{mss_});
    cwnd_ = mss_;
    ca_acc_ = 0;
    in_recovery_ = false;
    dupacks_ = 0;
    recover_ = snd_max_;  // RFC 6582 §3.2 step 2 after a timeout
    probe_outstanding_ = false;
    snd_nxt_ = snd_una_;  // go back N
    if (sack_mode()) {
        // RFC 6675 §5.1 (RecoveryPoint = HighData above ends recovery). RFC 2018 §8: the left
        // edge is always retransmitted. The scoreboard is kept after a first timeout (the data
        // beyond it is skipped when going back), and dropped on a repeated one in case the peer
        // has reneged on what it SACKed.
        if (rexmit_count_ > 1) sb_.clear();
        high_rxt_ = rescue_rxt_ = snd_una_;
        sack_resend(now, snd_una_, sack_hole_end(snd_una_));
        return;
    }
    retransmit_first(now);
}

void Connection::on_timer(u64 now) {
    if (tw_deadline_ <= now) {
        tw_deadline_ = kNever;
        enter_closed();
        return;
    }
    if (delack_deadline_ <= now) {
        delack_deadline_ = kNever;
        send_ack(now);
    }
    if (persist_deadline_ <= now) {
        persist_deadline_ = kNever;
        if (sending_state() && snd_wnd_ == 0) send_probe(now);
    }
    if (rto_deadline_ <= now) on_rto(now);
    finish(now);
}

}  // namespace rnic::proto::tcp
