// Physical units used in scenario files: time, data rate, size and frequency.
//
// Scenario files write quantities as strings with a unit ("500ns", "100Gbps", "4KiB", "1GHz").
// This header turns such strings into canonical numbers and back:
//
//   quantity   canonical unit          accepted units
//   time       picoseconds (uint64)    ps, ns, us, ms, s
//   data rate  bits per second (double) bps, Kbps, Mbps, Gbps, Tbps (1000-based; "kbps" also accepted)
//                                      Bps, KBps, MBps, GBps (bytes per second, x8; "kBps" also accepted)
//   size       bytes (uint64)          B, KB, MB, GB (1000-based; "kB" also accepted), KiB, MiB, GiB (1024-based)
//   frequency  hertz (double)          Hz, kHz, MHz, GHz
//
// Syntax: optional surrounding blanks, a non-negative decimal number "123" or "1.25" (no sign, no exponent, at
// least one digit on each side of a '.'), optional blanks, then the unit (case-sensitive). Time and size are
// converted exactly (integer arithmetic): "1.5us" is exactly 1'500'000 ps, "1.5KiB" is 1536 bytes; a value that is
// not a whole number of picoseconds / bytes ("0.5ps", "0.3B") or that does not fit in 64 bits is rejected.
// Rates and frequencies are converted to the nearest double ("8.528Gbps" == "1066MBps" exactly).
//
// The parse functions return std::nullopt on failure and, if `error` is non-null, store a complete sentence there
// of the form  expected <what> (units ...), got "<text>" (<reason>)  — callers prefix it with file and key.
//
// The format functions give an exact spelling, so that parse(format(x)) == x: among the units whose mantissa is in
// [1, 1000) the shortest spelling (ties: an integer mantissa, then the larger unit); if there is none (0, huge or
// odd values) the shortest spelling overall. format_time_ps(1'500'000) == "1.5us", format_time_ps(250'000'000'000)
// == "250ms", format_size(1536) == "1.5KiB", format_size(4096) == "4KiB", format_rate(1e11) == "100Gbps",
// format_rate(8.528e9) == "8.528Gbps", format_frequency(1e9) == "1GHz", format_time_ps(0) == "0s".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rnic::config {

// Parsers. `text` is the string as written in the scenario (e.g. "1.5us").
std::optional<std::uint64_t> parse_time_ps(std::string_view text, std::string* error = nullptr);
std::optional<double> parse_rate_bps(std::string_view text, std::string* error = nullptr);
std::optional<std::uint64_t> parse_size_bytes(std::string_view text, std::string* error = nullptr);
std::optional<double> parse_frequency_hz(std::string_view text, std::string* error = nullptr);

// What each parser expects, e.g. `a time such as "500ns" (units ps, ns, us, ms, s)` (used in error messages).
const std::string& time_expectation();
const std::string& rate_expectation();
const std::string& size_expectation();
const std::string& frequency_expectation();

// Formatters: exact spelling in the units above (rates in bit units only; sizes in any size unit).
std::string format_time_ps(std::uint64_t ps);
std::string format_size(std::uint64_t bytes);
std::string format_rate(double bps);
std::string format_frequency(double hz);

// User-defined literals for canonical values, handy for schema bounds:
//   using namespace rnic::config::literals;   link.time("propagation", "500ns", "...", 0, 10_ms);
namespace literals {
constexpr std::uint64_t operator""_ps(unsigned long long v) {
    return v;
}
constexpr std::uint64_t operator""_ns(unsigned long long v) {
    return v * 1000ULL;
}
constexpr std::uint64_t operator""_us(unsigned long long v) {
    return v * 1000'000ULL;
}
constexpr std::uint64_t operator""_ms(unsigned long long v) {
    return v * 1000'000'000ULL;
}
constexpr std::uint64_t operator""_s(unsigned long long v) {
    return v * 1000'000'000'000ULL;
}

constexpr std::uint64_t operator""_B(unsigned long long v) {
    return v;
}
constexpr std::uint64_t operator""_KB(unsigned long long v) {
    return v * 1000ULL;
}
constexpr std::uint64_t operator""_MB(unsigned long long v) {
    return v * 1000'000ULL;
}
constexpr std::uint64_t operator""_GB(unsigned long long v) {
    return v * 1000'000'000ULL;
}
constexpr std::uint64_t operator""_KiB(unsigned long long v) {
    return v << 10;
}
constexpr std::uint64_t operator""_MiB(unsigned long long v) {
    return v << 20;
}
constexpr std::uint64_t operator""_GiB(unsigned long long v) {
    return v << 30;
}

constexpr double operator""_bps(unsigned long long v) {
    return static_cast<double>(v);
}
constexpr double operator""_Kbps(unsigned long long v) {
    return static_cast<double>(v) * 1e3;
}
constexpr double operator""_Mbps(unsigned long long v) {
    return static_cast<double>(v) * 1e6;
}
constexpr double operator""_Gbps(unsigned long long v) {
    return static_cast<double>(v) * 1e9;
}
constexpr double operator""_Tbps(unsigned long long v) {
    return static_cast<double>(v) * 1e12;
}
constexpr double operator""_Gbps(long double v) {
    return static_cast<double>(v * 1e9L);
}
constexpr double operator""_Tbps(long double v) {
    return static_cast<double>(v * 1e12L);
}

constexpr double operator""_Hz(unsigned long long v) {
    return static_cast<double>(v);
}
constexpr double operator""_kHz(unsigned long long v) {
    return static_cast<double>(v) * 1e3;
}
constexpr double operator""_MHz(unsigned long long v) {
    return static_cast<double>(v) * 1e6;
}
constexpr double operator""_GHz(unsigned long long v) {
    return static_cast<double>(v) * 1e9;
}
constexpr double operator""_GHz(long double v) {
    return static_cast<double>(v * 1e9L);
}
}  // namespace literals

}  // namespace rnic::config
