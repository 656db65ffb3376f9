// The RDMA engine's on-chip context cache. With it enabled, QP contexts and STag (memory-region)
// entries live in a table in host memory that the driver allocates at open (registers CTX_BASE_*,
// size CAP_CTX_BYTES) and the engine keeps the active ones on chip:
//   QP n      at CTX_BASE + n * qp_context_bytes
//   STag idx  at CTX_BASE + max_qp * qp_context_bytes + idx * stag_entry_bytes
// An access that misses DMA-writes the dirty victim back, then DMA-reads the context through the
// engine's dma_out (real TLPs on PCIe), and the caller's time grows by that. The cache decides hit or
// miss and moves the real number of bytes; the fields the engine acts on stay in context_store
// (bookkeeping), so the bytes in host memory are the cache's own line images, not a serialised context.
// QP contexts and STag entries have separate arrays (stag_entries > 0) or share one (stag_entries 0).
// Disabled (the default), every call returns at once and charges nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "core/stats.h"
#include "rdma/cache_policy.h"
#include "rdma/engine_part.h"

namespace rnic {

class context_cache : private engine_part {
public:
    // Who needs the context: the transmit side (send queue, acknowledgements, completions) or the
    // receive side (arriving ULPDUs). PCIe reads per operation are counted per side.
    enum class side { tx, rx };

    explicit context_cache(const engine_resources& res);

    bool enabled() const { return params().cache.enabled; }
    // Bytes of host memory the context tables take (CAP_CTX_BYTES); 0 when disabled.
    std::uint64_t area_bytes() const;
    // Where the driver put them (CTX_BASE_*).
    void set_area(std::uint64_t base) { area_ = base; }

    // An access to QP `qpn`'s context or to the entry of `stag`; `write` when the engine changes it.
    // With `hold`, the pipeline waits for a miss (it is reserved for the miss's duration).
    void qp(std::uint32_t qpn, bool write, side s, sc_core::sc_time& delay, timed_resource* hold = nullptr);
    void stag(std::uint32_t stag, bool write, side s, sc_core::sc_time& delay, timed_resource* hold = nullptr);
    // The context was (re)created: the cached copy is stale and dropped without a write-back.
    void forget_qp(std::uint32_t qpn);
    void forget_stag(std::uint32_t stag);

    void report_stats(boost::json::object& out) const;

private:
    struct array {
        std::unique_ptr<cache_policy> policy;
        std::uint32_t line_bytes = 0;  // the largest entry it holds
        std::vector<std::uint8_t> data;  // the on-chip copy of each line
        std::uint64_t accesses = 0;
    };
    // The key of a context in its array; STags are told apart from QPs in a shared array.
    static constexpr std::uint64_t kStagKey = std::uint64_t{1} << 32;
    array& array_for(bool is_stag) { return is_stag && stags_.policy ? stags_ : qps_; }
    std::uint64_t address_of(std::uint64_t key) const;
    std::uint32_t bytes_of(std::uint64_t key) const;
    void access(array& a, std::uint64_t key, bool write, side s, sc_core::sc_time& delay, timed_resource* hold);
    static void report_array(const array& a, boost::json::object& out);

    array qps_, stags_;
    std::uint64_t area_ = 0;
    std::uint64_t fetches_[2] = {0, 0}, fetch_bytes_ = 0, writeback_bytes_ = 0, dma_errors_ = 0;
    std::uint64_t misses_timed_ = 0;
    sc_core::sc_time miss_total_ = sc_core::SC_ZERO_TIME, miss_max_ = sc_core::SC_ZERO_TIME;
};

}  // namespace rnic
