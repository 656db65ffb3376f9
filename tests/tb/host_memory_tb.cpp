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
