#include "toe/tx_schedule.h"

#include <algorithm>

#include "core/consumed_prefix.h"

namespace rnic {

sc_core::sc_time tx_schedule::book(const sc_core::sc_time& decided, const sc_core::sc_time& ready,
                                   const sc_core::sc_time& duration, const sc_core::sc_time& not_before) {
    // The wire itself is a timed_resource in the same order; this record keeps each frame's
    // decision time beside its slot, for ahead().
    const sc_core::sc_time end = wire_.reserve(std::max(ready, not_before), duration);
    const sc_core::sc_time start = end - duration;
    const auto it = std::upper_bound(live(), frames_.end(), start,
                                     [](const sc_core::sc_time& t, const frame& f) { return t < f.start; });
    frames_.insert(it, frame{decided, start, end});
    return start;
}

std::size_t tx_schedule::ahead(const sc_core::sc_time& at) const {
    const auto first_busy = std::upper_bound(live(), frames_.end(), at,
                                             [](const sc_core::sc_time& t, const frame& f) { return t < f.end; });
    if (order_ == booking::in_order) return static_cast<std::size_t>(frames_.end() - first_busy);
    return static_cast<std::size_t>(
        std::count_if(first_busy, frames_.end(), [&at](const frame& f) { return f.decided <= at; }));
}

sc_core::sc_time tx_schedule::room_at(const sc_core::sc_time& now, std::size_t limit) const {
    if (ahead(now) < limit) return now;
    if (order_ == booking::in_order) {
        // Room once all but limit - 1 of the frames have left.
        return frames_[frames_.size() - limit].end;  // limit <= frames ahead <= live frames
    }
    // The count only falls when a frame leaves: try each departure after `now` in turn.
    for (auto f = live(); f != frames_.end(); ++f) {
        if (f->end <= now) continue;
        if (ahead(f->end) < limit) return f->end;
    }
    return frames_.back().end;  // not reached: nothing is ahead once the last frame has left
}

void tx_schedule::forget_before(const sc_core::sc_time& now) {
    wire_.forget_before(now);
    while (first_ < frames_.size() && frames_[first_].end <= now) ++first_;
    drop_consumed_prefix(frames_, first_);
}

}  // namespace rnic
