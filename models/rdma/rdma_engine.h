// DDP/RDMAP engine (RFC 5040, RFC 5041): queue pairs with send, receive and completion rings in host
// memory, the STag/memory-region table with protection domains and access rights, segmentation of
// work requests into DDP segments, placement of arriving tagged segments, completions, and the
// Terminate message on protocol errors.
//  ulpdu_tx_out -> DDP segments to the framing unit
//  ulpdu_rx_in  <- checked ULPDUs from the framing unit
//  dma_out      -> host memory through the DMA engine (WQE fetch, payload, CQE write-back)
//  irq_out      -> MSI-X requests to the PCIe endpoint
#pragma once

#include <deque>
#include <map>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "core/stats.h"
#include "core/stream.h"
#include "core/timed_resource.h"
#include "proto/ddp_rdmap.h"
#include "rdma/rdma_if.h"
#include "rnic/regmap.h"
#include "toe/toe_if.h"

namespace rnic {

using ddp_opcode_t = proto::ddp::Opcode;

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
};

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

    rdma_engine(const sc_core::sc_module_name& name, const rdma_engine_params& params);

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

    void report_stats(boost::json::object& out) const override;

private:
    using qp_state = regmap::qp_state;
    // The Terminate that took the QP out of RTS (sent or received), as query_qp reports it.
    struct terminate_info {
        bool valid = false;
        bool received = false;
        proto::ddp::TermLayer layer = proto::ddp::TermLayer::rdma;
        std::uint8_t etype = 0, code = 0;
    };
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
    };
    // The fields of a send WQE the engine acts on (regmap::sqe_off), decoded once.
    struct send_wqe {
        regmap::wr_opcode opcode = regmap::wr_opcode::rdma_write;
        std::uint8_t raw_opcode = 0;
        bool signaled = false, solicited = false, masked = false;
        std::uint64_t wr_id = 0, local_addr = 0, remote_to = 0, operand = 0, compare = 0;
        std::uint32_t length = 0, local_stag = 0, remote_stag = 0, imm_or_inv = 0;
        std::uint64_t add_or_swap_mask = 0, compare_mask = ~std::uint64_t{0};  // masked atomics
        std::uint32_t index = 0;  // SQ index of the WQE's last slot (reported in its CQE)
        const std::uint8_t* inline_payload = nullptr;  // wr_flags::inline_data: the bytes after the WQE
    };
    struct read_response_job {
        std::uint32_t sink_stag;
        std::uint64_t sink_to;
        std::uint64_t src_addr;  // host address of the source bytes (already checked)
        std::uint32_t size;
        // Atomic Responses share the queue: responses leave in request order (RFC 7306 §7).
        bool atomic = false;
        std::uint32_t request_id = 0;
        std::uint64_t original = 0;
    };
    struct doorbell {
        sc_core::sc_time arrival;
        std::uint32_t producer;
    };
    struct queue_pair {
        bool valid = false;
        qp_config cfg;
        qp_state state = qp_state::idle;
        std::uint32_t conn = 0;
        std::size_t max_ulpdu = 0;
        std::uint32_t sq_producer = 0, sq_consumer = 0;
        std::deque<doorbell> sq_doorbells;
        std::uint32_t rq_producer = 0, rq_consumer = 0;
        std::uint32_t send_msn = 0;       // last MSN sent on queue 0
        std::uint32_t read_req_msn = 0;   // last MSN sent on queue 1 (Read Requests)
        std::uint32_t read_req_msn_rx = 0;  // last MSN received on queue 1
        std::uint32_t reads_outstanding = 0;   // Reads and atomics in flight (ORD)
        std::uint32_t atomic_resp_msn = 0;     // last MSN sent on queue 3
        std::uint32_t atomic_resp_msn_rx = 0;  // last MSN received on queue 3
        std::uint64_t acked = 0;          // send-stream bytes acknowledged so far
        std::deque<read_response_job> responses;  // Read Requests accepted, responses not yet sent
        std::uint32_t recv_msn = 0;       // MSN of the message being (or last) received on queue 0
        bool recv_active = false;         // a multi-segment Send is being placed
        std::uint64_t recv_wr_id = 0, recv_addr = 0, recv_bytes = 0;
        std::uint32_t recv_len = 0, recv_stag = 0, recv_index = 0;
        proto::ddp::Opcode recv_opcode = proto::ddp::Opcode::send;  // of the message being received
        std::deque<pending_completion> pending;
        std::uint32_t terminate_msn = 0;
        std::uint32_t ird = 0, ord = 0;   // negotiated for this stream (qp_connect)
        bool hold_tx = false;             // responder: nothing sent before the first FPDU arrived
        qp_stream::rtr rtr_to_send = qp_stream::rtr::none;  // initiator: the RTR still to send
        terminate_info term;
    };
    struct completion_queue {
        bool valid = false;
        cq_config cfg;
        std::uint32_t producer = 0, consumer = 0;
        bool armed = false;
        std::uint64_t overruns = 0;
    };
    struct memory_region {
        bool valid = false;
        mr_config cfg;
        std::uint8_t key = 0;
    };
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
    // Outcome of checking a tagged access against the region table (RFC 5040 §7, RFC 5041 §7).
    struct access_check {
        bool ok = false;
        proto::ddp::TermLayer layer = proto::ddp::TermLayer::ddp;
        std::uint8_t etype = 0, code = 0;
        std::uint64_t host_addr = 0;
        const char* what = "";
    };

    // Slots a WQE occupies after its first (masks, inline data), 0 if they are not all posted.
    static std::uint32_t extra_slots(const std::uint8_t* wqe, std::uint32_t posted_after);
    // The extra slots of the WQE at batch position i: from the batch, or read from the ring.
    const std::uint8_t* fetch_extra_slots(queue_pair& qp, std::uint32_t i, std::uint32_t n, std::uint32_t extra,
                                          sc_core::sc_time& issue);
    void tx_thread();
    bool take_doorbells(queue_pair& qp);
    queue_pair* next_ready_qp();
    void process_batch(std::uint32_t qpn, queue_pair& qp);
    // QP to Error: every outstanding and later work request completes with "flushed" (verbs semantics).
    void enter_error(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& delay);
    // Decodes the WQE at `wqe` (and the masks slot of a masked atomic, `masks`, may be null).
    static send_wqe decode_wqe(const std::uint8_t* wqe, const std::uint8_t* masks, std::uint32_t index);
    void process_wqe(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, sc_core::sc_time& issue);
    void post_read_request(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, sc_core::sc_time& issue);
    void post_atomic(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, sc_core::sc_time& issue);
    // The untagged header of the next Read or Atomic Request (queue 1).
    static proto::ddp::Header request_header(const queue_pair& qp, ddp_opcode_t opcode);
    // Sends a Read or Atomic Request on queue 1 and records `p` as waiting for its response.
    bool send_request(std::uint32_t qpn, queue_pair& qp, const proto::ddp::Header& h, const std::uint8_t* body,
                      std::size_t body_len, const send_wqe& w, sc_core::sc_time& issue, pending_completion p);
    // RDMA Write, Send variants and Immediate Data: one message of DDP segments.
    bool post_message(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, bool tagged, ddp_opcode_t opcode,
                      const std::uint8_t* inline_data, std::uint32_t length, sc_core::sc_time& issue,
                      std::uint64_t* stream_end);
    void post_local_invalidate(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, sc_core::sc_time& issue);
    // The ready-to-receive message of a peer-to-peer initiator (RFC 6581 §9.2).
    void send_rtr(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& issue);
    void post_raw_ulpdu(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, sc_core::sc_time& issue);
    // The graceful close of a Closing QP, once everything it sent is acknowledged.
    void maybe_finish_closing(std::uint32_t qpn, queue_pair& qp);
    void flush_receives(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& delay);
    void report_qp_error(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& delay);
    void terminate_received(std::uint32_t qpn, queue_pair& qp, const std::uint8_t* ulpdu, std::size_t len,
                            sc_core::sc_time& delay);
    void complete_with_error(std::uint32_t qpn, queue_pair& qp, const send_wqe& w, regmap::cqe_status status,
                             sc_core::sc_time& delay);
    void rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void fail_request(std::uint32_t qpn, queue_pair& qp, const proto::ddp::Header& h, const std::uint8_t* ulpdu,
                      std::size_t len, proto::ddp::TermLayer layer, std::uint8_t etype, std::uint8_t code,
                      const std::string& what, sc_core::sc_time& delay);
    bool check_request_queue(std::uint32_t qpn, queue_pair& qp, const proto::ddp::Header& h, const std::uint8_t* ulpdu,
                             std::size_t len, sc_core::sc_time& delay);
    static std::uint8_t rdmap_protection_code(const access_check& chk);
    void retire_completions(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& delay);
    void accept_read_request(std::uint32_t qpn, queue_pair& qp, const proto::ddp::Header& h,
                             const std::uint8_t* ulpdu, std::size_t len, sc_core::sc_time& delay);
    void place_read_response(std::uint32_t qpn, queue_pair& qp, const proto::ddp::Header& h,
                             const std::uint8_t* ulpdu, std::size_t len, bool already_placed, sc_core::sc_time& delay);
    void send_read_response(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& issue);
    void send_atomic_response(std::uint32_t qpn, queue_pair& qp, sc_core::sc_time& issue);
    void execute_atomic(std::uint32_t qpn, queue_pair& qp, const proto::ddp::Header& h, const std::uint8_t* ulpdu,
                        std::size_t len, sc_core::sc_time& delay);
    // Performs the atomic on host memory at `addr`; false when the host refused. Sets *original.
    bool perform_atomic(std::uint64_t addr, const proto::ddp::AtomicRequest& req, std::uint64_t* original,
                        sc_core::sc_time& delay);
    void complete_atomic(std::uint32_t qpn, queue_pair& qp, const proto::ddp::Header& h, const std::uint8_t* ulpdu,
                         std::size_t len, sc_core::sc_time& delay);
    // Sends one untagged ULPDU (header + body) built by the caller; false when the QP failed.
    // DMA-writes a received payload, telling the DMA engine where MPA markers sat between its bytes.
    tlm::tlm_response_status place_payload(std::uint64_t host_addr, const std::uint8_t* payload, std::size_t len,
                                           std::size_t header_len, sc_core::sc_time& delay);
    bool send_untagged(queue_pair& qp, const proto::ddp::Header& h, const std::uint8_t* body, std::size_t body_len,
                       std::uint64_t tag, sc_core::sc_time& issue, std::uint64_t* stream_end);
    const memory_region* writable_local(const queue_pair& qp, std::uint32_t stag, std::uint64_t addr,
                                        std::uint64_t len) const;
    void wait_for_ord(queue_pair& qp, sc_core::sc_time& issue);
    // Waits for TCP send space for a ULPDU; false when the QP failed meanwhile.
    bool wait_for_space(queue_pair& qp, std::size_t ulpdu_len, sc_core::sc_time& issue);
    void place_send(std::uint32_t qpn, queue_pair& qp, const proto::ddp::Header& h, const std::uint8_t* ulpdu,
                    std::size_t len, sc_core::sc_time& delay);
    // Takes the next posted receive WQE for a new untagged message; false after a Terminate.
    bool take_receive(std::uint32_t qpn, queue_pair& qp, const proto::ddp::Header& h, const std::uint8_t* ulpdu,
                      std::size_t len, sc_core::sc_time& delay);
    void place_tagged(std::uint32_t qpn, queue_pair& qp, const proto::ddp::Header& h, const std::uint8_t* ulpdu,
                      std::size_t len, sc_core::sc_time& delay);
    bool place_out_of_order(const queue_pair& qp, const std::uint8_t* ulpdu, std::size_t len, sc_core::sc_time& delay);
    access_check check_access(const queue_pair& qp, std::uint32_t stag, std::uint64_t to, std::uint64_t len,
                              std::uint32_t right) const;
    bool check_local(const queue_pair& qp, std::uint32_t stag, std::uint64_t addr, std::uint64_t len) const;
    void send_terminate(std::uint32_t qpn, queue_pair& qp, proto::ddp::TermLayer layer, std::uint8_t etype,
                        std::uint8_t code, const std::uint8_t* ulpdu, std::size_t len, sc_core::sc_time& delay);
    void post_cqe(std::uint32_t cqn, const cqe_fields& f, sc_core::sc_time& delay);
    void raise_msix(std::uint32_t vector, sc_core::sc_time& delay);
    int qpn_of_conn(std::uint32_t conn) const;
    memory_region* lookup_stag(std::uint32_t stag);
    const memory_region* lookup_stag(std::uint32_t stag) const;

    rdma_engine_params params_;
    std::vector<queue_pair> qps_;
    std::vector<completion_queue> cqs_;
    std::vector<memory_region> mrs_;
    std::map<std::uint32_t, std::uint32_t> conn_to_qp_;
    sc_core::sc_event work_event_;
    sc_core::sc_event space_event_;
    sc_core::sc_event read_done_event_;
    timed_resource tx_pipe_, rx_pipe_;
    std::uint32_t rr_next_ = 0;
    std::vector<std::uint8_t> tx_scratch_;
    std::vector<std::uint8_t> wqe_cache_;
    std::vector<std::uint8_t> extra_cache_;
    const stream_ext* rx_ext_ = nullptr;  // the ULPDU being received (for place_payload)
    static constexpr std::uint32_t kWqeBatch = 8;

    struct counters {
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
    } counters_;
};

}  // namespace rnic
