// PCIe AtomicOps (PCIe Base Spec §6.15) through the endpoint's sockets: one non-posted request with
// the operands, the root complex's indivisible read-modify-write on host memory, one CplD with the
// original value; CAS writes only on a match; PCI-X has no AtomicOps and refuses them.
#include <gtest/gtest.h>

#include "core/mem_access.h"
#include "host/atomic_op_ext.h"
#include "host/host_memory.h"
#include "pcie/pcie_endpoint.h"
#include "pcix/pcix_bridge.h"
#include "proto/bytes.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

template <typename Bus, typename Params>
struct bench {
    host_memory mem;
    Bus bus;
    tb_initiator dev;
    tb_initiator cpu;
    tb_sink bar;
    tb_sink irq;
    explicit bench(const Params& p)
        : mem("mem", host_memory_params{}), bus("bus", p), dev("dev"), cpu("cpu"), bar("bar"), irq("irq") {
        dev.out.bind(bus.dma_in);
        bus.mem_out.bind(mem.dma_in);
        cpu.out.bind(bus.mmio_in);
        bus.mmio_out.bind(bar.in);
        bus.irq_out.bind(irq.in);
        mem.map_dma(0, 1 << 20);
    }
    void store(std::uint64_t addr, std::uint64_t v) {
        std::uint8_t b[8];
        proto::put_le64(b, v);
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        mem_write(dev.out, addr, b, 8, d);
    }
    std::uint64_t load(std::uint64_t addr) {
        std::uint8_t b[8] = {};
        mem.peek(addr, b, 8);
        return proto::get_le64(b);
    }
    tlm::tlm_response_status op(atomic_op_ext& aop, std::uint64_t addr, std::uint64_t* returned, sc_core::sc_time& d) {
        std::uint8_t b[8] = {};
        const auto st = mem_transport(dev.out, tlm::TLM_READ_COMMAND, addr, b, 8, d, &aop);
        *returned = proto::get_le64(b);
        return st;
    }
};
using pcie_bench = bench<pcie_endpoint, pcie_params>;

TEST(AtomicOpTb, FetchAddIsOneRequestAndOneCompletion) {
    pcie_bench b(pcie_params{});
    b.store(0x2000, 41);
    const std::uint64_t up_before = b.bus.upstream().tlps(), down_before = b.bus.downstream().tlps();
    atomic_op_ext aop;
    aop.kind = atomic_op_ext::op::fetch_add;
    aop.operand = 1;
    std::uint64_t got = 0;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(b.op(aop, 0x2000, &got, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(got, 41u);
    EXPECT_EQ(aop.original, 41u);
    EXPECT_EQ(b.load(0x2000), 42u);
    EXPECT_EQ(b.bus.upstream().atomic, 1u);
    EXPECT_EQ(b.bus.upstream().atomic_bytes, 8u);  // one 64-bit operand
    EXPECT_EQ(b.bus.upstream().tlps() - up_before, 1u);
    EXPECT_EQ(b.bus.downstream().cpld, 1u);
    EXPECT_EQ(b.bus.downstream().tlps() - down_before, 1u);
    // A round trip: at least the root complex's completion latency.
    EXPECT_GE(d, pcie_params{}.completion_latency);
}

TEST(AtomicOpTb, CompareAndSwapWritesOnlyOnAMatch) {
    pcie_bench b(pcie_params{});
    b.store(0x3000, 7);
    atomic_op_ext miss;
    miss.kind = atomic_op_ext::op::compare_swap;
    miss.compare = 8;
    miss.operand = 100;
    std::uint64_t got = 0;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(b.op(miss, 0x3000, &got, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(got, 7u);
    EXPECT_EQ(b.load(0x3000), 7u);
    atomic_op_ext hit = miss;
    hit.compare = 7;
    ASSERT_EQ(b.op(hit, 0x3000, &got, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(got, 7u);
    EXPECT_EQ(b.load(0x3000), 100u);
    EXPECT_EQ(b.bus.upstream().atomic_bytes, 32u);  // compare + swap, twice
}

TEST(AtomicOpTb, MisalignedOrUnmappedTargetsAreRefusedWithoutAWrite) {
    pcie_bench b(pcie_params{});
    b.store(0x4000, 5);
    atomic_op_ext aop;
    aop.operand = 1;
    std::uint64_t got = 0;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_NE(b.op(aop, 0x4004, &got, d), tlm::TLM_OK_RESPONSE);  // not 8-byte aligned (§6.15.1)
    EXPECT_EQ(b.load(0x4000), 5u);
    EXPECT_NE(b.op(aop, 0x200000, &got, d), tlm::TLM_OK_RESPONSE);  // outside the IOMMU mapping
    EXPECT_EQ(b.bus.downstream().cpl, 1u);                          // answered by a completion without data
}

TEST(AtomicOpTb, PcixHasNoAtomicOps) {
    bench<pcix_bridge, pcix_params> b(pcix_params{});
    b.store(0x2000, 9);
    atomic_op_ext aop;
    aop.operand = 1;
    std::uint64_t got = 0;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(b.op(aop, 0x2000, &got, d), tlm::TLM_COMMAND_ERROR_RESPONSE);
    EXPECT_EQ(b.load(0x2000), 9u);
}

}  // namespace
}  // namespace rnic::test
