// Small arithmetic the workloads share: ring sizes and the figures of a list of times.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace rnic::platform {

// The smallest power of two, at least 2, that holds n entries (queue and CQ sizes).
inline std::uint32_t next_pow2(std::uint64_t n) {
    std::uint32_t p = 2;
    while (p < n) p <<= 1;
    return p;
}

// Nearest-rank percentile q (0-100) of times in picoseconds, in picoseconds (0 for none), as
// perftest reports its tail. Only the element at the rank is put in its sorted place: a run's
// latency list (200,000 Writes) is partitioned for each percentile, not sorted.
inline double percentile_ps(std::vector<std::uint64_t> v, double q) {
    if (v.empty()) return 0.0;
    const auto rank = static_cast<std::size_t>(std::ceil(q / 100.0 * static_cast<double>(v.size())));
    const auto at = v.begin() + static_cast<std::ptrdiff_t>(rank == 0 ? 0 : rank - 1);
    std::nth_element(v.begin(), at, v.end());
    return static_cast<double>(*at);
}

// The same in nanoseconds.
inline double percentile_ns(std::vector<std::uint64_t> v, double q) {
    return percentile_ps(std::move(v), q) / 1000.0;
}

// Mean of times in picoseconds, in nanoseconds (0 for none).
inline double mean_ns(const std::vector<std::uint64_t>& v) {
    if (v.empty()) return 0.0;
    long double sum = 0;
    for (std::uint64_t x : v) sum += x;
    return static_cast<double>(sum / static_cast<long double>(v.size())) / 1000.0;
}

}  // namespace rnic::platform
