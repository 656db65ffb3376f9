// Metric paths into results JSON: syntax, evaluation, aggregates and their error messages.
#include "metric_path.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "common.h"

namespace json = boost::json;
using namespace rnic::sweep;

namespace {

const json::value& results() {
    static const json::value r = json::parse(R"({
    "status": "ok",
    "workload": { "rows": [ {"size": 64, "bytes": 128, "goodput_gbps": 1.5, "latency_ns": {"p99": 10.0}},
                            {"size": 4096, "bytes": 8192, "goodput_gbps": 40.25, "latency_ns": {"p99": 30.5}},
                            {"size": "big", "bytes": 4, "goodput_gbps": 2.0} ] },
    "modules": { "a.rnic": {"buffer": {"occupancy_peak_bytes": 100}, "toe": {"retx": 3}},
                 "b.rnic": {"buffer": {"occupancy_peak_bytes": 250}, "toe": {"retx": 4}},
                 "we\"ird]": {"x": true} },
    "list": [[1, 2], [3, 4]]
  })");
    return r;
}

std::string eval(const std::string& path) {
    const metric_value v = evaluate_metric(parse_metric_path(path), results());
    return v.value ? value_text(*v.value) : "error: " + v.error;
}

std::string syntax_error(const std::string& path) {
    try {
        (void)parse_metric_path(path);
    } catch (const path_syntax_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(MetricPath, DottedKeysAndIndices) {
    EXPECT_EQ(eval("status"), "ok");
    EXPECT_EQ(eval("workload.rows[0].goodput_gbps"), "1.5");
    EXPECT_EQ(eval("workload.rows[-1].goodput_gbps"), "2.0");
    EXPECT_EQ(eval("workload.rows[-3].size"), "64");
    EXPECT_EQ(eval("workload.rows.1.bytes"), "8192");  // an integer name indexes an array, as in --set
    EXPECT_EQ(eval("workload.rows[1].latency_ns.p99"), "30.5");
    EXPECT_EQ(eval("list[1][0]"), "3");
    EXPECT_EQ(eval("list[-1][-1]"), "4");
    EXPECT_EQ(eval("workload.rows[0]"),
              "{\"size\":64,\"bytes\":128,\"goodput_gbps\":1.5,\"latency_ns\":{\"p99\":10.0}}");
}

TEST(MetricPath, QuotedKeysHoldDots) {
    EXPECT_EQ(eval("modules[\"b.rnic\"].buffer.occupancy_peak_bytes"), "250");
    EXPECT_EQ(eval("modules[\"a.rnic\"][\"toe\"].retx"), "3");
    EXPECT_EQ(eval("modules[\"we\\\"ird]\"].x"), "true");
    EXPECT_EQ(eval("[\"status\"]"), "ok");
}

TEST(MetricPath, Select) {
    EXPECT_EQ(eval("workload.rows[size=4096].goodput_gbps"), "40.25");
    EXPECT_EQ(eval("workload.rows[size=big].bytes"), "4");
    EXPECT_EQ(eval("workload.rows[size=\"big\"].bytes"), "4");
    EXPECT_EQ(eval("workload.rows[size=4096.0].bytes"), "8192");
    EXPECT_EQ(eval("workload.rows[size=5].bytes"),
              "error: nothing at 'workload.rows[size=5]' (no element with size=5)");
}

TEST(MetricPath, Aggregates) {
    EXPECT_EQ(eval("sum:workload.rows[*].bytes"), "8324");
    EXPECT_EQ(eval("mean:workload.rows[*].bytes"), "2774.6666666666665");
    EXPECT_EQ(eval("min:workload.rows[*].goodput_gbps"), "1.5");
    EXPECT_EQ(eval("max:workload.rows[*].goodput_gbps"), "40.25");
    EXPECT_EQ(eval("sum:workload.rows[*].goodput_gbps"), "43.75");
    EXPECT_EQ(eval("count:workload.rows[*]"), "3");
    EXPECT_EQ(eval("count:workload.rows[*].latency_ns"), "2");  // elements without the member are skipped
    EXPECT_EQ(eval("count:workload.rows[size=7]"), "0");
    EXPECT_EQ(eval("max:modules[*].buffer.occupancy_peak_bytes"), "250");  // [*] over an object's members
    EXPECT_EQ(eval("sum:modules[*].toe.retx"), "7");
    EXPECT_EQ(eval("sum:workload.rows[0].bytes"), "128");
    EXPECT_EQ(eval("sum:workload.rows[*].size"), "error: sum: a value at 'workload.rows[*].size' is not a number");
}

TEST(MetricPath, EvaluationErrorsSayWhere) {
    EXPECT_EQ(eval("workload.rowz[0]"), "error: nothing at 'workload.rowz' (no member 'rowz'; members: rows)");
    EXPECT_EQ(eval("workload.rows[7].bytes"), "error: nothing at 'workload.rows[7]' (index 7 outside an array of 3)");
    EXPECT_EQ(eval("status.x"), "error: nothing at 'status.x' (not an object)");
    EXPECT_EQ(eval("status[0]"), "error: nothing at 'status[0]' (not an array)");
    EXPECT_EQ(eval("modules.b.rnic"),
              "error: nothing at 'modules.b' (no member 'b'; members: a.rnic, b.rnic, we\"ird]; a name with dots is "
              "written in brackets: [\"b.rnic\"])");
    EXPECT_EQ(eval("workload.rows[size=big].latency_ns.p99"),
              "error: nothing at 'workload.rows[size=big].latency_ns' "
              "(no member 'latency_ns'; members: size, bytes, goodput_gbps)");
}

TEST(MetricPath, SyntaxErrors) {
    EXPECT_EQ(syntax_error("a.b[1]"), "");
    EXPECT_EQ(syntax_error(""), "empty path at column 1");
    EXPECT_EQ(syntax_error("sum:"), "empty path at column 5");
    EXPECT_EQ(syntax_error("a..b"), "empty member name at column 3");
    EXPECT_EQ(syntax_error("a."), "path ends with '.' at column 2");
    EXPECT_EQ(syntax_error("a[1"), "missing ']' at column 4");
    EXPECT_EQ(syntax_error("a[]"), "empty brackets at column 2");
    EXPECT_EQ(syntax_error("a[x]"), "bad selector 'x' (an integer, *, a \"quoted\" name or name=value) at column 3");
    EXPECT_EQ(syntax_error("a[\"b]"), "unterminated string at column 3");
    EXPECT_EQ(syntax_error("a[1]b"), "unexpected 'b' at column 5");
    EXPECT_EQ(syntax_error("a]"), "unexpected ']' at column 2");
    EXPECT_EQ(syntax_error("avg:a[*]"), "unknown aggregate 'avg' (sum, mean, min, max or count) at column 1");
    EXPECT_EQ(syntax_error("a[*].b"), "'[*]' needs an aggregate in front: sum:, mean:, min:, max: or count:");
    EXPECT_EQ(syntax_error("a[=1]"), "missing field name before '=' at column 3");
    EXPECT_EQ(syntax_error("a[k=]"), "missing value after '=' at column 5");
    // A colon after a bracket or dot is part of a name, not an aggregate.
    EXPECT_EQ(syntax_error("a.b:c"), "");
    EXPECT_EQ(parse_metric_path("[\"x:y\"].z").aggregate, aggregate::none);
}
