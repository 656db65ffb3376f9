// TCP connection (connection.h): acknowledgement processing, step 5 of RFC 9293 §3.10.7.4: new
// ACKs (RTT, RTO, congestion window, RFC 5681) and duplicate ACKs (fast retransmit, NewReno
// RFC 6582; SACK recovery is in sack_recovery.cpp).
#include "proto/tcp/connection_internal.h"

#include <algorithm>
#include <cstring>

namespace rnic::proto::tcp {

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
