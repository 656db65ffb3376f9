// Sweep files: parsing, validation errors and the exact run list of an expansion.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "common.h"
#include "sweep_file.h"
#include "table.h"

namespace json = boost::json;
using namespace rnic::sweep;

namespace {

std::vector<std::string> texts(const std::vector<json::value>& values) {
    std::vector<std::string> out;
    for (const auto& v : values) out.push_back(value_text(v));
    return out;
}

// The message of the InputError that parsing `text` throws ("" when it parses).
std::string error_of(const std::string& text) {
    try {
        (void)parse_sweep(text, "bad.json");
    } catch (const input_error& e) {
        return e.what();
    }
    return "";
}

const char* const minimal = R"({"base": "b.json", "axes": [], "metrics": {}})";

}  // namespace

TEST(SweepExpansion, ListsZipsAndSeedsGiveTheExactRunList) {
    const Sweep sw = parse_sweep(R"({
    // comments and trailing commas as in scenario files
    "name": "t",
    "base": "platform/scenarios/default.json",
    "set": { "workload.sizes": [256, "4KiB"], "workload.iterations": 20 },
    "axes": [
      { "key": "link.a_to_b.loss", "values": [0, 0.001] },
      { "zip": [ { "key": "rnic.rx_path", "values": ["buffering", "markers"] },
                 { "key": "rnic.mpa.markers", "values": [false, true] } ], "name": "variant" },
    ],
    "seeds": [7, 9],
    "metrics": { "g": "workload.rows[-1].goodput_gbps" },
  })",
                                 "t.json");
    const std::vector<rnic::sweep::run> runs = expand(sw);
    ASSERT_EQ(runs.size(), 8u);
    const std::vector<std::string> ids = {
        "0000-loss_0-variant_buffering-seed_7",     "0001-loss_0-variant_buffering-seed_9",
        "0002-loss_0-variant_markers-seed_7",       "0003-loss_0-variant_markers-seed_9",
        "0004-loss_0.001-variant_buffering-seed_7", "0005-loss_0.001-variant_buffering-seed_9",
        "0006-loss_0.001-variant_markers-seed_7",   "0007-loss_0.001-variant_markers-seed_9"};
    for (std::size_t i = 0; i < runs.size(); ++i) {
        EXPECT_EQ(runs[i].index, i);
        EXPECT_EQ(runs[i].id, ids[i]);
    }
    const std::vector<std::string> args6 = {"--scenario", "platform/scenarios/default.json",
                                            "--set",      "workload.sizes=[256,\"4KiB\"]",
                                            "--set",      "workload.iterations=20",
                                            "--set",      "link.a_to_b.loss=0.001",
                                            "--set",      "rnic.rx_path=markers",
                                            "--set",      "rnic.mpa.markers=true",
                                            "--seed",     "7"};
    EXPECT_EQ(runs[6].scenario_args, args6);
    EXPECT_EQ(runs[6].seed, 7);
    EXPECT_EQ(runs[6].point, (std::vector<std::size_t>{1, 1}));

    std::vector<std::string> names;
    for (const column& c : table_columns(sw)) names.push_back(c.name);
    EXPECT_EQ(names, (std::vector<std::string>{"run", "id", "link.a_to_b.loss", "variant", "rnic.rx_path",
                                               "rnic.mpa.markers", "seed", "status", "g"}));
}

TEST(SweepExpansion, RepetitionsAndDefaults) {
    Sweep sw = parse_sweep(R"({"base": "b.json", "repetitions": 3})", "dir/my-sweep.json");
    EXPECT_EQ(sw.name, "my-sweep");
    EXPECT_EQ(sw.seeds, (std::vector<std::int64_t>{1, 2, 3}));
    std::vector<rnic::sweep::run> runs = expand(sw);
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[2].id, "0002-seed_3");
    EXPECT_EQ(runs[2].scenario_args, (std::vector<std::string>{"--scenario", "b.json", "--seed", "3"}));

    sw = parse_sweep(R"({"base": "b.json"})", "x.json");
    EXPECT_EQ(sw.seeds, (std::vector<std::int64_t>{1}));
    EXPECT_EQ(expand(sw).size(), 1u);
}

TEST(SweepExpansion, IntegerRangeIncludesBothEnds) {
    const auto v = expand_range(json::parse(R"({"from": 64, "to": 512, "step": 64})"), "f", "r");
    EXPECT_EQ(texts(v), (std::vector<std::string>{"64", "128", "192", "256", "320", "384", "448", "512"}));
    for (const auto& e : v) EXPECT_TRUE(e.is_int64());
    const auto down = expand_range(json::parse(R"({"from": 10, "to": 1, "step": -4})"), "f", "r");
    EXPECT_EQ(texts(down), (std::vector<std::string>{"10", "6", "2"}));
    const auto one = expand_range(json::parse(R"({"from": 5, "to": 5, "step": 1})"), "f", "r");
    EXPECT_EQ(texts(one), (std::vector<std::string>{"5"}));
}

TEST(SweepExpansion, FloatRangeDoesNotDrift) {
    // Accumulating 0.1 ten times gives 0.9999999999999999; the expansion computes from + i*step and rounds.
    const auto v = expand_range(json::parse(R"({"from": 0, "to": 1, "step": 0.1})"), "f", "r");
    EXPECT_EQ(texts(v),
              (std::vector<std::string>{"0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"}));
    EXPECT_EQ(v[3].as_double(), 0.3);
    const auto w = expand_range(json::parse(R"({"from": 0.001, "to": 0.0025, "step": 0.0005})"), "f", "r");
    EXPECT_EQ(texts(w), (std::vector<std::string>{"0.001", "0.0015", "0.002", "0.0025"}));
    // A step that does not reach `to` stops before it.
    const auto x = expand_range(json::parse(R"({"from": 1, "to": 2, "step": 0.3})"), "f", "r");
    EXPECT_EQ(texts(x), (std::vector<std::string>{"1.0", "1.3", "1.6", "1.9"}));
}

TEST(SweepExpansion, LogRange) {
    const auto v = expand_log_range(json::parse(R"({"from": 1e-4, "to": 1e-1, "points": 7})"), "f", "r");
    EXPECT_EQ(texts(v), (std::vector<std::string>{"0.0001", "0.000316227766017", "0.001", "0.00316227766017", "0.01",
                                                  "0.0316227766017", "0.1"}));
    EXPECT_EQ(v.front().as_double(), 1e-4);
    EXPECT_EQ(v.back().as_double(), 1e-1);
    const auto i =
        expand_log_range(json::parse(R"({"from": 4096, "to": 4194304, "points": 6, "integer": true})"), "f", "r");
    EXPECT_EQ(texts(i), (std::vector<std::string>{"4096", "16384", "65536", "262144", "1048576", "4194304"}));
    for (const auto& e : i) EXPECT_TRUE(e.is_int64());
}

TEST(SweepExpansion, UnitsAreAppendedOnTheCommandLineOnly) {
    const Sweep sw = parse_sweep(R"({"base": "b.json", "axes": [
      {"key": "rnic.buffer.capacity", "range": {"from": 64, "to": 128, "step": 64}, "unit": "KiB", "name": "buf"},
      {"key": "link.propagation", "values": [0.5, 2.0], "unit": "us"}]})",
                                 "u.json");
    const std::vector<rnic::sweep::run> runs = expand(sw);
    ASSERT_EQ(runs.size(), 4u);
    EXPECT_EQ(runs[3].id, "0003-buf_128-propagation_2.0-seed_1");
    EXPECT_EQ(runs[3].scenario_args[3], "rnic.buffer.capacity=128KiB");
    EXPECT_EQ(runs[3].scenario_args[5], "link.propagation=2us");
    EXPECT_EQ(runs[2].scenario_args[5], "link.propagation=0.5us");
    EXPECT_EQ(set_value_text(json::value(1.5), ""), "1.5");
    EXPECT_EQ(set_value_text(json::value("buffering"), ""), "buffering");
    EXPECT_EQ(set_value_text(json::value(true), ""), "true");
}

TEST(SweepExpansion, ZipLabels) {
    const Sweep sw = parse_sweep(R"({"base": "b.json", "axes": [
      {"zip": [{"key": "a.x", "values": [1, 2]}, {"key": "a.y", "range": {"from": 10, "to": 20, "step": 10}}],
       "name": "pair", "labels": ["small", "large"]}]})",
                                 "z.json");
    ASSERT_EQ(sw.axes.size(), 1u);
    EXPECT_EQ(texts(sw.axes[0].labels), (std::vector<std::string>{"small", "large"}));
    const std::vector<rnic::sweep::run> runs = expand(sw);
    EXPECT_EQ(runs[1].id, "0001-pair_large-seed_1");
    EXPECT_EQ(runs[1].scenario_args,
              (std::vector<std::string>{"--scenario", "b.json", "--set", "a.x=2", "--set", "a.y=20", "--seed", "1"}));
}

TEST(SweepExpansion, IndexWidthGrowsWithTheRunCount) {
    const Sweep sw =
        parse_sweep(R"({"base": "b.json", "axes": [{"key": "k", "range": {"from": 0, "to": 12499, "step": 1}}],
                                    "seeds": [1]})",
                    "w.json");
    const std::vector<rnic::sweep::run> runs = expand(sw);
    ASSERT_EQ(runs.size(), 12500u);
    EXPECT_EQ(runs[7].id, "00007-k_7-seed_1");
}

TEST(SweepValidation, ErrorsNameTheFileAndTheField) {
    EXPECT_EQ(error_of(minimal), "");
    EXPECT_EQ(
        error_of(R"({"base": "b.json", "axis": []})"),
        "bad.json: axis: unknown field (expected one of: name, base, set, axes, seeds, repetitions, metrics, plots)");
    EXPECT_EQ(error_of(R"({"axes": []})"), "bad.json: base: missing");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"values": [1]}]})"), "bad.json: axes[0].key: missing");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k"}]})"),
              "bad.json: axes[0]: needs one of values, range, log_range");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k", "values": [1], "range": {}}]})"),
              "bad.json: axes[0]: has more than one of values, range, log_range");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k", "values": []}]})"),
              "bad.json: axes[0].values: empty list");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k", "vals": [1]}]})"),
              "bad.json: axes[0].vals: unknown field (expected one of: key, values, range, log_range, unit, name)");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k", "range": {"from": 0, "to": 1, "step": 0}}]})"),
              "bad.json: axes[0].range.step: must not be 0");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k", "range": {"from": 0, "to": 1, "step": -1}}]})"),
              "bad.json: axes[0].range.step: bad range: step -1 leads away from 1");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k", "range": {"from": 0, "step": 1}}]})"),
              "bad.json: axes[0].range.to: missing");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k", "range": {"from": 0, "to": "1", "step": 1}}]})"),
              "bad.json: axes[0].range.to: expected a number, got \"1\"");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k", "log_range": {"from": 0, "to": 1, "points": 3}}]})"),
              "bad.json: axes[0].log_range.from: bad log range: must be greater than 0");
    EXPECT_EQ(
        error_of(R"({"base": "b.json", "axes": [{"key": "k", "log_range": {"from": 1, "to": 10, "points": 1}}]})"),
        "bad.json: axes[0].log_range.points: bad log range: at least 2 points");
    EXPECT_EQ(
        error_of(R"({"base": "b.json", "axes": [{"key": "k",
              "log_range": {"from": 1, "to": 4, "points": 6, "integer": true}}]})"),
        "bad.json: axes[0].log_range.points: bad log range: rounding to integers gives 1 twice; use fewer points");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"zip": [{"key": "a", "values": [1, 2]},
              {"key": "b", "values": [1, 2, 3]}], "name": "v"}]})"),
              "bad.json: axes[0].zip[1]: has 3 values, but zip[0] has 2 (zipped lists must have equal lengths)");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"zip": [{"key": "a", "values": [1, 2]}]}]})"),
              "bad.json: axes[0].name: missing");
    EXPECT_EQ(
        error_of(R"({"base": "b.json", "axes": [{"zip": [{"key": "a", "values": [1, 1]}], "name": "v"}]})"),
        "bad.json: axes[0].labels: label '1' appears twice (labels name the zipped points; give distinct \"labels\")");
    EXPECT_EQ(error_of(R"({"base": "b.json", "set": {"k": 1}, "axes": [{"key": "k", "values": [1]}]})"),
              "bad.json: axes[0].key: 'k' is set twice (in \"set\" or another axis)");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k=1", "values": [1]}]})"),
              "bad.json: axes[0].key: scenario key 'k=1' holds '=' or white space");
    EXPECT_EQ(error_of(R"({"base": "b.json", "axes": [{"key": "k", "values": ["a"], "unit": "KiB"}]})"),
              "bad.json: axes[0].values[0]: with a unit, values must be numbers, got \"a\"");
    EXPECT_EQ(error_of(R"({"base": "b.json", "seeds": [1, 1]})"), "bad.json: seeds[1]: seed given twice");
    EXPECT_EQ(error_of(R"({"base": "b.json", "seeds": [1], "repetitions": 2})"),
              "bad.json: repetitions: give either seeds or repetitions");
    EXPECT_EQ(error_of(R"({"base": "b.json", "metrics": {"seed": "x"}})"),
              "bad.json: metrics.seed: 'seed' is already a column name (run, id, seed, status, axes)");
    EXPECT_EQ(error_of(R"({"base": "b.json", "metrics": {"g": "workload.rows[-1"}})"),
              "bad.json: metrics.g: bad path 'workload.rows[-1': missing ']' at column 17");
    EXPECT_EQ(error_of(R"({"base": "b.json", "metrics": {"g": {"path": "a", "units": "B"}}})"),
              "bad.json: metrics.g.units: unknown field (expected one of: path, unit)");
    EXPECT_EQ(error_of(R"({"base": "b.json", "name": "a b"})"),
              "bad.json: name: use letters, digits, '.', '_', '+' and '-' only (it names the output folder)");
    EXPECT_EQ(error_of(R"({"base": "b.json", "plots": [{"x": "k"}]})"), "bad.json: plots[0].y: missing");
    EXPECT_EQ(error_of(R"({"base": "b.json", "plots": [{"x": "k", "y": "g", "colour": 1}]})").substr(0, 40),
              "bad.json: plots[0].colour: unknown field");
    EXPECT_EQ(error_of("{\"base\": \"b.json\",\n \"axes\": [}"), "bad.json:2:11: axes: syntax error near \"}\"");
}
