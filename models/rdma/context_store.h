// The RDMA engine's context memory: queue-pair contexts (state, ring pointers, MSN/ORD/IRD counters,
// work requests in flight), completion-queue contexts and the STag / memory-region table
// (RFC 5040 §2.2): plain tables. The context memory module (context_memory.h) holds them with its
// cache in front; the firmware creates and destroys contexts through rdma_ctl_if, and the engine's
// parts reach them only through that module's context_if (by QP number, by TCP connection, by STag).
// A pointer from a lookup stays valid until the context is destroyed; the parts keep one across a
// wait() only in the transmit thread, for the QP being served.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <systemc>
#include <vector>

#include "proto/ddp_rdmap.h"
#include "rdma/rdma_if.h"
#include "rnic/regmap.h"

namespace rnic {

// A work request of the send queue that has left the engine and waits to complete (RFC 5040 §5.5).
struct pending_completion {
    std::uint64_t stream_end;
    std::uint32_t wqe_index;
    std::uint64_t wr_id;
    std::uint32_t length;
    regmap::wr_opcode opcode;
    bool signaled;
    // RDMA Read: complete once its Read Response has been placed (RFC 5040 §5.5), in order
    // with the other work requests of the send queue.
    bool done = true;
    std::uint32_t sink_stag = 0;
    std::uint64_t sink_to = 0;
    std::uint64_t received = 0;
    // The zero-length Read sent as RTR (RFC 6581 §9.2): the provider's own, no completion.
    bool rtr = false;
    // Atomic: the response carries the original value for the 8-byte result buffer.
    bool atomic = false;
    std::uint32_t request_id = 0;
    std::uint64_t result_addr = 0;
    // A result buffer in a page-list region: result_addr is its offset in these pages.
    std::shared_ptr<const mr_page_list> result_pages = nullptr;
};

// A Read or Atomic Request accepted on queue 1 whose response has not been sent yet.
struct read_response_job {
    std::uint32_t sink_stag;
    std::uint64_t sink_to;
    std::uint64_t src_addr;  // host address of the source bytes (already checked)
    std::uint32_t size;
    // A source in a page-list region: src_addr is the offset of its first byte in these pages.
    std::shared_ptr<const mr_page_list> src_pages = nullptr;
    // Atomic Responses share the queue: responses leave in request order (RFC 7306 §7).
    bool atomic = false;
    std::uint32_t request_id = 0;
    std::uint64_t original = 0;
};

struct qp_context {
    // An SQ doorbell write on its way: applied when it reaches the engine.
    struct doorbell {
        sc_core::sc_time arrival;
        std::uint32_t producer;
    };
    // The Terminate that took the QP out of RTS (sent or received), as query_qp reports it.
    struct terminate_info {
        bool valid = false;
        bool received = false;
        proto::ddp::term_layer layer = proto::ddp::term_layer::rdma;
        std::uint8_t etype = 0, code = 0;
    };

    bool valid = false;
    qp_config cfg;
    regmap::qp_state state = regmap::qp_state::idle;
    std::uint32_t conn = 0;
    std::size_t max_ulpdu = 0;
    std::uint32_t sq_producer = 0, sq_consumer = 0;
    std::deque<doorbell> sq_doorbells;
    std::uint32_t rq_producer = 0, rq_consumer = 0;
    std::uint32_t send_msn = 0;               // last MSN sent on queue 0
    std::uint32_t read_req_msn = 0;           // last MSN sent on queue 1 (Read Requests)
    std::uint32_t read_req_msn_rx = 0;        // last MSN received on queue 1
    std::uint32_t reads_outstanding = 0;      // Reads and atomics in flight (ORD)
    std::uint32_t atomic_resp_msn = 0;        // last MSN sent on queue 3
    std::uint32_t atomic_resp_msn_rx = 0;     // last MSN received on queue 3
    std::uint64_t acked = 0;                  // send-stream bytes acknowledged so far
    std::deque<read_response_job> responses;  // Read Requests accepted, responses not yet sent
    std::uint32_t recv_msn = 0;               // MSN of the message being (or last) received on queue 0
    bool recv_active = false;                 // a multi-segment Send is being placed
    // VI/TCP Unreliable Delivery (vitcp_errors.h): the Send being placed is in error (its receive
    // completes with a transport error); the rest of message recv_msn is dropped.
    bool recv_in_error = false;
    bool recv_discarding = false;
    std::uint64_t recv_wr_id = 0, recv_addr = 0, recv_bytes = 0;
    std::uint32_t recv_len = 0, recv_stag = 0, recv_index = 0;
    proto::ddp::opcode recv_opcode = proto::ddp::opcode::send;  // of the message being received
    std::deque<pending_completion> pending;
    std::uint32_t terminate_msn = 0;
    std::uint32_t ird = 0, ord = 0;  // negotiated for this stream (qp_connect)
    bool hold_tx = false;            // responder: nothing sent before the first FPDU arrived
    bool raw_sent = false;           // test mode: raw ULPDUs went out (their responses are no request of ours)
    qp_stream::rtr rtr_to_send = qp_stream::rtr::none;  // initiator: the RTR still to send
    terminate_info term;
    // VI/TCP Reliable Reception (qp_stream::peer_acknowledges, seed 003 §3.2).
    bool peer_acks = false;
    std::uint64_t peer_placed = 0;  // send-stream offset through which the peer placed our messages
    bool ack_owed = false;          // placed messages the peer has not been told of
    sc_core::sc_time ack_due;       // when the first of them has landed
    sc_core::sc_time ack_until;     // when the last of them lands
    // The peer reported an error in our message after send-stream offset `after` (`named`: in one
    // of ours): that work request completes with `status`.
    struct remote_error_info {
        bool valid = false, named = false;
        regmap::cqe_status status = regmap::cqe_status::transport_error;
        std::uint64_t after = 0;
    } remote_error;
};

struct cq_context {
    bool valid = false;
    cq_config cfg;
    std::uint32_t producer = 0, consumer = 0;
    bool armed = false;
    std::uint64_t overruns = 0;
};

// A registered memory region, named by STag = 24-bit index << 8 | 8-bit key.
struct mr_context {
    bool valid = false;
    mr_config cfg;
    std::uint8_t key = 0;
};

class context_store {
public:
    context_store(std::uint32_t max_qp, std::uint32_t max_cq, std::uint32_t max_mr);

    // ---- queue pairs: numbers 0 .. qp_slots() - 1
    std::uint32_t qp_slots() const { return static_cast<std::uint32_t>(qps_.size()); }
    qp_context* qp(std::uint32_t qpn);  // nullptr: no such QP
    const qp_context* qp(std::uint32_t qpn) const;
    int create_qp(const qp_config& cfg);  // qpn, -1 no free context, -2 a CQ that does not exist
    void destroy_qp(std::uint32_t qpn);   // frees the context and unbinds its connections
    // The TCP connection a QP runs on: bound when the QP goes to RTS, unbound by its graceful close
    // or destroy_qp (a QP in Error keeps it, so that what still arrives is dropped).
    void bind_connection(std::uint32_t conn, std::uint32_t qpn) { conn_to_qp_[conn] = qpn; }
    void unbind_connection(std::uint32_t conn) { conn_to_qp_.erase(conn); }
    int qpn_of_connection(std::uint32_t conn) const;  // -1: no QP on it

    // ---- completion queues: numbers 0 .. cq_slots() - 1
    std::uint32_t cq_slots() const { return static_cast<std::uint32_t>(cqs_.size()); }
    cq_context* cq(std::uint32_t cqn);  // nullptr: no such CQ
    // The context of CQ `cqn` < cq_slots() whether it exists or not (a QP's CQs are in range and
    // cannot be destroyed while it exists).
    cq_context& cq_slot(std::uint32_t cqn) { return cqs_[cqn]; }
    const cq_context& cq_slot(std::uint32_t cqn) const { return cqs_[cqn]; }
    int create_cq(const cq_config& cfg);  // cqn, or -1: no free context
    int destroy_cq(std::uint32_t cqn);    // 0, -1 no such CQ, -2 a QP still uses it

    // ---- memory regions (STags)
    // STag, or -1: no free entry, or (a page-list region) no room left in the page-list memory
    // (regmap::kPageListPoolEntries entries, freed when the STag is invalidated).
    std::int64_t register_mr(const mr_config& cfg);
    // nullptr: not a valid STag (never registered, invalidated, or an old key: RFC 5040 §2.2).
    mr_context* lookup_stag(std::uint32_t stag);
    const mr_context* lookup_stag(std::uint32_t stag) const;
    // Deregistration and local or remote invalidation; false when `stag` is not valid.
    bool invalidate_stag(std::uint32_t stag);
    // Every valid STag (CTRL.RESET invalidates them all), and how many there are.
    std::vector<std::uint32_t> valid_stags() const;
    std::uint32_t stags_in_use() const;

private:
    std::vector<qp_context> qps_;
    std::vector<cq_context> cqs_;
    std::vector<mr_context> mrs_;
    std::map<std::uint32_t, std::uint32_t> conn_to_qp_;
    std::size_t page_list_entries_ = 0;  // of the page-list memory, in use by valid regions
};

}  // namespace rnic
