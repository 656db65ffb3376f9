#include "buffer/buffer_memory.h"

#include <algorithm>
#include <cstring>

#include "core/sim_log.h"

namespace rnic {

buffer_memory::buffer_memory(const sc_core::sc_module_name& name, const buffer_memory_params& params)
    : sc_module(name),
      mem_in("mem_in"),
      params_(params),
      store_(params.capacity + (params.shared_send ? params.send_address_space : 0)),
      port_(params.port_order) {
    mem_in.register_b_transport(this, &buffer_memory::b_transport);
    interval_ps_ = to_ps(params_.sample_interval);
    if (interval_ps_ == 0) interval_ps_ = 1;
}

void buffer_memory::sample() {
    const std::uint64_t slot = now_ps() / interval_ps_ * interval_ps_;
    if (!series_.empty() && series_.back().time_ps == slot) {
        if (in_use_ > series_.back().bytes) series_.back().bytes = in_use_;
        return;
    }
    if (series_.size() >= params_.max_samples) {
        // Halve the resolution: merge neighbours, keeping each pair's peak.
        std::vector<occupancy_sample> merged;
        interval_ps_ *= 2;
        for (const occupancy_sample& x : series_) {
            const std::uint64_t t = x.time_ps / interval_ps_ * interval_ps_;
            if (!merged.empty() && merged.back().time_ps == t) {
                merged.back().bytes = std::max(merged.back().bytes, x.bytes);
            } else {
                merged.push_back({t, x.bytes});
            }
        }
        series_.swap(merged);
        sample();
        return;
    }
    series_.push_back({slot, in_use_});
}

std::optional<std::uint64_t> buffer_memory::allocate_region(std::uint64_t bytes) {
    // First fit over the gaps between regions; allocation happens per connection, not per packet.
    // Shared send regions are address space above the capacity; the bytes they hold are counted
    // as they come (hold_send), not carved out here.
    const std::uint64_t floor = params_.shared_send ? params_.capacity : 0;
    const std::uint64_t ceiling =
        params_.shared_send ? params_.capacity + params_.send_address_space : params_.capacity;
    // Below packed_end_ the regions leave no gap, so a first fit of any non-empty region starts
    // looking there (thousands of connections would otherwise walk every region each).
    std::uint64_t candidate = bytes == 0 ? floor : std::max(floor, packed_end_);
    for (auto it = regions_.lower_bound(candidate); it != regions_.end(); ++it) {
        if (it->first - candidate >= bytes) break;
        candidate = it->first + it->second;
    }
    if (candidate + bytes > ceiling) {
        ++allocation_failures_;
        RNIC_MLOG(warn, buf, "no room for a region of " << bytes << " bytes (capacity " << params_.capacity << ")");
        return std::nullopt;
    }
    regions_[candidate] = bytes;
    if (bytes == 0) {
        packed_end_ = 0;  // an empty region may replace the entry of one at the floor: no hint
    } else if (candidate == std::max(floor, packed_end_)) {
        packed_end_ = candidate + bytes;
        for (auto next = regions_.find(packed_end_); next != regions_.end() && next->second != 0;
             next = regions_.find(packed_end_)) {
            packed_end_ += next->second;
        }
    }
    if (!params_.shared_send) regions_total_ += bytes;
    return candidate;
}

void buffer_memory::free_region(std::uint64_t base) {
    const auto it = regions_.find(base);
    if (it == regions_.end()) return;
    if (!params_.shared_send) regions_total_ -= it->second;
    if (base < packed_end_) packed_end_ = base;
    regions_.erase(it);
}

void buffer_memory::hold_send(std::uint64_t bytes) {
    send_held_ += bytes;
    send_peak_ = std::max(send_peak_, send_held_);
    hold(bytes);
}

void buffer_memory::release_send(std::uint64_t bytes) {
    if (bytes > send_held_) bytes = send_held_;
    send_held_ -= bytes;
    release(bytes);
}

std::uint64_t buffer_memory::send_free() const {
    if (!params_.shared_send) return UINT64_MAX;
    const std::uint64_t used = send_held_ + rx_in_use_;
    return used >= params_.capacity ? 0 : params_.capacity - used;
}

std::uint64_t buffer_memory::rx_free() const {
    const std::uint64_t used = (params_.shared_send ? send_held_ : regions_total_) + rx_in_use_;
    const std::uint64_t free = used >= params_.capacity ? 0 : params_.capacity - used;
    if (params_.reassembly_pool == 0) return free;
    const std::uint64_t quota = rx_in_use_ >= params_.reassembly_pool ? 0 : params_.reassembly_pool - rx_in_use_;
    return std::min(free, quota);
}

bool buffer_memory::reserve_rx(std::uint64_t bytes) {
    if (bytes > rx_free()) return false;
    rx_in_use_ += bytes;
    if (rx_in_use_ > rx_peak_) rx_peak_ = rx_in_use_;
    hold(bytes);
    return true;
}

void buffer_memory::release_rx(std::uint64_t bytes) {
    if (bytes > rx_in_use_) bytes = rx_in_use_;
    rx_in_use_ -= bytes;
    release(bytes);
}

bool buffer_memory::peek(std::uint64_t addr, void* dst, std::size_t len) const {
    if (addr > store_.size() || len > store_.size() - addr) return false;
    std::memcpy(dst, store_.data() + addr, len);
    return true;
}

void buffer_memory::charge(std::uint64_t bytes, sc_core::sc_time& delay) {
    charged_bytes_ += bytes;
    const double beats = static_cast<double>((bytes + params_.width_bytes - 1) / params_.width_bytes);
    delay += params_.latency;
    port_.reserve_lt(delay, cycles_time(beats, params_.clock_hz));
}

void buffer_memory::account_time() {
    const sc_core::sc_time now = sim_now();
    occupancy_integral_ += static_cast<double>(in_use_) * (now - last_change_).to_seconds();
    last_change_ = now;
}

void buffer_memory::hold(std::uint64_t bytes) {
    account_time();
    in_use_ += bytes;
    if (in_use_ > peak_) peak_ = in_use_;
    sample();
}

void buffer_memory::release(std::uint64_t bytes) {
    account_time();
    in_use_ -= bytes > in_use_ ? in_use_ : bytes;
    sample();
}

void buffer_memory::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const std::uint64_t addr = gp.get_address();
    const std::uint64_t len = gp.get_data_length();
    if (addr > store_.size() || len > store_.size() - addr) {
        ++errors_;
        RNIC_MLOG_D(
            error, buf, delay,
            "access [0x" << std::hex << addr << ", 0x" << addr + len << std::dec << ") outside the buffer memory");
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (gp.is_read()) {
        std::memcpy(gp.get_data_ptr(), store_.data() + addr, len);
        ++reads_;
        read_bytes_ += len;
    } else {
        std::memcpy(store_.data() + addr, gp.get_data_ptr(), len);
        ++writes_;
        write_bytes_ += len;
    }
    const double beats = static_cast<double>((len + params_.width_bytes - 1) / params_.width_bytes);
    delay += params_.latency;
    port_.reserve_lt(delay, cycles_time(beats, params_.clock_hz));
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void buffer_memory::report_stats(boost::json::object& out) const {
    const double elapsed = sim_now().to_seconds();
    const double integral =
        occupancy_integral_ + static_cast<double>(in_use_) * (sim_now() - last_change_).to_seconds();
    out["capacity_bytes"] = params_.capacity;
    out["occupancy_peak_bytes"] = peak_;
    out["occupancy_mean_bytes"] = elapsed > 0 ? integral / elapsed : 0.0;
    out["rx_reassembly_peak_bytes"] = rx_peak_;
    out["tx_regions_bytes"] = regions_total_;
    if (params_.shared_send) {
        out["send_regions"] = "shared";
        out["send_held_peak_bytes"] = send_peak_;
    }
    // [time in ns, peak bytes in the interval starting then]
    boost::json::array series;
    for (const occupancy_sample& x : series_) series.push_back({x.time_ps / 1000, x.bytes});
    out["occupancy_interval_ns"] = interval_ps_ / 1000;
    out["occupancy_series"] = std::move(series);
    out["reads"] = reads_;
    out["writes"] = writes_;
    out["read_bytes"] = read_bytes_;
    out["write_bytes"] = write_bytes_;
    // Bytes the reassembly store moved without an address (charge()), and everything through the
    // port: the NIC-memory traffic a receive path costs per delivered byte.
    out["charged_bytes"] = charged_bytes_;
    out["moved_bytes"] = read_bytes_ + write_bytes_ + charged_bytes_;
    out["errors"] = errors_;
    out["region_allocation_failures"] = allocation_failures_;
    out["port_busy_ps"] = to_ps(port_.busy_total());
}

}  // namespace rnic
