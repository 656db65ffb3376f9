#include "host_cpu.h"

#include <algorithm>
#include <cstring>

#include "core/mem_access.h"
#include "core/sim_log.h"
#include "core/timed_resource.h"

namespace rnic {

host_cpu::host_cpu(const sc_core::sc_module_name& name, const host_cpu_params& params, host_memory& memory)
    : sc_module(name),
      mmio_out("mmio_out"),
      mem_out("mem_out"),
      irq_in("irq_in"),
      params_(params),
      memory_(memory),
      host_name_(sc_module::name()),
      dma_pool_(params.dma_pool_base, memory.size()) {
    irq_in.register_b_transport(this, &host_cpu::irq_b_transport);
    SC_HAS_PROCESS(host_cpu);
    SC_THREAD(program_thread);
    set_stack_size(kThreadStackBytes);
    SC_METHOD(irq_method);
    sensitive << irq_arrival_;
    dont_initialize();
    // Host names are the platform's top-level module names ("a", "b"); drop a ".cpu" suffix.
    const auto dot = host_name_.rfind('.');
    if (dot != std::string::npos) host_name_ = host_name_.substr(0, dot);
}

void host_cpu::program_thread() {
    if (program_) program_(*this);
    sync();
    finished_ = true;
}

void host_cpu::sync() {
    qk_.sync();
}

std::uint64_t host_cpu::now_ps() {
    return to_ps(qk_.get_current_time());
}

void host_cpu::spend(std::uint64_t ps) {
    qk_.inc(from_ps(ps));
    // Idle loops sync every step so that device progress becomes visible.
    sync();
}

// Sleeps through the empty passes of a poll loop instead of running them: the simulated times and
// the pass that finds the bytes ready are the loop's. With the loop, pass j (j >= 1) starts at
// first + j * (read latency + pass_ps) and reads host memory at its start; so the first pass to see
// a write made at time w is the first j with first + j * period >= w. (A write at the very
// picosecond a pass starts counts as seen by that pass; running the passes, that tie went to
// whichever of the two processes the kernel ran first.)
void host_cpu::idle_poll(std::uint64_t addr, std::size_t len, std::uint64_t pass_ps,
                         const std::function<bool(const std::uint8_t*)>& ready) {
    spend(pass_ps);  // now at the start of the next pass, with no local time
    std::uint8_t bytes[64];
    // Only reads served through DMI cost a fixed latency and can be skipped exactly.
    const bool skippable = dmi_valid_ && !memory_.guest_backed() && len > 0 && len <= sizeof bytes &&
                           addr >= dmi_.get_start_address() && addr + len - 1 <= dmi_.get_end_address();
    const sc_core::sc_time period = dmi_.get_read_latency() + from_ps(pass_ps);
    if (!skippable || period == sc_core::SC_ZERO_TIME) return;
    if (!memory_.peek(addr, bytes, len) || ready(bytes)) return;
    const sc_core::sc_time first = sim_now();
    memory_.watch_writes(addr, len, &polled_bytes_written_);
    for (;;) {
        wait(polled_bytes_written_);
        if (!memory_.peek(addr, bytes, len) || !ready(bytes)) continue;
        const sc_core::sc_time now = sim_now();
        const std::uint64_t passes =
            std::max<std::uint64_t>(1, ((now - first).value() + period.value() - 1) / period.value());
        const sc_core::sc_time at = first + sc_core::sc_time::from_value(passes * period.value());
        if (at > now) wait(at - now);
        break;
    }
    memory_.stop_watching();
    qk_.reset();  // as a sync would have: the next quantum boundary is counted from now
}

std::uint32_t host_cpu::mmio_read32(std::uint32_t offset) {
    sync();  // an uncached access orders with everything before it
    std::uint32_t value = 0;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    if (rnic::mem_read(mmio_out, offset, &value, sizeof value, delay) != tlm::TLM_OK_RESPONSE) ++mmio_errors_;
    wait(delay);
    return value;
}

void host_cpu::mmio_write32(std::uint32_t offset, std::uint32_t value) {
    sync();  // a doorbell forces a sync: the WQE stores before it are visible first
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    if (rnic::mem_write(mmio_out, offset, &value, sizeof value, delay) != tlm::TLM_OK_RESPONSE) ++mmio_errors_;
    qk_.inc(delay);
}

void host_cpu::mem_access(tlm::tlm_command cmd, std::uint64_t addr, void* data, std::size_t len) {
    if (!dmi_valid_) {
        tlm::tlm_generic_payload probe;
        probe.set_command(tlm::TLM_READ_COMMAND);
        probe.set_address(0);
        dmi_valid_ = mem_out->get_direct_mem_ptr(probe, dmi_);
    }
    if (dmi_valid_ && addr >= dmi_.get_start_address() && len > 0 && addr + len - 1 <= dmi_.get_end_address()) {
        std::uint8_t* p = dmi_.get_dmi_ptr() + (addr - dmi_.get_start_address());
        if (cmd == tlm::TLM_READ_COMMAND)
            std::memcpy(data, p, len);
        else
            std::memcpy(p, data, len);
        qk_.inc(cmd == tlm::TLM_READ_COMMAND ? dmi_.get_read_latency() : dmi_.get_write_latency());
    } else {
        sc_core::sc_time delay = qk_.get_local_time();
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(addr);
        gp.set_data_ptr(static_cast<unsigned char*>(data));
        gp.set_data_length(static_cast<unsigned int>(len));
        gp.set_streaming_width(static_cast<unsigned int>(len));
        mem_out->b_transport(gp, delay);
        qk_.set(delay);
    }
    if (qk_.need_sync()) sync();
}

void host_cpu::mem_read(std::uint64_t addr, void* dst, std::size_t len) {
    mem_access(tlm::TLM_READ_COMMAND, addr, dst, len);
}

void host_cpu::mem_write(std::uint64_t addr, const void* src, std::size_t len) {
    mem_access(tlm::TLM_WRITE_COMMAND, addr, const_cast<void*>(src), len);
}

std::uint64_t host_cpu::dma_alloc(std::size_t len, std::size_t align) {
    const std::uint64_t base = dma_pool_.allocate(len, align);
    // Pinning and IOMMU mapping: the device may now reach these bytes.
    if (base != 0) memory_.map_dma(base, len);
    return base;
}

void host_cpu::dma_free(std::uint64_t addr) {
    // Unmapped first: from now on a device access to these bytes is an error, whatever reuses them.
    if (dma_pool_.release(addr)) memory_.unmap_dma(addr);
}

void host_cpu::irq_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const auto vector = static_cast<std::uint32_t>(gp.get_address());
    const sc_core::sc_time at = sim_now() + delay;
    auto it = irq_in_flight_.end();
    while (it != irq_in_flight_.begin() && std::prev(it)->first > at) --it;
    irq_in_flight_.insert(it, {at, vector});
    irq_arrival_.notify(irq_in_flight_.front().first - sim_now());
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void host_cpu::irq_method() {
    const sc_core::sc_time now = sim_now();
    while (!irq_in_flight_.empty() && irq_in_flight_.front().first <= now) {
        if (irq_in_flight_.front().second < 32) pending_irqs_ |= 1u << irq_in_flight_.front().second;
        irq_in_flight_.pop_front();
        irq_event_.notify(sc_core::SC_ZERO_TIME);
    }
    if (!irq_in_flight_.empty()) irq_arrival_.notify(irq_in_flight_.front().first - now);
}

bool host_cpu::wait_interrupt(unsigned vector, std::uint64_t timeout_ps) {
    sync();
    const std::uint32_t bit = vector < 32 ? 1u << vector : 0;
    const sc_core::sc_time deadline = sim_now() + from_ps(timeout_ps);
    while ((pending_irqs_ & bit) == 0) {
        const sc_core::sc_time now = sim_now();
        if (now >= deadline) return false;
        wait(deadline - now, irq_event_);
    }
    pending_irqs_ &= ~bit;
    qk_.reset();
    return true;
}

}  // namespace rnic
