// QP state transitions of the RDMA engine and what they set off (regmap::qp_state): RTS on a fresh
// stream, the graceful close through Closing back to Idle, and Error, which flushes the send and
// receive queues, reports the QP error and closes the stream (RFC 5040 §6.2).
#pragma once

#include <cstdint>
#include <systemc>

#include "rdma/context_if.h"
#include "rdma/engine_part.h"
#include "rdma/rdma_if.h"

namespace rnic {

class completion_unit;

class qp_lifecycle : private engine_part {
public:
    qp_lifecycle(const engine_resources& res, completion_unit& completions);

    // An Idle QP goes to RTS on `stream`, with every per-stream sequence started again.
    void connect(std::uint32_t qpn, qp_context& qp, const qp_stream& stream);
    // The driver's transitions (regmap::qp_state): error (abortive) or closing (graceful); false when
    // the transition is not allowed from the QP's state.
    bool modify(std::uint32_t qpn, qp_context& qp, std::uint8_t target);
    // QP to Error: every outstanding and later work request completes with "flushed" (verbs semantics).
    void enter_error(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& delay);
    // The graceful close of a Closing QP, once everything it sent is acknowledged and answered.
    void maybe_finish_closing(std::uint32_t qpn, qp_context& qp);
    // The query_qp result word (regmap::query_qp_result): state and the Terminate, if any.
    static std::uint32_t query_word(const qp_context& qp);

private:
    void flush_receives(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& delay);
    void report_qp_error(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& delay);

    completion_unit& completions_;
};

}  // namespace rnic
