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
#include <deque>
#include <systemc>
#include <utility>

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
        while (in_use_ + units > capacity_ && !releases_.empty()) {
            const auto [at, n] = releases_.front();
            releases_.pop_front();
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
        for (auto it = releases_.begin(); it != releases_.end() && (it->first <= ready || in_use + units > capacity_);
             ++it) {
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
        // Kept sorted by time; releases come nearly in order, so this is an append.
        auto it = releases_.end();
        while (it != releases_.begin() && std::prev(it)->first > at) --it;
        releases_.insert(it, {at, units});
    }

    std::uint64_t acquires() const { return acquires_; }
    std::uint64_t waits() const { return waits_; }          // acquires that had to wait
    const sc_core::sc_time& wait_total() const { return wait_total_; }
    std::uint64_t peak() const { return peak_; }            // most units held at once (approximate)

private:
    void retire(const sc_core::sc_time& now) {
        while (!releases_.empty() && releases_.front().first <= now) {
            in_use_ -= releases_.front().second;
            releases_.pop_front();
        }
    }

    std::uint64_t capacity_;
    std::uint64_t in_use_ = 0;  // units acquired and not yet retired
    std::deque<std::pair<sc_core::sc_time, std::uint64_t>> releases_;  // sorted by time
    std::uint64_t acquires_ = 0, waits_ = 0, peak_ = 0;
    sc_core::sc_time wait_total_ = sc_core::SC_ZERO_TIME;
};

}  // namespace rnic
