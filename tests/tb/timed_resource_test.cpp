// timed_resource called directly at kernel time 0 (no sc_start): in-order booking leaves the gap
// before a future booking idle; backfill serves a later call with an earlier ready time in that gap,
// never moves what is booked, and books nothing across a booking it does not fit before.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/timed_resource.h"

namespace rnic::test {
namespace {

sc_core::sc_time ns(double v) {
    return sc_core::sc_time(v, sc_core::SC_NS);
}

TEST(TimedResource, InOrderBookingWaitsBehindAFutureBooking) {
    timed_resource r(booking::in_order);
    EXPECT_EQ(r.reserve(ns(100), ns(10)), ns(110));
    // Ready at 0, but booked after the transfer at 100: it starts at 110.
    EXPECT_EQ(r.reserve(ns(0), ns(10)), ns(120));
    EXPECT_EQ(r.wait_total(), ns(110));
    EXPECT_EQ(r.busy_total(), ns(20));
    EXPECT_EQ(r.free_at(), ns(120));
}

TEST(TimedResource, BackfillServesAnEarlierTransferInTheGapBeforeAFutureBooking) {
    timed_resource r(booking::backfill);
    EXPECT_EQ(r.reserve(ns(100), ns(10)), ns(110));
    EXPECT_EQ(r.reserve(ns(0), ns(10)), ns(10));
    EXPECT_EQ(r.reserve(ns(5), ns(10)), ns(20));  // behind the one at 0..10, still before 100
    EXPECT_EQ(r.wait_total(), ns(5));
    EXPECT_EQ(r.busy_total(), ns(30));
    EXPECT_EQ(r.free_at(), ns(110));
    EXPECT_EQ(r.transfers(), 3u);
}

TEST(TimedResource, BackfillSkipsGapsTooShortAndNeverMovesABooking) {
    timed_resource r(booking::backfill);
    r.reserve(ns(20), ns(10));  // [20, 30)
    r.reserve(ns(45), ns(10));  // [45, 55)
    // 15 ns of work ready at 10: [10, 20) is too short, [30, 45) fits exactly.
    EXPECT_EQ(r.reserve(ns(10), ns(15)), ns(45));
    // Now [20, 55) is one busy block: 20 ns ready at 0 cannot fit before 20 and goes after 55.
    EXPECT_EQ(r.reserve(ns(0), ns(21)), ns(76));
    // An exact fit at the start: [0, 20) is free.
    EXPECT_EQ(r.reserve(ns(0), ns(20)), ns(20));
    EXPECT_EQ(r.free_at(), ns(76));
    EXPECT_EQ(r.busy_total(), ns(10 + 10 + 15 + 21 + 20));
}

TEST(TimedResource, BackfillInTimeOrderMatchesInOrderBooking) {
    timed_resource a(booking::in_order), b(booking::backfill);
    const double ready[] = {0, 3, 3, 40, 41, 100, 100, 100};
    for (double t : ready) EXPECT_EQ(a.reserve(ns(t), ns(7)), b.reserve(ns(t), ns(7)));
    EXPECT_EQ(a.wait_total(), b.wait_total());
    EXPECT_EQ(a.free_at(), b.free_at());
}

// The first fit of a walk over every booking from the earliest, as backfill was first written: the
// reference the bisecting search and the vector storage must reproduce to the picosecond.
struct walk_reference {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;  // [start, end) in ps, ascending
    std::uint64_t reserve(std::uint64_t ready, std::uint64_t service) {
        std::uint64_t start = ready;
        std::size_t i = 0;
        while (i < busy.size() && busy[i].second <= start) ++i;
        for (; i < busy.size(); ++i) {
            if (start + service <= busy[i].first) break;
            if (busy[i].second > start) start = busy[i].second;
        }
        busy.insert(busy.begin() + static_cast<std::ptrdiff_t>(i), {start, start + service});
        return start + service;
    }
};

TEST(TimedResource, BackfillFindsTheSameGapsAsAWalkOverEveryBooking) {
    timed_resource r(booking::backfill);
    walk_reference ref;
    std::mt19937_64 rng(17);
    // Callers ahead in local time book far out, others book near the front: many gaps, some exact.
    std::uniform_int_distribution<std::uint64_t> ready(0, 200'000), service(1, 3'000);
    for (int n = 0; n < 5000; ++n) {
        const std::uint64_t at = n % 7 == 0 ? ready(rng) * 5 : ready(rng);
        const std::uint64_t len = n % 11 == 0 ? 1'000 : service(rng);
        const sc_core::sc_time end = r.reserve(sc_core::sc_time::from_value(at), sc_core::sc_time::from_value(len));
        ASSERT_EQ(end.value(), ref.reserve(at, len)) << "booking " << n;
    }
}

}  // namespace
}  // namespace rnic::test
