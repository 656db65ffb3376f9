// A shared resource with a service rate: a PCIe direction, a memory port, a pipeline, the wire.
// Transfers reserve it in absolute simulated time, so contention shows in finish times without an
// event per byte (docs/architecture.md, "Timing discipline").
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <systemc>
#include <vector>

#include "core/consumed_prefix.h"
#include "core/sim_time.h"

namespace rnic {

// How a resource serves transfers that are booked out of time order (a loosely-timed caller books
// a transfer at a future time, and a later call asks for an earlier one).
enum class booking {
    // Each transfer starts after every transfer booked before it, whatever their times: a gap left
    // before a future booking stays idle. Cheap, and exact when callers book in time order.
    in_order,
    // A transfer takes the earliest idle gap at or after its ready time that fits it whole, as an
    // arbiter serving requests in the order they arrive in simulated time would; bookings already
    // made never move.
    backfill,
};

class timed_resource {
public:
    explicit timed_resource(booking mode = booking::in_order) : mode_(mode) {}

    // A transfer ready at absolute time `ready` that occupies the resource for `service` starts when
    // the resource is free and returns its absolute finish time.
    sc_core::sc_time reserve(const sc_core::sc_time& ready, const sc_core::sc_time& service) {
        if (mode_ == booking::backfill) return reserve_backfill(ready, service);
        const sc_core::sc_time start = ready > free_at_ ? ready : free_at_;
        wait_total_ += start - ready;
        free_at_ = start + service;
        busy_total_ += service;
        ++transfers_;
        return free_at_;
    }
    // Convenience for LT targets: `delay` is relative to the current kernel time and is advanced to
    // the finish time.
    void reserve_lt(sc_core::sc_time& delay, const sc_core::sc_time& service) {
        const sc_core::sc_time now = sim_now();
        delay = reserve(now + delay, service) - now;
    }
    // Backfill: forgets the bookings that ended by `t`, when no transfer will be ready before it.
    void forget_before(const sc_core::sc_time& t) {
        while (first_ < busy_.size() && busy_[first_].end <= t) ++first_;
        drop_consumed_prefix(busy_, first_);
    }
    const sc_core::sc_time& free_at() const { return free_at_; }
    const sc_core::sc_time& busy_total() const { return busy_total_; }
    const sc_core::sc_time& wait_total() const { return wait_total_; }
    std::uint64_t transfers() const { return transfers_; }
    double utilization(const sc_core::sc_time& over) const {
        return over == sc_core::SC_ZERO_TIME ? 0.0 : busy_total_ / over;
    }

private:
    struct interval {
        sc_core::sc_time start;
        sc_core::sc_time end;
    };
    sc_core::sc_time reserve_backfill(const sc_core::sc_time& ready, const sc_core::sc_time& service) {
        // Bookings that ended before the kernel's present can no longer hold anything back: every
        // caller's ready time is at or after it.
        forget_before(sim_now());
        sc_core::sc_time start = ready;
        // Most transfers are ready after everything booked: they start at once, after the last
        // booking, without a search.
        if (first_ == busy_.size() || busy_.back().end <= start) {
            const sc_core::sc_time end = start + service;
            if (first_ != busy_.size() && busy_.back().end == start) {
                busy_.back().end = end;
            } else {
                busy_.push_back(interval{start, end});
            }
            return account_backfill(ready, start, end, service);
        }
        // The intervals are disjoint and ascending, so their ends ascend too: the first interval
        // not wholly before `ready` is found by bisection.
        const auto first = busy_.begin() + static_cast<std::ptrdiff_t>(first_);
        auto it =
            std::partition_point(first, busy_.end(), [&start](const interval& booked) { return booked.end <= start; });
        for (; it != busy_.end(); ++it) {
            if (start + service <= it->start) break;  // fits in the gap before *it
            if (it->end > start) start = it->end;
        }
        const sc_core::sc_time end = start + service;
        // Insert [start, end) before `it`, merging with neighbours that touch it.
        const bool joins_prev = it != first && std::prev(it)->end == start;
        const bool joins_next = it != busy_.end() && it->start == end;
        if (joins_prev && joins_next) {
            std::prev(it)->end = it->end;
            busy_.erase(it);
        } else if (joins_prev) {
            std::prev(it)->end = end;
        } else if (joins_next) {
            it->start = start;
        } else {
            busy_.insert(it, interval{start, end});
        }
        return account_backfill(ready, start, end, service);
    }
    sc_core::sc_time account_backfill(const sc_core::sc_time& ready, const sc_core::sc_time& start,
                                      const sc_core::sc_time& end, const sc_core::sc_time& service) {
        if (end > free_at_) free_at_ = end;
        wait_total_ += start - ready;
        busy_total_ += service;
        ++transfers_;
        return end;
    }

    booking mode_;
    std::vector<interval> busy_;  // backfill: booked intervals, ascending, disjoint, from first_ on
    std::size_t first_ = 0;
    sc_core::sc_time free_at_ = sc_core::SC_ZERO_TIME;
    sc_core::sc_time busy_total_ = sc_core::SC_ZERO_TIME;
    sc_core::sc_time wait_total_ = sc_core::SC_ZERO_TIME;
    std::uint64_t transfers_ = 0;
};

// Time to move `bytes` at `bits_per_second`.
inline sc_core::sc_time transfer_time(double bytes, double bits_per_second) {
    return seconds_time(bytes * 8.0 / bits_per_second);
}
// Time of `cycles` at `hz`.
inline sc_core::sc_time cycles_time(double cycles, double hz) {
    return seconds_time(cycles / hz);
}

}  // namespace rnic

namespace rnic {
// Stack of every SC_THREAD in the platform. SystemC's default (64 KiB) is too small for a thread that
// carries a transaction through several blocks (engine -> framer -> TCP -> link) or runs the driver.
constexpr std::size_t kThreadStackBytes = 1u << 20;
}  // namespace rnic
