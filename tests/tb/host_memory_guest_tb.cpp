// Host memory backed by a QEMU guest's RAM (host_bus.transport = qemu): the device's DMA reaches the
// guest's mapped regions only while the function is bus master, never a byte outside them, and the
// CPU port offers no DMI (the mappings change at every sync).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/mem_access.h"
#include "host/host_memory.h"
#include "qemu/guest_ram.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

int memfd(std::size_t size) {
    const int fd = ::memfd_create("rnic-tb-guest", MFD_CLOEXEC);
    if (fd >= 0 && ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

TEST(HostMemoryGuestTb, DmaReachesGuestRamOnlyInsideItsRegionsWhileBusMaster) {
    constexpr std::size_t kRam = 1 << 20;
    const int fd = memfd(kRam);
    ASSERT_GE(fd, 0);
    // What QEMU sees of its RAM: the file, mapped separately from the platform's mapping.
    auto* qemu_view = static_cast<std::uint8_t*>(::mmap(nullptr, kRam, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    ASSERT_NE(qemu_view, MAP_FAILED);
    qemu::guest_ram ram;
    std::string err;
    // Two regions of one file: guest-physical [0, 512 KiB) and [1 MiB, 1.5 MiB).
    ASSERT_TRUE(ram.sync({{0, kRam / 2, 0, ::dup(fd)}, {kRam, kRam / 2, kRam / 2, ::dup(fd)}}, &err)) << err;

    host_memory_params p;
    p.size = 16 << 20;
    host_memory mem("mem", p);
    mem.attach_guest(&ram);
    tb_initiator dma("dma");
    tb_initiator cpu("cpu");
    dma.out.bind(mem.dma_in);
    cpu.out.bind(mem.cpu_in);

    std::vector<std::uint8_t> data(64, 0xab);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(mem_write(dma.out, 0x1000, data.data(), data.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE)
        << "bus mastering is off";
    ram.set_bus_master(true);
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(mem_write(dma.out, 0x1000, data.data(), data.size(), t), tlm::TLM_OK_RESPONSE);
    EXPECT_GT(t, sc_core::SC_ZERO_TIME) << "a guest DMA takes time like any other";
    EXPECT_EQ(qemu_view[0x1000], 0xab) << "the guest sees the device's write";
    EXPECT_EQ(mem_write(dma.out, kRam + 0x10, data.data(), data.size(), d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(qemu_view[kRam / 2 + 0x10], 0xab) << "the second region maps the file's second half";
    qemu_view[0x2000] = 0x42;
    std::uint8_t got = 0;
    EXPECT_EQ(mem_read(dma.out, 0x2000, &got, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(got, 0x42) << "the device reads what the guest wrote";

    // Outside guest RAM, across the hole between the regions, straddling a region's end: refused.
    std::vector<std::uint8_t> before(kRam);
    std::memcpy(before.data(), qemu_view, kRam);
    EXPECT_EQ(mem_write(dma.out, kRam / 2 - 32, data.data(), data.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(mem_write(dma.out, kRam / 2 + 0x100, data.data(), data.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(mem_write(dma.out, 64ull << 30, data.data(), data.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(mem_write(dma.out, ~0ull - 16, data.data(), data.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(std::memcmp(before.data(), qemu_view, kRam), 0) << "no refused write changed a byte";

    // After a sync that fails, nothing is reachable.
    EXPECT_FALSE(ram.sync({{0, 2 * kRam, 0, ::dup(fd)}}, &err));
    EXPECT_EQ(mem_read(dma.out, 0x2000, &got, 1, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);

    // No DMI on the CPU port.
    tlm::tlm_generic_payload gp;
    gp.set_address(0);
    tlm::tlm_dmi dmi;
    EXPECT_FALSE(cpu.out->get_direct_mem_ptr(gp, dmi));

    boost::json::object stats;
    mem.report_stats(stats);
    EXPECT_EQ(stats["dma_refused"].to_number<std::uint64_t>(), 6u);
    EXPECT_EQ(stats["dma_writes"].to_number<std::uint64_t>(), 2u);
    EXPECT_EQ(stats["dma_reads"].to_number<std::uint64_t>(), 1u);
    ::munmap(qemu_view, kRam);
    ::close(fd);
}

}  // namespace
}  // namespace rnic::test
