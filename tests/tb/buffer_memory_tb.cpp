// buffer_memory through its socket (mem_in): the bytes written come back, each access costs the
// latency plus ceil(bytes / width) port cycles, transfers contend for the one port (backfill or
// in order), accesses outside the memory are refused, and the occupancy bookkeeping (regions,
// reassembly pool, shared send regions, peak and time-weighted mean) refuses what does not fit.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>
#include <numeric>
#include <optional>
#include <random>

#include "buffer/buffer_memory.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

using bytes = std::vector<std::uint8_t>;
sc_core::sc_time ns(double v) {
    return sc_core::sc_time(v, sc_core::SC_NS);
}

// A memory with round numbers: 16-byte port at 1 GHz (1 ns per beat), 5 ns latency, 4 KiB.
buffer_memory_params small_params(booking order = booking::backfill) {
    buffer_memory_params p;
    p.capacity = 4096;
    p.width_bytes = 16;
    p.clock_hz = 1e9;
    p.latency = ns(5);
    p.port_order = order;
    return p;
}

struct buffer_bench : sc_core::sc_module {
    buffer_memory mem;
    tb_initiator cpu;
    buffer_bench(const sc_core::sc_module_name& n, const buffer_memory_params& p)
        : sc_module(n), mem("mem", p), cpu("cpu") {
        cpu.out.bind(mem.mem_in);
    }
    tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::size_t len,
                                    sc_core::sc_time& delay) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(addr);
        gp.set_data_ptr(data);
        gp.set_data_length(static_cast<unsigned>(len));
        gp.set_streaming_width(static_cast<unsigned>(len));
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        cpu.out->b_transport(gp, delay);
        return gp.get_response_status();
    }
    boost::json::object stats() const {
        boost::json::object o;
        mem.report_stats(o);
        return o;
    }
    std::uint64_t stat(const char* key) const { return stats()[key].to_number<std::uint64_t>(); }
};

TEST(BufferMemoryTb, WrittenBytesReadBackAndEachAccessCostsLatencyPlusBeats) {
    buffer_bench b("b", small_params());
    bytes in(100);
    std::iota(in.begin(), in.end(), std::uint8_t{1});
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 1000, in.data(), in.size(), d), tlm::TLM_OK_RESPONSE);
    // 5 ns latency, then ceil(100 / 16) = 7 beats of 1 ns.
    EXPECT_EQ(d, ns(12));
    bytes out(100, 0);
    sc_core::sc_time r = ns(100);  // later in the caller's local time: the port is free again
    ASSERT_EQ(b.access(tlm::TLM_READ_COMMAND, 1000, out.data(), out.size(), r), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r, ns(112));
    EXPECT_EQ(out, in);
    bytes peeked(4);
    ASSERT_TRUE(b.mem.peek(1000, peeked.data(), 4));
    EXPECT_EQ(peeked, bytes({1, 2, 3, 4}));
    EXPECT_EQ(b.stat("writes"), 1u);
    EXPECT_EQ(b.stat("reads"), 1u);
    EXPECT_EQ(b.stat("write_bytes"), 100u);
    EXPECT_EQ(b.stat("read_bytes"), 100u);
    EXPECT_EQ(b.stat("moved_bytes"), 200u);
    EXPECT_EQ(b.stat("port_busy_ps"), 14000u);  // 7 + 7 beats
}

TEST(BufferMemoryTb, PortWidthSetsTheBeats) {
    buffer_memory_params p = small_params();
    p.width_bytes = 64;
    buffer_bench b("b", p);
    bytes buf(65, 0xab);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 64, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d, ns(6));  // one beat
    d = ns(1000);
    ASSERT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 65, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d, ns(1007));  // 65 bytes: two beats
}

TEST(BufferMemoryTb, TransfersContendForTheOnePort) {
    buffer_bench b("b", small_params());
    bytes buf(160, 0);
    sc_core::sc_time d1 = sc_core::SC_ZERO_TIME, d2 = sc_core::SC_ZERO_TIME;
    b.access(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 160, d1);  // [5, 15)
    b.access(tlm::TLM_READ_COMMAND, 0, buf.data(), 160, d2);   // ready at 5, waits until 15
    EXPECT_EQ(d1, ns(15));
    EXPECT_EQ(d2, ns(25));
}

TEST(BufferMemoryTb, BackfillServesAnEarlierAccessBeforeAFutureBooking) {
    buffer_bench b("b", small_params(booking::backfill));
    bytes buf(160, 0);
    sc_core::sc_time late = ns(500), early = sc_core::SC_ZERO_TIME;
    b.access(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 160, late);  // [505, 515)
    b.access(tlm::TLM_READ_COMMAND, 0, buf.data(), 160, early);  // [5, 15): the gap before it
    EXPECT_EQ(late, ns(515));
    EXPECT_EQ(early, ns(15));
}

TEST(BufferMemoryTb, InOrderPortMakesAnEarlierAccessWaitBehindAFutureBooking) {
    buffer_bench b("b", small_params(booking::in_order));
    bytes buf(160, 0);
    sc_core::sc_time late = ns(500), early = sc_core::SC_ZERO_TIME;
    b.access(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 160, late);
    b.access(tlm::TLM_READ_COMMAND, 0, buf.data(), 160, early);
    EXPECT_EQ(late, ns(515));
    EXPECT_EQ(early, ns(525));
}

TEST(BufferMemoryTb, AccessOutsideTheMemoryIsRefusedAndTouchesNothing) {
    buffer_bench b("b", small_params());
    bytes buf(32, 0x55);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 4080, buf.data(), 32, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(d, sc_core::SC_ZERO_TIME);  // no port time for a refused access
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, 5000, buf.data(), 1, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    bytes tail(16, 0xff);
    ASSERT_TRUE(b.mem.peek(4080, tail.data(), 16));
    EXPECT_EQ(tail, bytes(16, 0));
    EXPECT_EQ(b.stat("errors"), 2u);
    EXPECT_EQ(b.stat("writes"), 0u);
    // The last 16 bytes are inside and accepted.
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 4080, buf.data(), 16, d), tlm::TLM_OK_RESPONSE);
}

TEST(BufferMemoryTb, RegionsAreCarvedFromTheCapacityAndRefusedWhenFull) {
    buffer_bench b("b", small_params());
    const auto r1 = b.mem.allocate_region(3000);
    ASSERT_TRUE(r1.has_value());
    EXPECT_EQ(*r1, 0u);
    EXPECT_FALSE(b.mem.allocate_region(2000).has_value());  // 1096 bytes left
    const auto r2 = b.mem.allocate_region(1000);
    ASSERT_TRUE(r2.has_value());
    EXPECT_EQ(*r2, 3000u);
    EXPECT_EQ(b.stat("region_allocation_failures"), 1u);
    EXPECT_EQ(b.stat("tx_regions_bytes"), 4000u);
    // The reassembly pool is what no region claims: 96 bytes.
    EXPECT_EQ(b.mem.rx_free(), 96u);
    EXPECT_FALSE(b.mem.reserve_rx(97));
    EXPECT_TRUE(b.mem.reserve_rx(96));
    EXPECT_EQ(b.mem.rx_free(), 0u);
    // A freed region's space is the pool's again, and first fit reuses the gap.
    b.mem.free_region(*r1);
    EXPECT_EQ(b.mem.rx_free(), 3000u);
    const auto r3 = b.mem.allocate_region(500);
    ASSERT_TRUE(r3.has_value());
    EXPECT_EQ(*r3, 0u);
}

TEST(BufferMemoryTb, FirstFitOverThousandsOfRegionsPlacesEachAsAWalkFromTheFloorWould) {
    buffer_memory_params p = small_params();
    p.capacity = 64u << 20;
    buffer_bench b("b", p);
    // The reference: first fit by a walk over every region from address 0.
    std::map<std::uint64_t, std::uint64_t> ref;
    const auto ref_allocate = [&](std::uint64_t want_bytes) -> std::optional<std::uint64_t> {
        std::uint64_t at = 0;
        for (const auto& [base, size] : ref) {
            if (base - at >= want_bytes) break;
            at = base + size;
        }
        if (at + want_bytes > p.capacity) return std::nullopt;
        ref[at] = want_bytes;
        return at;
    };
    std::mt19937 rng(5);
    std::vector<std::uint64_t> live;
    for (int n = 0; n < 6000; ++n) {
        if (!live.empty() && rng() % 3 == 0) {
            // Free one: the gap it leaves is found again by a later region that fits it.
            const std::size_t pick = rng() % live.size();
            b.mem.free_region(live[pick]);
            ref.erase(live[pick]);
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(pick));
            continue;
        }
        const std::uint64_t want_bytes = n % 5 == 0 ? 4096 : 1 + rng() % 20000;
        const auto got = b.mem.allocate_region(want_bytes);
        const auto want = ref_allocate(want_bytes);
        ASSERT_EQ(got, want) << "allocation " << n << " of " << want_bytes << " bytes";
        if (got) live.push_back(*got);
    }
    EXPECT_EQ(b.mem.region_count(), ref.size());
}

TEST(BufferMemoryTb, ReassemblyPoolQuotaCapsOutOfOrderBytes) {
    buffer_memory_params p = small_params();
    p.reassembly_pool = 1000;
    buffer_bench b("b", p);
    EXPECT_EQ(b.mem.rx_free(), 1000u);
    EXPECT_TRUE(b.mem.reserve_rx(600));
    EXPECT_FALSE(b.mem.reserve_rx(401));
    EXPECT_TRUE(b.mem.reserve_rx(400));
    EXPECT_EQ(b.mem.occupancy(), 1000u);
    b.mem.release_rx(300);
    EXPECT_EQ(b.mem.rx_free(), 300u);
    EXPECT_EQ(b.mem.occupancy(), 700u);
    EXPECT_EQ(b.stat("rx_reassembly_peak_bytes"), 1000u);
}

TEST(BufferMemoryTb, SharedSendRegionsShareTheCapacityWithReassembly) {
    buffer_memory_params p = small_params();
    p.shared_send = true;
    p.send_address_space = 1 << 20;
    buffer_bench b("b", p);
    // Regions are address space above the capacity and carve nothing out.
    const auto r = b.mem.allocate_region(64 * 1024);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, 4096u);
    EXPECT_EQ(b.mem.send_free(), 4096u);
    b.mem.hold_send(3000);
    EXPECT_EQ(b.mem.send_free(), 1096u);
    EXPECT_EQ(b.mem.rx_free(), 1096u);
    EXPECT_FALSE(b.mem.reserve_rx(1097));
    EXPECT_TRUE(b.mem.reserve_rx(1096));
    EXPECT_EQ(b.mem.send_free(), 0u);
    b.mem.release_send(3000);
    EXPECT_EQ(b.mem.send_free(), 3000u);
    // The region's address space is real memory: a write above the capacity lands.
    bytes buf(8, 0x11);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, *r + 100, buf.data(), 8, d), tlm::TLM_OK_RESPONSE);
    const auto s = b.stats();
    EXPECT_EQ(s.at("send_regions").as_string(), "shared");
    EXPECT_EQ(s.at("send_held_peak_bytes").to_number<std::uint64_t>(), 3000u);
}

TEST(BufferMemoryTb, OccupancyPeakAndTimeWeightedMean) {
    buffer_bench b("b", small_params());
    b.mem.hold(2000);  // at 0
    sc_core::sc_start(ns(10000));
    b.mem.release(1500);  // 500 left from 10 us
    sc_core::sc_start(ns(10000));
    const auto s = b.stats();
    EXPECT_EQ(s.at("occupancy_peak_bytes").to_number<std::uint64_t>(), 2000u);
    // (2000 x 10 us + 500 x 10 us) / 20 us
    EXPECT_NEAR(s.at("occupancy_mean_bytes").to_number<double>(), 1250.0, 1e-6);
    // One sample per 10 us interval: the peak in each.
    const auto& series = s.at("occupancy_series").as_array();
    ASSERT_EQ(series.size(), 2u);
    EXPECT_EQ(series[0].as_array()[1].to_number<std::uint64_t>(), 2000u);
    EXPECT_EQ(series[1].as_array()[0].to_number<std::uint64_t>(), 10000u);
    EXPECT_EQ(series[1].as_array()[1].to_number<std::uint64_t>(), 500u);
}

TEST(BufferMemoryTb, ChargeBooksThePortWithoutAnAddress) {
    buffer_bench b("b", small_params());
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    b.mem.charge(48, d);
    EXPECT_EQ(d, ns(8));  // 5 ns + 3 beats
    bytes buf(16, 0);
    sc_core::sc_time w = sc_core::SC_ZERO_TIME;
    b.access(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 16, w);  // ready at 5, behind [5, 8)
    EXPECT_EQ(w, ns(9));
    EXPECT_EQ(b.stat("charged_bytes"), 48u);
    EXPECT_EQ(b.stat("moved_bytes"), 64u);
}

}  // namespace
}  // namespace rnic::test
