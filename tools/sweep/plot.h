// Line plots from a sweep table (gnuplot, PNG and SVG) and the report page.
//
// A plot spec (in a sweep file's "plots" list, or a file given to --plot holding one spec, a list of them, or
// {"plots": [...]}):
//   { "x": "link.a_to_b.loss",          // an axis column (an axis key, a zip's name or a zip member's key)
//     "y": "goodput_gbps",              // a metric column
//     "series": "variant",              // optional: an axis column; one line per value
//     "where": { "rnic.buffer.capacity": 256 },   // optional: keep only rows with these axis values
//     "name": "goodput-vs-loss",        // optional: file stem (default: "<y>-vs-<x's last component>")
//     "title": "...", "x_label": "loss probability", "y_label": "goodput (Gb/s)",   // optional
//     "log_x": true, "log_y": false,    // optional
//     "y_min": 0, "y_max": 100,         // optional axis limits (in scaled units)
//     "y_scale": 0.0009765625,          // optional: y values are multiplied by this (bytes -> KiB); say so in y_label
//     "error": "minmax",                // error bars over seeds: "minmax" (default: min to max), "stddev"
//                                       // (mean +- sample standard deviation), "ci95" (mean +- the 95%
//                                       // confidence half-width, Student's t) or "none"
//     "style": "lines",                 // optional: "lines" (default: lines with error bars) or "bars" (one cluster
//                                       // of bars per x value, one bar per series, error bars on the bars)
//     "y_divide": "link.rate",          // optional expression: each run's y (after y_scale) is divided by it
//                                       // before the mean and the error bars are taken
//     "references": [ { "label": "line rate", "y": "min(x, 40)" } ] }   // optional: reference lines
// Expressions (expression.h) may use: x (the point's x value; numeric x only), an axis column (key, zip name or zip
// member) or a plain axis's "name", and a key of the sweep's "set". Their values must be numbers, or strings of a
// number and a unit ("10Gbps" is 10: units are not converted, and a name whose values carry different units is
// refused). References are in the plot's y units (after y_scale and y_divide) and may not use the x axis's columns;
// one using the series axis is drawn once per series, in its colour.
// Each point is the mean over the rows (seeds) with status ok at that x and series value. Every other axis must
// have one value left after "where" (else the plot is refused, naming the axis), so that a point never mixes runs of
// different scenarios. Numeric x values are placed by value (sorted); other x values are categories in axis order.
#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <utility>
#include <vector>

#include "expression.h"
#include "table.h"

namespace rnic::sweep {

struct plot_spec {
    enum class error_bars { minmax, stddev, ci95, none };
    enum class style { lines, bars };
    struct reference {
        std::string label;  // default: "y = " + the expression
        expression y;
        std::string field;  // "plots[0].references[1]"
    };
    std::string name;
    std::string title;
    std::string x;
    std::string y;
    std::string series;
    std::string series_label;  // the legend's title (default: the series axis with its unit)
    std::string x_label;
    std::string y_label;
    bool log_x = false;
    bool log_y = false;
    bool has_y_min = false;
    bool has_y_max = false;
    double y_min = 0.0;
    double y_max = 0.0;
    double y_scale = 1.0;
    error_bars error = error_bars::minmax;
    style style = style::lines;
    expression y_divide;  // empty: none
    std::vector<reference> references;
    std::vector<std::pair<std::string, boost::json::value>> where;
    std::string file;   // where it was defined, for messages: the file
    std::string field;  // and the field ("plots[0]")
};

// One spec, a list of them, or {"plots": [...]}. Throws InputError naming `file` and the field.
std::vector<plot_spec> parse_plots(const boost::json::value& v, const std::string& file, const std::string& field);

// Checks the spec's columns and its expressions' names against a table's columns and the sweep's "set", and fills
// defaults (name, labels); throws InputError.
using set_values = std::vector<std::pair<std::string, boost::json::value>>;
void resolve_plot(plot_spec& spec, const std::vector<column>& columns, const std::string& file,
                  const set_values& set = {});
// resolve_plot for every spec, and no two with the same name.
void resolve_plots(std::vector<plot_spec>& specs, const std::vector<column>& columns, const std::string& file,
                   const set_values& set = {});

// The number a plot expression reads from a value: a number, or the number of a string "<number><unit>" ("10Gbps"
// gives 10, unit "Gbps"). False for anything else.
bool expression_number(const boost::json::value& v, double* number, std::string* unit);

// The aggregated points of one plot.
struct plot_point {
    boost::json::value x;   // the x value (a number, or a category)
    double position = 0.0;  // where it is drawn on the x axis
    std::size_t n = 0;      // rows (seeds) averaged
    double mean = 0.0;
    double min = 0.0;
    double max = 0.0;
    double stddev = 0.0;  // sample standard deviation (0 when n == 1)
    double ci95 = 0.0;    // half-width of the two-sided 95% confidence interval of the mean (0 when n == 1)
    double low() const;   // error bar ends for the spec's ErrorBars
    double high() const;
    plot_spec::error_bars bars = plot_spec::error_bars::minmax;
};
struct plot_series {
    boost::json::value value;  // the series value (null when the plot has no series)
    std::string title;
    std::vector<plot_point> points;
};
// One drawn reference line: a spec's reference, for one series when it uses the series axis.
struct reference_line {
    std::size_t reference = 0;  // index into spec.references
    int series = -1;            // index into PlotData::series, -1 when it does not depend on the series
    std::string title;
    std::vector<std::pair<double, double>> points;  // (x position, y), sorted by x, non-finite values left out
    std::string values;  // the names it used and their values, for the report ("rate = 10 Gbps")
};
struct plot_data {
    bool categorical_x = false;
    std::vector<boost::json::value> x_values;  // in drawing order
    std::vector<plot_series> series;
    std::vector<reference_line> references;
    std::vector<std::string> warnings;  // e.g. points dropped by log_x
};
plot_data aggregate_plot(const plot_spec& spec, const table& table);

// Writes DIR/NAME.dat and DIR/NAME.gp and runs gnuplot (PATH lookup unless `gnuplot` holds a path), which writes
// DIR/NAME.png and DIR/NAME.svg. Returns "" on success, else what went wrong (gnuplot missing, its error output).
std::string render_plot(const plot_spec& spec, const plot_data& data, const std::string& dir,
                        const std::string& gnuplot = "gnuplot");

// report.md: a summary of the sweep, each figure (relative links) with its table of means, the runs table.
struct report_figure {
    const plot_spec* spec = nullptr;
    const plot_data* data = nullptr;
    std::string png;  // relative to the report
    std::string svg;
    std::string problem;  // "" when the figure was drawn
};
std::string report_markdown(const table& table, const std::vector<report_figure>& figures, const std::string& intro);

// Markdown table cell: '|' escaped, newlines as spaces.
std::string markdown_cell(const std::string& text);

}  // namespace rnic::sweep
