// What the driver needs from the host it runs on: the device's BAR0 (MMIO), host memory (the CPU's
// loads and stores), DMA-able memory allocation, interrupts and time. The platform's host-CPU model
// implements it; the driver never calls into device models.
#pragma once

#include <cstddef>
#include <cstdint>
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
    // Waits until `vector` fires or `timeout_ps` passes; returns false on timeout.
    virtual bool wait_interrupt(unsigned vector, std::uint64_t timeout_ps) = 0;
    // CPU work of `ps` picoseconds (e.g. a poll-loop iteration).
    virtual void spend(std::uint64_t ps) = 0;
    virtual std::uint64_t now_ps() = 0;
    virtual const std::string& host_name() const = 0;
};

}  // namespace rnic::drv
