// The DMA engine in front of the PCIe endpoint and host memory: plain transfers, scatter/gather
// lists given or fetched from a ring in host memory, marker handling (skip versus fragment) and its
// counts, bad requests, refused DMA, outstanding-read limit, channels, the latency histogram; and
// the marker break helper.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/mem_access.h"
#include "core/timeline.h"
#include "dma/dma_engine.h"
#include "host/host_memory.h"
#include "pcie/pcie_endpoint.h"
#include "rnic/regmap.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

// The RNIC's SG element format (regmap.h), as rnic_device gives it to its DMA engine.
dma_params with_rnic_sge(dma_params p) {
    p.sge = {static_cast<std::uint32_t>(regmap::kSgeSize), regmap::sge_off::addr, regmap::sge_off::length,
             regmap::sge_off::flags, regmap::sge_flags::last};
    return p;
}

struct dma_bench {
    host_memory mem;
    pcie_endpoint pcie;
    dma_engine dma;
    tb_initiator nic;      // a DMA client
    tb_initiator cpu;      // host CPU stores into host memory
    tb_initiator mmio;     // host CPU to BAR0 (unused)
    tb_initiator nic_irq;  // MSI-X (unused)
    tb_sink bar;
    tb_sink irq;
    // The engine reads SG rings in the RNIC's format unless `sge_format_given` (dp.sge as it is).
    explicit dma_bench(const dma_params& dp = dma_params{}, const pcie_params& pp = pcie_params{},
                       bool sge_format_given = false)
        : mem("mem", host_memory_params{}),
          pcie("pcie", pp),
          dma("dma", sge_format_given ? dp : with_rnic_sge(dp)),
          nic("nic"),
          cpu("cpu"),
          mmio("mmio"),
          nic_irq("nic_irq"),
          bar("bar"),
          irq("irq") {
        nic.out.bind(dma.dma_in);
        dma.pcie_out.bind(pcie.dma_in);
        pcie.mem_out.bind(mem.dma_in);
        cpu.out.bind(mem.cpu_in);
        mmio.out.bind(pcie.mmio_in);
        nic_irq.out.bind(pcie.msix_in);
        pcie.mmio_out.bind(bar.in);
        pcie.irq_out.bind(irq.in);
        mem.map_dma(0x100000, 0x100000);
    }
    void poke(std::uint64_t addr, const void* src, std::size_t len) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        ASSERT_EQ(mem_write(cpu.out, addr, src, len, d), tlm::TLM_OK_RESPONSE);
    }
    std::vector<std::uint8_t> peek(std::uint64_t addr, std::size_t len) {
        std::vector<std::uint8_t> v(len);
        EXPECT_TRUE(mem.peek(addr, v.data(), len));
        return v;
    }
    // A transfer with an extension; returns the status and leaves the finish in `d`.
    tlm::tlm_response_status transfer(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::uint32_t len,
                                      dma_ext* ext, sc_core::sc_time& d) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(addr);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_byte_enable_ptr(nullptr);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        if (ext != nullptr) gp.set_extension(ext);
        nic.out->b_transport(gp, d);
        if (ext != nullptr) gp.clear_extension(ext);
        return gp.get_response_status();
    }
};

// Ends elaboration once every bench of a test is built (multi-sockets register their callbacks
// then); simulated time stays at zero and the models are driven by direct calls.
void elaborate() {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
}

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 13);
    return v;
}

void put_sge(std::uint8_t* e, std::uint64_t addr, std::uint32_t len, std::uint32_t flags) {
    for (int i = 0; i < 8; ++i) e[regmap::sge_off::addr + i] = static_cast<std::uint8_t>(addr >> (8 * i));
    for (int i = 0; i < 4; ++i) e[regmap::sge_off::length + i] = static_cast<std::uint8_t>(len >> (8 * i));
    for (int i = 0; i < 4; ++i) e[regmap::sge_off::flags + i] = static_cast<std::uint8_t>(flags >> (8 * i));
}

TEST(DmaTb, PlainTransfersMoveTheBytesAndAreCounted) {
    dma_bench b;
    elaborate();
    std::vector<std::uint8_t> data = pattern(3000, 1);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_write(b.nic.out, 0x100100, data.data(), data.size(), d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.peek(0x100100, data.size()), data);
    std::vector<std::uint8_t> back(3000);
    sc_core::sc_time r = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_read(b.nic.out, 0x100100, back.data(), back.size(), r), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(back, data);
    const dma_engine::channel_stats t = b.dma.totals();
    EXPECT_EQ(t.transfers, 2u);
    EXPECT_EQ(t.bus_transfers, 2u);
    EXPECT_EQ(t.read_bytes, 3000u);
    EXPECT_EQ(t.write_bytes, 3000u);
    // The bus reported its TLPs: 12 MWr (3000 B at MPS 256, one 4 KB split) + MRd and CplD of the read.
    EXPECT_EQ(t.bus_packets, b.pcie.upstream().tlps() + b.pcie.downstream().tlps());
    EXPECT_EQ(b.dma.read_latency().count(), 1u);
}

TEST(DmaTb, AScatterGatherListGathersAndScatters) {
    dma_bench b;
    elaborate();
    const auto a = pattern(100, 10), c = pattern(300, 20), e = pattern(50, 30);
    b.poke(0x100000, a.data(), a.size());
    b.poke(0x120000, c.data(), c.size());
    b.poke(0x130010, e.data(), e.size());
    dma_ext ext;
    ext.sg = {{0x100000, 100}, {0x120000, 300}, {0x130010, 50}};
    std::vector<std::uint8_t> buf(450);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(b.transfer(tlm::TLM_READ_COMMAND, 0, buf.data(), 450, &ext, d), tlm::TLM_OK_RESPONSE);
    std::vector<std::uint8_t> want(a);
    want.insert(want.end(), c.begin(), c.end());
    want.insert(want.end(), e.begin(), e.end());
    EXPECT_EQ(buf, want);
    EXPECT_EQ(ext.bus_transfers, 3u);
    // Scatter the same bytes elsewhere.
    dma_ext out;
    out.sg = {{0x140000, 200}, {0x150000, 250}};
    ASSERT_EQ(b.transfer(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 450, &out, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.peek(0x140000, 200), std::vector<std::uint8_t>(want.begin(), want.begin() + 200));
    EXPECT_EQ(b.peek(0x150000, 250), std::vector<std::uint8_t>(want.begin() + 200, want.end()));
    EXPECT_EQ(b.dma.totals().sg_elements, 5u);
}

TEST(DmaTb, ScatterGatherElementsAreFetchedFromARingInHostMemory) {
    dma_bench b;
    elaborate();
    // A ring of 4 elements at 0x1f0000; the list starts at index 3 and wraps to 0 and 1 (last).
    std::uint8_t ring[4 * regmap::kSgeSize] = {};
    put_sge(ring + 3 * regmap::kSgeSize, 0x110000, 64, 0);
    put_sge(ring + 0 * regmap::kSgeSize, 0x111000, 0, 0);  // empty: skipped
    put_sge(ring + 1 * regmap::kSgeSize, 0x112000, 96, regmap::sge_flags::last);
    put_sge(ring + 2 * regmap::kSgeSize, 0x113000, 999, 0);  // after `last`: not used
    b.poke(0x1f0000, ring, sizeof ring);
    const auto x = pattern(64, 40), y = pattern(96, 50);
    b.poke(0x110000, x.data(), x.size());
    b.poke(0x112000, y.data(), y.size());
    dma_ext ext;
    ext.sgl_ring = 0x1f0000;
    ext.sgl_entries = 4;
    ext.sgl_first = 3;
    ext.sgl_count = 4;
    std::vector<std::uint8_t> buf(160);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(b.transfer(tlm::TLM_READ_COMMAND, 0, buf.data(), 160, &ext, d), tlm::TLM_OK_RESPONSE);
    std::vector<std::uint8_t> want(x);
    want.insert(want.end(), y.begin(), y.end());
    EXPECT_EQ(buf, want);
    const dma_engine::channel_stats t = b.dma.totals();
    EXPECT_EQ(t.descriptor_fetches, 2u);  // the ring wrapped: two reads
    EXPECT_EQ(t.descriptor_bytes, 4u * regmap::kSgeSize);
    EXPECT_EQ(ext.bus_transfers, 2u);
    // The descriptors come first: the transfer takes at least two round trips.
    EXPECT_GT(d, sc_core::sc_time(1000, sc_core::SC_NS));
}

TEST(DmaTb, FragmentingAtMarkersCostsTransfersAndTlpsButPlacesTheSameBytes) {
    dma_params skip;
    dma_params frag;
    frag.markers = dma_marker_mode::fragment;
    pcie_params mps1k;
    mps1k.max_payload = 1024;
    dma_bench s(skip, mps1k);
    dma_bench f(frag, mps1k);
    elaborate();
    const auto data = pattern(1448, 60);
    for (dma_bench* b : {&s, &f}) {
        dma_ext ext;
        ext.marker_breaks = {508, 1016};  // a payload after the Marker at 0 (proto::mpa::marker_breaks(4, 1448))
        std::vector<std::uint8_t> buf(data);
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        ASSERT_EQ(b->transfer(tlm::TLM_WRITE_COMMAND, 0x160000, buf.data(), 1448, &ext, d), tlm::TLM_OK_RESPONSE);
        EXPECT_EQ(b->peek(0x160000, 1448), data);
        if (b == &s) {
            // The engine skips the markers: one transfer, MWr of 1024 + 424.
            EXPECT_EQ(ext.bus_transfers, 1u);
            EXPECT_EQ(ext.marker_fragments, 0u);
            EXPECT_EQ(ext.bus_packets, 2u);
        } else {
            // One transfer per marker-free run: 508 + 508 + 432, a TLP each.
            EXPECT_EQ(ext.bus_transfers, 3u);
            EXPECT_EQ(ext.marker_fragments, 2u);
            EXPECT_EQ(ext.bus_packets, 3u);
        }
    }
    EXPECT_EQ(f.dma.totals().marker_fragments, 2u);
    EXPECT_EQ(s.dma.totals().marker_fragments, 0u);
    EXPECT_EQ(f.pcie.upstream().mwr, 3u);
    EXPECT_EQ(s.pcie.upstream().mwr, 2u);
    boost::json::object st;
    f.dma.report_stats(st);
    EXPECT_EQ(st["marker_mode"].as_string(), "fragment");
    EXPECT_EQ(st["bus_transfers"].to_number<std::uint64_t>(), 3u);
    // A skipping engine ignores the break list entirely; so does a fragmenting one without breaks.
    dma_ext none;
    std::vector<std::uint8_t> buf(data);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(f.transfer(tlm::TLM_WRITE_COMMAND, 0x170000, buf.data(), 1448, &none, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(none.bus_transfers, 1u);
}

TEST(DmaTb, BadRequestsGetAnErrorAndChangeNothing) {
    dma_params frag;
    frag.markers = dma_marker_mode::fragment;
    dma_bench b;
    dma_bench f(frag);
    elaborate();
    std::vector<std::uint8_t> buf(100, 0xab);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    dma_ext short_sg;
    short_sg.sg = {{0x100000, 60}};  // covers 60 of 100 bytes
    EXPECT_EQ(b.transfer(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 100, &short_sg, d), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(b.peek(0x100000, 100), std::vector<std::uint8_t>(100, 0));
    dma_ext bad_breaks;
    bad_breaks.marker_breaks = {50, 40};
    EXPECT_EQ(f.transfer(tlm::TLM_WRITE_COMMAND, 0x100000, buf.data(), 100, &bad_breaks, d),
              tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(f.peek(0x100000, 100), std::vector<std::uint8_t>(100, 0));
    dma_ext ring;
    ring.sgl_ring = 0x1f0000;
    ring.sgl_entries = 2;
    ring.sgl_count = 3;  // more than the ring holds
    EXPECT_EQ(b.transfer(tlm::TLM_READ_COMMAND, 0, buf.data(), 100, &ring, d), tlm::TLM_GENERIC_ERROR_RESPONSE);
    boost::json::object st;
    b.dma.report_stats(st);
    EXPECT_EQ(st["bad_requests"].to_number<std::uint64_t>(), 2u);
    EXPECT_EQ(st["errors"].to_number<std::uint64_t>(), 2u);
}

// The element format is the engine's parameter: a 24-byte element with its fields elsewhere is
// followed as well, and an engine built without a format refuses a ring instead of guessing one.
TEST(DmaTb, ScatterGatherElementFormatComesFromTheParameters) {
    dma_params wide;
    wide.sge = {24, 8, 16, 0, 1u << 7};  // flags first, then the address, then the length
    dma_bench b(wide, pcie_params{}, true);
    elaborate();
    std::uint8_t ring[2 * 24] = {};
    const auto put = [&](std::uint8_t* e, std::uint64_t addr, std::uint32_t len, std::uint32_t flags) {
        for (int i = 0; i < 4; ++i) e[i] = static_cast<std::uint8_t>(flags >> (8 * i));
        for (int i = 0; i < 8; ++i) e[8 + i] = static_cast<std::uint8_t>(addr >> (8 * i));
        for (int i = 0; i < 4; ++i) e[16 + i] = static_cast<std::uint8_t>(len >> (8 * i));
    };
    put(ring, 0x110000, 32, 0);
    put(ring + 24, 0x112000, 16, 1u << 7);
    b.poke(0x1f0000, ring, sizeof ring);
    const auto x = pattern(32, 7), y = pattern(16, 9);
    b.poke(0x110000, x.data(), x.size());
    b.poke(0x112000, y.data(), y.size());
    dma_ext ext;
    ext.sgl_ring = 0x1f0000;
    ext.sgl_entries = 2;
    ext.sgl_count = 2;
    std::vector<std::uint8_t> buf(48);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(b.transfer(tlm::TLM_READ_COMMAND, 0, buf.data(), 48, &ext, d), tlm::TLM_OK_RESPONSE);
    std::vector<std::uint8_t> want(x);
    want.insert(want.end(), y.begin(), y.end());
    EXPECT_EQ(buf, want);
    EXPECT_EQ(b.dma.totals().descriptor_bytes, 48u);
}

TEST(DmaTb, NoScatterGatherElementFormatRefusesARing) {
    dma_bench b(dma_params{}, pcie_params{}, true);
    elaborate();
    dma_ext ext;
    ext.sgl_ring = 0x1f0000;
    ext.sgl_entries = 2;
    ext.sgl_count = 1;
    std::vector<std::uint8_t> buf(16);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(b.transfer(tlm::TLM_READ_COMMAND, 0, buf.data(), 16, &ext, d), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(b.dma.totals().descriptor_fetches, 0u);
    EXPECT_EQ(b.dma.totals().errors, 1u);
}

TEST(DmaTb, RefusedDmaIsReportedAndChangesNothing) {
    dma_bench b;
    elaborate();
    std::vector<std::uint8_t> junk(256, 0xee);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    // Straddling the end of the mapped window: refused as a whole.
    EXPECT_EQ(mem_write(b.nic.out, 0x1fff80, junk.data(), junk.size(), d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.peek(0x1fff80, 128), std::vector<std::uint8_t>(128, 0));
    EXPECT_EQ(mem_read(b.nic.out, 0x80000, junk.data(), 64, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.dma.totals().errors, 2u);
    EXPECT_EQ(b.pcie.dma_errors(), 2u);
}

TEST(DmaTb, OutstandingReadLimitSerialisesReads) {
    dma_params one;
    one.max_outstanding_reads = 1;
    dma_bench b(one);
    dma_bench c;  // 32
    elaborate();
    std::vector<std::uint8_t> buf(256);
    sc_core::sc_time b1 = sc_core::SC_ZERO_TIME, b2 = sc_core::SC_ZERO_TIME;
    sc_core::sc_time c1 = sc_core::SC_ZERO_TIME, c2 = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_read(b.nic.out, 0x100000, buf.data(), 256, b1), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(mem_read(b.nic.out, 0x101000, buf.data(), 256, b2), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(mem_read(c.nic.out, 0x100000, buf.data(), 256, c1), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(mem_read(c.nic.out, 0x101000, buf.data(), 256, c2), tlm::TLM_OK_RESPONSE);
    EXPECT_GT(b2, b1 + sc_core::sc_time(400, sc_core::SC_NS));
    EXPECT_LT(c2, c1 + sc_core::sc_time(150, sc_core::SC_NS));
}

TEST(DmaTb, ConcurrentTransfersSpreadOverChannels) {
    dma_bench b;  // 4 channels
    elaborate();
    std::vector<std::uint8_t> buf(2048);
    for (int i = 0; i < 4; ++i) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;  // all at once
        ASSERT_EQ(mem_read(b.nic.out, 0x100000 + i * 0x1000, buf.data(), buf.size(), d), tlm::TLM_OK_RESPONSE);
    }
    boost::json::object st;
    b.dma.report_stats(st);
    for (const auto& ch : st["channels"].as_array()) {
        EXPECT_EQ(ch.as_object().at("transfers").to_number<std::uint64_t>(), 1u);
    }
    EXPECT_EQ(st["read_latency"].as_object()["count"].to_number<std::uint64_t>(), 4u);
}

TEST(DmaTb, ReadLatencyFollowsTheDatapathRate) {
    // A 2 KiB read streams through one channel at bytes_per_cycle x clock after its first data.
    dma_params slow;
    slow.bytes_per_cycle = 1;  // 500 MB/s
    dma_bench s(slow);
    dma_bench f;
    elaborate();
    std::vector<std::uint8_t> buf(2048);
    sc_core::sc_time ds = sc_core::SC_ZERO_TIME, df = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_read(s.nic.out, 0x100000, buf.data(), 2048, ds), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(mem_read(f.nic.out, 0x100000, buf.data(), 2048, df), tlm::TLM_OK_RESPONSE);
    EXPECT_GT(ds, df + sc_core::sc_time(3000, sc_core::SC_NS));  // 2048 B at 0.5 GB/s = 4.1 us
}

TEST(DmaTb, TransfersAndTheirTlpsGoToTheTimeline) {
    dma_bench b;
    elaborate();
    const std::string path = ::testing::TempDir() + "dma_timeline.json";
    ASSERT_TRUE(timeline::open(path));
    std::vector<std::uint8_t> buf(1024);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(mem_read(b.nic.out, 0x100000, buf.data(), buf.size(), d), tlm::TLM_OK_RESPONSE);
    timeline::close();
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    const boost::json::value v = boost::json::parse(ss.str());
    int dma_reads = 0, mrd = 0, cpld = 0;
    for (const auto& e : v.at("traceEvents").as_array()) {
        const auto& o = e.as_object();
        if (o.at("ph").as_string() != "X") continue;
        if (o.at("name").as_string() == "DMA read") {
            ++dma_reads;
            EXPECT_EQ(o.at("args").at("bytes").to_number<std::uint64_t>(), 1024u);
            EXPECT_NEAR(o.at("dur").to_number<double>(), d.to_seconds() * 1e6, 1e-6);
        }
        if (o.at("name").as_string() == "MRd") ++mrd;
        if (o.at("name").as_string() == "CplD") ++cpld;
    }
    EXPECT_EQ(dma_reads, 1);
    EXPECT_EQ(mrd, 2);
    EXPECT_EQ(cpld, 4);
    std::remove(path.c_str());
}

}  // namespace
}  // namespace rnic::test
