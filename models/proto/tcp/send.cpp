// TCP connection (connection.h): sending (windows, headers, segmentation, retransmission) and the
// timers and RTT estimation of RFC 6298.
#include "proto/tcp/connection_internal.h"

namespace rnic::proto::tcp {

// ---------------------------------------------------------------------------------------------
// Sending

connection::u64 connection::receive_space() const {
    const u64 used = cfg_.owner_consumes ? unconsumed_ : 0;
    u64 space = cfg_.receive_buffer > used ? cfg_.receive_buffer - used : 0;
    if (cfg_.receive_window_cap) space = std::min(space, cfg_.receive_window_cap());
    return std::min(space, u64{65535} << rcv_shift_);
}

std::uint16_t connection::advertise_window() {
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

// RFC 5681 §3.1 eq. (4): the slow-start threshold after a congestion signal (loss, timeout, or an
// ECN echo, RFC 3168 §6.1.2): half the data in flight, at least two segments.
connection::u64 connection::reduced_ssthresh() const {
    return std::max<u64>((snd_max_ - snd_una_) / 2, 2 * u64{mss_});
}

void connection::fill_header(bool with_ack) {
    hdr_.src_port = cfg_.local_port;
    hdr_.dst_port = remote_port_;
    hdr_.ack = with_ack ? wire_ack() : 0;
    hdr_.flags = with_ack ? tf::kAck : 0;
    if (with_ack && ece_pending_) hdr_.flags |= tf::kEce;  // RFC 3168 §6.1.3: echo until CWR
    hdr_.window = with_ack ? advertise_window() : 0;
    hdr_.mss.reset();
    hdr_.window_scale.reset();
    hdr_.sack_permitted = false;
    hdr_.sack_blocks.clear();
    if (!with_ack || !sack_ok_ || ooo_.empty()) return;
    auto add = [this](const interval& iv) {
        const net::sack_block b{irs_ + static_cast<std::uint32_t>(iv.start), irs_ + static_cast<std::uint32_t>(iv.end)};
        for (const net::sack_block& x : hdr_.sack_blocks) {
            if (x.left == b.left) return;
        }
        if (hdr_.sack_blocks.size() < kMaxSackBlocks) hdr_.sack_blocks.push_back(b);
    };
    for (std::size_t k = 0; k < sack_recent_n_; ++k) {
        const u64 r = sack_recent_[k];
        for (const interval& iv : ooo_) {
            if (iv.start <= r && r < iv.end) {
                add(iv);
                break;
            }
        }
    }
    for (std::size_t k = ooo_.size(); k > 0 && hdr_.sack_blocks.size() < kMaxSackBlocks; --k) add(ooo_[k - 1]);
}

void connection::ack_sent() {
    ack_now_ = false;
    delack_segs_ = 0;
    delack_deadline_ = kNever;
}

void connection::send_syn(u64 now) {
    const bool syn_ack = state_ == tcp::state::syn_received;
    hdr_.src_port = cfg_.local_port;
    hdr_.dst_port = remote_port_;
    hdr_.seq = cfg_.iss;
    hdr_.ack = syn_ack ? wire_ack() : 0;
    hdr_.flags = static_cast<std::uint8_t>(tf::kSyn | (syn_ack ? tf::kAck : 0));
    if (syn_ack ? ecn_ok_ : cfg_.ecn) hdr_.flags |= syn_ack ? tf::kEce : static_cast<std::uint8_t>(tf::kEce | tf::kCwr);
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

void connection::send_ack(u64 now) {
    (void)now;
    if (!synchronized()) return;
    fill_header(true);
    hdr_.seq = wire_seq(snd_max_);
    env_.transmit(hdr_, std::min(snd_max_ > 0 ? snd_max_ - 1 : 0, stream_end_), 0);
    ++stats_.segments_sent;
    ++stats_.acks_sent;
    ack_sent();
}

void connection::send_rst(std::uint16_t dst_port, std::uint32_t seq, std::uint32_t ack, bool with_ack) {
    hdr_.src_port = cfg_.local_port;
    hdr_.dst_port = dst_port;
    hdr_.seq = seq;
    hdr_.ack = with_ack ? ack : 0;
    hdr_.flags = static_cast<std::uint8_t>(tf::kRst | (with_ack ? tf::kAck : 0));
    hdr_.window = 0;
    hdr_.mss.reset();
    hdr_.window_scale.reset();
    hdr_.sack_permitted = false;
    hdr_.sack_blocks.clear();
    env_.transmit(hdr_, 0, 0);
    ++stats_.segments_sent;
    ++stats_.rsts_sent;
}

void connection::send_data_segment(u64 now, u64 start, u64 end, bool fin, bool arm) {
    fill_header(true);
    hdr_.seq = wire_seq(start);
    if (fin) hdr_.flags |= tf::kFin;
    if (end > start && end == data_end()) hdr_.flags |= tf::kPsh;
    const u64 len = end - start;
    if (cwr_pending_ && len > 0 && start >= snd_max_) {
        // RFC 3168 §6.1.2: the first new data packet after the reduction says so.
        hdr_.flags |= tf::kCwr;
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
connection::u64 connection::segment_end(u64 s, u64 dend, u64 limit, bool peer_limited) const {
    auto boundary = [this](u64 lo, u64 hi) -> u64 {  // last (or first) FPDU end in (lo, hi], sequence offsets
        const u64 b =
            cfg_.one_boundary_per_segment ? boundaries_.first_in(lo - 1, hi - 1) : boundaries_.last_in(lo - 1, hi - 1);
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

void connection::output(u64 now) {
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
            const auto it = std::find_if(sb_.begin(), sb_.end(), [s](const interval& iv) { return s < iv.end; });
            if (it != sb_.end() && it->start <= s) {
                snd_nxt_ = it->end;
                continue;
            }
            seg_dend = std::min(dend, sack_hole_end(s));
        }
        const u64 limit = snd_una_ + std::min(cwnd_, snd_wnd_);
        const u64 e = segment_end(s, seg_dend, limit, snd_wnd_ <= cwnd_);
        if (e <= s) return;
        if (!env_.may_transmit()) {
            waiting_for_owner_ = true;
            return;
        }
        send_data_segment(now, s, e, fin_queued_ && e == dend);
    }
}

void connection::retransmit_first(u64 now) {
    if (state_ == tcp::state::syn_sent || state_ == tcp::state::syn_received) {
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
        const u64 b =
            cfg_.one_boundary_per_segment ? boundaries_.first_in(s - 1, e - 1) : boundaries_.last_in(s - 1, e - 1);
        if (b != 0) e = b + 1;
    }
    e = std::min(e, snd_max_);
    send_data_segment(now, s, e, fin_queued_ && e == dend && snd_max_ > dend);
}

void connection::send_probe(u64 now) {
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
void connection::finish(u64 now) {
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
    } else if (state_ == tcp::state::syn_sent || state_ == tcp::state::syn_received) {
        persist_deadline_ = kNever;
        if (rto_deadline_ == kNever) arm_rto(now);
    } else {
        persist_deadline_ = kNever;
        rto_deadline_ = kNever;
        if (state_ != tcp::state::fin_wait_2 && state_ != tcp::state::time_wait) delack_deadline_ = kNever;
    }
}

// ---------------------------------------------------------------------------------------------
// Timers and RTT (RFC 6298)

void connection::arm_rto(u64 now) {
    rto_deadline_ = add_sat(now, rto_);
}

connection::u64 connection::persist_interval() const {
    u64 v = std::max(rto_, cfg_.rto_min_ns);
    for (std::uint32_t k = 0; k < persist_backoff_ && v < cfg_.rto_max_ns; ++k) v *= 2;
    return std::min(v, cfg_.rto_max_ns);
}

void connection::rtt_sample(u64 r) {
    if (r == 0) r = 1;
    if (srtt_ == 0) {
        srtt_ = r;
        rttvar_ = r / 2;
    } else {
        const u64 diff = srtt_ > r ? srtt_ - r : r - srtt_;
        rttvar_ = (3 * rttvar_ + diff) / 4;
        srtt_ = (7 * srtt_ + r) / 8;
    }
    const u64 k_rttvar = std::max<u64>(4 * rttvar_, 1);                     // G = 1 ns
    rto_ = std::clamp(srtt_ + k_rttvar, cfg_.rto_min_ns, cfg_.rto_max_ns);  // also ends any backoff
}

void connection::on_rto(u64 now) {
    rto_deadline_ = kNever;
    const bool handshake = state_ == tcp::state::syn_sent || state_ == tcp::state::syn_received;
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
    if (rexmit_count_ == 1) ssthresh_ = reduced_ssthresh();
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

void connection::on_timer(u64 now) {
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
