// MSI-X: the table and PBA in BAR0 (decoded by the host-bus endpoint), and what a raised vector
// becomes: unprogrammed entries fall back to the vector number, programmed ones send their Message
// Data, masked ones set their Pending bit until unmasked.
#include <gtest/gtest.h>

#include "core/mem_access.h"
#include "host/host_memory.h"
#include "host/msix_table.h"
#include "pcie/pcie_endpoint.h"
#include "pcix/pcix_bridge.h"
#include "rnic/regmap.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

using namespace regmap;

std::uint32_t entry(unsigned vector, std::uint32_t field) {
    return kMsixTableOffset + vector * kMsixEntrySize + field;
}

// The RNIC's layout (regmap.h), as the platform hands it to the bus in front of the device.
msix_layout rnic_layout() {
    return msix_layout{kMsixVectors, kMsixTableOffset, kMsixPbaOffset, kMsixPageSize};
}

TEST(MsixTable, ResetStateIsMaskedAndUnprogrammed) {
    msix_table t(rnic_layout());
    for (unsigned v = 0; v < kMsixVectors; ++v) {
        EXPECT_EQ(t.read(entry(v, msix_off::control), 4), msix_ctrl::mask);
        EXPECT_EQ(t.read(entry(v, msix_off::addr_lo), 4), 0u);
    }
    // Unprogrammed: the message goes out with the vector number, mask or not.
    const msix_table::message m = t.raise(5);
    EXPECT_TRUE(m.send);
    EXPECT_FALSE(m.programmed);
    EXPECT_EQ(m.data, 5u);
}

TEST(MsixTable, RegionAndAccessRules) {
    const msix_table t(rnic_layout());
    EXPECT_TRUE(t.claims(kMsixTableOffset));
    EXPECT_TRUE(t.claims(kMsixPbaOffset + 4));
    EXPECT_FALSE(t.claims(kCqDoorbellBase));
    EXPECT_FALSE(t.claims(0x2c));
    EXPECT_TRUE(t.valid_access(entry(1, msix_off::data), 4));
    EXPECT_TRUE(t.valid_access(entry(1, msix_off::addr_lo), 8));
    EXPECT_FALSE(t.valid_access(entry(1, msix_off::data), 2));
    EXPECT_FALSE(t.valid_access(entry(1, msix_off::data) + 2, 4));
    EXPECT_TRUE(t.valid_access(entry(1, msix_off::data), 8));      // Message Data + Vector Control
    EXPECT_FALSE(t.valid_access(entry(1, msix_off::addr_hi), 8));  // a QWORD must be 8-aligned
}

// The table sits where the function's layout puts it, with as many vectors as it says; a function
// without a table (the default layout) claims nothing of its BAR.
TEST(MsixTable, LayoutComesFromTheParameters) {
    msix_table t(msix_layout{4, 0x2000, 0x3000, 0x1000});
    EXPECT_EQ(t.vectors(), 4u);
    EXPECT_TRUE(t.claims(0x2000));
    EXPECT_TRUE(t.claims(0x3ffc));
    EXPECT_FALSE(t.claims(kMsixTableOffset));
    EXPECT_FALSE(t.claims(0x1ffc));
    std::vector<unsigned> released;
    t.write(0x2000 + 2 * msix_entry::kSize + msix_entry::kAddrLo, 8, 0xfee00000ull, &released);
    t.write(0x2000 + 2 * msix_entry::kSize + msix_entry::kData, 4, 77, &released);
    EXPECT_EQ(t.read(0x2000 + 2 * msix_entry::kSize + msix_entry::kData, 4), 77u);
    EXPECT_FALSE(t.raise(2).send);  // masked at reset
    EXPECT_EQ(t.read(0x3000, 4), 1u << 2);
    EXPECT_EQ(t.read(0x2000 + 4 * msix_entry::kSize, 4), 0u);  // past the last entry: reads as zero
    EXPECT_FALSE(t.raise(4).programmed);                       // beyond the table: the fallback

    const msix_table none{msix_layout{}};
    EXPECT_EQ(none.vectors(), 0u);
    EXPECT_FALSE(none.claims(0));
    EXPECT_FALSE(none.claims(kMsixTableOffset));
}

TEST(MsixTable, MaskedVectorIsPendingUntilUnmasked) {
    msix_table t(rnic_layout());
    std::vector<unsigned> released;
    t.write(entry(3, msix_off::addr_lo), 8, 0xfee00000ull, &released);  // QWORD: address lo and hi
    t.write(entry(3, msix_off::data), 4, 42, &released);
    // Still masked (reset state): raising sets the Pending bit.
    EXPECT_FALSE(t.raise(3).send);
    EXPECT_TRUE(t.pending(3));
    EXPECT_EQ(t.read(kMsixPbaOffset, 4), 1u << 3);
    // Unmasking releases it; the message carries the programmed data.
    t.write(entry(3, msix_off::control), 4, 0, &released);
    ASSERT_EQ(released, std::vector<unsigned>{3});
    const msix_table::message m = t.take_pending(3);
    EXPECT_EQ(m.address, 0xfee00000ull);
    EXPECT_EQ(m.data, 42u);
    EXPECT_EQ(t.read(kMsixPbaOffset, 4), 0u);
    // Now unmasked: raised vectors go out at once.
    const msix_table::message n = t.raise(3);
    EXPECT_TRUE(n.send);
    EXPECT_TRUE(n.programmed);
    // The PBA is read-only; the low address bits are always zero.
    t.write(kMsixPbaOffset, 4, 0xffffffffu, &released);
    EXPECT_EQ(t.read(kMsixPbaOffset, 4), 0u);
    t.write(entry(4, msix_off::addr_lo), 4, 0xfee00003u, &released);
    EXPECT_EQ(t.read(entry(4, msix_off::addr_lo), 4), 0xfee00000u);
}

template <typename Params>
Params with_rnic_layout(Params p) {
    p.msix = rnic_layout();
    return p;
}

// The endpoint decodes the table; the host sees the programmed data as the vector.
template <typename Bus, typename Params>
struct msix_bench {
    host_memory mem;
    Bus bus;
    tb_initiator nic_irq;
    tb_initiator cpu;
    tb_initiator dev;
    tb_initiator host_cpu;
    tb_sink bar;
    tb_sink host_irq;
    msix_bench()
        : mem("mem", host_memory_params{}),
          bus("bus", with_rnic_layout(Params{})),
          nic_irq("nic_irq"),
          cpu("cpu"),
          dev("dev"),
          host_cpu("host_cpu"),
          bar("bar"),
          host_irq("host_irq") {
        host_cpu.out.bind(mem.cpu_in);
        nic_irq.out.bind(bus.msix_in);
        cpu.out.bind(bus.mmio_in);
        dev.out.bind(bus.dma_in);
        bus.mem_out.bind(mem.dma_in);
        bus.mmio_out.bind(bar.in);
        bus.irq_out.bind(host_irq.in);
        // One bench per test: end elaboration here (multi-sockets register their callbacks then).
        sc_core::sc_start(sc_core::SC_ZERO_TIME);
    }
    void program(unsigned vector, std::uint64_t addr, std::uint32_t data, bool masked) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        ASSERT_EQ(mem_write(cpu.out, entry(vector, msix_off::addr_lo), &addr, 8, d), tlm::TLM_OK_RESPONSE);
        ASSERT_EQ(mem_write(cpu.out, entry(vector, msix_off::data), &data, 4, d), tlm::TLM_OK_RESPONSE);
        const std::uint32_t ctrl = masked ? msix_ctrl::mask : 0;
        ASSERT_EQ(mem_write(cpu.out, entry(vector, msix_off::control), &ctrl, 4, d), tlm::TLM_OK_RESPONSE);
    }
};

using pcie_msix = msix_bench<pcie_endpoint, pcie_params>;

TEST(MsixTb, UnprogrammedTableDeliversTheVectorNumber) {
    pcie_msix b;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    send_msix(b.nic_irq.out, 7, d);
    ASSERT_EQ(b.host_irq.items.size(), 1u);
    EXPECT_EQ(b.host_irq.items[0].address, 7u);
    EXPECT_GT(b.host_irq.items[0].at, sc_core::SC_ZERO_TIME);  // after the MWr crossed the link
    EXPECT_EQ(b.bus.upstream().msi, 1u);
}

TEST(MsixTb, ProgrammedEntrySendsItsDataAndTheTableNeverReachesTheRegisterFile) {
    pcie_msix b;
    b.program(2, 0xfee00000u, 0x33, false);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    send_msix(b.nic_irq.out, 2, d);
    ASSERT_EQ(b.host_irq.items.size(), 1u);
    EXPECT_EQ(b.host_irq.items[0].address, 0x33u);
    EXPECT_TRUE(b.bar.items.empty());
    // The table reads back through BAR0 (a non-posted read: MRd down, CplD up).
    std::uint32_t data = 0;
    ASSERT_EQ(mem_read(b.cpu.out, entry(2, msix_off::data), &data, 4, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(data, 0x33u);
    // Other offsets still go to the register file.
    std::uint32_t v = 1;
    ASSERT_EQ(mem_write(b.cpu.out, 0x2c, &v, 4, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.bar.items.size(), 1u);
}

TEST(MsixTb, MaskedEntryPendsAndUnmaskingDelivers) {
    pcie_msix b;
    b.program(4, 0xfee00000u, 0x44, true);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    send_msix(b.nic_irq.out, 4, d);
    EXPECT_TRUE(b.host_irq.items.empty());
    std::uint64_t pba = 0;
    ASSERT_EQ(mem_read(b.cpu.out, kMsixPbaOffset, &pba, 8, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(pba, 1u << 4);
    const std::uint32_t unmask = 0;
    ASSERT_EQ(mem_write(b.cpu.out, entry(4, msix_off::control), &unmask, 4, d), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(b.host_irq.items.size(), 1u);
    EXPECT_EQ(b.host_irq.items[0].address, 0x44u);
    boost::json::object s;
    b.bus.report_stats(s);
    EXPECT_EQ(s["msix"].as_object()["masked_pending"].to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(s["msix"].as_object()["released"].to_number<std::uint64_t>(), 1u);
}

TEST(MsixTb, BadTableAccessIsRefused) {
    pcie_msix b;
    std::uint16_t half = 1;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(mem_write(b.cpu.out, entry(0, msix_off::data), &half, 2, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_TRUE(b.bar.items.empty());
}

TEST(MsixTb, PcixBridgeDecodesTheSameTable) {
    msix_bench<pcix_bridge, pcix_params> b;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    send_msix(b.nic_irq.out, 9, d);
    ASSERT_EQ(b.host_irq.items.size(), 1u);
    EXPECT_EQ(b.host_irq.items[0].address, 9u);
    b.program(9, 0xfee00000u, 0x99, false);
    send_msix(b.nic_irq.out, 9, d);
    ASSERT_EQ(b.host_irq.items.size(), 2u);
    EXPECT_EQ(b.host_irq.items[1].address, 0x99u);
    EXPECT_EQ(b.bus.counts().msi, 2u);
}

}  // namespace
}  // namespace rnic::test
