// The context memory module (models/rdma/context_memory.h) alone: driven through an sc_port bound to
// its ctx_in export, as the RDMA engine drives it, with its dma_out socket bound to a host-memory
// model that logs every transaction. Small caches and fixed access sequences, so that hits, misses,
// fetches, write-backs, the addresses and the bytes moved are known exactly; the timing of a miss
// and of the pipeline it holds; a host that refuses the context area.
#include <gtest/gtest.h>

#include <cstring>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "rdma/context_memory.h"

namespace rnic::test {
namespace {

using side = context_if::side;
using sc_core::SC_NS;
using sc_core::sc_time;

constexpr std::uint64_t kArea = 0x10000;  // where the "driver" put the context tables
constexpr std::uint32_t kMaxQp = 4, kMaxMr = 4, kQpBytes = 256, kStagBytes = 64;

// Host memory as the context module sees it: a window of bytes behind a target socket, a fixed
// latency per transaction, an optional range it refuses (TLM_ADDRESS_ERROR_RESPONSE), and a log of
// every transaction that reaches it, refused ones included.
struct logging_memory : sc_core::sc_module {
    struct txn {
        bool write;
        std::uint64_t address;
        std::vector<std::uint8_t> data;  // what was written, or what the read returned
        bool refused;
    };
    tlm_utils::simple_target_socket<logging_memory> dma_in;
    std::vector<std::uint8_t> bytes;
    sc_time latency = sc_time(100, SC_NS);
    std::uint64_t refuse_from = 0, refuse_to = 0;  // [from, to): refused
    std::vector<txn> log;

    explicit logging_memory(const sc_core::sc_module_name& n) : sc_module(n), dma_in("dma_in"), bytes(0x1000) {
        dma_in.register_b_transport(this, &logging_memory::b_transport);
        // Every byte of the area differs from its neighbours' slots: a line image names its slot.
        for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + i / 256);
    }
    std::size_t reads() const { return count(false); }
    std::size_t writes() const { return count(true); }
    std::size_t count(bool write) const {
        std::size_t n = 0;
        for (const txn& t : log) n += t.write == write && !t.refused;
        return n;
    }
    std::vector<std::uint8_t> at(std::uint64_t address, std::size_t len) const {
        const auto off = static_cast<std::ptrdiff_t>(address - kArea);
        return {bytes.begin() + off, bytes.begin() + off + static_cast<std::ptrdiff_t>(len)};
    }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
        const std::uint64_t a = gp.get_address();
        const std::uint32_t len = gp.get_data_length();
        const bool refused = a < kArea || a + len > kArea + bytes.size() || (a < refuse_to && a + len > refuse_from);
        txn t{gp.is_write(), a, {}, refused};
        if (refused) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        } else {
            std::uint8_t* mem = bytes.data() + (a - kArea);
            if (gp.is_write())
                std::memcpy(mem, gp.get_data_ptr(), len);
            else
                std::memcpy(gp.get_data_ptr(), mem, len);
            t.data.assign(mem, mem + len);
            delay += latency;  // a target adds to the delay and never waits
            gp.set_response_status(tlm::TLM_OK_RESPONSE);
        }
        log.push_back(std::move(t));
    }
};

// Stands where the RDMA engine stands: a port to the context module's export.
struct engine_side : sc_core::sc_module {
    sc_core::sc_port<context_if> ctx_out;
    explicit engine_side(const sc_core::sc_module_name& n) : sc_module(n), ctx_out("ctx_out") {}
};

context_memory_params small_cache(std::uint32_t entries, std::uint32_t stag_entries) {
    context_memory_params p;
    p.max_qp = kMaxQp;
    p.max_cq = 1;
    p.max_mr = kMaxMr;
    p.cache.enabled = true;
    p.cache.entries = entries;
    p.cache.associativity = entries;  // fully associative
    p.cache.replacement = cache_policy::replacement::lru;
    p.cache.stag_entries = stag_entries;
    p.cache.qp_context_bytes = kQpBytes;
    p.cache.stag_entry_bytes = kStagBytes;
    return p;
}

struct bench {
    context_memory ctx;
    logging_memory mem;
    engine_side engine;
    explicit bench(const context_memory_params& p) : ctx("ctx", p), mem("mem"), engine("engine") {
        engine.ctx_out.bind(ctx.ctx_in);
        ctx.dma_out.bind(mem.dma_in);
        sc_core::sc_start(sc_core::SC_ZERO_TIME);  // ends elaboration: the port is bound
    }
    context_if& contexts() { return *engine.ctx_out.operator->(); }
    // `n` QPs on CQ 0.
    void create_qps(int n) {
        ASSERT_EQ(contexts().create_cq({}), 0);
        for (int i = 0; i < n; ++i) ASSERT_EQ(contexts().create_qp({}), i);
    }
    sc_time qp(std::uint32_t qpn, bool write, side s = side::tx, timed_resource* hold = nullptr) {
        sc_time d = sc_core::SC_ZERO_TIME;
        contexts().access_qp(qpn, write, s, d, hold);
        return d;
    }
    boost::json::object report(std::uint64_t work_requests = 0, std::uint64_t rx_ulpdus = 0) const {
        boost::json::object out;
        ctx.report_stats(out, work_requests, rx_ulpdus);
        return out;
    }
};

std::uint64_t qp_address(std::uint32_t qpn) {
    return kArea + std::uint64_t{qpn} * kQpBytes;
}

const sc_time k0 = sc_core::SC_ZERO_TIME, k100(100, SC_NS), k200(200, SC_NS);

TEST(ContextMemoryTb, LruOverThreeQpsCountsHitsMissesFetchesAndWriteBacksExactly) {
    bench b(small_cache(2, 2));
    EXPECT_EQ(b.ctx.area_bytes(), std::uint64_t{kMaxQp} * kQpBytes + std::uint64_t{kMaxMr} * kStagBytes);
    b.ctx.set_area(kArea);
    b.create_qps(3);
    const std::vector<std::uint8_t> image0 = b.mem.at(qp_address(0), kQpBytes);
    const std::vector<std::uint8_t> image2 = b.mem.at(qp_address(2), kQpBytes);

    // Two lines, LRU. Each access's time: a fetch is one 100 ns read, a dirty victim adds its write.
    EXPECT_EQ(b.qp(0, true), k100);             // miss: read QP 0
    EXPECT_EQ(b.qp(1, false, side::rx), k100);  // miss: read QP 1
    // Someone changes QP 0's bytes in host memory: the write-back must carry the line, not re-read.
    std::memset(b.mem.bytes.data() + (qp_address(0) - kArea), 0xee, kQpBytes);
    EXPECT_EQ(b.qp(0, true), k0);               // hit; QP 1 is now the least recently used
    EXPECT_EQ(b.qp(2, true), k100);             // miss: evicts QP 1, clean (no write); read QP 2
    EXPECT_EQ(b.qp(1, false, side::rx), k200);  // miss: evicts QP 0, dirty: write it, read QP 1
    EXPECT_EQ(b.qp(0, false), k200);            // miss: evicts QP 2, dirty: write it, read QP 0

    // Exactly these transactions, in this order.
    struct want {
        bool write;
        std::uint64_t address;
    };
    const std::vector<want> order{{false, qp_address(0)}, {false, qp_address(1)}, {false, qp_address(2)},
                                  {true, qp_address(0)},  {false, qp_address(1)}, {true, qp_address(2)},
                                  {false, qp_address(0)}};
    ASSERT_EQ(b.mem.log.size(), order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        EXPECT_EQ(b.mem.log[i].write, order[i].write) << i;
        EXPECT_EQ(b.mem.log[i].address, order[i].address) << i;
        EXPECT_EQ(b.mem.log[i].data.size(), kQpBytes) << i;
        EXPECT_FALSE(b.mem.log[i].refused) << i;
    }
    EXPECT_EQ(b.mem.reads(), 5u);
    EXPECT_EQ(b.mem.writes(), 2u);
    // The bytes written back are the line images: what was fetched, not what host memory held since.
    EXPECT_EQ(b.mem.log[3].data, image0);
    EXPECT_EQ(b.mem.log[5].data, image2);
    EXPECT_EQ(b.mem.at(qp_address(0), kQpBytes), image0);

    const boost::json::object r = b.report(6, 4);
    const boost::json::object& c = r.at("context_cache").as_object();
    EXPECT_EQ(c.at("hits").as_uint64(), 1u);
    EXPECT_EQ(c.at("misses").as_uint64(), 5u);
    EXPECT_EQ(c.at("writebacks").as_uint64(), 2u);
    EXPECT_EQ(c.at("fetch_bytes").as_uint64(), 5u * kQpBytes);
    EXPECT_EQ(c.at("writeback_bytes").as_uint64(), 2u * kQpBytes);
    EXPECT_EQ(c.at("dma_errors").as_uint64(), 0u);
    EXPECT_EQ(c.at("tx_fetches").as_uint64(), 3u);
    EXPECT_EQ(c.at("rx_fetches").as_uint64(), 2u);
    EXPECT_DOUBLE_EQ(c.at("fetches_per_wr").as_double(), 0.5);          // 3 of 6 work requests
    EXPECT_DOUBLE_EQ(c.at("fetches_per_rx_ulpdu").as_double(), 0.5);    // 2 of 4 ULPDUs
    EXPECT_DOUBLE_EQ(c.at("miss_latency_mean_ns").as_double(), 140.0);  // (3 x 100 + 2 x 200) / 5
    EXPECT_DOUBLE_EQ(c.at("miss_latency_max_ns").as_double(), 200.0);
    const boost::json::object& q = c.at("qp").as_object();
    EXPECT_EQ(q.at("accesses").as_uint64(), 6u);
    EXPECT_EQ(q.at("evictions").as_uint64(), 3u);
    EXPECT_EQ(c.at("stag").as_object().at("accesses").as_uint64(), 0u);
}

TEST(ContextMemoryTb, StagEntriesSitAfterTheQpTableAndFreshContextsDropStaleLines) {
    bench b(small_cache(2, 2));
    b.ctx.set_area(kArea);
    b.create_qps(1);
    const std::int64_t s = b.contexts().register_mr({0x1000, 64, regmap::mr_access::local_write, 0, 0});
    ASSERT_GT(s, 0);
    const auto stag = static_cast<std::uint32_t>(s);
    const std::uint64_t entry = kArea + std::uint64_t{kMaxQp} * kQpBytes + (stag >> 8) * kStagBytes;
    sc_time d = k0;
    b.contexts().access_stag(stag, true, side::rx, d, nullptr);  // miss: one 64-byte read of its entry
    EXPECT_EQ(d, k100);
    d = k0;
    b.contexts().access_stag(stag, false, side::rx, d, nullptr);  // hit
    EXPECT_EQ(d, k0);
    b.contexts().access_stag(0, false, side::rx, d, nullptr);  // STag 0 has no entry: nothing happens
    ASSERT_EQ(b.mem.log.size(), 1u);
    EXPECT_EQ(b.mem.log[0].address, entry);
    EXPECT_EQ(b.mem.log[0].data.size(), kStagBytes);

    // The entry is reused with a new key, and QP 0 is destroyed and created again: their dirty lines
    // belong to the old contexts and go without a write-back; the next accesses fetch again.
    EXPECT_EQ(b.qp(0, true), k100);
    ASSERT_TRUE(b.contexts().invalidate_stag(stag));
    const std::int64_t again = b.contexts().register_mr({0x1000, 64, regmap::mr_access::local_write, 0, 0});
    ASSERT_EQ(again >> 8, s >> 8);
    ASSERT_NE(again, s);
    b.contexts().destroy_qp(0);
    ASSERT_EQ(b.contexts().create_qp({}), 0);
    d = k0;
    b.contexts().access_stag(static_cast<std::uint32_t>(again), false, side::rx, d, nullptr);
    EXPECT_EQ(d, k100);
    EXPECT_EQ(b.qp(0, false), k100);
    EXPECT_EQ(b.mem.reads(), 4u);
    EXPECT_EQ(b.mem.writes(), 0u);
    const boost::json::object r = b.report();
    const boost::json::object& c = r.at("context_cache").as_object();
    EXPECT_EQ(c.at("stag").as_object().at("hits").as_uint64(), 1u);
    EXPECT_EQ(c.at("stag").as_object().at("misses").as_uint64(), 2u);
    EXPECT_EQ(c.at("writebacks").as_uint64(), 0u);
}

TEST(ContextMemoryTb, AMissHoldsThePipelineItIsGiven) {
    bench b(small_cache(2, 2));
    b.ctx.set_area(kArea);
    b.create_qps(3);
    timed_resource rx_pipe;
    // Two receive-side misses issued at the same time: the second waits for the first's fetch.
    EXPECT_EQ(b.qp(0, true, side::rx, &rx_pipe), k100);
    EXPECT_EQ(b.qp(1, true, side::rx, &rx_pipe), k200);
    EXPECT_EQ(b.qp(0, true, side::rx, &rx_pipe), k0);  // a hit holds nothing
    EXPECT_EQ(rx_pipe.transfers(), 2u);
    // Without a pipeline to hold, a miss costs only its own transfers.
    EXPECT_EQ(b.qp(2, false, side::tx), k200);  // evicts QP 1 (dirty): write, then read
}

TEST(ContextMemoryTb, HostMemoryRefusingTheAreaIsCountedNotFatal) {
    bench b(small_cache(2, 2));
    b.create_qps(2);
    // No area yet (the driver has not written CTX_BASE): a miss reaches nothing and is counted.
    EXPECT_EQ(b.qp(0, true), k0);
    EXPECT_TRUE(b.mem.log.empty());
    b.ctx.set_area(kArea);
    b.mem.refuse_from = qp_address(1);
    b.mem.refuse_to = qp_address(2);
    // QP 1's slot answers with an address error: the fetch is attempted once, refused, counted; the
    // contexts stay usable and the next miss goes out as usual.
    EXPECT_EQ(b.qp(1, false), k0);
    ASSERT_EQ(b.mem.log.size(), 1u);
    EXPECT_TRUE(b.mem.log[0].refused);
    EXPECT_NE(b.contexts().qp(1), nullptr);
    b.mem.refuse_to = 0;
    b.contexts().destroy_qp(0);  // its line (never fetched) goes without a write-back
    ASSERT_EQ(b.contexts().create_qp({}), 0);
    EXPECT_EQ(b.qp(0, false), k100);
    EXPECT_EQ(b.mem.reads(), 1u);
    const boost::json::object r = b.report();
    const boost::json::object& c = r.at("context_cache").as_object();
    EXPECT_EQ(c.at("dma_errors").as_uint64(), 2u);
    EXPECT_EQ(c.at("misses").as_uint64(), 3u);
    EXPECT_EQ(c.at("fetch_bytes").as_uint64(), 2u * kQpBytes);         // attempted: the refused one and QP 0
    EXPECT_DOUBLE_EQ(c.at("miss_latency_max_ns").as_double(), 100.0);  // only the miss that completed
}

TEST(ContextMemoryTb, WithoutTheCacheNothingReachesHostMemory) {
    context_memory_params p = small_cache(2, 2);
    p.cache.enabled = false;
    bench b(p);
    EXPECT_EQ(b.ctx.area_bytes(), 0u);
    b.create_qps(3);
    b.contexts().bind_connection(7, 2);
    EXPECT_EQ(b.contexts().qpn_of_connection(7), 2);
    for (std::uint32_t n = 0; n < 3; ++n) EXPECT_EQ(b.qp(n, true), k0);
    EXPECT_TRUE(b.mem.log.empty());
    EXPECT_TRUE(b.report(10, 10).empty());  // no "context_cache" key: the results stay as they were
}

}  // namespace
}  // namespace rnic::test
