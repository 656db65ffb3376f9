// The PCI-X bridge through its sockets: per-transaction clocks (arbitration, address, attribute,
// target response, data, turnaround), write bursts cut at ADBs, split reads at MMRBC, outstanding
// split limit, one shared half-duplex bus, refused DMA; and the bus calendar it runs on.
#include <gtest/gtest.h>

#include "core/mem_access.h"
#include "core/timed_resource.h"
#include "host/host_memory.h"
#include "pcix/bus_calendar.h"
#include "pcix/pcix_bridge.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

struct pcix_bench {
    host_memory mem;
    pcix_bridge bus;
    tb_initiator dev;
    tb_initiator cpu;
    tb_sink bar;
    tb_sink irq;
    explicit pcix_bench(const pcix_params& p)
        : mem("mem", host_memory_params{}), bus("pcix", p), dev("dev"), cpu("cpu"), bar("bar"), irq("irq") {
        dev.out.bind(bus.dma_in);
        bus.mem_out.bind(mem.dma_in);
        cpu.out.bind(bus.mmio_in);
        bus.mmio_out.bind(bar.in);
        bus.irq_out.bind(irq.in);
        mem.map_dma(0, 1 << 20);
    }
};

sc_core::sc_time clocks(double n) {
    return sc_core::sc_time(n / pcix_params{}.clock_hz, sc_core::SC_SEC);
}
sc_core::sc_time ns(double v) {
    return sc_core::sc_time(v, sc_core::SC_NS);
}

TEST(PcixTb, PeakIs1066MegabytesPerSecond) {
    EXPECT_NEAR(pcix_params{}.peak_bytes_per_second() / 1e6, 1066.6, 0.1);
}

TEST(PcixTb, AWriteBurstCostsArbitrationAddressAttributeResponseDataAndTurnaround) {
    pcix_bench b(pcix_params{});
    std::vector<std::uint8_t> data(512, 1);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_write(b.dev.out, 0x10000, data.data(), data.size(), d), tlm::TLM_OK_RESPONSE);
    // 1 + 1 + 1 + 2 + 64 + 1 = 70 clocks.
    EXPECT_EQ(b.bus.counts().mem_write, 1u);
    EXPECT_EQ(b.bus.counts().clocks, 70u);
    EXPECT_EQ(d, clocks(70));
    std::vector<std::uint8_t> after(512);
    ASSERT_TRUE(b.mem.peek(0x10000, after.data(), after.size()));
    EXPECT_EQ(after, data);
}

TEST(PcixTb, WriteBurstsEndAtAllowableDisconnectBoundaries) {
    pcix_bench b(pcix_params{});  // max_write_burst 512
    std::vector<std::uint8_t> data(4096, 2);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_write(b.dev.out, 0x10000, data.data(), data.size(), d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.bus.counts().mem_write, 8u);
    // Unaligned start: the first burst ends at the last 128-byte boundary within 512 bytes.
    pcix_bench c(pcix_params{});
    ASSERT_EQ(mem_write(c.dev.out, 0x10040, data.data(), 1024, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(c.bus.counts().mem_write, 3u);  // 448 (to 0x10200) + 512 + 64
    pcix_params big;
    big.max_write_burst = 4096;
    pcix_bench e(big);
    ASSERT_EQ(mem_write(e.dev.out, 0x10000, data.data(), 4096, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(e.bus.counts().mem_write, 1u);
}

TEST(PcixTb, ReadsAreSplitTransactionsAtMmrbc) {
    pcix_params p;
    p.max_read_byte_count = 512;
    pcix_bench b(p);
    std::vector<std::uint8_t> data(4096);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_write(b.dev.out, 0x20000, data.data(), data.size(), d), tlm::TLM_OK_RESPONSE);
    std::vector<std::uint8_t> back(4096);
    sc_core::sc_time r = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_read(b.dev.out, 0x20000, back.data(), back.size(), r), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(back, data);
    EXPECT_EQ(b.bus.counts().read_request, 8u);
    EXPECT_EQ(b.bus.counts().split_completion, 8u);
    // A bridge that returns at most 128 bytes per split completion.
    pcix_params q = p;
    q.split_completion_bytes = 128;
    pcix_bench c(q);
    ASSERT_EQ(mem_read(c.dev.out, 0x20000, back.data(), back.size(), r), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(c.bus.counts().split_completion, 32u);
}

TEST(PcixTb, ASmallReadRoundTripIsRequestLatencyAndCompletion) {
    pcix_bench b(pcix_params{});
    std::uint8_t buf[64];
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_read(b.dev.out, 0x1000, buf, sizeof buf, d), tlm::TLM_OK_RESPONSE);
    // Request (1+1+1+2+1 split response+1 = 7 clocks), bridge + memory latency, completion (6 + 8 data).
    const host_memory_params m;
    const sc_core::sc_time expect =
        clocks(7) + pcix_params{}.completion_latency + m.latency + transfer_time(64, m.bandwidth_bps) + clocks(14);
    EXPECT_EQ(d, expect);
}

TEST(PcixTb, OutstandingSplitsLimitReads) {
    pcix_params one;
    one.max_outstanding_splits = 1;
    pcix_bench b(one);
    pcix_bench c(pcix_params{});
    std::vector<std::uint8_t> buf(1024);
    sc_core::sc_time d1 = sc_core::SC_ZERO_TIME, d4 = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_read(b.dev.out, 0x1000, buf.data(), 1024, d1), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(mem_read(c.dev.out, 0x1000, buf.data(), 1024, d4), tlm::TLM_OK_RESPONSE);
    // One split at a time: the second request waits for the first completion; two round trips.
    EXPECT_GT(d1, d4 + ns(500));
    // Four: the second request goes right after the first; the completions follow back to back.
    const sc_core::sc_time cpl = clocks(6 + 64);
    EXPECT_LT(d4, clocks(14) + pcix_params{}.completion_latency + host_memory_params{}.latency + 2 * cpl + ns(50));
}

TEST(PcixTb, TheBusIsSharedAndHalfDuplex) {
    // A read and a write issued together: on PCI-X their transactions take turns on one bus; on
    // PCIe the write's MWr TLPs and the read's completions use different directions.
    pcix_bench x(pcix_params{});
    std::vector<std::uint8_t> buf(4096, 3);
    sc_core::sc_time w = sc_core::SC_ZERO_TIME, r = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_write(x.dev.out, 0x10000, buf.data(), buf.size(), w), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(mem_read(x.dev.out, 0x20000, buf.data(), buf.size(), r), tlm::TLM_OK_RESPONSE);
    // Every clock of both is on the one bus.
    EXPECT_NEAR(x.bus.bus().busy_total().to_seconds(), clocks(static_cast<double>(x.bus.counts().clocks)).to_seconds(),
                1e-10);
    EXPECT_GE(std::max(w, r), clocks(static_cast<double>(x.bus.counts().clocks)));
}

TEST(PcixTb, RefusedDmaIsASplitCompletionErrorOrADroppedWriteAndChangesNothing) {
    pcix_bench b(pcix_params{});
    std::vector<std::uint8_t> junk(256, 0xee);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(mem_write(b.dev.out, 0x200000, junk.data(), junk.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    std::vector<std::uint8_t> after(256, 1);
    ASSERT_TRUE(b.mem.peek(0x200000, after.data(), after.size()));
    EXPECT_EQ(after, std::vector<std::uint8_t>(256, 0));
    EXPECT_EQ(mem_read(b.dev.out, 0x300000, junk.data(), junk.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.bus.counts().split_error, 1u);
    EXPECT_EQ(b.bus.dma_errors(), 2u);
    // Above 4 GiB the request needs a dual-address cycle (and host memory refuses it too).
    EXPECT_EQ(mem_read(b.dev.out, 0x100000000ull, junk.data(), 64, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.bus.counts().dual_address, 1u);
}

TEST(PcixTb, MmioWritesReachTheBar) {
    pcix_bench b(pcix_params{});
    std::uint32_t v = 5;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_write(b.cpu.out, 0x2c, &v, 4, d), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(b.bar.items.size(), 1u);
    EXPECT_EQ(b.bar.items[0].at, clocks(7));  // 1+1+1+2+1 data+1
    EXPECT_EQ(b.bus.counts().mmio_write, 1u);
    boost::json::object s;
    b.bus.report_stats(s);
    EXPECT_EQ(s["kind"].as_string(), "pcix");
    EXPECT_EQ(s["transactions"].to_number<std::uint64_t>(), 1u);
}

TEST(BusCalendar, FillsGapsAndMergesIntervals) {
    bus_calendar c;
    // [100, 110) booked first; a 5 ns transaction ready at 0 fits before it, a 200 ns one does not.
    EXPECT_EQ(c.reserve(ns(100), ns(10)), ns(110));
    EXPECT_EQ(c.reserve(ns(0), ns(5)), ns(5));
    EXPECT_EQ(c.reserve(ns(0), ns(200)), ns(310));
    EXPECT_EQ(c.reserve(ns(5), ns(95)), ns(100));  // exactly fills [5, 100)
    EXPECT_EQ(c.intervals(), 1u);                  // [0, 310) merged
    EXPECT_EQ(c.busy_total(), ns(310));
    EXPECT_EQ(c.next_idle(ns(50)), ns(310));
    EXPECT_EQ(c.reserve(ns(400), ns(10)), ns(410));
    EXPECT_EQ(c.intervals(), 2u);
}

}  // namespace
}  // namespace rnic::test
