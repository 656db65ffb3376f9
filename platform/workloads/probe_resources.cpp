// The resource_limits probe (workload.type = probe): every table and ring of the device and the
// driver, filled until the next request is refused with its named status, then freed by one and
// asked again, which must succeed (issue 19 item 3). The catalogue and dispatch are in probe.cpp.
//   - send queue: a full ring is ring_full until a completion retires its work requests;
//   - STag table (rnic.rdma.max_mr), QP table (max_qp), CQ table (max_cq): no_resources, until a
//     deregistration / destroy frees an entry;
//   - host memory the driver maps for the device (its DMA pool): no_memory, a named error for a
//     region's buffer, a CQ's ring and a QP's rings, until a buffer is freed.
// Everything the probe creates is removed again, and the first connection keeps working: its last
// RDMA Write, after all of it, completes with success.
#include <vector>

#include "proto/ddp_rdmap.h"
#include "workloads/probe_side.h"

namespace rnic::platform {

namespace acc = regmap::mr_access;
namespace ddp = proto::ddp;
using namespace probe_detail;

void probe::client_resource_limits(side& s, const remote_buffer& a) {
    using drv::status;
    drv::context& c = s.ctx;
    auto named = [](status got, status want) {
        return std::string("returned ") + drv::to_string(got) + " (want " + drv::to_string(want) + ")";
    };
    auto completes = [&](std::uint64_t wr_id) {
        drv::work_completion wc;
        return poll_for(
                   s, s.cq, [&](const drv::work_completion& x) { return x.wr_id == wr_id; }, kBudgetPs, &wc) &&
               wc.status == regmap::cqe_status::success;
    };
    // ---- send queue: full until a completion retires its work requests ----
    {
        const drv::send_wr good = baseline_write(s, a);
        const std::uint32_t depth = s.qp->sq_entries;
        bool posted = true;
        for (std::uint32_t i = 0; i < depth; ++i) {
            drv::send_wr w = good;
            w.wr_id = 100 + i;
            w.signaled = i + 1 == depth;  // the last one retires them all
            posted = posted && c.post_send(s.qp, w) == status::ok;
        }
        check("send queue: " + std::to_string(depth) + " work requests fill it", posted);
        drv::send_wr extra = good;
        extra.wr_id = 99;
        const status full = c.post_send(s.qp, extra);
        check("send queue: the next post is refused with ring_full", full == status::ring_full,
              named(full, status::ring_full));
        check("send queue: the signaled last work request completes", completes(100 + depth - 1));
        const status again = c.post_send(s.qp, extra);
        check("send queue: a post succeeds once the completion retired the ring", again == status::ok && completes(99),
              named(again, status::ok));
    }
    // ---- STag table: registrations until refused, one freed, one more succeeds ----
    {
        std::vector<drv::memory_region> mrs;
        status st = status::ok;
        while (mrs.size() < (1u << 20)) {
            drv::memory_region mr;
            st = c.reg_mr(s.pd, s.buf, 4096, acc::local_write | acc::remote_write, &mr);
            if (st != status::ok) break;
            mrs.push_back(mr);
        }
        check("STag table: registrations are refused with no_resources when it is full", st == status::no_resources,
              named(st, status::no_resources) + " after " + std::to_string(mrs.size()) + " registrations");
        bool recovered = !mrs.empty() && c.dereg_mr(mrs.back()) == status::ok;
        if (recovered) mrs.pop_back();
        drv::memory_region mr;
        const status after = c.reg_mr(s.pd, s.buf, 4096, acc::local_write, &mr);
        recovered = recovered && after == status::ok;
        if (after == status::ok) mrs.push_back(mr);
        check("STag table: a registration succeeds after one deregistration", recovered, named(after, status::ok));
        bool freed = true;
        for (const drv::memory_region& m : mrs) freed = freed && c.dereg_mr(m) == status::ok;
        check("STag table: every region of the probe deregistered (" + std::to_string(mrs.size()) + ")", freed);
    }
    // ---- QP table and CQ table: creates until refused, one destroyed, one more succeeds ----
    {
        std::vector<drv::queue_pair*> qps;
        status st = status::ok;
        while (qps.size() < 4096) {
            drv::queue_pair* qp = nullptr;
            st = c.create_qp(s.pd, s.cq, s.cq, 2, 2, &qp);
            if (st != status::ok) break;
            qps.push_back(qp);
        }
        check("QP table: creates are refused with no_resources when it is full", st == status::no_resources,
              named(st, status::no_resources) + " after " + std::to_string(qps.size()) + " QPs");
        bool recovered = !qps.empty() && c.destroy_qp(qps.back()) == status::ok;
        if (recovered) qps.pop_back();
        drv::queue_pair* qp = nullptr;
        const status after = c.create_qp(s.pd, s.cq, s.cq, 2, 2, &qp);
        recovered = recovered && after == status::ok;
        if (after == status::ok) qps.push_back(qp);
        check("QP table: a create succeeds after one destroy", recovered, named(after, status::ok));
        bool freed = true;
        for (drv::queue_pair* q : qps) freed = freed && c.destroy_qp(q) == status::ok;
        check("QP table: every QP of the probe destroyed (" + std::to_string(qps.size()) + ")", freed);
    }
    {
        std::vector<drv::completion_queue*> cqs;
        status st = status::ok;
        while (cqs.size() < 4096) {
            drv::completion_queue* cq = nullptr;
            st = c.create_cq(2, &cq);
            if (st != status::ok) break;
            cqs.push_back(cq);
        }
        check("CQ table: creates are refused with no_resources when it is full", st == status::no_resources,
              named(st, status::no_resources) + " after " + std::to_string(cqs.size()) + " CQs");
        bool recovered = !cqs.empty() && c.destroy_cq(cqs.back()) == status::ok;
        if (recovered) cqs.pop_back();
        drv::completion_queue* cq = nullptr;
        const status after = c.create_cq(2, &cq);
        recovered = recovered && after == status::ok;
        if (after == status::ok) cqs.push_back(cq);
        check("CQ table: a create succeeds after one destroy", recovered, named(after, status::ok));
        bool freed = true;
        for (drv::completion_queue* q : cqs) freed = freed && c.destroy_cq(q) == status::ok;
        check("CQ table: every CQ of the probe destroyed (" + std::to_string(cqs.size()) + ")", freed);
    }
    // ---- host memory mapped for the device: exhausted, named errors, recovered ----
    {
        std::vector<std::uint64_t> chunks;
        std::uint64_t addr = 0;
        for (std::size_t len = std::size_t{1} << 24; len >= 4096; len /= 2) {  // 16 MiB down to a page
            while (chunks.size() < (1u << 16) && c.alloc_buffer(len, &addr) == status::ok) chunks.push_back(addr);
        }
        const status buf = c.alloc_buffer(4096, &addr);
        check("host memory: alloc_buffer is refused with no_memory when the pool is exhausted",
              buf == status::no_memory,
              named(buf, status::no_memory) + " after " + std::to_string(chunks.size()) + " buffers");
        drv::completion_queue* cq = nullptr;
        const status cq_st = c.create_cq(16, &cq);
        check("host memory: create_cq is refused with no_memory (its ring)", cq_st == status::no_memory,
              named(cq_st, status::no_memory));
        drv::queue_pair* qp = nullptr;
        const status qp_st = c.create_qp(s.pd, s.cq, s.cq, 2, 2, &qp);
        check("host memory: create_qp is refused with no_memory (its rings)", qp_st == status::no_memory,
              named(qp_st, status::no_memory));
        bool freed = true;
        for (std::uint64_t b : chunks) freed = freed && c.free_buffer(b) == status::ok;
        check("host memory: every buffer of the probe freed (" + std::to_string(chunks.size()) + ")", freed);
        const status again = c.create_cq(16, &cq);
        check("host memory: create_cq succeeds once buffers are freed",
              again == status::ok && c.destroy_cq(cq) == status::ok, named(again, status::ok));
        const status twice = chunks.empty() ? status::bad_handle : c.free_buffer(chunks.front());
        check("host memory: freeing a buffer twice is refused with bad_handle", twice == status::bad_handle,
              named(twice, status::bad_handle));
    }
    // The connection survived all of it.
    drv::send_wr last = baseline_write(s, a);
    last.wr_id = 7;
    const status st = c.post_send(s.qp, last);
    check("the first connection still works: an RDMA Write completes", st == status::ok && completes(7),
          named(st, status::ok));
}

// ---- cq_overrun: a CQ too small for the completions its QP produces -----------------------------
// A completion that finds its CQ full is lost, so the QP can no longer account for its work: the
// device moves that QP to Error and tells the peer with an RDMAP Local Catastrophic Terminate (RFC
// 5040 §4.8, layer 0, type 0, code 0), and raises one asynchronous cq_error event naming the CQ
// (verbs' IBV_EVENT_CQ_ERR; the driver polls the ASYNC_EVENT register: no interrupt carries it).
// Other QPs, on other CQs, carry on (issue 19 point 3).

namespace {
constexpr std::uint32_t kSmallCqEntries = 4;
constexpr std::uint32_t kOverrunWrites = 4 * kSmallCqEntries;  // signaled, none polled (a power of two: the SQ depth)
constexpr std::uint64_t kOverrunSettlePs = 200'000'000;        // 200 us for them to complete
}  // namespace

void probe::server_cq_overrun(side& s) {
    drv::queue_pair* second = nullptr;
    const bool ok = s.ctx.create_qp(s.pd, s.cq, s.cq, 4, 4, &second) == drv::status::ok &&
                    s.ctx.accept(second, cfg_.port) == drv::status::ok;
    check("server: the second connection accepted", ok);
    if (!ok) return;
    oob_.wait_for("client-done");
    regmap::qp_state state = regmap::qp_state::rts;
    drv::terminate_info t;
    s.ctx.query_qp(second, &state, &t);
    check("server: the overrun QP's peer received the Terminate: RDMAP Local Catastrophic (layer 0, type 0, code 0)",
          state == regmap::qp_state::error && t.valid && t.received && t.layer == 0 &&
              t.etype == ddp::term::kRdmaLocalCatastrophic && t.code == 0,
          std::string(regmap::to_string(state)) + (t.valid ? ", " + term_text(t) : ", no Terminate"));
    s.ctx.query_qp(s.qp, &state);
    check("server: the first connection's QP is still in RTS", state == regmap::qp_state::rts,
          regmap::to_string(state));
}

void probe::client_cq_overrun(side& s, std::uint32_t server_ip, const remote_buffer& a) {
    drv::context& c = s.ctx;
    drv::completion_queue* small = nullptr;
    drv::queue_pair* qp = nullptr;
    if (c.create_cq(kSmallCqEntries, &small) != drv::status::ok ||
        c.create_qp(s.pd, small, small, kOverrunWrites, 4, &qp) != drv::status::ok ||
        c.connect(qp, server_ip, a.port, 40001) != drv::status::ok) {
        fail("client: the second QP, on a CQ of " + std::to_string(kSmallCqEntries) + " entries, could not connect");
        return;
    }
    drv::async_event_info ev;
    check("client: no asynchronous event before the overrun", !c.get_async_event(&ev));
    bool posted = true;
    for (std::uint32_t i = 0; i < kOverrunWrites; ++i) {
        drv::send_wr w = baseline_write(s, a);
        w.wr_id = 500 + i;
        w.length = 64;
        posted = posted && c.post_send(qp, w) == drv::status::ok;
    }
    check("client: " + std::to_string(kOverrunWrites) + " signaled RDMA Writes posted, none polled", posted);
    s.bus.spend(kOverrunSettlePs);
    const bool got = c.get_async_event(&ev);
    check("client: one cq_error asynchronous event names the small CQ",
          got && ev.type == regmap::async_event::cq_error && ev.resource == small->cqn,
          got ? "event " + std::to_string(static_cast<int>(ev.type)) + " resource " + std::to_string(ev.resource) +
                    " (CQ " + std::to_string(small->cqn) + ")"
              : std::string("no event"));
    check("client: once per CQ, however many completions it lost", !c.get_async_event(&ev));
    regmap::qp_state state = regmap::qp_state::rts;
    drv::terminate_info t;
    c.query_qp(qp, &state, &t);
    check("client: the QP whose completion was lost is in Error, having sent the Local Catastrophic Terminate",
          state == regmap::qp_state::error && t.valid && !t.received && t.layer == 0 &&
              t.etype == ddp::term::kRdmaLocalCatastrophic,
          std::string(regmap::to_string(state)) + (t.valid ? ", " + term_text(t) : ", no Terminate"));
    // What the CQ held are the first Writes' completions, in order and successful.
    std::vector<drv::work_completion> wcs;
    int n = 0;
    c.poll_cq(small, static_cast<int>(kOverrunWrites), &wcs, &n);
    bool in_order = n > 0;
    for (int i = 0; i < n; ++i) {
        in_order = in_order && wcs[static_cast<std::size_t>(i)].wr_id == 500u + static_cast<std::uint32_t>(i) &&
                   wcs[static_cast<std::size_t>(i)].status == regmap::cqe_status::success;
    }
    check("client: the small CQ holds the first Writes' successful completions, in order",
          in_order && n <= static_cast<int>(kSmallCqEntries), std::to_string(n) + " completions");
    // The completions lost stay lost, and the QP's flush found the CQ full too: once polled, the CQ
    // gets nothing more from that QP (as verbs' CQ in error after IBV_EVENT_CQ_ERR); the event and
    // query_qp are how the driver learns what happened.
    s.bus.spend(kOverrunSettlePs);
    wcs.clear();
    int later = 0;
    c.poll_cq(small, static_cast<int>(kOverrunWrites), &wcs, &later);
    check("client: the overrun CQ gets nothing more from the failed QP once polled", later == 0,
          std::to_string(later) + " more completions");
    // The first connection, on its own CQ, carries on.
    check("client: the first connection still carries an RDMA Write", baseline_write_completes(s, a, 9));
}

}  // namespace rnic::platform
