#include "driver/verbs.h"

#include <algorithm>

#include "core/log.h"
#include "proto/bytes.h"

#define VERBS_LOG(lvl, expr) RNIC_LOG_AT(lvl, drv, bus_.now_ps(), bus_.host_name() + ".verbs", expr)

namespace rnic::drv {

namespace {
bool power_of_two(std::uint32_t n) {
    return n >= 2 && (n & (n - 1)) == 0;
}

status from_cmd(regmap::cmd_status s) {
    switch (s) {
    case regmap::cmd_status::ok:
        return status::ok;
    case regmap::cmd_status::bad_opcode:
        return status::bad_opcode;
    case regmap::cmd_status::bad_parameter:
        return status::invalid_argument;
    case regmap::cmd_status::no_resources:
        return status::no_resources;
    case regmap::cmd_status::bad_handle:
        return status::bad_handle;
    case regmap::cmd_status::bad_state:
        return status::bad_state;
    case regmap::cmd_status::connection_refused:
    case regmap::cmd_status::mpa_negotiation_failed:
        return status::connection_refused;
    case regmap::cmd_status::connection_timeout:
        return status::timeout;
    case regmap::cmd_status::not_listening:
        return status::not_listening;
    case regmap::cmd_status::no_buffer_memory:
        return status::no_buffer_memory;
    }
    return status::device_error;
}

// A command without an answer: not issued because the firmware left the ring full (ring_full), or
// issued and not answered within the command timeout.
status unanswered(const command_result& r) {
    return r.ring_full ? status::ring_full : status::timeout;
}
}  // namespace

const char* to_string(status s) {
    switch (s) {
    case status::ok:
        return "ok";
    case status::invalid_argument:
        return "invalid argument";
    case status::bad_handle:
        return "bad handle";
    case status::bad_state:
        return "bad state";
    case status::out_of_bounds:
        return "out of bounds";
    case status::ring_full:
        return "ring full";
    case status::bad_opcode:
        return "bad opcode";
    case status::no_memory:
        return "no memory";
    case status::no_resources:
        return "no device resources";
    case status::device_error:
        return "device error";
    case status::timeout:
        return "timeout";
    case status::connection_refused:
        return "connection refused";
    case status::not_listening:
        return "not listening";
    case status::no_buffer_memory:
        return "no NIC buffer memory for the connection";
    }
    return "unknown";
}

context::context(host_bus& bus) : bus_(bus), dev_(bus) {}
context::~context() = default;

status context::fail(status s, const std::string& what) {
    VERBS_LOG(error, what << ": " << to_string(s));
    return s;
}

status context::open(const station_config& station) {
    if (opened_) return fail(status::bad_state, "open: device already open");
    if (!dev_.init(station)) return fail(status::device_error, "open: device initialisation failed");
    opened_ = true;
    return status::ok;
}

status context::alloc_pd(std::uint32_t* pd) {
    if (!opened_) return fail(status::bad_state, "alloc_pd before open");
    if (pd == nullptr) return fail(status::invalid_argument, "alloc_pd: null output");
    *pd = next_pd_++;
    return status::ok;
}

status context::alloc_buffer(std::size_t len, std::uint64_t* addr) {
    if (len == 0 || addr == nullptr) return fail(status::invalid_argument, "alloc_buffer: zero length or null output");
    *addr = bus_.dma_alloc(len, 4096);
    if (*addr == 0) return fail(status::no_memory, "alloc_buffer of " + std::to_string(len) + " bytes");
    buffers_.emplace_back(*addr, len);
    return status::ok;
}

status context::free_buffer(std::uint64_t addr) {
    const auto it = std::find_if(buffers_.begin(), buffers_.end(), [&](const auto& b) { return b.first == addr; });
    if (it == buffers_.end()) return fail(status::bad_handle, "free_buffer: no buffer at " + std::to_string(addr));
    const std::uint64_t end = addr + it->second;
    if (std::any_of(mrs_.begin(), mrs_.end(),
                    [&](const memory_region& m) { return m.addr < end && addr < m.addr + m.length; })) {
        return fail(status::bad_state, "free_buffer: a memory region is registered over it");
    }
    bus_.dma_free(addr);
    buffers_.erase(it);
    return status::ok;
}

status context::reg_mr(std::uint32_t pd, std::uint64_t addr, std::uint64_t length, std::uint32_t access,
                       memory_region* out, bool zero_based) {
    if (!opened_) return fail(status::bad_state, "reg_mr before open");
    if (out == nullptr || length == 0) return fail(status::invalid_argument, "reg_mr: zero length or null output");
    if (pd == 0 || pd >= next_pd_) return fail(status::bad_handle, "reg_mr: protection domain " + std::to_string(pd));
    if ((access & ~0xfu) != 0) return fail(status::invalid_argument, "reg_mr: unknown access flags");
    if (addr + length < addr) return fail(status::out_of_bounds, "reg_mr: region wraps the address space");
    // VA-based tagged offsets: the TO of a byte is its host address; zero-based: its offset in the
    // region (RFC 5040 §2.2 and verbs).
    const std::uint64_t to_base = zero_based ? 0 : addr;
    const command_result r = dev_.execute(regmap::command::reg_mr,
                                          {addr, length, access | static_cast<std::uint64_t>(pd) << 32, to_base, 0, 0});
    if (!r.answered()) return fail(unanswered(r), "reg_mr");
    if (r.status != regmap::cmd_status::ok) {
        return fail(from_cmd(r.status), std::string("reg_mr: firmware said ") + regmap::to_string(r.status));
    }
    *out = {r.result, addr, length, access, pd, to_base};
    mrs_.push_back(*out);
    return status::ok;
}

status context::reg_mr_pages(std::uint32_t pd, std::uint64_t va, std::uint64_t length, std::uint32_t access,
                             const std::vector<std::uint64_t>& pages, unsigned page_shift, memory_region* out,
                             bool zero_based) {
    if (!opened_) return fail(status::bad_state, "reg_mr_pages before open");
    if (out == nullptr || length == 0)
        return fail(status::invalid_argument, "reg_mr_pages: zero length or null output");
    if (pd == 0 || pd >= next_pd_) {
        return fail(status::bad_handle, "reg_mr_pages: protection domain " + std::to_string(pd));
    }
    if ((access & ~0xfu) != 0) return fail(status::invalid_argument, "reg_mr_pages: unknown access flags");
    if (page_shift < regmap::kMinPageShift || page_shift > regmap::kMaxPageShift) {
        return fail(status::invalid_argument, "reg_mr_pages: page size 2^" + std::to_string(page_shift));
    }
    if (pages.empty() || pages.size() > regmap::kMaxPageListEntries) {
        return fail(status::invalid_argument, "reg_mr_pages: " + std::to_string(pages.size()) + " pages");
    }
    if (va + length < va) return fail(status::out_of_bounds, "reg_mr_pages: region wraps the address space");
    const std::uint64_t page = std::uint64_t{1} << page_shift;
    const std::uint64_t offset = va & (page - 1);
    if (length > pages.size() * page - offset) {
        return fail(status::out_of_bounds, "reg_mr_pages: " + std::to_string(length) + " bytes from offset " +
                                               std::to_string(offset) + " do not fit " + std::to_string(pages.size()) +
                                               " pages");
    }
    for (std::size_t i = 0; i < pages.size(); ++i) {
        if (pages[i] % page != 0) {
            return fail(status::invalid_argument, "reg_mr_pages: page " + std::to_string(i) + " not aligned");
        }
    }
    std::vector<std::uint8_t> list(pages.size() * 8);
    for (std::size_t i = 0; i < pages.size(); ++i) {
        for (int b = 0; b < 8; ++b) list[8 * i + b] = static_cast<std::uint8_t>(pages[i] >> (8 * b));
    }
    const std::uint64_t pbl = bus_.dma_alloc(list.size(), 64);
    if (pbl == 0) return fail(status::no_memory, "reg_mr_pages: page list");
    bus_.mem_write(pbl, list.data(), list.size());
    const std::uint64_t to_base = zero_based ? 0 : va;
    const std::uint64_t p5 = pages.size() | static_cast<std::uint64_t>(page_shift) << 24 | offset << 32;
    const command_result r = dev_.execute(
        regmap::command::reg_mr_pages, {va, length, access | static_cast<std::uint64_t>(pd) << 32, to_base, pbl, p5});
    // After a timeout the firmware may still read the list: it stays allocated.
    if (!r.answered()) return fail(unanswered(r), "reg_mr_pages");
    bus_.dma_free(pbl);
    if (r.status != regmap::cmd_status::ok) {
        return fail(from_cmd(r.status), std::string("reg_mr_pages: firmware said ") + regmap::to_string(r.status));
    }
    *out = {r.result, va, length, access, pd, to_base};
    mrs_.push_back(*out);
    return status::ok;
}

status context::dereg_mr(const memory_region& mr) {
    auto it = std::find_if(mrs_.begin(), mrs_.end(), [&](const memory_region& m) { return m.stag == mr.stag; });
    if (it == mrs_.end()) return fail(status::bad_handle, "dereg_mr: unknown STag " + std::to_string(mr.stag));
    const command_result r = dev_.execute(regmap::command::dereg_mr, {mr.stag, 0, 0, 0, 0, 0});
    // Unanswered, the device may still hold the region: the driver keeps it, so it can try again.
    if (!r.answered()) return fail(unanswered(r), "dereg_mr");
    if (r.status != regmap::cmd_status::ok) return fail(from_cmd(r.status), "dereg_mr");
    mrs_.erase(it);
    return status::ok;
}

status context::create_cq(std::uint32_t entries, completion_queue** out) {
    if (!opened_) return fail(status::bad_state, "create_cq before open");
    if (out == nullptr || !power_of_two(entries) || entries > (1u << 20)) {
        return fail(status::invalid_argument, "create_cq: null output or " + std::to_string(entries) +
                                                  " entries (need a power of two up to 2^20)");
    }
    auto cq = std::make_unique<completion_queue>();
    cq->entries = entries;
    cq->ring = bus_.dma_alloc(static_cast<std::size_t>(entries) * regmap::kCqeSize, 4096);
    if (cq->ring == 0) return fail(status::no_memory, "create_cq ring");
    cq->vector = 1 + static_cast<std::uint32_t>(cqs_.size()) % (regmap::kMsixVectors - 1);
    const command_result r = dev_.execute(regmap::command::create_cq, {cq->ring, entries, cq->vector, 0, 0, 0});
    // After a timeout the device may still take the command: the ring stays allocated.
    if (!r.answered()) return fail(unanswered(r), "create_cq");
    if (r.status != regmap::cmd_status::ok) {
        bus_.dma_free(cq->ring);
        return fail(from_cmd(r.status), "create_cq");
    }
    cq->cqn = r.result;
    *out = cq.get();
    cqs_.push_back(std::move(cq));
    return status::ok;
}

bool context::owns(const completion_queue* cq) const {
    return std::any_of(cqs_.begin(), cqs_.end(), [cq](const auto& p) { return p.get() == cq; });
}
bool context::owns(const queue_pair* qp) const {
    return std::any_of(qps_.begin(), qps_.end(), [qp](const auto& p) { return p.get() == qp; });
}

status context::create_qp(std::uint32_t pd, completion_queue* send_cq, completion_queue* recv_cq,
                          std::uint32_t sq_depth, std::uint32_t rq_depth, queue_pair** out) {
    if (!opened_) return fail(status::bad_state, "create_qp before open");
    if (out == nullptr || !owns(send_cq) || !owns(recv_cq)) return fail(status::bad_handle, "create_qp: CQ handle");
    if (pd == 0 || pd >= next_pd_) return fail(status::bad_handle, "create_qp: protection domain");
    if (!power_of_two(sq_depth) || !power_of_two(rq_depth) || sq_depth > (1u << 16) || rq_depth > (1u << 16)) {
        return fail(status::invalid_argument, "create_qp: queue depths must be powers of two up to 65536");
    }
    auto qp = std::make_unique<queue_pair>();
    qp->pd = pd;
    qp->sq_entries = sq_depth;
    qp->rq_entries = rq_depth;
    qp->sq_ring = bus_.dma_alloc(static_cast<std::size_t>(sq_depth) * regmap::kSendWqeSize, 4096);
    qp->rq_ring = bus_.dma_alloc(static_cast<std::size_t>(rq_depth) * regmap::kRecvWqeSize, 4096);
    const auto free_rings = [&] {
        if (qp->sq_ring != 0) bus_.dma_free(qp->sq_ring);
        if (qp->rq_ring != 0) bus_.dma_free(qp->rq_ring);
    };
    if (qp->sq_ring == 0 || qp->rq_ring == 0) {
        free_rings();
        return fail(status::no_memory, "create_qp rings");
    }
    qp->send_cq = send_cq;
    qp->recv_cq = recv_cq;
    const command_result r =
        dev_.execute(regmap::command::create_qp, {qp->sq_ring, sq_depth, qp->rq_ring, rq_depth,
                                                  send_cq->cqn | static_cast<std::uint64_t>(recv_cq->cqn) << 32, pd});
    if (!r.answered()) return fail(unanswered(r), "create_qp");  // the device may still take the rings
    if (r.status != regmap::cmd_status::ok) {
        free_rings();
        return fail(from_cmd(r.status), "create_qp");
    }
    qp->qpn = r.result;
    *out = qp.get();
    qps_.push_back(std::move(qp));
    return status::ok;
}

status context::connect(queue_pair* qp, std::uint32_t remote_ip, std::uint16_t remote_port, std::uint16_t local_port,
                        const read_limits& limits, std::vector<std::uint8_t>* reject_private_data,
                        const std::vector<std::uint8_t>* request_private_data) {
    if (!owns(qp)) return fail(status::bad_handle, "connect: QP handle");
    if (qp->state != qp_state::created) return fail(status::bad_state, "connect: QP is not fresh");
    if (remote_port == 0) return fail(status::invalid_argument, "connect: remote port 0");
    if (limits.ird > 0x3fff || limits.ord > 0x3fff)
        return fail(status::invalid_argument, "connect: IRD/ORD above 16383");
    const std::size_t pd_len = request_private_data != nullptr ? request_private_data->size() : 0;
    if (pd_len > regmap::kMaxConnPrivateData)
        return fail(status::invalid_argument,
                    "connect: more than " + std::to_string(regmap::kMaxConnPrivateData) + " bytes of private data");
    if (reject_private_data != nullptr) reject_private_data->clear();
    if (reject_private_data != nullptr || pd_len > 0) {
        if (scratch_ == 0) scratch_ = bus_.dma_alloc(kScratchBytes, 64);
        if (scratch_ == 0) return fail(status::no_memory, "connect: private-data buffer");
    }
    // The Request's private data is read from the buffer the Reply's (or the reject's) comes back in
    // (regmap.h, kConnectPrivateData).
    if (pd_len > 0) bus_.mem_write(scratch_, request_private_data->data(), pd_len);
    const bool buffer = reject_private_data != nullptr || pd_len > 0;
    qp->state = qp_state::connecting;
    const command_result r = dev_.execute(
        regmap::command::connect,
        {qp->qpn, remote_ip | static_cast<std::uint64_t>(remote_port) << 32, local_port,
         limits.ird | static_cast<std::uint64_t>(limits.ord) << 16 |
             (limits.peer_to_peer ? regmap::kConnectPeerToPeer : 0) | (pd_len > 0 ? regmap::kConnectPrivateData : 0),
         buffer ? scratch_ : 0, (buffer ? kScratchBytes : 0) | static_cast<std::uint64_t>(pd_len) << 32});
    if (r.answered() && r.status == regmap::cmd_status::connection_refused && reject_private_data != nullptr &&
        r.result > 0) {
        reject_private_data->resize(std::min<std::size_t>(r.result, kScratchBytes));
        bus_.mem_read(scratch_, reject_private_data->data(), reject_private_data->size());
    }
    if (!r.answered() || r.status != regmap::cmd_status::ok) {
        qp->state = qp_state::error;
        return fail(!r.answered() ? unanswered(r) : from_cmd(r.status),
                    std::string("connect: ") + (!r.answered() ? "no answer" : regmap::to_string(r.status)));
    }
    qp->state = qp_state::rts;
    VERBS_LOG(info, "QP " << qp->qpn << " connected (connection " << r.result << ")");
    return status::ok;
}

status context::accept(queue_pair* qp, std::uint16_t port, const read_limits& limits) {
    if (!owns(qp)) return fail(status::bad_handle, "accept: QP handle");
    if (qp->state != qp_state::created) return fail(status::bad_state, "accept: QP is not fresh");
    if (port == 0) return fail(status::invalid_argument, "accept: port 0");
    qp->state = qp_state::connecting;
    const command_result r = dev_.execute(
        regmap::command::accept, {qp->qpn, port, 0, limits.ird | static_cast<std::uint64_t>(limits.ord) << 16, 0, 0});
    if (!r.answered() || r.status != regmap::cmd_status::ok) {
        qp->state = qp_state::error;
        return fail(!r.answered() ? unanswered(r) : from_cmd(r.status), "accept");
    }
    qp->state = qp_state::rts;
    VERBS_LOG(info, "QP " << qp->qpn << " accepted a connection (" << r.result << ")");
    return status::ok;
}

status context::listen(std::uint16_t port) {
    if (!opened_) return fail(status::bad_state, "listen before open");
    if (port == 0) return fail(status::invalid_argument, "listen: port 0");
    const command_result r = dev_.execute(regmap::command::listen, {0, port, 0, 0, 0, 0});
    if (!r.answered()) return fail(unanswered(r), "listen");
    if (r.status != regmap::cmd_status::ok) {
        return fail(from_cmd(r.status), std::string("listen: firmware said ") + regmap::to_string(r.status));
    }
    VERBS_LOG(info, "listening on port " << port);
    return status::ok;
}

status context::unlisten(std::uint16_t port, std::uint32_t* reset_peers) {
    if (!opened_) return fail(status::bad_state, "unlisten before open");
    if (port == 0) return fail(status::invalid_argument, "unlisten: port 0");
    const command_result r = dev_.execute(regmap::command::unlisten, {0, port, 0, 0, 0, 0});
    if (!r.answered()) return fail(unanswered(r), "unlisten");
    if (r.status != regmap::cmd_status::ok) {
        return fail(from_cmd(r.status),
                    "unlisten of port " + std::to_string(port) + ": firmware said " + regmap::to_string(r.status));
    }
    if (reset_peers != nullptr) *reset_peers = r.result;
    VERBS_LOG(info, "no longer listening on port " << port << " (" << r.result << " backlog peers reset)");
    return status::ok;
}

status context::reject(std::uint16_t port, const std::vector<std::uint8_t>& private_data) {
    if (!opened_) return fail(status::bad_state, "reject before open");
    if (port == 0) return fail(status::invalid_argument, "reject: port 0");
    if (private_data.size() > regmap::kMaxRejectPrivateData) {
        return fail(status::invalid_argument, "reject: " + std::to_string(private_data.size()) +
                                                  " bytes of private data (at most " +
                                                  std::to_string(regmap::kMaxRejectPrivateData) + ")");
    }
    if (scratch_ == 0) scratch_ = bus_.dma_alloc(kScratchBytes, 64);
    if (scratch_ == 0) return fail(status::no_memory, "reject: private-data buffer");
    if (!private_data.empty()) bus_.mem_write(scratch_, private_data.data(), private_data.size());
    const command_result r = dev_.execute(regmap::command::reject, {0, port, 0, 0, scratch_, private_data.size()});
    if (!r.answered()) return fail(unanswered(r), "reject");
    if (r.status != regmap::cmd_status::ok) {
        return fail(from_cmd(r.status), std::string("reject: firmware said ") + regmap::to_string(r.status));
    }
    VERBS_LOG(info, "rejected a connection on port " << port << " (" << r.result << ")");
    return status::ok;
}

status context::modify_qp_to_error(queue_pair* qp) {
    if (!owns(qp)) return fail(status::bad_handle, "modify_qp: QP handle");
    const command_result r = dev_.execute(regmap::command::modify_qp,
                                          {qp->qpn, static_cast<std::uint64_t>(regmap::qp_state::error), 0, 0, 0, 0});
    if (!r.answered()) return fail(unanswered(r), "modify_qp");
    if (r.status != regmap::cmd_status::ok) return fail(from_cmd(r.status), "modify_qp to error");
    qp->state = qp_state::error;
    return status::ok;
}

status context::disconnect(queue_pair* qp) {
    if (!owns(qp)) return fail(status::bad_handle, "disconnect: QP handle");
    if (qp->state != qp_state::rts)
        return fail(status::bad_state, "disconnect: QP " + std::to_string(qp->qpn) + " not in RTS");
    const command_result r = dev_.execute(regmap::command::modify_qp,
                                          {qp->qpn, static_cast<std::uint64_t>(regmap::qp_state::closing), 0, 0, 0, 0});
    if (!r.answered()) return fail(unanswered(r), "disconnect");
    if (r.status != regmap::cmd_status::ok) return fail(from_cmd(r.status), "disconnect");
    qp->state = qp_state::closing;
    return status::ok;
}

status context::query_qp(queue_pair* qp, regmap::qp_state* state, terminate_info* term) {
    if (!owns(qp)) return fail(status::bad_handle, "query_qp: QP handle");
    if (state == nullptr) return fail(status::invalid_argument, "query_qp: null output");
    const command_result r = dev_.execute(regmap::command::query_qp, {qp->qpn, 0, 0, 0, 0, 0});
    if (!r.answered()) return fail(unanswered(r), "query_qp");
    if (r.status != regmap::cmd_status::ok) return fail(from_cmd(r.status), "query_qp");
    namespace q = regmap::query_qp_result;
    *state = static_cast<regmap::qp_state>(r.result & q::kStateMask);
    if (term != nullptr) {
        term->received = (r.result & q::kTerminateReceived) != 0;
        term->layer = static_cast<std::uint8_t>(r.result >> q::kLayerShift & 0xf);
        term->etype = static_cast<std::uint8_t>(r.result >> q::kEtypeShift & 0xf);
        term->code = static_cast<std::uint8_t>(r.result >> q::kCodeShift & 0xff);
        term->valid = (r.result & q::kTerminateValid) != 0;
    }
    // Keep the driver's view in step with the device's.
    if (*state == regmap::qp_state::error || *state == regmap::qp_state::terminate) qp->state = qp_state::error;
    if (*state == regmap::qp_state::idle && qp->state == qp_state::closing) qp->state = qp_state::idle;
    return status::ok;
}

bool context::get_async_event(async_event_info* out) {
    const std::uint32_t v = dev_.read(regmap::ASYNC_EVENT);
    if (v == 0) return false;
    out->type = static_cast<regmap::async_event>(v >> regmap::kAsyncEventTypeShift);
    out->resource = v & regmap::kAsyncEventResourceMask;
    dev_.write(regmap::ASYNC_EVENT_ACK, 1);
    return true;
}

status context::query_stats(device_stats* out) {
    if (!opened_) return fail(status::bad_state, "query_stats before open");
    if (out == nullptr) return fail(status::invalid_argument, "query_stats: null output");
    if (scratch_ == 0) scratch_ = bus_.dma_alloc(kScratchBytes, 64);
    if (scratch_ == 0) return fail(status::no_memory, "query_stats: buffer");
    static_assert(sizeof(device_stats) <= kScratchBytes, "the counters fit the scratch buffer");
    const command_result r = dev_.execute(regmap::command::query_stats, {scratch_, kScratchBytes, 0, 0, 0, 0});
    if (!r.answered()) return fail(unanswered(r), "query_stats");
    if (r.status != regmap::cmd_status::ok) return fail(from_cmd(r.status), "query_stats");
    std::uint8_t bytes[8 * regmap::kDeviceCounterCount];
    bus_.mem_read(scratch_, bytes, sizeof bytes);
    for (std::size_t i = 0; i < out->size(); ++i) (*out)[i] = proto::get_le64(bytes + 8 * i);
    return status::ok;
}

status context::destroy_qp(queue_pair* qp) {
    if (!owns(qp)) return fail(status::bad_handle, "destroy_qp: QP handle");
    const command_result r = dev_.execute(regmap::command::destroy_qp, {qp->qpn, 0, 0, 0, 0, 0});
    if (!r.answered()) return fail(unanswered(r), "destroy_qp");
    if (r.status != regmap::cmd_status::ok) {
        return fail(from_cmd(r.status), "destroy_qp " + std::to_string(qp->qpn) + ": " + regmap::to_string(r.status));
    }
    // The device has let go of the rings (the command completed): they go back to the pool.
    if (qp->sq_ring != 0) bus_.dma_free(qp->sq_ring);
    if (qp->rq_ring != 0) bus_.dma_free(qp->rq_ring);
    qps_.erase(std::remove_if(qps_.begin(), qps_.end(), [qp](const auto& p) { return p.get() == qp; }), qps_.end());
    return status::ok;
}

status context::destroy_cq(completion_queue* cq) {
    if (!owns(cq)) return fail(status::bad_handle, "destroy_cq: CQ handle");
    const command_result r = dev_.execute(regmap::command::destroy_cq, {cq->cqn, 0, 0, 0, 0, 0});
    if (!r.answered()) return fail(unanswered(r), "destroy_cq");
    if (r.status != regmap::cmd_status::ok) {
        return fail(from_cmd(r.status), "destroy_cq " + std::to_string(cq->cqn) + ": " + regmap::to_string(r.status));
    }
    if (cq->ring != 0) bus_.dma_free(cq->ring);
    cqs_.erase(std::remove_if(cqs_.begin(), cqs_.end(), [cq](const auto& p) { return p.get() == cq; }), cqs_.end());
    return status::ok;
}

status context::post_send(queue_pair* qp, const send_wr& wr) {
    using op = regmap::wr_opcode;
    if (!owns(qp)) return fail(status::bad_handle, "post_send: QP handle");
    if (qp->state != qp_state::rts)
        return fail(status::bad_state, "post_send: QP " + std::to_string(qp->qpn) + " not in RTS");
    const bool atomic = wr.opcode == op::atomic_fetch_add || wr.opcode == op::atomic_compare_swap;
    switch (wr.opcode) {
    case op::rdma_write:
    case op::send:
    case op::rdma_read:
    case op::atomic_fetch_add:
    case op::atomic_compare_swap:
    case op::immediate_data:
    case op::rdma_write_with_imm:
    case op::local_invalidate:
    case op::raw_ulpdu:
    case op::raw_stream:
        break;
    default:
        return fail(status::bad_opcode, "post_send: opcode " + std::to_string(static_cast<int>(wr.opcode)));
    }
    if (wr.masked && !atomic) return fail(status::invalid_argument, "post_send: masks on a non-atomic work request");
    if (wr.inline_data &&
        ((wr.opcode != op::send && wr.opcode != op::rdma_write && wr.opcode != op::rdma_write_with_imm) ||
         wr.length > regmap::kMaxInlineData)) {
        return fail(status::invalid_argument, "post_send: inline data needs a Send or RDMA Write of at most " +
                                                  std::to_string(regmap::kMaxInlineData) + " bytes");
    }
    // Immediate Data and local invalidate carry no local buffer; inline data is copied now.
    if (wr.opcode != op::immediate_data && wr.opcode != op::local_invalidate && !wr.inline_data) {
        const auto mr =
            std::find_if(mrs_.begin(), mrs_.end(), [&](const memory_region& m) { return m.stag == wr.local_stag; });
        if (mr == mrs_.end()) return fail(status::bad_handle, "post_send: local STag " + std::to_string(wr.local_stag));
        if (wr.local_addr < mr->addr || wr.length > mr->length || wr.local_addr - mr->addr > mr->length - wr.length) {
            return fail(status::out_of_bounds, "post_send: local buffer outside its region");
        }
        // The device writes the local buffer of a Read (its data) and of an atomic (the original).
        if ((wr.opcode == op::rdma_read || atomic) && (mr->access & regmap::mr_access::local_write) == 0) {
            return fail(status::invalid_argument, "post_send: Read/atomic result region lacks local write access");
        }
    }
    if (wr.opcode == op::local_invalidate &&
        std::none_of(mrs_.begin(), mrs_.end(), [&](const memory_region& m) { return m.stag == wr.invalidate_stag; })) {
        return fail(status::bad_handle,
                    "post_send: local invalidate of unknown STag " + std::to_string(wr.invalidate_stag));
    }
    if (atomic && (wr.length != 8 || wr.remote_addr % 8 != 0)) {
        // RFC 7306 §5.1: 64-bit operands at 64-bit aligned targets (the device would Terminate).
        return fail(status::invalid_argument, "post_send: atomic needs length 8 and an 8-byte aligned remote address");
    }
    const std::uint32_t inline_slots = wr.inline_data
                                           ? (wr.length + static_cast<std::uint32_t>(regmap::kSendWqeSize) - 1) /
                                                 static_cast<std::uint32_t>(regmap::kSendWqeSize)
                                           : 0;
    const std::uint32_t slots = (wr.masked ? 2 : 1) + inline_slots;
    if (qp->sq_producer - qp->sq_completed + slots > qp->sq_entries) {
        return fail(status::ring_full, "post_send: send queue of QP " + std::to_string(qp->qpn));
    }
    namespace off = regmap::sqe_off;
    std::uint8_t wqe[regmap::kSendWqeSize] = {};
    wqe[off::opcode] = static_cast<std::uint8_t>(wr.opcode);
    wqe[off::flags] = static_cast<std::uint8_t>(
        (wr.signaled ? regmap::wr_flags::signaled : 0) | (wr.solicited ? regmap::wr_flags::solicited : 0) |
        (wr.masked ? regmap::wr_flags::masked : 0) | (wr.inline_data ? regmap::wr_flags::inline_data : 0));
    proto::put_le32(wqe + off::imm_or_inv, wr.invalidate_stag);
    proto::put_le64(wqe + off::wr_id, wr.wr_id);
    proto::put_le64(wqe + off::local_addr, wr.local_addr);
    proto::put_le32(wqe + off::length, wr.length);
    proto::put_le32(wqe + off::local_stag, wr.local_stag);
    proto::put_le64(wqe + off::remote_to, wr.remote_addr);
    proto::put_le32(wqe + off::remote_stag, wr.remote_stag);
    const bool with_imm = wr.opcode == op::immediate_data || wr.opcode == op::rdma_write_with_imm;
    proto::put_le64(wqe + off::operand, with_imm ? wr.imm_data : wr.operand);
    proto::put_le64(wqe + off::compare, wr.compare);
    const std::uint64_t addr =
        qp->sq_ring + static_cast<std::uint64_t>(qp->sq_producer % qp->sq_entries) * regmap::kSendWqeSize;
    bus_.mem_write(addr, wqe, sizeof wqe);
    ++qp->sq_producer;
    if (wr.masked) {
        std::uint8_t masks[regmap::kSendWqeSize] = {};
        masks[off::opcode] = static_cast<std::uint8_t>(op::atomic_masks);
        proto::put_le64(masks + regmap::atomic_mask_off::add_or_swap_mask, wr.add_or_swap_mask);
        proto::put_le64(masks + regmap::atomic_mask_off::compare_mask, wr.compare_mask);
        bus_.mem_write(
            qp->sq_ring + static_cast<std::uint64_t>(qp->sq_producer % qp->sq_entries) * regmap::kSendWqeSize, masks,
            sizeof masks);
        ++qp->sq_producer;
    }
    if (inline_slots > 0) {
        // The payload itself follows the WQE, slot by slot (the ring may wrap between them).
        std::vector<std::uint8_t> data(static_cast<std::size_t>(inline_slots) * regmap::kSendWqeSize, 0);
        bus_.mem_read(wr.local_addr, data.data(), wr.length);
        for (std::uint32_t k = 0; k < inline_slots; ++k) {
            bus_.mem_write(
                qp->sq_ring + static_cast<std::uint64_t>(qp->sq_producer % qp->sq_entries) * regmap::kSendWqeSize,
                data.data() + static_cast<std::size_t>(k) * regmap::kSendWqeSize, regmap::kSendWqeSize);
            ++qp->sq_producer;
        }
    }
    if (wr.opcode == op::local_invalidate) {
        // From here on the region is unusable for work requests posted after this one.
        mrs_.erase(std::remove_if(mrs_.begin(), mrs_.end(),
                                  [&](const memory_region& m) { return m.stag == wr.invalidate_stag; }),
                   mrs_.end());
    }
    // Unsignaled WQEs retire with the next signaled one (in-order completion, RFC 5040 §5).
    dev_.ring_sq(qp->qpn, qp->sq_producer);
    return status::ok;
}

status context::post_recv(queue_pair* qp, const recv_wr& wr) {
    if (!owns(qp)) return fail(status::bad_handle, "post_recv: QP handle");
    if (qp->state == qp_state::error)
        return fail(status::bad_state, "post_recv: QP " + std::to_string(qp->qpn) + " in error");
    const auto mr = std::find_if(mrs_.begin(), mrs_.end(), [&](const memory_region& m) { return m.stag == wr.stag; });
    if (mr == mrs_.end()) return fail(status::bad_handle, "post_recv: STag " + std::to_string(wr.stag));
    if ((mr->access & regmap::mr_access::local_write) == 0) {
        return fail(status::invalid_argument, "post_recv: region lacks local write access");
    }
    if (wr.addr < mr->addr || wr.length > mr->length || wr.addr - mr->addr > mr->length - wr.length) {
        return fail(status::out_of_bounds, "post_recv: buffer outside its region");
    }
    if (qp->rq_producer - qp->rq_completed >= qp->rq_entries) {
        return fail(status::ring_full, "post_recv: receive queue of QP " + std::to_string(qp->qpn));
    }
    namespace off = regmap::rqe_off;
    std::uint8_t rqe[regmap::kRecvWqeSize] = {};
    proto::put_le64(rqe + off::wr_id, wr.wr_id);
    proto::put_le64(rqe + off::addr, wr.addr);
    proto::put_le32(rqe + off::length, wr.length);
    proto::put_le32(rqe + off::stag, wr.stag);
    const std::uint64_t addr =
        qp->rq_ring + static_cast<std::uint64_t>(qp->rq_producer % qp->rq_entries) * regmap::kRecvWqeSize;
    bus_.mem_write(addr, rqe, sizeof rqe);
    ++qp->rq_producer;
    bus_.mmio_write32(regmap::qp_doorbell(qp->qpn) + regmap::kRqDoorbell, qp->rq_producer);
    return status::ok;
}

status context::poll_cq(completion_queue* cq, int max, std::vector<work_completion>* out, int* n) {
    if (!owns(cq)) return fail(status::bad_handle, "poll_cq: CQ handle");
    if (out == nullptr || n == nullptr || max <= 0) return fail(status::invalid_argument, "poll_cq arguments");
    *n = 0;
    namespace off = regmap::cqe_off;
    while (*n < max) {
        const std::uint64_t addr = cq->ring + static_cast<std::uint64_t>(cq->consumer % cq->entries) * regmap::kCqeSize;
        std::uint8_t cqe[regmap::kCqeSize];
        bus_.mem_read(addr, cqe, sizeof cqe);
        const std::uint32_t expected_phase = (cq->consumer / cq->entries) % 2 == 0 ? 1u : 0u;
        if ((proto::get_le32(cqe + off::owner) >> 31) != expected_phase) break;
        work_completion wc;
        wc.wr_id = proto::get_le64(cqe + off::wr_id);
        wc.byte_len = proto::get_le32(cqe + off::byte_len);
        wc.opcode = static_cast<wc_opcode>(cqe[off::opcode]);
        wc.status = static_cast<regmap::cqe_status>(cqe[off::status]);
        wc.qpn = proto::get_le16(cqe + off::qpn);
        const std::uint32_t wqe_index = proto::get_le32(cqe + off::wqe_index);
        const bool receive = (proto::get_le32(cqe + off::owner) & 1u) != 0;
        const auto flags = static_cast<std::uint8_t>(proto::get_le32(cqe + off::owner) >> off::kFlagsShift);
        const std::uint64_t extra = proto::get_le64(cqe + off::imm_data);
        const bool qp_error = cqe[off::opcode] == regmap::kCqeOpcodeQpError;
        wc.solicited = (flags & regmap::cqe_flags::solicited) != 0;
        if (qp_error) {
            namespace q = regmap::query_qp_result;
            wc.opcode = wc_opcode::qp_error;
            const auto word = static_cast<std::uint32_t>(extra);
            wc.terminate.valid = (word & q::kTerminateValid) != 0;
            wc.terminate.received = (word & q::kTerminateReceived) != 0;
            wc.terminate.layer = static_cast<std::uint8_t>(word >> q::kLayerShift & 0xf);
            wc.terminate.etype = static_cast<std::uint8_t>(word >> q::kEtypeShift & 0xf);
            wc.terminate.code = static_cast<std::uint8_t>(word >> q::kCodeShift & 0xff);
        } else if (receive) {
            wc.with_imm = (flags & regmap::cqe_flags::imm) != 0;
            wc.opcode = wc.with_imm ? wc_opcode::recv_imm : wc_opcode::recv;
            if (wc.with_imm) wc.imm_data = extra;
            if ((flags & regmap::cqe_flags::invalidated) != 0) {
                wc.invalidated_stag = static_cast<std::uint32_t>(extra);
                // The peer invalidated one of our regions: it is no longer usable from here either.
                mrs_.erase(std::remove_if(mrs_.begin(), mrs_.end(),
                                          [&](const memory_region& m) { return m.stag == wc.invalidated_stag; }),
                           mrs_.end());
            }
        }
        for (const auto& qp : qps_) {
            if (qp->qpn != wc.qpn) continue;
            if (receive && !qp_error && qp->recv_cq == cq) qp->rq_completed = wqe_index + 1;
            if (!receive && qp->send_cq == cq) qp->sq_completed = wqe_index + 1;
            if (wc.status != regmap::cqe_status::success || qp_error) qp->state = qp_state::error;
        }
        out->push_back(wc);
        ++cq->consumer;
        ++*n;
    }
    if (*n > 0) dev_.ring_cq_consumer(cq->cqn, cq->consumer);
    return status::ok;
}

status context::idle_cq(completion_queue* cq, std::uint64_t pass_ps) {
    if (!owns(cq)) return fail(status::bad_handle, "idle_cq: CQ handle");
    // The entry the next poll_cq reads first, and the owner phase that makes it a new completion.
    const std::uint64_t addr = cq->ring + static_cast<std::uint64_t>(cq->consumer % cq->entries) * regmap::kCqeSize;
    const std::uint32_t expected_phase = (cq->consumer / cq->entries) % 2 == 0 ? 1u : 0u;
    bus_.idle_poll(addr, regmap::kCqeSize, pass_ps, [expected_phase](const std::uint8_t* cqe) {
        return (proto::get_le32(cqe + regmap::cqe_off::owner) >> 31) == expected_phase;
    });
    return status::ok;
}

status context::wait_cq(completion_queue* cq, std::uint64_t timeout_ps) {
    if (!owns(cq)) return fail(status::bad_handle, "wait_cq: CQ handle");
    dev_.arm_cq(cq->cqn);
    if (!bus_.wait_interrupt(cq->vector, timeout_ps)) return status::timeout;
    return status::ok;
}

}  // namespace rnic::drv
