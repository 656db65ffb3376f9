// The context cache: its placement/replacement policy through plain calls (exact hits, misses,
// evictions and write-backs for short access sequences), and the capability registers the device
// reports for the configured limits and the context area (through BAR0's TLM socket).
#include <gtest/gtest.h>

#include <vector>

#include "build_params.h"
#include "config/scenario.h"
#include "host_system.h"
#include "rdma/cache_policy.h"
#include "scenario_schema.h"

namespace rnic::test {
namespace {

using repl = cache_policy::replacement;

struct counts {
    std::uint64_t hits, misses, evictions, writebacks;
};

counts run(cache_policy& c, const std::vector<std::uint64_t>& keys, const std::vector<bool>& writes = {}) {
    for (std::size_t i = 0; i < keys.size(); ++i) c.access(keys[i], i < writes.size() && writes[i]);
    return {c.hits(), c.misses(), c.evictions(), c.writebacks()};
}

void expect(const counts& got, const counts& want) {
    EXPECT_EQ(got.hits, want.hits);
    EXPECT_EQ(got.misses, want.misses);
    EXPECT_EQ(got.evictions, want.evictions);
    EXPECT_EQ(got.writebacks, want.writebacks);
}

TEST(CachePolicy, DirectMappedConflictsOnTheSameSet) {
    cache_policy c({4, 1, repl::lru, 1});
    // 0 and 4 share set 0 and throw each other out; 1 and 5 share set 1.
    expect(run(c, {0, 4, 0, 1, 5, 1, 2, 2}), {1, 7, 4, 0});
    EXPECT_TRUE(c.contains(0));
    EXPECT_FALSE(c.contains(4));
}

TEST(CachePolicy, FullyAssociativeLruEvictsTheLeastRecentlyUsed) {
    cache_policy c({2, 2, repl::lru, 1});
    EXPECT_FALSE(c.access(1, false).hit);
    EXPECT_FALSE(c.access(2, false).hit);
    EXPECT_TRUE(c.access(1, false).hit);  // 2 is now the least recently used
    const cache_policy::outcome o = c.access(3, false);
    EXPECT_TRUE(o.evicted);
    EXPECT_EQ(o.victim_key, 2u);
    EXPECT_FALSE(c.access(2, false).hit);  // evicts 1
    EXPECT_FALSE(c.contains(1));
    expect({c.hits(), c.misses(), c.evictions(), c.writebacks()}, {1, 4, 2, 0});
}

TEST(CachePolicy, FifoEvictsTheOldestFillEvenWhenItIsUsed) {
    cache_policy c({2, 2, repl::fifo, 1});
    // 1 is used again but was filled first: 3 replaces it, and 2 stays.
    expect(run(c, {1, 2, 1, 3, 2}), {2, 3, 1, 0});
    EXPECT_FALSE(c.contains(1));
    EXPECT_TRUE(c.contains(2));
}

TEST(CachePolicy, SetAssociativeKeepsSetsApart) {
    cache_policy c({4, 2, repl::lru, 1});  // two sets of two ways: even keys in set 0, odd in set 1
    EXPECT_EQ(c.sets(), 2u);
    expect(run(c, {0, 2, 1, 4, 3, 0}), {0, 6, 2, 0});  // 4 evicts 0, 0 evicts 2; set 1 never full
    EXPECT_TRUE(c.contains(1));
    EXPECT_TRUE(c.contains(3));
    EXPECT_TRUE(c.contains(4));
    EXPECT_FALSE(c.contains(2));
}

TEST(CachePolicy, RoundRobinOverMoreKeysThanEntriesAlwaysMisses) {
    for (repl r : {repl::lru, repl::fifo}) {
        cache_policy c({2, 2, r, 1});
        std::vector<std::uint64_t> keys;
        for (int i = 0; i < 40; ++i) keys.push_back(static_cast<std::uint64_t>(i % 4));
        expect(run(c, keys), {0, 40, 38, 0});
    }
    cache_policy two({2, 2, repl::lru, 1});
    expect(run(two, {0, 1, 0, 1, 0, 1, 0, 1}), {6, 2, 0, 0});  // as many keys as entries: hits after warm-up
}

TEST(CachePolicy, RandomReplacementIsSeededAndStaysInTheSet) {
    std::vector<std::uint64_t> keys;
    for (int i = 0; i < 200; ++i) keys.push_back(static_cast<std::uint64_t>((i * 7) % 5));
    cache_policy a({4, 4, repl::random, 42}), b({4, 4, repl::random, 42});
    const counts ca = run(a, keys), cb = run(b, keys);
    EXPECT_EQ(ca.hits, cb.hits);
    EXPECT_EQ(ca.misses, cb.misses);
    EXPECT_EQ(ca.hits + ca.misses, 200u);
    EXPECT_EQ(ca.evictions, ca.misses - 4);  // the first four fill free lines
    // Two sets of two ways: a victim is always one of its set's two keys.
    cache_policy r({4, 2, repl::random, 7});
    r.access(0, false);
    r.access(2, false);
    r.access(1, false);
    const cache_policy::outcome o = r.access(4, false);
    EXPECT_TRUE(o.evicted);
    EXPECT_TRUE(o.victim_key == 0 || o.victim_key == 2) << o.victim_key;
    EXPECT_TRUE(r.contains(1));
}

TEST(CachePolicy, DirtyVictimsAreWrittenBackCleanOnesAreNot) {
    cache_policy c({2, 2, repl::lru, 1});
    c.access(1, true);
    c.access(2, false);
    cache_policy::outcome o = c.access(3, false);  // evicts 1, written
    EXPECT_TRUE(o.victim_dirty);
    EXPECT_EQ(o.victim_key, 1u);
    o = c.access(4, false);  // evicts 2, clean
    EXPECT_TRUE(o.evicted);
    EXPECT_FALSE(o.victim_dirty);
    c.access(4, true);       // a hit that writes makes the line dirty
    c.access(5, false);      // evicts 3 (clean)
    o = c.access(6, false);  // evicts 4 (dirty)
    EXPECT_TRUE(o.victim_dirty);
    EXPECT_EQ(c.writebacks(), 2u);
}

TEST(CachePolicy, InvalidateDropsWithoutWriteBackAndGeometryIsChecked) {
    cache_policy c({2, 2, repl::lru, 1});
    c.access(1, true);
    EXPECT_TRUE(c.invalidate(1));
    EXPECT_FALSE(c.invalidate(1));
    c.access(2, false);
    c.access(3, false);
    EXPECT_EQ(c.evictions(), 0u);
    EXPECT_EQ(c.writebacks(), 0u);
    EXPECT_EQ(cache_policy::check({8, 3, repl::lru, 1}), "8 entries do not split into sets of 3");
    EXPECT_FALSE(cache_policy::check({4, 8, repl::lru, 1}).empty());
    EXPECT_FALSE(cache_policy::check({0, 1, repl::lru, 1}).empty());
    EXPECT_TRUE(cache_policy::check({8, 8, repl::fifo, 1}).empty());
    EXPECT_THROW(cache_policy::parse("mru"), std::invalid_argument);
}

std::uint32_t bar0_read(rnic_device& nic, std::uint32_t offset) {
    std::uint32_t value = 0;
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(offset);
    gp.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
    gp.set_data_length(4);
    gp.set_streaming_width(4);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    nic.mmio_in.get_base_export()->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    return value;
}

TEST(ContextCacheTb, CapabilityRegistersReportTheConfiguredDevice) {
    const config::scenario s = config::scenario::defaults(
        platform::scenario_schema(), {"rnic.rdma.max_qp=4096", "rnic.rdma.max_cq=2048", "rnic.rdma.max_mr=2048",
                                      "rnic.context_cache.enabled=true", "rnic.context_cache.stag_entry_bytes=32B"});
    platform::host_system h("h", platform::build_host_params(s, 0));
    EXPECT_EQ(bar0_read(h.nic, regmap::CAP_MAX_QP), 4096u);
    EXPECT_EQ(bar0_read(h.nic, regmap::CAP_MAX_CQ), 2048u);
    EXPECT_EQ(bar0_read(h.nic, regmap::CAP_MAX_MR), 2048u);
    EXPECT_EQ(bar0_read(h.nic, regmap::CAP_CTX_BYTES), 4096u * 256 + 2048u * 32);
    EXPECT_NE(bar0_read(h.nic, regmap::STATUS) & regmap::status::ctx_area, 0u);
    // QP 4095's doorbell slot is in the second window, inside BAR0.
    EXPECT_LT(regmap::qp_doorbell(4095) + regmap::kRqDoorbell, regmap::kBar0Size);
    EXPECT_EQ(regmap::qp_doorbell(regmap::kQpDoorbellLowCount), regmap::kQpDoorbellHighBase);
}

TEST(ContextCacheTb, DefaultsKeepTheResetValuesAndNoContextArea) {
    const config::scenario s = config::scenario::defaults(platform::scenario_schema(), {});
    platform::host_system h("h", platform::build_host_params(s, 0));
    EXPECT_EQ(bar0_read(h.nic, regmap::CAP_MAX_QP), 64u);
    EXPECT_EQ(bar0_read(h.nic, regmap::CAP_MAX_CQ), 64u);
    EXPECT_EQ(bar0_read(h.nic, regmap::CAP_MAX_MR), 1024u);
    EXPECT_EQ(bar0_read(h.nic, regmap::CAP_CTX_BYTES), 0u);
    EXPECT_EQ(bar0_read(h.nic, regmap::STATUS) & regmap::status::ctx_area, 0u);
}

}  // namespace
}  // namespace rnic::test
