// Sweep files: parsing, validation and expansion into the list of runs.
//
// A sweep file is JSON with // and /* */ comments and trailing commas (like scenario files):
//   {
//     "name": "loss",                                    // optional; default: the file name without .json
//     "base": "platform/scenarios/default.json",         // the scenario every run starts from (required)
//     "set": { "workload.sizes": [256], "workload.iterations": 200 },   // fixed overrides (optional)
//     "axes": [                                          // the cartesian product of the axes, first one slowest
//       { "key": "link.a_to_b.loss", "values": [0, 0.001, 0.01] },
//       { "key": "rnic.buffer.capacity", "range": { "from": 64, "to": 512, "step": 64 }, "unit": "KiB" },
//       { "key": "link.b_to_a.loss", "log_range": { "from": 1e-4, "to": 1e-1, "points": 7 } },
//       { "zip": [ { "key": "rnic.rx_path", "values": ["buffering", "markers"] },
//                  { "key": "rnic.mpa.markers", "values": [false, true] } ],
//         "name": "variant", "labels": ["buffering", "markers"] }   // name required; labels optional
//     ],
//     "seeds": [1, 2, 3],  or  "repetitions": 3 (seeds 1..3); default: seed 1 only
//     "metrics": { "goodput_gbps": "workload.rows[-1].goodput_gbps",
//                  "buffer_peak": { "path": "modules[\"b.rnic\"].buffer.occupancy_peak_bytes", "unit": "B" } },
//     "plots": [ ... ]                                   // see plot.h
//   }
// Axis entries: "key" plus exactly one of "values" (a non-empty list), "range" {from, to, step} (both ends
// included when the steps reach them; integers when all three are integers; the i-th value is from + i*step rounded
// to 12 significant digits, so float steps do not drift), "log_range" {from, to, points[, integer]} (points values
// spaced evenly in log scale, ends exact; with "integer": true rounded to integers, which must stay distinct).
// Optional "unit" (e.g. "KiB", "us"): the value passed to --set is the number followed by the unit; the table holds
// the number. Optional "name": a short name for run directory names (default: the key's last component).
// A zip runs its keys in lock step: all lists have the same length; its column in the table is "name" and holds the
// labels (default: the first key's values), followed by one column per key.
// Every key is passed to rnic-sim as --set KEY=VALUE unchanged; rnic-sim validates it. Relative "base" paths are
// relative to the project root (rnic-sweep --root, default the current directory), where rnic-sim runs.
#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metric_path.h"
#include "plot.h"

namespace rnic::sweep {

struct axis_key {
    std::string key;   // scenario key, passed to --set
    std::string unit;  // appended to numeric values on the command line
    std::vector<boost::json::value> values;
};

struct axis {
    std::string name;        // table column: the key, or the zip's name
    std::string short_name;  // used in run directory names
    bool named = false;      // a plain axis with a "name" (plot expressions may use it for the key)
    bool zipped = false;
    std::vector<axis_key> keys;              // one for a plain axis
    std::vector<boost::json::value> labels;  // zip: one label per point (strings or the first key's values)
    std::size_t size() const { return keys.front().values.size(); }
};

struct metric {
    std::string name;
    metric_path path;
    std::string unit;
};

struct Sweep {
    std::string file;           // the sweep file as given (messages)
    std::string text;           // its text
    boost::json::value source;  // its parsed content
    std::string name;
    std::string base;  // as written: relative paths are relative to the project root
    std::vector<std::pair<std::string, boost::json::value>> set;
    std::vector<axis> axes;
    std::vector<std::int64_t> seeds;
    std::vector<metric> metrics;
    std::vector<plot_spec> plots;
};

struct run {
    std::size_t index = 0;
    std::vector<std::size_t> point;  // per axis, the index of its value
    std::int64_t seed = 1;
    std::string id;                          // run directory name: "0003-loss_0.001-variant_markers-seed_2"
    std::vector<std::string> scenario_args;  // --scenario BASE --set K=V ... --seed N
};

// Reads and validates a sweep file; throws InputError ("FILE: field: problem").
Sweep load_sweep(const std::string& path);
// The same from text (`file` names it in messages; the default name is derived from it).
Sweep parse_sweep(std::string_view text, const std::string& file);

// Every run: axes in file order, the first one slowest, seeds innermost. Deterministic.
std::vector<run> expand(const Sweep& sweep);

// The value text for --set: value_text(v), with the unit appended to numbers.
std::string set_value_text(const boost::json::value& v, const std::string& unit);

// Range expansions (exposed for tests); throw InputError with `file` and `field`.
std::vector<boost::json::value> expand_range(const boost::json::value& range, const std::string& file,
                                             const std::string& field);
std::vector<boost::json::value> expand_log_range(const boost::json::value& range, const std::string& file,
                                                 const std::string& field);

}  // namespace rnic::sweep
