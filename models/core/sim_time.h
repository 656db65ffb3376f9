// Kernel times from picoseconds and seconds without a call into the SystemC library per value.
// The platform keeps SystemC's default time resolution, 1 ps (nothing calls
// sc_set_time_resolution; simulation checks it), so a time's value() is picoseconds. The
// conversions round exactly as sc_time(double, unit) does at that resolution, value =
// int64(v * scale + 0.5), through the header's inline sc_time::operator*=, so every time they
// produce is the one the library constructor produced: results do not move.
#pragma once

#include <cstdint>
#include <systemc>

namespace rnic {

inline const sc_core::sc_time& one_ps() {
    static const sc_core::sc_time t = sc_core::sc_time::from_value(1);
    return t;
}

// True when the kernel's resolution is the 1 ps these conversions assume.
inline bool kernel_resolution_is_1ps() {
    return sc_core::sc_get_time_resolution() == sc_core::sc_time(1, sc_core::SC_PS);
}

inline std::uint64_t to_ps(const sc_core::sc_time& t) {
    return t.value();
}

// sc_core::sc_time_stamp() without the call into the library: the same kernel time, read from the
// current simulation context as the library function does. For the per-frame and per-TLP paths,
// which ask for it tens of times per RDMA Write.
inline const sc_core::sc_time& sim_now() {
    return sc_core::sc_get_curr_simcontext()->time_stamp();
}

inline sc_core::sc_time from_ps(std::uint64_t ps) {
    sc_core::sc_time t = one_ps();
    t *= static_cast<double>(ps);  // int64(1.0 * ps + 0.5): exact below 2^52 ps (about 75 minutes)
    return t;
}

// sc_time(seconds, SC_SEC): scale 1e15 fs / 1000 fs = 1e12 exactly.
inline sc_core::sc_time seconds_time(double seconds) {
    sc_core::sc_time t = one_ps();
    t *= seconds * 1e12;
    return t;
}

}  // namespace rnic
