#include "rdma/completions.h"

#include <algorithm>

#include "core/mem_access.h"
#include "core/sim_log.h"
#include "proto/bytes.h"
#include "rdma/qp_lifecycle.h"

namespace rnic {

using proto::put_le16;
using proto::put_le32;
using proto::put_le64;

completion_unit::completion_unit(const engine_resources& res, qp_lifecycle& lifecycle)
    : engine_part(res), lifecycle_(lifecycle) {}

bool work_request_finished(const qp_context& qp, const pending_completion& p) {
    if (!p.done) return false;
    const bool answered = p.opcode == regmap::wr_opcode::rdma_read || p.atomic || p.rtr;
    if (qp.peer_acks && !answered) return p.stream_end <= qp.peer_placed;
    return p.stream_end <= qp.acked;
}

void completion_unit::retire(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& delay) {
    // Work requests complete in the order they were posted (RFC 5040 §5.5): a Write when TCP has
    // its last byte acknowledged, a Read when its response has been placed.
    while (!qp.pending.empty() && work_request_finished(qp, qp.pending.front())) {
        const pending_completion& p = qp.pending.front();
        if (p.signaled) {
            cqe_fields f;
            f.wr_id = p.wr_id;
            f.byte_len = p.length;
            f.opcode = static_cast<std::uint8_t>(p.opcode);
            f.qpn = qpn;
            f.wqe_index = p.wqe_index;
            post_cqe(qp.cfg.send_cq, f, delay);
        }
        qp.pending.pop_front();
    }
    lifecycle_.maybe_finish_closing(qpn, qp);
}

void completion_unit::complete_taken_receive(std::uint32_t qpn, const qp_context& qp, regmap::cqe_status status,
                                             sc_core::sc_time& delay) {
    cqe_fields f;
    f.wr_id = qp.recv_wr_id;
    f.byte_len = static_cast<std::uint32_t>(qp.recv_bytes);
    f.opcode = static_cast<std::uint8_t>(regmap::wr_opcode::send);
    f.status = status;
    f.qpn = qpn;
    f.wqe_index = qp.recv_index;
    f.receive = true;
    post_cqe(qp.cfg.recv_cq, f, delay);
}

void completion_unit::post_cqe(std::uint32_t cqn, const cqe_fields& f, sc_core::sc_time& delay) {
    cq_context& cq = res_.contexts->cq_slot(cqn);
    if (cq.producer - cq.consumer >= cq.cfg.entries) {
        // The driver has not freed room: a CQ overrun (an asynchronous error in verbs terms: the
        // driver is told by an IBV_EVENT_CQ_ERR-like event, once per CQ).
        if (cq.overruns++ == 0) {
            async_events_.push_back(static_cast<std::uint32_t>(regmap::async_event::cq_error)
                                        << regmap::kAsyncEventTypeShift |
                                    (cqn & regmap::kAsyncEventResourceMask));
        }
        RNIC_MLOG_D(error, rdma, delay, "CQ " << cqn << " overrun: completion of wr_id " << f.wr_id << " lost");
        if (std::find(overrun_qps_.begin(), overrun_qps_.end(), f.qpn) == overrun_qps_.end()) {
            overrun_qps_.push_back(f.qpn);
        }
        res_.work_event.notify(delay);
        return;
    }
    namespace off = regmap::cqe_off;
    std::uint8_t cqe[regmap::kCqeSize] = {};
    put_le64(cqe + off::wr_id, f.wr_id);
    put_le32(cqe + off::byte_len, f.byte_len);
    cqe[off::opcode] = f.opcode;
    cqe[off::status] = static_cast<std::uint8_t>(f.status);
    put_le16(cqe + off::qpn, static_cast<std::uint16_t>(f.qpn));
    put_le32(cqe + off::wqe_index, f.wqe_index);
    put_le64(cqe + off::imm_data, f.imm_data);
    const std::uint32_t pass = cq.producer / cq.cfg.entries;
    const std::uint32_t phase = (pass % 2 == 0) ? 1u : 0u;
    put_le32(cqe + off::owner,
             (phase << 31) | static_cast<std::uint32_t>(f.flags) << off::kFlagsShift | (f.receive ? 1u : 0u));
    const std::uint64_t addr = cq.cfg.ring + (cq.producer % cq.cfg.entries) * regmap::kCqeSize;
    if (mem_write(res_.dma_out, addr, cqe, sizeof cqe, delay) != tlm::TLM_OK_RESPONSE) {
        RNIC_MLOG_D(error, rdma, delay, "CQ " << cqn << ": CQE write to 0x" << std::hex << addr << " failed");
        return;
    }
    ++cq.producer;
    ++counters().cqes;
    if (cq.armed) {
        cq.armed = false;
        raise_msix(cq.cfg.msix_vector, delay);
    }
}

void completion_unit::cq_doorbell(std::uint32_t cqn, std::uint32_t consumer, const sc_core::sc_time& delay) {
    cq_context* cq = res_.contexts->cq(cqn);
    if (cq == nullptr) {
        RNIC_MLOG_D(warn, rdma, delay, "CQ doorbell for CQ " << cqn << " which does not exist: ignored");
        return;
    }
    cq->consumer = consumer;
}

void completion_unit::cq_arm(std::uint32_t cqn, const sc_core::sc_time& delay) {
    cq_context* cq = res_.contexts->cq(cqn);
    if (cq == nullptr) {
        RNIC_MLOG_D(warn, rdma, delay, "arm for CQ " << cqn << " which does not exist: ignored");
        return;
    }
    if (cq->producer != cq->consumer) {
        // Entries are already waiting: interrupt at once rather than lose the wake-up.
        sc_core::sc_time d = delay;
        raise_msix(cq->cfg.msix_vector, d);
    } else {
        cq->armed = true;
    }
}

void completion_unit::raise_msix(std::uint32_t vector, sc_core::sc_time& delay) {
    send_msix(res_.irq_out, vector, delay);
    ++counters().interrupts;
}

}  // namespace rnic
