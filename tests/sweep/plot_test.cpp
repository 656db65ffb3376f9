// Plots: spec validation, aggregation over seeds (mean, min/max, stddev), series, categories, "where", the report.
#include "plot.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common.h"
#include "table.h"

namespace json = boost::json;
using namespace rnic::sweep;

namespace {

// loss (axis) x path (zip: path + markers) x seed, metric g; plus a fixed axis "cap".
table sample_table() {
    table t;
    t.name = "sample";
    t.columns = {{"run", "run", "", ""},          {"id", "id", "", ""},
                 {"loss", "axis", "loss", ""},    {"path", "axis", "path", ""},
                 {"markers", "axis", "path", ""}, {"cap", "axis", "cap", "KiB"},
                 {"seed", "seed", "", ""},        {"status", "status", "", ""},
                 {"g", "metric", "", "Gb/s"}};
    std::int64_t run = 0;
    for (double loss : {0.01, 0.001}) {
        for (const char* path : {"buffering", "markers"}) {
            for (std::int64_t seed : {1, 2, 3}) {
                const double g = (std::string(path) == "markers" ? 10.0 : 20.0) + (loss == 0.01 ? 0.0 : 5.0) +
                                 static_cast<double>(seed);
                std::vector<json::value> row{json::value(run),
                                             json::value("r" + std::to_string(run)),
                                             json::value(loss),
                                             json::value(path),
                                             json::value(std::string(path) == "markers"),
                                             json::value(256),
                                             json::value(seed),
                                             json::value("ok"),
                                             json::value(g)};
                t.rows.push_back(std::move(row));
                ++run;
            }
        }
    }
    return t;
}

plot_spec spec_from(const std::string& text, const table& t) {
    std::vector<plot_spec> specs = parse_plots(json::parse(text), "p.json", "plots");
    resolve_plots(specs, t.columns, "p.json", t.set);
    return specs.front();
}

std::string resolve_error(const std::string& text, const table& t) {
    try {
        (void)spec_from(text, t);
    } catch (const input_error& e) {
        return e.what();
    }
    return "";
}

std::string aggregate_error(const std::string& text, const table& t) {
    try {
        (void)aggregate_plot(spec_from(text, t), t);
    } catch (const input_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Plot, MeanAndMinMaxOverSeedsPerSeries) {
    const table t = sample_table();
    const plot_spec spec = spec_from(R"({"x": "loss", "y": "g", "series": "path"})", t);
    EXPECT_EQ(spec.name, "g-vs-loss");
    EXPECT_EQ(spec.y_label, "g (Gb/s)");
    EXPECT_EQ(spec.x_label, "loss");
    const plot_data d = aggregate_plot(spec, t);
    EXPECT_FALSE(d.categorical_x);
    ASSERT_EQ(d.x_values.size(), 2u);
    EXPECT_EQ(value_text(d.x_values[0]), "0.001");  // numbers sorted
    ASSERT_EQ(d.series.size(), 2u);
    EXPECT_EQ(d.series[0].title, "buffering");
    EXPECT_EQ(d.series[1].title, "markers");
    ASSERT_EQ(d.series[1].points.size(), 2u);
    const plot_point& p = d.series[1].points[0];  // markers, loss 0.001: 15 + seed
    EXPECT_EQ(p.n, 3u);
    EXPECT_DOUBLE_EQ(p.position, 0.001);
    EXPECT_DOUBLE_EQ(p.mean, 17.0);
    EXPECT_DOUBLE_EQ(p.min, 16.0);
    EXPECT_DOUBLE_EQ(p.max, 18.0);
    EXPECT_DOUBLE_EQ(p.stddev, 1.0);
    EXPECT_DOUBLE_EQ(p.low(), 16.0);
    EXPECT_DOUBLE_EQ(p.high(), 18.0);
}

TEST(Plot, StddevBarsScaleWhereAndFailedRuns) {
    table t = sample_table();
    t.rows[0][7] = "failed 1";  // loss 0.01, buffering, seed 1
    const plot_spec spec =
        spec_from(R"({"x": "loss", "y": "g", "where": {"path": "buffering"}, "error": "stddev", "y_scale": 0.5})", t);
    const plot_data d = aggregate_plot(spec, t);
    ASSERT_EQ(d.series.size(), 1u);
    const plot_point& p = d.series[0].points[1];  // loss 0.01: seeds 2 and 3 -> 22, 23 scaled by 0.5
    EXPECT_EQ(p.n, 2u);
    EXPECT_DOUBLE_EQ(p.mean, 11.25);
    EXPECT_DOUBLE_EQ(p.stddev, std::sqrt(0.125));
    EXPECT_DOUBLE_EQ(p.low(), 11.25 - std::sqrt(0.125));
    ASSERT_EQ(d.warnings.size(), 1u);
    EXPECT_EQ(d.warnings[0], "plot g-vs-loss: 1 run(s) not ok left out");
}

// 95% confidence bars: the mean +- t(n-1) s / sqrt(n); with one run there is no interval.
TEST(Plot, Ci95BarsUseStudentsT) {
    table t = sample_table();
    const plot_spec spec = spec_from(R"({"x": "loss", "y": "g", "series": "path", "error": "ci95"})", t);
    const plot_data d = aggregate_plot(spec, t);
    const plot_point& p = d.series[1].points[0];  // markers, loss 0.001: 16, 17, 18
    EXPECT_EQ(p.n, 3u);
    EXPECT_DOUBLE_EQ(p.ci95, 4.303 * 1.0 / std::sqrt(3.0));  // t(2) = 4.303
    EXPECT_DOUBLE_EQ(p.low(), 17.0 - p.ci95);
    EXPECT_DOUBLE_EQ(p.high(), 17.0 + p.ci95);
    t.rows[0][7] = "failed 1";  // loss 0.01, buffering: seeds 1 and 2 fail, seed 3 (23) is left
    t.rows[1][7] = "failed 1";
    const plot_data one =
        aggregate_plot(spec_from(R"({"x": "loss", "y": "g", "where": {"path": "buffering"}, "error": "ci95"})", t), t);
    const plot_point& q = one.series[0].points[1];  // loss 0.01
    ASSERT_EQ(q.n, 1u);
    EXPECT_DOUBLE_EQ(q.mean, 23.0);
    EXPECT_DOUBLE_EQ(q.low(), 23.0);
    EXPECT_DOUBLE_EQ(q.high(), 23.0);
}

TEST(Plot, CategoricalX) {
    const table t = sample_table();
    const plot_data d = aggregate_plot(spec_from(R"({"x": "path", "y": "g", "series": "loss", "log_x": true})", t), t);
    EXPECT_TRUE(d.categorical_x);
    ASSERT_EQ(d.x_values.size(), 2u);
    EXPECT_EQ(value_text(d.x_values[1]), "markers");
    EXPECT_DOUBLE_EQ(d.series[0].points[1].position, 1.0);
    EXPECT_EQ(d.series[0].title, "0.01");  // series in run order
    ASSERT_FALSE(d.warnings.empty());
    EXPECT_EQ(d.warnings[0], "plot g-vs-path: log_x ignored, x values are not all numbers");
}

TEST(Plot, ZipMemberAsX) {
    const table t = sample_table();
    const plot_data d = aggregate_plot(spec_from(R"({"x": "markers", "y": "g", "series": "loss"})", t), t);
    EXPECT_TRUE(d.categorical_x);
    EXPECT_EQ(d.series.size(), 2u);
}

TEST(Plot, SpecErrors) {
    const table t = sample_table();
    EXPECT_EQ(resolve_error(R"({"x": "lost", "y": "g"})", t),
              "p.json: plots.x: 'lost' is not an axis (axes: loss, path, markers, cap)");
    EXPECT_EQ(resolve_error(R"({"x": "loss", "y": "seed"})", t),
              "p.json: plots.y: 'seed' is not a metric (metrics: g)");
    EXPECT_EQ(resolve_error(R"({"x": "loss", "y": "g", "series": "loss"})", t),
              "p.json: plots.series: is the same axis as x");
    EXPECT_EQ(resolve_error(R"({"x": "path", "y": "g", "series": "markers"})", t),
              "p.json: plots.series: is the same axis as x");
    EXPECT_EQ(resolve_error(R"({"x": "loss", "y": "g", "where": {"nope": 1}})", t),
              "p.json: plots.where.nope: not an axis (axes: loss, path, markers, cap)");
    EXPECT_EQ(resolve_error(R"({"x": "loss", "y": "g", "error": "sem"})", t),
              "p.json: plots.error: expected \"minmax\", \"stddev\", \"ci95\" or \"none\"");
    EXPECT_EQ(resolve_error(R"([{"x": "loss", "y": "g"}, {"x": "loss", "y": "g"}])", t),
              "p.json: plots[1].name: another plot is named 'g-vs-loss' (give \"name\")");
    // Another axis with several values would be averaged over: refused.
    EXPECT_EQ(aggregate_error(R"({"x": "loss", "y": "g"})", t),
              "p.json: plots: axis 'path' has 2 values among the plotted runs; make it the series or fix it with "
              "\"where\": {\"path\": ...}");
    EXPECT_EQ(aggregate_error(R"({"x": "loss", "y": "g", "where": {"path": "none"}})", t),
              "p.json: plots.where: no row of the table matches");
    EXPECT_EQ(aggregate_error(R"({"x": "loss", "y": "g", "where": {"markers": true}})", t), "");
    EXPECT_EQ(resolve_error(R"({"x": "loss", "y": "g", "series_label": "receive path"})", t),
              "p.json: plots.series_label: given without a series");
}

// The legend's title says what the series is in words; by default it is the series axis's name.
TEST(Plot, SeriesLabelTitlesTheLegend) {
    const table t = sample_table();
    EXPECT_EQ(spec_from(R"({"x": "loss", "y": "g", "series": "path"})", t).series_label, "path");
    const plot_spec spec = spec_from(R"({"x": "loss", "y": "g", "series": "path", "series_label": "receive path"})", t);
    EXPECT_EQ(spec.series_label, "receive path");
    const plot_data d = aggregate_plot(spec, t);
    const std::string dir = ::testing::TempDir() + "series-label";
    std::filesystem::create_directories(dir);
    render_plot(spec, d, dir, "true");  // writes the script; `true` draws nothing
    std::ifstream in(dir + "/" + spec.name + ".gp");
    const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(script.find("vertical title 'receive path' box"), std::string::npos) << script;
    EXPECT_EQ(script.find("title 'path'"), std::string::npos) << script;
}

// The title is centred on the whole image: gnuplot's own title is centred over the plot area, which
// the key outside on the right pushes left, and a long title lost its first letters (study b).
TEST(Plot, TitleIsCentredOnTheImageNotOverThePlotArea) {
    const table t = sample_table();
    const plot_spec spec = spec_from(
        R"({"x": "loss", "y": "g", "series": "path", "title": "Peak out-of-order bytes held, ample memory"})", t);
    const plot_data d = aggregate_plot(spec, t);
    const std::string dir = ::testing::TempDir() + "title-centre";
    std::filesystem::create_directories(dir);
    render_plot(spec, d, dir, "true");
    std::ifstream in(dir + "/" + spec.name + ".gp");
    const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(
        script.find("set label 1 'Peak out-of-order bytes held, ample memory' at screen 0.5, screen 0.965 center"),
        std::string::npos)
        << script;
    EXPECT_EQ(script.find("set title"), std::string::npos) << script;
}

TEST(Plot, ReportShowsFiguresAndTables) {
    const table t = sample_table();
    const plot_spec spec = spec_from(R"({"x": "loss", "y": "g", "series": "path", "title": "G | loss"})", t);
    const plot_data d = aggregate_plot(spec, t);
    report_figure f;
    f.spec = &spec;
    f.data = &d;
    f.png = "plots/g-vs-loss.png";
    f.svg = "plots/g-vs-loss.svg";
    const std::string md = report_markdown(t, {f}, "Intro.");
    EXPECT_NE(md.find("# Sweep sample\n\nIntro.\n"), std::string::npos) << md;
    EXPECT_NE(md.find("## G \\| loss\n\n![G \\| loss](plots/g-vs-loss.png)"), std::string::npos) << md;
    EXPECT_NE(md.find("| loss | buffering | markers |\n|---:|---:|---:|\n| 0.001 | 27 [26, 28] | 17 [16, 18] |\n"
                      "| 0.01 | 22 [21, 23] | 12 [11, 13] |\n"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("| 0 | [r0](runs/r0/) | 0.01 | buffering | false | 256 | 1 | ok | 21 |"), std::string::npos)
        << md;
    EXPECT_EQ(markdown_cell("a|b\nc"), "a\\|b c");

    report_figure missing = f;
    missing.problem = "cannot run gnuplot";
    const std::string md2 = report_markdown(t, {missing}, "Intro.");
    EXPECT_NE(md2.find("*No figure: cannot run gnuplot*"), std::string::npos);
}

// ---- Expressions in plots: reference lines, "y_divide", bars. ----

namespace {

// sample_table with the sweep's "set" and an axis "name" ("buf" for cap): what plot expressions may use.
table named_table() {
    table t = sample_table();
    t.set = {{"link.rate", json::value("10Gbps")},
             {"rnic.rx_path", json::value("buffering")},
             {"workload.sizes", json::parse("[1024]")}};
    t.columns[5].alias = "buf";
    return t;
}

// Writes the plot's files with a gnuplot that draws nothing; returns the script, and the data in `dat`.
std::string script_of(const plot_spec& spec, const plot_data& d, const std::string& name, std::string* dat = nullptr) {
    const std::string dir = ::testing::TempDir() + name;
    std::filesystem::create_directories(dir);
    render_plot(spec, d, dir, "true");
    auto read = [](const std::string& path) {
        std::ifstream in(path);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    };
    if (dat != nullptr) *dat = read(dir + "/" + spec.name + ".dat");
    return read(dir + "/" + spec.name + ".gp");
}

}  // namespace

TEST(PlotExpressions, SpecFields) {
    const table t = named_table();
    const plot_spec spec = spec_from(R"json({"x": "path", "y": "g", "series": "loss", "style": "bars",
      "y_divide": "buf / 2", "references": [{"label": "line rate", "y": "link.rate"}, {"y": "min(buf, 100)"}]})json",
                                     t);
    EXPECT_EQ(spec.style, plot_spec::style::bars);
    EXPECT_EQ(spec.y_divide.text(), "buf / 2");
    EXPECT_EQ(spec.y_label, "g / (buf / 2)");  // the default says what was divided by
    ASSERT_EQ(spec.references.size(), 2u);
    EXPECT_EQ(spec.references[0].label, "line rate");
    EXPECT_EQ(spec.references[1].label, "y = min(buf, 100)");
    EXPECT_EQ(spec.references[1].field, "plots.references[1]");
    EXPECT_EQ(spec_from(R"({"x": "loss", "y": "g", "series": "path", "y_divide": "link.rate"})", t).y_label,
              "g / link.rate");
    // Defaults: lines, nothing divided, no references.
    const plot_spec plain = spec_from(R"({"x": "loss", "y": "g", "series": "path"})", t);
    EXPECT_EQ(plain.style, plot_spec::style::lines);
    EXPECT_TRUE(plain.y_divide.empty());
    EXPECT_TRUE(plain.references.empty());
}

// Refused while the spec is read or resolved (before anything runs), naming the plot's field.
TEST(PlotExpressions, SpecErrors) {
    const table t = named_table();
    const std::string head = R"({"x": "loss", "y": "g", "series": "path", )";
    EXPECT_EQ(resolve_error(head + R"("references": [{"y": "x *"}]})", t),
              "p.json: plots.references[0].y: 'x *' does not parse: at character 4: expected a number, a name or '(' "
              "at the end");
    EXPECT_EQ(
        resolve_error(head + R"("references": [{"y": "1"}, {"y": "rate * 2"}]})", t),
        "p.json: plots.references[1].y: unknown name 'rate' (names: x, loss, path, markers, cap (buf), link.rate, "
        "rnic.rx_path, workload.sizes)");
    EXPECT_EQ(resolve_error(head + R"("references": [{"y": "g / 2"}]})", t),
              "p.json: plots.references[0].y: 'g' is a metric column; only y_divide may use metrics");
    EXPECT_EQ(resolve_error(head + R"("y_divide": "seed"})", t),
              "p.json: plots.y_divide: 'seed' is a seed column; expressions use x, axes and \"set\" keys");
    EXPECT_EQ(resolve_error(head + R"("y_divide": "nope"})", t),
              "p.json: plots.y_divide: unknown name 'nope' (names: x, loss, path, markers, cap (buf), link.rate, "
              "rnic.rx_path, workload.sizes, g)");
    EXPECT_EQ(resolve_error(head + R"("y_divide": ""})", t),
              "p.json: plots.y_divide: '' does not parse: at character 1: empty expression");
    EXPECT_EQ(resolve_error(head + R"("y_divide": 5})", t), "p.json: plots.y_divide: expected a string, got 5");
    EXPECT_EQ(resolve_error(R"({"x": "path", "y": "g", "series": "loss", "references": [{"y": "markers"}]})", t),
              "p.json: plots.references[0].y: 'markers' changes with the x axis 'path'; a reference may use x itself");
    EXPECT_EQ(resolve_error(head + R"("references": [{"label": "a"}]})", t), "p.json: plots.references[0].y: missing");
    EXPECT_EQ(resolve_error(head + R"("references": [{"y": "1", "colour": "red"}]})", t),
              "p.json: plots.references[0].colour: unknown field (expected label, y)");
    EXPECT_EQ(resolve_error(head + R"("references": {"y": "1"}})", t),
              "p.json: plots.references: expected a list of {\"label\": ..., \"y\": expression}");
    EXPECT_EQ(resolve_error(head + R"("style": "pie"})", t), "p.json: plots.style: expected \"lines\" or \"bars\"");
    EXPECT_EQ(resolve_error(head + R"("style": "bars", "log_y": true})", t),
              "p.json: plots.log_y: not with \"style\": \"bars\"");
    EXPECT_EQ(resolve_error(head + R"("style": "bars", "references": [{"y": "x * 2"}]})", t),
              "p.json: plots.references[0].y: uses x, but bars place the x values as categories");
    // Checked against the plotted runs' values: still before anything runs (rnic-sweep aggregates the expansion first).
    EXPECT_EQ(aggregate_error(head + R"("references": [{"y": "rnic.rx_path"}]})", t),
              "p.json: plots.references[0].y: 'rnic.rx_path' is not a number (\"buffering\")");
    EXPECT_EQ(aggregate_error(head + R"("references": [{"y": "workload.sizes"}]})", t),
              "p.json: plots.references[0].y: 'workload.sizes' is not a number ([1024])");
    EXPECT_EQ(aggregate_error(R"({"x": "path", "y": "g", "series": "loss", "references": [{"y": "x"}]})", t),
              "p.json: plots.references[0].y: uses x, but the x values are not all numbers");
    EXPECT_EQ(aggregate_error(head + R"("y_divide": "buf - 256"})", t),
              "p.json: plots.y_divide: is 0.0 for run r0 (x = 0.01)");
    table mixed = t;  // cap as the series, in two units: refused, units are not converted
    for (auto& row : mixed.rows) row[5] = row[6].as_int64() == 1 ? json::value("1MiB") : json::value("512KiB");
    EXPECT_EQ(aggregate_error(R"({"x": "loss", "y": "g", "series": "cap", "where": {"path": "markers"},
                                "y_divide": "cap"})",
                              mixed),
              "p.json: plots.y_divide: 'cap' has values in different units (KiB, MiB); units are not converted");
}

TEST(PlotExpressions, NumbersOfValuesWithUnits) {
    double v = 0.0;
    std::string unit;
    EXPECT_TRUE(expression_number(json::value("10Gbps"), &v, &unit));
    EXPECT_DOUBLE_EQ(v, 10.0);
    EXPECT_EQ(unit, "Gbps");
    EXPECT_TRUE(expression_number(json::value("0.5us"), &v, &unit));
    EXPECT_DOUBLE_EQ(v, 0.5);
    EXPECT_TRUE(expression_number(json::value("-1.5e3"), &v, &unit));
    EXPECT_DOUBLE_EQ(v, -1500.0);
    EXPECT_EQ(unit, "");
    EXPECT_TRUE(expression_number(json::value(256), &v, &unit));
    EXPECT_DOUBLE_EQ(v, 256.0);
    EXPECT_FALSE(expression_number(json::value("buffering"), &v, &unit));
    EXPECT_FALSE(expression_number(json::value("10 Gbps"), &v, &unit));
    EXPECT_FALSE(expression_number(json::value("1/2"), &v, &unit));
    EXPECT_FALSE(expression_number(json::value(true), &v, &unit));
    EXPECT_FALSE(expression_number(json::parse("[1]"), &v, &unit));
}

// Each run's y is divided before the mean and the spread are taken.
TEST(PlotExpressions, YDivideAppliesToEachRunBeforeAggregating) {
    const table t = named_table();
    // A fixed "set" value with a unit (10Gbps reads 10): buffering at loss 0.001 is 26, 27, 28.
    const plot_data d = aggregate_plot(
        spec_from(R"({"x": "loss", "y": "g", "where": {"path": "buffering"}, "y_divide": "link.rate"})", t), t);
    const plot_point& p = d.series[0].points[0];
    EXPECT_DOUBLE_EQ(p.mean, 2.7);
    EXPECT_DOUBLE_EQ(p.min, 2.6);
    EXPECT_DOUBLE_EQ(p.max, 2.8);
    EXPECT_NEAR(p.stddev, 0.1, 1e-12);
    // A negative divisor swaps the ends: taken per run, min stays below max.
    const plot_data n = aggregate_plot(spec_from(R"({"x": "loss", "y": "g", "where": {"path": "buffering"},
      "y_divide": "-buf * x * 1000", "error": "ci95"})",
                                                 t),
                                       t);
    const plot_point& q = n.series[0].points[0];  // x = 0.001: divided by -256
    EXPECT_DOUBLE_EQ(q.min, -28.0 / 256.0);
    EXPECT_DOUBLE_EQ(q.max, -26.0 / 256.0);
    EXPECT_DOUBLE_EQ(q.ci95, 4.303 * (1.0 / 256.0) / std::sqrt(3.0));

    // Divided by a metric measured per run: two runs, 10/1 and 30/2: the mean of the ratios is 12.5, while the ratio
    // of the means would be 20/1.5 = 13.33.
    table w;
    w.columns = {{"run", "run", "", ""},   {"id", "id", "", ""},         {"k", "axis", "k", ""},
                 {"seed", "seed", "", ""}, {"status", "status", "", ""}, {"g", "metric", "", ""},
                 {"w", "metric", "", ""}};
    w.rows = {{json::value(0), json::value("r0"), json::value(1), json::value(1), json::value("ok"), json::value(10),
               json::value(1)},
              {json::value(1), json::value("r1"), json::value(1), json::value(2), json::value("ok"), json::value(30),
               json::value(2)},
              {json::value(2), json::value("r2"), json::value(1), json::value(3), json::value("ok"), json::value(50),
               json::value(nullptr)}};
    const plot_data m = aggregate_plot(spec_from(R"({"x": "k", "y": "g", "y_divide": "w", "error": "stddev"})", w), w);
    const plot_point& r = m.series[0].points[0];
    EXPECT_EQ(r.n, 2u);  // the run without w is left out, with a note
    EXPECT_DOUBLE_EQ(r.mean, 12.5);
    EXPECT_NE(r.mean, (10.0 + 30.0) / 2.0 / ((1.0 + 2.0) / 2.0));
    EXPECT_DOUBLE_EQ(r.min, 10.0);
    EXPECT_DOUBLE_EQ(r.max, 15.0);
    EXPECT_DOUBLE_EQ(r.stddev, std::sqrt(12.5));
    ASSERT_EQ(m.warnings.size(), 1u);
    EXPECT_EQ(m.warnings[0], "plot g-vs-k: 1 ok run(s) left out: y_divide (w) has no value or is 0");
}

TEST(PlotExpressions, ReferenceLinesAreSampledOverTheXRange) {
    const table t = named_table();
    const std::string refs = R"("references": [{"label": "k", "y": "x * 1000"}, {"label": "half", "y": "buf / 2"}])";
    const plot_data d = aggregate_plot(
        spec_from(R"({"x": "loss", "y": "g", "where": {"path": "buffering"}, "log_x": true, )" + refs + "}", t), t);
    ASSERT_EQ(d.references.size(), 2u);
    const reference_line& k = d.references[0];
    EXPECT_EQ(k.series, -1);
    EXPECT_EQ(k.title, "k");
    ASSERT_EQ(k.points.size(), 201u);  // the 2 data x values and 199 points between them
    EXPECT_DOUBLE_EQ(k.points.front().first, 0.001);
    EXPECT_DOUBLE_EQ(k.points.front().second, 1.0);
    EXPECT_DOUBLE_EQ(k.points.back().first, 0.01);
    EXPECT_DOUBLE_EQ(k.points.back().second, 10.0);
    EXPECT_NEAR(k.points[100].first, 0.001 * std::sqrt(10.0), 1e-12);  // evenly in log scale
    EXPECT_EQ(k.values, "");
    EXPECT_EQ(d.references[1].values, "buf = 256 KiB");
    EXPECT_DOUBLE_EQ(d.references[1].points[7].second, 128.0);
    const plot_data lin =
        aggregate_plot(spec_from(R"({"x": "loss", "y": "g", "where": {"path": "buffering"}, )" + refs + "}", t), t);
    EXPECT_NEAR(lin.references[0].points[100].first, 0.0055, 1e-12);  // evenly
}

// A reference using the series axis: one line per series, in its colour; on categories a level line.
TEST(PlotExpressions, ReferencePerSeriesInTheScript) {
    const table t = named_table();
    const plot_spec spec = spec_from(
        R"({"x": "path", "y": "g", "series": "loss",
          "references": [{"label": "L", "y": "loss * 100"}, {"y": "20"}]})",
        t);
    const plot_data d = aggregate_plot(spec, t);
    ASSERT_EQ(d.references.size(), 3u);
    EXPECT_EQ(d.references[0].title, "L (0.01)");
    EXPECT_EQ(d.references[0].series, 0);
    EXPECT_EQ(d.references[1].title, "L (0.001)");
    EXPECT_EQ(d.references[2].series, -1);
    std::string dat;
    const std::string gp = script_of(spec, d, "ref-series", &dat);
    EXPECT_NE(dat.find("; then one block per reference line: position y\n"), std::string::npos) << dat;
    EXPECT_NE(dat.find("\n\n\n# reference 0: L (0.01): y = loss * 100 with loss = 0.01\n-0.5 1.0\n1.5 1.0\n"),
              std::string::npos)
        << dat;
    EXPECT_NE(dat.find("# reference 1: L (0.001): y = loss * 100 with loss = 0.001\n-0.5 0.1\n1.5 0.1\n"),
              std::string::npos)
        << dat;
    EXPECT_NE(gp.find("'g-vs-path.dat' index 2 using 1:2 with lines lt 1 dt 2 lw 2 title 'L (0.01)'"),
              std::string::npos)
        << gp;
    EXPECT_NE(gp.find("'g-vs-path.dat' index 3 using 1:2 with lines lt 2 dt 2 lw 2 title 'L (0.001)'"),
              std::string::npos)
        << gp;
    EXPECT_NE(gp.find("'g-vs-path.dat' index 4 using 1:2 with lines lc rgb '#404040' dt 3 lw 2 title 'y = 20'"),
              std::string::npos)
        << gp;
    // Without a series the legend appears for the reference lines.
    const plot_spec one =
        spec_from(R"({"x": "loss", "y": "g", "where": {"path": "markers"}, "references": [{"y": "1"}]})", t);
    const std::string gp1 = script_of(one, aggregate_plot(one, t), "ref-one");
    EXPECT_NE(gp1.find("set key outside right top vertical box\n"), std::string::npos) << gp1;
    EXPECT_EQ(gp1.find("set key off"), std::string::npos) << gp1;
    const plot_spec none = spec_from(R"({"x": "loss", "y": "g", "where": {"path": "markers"}})", t);
    EXPECT_NE(script_of(none, aggregate_plot(none, t), "ref-none").find("set key off\n"), std::string::npos);
}

TEST(PlotExpressions, BarsScript) {
    const table t = named_table();
    const plot_spec spec =
        spec_from(R"({"x": "path", "y": "g", "series": "loss", "style": "bars", "error": "stddev"})", t);
    const plot_data d = aggregate_plot(spec, t);
    std::string dat;
    const std::string gp = script_of(spec, d, "bars", &dat);
    EXPECT_NE(gp.find("set xtics ('buffering' 0, 'markers' 1)\n"), std::string::npos) << gp;
    EXPECT_NE(gp.find("set style fill solid 0.75 border -1\nset boxwidth 0.4 absolute\n"), std::string::npos) << gp;
    EXPECT_NE(gp.find("set yrange [0:*]\n"), std::string::npos) << gp;
    EXPECT_NE(gp.find("plot 'g-vs-path.dat' index 0 using 1:3 with boxes lt 1 title '0.01', \\\n"
                      "     'g-vs-path.dat' index 0 using 1:3:4:5 with yerrorbars lt -1 lw 1.5 pt 0 notitle, \\\n"
                      "     'g-vs-path.dat' index 1 using 1:3 with boxes lt 2 title '0.001'"),
              std::string::npos)
        << gp;
    EXPECT_EQ(gp.find("yerrorlines"), std::string::npos) << gp;
    // One cluster per x value, the series' bars side by side: 0.01 left (-0.2), 0.001 right (+0.2).
    EXPECT_NE(dat.find("# series 0: 0.01\n-0.2 \"buffering\" 22.0 21.0 23.0 3 "), std::string::npos) << dat;
    EXPECT_NE(dat.find("# series 1: 0.001\n0.2 \"buffering\" 27.0 26.0 28.0 3 "), std::string::npos) << dat;
    EXPECT_NE(dat.find("\n1.2 \"markers\" 17.0 16.0 18.0 3 "), std::string::npos) << dat;
    // Numeric x values become clusters too (in order); "none" draws no error bars.
    const plot_spec num = spec_from(
        R"({"x": "loss", "y": "g", "series": "path", "style": "bars", "error": "none", "references": [{"y": "20"}]})",
        t);
    const std::string gpn = script_of(num, aggregate_plot(num, t), "bars-num");
    EXPECT_NE(gpn.find("set xtics ('0.001' 0, '0.01' 1)\n"), std::string::npos) << gpn;
    EXPECT_EQ(gpn.find("yerrorbars"), std::string::npos) << gpn;
    EXPECT_NE(gpn.find("index 2 using 1:2 with lines lc rgb '#404040' dt 2 lw 2 title 'y = 20'"), std::string::npos)
        << gpn;
    // The default stays lines with error bars.
    const plot_spec lines = spec_from(R"({"x": "path", "y": "g", "series": "loss"})", t);
    const std::string gpl = script_of(lines, aggregate_plot(lines, t), "lines");
    EXPECT_NE(gpl.find("with yerrorlines"), std::string::npos) << gpl;
    EXPECT_EQ(gpl.find("boxes"), std::string::npos) << gpl;
}

TEST(PlotExpressions, ReportShowsNormalisedValuesAndReferences) {
    const table t = named_table();
    const plot_spec spec = spec_from(R"({"x": "loss", "y": "g", "where": {"path": "buffering"}, "y_divide": "buf",
      "references": [{"label": "k", "y": "x * 1000"}]})",
                                     t);
    const plot_data d = aggregate_plot(spec, t);
    report_figure f;
    f.spec = &spec;
    f.data = &d;
    const std::string md = report_markdown(t, {f}, "Intro.");
    EXPECT_NE(md.find("each run's g divided by `buf` before the mean and the spread"), std::string::npos) << md;
    EXPECT_NE(md.find("| loss | g / buf | k |\n|---:|---:|---:|\n| 0.001 | 0.1055 [0.1016, 0.1094] | 1 |\n"
                      "| 0.01 | 0.08594 [0.08203, 0.08984] | 10 |\n"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("Reference lines (dashed):\n\n- k: y = `x * 1000`\n"), std::string::npos) << md;
}
