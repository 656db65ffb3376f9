// The probes of RDMAP and DDP rules (workload.type = probe): the error probes, each provoking one
// Terminate (RFC 5040 §7, RFC 5041 §7.2, RFC 7306 §8), and the semantics probes (write_imm,
// zero_based, masked_atomics, response_order, abort, qp_states); the catalogue and the dispatch are
// in probe.cpp.
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

void probe::server_error_probe(side& s) {
    const std::string& p = cfg_.probe;
    if (p == "local_invalidate") {
        // Once the client's good Write is in, invalidate A here, in send-queue order.
        oob_.wait_for("baseline-done");
        drv::send_wr inv;
        inv.wr_id = 77;
        inv.opcode = regmap::wr_opcode::local_invalidate;
        inv.invalidate_stag = s.a.stag;
        check("server: local invalidate posted", s.ctx.post_send(s.qp, inv) == drv::status::ok);
        drv::work_completion wc;
        const bool done = poll_for(
            s, s.cq, [](const drv::work_completion& w) { return w.wr_id == 77; }, kBudgetPs, &wc);
        check("server: local invalidate completed", done && wc.status == regmap::cqe_status::success,
              done ? regmap::to_string(wc.status) : "no completion");
        oob_.publish("invalidated", {});
    }
    if (p == "send_invalidate") {
        drv::work_completion wc;
        const bool got = poll_for(
            s, s.cq, [](const drv::work_completion& w) { return w.opcode == drv::wc_opcode::recv; }, kBudgetPs, &wc);
        check("server: Send with Invalidate delivered and STag reported",
              got && wc.status == regmap::cqe_status::success && wc.invalidated_stag == s.a.stag,
              got ? "invalidated STag 0x" + std::to_string(wc.invalidated_stag) : "no receive completion");
        oob_.publish("invalidated", {});
    }
    // The server's RNIC answers the bad message with a Terminate and reports the QP error.
    drv::work_completion err;
    const bool seen = poll_for(
        s, s.cq, [](const drv::work_completion& w) { return w.opcode == drv::wc_opcode::qp_error; }, kBudgetPs, &err);
    const bool term_ok = seen && err.terminate.valid && !err.terminate.received &&
                         err.terminate.layer == expect_->layer && err.terminate.etype == expect_->etype &&
                         err.terminate.code == expect_->code;
    check("server: QP error completion with the Terminate it sent", term_ok,
          seen ? term_text(err.terminate) + ", status " + regmap::to_string(err.status) : "no QP error completion");
    regmap::qp_state state = regmap::qp_state::rts;
    s.ctx.query_qp(s.qp, &state);
    check("server: QP in Error", state == regmap::qp_state::error, regmap::to_string(state));
    // Memory: what it held before, except the client's good Write (and a delivered Send).
    std::vector<std::uint8_t> expected = pattern(cfg_.seed, 0x5e4e, kBuffer);
    const std::vector<std::uint8_t> baseline = pattern(cfg_.seed, 0xba5e, kBaseline);
    std::memcpy(expected.data(), baseline.data(), baseline.size());
    if (p == "send_invalidate") std::memcpy(expected.data() + kRecvOff, baseline.data(), 64);
    std::vector<std::uint8_t> now(kBuffer);
    s.bus.mem_read(s.buf, now.data(), now.size());
    std::uint64_t diff = 0, first = 0;
    for (std::uint64_t i = 0; i < kBuffer; ++i) {
        if (now[i] != expected[i] && diff++ == 0) first = i;
    }
    check("server: target memory unchanged", diff == 0,
          diff == 0 ? "" : std::to_string(diff) + " bytes differ, first at offset " + std::to_string(first));
}

void probe::server_write_imm(side& s) {
    // Each Immediate Data completion must find its Write's bytes already in memory (RFC 7306 §7).
    const std::uint32_t n = static_cast<std::uint32_t>(oob_.wait_for("imm-count").addr);
    std::uint32_t in_order = 0, data_ok = 0;
    std::string detail;
    for (std::uint32_t i = 0; i < n; ++i) {
        drv::work_completion wc;
        if (!poll_for(
                s, s.cq, [](const drv::work_completion& w) { return w.opcode != drv::wc_opcode::qp_error; }, kBudgetPs,
                &wc)) {
            detail = "no completion for Immediate Data " + std::to_string(i);
            break;
        }
        const remote_buffer w = oob_.wait_for("imm-" + std::to_string(i));  // what the client wrote for it
        if (wc.status == regmap::cqe_status::success && wc.opcode == drv::wc_opcode::recv_imm && wc.with_imm &&
            wc.imm_data == (0xabcd000000000000ULL | i) && wc.byte_len == 0) {
            ++in_order;
        } else if (detail.empty()) {
            detail = "completion " + std::to_string(i) + ": imm 0x" + std::to_string(wc.imm_data) + " status " +
                     regmap::to_string(wc.status);
        }
        const std::vector<std::uint8_t> want = pattern(cfg_.seed, 0x1000 + i, w.length);
        std::vector<std::uint8_t> got(w.length);
        s.bus.mem_read(s.buf + w.addr, got.data(), got.size());
        if (got == want)
            ++data_ok;
        else if (detail.empty())
            detail = "Write " + std::to_string(i) + " not fully placed at its Immediate Data";
    }
    check("server: Immediate Data completions in order with their values", in_order == n,
          std::to_string(in_order) + "/" + std::to_string(n));
    check("server: each Write placed before its Immediate Data completed", data_ok == n,
          detail.empty() ? std::to_string(data_ok) + "/" + std::to_string(n) : detail);
    drv::work_completion last;
    const bool got = poll_for(
        s, s.cq, [](const drv::work_completion&) { return true; }, kBudgetPs, &last);
    check("server: Immediate Data with SE completes a receive with the solicited flag",
          got && last.opcode == drv::wc_opcode::recv_imm && last.solicited && last.imm_data == 0x5e5e5e5e5e5e5e5eULL);
}

void probe::server_masked_atomics(side& s) {
    // Targets: word 0 for a lane-wise FetchAdd, word 1 for masked CmpSwaps, word 2 for a plain add.
    std::uint8_t init[24];
    proto::put_le64(init, 0x00000001ffffffffULL);
    proto::put_le64(init + 8, 0x1111222233334444ULL);
    proto::put_le64(init + 16, 0);
    s.bus.mem_write(s.buf + kAtomicOff, init, sizeof init);
    oob_.publish("atomics-ready", {});
    oob_.wait_for("atomics-done");
    std::uint8_t now[24];
    s.bus.mem_read(s.buf + kAtomicOff, now, sizeof now);
    // RFC 7306 §5.1: add mask bit 31 cuts the carry between the two 32-bit lanes.
    check("server: masked FetchAdd result in memory", proto::get_le64(now) == 0x0000000200000000ULL);
    check("server: masked CmpSwap swapped the upper half only", proto::get_le64(now + 8) == 0xaaaabbbb33334444ULL);
    check("server: plain FetchAdd result in memory", proto::get_le64(now + 16) == 5);
}

void probe::server_qp_states(side& s) {
    // The client closes gracefully: here the stream ends and the QP leaves RTS without a Terminate.
    drv::work_completion err;
    const bool seen = poll_for(
        s, s.cq, [](const drv::work_completion& w) { return w.opcode == drv::wc_opcode::qp_error; }, kBudgetPs, &err);
    check("server: stream close reported as a QP error completion without a Terminate", seen && !err.terminate.valid,
          seen ? term_text(err.terminate) : "no QP error completion");
    regmap::qp_state state = regmap::qp_state::rts;
    s.ctx.query_qp(s.qp, &state);
    check("server: QP in Error after the peer closed", state == regmap::qp_state::error, regmap::to_string(state));
    check("server: CQ in use cannot be destroyed", s.ctx.destroy_cq(s.cq) == drv::status::bad_state);
    check("server: QP destroyed", s.ctx.destroy_qp(s.qp) == drv::status::ok);
    check("server: CQ destroyed", s.ctx.destroy_cq(s.cq) == drv::status::ok);
}

void probe::client_error_probe(side& s, const remote_buffer& a) {
    const std::string& p = cfg_.probe;
    // A ULPDU built here and sent verbatim (test mode): for errors no correct driver can commit.
    auto raw = [&](const ddp::header& h, const std::uint8_t* body, std::size_t body_len) {
        std::vector<std::uint8_t> u(h.size() + body_len);
        ddp::encode(h, u.data());
        if (body_len > 0) std::memcpy(u.data() + h.size(), body, body_len);
        const std::uint64_t at = s.buf + 512 * 1024;
        s.bus.mem_write(at, u.data(), u.size());
        drv::send_wr r;
        r.wr_id = 2;
        r.opcode = regmap::wr_opcode::raw_ulpdu;
        r.local_addr = at;
        r.length = static_cast<std::uint32_t>(u.size());
        r.local_stag = s.a.stag;
        return r;
    };
    std::vector<drv::send_wr> wrs;
    drv::send_wr w;
    w.wr_id = 2;
    w.local_addr = s.buf;
    w.length = 64;
    w.local_stag = s.a.stag;
    w.remote_addr = a.addr + 8192;
    w.remote_stag = a.stag;
    if (p == "invalid_stag") {
        w.remote_stag = a.stag ^ 0xffu;
        wrs.push_back(w);
    } else if (p == "out_of_bounds") {
        w.remote_addr = a.addr + a.length - 8;
        wrs.push_back(w);
    } else if (p == "pd_mismatch" || p == "access_rights") {
        const remote_buffer other = oob_.wait_for(p == "pd_mismatch" ? "server-c" : "server-b");
        w.remote_addr = other.addr;
        w.remote_stag = other.stag;
        wrs.push_back(w);
    } else if (p == "read_invalid_stag") {
        w.opcode = regmap::wr_opcode::rdma_read;
        w.local_addr = s.buf + 64 * 1024;
        w.remote_stag = a.stag ^ 0xffu;
        wrs.push_back(w);
    } else if (p == "misaligned_atomic") {
        // The driver refuses this itself; the raw ULPDU shows what a peer's RNIC must do.
        drv::send_wr bad = w;
        bad.opcode = regmap::wr_opcode::atomic_fetch_add;
        bad.length = 8;
        bad.remote_addr = a.addr + kAtomicOff + 4;
        check("client: the driver refuses a misaligned atomic",
              s.ctx.post_send(s.qp, bad) == drv::status::invalid_argument);
        ddp::header h;
        h.tagged = false;
        h.opcode = ddp::opcode::atomic_request;
        h.queue = ddp::kQueueReadRequest;
        h.msn = 1;
        ddp::atomic_request req;
        req.op = ddp::atomic_opcode::fetch_add;
        req.request_id = 9;
        req.stag = a.stag;
        req.tagged_offset = a.addr + kAtomicOff + 4;
        req.add_or_swap_data = 1;
        std::uint8_t body[ddp::kAtomicRequestSize];
        ddp::encode(req, body);
        wrs.push_back(raw(h, body, sizeof body));
    } else if (p == "unexpected_opcode" || p == "invalid_queue" || p == "msn_out_of_range") {
        ddp::header h;
        h.tagged = false;
        h.opcode = p == "unexpected_opcode" ? static_cast<ddp::opcode>(12) : ddp::opcode::send;  // 12: reserved
        h.queue = p == "invalid_queue" ? 6 : ddp::kQueueSend;
        h.msn = p == "msn_out_of_range" ? 5 : 1;
        const std::uint8_t body[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        wrs.push_back(raw(h, body, sizeof body));
    } else if (p == "no_receive_buffer" || p == "message_too_long") {
        w.opcode = regmap::wr_opcode::send;
        w.length = p == "message_too_long" ? 256 : 64;
        wrs.push_back(w);
    } else if (p == "too_many_reads") {
        for (int i = 0; i < 8; ++i) {
            w.wr_id = 2 + static_cast<std::uint64_t>(i);
            w.opcode = regmap::wr_opcode::rdma_read;
            w.local_addr = s.buf + 64 * 1024 * static_cast<std::uint64_t>(i + 1);
            w.length = 32 * 1024;
            w.remote_addr = a.addr + 32 * 1024;
            wrs.push_back(w);
        }
    } else if (p == "invalidate_bad_stag") {
        w.opcode = regmap::wr_opcode::send;
        w.length = 0;  // nothing to place: only the invalidation can fail
        w.invalidate_stag = 0x00abcd42;
        wrs.push_back(w);
    } else if (p == "local_invalidate" || p == "send_invalidate") {
        if (p == "send_invalidate") {
            drv::send_wr si = w;
            si.opcode = regmap::wr_opcode::send;
            si.invalidate_stag = a.stag;
            si.wr_id = 3;
            check("client: Send with Invalidate posted", s.ctx.post_send(s.qp, si) == drv::status::ok);
        }
        oob_.wait_for("invalidated");
        wrs.push_back(w);  // a Write to the STag that is no longer valid
    }
    for (const drv::send_wr& wr : wrs) {
        if (s.ctx.post_send(s.qp, wr) != drv::status::ok) {
            check("client: bad work request posted", false);
            return;
        }
    }
    drv::send_wr after = w;
    after.opcode = regmap::wr_opcode::rdma_write;
    after.remote_stag = a.stag;
    after.invalidate_stag = 0;
    expect_peer_terminate(s, after);
}

void probe::expect_peer_terminate(side& s, drv::send_wr after) {
    // The peer's Terminate comes back: the QP error completion carries it.
    drv::work_completion err;
    const bool seen = poll_for(
        s, s.cq, [](const drv::work_completion& c) { return c.opcode == drv::wc_opcode::qp_error; }, kBudgetPs, &err);
    const bool term_ok = seen && err.terminate.received && err.terminate.layer == expect_->layer &&
                         err.terminate.etype == expect_->etype && err.terminate.code == expect_->code;
    check("client: QP error completion with the peer's Terminate", term_ok,
          seen ? term_text(err.terminate) + ", status " + regmap::to_string(err.status) : "no QP error completion");
    regmap::qp_state state = regmap::qp_state::rts;
    s.ctx.query_qp(s.qp, &state);
    check("client: QP in Error", state == regmap::qp_state::error, regmap::to_string(state));
    check("client: posting to a QP in Error is refused", s.ctx.post_send(s.qp, after) == drv::status::bad_state);
}

void probe::client_write_imm(side& s, const remote_buffer& a) {
    // Writes of sizes across the segment and FPDU boundaries, each with Immediate Data right behind it.
    static const std::uint32_t sizes[] = {1, 7, 64, 511, 512, 1000, 1460, 4096, 9000, 20000};
    const std::uint32_t n = 20;
    oob_.publish("imm-count", {0, 0, 0, n, 0});
    std::uint64_t off = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t len = sizes[i % (sizeof sizes / sizeof sizes[0])];
        const std::vector<std::uint8_t> data = pattern(cfg_.seed, 0x1000 + i, len);
        const std::uint64_t local = s.buf + 8192 + off;
        s.bus.mem_write(local, data.data(), data.size());
        drv::send_wr w;
        w.wr_id = 100 + i;
        w.opcode = regmap::wr_opcode::rdma_write_with_imm;
        w.local_addr = local;
        w.length = len;
        w.local_stag = s.a.stag;
        w.remote_addr = a.addr + 8192 + off;
        w.remote_stag = a.stag;
        w.imm_data = 0xabcd000000000000ULL | i;
        w.signaled = i + 1 == n;
        oob_.publish("imm-" + std::to_string(i), {0, 0, 0, 8192 + off, len});
        while (s.ctx.post_send(s.qp, w) == drv::status::ring_full) {
            poll_for(
                s, s.cq, [](const drv::work_completion&) { return true; }, 1'000'000, nullptr);
        }
        off += (len + 63) / 64 * 64;
    }
    drv::send_wr imm;
    imm.wr_id = 999;
    imm.opcode = regmap::wr_opcode::immediate_data;
    imm.imm_data = 0x5e5e5e5e5e5e5e5eULL;
    imm.solicited = true;
    check("client: Immediate Data with SE posted", s.ctx.post_send(s.qp, imm) == drv::status::ok);
    drv::work_completion wc;
    const bool done = poll_for(
        s, s.cq, [](const drv::work_completion& c) { return c.wr_id == 999; }, kBudgetPs, &wc);
    check("client: Writes with Immediate and Immediate Data complete", done && wc.status == regmap::cqe_status::success,
          done ? regmap::to_string(wc.status) : "no completion");
}

void probe::client_zero_based(side& s) {
    // Zero-based region Z: the peer addresses it from tagged offset 0 (RFC 5040 §2.2).
    const remote_buffer z = oob_.wait_for("server-z");
    check("client: zero-based region advertised with TO base 0", z.addr == 0);
    const std::vector<std::uint8_t> data = pattern(cfg_.seed, 0x2e40, 8192);
    s.bus.mem_write(s.buf + 16384, data.data(), data.size());
    drv::send_wr w;
    w.wr_id = 10;
    w.local_addr = s.buf + 16384;
    w.length = 8192;
    w.local_stag = s.a.stag;
    w.remote_addr = 100;  // TO 100 of Z
    w.remote_stag = z.stag;
    drv::send_wr r = w;
    r.wr_id = 11;
    r.opcode = regmap::wr_opcode::rdma_read;
    r.local_addr = s.buf + 65536;
    drv::work_completion wc;
    const bool ok = s.ctx.post_send(s.qp, w) == drv::status::ok && s.ctx.post_send(s.qp, r) == drv::status::ok &&
                    poll_for(
                        s, s.cq, [](const drv::work_completion& c) { return c.wr_id == 11; }, kBudgetPs, &wc) &&
                    wc.status == regmap::cqe_status::success;
    check("client: Write and Read at zero-based offsets complete", ok);
    std::vector<std::uint8_t> back(8192);
    s.bus.mem_read(s.buf + 65536, back.data(), back.size());
    check("client: the Read returns what the Write placed", back == data);
}

void probe::client_masked_atomics(side& s, const remote_buffer& a) {
    oob_.wait_for("atomics-ready");
    struct op {
        regmap::wr_opcode opcode;
        std::uint64_t offset, operand, compare, mask0, mask1;
        bool masked;
        std::uint64_t expect_original;
    };
    const op ops[] = {
        // FetchAdd of 1 to each 32-bit lane of 0x00000001_ffffffff: the low lane wraps to 0 without
        // carrying into the high lane (add mask bit 31).
        {regmap::wr_opcode::atomic_fetch_add, 0, 0x0000000100000001ULL, 0, 0x80000000ULL, 0, true,
         0x00000001ffffffffULL},
        // CmpSwap comparing the low half only and swapping the high half only: matches, swaps.
        {regmap::wr_opcode::atomic_compare_swap, 8, 0xaaaabbbb00000000ULL, 0x0000000033334444ULL, 0xffffffff00000000ULL,
         0x00000000ffffffffULL, true, 0x1111222233334444ULL},
        // Compares the low half with 0: no match, no swap.
        {regmap::wr_opcode::atomic_compare_swap, 8, 0x12345678ffffffffULL, 0, ~0ULL, 0x00000000ffffffffULL, true,
         0xaaaabbbb33334444ULL},
        {regmap::wr_opcode::atomic_fetch_add, 16, 5, 0, 0, 0, false, 0},
    };
    int i = 0;
    for (const op& o : ops) {
        drv::send_wr w;
        w.wr_id = 50 + static_cast<std::uint64_t>(i);
        w.opcode = o.opcode;
        w.local_addr = s.buf + 8192 + 8 * static_cast<std::uint64_t>(i);
        w.length = 8;
        w.local_stag = s.a.stag;
        w.remote_addr = a.addr + kAtomicOff + o.offset;
        w.remote_stag = a.stag;
        w.operand = o.operand;
        w.compare = o.compare;
        w.masked = o.masked;
        w.add_or_swap_mask = o.mask0;
        w.compare_mask = o.mask1;
        if (s.ctx.post_send(s.qp, w) != drv::status::ok) check("client: atomic posted", false);
        ++i;
    }
    drv::work_completion wc;
    const bool done = poll_for(
        s, s.cq, [](const drv::work_completion& c) { return c.wr_id == 53; }, kBudgetPs, &wc);
    check("client: masked and plain atomics complete", done && wc.status == regmap::cqe_status::success);
    std::uint8_t got[32];
    s.bus.mem_read(s.buf + 8192, got, sizeof got);
    for (int k = 0; k < 4; ++k) {
        const std::uint64_t v = proto::get_le64(got + 8 * k);
        check(
            "client: atomic " + std::to_string(k) + " returned the original value", v == ops[k].expect_original,
            "0x" + [&] {
                std::ostringstream o;
                o << std::hex << v;
                return o.str();
            }());
    }
    oob_.publish("atomics-done", {});
}

void probe::client_response_order(side& s, const remote_buffer& a) {
    // Atomics and Reads interleaved on one QP: the responder answers them in request order (one
    // queue for both, RFC 7306 §5.2.1 rule 5 and §7), and the requester completes them in posting order.
    const regmap::wr_opcode kinds[] = {regmap::wr_opcode::atomic_fetch_add, regmap::wr_opcode::rdma_read,
                                       regmap::wr_opcode::atomic_compare_swap, regmap::wr_opcode::rdma_read,
                                       regmap::wr_opcode::atomic_fetch_add};
    for (std::uint64_t i = 0; i < 5; ++i) {
        drv::send_wr w;
        w.wr_id = 30 + i;
        w.opcode = kinds[i];
        const bool atomic = w.opcode != regmap::wr_opcode::rdma_read;
        w.local_addr = s.buf + 16384 + 16384 * i;
        w.length = atomic ? 8 : 12000;
        w.local_stag = s.a.stag;
        w.remote_addr = atomic ? a.addr + kAtomicOff : a.addr + 8192;
        w.remote_stag = a.stag;
        w.operand = 1;
        w.compare = ~0ULL;  // never equal: the CmpSwap only reads
        if (s.ctx.post_send(s.qp, w) != drv::status::ok) check("client: request posted", false);
    }
    std::string order;
    bool all_ok = true;
    for (int i = 0; i < 5; ++i) {
        drv::work_completion wc;
        if (!poll_for(
                s, s.cq, [](const drv::work_completion&) { return true; }, kBudgetPs, &wc))
            break;
        order += (order.empty() ? "" : ",") + std::to_string(wc.wr_id);
        all_ok = all_ok && wc.status == regmap::cqe_status::success;
    }
    check("client: Reads and atomics complete in posting order", order == "30,31,32,33,34" && all_ok, order);
    std::uint8_t got[8];
    s.bus.mem_read(s.buf + 16384 + 16384 * 2, got, 8);
    check("client: the CmpSwap between the FetchAdds saw the first one's result", proto::get_le64(got) == 1);
}

void probe::client_abort(side& s, const remote_buffer& a) {
    // Large Writes posted, then the QP is moved to Error at once: whatever has not completed is
    // flushed, every work request gets exactly one completion, and the peer sees the stream close.
    for (std::uint64_t i = 0; i < 8; ++i) {
        drv::send_wr w;
        w.wr_id = 60 + i;
        w.local_addr = s.buf;
        w.length = 64 * 1024;
        w.local_stag = s.a.stag;
        w.remote_addr = a.addr + 8192;
        w.remote_stag = a.stag;
        s.ctx.post_send(s.qp, w);
    }
    check("client: modify to Error accepted", s.ctx.modify_qp_to_error(s.qp) == drv::status::ok);
    int done = 0, flushed = 0;
    std::string order;
    for (int i = 0; i < 8; ++i) {
        drv::work_completion wc;
        if (!poll_for(
                s, s.cq, [](const drv::work_completion& c) { return c.opcode != drv::wc_opcode::qp_error; }, kBudgetPs,
                &wc)) {
            break;
        }
        ++done;
        flushed += wc.status == regmap::cqe_status::flushed;
        order += (order.empty() ? "" : ",") + std::to_string(wc.wr_id);
    }
    check("client: every posted Write completes exactly once, in order",
          done == 8 && order == "60,61,62,63,64,65,66,67", order);
    check("client: the Writes cut off by the abort are flushed", flushed >= 1, std::to_string(flushed) + " flushed");
    regmap::qp_state state = regmap::qp_state::rts;
    s.ctx.query_qp(s.qp, &state);
    check("client: QP in Error", state == regmap::qp_state::error, regmap::to_string(state));
}

void probe::client_qp_states(side& s, const remote_buffer& a) {
    regmap::qp_state state = regmap::qp_state::idle;
    check("client: query says RTS", s.ctx.query_qp(s.qp, &state) == drv::status::ok && state == regmap::qp_state::rts,
          regmap::to_string(state));
    const std::vector<std::uint8_t> data = pattern(cfg_.seed, 0xc105e, 32768);
    s.bus.mem_write(s.buf + 8192, data.data(), data.size());
    for (int i = 0; i < 4; ++i) {
        drv::send_wr w;
        w.wr_id = 20 + static_cast<std::uint64_t>(i);
        w.local_addr = s.buf + 8192 + 8192 * static_cast<std::uint64_t>(i);
        w.length = 8192;
        w.local_stag = s.a.stag;
        w.remote_addr = a.addr + 8192 + 8192 * static_cast<std::uint64_t>(i);
        w.remote_stag = a.stag;
        s.ctx.post_send(s.qp, w);
    }
    // Graceful: the Writes already posted still complete, then the stream closes.
    check("client: disconnect accepted", s.ctx.disconnect(s.qp) == drv::status::ok);
    int good = 0;
    for (int i = 0; i < 4; ++i) {
        drv::work_completion wc;
        if (poll_for(
                s, s.cq, [](const drv::work_completion& c) { return c.wr_id >= 20 && c.wr_id < 24; }, kBudgetPs, &wc) &&
            wc.status == regmap::cqe_status::success) {
            ++good;
        }
    }
    check("client: Writes posted before the close complete successfully", good == 4, std::to_string(good) + "/4");
    const std::uint64_t deadline = s.bus.now_ps() + kBudgetPs;
    while (s.bus.now_ps() < deadline && s.ctx.query_qp(s.qp, &state) == drv::status::ok &&
           state != regmap::qp_state::idle) {
        s.bus.spend(1'000'000);
    }
    check("client: QP Idle after the graceful close", state == regmap::qp_state::idle, regmap::to_string(state));
    drv::send_wr w;
    w.local_addr = s.buf;
    w.length = 8;
    w.local_stag = s.a.stag;
    check("client: posting after the close is refused", s.ctx.post_send(s.qp, w) == drv::status::bad_state);
    check("client: CQ in use cannot be destroyed", s.ctx.destroy_cq(s.cq) == drv::status::bad_state);
    drv::queue_pair* qp = s.qp;
    check("client: QP destroyed", s.ctx.destroy_qp(qp) == drv::status::ok);
    check("client: destroyed QP handle is refused", s.ctx.destroy_qp(qp) == drv::status::bad_handle);
    check("client: CQ destroyed", s.ctx.destroy_cq(s.cq) == drv::status::ok);
}

}  // namespace rnic::platform
