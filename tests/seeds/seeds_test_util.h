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

namespace rnic::proto::seeds_test {

using Bytes = std::vector<std::uint8_t>;

// Parses hex digits; whitespace is ignored (vectors are written in 32-bit words like the figures).
inline Bytes hex(const std::string& text) {
    Bytes out;
    int high = -1;
    for (const char c : text) {
        int v = -1;
        if (c >= '0' && c <= '9') v = c - '0';
        if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
        if (v < 0) {
            if (c == ' ' || c == '\n' || c == '\t') continue;
            throw std::invalid_argument(std::string("bad hex character '") + c + "'");
        }
        if (high < 0) {
            high = v;
        } else {
            out.push_back(static_cast<std::uint8_t>(high << 4 | v));
            high = -1;
        }
    }
    if (high >= 0) throw std::invalid_argument("odd number of hex digits");
    return out;
}

inline std::string to_hex(const std::uint8_t* data, std::size_t len) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (std::size_t i = 0; i < len; ++i) {
        if (i != 0 && i % 4 == 0) s += ' ';
        s += digits[data[i] >> 4];
        s += digits[data[i] & 0xF];
    }
    return s;
}
inline std::string to_hex(const Bytes& v) { return to_hex(v.data(), v.size()); }

inline Bytes zeros(std::size_t n) { return Bytes(n, 0); }
inline Bytes text(const std::string& s) { return {s.begin(), s.end()}; }
inline Bytes cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

inline Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
    Bytes v(n);
    for (auto& b : v) b = static_cast<std::uint8_t>(rng());
    return v;
}

inline std::size_t uniform(std::mt19937_64& rng, std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
}

// Feeds `stream` to `feed` in random chunk sizes 1..max_chunk (some chunks of size 1).
inline void feed_in_chunks(const Bytes& stream, std::mt19937_64& rng, std::size_t max_chunk,
                           const std::function<void(const std::uint8_t*, std::size_t)>& feed) {
    std::size_t pos = 0;
    while (pos < stream.size()) {
        std::size_t n = (rng() % 4 == 0) ? 1 : uniform(rng, 1, max_chunk);
        n = std::min(n, stream.size() - pos);
        feed(stream.data() + pos, n);
        pos += n;
    }
}

inline Bytes flipped(Bytes v, std::size_t bit) {
    v[bit / 8] = static_cast<std::uint8_t>(v[bit / 8] ^ (1u << (bit % 8)));
    return v;
}

}  // namespace rnic::proto::seeds_test
