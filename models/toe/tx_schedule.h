// The transmit engine's own record of its wire: when each frame it handed to the link starts and
// leaves the wire, so that link-paced segment generation (rnic.tcp.tx_ahead_frames) knows how many
// frames wait for the wire or are on it (docs/architecture.md, "Segments built as the link drains").
#pragma once

#include <cstddef>
#include <vector>
#include <systemc>

#include "core/timed_resource.h"

namespace rnic {

class tx_schedule {
public:
    explicit tx_schedule(booking order) : order_(order), wire_(order) {}

    // Books a frame decided at `decided` (the local time of the call that built it), ready for the
    // wire at `ready` (after the pipeline and its payload's append), that takes `duration` on the
    // wire and must not start before `not_before` (its connection's previous frame, so one
    // connection's frames never pass each other). Returns when it starts. In call order it follows
    // every frame booked before it; in time order it takes the earliest idle gap at or after its
    // ready time, as the link's wire does with link.order = time.
    sc_core::sc_time book(const sc_core::sc_time& decided, const sc_core::sc_time& ready,
                          const sc_core::sc_time& duration, const sc_core::sc_time& not_before);
    // Frames waiting for the wire or on it at `at`: in call order every frame booked that has not
    // left by then; in time order only those decided by then (a frame booked by a call ahead in
    // local time does not hold back one decided earlier at kernel time).
    std::size_t ahead(const sc_core::sc_time& at) const;
    // The first time at or after `now` when fewer than `limit` frames are ahead.
    sc_core::sc_time room_at(const sc_core::sc_time& now, std::size_t limit) const;
    // Forgets the frames that have left the wire by `now`.
    void forget_before(const sc_core::sc_time& now);

private:
    struct frame {
        sc_core::sc_time decided, start, end;
    };
    std::vector<frame>::iterator live() { return frames_.begin() + static_cast<std::ptrdiff_t>(first_); }
    std::vector<frame>::const_iterator live() const { return frames_.begin() + static_cast<std::ptrdiff_t>(first_); }
    booking order_;
    timed_resource wire_;  // the slots, booked in order_
    // Ascending by start; disjoint, so ascending by end as well. Frames before first_ have left
    // (core/consumed_prefix.h).
    std::vector<frame> frames_;
    std::size_t first_ = 0;
};

}  // namespace rnic
