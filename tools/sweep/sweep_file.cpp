#include "sweep_file.h"

#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <set>

#include "common.h"
#include "config/json_text.h"

namespace rnic::sweep {
namespace json = boost::json;

namespace {

constexpr std::size_t kMaxRuns = 1000000;
constexpr std::size_t kMaxAxisValues = 100000;

std::string join_names(std::initializer_list<const char*> names) {
    std::string out;
    for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
}

void check_fields(const json::object& o, std::initializer_list<const char*> allowed, const std::string& file,
                  const std::string& field) {
    for (const auto& kv : o) {
        bool known = false;
        for (const char* a : allowed) known = known || kv.key() == a;
        if (!known) {
            const std::string where = field.empty() ? std::string(kv.key()) : field + "." + std::string(kv.key());
            throw input_error(file, where, "unknown field (expected one of: " + join_names(allowed) + ")");
        }
    }
}

const json::object& as_object(const json::value& v, const std::string& file, const std::string& field) {
    if (!v.is_object()) throw input_error(file, field, "expected an object, got " + config::brief_json(v));
    return v.get_object();
}

std::string as_string(const json::value& v, const std::string& file, const std::string& field) {
    if (!v.is_string()) throw input_error(file, field, "expected a string, got " + config::brief_json(v));
    return std::string(v.get_string());
}

double as_double(const json::value& v, const std::string& file, const std::string& field) {
    if (!is_number(v)) throw input_error(file, field, "expected a number, got " + config::brief_json(v));
    const double d = as_number(v);
    if (!std::isfinite(d)) throw input_error(file, field, "expected a finite number");
    return d;
}

const json::value& required(const json::object& o, const char* key, const std::string& file, const std::string& field) {
    const json::value* v = o.if_contains(key);
    if (v == nullptr) throw input_error(file, field.empty() ? key : field + "." + key, "missing");
    return *v;
}

std::string sub(const std::string& field, const std::string& key) {
    return field.empty() ? key : field + "." + key;
}
std::string idx(const std::string& field, std::size_t i) {
    return field + "[" + std::to_string(i) + "]";
}

// 12 significant digits: from + i*step and the log spacing without binary noise (0.30000000000000004 -> 0.3).
double round12(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.12g", v);
    return std::strtod(buf, nullptr);
}

void check_key(const std::string& key, const std::string& file, const std::string& field) {
    if (key.empty()) throw input_error(file, field, "empty scenario key");
    for (char c : key) {
        if (c == '=' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            throw input_error(file, field, "scenario key '" + key + "' holds '=' or white space");
        }
    }
}

void check_value(const json::value& v, const std::string& unit, const std::string& file, const std::string& field) {
    if (v.is_null()) throw input_error(file, field, "null is not a value");
    const std::string text = value_text(v);
    if (text.find_first_of("\r\n") != std::string::npos) throw input_error(file, field, "value holds a line break");
    if (!unit.empty() && !is_number(v)) {
        throw input_error(file, field, "with a unit, values must be numbers, got " + config::brief_json(v));
    }
}

axis_key parse_axis_key(const json::object& o, const std::string& file, const std::string& field,
                        std::initializer_list<const char*> allowed) {
    check_fields(o, allowed, file, field);
    axis_key k;
    k.key = as_string(required(o, "key", file, field), file, sub(field, "key"));
    check_key(k.key, file, sub(field, "key"));
    if (const json::value* u = o.if_contains("unit")) {
        k.unit = as_string(*u, file, sub(field, "unit"));
        for (char c : k.unit) {
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '/')) {
                throw input_error(file, sub(field, "unit"), "a unit is letters only (e.g. KiB, us, Gbps)");
            }
        }
    }
    const int forms =
        (o.contains("values") ? 1 : 0) + (o.contains("range") ? 1 : 0) + (o.contains("log_range") ? 1 : 0);
    if (forms == 0) throw input_error(file, field, "needs one of values, range, log_range");
    if (forms > 1) throw input_error(file, field, "has more than one of values, range, log_range");
    if (const json::value* v = o.if_contains("values")) {
        if (!v->is_array())
            throw input_error(file, sub(field, "values"), "expected a list, got " + config::brief_json(*v));
        if (v->get_array().empty()) throw input_error(file, sub(field, "values"), "empty list");
        for (const json::value& e : v->get_array()) k.values.push_back(e);
    } else if (const json::value* r = o.if_contains("range")) {
        k.values = expand_range(*r, file, sub(field, "range"));
    } else {
        k.values = expand_log_range(o.at("log_range"), file, sub(field, "log_range"));
    }
    for (std::size_t i = 0; i < k.values.size(); ++i)
        check_value(k.values[i], k.unit, file, idx(sub(field, "values"), i));
    return k;
}

std::string last_component(const std::string& key) {
    const std::size_t dot = key.rfind('.');
    return dot == std::string::npos ? key : key.substr(dot + 1);
}

axis parse_axis(const json::value& v, const std::string& file, const std::string& field) {
    const json::object& o = as_object(v, file, field);
    axis axis;
    if (const json::value* z = o.if_contains("zip")) {
        check_fields(o, {"zip", "name", "labels"}, file, field);
        axis.zipped = true;
        if (!z->is_array() || z->get_array().empty())
            throw input_error(file, sub(field, "zip"), "expected a non-empty list");
        const json::array& members = z->get_array();
        for (std::size_t i = 0; i < members.size(); ++i) {
            const std::string mf = idx(sub(field, "zip"), i);
            axis.keys.push_back(parse_axis_key(as_object(members[i], file, mf), file, mf,
                                               {"key", "values", "range", "log_range", "unit"}));
            if (axis.keys.back().values.size() != axis.keys.front().values.size()) {
                throw input_error(file, mf,
                                  "has " + std::to_string(axis.keys.back().values.size()) + " values, but zip[0] has " +
                                      std::to_string(axis.keys.front().values.size()) +
                                      " (zipped lists must have equal lengths)");
            }
        }
        axis.name = as_string(required(o, "name", file, field), file, sub(field, "name"));
        if (axis.name.empty()) throw input_error(file, sub(field, "name"), "empty");
        axis.short_name = axis.name;
        if (const json::value* l = o.if_contains("labels")) {
            if (!l->is_array()) throw input_error(file, sub(field, "labels"), "expected a list of strings");
            const json::array& labels = l->get_array();
            if (labels.size() != axis.size()) {
                throw input_error(file, sub(field, "labels"),
                                  "has " + std::to_string(labels.size()) + " labels for " +
                                      std::to_string(axis.size()) + " zipped values");
            }
            for (std::size_t i = 0; i < labels.size(); ++i) {
                axis.labels.push_back(json::string(as_string(labels[i], file, idx(sub(field, "labels"), i))));
            }
        } else {
            axis.labels = axis.keys.front().values;
        }
        std::set<std::string> seen;
        for (std::size_t i = 0; i < axis.labels.size(); ++i) {
            if (!seen.insert(value_text(axis.labels[i])).second) {
                throw input_error(file, o.contains("labels") ? idx(sub(field, "labels"), i) : sub(field, "labels"),
                                  "label '" + value_text(axis.labels[i]) +
                                      "' appears twice (labels name the zipped points; give distinct \"labels\")");
            }
        }
    } else {
        axis.keys.push_back(parse_axis_key(o, file, field, {"key", "values", "range", "log_range", "unit", "name"}));
        axis.name = axis.keys.front().key;
        axis.short_name = last_component(axis.name);
        if (const json::value* n = o.if_contains("name")) {
            axis.short_name = as_string(*n, file, sub(field, "name"));
            if (axis.short_name.empty()) throw input_error(file, sub(field, "name"), "empty");
            axis.named = true;
        }
        axis.labels = axis.keys.front().values;
    }
    if (axis.size() > kMaxAxisValues) throw input_error(file, field, "more than 100000 values");
    return axis;
}

}  // namespace

std::vector<json::value> expand_range(const json::value& range, const std::string& file, const std::string& field) {
    const json::object& o = as_object(range, file, field);
    check_fields(o, {"from", "to", "step"}, file, field);
    const json::value& from = required(o, "from", file, field);
    const json::value& to = required(o, "to", file, field);
    const json::value& step = required(o, "step", file, field);
    const double f = as_double(from, file, sub(field, "from"));
    const double t = as_double(to, file, sub(field, "to"));
    const double s = as_double(step, file, sub(field, "step"));
    if (s == 0.0) throw input_error(file, sub(field, "step"), "must not be 0");
    const double steps = (t - f) / s;
    if (steps < -1e-9) {
        throw input_error(file, sub(field, "step"),
                          "bad range: step " + value_text(step) + " leads away from " + value_text(to));
    }
    const double count = std::floor(steps + 1e-9) + 1.0;
    if (count > static_cast<double>(kMaxAxisValues))
        throw input_error(file, field, "bad range: more than 100000 values");
    const auto n = static_cast<std::size_t>(count);
    std::vector<json::value> values;
    const bool integers = from.is_int64() && to.is_int64() && step.is_int64();
    for (std::size_t i = 0; i < n; ++i) {
        if (integers) {
            values.emplace_back(from.get_int64() + static_cast<std::int64_t>(i) * step.get_int64());
        } else {
            values.emplace_back(round12(f + static_cast<double>(i) * s));
        }
    }
    return values;
}

std::vector<json::value> expand_log_range(const json::value& range, const std::string& file, const std::string& field) {
    const json::object& o = as_object(range, file, field);
    check_fields(o, {"from", "to", "points", "integer"}, file, field);
    const double f = as_double(required(o, "from", file, field), file, sub(field, "from"));
    const double t = as_double(required(o, "to", file, field), file, sub(field, "to"));
    const json::value& pv = required(o, "points", file, field);
    if (!pv.is_int64())
        throw input_error(file, sub(field, "points"), "expected an integer, got " + config::brief_json(pv));
    const std::int64_t points = pv.get_int64();
    bool integer = false;
    if (const json::value* iv = o.if_contains("integer")) {
        if (!iv->is_bool()) throw input_error(file, sub(field, "integer"), "expected true or false");
        integer = iv->get_bool();
    }
    if (f <= 0.0) throw input_error(file, sub(field, "from"), "bad log range: must be greater than 0");
    if (t <= 0.0) throw input_error(file, sub(field, "to"), "bad log range: must be greater than 0");
    if (f == t) throw input_error(file, sub(field, "to"), "bad log range: equals from");
    if (points < 2) throw input_error(file, sub(field, "points"), "bad log range: at least 2 points");
    if (points > static_cast<std::int64_t>(kMaxAxisValues)) {
        throw input_error(file, sub(field, "points"), "bad log range: more than 100000 points");
    }
    std::vector<json::value> values;
    const double lf = std::log(f);
    const double lt = std::log(t);
    for (std::int64_t i = 0; i < points; ++i) {
        double v;
        if (i == 0)
            v = f;
        else if (i == points - 1)
            v = t;
        else
            v = round12(std::exp(lf + (lt - lf) * static_cast<double>(i) / static_cast<double>(points - 1)));
        if (integer) {
            const auto r = static_cast<std::int64_t>(std::llround(v));
            if (!values.empty() && values.back().get_int64() == r) {
                throw input_error(
                    file, sub(field, "points"),
                    "bad log range: rounding to integers gives " + std::to_string(r) + " twice; use fewer points");
            }
            values.emplace_back(r);
        } else {
            values.emplace_back(v);
        }
    }
    return values;
}

std::string set_value_text(const json::value& v, const std::string& unit) {
    if (unit.empty() || !is_number(v)) return value_text(v);
    std::string number = value_text(v);
    // 64.0 with "KiB" reads "64KiB" (unit values are parsed by rnic-sim, which accepts both).
    if (v.is_double() && number.size() > 2 && number.compare(number.size() - 2, 2, ".0") == 0) {
        number.resize(number.size() - 2);
    }
    return number + unit;
}

Sweep parse_sweep(std::string_view text, const std::string& file) {
    Sweep sw;
    sw.file = file;
    sw.text = std::string(text);
    if (auto err = config::parse_json_text(text, sw.source)) {
        throw input_error(file + ":" + std::to_string(err->line) + ":" + std::to_string(err->column) + ": " +
                          (err->key.empty() ? "" : err->key + ": ") + err->message);
    }
    const json::object& o = as_object(sw.source, file, "");
    check_fields(o, {"name", "base", "set", "axes", "seeds", "repetitions", "metrics", "plots"}, file, "");

    if (const json::value* n = o.if_contains("name")) {
        sw.name = as_string(*n, file, "name");
        if (sw.name.empty() || sanitize_name(sw.name, 1000) != sw.name || sw.name == "." || sw.name == "..") {
            throw input_error(file, "name",
                              "use letters, digits, '.', '_', '+' and '-' only (it names the output folder)");
        }
    } else {
        sw.name = sanitize_name(std::filesystem::path(file).stem().string());
    }

    sw.base = as_string(required(o, "base", file, ""), file, "base");
    if (sw.base.empty()) throw input_error(file, "base", "empty");
    if (sw.base.find_first_of("\r\n") != std::string::npos) throw input_error(file, "base", "holds a line break");

    std::set<std::string> keys;
    if (const json::value* s = o.if_contains("set")) {
        for (const auto& kv : as_object(*s, file, "set")) {
            const std::string key(kv.key());
            check_key(key, file, sub("set", key));
            check_value(kv.value(), "", file, sub("set", key));
            sw.set.emplace_back(key, kv.value());
            keys.insert(key);
        }
    }

    std::set<std::string> columns{"run", "id", "seed", "status"};
    if (const json::value* a = o.if_contains("axes")) {
        if (!a->is_array()) throw input_error(file, "axes", "expected a list, got " + config::brief_json(*a));
        const json::array& axes = a->get_array();
        for (std::size_t i = 0; i < axes.size(); ++i) {
            const std::string field = idx("axes", i);
            axis axis = parse_axis(axes[i], file, field);
            for (std::size_t k = 0; k < axis.keys.size(); ++k) {
                const std::string& key = axis.keys[k].key;
                const std::string kf = axis.zipped ? sub(idx(sub(field, "zip"), k), "key") : sub(field, "key");
                if (!keys.insert(key).second) {
                    throw input_error(file, kf, "'" + key + "' is set twice (in \"set\" or another axis)");
                }
                if (!columns.insert(key).second) throw input_error(file, kf, "'" + key + "' is already a column name");
            }
            if (axis.zipped && !columns.insert(axis.name).second) {
                throw input_error(file, sub(field, "name"), "'" + axis.name + "' is already a column name");
            }
            sw.axes.push_back(std::move(axis));
        }
    }

    const json::value* seeds = o.if_contains("seeds");
    const json::value* reps = o.if_contains("repetitions");
    if (seeds != nullptr && reps != nullptr) throw input_error(file, "repetitions", "give either seeds or repetitions");
    if (seeds != nullptr) {
        if (!seeds->is_array() || seeds->get_array().empty()) {
            throw input_error(file, "seeds", "expected a non-empty list of integers");
        }
        std::set<std::int64_t> seen;
        for (std::size_t i = 0; i < seeds->get_array().size(); ++i) {
            const json::value& s = seeds->get_array()[i];
            if (!s.is_int64() || s.get_int64() < 0) {
                throw input_error(file, idx("seeds", i), "expected an integer >= 0, got " + config::brief_json(s));
            }
            if (!seen.insert(s.get_int64()).second) throw input_error(file, idx("seeds", i), "seed given twice");
            sw.seeds.push_back(s.get_int64());
        }
    } else if (reps != nullptr) {
        if (!reps->is_int64() || reps->get_int64() < 1 || reps->get_int64() > 100000) {
            throw input_error(file, "repetitions",
                              "expected an integer from 1 to 100000, got " + config::brief_json(*reps));
        }
        for (std::int64_t s = 1; s <= reps->get_int64(); ++s) sw.seeds.push_back(s);
    } else {
        sw.seeds.push_back(1);
    }

    if (const json::value* m = o.if_contains("metrics")) {
        for (const auto& kv : as_object(*m, file, "metrics")) {
            metric metric;
            metric.name = std::string(kv.key());
            const std::string field = sub("metrics", metric.name);
            if (metric.name.empty()) throw input_error(file, field, "empty metric name");
            if (!columns.insert(metric.name).second) {
                throw input_error(file, field,
                                  "'" + metric.name + "' is already a column name (run, id, seed, status, axes)");
            }
            std::string path_text;
            if (kv.value().is_string()) {
                path_text = std::string(kv.value().get_string());
            } else {
                const json::object& mo = as_object(kv.value(), file, field);
                check_fields(mo, {"path", "unit"}, file, field);
                path_text = as_string(required(mo, "path", file, field), file, sub(field, "path"));
                if (const json::value* u = mo.if_contains("unit"))
                    metric.unit = as_string(*u, file, sub(field, "unit"));
            }
            try {
                metric.path = parse_metric_path(path_text);
            } catch (const path_syntax_error& e) {
                throw input_error(file, field, "bad path '" + path_text + "': " + e.what());
            }
            sw.metrics.push_back(std::move(metric));
        }
    }

    if (const json::value* p = o.if_contains("plots")) sw.plots = parse_plots(*p, file, "plots");

    double total = static_cast<double>(sw.seeds.size());
    for (const axis& a : sw.axes) total *= static_cast<double>(a.size());
    if (total > static_cast<double>(kMaxRuns)) throw input_error(file, "axes", "more than 1000000 runs");
    return sw;
}

Sweep load_sweep(const std::string& path) {
    return parse_sweep(read_text_file(path), path);
}

std::vector<run> expand(const Sweep& sweep) {
    std::size_t total = sweep.seeds.size();
    for (const axis& a : sweep.axes) total *= a.size();
    std::size_t width = 4;
    for (std::size_t n = total; n >= 10000; n /= 10) ++width;
    std::vector<run> runs;
    runs.reserve(total);
    std::vector<std::size_t> point(sweep.axes.size(), 0);
    for (std::size_t index = 0; index < total; ++index) {
        // Mixed-radix digits of index / seeds: the last axis fastest.
        std::size_t rest = index / sweep.seeds.size();
        for (std::size_t a = sweep.axes.size(); a-- > 0;) {
            point[a] = rest % sweep.axes[a].size();
            rest /= sweep.axes[a].size();
        }
        run run;
        run.index = index;
        run.point = point;
        run.seed = sweep.seeds[index % sweep.seeds.size()];
        std::string number = std::to_string(index);
        run.id = std::string(width - std::min(width, number.size()), '0') + number;
        for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
            const axis& axis = sweep.axes[a];
            run.id +=
                "-" + sanitize_name(axis.short_name, 24) + "_" + sanitize_name(value_text(axis.labels[point[a]]), 24);
        }
        run.id += "-seed_" + std::to_string(run.seed);
        run.scenario_args = {"--scenario", sweep.base};
        for (const auto& [key, value] : sweep.set) {
            run.scenario_args.push_back("--set");
            run.scenario_args.push_back(key + "=" + set_value_text(value, ""));
        }
        for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
            for (const axis_key& k : sweep.axes[a].keys) {
                run.scenario_args.push_back("--set");
                run.scenario_args.push_back(k.key + "=" + set_value_text(k.values[point[a]], k.unit));
            }
        }
        run.scenario_args.push_back("--seed");
        run.scenario_args.push_back(std::to_string(run.seed));
        runs.push_back(std::move(run));
    }
    return runs;
}

}  // namespace rnic::sweep
