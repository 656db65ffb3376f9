#include "table.h"

#include <boost/json.hpp>
#include <set>

#include "common.h"
#include "run_dir.h"
#include "sweep_file.h"

namespace rnic::sweep {
namespace json = boost::json;

int table::column(const std::string& col) const {
    for (std::size_t i = 0; i < columns.size(); ++i) {
        if (columns[i].name == col) return static_cast<int>(i);
    }
    return -1;
}

std::vector<column> table_columns(const Sweep& sweep) {
    std::vector<column> cols{{"run", "run", "", ""}, {"id", "id", "", ""}};
    for (const axis& axis : sweep.axes) {
        if (axis.zipped) cols.push_back({axis.name, "axis", axis.name, ""});
        for (const axis_key& k : axis.keys) {
            cols.push_back({k.key, "axis", axis.name, k.unit, axis.named ? axis.short_name : ""});
        }
    }
    cols.push_back({"seed", "seed", "", ""});
    cols.push_back({"status", "status", "", ""});
    for (const metric& m : sweep.metrics) cols.push_back({m.name, "metric", "", m.unit});
    return cols;
}

table collect_table(const Sweep& sweep, const std::vector<run>& runs, const std::string& out_dir,
                    std::vector<std::string>* warnings) {
    table table;
    table.name = sweep.name;
    table.columns = table_columns(sweep);
    table.set = sweep.set;
    std::set<std::string> warned;
    for (const run& run : runs) {
        std::vector<json::value> row;
        row.emplace_back(static_cast<std::int64_t>(run.index));
        row.emplace_back(json::string(run.id));
        for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
            const axis& axis = sweep.axes[a];
            if (axis.zipped) row.push_back(axis.labels[run.point[a]]);
            for (const axis_key& k : axis.keys) row.push_back(k.values[run.point[a]]);
        }
        row.emplace_back(run.seed);
        run_status status = read_status(out_dir, run);
        json::value results;
        bool have_results = false;
        if (status.state == run_state::ok || status.state == run_state::failed) {
            const std::string path = paths_of(out_dir, run).results;
            try {
                json::error_code ec;
                results = json::parse(read_text_file(path), ec);
                have_results = !ec;
                if (ec && status.state == run_state::ok) status.text = "bad-results";
            } catch (const input_error&) {
                if (status.state == run_state::ok) status.text = "bad-results";
            }
        }
        row.emplace_back(json::string(status.text));
        for (const metric& m : sweep.metrics) {
            if (!have_results) {
                row.emplace_back(nullptr);
                continue;
            }
            metric_value v = evaluate_metric(m.path, results);
            if (v.value) {
                row.push_back(std::move(*v.value));
            } else {
                row.emplace_back(nullptr);
                if (warnings != nullptr && status.text == "ok" && warned.insert(m.name).second) {
                    warnings->push_back("metric " + m.name + " (" + m.path.text + "): " + v.error + " in run " +
                                        run.id);
                }
            }
        }
        table.rows.push_back(std::move(row));
    }
    return table;
}

std::string csv_field(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += "\"\"";
        else
            out += c;
    }
    out += "\"";
    return out;
}

std::string to_csv(const table& table) {
    std::string out;
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
        if (i != 0) out += ',';
        out += csv_field(table.columns[i].name);
    }
    out += '\n';
    for (const auto& row : table.rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (i != 0) out += ',';
            out += csv_field(value_text(row[i]));
        }
        out += '\n';
    }
    return out;
}

json::value to_json(const table& table) {
    json::object o;
    o["sweep"] = table.name;
    if (!table.set.empty()) {
        json::object set;
        for (const auto& [key, value] : table.set) set[key] = value;
        o["set"] = std::move(set);
    }
    json::array cols;
    for (const column& c : table.columns) {
        json::object co;
        co["name"] = c.name;
        co["kind"] = c.kind;
        if (!c.group.empty()) co["group"] = c.group;
        if (!c.unit.empty()) co["unit"] = c.unit;
        if (!c.alias.empty()) co["alias"] = c.alias;
        cols.push_back(std::move(co));
    }
    o["columns"] = std::move(cols);
    json::array rows;
    for (const auto& row : table.rows) {
        json::object r;
        for (std::size_t i = 0; i < row.size() && i < table.columns.size(); ++i) r[table.columns[i].name] = row[i];
        rows.push_back(std::move(r));
    }
    o["rows"] = std::move(rows);
    return o;
}

table table_from_json(const json::value& v, const std::string& file) {
    if (!v.is_object()) throw input_error(file, "", "not a sweep table (expected an object)");
    const json::object& o = v.get_object();
    table t;
    if (const json::value* n = o.if_contains("sweep"); n != nullptr && n->is_string())
        t.name = std::string(n->get_string());
    if (const json::value* set = o.if_contains("set")) {
        if (!set->is_object()) throw input_error(file, "set", "expected an object");
        for (const auto& kv : set->get_object()) t.set.emplace_back(std::string(kv.key()), kv.value());
    }
    const json::value* cols = o.if_contains("columns");
    if (cols == nullptr || !cols->is_array()) throw input_error(file, "columns", "missing or not a list");
    for (std::size_t i = 0; i < cols->get_array().size(); ++i) {
        const json::value& c = cols->get_array()[i];
        const std::string field = "columns[" + std::to_string(i) + "]";
        if (!c.is_object()) throw input_error(file, field, "expected an object");
        column col;
        auto str = [&](const char* key) -> std::string {
            const json::value* s = c.get_object().if_contains(key);
            return s != nullptr && s->is_string() ? std::string(s->get_string()) : std::string();
        };
        col.name = str("name");
        col.kind = str("kind");
        col.group = str("group");
        col.unit = str("unit");
        col.alias = str("alias");
        if (col.name.empty()) throw input_error(file, field + ".name", "missing");
        t.columns.push_back(std::move(col));
    }
    const json::value* rows = o.if_contains("rows");
    if (rows == nullptr || !rows->is_array()) throw input_error(file, "rows", "missing or not a list");
    for (std::size_t i = 0; i < rows->get_array().size(); ++i) {
        const json::value& r = rows->get_array()[i];
        if (!r.is_object()) throw input_error(file, "rows[" + std::to_string(i) + "]", "expected an object");
        std::vector<json::value> row;
        for (const column& c : t.columns) {
            const json::value* cell = r.get_object().if_contains(c.name);
            row.push_back(cell != nullptr ? *cell : json::value(nullptr));
        }
        t.rows.push_back(std::move(row));
    }
    return t;
}

}  // namespace rnic::sweep
