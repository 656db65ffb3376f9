// The TCP engine's timers: one SystemC event for every connection's RTO, delayed-ACK, persist and
// TIME-WAIT deadlines, kept in an ordered index re-keyed only for the connections used since.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/sim_log.h"
#include "toe/tcp_engine_connection.h"

namespace rnic {

using toe_detail::time_ns;

void tcp_engine::note_touched(connection& c) {
    if (c.touched) return;
    c.touched = true;
    touched_.push_back(c.id());
}

void tcp_engine::index_deadlines() {
    // Only the connections used since the last call can have moved their timers; the others keep
    // their keys, so the earliest deadline costs O(touched x log connections), not O(connections).
    for (const std::uint32_t id : touched_) {
        connection& c = *conns_[id];
        c.touched = false;
        const std::uint64_t d = static_cast<const connection&>(c).tcp().next_deadline();
        if (d == c.indexed_deadline) continue;
        constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
        if (c.indexed_deadline != kNone) deadlines_.erase({c.indexed_deadline, id});
        if (d != kNone) deadlines_.insert({d, id});
        c.indexed_deadline = d;
    }
    touched_.clear();
}

void tcp_engine::reschedule_timer() {
    free_closed_connections();
    index_deadlines();
    if (deadlines_.empty()) return;
    const std::uint64_t next = deadlines_.begin()->first;
    const sc_core::sc_time at = from_ps(next * 1000);
    const sc_core::sc_time now = sim_now();
    if (timer_armed_ && timer_at_ <= at && timer_at_ >= now) return;
    timer_armed_ = true;
    timer_at_ = at > now ? at : now;
    timer_event_.cancel();
    timer_event_.notify(timer_at_ - now);
}

void tcp_engine::timer_method() {
    timer_armed_ = false;
    const std::uint64_t now = time_ns(sim_now());
    // The connections due now, in connection order. A timer that fires only sets deadlines after
    // `now`, so none joins them on the way; one may be cancelled, hence the check at its turn.
    index_deadlines();
    std::vector<std::uint32_t> due;
    for (auto it = deadlines_.begin(); it != deadlines_.end() && it->first <= now; ++it) due.push_back(it->second);
    std::sort(due.begin(), due.end());
    for (const std::uint32_t id : due) {
        connection* c = find(id);
        if (c != nullptr && static_cast<const connection&>(*c).tcp().next_deadline() <= now) {
            c->ctx_delay = sc_core::SC_ZERO_TIME;
            c->tcp().on_timer(now);
        }
    }
    reschedule_timer();
}

}  // namespace rnic
