// Modules that report statistics into the results file under their hierarchical name.
#pragma once

#include <boost/json.hpp>

namespace rnic {

class stats_reporter {
public:
    virtual ~stats_reporter() = default;
    virtual void report_stats(boost::json::object& out) const = 0;
    // The state worth seeing when a run stops making progress (the stuck-run watchdog's dump):
    // what is outstanding and what it waits for. Nothing by default.
    virtual void report_diagnostics(boost::json::object& out) const { (void)out; }
};

}  // namespace rnic
