// The integrity checker and the log line format (plain calls, no kernel).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/log.h"
#include "integrity.h"

namespace rnic::test {
namespace {

platform::memory_reader reader(const std::vector<std::uint8_t>& mem) {
    return [&mem](std::uint64_t a, void* d, std::size_t n) {
        if (a + n > mem.size()) return false;
        std::memcpy(d, mem.data() + a, n);
        return true;
    };
}

TEST(Integrity, EqualRangesPass) {
    std::vector<std::uint8_t> src(200000), dst(200000);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = dst[i] = static_cast<std::uint8_t>(i * 7);
    const auto r = platform::compare_ranges(reader(src), 0, reader(dst), 0, src.size());
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.bytes_checked, src.size());
}

TEST(Integrity, OneFlippedBitIsFoundAndLocated) {
    std::vector<std::uint8_t> src(200000, 0xab), dst(200000, 0xab);
    dst[123457] ^= 0x10;
    const auto r = platform::compare_ranges(reader(src), 0, reader(dst), 0, src.size());
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.bytes_mismatched, 1u);
    EXPECT_EQ(r.first_mismatch, 123457u);
    EXPECT_NE(r.detail.find("123457"), std::string::npos);
}

TEST(Integrity, RangeOutsideMemoryFails) {
    std::vector<std::uint8_t> src(100), dst(50);
    EXPECT_FALSE(platform::compare_ranges(reader(src), 0, reader(dst), 0, 100).ok);
}

TEST(Log, LineCarriesTimeLevelCategoryAndModule) {
    std::string err;
    ASSERT_TRUE(log::configure("warn,pcie=debug", &err)) << err;
    testing::internal::CaptureStderr();
    RNIC_LOG_AT(debug, pcie, 1234567, "a.pcie", "TLP " << 42);
    RNIC_LOG_AT(debug, toe, 1, "a.rnic.toe", "filtered out");
    const std::string out = testing::internal::GetCapturedStderr();
    EXPECT_NE(out.find("1.234567 us] debug pcie a.pcie: TLP 42"), std::string::npos) << out;
    EXPECT_EQ(out.find("filtered out"), std::string::npos) << out;
}

TEST(Log, BadSpecsAreRejectedWithTheItemNamed) {
    std::string err;
    EXPECT_FALSE(log::configure("pcie=chatty", &err));
    EXPECT_NE(err.find("chatty"), std::string::npos);
    EXPECT_FALSE(log::configure("disk=debug", &err));
    EXPECT_NE(err.find("disk"), std::string::npos);
}

}  // namespace
}  // namespace rnic::test
