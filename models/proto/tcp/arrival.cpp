// TCP connection (connection.h): segment arrival in every state (RFC 9293 §3.10.7): the checks
// of sequence and flags, the handshake, and the synchronized states' steps, calling
// acknowledgement.cpp for step 5.
#include "proto/tcp/connection_internal.h"

#include <algorithm>
#include <cstring>

namespace rnic::proto::tcp {

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

}  // namespace rnic::proto::tcp
