// Received bytes handed on for placement (framing, then DMA writes over the host bus) that have not
// landed in host memory yet. A NIC holds them in a write queue of bounded size; when the host bus
// is slower than the wire that queue fills, and the receive pipeline must wait for room instead of
// taking the next segment (which, through later ACKs, slows the sender to what the bus places).
// Plain C++ in picoseconds, so the rule is tested without a simulator.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace rnic {

class placement_backlog {
public:
    // capacity_bytes 0: unbounded (placement never holds the receive pipeline back).
    explicit placement_backlog(std::uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

    bool bounded() const { return capacity_ != 0; }

    // `bytes` handed on for placement that finish landing at `done_ps`.
    void add(std::uint64_t done_ps, std::uint64_t bytes) {
        if (!bounded() || bytes == 0) return;
        pending_.push({done_ps, bytes});
        bytes_ += bytes;
        peak_bytes_ = std::max(peak_bytes_, bytes_);
    }

    // The earliest time at or after `at_ps` when no more than the capacity is still being placed: when
    // the next segment may enter the receive pipeline. Placements finished by then are forgotten (the
    // pipeline takes segments in time order, so no later question asks about an earlier time).
    std::uint64_t room_at(std::uint64_t at_ps) {
        const std::uint64_t start = drain(pending_, bytes_, at_ps);
        if (start > at_ps) {
            ++stalls_;
            stall_ps_ += start - at_ps;
        }
        return start;
    }

    // The same time as room_at, forgetting nothing and counting no stall: for a frame the ingress
    // FIFO may still refuse (the next frame may then ask about an earlier time).
    std::uint64_t peek_room_at(std::uint64_t at_ps) const {
        if (!bounded()) return at_ps;
        auto pending = pending_;
        std::uint64_t bytes = bytes_;
        return drain(pending, bytes, at_ps);
    }

    std::uint64_t bytes() const { return bytes_; }
    std::uint64_t peak_bytes() const { return peak_bytes_; }
    std::uint64_t stalls() const { return stalls_; }
    std::uint64_t stall_ps() const { return stall_ps_; }

private:
    template <typename Queue>
    std::uint64_t drain(Queue& pending, std::uint64_t& bytes, std::uint64_t at_ps) const {
        std::uint64_t start = at_ps;
        while (!pending.empty() && (pending.top().first <= start || bytes > capacity_)) {
            start = std::max(start, pending.top().first);
            bytes -= pending.top().second;
            pending.pop();
        }
        return start;
    }

    using entry = std::pair<std::uint64_t, std::uint64_t>;  // done_ps, bytes
    std::uint64_t capacity_;
    std::priority_queue<entry, std::vector<entry>, std::greater<entry>> pending_;  // earliest first
    std::uint64_t bytes_ = 0, peak_bytes_ = 0, stalls_ = 0, stall_ps_ = 0;
};

}  // namespace rnic
