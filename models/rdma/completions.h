// Completions of the RDMA engine: CQEs written to the completion rings in host memory, the send
// queue's work requests retired in posting order (RFC 5040 §5.5), CQ doorbells and arming, MSI-X.
#pragma once

#include <cstdint>
#include <systemc>
#include <utility>
#include <deque>
#include <vector>

#include "rdma/context_if.h"
#include "rdma/engine_part.h"
#include "rnic/regmap.h"

namespace rnic {

class qp_lifecycle;

// Whether the oldest work request `p` of `qp`'s send queue has finished (RFC 5040 §5.5): a Write or
// Send once TCP has its last byte acknowledged, a Read or atomic once its response has been
// placed. At VI/TCP Reliable Reception a Write or Send instead once the peer reports it placed
// (seed 003 §3.2 Message ACK); Reads still complete on their response.
bool work_request_finished(const qp_context& qp, const pending_completion& p);

// The fields of a CQE (regmap::cqe_off) before they are laid out in the ring.
struct cqe_fields {
    std::uint64_t wr_id = 0;
    std::uint32_t byte_len = 0;
    std::uint8_t opcode = 0;
    regmap::cqe_status status = regmap::cqe_status::success;
    std::uint32_t qpn = 0;
    std::uint32_t wqe_index = 0;
    bool receive = false;
    std::uint64_t imm_data = 0;
    std::uint8_t flags = 0;  // regmap::cqe_flags
};

class completion_unit : private engine_part {
public:
    completion_unit(const engine_resources& res, qp_lifecycle& lifecycle);

    // Writes one CQE to CQ `cqn` (DMA), or counts an overrun when the ring is full; interrupts if
    // the CQ is armed.
    void post_cqe(std::uint32_t cqn, const cqe_fields& f, sc_core::sc_time& delay);
    // Completes the send queue's finished work requests, oldest first; a Closing QP may then close.
    void retire(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& delay);
    // Completes with `status` the receive a message had taken (qp.recv_*: its WQE consumed, its
    // completion not yet written): the bytes placed so far, on the receive CQ.
    void complete_taken_receive(std::uint32_t qpn, const qp_context& qp, regmap::cqe_status status,
                                sc_core::sc_time& delay);
    // CQ doorbell: the driver has consumed the entries before `consumer`.
    void cq_doorbell(std::uint32_t cqn, std::uint32_t consumer, const sc_core::sc_time& delay);
    // The driver asks for an interrupt at the next CQE.
    void cq_arm(std::uint32_t cqn, const sc_core::sc_time& delay);
    // The QPs that lost a completion to a full CQ since the last call, in order (verbs: a CQ
    // overrun is a catastrophic error of the QPs whose completions it lost). The engine moves them to
    // Error from its transmit thread, never from inside the call that found the ring full.
    std::vector<std::uint32_t> take_overrun_qps() { return std::exchange(overrun_qps_, {}); }
    bool has_overrun_qps() const { return !overrun_qps_.empty(); }
    // Asynchronous events for the driver (regmap ASYNC_EVENT): type << 24 | CQ number, oldest first.
    std::uint32_t async_event() const { return async_events_.empty() ? 0 : async_events_.front(); }
    void ack_async_event() {
        if (!async_events_.empty()) async_events_.pop_front();
    }
    void clear_async_events() { async_events_.clear(); }

private:
    std::vector<std::uint32_t> overrun_qps_;
    std::deque<std::uint32_t> async_events_;  // at most one per CQ (its first overrun)
    void raise_msix(std::uint32_t vector, sc_core::sc_time& delay);

    qp_lifecycle& lifecycle_;
};

}  // namespace rnic
