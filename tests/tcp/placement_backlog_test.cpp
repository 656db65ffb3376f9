// The bounded write queue between the receive pipeline and the host bus (toe/placement_backlog.h):
// the pipeline waits only while more than the capacity is still being placed.
#include <gtest/gtest.h>

#include "toe/placement_backlog.h"

namespace rnic {
namespace {

TEST(PlacementBacklog, UnboundedNeverHoldsThePipeline) {
    placement_backlog b(0);
    b.add(1'000'000, 1 << 20);
    EXPECT_EQ(b.room_at(10), 10u);
    EXPECT_EQ(b.bytes(), 0u);
    EXPECT_EQ(b.stalls(), 0u);
}

TEST(PlacementBacklog, WaitsUntilTheQueueHasRoom) {
    placement_backlog b(4096);
    b.add(100, 2048);
    b.add(300, 2048);
    EXPECT_EQ(b.room_at(50), 50u);  // 4096 in flight: at capacity, not beyond
    b.add(500, 2048);               // 6144 in flight: beyond
    EXPECT_EQ(b.peak_bytes(), 6144u);
    EXPECT_EQ(b.room_at(60), 100u);  // the first placement must land first
    EXPECT_EQ(b.bytes(), 4096u);
    EXPECT_EQ(b.stalls(), 1u);
    EXPECT_EQ(b.stall_ps(), 40u);
    // Landed placements are forgotten as time passes.
    EXPECT_EQ(b.room_at(400), 400u);
    EXPECT_EQ(b.bytes(), 2048u);
}

TEST(PlacementBacklog, OneLargePlacementWaitsForItself) {
    // A reassembly flush hands on more than the whole queue at once: the next segment waits for it.
    placement_backlog b(4096);
    b.add(800, 65536);
    EXPECT_EQ(b.room_at(10), 800u);
    EXPECT_EQ(b.bytes(), 0u);
}

TEST(PlacementBacklog, PlacementsMayFinishOutOfOrder) {
    placement_backlog b(1000);
    b.add(900, 800);  // on a busy DMA channel
    b.add(200, 800);  // on an idle one
    EXPECT_EQ(b.room_at(100), 200u);
    EXPECT_EQ(b.bytes(), 800u);
}

}  // namespace
}  // namespace rnic
