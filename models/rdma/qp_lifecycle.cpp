#include "rdma/qp_lifecycle.h"

#include <algorithm>

#include "core/mem_access.h"
#include "core/sim_log.h"
#include "proto/bytes.h"
#include "rdma/completions.h"

namespace rnic {

namespace ddp = proto::ddp;
using proto::get_le64;
using qp_state = regmap::qp_state;

qp_lifecycle::qp_lifecycle(const engine_resources& res, completion_unit& completions)
    : engine_part(res), completions_(completions) {}

void qp_lifecycle::connect(std::uint32_t qpn, qp_context& qp, const qp_stream& stream) {
    // A fresh stream: every per-stream sequence starts again (RFC 5041 §5.1: MSNs from 1).
    const qp_config cfg = qp.cfg;
    const std::uint32_t sq_producer = qp.sq_producer, sq_consumer = qp.sq_consumer;
    const std::uint32_t rq_producer = qp.rq_producer, rq_consumer = qp.rq_consumer;
    std::deque<qp_context::doorbell> doorbells = std::move(qp.sq_doorbells);
    qp = qp_context{};
    qp.valid = true;
    qp.cfg = cfg;
    qp.sq_producer = sq_producer;
    qp.sq_consumer = sq_consumer;
    qp.sq_doorbells = std::move(doorbells);
    qp.rq_producer = rq_producer;
    qp.rq_consumer = rq_consumer;
    qp.conn = stream.conn;
    qp.max_ulpdu = stream.max_ulpdu;
    // The device's own limits cap the values; a negotiated 0 stays 0 (RFC 6581 §9.1: no Reads that
    // way), an application's 0 without negotiation means the device's own limit.
    const auto limit = [&](std::uint32_t v, std::uint32_t device) {
        return !stream.negotiated && v == 0 ? device : std::min(v, device);
    };
    qp.ird = limit(stream.ird, params().ird);
    qp.ord = limit(stream.ord, params().ord);
    qp.hold_tx = stream.hold_until_first_fpdu;
    qp.rtr_to_send = stream.send_rtr;
    qp.peer_acks = stream.peer_acknowledges;
    qp.state = qp_state::rts;
    res_.ready_qps.mark(qpn);  // its RTR, and work posted before it connected
    res_.contexts->bind_connection(stream.conn, qpn);
    res_.work_event.notify(sc_core::SC_ZERO_TIME);
    RNIC_MLOG(debug, rdma,
              "QP " << qpn << " in RTS on connection " << stream.conn << ", MULPDU " << stream.max_ulpdu << ", IRD "
                    << qp.ird << ", ORD " << qp.ord << (qp.hold_tx ? ", sending after the initiator's first FPDU" : "")
                    << (qp.rtr_to_send == qp_stream::rtr::write  ? ", RTR: zero-length Write"
                        : qp.rtr_to_send == qp_stream::rtr::read ? ", RTR: zero-length Read"
                                                                 : ""));
}

bool qp_lifecycle::modify(std::uint32_t qpn, qp_context& qp, std::uint8_t target) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    switch (static_cast<qp_state>(target)) {
    case qp_state::error:
        // Abortive: allowed from every state (verbs "modify to Error").
        if (qp.state == qp_state::idle) {
            qp.state = qp_state::error;
            flush_receives(qpn, qp, delay);
            return true;
        }
        if (qp.state != qp_state::error) {
            RNIC_MLOG(info, rdma, "QP " << qpn << " to Error by the driver");
            enter_error(qpn, qp, delay);
        }
        return true;
    case qp_state::closing:
        // Graceful (RFC 5040 §6.2, LLP graceful termination): only from RTS; the stream closes
        // once everything already sent has been acknowledged and answered.
        if (qp.state != qp_state::rts) return false;
        qp.state = qp_state::closing;
        RNIC_MLOG(info, rdma, "QP " << qpn << " to Closing by the driver");
        res_.work_event.notify(sc_core::SC_ZERO_TIME);  // work held back until now flushes
        maybe_finish_closing(qpn, qp);
        return true;
    default:
        return false;
    }
}

std::uint32_t qp_lifecycle::query_word(const qp_context& qp) {
    namespace q = regmap::query_qp_result;
    std::uint32_t word = static_cast<std::uint32_t>(qp.state);
    if (qp.term.valid) {
        word |= static_cast<std::uint32_t>(qp.term.layer) << q::kLayerShift |
                static_cast<std::uint32_t>(qp.term.etype) << q::kEtypeShift |
                static_cast<std::uint32_t>(qp.term.code) << q::kCodeShift | q::kTerminateValid |
                (qp.term.received ? q::kTerminateReceived : 0u);
    }
    return word;
}

namespace {
// The completion status a Terminate stands for, at the side that reads it (verbs error classes).
regmap::cqe_status status_of_terminate(ddp::term_layer layer, std::uint8_t etype) {
    switch (layer) {
    case ddp::term_layer::rdma:
        return etype == ddp::term::kRdmaRemoteProtection ? regmap::cqe_status::remote_access_error
                                                         : regmap::cqe_status::remote_operation_error;
    case ddp::term_layer::ddp:
        if (etype == ddp::term::kDdpTaggedBuffer) return regmap::cqe_status::remote_access_error;
        if (etype == ddp::term::kDdpUntaggedBuffer) return regmap::cqe_status::remote_invalid_request;
        return regmap::cqe_status::remote_operation_error;
    default:
        return regmap::cqe_status::transport_error;
    }
}
}  // namespace

void qp_lifecycle::enter_error(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& delay) {
    const bool was_connected = qp.state != qp_state::idle && qp.state != qp_state::error;
    qp.state = qp_state::error;
    // Sent but unfinished work requests will never complete normally: the oldest takes the error the
    // peer's Terminate reported (if one did), the rest flush, in order (verbs semantics). At VI/TCP
    // Reliable Reception the work request whose message the peer reported in error takes that
    // error (seed 003 §3.2: the VI Error Type "is used to update the Status of the VI Descriptor").
    bool first = true;
    bool remote_pending = qp.remote_error.valid && qp.remote_error.named;
    while (!qp.pending.empty()) {
        const pending_completion& p = qp.pending.front();
        if (p.rtr) {
            // The provider's own RTR Read: no work request to complete, and a Terminate it drew is
            // not any work request's either.
            qp.pending.pop_front();
            first = false;
            continue;
        }
        cqe_fields f;
        f.wr_id = p.wr_id;
        f.byte_len = p.length;
        f.opcode = static_cast<std::uint8_t>(p.opcode);
        f.status = first && qp.term.valid && qp.term.received ? status_of_terminate(qp.term.layer, qp.term.etype)
                                                              : regmap::cqe_status::flushed;
        if (f.status == regmap::cqe_status::flushed && remote_pending && p.stream_end > qp.remote_error.after) {
            f.status = qp.remote_error.status;
            remote_pending = false;
        }
        f.qpn = qpn;
        f.wqe_index = p.wqe_index;
        completions_.post_cqe(qp.cfg.send_cq, f, delay);
        if (f.status == regmap::cqe_status::flushed) ++counters().flushed;
        first = false;
        qp.pending.pop_front();
    }
    qp.reads_outstanding = 0;
    qp.responses.clear();
    if (qp.recv_active) {
        // The receive a message had taken (its WQE consumed) but not completed: it completes too,
        // flushed, before the ones still posted (every work request completes; VI Architecture:
        // every descriptor of a VI in Error completes).
        completions_.complete_taken_receive(qpn, qp, regmap::cqe_status::flushed, delay);
        ++counters().flushed;
    }
    qp.recv_active = false;
    flush_receives(qpn, qp, delay);
    if (was_connected) {
        report_qp_error(qpn, qp, delay);
        // RFC 5040 §6.2: after a Terminate (or a fatal stream error) the LLP stream is closed; a
        // Terminate already handed to TCP still goes out before the FIN.
        res_.toe->tcp_close(qp.conn);
    }
    res_.space_event.notify(delay);
    res_.read_done_event.notify(delay);
    res_.work_event.notify(delay);  // the transmit thread flushes what is still in the send queue
}

void qp_lifecycle::flush_receives(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& delay) {
    // Posted receives complete as flushed, in posting order.
    while (qp.rq_consumer != qp.rq_producer && qp.cfg.rq_entries != 0) {
        const std::uint64_t addr = qp.cfg.rq_ring + (qp.rq_consumer % qp.cfg.rq_entries) * regmap::kRecvWqeSize;
        std::uint8_t rqe[regmap::kRecvWqeSize] = {};
        if (mem_read(res_.dma_out, addr, rqe, sizeof rqe, delay) != tlm::TLM_OK_RESPONSE) break;
        cqe_fields f;
        f.wr_id = get_le64(rqe + regmap::rqe_off::wr_id);
        f.opcode = static_cast<std::uint8_t>(regmap::wr_opcode::send);
        f.status = regmap::cqe_status::flushed;
        f.qpn = qpn;
        f.wqe_index = qp.rq_consumer++;
        f.receive = true;
        completions_.post_cqe(qp.cfg.recv_cq, f, delay);
        ++counters().flushed;
    }
}

void qp_lifecycle::report_qp_error(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& delay) {
    // One QP error entry on the receive CQ: the driver learns why the QP left RTS even when no work
    // request was outstanding (verbs' asynchronous QP error event).
    cqe_fields f;
    f.opcode = regmap::kCqeOpcodeQpError;
    f.status = qp.term.valid           ? status_of_terminate(qp.term.layer, qp.term.etype)
               : qp.remote_error.valid ? qp.remote_error.status
                                       : regmap::cqe_status::transport_error;
    f.qpn = qpn;
    f.receive = true;
    f.imm_data = query_word(qp);
    f.wqe_index = qp.rq_consumer;
    completions_.post_cqe(qp.cfg.recv_cq, f, delay);
}

void qp_lifecycle::maybe_finish_closing(std::uint32_t qpn, qp_context& qp) {
    if (qp.state != qp_state::closing || !qp.pending.empty() || !qp.responses.empty()) return;
    // VI/TCP Reliable Reception: the peer hears of what was placed here before the stream closes.
    if (qp.ack_owed) return;
    // Work requests still in the send queue complete (flushed) before the QP leaves Closing.
    if (qp.sq_consumer != qp.sq_producer) return;
    // Everything sent is acknowledged: close the LLP stream gracefully and return to Idle; the
    // connection no longer maps to this QP, so its close event does not move the QP to Error.
    res_.toe->tcp_close(qp.conn);
    res_.contexts->unbind_connection(qp.conn);
    res_.toe->tcp_release(qp.conn);  // freed by the TCP engine once its FIN exchange is over
    qp.state = qp_state::idle;
    RNIC_MLOG(info, rdma, "QP " << qpn << ": graceful close done, QP Idle");
    res_.work_event.notify(sc_core::SC_ZERO_TIME);  // posted work requests now flush
}

}  // namespace rnic
