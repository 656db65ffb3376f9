// A std::vector used as a queue: entries before an index `first` are consumed (left behind, no
// longer read) and are dropped in one move once there are at least kCompactAt of them and they are
// half the vector or more, so consuming the front costs amortised O(1) without a deque's iterator
// arithmetic. Used by timed_resource, tx_schedule and occupancy_pool.
#pragma once

#include <cstddef>
#include <vector>

namespace rnic {

template <typename T>
void drop_consumed_prefix(std::vector<T>& entries, std::size_t& first) {
    constexpr std::size_t kCompactAt = 64;
    if (first >= kCompactAt && 2 * first >= entries.size()) {
        entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(first));
        first = 0;
    }
}

}  // namespace rnic
