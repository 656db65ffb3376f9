// The TCP engine's out-of-order state (toe/reassembly.h), its one owner: frames the framer placed
// out of order, bytes held in the buffer's reassembly pool, and the accounting against the pool,
// through reassembly_if (the framer's side) and reassembly_pool_if (buffer memory's side).
#include <gtest/gtest.h>

#include <cstdint>
#include <systemc>

#include "toe/reassembly.h"

using namespace rnic;

namespace {

// Buffer memory's pool as reassembly sees it: a capacity, what is reserved, the bytes charged.
struct pool_stub : reassembly_pool_if {
    std::uint64_t capacity = 10000, used = 0, charged = 0;
    bool reserve_rx(std::uint64_t bytes) override {
        if (bytes > capacity - used) return false;
        used += bytes;
        return true;
    }
    void release_rx(std::uint64_t bytes) override { used -= bytes; }
    std::uint64_t rx_free() const override { return capacity - used; }
    void charge(std::uint64_t bytes, sc_core::sc_time& delay) override {
        charged += bytes;
        delay += sc_core::sc_time(static_cast<double>(bytes), sc_core::SC_PS);
    }
};

sc_core::sc_time zero() {
    return sc_core::SC_ZERO_TIME;
}

}  // namespace

TEST(ReassemblyTb, HeldBytesOccupyThePoolUntilTheHoleIsFilled) {
    pool_stub pool;
    reassembly r(pool);
    r.open(2);
    sc_core::sc_time d = zero();
    r.account(2, 3000, d);  // TCP holds 3000 bytes past RCV.NXT, none placed
    EXPECT_EQ(r.held(2), 3000u);
    EXPECT_EQ(pool.used, 3000u);
    EXPECT_EQ(pool.charged, 3000u);  // written into the pool
    EXPECT_GT(d, zero());
    r.account(2, 0, d);  // the hole was filled: read back out
    EXPECT_EQ(r.held(2), 0u);
    EXPECT_EQ(pool.used, 0u);
    EXPECT_EQ(pool.charged, 6000u);
    EXPECT_EQ(r.peak(2), 3000u);
    EXPECT_EQ(r.bytes_buffered(), 3000u);
}

TEST(ReassemblyTb, PlacedFramesNeedNoPoolAndAreFoundOnceInOrder) {
    pool_stub pool;
    reassembly r(pool);
    reassembly_if* framer_side = &r;  // what the framer reaches through its reasm_out port
    r.open(1);
    framer_side->note_placed(1, 1000, 600);
    framer_side->note_placed(1, 1600, 400);
    EXPECT_TRUE(framer_side->is_placed(1, 1000));
    EXPECT_FALSE(framer_side->is_placed(1, 1001));
    EXPECT_FALSE(framer_side->is_placed(3, 1000));  // another connection's record
    EXPECT_EQ(r.placed_pending(1), 1000u);
    sc_core::sc_time d = zero();
    r.account(1, 1500, d);  // 1500 held past RCV.NXT, 1000 of them placed in host memory
    EXPECT_EQ(r.held(1), 500u);
    EXPECT_EQ(pool.used, 500u);
    // The in-order stream reaches the first frame: it was placed, and only once.
    EXPECT_TRUE(framer_side->take_placed(1, 1000));
    EXPECT_FALSE(framer_side->take_placed(1, 1000));
    EXPECT_EQ(r.placed_pending(1), 400u);
    EXPECT_FALSE(framer_side->take_placed(1, 2000));  // never placed
}

TEST(ReassemblyTb, WindowCapIsWhatTheConnectionHoldsPlusThePoolsFreeBytes) {
    pool_stub pool;
    reassembly r(pool);
    r.open(0);
    r.open(1);
    sc_core::sc_time d = zero();
    r.account(0, 4000, d);
    r.account(1, 1000, d);
    EXPECT_EQ(pool.rx_free(), 5000u);
    EXPECT_EQ(r.window_cap(0), 9000u);
    EXPECT_EQ(r.window_cap(1), 6000u);
    EXPECT_TRUE(r.fits(5000));
    EXPECT_FALSE(r.fits(5001));
}

TEST(ReassemblyTb, AFullPoolAccountsWhatFits) {
    pool_stub pool;
    pool.capacity = 1000;
    reassembly r(pool);
    r.open(0);
    sc_core::sc_time d = zero();
    r.account(0, 1200, d);  // a retransmission overlapping held data: a little more than admitted
    EXPECT_EQ(pool.used, 1000u);
    EXPECT_EQ(r.held(0), 1200u);
}

TEST(ReassemblyTb, AFreedConnectionGivesItsBytesBackAndANewOneStartsClean) {
    pool_stub pool;
    reassembly r(pool);
    r.open(4);
    r.note_placed(4, 0, 100);
    sc_core::sc_time d = zero();
    r.account(4, 700, d);
    ASSERT_EQ(pool.used, 600u);
    r.forget(4);  // closed and released after a reset left bytes held
    EXPECT_EQ(pool.used, 0u);
    EXPECT_EQ(r.held(4), 0u);
    EXPECT_FALSE(r.is_placed(4, 0));
    EXPECT_EQ(r.peak(4), 600u);  // still reported for the freed connection
    r.open(4);                   // the id names a new connection
    EXPECT_EQ(r.peak(4), 0u);
    EXPECT_EQ(r.placed_pending(4), 0u);
}

TEST(ReassemblyTb, CountsTheConnectionsWithAHoleAtOnceAndAtThePoolsPeak) {
    pool_stub pool;
    reassembly r(pool);
    for (std::uint32_t c = 0; c < 3; ++c) r.open(c);
    sc_core::sc_time d = zero();
    EXPECT_EQ(r.connections_with_hole_peak(), 0u);
    r.account(0, 1000, d);  // connection 0 holds 1000 bytes behind a hole
    r.account(1, 500, d);   // and connection 1 holds 500: two with a hole, 1500 in the pool
    EXPECT_EQ(r.connections_with_hole_peak(), 2u);
    EXPECT_EQ(r.connections_with_hole_at_pool_peak(), 2u);
    EXPECT_EQ(r.pool_held_peak(), 1500u);
    r.account(0, 0, d);    // connection 0's hole filled
    r.account(2, 100, d);  // connection 2 gets one: two with a hole again, 600 in the pool
    EXPECT_EQ(r.connections_with_hole_peak(), 2u);
    r.account(1, 4000, d);  // connection 1 grows: 4100 in the pool, a new peak with two holes
    EXPECT_EQ(r.pool_held_peak(), 4100u);
    EXPECT_EQ(r.connections_with_hole_at_pool_peak(), 2u);
    r.account(1, 3000, d);  // part of its hole filled: 3100 in the pool
    r.account(0, 200, d);   // three at once, 3300 below the pool's peak: the count at the peak stays 2
    EXPECT_EQ(r.connections_with_hole_peak(), 3u);
    EXPECT_EQ(r.connections_with_hole_at_pool_peak(), 2u);
    r.forget(1);  // a reset connection no longer has a hole
    r.account(1, 0, d);
    r.open(1);
    r.account(1, 300, d);  // reopened with a new hole: three again, not four
    EXPECT_EQ(r.connections_with_hole_peak(), 3u);
    r.account(0, 0, d);
    r.account(1, 0, d);
    r.account(2, 0, d);
    EXPECT_EQ(pool.used, 0u);
}

TEST(ReassemblyTb, BytesPlacedOutOfOrderAreAHoleWithoutPoolBytes) {
    pool_stub pool;
    reassembly r(pool);
    r.open(4);
    r.note_placed(4, 2000, 800);
    sc_core::sc_time d = zero();
    r.account(4, 800, d);  // TCP holds the 800 placed bytes past RCV.NXT: a hole, nothing in the pool
    EXPECT_EQ(pool.used, 0u);
    EXPECT_EQ(r.connections_with_hole_peak(), 1u);
    EXPECT_EQ(r.connections_with_hole_at_pool_peak(), 0u);  // the pool never held a byte
}
