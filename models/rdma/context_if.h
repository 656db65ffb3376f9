// What the RDMA engine asks of its context memory (context_memory.h), through its ctx_out port:
// the lookups of QP, CQ and STag contexts, their creation and destruction, and the cache accesses
// that charge the time of bringing a context on chip.
// The lookups hand out the context itself, not a copy: the engine's pipelines read and update the
// fields in place, as a datapath works on its context SRAM; what reaching that SRAM costs is charged
// by access_qp / access_stag, called before the fields are used. A pointer stays valid until the
// context is destroyed (context_store.h says who may keep one across a wait()).
#pragma once

#include <cstdint>
#include <systemc>

#include "core/timed_resource.h"
#include "rdma/context_store.h"
#include "rdma/rdma_if.h"

namespace rnic {

class context_if : public virtual sc_core::sc_interface {
public:
    // Who needs the context: the transmit side (send queue, acknowledgements, completions) or the
    // receive side (arriving ULPDUs). The context module counts its PCIe reads per side.
    enum class side { tx, rx };

    // ---- queue pairs: numbers 0 .. qp_slots() - 1
    virtual std::uint32_t qp_slots() const = 0;
    virtual qp_context* qp(std::uint32_t qpn) = 0;  // nullptr: no such QP
    virtual const qp_context* qp(std::uint32_t qpn) const = 0;
    // qpn, -1 no free context, -2 a CQ that does not exist. A cached copy of an earlier QP with the
    // number is dropped without a write-back: the fresh context replaces it.
    virtual int create_qp(const qp_config& cfg) = 0;
    // Frees the context (it must exist), unbinds its connections and drops its cached copy.
    virtual void destroy_qp(std::uint32_t qpn) = 0;
    // The TCP connection a QP runs on (context_store::bind_connection).
    virtual void bind_connection(std::uint32_t conn, std::uint32_t qpn) = 0;
    virtual void unbind_connection(std::uint32_t conn) = 0;
    virtual int qpn_of_connection(std::uint32_t conn) const = 0;  // -1: no QP on it

    // ---- completion queues: numbers 0 .. cq_slots() - 1 (always on chip)
    virtual std::uint32_t cq_slots() const = 0;
    virtual cq_context* cq(std::uint32_t cqn) = 0;  // nullptr: no such CQ
    // CQ `cqn` < cq_slots() whether it exists or not (context_store::cq_slot).
    virtual cq_context& cq_slot(std::uint32_t cqn) = 0;
    virtual const cq_context& cq_slot(std::uint32_t cqn) const = 0;
    virtual int create_cq(const cq_config& cfg) = 0;  // cqn, or -1: no free context
    virtual int destroy_cq(std::uint32_t cqn) = 0;    // 0, -1 no such CQ, -2 a QP still uses it

    // ---- memory regions (STags)
    // STag, or -1: no free entry. A cached copy of the entry's earlier use is dropped.
    virtual std::int64_t register_mr(const mr_config& cfg) = 0;
    virtual mr_context* lookup_stag(std::uint32_t stag) = 0;  // nullptr: not a valid STag
    // Deregistration and local or remote invalidation; false when `stag` is not valid.
    virtual bool invalidate_stag(std::uint32_t stag) = 0;
    // CTRL.RESET: every valid STag invalidated (cached copies dropped); returns how many there were.
    virtual std::uint32_t invalidate_all_stags() = 0;
    virtual std::uint32_t stags_in_use() const = 0;

    // ---- the cache: bring QP `qpn`'s context or `stag`'s entry on chip before using it; `write`
    // when the caller changes it. A miss adds its time (write-back of a dirty victim, then the fetch,
    // over the module's dma_out) to `delay`; nothing here wait()s (the caller does, where it may).
    // With `hold`, that pipeline is reserved for the miss's duration: nothing behind it proceeds.
    // Without the cache, both return at once.
    virtual void access_qp(std::uint32_t qpn, bool write, side s, sc_core::sc_time& delay,
                           timed_resource* hold = nullptr) = 0;
    virtual void access_stag(std::uint32_t stag, bool write, side s, sc_core::sc_time& delay,
                             timed_resource* hold = nullptr) = 0;
};

}  // namespace rnic
