// The time line of a shared, half-duplex bus. Like timed_resource, transactions book it in absolute
// simulated time; unlike it, a transaction may take an idle gap left earlier on the time line
// (e.g. a read request issued while the split completions booked before it still wait for host
// memory), which is what a shared bus's arbiter does. Busy intervals that touch are merged, and
// intervals that ended before the current simulated time are forgotten.
#pragma once

#include <iterator>
#include <map>
#include <systemc>

namespace rnic {

class bus_calendar {
public:
    // A transaction ready at `ready` occupying the bus for `service`: returns its finish time.
    sc_core::sc_time reserve(const sc_core::sc_time& ready, const sc_core::sc_time& service) {
        forget_before(sc_core::sc_time_stamp());
        sc_core::sc_time t = ready;
        auto it = busy_.upper_bound(t);
        if (it != busy_.begin()) {
            const auto prev = std::prev(it);
            if (prev->second > t) t = prev->second;  // ready inside a busy interval
        }
        for (it = busy_.lower_bound(t); it != busy_.end() && it->first < t + service; it = busy_.lower_bound(t)) {
            t = it->second;  // does not fit before this interval: try after it
        }
        if (t > ready) wait_total_ += t - ready;
        const sc_core::sc_time end = t + service;
        insert(t, end);
        busy_total_ += service;
        if (end > last_end_) last_end_ = end;
        ++transfers_;
        return end;
    }

    // The earliest time >= t at which the bus is idle.
    sc_core::sc_time next_idle(sc_core::sc_time t) const {
        auto it = busy_.upper_bound(t);
        if (it != busy_.begin() && std::prev(it)->second > t) t = std::prev(it)->second;
        return t;
    }

    const sc_core::sc_time& busy_total() const { return busy_total_; }
    const sc_core::sc_time& wait_total() const { return wait_total_; }
    const sc_core::sc_time& free_at() const { return last_end_; }  // end of the latest booking
    std::uint64_t transfers() const { return transfers_; }
    double utilization(const sc_core::sc_time& over) const {
        return over == sc_core::SC_ZERO_TIME ? 0.0 : busy_total_ / over;
    }
    std::size_t intervals() const { return busy_.size(); }

private:
    void insert(sc_core::sc_time start, sc_core::sc_time end) {
        auto next = busy_.lower_bound(start);
        if (next != busy_.begin()) {
            auto prev = std::prev(next);
            if (prev->second == start) {  // touches the interval before: extend it
                start = prev->first;
                busy_.erase(prev);
            }
        }
        if (next != busy_.end() && next->first == end) {  // touches the one after
            end = next->second;
            busy_.erase(next);
        }
        busy_[start] = end;
    }
    void forget_before(const sc_core::sc_time& now) {
        while (!busy_.empty() && busy_.begin()->second < now) busy_.erase(busy_.begin());
    }

    std::map<sc_core::sc_time, sc_core::sc_time> busy_;  // start -> end, disjoint
    sc_core::sc_time busy_total_ = sc_core::SC_ZERO_TIME;
    sc_core::sc_time wait_total_ = sc_core::SC_ZERO_TIME;
    sc_core::sc_time last_end_ = sc_core::SC_ZERO_TIME;
    std::uint64_t transfers_ = 0;
};

}  // namespace rnic
