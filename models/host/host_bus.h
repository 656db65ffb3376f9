// What a host program (the driver of driver/ with its workload, or the QEMU remote of models/qemu)
// needs from the host it runs on: the device's BAR0 (MMIO), host memory (the CPU's loads and
// stores), DMA-able memory allocation, interrupts and time. The platform's host-CPU model implements
// it; the driver never calls into device models. It lives with the host models because it is what
// the host offers: the driver depends on it, never the other way round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace rnic::drv {

class host_bus {
public:
    virtual ~host_bus() = default;
    virtual std::uint32_t mmio_read32(std::uint32_t offset) = 0;
    virtual void mmio_write32(std::uint32_t offset, std::uint32_t value) = 0;
    virtual void mem_read(std::uint64_t addr, void* dst, std::size_t len) = 0;
    virtual void mem_write(std::uint64_t addr, const void* src, std::size_t len) = 0;
    // Pinned, device-visible memory (mapped in the IOMMU); 0 when exhausted.
    virtual std::uint64_t dma_alloc(std::size_t len, std::size_t align) = 0;
    // Returns a block dma_alloc gave (unmapped: the device can no longer reach it).
    virtual void dma_free(std::uint64_t addr) = 0;
    // Waits until `vector` fires or `timeout_ps` passes; returns false on timeout.
    virtual bool wait_interrupt(unsigned vector, std::uint64_t timeout_ps) = 0;
    // CPU work of `ps` picoseconds (e.g. a poll-loop iteration).
    virtual void spend(std::uint64_t ps) = 0;
    virtual std::uint64_t now_ps() = 0;

    // After a poll-loop pass that read `len` bytes at `addr` and found nothing: the CPU work of the
    // loop's next step, `pass_ps`. A host may also skip the passes after it that would find nothing
    // again, returning at the start of the first pass whose read will see `ready(bytes)` true, at
    // the simulated time the loop would reach it: each skipped pass costs its read of the bytes plus
    // `pass_ps`, as it would have. The default runs no pass itself: the caller's loop does.
    virtual void idle_poll(std::uint64_t addr, std::size_t len, std::uint64_t pass_ps,
                           const std::function<bool(const std::uint8_t*)>& ready) {
        (void)addr, (void)len, (void)ready;
        spend(pass_ps);
    }
    virtual const std::string& host_name() const = 0;
};

}  // namespace rnic::drv
