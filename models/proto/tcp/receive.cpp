// TCP connection (connection.h): receiving data: in-order delivery, the out-of-order ring, FIN.
#include "proto/tcp/connection_internal.h"

#include <cstring>

namespace rnic::proto::tcp {

// In-window data starting at or after rcv_nxt. Returns false when it had to be dropped.
bool connection::receive_data(u64 now, u64 start, const std::uint8_t* data, std::size_t len) {
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

bool connection::store_out_of_order(u64 s, const std::uint8_t* data, std::size_t len) {
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
    interval merged{s, e};
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

void connection::deliver_in_order_from_ring() {
    const std::size_t size = ooo_buf_.size();
    while (!ooo_.empty() && ooo_.front().start <= rcv_nxt_) {
        const interval iv = ooo_.front();
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

void connection::note_sack_arrival(u64 start) {
    // RFC 2018 §4: the first block reports the most recent arrival, then the most recent others.
    const std::size_t n = std::min(sack_recent_n_ + 1, kMaxSackBlocks);
    for (std::size_t k = n - 1; k > 0; --k) sack_recent_[k] = sack_recent_[k - 1];
    sack_recent_[0] = start;
    sack_recent_n_ = n;
}

void connection::receive_fin(u64 now) {
    fin_pending_ = false;
    rcv_nxt_ += 1;
    ack_now_ = true;
    switch (state_) {
    case tcp::state::syn_received:
    case tcp::state::established:
        set_state(tcp::state::close_wait);
        break;
    case tcp::state::fin_wait_1:
        if (fin_acked()) {
            enter_time_wait(now);
        } else {
            set_state(tcp::state::closing);
        }
        break;
    case tcp::state::fin_wait_2:
        enter_time_wait(now);
        break;
    default:
        break;
    }
}

}  // namespace rnic::proto::tcp
