// The atomic unit's arithmetic against RFC 7306 §5.1's definitions, edge cases first.
#include <gtest/gtest.h>

#include <random>

#include "rdma/atomic_alu.h"

namespace rnic::test {
namespace {

TEST(AtomicAlu, FetchAddWithoutMaskIsA64BitAddThatWraps) {
    EXPECT_EQ(atomic::fetch_add(41, 1, 0), 42u);
    EXPECT_EQ(atomic::fetch_add(0xffffffffffffffffULL, 1, 0), 0u);
    EXPECT_EQ(atomic::fetch_add(0x00000000ffffffffULL, 1, 0), 0x0000000100000000ULL);  // carry crosses 32 bits
    std::mt19937_64 rng(1);
    for (int i = 0; i < 1000; ++i) {
        const std::uint64_t a = rng(), b = rng();
        EXPECT_EQ(atomic::fetch_add(a, b, 0), a + b);
    }
}

TEST(AtomicAlu, FetchAddMaskCutsTheCarryAtFieldBoundaries) {
    // Two 32-bit fields: bit 31 ends the low field, bit 63 the high one.
    const std::uint64_t two_fields = (std::uint64_t{1} << 31) | (std::uint64_t{1} << 63);
    EXPECT_EQ(atomic::fetch_add(0x00000005ffffffffULL, 1, two_fields), 0x0000000500000000ULL);
    EXPECT_EQ(atomic::fetch_add(0xffffffff00000000ULL, 0x0000000100000001ULL, two_fields), 0x0000000000000001ULL);
    // Eight byte-wide counters incremented at once.
    const std::uint64_t bytes = 0x8080808080808080ULL;
    EXPECT_EQ(atomic::fetch_add(0xff01ff01ff01ff01ULL, 0x0101010101010101ULL, bytes), 0x0002000200020002ULL);
    // Per-field results equal field-wise sums modulo the field width.
    std::mt19937_64 rng(2);
    for (int i = 0; i < 500; ++i) {
        const std::uint64_t a = rng(), b = rng();
        const std::uint64_t r = atomic::fetch_add(a, b, two_fields);
        EXPECT_EQ(static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
        EXPECT_EQ(static_cast<std::uint32_t>(r >> 32),
                  static_cast<std::uint32_t>(a >> 32) + static_cast<std::uint32_t>(b >> 32));
    }
    // A boundary at bit 0 makes every bit its own field: addition becomes XOR.
    EXPECT_EQ(atomic::fetch_add(0xf0f0, 0xff00, 0xffffffffffffffffULL), 0xf0f0u ^ 0xff00u);
}

TEST(AtomicAlu, CompareSwapSwapsOnlyOnAMaskedMatch) {
    const std::uint64_t all = ~std::uint64_t{0};
    EXPECT_EQ(atomic::compare_swap(7, 9, all, 7, all), 9u);  // match: swapped
    EXPECT_EQ(atomic::compare_swap(7, 9, all, 8, all), 7u);  // no match: unchanged
    // Only the low byte is compared and only the high byte is swapped.
    EXPECT_EQ(atomic::compare_swap(0x11223344, 0xaa000000, 0xff000000, 0x99999944, 0xff), 0xaa223344u);
    EXPECT_EQ(atomic::compare_swap(0x11223344, 0xaa000000, 0xff000000, 0x99999945, 0xff), 0x11223344u);
    // An empty compare mask always matches; an empty swap mask never changes anything.
    EXPECT_EQ(atomic::compare_swap(5, 6, all, 12345, 0), 6u);
    EXPECT_EQ(atomic::compare_swap(5, 6, 0, 5, all), 5u);
}

}  // namespace
}  // namespace rnic::test
