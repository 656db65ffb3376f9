// A verbs-style API over the RNIC (in the spirit of libibverbs): device, protection domains, memory
// regions, completion queues, queue pairs, connection set-up, post send, poll. Every misuse returns an
// error status and logs it with the simulated time; nothing here crashes on bad arguments.
// Register-level details live in device.h; descriptor formats in models/rnic/regmap.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
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
    no_memory,
    device_error,
    timeout,
    connection_refused,
};
const char* to_string(status s);

struct memory_region {
    std::uint32_t stag = 0;
    std::uint64_t addr = 0;
    std::uint64_t length = 0;
    std::uint32_t access = 0;
    std::uint32_t pd = 0;
};

enum class wc_opcode : std::uint8_t { rdma_write = 0, send = 1, rdma_read = 2, recv = 128 };

struct work_completion {
    std::uint64_t wr_id = 0;
    std::uint32_t byte_len = 0;
    wc_opcode opcode = wc_opcode::rdma_write;
    regmap::cqe_status status = regmap::cqe_status::success;
    std::uint32_t qpn = 0;
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
    std::uint64_t operand = 0;      // atomics: add data (FetchAdd) or swap data (CmpSwap)
    std::uint64_t compare = 0;      // atomics: compare data (CmpSwap)
    bool solicited = false;         // Send with Solicited Event
    std::uint32_t invalidate_stag = 0;  // Send with Invalidate (0: none)
};

struct recv_wr {
    std::uint64_t wr_id = 0;
    std::uint64_t addr = 0;
    std::uint32_t length = 0;
    std::uint32_t stag = 0;   // a region with local-write access holding [addr, addr+length)
};

struct completion_queue {
    std::uint32_t cqn = 0;
    std::uint64_t ring = 0;
    std::uint32_t entries = 0;
    std::uint32_t consumer = 0;
    std::uint32_t vector = 0;
};

enum class qp_state { created, connecting, rts, error };

struct queue_pair {
    std::uint32_t qpn = 0;
    std::uint32_t pd = 0;
    std::uint64_t sq_ring = 0;
    std::uint32_t sq_entries = 0;
    std::uint32_t sq_producer = 0;
    std::uint32_t sq_completed = 0;   // send WQEs retired through completions
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
    status reg_mr(std::uint32_t pd, std::uint64_t addr, std::uint64_t length, std::uint32_t access,
                  memory_region* out);
    status dereg_mr(const memory_region& mr);
    status create_cq(std::uint32_t entries, completion_queue** out);
    status create_qp(std::uint32_t pd, completion_queue* send_cq, completion_queue* recv_cq, std::uint32_t sq_depth,
                     std::uint32_t rq_depth, queue_pair** out);
    // Active side: TCP connect + MPA Request; returns when the QP is in RTS (or failed).
    status connect(queue_pair* qp, std::uint32_t remote_ip, std::uint16_t remote_port, std::uint16_t local_port);
    // Passive side: waits for a peer on `port` and answers its MPA Request.
    status accept(queue_pair* qp, std::uint16_t port);

    status post_send(queue_pair* qp, const send_wr& wr);
    status post_recv(queue_pair* qp, const recv_wr& wr);
    // Up to `max` completions into `out` (appended); *n gets the count.
    status poll_cq(completion_queue* cq, int max, std::vector<work_completion>* out, int* n);
    // Arms the CQ for one interrupt (like ibv_req_notify_cq) and waits for it or the timeout.
    status wait_cq(completion_queue* cq, std::uint64_t timeout_ps);

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
};

}  // namespace rnic::drv
