// SystemC-side logging helpers: stamp lines with the kernel's time (plus an LT delay when known)
// and the calling module's hierarchical name.
#pragma once

#include <systemc>

#include "core/log.h"
#include "core/sim_time.h"

namespace rnic {

inline std::uint64_t now_ps() {
    return to_ps(::rnic::sim_now());
}

}  // namespace rnic

// Log from inside an sc_module (uses name()).
#define RNIC_MLOG(lvl, cat, expr) RNIC_LOG_AT(lvl, cat, ::rnic::now_ps(), name(), expr)
// Same, at the LT-annotated time now + delay.
#define RNIC_MLOG_D(lvl, cat, delay, expr) \
    RNIC_LOG_AT(lvl, cat, ::rnic::to_ps(::rnic::sim_now() + (delay)), name(), expr)
