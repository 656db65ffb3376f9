#include "config/units.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace rnic::config {
namespace {

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------------------------
// Time

TEST(UnitsTime, ParsesTable) {
    const std::vector<std::pair<std::string, std::uint64_t>> table = {
        {"0ps", 0},
        {"1ps", 1},
        {"500ns", 500'000},
        {"1.5us", 1'500'000},
        {"2ms", 2'000'000'000},
        {"1s", 1'000'000'000'000},
        {"0.001ns", 1},
        {"1.000us", 1'000'000},
        {"0.25s", 250'000'000'000},
        {"  10 ns ", 10'000},
        {"007ns", 7'000},
        {"18446744073709551615ps", kU64Max},
        {"18446744.073709551615s", kU64Max},
    };
    for (const auto& [text, expected] : table) {
        SCOPED_TRACE(text);
        std::string error;
        auto v = parse_time_ps(text, &error);
        ASSERT_TRUE(v.has_value()) << error;
        EXPECT_EQ(*v, expected);
        EXPECT_TRUE(error.empty());
    }
}

TEST(UnitsTime, RejectsMissingUnit) {
    std::string error;
    EXPECT_FALSE(parse_time_ps("500", &error));
    EXPECT_EQ(error, "expected a time such as \"500ns\" (units ps, ns, us, ms, s), got \"500\" (missing unit)");
}

TEST(UnitsTime, RejectsUnknownUnit) {
    std::string error;
    EXPECT_FALSE(parse_time_ps("500nx", &error));
    EXPECT_EQ(error,
              "expected a time such as \"500ns\" (units ps, ns, us, ms, s), got \"500nx\" (unknown unit \"nx\")");
    EXPECT_FALSE(parse_time_ps("5NS", &error)) << "units are case-sensitive";
}

TEST(UnitsTime, RejectsGarbage) {
    for (const char* text : {"", "ns", "abc", "1.ns", ".5ns", "1e3ns", "+5ns", "1,5us", "5 n s"}) {
        SCOPED_TRACE(text);
        std::string error;
        EXPECT_FALSE(parse_time_ps(text, &error));
        EXPECT_TRUE(has(error, "expected a time such as \"500ns\"")) << error;
    }
}

TEST(UnitsTime, RejectsNegative) {
    std::string error;
    EXPECT_FALSE(parse_time_ps("-5ns", &error));
    EXPECT_TRUE(has(error, "negative values are not allowed")) << error;
}

TEST(UnitsTime, RejectsSubPicosecond) {
    std::string error;
    EXPECT_FALSE(parse_time_ps("0.5ps", &error));
    EXPECT_TRUE(has(error, "not a whole number of picoseconds")) << error;
    EXPECT_FALSE(parse_time_ps("1.0001ns", &error));
}

TEST(UnitsTime, RejectsOverflow) {
    for (const char* text : {"18446744073709551616ps", "20000000s", "99999999999999999999999999999999999999999s"}) {
        SCOPED_TRACE(text);
        std::string error;
        EXPECT_FALSE(parse_time_ps(text, &error));
        EXPECT_TRUE(has(error, "too large: at most 18446744073709551615ps")) << error;
    }
}

TEST(UnitsTime, ErrorPointerIsOptional) {
    EXPECT_FALSE(parse_time_ps("oops"));
    EXPECT_EQ(parse_time_ps("3us"), 3'000'000u);
}

// ---------------------------------------------------------------------------------------------------------------
// Rate

TEST(UnitsRate, ParsesTable) {
    const std::vector<std::pair<std::string, double>> table = {
        {"100Gbps", 100e9},     {"25GBps", 200e9},    {"1066MBps", 8.528e9},
        {"1.5Mbps", 1.5e6},     {"10Kbps", 1e4},      {"10kbps", 1e4},
        {"1Tbps", 1e12},        {"8bps", 8},          {"1Bps", 8},
        {"1KBps", 8000},        {"1.6Tbps", 1.6e12},  {"0bps", 0},
        {"8.528Gbps", 8.528e9}, {"12.5 GBps", 100e9},
    };
    for (const auto& [text, expected] : table) {
        SCOPED_TRACE(text);
        std::string error;
        auto v = parse_rate_bps(text, &error);
        ASSERT_TRUE(v.has_value()) << error;
        EXPECT_EQ(*v, expected);
    }
    EXPECT_EQ(*parse_rate_bps("1066MBps"), *parse_rate_bps("8.528Gbps")) << "exact decimal scaling";
}

TEST(UnitsRate, RejectsUnknownUnitWithUnitList) {
    std::string error;
    EXPECT_FALSE(parse_rate_bps("100Gbs", &error));
    EXPECT_EQ(
        error,
        "expected a data rate such as \"100Gbps\" (units bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps), got "
        "\"100Gbs\" (unknown unit \"Gbs\")");
}

TEST(UnitsRate, RejectsMissingUnitGarbageAndNegative) {
    std::string error;
    EXPECT_FALSE(parse_rate_bps("100", &error));
    EXPECT_TRUE(has(error, "(missing unit)")) << error;
    EXPECT_FALSE(parse_rate_bps("fast", &error));
    EXPECT_TRUE(has(error, "got \"fast\" (not a number)")) << error;
    EXPECT_FALSE(parse_rate_bps("-1Gbps", &error));
    EXPECT_TRUE(has(error, "negative")) << error;
}

TEST(UnitsRate, RejectsOverflow) {
    std::string error;
    const std::string huge = "1" + std::string(400, '0') + "Gbps";
    EXPECT_FALSE(parse_rate_bps(huge, &error));
    EXPECT_TRUE(has(error, "(too large)")) << error;
}

// ---------------------------------------------------------------------------------------------------------------
// Size

TEST(UnitsSize, ParsesTable) {
    const std::vector<std::pair<std::string, std::uint64_t>> table = {
        {"0B", 0},
        {"64B", 64},
        {"1KB", 1000},
        {"1kB", 1000},
        {"1.5MB", 1'500'000},
        {"2GB", 2'000'000'000},
        {"4KiB", 4096},
        {"1.5KiB", 1536},
        {"1MiB", 1 << 20},
        {"2GiB", 2ULL << 30},
        {"0.5KiB", 512},
        {"0.0009765625KiB", 1},
        {"18446744073709551615B", kU64Max},
        {"18014398509481983KiB", kU64Max - 1023},
        {"16383.9990234375MiB", 17179868160},
        {"15.999999999068677425384521484375GiB", (16ULL << 30) - 1},
    };
    for (const auto& [text, expected] : table) {
        SCOPED_TRACE(text);
        std::string error;
        auto v = parse_size_bytes(text, &error);
        ASSERT_TRUE(v.has_value()) << error;
        EXPECT_EQ(*v, expected);
    }
}

TEST(UnitsSize, RejectsFractionalBytes) {
    std::string error;
    EXPECT_FALSE(parse_size_bytes("0.3B", &error));
    EXPECT_EQ(error,
              "expected a size such as \"4KiB\" or a whole number of bytes (units B, KB, MB, GB, KiB, MiB, GiB), got "
              "\"0.3B\" (not a whole number of bytes)");
    EXPECT_FALSE(parse_size_bytes("1.0001KiB", &error));
    EXPECT_TRUE(has(error, "not a whole number of bytes")) << error;
}

TEST(UnitsSize, RejectsBadUnitsAndOverflow) {
    std::string error;
    EXPECT_FALSE(parse_size_bytes("4kib", &error));
    EXPECT_TRUE(has(error, "unknown unit \"kib\"")) << error;
    EXPECT_FALSE(parse_size_bytes("4096", &error));
    EXPECT_TRUE(has(error, "missing unit")) << error;
    EXPECT_FALSE(parse_size_bytes("20000000000GiB", &error));
    EXPECT_TRUE(has(error, "too large")) << error;
    EXPECT_FALSE(parse_size_bytes("18446744073709551616B", &error));
    EXPECT_FALSE(parse_size_bytes("-1B", &error));
    EXPECT_TRUE(has(error, "negative")) << error;
}

// ---------------------------------------------------------------------------------------------------------------
// Frequency

TEST(UnitsFrequency, ParsesTable) {
    const std::vector<std::pair<std::string, double>> table = {
        {"1GHz", 1e9}, {"100MHz", 1e8}, {"1.5kHz", 1500}, {"50Hz", 50}, {"2.4GHz", 2.4e9}, {"0.5MHz", 5e5},
    };
    for (const auto& [text, expected] : table) {
        SCOPED_TRACE(text);
        std::string error;
        auto v = parse_frequency_hz(text, &error);
        ASSERT_TRUE(v.has_value()) << error;
        EXPECT_EQ(*v, expected);
    }
}

TEST(UnitsFrequency, RejectsBadInput) {
    std::string error;
    EXPECT_FALSE(parse_frequency_hz("1GHZ", &error));
    EXPECT_EQ(error,
              "expected a frequency such as \"1GHz\" (units Hz, kHz, MHz, GHz), got \"1GHZ\" (unknown unit "
              "\"GHZ\")");
    EXPECT_FALSE(parse_frequency_hz("1000", &error));
    EXPECT_TRUE(has(error, "missing unit"));
}

// ---------------------------------------------------------------------------------------------------------------
// Formatting

TEST(UnitsFormat, TimeShortestExact) {
    EXPECT_EQ(format_time_ps(500'000), "500ns");
    EXPECT_EQ(format_time_ps(1'500'000), "1.5us");
    EXPECT_EQ(format_time_ps(1), "1ps");
    EXPECT_EQ(format_time_ps(1'500), "1.5ns");
    EXPECT_EQ(format_time_ps(1'000'000'000'000), "1s");
    EXPECT_EQ(format_time_ps(250'000'000'000), "250ms");
    EXPECT_EQ(format_time_ps(1'234'567), "1.234567us");
    EXPECT_EQ(format_time_ps(1'000'000'000'000'000), "1000s");
    EXPECT_EQ(format_time_ps(0), "0s");
    EXPECT_EQ(format_time_ps(kU64Max), "18446744073709551615ps");
}

TEST(UnitsFormat, SizeShortestExact) {
    EXPECT_EQ(format_size(64), "64B");
    EXPECT_EQ(format_size(1536), "1.5KiB");
    EXPECT_EQ(format_size(4096), "4KiB");
    EXPECT_EQ(format_size(1000), "1KB");
    EXPECT_EQ(format_size(1500), "1.5KB");
    EXPECT_EQ(format_size(1024000), "1.024MB");
    EXPECT_EQ(format_size(1 << 20), "1MiB");
    EXPECT_EQ(format_size(3ULL << 30), "3GiB");
    EXPECT_EQ(format_size(2'000'000'000), "2GB");
    EXPECT_EQ(format_size(0), "0B");
}

TEST(UnitsFormat, RateAndFrequency) {
    EXPECT_EQ(format_rate(100e9), "100Gbps");
    EXPECT_EQ(format_rate(1.6e12), "1.6Tbps");
    EXPECT_EQ(format_rate(8.528e9), "8.528Gbps");
    EXPECT_EQ(format_rate(1e6), "1Mbps");
    EXPECT_EQ(format_rate(8), "8bps");
    EXPECT_EQ(format_rate(0), "0bps");
    EXPECT_EQ(format_frequency(1e9), "1GHz");
    EXPECT_EQ(format_frequency(1.5e8), "150MHz");
    EXPECT_EQ(format_frequency(2.4e9), "2.4GHz");
    EXPECT_EQ(format_frequency(1500), "1.5kHz");
}

TEST(UnitsFormat, RoundTripsRandomValues) {
    std::mt19937_64 rng(12345);
    for (int i = 0; i < 2000; ++i) {
        const std::uint64_t magnitude = rng() >> (rng() % 64);
        const std::uint64_t ps = magnitude;
        EXPECT_EQ(parse_time_ps(format_time_ps(ps)), ps) << format_time_ps(ps);
        EXPECT_EQ(parse_size_bytes(format_size(ps)), ps) << format_size(ps);
        const double rate = static_cast<double>(rng() % 2'000'000) * 1e6 / static_cast<double>(1 + rng() % 1000);
        EXPECT_EQ(parse_rate_bps(format_rate(rate)), rate) << format_rate(rate);
        EXPECT_EQ(parse_frequency_hz(format_frequency(rate)), rate) << format_frequency(rate);
    }
}

TEST(UnitsFormat, ParseOfFormatIsIdentityOnSpellings) {
    for (const char* text : {"500ns", "1.5us", "3ms", "64B", "4KiB", "1.5KiB", "2GB"}) {
        SCOPED_TRACE(text);
        if (auto t = parse_time_ps(text)) {
            EXPECT_EQ(format_time_ps(*t), text);
        }
        if (auto s = parse_size_bytes(text)) {
            EXPECT_EQ(format_size(*s), text);
        }
    }
}

TEST(UnitsLiterals, CanonicalValues) {
    using namespace rnic::config::literals;
    EXPECT_EQ(5_ns, 5'000u);
    EXPECT_EQ(2_ms, *parse_time_ps("2ms"));
    EXPECT_EQ(4_KiB, 4096u);
    EXPECT_EQ(1_GB, 1'000'000'000u);
    EXPECT_EQ(100_Gbps, 1e11);
    EXPECT_EQ(1.6_Tbps, 1.6e12);
    EXPECT_EQ(3_GHz, 3e9);
}

}  // namespace
}  // namespace rnic::config
