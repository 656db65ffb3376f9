// The switch's dynamic-threshold admission rule computed from its definition, for the tests of the
// shared buffer and of the switch to compare against.
#pragma once

#include <cstdint>

namespace rnic::test {

// How many frames of `len` one queue of an otherwise idle buffer of `b` bytes admits:
// q + L <= alpha * (B - q) and q + L <= B.
inline int dt_capacity(std::uint64_t b, double alpha, std::uint32_t len) {
    std::uint64_t q = 0;
    int n = 0;
    while (static_cast<double>(q + len) <= alpha * static_cast<double>(b - q) && q + len <= b) {
        q += len;
        ++n;
    }
    return n;
}

}  // namespace rnic::test
