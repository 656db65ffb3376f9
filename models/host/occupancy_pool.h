// A pool of `capacity` units that transfers hold from the time they get them until a release time
// known later: PCIe tags (outstanding non-posted requests), flow-control credits, PCI-X outstanding
// split transactions, a DMA engine's outstanding reads. Like timed_resource it works in absolute
// simulated time, so an LT target can tell when a request may start without waiting.
//
//   const sc_time start = tags.acquire(ready);      // one unit, available at `start` >= ready
//   ... compute when the request's completion arrives ...
//   tags.release_at(done);                          // the unit is free again from `done`
//
// Capacity 0 means unlimited (acquire returns `ready`). Calls are expected in roughly increasing
// time, as the LT models issue them; a unit released at t is reused by the first acquire after t.
#pragma once

#include <algorithm>
#include <cstdint>
#include <systemc>
#include <utility>
#include <vector>

#include "core/consumed_prefix.h"

namespace rnic {

class occupancy_pool {
public:
    explicit occupancy_pool(std::uint64_t capacity = 0) : capacity_(capacity) {}

    void set_capacity(std::uint64_t capacity) { capacity_ = capacity; }
    std::uint64_t capacity() const { return capacity_; }

    // Takes `units` (at most the capacity); returns the earliest time >= ready at which they are free.
    sc_core::sc_time acquire(const sc_core::sc_time& ready, std::uint64_t units = 1) {
        ++acquires_;
        if (capacity_ == 0) return ready;
        if (units > capacity_) units = capacity_;
        retire(ready);
        sc_core::sc_time start = ready;
        while (in_use_ + units > capacity_ && head_ != releases_.size()) {
            const auto [at, n] = releases_[head_];
            pop_front();
            if (at > start) start = at;
            in_use_ -= n;
        }
        in_use_ += units;
        if (in_use_ > peak_) peak_ = in_use_;
        if (start > ready) {
            ++waits_;
            wait_total_ += start - ready;
        }
        return start;
    }

    // When acquire(ready, units) would succeed, without taking anything; sc_max_time() while units
    // are held whose release time has not been given yet.
    sc_core::sc_time available_at(const sc_core::sc_time& ready, std::uint64_t units = 1) const {
        if (capacity_ == 0) return ready;
        if (units > capacity_) units = capacity_;
        std::uint64_t in_use = in_use_;
        sc_core::sc_time start = ready;
        for (auto it = releases_.begin() + static_cast<std::ptrdiff_t>(head_);
             it != releases_.end() && (it->first <= ready || in_use + units > capacity_); ++it) {
            if (it->first > start) start = it->first;
            in_use -= it->second;
        }
        // Held by someone whose release time is not known yet: not available before it is.
        return in_use + units > capacity_ ? sc_core::sc_max_time() : start;
    }

    // Returns `units` taken by an earlier acquire(), free again from absolute time `at`.
    void release_at(const sc_core::sc_time& at, std::uint64_t units = 1) {
        if (capacity_ == 0) return;
        if (units > capacity_) units = capacity_;
        // Kept sorted by time; releases come nearly in order, so this is an append. The retired
        // entries in front of head_ are dropped in one move (core/consumed_prefix.h).
        drop_consumed_prefix(releases_, head_);
        const auto first = releases_.begin() + static_cast<std::ptrdiff_t>(head_);
        auto it = releases_.end();
        while (it != first && std::prev(it)->first > at) --it;
        if (it == releases_.end()) {
            releases_.emplace_back(at, units);
        } else {
            releases_.insert(it, {at, units});
        }
    }

    std::uint64_t acquires() const { return acquires_; }
    std::uint64_t waits() const { return waits_; }  // acquires that had to wait
    const sc_core::sc_time& wait_total() const { return wait_total_; }
    std::uint64_t peak() const { return peak_; }  // most units held at once (approximate)

private:
    void retire(const sc_core::sc_time& now) {
        while (head_ != releases_.size() && releases_[head_].first <= now) {
            in_use_ -= releases_[head_].second;
            pop_front();
        }
    }
    void pop_front() {
        if (++head_ == releases_.size()) {  // all retired: start over at the front
            releases_.clear();
            head_ = 0;
        }
    }

    std::uint64_t capacity_;
    std::uint64_t in_use_ = 0;  // units acquired and not yet retired
    // Pending releases sorted by time, from releases_[head_] on: a vector used as a queue (one
    // allocation for the run, no deque blocks), for the PCIe credits and tags taken per TLP.
    std::vector<std::pair<sc_core::sc_time, std::uint64_t>> releases_;
    std::size_t head_ = 0;
    std::uint64_t acquires_ = 0, waits_ = 0, peak_ = 0;
    sc_core::sc_time wait_total_ = sc_core::SC_ZERO_TIME;
};

}  // namespace rnic
