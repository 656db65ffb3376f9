// TCP connection (connection.h): SACK-based loss recovery, RFC 6675.
#include "proto/tcp/connection_internal.h"

namespace rnic::proto::tcp {

// ---------------------------------------------------------------------------------------------
// SACK-based loss recovery (RFC 6675). The scoreboard sb_ holds the SACKed ranges above SND.UNA as
// half-open sequence-offset ranges; an octet that is neither cumulatively acknowledged nor in sb_
// is "unSACKed". HighRxt, RescueRxt are kept as ends (highest octet + 1), HighACK is snd_una_ - 1,
// HighData is snd_max_ - 1.

bool connection::sack_update(const net::tcp_header& h, u64 una) {
    bool newly = false;
    for (const net::sack_block& b : h.sack_blocks) {
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
        interval merged{lo, hi};
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

void connection::sack_trim() {
    // Ranges below SND.UNA are acknowledged. One that straddles it means the cumulative ACK and
    // the SACK information disagree: it is forgotten rather than SND.UNA be taken as SACKed.
    std::size_t k = 0;
    while (k < sb_.size() && sb_[k].start <= snd_una_) ++k;
    if (k > 0) sb_.erase(sb_.begin(), sb_.begin() + static_cast<std::ptrdiff_t>(k));
}

// IsLost() for any unSACKed octet below sb_[above] and above sb_[above - 1]: DupThresh
// discontiguous SACKed ranges above it, or more than (DupThresh - 1) * SMSS SACKed octets.
bool connection::sack_hole_lost(std::size_t above) const {
    if (above >= sb_.size()) return false;
    const std::size_t ranges = sb_.size() - above;
    if (ranges >= cfg_.dupack_threshold) return true;
    u64 bytes = 0;
    for (std::size_t k = above; k < sb_.size(); ++k) bytes += sb_[k].end - sb_[k].start;
    return bytes > u64{cfg_.dupack_threshold - 1} * mss_;
}

bool connection::sack_is_lost(u64 seq) const {
    std::size_t k = 0;
    while (k < sb_.size() && sb_[k].start <= seq) ++k;
    return sack_hole_lost(k);
}

connection::u64 connection::sack_hole_end(u64 s) const {
    for (const interval& iv : sb_) {
        if (iv.start > s) return iv.start;
    }
    return snd_max_;
}

// SetPipe(): octets in [SND.UNA, SND.MAX) not SACKed count once unless IsLost(), and once more
// when at or below HighRxt (retransmitted).
std::uint64_t connection::sack_pipe() const {
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
connection::u64 connection::sack_resend(u64 now, u64 s, u64 cap) {
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
        const u64 b =
            cfg_.one_boundary_per_segment ? boundaries_.first_in(s - 1, hi - 1) : boundaries_.last_in(s - 1, hi - 1);
        if (b != 0) e = b + 1;
    }
    const bool fin = fin_queued_ && e == dend && snd_max_ > dend;
    send_data_segment(now, s, e, fin);
    return e + (fin ? 1 : 0);
}

// RFC 6675 §5: a duplicate ACK (the scoreboard is already updated).
void connection::sack_dupack(u64 now) {
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
    recover_ = snd_max_;             // (4.1)
    ssthresh_ = reduced_ssthresh();  // (4.2)
    cwnd_ = ssthresh_;
    ca_acc_ = 0;
    in_recovery_ = true;
    ++stats_.fast_retransmits;
    high_rxt_ = rescue_rxt_ = sack_resend(now, snd_una_, sack_hole_end(snd_una_));  // (4.3)
    sack_transmit(now);                                                             // (4.4), (4.5)
}

// RFC 6675 §5 (C): NextSeg() and send while cwnd - pipe >= 1 SMSS.
void connection::sack_transmit(u64 now) {
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

}  // namespace rnic::proto::tcp
