// tx_schedule, the TCP engine's record of its wire, called directly (no sc_start): in call order a
// frame follows every frame booked before it and every frame booked counts as ahead; in time order a
// frame built later takes an idle gap before a future booking, frames not yet decided at a time do
// not count as ahead then, and a frame never starts before its connection's previous one.
#include <gtest/gtest.h>

#include "toe/tx_schedule.h"

namespace rnic::test {
namespace {

sc_core::sc_time ns(double v) {
    return sc_core::sc_time(v, sc_core::SC_NS);
}

const sc_core::sc_time kZero = sc_core::SC_ZERO_TIME;

TEST(TxSchedule, InCallOrderAFrameFollowsEveryFrameBookedBeforeIt) {
    tx_schedule s(booking::in_order);
    EXPECT_EQ(s.book(ns(1000), ns(1000), ns(100), kZero), ns(1000));  // built for a time ahead
    EXPECT_EQ(s.book(ns(0), ns(0), ns(100), kZero), ns(1100));        // built at 0, still behind it
    // At 10 ns both count as ahead, though neither has been built by then in the second's case
    // only: the gap 0..1000 stays idle.
    EXPECT_EQ(s.ahead(ns(10)), 2u);
    EXPECT_EQ(s.ahead(ns(1050)), 2u);
    EXPECT_EQ(s.ahead(ns(1150)), 1u);
    EXPECT_EQ(s.room_at(ns(10), 2), ns(1100));  // all but one gone
    EXPECT_EQ(s.room_at(ns(10), 3), ns(10));
}

TEST(TxSchedule, InTimeOrderAFrameBuiltLaterTakesTheGapBeforeAFutureBooking) {
    tx_schedule s(booking::backfill);
    EXPECT_EQ(s.book(ns(1000), ns(1000), ns(100), kZero), ns(1000));
    EXPECT_EQ(s.book(ns(0), ns(0), ns(100), kZero), ns(0));
    EXPECT_EQ(s.book(ns(50), ns(50), ns(100), kZero), ns(100));     // behind the one at 0..100
    EXPECT_EQ(s.book(ns(850), ns(850), ns(200), kZero), ns(1100));  // does not fit before 1000: after it
    // Only frames built by then count: at 10 ns the one at 0..100, not the three built later.
    EXPECT_EQ(s.ahead(ns(10)), 1u);
    EXPECT_EQ(s.ahead(ns(60)), 2u);
    EXPECT_EQ(s.ahead(ns(900)), 1u);  // 1100..1300, built at 850; 1000..1100 is built at 1000
    EXPECT_EQ(s.ahead(ns(1200)), 1u);
}

TEST(TxSchedule, InTimeOrderAConnectionsFramesNeverPassEachOther) {
    tx_schedule s(booking::backfill);
    const sc_core::sc_time first = s.book(ns(1000), ns(1000), ns(100), kZero);
    // The same connection's next frame, built at 0 on a wake-up: not before its previous frame.
    EXPECT_EQ(s.book(ns(0), ns(0), ns(100), first), ns(1100));
    // Another connection's frame built at 0 takes the idle gap.
    EXPECT_EQ(s.book(ns(0), ns(0), ns(100), kZero), ns(0));
}

TEST(TxSchedule, InTimeOrderAFrameCountsFromWhenItWasDecidedNotWhenItIsReady) {
    tx_schedule s(booking::backfill);
    // Decided at kernel time 0 but ready only at 1000 (its payload appended then): it holds the
    // next decisions at 0 back, or a wake-up would build frame after frame for later times.
    EXPECT_EQ(s.book(ns(0), ns(1000), ns(100), kZero), ns(1000));
    EXPECT_EQ(s.ahead(ns(0)), 1u);
    EXPECT_EQ(s.ahead(ns(500)), 1u);
    EXPECT_EQ(s.room_at(ns(0), 1), ns(1100));
    // Decided at 2000 in a call ahead in local time: not ahead at 1050.
    EXPECT_EQ(s.book(ns(2000), ns(2000), ns(100), kZero), ns(2000));
    EXPECT_EQ(s.ahead(ns(1050)), 1u);
}

TEST(TxSchedule, RoomIsWhenEnoughBuiltFramesHaveLeft) {
    tx_schedule s(booking::backfill);
    s.book(ns(0), ns(0), ns(100), kZero);      // 0..100
    s.book(ns(0), ns(0), ns(100), kZero);      // 100..200
    s.book(ns(500), ns(500), ns(100), kZero);  // 500..600, built at 500
    EXPECT_EQ(s.room_at(ns(0), 3), ns(0));
    EXPECT_EQ(s.room_at(ns(0), 2), ns(100));  // the first leaves, one built frame is left
    EXPECT_EQ(s.room_at(ns(0), 1), ns(200));  // both built frames gone; the third is not built yet
    EXPECT_EQ(s.room_at(ns(550), 1), ns(600));
    s.forget_before(ns(200));
    EXPECT_EQ(s.ahead(ns(550)), 1u);
    EXPECT_EQ(s.book(ns(150), ns(150), ns(100), kZero), ns(150));  // forgotten frames hold nothing back
}

}  // namespace
}  // namespace rnic::test
