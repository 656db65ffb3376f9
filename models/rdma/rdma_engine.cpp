#include "rdma/rdma_engine.h"

#include <algorithm>
#include <cstring>

#include "core/mem_access.h"
#include "core/sim_log.h"
#include "core/stream.h"
#include "proto/bytes.h"
#include "proto/mpa.h"
#include "dma/dma_ext.h"
#include "dma/marker_runs.h"
#include "host/atomic_op_ext.h"
#include "rdma/atomic_alu.h"

namespace rnic {

namespace ddp = proto::ddp;
using proto::get_le32;
using proto::get_le64;
using proto::put_le16;
using proto::put_le32;
using proto::put_le64;

namespace {
// STag = 24-bit index << 8 | 8-bit key (RFC 5040 §2.2: the key is the consumer-owned part).
constexpr std::uint32_t stag_index(std::uint32_t stag) { return stag >> 8; }
constexpr std::uint8_t stag_key(std::uint32_t stag) { return static_cast<std::uint8_t>(stag & 0xff); }
// Room a ULPDU needs in the TCP send stream beyond its own bytes: MPA length, PAD, CRC and, with
// markers, one marker per 512 bytes plus one.
constexpr std::size_t fpdu_overhead(std::size_t ulpdu) { return 2 + 3 + 4 + 4 * (ulpdu / 512 + 2); }
}  // namespace

rdma_engine::rdma_engine(const sc_core::sc_module_name& name, const rdma_engine_params& params)
    : sc_module(name),
      ulpdu_tx_out("ulpdu_tx_out"),
      ulpdu_rx_in("ulpdu_rx_in"),
      dma_out("dma_out"),
      irq_out("irq_out"),
      ctl_in("ctl_in"),
      doorbell_in("doorbell_in"),
      tx_progress_in("tx_progress_in"),
      llp_in("llp_in"),
      toe_out("toe_out"),
      params_(params),
      qps_(params.max_qp),
      cqs_(params.max_cq),
      mrs_(params.max_mr) {
    ulpdu_rx_in.register_b_transport(this, &rdma_engine::rx_b_transport);
    ctl_in.bind(*this);
    doorbell_in.bind(*this);
    tx_progress_in.bind(*this);
    llp_in.bind(*this);
    SC_HAS_PROCESS(rdma_engine);
    SC_THREAD(tx_thread);
    set_stack_size(kThreadStackBytes);
}

// ---- context programming (firmware) --------------------------------------------------------

int rdma_engine::create_cq(const cq_config& cfg) {
    for (std::size_t i = 0; i < cqs_.size(); ++i) {
        if (!cqs_[i].valid) {
            cqs_[i] = completion_queue{};
            cqs_[i].valid = true;
            cqs_[i].cfg = cfg;
            return static_cast<int>(i);
        }
    }
    return -1;
}

int rdma_engine::create_qp(const qp_config& cfg) {
    if (cfg.send_cq >= cqs_.size() || !cqs_[cfg.send_cq].valid || cfg.recv_cq >= cqs_.size() ||
        !cqs_[cfg.recv_cq].valid) {
        return -2;
    }
    for (std::size_t i = 0; i < qps_.size(); ++i) {
        if (!qps_[i].valid) {
            qps_[i] = queue_pair{};
            qps_[i].valid = true;
            qps_[i].cfg = cfg;
            return static_cast<int>(i);
        }
    }
    return -1;
}

std::int64_t rdma_engine::register_mr(const mr_config& cfg) {
    // Index 0 is never used so that STag 0 stays invalid.
    for (std::size_t i = 1; i < mrs_.size(); ++i) {
        if (!mrs_[i].valid) {
            memory_region& mr = mrs_[i];
            mr.valid = true;
            mr.cfg = cfg;
            mr.key = static_cast<std::uint8_t>(mr.key + 1);  // a new key each time the index is reused
            return static_cast<std::int64_t>((static_cast<std::uint32_t>(i) << 8) | mr.key);
        }
    }
    return -1;
}

rdma_engine::memory_region* rdma_engine::lookup_stag(std::uint32_t stag) {
    const std::uint32_t idx = stag_index(stag);
    if (idx == 0 || idx >= mrs_.size() || !mrs_[idx].valid || mrs_[idx].key != stag_key(stag)) return nullptr;
    return &mrs_[idx];
}
const rdma_engine::memory_region* rdma_engine::lookup_stag(std::uint32_t stag) const {
    return const_cast<rdma_engine*>(this)->lookup_stag(stag);
}

bool rdma_engine::deregister_mr(std::uint32_t stag) {
    memory_region* mr = lookup_stag(stag);
    if (mr == nullptr) return false;
    mr->valid = false;
    return true;
}

bool rdma_engine::qp_valid(std::uint32_t qpn) const { return qpn < qps_.size() && qps_[qpn].valid; }
bool rdma_engine::qp_idle(std::uint32_t qpn) const { return qp_valid(qpn) && qps_[qpn].state == qp_state::idle; }

bool rdma_engine::qp_connect(std::uint32_t qpn, const qp_stream& stream) {
    if (!qp_idle(qpn)) return false;
    queue_pair& qp = qps_[qpn];
    // A fresh stream: every per-stream sequence starts again (RFC 5041 §5.1: MSNs from 1).
    const qp_config cfg = qp.cfg;
    const std::uint32_t sq_producer = qp.sq_producer, sq_consumer = qp.sq_consumer;
    const std::uint32_t rq_producer = qp.rq_producer, rq_consumer = qp.rq_consumer;
    std::deque<doorbell> doorbells = std::move(qp.sq_doorbells);
    qp = queue_pair{};
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
    qp.ird = limit(stream.ird, params_.ird);
    qp.ord = limit(stream.ord, params_.ord);
    qp.hold_tx = stream.hold_until_first_fpdu;
    qp.rtr_to_send = stream.send_rtr;
    qp.state = qp_state::rts;
    conn_to_qp_[stream.conn] = qpn;
    work_event_.notify(sc_core::SC_ZERO_TIME);
    RNIC_MLOG(debug, rdma, "QP " << qpn << " in RTS on connection " << stream.conn << ", MULPDU " << stream.max_ulpdu
                                 << ", IRD " << qp.ird << ", ORD " << qp.ord
                                 << (qp.hold_tx ? ", sending after the initiator's first FPDU" : "")
                                 << (qp.rtr_to_send == qp_stream::rtr::write  ? ", RTR: zero-length Write"
                                     : qp.rtr_to_send == qp_stream::rtr::read ? ", RTR: zero-length Read"
                                                                              : ""));
    return true;
}

bool rdma_engine::qp_modify(std::uint32_t qpn, std::uint8_t target) {
    if (!qp_valid(qpn)) return false;
    queue_pair& qp = qps_[qpn];
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
            work_event_.notify(sc_core::SC_ZERO_TIME);  // work held back until now flushes
            maybe_finish_closing(qpn, qp);
            return true;
        default: return false;
    }
}

std::int64_t rdma_engine::qp_query(std::uint32_t qpn) const {
    if (!qp_valid(qpn)) return -1;
    const queue_pair& qp = qps_[qpn];
    namespace q = regmap::query_qp_result;
    std::uint32_t word = static_cast<std::uint32_t>(qp.state);
    if (qp.term.valid) {
        word |= static_cast<std::uint32_t>(qp.term.layer) << q::layer_shift |
                static_cast<std::uint32_t>(qp.term.etype) << q::etype_shift |
                static_cast<std::uint32_t>(qp.term.code) << q::code_shift |
                (qp.term.received ? q::terminate_received : 0u);
    }
    return word;
}

int rdma_engine::destroy_qp(std::uint32_t qpn) {
    if (!qp_valid(qpn)) return -1;
    queue_pair& qp = qps_[qpn];
    if (qp.state != qp_state::idle && qp.state != qp_state::error) return -2;
    for (auto it = conn_to_qp_.begin(); it != conn_to_qp_.end();) {
        it = it->second == qpn ? conn_to_qp_.erase(it) : std::next(it);
    }
    qp = queue_pair{};
    return 0;
}

int rdma_engine::destroy_cq(std::uint32_t cqn) {
    if (cqn >= cqs_.size() || !cqs_[cqn].valid) return -1;
    for (const queue_pair& qp : qps_) {
        if (qp.valid && (qp.cfg.send_cq == cqn || qp.cfg.recv_cq == cqn)) return -2;
    }
    cqs_[cqn] = completion_queue{};
    return 0;
}

int rdma_engine::qpn_of_conn(std::uint32_t conn) const {
    const auto it = conn_to_qp_.find(conn);
    return it == conn_to_qp_.end() ? -1 : static_cast<int>(it->second);
}

void rdma_engine::stream_failed(std::uint32_t conn, const char* why) {
    const int qpn = qpn_of_conn(conn);
    if (qpn < 0) return;
    queue_pair& qp = qps_[static_cast<std::size_t>(qpn)];
    if (qp.state == qp_state::error) return;
    RNIC_MLOG(warn, rdma, "QP " << qpn << " to Error: " << why);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    enter_error(static_cast<std::uint32_t>(qpn), qp, delay);
}

void rdma_engine::llp_error(std::uint32_t conn, std::uint8_t mpa_code, const sc_core::sc_time& delay) {
    const int qpn = qpn_of_conn(conn);
    if (qpn < 0) return;
    queue_pair& qp = qps_[static_cast<std::size_t>(qpn)];
    ++counters_.llp_errors;
    sc_core::sc_time d = delay;
    if (qp.state == qp_state::rts) {
        // RFC 5044 §8: the receiver of a bad FPDU reports it with a Terminate (layer LLP, type MPA)
        // and delivers nothing more from the stream.
        send_terminate(static_cast<std::uint32_t>(qpn), qp, ddp::TermLayer::llp, ddp::term::kLlpMpa, mpa_code,
                       nullptr, 0, d);
    }
    enter_error(static_cast<std::uint32_t>(qpn), qp, d);
}

void rdma_engine::llp_terminate(std::uint32_t conn, std::uint8_t mpa_code) {
    const int qpn = qpn_of_conn(conn);
    if (qpn < 0) return;
    queue_pair& qp = qps_[static_cast<std::size_t>(qpn)];
    ++counters_.negotiation_terminates;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    if (qp.state == qp_state::rts) {
        send_terminate(static_cast<std::uint32_t>(qpn), qp, ddp::TermLayer::llp, ddp::term::kLlpMpa, mpa_code, nullptr,
                       0, d);
    }
    enter_error(static_cast<std::uint32_t>(qpn), qp, d);
}

namespace {
// The completion status a Terminate stands for, at the side that reads it (verbs error classes).
regmap::cqe_status status_of_terminate(ddp::TermLayer layer, std::uint8_t etype) {
    switch (layer) {
        case ddp::TermLayer::rdma:
            return etype == ddp::term::kRdmaRemoteProtection ? regmap::cqe_status::remote_access_error
                                                             : regmap::cqe_status::remote_operation_error;
        case ddp::TermLayer::ddp:
            if (etype == ddp::term::kDdpTaggedBuffer) return regmap::cqe_status::remote_access_error;
            if (etype == ddp::term::kDdpUntaggedBuffer) return regmap::cqe_status::remote_invalid_request;
            return regmap::cqe_status::remote_operation_error;
        default: return regmap::cqe_status::transport_error;
    }
}
}  // namespace

void rdma_engine::enter_error(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& delay) {
    const bool was_connected = qp.state != qp_state::idle && qp.state != qp_state::error;
    qp.state = qp_state::error;
    // Sent but unfinished work requests will never complete normally: the oldest takes the error the
    // peer's Terminate reported (if one did), the rest flush, in order (verbs semantics).
    bool first = true;
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
        f.qpn = qpn;
        f.wqe_index = p.wqe_index;
        post_cqe(qp.cfg.send_cq, f, delay);
        if (f.status == regmap::cqe_status::flushed) ++counters_.flushed;
        first = false;
        qp.pending.pop_front();
    }
    qp.reads_outstanding = 0;
    qp.responses.clear();
    qp.recv_active = false;
    flush_receives(qpn, qp, delay);
    if (was_connected) {
        report_qp_error(qpn, qp, delay);
        // RFC 5040 §6.2: after a Terminate (or a fatal stream error) the LLP stream is closed; a
        // Terminate already handed to TCP still goes out before the FIN.
        toe_out->tcp_close(qp.conn);
    }
    space_event_.notify(delay);
    read_done_event_.notify(delay);
    work_event_.notify(delay);  // the transmit thread flushes what is still in the send queue
}

void rdma_engine::flush_receives(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& delay) {
    // Posted receives complete as flushed, in posting order.
    while (qp.rq_consumer != qp.rq_producer && qp.cfg.rq_entries != 0) {
        const std::uint64_t addr = qp.cfg.rq_ring + (qp.rq_consumer % qp.cfg.rq_entries) * regmap::kRecvWqeSize;
        std::uint8_t rqe[regmap::kRecvWqeSize] = {};
        if (mem_read(dma_out, addr, rqe, sizeof rqe, delay) != tlm::TLM_OK_RESPONSE) break;
        cqe_fields f;
        f.wr_id = get_le64(rqe + regmap::rqe_off::wr_id);
        f.opcode = static_cast<std::uint8_t>(regmap::wr_opcode::send);
        f.status = regmap::cqe_status::flushed;
        f.qpn = qpn;
        f.wqe_index = qp.rq_consumer++;
        f.receive = true;
        post_cqe(qp.cfg.recv_cq, f, delay);
        ++counters_.flushed;
    }
}

void rdma_engine::report_qp_error(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& delay) {
    // One QP error entry on the receive CQ: the driver learns why the QP left RTS even when no work
    // request was outstanding (verbs' asynchronous QP error event).
    cqe_fields f;
    f.opcode = regmap::kCqeOpcodeQpError;
    f.status = qp.term.valid ? status_of_terminate(qp.term.layer, qp.term.etype) : regmap::cqe_status::transport_error;
    f.qpn = qpn;
    f.receive = true;
    f.imm_data = static_cast<std::uint64_t>(qp_query(qpn));
    f.wqe_index = qp.rq_consumer;
    post_cqe(qp.cfg.recv_cq, f, delay);
}

void rdma_engine::maybe_finish_closing(std::uint32_t qpn, queue_pair& qp) {
    if (qp.state != qp_state::closing || !qp.pending.empty() || !qp.responses.empty()) return;
    // Work requests still in the send queue complete (flushed) before the QP leaves Closing.
    if (qp.sq_consumer != qp.sq_producer) return;
    // Everything sent is acknowledged: close the LLP stream gracefully and return to Idle; the
    // connection no longer maps to this QP, so its close event does not move the QP to Error.
    toe_out->tcp_close(qp.conn);
    conn_to_qp_.erase(qp.conn);
    qp.state = qp_state::idle;
    RNIC_MLOG(info, rdma, "QP " << qpn << ": graceful close done, QP Idle");
    work_event_.notify(sc_core::SC_ZERO_TIME);  // posted work requests now flush
}

// ---- doorbells (driver via the register file) ---------------------------------------------

void rdma_engine::sq_doorbell(std::uint32_t qpn, std::uint32_t producer, const sc_core::sc_time& delay) {
    if (!qp_valid(qpn)) {
        RNIC_MLOG_D(warn, rdma, delay, "SQ doorbell for QP " << qpn << " which does not exist: ignored");
        return;
    }
    // Applied when the write reaches the engine, not before (the thread checks arrival times).
    qps_[qpn].sq_doorbells.push_back({sc_core::sc_time_stamp() + delay, producer});
    work_event_.notify(delay);
}

void rdma_engine::rq_doorbell(std::uint32_t qpn, std::uint32_t producer, const sc_core::sc_time& delay) {
    if (!qp_valid(qpn)) {
        RNIC_MLOG_D(warn, rdma, delay, "RQ doorbell for QP " << qpn << " which does not exist: ignored");
        return;
    }
    qps_[qpn].rq_producer = producer;
}

void rdma_engine::cq_doorbell(std::uint32_t cqn, std::uint32_t consumer, const sc_core::sc_time& delay) {
    if (cqn >= cqs_.size() || !cqs_[cqn].valid) {
        RNIC_MLOG_D(warn, rdma, delay, "CQ doorbell for CQ " << cqn << " which does not exist: ignored");
        return;
    }
    cqs_[cqn].consumer = consumer;
}

void rdma_engine::cq_arm(std::uint32_t cqn, const sc_core::sc_time& delay) {
    if (cqn >= cqs_.size() || !cqs_[cqn].valid) {
        RNIC_MLOG_D(warn, rdma, delay, "arm for CQ " << cqn << " which does not exist: ignored");
        return;
    }
    completion_queue& cq = cqs_[cqn];
    if (cq.producer != cq.consumer) {
        // Entries are already waiting: interrupt at once rather than lose the wake-up.
        sc_core::sc_time d = delay;
        raise_msix(cq.cfg.msix_vector, d);
    } else {
        cq.armed = true;
    }
}

// ---- transmit ------------------------------------------------------------------------------

bool rdma_engine::take_doorbells(queue_pair& qp) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    while (!qp.sq_doorbells.empty() && qp.sq_doorbells.front().arrival <= now) {
        qp.sq_producer = qp.sq_doorbells.front().producer;
        qp.sq_doorbells.pop_front();
    }
    const bool sending = qp.state == qp_state::rts || qp.state == qp_state::closing;
    if (sending && qp.rtr_to_send != qp_stream::rtr::none) return true;
    // RFC 5044 §7.1.2 rule 4: a responder sends nothing until the initiator's first FPDU arrived
    // (closing before that, what it had posted flushes: it can never be sent).
    if (qp.state == qp_state::rts && qp.hold_tx) return false;
    if (sending && !qp.responses.empty()) return true;
    // Work posted to an Idle QP waits for RTS; in Closing and Error it flushes.
    return qp.state != qp_state::idle && qp.sq_consumer != qp.sq_producer;
}

rdma_engine::queue_pair* rdma_engine::next_ready_qp() {
    // Round robin over the QPs so that one busy QP does not starve the others.
    for (std::size_t n = 0; n < qps_.size(); ++n) {
        const std::uint32_t i = (rr_next_ + static_cast<std::uint32_t>(n)) % static_cast<std::uint32_t>(qps_.size());
        if (qps_[i].valid && take_doorbells(qps_[i])) {
            rr_next_ = i + 1;
            return &qps_[i];
        }
    }
    return nullptr;
}

void rdma_engine::tx_thread() {
    for (;;) {
        queue_pair* qp = next_ready_qp();
        if (qp == nullptr) {
            wait(work_event_);
            continue;
        }
        process_batch(static_cast<std::uint32_t>(qp - qps_.data()), *qp);
    }
}

void rdma_engine::process_batch(std::uint32_t qpn, queue_pair& qp) {
    if (qp.state == qp_state::rts && qp.rtr_to_send != qp_stream::rtr::none) {
        sc_core::sc_time issue = sc_core::SC_ZERO_TIME;
        send_rtr(qpn, qp, issue);  // before every work request (RFC 6581 §5)
        wait(issue);
        return;
    }
    if ((qp.state == qp_state::rts || qp.state == qp_state::closing) && !qp.responses.empty()) {
        // Read Responses go out in the order of their requests, ahead of new work (RFC 5040 §5.3).
        sc_core::sc_time issue = sc_core::SC_ZERO_TIME;
        if (qp.responses.front().atomic) {
            send_atomic_response(qpn, qp, issue);
        } else {
            send_read_response(qpn, qp, issue);
        }
        wait(issue);
        return;
    }
    // Prefetch up to kWqeBatch contiguous WQEs with one DMA read, as NICs do to hide the round trip.
    const std::uint32_t ring_left = qp.cfg.sq_entries - qp.sq_consumer % qp.cfg.sq_entries;
    const std::uint32_t n = std::min({qp.sq_producer - qp.sq_consumer, kWqeBatch, ring_left});
    const std::uint64_t addr = qp.cfg.sq_ring + (qp.sq_consumer % qp.cfg.sq_entries) * regmap::kSendWqeSize;
    wqe_cache_.resize(static_cast<std::size_t>(n) * regmap::kSendWqeSize);
    sc_core::sc_time issue = sc_core::SC_ZERO_TIME;
    if (mem_read(dma_out, addr, wqe_cache_.data(), wqe_cache_.size(), issue) != tlm::TLM_OK_RESPONSE) {
        // The SQ ring itself is not reachable: a catastrophic local error for this QP.
        RNIC_MLOG(error, rdma, "QP " << qpn << ": cannot fetch WQEs at 0x" << std::hex << addr);
        enter_error(qpn, qp, issue);
        qp.sq_consumer = qp.sq_producer;  // nothing more can be read from this ring
        return;
    }
    for (std::uint32_t i = 0; i < n;) {
        const std::uint8_t* wqe = wqe_cache_.data() + static_cast<std::size_t>(i) * regmap::kSendWqeSize;
        const std::uint32_t extra = extra_slots(wqe, qp.sq_producer - qp.sq_consumer - 1);
        // A WQE's extra slots (masks, inline data): in this batch, or (ring wrap, batch end) fetched.
        const std::uint8_t* more = nullptr;
        if (extra > 0) {
            more = fetch_extra_slots(qp, i, n, extra, issue);
        }
        const std::uint32_t slots = 1 + (more != nullptr ? extra : 0);
        const std::uint32_t index = qp.sq_consumer + slots - 1;
        qp.sq_consumer += slots;
        i += slots;
        ++counters_.wqes;
        send_wqe w = decode_wqe(wqe, more, index);
        if ((wqe[regmap::sqe_off::flags] & regmap::wr_flags::inline_data) != 0) {
            w.inline_payload = more;
            if (more == nullptr) w.raw_opcode = 0xff;  // its data slots are not posted (or too long)
        }
        if (qp.state != qp_state::rts) {
            complete_with_error(qpn, qp, w, regmap::cqe_status::flushed, issue);
            ++counters_.flushed;
            continue;
        }
        process_wqe(qpn, qp, w, issue);
    }
    // The engine's own pipeline time; payload reads and transmission run ahead of it in the
    // downstream blocks' resources (LT annotation).
    wait(issue);
    maybe_finish_closing(qpn, qp);
}

std::uint32_t rdma_engine::extra_slots(const std::uint8_t* wqe, std::uint32_t posted_after) {
    const auto op = static_cast<regmap::wr_opcode>(wqe[regmap::sqe_off::opcode]);
    const std::uint8_t flags = wqe[regmap::sqe_off::flags];
    std::uint32_t extra = 0;
    if ((op == regmap::wr_opcode::atomic_fetch_add || op == regmap::wr_opcode::atomic_compare_swap) &&
        (flags & regmap::wr_flags::masked) != 0) {
        extra = 1;  // the masks
    } else if ((flags & regmap::wr_flags::inline_data) != 0) {
        const std::uint32_t len = get_le32(wqe + regmap::sqe_off::length);
        if (len > regmap::kMaxInlineData) return 0;  // rejected in process_wqe
        extra = (len + regmap::kSendWqeSize - 1) / regmap::kSendWqeSize;
    }
    // A driver that rang the doorbell before posting all of a WQE's slots: the WQE is rejected alone.
    return extra <= posted_after ? extra : 0;
}

const std::uint8_t* rdma_engine::fetch_extra_slots(queue_pair& qp, std::uint32_t i, std::uint32_t n,
                                                   std::uint32_t extra, sc_core::sc_time& issue) {
    if (i + extra < n) return wqe_cache_.data() + static_cast<std::size_t>(i + 1) * regmap::kSendWqeSize;
    extra_cache_.resize(static_cast<std::size_t>(extra) * regmap::kSendWqeSize);
    for (std::uint32_t k = 0; k < extra; ++k) {
        const std::uint64_t at =
            qp.cfg.sq_ring + ((qp.sq_consumer + 1 + k) % qp.cfg.sq_entries) * regmap::kSendWqeSize;
        if (mem_read(dma_out, at, extra_cache_.data() + static_cast<std::size_t>(k) * regmap::kSendWqeSize,
                     regmap::kSendWqeSize, issue) != tlm::TLM_OK_RESPONSE) {
            return nullptr;
        }
    }
    return extra_cache_.data();
}

rdma_engine::send_wqe rdma_engine::decode_wqe(const std::uint8_t* wqe, const std::uint8_t* masks, std::uint32_t index) {
    namespace off = regmap::sqe_off;
    send_wqe w;
    w.raw_opcode = wqe[off::opcode];
    w.opcode = static_cast<regmap::wr_opcode>(w.raw_opcode);
    w.signaled = (wqe[off::flags] & regmap::wr_flags::signaled) != 0;
    w.solicited = (wqe[off::flags] & regmap::wr_flags::solicited) != 0;
    w.wr_id = get_le64(wqe + off::wr_id);
    w.local_addr = get_le64(wqe + off::local_addr);
    w.length = get_le32(wqe + off::length);
    w.local_stag = get_le32(wqe + off::local_stag);
    w.remote_to = get_le64(wqe + off::remote_to);
    w.remote_stag = get_le32(wqe + off::remote_stag);
    w.imm_or_inv = get_le32(wqe + off::imm_or_inv);
    w.operand = get_le64(wqe + off::operand);
    w.compare = get_le64(wqe + off::compare);
    w.index = index;
    // RFC 7306 §5.1: without masks FetchAdd is a plain 64-bit add and CmpSwap compares and swaps
    // all 64 bits.
    const bool add = w.opcode == regmap::wr_opcode::atomic_fetch_add;
    w.add_or_swap_mask = add ? 0 : ~std::uint64_t{0};
    w.compare_mask = add ? 0 : ~std::uint64_t{0};
    if ((wqe[off::flags] & regmap::wr_flags::masked) != 0) {
        w.masked = true;
        if (masks != nullptr && masks[off::opcode] == static_cast<std::uint8_t>(regmap::wr_opcode::atomic_masks)) {
            w.add_or_swap_mask = get_le64(masks + regmap::atomic_mask_off::add_or_swap_mask);
            w.compare_mask = add ? 0 : get_le64(masks + regmap::atomic_mask_off::compare_mask);
        } else {
            w.masked = false;  // flagged but without its masks slot: rejected in process_wqe
            w.raw_opcode = 0xff;
        }
    }
    return w;
}

void rdma_engine::process_wqe(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, sc_core::sc_time& issue) {
    tx_pipe_.reserve_lt(issue, cycles_time(params_.cycles_per_wqe, params_.clock_hz));
    using op = regmap::wr_opcode;
    auto reject = [&](regmap::cqe_status status, const std::string& why) {
        ++counters_.bad_wqes;
        RNIC_MLOG_D(warn, rdma, issue, "QP " << qpn << ": WQE " << w.index << " (opcode " << int(w.raw_opcode)
                                             << "): " << why);
        complete_with_error(qpn, qp, w, status, issue);
    };
    if (w.raw_opcode == 0xff) {
        reject(regmap::cqe_status::bad_opcode, "its extra slots (masks or inline data) are missing or too long");
        return;
    }
    switch (w.opcode) {
        case op::rdma_read:
        case op::atomic_fetch_add:
        case op::atomic_compare_swap:
            if (qp.ord == 0) {
                // RFC 6581 §9.1: the stream negotiated no outbound Reads (the peer's IRD is 0).
                reject(regmap::cqe_status::bad_opcode, "the QP's ORD is 0: no RDMA Reads or atomics on this stream");
                return;
            }
            if (w.opcode == op::rdma_read) {
                post_read_request(qpn, qp, w, issue);
            } else {
                post_atomic(qpn, qp, w, issue);
            }
            return;
        case op::local_invalidate: post_local_invalidate(qpn, qp, w, issue); return;
        case op::raw_ulpdu:
            if (!params_.raw_ulpdu_wqes) {
                reject(regmap::cqe_status::bad_opcode, "raw ULPDUs are a test mode, off on this device");
                return;
            }
            post_raw_ulpdu(qpn, qp, w, issue);
            return;
        case op::rdma_write:
        case op::send:
        case op::immediate_data:
        case op::rdma_write_with_imm: break;
        default: reject(regmap::cqe_status::bad_opcode, "not a work-request opcode of this device"); return;
    }
    if (w.inline_payload != nullptr && w.opcode != op::send && w.opcode != op::rdma_write &&
        w.opcode != op::rdma_write_with_imm) {
        reject(regmap::cqe_status::bad_opcode, "inline data on a work request that carries no payload");
        return;
    }
    const bool carries_payload = w.opcode != op::immediate_data && w.inline_payload == nullptr;
    if (carries_payload && !check_local(qp, w.local_stag, w.local_addr, w.length)) {
        reject(regmap::cqe_status::local_protection_error,
               "local STag does not cover the buffer (or belongs to another protection domain)");
        return;
    }
    std::uint64_t stream_end = 0;
    if (w.opcode == op::rdma_write || w.opcode == op::rdma_write_with_imm) {
        if (!post_message(qpn, qp, w, true, ddp::Opcode::rdma_write, w.inline_payload, w.length, issue, &stream_end)) {
            return;
        }
        ++counters_.writes;
        counters_.write_bytes += w.length;
    }
    if (w.opcode == op::send) {
        // RFC 5040 §4.3/§5: the Send variants differ in SE and in carrying an STag to invalidate.
        const ddp::Opcode o = w.imm_or_inv != 0
                                  ? (w.solicited ? ddp::Opcode::send_se_invalidate : ddp::Opcode::send_invalidate)
                                  : (w.solicited ? ddp::Opcode::send_se : ddp::Opcode::send);
        if (!post_message(qpn, qp, w, false, o, w.inline_payload, w.length, issue, &stream_end)) return;
        ++counters_.sends;
        counters_.send_bytes += w.length;
    }
    if (w.opcode == op::immediate_data || w.opcode == op::rdma_write_with_imm) {
        // RFC 7306 §6: 8 bytes in one untagged message on queue 0; after the Write it belongs to, so
        // the peer completes it only once the Write is placed (in-order delivery, RFC 5040 §5.5).
        std::uint8_t imm[ddp::kImmediateDataSize];
        ddp::encode_immediate(w.operand, imm);
        if (!post_message(qpn, qp, w, false, w.solicited ? ddp::Opcode::immediate_se : ddp::Opcode::immediate, imm,
                          sizeof imm, issue, &stream_end)) {
            return;
        }
        ++counters_.immediates;
    }
    // Complete at the sender once TCP has the last byte acknowledged (RFC 5040 §5.5).
    qp.pending.push_back({stream_end, w.index, w.wr_id, w.length, w.opcode, w.signaled});
}

bool rdma_engine::post_message(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, bool tagged, ddp::Opcode opcode,
                               const std::uint8_t* inline_data, std::uint32_t length, sc_core::sc_time& issue,
                               std::uint64_t* stream_end) {
    const std::vector<ddp::Segment> segments = ddp::segment_message(length, qp.max_ulpdu, tagged);
    const std::size_t header_len = tagged ? ddp::kTaggedHeaderSize : ddp::kUntaggedHeaderSize;
    // Untagged messages on queue 0 carry the next MSN (RFC 5041 §5.1: per queue, from 1).
    const std::uint32_t msn = tagged ? 0 : ++qp.send_msn;
    for (const ddp::Segment& seg : segments) {
        const std::size_t ulpdu_len = header_len + seg.length;
        if (!wait_for_space(qp, ulpdu_len, issue)) {
            // The QP failed while this request waited for room: it completes as flushed.
            complete_with_error(qpn, qp, w, regmap::cqe_status::flushed, issue);
            ++counters_.flushed;
            return false;
        }
        ddp::Header h;
        h.tagged = tagged;
        h.last = seg.last;
        h.opcode = opcode;
        if (tagged) {
            h.stag = w.remote_stag;
            h.tagged_offset = w.remote_to + seg.offset;
        } else {
            h.invalidate_stag = opcode == ddp::Opcode::send_invalidate || opcode == ddp::Opcode::send_se_invalidate
                                    ? w.imm_or_inv
                                    : 0;
            h.queue = ddp::kQueueSend;
            h.msn = msn;
            h.mo = static_cast<std::uint32_t>(seg.offset);
        }
        tx_scratch_.resize(ulpdu_len);
        ddp::encode(h, tx_scratch_.data());
        tx_pipe_.reserve_lt(issue, cycles_time(params_.cycles_per_segment, params_.clock_hz));
        // The payload read is issued now and completes later; reads of successive segments overlap on
        // the bus (the PCIe model serialises their TLPs and completions).
        sc_core::sc_time data = issue;
        stream_ext ext;
        ext.conn = qp.conn;
        ext.tag = w.wr_id;
        if (inline_data != nullptr) {
            std::memcpy(tx_scratch_.data() + header_len, inline_data + seg.offset, seg.length);
        } else if (seg.length > 0) {
            if (mem_read(dma_out, w.local_addr + seg.offset, tx_scratch_.data() + header_len, seg.length, data) !=
                tlm::TLM_OK_RESPONSE) {
                RNIC_MLOG_D(error, rdma, issue, "QP " << qpn << ": payload DMA read failed at 0x" << std::hex
                                                      << w.local_addr + seg.offset);
                complete_with_error(qpn, qp, w, regmap::cqe_status::local_protection_error, issue);
                enter_error(qpn, qp, issue);
                return false;
            }
            ext.host_addr = w.local_addr + seg.offset;
            ext.host_len = static_cast<std::uint32_t>(seg.length);
            ext.header_len = static_cast<std::uint32_t>(header_len);
            std::memcpy(ext.header, tx_scratch_.data(), header_len);
        }
        if (send_stream(ulpdu_tx_out, ext, tx_scratch_.data(), ulpdu_len, data) != tlm::TLM_OK_RESPONSE) {
            RNIC_MLOG_D(error, rdma, issue, "QP " << qpn << ": the framing unit refused a segment");
            complete_with_error(qpn, qp, w, regmap::cqe_status::transport_error, issue);
            enter_error(qpn, qp, issue);
            return false;
        }
        *stream_end = ext.stream_end;
        ++counters_.tx_segments;
    }
    return true;
}

ddp::Header rdma_engine::request_header(const queue_pair& qp, ddp::Opcode opcode) {
    // Queue 1 carries Read and Atomic Requests; its MSN is taken once the request is sent.
    ddp::Header h;
    h.tagged = false;
    h.last = true;
    h.opcode = opcode;
    h.queue = ddp::kQueueReadRequest;
    h.msn = qp.read_req_msn + 1;
    return h;
}

void rdma_engine::send_rtr(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& issue) {
    // RFC 6581 §9.2: the negotiated zero-length message. Its STag and TO are not checked by the
    // receiver (RFC 5041 §5.2, RFC 5040 §5.2.1); STag 1 rather than 0, which some devices treat
    // specially (Linux siw does the same). Neither takes a send-queue slot or makes a completion.
    const qp_stream::rtr kind = qp.rtr_to_send;
    qp.rtr_to_send = qp_stream::rtr::none;
    constexpr std::uint32_t kRtrStag = 1;
    if (kind == qp_stream::rtr::write) {
        ddp::Header h;
        h.tagged = true;
        h.last = true;
        h.opcode = ddp::Opcode::rdma_write;
        h.stag = kRtrStag;
        h.tagged_offset = 0;
        if (!wait_for_space(qp, ddp::kTaggedHeaderSize, issue)) return;
        std::uint8_t ulpdu[ddp::kTaggedHeaderSize];
        ddp::encode(h, ulpdu);
        tx_pipe_.reserve_lt(issue, cycles_time(params_.cycles_per_segment, params_.clock_hz));
        stream_ext ext;
        ext.conn = qp.conn;
        sc_core::sc_time data = issue;
        if (send_stream(ulpdu_tx_out, ext, ulpdu, sizeof ulpdu, data) != tlm::TLM_OK_RESPONSE) {
            enter_error(qpn, qp, issue);
            return;
        }
        ++counters_.tx_segments;
    } else {
        const ddp::Header h = request_header(qp, ddp::Opcode::read_request);
        ddp::ReadRequest rr;
        rr.sink_stag = kRtrStag;
        rr.sink_to = 0;
        rr.size = 0;
        rr.src_stag = kRtrStag;
        rr.src_to = 0;
        std::uint8_t body[ddp::kReadRequestSize];
        ddp::encode(rr, body);
        pending_completion p{0, 0, 0, 0, regmap::wr_opcode::rdma_read, false};
        p.rtr = true;
        p.sink_stag = kRtrStag;
        // Not held to ORD: it goes first, and RFC 6581 §9.1 has the responder offer an IRD of 1
        // for it even when the initiator's ORD is 0.
        if (!send_untagged(qp, h, body, sizeof body, 0, issue, &p.stream_end)) {
            enter_error(qpn, qp, issue);
            return;
        }
        ++qp.read_req_msn;
        ++qp.reads_outstanding;
        p.done = false;
        qp.pending.push_back(p);
    }
    ++counters_.rtrs_sent;
    RNIC_MLOG_D(debug, rdma, issue, "QP " << qpn << ": RTR sent ("
                                          << (kind == qp_stream::rtr::write ? "zero-length RDMA Write"
                                                                            : "zero-length RDMA Read Request")
                                          << ")");
}

void rdma_engine::post_read_request(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, sc_core::sc_time& issue) {
    const memory_region* sink = writable_local(qp, w.local_stag, w.local_addr, w.length);
    if (sink == nullptr) {
        ++counters_.bad_wqes;
        complete_with_error(qpn, qp, w, regmap::cqe_status::local_protection_error, issue);
        return;
    }
    wait_for_ord(qp, issue);
    const ddp::Header h = request_header(qp, ddp::Opcode::read_request);
    ddp::ReadRequest rr;
    rr.sink_stag = w.local_stag;
    rr.sink_to = sink->cfg.to_base + (w.local_addr - sink->cfg.addr);
    rr.size = w.length;
    rr.src_stag = w.remote_stag;
    rr.src_to = w.remote_to;
    std::uint8_t body[ddp::kReadRequestSize];
    ddp::encode(rr, body);
    pending_completion p{0, w.index, w.wr_id, w.length, w.opcode, w.signaled};
    p.sink_stag = rr.sink_stag;
    p.sink_to = rr.sink_to;
    if (send_request(qpn, qp, h, body, sizeof body, w, issue, p)) ++counters_.reads;
}

bool rdma_engine::send_request(std::uint32_t qpn, queue_pair& qp, const ddp::Header& h, const std::uint8_t* body,
                               std::size_t body_len, const send_wqe& w, sc_core::sc_time& issue, pending_completion p) {
    // Reads and atomics: the next MSN of queue 1 is taken only once the request is on its way; it
    // then waits for its response (done = false) and counts against ORD.
    if (!send_untagged(qp, h, body, body_len, w.wr_id, issue, &p.stream_end)) {
        complete_with_error(qpn, qp, w, regmap::cqe_status::flushed, issue);
        ++counters_.flushed;
        return false;
    }
    ++qp.read_req_msn;
    ++qp.reads_outstanding;
    p.done = false;
    qp.pending.push_back(p);
    return true;
}

void rdma_engine::post_atomic(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, sc_core::sc_time& issue) {
    if (w.length != 8 || writable_local(qp, w.local_stag, w.local_addr, 8) == nullptr) {
        ++counters_.bad_wqes;
        complete_with_error(qpn, qp, w, regmap::cqe_status::local_protection_error, issue);
        return;
    }
    wait_for_ord(qp, issue);  // atomics count against ORD like Reads (RFC 7306 §5.2.1 rule 4)
    ddp::AtomicRequest req;
    const bool add = w.opcode == regmap::wr_opcode::atomic_fetch_add;
    req.op = add ? ddp::AtomicOpcode::fetch_add : ddp::AtomicOpcode::compare_swap;
    req.request_id = w.index;
    req.stag = w.remote_stag;
    req.tagged_offset = w.remote_to;
    req.add_or_swap_data = w.operand;
    req.add_or_swap_mask = w.add_or_swap_mask;
    req.compare_data = add ? 0 : w.compare;
    req.compare_mask = w.compare_mask;
    std::uint8_t body[ddp::kAtomicRequestSize];
    ddp::encode(req, body);
    // RFC 7306 §5.2.1 rule 5: atomics share the Read Request queue.
    const ddp::Header h = request_header(qp, ddp::Opcode::atomic_request);
    pending_completion p{0, w.index, w.wr_id, 8, w.opcode, w.signaled};
    p.atomic = true;
    p.request_id = w.index;
    p.result_addr = w.local_addr;
    if (send_request(qpn, qp, h, body, sizeof body, w, issue, p)) ++counters_.atomics;
}

void rdma_engine::post_local_invalidate(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, sc_core::sc_time& issue) {
    // In send-queue order: work requests posted before it have already been processed (their
    // payload read), so the STag stops being usable exactly at this point of the queue.
    memory_region* mr = lookup_stag(w.imm_or_inv);
    if (mr == nullptr || mr->cfg.pd != qp.cfg.pd) {
        ++counters_.bad_wqes;
        RNIC_MLOG_D(warn, rdma, issue, "QP " << qpn << ": local invalidate of STag 0x" << std::hex << w.imm_or_inv
                                             << ": not a valid STag of this protection domain");
        complete_with_error(qpn, qp, w, regmap::cqe_status::local_protection_error, issue);
        return;
    }
    mr->valid = false;
    ++counters_.local_invalidates;
    // Completes in order with the rest of the send queue, with nothing to wait for on the wire.
    const std::uint64_t after = qp.pending.empty() ? 0 : qp.pending.back().stream_end;
    qp.pending.push_back({after, w.index, w.wr_id, 0, w.opcode, w.signaled});
    retire_completions(qpn, qp, issue);
}

void rdma_engine::post_raw_ulpdu(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, sc_core::sc_time& issue) {
    if (!check_local(qp, w.local_stag, w.local_addr, w.length) || w.length < 1 || w.length > qp.max_ulpdu ||
        w.length < ddp::header_size_from_control(0)) {
        ++counters_.bad_wqes;
        complete_with_error(qpn, qp, w, regmap::cqe_status::local_length_error, issue);
        return;
    }
    if (!wait_for_space(qp, w.length, issue)) {
        complete_with_error(qpn, qp, w, regmap::cqe_status::flushed, issue);
        return;
    }
    tx_scratch_.resize(w.length);
    sc_core::sc_time data = issue;
    if (mem_read(dma_out, w.local_addr, tx_scratch_.data(), w.length, data) != tlm::TLM_OK_RESPONSE) {
        complete_with_error(qpn, qp, w, regmap::cqe_status::local_protection_error, issue);
        return;
    }
    stream_ext ext;
    ext.conn = qp.conn;
    ext.tag = w.wr_id;
    if (send_stream(ulpdu_tx_out, ext, tx_scratch_.data(), w.length, data) != tlm::TLM_OK_RESPONSE) {
        complete_with_error(qpn, qp, w, regmap::cqe_status::transport_error, issue);
        return;
    }
    ++counters_.raw_ulpdus;
    ++counters_.tx_segments;
    RNIC_MLOG_D(info, rdma, issue, "QP " << qpn << ": raw ULPDU of " << w.length << " bytes sent (test mode)");
    qp.pending.push_back({ext.stream_end, w.index, w.wr_id, w.length, w.opcode, w.signaled});
}

void rdma_engine::complete_with_error(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, regmap::cqe_status status,
                                      sc_core::sc_time& delay) {
    cqe_fields f;
    f.wr_id = w.wr_id;
    f.opcode = w.raw_opcode;
    f.status = status;
    f.qpn = qpn;
    f.wqe_index = w.index;
    post_cqe(qp.cfg.send_cq, f, delay);
}

bool rdma_engine::check_local(const queue_pair& qp, std::uint32_t stag, std::uint64_t addr, std::uint64_t len) const {
    const memory_region* mr = lookup_stag(stag);
    if (mr == nullptr || mr->cfg.pd != qp.cfg.pd) return false;
    return addr >= mr->cfg.addr && len <= mr->cfg.length && addr - mr->cfg.addr <= mr->cfg.length - len;
}

const rdma_engine::memory_region* rdma_engine::writable_local(const queue_pair& qp, std::uint32_t stag,
                                                               std::uint64_t addr, std::uint64_t len) const {
    // The local buffer a Read Response or an atomic's result lands in: covered, same PD, local write.
    const memory_region* mr = lookup_stag(stag);
    if (!check_local(qp, stag, addr, len) || mr == nullptr || (mr->cfg.access & regmap::mr_access::local_write) == 0) {
        return nullptr;
    }
    return mr;
}

void rdma_engine::wait_for_ord(queue_pair& qp, sc_core::sc_time& issue) {
    // ORD: no more Reads and atomics in flight than negotiated.
    while (qp.state == qp_state::rts && qp.reads_outstanding >= qp.ord) {
        wait(issue);
        issue = sc_core::SC_ZERO_TIME;
        wait(read_done_event_);
    }
}

bool rdma_engine::wait_for_space(queue_pair& qp, std::size_t ulpdu_len, sc_core::sc_time& issue) {
    if (toe_out->tcp_send_space(qp.conn) < ulpdu_len + fpdu_overhead(ulpdu_len)) {
        // Back-pressure from the TCP send buffer: catch up with time, then wait for ACKs.
        wait(issue);
        issue = sc_core::SC_ZERO_TIME;
        while ((qp.state == qp_state::rts || qp.state == qp_state::closing) &&
               toe_out->tcp_send_space(qp.conn) < ulpdu_len + fpdu_overhead(ulpdu_len)) {
            wait(space_event_);
        }
    }
    return qp.state == qp_state::rts || qp.state == qp_state::closing;
}

void rdma_engine::on_tx_acked(std::uint32_t conn, std::uint64_t acked_offset, const sc_core::sc_time& delay) {
    space_event_.notify(delay);
    const int qpn = qpn_of_conn(conn);
    if (qpn < 0) return;
    queue_pair& qp = qps_[static_cast<std::size_t>(qpn)];
    qp.acked = acked_offset;
    sc_core::sc_time d = delay;
    retire_completions(static_cast<std::uint32_t>(qpn), qp, d);
}

void rdma_engine::retire_completions(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& delay) {
    // Work requests complete in the order they were posted (RFC 5040 §5.5): a Write when TCP has
    // its last byte acknowledged, a Read when its response has been placed.
    while (!qp.pending.empty() && qp.pending.front().stream_end <= qp.acked && qp.pending.front().done) {
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
    maybe_finish_closing(qpn, qp);
}

// ---- completions -----------------------------------------------------------------------------

void rdma_engine::post_cqe(std::uint32_t cqn, const cqe_fields& f, sc_core::sc_time& delay) {
    completion_queue& cq = cqs_[cqn];
    if (cq.producer - cq.consumer >= cq.cfg.entries) {
        // The driver has not freed room: a CQ overrun (an asynchronous error in verbs terms).
        ++cq.overruns;
        RNIC_MLOG_D(error, rdma, delay, "CQ " << cqn << " overrun: completion of wr_id " << f.wr_id << " lost");
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
    put_le32(cqe + off::owner, (phase << 31) | static_cast<std::uint32_t>(f.flags) << off::flags_shift |
                                   (f.receive ? 1u : 0u));
    const std::uint64_t addr = cq.cfg.ring + (cq.producer % cq.cfg.entries) * regmap::kCqeSize;
    if (mem_write(dma_out, addr, cqe, sizeof cqe, delay) != tlm::TLM_OK_RESPONSE) {
        RNIC_MLOG_D(error, rdma, delay, "CQ " << cqn << ": CQE write to 0x" << std::hex << addr << " failed");
        return;
    }
    ++cq.producer;
    ++counters_.cqes;
    if (cq.armed) {
        cq.armed = false;
        raise_msix(cq.cfg.msix_vector, delay);
    }
}

void rdma_engine::raise_msix(std::uint32_t vector, sc_core::sc_time& delay) {
    send_msix(irq_out, vector, delay);
    ++counters_.interrupts;
}

// ---- receive ---------------------------------------------------------------------------------

rdma_engine::access_check rdma_engine::check_access(const queue_pair& qp, std::uint32_t stag, std::uint64_t to,
                                                    std::uint64_t len, std::uint32_t right) const {
    access_check r;
    const memory_region* mr = lookup_stag(stag);
    // RFC 5041 §7.1 tagged checks (DDP layer), then RFC 5040 §7 access rights (RDMAP layer).
    if (mr == nullptr) {
        r.etype = ddp::term::kDdpTaggedBuffer;
        r.code = ddp::term::kDdpTaggedInvalidStag;
        r.what = "invalid STag";
        return r;
    }
    if (mr->cfg.pd != qp.cfg.pd) {
        r.etype = ddp::term::kDdpTaggedBuffer;
        r.code = ddp::term::kDdpTaggedStagNotAssociated;
        r.what = "STag not associated with this stream (protection domain)";
        return r;
    }
    if (to + len < to) {
        r.etype = ddp::term::kDdpTaggedBuffer;
        r.code = ddp::term::kDdpTaggedToWrap;
        r.what = "tagged offset wraps";
        return r;
    }
    if (to < mr->cfg.to_base || len > mr->cfg.length || to - mr->cfg.to_base > mr->cfg.length - len) {
        r.etype = ddp::term::kDdpTaggedBuffer;
        r.code = ddp::term::kDdpTaggedBaseOrBounds;
        r.what = "base or bounds violation";
        return r;
    }
    if ((mr->cfg.access & right) == 0) {
        r.layer = ddp::TermLayer::rdma;
        r.etype = ddp::term::kRdmaRemoteProtection;
        r.code = ddp::term::kRdmaAccessRights;
        r.what = "access rights violation";
        return r;
    }
    r.ok = true;
    r.host_addr = mr->cfg.addr + (to - mr->cfg.to_base);
    return r;
}

void rdma_engine::rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    stream_ext* ext = get_stream_ext(gp);
    rx_ext_ = ext;
    const int qpn = ext != nullptr ? qpn_of_conn(ext->conn) : -1;
    if (qpn < 0) {
        ++counters_.rx_dropped;
        return;
    }
    queue_pair& qp = qps_[static_cast<std::size_t>(qpn)];
    rx_pipe_.reserve_lt(delay, cycles_time(params_.cycles_per_segment, params_.clock_hz));
    if (ext->kind == stream_kind::out_of_order) {
        const bool placed = place_out_of_order(qp, gp.get_data_ptr(), gp.get_data_length(), delay);
        gp.set_response_status(placed ? tlm::TLM_OK_RESPONSE : tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    ++counters_.rx_segments;
    const std::uint8_t* ulpdu = gp.get_data_ptr();
    const std::size_t len = gp.get_data_length();
    std::string error;
    const auto h = ddp::decode_header(ulpdu, len, &error);
    if (qp.state != qp_state::rts && qp.state != qp_state::closing) {
        ++counters_.rx_dropped;  // after Terminate nothing more is placed (RFC 5040 §6.2)
        return;
    }
    const auto fail = [&](ddp::TermLayer layer, std::uint8_t etype, std::uint8_t code) {
        send_terminate(static_cast<std::uint32_t>(qpn), qp, layer, etype, code, ulpdu, len, delay);
        enter_error(static_cast<std::uint32_t>(qpn), qp, delay);
    };
    if (!h) {
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": " << error);
        fail(ddp::TermLayer::llp, ddp::term::kLlpMpa, ddp::term::kMpaMarkerLengthMismatch);
        return;
    }
    if (h->ddp_version != 1) {
        // RFC 5041 §7.2: invalid DDP version, reported in the buffer model the segment claims.
        fail(ddp::TermLayer::ddp, h->tagged ? ddp::term::kDdpTaggedBuffer : ddp::term::kDdpUntaggedBuffer,
             h->tagged ? ddp::term::kDdpTaggedInvalidVersion : ddp::term::kDdpUntaggedInvalidVersion);
        return;
    }
    if (h->rdmap_version != 1) {
        fail(ddp::TermLayer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaInvalidVersion);
        return;
    }
    if (qp.hold_tx) {
        // The initiator's first FPDU (its RTR, or its first message): the responder may send now
        // (RFC 5044 §7.1.2 rule 4, RFC 6581 §5).
        qp.hold_tx = false;
        if (qp.sq_producer != qp.sq_consumer || !qp.sq_doorbells.empty()) ++counters_.tx_held;
        work_event_.notify(delay);
    }
    if (h->opcode == ddp::Opcode::terminate && !h->tagged) {
        terminate_received(static_cast<std::uint32_t>(qpn), qp, ulpdu, len, delay);
        return;
    }
    if (h->tagged && h->opcode == ddp::Opcode::rdma_write) {
        if (ext->already_placed) {
            // Its payload went to host memory when the segment arrived out of order; in order now,
            // only the (ordered) rest of the processing remains (RFC 5041 §5: placement may be out
            // of order, delivery is not).
            ++counters_.rx_already_placed;
            return;
        }
        place_tagged(static_cast<std::uint32_t>(qpn), qp, *h, ulpdu, len, delay);
        return;
    }
    if (!h->tagged && h->opcode == ddp::Opcode::atomic_request) {
        execute_atomic(static_cast<std::uint32_t>(qpn), qp, *h, ulpdu, len, delay);
        return;
    }
    if (!h->tagged && h->opcode == ddp::Opcode::atomic_response) {
        complete_atomic(static_cast<std::uint32_t>(qpn), qp, *h, ulpdu, len, delay);
        return;
    }
    if (!h->tagged && h->opcode == ddp::Opcode::read_request) {
        accept_read_request(static_cast<std::uint32_t>(qpn), qp, *h, ulpdu, len, delay);
        return;
    }
    if (h->tagged && h->opcode == ddp::Opcode::read_response) {
        place_read_response(static_cast<std::uint32_t>(qpn), qp, *h, ulpdu, len, ext->already_placed, delay);
        return;
    }
    const bool is_send = h->opcode == ddp::Opcode::send || h->opcode == ddp::Opcode::send_se ||
                         h->opcode == ddp::Opcode::send_invalidate || h->opcode == ddp::Opcode::send_se_invalidate ||
                         h->opcode == ddp::Opcode::immediate || h->opcode == ddp::Opcode::immediate_se;
    if (!h->tagged && is_send) {
        place_send(static_cast<std::uint32_t>(qpn), qp, *h, ulpdu, len, delay);
        return;
    }
    // A reserved opcode, or a known one in the wrong buffer model (RFC 5040 §7.2 "Unexpected OpCode").
    ++counters_.protection_errors;
    RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": unexpected or unsupported opcode " << ddp::to_string(h->opcode)
                                         << (h->tagged ? " (tagged)" : " (untagged)"));
    fail(ddp::TermLayer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaUnexpectedOpcode);
}

void rdma_engine::terminate_received(std::uint32_t qpn, queue_pair& qp, const std::uint8_t* ulpdu, std::size_t len,
                                     sc_core::sc_time& delay) {
    ++counters_.terminates_received;
    std::string error;
    const auto t = ddp::decode_terminate(ulpdu + ddp::kUntaggedHeaderSize, len - ddp::kUntaggedHeaderSize, &error);
    if (t && !qp.term.valid) {
        qp.term = {true, true, t->layer, t->etype, t->code};
    }
    RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": Terminate received from the peer (layer "
                                         << (t ? static_cast<int>(t->layer) : -1) << ", type "
                                         << (t ? static_cast<int>(t->etype) : -1) << ", code "
                                         << (t ? static_cast<int>(t->code) : -1) << "); QP to Error");
    // RFC 5040 §5.4: a Terminate is the last message of the stream; the receiver moves to Error.
    qp.state = qp_state::terminate;
    enter_error(qpn, qp, delay);
}

void rdma_engine::place_tagged(std::uint32_t qpn, queue_pair& qp, const ddp::Header& h, const std::uint8_t* ulpdu,
                               std::size_t len, sc_core::sc_time& delay) {
    const std::size_t payload = len - ddp::kTaggedHeaderSize;
    // RFC 5041 §5.2: the STag and TO of a zero-length tagged message are not checked (an RTR, RFC 6581).
    if (payload == 0 && h.last) return;
    const access_check chk = check_access(qp, h.stag, h.tagged_offset, payload, regmap::mr_access::remote_write);
    if (!chk.ok) {
        ++counters_.protection_errors;
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": RDMA Write to STag 0x" << std::hex << h.stag << " TO 0x"
                                             << h.tagged_offset << std::dec << " length " << payload << ": "
                                             << chk.what);
        send_terminate(qpn, qp, chk.layer, chk.etype, chk.code, ulpdu, len, delay);
        enter_error(qpn, qp, delay);
        return;
    }
    if (payload > 0 &&
        place_payload(chk.host_addr, ulpdu + ddp::kTaggedHeaderSize, payload, ddp::kTaggedHeaderSize, delay) !=
            tlm::TLM_OK_RESPONSE) {
        // The region was registered but the host refused the DMA: a local catastrophic error.
        send_terminate(qpn, qp, ddp::TermLayer::rdma, ddp::term::kRdmaLocalCatastrophic,
                       ddp::term::kRdmaCatastrophicStream, ulpdu, len, delay);
        enter_error(qpn, qp, delay);
        return;
    }
    counters_.placed_bytes += payload;
}

tlm::tlm_response_status rdma_engine::place_payload(std::uint64_t host_addr, const std::uint8_t* payload,
                                                    std::size_t len, std::size_t header_len, sc_core::sc_time& delay) {
    if (rx_ext_ == nullptr || !rx_ext_->fpdu_markers) return mem_write(dma_out, host_addr, payload, len, delay);
    // The payload crossed the wire with MPA markers between its bytes: tell the DMA engine where,
    // so that a marker-fragmenting DMA (seed 001 §6) pays one transfer per marker-free run.
    // Marker-space position of the first payload byte: past a leading marker, the 2-byte
    // ULPDU_Length and the DDP/RDMAP headers, skipping any marker inside them (RFC 5044 §4.3).
    constexpr std::uint64_t kInterval = proto::mpa::kMarkerInterval, kMarker = proto::mpa::kMarkerSize;
    std::uint64_t pos = rx_ext_->fpdu_pos;
    std::uint64_t data = proto::mpa::kLengthFieldSize + header_len;
    while (true) {
        if (pos % kInterval < kMarker) pos += kMarker - pos % kInterval;
        if (data == 0) break;
        const std::uint64_t step = std::min<std::uint64_t>(kInterval - pos % kInterval, data);
        pos += step;
        data -= step;
    }
    dma_ext ext;
    ext.marker_breaks = mpa_marker_breaks(static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(len));
    return mem_transport(dma_out, tlm::TLM_WRITE_COMMAND, host_addr, const_cast<std::uint8_t*>(payload), len, delay,
                         &ext);
}

bool rdma_engine::send_untagged(queue_pair& qp, const ddp::Header& h, const std::uint8_t* body, std::size_t body_len,
                                std::uint64_t tag, sc_core::sc_time& issue, std::uint64_t* stream_end) {
    const std::size_t ulpdu_len = ddp::kUntaggedHeaderSize + body_len;
    if (!wait_for_space(qp, ulpdu_len, issue)) return false;
    tx_scratch_.resize(ulpdu_len);
    ddp::encode(h, tx_scratch_.data());
    std::memcpy(tx_scratch_.data() + ddp::kUntaggedHeaderSize, body, body_len);
    tx_pipe_.reserve_lt(issue, cycles_time(params_.cycles_per_segment, params_.clock_hz));
    stream_ext ext;
    ext.conn = qp.conn;
    ext.tag = tag;
    sc_core::sc_time data = issue;
    if (send_stream(ulpdu_tx_out, ext, tx_scratch_.data(), ulpdu_len, data) != tlm::TLM_OK_RESPONSE) {
        qp.state = qp_state::error;
        return false;
    }
    ++counters_.tx_segments;
    if (stream_end != nullptr) *stream_end = ext.stream_end;
    return true;
}

void rdma_engine::fail_request(std::uint32_t qpn, queue_pair& qp, const ddp::Header& h, const std::uint8_t* ulpdu,
                               std::size_t len, ddp::TermLayer layer, std::uint8_t etype, std::uint8_t code,
                               const std::string& what, sc_core::sc_time& delay) {
    ++counters_.protection_errors;
    RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": " << ddp::to_string(h.opcode) << " MSN " << h.msn << ": " << what);
    send_terminate(qpn, qp, layer, etype, code, ulpdu, len, delay);
    enter_error(qpn, qp, delay);
}

bool rdma_engine::check_request_queue(std::uint32_t qpn, queue_pair& qp, const ddp::Header& h,
                                      const std::uint8_t* ulpdu, std::size_t len, sc_core::sc_time& delay) {
    // Read Requests and Atomic Requests share queue 1 and its MSN sequence (RFC 5040 §5.1,
    // RFC 7306 §5.2.1 rule 5); DDP untagged-buffer errors otherwise (RFC 5041 §7.2).
    if (h.queue != ddp::kQueueReadRequest) {
        fail_request(qpn, qp, h, ulpdu, len, ddp::TermLayer::ddp, ddp::term::kDdpUntaggedBuffer,
                     ddp::term::kDdpUntaggedInvalidQn, "wrong queue", delay);
        return false;
    }
    if (h.msn != qp.read_req_msn_rx + 1) {
        fail_request(qpn, qp, h, ulpdu, len, ddp::TermLayer::ddp, ddp::term::kDdpUntaggedBuffer,
                     ddp::term::kDdpUntaggedInvalidMsn, "MSN out of sequence", delay);
        return false;
    }
    return true;
}

std::uint8_t rdma_engine::rdmap_protection_code(const access_check& chk) {
    // A source checked by the RDMAP layer reports RDMAP codes (RFC 5040 §7.2) for what DDP's tagged
    // checks found.
    if (chk.layer == ddp::TermLayer::rdma) return chk.code;
    switch (chk.code) {
        case ddp::term::kDdpTaggedInvalidStag: return ddp::term::kRdmaInvalidStag;
        case ddp::term::kDdpTaggedBaseOrBounds: return ddp::term::kRdmaBaseOrBounds;
        case ddp::term::kDdpTaggedToWrap: return ddp::term::kRdmaToWrap;
        default: return ddp::term::kRdmaStagNotAssociated;
    }
}

void rdma_engine::execute_atomic(std::uint32_t qpn, queue_pair& qp, const ddp::Header& h, const std::uint8_t* ulpdu,
                                 std::size_t len, sc_core::sc_time& delay) {
    std::string error;
    const auto req = ddp::decode_atomic_request(ulpdu + ddp::kUntaggedHeaderSize, len - ddp::kUntaggedHeaderSize, &error);
    auto terminate = [&](ddp::TermLayer layer, std::uint8_t etype, std::uint8_t code, const std::string& what) {
        fail_request(qpn, qp, h, ulpdu, len, layer, etype, code, what, delay);
    };
    if (!check_request_queue(qpn, qp, h, ulpdu, len, delay)) return;
    if (!req || (req->op != ddp::AtomicOpcode::fetch_add && req->op != ddp::AtomicOpcode::compare_swap)) {
        // RFC 7306 §5.2.1 rule 4: an unsupported AOpCode is an error surfaced to the requester.
        terminate(ddp::TermLayer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaUnexpectedOpcode,
                  req ? "unsupported atomic opcode" : error);
        return;
    }
    if (req->tagged_offset % 8 != 0) {
        // RFC 7306 §8.2: misaligned target - Remote Operation Error, catastrophic for the stream;
        // the target memory is not touched.
        terminate(ddp::TermLayer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaCatastrophicStream,
                  "target not 64-bit aligned");
        return;
    }
    if (qp.responses.size() >= qp.ird) {
        // Atomic Requests share queue 1 and the IRD with Reads (RFC 7306 §5.2.1).
        terminate(ddp::TermLayer::ddp, ddp::term::kDdpUntaggedBuffer, ddp::term::kDdpUntaggedNoBuffer,
                  "more outstanding requests than IRD");
        return;
    }
    const access_check chk = check_access(qp, req->stag, req->tagged_offset, 8, regmap::mr_access::remote_atomic);
    if (!chk.ok) {
        terminate(ddp::TermLayer::rdma, ddp::term::kRdmaRemoteProtection, rdmap_protection_code(chk), chk.what);
        return;
    }
    std::uint64_t original = 0;
    if (!perform_atomic(chk.host_addr, *req, &original, delay)) {
        terminate(ddp::TermLayer::rdma, ddp::term::kRdmaLocalCatastrophic, ddp::term::kRdmaCatastrophicStream,
                  "host refused the atomic's memory access");
        return;
    }
    ++counters_.atomics_executed;
    qp.read_req_msn_rx = h.msn;
    read_response_job job{};
    job.atomic = true;
    job.request_id = req->request_id;
    job.original = original;
    qp.responses.push_back(job);
    work_event_.notify(delay);
}

bool rdma_engine::perform_atomic(std::uint64_t addr, const ddp::AtomicRequest& req, std::uint64_t* original,
                                 sc_core::sc_time& delay) {
    const bool add = req.op == ddp::AtomicOpcode::fetch_add;
    const auto compute = [&](std::uint64_t v) {
        return add ? atomic::fetch_add(v, req.add_or_swap_data, req.add_or_swap_mask)
                   : atomic::compare_swap(v, req.add_or_swap_data, req.add_or_swap_mask, req.compare_data,
                                          req.compare_mask);
    };
    std::uint8_t bytes[8];
    if (!params_.pcie_atomic_ops) {
        // Read-modify-write under the unit's lock: nothing else of this RNIC touches host memory
        // between the read and the write (one receive call performs both), so the operation is atomic
        // across all QPs of the RNIC (RFC 7306 §5). Host memory holds the value little-endian.
        if (mem_read(dma_out, addr, bytes, 8, delay) != tlm::TLM_OK_RESPONSE) return false;
        *original = get_le64(bytes);
        const std::uint64_t value = compute(*original);
        if (value == *original) return true;
        put_le64(bytes, value);
        return mem_write(dma_out, addr, bytes, 8, delay) == tlm::TLM_OK_RESPONSE;
    }
    // PCIe AtomicOps (Base Spec §6.15): the root complex performs the operation, atomic also with
    // respect to the host's CPUs. An unmasked FetchAdd or CmpSwap is one AtomicOp; a masked one is
    // a read and a CAS of the computed value, repeated while someone else changed the word between.
    auto atomic_op = [&](atomic_op_ext::op kind, std::uint64_t operand, std::uint64_t compare, std::uint64_t* old) {
        atomic_op_ext aop;
        aop.kind = kind;
        aop.operand = operand;
        aop.compare = compare;
        ++counters_.atomic_ops_issued;
        if (mem_transport(dma_out, tlm::TLM_READ_COMMAND, addr, bytes, 8, delay, &aop) != tlm::TLM_OK_RESPONSE) {
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
    if (mem_read(dma_out, addr, bytes, 8, delay) != tlm::TLM_OK_RESPONSE) return false;
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
        ++counters_.atomic_cas_retries;
        seen = old;
    }
    RNIC_MLOG_D(error, rdma, delay, "masked atomic at 0x" << std::hex << addr << ": CAS kept failing");
    return false;
}

void rdma_engine::send_atomic_response(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& issue) {
    const read_response_job job = qp.responses.front();
    ddp::AtomicResponse resp;
    resp.request_id = job.request_id;
    resp.original_value = job.original;
    std::uint8_t body[ddp::kAtomicResponseSize];
    ddp::encode(resp, body);
    ddp::Header h;
    h.tagged = false;
    h.last = true;
    h.opcode = ddp::Opcode::atomic_response;
    h.queue = ddp::kQueueAtomicResponse;  // RFC 7306 §5.2.2 rule 3
    h.msn = ++qp.atomic_resp_msn;
    if (!send_untagged(qp, h, body, sizeof body, 0, issue, nullptr)) return;
    qp.responses.pop_front();
    ++counters_.atomic_responses_sent;
    maybe_finish_closing(qpn, qp);
}

void rdma_engine::complete_atomic(std::uint32_t qpn, queue_pair& qp, const ddp::Header& h, const std::uint8_t* ulpdu,
                                  std::size_t len, sc_core::sc_time& delay) {
    std::string error;
    const auto resp = ddp::decode_atomic_response(ulpdu + ddp::kUntaggedHeaderSize, len - ddp::kUntaggedHeaderSize,
                                                  &error);
    pending_completion* op = nullptr;
    for (pending_completion& p : qp.pending) {
        if (!p.done) {
            op = &p;
            break;
        }
    }
    if (h.queue != ddp::kQueueAtomicResponse || h.msn != qp.atomic_resp_msn_rx + 1 || !resp || op == nullptr ||
        !op->atomic || op->request_id != resp->request_id) {
        ++counters_.protection_errors;
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": Atomic Response does not match an outstanding atomic");
        send_terminate(qpn, qp, ddp::TermLayer::rdma, ddp::term::kRdmaRemoteOperation,
                       ddp::term::kRdmaUnexpectedOpcode, ulpdu, len, delay);
        enter_error(qpn, qp, delay);
        return;
    }
    qp.atomic_resp_msn_rx = h.msn;
    std::uint8_t bytes[8];
    put_le64(bytes, resp->original_value);
    if (mem_write(dma_out, op->result_addr, bytes, 8, delay) != tlm::TLM_OK_RESPONSE) {
        RNIC_MLOG_D(error, rdma, delay, "QP " << qpn << ": atomic result write refused by the host");
    }
    op->done = true;
    --qp.reads_outstanding;
    read_done_event_.notify(delay);
    retire_completions(qpn, qp, delay);
}

void rdma_engine::accept_read_request(std::uint32_t qpn, queue_pair& qp, const ddp::Header& h,
                                      const std::uint8_t* ulpdu, std::size_t len, sc_core::sc_time& delay) {
    std::string error;
    const auto rr = ddp::decode_read_request(ulpdu + ddp::kUntaggedHeaderSize, len - ddp::kUntaggedHeaderSize, &error);
    auto terminate = [&](ddp::TermLayer layer, std::uint8_t etype, std::uint8_t code, const std::string& what) {
        fail_request(qpn, qp, h, ulpdu, len, layer, etype, code, what, delay);
    };
    if (!check_request_queue(qpn, qp, h, ulpdu, len, delay)) return;
    if (!rr) {
        terminate(ddp::TermLayer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaUnspecified, error);
        return;
    }
    if (qp.responses.size() >= qp.ird) {
        // More Reads in flight than the IRD we offered (RFC 5040 §6.1, RFC 6581): queue 1 has no
        // free untagged buffer for this request, a DDP untagged-buffer error (RFC 5041 §7.2).
        terminate(ddp::TermLayer::ddp, ddp::term::kDdpUntaggedBuffer, ddp::term::kDdpUntaggedNoBuffer,
                  "more outstanding Read Requests than IRD");
        return;
    }
    if (rr->size == 0) {
        // RFC 5040 §5.2.1: a zero-length Read is not validated and gets a zero-length Response.
        qp.read_req_msn_rx = h.msn;
        qp.responses.push_back({rr->sink_stag, rr->sink_to, 0, 0});
        work_event_.notify(delay);
        return;
    }
    const access_check chk = check_access(qp, rr->src_stag, rr->src_to, rr->size, regmap::mr_access::remote_read);
    if (!chk.ok) {
        // A Read Request's source is checked by the RDMAP layer (RFC 5040 §7.2).
        terminate(ddp::TermLayer::rdma, ddp::term::kRdmaRemoteProtection, rdmap_protection_code(chk), chk.what);
        return;
    }
    qp.read_req_msn_rx = h.msn;
    qp.responses.push_back({rr->sink_stag, rr->sink_to, chk.host_addr, rr->size});
    work_event_.notify(delay);
}

void rdma_engine::send_read_response(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& issue) {
    const read_response_job job = qp.responses.front();
    const std::vector<ddp::Segment> segments = ddp::segment_message(job.size, qp.max_ulpdu, true);
    for (const ddp::Segment& seg : segments) {
        const std::size_t ulpdu_len = ddp::kTaggedHeaderSize + seg.length;
        if (!wait_for_space(qp, ulpdu_len, issue)) return;
        ddp::Header h;
        h.tagged = true;
        h.last = seg.last;
        h.opcode = ddp::Opcode::read_response;
        h.stag = job.sink_stag;
        h.tagged_offset = job.sink_to + seg.offset;
        tx_scratch_.resize(ulpdu_len);
        ddp::encode(h, tx_scratch_.data());
        tx_pipe_.reserve_lt(issue, cycles_time(params_.cycles_per_segment, params_.clock_hz));
        sc_core::sc_time data = issue;
        if (seg.length > 0 && mem_read(dma_out, job.src_addr + seg.offset, tx_scratch_.data() + ddp::kTaggedHeaderSize,
                                       seg.length, data) != tlm::TLM_OK_RESPONSE) {
            RNIC_MLOG_D(error, rdma, issue, "QP " << qpn << ": Read Response source DMA failed");
            sc_core::sc_time d = issue;
            enter_error(qpn, qp, d);
            return;
        }
        stream_ext ext;
        ext.conn = qp.conn;
        if (seg.length > 0) {
            ext.host_addr = job.src_addr + seg.offset;
            ext.host_len = static_cast<std::uint32_t>(seg.length);
            ext.header_len = static_cast<std::uint32_t>(ddp::kTaggedHeaderSize);
            std::memcpy(ext.header, tx_scratch_.data(), ddp::kTaggedHeaderSize);
        }
        if (send_stream(ulpdu_tx_out, ext, tx_scratch_.data(), ulpdu_len, data) != tlm::TLM_OK_RESPONSE) {
            qp.state = qp_state::error;
            return;
        }
        ++counters_.tx_segments;
    }
    qp.responses.pop_front();
    ++counters_.read_responses_sent;
    maybe_finish_closing(qpn, qp);
}

void rdma_engine::place_read_response(std::uint32_t qpn, queue_pair& qp, const ddp::Header& h,
                                      const std::uint8_t* ulpdu, std::size_t len, bool already_placed,
                                      sc_core::sc_time& delay) {
    // The response belongs to the oldest outstanding Read (responses come in request order).
    pending_completion* read = nullptr;
    for (pending_completion& p : qp.pending) {
        if (!p.done) {
            read = &p;
            break;
        }
    }
    const std::size_t payload = len - ddp::kTaggedHeaderSize;
    // RFC 5041 §5.2: a zero-length Response's STag is not checked.
    const bool zero_length = payload == 0 && h.last && read != nullptr && read->length == 0;
    if (read == nullptr || (h.stag != read->sink_stag && !zero_length)) {
        ++counters_.protection_errors;
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": Read Response without a matching outstanding Read");
        send_terminate(qpn, qp, ddp::TermLayer::rdma, ddp::term::kRdmaRemoteOperation,
                       ddp::term::kRdmaUnexpectedOpcode, ulpdu, len, delay);
        enter_error(qpn, qp, delay);
        return;
    }
    if (!already_placed && !zero_length) {
        // The sink is our own buffer: it needs local write access (RFC 5040 §2.1 sink STag). A
        // zero-length Response has nothing to place and no STag to check (RFC 5041 §5.2).
        const access_check chk = check_access(qp, h.stag, h.tagged_offset, payload, regmap::mr_access::local_write);
        if (!chk.ok || (payload > 0 && place_payload(chk.host_addr, ulpdu + ddp::kTaggedHeaderSize, payload,
                                                     ddp::kTaggedHeaderSize, delay) != tlm::TLM_OK_RESPONSE)) {
            ++counters_.protection_errors;
            send_terminate(qpn, qp, chk.layer, chk.etype, chk.code, ulpdu, len, delay);
            enter_error(qpn, qp, delay);
            return;
        }
        counters_.placed_bytes += payload;
    }
    read->received += payload;
    counters_.read_bytes += payload;
    if (!h.last) return;
    read->done = true;
    --qp.reads_outstanding;
    read_done_event_.notify(delay);
    retire_completions(qpn, qp, delay);
}

void rdma_engine::place_send(std::uint32_t qpn, queue_pair& qp, const ddp::Header& h, const std::uint8_t* ulpdu,
                             std::size_t len, sc_core::sc_time& delay) {
    // RFC 5041 §5.3 / §7.1 untagged checks, in the order of the error codes.
    auto untagged_error = [&](std::uint8_t code, const char* what) {
        ++counters_.protection_errors;
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": " << ddp::to_string(h.opcode) << " MSN " << h.msn << " MO "
                                             << h.mo << ": " << what);
        send_terminate(qpn, qp, ddp::TermLayer::ddp, ddp::term::kDdpUntaggedBuffer, code, ulpdu, len, delay);
        enter_error(qpn, qp, delay);
    };
    auto local_error = [&](const char* what) {
        // The receiver's own posted buffer is unusable: a local catastrophic error (RFC 5041 §7.2 type 0).
        ++counters_.protection_errors;
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": Send MSN " << h.msn << ": " << what);
        send_terminate(qpn, qp, ddp::TermLayer::ddp, ddp::term::kDdpLocalCatastrophic, 0, ulpdu, len, delay);
        enter_error(qpn, qp, delay);
    };
    if (h.queue != ddp::kQueueSend) {
        untagged_error(ddp::term::kDdpUntaggedInvalidQn, "invalid queue number");
        return;
    }
    // Messages arrive in order, so the MSN must be the next one, or the current one (later segment).
    const bool continuing = qp.recv_active && h.msn == qp.recv_msn;
    if (!continuing && h.msn != qp.recv_msn + 1) {
        untagged_error(ddp::term::kDdpUntaggedInvalidMsn, "MSN out of range");
        return;
    }
    if (!continuing && h.mo != 0) {
        untagged_error(ddp::term::kDdpUntaggedInvalidMo, "a new message must start at MO 0");
        return;
    }
    const std::size_t payload = len - ddp::kUntaggedHeaderSize;
    const bool immediate = h.opcode == ddp::Opcode::immediate || h.opcode == ddp::Opcode::immediate_se;
    if (immediate && (continuing || !h.last || payload != ddp::kImmediateDataSize)) {
        // RFC 7306 §6.3: exactly 8 bytes of data, in one message of its own.
        ++counters_.protection_errors;
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": Immediate Data with " << payload << " bytes");
        send_terminate(qpn, qp, ddp::TermLayer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaUnspecified,
                       ulpdu, len, delay);
        enter_error(qpn, qp, delay);
        return;
    }
    if (continuing && h.opcode != qp.recv_opcode) {
        untagged_error(ddp::term::kDdpUntaggedInvalidMsn, "segment of another message type under the same MSN");
        return;
    }
    if (!continuing) {
        // A new message consumes the next posted receive WQE (RFC 5040 §5.1: in posting order).
        if (qp.rq_consumer == qp.rq_producer) {
            untagged_error(ddp::term::kDdpUntaggedNoBuffer, "no receive buffer posted");
            return;
        }
        const std::uint64_t addr =
            qp.cfg.rq_ring + (qp.rq_consumer % qp.cfg.rq_entries) * regmap::kRecvWqeSize;
        std::uint8_t rqe[regmap::kRecvWqeSize];
        if (mem_read(dma_out, addr, rqe, sizeof rqe, delay) != tlm::TLM_OK_RESPONSE) {
            local_error("receive WQE not readable");
            return;
        }
        qp.recv_wr_id = get_le64(rqe + regmap::rqe_off::wr_id);
        qp.recv_addr = get_le64(rqe + regmap::rqe_off::addr);
        qp.recv_len = get_le32(rqe + regmap::rqe_off::length);
        qp.recv_stag = get_le32(rqe + regmap::rqe_off::stag);
        qp.recv_index = qp.rq_consumer++;
        qp.recv_msn = h.msn;
        qp.recv_opcode = h.opcode;
        qp.recv_active = true;
        qp.recv_bytes = 0;
    }
    cqe_fields f;
    if (immediate) {
        // The 8 bytes go to the completion, not to the buffer (RFC 7306 §6.1: passed to the ULP).
        f.imm_data = ddp::decode_immediate(ulpdu + ddp::kUntaggedHeaderSize, payload, nullptr).value_or(0);
        f.flags |= regmap::cqe_flags::imm;
        ++counters_.immediates_received;
    } else {
        if (static_cast<std::uint64_t>(h.mo) + payload > qp.recv_len) {
            untagged_error(ddp::term::kDdpUntaggedMessageTooLong, "message too long for the posted buffer");
            return;
        }
        const memory_region* mr = lookup_stag(qp.recv_stag);
        const std::uint64_t dst = qp.recv_addr + h.mo;
        if (mr == nullptr || mr->cfg.pd != qp.cfg.pd || (mr->cfg.access & regmap::mr_access::local_write) == 0 ||
            dst < mr->cfg.addr || payload > mr->cfg.length || dst - mr->cfg.addr > mr->cfg.length - payload) {
            local_error("posted receive buffer outside its memory region");
            return;
        }
        if (payload > 0 &&
            place_payload(dst, ulpdu + ddp::kUntaggedHeaderSize, payload, ddp::kUntaggedHeaderSize, delay) !=
                tlm::TLM_OK_RESPONSE) {
            local_error("host refused the receive DMA");
            return;
        }
        counters_.placed_bytes += payload;
        qp.recv_bytes = std::max<std::uint64_t>(qp.recv_bytes, h.mo + payload);
    }
    if (!h.last) return;
    if (h.opcode == ddp::Opcode::send_invalidate || h.opcode == ddp::Opcode::send_se_invalidate) {
        // RFC 5040 §5.3: invalidate the STag if it is associated with this stream (same protection
        // domain), else Terminate with "STag cannot be invalidated".
        memory_region* mr = lookup_stag(h.invalidate_stag);
        if (mr == nullptr || mr->cfg.pd != qp.cfg.pd) {
            ++counters_.protection_errors;
            RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": Send with Invalidate names STag 0x" << std::hex
                                                 << h.invalidate_stag << " which cannot be invalidated");
            send_terminate(qpn, qp, ddp::TermLayer::rdma, ddp::term::kRdmaRemoteProtection,
                           ddp::term::kRdmaStagCannotInvalidate, ulpdu, len, delay);
            enter_error(qpn, qp, delay);
            return;
        }
        mr->valid = false;
        ++counters_.remote_invalidates;
        f.flags |= regmap::cqe_flags::invalidated;
        f.imm_data = h.invalidate_stag;
    }
    if (h.opcode == ddp::Opcode::send_se || h.opcode == ddp::Opcode::send_se_invalidate ||
        h.opcode == ddp::Opcode::immediate_se) {
        f.flags |= regmap::cqe_flags::solicited;
    }
    // The last segment delivers the message: a receive completion, in MSN order (RFC 5040 §5.5).
    f.wr_id = qp.recv_wr_id;
    f.byte_len = static_cast<std::uint32_t>(qp.recv_bytes);
    f.opcode = static_cast<std::uint8_t>(immediate ? regmap::wr_opcode::immediate_data : regmap::wr_opcode::send);
    f.qpn = qpn;
    f.wqe_index = qp.recv_index;
    f.receive = true;
    post_cqe(qp.cfg.recv_cq, f, delay);
    ++counters_.recv_completions;
    qp.recv_active = false;
}

bool rdma_engine::place_out_of_order(const queue_pair& qp, const std::uint8_t* ulpdu, std::size_t len,
                                     sc_core::sc_time& delay) {
    // Only what is safe to place before the stream is in order: a tagged RDMA Write whose STag,
    // protection domain, rights and bounds all check out. Anything else is refused without a
    // Terminate: the in-order path will see the same bytes and judge them (or they were not an FPDU).
    if (qp.state != qp_state::rts) return false;
    std::string error;
    const auto h = ddp::decode_header(ulpdu, len, &error);
    if (!h || !h->tagged || h->opcode != ddp::Opcode::rdma_write || h->ddp_version != 1 || h->rdmap_version != 1) {
        return false;
    }
    const std::size_t payload = len - ddp::kTaggedHeaderSize;
    const access_check chk = check_access(qp, h->stag, h->tagged_offset, payload, regmap::mr_access::remote_write);
    if (!chk.ok) return false;
    if (payload > 0 &&
        place_payload(chk.host_addr, ulpdu + ddp::kTaggedHeaderSize, payload, ddp::kTaggedHeaderSize, delay) !=
            tlm::TLM_OK_RESPONSE) {
        return false;
    }
    counters_.placed_bytes += payload;
    counters_.placed_out_of_order_bytes += payload;
    return true;
}

void rdma_engine::send_terminate(std::uint32_t qpn, queue_pair& qp, ddp::TermLayer layer, std::uint8_t etype,
                                 std::uint8_t code, const std::uint8_t* ulpdu, std::size_t len,
                                 sc_core::sc_time& delay) {
    // RFC 5040 §4.8 / §5.3: one Terminate on queue 2, carrying the offending DDP header, then the
    // stream is dead for placement.
    ddp::Terminate t;
    t.layer = layer;
    t.etype = etype;
    t.code = code;
    if (ulpdu != nullptr && len >= 1 && len >= ddp::header_size_from_control(ulpdu[0])) {
        t.d = true;
        t.m = true;
        t.ddp_segment_length = static_cast<std::uint16_t>(len);
        t.ddp_header.assign(ulpdu, ulpdu + ddp::header_size_from_control(ulpdu[0]));
    }
    const std::vector<std::uint8_t> body = ddp::encode(t);
    ddp::Header h;
    h.tagged = false;
    h.last = true;
    h.opcode = ddp::Opcode::terminate;
    h.queue = ddp::kQueueTerminate;
    h.msn = ++qp.terminate_msn;
    h.mo = 0;
    std::vector<std::uint8_t> msg(ddp::kUntaggedHeaderSize + body.size());
    ddp::encode(h, msg.data());
    std::memcpy(msg.data() + ddp::kUntaggedHeaderSize, body.data(), body.size());
    qp.state = qp_state::terminate;
    if (!qp.term.valid) qp.term = {true, false, layer, etype, code};
    stream_ext ext;
    ext.conn = qp.conn;
    sc_core::sc_time d = delay;
    send_stream(ulpdu_tx_out, ext, msg.data(), msg.size(), d);
    ++counters_.terminates_sent;
    RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": Terminate sent (layer " << static_cast<int>(layer) << ", type "
                                         << static_cast<int>(etype) << ", code " << static_cast<int>(code) << ")");
}

void rdma_engine::report_stats(boost::json::object& out) const {
    out["wqes"] = counters_.wqes;
    out["rdma_writes"] = counters_.writes;
    out["rdma_write_bytes"] = counters_.write_bytes;
    out["sends"] = counters_.sends;
    out["send_bytes"] = counters_.send_bytes;
    out["recv_completions"] = counters_.recv_completions;
    out["rdma_reads"] = counters_.reads;
    out["rdma_read_bytes"] = counters_.read_bytes;
    out["read_responses_sent"] = counters_.read_responses_sent;
    out["atomics"] = counters_.atomics;
    out["atomics_executed"] = counters_.atomics_executed;
    out["atomic_responses_sent"] = counters_.atomic_responses_sent;
    out["tx_segments"] = counters_.tx_segments;
    out["rx_segments"] = counters_.rx_segments;
    out["placed_bytes"] = counters_.placed_bytes;
    out["placed_out_of_order_bytes"] = counters_.placed_out_of_order_bytes;
    out["rx_already_placed"] = counters_.rx_already_placed;
    out["flushed"] = counters_.flushed;
    out["llp_errors"] = counters_.llp_errors;
    out["rtrs_sent"] = counters_.rtrs_sent;
    out["negotiation_terminates"] = counters_.negotiation_terminates;
    out["streams_held_for_first_fpdu"] = counters_.tx_held;
    out["cqes"] = counters_.cqes;
    out["interrupts"] = counters_.interrupts;
    out["terminates_sent"] = counters_.terminates_sent;
    out["terminates_received"] = counters_.terminates_received;
    out["protection_errors"] = counters_.protection_errors;
    out["bad_wqes"] = counters_.bad_wqes;
    out["rx_dropped"] = counters_.rx_dropped;
    out["immediates"] = counters_.immediates;
    out["immediates_received"] = counters_.immediates_received;
    out["local_invalidates"] = counters_.local_invalidates;
    out["remote_invalidates"] = counters_.remote_invalidates;
    out["raw_ulpdus"] = counters_.raw_ulpdus;
    out["atomic_ops_issued"] = counters_.atomic_ops_issued;
    out["atomic_cas_retries"] = counters_.atomic_cas_retries;
    boost::json::array states;
    for (std::size_t i = 0; i < qps_.size(); ++i) {
        if (!qps_[i].valid) continue;
        boost::json::object q;
        q["qpn"] = i;
        q["state"] = regmap::to_string(qps_[i].state);
        if (qps_[i].term.valid) {
            q["terminate"] = boost::json::object{{"received", qps_[i].term.received},
                                                 {"layer", static_cast<int>(qps_[i].term.layer)},
                                                 {"etype", qps_[i].term.etype},
                                                 {"code", qps_[i].term.code}};
        }
        states.push_back(std::move(q));
    }
    out["qps"] = std::move(states);
    std::uint64_t overruns = 0;
    for (const completion_queue& cq : cqs_) overruns += cq.overruns;
    out["cq_overruns"] = overruns;
}

}  // namespace rnic
