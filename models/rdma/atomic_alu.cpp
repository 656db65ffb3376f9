#include "rdma/atomic_alu.h"

namespace rnic::atomic {

std::uint64_t fetch_add(std::uint64_t original, std::uint64_t add_data, std::uint64_t add_mask) {
    // The RFC's bit-serial adder, one bit position per step, the carry cut at field boundaries.
    std::uint64_t result = 0;
    std::uint64_t carry = 0;
    for (unsigned bit = 0; bit < 64; ++bit) {
        const std::uint64_t bit_location = std::uint64_t{1} << bit;
        const std::uint64_t val1 = (original & bit_location) >> bit;
        const std::uint64_t val2 = (add_data & bit_location) >> bit;
        std::uint64_t sum = carry + val1 + val2;
        carry = (sum & 2) >> 1;
        sum &= 1;
        if (sum != 0) result |= bit_location;
        carry = (carry != 0 && (add_mask & bit_location) == 0) ? 1 : 0;
    }
    return result;
}

std::uint64_t compare_swap(std::uint64_t original, std::uint64_t swap_data, std::uint64_t swap_mask,
                           std::uint64_t compare_data, std::uint64_t compare_mask) {
    if (((compare_data ^ original) & compare_mask) == 0) {
        return (original & ~swap_mask) | (swap_data & swap_mask);
    }
    return original;
}

}  // namespace rnic::atomic
