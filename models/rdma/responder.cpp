#include "rdma/responder.h"

#include "core/mem_access.h"
#include "core/sim_log.h"
#include "host/atomic_op_ext.h"
#include "proto/bytes.h"
#include "rdma/access_checks.h"
#include "rdma/atomic_alu.h"
#include "rdma/qp_lifecycle.h"
#include "rdma/transmit_path.h"

namespace rnic {

namespace ddp = proto::ddp;
using proto::get_le64;
using proto::put_le64;
using qp_state = regmap::qp_state;

responder::responder(const engine_resources& res, transmit_path& transmit, qp_lifecycle& lifecycle)
    : engine_part(res), transmit_(transmit), lifecycle_(lifecycle) {}

// ---- requests (receive side) -----------------------------------------------------------------

std::optional<request_refusal> responder::accept_read_request(qp_context& qp, const ddp::header& h,
                                                              const std::uint8_t* ulpdu, std::size_t len,
                                                              sc_core::sc_time& delay) {
    std::string error;
    const auto rr = ddp::decode_read_request(ulpdu + ddp::kUntaggedHeaderSize, len - ddp::kUntaggedHeaderSize, &error);
    if (!rr) {
        return request_refusal{ddp::term_layer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaUnspecified,
                               error};
    }
    if (qp.responses.size() >= qp.ird) {
        // More Reads in flight than the IRD we offered (RFC 5040 §6.1, RFC 6581): queue 1 has no
        // free untagged buffer for this request, a DDP untagged-buffer error (RFC 5041 §7.2).
        return request_refusal{ddp::term_layer::ddp, ddp::term::kDdpUntaggedBuffer, ddp::term::kDdpUntaggedNoBuffer,
                               "more outstanding Read Requests than IRD"};
    }
    if (rr->size == 0) {
        // RFC 5040 §5.2.1: a zero-length Read is not validated and gets a zero-length Response.
        qp.read_req_msn_rx = h.msn;
        qp.responses.push_back({rr->sink_stag, rr->sink_to, 0, 0});
        res_.work_event.notify(delay);
        return std::nullopt;
    }
    res_.contexts->access_stag(rr->src_stag, false, context_if::side::rx, delay, &res_.rx_pipe);
    const mr_context* src = res_.contexts->lookup_stag(rr->src_stag);
    const access_check chk = check_tagged_access(src, qp.cfg.pd, rr->src_to, rr->size, regmap::mr_access::remote_read);
    if (!chk.ok) {
        // A Read Request's source is checked by the RDMAP layer (RFC 5040 §7.2).
        return request_refusal{ddp::term_layer::rdma, ddp::term::kRdmaRemoteProtection, rdmap_protection_code(chk),
                               chk.what};
    }
    qp.read_req_msn_rx = h.msn;
    if (src->cfg.pages != nullptr) {
        // A page-list source is read page by page when each segment goes out (transmit_path::emit).
        qp.responses.push_back({rr->sink_stag, rr->sink_to, chk.region_off, rr->size, src->cfg.pages});
    } else {
        qp.responses.push_back({rr->sink_stag, rr->sink_to, chk.host_addr, rr->size});
    }
    res_.work_event.notify(delay);
    return std::nullopt;
}

std::optional<request_refusal> responder::execute_atomic(qp_context& qp, const ddp::header& h,
                                                         const std::uint8_t* ulpdu, std::size_t len,
                                                         sc_core::sc_time& delay) {
    std::string error;
    const auto req =
        ddp::decode_atomic_request(ulpdu + ddp::kUntaggedHeaderSize, len - ddp::kUntaggedHeaderSize, &error);
    if (!req || (req->op != ddp::atomic_opcode::fetch_add && req->op != ddp::atomic_opcode::compare_swap)) {
        // RFC 7306 §5.2.1 rule 4: an unsupported AOpCode is an error surfaced to the requester.
        return request_refusal{ddp::term_layer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaUnexpectedOpcode,
                               req ? "unsupported atomic opcode" : error};
    }
    if (req->tagged_offset % 8 != 0) {
        // RFC 7306 §8.2: misaligned target - Remote Operation Error, catastrophic for the stream;
        // the target memory is not touched.
        return request_refusal{ddp::term_layer::rdma, ddp::term::kRdmaRemoteOperation,
                               ddp::term::kRdmaCatastrophicStream, "target not 64-bit aligned"};
    }
    if (qp.responses.size() >= qp.ird) {
        // Atomic Requests share queue 1 and the IRD with Reads (RFC 7306 §5.2.1).
        return request_refusal{ddp::term_layer::ddp, ddp::term::kDdpUntaggedBuffer, ddp::term::kDdpUntaggedNoBuffer,
                               "more outstanding requests than IRD"};
    }
    res_.contexts->access_stag(req->stag, false, context_if::side::rx, delay, &res_.rx_pipe);
    const access_check chk = check_tagged_access(res_.contexts->lookup_stag(req->stag), qp.cfg.pd, req->tagged_offset,
                                                 8, regmap::mr_access::remote_atomic);
    if (!chk.ok) {
        return request_refusal{ddp::term_layer::rdma, ddp::term::kRdmaRemoteProtection, rdmap_protection_code(chk),
                               chk.what};
    }
    if (!chk.map.contiguous(chk.region_off, 8)) {
        // reg_mr_pages keeps an aligned target inside one page (regmap.h); a region that broke the rule is
        // refused here rather than half-updated.
        return request_refusal{ddp::term_layer::rdma, ddp::term::kRdmaLocalCatastrophic,
                               ddp::term::kRdmaCatastrophicStream, "atomic target crosses a page of its region"};
    }
    std::uint64_t original = 0;
    if (!perform_atomic(chk.host_addr, *req, &original, delay)) {
        return request_refusal{ddp::term_layer::rdma, ddp::term::kRdmaLocalCatastrophic,
                               ddp::term::kRdmaCatastrophicStream, "host refused the atomic's memory access"};
    }
    ++counters().atomics_executed;
    qp.read_req_msn_rx = h.msn;
    read_response_job job{};
    job.atomic = true;
    job.request_id = req->request_id;
    job.original = original;
    qp.responses.push_back(job);
    res_.work_event.notify(delay);
    return std::nullopt;
}

bool responder::perform_atomic(std::uint64_t addr, const ddp::atomic_request& req, std::uint64_t* original,
                               sc_core::sc_time& delay) {
    const bool add = req.op == ddp::atomic_opcode::fetch_add;
    const auto compute = [&](std::uint64_t v) {
        return add ? atomic::fetch_add(v, req.add_or_swap_data, req.add_or_swap_mask)
                   : atomic::compare_swap(v, req.add_or_swap_data, req.add_or_swap_mask, req.compare_data,
                                          req.compare_mask);
    };
    std::uint8_t bytes[8];
    if (!params().pcie_atomic_ops) {
        // Read-modify-write under the unit's lock: nothing else of this RNIC touches host memory
        // between the read and the write, so the operation is atomic across all QPs of the RNIC
        // (RFC 7306 §5). One receive call performs both, which keeps the data right; the lock, held
        // from the read's issue until the write has crossed the bus (a later read is ordered behind
        // it), keeps the time right: the next RMW's read may not start while this one is in flight.
        // Host memory holds the value little-endian.
        const sc_core::sc_time now = sim_now();
        if (rmw_lock_free_ > now + delay) delay = rmw_lock_free_ - now;
        const auto release = [&](bool ok) {
            rmw_lock_free_ = now + delay;
            return ok;
        };
        if (mem_read(res_.dma_out, addr, bytes, 8, delay) != tlm::TLM_OK_RESPONSE) return release(false);
        *original = get_le64(bytes);
        const std::uint64_t value = compute(*original);
        if (value == *original) return release(true);
        put_le64(bytes, value);
        return release(mem_write(res_.dma_out, addr, bytes, 8, delay) == tlm::TLM_OK_RESPONSE);
    }
    // PCIe AtomicOps (Base Spec §6.15): the root complex performs the operation, atomic also with
    // respect to the host's CPUs. An unmasked FetchAdd or CmpSwap is one AtomicOp; a masked one is
    // a read and a CAS of the computed value, repeated while someone else changed the word between.
    auto atomic_op = [&](atomic_op_ext::op kind, std::uint64_t operand, std::uint64_t compare, std::uint64_t* old) {
        atomic_op_ext aop;
        aop.kind = kind;
        aop.operand = operand;
        aop.compare = compare;
        ++counters().atomic_ops_issued;
        if (mem_transport(res_.dma_out, tlm::TLM_READ_COMMAND, addr, bytes, 8, delay, &aop) != tlm::TLM_OK_RESPONSE) {
            return false;
        }
        *old = get_le64(bytes);
        return true;
    };
    constexpr std::uint64_t kAll = ~std::uint64_t{0};
    if (add && req.add_or_swap_mask == 0) {
        return atomic_op(atomic_op_ext::op::fetch_add, req.add_or_swap_data, 0, original);
    }
    if (!add && req.add_or_swap_mask == kAll && req.compare_mask == kAll) {
        return atomic_op(atomic_op_ext::op::compare_swap, req.add_or_swap_data, req.compare_data, original);
    }
    if (mem_read(res_.dma_out, addr, bytes, 8, delay) != tlm::TLM_OK_RESPONSE) return false;
    std::uint64_t seen = get_le64(bytes);
    for (int attempt = 0; attempt < 64; ++attempt) {
        const std::uint64_t value = compute(seen);
        if (value == seen) {
            *original = seen;  // nothing to change (e.g. a CmpSwap that does not match)
            return true;
        }
        std::uint64_t old = 0;
        if (!atomic_op(atomic_op_ext::op::compare_swap, value, seen, &old)) return false;
        if (old == seen) {
            *original = seen;
            return true;
        }
        ++counters().atomic_cas_retries;
        seen = old;
    }
    RNIC_MLOG_D(error, rdma, delay, "masked atomic at 0x" << std::hex << addr << ": CAS kept failing");
    return false;
}

// ---- responses (transmit thread) -------------------------------------------------------------

void responder::send_next_response(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& issue) {
    if (qp.responses.front().atomic) {
        send_atomic_response(qpn, qp, issue);
    } else {
        send_read_response(qpn, qp, issue);
    }
}

void responder::send_read_response(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& issue) {
    const read_response_job job = qp.responses.front();
    const std::vector<ddp::segment> segments = ddp::segment_message(job.size, qp.max_ulpdu, true);
    for (const ddp::segment& seg : segments) {
        ddp::header h;
        h.tagged = true;
        h.last = seg.last;
        h.opcode = ddp::opcode::read_response;
        h.stag = job.sink_stag;
        h.tagged_offset = job.sink_to + seg.offset;
        switch (transmit_.emit(qp, h, nullptr, job.src_addr + seg.offset, seg.length, issue, nullptr,
                               job.src_pages.get())) {
        case transmit_path::emit_status::sent:
            break;
        case transmit_path::emit_status::qp_failed:
            return;
        case transmit_path::emit_status::payload_unreadable: {
            RNIC_MLOG_D(error, rdma, issue, "QP " << qpn << ": Read Response source DMA failed");
            sc_core::sc_time d = issue;
            lifecycle_.enter_error(qpn, qp, d);
            return;
        }
        case transmit_path::emit_status::refused:
            qp.state = qp_state::error;
            return;
        }
    }
    qp.responses.pop_front();
    ++counters().read_responses_sent;
    lifecycle_.maybe_finish_closing(qpn, qp);
}

void responder::send_atomic_response(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& issue) {
    const read_response_job job = qp.responses.front();
    ddp::atomic_response resp;
    resp.request_id = job.request_id;
    resp.original_value = job.original;
    std::uint8_t body[ddp::kAtomicResponseSize];
    ddp::encode(resp, body);
    ddp::header h;
    h.tagged = false;
    h.last = true;
    h.opcode = ddp::opcode::atomic_response;
    h.queue = ddp::kQueueAtomicResponse;  // RFC 7306 §5.2.2 rule 3
    h.msn = ++qp.atomic_resp_msn;
    if (!transmit_.send_untagged(qp, h, body, sizeof body, issue, nullptr)) return;
    qp.responses.pop_front();
    ++counters().atomic_responses_sent;
    lifecycle_.maybe_finish_closing(qpn, qp);
}

}  // namespace rnic
