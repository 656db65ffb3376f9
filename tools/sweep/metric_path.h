// Metric paths: where a metric lives in rnic-sim's results JSON.
//
//   metric    := [aggregate ':'] path
//   aggregate := sum | mean | min | max | count
//   path      := step ('.' name | '[' selector ']')*        step := name | '[' selector ']'
//   name      := one or more characters other than '.', '[', ']' (a member name; on an array, an integer name
//                is an index, as in --set: "hosts.0.name")
//   selector  := integer          element i of an array; negative counts from the end ([-1] is the last)
//              | "quoted"         a member whose name holds dots or brackets: modules["b.rnic"] (JSON string)
//              | *                every element of an array, or every member value of an object
//              | name=value       the elements of an array whose member `name` equals value (a number, true,
//                                 false, or a string, quoted or not): workload.rows[size=4096]
//
// Without an aggregate a path must give exactly one value ('*' is refused; a name=value selector must match one
// element). With one, the path's values are numbers: sum and mean give their sum and mean, min and max the extreme
// value, count how many there are (0 when nothing matches). Examples:
//   workload.rows[-1].goodput_gbps      modules.b.rnic.buffer.occupancy_peak_bytes
//   sum:workload.rows[*].bytes          max:modules[*].rnic.buffer.occupancy_peak_bytes
//   workload.rows[size=4096].t_p99_us   modules["b"].rnic.toe.rx_drops_buffer_full
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rnic::sweep {

enum class aggregate { none, sum, mean, min, max, count };

struct path_step {
    enum class kind { member, index, wildcard, select };
    kind kind = kind::member;
    std::string name;          // member: the member name; select: the field compared
    std::int64_t index = 0;    // index
    boost::json::value match;  // select: the value compared with
    std::size_t end = 0;       // offset in the path text just after this step (for messages)
};

struct metric_path {
    std::string text;  // as written, aggregate included
    sweep::aggregate aggregate = sweep::aggregate::none;
    std::size_t path_offset = 0;  // where the path starts in `text` (after "sum:")
    std::vector<path_step> steps;
};

// A syntax error; what() says what and where ("missing ']' at column 14").
class path_syntax_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

metric_path parse_metric_path(std::string_view text);

// The value at the path, or an error message ("nothing at 'workload.rowz'").
struct metric_value {
    std::optional<boost::json::value> value;
    std::string error;
};
metric_value evaluate_metric(const metric_path& path, const boost::json::value& results);

}  // namespace rnic::sweep
