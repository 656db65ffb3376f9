// Plot specs (parsing, checking against a table, their expressions' names) and the aggregation of a sweep's rows
// into the points, error bars and reference lines of each figure (drawing: plot_render.cpp).
#include "plot.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "common.h"
#include "config/json_text.h"

namespace rnic::sweep {
namespace json = boost::json;

namespace {

std::string sub(const std::string& field, const std::string& key) {
    return field.empty() ? key : field + "." + key;
}

expression parse_expression(const std::string& text, const std::string& file, const std::string& field) {
    try {
        return expression::parse(text);
    } catch (const expression_error& e) {
        throw input_error(file, field, "'" + text + "' does not parse: " + e.what());
    }
}

std::string get_string(const json::object& o, const char* key, const std::string& file, const std::string& field) {
    const json::value* v = o.if_contains(key);
    if (v == nullptr) return "";
    if (!v->is_string()) throw input_error(file, sub(field, key), "expected a string, got " + config::brief_json(*v));
    return std::string(v->get_string());
}

bool get_bool(const json::object& o, const char* key, const std::string& file, const std::string& field) {
    const json::value* v = o.if_contains(key);
    if (v == nullptr) return false;
    if (!v->is_bool())
        throw input_error(file, sub(field, key), "expected true or false, got " + config::brief_json(*v));
    return v->get_bool();
}

plot_spec parse_plot(const json::value& v, const std::string& file, const std::string& field) {
    if (!v.is_object()) throw input_error(file, field, "expected a plot object, got " + config::brief_json(v));
    const json::object& o = v.get_object();
    static const char* const allowed[] = {"name",    "title",   "x",     "y",     "series",   "series_label",
                                          "x_label", "y_label", "log_x", "log_y", "y_min",    "y_max",
                                          "y_scale", "error",   "where", "style", "y_divide", "references"};
    for (const auto& kv : o) {
        if (std::find(std::begin(allowed), std::end(allowed), kv.key()) == std::end(allowed)) {
            throw input_error(file, sub(field, std::string(kv.key())),
                              "unknown field (expected one of: name, title, x, y, series, series_label, x_label, "
                              "y_label, log_x, log_y, "
                              "y_min, y_max, y_scale, error, where, style, y_divide, references)");
        }
    }
    plot_spec p;
    p.file = file;
    p.field = field;
    p.x = get_string(o, "x", file, field);
    p.y = get_string(o, "y", file, field);
    if (p.x.empty()) throw input_error(file, sub(field, "x"), "missing");
    if (p.y.empty()) throw input_error(file, sub(field, "y"), "missing");
    p.series = get_string(o, "series", file, field);
    p.series_label = get_string(o, "series_label", file, field);
    p.name = get_string(o, "name", file, field);
    if (!p.name.empty() && sanitize_name(p.name, 1000) != p.name) {
        throw input_error(file, sub(field, "name"), "use letters, digits, '.', '_', '+' and '-' only (it names files)");
    }
    p.title = get_string(o, "title", file, field);
    p.x_label = get_string(o, "x_label", file, field);
    p.y_label = get_string(o, "y_label", file, field);
    p.log_x = get_bool(o, "log_x", file, field);
    p.log_y = get_bool(o, "log_y", file, field);
    for (const char* key : {"y_min", "y_max"}) {
        if (const json::value* lim = o.if_contains(key)) {
            if (!is_number(*lim)) throw input_error(file, sub(field, key), "expected a number");
            (std::string(key) == "y_min" ? p.y_min : p.y_max) = as_number(*lim);
            (std::string(key) == "y_min" ? p.has_y_min : p.has_y_max) = true;
        }
    }
    if (const json::value* sc = o.if_contains("y_scale")) {
        if (!is_number(*sc) || !(as_number(*sc) > 0.0) || !std::isfinite(as_number(*sc))) {
            throw input_error(file, sub(field, "y_scale"), "expected a number > 0");
        }
        p.y_scale = as_number(*sc);
    }
    if (p.has_y_min && p.has_y_max && p.y_min >= p.y_max)
        throw input_error(file, sub(field, "y_max"), "not above y_min");
    const std::string error = get_string(o, "error", file, field);
    if (error.empty() || error == "minmax")
        p.error = plot_spec::error_bars::minmax;
    else if (error == "stddev")
        p.error = plot_spec::error_bars::stddev;
    else if (error == "ci95")
        p.error = plot_spec::error_bars::ci95;
    else if (error == "none")
        p.error = plot_spec::error_bars::none;
    else
        throw input_error(file, sub(field, "error"), "expected \"minmax\", \"stddev\", \"ci95\" or \"none\"");
    if (const json::value* w = o.if_contains("where")) {
        if (!w->is_object()) throw input_error(file, sub(field, "where"), "expected an object {axis: value}");
        for (const auto& kv : w->get_object()) p.where.emplace_back(std::string(kv.key()), kv.value());
    }
    const std::string style = get_string(o, "style", file, field);
    if (style.empty() || style == "lines")
        p.style = plot_spec::style::lines;
    else if (style == "bars")
        p.style = plot_spec::style::bars;
    else
        throw input_error(file, sub(field, "style"), "expected \"lines\" or \"bars\"");
    if (p.style == plot_spec::style::bars && (p.log_x || p.log_y)) {
        throw input_error(file, sub(field, p.log_x ? "log_x" : "log_y"), "not with \"style\": \"bars\"");
    }
    if (o.contains("y_divide")) {
        const std::string text = get_string(o, "y_divide", file, field);
        p.y_divide = parse_expression(text, file, sub(field, "y_divide"));
    }
    if (const json::value* refs = o.if_contains("references")) {
        if (!refs->is_array()) {
            throw input_error(file, sub(field, "references"), "expected a list of {\"label\": ..., \"y\": expression}");
        }
        for (std::size_t i = 0; i < refs->get_array().size(); ++i) {
            const std::string rf = sub(field, "references") + "[" + std::to_string(i) + "]";
            const json::value& r = refs->get_array()[i];
            if (!r.is_object()) throw input_error(file, rf, "expected {\"label\": ..., \"y\": expression}");
            for (const auto& kv : r.get_object()) {
                if (kv.key() != "label" && kv.key() != "y") {
                    throw input_error(file, sub(rf, std::string(kv.key())), "unknown field (expected label, y)");
                }
            }
            if (!r.get_object().contains("y")) throw input_error(file, sub(rf, "y"), "missing");
            plot_spec::reference ref;
            ref.field = rf;
            ref.y = parse_expression(get_string(r.get_object(), "y", file, rf), file, sub(rf, "y"));
            ref.label = get_string(r.get_object(), "label", file, rf);
            if (ref.label.empty()) ref.label = "y = " + ref.y.text();
            p.references.push_back(std::move(ref));
        }
    }
    return p;
}

// Where a name of an expression takes its value from.
struct name_source {
    enum class kind { x, column, set } kind = kind::x;
    int column = -1;      // Kind::column: index into the columns
    std::size_t set = 0;  // Kind::set: index into the set values
};

// "x", an axis column, a plain axis's "name" (alias), a "set" key, or (with `metrics`: y_divide) a metric column;
// else InputError naming `file` and `field`.
name_source find_name(const std::string& name, const std::vector<column>& columns, const set_values& set, bool metrics,
                      const std::string& file, const std::string& field) {
    if (name == "x") return {};
    for (std::size_t c = 0; c < columns.size(); ++c) {
        if (columns[c].name != name) continue;
        if (columns[c].kind == "axis" || (metrics && columns[c].kind == "metric")) {
            return {name_source::kind::column, static_cast<int>(c), 0};
        }
        throw input_error(file, field,
                          "'" + name + "' is a " + columns[c].kind + " column; " +
                              (columns[c].kind == "metric" ? "only y_divide may use metrics"
                                                           : "expressions use x, axes and \"set\" keys"));
    }
    int found = -1;
    for (std::size_t c = 0; c < columns.size(); ++c) {
        if (columns[c].kind != "axis" || columns[c].alias != name) continue;
        if (found >= 0) {
            throw input_error(file, field,
                              "'" + name + "' names two axes (" + columns[static_cast<std::size_t>(found)].name + ", " +
                                  columns[c].name + "); use the key");
        }
        found = static_cast<int>(c);
    }
    if (found >= 0) return {name_source::kind::column, found, 0};
    for (std::size_t i = 0; i < set.size(); ++i) {
        if (set[i].first == name) return {name_source::kind::set, -1, i};
    }
    std::string names = "x";
    for (const column& c : columns) {
        if (c.kind != "axis") continue;
        names += ", " + c.name;
        if (!c.alias.empty()) names += " (" + c.alias + ")";
    }
    for (const auto& kv : set) names += ", " + kv.first;
    if (metrics) {
        for (const column& c : columns) {
            if (c.kind == "metric") names += ", " + c.name;
        }
    }
    throw input_error(file, field, "unknown name '" + name + "' (names: " + names + ")");
}

std::string last_component(const std::string& key) {
    const std::size_t dot = key.rfind('.');
    return dot == std::string::npos ? key : key.substr(dot + 1);
}

}  // namespace

namespace {

// Two-sided 95% quantile of Student's t with `dof` degrees of freedom (the normal 1.96 beyond 30;
// a table of the standard values, rounded to 3 decimals, rounded up between its entries).
double student_t95(std::size_t dof) {
    static const double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                    2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                    2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (dof == 0) return 0.0;
    return dof <= 30 ? kTable[dof - 1] : 1.96;
}

}  // namespace

double plot_point::low() const {
    if (bars == plot_spec::error_bars::stddev) return mean - stddev;
    if (bars == plot_spec::error_bars::ci95) return mean - ci95;
    if (bars == plot_spec::error_bars::none) return mean;
    return min;
}
double plot_point::high() const {
    if (bars == plot_spec::error_bars::stddev) return mean + stddev;
    if (bars == plot_spec::error_bars::ci95) return mean + ci95;
    if (bars == plot_spec::error_bars::none) return mean;
    return max;
}

std::vector<plot_spec> parse_plots(const json::value& v, const std::string& file, const std::string& field) {
    std::vector<plot_spec> specs;
    if (v.is_array()) {
        for (std::size_t i = 0; i < v.get_array().size(); ++i) {
            specs.push_back(parse_plot(v.get_array()[i], file, field + "[" + std::to_string(i) + "]"));
        }
    } else if (v.is_object() && v.get_object().contains("plots")) {
        if (v.get_object().size() != 1)
            throw input_error(file, "", "a plot file holds {\"plots\": [...]} and nothing else");
        return parse_plots(v.get_object().at("plots"), file, sub(field, "plots"));
    } else {
        specs.push_back(parse_plot(v, file, field));
    }
    return specs;
}

void resolve_plot(plot_spec& spec, const std::vector<column>& columns, const std::string& file, const set_values& set) {
    auto find = [&](const std::string& name) -> const column* {
        for (const column& c : columns) {
            if (c.name == name) return &c;
        }
        return nullptr;
    };
    std::string axes;
    std::string metrics;
    for (const column& c : columns) {
        if (c.kind == "axis") axes += (axes.empty() ? "" : ", ") + c.name;
        if (c.kind == "metric") metrics += (metrics.empty() ? "" : ", ") + c.name;
    }
    const column* x = find(spec.x);
    if (x == nullptr || x->kind != "axis") {
        throw input_error(file, sub(spec.field, "x"), "'" + spec.x + "' is not an axis (axes: " + axes + ")");
    }
    const column* y = find(spec.y);
    if (y == nullptr || y->kind != "metric") {
        throw input_error(file, sub(spec.field, "y"), "'" + spec.y + "' is not a metric (metrics: " + metrics + ")");
    }
    if (!spec.series.empty()) {
        const column* s = find(spec.series);
        if (s == nullptr || s->kind != "axis") {
            throw input_error(file, sub(spec.field, "series"),
                              "'" + spec.series + "' is not an axis (axes: " + axes + ")");
        }
        if (s->group == x->group) throw input_error(file, sub(spec.field, "series"), "is the same axis as x");
        if (spec.series_label.empty()) spec.series_label = with_unit(spec.series, s->unit);
    } else if (!spec.series_label.empty()) {
        throw input_error(file, sub(spec.field, "series_label"), "given without a series");
    }
    for (const auto& w : spec.where) {
        const column* c = find(w.first);
        if (c == nullptr || c->kind != "axis") {
            throw input_error(file, sub(spec.field, "where." + w.first), "not an axis (axes: " + axes + ")");
        }
    }
    for (const std::string& n : spec.y_divide.names()) {
        (void)find_name(n, columns, set, true, file, sub(spec.field, "y_divide"));
    }
    for (const plot_spec::reference& r : spec.references) {
        for (const std::string& n : r.y.names()) {
            const name_source src = find_name(n, columns, set, false, file, sub(r.field, "y"));
            if (src.kind == name_source::kind::column &&
                columns[static_cast<std::size_t>(src.column)].group == x->group) {
                throw input_error(
                    file, sub(r.field, "y"),
                    "'" + n + "' changes with the x axis '" + x->group + "'; a reference may use x itself");
            }
        }
        if (spec.style == plot_spec::style::bars && r.y.uses("x")) {
            throw input_error(file, sub(r.field, "y"), "uses x, but bars place the x values as categories");
        }
    }
    if (spec.name.empty()) spec.name = sanitize_name(spec.y + "-vs-" + last_component(spec.x), 80);
    if (spec.x_label.empty()) spec.x_label = with_unit(spec.x, x->unit);
    if (spec.y_label.empty() && !spec.y_divide.empty()) {
        const std::string& d = spec.y_divide.text();
        const bool plain = d.find_first_of("+-*/( ") == std::string::npos;
        spec.y_label = spec.y + " / " + (plain ? d : "(" + d + ")");
    }
    if (spec.y_label.empty()) spec.y_label = with_unit(spec.y, y->unit);
    if (spec.title.empty()) spec.title = spec.y_label + " vs " + spec.x_label;
    spec.file = file;
}

void resolve_plots(std::vector<plot_spec>& specs, const std::vector<column>& columns, const std::string& file,
                   const set_values& set) {
    std::set<std::string> names;
    for (plot_spec& s : specs) {
        resolve_plot(s, columns, s.file.empty() ? file : s.file, set);
        if (!names.insert(s.name).second) {
            throw input_error(s.file, sub(s.field, "name"), "another plot is named '" + s.name + "' (give \"name\")");
        }
    }
}

namespace {

using plot_row = std::vector<json::value>;

// The names of one expression, where they come from and their unit, checked against the plotted runs.
struct bound_expression {
    const sweep::expression* expression = nullptr;
    std::vector<name_source> sources;
    std::vector<std::string> units;  // per name ("" for x and unitless values)
    bool metrics = false;            // uses a metric column (y_divide): its value differs from run to run
};

bound_expression bind_names(const expression& e, const table& table, const std::vector<const plot_row*>& rows,
                            bool categorical_x, bool metrics, const std::string& file, const std::string& field) {
    bound_expression b;
    b.expression = &e;
    for (const std::string& n : e.names()) {
        const name_source src = find_name(n, table.columns, table.set, metrics, file, field);
        if (src.kind == name_source::kind::column &&
            table.columns[static_cast<std::size_t>(src.column)].kind == "metric") {
            // A measured value: a run without it (or with a non-number) is left out of the plot, not refused.
            b.sources.push_back(src);
            b.units.push_back(table.columns[static_cast<std::size_t>(src.column)].unit);
            b.metrics = true;
            continue;
        }
        if (src.kind == name_source::kind::x && categorical_x) {
            throw input_error(file, field, "uses x, but the x values are not all numbers");
        }
        std::set<std::string> units;
        auto check = [&](const json::value& v, const std::string& column_unit) {
            double number = 0.0;
            std::string unit;
            if (!expression_number(v, &number, &unit)) {
                throw input_error(file, field,
                                  "'" + n + "' is not a number (" +
                                      (v.is_string() ? config::quote(v.get_string()) : value_text(v)) + ")");
            }
            units.insert(unit.empty() ? column_unit : unit);
        };
        if (src.kind == name_source::kind::set) check(table.set[src.set].second, "");
        if (src.kind == name_source::kind::column) {
            const column& c = table.columns[static_cast<std::size_t>(src.column)];
            for (const plot_row* row : rows) check((*row)[static_cast<std::size_t>(src.column)], c.unit);
        }
        if (units.size() > 1) {
            std::string list;
            for (const std::string& u : units) list += (list.empty() ? "" : ", ") + (u.empty() ? "none" : u);
            throw input_error(file, field,
                              "'" + n + "' has values in different units (" + list + "); units are not converted");
        }
        b.sources.push_back(src);
        b.units.push_back(units.empty() ? std::string() : *units.begin());
    }
    return b;
}

double value_of(const bound_expression& b, std::size_t i, const table& table, const plot_row& row, double x) {
    const name_source& src = b.sources[i];
    if (src.kind == name_source::kind::x) return x;
    const json::value& v =
        src.kind == name_source::kind::set ? table.set[src.set].second : row[static_cast<std::size_t>(src.column)];
    double number = 0.0;
    (void)expression_number(v, &number, nullptr);  // bind_names checked it is a number
    return number;
}

double evaluate(const bound_expression& b, const table& table, const plot_row& row, double x) {
    return b.expression->evaluate([&](std::size_t i) { return value_of(b, i, table, row, x); });
}

// "rate = 10 Gbps, link.propagation = 500 ns": the values a reference line was drawn with (x left out).
std::string values_text(const bound_expression& b, const table& table, const plot_row& row) {
    std::string out;
    for (std::size_t i = 0; i < b.sources.size(); ++i) {
        if (b.sources[i].kind == name_source::kind::x) continue;
        const name_source& src = b.sources[i];
        if (src.kind == name_source::kind::set) {
            out += (out.empty() ? "" : ", ") + b.expression->names()[i] + " = " + value_text(table.set[src.set].second);
            continue;
        }
        const json::value& v = row[static_cast<std::size_t>(src.column)];
        out += (out.empty() ? "" : ", ") + b.expression->names()[i] + " = " + value_text(v);
        if (is_number(v) && !b.units[i].empty()) out += " " + b.units[i];
    }
    return out;
}

// The reference lines of a spec, sampled over the plot's x range: at the data's x values and at 200 points between
// the ends (evenly, or evenly in log scale with log_x); on categories (and bars) a level line across the plot.
void add_references(const plot_spec& spec, const table& table, const std::vector<const plot_row*>& rows,
                    const std::string& s_group, int si, plot_data& data) {
    if (rows.empty()) return;
    const bool level = data.categorical_x || spec.style == plot_spec::style::bars;
    std::vector<double> xs;
    if (level) {
        xs = {-0.5, static_cast<double>(data.x_values.size()) - 0.5};
    } else {
        for (const json::value& x : data.x_values) {
            if (!spec.log_x || as_number(x) > 0.0) xs.push_back(as_number(x));
        }
        if (xs.size() >= 2) {
            const double lo = xs.front();
            const double hi = xs.back();
            constexpr int kSamples = 200;
            for (int i = 1; i < kSamples; ++i) {
                const double f = static_cast<double>(i) / kSamples;
                xs.push_back(spec.log_x ? lo * std::pow(hi / lo, f) : lo + (hi - lo) * f);
            }
            std::sort(xs.begin(), xs.end());
            xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
        }
    }
    for (std::size_t r = 0; r < spec.references.size(); ++r) {
        const plot_spec::reference& ref = spec.references[r];
        const bound_expression b =
            bind_names(ref.y, table, rows, data.categorical_x, false, spec.file, sub(ref.field, "y"));
        bool per_series = false;
        for (const name_source& src : b.sources) {
            per_series = per_series || (src.kind == name_source::kind::column && !s_group.empty() &&
                                        table.columns[static_cast<std::size_t>(src.column)].group == s_group);
        }
        for (int k = per_series ? 0 : -1; k < (per_series ? static_cast<int>(data.series.size()) : 0); ++k) {
            const plot_row* row = rows.front();
            if (k >= 0) {
                for (const plot_row* candidate : rows) {
                    if (same_value((*candidate)[static_cast<std::size_t>(si)],
                                   data.series[static_cast<std::size_t>(k)].value)) {
                        row = candidate;
                        break;
                    }
                }
            }
            reference_line line;
            line.reference = r;
            line.series = k;
            line.title = k < 0 ? ref.label : ref.label + " (" + data.series[static_cast<std::size_t>(k)].title + ")";
            line.values = values_text(b, table, *row);
            for (double x : xs) {
                const double y = evaluate(b, table, *row, x);
                if (!std::isfinite(y) || (spec.log_y && y <= 0.0)) continue;
                line.points.emplace_back(x, y);
            }
            if (line.points.empty()) {
                data.warnings.push_back("plot " + spec.name + ": reference '" + line.title + "' has no finite value" +
                                        (spec.log_y ? " above 0" : "") + " to draw");
            }
            data.references.push_back(std::move(line));
        }
    }
}

}  // namespace

bool expression_number(const json::value& v, double* number, std::string* unit) {
    if (is_number(v)) {
        if (number != nullptr) *number = as_number(v);
        if (unit != nullptr) unit->clear();
        return true;
    }
    if (!v.is_string()) return false;
    const std::string text(v.get_string());
    auto digit = [&](std::size_t i) {
        return i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0;
    };
    // [-]digits[.digits][e[+-]digits], then letters only: the sweep file's "<number><unit>" ("10Gbps", "0.5us").
    std::size_t n = text.size() > 0 && text[0] == '-' ? 1 : 0;
    std::size_t digits = 0;
    for (; digit(n); ++n) ++digits;
    if (n < text.size() && text[n] == '.') {
        for (++n; digit(n); ++n) ++digits;
    }
    if (digits == 0) return false;
    if (n < text.size() && (text[n] == 'e' || text[n] == 'E')) {
        const std::size_t exp = n + 1 < text.size() && (text[n + 1] == '+' || text[n + 1] == '-') ? n + 2 : n + 1;
        if (digit(exp)) {
            for (n = exp; digit(n); ++n) {}
        }
    }
    for (std::size_t i = n; i < text.size(); ++i) {
        if (std::isalpha(static_cast<unsigned char>(text[i])) == 0) return false;
    }
    if (number != nullptr) *number = std::strtod(text.substr(0, n).c_str(), nullptr);
    if (unit != nullptr) *unit = text.substr(n);
    return true;
}

plot_data aggregate_plot(const plot_spec& spec, const table& table) {
    plot_data data;
    const int xi = table.column(spec.x);
    const int yi = table.column(spec.y);
    const int si = spec.series.empty() ? -1 : table.column(spec.series);
    const int sti = table.column("status");
    if (xi < 0 || yi < 0 || sti < 0 || (!spec.series.empty() && si < 0)) {
        throw input_error(spec.file, spec.field, "the table lacks a column this plot needs");
    }
    std::vector<std::pair<int, json::value>> where;
    for (const auto& w : spec.where) {
        const int c = table.column(w.first);
        if (c < 0) throw input_error(spec.file, sub(spec.field, "where." + w.first), "not a column of the table");
        where.emplace_back(c, w.second);
    }
    const std::string x_group = table.columns[static_cast<std::size_t>(xi)].group;
    const std::string s_group = si < 0 ? std::string() : table.columns[static_cast<std::size_t>(si)].group;

    std::vector<const std::vector<json::value>*> rows;
    std::size_t matched = 0;
    for (const auto& row : table.rows) {
        bool keep = true;
        for (const auto& w : where) keep = keep && same_value(row[static_cast<std::size_t>(w.first)], w.second);
        if (!keep) continue;
        ++matched;
        const json::value& st = row[static_cast<std::size_t>(sti)];
        if (st.is_string() && st.get_string() == "ok") rows.push_back(&row);
    }
    if (matched == 0) throw input_error(spec.file, sub(spec.field, "where"), "no row of the table matches");
    // Every other axis must be fixed: a point is a mean over seeds of one scenario, never over other axes.
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
        const column& col = table.columns[c];
        if (col.kind != "axis" || col.group == x_group || (!s_group.empty() && col.group == s_group)) continue;
        std::set<std::string> values;
        for (const auto* row : rows) values.insert(value_text((*row)[c]));
        if (values.size() > 1) {
            throw input_error(spec.file, spec.field,
                              "axis '" + col.group + "' has " + std::to_string(values.size()) +
                                  " values among the plotted runs; make it the series or fix it with \"where\": {\"" +
                                  col.name + "\": ...}");
        }
    }

    for (const auto* row : rows) {
        if (!is_number((*row)[static_cast<std::size_t>(xi)])) data.categorical_x = true;
    }
    // x values: numbers sorted; categories in the order of the runs (the axis order).
    for (const auto* row : rows) {
        const json::value& x = (*row)[static_cast<std::size_t>(xi)];
        const bool seen = std::any_of(data.x_values.begin(), data.x_values.end(),
                                      [&](const json::value& v) { return same_value(v, x); });
        if (!seen) data.x_values.push_back(x);
    }
    if (!data.categorical_x) {
        std::stable_sort(data.x_values.begin(), data.x_values.end(),
                         [](const json::value& a, const json::value& b) { return as_number(a) < as_number(b); });
    }
    if (spec.log_x && data.categorical_x) {
        data.warnings.push_back("plot " + spec.name + ": log_x ignored, x values are not all numbers");
    }
    // y_divide: one divisor per run, applied to that run's y before the mean and the error bars.
    std::map<const plot_row*, double> divisors;
    if (!spec.y_divide.empty()) {
        const std::string field = sub(spec.field, "y_divide");
        const bound_expression b = bind_names(spec.y_divide, table, rows, data.categorical_x, true, spec.file, field);
        const int idi = table.column("id");
        for (const plot_row* row : rows) {
            const json::value& x = (*row)[static_cast<std::size_t>(xi)];
            bool measured = true;
            for (const name_source& src : b.sources) {
                if (src.kind != name_source::kind::column) continue;
                const json::value& v = (*row)[static_cast<std::size_t>(src.column)];
                measured =
                    measured && (table.columns[static_cast<std::size_t>(src.column)].kind != "metric" || is_number(v));
            }
            const double d = measured ? evaluate(b, table, *row, data.categorical_x ? 0.0 : as_number(x)) : 0.0;
            if (b.metrics && (d == 0.0 || !std::isfinite(d))) {
                divisors[row] = std::nan("");  // a measured divisor missing or 0: this run is left out
                continue;
            }
            if (d == 0.0 || !std::isfinite(d)) {
                throw input_error(spec.file, field,
                                  "is " + format_number(d) + " for run " +
                                      (idi < 0 ? std::string("?") : value_text((*row)[static_cast<std::size_t>(idi)])) +
                                      " (x = " + value_text(x) + ")");
            }
            divisors[row] = d;
        }
    }
    std::size_t dropped_x = 0;
    std::size_t dropped_y = 0;
    std::size_t missing_y = 0;
    std::size_t missing_divisor = 0;
    for (const auto* row : rows) {
        const json::value series_value = si < 0 ? json::value(nullptr) : (*row)[static_cast<std::size_t>(si)];
        auto it = std::find_if(data.series.begin(), data.series.end(),
                               [&](const plot_series& s) { return same_value(s.value, series_value); });
        if (it == data.series.end()) {
            plot_series s;
            s.value = series_value;
            s.title = si < 0 ? spec.y_label : value_text(series_value);
            data.series.push_back(std::move(s));
        }
    }
    for (plot_series& s : data.series) {
        for (std::size_t xk = 0; xk < data.x_values.size(); ++xk) {
            const json::value& x = data.x_values[xk];
            std::vector<double> ys;
            for (const auto* row : rows) {
                if (si >= 0 && !same_value((*row)[static_cast<std::size_t>(si)], s.value)) continue;
                if (!same_value((*row)[static_cast<std::size_t>(xi)], x)) continue;
                const json::value& y = (*row)[static_cast<std::size_t>(yi)];
                if (!is_number(y)) {
                    ++missing_y;
                    continue;
                }
                if (!divisors.empty() && std::isnan(divisors.at(row))) {
                    ++missing_divisor;
                    continue;
                }
                ys.push_back(as_number(y) * spec.y_scale / (divisors.empty() ? 1.0 : divisors.at(row)));
            }
            if (ys.empty()) continue;
            plot_point p;
            p.bars = spec.error;
            p.x = x;
            p.position =
                data.categorical_x || spec.style == plot_spec::style::bars ? static_cast<double>(xk) : as_number(x);
            if (spec.log_x && !data.categorical_x && p.position <= 0.0) {
                ++dropped_x;
                continue;
            }
            p.n = ys.size();
            double sum = 0.0;
            p.min = ys.front();
            p.max = ys.front();
            for (double y : ys) {
                sum += y;
                p.min = std::min(p.min, y);
                p.max = std::max(p.max, y);
            }
            p.mean = sum / static_cast<double>(ys.size());
            if (ys.size() > 1) {
                double sq = 0.0;
                for (double y : ys) sq += (y - p.mean) * (y - p.mean);
                p.stddev = std::sqrt(sq / static_cast<double>(ys.size() - 1));
                p.ci95 = student_t95(ys.size() - 1) * p.stddev / std::sqrt(static_cast<double>(ys.size()));
            }
            if (spec.log_y && p.low() <= 0.0) {
                ++dropped_y;
                continue;
            }
            s.points.push_back(p);
        }
    }
    add_references(spec, table, rows, s_group, si, data);
    if (dropped_x > 0) {
        data.warnings.push_back("plot " + spec.name + ": log_x leaves out " + std::to_string(dropped_x) +
                                " point(s) with x <= 0 (their values are in the report's table)");
    }
    if (dropped_y > 0) {
        data.warnings.push_back("plot " + spec.name + ": log_y leaves out " + std::to_string(dropped_y) +
                                " point(s) reaching y <= 0");
    }
    if (missing_y > 0) {
        data.warnings.push_back("plot " + spec.name + ": " + std::to_string(missing_y) + " ok run(s) lack a value of " +
                                spec.y);
    }
    if (missing_divisor > 0) {
        data.warnings.push_back("plot " + spec.name + ": " + std::to_string(missing_divisor) +
                                " ok run(s) left out: y_divide (" + spec.y_divide.text() + ") has no value or is 0");
    }
    if (rows.size() < matched) {
        data.warnings.push_back("plot " + spec.name + ": " + std::to_string(matched - rows.size()) +
                                " run(s) not ok left out");
    }
    return data;
}

}  // namespace rnic::sweep
