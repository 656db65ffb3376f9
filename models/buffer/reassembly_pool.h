// What buffer memory offers the TCP engine's out-of-order state (toe/reassembly.h), its one user:
// the reassembly pool's bytes and the time they take on the memory's port.
#pragma once

#include <cstdint>
#include <systemc>

namespace rnic {

// Buffer memory's reassembly pool, as the reassembly state uses it: the capacity no send region
// claimed (at most rnic.buffer.reassembly_pool) and the port its bytes cross.
class reassembly_pool_if {
public:
    virtual ~reassembly_pool_if() = default;
    virtual bool reserve_rx(std::uint64_t bytes) = 0;
    virtual void release_rx(std::uint64_t bytes) = 0;
    virtual std::uint64_t rx_free() const = 0;
    // Port time of moving `bytes` in or out of the pool (the bytes have no address of their own).
    virtual void charge(std::uint64_t bytes, sc_core::sc_time& delay) = 0;
};

}  // namespace rnic
