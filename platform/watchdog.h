// The stuck-run watchdog's rule, free of SystemC: at each look (every simulation.watchdog of
// simulated time) it compares the NICs' progress count (work requests, completions, frames,
// firmware commands: rnic_device::progress) with the previous look. Unchanged while the workload is
// not done means the run is stuck. The simulation looks between slices of sc_start, so the
// watchdog adds no event to the model and a run it never stops keeps its results to the bit (an
// extra timed event would, since the kernel's order among same-time events is not stable).
#pragma once

#include <cstdint>

namespace rnic {

class stall_detector {
public:
    // Returns true when nothing progressed since the previous look while work is outstanding.
    bool look(std::uint64_t progress, std::uint64_t now_ps, bool work_outstanding) {
        if (!looked_ || progress != last_progress_) {
            looked_ = true;
            last_progress_ = progress;
            last_progress_ps_ = now_ps;
            return false;
        }
        return work_outstanding;
    }
    std::uint64_t last_progress_ps() const { return last_progress_ps_; }

private:
    bool looked_ = false;
    std::uint64_t last_progress_ = 0, last_progress_ps_ = 0;
};

}  // namespace rnic
