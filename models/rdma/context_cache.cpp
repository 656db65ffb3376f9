#include "rdma/context_cache.h"

#include <algorithm>

#include "core/mem_access.h"
#include "core/sim_log.h"

namespace rnic {

namespace {
constexpr std::uint32_t stag_index(std::uint32_t stag) {
    return stag >> 8;
}
}  // namespace

context_cache::context_cache(const sc_core::sc_object& owner, const context_cache_params& params, std::uint32_t max_qp,
                             std::uint32_t max_mr, tlm::tlm_initiator_socket<>& dma_out)
    : owner_(owner), params_(params), max_qp_(max_qp), max_mr_(max_mr), dma_out_(dma_out) {
    const context_cache_params& c = params_;
    if (!c.enabled) return;
    const bool shared = c.stag_entries == 0;
    cache_policy::config q{c.entries, c.associativity, c.replacement, c.seed};
    qps_.policy = std::make_unique<cache_policy>(q);
    qps_.line_bytes = shared ? std::max(c.qp_context_bytes, c.stag_entry_bytes) : c.qp_context_bytes;
    qps_.data.assign(static_cast<std::size_t>(c.entries) * qps_.line_bytes, 0);
    if (!shared) {
        cache_policy::config t{c.stag_entries, std::min(c.associativity, c.stag_entries), c.replacement, c.seed + 1};
        stags_.policy = std::make_unique<cache_policy>(t);
        stags_.line_bytes = c.stag_entry_bytes;
        stags_.data.assign(static_cast<std::size_t>(c.stag_entries) * stags_.line_bytes, 0);
    }
}

std::uint64_t context_cache::area_bytes() const {
    const context_cache_params& c = params_;
    if (!c.enabled) return 0;
    return std::uint64_t{max_qp_} * c.qp_context_bytes + std::uint64_t{max_mr_} * c.stag_entry_bytes;
}

std::uint64_t context_cache::address_of(std::uint64_t key) const {
    const context_cache_params& c = params_;
    if (key < kStagKey) return area_ + key * c.qp_context_bytes;
    return area_ + std::uint64_t{max_qp_} * c.qp_context_bytes + (key - kStagKey) * c.stag_entry_bytes;
}

std::uint32_t context_cache::bytes_of(std::uint64_t key) const {
    return key < kStagKey ? params_.qp_context_bytes : params_.stag_entry_bytes;
}

void context_cache::qp(std::uint32_t qpn, bool write, side s, sc_core::sc_time& delay, timed_resource* hold) {
    if (enabled()) access(array_for(false), qpn, write, s, delay, hold);
}

void context_cache::stag(std::uint32_t stag, bool write, side s, sc_core::sc_time& delay, timed_resource* hold) {
    if (!enabled() || stag_index(stag) == 0 || stag_index(stag) >= max_mr_) return;  // no such entry
    access(array_for(true), kStagKey + stag_index(stag), write, s, delay, hold);
}

void context_cache::forget_qp(std::uint32_t qpn) {
    if (enabled()) array_for(false).policy->invalidate(qpn);
}

void context_cache::forget_stag(std::uint32_t stag) {
    if (enabled()) array_for(true).policy->invalidate(kStagKey + stag_index(stag));
}

void context_cache::access(array& a, std::uint64_t key, bool write, side s, sc_core::sc_time& delay,
                           timed_resource* hold) {
    ++a.accesses;
    const cache_policy::outcome o = a.policy->access(key, write);
    if (o.hit) return;
    const sc_core::sc_time start = delay;
    std::uint8_t* line = a.data.data() + static_cast<std::size_t>(o.line) * a.line_bytes;
    bool ok = area_ != 0;
    if (ok && o.evicted && o.victim_dirty) {
        // The victim goes back first: its line is what the fetch overwrites.
        const std::uint32_t n = bytes_of(o.victim_key);
        ok = mem_write(dma_out_, address_of(o.victim_key), line, n, delay) == tlm::TLM_OK_RESPONSE;
        writeback_bytes_ += n;
    }
    if (ok) {
        const std::uint32_t n = bytes_of(key);
        ok = mem_read(dma_out_, address_of(key), line, n, delay) == tlm::TLM_OK_RESPONSE;
        fetch_bytes_ += n;
        ++fetches_[s == side::tx ? 0 : 1];
    }
    if (!ok) {
        // No context area (the driver gave none) or the host refused it: the engine goes on with its
        // bookkeeping copy; counted and logged, the miss costs what it cost so far.
        if (dma_errors_++ == 0) {
            RNIC_MLOG_D(error, rdma, delay,
                        "context cache: cannot reach the context area at 0x" << std::hex << area_ << " in host memory");
        }
        return;
    }
    const sc_core::sc_time took = delay - start;
    if (hold != nullptr) {
        // A blocking pipeline: nothing behind this access is processed before the context is in.
        sc_core::sc_time held = start;
        hold->reserve_lt(held, took);
        delay = std::max(delay, held);
    }
    ++misses_timed_;
    miss_total_ += took;
    miss_max_ = std::max(miss_max_, took);
}

void context_cache::report_array(const array& a, boost::json::object& out) {
    out["accesses"] = a.accesses;
    out["hits"] = a.policy->hits();
    out["misses"] = a.policy->misses();
    out["evictions"] = a.policy->evictions();
    out["writebacks"] = a.policy->writebacks();
    out["hit_rate"] = a.accesses == 0 ? 0.0 : static_cast<double>(a.policy->hits()) / static_cast<double>(a.accesses);
}

void context_cache::report_stats(boost::json::object& out, std::uint64_t work_requests, std::uint64_t rx_ulpdus) const {
    if (!enabled()) return;
    boost::json::object c;
    const std::uint64_t hits = qps_.policy->hits() + (stags_.policy ? stags_.policy->hits() : 0);
    const std::uint64_t misses = qps_.policy->misses() + (stags_.policy ? stags_.policy->misses() : 0);
    const std::uint64_t writebacks = qps_.policy->writebacks() + (stags_.policy ? stags_.policy->writebacks() : 0);
    c["hits"] = hits;
    c["misses"] = misses;
    c["writebacks"] = writebacks;
    c["hit_rate"] = hits + misses == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(hits + misses);
    c["fetch_bytes"] = fetch_bytes_;
    c["writeback_bytes"] = writeback_bytes_;
    c["dma_errors"] = dma_errors_;
    c["miss_latency_mean_ns"] =
        misses_timed_ == 0 ? 0.0 : miss_total_.to_seconds() * 1e9 / static_cast<double>(misses_timed_);
    c["miss_latency_max_ns"] = miss_max_.to_seconds() * 1e9;
    // PCIe reads per operation: context fetches per work request (transmit side) and per received ULPDU.
    c["tx_fetches"] = fetches_[0];
    c["rx_fetches"] = fetches_[1];
    c["fetches_per_wr"] =
        work_requests == 0 ? 0.0 : static_cast<double>(fetches_[0]) / static_cast<double>(work_requests);
    c["fetches_per_rx_ulpdu"] =
        rx_ulpdus == 0 ? 0.0 : static_cast<double>(fetches_[1]) / static_cast<double>(rx_ulpdus);
    boost::json::object q;
    report_array(qps_, q);
    c[stags_.policy ? "qp" : "shared"] = std::move(q);
    if (stags_.policy) {
        boost::json::object t;
        report_array(stags_, t);
        c["stag"] = std::move(t);
    }
    out["context_cache"] = std::move(c);
}

}  // namespace rnic
