// What the parts of the RDMA engine share. rdma_engine (rdma_engine.h) is one SystemC module with one
// transmit thread; its parts (transmit_path, receive_path, responder, completion_unit, qp_lifecycle)
// are plain classes that run inside its thread and its socket callbacks, so they all drive the same
// sockets, pipelines and events the module owns. This header names those: the engine's parameters,
// its statistics and the hardware its parts drive.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>

#include "core/timed_resource.h"
#include "rdma/cache_policy.h"
#include "toe/toe_if.h"

namespace rnic {

class context_cache;

// The on-chip context cache (context_cache.h); sizes of one context in host memory are assumptions
// after the Mellanox mlx4 driver (ConnectX-3): 256-byte QPC entries (QUERY_DEV_CAP qpc_entry_sz),
// 64-byte dMPT entries (struct mlx4_mpt_entry) for the STag table.
struct context_cache_params {
    bool enabled = false;
    std::uint32_t entries = 256;        // QP contexts held on chip
    std::uint32_t associativity = 4;    // 1: direct mapped .. entries: fully associative
    cache_policy::replacement replacement = cache_policy::replacement::lru;
    std::uint64_t seed = 1;             // of the random replacement
    std::uint32_t stag_entries = 256;   // STag entries in their own array; 0: they share the QP array
    std::uint32_t qp_context_bytes = 256;
    std::uint32_t stag_entry_bytes = 64;
};

struct rdma_engine_params {
    double clock_hz = 500e6;
    double cycles_per_wqe = 30;       // WQE decode, validation, scheduling
    double cycles_per_segment = 12;   // DDP/RDMAP header build or parse, STag lookup
    std::uint32_t max_qp = 64;
    std::uint32_t max_cq = 64;
    std::uint32_t max_mr = 1024;
    std::uint32_t ord = 16;   // outstanding RDMA Reads a QP may issue, at most (RFC 6581 ORD)
    std::uint32_t ird = 16;   // RDMA Read Requests a QP accepts before responding, at most (IRD)
    // Test mode: accept regmap::wr_opcode::raw_ulpdu work requests (a ULPDU sent verbatim).
    bool raw_ulpdu_wqes = false;
    // The atomic unit uses PCIe AtomicOp TLPs (host/atomic_op_ext.h) instead of read-modify-write.
    bool pcie_atomic_ops = false;
    context_cache_params cache;
};

// The engine's statistics (rdma_engine::report_stats names them in the results).
struct rdma_counters {
    std::uint64_t wqes = 0, writes = 0, write_bytes = 0, tx_segments = 0, sends = 0, send_bytes = 0;
    std::uint64_t recv_completions = 0, reads = 0, read_bytes = 0, read_responses_sent = 0;
    std::uint64_t atomics = 0, atomics_executed = 0, atomic_responses_sent = 0;
    std::uint64_t rx_segments = 0, placed_bytes = 0, cqes = 0, interrupts = 0;
    std::uint64_t terminates_sent = 0, terminates_received = 0, protection_errors = 0;
    std::uint64_t bad_wqes = 0, rx_dropped = 0, immediates = 0, immediates_received = 0;
    std::uint64_t local_invalidates = 0, remote_invalidates = 0, raw_ulpdus = 0;
    std::uint64_t atomic_ops_issued = 0, atomic_cas_retries = 0;
    std::uint64_t rtrs_sent = 0, tx_held = 0, negotiation_terminates = 0;
    std::uint64_t placed_out_of_order_bytes = 0, rx_already_placed = 0, flushed = 0, llp_errors = 0;
};

// The hardware of the engine module that its parts drive. All of it belongs to rdma_engine.
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
    context_cache& cache;  // QP contexts and STag entries on chip; a miss fetches them over PCIe
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
