// The verbs_misuse probe (workload.type = probe): every bad call of the verbs API returns an error
// and logs it; the catalogue and the dispatch are in probe.cpp.
#include <cstring>
#include <deque>
#include <sstream>

#include "core/log.h"
#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"
#include "workloads/probe_side.h"
#include "workloads/write_bw.h"

namespace rnic::platform {

namespace ddp = proto::ddp;
namespace acc = regmap::mr_access;
using namespace probe_detail;

// ---- verbs_misuse: every bad call returns an error and logs it ---------------------------------

void probe::client_verbs_misuse(side& s, const remote_buffer& a) {
    using drv::status;
    // Each misuse must return `want` and write at least one error line (with the simulated time,
    // core/log.h) to the log, when the log takes drv errors (--log off writes nothing); the e2e
    // test reads the lines themselves.
    const bool logging = log::enabled(log::category::drv, log::level::error);
    auto misuse = [&](const std::string& what, status want, const std::function<status()>& call) {
        const std::uint64_t before = log::errors_logged();
        const status got = call();
        const std::uint64_t lines = log::errors_logged() - before;
        check("misuse: " + what, got == want && (lines >= 1 || !logging),
              std::string("returned ") + drv::to_string(got) + " (want " + drv::to_string(want) + "), " +
                  std::to_string(lines) + " error lines");
    };
    drv::context& c = s.ctx;
    {
        // The device's counters after one signaled RDMA Write (query_stats).
        using dc = regmap::device_counter;
        drv::context::device_stats st{};
        const bool ok = c.query_stats(&st) == status::ok;
        auto at = [&](dc k) { return st[static_cast<std::size_t>(k)]; };
        std::ostringstream o;
        for (std::size_t i = 0; i < st.size(); ++i) o << regmap::kDeviceCounters[i].name << "=" << st[i] << " ";
        check("verbs: query_stats after one RDMA Write",
              ok && at(dc::wqes) == 1 && at(dc::cqes) == 1 && at(dc::terminates_sent) == 0 &&
                  at(dc::terminates_received) == 0 && at(dc::placed_bytes) == 0 &&
                  at(dc::connections_established) == 1 && at(dc::connections_failed) == 0 &&
                  at(dc::connections_rejected) == 0 && at(dc::commands) == 4,
              o.str());
        misuse("query_stats with null output", status::invalid_argument, [&] { return c.query_stats(nullptr); });
    }
    // Calls on a context that was never opened (a second one on the same bus: opening it would
    // reset the device, so it stays closed).
    drv::context closed(s.bus);
    std::uint32_t pd = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
    misuse("alloc_pd before open", status::bad_state, [&] { return closed.alloc_pd(&pd); });
    misuse("reg_mr before open", status::bad_state, [&] { return closed.reg_mr(1, s.buf, 4096, 1, &mr); });
    misuse("create_cq before open", status::bad_state, [&] { return closed.create_cq(16, &cq); });
    misuse("create_qp before open", status::bad_state, [&] { return closed.create_qp(1, s.cq, s.cq, 4, 4, &qp); });
    misuse("reject before open", status::bad_state, [&] { return closed.reject(18000, {}); });
    misuse("listen before open", status::bad_state, [&] { return closed.listen(18000); });
    misuse("listen on port 0", status::invalid_argument, [&] { return c.listen(0); });
    misuse("query_stats before open", status::bad_state, [&] {
        drv::context::device_stats st{};
        return closed.query_stats(&st);
    });
    misuse("post_send with another context's QP", status::bad_handle, [&] { return closed.post_send(s.qp, {}); });
    misuse("poll_cq with another context's CQ", status::bad_handle, [&] {
        std::vector<drv::work_completion> out;
        int n = 0;
        return closed.poll_cq(s.cq, 1, &out, &n);
    });
    misuse("open twice", status::bad_state, [&] { return c.open({}); });
    misuse("alloc_pd with null output", status::invalid_argument, [&] { return c.alloc_pd(nullptr); });
    // Memory regions.
    misuse("reg_mr with protection domain 0", status::bad_handle, [&] { return c.reg_mr(0, s.buf, 4096, 1, &mr); });
    misuse("reg_mr with an unallocated protection domain", status::bad_handle,
           [&] { return c.reg_mr(999, s.buf, 4096, 1, &mr); });
    misuse("reg_mr of zero bytes", status::invalid_argument, [&] { return c.reg_mr(s.pd, s.buf, 0, 1, &mr); });
    misuse("reg_mr with unknown access bits", status::invalid_argument,
           [&] { return c.reg_mr(s.pd, s.buf, 4096, 0x100, &mr); });
    misuse("reg_mr wrapping the address space", status::out_of_bounds,
           [&] { return c.reg_mr(s.pd, ~0ULL - 100, 4096, 1, &mr); });
    drv::memory_region unknown;
    unknown.stag = 0xdead00;
    misuse("dereg_mr of an unknown STag", status::bad_handle, [&] { return c.dereg_mr(unknown); });
    // Queues.
    misuse("create_cq of 3 entries", status::invalid_argument, [&] { return c.create_cq(3, &cq); });
    misuse("create_cq above the limit", status::invalid_argument, [&] { return c.create_cq(1u << 21, &cq); });
    misuse("create_cq with null output", status::invalid_argument, [&] { return c.create_cq(16, nullptr); });
    drv::completion_queue foreign_cq;
    misuse("create_qp with a foreign CQ", status::bad_handle,
           [&] { return c.create_qp(s.pd, &foreign_cq, s.cq, 4, 4, &qp); });
    misuse("create_qp with a null CQ", status::bad_handle, [&] { return c.create_qp(s.pd, nullptr, s.cq, 4, 4, &qp); });
    misuse("create_qp with a bad protection domain", status::bad_handle,
           [&] { return c.create_qp(999, s.cq, s.cq, 4, 4, &qp); });
    misuse("create_qp of depth 3", status::invalid_argument, [&] { return c.create_qp(s.pd, s.cq, s.cq, 3, 4, &qp); });
    misuse("create_qp above the depth limit", status::invalid_argument,
           [&] { return c.create_qp(s.pd, s.cq, s.cq, 4, 1u << 17, &qp); });
    // A second, never connected QP for the state checks.
    drv::queue_pair* fresh = nullptr;
    check("verbs: a second QP for the state checks", c.create_qp(s.pd, s.cq, s.cq, 4, 4, &fresh) == status::ok);
    drv::queue_pair foreign_qp;
    drv::send_wr w;
    w.wr_id = 77;
    w.local_addr = s.buf;
    w.length = 8;
    w.local_stag = s.a.stag;
    w.remote_addr = a.addr;
    w.remote_stag = a.stag;
    misuse("post_send with a null QP", status::bad_handle, [&] { return c.post_send(nullptr, w); });
    misuse("post_send with a foreign QP", status::bad_handle, [&] { return c.post_send(&foreign_qp, w); });
    if (fresh != nullptr) {
        misuse("post_send to a QP not in RTS", status::bad_state, [&] { return c.post_send(fresh, w); });
        misuse("disconnect of a QP not in RTS", status::bad_state, [&] { return c.disconnect(fresh); });
        misuse("connect to remote port 0", status::invalid_argument,
               [&] { return c.connect(fresh, a.ipv4, 0, 40001); });
        misuse("connect with ORD above 16383", status::invalid_argument, [&] {
            drv::read_limits l;
            l.ord = 0x4000;
            return c.connect(fresh, a.ipv4, a.port, 40001, l);
        });
        misuse("accept on port 0", status::invalid_argument, [&] { return c.accept(fresh, 0); });
    }
    misuse("connect of a QP already in RTS", status::bad_state, [&] { return c.connect(s.qp, a.ipv4, a.port, 40002); });
    misuse("accept on a QP already in RTS", status::bad_state, [&] { return c.accept(s.qp, 18600); });
    // Work requests the QP or the device cannot do.
    auto with = [&](auto change) {
        drv::send_wr x = w;
        change(x);
        return c.post_send(s.qp, x);
    };
    misuse("post_send with an unknown opcode", status::bad_opcode,
           [&] { return with([](drv::send_wr& x) { x.opcode = static_cast<regmap::wr_opcode>(0x42); }); });
    misuse("post_send of a masks slot as a work request", status::bad_opcode,
           [&] { return with([](drv::send_wr& x) { x.opcode = regmap::wr_opcode::atomic_masks; }); });
    misuse("post_send with masks on an RDMA Write", status::invalid_argument,
           [&] { return with([](drv::send_wr& x) { x.masked = true; }); });
    misuse("post_send of an atomic of 4 bytes", status::invalid_argument, [&] {
        return with([](drv::send_wr& x) {
            x.opcode = regmap::wr_opcode::atomic_fetch_add;
            x.length = 4;
        });
    });
    misuse("post_send of a misaligned atomic", status::invalid_argument, [&] {
        return with([](drv::send_wr& x) {
            x.opcode = regmap::wr_opcode::atomic_compare_swap;
            x.remote_addr += 4;
        });
    });
    misuse("post_send of inline data above the limit", status::invalid_argument, [&] {
        return with([](drv::send_wr& x) {
            x.inline_data = true;
            x.length = regmap::kMaxInlineData + 1;
        });
    });
    misuse("post_send of an inline RDMA Read", status::invalid_argument, [&] {
        return with([](drv::send_wr& x) {
            x.inline_data = true;
            x.opcode = regmap::wr_opcode::rdma_read;
        });
    });
    misuse("post_send from an unknown local STag", status::bad_handle,
           [&] { return with([](drv::send_wr& x) { x.local_stag = 0xbad00; }); });
    misuse("post_send beyond the end of its region", status::out_of_bounds, [&] {
        return with([&](drv::send_wr& x) {
            x.local_addr = s.buf + kClientBuffer - 4;
            x.length = 64;
        });
    });
    misuse("post_send before the start of its region", status::out_of_bounds,
           [&] { return with([&](drv::send_wr& x) { x.local_addr = s.buf - 8; }); });
    misuse("post_send of a huge length", status::out_of_bounds,
           [&] { return with([](drv::send_wr& x) { x.length = 0xffffffffu; }); });
    misuse("local invalidate of an unknown STag", status::bad_handle, [&] {
        return with([](drv::send_wr& x) {
            x.opcode = regmap::wr_opcode::local_invalidate;
            x.invalidate_stag = 0xbad00;
        });
    });
    drv::memory_region ro;
    check("verbs: a region without local write", c.reg_mr(s.pd, s.buf, 4096, acc::remote_read, &ro) == status::ok);
    misuse("RDMA Read into a region without local write", status::invalid_argument, [&] {
        return with([&](drv::send_wr& x) {
            x.opcode = regmap::wr_opcode::rdma_read;
            x.local_stag = ro.stag;
        });
    });
    drv::recv_wr r;
    r.addr = s.buf + 8192;
    r.length = 256;
    r.stag = s.a.stag;
    misuse("post_recv with a null QP", status::bad_handle, [&] { return c.post_recv(nullptr, r); });
    misuse("post_recv into a region without local write", status::invalid_argument, [&] {
        drv::recv_wr x = r;
        x.stag = ro.stag;
        x.addr = s.buf;
        return c.post_recv(s.qp, x);
    });
    misuse("post_recv beyond its region", status::out_of_bounds, [&] {
        drv::recv_wr x = r;
        x.addr = s.buf + kClientBuffer - 100;
        return c.post_recv(s.qp, x);
    });
    misuse("post_recv from an unknown STag", status::bad_handle, [&] {
        drv::recv_wr x = r;
        x.stag = 0xbad00;
        return c.post_recv(s.qp, x);
    });
    // Full rings: the client's receive queue has 4 entries; the send queue 64, and unsignaled
    // work requests retire only with a signaled one, so 64 of them fill it until one completes.
    bool posted = true;
    for (int i = 0; i < 4; ++i) posted = posted && c.post_recv(s.qp, r) == status::ok;
    check("verbs: four receives fill the receive queue", posted);
    misuse("post_recv to a full receive queue", status::ring_full, [&] { return c.post_recv(s.qp, r); });
    posted = true;
    for (int i = 0; i < 64; ++i) posted = posted && with([](drv::send_wr& x) { x.signaled = false; }) == status::ok;
    check("verbs: 64 unsignaled RDMA Writes fill the send queue", posted);
    misuse("post_send to a full send queue", status::ring_full, [&] { return c.post_send(s.qp, w); });
    // Destroys while in use, polling arguments.
    misuse("destroy_qp of a QP in RTS", status::bad_state, [&] { return c.destroy_qp(s.qp); });
    misuse("destroy_cq of a CQ in use", status::bad_state, [&] { return c.destroy_cq(s.cq); });
    misuse("poll_cq of at most 0", status::invalid_argument, [&] {
        std::vector<drv::work_completion> out;
        int n = 0;
        return c.poll_cq(s.cq, 0, &out, &n);
    });
    misuse("poll_cq with null output", status::invalid_argument, [&] {
        int n = 0;
        return c.poll_cq(s.cq, 4, nullptr, &n);
    });
    misuse("query_qp with null output", status::invalid_argument, [&] { return c.query_qp(s.qp, nullptr); });
    misuse("wait_cq with a foreign CQ", status::bad_handle, [&] { return c.wait_cq(&foreign_cq, 1000); });
    // Error state: no more work, receives included; then destroy, and destroy again.
    check("verbs: modify_qp_to_error", c.modify_qp_to_error(s.qp) == status::ok);
    misuse("post_send to a QP in error", status::bad_state, [&] { return c.post_send(s.qp, w); });
    misuse("post_recv to a QP in error", status::bad_state, [&] { return c.post_recv(s.qp, r); });
    misuse("disconnect of a QP in error", status::bad_state, [&] { return c.disconnect(s.qp); });
    check("verbs: the QP in error is destroyed", c.destroy_qp(s.qp) == status::ok);
    misuse("destroy_qp twice", status::bad_handle, [&] { return c.destroy_qp(s.qp); });
    misuse("query_qp of a destroyed QP", status::bad_handle, [&] {
        regmap::qp_state st;
        return c.query_qp(s.qp, &st);
    });
    if (fresh != nullptr) check("verbs: the idle QP is destroyed", c.destroy_qp(fresh) == status::ok);
    check("verbs: the CQ, now unused, is destroyed", c.destroy_cq(s.cq) == status::ok);
    misuse("destroy_cq twice", status::bad_handle, [&] { return c.destroy_cq(s.cq); });
    misuse("poll_cq of a destroyed CQ", status::bad_handle, [&] {
        std::vector<drv::work_completion> out;
        int n = 0;
        return c.poll_cq(s.cq, 4, &out, &n);
    });
    check("verbs: dereg_mr of a real region", c.dereg_mr(ro) == status::ok);
    misuse("dereg_mr twice", status::bad_handle, [&] { return c.dereg_mr(ro); });
}

}  // namespace rnic::platform
