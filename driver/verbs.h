// A verbs-style API over the RNIC (in the spirit of libibverbs): device, protection domains, memory
// regions, completion queues, queue pairs, connection set-up, post send, poll. Every misuse returns an
// error status and logs it with the simulated time; nothing here crashes on bad arguments.
// Register-level details live in device.h; descriptor formats in models/rnic/regmap.h.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "driver/device.h"

namespace rnic::drv {

enum class status {
    ok = 0,
    invalid_argument,
    bad_handle,
    bad_state,
    out_of_bounds,
    ring_full,
    bad_opcode,
    no_memory,     // host memory for a ring or buffer (the driver's DMA pool) is exhausted
    no_resources,  // a device table is full: no free QP, CQ, STag or connection (regmap cmd_status)
    device_error,
    timeout,
    connection_refused,
    not_listening,     // unlisten of a port that does not listen (regmap cmd_status::not_listening)
    no_buffer_memory,  // the NIC could not reserve the connection's send region (regmap cmd_status)
};
const char* to_string(status s);

struct memory_region {
    std::uint32_t stag = 0;
    std::uint64_t addr = 0;
    std::uint64_t length = 0;
    std::uint32_t access = 0;
    std::uint32_t pd = 0;
    // Tagged offset of the first byte, what a peer puts in its work requests: the host address
    // (VA-based) or 0 (zero-based), RFC 5040 §2.2.
    std::uint64_t to_base = 0;
};

// Send completions carry the work request's opcode; receive completions one of the recv kinds.
enum class wc_opcode : std::uint8_t {
    rdma_write = 0,
    send = 1,
    rdma_read = 2,
    atomic_fetch_add = 3,
    atomic_compare_swap = 4,
    immediate_data = 5,
    rdma_write_with_imm = 6,
    local_invalidate = 7,
    raw_stream = 0x7d,
    raw_ulpdu = 0x7f,
    recv = 128,       // a Send arrived
    recv_imm = 129,   // Immediate Data arrived (alone or after an RDMA Write): see imm_data
    qp_error = 0xfe,  // the QP left RTS: status says the class, terminate the Terminate (if any)
};

// An asynchronous event of the device (like ibv_async_event): regmap::async_event and the resource
// it names (cq_error: the CQ number).
struct async_event_info {
    regmap::async_event type = regmap::async_event::none;
    std::uint32_t resource = 0;
};

// What query_qp and a qp_error completion report about the Terminate that ended the stream.
struct terminate_info {
    bool valid = false;
    bool received = false;  // from the peer (else: this side sent it)
    std::uint8_t layer = 0, etype = 0, code = 0;
};

struct work_completion {
    std::uint64_t wr_id = 0;
    std::uint32_t byte_len = 0;
    wc_opcode opcode = wc_opcode::rdma_write;
    regmap::cqe_status status = regmap::cqe_status::success;
    std::uint32_t qpn = 0;
    bool with_imm = false;
    std::uint64_t imm_data = 0;          // Immediate Data (with_imm)
    std::uint32_t invalidated_stag = 0;  // a Send with Invalidate's STag, now invalid here
    bool solicited = false;
    terminate_info terminate;  // qp_error entries
};

struct send_wr {
    std::uint64_t wr_id = 0;
    regmap::wr_opcode opcode = regmap::wr_opcode::rdma_write;
    bool signaled = true;
    std::uint64_t local_addr = 0;
    std::uint32_t length = 0;
    std::uint32_t local_stag = 0;
    std::uint64_t remote_addr = 0;  // tagged offset at the peer
    std::uint32_t remote_stag = 0;
    std::uint64_t operand = 0;          // atomics: add data (FetchAdd) or swap data (CmpSwap)
    std::uint64_t compare = 0;          // atomics: compare data (CmpSwap)
    bool solicited = false;             // Send / Immediate Data with Solicited Event
    std::uint32_t invalidate_stag = 0;  // Send with Invalidate (0: none); local_invalidate: the STag
    std::uint64_t imm_data = 0;         // immediate_data, rdma_write_with_imm
    // Masked atomics (RFC 7306 §5.1); the work request takes two send-queue slots.
    bool masked = false;
    std::uint64_t add_or_swap_mask = 0;  // FetchAdd: carry boundaries; CmpSwap: bits swapped
    std::uint64_t compare_mask = 0;      // CmpSwap: bits compared
    // Send, RDMA Write (with Immediate) of at most regmap::kMaxInlineData bytes: the driver copies
    // the payload from local_addr into the send queue (no registration needed), so the device reads
    // nothing more from host memory (verbs' IBV_SEND_INLINE).
    bool inline_data = false;
};

// Inbound (IRD) and outbound (ORD) RDMA Read/atomic limits of a connection; 0: the device default.
// `peer_to_peer` (connect only): the peer-to-peer model of RFC 6581 §9.2, for applications where
// either side may send first: the device sends a ready-to-receive message before any work request,
// so the accepting side can send at once. Needs the device's MPA revision 2.
struct read_limits {
    std::uint16_t ird = 0;
    std::uint16_t ord = 0;
    bool peer_to_peer = false;
};

struct recv_wr {
    std::uint64_t wr_id = 0;
    std::uint64_t addr = 0;
    std::uint32_t length = 0;
    std::uint32_t stag = 0;  // a region with local-write access holding [addr, addr+length)
};

struct completion_queue {
    std::uint32_t cqn = 0;
    std::uint64_t ring = 0;
    std::uint32_t entries = 0;
    std::uint32_t consumer = 0;
    std::uint32_t vector = 0;
};

// The driver's view; query_qp reads the device's (regmap::qp_state).
enum class qp_state { created, connecting, rts, closing, idle, error };

struct queue_pair {
    std::uint32_t qpn = 0;
    std::uint32_t pd = 0;
    std::uint64_t sq_ring = 0;
    std::uint32_t sq_entries = 0;
    std::uint32_t sq_producer = 0;
    std::uint32_t sq_completed = 0;  // send WQEs retired through completions
    std::uint64_t rq_ring = 0;
    std::uint32_t rq_entries = 0;
    completion_queue* send_cq = nullptr;
    completion_queue* recv_cq = nullptr;
    qp_state state = qp_state::created;
    std::uint32_t rq_producer = 0;
    std::uint32_t rq_completed = 0;
};

class context {
public:
    explicit context(host_bus& bus);
    ~context();

    // Resets and initialises the device (see device::init).
    status open(const station_config& station);

    status alloc_pd(std::uint32_t* pd);
    // Allocates pinned host memory for buffers the application registers.
    status alloc_buffer(std::size_t len, std::uint64_t* addr);
    // Returns a buffer alloc_buffer gave (unmapped from the device); regions over it must be gone.
    status free_buffer(std::uint64_t addr);
    // `zero_based`: the region's tagged offsets start at 0 instead of at its host address.
    status reg_mr(std::uint32_t pd, std::uint64_t addr, std::uint64_t length, std::uint32_t access, memory_region* out,
                  bool zero_based = false);
    // A region over pages that need not be contiguous in host memory (as pinned user pages are):
    // `pages` holds the host address of each page of 2^page_shift bytes (4 KiB to 2 MiB), in order;
    // the region's first byte is at offset va % page size of pages[0], and local work requests name
    // its bytes by va .. va + length - 1. The page list goes to the device in a DMA buffer freed once
    // the firmware has copied it (regmap::command::reg_mr_pages).
    status reg_mr_pages(std::uint32_t pd, std::uint64_t va, std::uint64_t length, std::uint32_t access,
                        const std::vector<std::uint64_t>& pages, unsigned page_shift, memory_region* out,
                        bool zero_based = false);
    status dereg_mr(const memory_region& mr);
    status create_cq(std::uint32_t entries, completion_queue** out);
    status create_qp(std::uint32_t pd, completion_queue* send_cq, completion_queue* recv_cq, std::uint32_t sq_depth,
                     std::uint32_t rq_depth, queue_pair** out);
    // Active side: TCP connect + MPA Request; returns when the QP is in RTS (or failed).
    // `limits`: the RDMA Read resources asked for (like rdma_cm's responder_resources and
    // initiator_depth); negotiated with MPA revision 2, used as they are with revision 1.
    // A peer that refuses (MPA Reply with R = 1, RFC 5044 §7.1.5) makes it return connection_refused;
    // `reject_private_data`, when given, then holds the private data of that Reply (the peer's
    // reason, up to mpa's 512 bytes), and is emptied otherwise. `request_private_data`, when given
    // and not empty, goes in the MPA Request (RFC 5044 §7.1, after the RFC 6581 IRD/ORD word in
    // revision 2; at most regmap::kMaxConnPrivateData bytes), as rdma_connect's private data does.
    // A QP is connected once: connect and accept take only a fresh QP (bad_state otherwise), and one
    // whose connect or accept failed is left in Error; destroy it and create a new one to try again.
    status connect(queue_pair* qp, std::uint32_t remote_ip, std::uint16_t remote_port, std::uint16_t local_port,
                   const read_limits& limits = {}, std::vector<std::uint8_t>* reject_private_data = nullptr,
                   const std::vector<std::uint8_t>* request_private_data = nullptr);
    // Passive side: opens `port` so that peers may connect before the accept that serves them (they
    // wait in the device's backlog, their MPA Request unanswered). accept and reject open the port
    // themselves; listen is for taking connections early, like rdma_listen.
    status listen(std::uint16_t port);
    // Closes `port` again (the unlisten command, as rdma_destroy_id of a listener): a peer's SYN to
    // it is refused with a reset, backlog peers no accept took are reset, accepts still waiting on
    // it fail with not_listening; connections already accepted stay. `reset_peers`, when given, gets
    // the number of backlog peers reset. not_listening when the port does not listen.
    status unlisten(std::uint16_t port, std::uint32_t* reset_peers = nullptr);
    // Passive side: waits for a peer on `port` (the oldest in the backlog first) and answers its MPA Request.
    status accept(queue_pair* qp, std::uint16_t port, const read_limits& limits = {});
    // Passive refusal: waits for the next peer on `port` (a connection already in the listen backlog
    // first), answers its MPA Request with a Reply with R = 1 carrying `private_data` (at most
    // regmap::kMaxRejectPrivateData bytes) and closes the TCP connection. No QP is involved.
    status reject(std::uint16_t port, const std::vector<std::uint8_t>& private_data);

    // Abortive (to Error: outstanding work flushes, a peer sees the stream close) or graceful
    // (disconnect: to Closing, then Idle once all sent work is acknowledged).
    status modify_qp_to_error(queue_pair* qp);
    status disconnect(queue_pair* qp);
    // The device's state of the QP and the Terminate that ended its stream, if any.
    status query_qp(queue_pair* qp, regmap::qp_state* state, terminate_info* term = nullptr);
    // Destroys an idle or failed QP / an unused CQ; the handle is invalid afterwards.
    status destroy_qp(queue_pair* qp);
    status destroy_cq(completion_queue* cq);
    // The device's counters since reset (firmware command query_stats), indexed by
    // regmap::device_counter: WQEs, CQEs, Terminates sent/received, bytes placed, TCP bytes
    // retransmitted, firmware commands, connections established/failed/rejected.
    using device_stats = std::array<std::uint64_t, regmap::kDeviceCounterCount>;
    status query_stats(device_stats* out);

    status post_send(queue_pair* qp, const send_wr& wr);
    status post_recv(queue_pair* qp, const recv_wr& wr);
    // Up to `max` completions into `out` (appended); *n gets the count.
    status poll_cq(completion_queue* cq, int max, std::vector<work_completion>* out, int* n);
    // After poll_cq found `cq` empty: the poll loop's CPU work `pass_ps` before polling again. The
    // host may skip the passes that would find the CQ empty again (host_bus::idle_poll); either way
    // the next poll_cq happens at the time the loop would have reached it.
    status idle_cq(completion_queue* cq, std::uint64_t pass_ps);
    // Arms the CQ for one interrupt (like ibv_req_notify_cq) and waits for it or the timeout.
    status wait_cq(completion_queue* cq, std::uint64_t timeout_ps);

    // Takes the oldest asynchronous event (ibv_get_async_event + ibv_ack_async_event): false when
    // none waits. A CQ overrun shows here as cq_error, once per CQ.
    bool get_async_event(async_event_info* out);

    device& dev() { return dev_; }
    host_bus& bus() { return bus_; }

private:
    bool owns(const completion_queue* cq) const;
    bool owns(const queue_pair* qp) const;
    status fail(status s, const std::string& what);

    host_bus& bus_;
    device dev_;
    bool opened_ = false;
    std::uint32_t next_pd_ = 1;
    std::vector<std::unique_ptr<completion_queue>> cqs_;
    std::vector<std::unique_ptr<queue_pair>> qps_;
    std::vector<memory_region> mrs_;
    std::vector<std::pair<std::uint64_t, std::size_t>> buffers_;  // alloc_buffer's (address, length), not yet freed
    std::uint64_t scratch_ = 0;  // host buffer for private data exchanged with the firmware (lazily)
    static constexpr std::size_t kScratchBytes = 512;
};

}  // namespace rnic::drv
