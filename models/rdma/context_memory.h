// The RDMA engine's context memory as a block of its own: the QP and CQ contexts and the STag table
// (context_store.h, on chip) and, when enabled, the context cache (context_cache.h) that keeps QP
// contexts and STag entries in host memory and the active ones on chip.
//  ctx_in   <- context_if (context_if.h): lookups, create/destroy, cache accesses; the RDMA engine's
//              ctx_out port is bound here
//  dma_out  -> host memory through the DMA engine: context fetches and dirty write-backs on misses
// The device (rnic.h) tells it where the driver put the context area (CTX_BASE_*) and reads its size
// for CAP_CTX_BYTES. Nothing here has a thread or wait()s: a miss adds its time to the caller's
// delay, like a target (LT).
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "rdma/context_cache.h"
#include "rdma/context_if.h"
#include "rdma/context_store.h"

namespace rnic {

struct context_memory_params {
    std::uint32_t max_qp = 64;
    std::uint32_t max_cq = 64;
    std::uint32_t max_mr = 1024;
    context_cache_params cache;
};

class context_memory : public sc_core::sc_module, public context_if {
public:
    sc_core::sc_export<context_if> ctx_in;
    tlm_utils::simple_initiator_socket<context_memory> dma_out;

    context_memory(const sc_core::sc_module_name& name, const context_memory_params& params);

    // The context tables in host memory: their size (CAP_CTX_BYTES; 0 without the cache) and where
    // the driver allocated them (register CTX_BASE).
    std::uint64_t area_bytes() const { return cache_.area_bytes(); }
    void set_area(std::uint64_t base) { cache_.set_area(base); }

    // The cache's statistics as the "context_cache" object in `out` (nothing without the cache); the
    // fetches per work request and per received ULPDU divide by the engine's counts of those.
    void report_stats(boost::json::object& out, std::uint64_t work_requests, std::uint64_t rx_ulpdus) const {
        cache_.report_stats(out, work_requests, rx_ulpdus);
    }

    // context_if
    std::uint32_t qp_slots() const override { return store_.qp_slots(); }
    qp_context* qp(std::uint32_t qpn) override { return store_.qp(qpn); }
    const qp_context* qp(std::uint32_t qpn) const override { return store_.qp(qpn); }
    int create_qp(const qp_config& cfg) override;
    void destroy_qp(std::uint32_t qpn) override;
    void bind_connection(std::uint32_t conn, std::uint32_t qpn) override { store_.bind_connection(conn, qpn); }
    void unbind_connection(std::uint32_t conn) override { store_.unbind_connection(conn); }
    int qpn_of_connection(std::uint32_t conn) const override { return store_.qpn_of_connection(conn); }
    std::uint32_t cq_slots() const override { return store_.cq_slots(); }
    cq_context* cq(std::uint32_t cqn) override { return store_.cq(cqn); }
    cq_context& cq_slot(std::uint32_t cqn) override { return store_.cq_slot(cqn); }
    const cq_context& cq_slot(std::uint32_t cqn) const override { return store_.cq_slot(cqn); }
    int create_cq(const cq_config& cfg) override { return store_.create_cq(cfg); }
    int destroy_cq(std::uint32_t cqn) override { return store_.destroy_cq(cqn); }
    std::int64_t register_mr(const mr_config& cfg) override;
    mr_context* lookup_stag(std::uint32_t stag) override { return store_.lookup_stag(stag); }
    bool invalidate_stag(std::uint32_t stag) override { return store_.invalidate_stag(stag); }
    std::uint32_t invalidate_all_stags() override;
    std::uint32_t stags_in_use() const override { return store_.stags_in_use(); }
    void access_qp(std::uint32_t qpn, bool write, side s, sc_core::sc_time& delay, timed_resource* hold) override;
    void access_stag(std::uint32_t stag, bool write, side s, sc_core::sc_time& delay, timed_resource* hold) override;

private:
    context_store store_;
    context_cache cache_;
};

}  // namespace rnic
