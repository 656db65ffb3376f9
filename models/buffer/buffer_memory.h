// On-NIC buffer memory (SRAM or DRAM beside the NIC datapath). Holds transmit data until TCP has it
// acknowledged and (with later receive paths) out-of-order receive data. Real bytes live here:
// the TCP engine writes its send stream in and reads segments back out through mem_in.
// Space is carved into regions (one per connection's send stream); occupancy counts the bytes that
// actually hold data, with its peak and time-weighted mean.
#pragma once

#include <map>
#include <optional>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "core/zeroed_memory.h"
#include "core/stats.h"
#include "core/timed_resource.h"
#include "buffer/reassembly_pool.h"

namespace rnic {

struct buffer_memory_params {
    std::uint64_t capacity = 4ull << 20;
    std::uint32_t width_bytes = 64;                                   // datapath width
    double clock_hz = 500e6;                                          // 64 B x 500 MHz = 256 Gb/s per port
    sc_core::sc_time latency = sc_core::sc_time(10, sc_core::SC_NS);  // on-chip SRAM access
    // The port is shared by independent pipelines (send-stream appends, segment reads, reassembly)
    // whose loosely-timed callers book it out of time order; backfill serves them in time order.
    booking port_order = booking::backfill;
    // Occupancy over time: one sample (the peak seen in the interval) per interval, at most
    // max_samples of them (the interval doubles when the series fills up).
    sc_core::sc_time sample_interval = sc_core::sc_time(10, sc_core::SC_US);
    std::size_t max_samples = 2000;
    // At most this many bytes of out-of-order receive data at once, whatever else is free (0: all the
    // capacity no region has claimed). Sizes the reassembly pool apart from the transmit regions.
    std::uint64_t reassembly_pool = 0;
    // Send regions: reserved (each connection's region is carved out of the capacity at connect) or
    // shared (regions are address space only, send_address_space bytes of it above the capacity,
    // and the bytes they hold share the capacity with the reassembly pool as they come and go).
    bool shared_send = false;
    std::uint64_t send_address_space = 0;
};

class buffer_memory : public sc_core::sc_module, public reassembly_pool_if, public stats_reporter {
public:
    tlm_utils::simple_target_socket<buffer_memory> mem_in;

    buffer_memory(const sc_core::sc_module_name& name, const buffer_memory_params& params);

    // Region management (done by the owning engine at connection set-up, not per packet).
    std::optional<std::uint64_t> allocate_region(std::uint64_t bytes);
    void free_region(std::uint64_t base);
    std::size_t region_count() const { return regions_.size(); }
    // Occupancy bookkeeping by the users of the regions.
    void hold(std::uint64_t bytes);
    void release(std::uint64_t bytes);
    std::uint64_t occupancy() const { return in_use_; }
    // Out-of-order receive data (reassembly) lives in the space no region has claimed; only the TCP
    // engine's reassembly state uses it (reassembly_pool_if).
    bool reserve_rx(std::uint64_t bytes) override;
    void release_rx(std::uint64_t bytes) override;
    std::uint64_t rx_free() const override;
    // Send-stream bytes held until acknowledged (the TCP engine's regions).
    void hold_send(std::uint64_t bytes);
    void release_send(std::uint64_t bytes);
    // Bytes a connection may still add to its send stream on account of the memory: all that is
    // free with shared regions, unlimited with reserved ones (the region bounds it).
    std::uint64_t send_free() const;
    // Port time of moving `bytes` in or out without an address (the reassembly store's bookkeeping
    // is the TCP engine's; its bytes cross this memory's port all the same).
    void charge(std::uint64_t bytes, sc_core::sc_time& delay) override;
    // Zero-time read for model self-checks (what a debugger sees).
    bool peek(std::uint64_t addr, void* dst, std::size_t len) const;
    std::uint64_t capacity() const { return params_.capacity; }

    void report_stats(boost::json::object& out) const override;

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void account_time();
    void sample();

    buffer_memory_params params_;
    zeroed_memory store_;                             // committed page by page as it is written
    std::map<std::uint64_t, std::uint64_t> regions_;  // base -> size
    std::uint64_t packed_end_ = 0;                    // regions cover [floor, packed_end_) gaplessly
    timed_resource port_;
    std::uint64_t in_use_ = 0, peak_ = 0;
    double occupancy_integral_ = 0;  // byte-seconds
    sc_core::sc_time last_change_ = sc_core::SC_ZERO_TIME;
    std::uint64_t reads_ = 0, writes_ = 0, read_bytes_ = 0, write_bytes_ = 0, errors_ = 0, charged_bytes_ = 0;
    std::uint64_t allocation_failures_ = 0;
    std::uint64_t regions_total_ = 0, rx_in_use_ = 0, rx_peak_ = 0;
    std::uint64_t send_held_ = 0, send_peak_ = 0;
    struct occupancy_sample {
        std::uint64_t time_ps;
        std::uint64_t bytes;  // peak within the interval
    };
    std::vector<occupancy_sample> series_;
    std::uint64_t interval_ps_ = 0;
};

}  // namespace rnic
