#include "rdma/wqe_prefetch.h"

#include <algorithm>

#include "core/mem_access.h"
#include "core/sim_time.h"
#include "rnic/regmap.h"

namespace rnic {

wqe_batch next_wqe_batch(const qp_context& qp, std::uint32_t producer) {
    const std::uint32_t ring_left = qp.cfg.sq_entries - qp.sq_consumer % qp.cfg.sq_entries;
    wqe_batch b;
    b.count = std::min({producer - qp.sq_consumer, wqe_batch::kMaxBatch, ring_left});
    b.addr = qp.cfg.sq_ring + static_cast<std::uint64_t>(qp.sq_consumer % qp.cfg.sq_entries) * regmap::kSendWqeSize;
    return b;
}

namespace {
// Whether `w` was read from the QP's ring at the position its next turn starts at.
bool starts_at_consumer(const fetched_wqes& w, const qp_context& qp) {
    return w.consumer == qp.sq_consumer && w.ring == qp.cfg.sq_ring;
}
}  // namespace

wqe_prefetch::wqe_prefetch(const engine_resources& res, std::uint32_t depth)
    : engine_part(res), depth_(std::max<std::uint32_t>(depth, 1)) {
    held_.reserve(depth_);
}

std::vector<wqe_prefetch::slot>::iterator wqe_prefetch::find(std::uint32_t qpn) {
    return std::find_if(held_.begin(), held_.end(), [qpn](const slot& s) { return s.qpn == qpn; });
}

bool wqe_prefetch::holds(std::uint32_t qpn) const {
    return std::any_of(held_.begin(), held_.end(), [qpn](const slot& s) { return s.qpn == qpn; });
}

void wqe_prefetch::fetch(std::uint32_t qpn, const qp_context& qp, std::uint32_t producer, bool context_on_chip) {
    const auto it = find(qpn);
    if (it != held_.end()) {
        if (starts_at_consumer(it->wqes, qp)) return;
        held_.erase(it);  // read for a ring position the QP has left (flushed meanwhile)
        ++stale_;
    }
    if (full() || producer == qp.sq_consumer) return;
    const wqe_batch batch = next_wqe_batch(qp, producer);
    slot s;
    s.qpn = qpn;
    s.wqes.count = batch.count;
    s.wqes.consumer = qp.sq_consumer;
    s.wqes.ring = qp.cfg.sq_ring;
    s.wqes.bytes.resize(static_cast<std::size_t>(batch.count) * regmap::kSendWqeSize);
    // The ring address comes from the QP's context, so the context is on chip first (a miss reads
    // it over PCIe now, overlapped with the other fetches in flight), then the WQEs are read.
    sc_core::sc_time issue = sc_core::SC_ZERO_TIME;
    if (!context_on_chip) res_.contexts->access_qp(qpn, true, context_if::side::tx, issue);
    s.wqes.status = mem_read(res_.dma_out, batch.addr, s.wqes.bytes.data(), s.wqes.bytes.size(), issue);
    s.wqes.ready = sim_now() + issue;
    held_.push_back(std::move(s));
    ++fetches_;
    if (context_on_chip) ++read_at_turn_;
}

bool wqe_prefetch::take(std::uint32_t qpn, const qp_context& qp, fetched_wqes& out) {
    const auto it = find(qpn);
    if (it == held_.end()) return false;
    const bool current = starts_at_consumer(it->wqes, qp) && it->wqes.count <= qp.sq_producer - qp.sq_consumer;
    if (current) {
        out = std::move(it->wqes);
        ++used_;
        const sc_core::sc_time now = sim_now();
        if (out.ready > now) turn_wait_ += out.ready - now;
    } else {
        ++stale_;
    }
    held_.erase(it);
    return current;
}

void wqe_prefetch::drop(std::uint32_t qpn) {
    const auto it = find(qpn);
    if (it != held_.end()) held_.erase(it);
}

void wqe_prefetch::report_stats(boost::json::object& out) const {
    const double wait_ns = turn_wait_.to_seconds() * 1e9;
    out["wqe_prefetch"] = {{"depth", depth_},
                           {"fetches", fetches_},
                           {"read_at_turn", read_at_turn_},
                           {"used", used_},
                           {"stale", stale_},
                           {"turn_context_misses", turn_context_misses_},
                           {"turn_wait_mean_ns", used_ == 0 ? 0.0 : wait_ns / static_cast<double>(used_)}};
}

}  // namespace rnic
