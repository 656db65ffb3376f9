#include "rdma/context_memory.h"

namespace rnic {

context_memory::context_memory(const sc_core::sc_module_name& name, const context_memory_params& params)
    : sc_module(name),
      ctx_in("ctx_in"),
      dma_out("dma_out"),
      store_(params.max_qp, params.max_cq, params.max_mr),
      cache_(*this, params.cache, params.max_qp, params.max_mr, dma_out) {
    ctx_in.bind(*this);
}

// Creating a QP or registering an STag makes a fresh context: whatever the cache held under that
// number belongs to the one before and is dropped, not written back over the new one.
int context_memory::create_qp(const qp_config& cfg) {
    const int qpn = store_.create_qp(cfg);
    if (qpn >= 0) cache_.forget_qp(static_cast<std::uint32_t>(qpn));
    return qpn;
}

void context_memory::destroy_qp(std::uint32_t qpn) {
    store_.destroy_qp(qpn);
    cache_.forget_qp(qpn);
}

std::int64_t context_memory::register_mr(const mr_config& cfg) {
    const std::int64_t stag = store_.register_mr(cfg);
    if (stag >= 0) cache_.forget_stag(static_cast<std::uint32_t>(stag));
    return stag;
}

std::uint32_t context_memory::invalidate_all_stags() {
    const std::vector<std::uint32_t> stags = store_.valid_stags();
    for (const std::uint32_t stag : stags) {
        store_.invalidate_stag(stag);
        cache_.forget_stag(stag);
    }
    return static_cast<std::uint32_t>(stags.size());
}

void context_memory::access_qp(std::uint32_t qpn, bool write, side s, sc_core::sc_time& delay, timed_resource* hold) {
    cache_.qp(qpn, write, s, delay, hold);
}

void context_memory::access_stag(std::uint32_t stag, bool write, side s, sc_core::sc_time& delay,
                                 timed_resource* hold) {
    cache_.stag(stag, write, s, delay, hold);
}

}  // namespace rnic
