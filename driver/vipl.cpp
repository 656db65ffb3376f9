#include "driver/vipl.h"

namespace rnic::drv::vipl {

const char* to_string(vip_return r) {
    switch (r) {
    case vip_return::success:
        return "VIP_SUCCESS";
    case vip_return::not_done:
        return "VIP_NOT_DONE";
    case vip_return::timeout:
        return "VIP_TIMEOUT";
    case vip_return::invalid_parameter:
        return "VIP_INVALID_PARAMETER";
    case vip_return::error_resource:
        return "VIP_ERROR_RESOURCE";
    case vip_return::invalid_state:
        return "VIP_INVALID_STATE";
    case vip_return::rejected:
        return "VIP_REJECT";
    case vip_return::descriptor_error:
        return "VIP_DESCRIPTOR_ERROR";
    }
    return "?";
}

vip_return provider::from(status s) {
    switch (s) {
    case status::ok:
        return vip_return::success;
    case status::invalid_argument:
    case status::bad_handle:
    case status::out_of_bounds:
        return vip_return::invalid_parameter;
    case status::bad_state:
    case status::not_listening:
        return vip_return::invalid_state;
    case status::ring_full:
    case status::no_memory:
    case status::no_resources:
    case status::no_buffer_memory:
        return vip_return::error_resource;
    case status::bad_opcode:
        return vip_return::descriptor_error;
    case status::timeout:
        return vip_return::timeout;
    case status::connection_refused:
        return vip_return::rejected;
    case status::device_error:
        return vip_return::error_resource;
    }
    return vip_return::error_resource;
}

vip_return provider::create_vi(const vi_attributes& attributes, vi* out) {
    if (out == nullptr) return vip_return::invalid_parameter;
    vi v;
    v.attributes = attributes;
    status s = ctx_.alloc_pd(&v.pd);
    if (s == status::ok) s = ctx_.create_cq(attributes.send_depth * 2, &v.send_cq);
    if (s == status::ok) s = ctx_.create_cq(attributes.recv_depth * 2, &v.recv_cq);
    if (s == status::ok)
        s = ctx_.create_qp(v.pd, v.send_cq, v.recv_cq, attributes.send_depth, attributes.recv_depth, &v.qp);
    if (s != status::ok) return from(s);
    *out = v;
    return vip_return::success;
}

vip_return provider::register_mem(std::uint32_t pd, std::uint64_t addr, std::uint64_t length, bool remote_write,
                                  bool remote_read, mem_handle* out) {
    if (out == nullptr || length == 0) return vip_return::invalid_parameter;
    namespace acc = regmap::mr_access;
    const std::uint32_t access =
        acc::local_write | (remote_write ? acc::remote_write : 0u) | (remote_read ? acc::remote_read : 0u);
    memory_region mr;
    const status s = ctx_.reg_mr(pd, addr, length, access, &mr);
    if (s != status::ok) return from(s);
    *out = mem_handle{mr.stag, addr, length};
    return vip_return::success;
}

vip_return provider::connect_request(vi& v, std::uint32_t remote_ip, std::uint16_t remote_port,
                                     std::uint16_t local_port) {
    return from(ctx_.connect(v.qp, remote_ip, remote_port, local_port));
}

vip_return provider::connect_wait_accept(vi& v, std::uint16_t port) {
    return from(ctx_.accept(v.qp, port));
}

vip_return provider::connect_reject(std::uint16_t port) {
    return from(ctx_.reject(port, {}));
}

vip_return provider::disconnect(vi& v) {
    return from(ctx_.disconnect(v.qp));
}

vip_return provider::post_send(vi& v, descriptor* d) {
    if (d == nullptr) return vip_return::invalid_parameter;
    if ((d->op == desc_op::rdma_write && !v.attributes.enable_rdma_write) ||
        (d->op == desc_op::rdma_read && !v.attributes.enable_rdma_read)) {
        return vip_return::invalid_parameter;  // VIPL: RDMA on a VI created without it
    }
    send_wr wr;
    wr.wr_id = next_id_;
    wr.opcode = d->op == desc_op::send         ? regmap::wr_opcode::send
                : d->op == desc_op::rdma_write ? regmap::wr_opcode::rdma_write
                                               : regmap::wr_opcode::rdma_read;
    wr.local_addr = d->local_addr;
    wr.length = d->length;
    wr.local_stag = d->local_handle;
    wr.remote_addr = d->remote_addr;
    wr.remote_stag = d->remote_handle;
    d->done = false;
    const status s = ctx_.post_send(v.qp, wr);
    if (s != status::ok) return from(s);
    posted_[next_id_++] = d;
    return vip_return::success;
}

vip_return provider::post_recv(vi& v, descriptor* d) {
    if (d == nullptr) return vip_return::invalid_parameter;
    recv_wr wr;
    wr.wr_id = next_id_;
    wr.addr = d->local_addr;
    wr.length = d->length;
    wr.stag = d->local_handle;
    d->done = false;
    const status s = ctx_.post_recv(v.qp, wr);
    if (s != status::ok) return from(s);
    posted_[next_id_++] = d;
    return vip_return::success;
}

vip_return provider::done(completion_queue& cq, descriptor** out) {
    std::vector<work_completion> wcs;
    int n = 0;
    const status s = ctx_.poll_cq(&cq, 1, &wcs, &n);
    if (s != status::ok) return from(s);
    if (n == 0) return vip_return::not_done;
    const work_completion& wc = wcs.front();
    const auto it = posted_.find(wc.wr_id);
    if (it == posted_.end()) return vip_return::invalid_state;  // a completion this layer did not post
    descriptor* d = it->second;
    posted_.erase(it);
    d->done = true;
    d->status = wc.status;
    d->received_length = wc.byte_len;
    if (out != nullptr) *out = d;
    return vip_return::success;
}

vip_return provider::wait(completion_queue& cq, std::uint64_t timeout_ps, descriptor** out) {
    const vip_return r = done(cq, out);
    if (r != vip_return::not_done) return r;
    const status s = ctx_.wait_cq(&cq, timeout_ps);
    if (s != status::ok) return from(s);
    const vip_return again = done(cq, out);
    return again == vip_return::not_done ? vip_return::timeout : again;
}

}  // namespace rnic::drv::vipl
