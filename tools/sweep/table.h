// The sweep table: one row per run with its axis values, seed, status and metrics; CSV and JSON forms.
//
// Columns, in order: run (index), id (run directory name), the axes (a zip: its name holding the labels, then its
// keys), seed, status, the metrics. status is "ok", "failed N" (rnic-sim's exit status N), "failed signal N",
// "failed timeout", "failed no-results" (exit 0 without results), "bad-results" (results.json does not parse),
// "missing" (not run yet) or "stale" (the run directory holds a run with other arguments). Metrics are read from
// results.json whenever it is there and belongs to the run (so also for failed runs); missing ones are empty.
//
// table.json: { "sweep": NAME, "set": { key: value } (when the sweep has one), "columns": [ {"name", "kind"
// (run|id|axis|seed|status|metric), "group" (axes: the axis the column belongs to), "unit", "alias" (a plain axis's
// "name", when given)} ], "rows": [ { column: value, ... } ] } with JSON-typed values.
// table.csv: RFC 4180 (fields with ',', '"', CR or LF quoted, quotes doubled), header line first, LF line ends.
#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rnic::sweep {

struct Sweep;
struct run;

struct column {
    std::string name;
    std::string kind;   // run, id, axis, seed, status, metric
    std::string group;  // axis columns: the axis name (a zip's members share it)
    std::string unit;
    std::string alias = {};  // axis columns: the "name" a plain axis was given in the sweep file ("rate"), else ""
};

struct table {
    std::string name;
    std::vector<sweep::column> columns;
    std::vector<std::vector<boost::json::value>> rows;
    std::vector<std::pair<std::string, boost::json::value>> set;  // the sweep's fixed "set" (the same for every run)
    int column(const std::string& name) const;                    // index or -1
};

std::vector<column> table_columns(const Sweep& sweep);

// Builds the table from the run directories under out_dir (the same code for local runs and --collect).
// `warnings` gets one line per metric that could not be read from an ok run (first occurrence per metric).
table collect_table(const Sweep& sweep, const std::vector<run>& runs, const std::string& out_dir,
                    std::vector<std::string>* warnings);

std::string csv_field(std::string_view text);
std::string to_csv(const table& table);
boost::json::value to_json(const table& table);
// Reads table.json back (for --plot --table); throws InputError naming `file`.
table table_from_json(const boost::json::value& v, const std::string& file);

}  // namespace rnic::sweep
