// The host CPU: runs one host program (the driver plus a workload) as a SystemC thread and gives it
// the driver's host_bus: MMIO through the PCIe endpoint, loads/stores to host memory (DMI, with a
// quantum keeper), a bump allocator of pinned DMA memory (mapped in host memory's IOMMU table), and
// latched MSI-X interrupts.
//  mmio_out -> PCIe endpoint (BAR0);  mem_out -> host memory cpu_in;  irq_in <- MSI-X messages
#pragma once

#include <functional>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "dma_pool.h"
#include "host/host_bus.h"
#include "host/host_memory.h"
#include <deque>

namespace rnic {

struct host_cpu_params {
    std::uint64_t dma_pool_base = 1ull << 20;  // pinned memory starts here
};

class host_cpu : public sc_core::sc_module, public drv::host_bus {
public:
    tlm_utils::simple_initiator_socket<host_cpu> mmio_out;
    tlm_utils::simple_initiator_socket<host_cpu> mem_out;
    tlm_utils::simple_target_socket<host_cpu> irq_in;

    using program = std::function<void(drv::host_bus&)>;

    host_cpu(const sc_core::sc_module_name& name, const host_cpu_params& params, host_memory& memory);
    void set_program(program p) { program_ = std::move(p); }
    bool finished() const { return finished_; }

    // drv::host_bus
    std::uint32_t mmio_read32(std::uint32_t offset) override;
    void mmio_write32(std::uint32_t offset, std::uint32_t value) override;
    void mem_read(std::uint64_t addr, void* dst, std::size_t len) override;
    void mem_write(std::uint64_t addr, const void* src, std::size_t len) override;
    std::uint64_t dma_alloc(std::size_t len, std::size_t align) override;
    void dma_free(std::uint64_t addr) override;
    bool wait_interrupt(unsigned vector, std::uint64_t timeout_ps) override;
    void spend(std::uint64_t ps) override;
    void idle_poll(std::uint64_t addr, std::size_t len, std::uint64_t pass_ps,
                   const std::function<bool(const std::uint8_t*)>& ready) override;
    std::uint64_t now_ps() override;
    const std::string& host_name() const override { return host_name_; }

    std::uint64_t mmio_errors() const { return mmio_errors_; }

private:
    void program_thread();
    void irq_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void irq_method();
    void sync();
    void mem_access(tlm::tlm_command cmd, std::uint64_t addr, void* data, std::size_t len);

    host_cpu_params params_;
    host_memory& memory_;
    std::string host_name_;
    program program_;
    bool finished_ = false;
    tlm_utils::tlm_quantumkeeper qk_;
    tlm::tlm_dmi dmi_;
    bool dmi_valid_ = false;
    sc_core::sc_event polled_bytes_written_;  // idle_poll: host memory wrote the bytes it watches
    dma_pool dma_pool_;
    std::uint32_t pending_irqs_ = 0;  // latched vectors
    std::deque<std::pair<sc_core::sc_time, std::uint32_t>> irq_in_flight_;
    sc_core::sc_event irq_arrival_, irq_event_;
    std::uint64_t mmio_errors_ = 0;
};

}  // namespace rnic
