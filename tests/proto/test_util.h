// Helpers shared by the protocol unit tests: hex text <-> bytes, a seeded RNG.
#pragma once

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace rnic::proto::test {

// Parses hex digits, ignoring whitespace (test-vectors.md groups bytes in 32-bit words).
inline std::vector<std::uint8_t> hex(const std::string& text) {
    std::vector<std::uint8_t> out;
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

// Lower-case hex, a space after every 4 bytes, as in test-vectors.md.
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

inline std::string to_hex(const std::vector<std::uint8_t>& v) {
    return to_hex(v.data(), v.size());
}

inline std::vector<std::uint8_t> bytes(const std::string& s) {
    return {s.begin(), s.end()};
}

inline std::vector<std::uint8_t> random_bytes(std::mt19937_64& rng, std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (auto& b : v) b = static_cast<std::uint8_t>(rng());
    return v;
}

}  // namespace rnic::proto::test
