#include "host/host_memory.h"

#include <cstring>

#include "core/sim_log.h"
#include "qemu/guest_ram.h"

namespace rnic {

host_memory::host_memory(const sc_core::sc_module_name& name, const host_memory_params& params)
    : sc_module(name),
      cpu_in("cpu_in"),
      dma_in("dma_in"),
      params_(params),
      store_(params.size),
      dma_port_(params.port_order) {
    cpu_in.register_b_transport(this, &host_memory::cpu_b_transport);
    cpu_in.register_get_direct_mem_ptr(this, &host_memory::get_direct_mem_ptr);
    cpu_in.register_transport_dbg(this, &host_memory::debug_transport);
    dma_in.register_b_transport(this, &host_memory::dma_b_transport);
    dma_in.register_transport_dbg(this, &host_memory::debug_transport);
}

void host_memory::map_dma(std::uint64_t base, std::uint64_t len) {
    dma_map_[base] = len;
}
void host_memory::unmap_dma(std::uint64_t base) {
    dma_map_.erase(base);
}

bool host_memory::in_range(std::uint64_t addr, std::uint64_t len) const {
    return addr <= store_.size() && len <= store_.size() - addr;
}

bool host_memory::dma_allowed(std::uint64_t addr, std::uint64_t len) const {
    auto it = dma_map_.upper_bound(addr);
    if (it == dma_map_.begin()) return false;
    --it;
    const std::uint64_t end = it->first + it->second;
    return addr >= it->first && addr <= end && len <= end - addr;
}

bool host_memory::peek(std::uint64_t addr, void* dst, std::size_t len) const {
    if (guest_ != nullptr) return guest_->read(addr, dst, len);
    if (!in_range(addr, len)) return false;
    std::memcpy(dst, store_.data() + addr, len);
    return true;
}

void host_memory::copy(tlm::tlm_generic_payload& gp) {
    std::uint8_t* mem = store_.data() + gp.get_address();
    if (gp.is_read()) {
        std::memcpy(gp.get_data_ptr(), mem, gp.get_data_length());
    } else {
        std::memcpy(mem, gp.get_data_ptr(), gp.get_data_length());
        if (watch_event_ != nullptr && gp.get_address() < watch_end_ &&
            gp.get_address() + gp.get_data_length() > watch_begin_)
            watch_event_->notify();
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void host_memory::cpu_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (guest_ != nullptr) {
        guest_cpu(gp, delay);
        return;
    }
    if (!in_range(gp.get_address(), gp.get_data_length()) || gp.get_byte_enable_ptr() != nullptr) {
        RNIC_MLOG_D(error, host, delay,
                    "CPU access outside memory: address 0x" << std::hex << gp.get_address() << std::dec << " length "
                                                            << gp.get_data_length());
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    copy(gp);
    delay += params_.latency;
    gp.set_dmi_allowed(true);
}

void host_memory::guest_cpu(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const std::uint64_t addr = gp.get_address();
    const std::uint64_t len = gp.get_data_length();
    std::uint8_t* p = gp.get_byte_enable_ptr() == nullptr ? guest_->translate(addr, len) : nullptr;
    if (p == nullptr) {
        RNIC_MLOG_D(
            error, host, delay,
            "CPU access outside the guest's RAM: address 0x" << std::hex << addr << std::dec << " length " << len);
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (gp.is_read())
        std::memcpy(gp.get_data_ptr(), p, len);
    else
        std::memcpy(p, gp.get_data_ptr(), len);
    delay += params_.latency;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void host_memory::guest_dma(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const std::uint64_t addr = gp.get_address();
    const std::uint64_t len = gp.get_data_length();
    std::uint8_t* p =
        gp.get_byte_enable_ptr() == nullptr && guest_->bus_master() ? guest_->translate(addr, len) : nullptr;
    if (p == nullptr) {
        ++dma_refused_;
        RNIC_MLOG_D(error, host, delay,
                    "DMA " << (gp.is_read() ? "read" : "write") << " refused: [0x" << std::hex << addr << ", 0x"
                           << addr + len << std::dec << ") "
                           << (guest_->bus_master() ? "is not inside one of the guest's RAM regions"
                                                    : "while the guest has bus mastering off"));
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (gp.is_read())
        std::memcpy(gp.get_data_ptr(), p, len);
    else
        std::memcpy(p, gp.get_data_ptr(), len);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    RNIC_MLOG_D(debug, host, delay,
                "DMA " << (gp.is_read() ? "read" : "write") << " of " << len << " bytes at guest-physical 0x"
                       << std::hex << addr);
    charge_dma(gp, delay);
}

void host_memory::dma_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (guest_ != nullptr) {
        guest_dma(gp, delay);
        return;
    }
    const std::uint64_t addr = gp.get_address();
    const std::uint64_t len = gp.get_data_length();
    if (!in_range(addr, len) || !dma_allowed(addr, len) || gp.get_byte_enable_ptr() != nullptr) {
        ++dma_refused_;
        RNIC_MLOG_D(error, host, delay,
                    "DMA " << (gp.is_read() ? "read" : "write") << " refused: [0x" << std::hex << addr << ", 0x"
                           << addr + len << std::dec << ") is outside every region mapped for device access");
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    copy(gp);
    if (device_writes_ && gp.is_write()) device_writes_(addr, len);
    charge_dma(gp, delay);
}

void host_memory::charge_dma(const tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    // Latency to the first byte, then the data at the memory's bandwidth; the port is shared.
    const std::uint64_t len = gp.get_data_length();
    delay += params_.latency;
    dma_port_.reserve_lt(delay, transfer_time(static_cast<double>(len), params_.bandwidth_bps));
    if (gp.is_read()) {
        ++dma_reads_;
        dma_read_bytes_ += len;
    } else {
        ++dma_writes_;
        dma_write_bytes_ += len;
    }
}

bool host_memory::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
    if (guest_ != nullptr) return false;  // the guest's mappings change at every sync
    dmi.allow_read_write();
    dmi.set_dmi_ptr(store_.data());
    dmi.set_start_address(0);
    dmi.set_end_address(store_.size() - 1);
    dmi.set_read_latency(params_.latency);
    dmi.set_write_latency(params_.latency);
    return true;
}

unsigned int host_memory::debug_transport(tlm::tlm_generic_payload& gp) {
    if (guest_ != nullptr) {
        std::uint8_t* p = guest_->translate(gp.get_address(), gp.get_data_length());
        if (p == nullptr) return 0;
        if (gp.is_read())
            std::memcpy(gp.get_data_ptr(), p, gp.get_data_length());
        else
            std::memcpy(p, gp.get_data_ptr(), gp.get_data_length());
        return gp.get_data_length();
    }
    if (!in_range(gp.get_address(), gp.get_data_length())) return 0;
    copy(gp);
    return gp.get_data_length();
}

void host_memory::report_stats(boost::json::object& out) const {
    out["size_bytes"] = store_.size();
    out["dma_reads"] = dma_reads_;
    out["dma_read_bytes"] = dma_read_bytes_;
    out["dma_writes"] = dma_writes_;
    out["dma_write_bytes"] = dma_write_bytes_;
    out["dma_refused"] = dma_refused_;
    out["dma_port_busy_ps"] = to_ps(dma_port_.busy_total());
    if (guest_ != nullptr) {
        out["guest_ram_regions"] = guest_->regions();
        out["guest_ram_bytes"] = guest_->bytes();
        out["guest_ram_syncs"] = guest_->syncs();
    }
}

}  // namespace rnic
