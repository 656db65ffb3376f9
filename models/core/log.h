// Logging with simulated time, the module's hierarchical name, a category and a level.
// No SystemC dependency: callers pass the simulated time, so the driver and the firmware (which run
// against narrow interfaces) log the same way as the models. Levels per category are set at run time
// from a spec such as "info,pcie=debug,toe=trace" (rnic-sim --log).
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

namespace rnic::log {

enum class level : int { off = 0, error = 1, warn = 2, info = 3, debug = 4, trace = 5 };

// One category per area of the platform (STYLE.md item 12).
enum class category : int { sim, host, pcie, dma, mem, buf, toe, mpa, rdma, cp, fw, drv, link, app, count };

const char* name(category c);
const char* name(level l);

// Parses "LEVEL[,category=LEVEL...]"; returns false and sets *error naming the bad item.
bool configure(const std::string& spec, std::string* error);
void set_level(category c, level l);

extern int g_levels[static_cast<int>(category::count)];
inline bool enabled(category c, level l) {
    return static_cast<int>(l) <= g_levels[static_cast<int>(c)];
}

// Writes one line: "<time> <level> <category> <who>: <message>" to stderr.
void write(level l, category c, std::uint64_t time_ps, const std::string& who, const std::string& message);

// Counts of error and warning lines written, for the results file.
std::uint64_t errors_logged();
std::uint64_t warnings_logged();

std::string format_time(std::uint64_t time_ps);

}  // namespace rnic::log

// Formats only when the level is enabled. `who` is the hierarchical name of the module or software
// component, `time_ps` the simulated time in picoseconds.
#define RNIC_LOG_AT(lvl, cat, time_ps, who, expr)                                                     \
    do {                                                                                              \
        if (::rnic::log::enabled(::rnic::log::category::cat, ::rnic::log::level::lvl)) {              \
            std::ostringstream rnic_log_os_;                                                          \
            rnic_log_os_ << expr;                                                                     \
            ::rnic::log::write(::rnic::log::level::lvl, ::rnic::log::category::cat, (time_ps), (who), \
                               rnic_log_os_.str());                                                   \
        }                                                                                             \
    } while (0)
