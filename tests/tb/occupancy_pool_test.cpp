// occupancy_pool called directly at kernel time 0 (no sc_start): the units a transfer holds come
// back at their release time; a full pool makes the next acquire wait for the earliest releases;
// releases given out of time order are served in time order; and a long random run (PCIe tags and
// credits as the endpoint takes them, releases nearly in order) gives the same start times as a
// plain model of the rule: every release at or before `ready` is retired, then the earliest
// pending releases are taken until the units fit.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "host/occupancy_pool.h"

namespace rnic::test {
namespace {

sc_core::sc_time ns(double v) {
    return sc_core::sc_time(v, sc_core::SC_NS);
}

TEST(OccupancyPool, AFullPoolWaitsForTheEarliestRelease) {
    occupancy_pool p(2);
    EXPECT_EQ(p.acquire(ns(0)), ns(0));
    EXPECT_EQ(p.acquire(ns(0)), ns(0));
    p.release_at(ns(50));
    p.release_at(ns(30));  // out of order: served first
    EXPECT_EQ(p.acquire(ns(10)), ns(30));
    EXPECT_EQ(p.acquire(ns(10)), ns(50));
    EXPECT_EQ(p.waits(), 2u);
    EXPECT_EQ(p.wait_total(), ns(60));
    EXPECT_EQ(p.peak(), 2u);
    // Nothing released yet for the two held units: not available at any time.
    EXPECT_EQ(p.available_at(ns(60)), sc_core::sc_max_time());
    p.release_at(ns(70));
    EXPECT_EQ(p.available_at(ns(60)), ns(70));
    EXPECT_EQ(p.available_at(ns(80)), ns(80));
}

TEST(OccupancyPool, UnlimitedPoolNeverWaits) {
    occupancy_pool p(0);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(p.acquire(ns(i), 7), ns(i));
    p.release_at(ns(1000));
    EXPECT_EQ(p.available_at(ns(5)), ns(5));
    EXPECT_EQ(p.waits(), 0u);
}

// The rule written plainly: pending releases in a multimap by time.
struct plain_pool {
    std::uint64_t capacity, in_use = 0;
    std::multimap<sc_core::sc_time, std::uint64_t> pending;
    sc_core::sc_time acquire(const sc_core::sc_time& ready, std::uint64_t units) {
        units = std::min(units, capacity);
        while (!pending.empty() && pending.begin()->first <= ready) {
            in_use -= pending.begin()->second;
            pending.erase(pending.begin());
        }
        sc_core::sc_time start = ready;
        while (in_use + units > capacity && !pending.empty()) {
            start = std::max(start, pending.begin()->first);
            in_use -= pending.begin()->second;
            pending.erase(pending.begin());
        }
        in_use += units;
        return start;
    }
};

TEST(OccupancyPool, LongRandomRunMatchesThePlainRule) {
    for (std::uint64_t capacity : {1u, 4u, 32u, 1024u}) {
        std::mt19937_64 rng(capacity);
        occupancy_pool p(capacity);
        plain_pool ref{capacity, 0, {}};
        sc_core::sc_time t = sc_core::SC_ZERO_TIME;
        for (int i = 0; i < 20000; ++i) {
            t += ns(static_cast<double>(rng() % 40));
            const std::uint64_t units = 1 + rng() % (capacity > 16 ? 16 : capacity);
            const sc_core::sc_time got = p.acquire(t, units);
            ASSERT_EQ(got, ref.acquire(t, units)) << "capacity " << capacity << " step " << i;
            // Released some time after the start, now and then earlier than the previous one.
            const sc_core::sc_time at = got + ns(static_cast<double>(50 + rng() % 400));
            const std::uint64_t back = std::min(units, capacity);
            p.release_at(at, back);
            ref.pending.emplace(at, back);
        }
        EXPECT_EQ(p.acquires(), 20000u);
    }
}

}  // namespace
}  // namespace rnic::test
