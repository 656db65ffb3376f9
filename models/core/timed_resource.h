// A shared resource with a service rate: a PCIe direction, a memory port, a pipeline, the wire.
// Transfers reserve it in absolute simulated time, so contention shows in finish times without an
// event per byte (docs/architecture.md, "Timing discipline").
#pragma once

#include <systemc>

namespace rnic {

class timed_resource {
public:
    // A transfer ready at absolute time `ready` that occupies the resource for `service` starts when
    // the resource is free and returns its absolute finish time.
    sc_core::sc_time reserve(const sc_core::sc_time& ready, const sc_core::sc_time& service) {
        const sc_core::sc_time start = ready > free_at_ ? ready : free_at_;
        wait_total_ += start - ready;
        free_at_ = start + service;
        busy_total_ += service;
        ++transfers_;
        return free_at_;
    }
    // Convenience for LT targets: `delay` is relative to the current kernel time and is advanced to
    // the finish time.
    void reserve_lt(sc_core::sc_time& delay, const sc_core::sc_time& service) {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        delay = reserve(now + delay, service) - now;
    }
    const sc_core::sc_time& free_at() const { return free_at_; }
    const sc_core::sc_time& busy_total() const { return busy_total_; }
    const sc_core::sc_time& wait_total() const { return wait_total_; }
    std::uint64_t transfers() const { return transfers_; }
    double utilization(const sc_core::sc_time& over) const {
        return over == sc_core::SC_ZERO_TIME ? 0.0 : busy_total_ / over;
    }

private:
    sc_core::sc_time free_at_ = sc_core::SC_ZERO_TIME;
    sc_core::sc_time busy_total_ = sc_core::SC_ZERO_TIME;
    sc_core::sc_time wait_total_ = sc_core::SC_ZERO_TIME;
    std::uint64_t transfers_ = 0;
};

// Time to move `bytes` at `bits_per_second`.
inline sc_core::sc_time transfer_time(double bytes, double bits_per_second) {
    return sc_core::sc_time(bytes * 8.0 / bits_per_second, sc_core::SC_SEC);
}
// Time of `cycles` at `hz`.
inline sc_core::sc_time cycles_time(double cycles, double hz) {
    return sc_core::sc_time(cycles / hz, sc_core::SC_SEC);
}

}  // namespace rnic

namespace rnic {
// Stack of every SC_THREAD in the platform. SystemC's default (64 KiB) is too small for a thread that
// carries a transaction through several blocks (engine -> framer -> TCP -> link) or runs the driver.
constexpr std::size_t kThreadStackBytes = 1u << 20;
}  // namespace rnic
