// The workloads' percentile (platform/workloads/workload_math.h): nearest rank, as perftest reports
// its tail, found by partitioning the list; it must give the element a full sort puts at the rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "workloads/workload_math.h"

namespace rnic::platform {
namespace {

double by_sorting(std::vector<std::uint64_t> v, double q) {
    std::sort(v.begin(), v.end());
    const auto rank = static_cast<std::size_t>(std::ceil(q / 100.0 * static_cast<double>(v.size())));
    return static_cast<double>(v[rank == 0 ? 0 : rank - 1]);
}

TEST(WorkloadMath, PercentileIsTheNearestRankOfTheSortedList) {
    std::mt19937_64 rng(7);
    for (const std::size_t n : {1U, 2U, 3U, 10U, 999U, 1000U, 20001U}) {
        std::vector<std::uint64_t> v(n);
        for (auto& x : v) x = rng() % 5000;  // repeated values too
        for (const double q : {0.0, 0.0001, 1.0, 50.0, 99.0, 99.9, 100.0}) {
            EXPECT_EQ(percentile_ps(v, q), by_sorting(v, q)) << "n " << n << " q " << q;
            EXPECT_EQ(percentile_ns(v, q), by_sorting(v, q) / 1000.0) << "n " << n << " q " << q;
        }
    }
    EXPECT_EQ(percentile_ps({}, 50), 0.0);
    EXPECT_EQ(percentile_ps({42, 7, 19}, 100), 42.0);
    EXPECT_EQ(percentile_ps({42, 7, 19}, 50), 19.0);
}

}  // namespace
}  // namespace rnic::platform
