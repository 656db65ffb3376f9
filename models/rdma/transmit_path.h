// The transmit side of the RDMA engine: send-queue processing (WQE fetch in batches, decode,
// validation), each work request cut into DDP segments (RFC 5041 §5) with its DDP/RDMAP headers,
// Read and Atomic Requests on queue 1 held to ORD, the peer-to-peer RTR (RFC 6581 §9.2), and the
// emission of ULPDUs to the framing unit within the TCP send space. Runs in the engine's transmit
// thread; the responder sends its Read and Atomic Responses through emit() and send_untagged().
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "proto/ddp_rdmap.h"
#include "rdma/context_if.h"
#include "rdma/engine_part.h"
#include "rdma/wqe_prefetch.h"
#include "rnic/regmap.h"

namespace rnic {

class completion_unit;
class qp_lifecycle;

// The fields of a send WQE the engine acts on (regmap::sqe_off), decoded once.
struct send_wqe {
    regmap::wr_opcode opcode = regmap::wr_opcode::rdma_write;
    std::uint8_t raw_opcode = 0;
    bool signaled = false, solicited = false, masked = false;
    std::uint64_t wr_id = 0, local_addr = 0, remote_to = 0, operand = 0, compare = 0;
    std::uint32_t length = 0, local_stag = 0, remote_stag = 0, imm_or_inv = 0;
    std::uint64_t add_or_swap_mask = 0, compare_mask = ~std::uint64_t{0};  // masked atomics
    std::uint32_t index = 0;                       // SQ index of the WQE's last slot (reported in its CQE)
    const std::uint8_t* inline_payload = nullptr;  // wr_flags::inline_data: the bytes after the WQE
};

class transmit_path : private engine_part {
public:
    transmit_path(const engine_resources& res, completion_unit& completions, qp_lifecycle& lifecycle);

    // Fetches up to wqe_batch::kMaxBatch posted WQEs of the QP with one DMA read, or takes them from
    // `prefetch` when it holds them, and processes them (flushes them unless the QP is in RTS), then
    // waits for the engine's pipeline time.
    void process_batch(std::uint32_t qpn, qp_context& qp, wqe_prefetch* prefetch = nullptr);
    // The ready-to-receive message of a peer-to-peer initiator (RFC 6581 §9.2).
    void send_rtr(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& issue);
    // VI/TCP Reliable Reception: asks the framing for the report of placed messages the peer is
    // owed (qp_context::ack_owed), within the TCP send space (framing::build_acknowledgement).
    void send_acknowledgement(qp_context& qp, sc_core::sc_time& issue);

    enum class emit_status {
        sent,
        qp_failed,           // the QP left RTS and Closing while waiting for TCP send space
        payload_unreadable,  // the payload's DMA read failed
        refused,             // the framing unit refused the ULPDU
    };
    // Sends one ULPDU: the header `h`, then `len` payload bytes copied from `inline_data`, or
    // DMA-read from host memory at `host_addr` when `inline_data` is null (a retransmission may
    // read them there again). Waits for TCP send space first. Sets *stream_end unless null: the
    // send-stream offset after the ULPDU's frame, which the TCP engine reports (toe_ctl_if).
    // With `pages`, host_addr is the payload's offset in a page-list region: read page by page, and
    // refetchable only when it sits in one page (else the TCP engine resends its buffered copy).
    emit_status emit(qp_context& qp, const proto::ddp::header& h, const std::uint8_t* inline_data,
                     std::uint64_t host_addr, std::size_t len, sc_core::sc_time& issue, std::uint64_t* stream_end,
                     const mr_page_list* pages = nullptr);
    // Sends one untagged ULPDU (header + body built by the caller); false when the QP failed.
    bool send_untagged(qp_context& qp, const proto::ddp::header& h, const std::uint8_t* body, std::size_t body_len,
                       sc_core::sc_time& issue, std::uint64_t* stream_end);

private:
    // Slots a WQE occupies after its first (masks, inline data), 0 if they are not all posted.
    static std::uint32_t extra_slots(const std::uint8_t* wqe, std::uint32_t posted_after);
    // The extra slots of the WQE at batch position i: from the batch, or read from the ring.
    const std::uint8_t* fetch_extra_slots(qp_context& qp, std::uint32_t i, std::uint32_t n, std::uint32_t extra,
                                          sc_core::sc_time& issue);
    // Decodes the WQE at `wqe` (and the masks slot of a masked atomic, `masks`, may be null).
    static send_wqe decode_wqe(const std::uint8_t* wqe, const std::uint8_t* masks, std::uint32_t index);
    void process_wqe(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue);
    // RDMA Write, Send variants and Immediate Data: one message of DDP segments.
    bool post_message(std::uint32_t qpn, qp_context& qp, const send_wqe& w, bool tagged, proto::ddp::opcode opcode,
                      const std::uint8_t* inline_data, std::uint32_t length, sc_core::sc_time& issue,
                      std::uint64_t* stream_end);
    void post_read_request(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue);
    void post_atomic(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue);
    // The untagged header of the next Read or Atomic Request (queue 1).
    static proto::ddp::header request_header(const qp_context& qp, proto::ddp::opcode opcode);
    // Sends a Read or Atomic Request on queue 1 and records `p` as waiting for its response.
    bool send_request(std::uint32_t qpn, qp_context& qp, const proto::ddp::header& h, const std::uint8_t* body,
                      std::size_t body_len, const send_wqe& w, sc_core::sc_time& issue, pending_completion p);
    void post_local_invalidate(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue);
    void post_raw_ulpdu(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue);
    // The raw work requests' common start (test mode): the local buffer in the QP's protection
    // domain and `length_ok` (else local_length_error), TCP send space for w.length bytes (else
    // flushed), the bytes read into tx_scratch_ by `data` (else local_protection_error). False when
    // it completed the work request in error.
    bool stage_raw(std::uint32_t qpn, qp_context& qp, const send_wqe& w, bool length_ok, sc_core::sc_time& issue,
                   sc_core::sc_time& data);
    // Test mode: stream bytes verbatim (the peer's own FPDUs), one TCP segment per work request.
    void post_raw_stream(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue);
    void complete_with_error(std::uint32_t qpn, qp_context& qp, const send_wqe& w, regmap::cqe_status status,
                             sc_core::sc_time& delay);
    // The local buffer of a work request, in a region of the QP's protection domain.
    bool check_local(const qp_context& qp, std::uint32_t stag, std::uint64_t addr, std::uint64_t len) const;
    // The local buffer a Read Response or an atomic's result lands in: also local write access.
    const mr_context* writable_local(const qp_context& qp, std::uint32_t stag, std::uint64_t addr,
                                     std::uint64_t len) const;
    void wait_for_ord(qp_context& qp, sc_core::sc_time& issue);
    // Waits for TCP send space for a ULPDU; false when the QP failed meanwhile.
    bool wait_for_space(qp_context& qp, std::size_t ulpdu_len, sc_core::sc_time& issue);

    completion_unit& completions_;
    qp_lifecycle& lifecycle_;
    std::vector<std::uint8_t> tx_scratch_;
    std::vector<std::uint8_t> wqe_cache_;
    fetched_wqes fetched_;  // a batch taken from the fetch unit (its bytes swap into wqe_cache_)
    std::vector<std::uint8_t> extra_cache_;
};

}  // namespace rnic
