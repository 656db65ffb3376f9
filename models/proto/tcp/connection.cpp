// TCP connection state machine: see connection.h. Section references are to RFC 9293 unless noted.
// This file: construction, user calls, introspection and sequence conversion; arrival.cpp (segment
// arrival), acknowledgement.cpp (step 5: ACKs), receive.cpp, sack_recovery.cpp and send.cpp hold
// the rest of the class.
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

}  // namespace rnic::proto::tcp
