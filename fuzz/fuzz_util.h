// Helpers shared by the libFuzzer targets in this folder: an invariant check that traps, a reader
// that takes typed fields from the fuzzer's bytes (zeros once they run out), and a small PRNG for
// choices derived from the input (chunk sizes and the like) that must be reproducible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

// An invariant of the code under test does not hold: report it and stop (libFuzzer then saves
// the input as a crash artifact).
#define FUZZ_CHECK(cond)                                                                              \
    do {                                                                                              \
        if (!(cond)) {                                                                                \
            std::fprintf(stderr, "fuzz invariant violated: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
            __builtin_trap();                                                                         \
        }                                                                                             \
    } while (0)

namespace rnic::fuzz {

// Reads little-endian fields from the front of the input; past the end every read yields zero.
class fuzz_input {
public:
    fuzz_input(const std::uint8_t* data, std::size_t size) : p_(data), n_(size) {}

    std::size_t remaining() const { return n_; }
    bool empty() const { return n_ == 0; }

    std::uint8_t u8() {
        if (n_ == 0) return 0;
        --n_;
        return *p_++;
    }
    std::uint16_t u16() { return static_cast<std::uint16_t>(u8() | (u8() << 8)); }
    std::uint32_t u32() { return u16() | (std::uint32_t{u16()} << 16); }
    std::uint64_t u64() { return u32() | (std::uint64_t{u32()} << 32); }
    std::int16_t i16() { return static_cast<std::int16_t>(u16()); }
    bool flag() { return (u8() & 1) != 0; }

    // Takes up to `len` bytes (fewer at the end of the input); returns where they are.
    const std::uint8_t* take(std::size_t len, std::size_t& got) {
        got = len < n_ ? len : n_;
        const std::uint8_t* at = p_;
        p_ += got;
        n_ -= got;
        return at;
    }
    // Everything that is left.
    const std::uint8_t* rest(std::size_t& got) { return take(n_, got); }

private:
    const std::uint8_t* p_;
    std::size_t n_;
};

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and the same on every platform.
class split_mix {
public:
    explicit split_mix(std::uint64_t seed) : s_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform-ish in [0, bound) for small bounds; 0 when bound is 0.
    std::size_t below(std::size_t bound) { return bound == 0 ? 0 : static_cast<std::size_t>(next() % bound); }

private:
    std::uint64_t s_;
};

// Chunk sizes for feeding a stream piecewise: mostly small (1-16 bytes, so every field boundary
// gets split somewhere), sometimes large.
inline std::size_t next_chunk(split_mix& rng) {
    const std::uint64_t r = rng.next();
    return (r & 3) == 0 ? 1 + static_cast<std::size_t>((r >> 2) % 2048) : 1 + static_cast<std::size_t>((r >> 2) % 16);
}

}  // namespace rnic::fuzz
