// Modules that report statistics into the results file under their hierarchical name.
#pragma once

#include <boost/json.hpp>

namespace rnic {

class stats_reporter {
public:
    virtual ~stats_reporter() = default;
    virtual void report_stats(boost::json::object& out) const = 0;
};

}  // namespace rnic
