// A VI Provider Library (VIPL) style API over the verbs layer, for VI/TCP (seed 003, rnic.framing =
// vitcp): the calls the draft relies on (§2.2.2.1, §4.1) with the VI Developer's Guide's names and
// meaning, on this device's queues. A VI is a queue pair with its own send and receive completion
// queues; a memory handle is an STag; a descriptor is one work request with its completion status.
//
//   VipCreateVi          create_vi          VipRegisterMem     register_mem
//   VipConnectRequest    connect_request    VipConnectWait +   connect_wait_accept (VipConnectReject:
//                                           VipConnectAccept   connect_reject)
//   VipPostSend          post_send          VipPostRecv        post_recv
//   VipSendDone          send_done          VipRecvDone        recv_done   (poll)
//   VipSendWait          send_wait          VipRecvWait        recv_wait   (interrupt, with timeout)
//   VipDisconnect        disconnect
//
// The reliability level and the CE options are the device's (rnic.vitcp.*): the firmware's
// ConnectRequest proposes them and a mismatch comes back as connection_refused (§3.3).
// Descriptors stay the caller's until they complete (as in VIPL); each carries its status.
#pragma once

#include <cstdint>
#include <map>

#include "driver/verbs.h"

namespace rnic::drv::vipl {

// VIP_RETURN, the values this layer returns.
enum class vip_return {
    success,            // VIP_SUCCESS
    not_done,           // VIP_NOT_DONE: nothing completed (Done calls)
    timeout,            // VIP_TIMEOUT (Wait calls)
    invalid_parameter,  // VIP_INVALID_PARAMETER
    error_resource,     // VIP_ERROR_RESOURCE
    invalid_state,      // VIP_INVALID_STATE
    rejected,           // VIP_REJECT: the peer refused the connection (ConnectReject/NoMatch, §4.2)
    descriptor_error,   // VIP_DESCRIPTOR_ERROR: the device refused the descriptor
};
const char* to_string(vip_return r);

struct vi_attributes {
    bool enable_rdma_write = true;
    bool enable_rdma_read = true;
    std::uint32_t send_depth = 64, recv_depth = 64;  // descriptors each work queue holds
};

struct mem_handle {
    std::uint32_t handle = 0;  // the STag
    std::uint64_t addr = 0;
    std::uint64_t length = 0;
};

enum class desc_op : std::uint8_t { send, rdma_write, rdma_read };

// VIP_DESCRIPTOR reduced to one data segment and one address segment (the only shapes VI/TCP's
// single-segment messages need here).
struct descriptor {
    desc_op op = desc_op::send;
    std::uint64_t local_addr = 0;
    std::uint32_t length = 0;
    std::uint32_t local_handle = 0;
    std::uint64_t remote_addr = 0;  // RDMA: address segment
    std::uint32_t remote_handle = 0;
    // Written when the descriptor completes (VIP_STATUS_DONE and the error bits).
    bool done = false;
    regmap::cqe_status status = regmap::cqe_status::success;
    std::uint32_t received_length = 0;  // receives: bytes that arrived
};

struct vi {
    queue_pair* qp = nullptr;
    completion_queue* send_cq = nullptr;
    completion_queue* recv_cq = nullptr;
    std::uint32_t pd = 0;
    vi_attributes attributes;
};

class provider {
public:
    explicit provider(context& ctx) : ctx_(ctx) {}

    vip_return create_vi(const vi_attributes& attributes, vi* out);
    // Local write always (receives and Read results land there); remote access as asked.
    vip_return register_mem(std::uint32_t pd, std::uint64_t addr, std::uint64_t length, bool remote_write,
                            bool remote_read, mem_handle* out);
    vip_return connect_request(vi& v, std::uint32_t remote_ip, std::uint16_t remote_port, std::uint16_t local_port);
    vip_return connect_wait_accept(vi& v, std::uint16_t port);
    vip_return connect_reject(std::uint16_t port);
    vip_return disconnect(vi& v);

    vip_return post_send(vi& v, descriptor* d);
    vip_return post_recv(vi& v, descriptor* d);
    // The oldest completed descriptor of the queue (its fields filled), or not_done.
    vip_return send_done(vi& v, descriptor** out) { return done(*v.send_cq, out); }
    vip_return recv_done(vi& v, descriptor** out) { return done(*v.recv_cq, out); }
    vip_return send_wait(vi& v, std::uint64_t timeout_ps, descriptor** out) {
        return wait(*v.send_cq, timeout_ps, out);
    }
    vip_return recv_wait(vi& v, std::uint64_t timeout_ps, descriptor** out) {
        return wait(*v.recv_cq, timeout_ps, out);
    }

private:
    static vip_return from(status s);
    vip_return done(completion_queue& cq, descriptor** out);
    vip_return wait(completion_queue& cq, std::uint64_t timeout_ps, descriptor** out);

    context& ctx_;
    std::uint64_t next_id_ = 1;
    std::map<std::uint64_t, descriptor*> posted_;  // work request id -> the caller's descriptor
};

}  // namespace rnic::drv::vipl
