// The on-chip context cache of the context memory (context_memory.h). With it enabled, QP contexts
// and STag (memory-region) entries live in a table in host memory that the driver allocates at open
// (registers CTX_BASE_*, size CAP_CTX_BYTES) and the device keeps the active ones on chip:
//   QP n      at CTX_BASE + n * qp_context_bytes
//   STag idx  at CTX_BASE + max_qp * qp_context_bytes + idx * stag_entry_bytes
// An access that misses DMA-writes the dirty victim back, then DMA-reads the context through the
// context module's dma_out (real TLPs on PCIe), and the caller's time grows by that. The cache decides
// hit or miss and moves the real number of bytes; the fields the engine acts on stay in context_store
// (bookkeeping), so the bytes in host memory are the cache's own line images, not a serialised context.
// QP contexts and STag entries have separate arrays (stag_entries > 0) or share one (stag_entries 0).
// Disabled (the default), every call returns at once and charges nothing.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/timed_resource.h"
#include "rdma/cache_policy.h"
#include "rdma/context_if.h"

namespace rnic {

// Sizes of one context in host memory are assumptions after the Mellanox mlx4 driver (ConnectX-3):
// 256-byte QPC entries (QUERY_DEV_CAP qpc_entry_sz), 64-byte dMPT entries (struct mlx4_mpt_entry)
// for the STag table.
struct context_cache_params {
    bool enabled = false;
    std::uint32_t entries = 256;      // QP contexts held on chip
    std::uint32_t associativity = 4;  // 1: direct mapped .. entries: fully associative
    cache_policy::replacement replacement = cache_policy::replacement::lru;
    std::uint64_t seed = 1;            // of the random replacement
    std::uint32_t stag_entries = 256;  // STag entries in their own array; 0: they share the QP array
    std::uint32_t qp_context_bytes = 256;
    std::uint32_t stag_entry_bytes = 64;
};

class context_cache {
public:
    using side = context_if::side;

    // `owner` names the log lines; the tables hold `max_qp` QP contexts and `max_mr` STag entries;
    // misses go out through `dma_out` (the context module's socket).
    context_cache(const sc_core::sc_object& owner, const context_cache_params& params, std::uint32_t max_qp,
                  std::uint32_t max_mr, tlm::tlm_initiator_socket<>& dma_out);

    bool enabled() const { return params_.enabled; }
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

    // The "context_cache" object: hits, misses, bytes moved, miss latency and the fetches per work
    // request and per received ULPDU (whose counts the engine keeps); nothing when disabled.
    void report_stats(boost::json::object& out, std::uint64_t work_requests, std::uint64_t rx_ulpdus) const;

private:
    const char* name() const { return owner_.name(); }  // for RNIC_MLOG_D
    struct array {
        std::unique_ptr<cache_policy> policy;
        std::uint32_t line_bytes = 0;    // the largest entry it holds
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

    const sc_core::sc_object& owner_;
    const context_cache_params params_;
    const std::uint32_t max_qp_, max_mr_;
    tlm::tlm_initiator_socket<>& dma_out_;
    array qps_, stags_;
    std::uint64_t area_ = 0;
    std::uint64_t fetches_[2] = {0, 0}, fetch_bytes_ = 0, writeback_bytes_ = 0, dma_errors_ = 0;
    std::uint64_t misses_timed_ = 0;
    sc_core::sc_time miss_total_ = sc_core::SC_ZERO_TIME, miss_max_ = sc_core::SC_ZERO_TIME;
};

}  // namespace rnic
