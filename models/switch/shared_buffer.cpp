#include "switch/shared_buffer.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace rnic {

shared_buffer::shared_buffer(const shared_buffer_config& cfg)
    : cfg_(cfg),
      queue_(cfg.ports > 0 ? cfg.ports : 0),
      queue_headroom_(queue_.size()),
      queue_peak_(queue_.size()),
      ingress_(queue_.size()),
      headroom_(queue_.size()),
      ingress_peak_(queue_.size()),
      paused_(queue_.size()) {
    if (cfg.ports <= 0) throw std::invalid_argument("shared buffer: needs at least one port");
    if (cfg.buffer_bytes == 0) throw std::invalid_argument("shared buffer: buffer size is 0");
    if (!(cfg.alpha > 0)) throw std::invalid_argument("shared buffer: alpha must be positive");
    shared_capacity_ = cfg.buffer_bytes;
    if (cfg.pfc) {
        if (cfg.pfc_xon > cfg.pfc_xoff) {
            throw std::invalid_argument("shared buffer: PFC xon (" + std::to_string(cfg.pfc_xon) + ") above xoff (" +
                                        std::to_string(cfg.pfc_xoff) + ")");
        }
        const std::uint64_t reserved = static_cast<std::uint64_t>(cfg.ports) * cfg.pfc_headroom;
        if (reserved >= cfg.buffer_bytes) {
            throw std::invalid_argument("shared buffer: " + std::to_string(cfg.ports) + " PFC headrooms of " +
                                        std::to_string(cfg.pfc_headroom) + " bytes leave nothing of " +
                                        std::to_string(cfg.buffer_bytes) + " bytes to share");
        }
        shared_capacity_ = cfg.buffer_bytes - reserved;
    }
}

shared_buffer::verdict shared_buffer::shared_verdict(int output, std::uint32_t len) const {
    const double dt_limit = cfg_.alpha * static_cast<double>(shared_capacity_ - shared_used_);
    if (static_cast<double>(queue_[output] + len) > dt_limit) return verdict::dt_threshold;
    if (shared_used_ + len > shared_capacity_) return verdict::buffer_full;
    return verdict::admitted;
}

shared_buffer::admission shared_buffer::admit(int ingress, int output, std::uint32_t len) {
    admission a;
    const std::uint64_t queued_before = queue_bytes(output);
    a.result = shared_verdict(output, len);
    bool used_headroom = false;
    if (a.admitted()) {
        a.charged = part::shared;
        queue_[output] += len;
        shared_used_ += len;
    } else if (cfg_.pfc) {
        used_headroom = true;
        if (headroom_[ingress] + len <= cfg_.pfc_headroom) {
            a.result = verdict::admitted;
            a.charged = part::headroom;
            queue_headroom_[output] += len;
            headroom_[ingress] += len;
        } else {
            a.result = verdict::headroom_full;
        }
    }
    if (a.admitted()) {
        ingress_[ingress] += len;
        total_used_ += len;
        total_peak_ = std::max(total_peak_, total_used_);
        queue_peak_[output] = std::max(queue_peak_[output], queue_bytes(output));
        ingress_peak_[ingress] = std::max(ingress_peak_[ingress], ingress_[ingress]);
        a.ecn_congested = cfg_.ecn && queued_before >= cfg_.ecn_threshold;
    }
    if (cfg_.pfc && !paused_[ingress] && (ingress_[ingress] > cfg_.pfc_xoff || used_headroom)) {
        paused_[ingress] = true;
        a.pfc = pfc_signal::xoff;
    }
    return a;
}

shared_buffer::pfc_signal shared_buffer::release(int ingress, int output, std::uint32_t len, part charged) {
    if (charged == part::shared) {
        assert(queue_[output] >= len && shared_used_ >= len);
        queue_[output] -= len;
        shared_used_ -= len;
    } else {
        assert(queue_headroom_[output] >= len && headroom_[ingress] >= len);
        queue_headroom_[output] -= len;
        headroom_[ingress] -= len;
    }
    assert(ingress_[ingress] >= len && total_used_ >= len);
    ingress_[ingress] -= len;
    total_used_ -= len;
    // Resume only once the ingress's headroom has drained as well. A pause triggered because the shared
    // part refused a frame (the egress dynamic threshold, with many ingresses feeding one congested
    // output) leaves each ingress well below xon; resuming at the next departure then re-pauses at
    // once, and the bytes each new pause lets through pile into a headroom that empties only as
    // fast as the congested queue ahead of it: 802.1Qbb's lossless promise broke in study (f)
    // (37 headroom drops per run at 16 senders with 8 KiB of headroom). Headroom is for one
    // pause's in-flight bytes; the pause lasts until it is free again.
    if (cfg_.pfc && paused_[ingress] && ingress_[ingress] <= cfg_.pfc_xon && headroom_[ingress] == 0) {
        paused_[ingress] = false;
        return pfc_signal::xon;
    }
    return pfc_signal::none;
}

void interval_max_trace::close_until(std::uint64_t t_ps, bool changes_at_t) {
    while (t_ps >= (index_ + 1) * interval_) {
        closed_.push_back(current_max_);
        ++index_;
        // The old value holds into the new interval, unless it is replaced right at its start.
        current_max_ = changes_at_t && t_ps == index_ * interval_ ? 0 : value_;
    }
}

void interval_max_trace::set(std::uint64_t t_ps, std::uint64_t value) {
    if (interval_ == 0) return;
    close_until(t_ps, true);
    value_ = value;
    current_max_ = std::max(current_max_, value);
}

std::vector<std::uint64_t> interval_max_trace::maxima(std::uint64_t now_ps) const {
    if (interval_ == 0) return {};
    interval_max_trace copy = *this;
    copy.close_until(now_ps, false);
    copy.closed_.push_back(copy.current_max_);
    return copy.closed_;
}

}  // namespace rnic
