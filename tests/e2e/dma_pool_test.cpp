// The host's pinned-memory pool (platform/dma_pool.h): bump-allocator addresses until something is
// freed, first fit and merging after.
#include <gtest/gtest.h>

#include "dma_pool.h"

namespace rnic::test {
namespace {

TEST(DmaPool, HandsOutBumpAllocatorAddressesWhileNothingIsFreed) {
    dma_pool pool(0x1000, 0x100000);
    std::uint64_t bump = 0x1000;
    const std::uint64_t sizes[][2] = {{100, 64}, {4096, 4096}, {64, 64}, {24, 8}, {8192, 4096}, {1, 1}};
    for (const auto& [len, align] : sizes) {
        const std::uint64_t want = (bump + align - 1) / align * align;
        EXPECT_EQ(pool.allocate(len, align), want);  // the padding before a block is not reused
        bump = want + len;
    }
}

TEST(DmaPool, FreedBlocksAreReusedFirstFitAndMergedWithTheirNeighbours) {
    dma_pool pool(0x1000, 0x11000);  // 64 KiB
    const std::uint64_t a = pool.allocate(0x4000, 0x1000), b = pool.allocate(0x4000, 0x1000),
                        c = pool.allocate(0x4000, 0x1000);
    ASSERT_EQ(a, 0x1000u);
    ASSERT_EQ(b, 0x5000u);
    ASSERT_EQ(c, 0x9000u);
    EXPECT_EQ(pool.allocate(0x8000, 0x1000), 0u);  // 16 KiB left: too small
    EXPECT_TRUE(pool.release(b));
    EXPECT_FALSE(pool.release(b));                      // twice: nothing there
    EXPECT_EQ(pool.allocate(0x2000, 0x1000), 0x5000u);  // first fit: b's hole
    EXPECT_TRUE(pool.release(0x5000));
    EXPECT_TRUE(pool.release(a));  // a and b merge: 32 KiB from 0x1000
    EXPECT_EQ(pool.allocate(0x8000, 0x1000), 0x1000u);
    EXPECT_EQ(pool.blocks(), 2u);
}

TEST(DmaPool, ManyAllocateAndFreeCyclesDoNotExhaustThePool) {
    dma_pool pool(0x1000, 0x1000 + 64 * 1024);
    for (int i = 0; i < 100000; ++i) {
        const std::uint64_t x = pool.allocate(16 * 1024, 4096), y = pool.allocate(100 + i % 900, 64);
        ASSERT_NE(x, 0u) << i;
        ASSERT_NE(y, 0u) << i;
        ASSERT_TRUE(pool.release(x));
        ASSERT_TRUE(pool.release(y));
    }
    EXPECT_EQ(pool.bytes_in_use(), 0u);
    EXPECT_EQ(pool.allocate(64 * 1024, 4096), 0x1000u);  // whole again
}

TEST(DmaPool, ZeroLengthAndOversizeRequestsGetNothing) {
    dma_pool pool(0x1000, 0x2000);
    EXPECT_EQ(pool.allocate(0, 64), 0u);
    EXPECT_EQ(pool.allocate(0x1001, 1), 0u);
    EXPECT_EQ(pool.allocate(0x1000, 1), 0x1000u);
}

}  // namespace
}  // namespace rnic::test
