// DDP/RDMAP engine (RFC 5040, RFC 5041, RFC 7306): queue pairs with send, receive and completion
// rings in host memory, the STag/memory-region table with protection domains and access rights,
// segmentation of work requests into DDP segments, placement of arriving segments, Read and atomic
// responses, completions, and the Terminate message on protocol errors.
//  ulpdu_tx_out -> DDP segments to the framing unit
//  ulpdu_rx_in  <- checked ULPDUs from the framing unit
//  dma_out      -> host memory through the DMA engine (WQE fetch, payload, CQE write-back)
//  irq_out      -> MSI-X requests to the PCIe endpoint
//  ctx_out      -> the context memory (context_memory.h): QP/CQ/STag contexts and the context cache,
//                  a module of its own with its own path to host memory
// One SystemC module: it owns the sockets, the transmit thread, the pipelines and the events. The
// work is done by plain classes inside it, one per job: transmit_path.h, receive_path.h,
// responder.h, completions.h, qp_lifecycle.h (engine_part.h says what they share).
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "core/stats.h"
#include "core/timed_resource.h"
#include "rdma/completions.h"
#include "rdma/context_if.h"
#include "rdma/engine_part.h"
#include "rdma/qp_lifecycle.h"
#include "rdma/rdma_if.h"
#include "rdma/receive_path.h"
#include "rdma/responder.h"
#include "rdma/transmit_path.h"
#include "rdma/wqe_prefetch.h"
#include "toe/toe_if.h"

namespace rnic {

class rdma_engine : public sc_core::sc_module,
                    public rdma_ctl_if,
                    public rdma_doorbell_if,
                    public toe_tx_progress_if,
                    public rdma_llp_if,
                    public stats_reporter {
public:
    tlm_utils::simple_initiator_socket<rdma_engine> ulpdu_tx_out;
    tlm_utils::simple_target_socket<rdma_engine> ulpdu_rx_in;
    tlm_utils::simple_initiator_socket<rdma_engine> dma_out;
    tlm_utils::simple_initiator_socket<rdma_engine> irq_out;
    sc_core::sc_export<rdma_ctl_if> ctl_in;
    sc_core::sc_export<rdma_doorbell_if> doorbell_in;
    sc_core::sc_export<toe_tx_progress_if> tx_progress_in;
    sc_core::sc_export<rdma_llp_if> llp_in;
    sc_core::sc_port<toe_ctl_if> toe_out;
    sc_core::sc_port<context_if> ctx_out;

    // `framing` (the device's) outlives the engine.
    rdma_engine(const sc_core::sc_module_name& name, const rdma_engine_params& params, const framing& framing);

    // rdma_ctl_if
    int create_cq(const cq_config& cfg) override;
    int create_qp(const qp_config& cfg) override;
    std::int64_t register_mr(const mr_config& cfg) override;
    bool deregister_mr(std::uint32_t stag) override;
    bool qp_valid(std::uint32_t qpn) const override;
    bool qp_idle(std::uint32_t qpn) const override;
    bool qp_connect(std::uint32_t qpn, const qp_stream& stream) override;
    bool qp_modify(std::uint32_t qpn, std::uint8_t target) override;
    std::int64_t qp_query(std::uint32_t qpn) const override;
    bool has_objects() const override;
    void reset_objects() override;
    counter_snapshot counters() const override {
        return {counters_.wqes, counters_.cqes, counters_.terminates_sent, counters_.terminates_received,
                counters_.placed_bytes};
    }
    int destroy_qp(std::uint32_t qpn) override;
    int destroy_cq(std::uint32_t cqn) override;
    void stream_failed(std::uint32_t conn, const char* why) override;
    void llp_terminate(std::uint32_t conn, std::uint8_t mpa_code) override;
    // rdma_doorbell_if
    void sq_doorbell(std::uint32_t qpn, std::uint32_t producer, const sc_core::sc_time& delay) override;
    void rq_doorbell(std::uint32_t qpn, std::uint32_t producer, const sc_core::sc_time& delay) override;
    void cq_doorbell(std::uint32_t cqn, std::uint32_t consumer, const sc_core::sc_time& delay) override;
    void cq_arm(std::uint32_t cqn, const sc_core::sc_time& delay) override;
    // toe_tx_progress_if
    void on_tx_acked(std::uint32_t conn, std::uint64_t acked_offset, const sc_core::sc_time& delay) override;
    // rdma_llp_if
    void llp_error(std::uint32_t conn, std::uint8_t mpa_code, const sc_core::sc_time& delay) override;
    void peer_acknowledged(std::uint32_t conn, const peer_acknowledgement& report,
                           const sc_core::sc_time& delay) override;

    void report_stats(boost::json::object& out) const override;
    void report_diagnostics(boost::json::object& out) const override;
    // What the context module's per-operation statistics divide by (rnic_device::report_stats).
    std::uint64_t work_requests() const { return counters_.wqes; }
    // The asynchronous event queue behind regmap ASYNC_EVENT / ASYNC_EVENT_ACK.
    std::uint32_t async_event() const { return completions_.async_event(); }
    void ack_async_event() { completions_.ack_async_event(); }
    void clear_async_events() { completions_.clear_async_events(); }
    std::uint64_t rx_ulpdus() const { return counters_.rx_segments; }

private:
    // The transmit thread: serves the QPs round robin, one batch of work at a time.
    void tx_thread();
    // Applies the SQ doorbells that have arrived; true when the QP has something to send or flush.
    bool take_doorbells(qp_context& qp);
    int next_ready_qp();
    // Arrival of the earliest SQ doorbell not yet reached the engine (SC_ZERO_TIME: none).
    sc_core::sc_time next_doorbell_arrival();  // -1: none
    // One turn of a QP: its RTR, else its oldest Read or Atomic Response, else a batch of WQEs.
    void serve(std::uint32_t qpn, qp_context& qp);
    // With several WQE fetches in flight: issues the reads for the QPs after `qpn` in round-robin
    // order whose turn will process work requests, while the fetch unit has a free buffer.
    void fetch_ahead(std::uint32_t qpn);
    // The QPs whose completions a full CQ lost go to Error (completion_unit::take_overrun_qps).
    void fail_overrun_qps();
    void rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // VI/TCP Reliable Reception: the in-order ULPDU just received landed `delay` from now; the peer
    // is owed a report of it (qp_context::ack_owed), which the transmit thread asks the framing for.
    void owe_acknowledgement(tlm::tlm_generic_payload& gp, const sc_core::sc_time& delay);
    // The QP that carries `conn`, with its number in *qpn; nullptr when none does.
    qp_context* qp_of_connection(std::uint32_t conn, std::uint32_t* qpn);

    rdma_engine_params params_;
    rdma_counters counters_;
    sc_core::sc_event work_event_;
    sc_core::sc_event space_event_;
    sc_core::sc_event read_done_event_;
    timed_resource tx_pipe_, rx_pipe_;
    qp_ready_set ready_qps_;
    engine_resources res_;
    completion_unit completions_;
    qp_lifecycle lifecycle_;
    transmit_path transmit_;
    wqe_prefetch prefetch_;
    responder responder_;
    receive_path receive_;
    std::uint32_t rr_next_ = 0;
};

}  // namespace rnic
