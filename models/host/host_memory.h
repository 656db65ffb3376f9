// Host DRAM: a byte-addressed backing store with two ports.
//  - cpu_in: the host CPU's loads and stores (driver, workload); offers DMI for speed.
//  - dma_in: bus-master traffic arriving from the host bus (PCIe root complex or PCI-X bridge). Only
//    ranges the host has mapped for device access (its IOMMU mappings, see map_dma) may be touched:
//    anything else is refused as a whole with TLM_ADDRESS_ERROR_RESPONSE, logged and counted, and no
//    byte changes. Each access adds the latency and holds the shared DMA port for its bytes at the
//    memory's bandwidth. No DMI here on purpose: every DMA goes through the mapping check.
// With a guest backing (attach_guest, host_bus.transport = "qemu") the bytes are a QEMU guest's RAM
// (qemu::guest_ram, mapped from its memory-backend descriptors): DMA may reach any byte of the
// guest's RAM regions while the function is bus master (the guest has no IOMMU the device could see;
// the device's own STag and ring checks still apply), and nothing outside them; every DMA is logged
// at debug level (category host). The own store is then unused.
#pragma once

#include <functional>
#include <map>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "core/stats.h"
#include "core/zeroed_memory.h"
#include "core/timed_resource.h"

namespace rnic {
namespace qemu {
class guest_ram;
}

struct host_memory_params {
    std::uint64_t size = 64ull << 20;
    sc_core::sc_time latency = sc_core::sc_time(80, sc_core::SC_NS);  // DRAM access latency
    double bandwidth_bps = 25.6e9 * 8;                                // one DDR4-3200 channel
    // How the DMA port serves accesses booked out of time order (simulation.resource_order).
    booking port_order = booking::in_order;
};

class host_memory : public sc_core::sc_module, public stats_reporter {
public:
    tlm_utils::simple_target_socket<host_memory> cpu_in;
    tlm_utils::simple_target_socket<host_memory> dma_in;

    host_memory(const sc_core::sc_module_name& name, const host_memory_params& params);

    // IOMMU-style mapping of [base, base+len) for device access.
    void map_dma(std::uint64_t base, std::uint64_t len);
    void unmap_dma(std::uint64_t base);
    bool dma_allowed(std::uint64_t addr, std::uint64_t len) const;

    // Backs the memory with a guest's RAM from now on (before simulation starts).
    void attach_guest(const qemu::guest_ram* guest) { guest_ = guest; }
    bool guest_backed() const { return guest_ != nullptr; }

    std::uint64_t size() const { return store_.size(); }
    // Zero-time access for checkers (what a debugger sees); bounds-checked.
    bool peek(std::uint64_t addr, void* dst, std::size_t len) const;
    // A CPU sleeping in a poll loop: `event` is notified (immediately) whenever a DMA or debug write
    // touches [addr, addr + len). One watch at a time; stop_watching() ends it.
    void watch_writes(std::uint64_t addr, std::uint64_t len, sc_core::sc_event* event) {
        watch_begin_ = addr, watch_end_ = addr + len, watch_event_ = event;
    }
    void stop_watching() { watch_event_ = nullptr; }
    // Every DMA write the device makes from now on, as it lands (a checker's view; no timing).
    using write_observer = std::function<void(std::uint64_t addr, std::uint64_t len)>;
    void observe_device_writes(write_observer f) { device_writes_ = std::move(f); }

    void report_stats(boost::json::object& out) const override;

private:
    void cpu_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void dma_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
    unsigned int debug_transport(tlm::tlm_generic_payload& gp);
    bool in_range(std::uint64_t addr, std::uint64_t len) const;
    void copy(tlm::tlm_generic_payload& gp);
    void guest_dma(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // Timing of a DMA access that was allowed (latency, the shared port) and its counters.
    void charge_dma(const tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void guest_cpu(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    host_memory_params params_;
    zeroed_memory store_;                             // committed page by page as it is written
    std::map<std::uint64_t, std::uint64_t> dma_map_;  // base -> length
    timed_resource dma_port_;
    std::uint64_t dma_read_bytes_ = 0, dma_write_bytes_ = 0, dma_reads_ = 0, dma_writes_ = 0;
    std::uint64_t dma_refused_ = 0;
    const qemu::guest_ram* guest_ = nullptr;
    std::uint64_t watch_begin_ = 0, watch_end_ = 0;
    sc_core::sc_event* watch_event_ = nullptr;
    write_observer device_writes_;
};

}  // namespace rnic
