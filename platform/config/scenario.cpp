#include "config/scenario.h"

#include "config/json_text.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace rnic::config {
namespace json = boost::json;

namespace {

struct context {
    std::string origin;           // file name or "--set KEY=VALUE"
    bool schema_default = false;  // filling an array default declared in the schema: errors are logic errors
};

[[noreturn]] void fail(const context& ctx, const std::string& path, const std::string& message) {
    const std::string text = ctx.origin + ": " + (path.empty() ? std::string("(top level)") : path) + ": " + message;
    if (ctx.schema_default) throw std::logic_error("schema default is invalid: " + text);
    throw scenario_error(text);
}

std::string a_kind(config::kind kind) {
    const std::string name = kind_name(kind);
    return (std::string("aeiou").find(name[0]) != std::string::npos ? "an " : "a ") + name;
}

std::string join_path(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string unknown_key_message(const config::node& object, const std::string& object_path, const std::string& key) {
    std::string keys;
    std::string best;
    std::size_t best_distance = std::max<std::size_t>(2, key.size() / 3) + 1;
    for (const node::named_child& f : object.fields()) {
        keys += (keys.empty() ? "" : ", ") + f.name;
        const std::size_t d = edit_distance(key, f.name);
        if (d < best_distance) {
            best_distance = d;
            best = f.name;
        }
    }
    std::string msg = "unknown key (";
    if (object.fields().empty()) {
        msg += object_path.empty() ? "no keys are defined" : object_path + " has no keys";
    } else {
        msg += (object_path.empty() ? std::string("known top-level keys: ") : "known keys in " + object_path + ": ") +
               keys;
    }
    msg += ")";
    if (!best.empty()) msg += "; did you mean " + quote(best) + "?";
    return msg;
}

std::optional<std::size_t> parse_index(const std::string& text) {
    if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    std::size_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size()) return node::kUnbounded;  // huge: out of range anyway
    return value;
}

std::vector<std::string> split_path(const std::string& path) {
    std::vector<std::string> parts;
    if (path.empty()) return parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = path.find('.', start);
        parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return parts;
}

std::string index_range_text(const std::string& array_path, std::size_t size) {
    if (size == 0) return array_path + " is empty";
    return array_path + " has " + std::to_string(size) + (size == 1 ? " element" : " elements") +
           " (valid indices 0.." + std::to_string(size - 1) + ")";
}

// Validates `in` (nullptr = key absent) against `node`, producing the as-run value (user notation, defaults filled)
// and the canonical value.
void fill(const config::node& node, const json::value* in, const std::string& path, const context& ctx,
          json::value& run, json::value& canonical) {
    switch (node.kind()) {
    case config::kind::object: {
        if (in != nullptr && !in->is_object()) {
            fail(ctx, path, "expected " + node.expectation() + ", got " + brief_json(*in));
        }
        if (in != nullptr) {
            for (const auto& kv : in->get_object()) {
                const std::string key(kv.key());
                if (node.field(key) == nullptr) fail(ctx, join_path(path, key), unknown_key_message(node, path, key));
            }
        }
        json::object run_obj;
        json::object canon_obj;
        for (const node::named_child& f : node.fields()) {
            const json::value* sub = in != nullptr ? in->get_object().if_contains(f.name) : nullptr;
            json::value r;
            json::value c;
            fill(*f.node, sub, join_path(path, f.name), ctx, r, c);
            run_obj.emplace(f.name, std::move(r));
            canon_obj.emplace(f.name, std::move(c));
        }
        run = std::move(run_obj);
        canonical = std::move(canon_obj);
        return;
    }
    case config::kind::array:
    case config::kind::size_list: {
        const bool size_list = node.kind() == config::kind::size_list;
        if (in == nullptr) {
            if (size_list || !node.default_value().is_null()) {
                context def_ctx{ctx.origin, true};
                fill(node, &node.default_value(), path, def_ctx, run, canonical);
                return;
            }
            json::array run_arr;
            json::array canon_arr;
            for (std::size_t i = 0; i < node.min_length(); ++i) {
                json::value r;
                json::value c;
                fill(node.element(), nullptr, join_path(path, std::to_string(i)), ctx, r, c);
                run_arr.push_back(std::move(r));
                canon_arr.push_back(std::move(c));
            }
            run = std::move(run_arr);
            canonical = std::move(canon_arr);
            return;
        }
        if (!in->is_array()) fail(ctx, path, "expected " + node.expectation() + ", got " + brief_json(*in));
        const json::array& arr = in->get_array();
        if (arr.size() < node.min_length() || arr.size() > node.max_length()) {
            fail(ctx, path, "expected " + node.expectation() + ", got " + brief_json(*in));
        }
        json::array run_arr;
        json::array canon_arr;
        for (std::size_t i = 0; i < arr.size(); ++i) {
            json::value r;
            json::value c;
            fill(node.element(), &arr[i], join_path(path, std::to_string(i)), ctx, r, c);
            run_arr.push_back(std::move(r));
            canon_arr.push_back(std::move(c));
        }
        run = std::move(run_arr);
        canonical = std::move(canon_arr);
        return;
    }
    default: {
        const json::value& v = in != nullptr ? *in : node.default_value();
        std::string err = node.check_leaf(v, &canonical);
        if (!err.empty()) fail(ctx, path, err);
        run = v;
        return;
    }
    }
}

bool string_like(config::kind kind) {
    return kind == config::kind::string || kind == config::kind::enumeration || kind == config::kind::time ||
           kind == config::kind::rate || kind == config::kind::frequency;
}

void apply_override(const config::node& root, json::value& run_root, json::value& canon_root, const std::string& text) {
    const context ctx{"--set " + text, false};
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos) {
        throw scenario_error(ctx.origin +
                             ": malformed override (no '='): expected KEY=VALUE, e.g. --set link.rate=40Gbps");
    }
    const std::string key = text.substr(0, eq);
    const std::string value_text = text.substr(eq + 1);
    if (key.empty()) throw scenario_error(ctx.origin + ": malformed override: empty key before '='");
    const std::vector<std::string> parts = split_path(key);
    for (const std::string& p : parts) {
        if (p.empty())
            throw scenario_error(ctx.origin + ": malformed override: empty component in key \"" + key + "\"");
    }

    const config::node* node = &root;
    json::value* run = &run_root;
    json::value* canon = &canon_root;
    std::string path;
    for (const std::string& part : parts) {
        const std::string next = join_path(path, part);
        if (node->kind() == config::kind::object) {
            const config::node* child = node->field(part);
            if (child == nullptr) fail(ctx, next, unknown_key_message(*node, path, part));
            node = child;
            run = &run->as_object().at(part);
            canon = &canon->as_object().at(part);
        } else if (node->kind() == config::kind::array || node->kind() == config::kind::size_list) {
            const std::size_t size = run->as_array().size();
            const std::optional<std::size_t> index = parse_index(part);
            if (!index) fail(ctx, next, "expected an array index: " + index_range_text(path, size));
            if (*index >= size) {
                fail(ctx, next, "array index " + part + " is out of range: " + index_range_text(path, size));
            }
            node = &node->element();
            run = &run->as_array().at(*index);
            canon = &canon->as_array().at(*index);
        } else {
            fail(ctx, next, path + " is " + a_kind(node->kind()) + " and has no sub-keys");
        }
        path = next;
    }

    json::value value;
    if (auto parsed = try_parse_strict_json(value_text)) {
        value = std::move(*parsed);
        // null unsets an inheriting leaf; for any other string-like key it is the plain text "null".
        const bool unset = value.is_null() && !node->inherited_from().empty();
        if (string_like(node->kind()) && !value.is_string() && !unset) value = json::string(value_text);
    } else {
        value = json::string(value_text);
    }
    json::value new_run;
    json::value new_canon;
    fill(*node, &value, path, ctx, new_run, new_canon);
    *run = std::move(new_run);
    *canon = std::move(new_canon);
}

std::string read_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        throw scenario_error(path + ": cannot read scenario file: is a directory");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        const int err = errno;
        throw scenario_error(path +
                             ": cannot open scenario file: " + (err != 0 ? std::strerror(err) : "unknown error"));
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) throw scenario_error(path + ": cannot read scenario file: " + std::strerror(errno));
    return buf.str();
}

}  // namespace

scenario scenario::load(const schema& schema, const std::string& path, const std::vector<std::string>& overrides) {
    return from_string(schema, read_file(path), path, overrides);
}

scenario scenario::from_string(const schema& schema, const std::string& json_text, const std::string& origin_name,
                               const std::vector<std::string>& overrides) {
    json::value value;
    if (auto err = parse_json_text(json_text, value)) {
        std::string msg = origin_name + ":" + std::to_string(err->line) + ":" + std::to_string(err->column) + ": ";
        if (err->message == "duplicate key") {
            msg += err->key + ": duplicate key";
        } else {
            msg += err->message;
            if (!err->key.empty()) msg += " (at " + err->key + ")";
        }
        throw scenario_error(msg);
    }
    return build(schema, value, origin_name, overrides);
}

scenario scenario::defaults(const schema& schema, const std::vector<std::string>& overrides) {
    return build(schema, json::object(), "(defaults)", overrides);
}

scenario scenario::build(const schema& schema, const json::value& file_value, const std::string& origin,
                         const std::vector<std::string>& overrides) {
    scenario s;
    s.root_ = schema.shared_root();
    s.origin_ = origin;
    s.overrides_ = overrides;
    const context ctx{origin, false};
    if (!file_value.is_object()) {
        throw scenario_error(origin + ": expected a JSON object at the top level, got " + brief_json(file_value));
    }
    fill(*s.root_, &file_value, "", ctx, s.run_, s.canonical_);
    for (const std::string& o : overrides) apply_override(*s.root_, s.run_, s.canonical_, o);
    for (const check_fn& check : schema.checks()) {
        const std::string err = check(s);
        if (!err.empty())
            throw scenario_error(origin + (overrides.empty() ? "" : " (after --set overrides)") + ": " + err);
    }
    return s;
}

// ---------------------------------------------------------------------------------------------------------------
// Access

scenario::found scenario::lookup(const std::string& path, const char* caller) const {
    auto bad = [&](const std::string& why) -> std::logic_error {
        return std::logic_error(std::string("Scenario::") + caller + "(\"" + path + "\"): " + why);
    };
    found f{root_.get(), &run_, &canonical_};
    std::string walked;
    for (const std::string& part : split_path(path)) {
        const std::string next = join_path(walked, part);
        if (f.node->kind() == config::kind::object) {
            const config::node* child = f.node->field(part);
            if (child == nullptr) throw bad("unknown key " + next);
            f = found{child, &f.run->get_object().at(part), &f.canonical->get_object().at(part)};
        } else if (f.node->kind() == config::kind::array || f.node->kind() == config::kind::size_list) {
            const std::optional<std::size_t> index = parse_index(part);
            const std::size_t size = f.run->get_array().size();
            if (!index || *index >= size) throw bad("no element " + next + ": " + index_range_text(walked, size));
            f = found{&f.node->element(), &f.run->get_array().at(*index), &f.canonical->get_array().at(*index)};
        } else {
            throw bad(walked + " is " + a_kind(f.node->kind()) + " and has no sub-keys");
        }
        walked = next;
    }
    return f;
}

scenario::found scenario::lookup_leaf(const std::string& path, const char* caller, config::kind kind,
                                      config::kind alt) const {
    found f = lookup(path, caller);
    // Unset: read the key it inherits (Schema::verify made sure that one does not inherit in turn).
    if (f.canonical->is_null() && !f.node->inherited_from().empty()) f = lookup(f.node->inherited_from(), caller);
    if (f.node->kind() != kind && f.node->kind() != alt) {
        throw std::logic_error(std::string("Scenario::") + caller + "(\"" + path + "\"): " + path + " is " +
                               a_kind(f.node->kind()) + ", not " + a_kind(kind));
    }
    return f;
}

bool scenario::get_bool(const std::string& path) const {
    return lookup_leaf(path, "get_bool", config::kind::boolean, config::kind::boolean).canonical->get_bool();
}

std::int64_t scenario::get_int(const std::string& path) const {
    return lookup_leaf(path, "get_int", config::kind::integer, config::kind::integer).canonical->get_int64();
}

double scenario::get_number(const std::string& path) const {
    return lookup_leaf(path, "get_number", config::kind::number, config::kind::integer).canonical->to_number<double>();
}

std::string scenario::get_string(const std::string& path) const {
    return std::string(
        lookup_leaf(path, "get_string", config::kind::string, config::kind::enumeration).canonical->get_string());
}

std::uint64_t scenario::get_time_ps(const std::string& path) const {
    return lookup_leaf(path, "get_time_ps", config::kind::time, config::kind::time).canonical->get_uint64();
}

double scenario::get_rate_bps(const std::string& path) const {
    return lookup_leaf(path, "get_rate_bps", config::kind::rate, config::kind::rate).canonical->get_double();
}

std::uint64_t scenario::get_size(const std::string& path) const {
    return lookup_leaf(path, "get_size", config::kind::size, config::kind::size).canonical->get_uint64();
}

double scenario::get_frequency_hz(const std::string& path) const {
    return lookup_leaf(path, "get_frequency_hz", config::kind::frequency, config::kind::frequency)
        .canonical->get_double();
}

std::vector<std::uint64_t> scenario::get_size_list(const std::string& path) const {
    const found f = lookup_leaf(path, "get_size_list", config::kind::size_list, config::kind::size_list);
    std::vector<std::uint64_t> out;
    for (const json::value& v : f.canonical->get_array()) out.push_back(v.get_uint64());
    return out;
}

std::size_t scenario::array_size(const std::string& path) const {
    return lookup_leaf(path, "array_size", config::kind::array, config::kind::size_list).run->get_array().size();
}

bool scenario::has(const std::string& path) const {
    try {
        (void)lookup(path, "has");
        return true;
    } catch (const std::logic_error&) {
        return false;
    }
}

bool scenario::is_set(const std::string& path) const {
    return !lookup(path, "is_set").canonical->is_null();
}

std::string scenario::value_key(const std::string& path) const {
    const found f = lookup(path, "value_key");
    return f.canonical->is_null() && !f.node->inherited_from().empty() ? f.node->inherited_from() : path;
}

const json::value& scenario::get_json(const std::string& path) const {
    return *lookup(path, "get_json").run;
}

std::string scenario::as_run_text() const {
    return to_pretty_json(run_);
}

}  // namespace rnic::config
