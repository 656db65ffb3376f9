#include "rdma/rdma_engine.h"

#include "core/sim_log.h"

namespace rnic {

namespace ddp = proto::ddp;
using qp_state = regmap::qp_state;

rdma_engine::rdma_engine(const sc_core::sc_module_name& name, const rdma_engine_params& params, const framing& framing)
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
      ctx_out("ctx_out"),
      params_(params),
      res_{*this,    params_,  ulpdu_tx_out, dma_out, irq_out, toe_out,   work_event_, space_event_, read_done_event_,
           tx_pipe_, rx_pipe_, counters_,    ctx_out, framing, ready_qps_},
      // The completion unit and the QP lifecycle call each other; neither uses the other while
      // they are being constructed.
      completions_(res_, lifecycle_),
      lifecycle_(res_, completions_),
      transmit_(res_, completions_, lifecycle_),
      prefetch_(res_, params.wqe_fetch_depth),
      responder_(res_, transmit_, lifecycle_),
      receive_(res_, completions_, lifecycle_, responder_) {
    tx_pipe_ = timed_resource(params.order);
    rx_pipe_ = timed_resource(params.order);
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

// The context module drops a stale cached copy when a QP or an STag entry is made fresh.
int rdma_engine::create_cq(const cq_config& cfg) {
    return ctx_out->create_cq(cfg);
}
int rdma_engine::create_qp(const qp_config& cfg) {
    return ctx_out->create_qp(cfg);
}
std::int64_t rdma_engine::register_mr(const mr_config& cfg) {
    return ctx_out->register_mr(cfg);
}
bool rdma_engine::deregister_mr(std::uint32_t stag) {
    return ctx_out->invalidate_stag(stag);
}

bool rdma_engine::qp_valid(std::uint32_t qpn) const {
    return ctx_out->qp(qpn) != nullptr;
}
bool rdma_engine::qp_idle(std::uint32_t qpn) const {
    return qp_valid(qpn) && ctx_out->qp(qpn)->state == qp_state::idle;
}

bool rdma_engine::qp_connect(std::uint32_t qpn, const qp_stream& stream) {
    if (!qp_idle(qpn)) return false;
    lifecycle_.connect(qpn, *ctx_out->qp(qpn), stream);
    return true;
}

bool rdma_engine::qp_modify(std::uint32_t qpn, std::uint8_t target) {
    qp_context* qp = ctx_out->qp(qpn);
    return qp != nullptr && lifecycle_.modify(qpn, *qp, target);
}

std::int64_t rdma_engine::qp_query(std::uint32_t qpn) const {
    const qp_context* qp = ctx_out->qp(qpn);
    return qp == nullptr ? -1 : qp_lifecycle::query_word(*qp);
}

int rdma_engine::destroy_qp(std::uint32_t qpn) {
    const qp_context* qp = ctx_out->qp(qpn);
    if (qp == nullptr) return -1;
    if (qp->state != qp_state::idle && qp->state != qp_state::error) return -2;
    // A QP in Error still holds its connection (closed, or closing after its Terminate): the TCP
    // engine may free it, and reuse its id, once the QP is gone.
    const bool holds_connection = ctx_out->qpn_of_connection(qp->conn) == static_cast<int>(qpn);
    const std::uint32_t conn = qp->conn;
    ctx_out->destroy_qp(qpn);
    prefetch_.drop(qpn);  // a QP made anew with the number must not see this one's WQEs
    if (holds_connection) toe_out->tcp_release(conn);
    return 0;
}

int rdma_engine::destroy_cq(std::uint32_t cqn) {
    return ctx_out->destroy_cq(cqn);
}

bool rdma_engine::has_objects() const {
    auto& ctx = const_cast<rdma_engine*>(this)->ctx_out;
    for (std::uint32_t n = 0; n < ctx->qp_slots(); ++n) {
        if (ctx->qp(n) != nullptr) return true;
    }
    for (std::uint32_t n = 0; n < ctx->cq_slots(); ++n) {
        if (ctx->cq(n) != nullptr) return true;
    }
    return ctx->stags_in_use() > 0;
}

void rdma_engine::reset_objects() {
    std::uint32_t qps = 0, cqs = 0;
    for (std::uint32_t n = 0; n < ctx_out->qp_slots(); ++n) {
        qp_context* qp = ctx_out->qp(n);
        if (qp == nullptr) continue;
        const bool holds_connection = ctx_out->qpn_of_connection(qp->conn) == static_cast<int>(n);
        const std::uint32_t conn = qp->conn;
        // Whatever of it is still under way (the transmit thread after a wait) sees it out of RTS.
        qp->state = qp_state::error;
        ctx_out->destroy_qp(n);
        if (holds_connection) {
            toe_out->tcp_close(conn);
            toe_out->tcp_release(conn);
        }
        ++qps;
    }
    for (std::uint32_t n = 0; n < ctx_out->cq_slots(); ++n) {
        if (ctx_out->cq(n) != nullptr && ctx_out->destroy_cq(n) == 0) ++cqs;
    }
    prefetch_.drop_all();
    const std::uint32_t stags = ctx_out->invalidate_all_stags();
    RNIC_MLOG(info, rdma, "reset: " << qps << " QPs, " << cqs << " CQs and " << stags << " memory regions removed");
}

qp_context* rdma_engine::qp_of_connection(std::uint32_t conn, std::uint32_t* qpn) {
    const int n = ctx_out->qpn_of_connection(conn);
    if (n < 0) return nullptr;
    *qpn = static_cast<std::uint32_t>(n);
    return ctx_out->qp(*qpn);
}

// ---- stream events (framing unit, TCP engine, firmware) ------------------------------------

void rdma_engine::stream_failed(std::uint32_t conn, const char* why) {
    std::uint32_t qpn = 0;
    qp_context* qp = qp_of_connection(conn, &qpn);
    if (qp == nullptr || qp->state == qp_state::error) return;
    RNIC_MLOG(warn, rdma, "QP " << qpn << " to Error: " << why);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    lifecycle_.enter_error(qpn, *qp, delay);
}

void rdma_engine::llp_error(std::uint32_t conn, std::uint8_t mpa_code, const sc_core::sc_time& delay) {
    std::uint32_t qpn = 0;
    qp_context* qp = qp_of_connection(conn, &qpn);
    if (qp == nullptr) return;
    ++counters_.llp_errors;
    sc_core::sc_time d = delay;
    if (qp->state == qp_state::rts) {
        // RFC 5044 §8: the receiver of a bad FPDU reports it with a Terminate (layer LLP, type MPA)
        // and delivers nothing more from the stream.
        receive_.send_terminate(qpn, *qp, ddp::term_layer::llp, ddp::term::kLlpMpa, mpa_code, nullptr, 0, d);
    }
    lifecycle_.enter_error(qpn, *qp, d);
}

void rdma_engine::llp_terminate(std::uint32_t conn, std::uint8_t mpa_code) {
    std::uint32_t qpn = 0;
    qp_context* qp = qp_of_connection(conn, &qpn);
    if (qp == nullptr) return;
    ++counters_.negotiation_terminates;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    if (qp->state == qp_state::rts) {
        receive_.send_terminate(qpn, *qp, ddp::term_layer::llp, ddp::term::kLlpMpa, mpa_code, nullptr, 0, d);
    }
    lifecycle_.enter_error(qpn, *qp, d);
}

void rdma_engine::on_tx_acked(std::uint32_t conn, std::uint64_t acked_offset, const sc_core::sc_time& delay) {
    space_event_.notify(delay);
    std::uint32_t qpn = 0;
    qp_context* qp = qp_of_connection(conn, &qpn);
    if (qp == nullptr) return;
    qp->acked = acked_offset;
    sc_core::sc_time d = delay;
    // Completing a work request needs its QP's context (the send CQ, the pending list).
    if (!qp->pending.empty() && work_request_finished(*qp, qp->pending.front())) {
        ctx_out->access_qp(qpn, true, context_if::side::tx, d);
    }
    completions_.retire(qpn, *qp, d);
}

namespace {
// The status of our work request whose message the peer reported in error (seed 003 §3.2 VI Error
// Type), in the verbs classes the Terminates of RFC 5040 map to (status_of_terminate).
regmap::cqe_status status_of_peer_error(peer_error_kind e) {
    switch (e) {
    case peer_error_kind::memory_protection:
        return regmap::cqe_status::remote_access_error;
    case peer_error_kind::descriptor:
        return regmap::cqe_status::remote_invalid_request;
    default:
        return regmap::cqe_status::transport_error;
    }
}
const char* peer_error_text(peer_error_kind e) {
    switch (e) {
    case peer_error_kind::memory_protection:
        return "an RDMA Memory Protection Error";
    case peer_error_kind::descriptor:
        return "a VI Descriptor Error";
    default:
        return "an Unrecoverable Transport Error";
    }
}
}  // namespace

void rdma_engine::peer_acknowledged(std::uint32_t conn, const peer_acknowledgement& report,
                                    const sc_core::sc_time& delay) {
    std::uint32_t qpn = 0;
    qp_context* qp = qp_of_connection(conn, &qpn);
    if (qp == nullptr || !qp->peer_acks || qp->state == qp_state::error) return;
    sc_core::sc_time d = delay;
    if (report.placed && report.placed_through > qp->peer_placed) {
        // Seed 003 §3.2: "the Message ACK field ... will be used [to] determine when transmit
        // Descriptors will be completed".
        qp->peer_placed = report.placed_through;
        if (!qp->pending.empty() && work_request_finished(*qp, qp->pending.front())) {
            ctx_out->access_qp(qpn, true, context_if::side::tx, d);
        }
        completions_.retire(qpn, *qp, d);
    }
    if (report.error == peer_error_kind::none || qp->state == qp_state::error) return;
    ++counters_.remote_errors_reported;
    qp->remote_error = {true, report.error_named, status_of_peer_error(report.error), report.placed_through};
    RNIC_MLOG_D(
        warn, rdma, d,
        "QP " << qpn << ": the peer reports " << peer_error_text(report.error)
              << (report.error_named ? " in our message after send-stream byte " + std::to_string(report.placed_through)
                                     : std::string(" in none of our messages"))
              << "; QP to Error");
    lifecycle_.enter_error(qpn, *qp, d);
}

// ---- doorbells (driver via the register file) ---------------------------------------------

void rdma_engine::sq_doorbell(std::uint32_t qpn, std::uint32_t producer, const sc_core::sc_time& delay) {
    qp_context* qp = ctx_out->qp(qpn);
    if (qp == nullptr) {
        RNIC_MLOG_D(warn, rdma, delay, "SQ doorbell for QP " << qpn << " which does not exist: ignored");
        return;
    }
    // Applied when the write reaches the engine, not before (the thread checks arrival times).
    qp->sq_doorbells.push_back({sim_now() + delay, producer});
    ready_qps_.mark(qpn);
    work_event_.notify(delay);
}

void rdma_engine::rq_doorbell(std::uint32_t qpn, std::uint32_t producer, const sc_core::sc_time& delay) {
    qp_context* qp = ctx_out->qp(qpn);
    if (qp == nullptr) {
        RNIC_MLOG_D(warn, rdma, delay, "RQ doorbell for QP " << qpn << " which does not exist: ignored");
        return;
    }
    qp->rq_producer = producer;
}

void rdma_engine::cq_doorbell(std::uint32_t cqn, std::uint32_t consumer, const sc_core::sc_time& delay) {
    completions_.cq_doorbell(cqn, consumer, delay);
}

void rdma_engine::cq_arm(std::uint32_t cqn, const sc_core::sc_time& delay) {
    completions_.cq_arm(cqn, delay);
}

// ---- transmit thread -------------------------------------------------------------------------

bool rdma_engine::take_doorbells(qp_context& qp) {
    const sc_core::sc_time now = sim_now();
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
    // VI/TCP Reliable Reception: a report of placed messages the peer waits for.
    if (sending && qp.ack_owed && qp.ack_due <= now) return true;
    // Work posted to an Idle QP waits for RTS; in Closing and Error it flushes.
    return qp.state != qp_state::idle && qp.sq_consumer != qp.sq_producer;
}

namespace {
// Whether take_doorbells could find anything on the QP: false means it has nothing to send, nothing
// to flush and no doorbell or report on its way, and stays so until a part gives it work (and
// marks it in the engine's qp_ready_set).
bool may_have_work(const qp_context& qp) {
    return !qp.sq_doorbells.empty() || qp.rtr_to_send != qp_stream::rtr::none || !qp.responses.empty() || qp.ack_owed ||
           qp.sq_consumer != qp.sq_producer;
}
}  // namespace

sc_core::sc_time rdma_engine::next_doorbell_arrival() {
    sc_core::sc_time earliest = sc_core::SC_ZERO_TIME;
    const sc_core::sc_time now = sim_now();
    // A QP out of the ready set has no doorbell on its way and owes no report.
    ready_qps_.find_from(0, ctx_out->qp_slots(), [&](std::uint32_t i) {
        const qp_context* qp = ctx_out->qp(i);
        if (qp == nullptr) return false;
        // A report of placed messages comes due like a doorbell arrives (VI/TCP Reliable Reception).
        if (qp->ack_owed && qp->ack_due > now && (earliest == sc_core::SC_ZERO_TIME || qp->ack_due < earliest)) {
            earliest = qp->ack_due;
        }
        if (qp->sq_doorbells.empty()) return false;
        const sc_core::sc_time t = qp->sq_doorbells.front().arrival;
        if (t > now && (earliest == sc_core::SC_ZERO_TIME || t < earliest)) earliest = t;
        return false;
    });
    return earliest;
}

int rdma_engine::next_ready_qp() {
    // Round robin over the QPs so that one busy QP does not starve the others; only the QPs of the
    // ready set can have work (qp_ready_set.h), visited in the order a walk over every slot from
    // rr_next_ would reach them.
    const std::uint32_t slots = ctx_out->qp_slots();
    if (slots == 0) return -1;
    const std::int64_t found = ready_qps_.find_from(rr_next_ % slots, slots, [&](std::uint32_t i) {
        qp_context* qp = ctx_out->qp(i);
        if (qp == nullptr) {
            ready_qps_.clear(i);
            return false;
        }
        if (take_doorbells(*qp)) return true;
        if (!may_have_work(*qp)) ready_qps_.clear(i);
        return false;
    });
    if (found < 0) return -1;
    rr_next_ = static_cast<std::uint32_t>(found) + 1;
    return static_cast<int>(found);
}

void rdma_engine::tx_thread() {
    for (;;) {
        if (completions_.has_overrun_qps()) {
            fail_overrun_qps();
            continue;
        }
        const int qpn = next_ready_qp();
        if (qpn < 0) {
            // A doorbell still on its way may have lost its notification (SystemC keeps only the
            // earliest pending one): wake at its arrival at the latest.
            const sc_core::sc_time next = next_doorbell_arrival();
            if (next == sc_core::SC_ZERO_TIME)
                wait(work_event_);
            else
                wait(next - sim_now(), work_event_);
            continue;
        }
        serve(static_cast<std::uint32_t>(qpn), *ctx_out->qp(static_cast<std::uint32_t>(qpn)));
    }
}

void rdma_engine::fail_overrun_qps() {
    for (const std::uint32_t qpn : completions_.take_overrun_qps()) {
        qp_context* qp = ctx_out->qp(qpn);
        if (qp == nullptr || qp->state == qp_state::error || qp->state == qp_state::idle) continue;
        // A completion this QP owed the driver is gone: its work can no longer be accounted for,
        // a catastrophic local error. The peer hears it as a Terminate (RFC 5040 §7.2: RDMAP layer,
        // Local Catastrophic Error) and the QP goes to Error, flushing what it holds; QPs on other
        // CQs carry on.
        RNIC_MLOG(error, rdma, "QP " << qpn << " to Error: a completion was lost to a full CQ (overrun)");
        ++counters_.cq_overrun_qp_errors;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        if (qp->state == qp_state::rts) {
            receive_.send_terminate(qpn, *qp, ddp::term_layer::rdma, ddp::term::kRdmaLocalCatastrophic, 0x00, nullptr,
                                    0, delay);
        }
        lifecycle_.enter_error(qpn, *qp, delay);
        wait(delay);
    }
}

void rdma_engine::serve(std::uint32_t qpn, qp_context& qp) {
    // The QP's context must be on chip before its turn starts (a miss fetches it over PCIe).
    sc_core::sc_time fetch = sc_core::SC_ZERO_TIME;
    ctx_out->access_qp(qpn, true, context_if::side::tx, fetch);
    if (fetch != sc_core::SC_ZERO_TIME) {
        if (prefetch_.enabled()) prefetch_.note_turn_context_miss();
        wait(fetch);
    }
    if (qp.state == qp_state::rts && qp.rtr_to_send != qp_stream::rtr::none) {
        sc_core::sc_time issue = sc_core::SC_ZERO_TIME;
        transmit_.send_rtr(qpn, qp, issue);  // before every work request (RFC 6581 §5)
        wait(issue);
        return;
    }
    if ((qp.state == qp_state::rts || qp.state == qp_state::closing) && !qp.responses.empty()) {
        // Read Responses go out in the order of their requests, ahead of new work (RFC 5040 §5.3).
        sc_core::sc_time issue = sc_core::SC_ZERO_TIME;
        responder_.send_next_response(qpn, qp, issue);
        wait(issue);
        return;
    }
    if (qp.ack_owed && qp.sq_consumer == qp.sq_producer && qp.ack_due <= sim_now()) {
        // Nothing else to send that could carry it: the acknowledgement alone (seed 003 §3.2 NOP).
        sc_core::sc_time issue = sc_core::SC_ZERO_TIME;
        transmit_.send_acknowledgement(qp, issue);
        wait(issue);
        lifecycle_.maybe_finish_closing(qpn, qp);
        return;
    }
    if (!prefetch_.enabled()) {
        transmit_.process_batch(qpn, qp);
        return;
    }
    // The served QP's read first (unless it was read ahead; its context was taken on chip above),
    // then the next QPs' behind it.
    prefetch_.fetch(qpn, qp, qp.sq_producer, true);
    fetch_ahead(qpn);
    transmit_.process_batch(qpn, qp, &prefetch_);
}

namespace {
// The SQ producer index the doorbells that have arrived by `now` give, without applying them
// (take_doorbells does at the QP's turn).
std::uint32_t arrived_producer(const qp_context& qp, const sc_core::sc_time& now) {
    std::uint32_t producer = qp.sq_producer;
    for (const auto& d : qp.sq_doorbells) {
        if (d.arrival > now) break;
        producer = d.producer;
    }
    return producer;
}
}  // namespace

void rdma_engine::fetch_ahead(std::uint32_t qpn) {
    const std::uint32_t slots = ctx_out->qp_slots();
    const sc_core::sc_time now = sim_now();
    ready_qps_.find_from((qpn + 1) % slots, slots, [&](std::uint32_t i) {
        if (prefetch_.full()) return true;
        const qp_context* qp = ctx_out->qp(i);
        if (i == qpn || qp == nullptr || prefetch_.holds(i)) return false;
        // A turn that will process work requests (serve): not an RTR, a Response or a report, and
        // not a responder held for the peer's first FPDU.
        if (qp->state != qp_state::rts || qp->hold_tx || qp->rtr_to_send != qp_stream::rtr::none ||
            !qp->responses.empty()) {
            return false;
        }
        const std::uint32_t producer = arrived_producer(*qp, now);
        if (producer != qp->sq_consumer) prefetch_.fetch(i, *qp, producer);
        return prefetch_.full();
    });
}

// ---- receive ---------------------------------------------------------------------------------

void rdma_engine::rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    receive_.receive(gp, delay);
    owe_acknowledgement(gp, delay);
}

void rdma_engine::owe_acknowledgement(tlm::tlm_generic_payload& gp, const sc_core::sc_time& delay) {
    const stream_ext* ext = get_stream_ext(gp);
    if (ext == nullptr || ext->kind == stream_kind::out_of_order) return;
    std::uint32_t qpn = 0;
    qp_context* qp = qp_of_connection(ext->conn, &qpn);
    if (qp == nullptr || !qp->peer_acks || (qp->state != qp_state::rts && qp->state != qp_state::closing)) return;
    // Seed 003 §3.2: a Message ACK "should not be indicated for messages until both message data
    // has been written to host memory and the associated completion information has been written":
    // due once this ULPDU has landed; the framing acknowledges what has landed by then.
    const sc_core::sc_time landed = sim_now() + delay;
    if (!qp->ack_owed) {
        qp->ack_owed = true;
        qp->ack_due = landed;
        ready_qps_.mark(qpn);
    }
    qp->ack_until = std::max(qp->ack_until, landed);
    work_event_.notify(delay);
}

// ---- statistics ------------------------------------------------------------------------------

namespace {
// The Terminate a QP sent or received, as the results show it.
boost::json::object terminate_json(const qp_context::terminate_info& t) {
    return {{"received", t.received}, {"layer", static_cast<int>(t.layer)}, {"etype", t.etype}, {"code", t.code}};
}
}  // namespace

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
    // New keys, only when non-zero (VI/TCP at Unreliable Delivery): existing results stay the same.
    if (counters_.messages_in_error != 0) out["messages_in_error"] = counters_.messages_in_error;
    if (counters_.messages_in_error_dropped != 0) {
        out["messages_in_error_dropped"] = counters_.messages_in_error_dropped;
    }
    // VI/TCP Reliable Reception: errors the peer reported in our messages (new key, non-zero only).
    if (counters_.remote_errors_reported != 0) out["remote_errors_reported"] = counters_.remote_errors_reported;
    out["rtrs_sent"] = counters_.rtrs_sent;
    out["negotiation_terminates"] = counters_.negotiation_terminates;
    out["streams_held_for_first_fpdu"] = counters_.tx_held;
    out["cqes"] = counters_.cqes;
    if (prefetch_.enabled()) prefetch_.report_stats(out);  // a new key, only when configured
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
    if (counters_.raw_stream_writes != 0)
        out["raw_stream_writes"] = counters_.raw_stream_writes;  // new key, test mode only
    out["atomic_ops_issued"] = counters_.atomic_ops_issued;
    out["atomic_cas_retries"] = counters_.atomic_cas_retries;
    boost::json::array states;
    for (std::uint32_t i = 0; i < ctx_out->qp_slots(); ++i) {
        const qp_context* qp = ctx_out->qp(i);
        if (qp == nullptr) continue;
        boost::json::object q;
        q["qpn"] = i;
        q["state"] = regmap::to_string(qp->state);
        if (qp->term.valid) q["terminate"] = terminate_json(qp->term);
        states.push_back(std::move(q));
    }
    out["qps"] = std::move(states);
    std::uint64_t overruns = 0;
    for (std::uint32_t i = 0; i < ctx_out->cq_slots(); ++i) overruns += ctx_out->cq_slot(i).overruns;
    out["cq_overruns"] = overruns;
    // Only when it happened, so that results without an overrun keep their exact keys.
    if (counters_.cq_overrun_qp_errors > 0) out["cq_overrun_qp_errors"] = counters_.cq_overrun_qp_errors;
    // The context module's statistics follow in this object (rnic_device::report_stats).
}

void rdma_engine::report_diagnostics(boost::json::object& out) const {
    boost::json::array qps;
    for (std::uint32_t i = 0; i < ctx_out->qp_slots(); ++i) {
        const qp_context* qp = ctx_out->qp(i);
        if (qp == nullptr) continue;
        boost::json::object q{
            {"qpn", i},
            {"state", regmap::to_string(qp->state)},
            {"connection", ctx_out->qpn_of_connection(qp->conn) == static_cast<int>(i) ? boost::json::value(qp->conn)
                                                                                       : boost::json::value(nullptr)},
            {"sq_posted_not_taken", qp->sq_producer - qp->sq_consumer},
            {"awaiting_completion", qp->pending.size()},
            {"rq_posted", qp->rq_producer - qp->rq_consumer},
            {"reads_outstanding", qp->reads_outstanding},
            {"responses_queued", qp->responses.size()},
            {"held_for_first_fpdu", qp->hold_tx}};
        if (qp->term.valid) q["last_terminate"] = terminate_json(qp->term);
        qps.push_back(std::move(q));
    }
    out["qps"] = std::move(qps);
}

}  // namespace rnic
