// The RDMA engine's context store and access checks through plain calls: what a context cache put
// behind context_store must keep (numbering, STag keys, connection bindings, refusals), and the
// order of the tagged checks of RFC 5041 §7.1 / RFC 5040 §7.
#include <gtest/gtest.h>

#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "rdma/access_checks.h"
#include "rdma/context_store.h"

namespace rnic::test {
namespace {

namespace ddp = proto::ddp;
namespace access = regmap::mr_access;

qp_config qp_on(std::uint32_t send_cq, std::uint32_t recv_cq, std::uint32_t pd = 1) {
    qp_config cfg;
    cfg.sq_entries = cfg.rq_entries = 16;
    cfg.send_cq = send_cq;
    cfg.recv_cq = recv_cq;
    cfg.pd = pd;
    return cfg;
}

mr_config region(std::uint64_t addr, std::uint64_t length, std::uint32_t rights, std::uint32_t pd = 1,
                 std::uint64_t to_base = 0) {
    return mr_config{addr, length, rights, pd, to_base};
}

TEST(ContextStore, QpsNeedExistingCqsAndRunOut) {
    context_store store(2, 2, 4);
    EXPECT_EQ(store.create_qp(qp_on(0, 0)), -2);  // no CQ yet
    ASSERT_EQ(store.create_cq({}), 0);
    ASSERT_EQ(store.create_cq({}), 1);
    EXPECT_EQ(store.create_cq({}), -1);
    EXPECT_EQ(store.create_qp(qp_on(0, 2)), -2);  // out of range
    EXPECT_EQ(store.create_qp(qp_on(0, 1)), 0);
    EXPECT_EQ(store.create_qp(qp_on(1, 1)), 1);
    EXPECT_EQ(store.create_qp(qp_on(0, 0)), -1);
    ASSERT_NE(store.qp(1), nullptr);
    EXPECT_EQ(store.qp(1)->cfg.send_cq, 1u);
    EXPECT_EQ(store.qp(2), nullptr);
    // A CQ a QP uses stays; freed QP numbers are reused, lowest first.
    EXPECT_EQ(store.destroy_cq(1), -2);
    store.destroy_qp(0);
    EXPECT_EQ(store.qp(0), nullptr);
    EXPECT_EQ(store.destroy_cq(1), -2);  // QP 1 still uses it
    store.destroy_qp(1);
    EXPECT_EQ(store.destroy_cq(1), 0);
    EXPECT_EQ(store.destroy_cq(1), -1);
    EXPECT_EQ(store.create_qp(qp_on(0, 0)), 0);
}

TEST(ContextStore, ConnectionsMapToQpsUntilUnboundOrDestroyed) {
    context_store store(4, 1, 4);
    ASSERT_EQ(store.create_cq({}), 0);
    ASSERT_EQ(store.create_qp(qp_on(0, 0)), 0);
    ASSERT_EQ(store.create_qp(qp_on(0, 0)), 1);
    EXPECT_EQ(store.qpn_of_connection(7), -1);
    store.bind_connection(7, 1);
    store.bind_connection(9, 0);
    EXPECT_EQ(store.qpn_of_connection(7), 1);
    store.unbind_connection(7);
    EXPECT_EQ(store.qpn_of_connection(7), -1);
    store.bind_connection(7, 0);
    store.destroy_qp(0);  // every connection of QP 0 goes with it
    EXPECT_EQ(store.qpn_of_connection(7), -1);
    EXPECT_EQ(store.qpn_of_connection(9), -1);
}

TEST(ContextStore, StagsCarryAKeyThatChangesWhenTheEntryIsReused) {
    context_store store(1, 1, 3);
    const std::int64_t first = store.register_mr(region(0x1000, 64, access::local_write));
    ASSERT_GT(first, 0);
    EXPECT_EQ(first >> 8, 1);  // entry 0 is never used: STag 0 stays invalid (RFC 5040 §2.2)
    EXPECT_EQ(store.lookup_stag(0), nullptr);
    const auto stag = static_cast<std::uint32_t>(first);
    ASSERT_NE(store.lookup_stag(stag), nullptr);
    EXPECT_EQ(store.lookup_stag(stag)->cfg.addr, 0x1000u);
    EXPECT_EQ(store.lookup_stag(stag ^ 0x01), nullptr);  // same entry, another key
    ASSERT_TRUE(store.invalidate_stag(stag));
    EXPECT_FALSE(store.invalidate_stag(stag));
    EXPECT_EQ(store.lookup_stag(stag), nullptr);
    const std::int64_t again = store.register_mr(region(0x2000, 64, access::local_write));
    EXPECT_EQ(again >> 8, 1);
    EXPECT_NE(again, first);  // the old STag stays invalid
    EXPECT_EQ(store.lookup_stag(stag), nullptr);
    EXPECT_GT(store.register_mr(region(0x3000, 64, 0)), 0);
    EXPECT_EQ(store.register_mr(region(0x4000, 64, 0)), -1);
}

TEST(AccessChecks, TaggedChecksInTheOrderOfTheErrorCodes) {
    mr_context mr;
    mr.valid = true;
    mr.cfg = region(0x10000, 0x100, access::remote_read, 1, 0x5000);
    auto code = [&](const mr_context* m, std::uint32_t pd, std::uint64_t to, std::uint64_t len, std::uint32_t right) {
        const access_check c = check_tagged_access(m, pd, to, len, right);
        EXPECT_FALSE(c.ok);
        return std::make_pair(c.layer, c.code);
    };
    const auto ddp_code = [](std::uint8_t c) { return std::make_pair(ddp::term_layer::ddp, c); };
    EXPECT_EQ(code(nullptr, 1, 0x5000, 8, access::remote_read), ddp_code(ddp::term::kDdpTaggedInvalidStag));
    // The protection domain is checked before the bounds, the bounds before the rights.
    EXPECT_EQ(code(&mr, 2, 0x9000, 8, access::remote_write), ddp_code(ddp::term::kDdpTaggedStagNotAssociated));
    EXPECT_EQ(code(&mr, 1, ~std::uint64_t{0}, 2, access::remote_write), ddp_code(ddp::term::kDdpTaggedToWrap));
    EXPECT_EQ(code(&mr, 1, 0x4fff, 1, access::remote_write), ddp_code(ddp::term::kDdpTaggedBaseOrBounds));
    EXPECT_EQ(code(&mr, 1, 0x50f9, 8, access::remote_write), ddp_code(ddp::term::kDdpTaggedBaseOrBounds));
    EXPECT_EQ(code(&mr, 1, 0x5000, 8, access::remote_write),
              std::make_pair(ddp::term_layer::rdma, ddp::term::kRdmaAccessRights));
    const access_check ok = check_tagged_access(&mr, 1, 0x50f8, 8, access::remote_read);
    ASSERT_TRUE(ok.ok);
    EXPECT_EQ(ok.host_addr, 0x100f8u);  // base + (TO - base TO)
}

TEST(AccessChecks, RdmapCodesForASourceCheckedByRdmap) {
    access_check c;
    c.code = ddp::term::kDdpTaggedInvalidStag;
    EXPECT_EQ(rdmap_protection_code(c), ddp::term::kRdmaInvalidStag);
    c.code = ddp::term::kDdpTaggedBaseOrBounds;
    EXPECT_EQ(rdmap_protection_code(c), ddp::term::kRdmaBaseOrBounds);
    c.code = ddp::term::kDdpTaggedToWrap;
    EXPECT_EQ(rdmap_protection_code(c), ddp::term::kRdmaToWrap);
    c.code = ddp::term::kDdpTaggedStagNotAssociated;
    EXPECT_EQ(rdmap_protection_code(c), ddp::term::kRdmaStagNotAssociated);
    c.layer = ddp::term_layer::rdma;
    c.code = ddp::term::kRdmaAccessRights;
    EXPECT_EQ(rdmap_protection_code(c), ddp::term::kRdmaAccessRights);
}

TEST(AccessChecks, LocalBuffersInsideTheirRegion) {
    mr_context mr;
    mr.valid = true;
    mr.cfg = region(0x1000, 0x100, access::remote_read, 3);
    EXPECT_TRUE(covers_local(&mr, 3, 0x1000, 0x100));
    EXPECT_TRUE(covers_local(&mr, 3, 0x1100, 0));
    EXPECT_FALSE(covers_local(&mr, 3, 0x0fff, 1));
    EXPECT_FALSE(covers_local(&mr, 3, 0x10ff, 2));
    EXPECT_FALSE(covers_local(&mr, 3, 0x1000, ~std::uint64_t{0}));
    EXPECT_FALSE(covers_local(&mr, 4, 0x1000, 1));
    EXPECT_FALSE(covers_local(nullptr, 3, 0x1000, 1));
    EXPECT_FALSE(local_writable(&mr, 3, 0x1000, 8));  // no local write right
    mr.cfg.access |= access::local_write;
    EXPECT_TRUE(local_writable(&mr, 3, 0x1000, 8));
    EXPECT_FALSE(local_writable(nullptr, 3, 0x1000, 8));
}

// ---- page-list regions (reg_mr_pages) ------------------------------------------------------------

std::shared_ptr<mr_page_list> list_of(std::vector<std::uint64_t> pages, std::uint64_t first_byte_offset,
                                      unsigned shift = 12) {
    auto l = std::make_shared<mr_page_list>();
    l->pages = std::move(pages);
    l->page_shift = shift;
    l->first_byte_offset = first_byte_offset;
    return l;
}
using run = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>;  // host, length, offset in the access
std::vector<run> runs_of(const region_map& m, std::uint64_t off, std::uint64_t len, bool* covered = nullptr) {
    std::vector<run> out;
    const bool all = m.for_each_run(off, len, [&](std::uint64_t h, std::uint64_t n, std::uint64_t done) {
        out.emplace_back(h, n, done);
        return true;
    });
    if (covered != nullptr) *covered = all;
    return out;
}

TEST(PageList, AContiguousRegionIsOneRunAtItsAddress) {
    const region_map m{0x10000, nullptr};
    EXPECT_EQ(runs_of(m, 0x123, 0x5000), (std::vector<run>{{0x10123, 0x5000, 0}}));
    EXPECT_EQ(m.host_addr(7), 0x10007u);
    EXPECT_TRUE(m.contiguous(0, 1u << 30));
}

TEST(PageList, AccessesSplitAtPageBoundariesThroughShuffledPages) {
    // Three 4 KiB pages out of order; the region starts 0x234 into the first.
    const auto l = list_of({0x9000, 0x3000, 0x7000}, 0x234);
    const region_map m{0xdead0000, l.get()};
    // Inside the first page: one run.
    EXPECT_EQ(runs_of(m, 0x10, 0x100), (std::vector<run>{{0x9244, 0x100, 0}}));
    // From 8 bytes before the first boundary across the whole second page into the third.
    const std::uint64_t off = 0x1000 - 0x234 - 8;
    EXPECT_EQ(runs_of(m, off, 8 + 0x1000 + 5),
              (std::vector<run>{{0x9ff8, 8, 0}, {0x3000, 0x1000, 8}, {0x7000, 5, 0x1008}}));
    EXPECT_EQ(m.host_addr(off + 8), 0x3000u);
    EXPECT_TRUE(m.contiguous(off, 8));
    EXPECT_FALSE(m.contiguous(off, 9));
    // Past the list's last page: reported, not read out of range.
    bool covered = true;
    const auto past = runs_of(m, 3 * 0x1000 - 0x234 - 4, 8, &covered);
    EXPECT_FALSE(covered);
    EXPECT_EQ(past, (std::vector<run>{{0x7ffc, 4, 0}}));
    EXPECT_EQ(m.host_addr(3 * 0x1000), 0u);
}

TEST(PageList, ChecksAreTheContiguousRegionsAndTranslationGoesThroughThePages) {
    // A VA-based region named by virtual address 0x7f0000000234 over two pages.
    mr_context mr;
    mr.valid = true;
    mr.cfg = region(0x7f0000000234, 0x2000 - 0x234, access::remote_write | access::local_write, 1, 0x7f0000000234);
    mr.cfg.pages = list_of({0x5000, 0x2000}, 0x234);
    const access_check w = check_tagged_access(&mr, 1, 0x7f0000000ff0, 0x20, access::remote_write);
    ASSERT_TRUE(w.ok);
    EXPECT_EQ(w.host_addr, 0x5ff0u);
    EXPECT_EQ(w.region_off, 0xff0u - 0x234u);
    EXPECT_EQ(runs_of(w.map, w.region_off, 0x20), (std::vector<run>{{0x5ff0, 0x10, 0}, {0x2000, 0x10, 0x10}}));
    // Bounds exactly as for a contiguous region of the same length: one byte past the end is refused.
    const access_check past = check_tagged_access(&mr, 1, 0x7f0000001ff0, 0x11, access::remote_write);
    EXPECT_FALSE(past.ok);
    EXPECT_EQ(past.code, ddp::term::kDdpTaggedBaseOrBounds);
    EXPECT_TRUE(covers_local(&mr, 1, 0x7f0000001000, 0x1000));
    EXPECT_FALSE(covers_local(&mr, 1, 0x7f0000001000, 0x1001));
    EXPECT_EQ(local_map(mr).host_addr(local_offset(mr, 0x7f0000001000)), 0x2000u);
}

TEST(PageList, TheStoreBoundsThePageListMemoryAndFreesItOnInvalidation) {
    context_store store(1, 1, 64);
    auto paged = [](std::size_t n) {
        mr_config c = region(0x1000, 0x1000, access::local_write);
        c.pages = list_of(std::vector<std::uint64_t>(n, 0x1000), 0);
        return c;
    };
    const std::int64_t big = store.register_mr(paged(regmap::kPageListPoolEntries - 10));
    ASSERT_GT(big, 0);
    EXPECT_EQ(store.register_mr(paged(11)), -1);  // one entry too many
    const std::int64_t fits = store.register_mr(paged(10));
    ASSERT_GT(fits, 0);
    EXPECT_GT(store.register_mr(region(0x1000, 0x1000, access::local_write)), 0);  // contiguous: no entries
    EXPECT_EQ(store.register_mr(paged(1)), -1);
    ASSERT_TRUE(store.invalidate_stag(static_cast<std::uint32_t>(fits)));
    EXPECT_GT(store.register_mr(paged(10)), 0);
}

}  // namespace
}  // namespace rnic::test
