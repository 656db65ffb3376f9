// The transmit side's WQE fetch unit with several fetches in flight (rnic.rdma.wqe_fetch_depth,
// docs/architecture.md "WQE fetches in flight across QPs"): up to `depth` buffers, each holding one
// QP's next batch of send WQEs read ahead of that QP's turn, so that a host posting on many QPs is
// not paced by one PCIe round trip per QP. Depth 1 is the engine without it (the transmit path
// fetches at the start of each turn); this class is then not used.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "rdma/context_if.h"
#include "rdma/engine_part.h"

namespace rnic {

// A batch of send WQEs read from a QP's ring: `count` slots from index `consumer`.
struct fetched_wqes {
    std::vector<std::uint8_t> bytes;
    std::uint32_t count = 0;
    std::uint32_t consumer = 0;
    std::uint64_t ring = 0;
    sc_core::sc_time ready = sc_core::SC_ZERO_TIME;  // absolute: when the read's data is in
    tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
};

// Where a QP's next batch of WQEs lies, with the SQ producer index `producer`: `count` slots from
// its SQ consumer index, at most kMaxBatch and not across the ring's end (one DMA read).
struct wqe_batch {
    std::uint64_t addr = 0;
    std::uint32_t count = 0;
    static constexpr std::uint32_t kMaxBatch = 8;  // WQEs read with one DMA read
};
wqe_batch next_wqe_batch(const qp_context& qp, std::uint32_t producer);

class wqe_prefetch : private engine_part {
public:
    wqe_prefetch(const engine_resources& res, std::uint32_t depth);

    bool enabled() const { return depth_ > 1; }
    bool full() const { return held_.size() >= depth_; }
    bool holds(std::uint32_t qpn) const;
    // Issues the read of the QP's next batch (its context taken on chip first, unless the caller
    // already did: `context_on_chip`) unless a buffer holds one that still starts at its SQ consumer
    // index; `producer` is the SQ producer index the doorbells that have arrived give. Nothing is
    // waited for: the buffer records when the data is in.
    void fetch(std::uint32_t qpn, const qp_context& qp, std::uint32_t producer, bool context_on_chip = false);
    // Moves the QP's buffer into `out` when it still starts at the QP's SQ consumer index on its
    // ring; a buffer that does not is dropped (counted stale). False: nothing usable was held.
    bool take(std::uint32_t qpn, const qp_context& qp, fetched_wqes& out);
    // A turn found its QP's context off chip and waited for it (counted: a context read ahead can be
    // evicted again before the turn).
    void note_turn_context_miss() { ++turn_context_misses_; }
    // The QP is gone (destroyed, reset): its buffer, if any, is dropped.
    void drop(std::uint32_t qpn);
    void drop_all() { held_.clear(); }

    // `wqe_prefetch` statistics (only reported when enabled).
    void report_stats(boost::json::object& out) const;

private:
    struct slot {
        std::uint32_t qpn = 0;
        fetched_wqes wqes;
    };
    std::vector<slot>::iterator find(std::uint32_t qpn);

    std::uint32_t depth_;
    std::vector<slot> held_;  // at most depth_, in the order they were issued
    std::uint64_t fetches_ = 0, used_ = 0, stale_ = 0, turn_context_misses_ = 0;
    std::uint64_t read_at_turn_ = 0;                      // reads issued for the served QP at its own turn (none held)
    sc_core::sc_time turn_wait_ = sc_core::SC_ZERO_TIME;  // turns' waits for their buffer's data
};

}  // namespace rnic
