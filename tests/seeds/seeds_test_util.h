// Helpers shared by the seeds' framing tests: hex text <-> bytes, a seeded RNG, random chunking
// of a byte stream, bit flips.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../proto/test_util.h"

namespace rnic::proto::seeds_test {

using bytes = std::vector<std::uint8_t>;

// Hex text <-> bytes: the protocol tests' helpers (vectors are written in 32-bit words).
using rnic::proto::test::hex;
using rnic::proto::test::to_hex;

inline bytes zeros(std::size_t n) {
    return bytes(n, 0);
}
inline bytes text(const std::string& s) {
    return {s.begin(), s.end()};
}
inline bytes cat(std::initializer_list<bytes> parts) {
    bytes out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

inline bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
    bytes v(n);
    for (auto& b : v) b = static_cast<std::uint8_t>(rng());
    return v;
}

inline std::size_t uniform(std::mt19937_64& rng, std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
}

// Feeds `stream` to `feed` in random chunk sizes 1..max_chunk (some chunks of size 1).
inline void feed_in_chunks(const bytes& stream, std::mt19937_64& rng, std::size_t max_chunk,
                           const std::function<void(const std::uint8_t*, std::size_t)>& feed) {
    std::size_t pos = 0;
    while (pos < stream.size()) {
        std::size_t n = (rng() % 4 == 0) ? 1 : uniform(rng, 1, max_chunk);
        n = std::min(n, stream.size() - pos);
        feed(stream.data() + pos, n);
        pos += n;
    }
}

inline bytes flipped(bytes v, std::size_t bit) {
    v[bit / 8] = static_cast<std::uint8_t>(v[bit / 8] ^ (1u << (bit % 8)));
    return v;
}

}  // namespace rnic::proto::seeds_test
