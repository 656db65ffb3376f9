// What the parts of the RDMA engine share. rdma_engine (rdma_engine.h) is one SystemC module with one
// transmit thread; its parts (transmit_path, receive_path, responder, completion_unit, qp_lifecycle)
// are plain classes that run inside its thread and its socket callbacks, so they all drive the same
// sockets, pipelines and events the module owns, and its port to the context memory. This header
// names those: the engine's parameters, its statistics and the hardware its parts drive.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>

#include "core/timed_resource.h"
#include "framing/framing.h"
#include "rdma/context_if.h"
#include "rdma/qp_ready_set.h"
#include "toe/toe_if.h"

namespace rnic {

struct rdma_engine_params {
    double clock_hz = 500e6;
    double cycles_per_wqe = 30;      // WQE decode, validation, scheduling
    double cycles_per_segment = 12;  // DDP/RDMAP header build or parse, STag lookup
    std::uint32_t ord = 16;          // outstanding RDMA Reads a QP may issue, at most (RFC 6581 ORD)
    std::uint32_t ird = 16;          // RDMA Read Requests a QP accepts before responding, at most (IRD)
    // Test mode: accept regmap::wr_opcode::raw_ulpdu work requests (a ULPDU sent verbatim).
    bool raw_ulpdu_wqes = false;
    // The atomic unit uses PCIe AtomicOp TLPs (host/atomic_op_ext.h) instead of read-modify-write.
    bool pcie_atomic_ops = false;
    // How the transmit and receive pipelines serve work booked out of time order
    // (simulation.resource_order).
    booking order = booking::in_order;
    // QPs' WQE batches the transmit side fetches at once (rnic.rdma.wqe_fetch_depth): 1 reads a
    // QP's WQEs when its turn starts; N > 1 keeps up to N reads in flight, ahead of the turns.
    std::uint32_t wqe_fetch_depth = 1;
};

// The engine's statistics (rdma_engine::report_stats names them in the results).
struct rdma_counters {
    std::uint64_t wqes = 0, writes = 0, write_bytes = 0, tx_segments = 0, sends = 0, send_bytes = 0;
    std::uint64_t recv_completions = 0, reads = 0, read_bytes = 0, read_responses_sent = 0;
    std::uint64_t atomics = 0, atomics_executed = 0, atomic_responses_sent = 0;
    std::uint64_t rx_segments = 0, placed_bytes = 0, cqes = 0, interrupts = 0;
    std::uint64_t terminates_sent = 0, terminates_received = 0, protection_errors = 0;
    std::uint64_t bad_wqes = 0, rx_dropped = 0, immediates = 0, immediates_received = 0;
    std::uint64_t local_invalidates = 0, remote_invalidates = 0, raw_ulpdus = 0, raw_stream_writes = 0;
    std::uint64_t atomic_ops_issued = 0, atomic_cas_retries = 0;
    std::uint64_t rtrs_sent = 0, tx_held = 0, negotiation_terminates = 0;
    std::uint64_t placed_out_of_order_bytes = 0, rx_already_placed = 0, flushed = 0, llp_errors = 0;
    std::uint64_t cq_overrun_qp_errors = 0;
    // Messages in error whose connection went on (VI/TCP Unreliable Delivery, vitcp_errors.h):
    // placed into a receive completed in error, or dropped.
    std::uint64_t messages_in_error = 0, messages_in_error_dropped = 0;
    // VI/TCP Reliable Reception: the peer reported one of our messages in error (seed 003 §3.2).
    std::uint64_t remote_errors_reported = 0;
};

// The hardware of the engine module that its parts drive. All of it belongs to rdma_engine; the
// contexts belong to the context module (context_memory.h) and are reached through the engine's port.
struct engine_resources {
    const sc_core::sc_object& owner;  // the engine module: its name goes on every log line
    const rdma_engine_params& params;
    tlm::tlm_initiator_socket<>& ulpdu_tx_out;  // ULPDUs to the framing unit
    tlm::tlm_initiator_socket<>& dma_out;       // host memory through the DMA engine
    tlm::tlm_initiator_socket<>& irq_out;       // MSI-X requests
    sc_core::sc_port<toe_ctl_if>& toe;          // TCP send space, close
    // Wake the transmit thread: new work, TCP send space freed, a Read or atomic finished (ORD).
    sc_core::sc_event& work_event;
    sc_core::sc_event& space_event;
    sc_core::sc_event& read_done_event;
    timed_resource& tx_pipe;  // header build and WQE processing
    timed_resource& rx_pipe;  // header parse and checks of arriving ULPDUs
    rdma_counters& counters;
    // QP, CQ and STag contexts; with the context cache, access_qp/access_stag may fetch over PCIe.
    sc_core::sc_port<context_if>& contexts;
    // The device's framing: send room per ULPDU, and where a frame put bytes between a payload's.
    const framing& frames;
    // The QPs the transmit thread visits: a part that gives a QP something to send marks it.
    qp_ready_set& ready_qps;
};

// Base of the engine's parts: the shared resources, and name() for RNIC_MLOG (core/sim_log.h).
class engine_part {
protected:
    explicit engine_part(const engine_resources& res) : res_(res) {}
    const char* name() const { return res_.owner.name(); }
    const rdma_engine_params& params() const { return res_.params; }
    rdma_counters& counters() const { return res_.counters; }

    const engine_resources& res_;
};

}  // namespace rnic
