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
Table sample_table() {
  Table t;
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
        const double g =
            (std::string(path) == "markers" ? 10.0 : 20.0) + (loss == 0.01 ? 0.0 : 5.0) + static_cast<double>(seed);
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

PlotSpec spec_from(const std::string& text, const Table& t) {
  std::vector<PlotSpec> specs = parse_plots(json::parse(text), "p.json", "plots");
  resolve_plots(specs, t.columns, "p.json");
  return specs.front();
}

std::string resolve_error(const std::string& text, const Table& t) {
  try {
    (void)spec_from(text, t);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string aggregate_error(const std::string& text, const Table& t) {
  try {
    (void)aggregate_plot(spec_from(text, t), t);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Plot, MeanAndMinMaxOverSeedsPerSeries) {
  const Table t = sample_table();
  const PlotSpec spec = spec_from(R"({"x": "loss", "y": "g", "series": "path"})", t);
  EXPECT_EQ(spec.name, "g-vs-loss");
  EXPECT_EQ(spec.y_label, "g (Gb/s)");
  EXPECT_EQ(spec.x_label, "loss");
  const PlotData d = aggregate_plot(spec, t);
  EXPECT_FALSE(d.categorical_x);
  ASSERT_EQ(d.x_values.size(), 2u);
  EXPECT_EQ(value_text(d.x_values[0]), "0.001");  // numbers sorted
  ASSERT_EQ(d.series.size(), 2u);
  EXPECT_EQ(d.series[0].title, "buffering");
  EXPECT_EQ(d.series[1].title, "markers");
  ASSERT_EQ(d.series[1].points.size(), 2u);
  const PlotPoint& p = d.series[1].points[0];  // markers, loss 0.001: 15 + seed
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
  Table t = sample_table();
  t.rows[0][7] = "failed 1";  // loss 0.01, buffering, seed 1
  const PlotSpec spec =
      spec_from(R"({"x": "loss", "y": "g", "where": {"path": "buffering"}, "error": "stddev", "y_scale": 0.5})", t);
  const PlotData d = aggregate_plot(spec, t);
  ASSERT_EQ(d.series.size(), 1u);
  const PlotPoint& p = d.series[0].points[1];  // loss 0.01: seeds 2 and 3 -> 22, 23 scaled by 0.5
  EXPECT_EQ(p.n, 2u);
  EXPECT_DOUBLE_EQ(p.mean, 11.25);
  EXPECT_DOUBLE_EQ(p.stddev, std::sqrt(0.125));
  EXPECT_DOUBLE_EQ(p.low(), 11.25 - std::sqrt(0.125));
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0], "plot g-vs-loss: 1 run(s) not ok left out");
}

// 95% confidence bars: the mean +- t(n-1) s / sqrt(n); with one run there is no interval.
TEST(Plot, Ci95BarsUseStudentsT) {
  Table t = sample_table();
  const PlotSpec spec = spec_from(R"({"x": "loss", "y": "g", "series": "path", "error": "ci95"})", t);
  const PlotData d = aggregate_plot(spec, t);
  const PlotPoint& p = d.series[1].points[0];  // markers, loss 0.001: 16, 17, 18
  EXPECT_EQ(p.n, 3u);
  EXPECT_DOUBLE_EQ(p.ci95, 4.303 * 1.0 / std::sqrt(3.0));  // t(2) = 4.303
  EXPECT_DOUBLE_EQ(p.low(), 17.0 - p.ci95);
  EXPECT_DOUBLE_EQ(p.high(), 17.0 + p.ci95);
  t.rows[0][7] = "failed 1";  // loss 0.01, buffering: seeds 1 and 2 fail, seed 3 (23) is left
  t.rows[1][7] = "failed 1";
  const PlotData one =
      aggregate_plot(spec_from(R"({"x": "loss", "y": "g", "where": {"path": "buffering"}, "error": "ci95"})", t), t);
  const PlotPoint& q = one.series[0].points[1];  // loss 0.01
  ASSERT_EQ(q.n, 1u);
  EXPECT_DOUBLE_EQ(q.mean, 23.0);
  EXPECT_DOUBLE_EQ(q.low(), 23.0);
  EXPECT_DOUBLE_EQ(q.high(), 23.0);
}

TEST(Plot, CategoricalX) {
  const Table t = sample_table();
  const PlotData d = aggregate_plot(spec_from(R"({"x": "path", "y": "g", "series": "loss", "log_x": true})", t), t);
  EXPECT_TRUE(d.categorical_x);
  ASSERT_EQ(d.x_values.size(), 2u);
  EXPECT_EQ(value_text(d.x_values[1]), "markers");
  EXPECT_DOUBLE_EQ(d.series[0].points[1].position, 1.0);
  EXPECT_EQ(d.series[0].title, "0.01");  // series in run order
  ASSERT_FALSE(d.warnings.empty());
  EXPECT_EQ(d.warnings[0], "plot g-vs-path: log_x ignored, x values are not all numbers");
}

TEST(Plot, ZipMemberAsX) {
  const Table t = sample_table();
  const PlotData d = aggregate_plot(spec_from(R"({"x": "markers", "y": "g", "series": "loss"})", t), t);
  EXPECT_TRUE(d.categorical_x);
  EXPECT_EQ(d.series.size(), 2u);
}

TEST(Plot, SpecErrors) {
  const Table t = sample_table();
  EXPECT_EQ(resolve_error(R"({"x": "lost", "y": "g"})", t),
            "p.json: plots.x: 'lost' is not an axis (axes: loss, path, markers, cap)");
  EXPECT_EQ(resolve_error(R"({"x": "loss", "y": "seed"})", t), "p.json: plots.y: 'seed' is not a metric (metrics: g)");
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
  const Table t = sample_table();
  EXPECT_EQ(spec_from(R"({"x": "loss", "y": "g", "series": "path"})", t).series_label, "path");
  const PlotSpec spec = spec_from(R"({"x": "loss", "y": "g", "series": "path", "series_label": "receive path"})", t);
  EXPECT_EQ(spec.series_label, "receive path");
  const PlotData d = aggregate_plot(spec, t);
  const std::string dir = ::testing::TempDir() + "series-label";
  std::filesystem::create_directories(dir);
  render_plot(spec, d, dir, "true");  // writes the script; `true` draws nothing
  std::ifstream in(dir + "/" + spec.name + ".gp");
  const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(script.find("vertical title 'receive path' box"), std::string::npos) << script;
  EXPECT_EQ(script.find("title 'path'"), std::string::npos) << script;
}

TEST(Plot, ReportShowsFiguresAndTables) {
  const Table t = sample_table();
  const PlotSpec spec = spec_from(R"({"x": "loss", "y": "g", "series": "path", "title": "G | loss"})", t);
  const PlotData d = aggregate_plot(spec, t);
  ReportFigure f;
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
  EXPECT_NE(md.find("| 0 | [r0](runs/r0/) | 0.01 | buffering | false | 256 | 1 | ok | 21 |"), std::string::npos) << md;
  EXPECT_EQ(markdown_cell("a|b\nc"), "a\\|b c");

  ReportFigure missing = f;
  missing.problem = "cannot run gnuplot";
  const std::string md2 = report_markdown(t, {missing}, "Intro.");
  EXPECT_NE(md2.find("*No figure: cannot run gnuplot*"), std::string::npos);
}
