// The guest's RAM mapped from memory-backend descriptors: bytes shared both ways, accesses inside one
// region only, bad regions refused (offsets, sizes, overlaps), every sync replacing the mappings.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include "qemu/guest_ram.h"
#include "test_util.h"

namespace rnic::test {
namespace {

using qemu::guest_ram;
using qemu::mpqemu::ram_region;

TEST(GuestRam, SharesBytesWithTheBackendBothWays) {
    const int fd = make_memfd(2 << 20);
    ASSERT_GE(fd, 0);
    auto* qemu_view = static_cast<std::uint8_t*>(::mmap(nullptr, 2 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    ASSERT_NE(qemu_view, MAP_FAILED);
    guest_ram ram;
    std::string err;
    // Two regions of one file, as QEMU's pc machine splits RAM below and above a hole.
    ASSERT_TRUE(ram.sync({{0, 1 << 20, 0, ::dup(fd)}, {0x100000000ULL, 1 << 20, 1 << 20, ::dup(fd)}}, &err)) << err;
    EXPECT_EQ(ram.regions(), 2u);
    EXPECT_EQ(ram.bytes(), 2u << 20);
    const char hello[] = "guest";
    ASSERT_TRUE(ram.write(0x100000010ULL, hello, sizeof hello));
    EXPECT_STREQ(reinterpret_cast<char*>(qemu_view + (1 << 20) + 0x10), "guest");
    std::memcpy(qemu_view + 0x400, "dma", 4);
    char got[4] = {};
    ASSERT_TRUE(ram.read(0x400, got, 4));
    EXPECT_STREQ(got, "dma");
    ::munmap(qemu_view, 2 << 20);
    ::close(fd);
}

TEST(GuestRam, AccessesOutsideOneRegionAreRefused) {
    guest_ram ram;
    std::string err;
    ASSERT_TRUE(ram.sync({{0x1000, 0x2000, 0, make_memfd(0x2000)}, {0x3000, 0x1000, 0, make_memfd(0x1000)}}, &err));
    std::uint8_t b[16];
    EXPECT_EQ(ram.translate(0x0, 4), nullptr);
    EXPECT_EQ(ram.translate(0xffc, 8), nullptr) << "starts below the region";
    EXPECT_NE(ram.translate(0x2ff8, 8), nullptr);
    EXPECT_EQ(ram.translate(0x2ffc, 8), nullptr) << "spans two regions (contiguous in the guest, not in the host)";
    EXPECT_EQ(ram.translate(0x3ff8, 16), nullptr);
    EXPECT_EQ(ram.translate(~0ULL - 4, 16), nullptr) << "wraps around";
    EXPECT_FALSE(ram.read(0x5000, b, 1));
    ram.clear();
    EXPECT_EQ(ram.translate(0x1000, 1), nullptr);
}

TEST(GuestRam, BadRegionsAreRefusedAndNothingIsMapped) {
    guest_ram ram;
    std::string err;
    EXPECT_FALSE(ram.sync({{0, 0x2000, 0, make_memfd(0x1000)}}, &err));
    EXPECT_NE(err.find("beyond the file's 4096 bytes"), std::string::npos) << err;
    EXPECT_EQ(ram.regions(), 0u);
    EXPECT_FALSE(ram.sync({{0, 0x1000, 0x10, make_memfd(0x2000)}}, &err));
    EXPECT_NE(err.find("not page-aligned"), std::string::npos) << err;
    EXPECT_FALSE(ram.sync({{0, 0x2000, 0, make_memfd(0x2000)}, {0x1000, 0x1000, 0, make_memfd(0x1000)}}, &err));
    EXPECT_NE(err.find("overlaps"), std::string::npos) << err;
    EXPECT_EQ(ram.regions(), 0u) << "a bad sync leaves nothing mapped";
    EXPECT_FALSE(ram.sync({{0, 0x1000, 0, 12345}}, &err));
    EXPECT_NE(err.find("fstat"), std::string::npos) << err;
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    EXPECT_FALSE(ram.sync({{0, 0x1000, 0, p[0]}}, &err)) << "a pipe is no RAM";
    ::close(p[1]);
}

TEST(GuestRam, EverySyncReplacesTheMappings) {
    guest_ram ram;
    std::string err;
    ASSERT_TRUE(ram.sync({{0, 0x1000, 0, make_memfd(0x1000)}}, &err));
    ASSERT_TRUE(ram.write(0, "A", 1));
    ASSERT_TRUE(ram.sync({{0x10000, 0x1000, 0, make_memfd(0x1000)}}, &err));
    EXPECT_EQ(ram.translate(0, 1), nullptr);
    EXPECT_NE(ram.translate(0x10000, 1), nullptr);
    EXPECT_EQ(ram.syncs(), 2u);
}

}  // namespace
}  // namespace rnic::test
