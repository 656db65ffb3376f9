// A QEMU guest's RAM as the remote device process sees it: the memory-backend file descriptors of
// mpqemu's sync_sysmem, mapped shared into this process. Host memory of a host whose CPU is a QEMU
// guest (models/host/host_memory's guest backing) reads and writes through it, so the device's DMA
// lands in the guest's own pages. Plain C++ and POSIX, no SystemC.
//
// Every sync replaces all mappings (QEMU resends the whole memory map whenever it changes, over a
// hundred times per boot). Addresses are guest-physical; an access must lie wholly inside one
// region, else it is refused: nothing outside the guest's RAM is ever touched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "qemu/mpqemu.h"

namespace rnic::qemu {

class guest_ram {
public:
    guest_ram() = default;
    ~guest_ram();
    guest_ram(const guest_ram&) = delete;
    guest_ram& operator=(const guest_ram&) = delete;

    // Drops every mapping and maps `regions` (taking over and closing their fds). Each must fit in its
    // file (fstat), have a page-aligned offset and not overlap another; on the first bad one, false
    // with *error naming it, and no region is mapped (the guest then has no RAM the device may reach
    // until the next good sync).
    bool sync(std::vector<mpqemu::ram_region> regions, std::string* error);
    void clear();

    // The bytes [gpa, gpa + len) if they lie inside one region, else nullptr.
    std::uint8_t* translate(std::uint64_t gpa, std::uint64_t len) const;
    bool read(std::uint64_t gpa, void* dst, std::size_t len) const;
    bool write(std::uint64_t gpa, const void* src, std::size_t len) const;

    // The function's Command.BusMaster bit: while clear, the device may not master the bus (host
    // memory refuses its DMA). Set by the remote from configuration writes.
    void set_bus_master(bool on) { bus_master_ = on; }
    bool bus_master() const { return bus_master_; }

    std::size_t regions() const { return maps_.size(); }
    std::uint64_t bytes() const;
    std::uint64_t syncs() const { return syncs_; }

private:
    struct mapping {
        std::uint64_t gpa, size;
        std::uint8_t* base;  // this process's address of gpa
        void* map_base;      // what mmap returned
        std::size_t map_len;
    };
    std::vector<mapping> maps_;
    std::uint64_t syncs_ = 0;
    bool bus_master_ = false;
};

}  // namespace rnic::qemu
