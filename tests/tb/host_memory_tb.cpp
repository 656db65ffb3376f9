// Host memory through its sockets: DMA outside the mapped regions is refused and changes nothing.
#include <gtest/gtest.h>

#include "core/mem_access.h"
#include "host/host_memory.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

TEST(HostMemoryTb, DmaOutsideMappedRegionsIsRefusedAndChangesNothing) {
    host_memory_params p;
    p.size = 1 << 20;
    host_memory mem("mem", p);
    tb_initiator dma("dma");
    tb_initiator cpu("cpu");
    dma.out.bind(mem.dma_in);
    cpu.out.bind(mem.cpu_in);
    mem.map_dma(0x1000, 0x1000);

    std::vector<std::uint8_t> before(64, 0x5a);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_write(cpu.out, 0x3000, before.data(), before.size(), d), tlm::TLM_OK_RESPONSE);

    std::vector<std::uint8_t> junk(64, 0xee);
    // Wholly outside, straddling the end of the mapping, and beyond the memory: all refused.
    EXPECT_EQ(mem_write(dma.out, 0x3000, junk.data(), junk.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(mem_write(dma.out, 0x1fe0, junk.data(), junk.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(mem_write(dma.out, (1 << 20) - 32, junk.data(), junk.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(mem_read(dma.out, 0x0, junk.data(), 16, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);

    std::vector<std::uint8_t> after(64);
    ASSERT_TRUE(mem.peek(0x3000, after.data(), after.size()));
    EXPECT_EQ(after, before);
    std::vector<std::uint8_t> edge(32);
    ASSERT_TRUE(mem.peek(0x1fe0, edge.data(), edge.size()));
    EXPECT_EQ(edge, std::vector<std::uint8_t>(32, 0));

    // Inside the mapping it works and takes time.
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(mem_write(dma.out, 0x1800, junk.data(), junk.size(), t), tlm::TLM_OK_RESPONSE);
    EXPECT_GT(t, sc_core::SC_ZERO_TIME);
    ASSERT_TRUE(mem.peek(0x1800, after.data(), after.size()));
    EXPECT_EQ(after, junk);

    boost::json::object stats;
    mem.report_stats(stats);
    EXPECT_EQ(stats["dma_refused"].to_number<std::uint64_t>(), 4u);
    EXPECT_EQ(stats["dma_writes"].to_number<std::uint64_t>(), 1u);
}

}  // namespace
}  // namespace rnic::test

namespace rnic::test {
namespace {

TEST(HostMemoryTb, UnmappingARegionRefusesItAgain) {
    host_memory_params p;
    p.size = 1 << 20;
    host_memory mem("mem", p);
    tb_initiator dma("dma");
    tb_initiator cpu("cpu");
    dma.out.bind(mem.dma_in);
    cpu.out.bind(mem.cpu_in);
    mem.map_dma(0x4000, 0x1000);
    mem.map_dma(0x8000, 0x1000);
    std::uint8_t b[16] = {1};
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(mem_write(dma.out, 0x4000, b, sizeof b, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(mem_write(dma.out, 0x8ff0, b, sizeof b, d), tlm::TLM_OK_RESPONSE);
    // Two adjacent-but-separate windows do not make one: a transfer across the gap is refused.
    EXPECT_EQ(mem_write(dma.out, 0x4ff8, b, sizeof b, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    mem.unmap_dma(0x4000);
    EXPECT_EQ(mem_write(dma.out, 0x4000, b, sizeof b, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_FALSE(mem.dma_allowed(0x4000, 1));
    EXPECT_TRUE(mem.dma_allowed(0x8000, 0x1000));
}

TEST(HostMemoryTb, TheCpuPortOffersDmiAndDmaPaysLatencyAndBandwidth) {
    host_memory_params p;
    p.size = 1 << 20;
    host_memory mem("mem", p);
    tb_initiator dma("dma");
    tb_initiator cpu("cpu");
    dma.out.bind(mem.dma_in);
    cpu.out.bind(mem.cpu_in);
    // DMI on the CPU port covers the whole store with the memory's latency.
    tlm::tlm_generic_payload gp;
    gp.set_address(0);
    tlm::tlm_dmi dmi;
    ASSERT_TRUE(cpu.out->get_direct_mem_ptr(gp, dmi));
    EXPECT_EQ(dmi.get_start_address(), 0u);
    EXPECT_EQ(dmi.get_end_address(), p.size - 1);
    EXPECT_TRUE(dmi.is_read_write_allowed());
    EXPECT_EQ(dmi.get_read_latency(), p.latency);
    dmi.get_dmi_ptr()[0x100] = 0x42;
    std::uint8_t v = 0;
    ASSERT_TRUE(mem.peek(0x100, &v, 1));
    EXPECT_EQ(v, 0x42);
    // DMA: latency to the first byte, then the bytes at the port's bandwidth; the port is shared.
    mem.map_dma(0, p.size);
    std::vector<std::uint8_t> buf(4096);
    sc_core::sc_time d1 = sc_core::SC_ZERO_TIME, d2 = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_read(dma.out, 0, buf.data(), buf.size(), d1), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d1, p.latency + transfer_time(4096, p.bandwidth_bps));
    ASSERT_EQ(mem_read(dma.out, 0, buf.data(), buf.size(), d2), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d2, d1 + transfer_time(4096, p.bandwidth_bps));
}

}  // namespace
}  // namespace rnic::test
