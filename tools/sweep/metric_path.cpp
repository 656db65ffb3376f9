#include "metric_path.h"

#include <boost/json.hpp>
#include <cmath>
#include <limits>

#include "common.h"

namespace rnic::sweep {
namespace json = boost::json;

namespace {

[[noreturn]] void syntax(const std::string& what, std::size_t offset) {
    throw path_syntax_error(what + " at column " + std::to_string(offset + 1));
}

bool parse_integer(std::string_view s, std::int64_t& out) {
    if (s.empty()) return false;
    std::size_t i = 0;
    bool negative = false;
    if (s[0] == '-') {
        negative = true;
        i = 1;
    }
    if (i >= s.size() || s.size() - i > 18) return false;
    std::int64_t v = 0;
    for (; i < s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    out = negative ? -v : v;
    return true;
}

// A JSON string literal starting at text[pos] == '"'; returns its decoded value and moves pos past it.
std::string read_quoted(std::string_view text, std::size_t& pos) {
    const std::size_t start = pos;
    std::size_t i = pos + 1;
    while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
    if (i >= text.size()) syntax("unterminated string", start);
    json::error_code ec;
    json::value v = json::parse(json::string_view(text.data() + start, i + 1 - start), ec);
    if (ec || !v.is_string()) syntax("bad string", start);
    pos = i + 1;
    return std::string(v.get_string());
}

json::value match_value(std::string_view text) {
    if (text == "true") return true;
    if (text == "false") return false;
    if (text == "null") return nullptr;
    json::error_code ec;
    json::value v = json::parse(json::string_view(text.data(), text.size()), ec);
    if (!ec && (is_number(v))) return v;
    return json::string(text.data(), text.size());
}

const char* aggregate_name(aggregate a) {
    switch (a) {
    case aggregate::sum:
        return "sum";
    case aggregate::mean:
        return "mean";
    case aggregate::min:
        return "min";
    case aggregate::max:
        return "max";
    case aggregate::count:
        return "count";
    default:
        return "";
    }
}

std::string member_list(const json::object& o) {
    std::string out;
    std::size_t n = 0;
    for (const auto& kv : o) {
        if (n == 8) {
            out += ", ...";
            break;
        }
        out += (n == 0 ? "" : ", ") + std::string(kv.key());
        ++n;
    }
    return out;
}

// The element of an array at index i (negative from the end), or nullptr.
const json::value* at_index(const json::array& a, std::int64_t i) {
    const auto size = static_cast<std::int64_t>(a.size());
    if (i < 0) i += size;
    if (i < 0 || i >= size) return nullptr;
    return &a[static_cast<std::size_t>(i)];
}

}  // namespace

metric_path parse_metric_path(std::string_view text) {
    metric_path p;
    p.text = std::string(text);
    std::size_t pos = 0;
    const std::size_t colon = text.find(':');
    const std::size_t first_special = text.find_first_of(".[\"");
    if (colon != std::string_view::npos && (first_special == std::string_view::npos || colon < first_special)) {
        const std::string_view agg = text.substr(0, colon);
        if (agg == "sum")
            p.aggregate = aggregate::sum;
        else if (agg == "mean")
            p.aggregate = aggregate::mean;
        else if (agg == "min")
            p.aggregate = aggregate::min;
        else if (agg == "max")
            p.aggregate = aggregate::max;
        else if (agg == "count")
            p.aggregate = aggregate::count;
        else
            syntax("unknown aggregate '" + std::string(agg) + "' (sum, mean, min, max or count)", 0);
        pos = colon + 1;
    }
    p.path_offset = pos;
    if (pos >= text.size()) syntax("empty path", pos);
    bool expect_name = text[pos] != '[';
    while (pos < text.size()) {
        path_step step;
        if (expect_name) {
            const std::size_t start = pos;
            while (pos < text.size() && text[pos] != '.' && text[pos] != '[' && text[pos] != ']') ++pos;
            if (pos == start) syntax("empty member name", start);
            step.kind = path_step::kind::member;
            step.name = std::string(text.substr(start, pos - start));
        } else {
            const std::size_t open = pos;  // text[pos] == '['
            ++pos;
            if (pos >= text.size()) syntax("missing ']'", open);
            if (text[pos] == '"') {
                step.kind = path_step::kind::member;
                step.name = read_quoted(text, pos);
            } else if (text[pos] == '*') {
                step.kind = path_step::kind::wildcard;
                ++pos;
            } else {
                std::size_t close = pos;
                while (close < text.size() && text[close] != ']' && text[close] != '=' && text[close] != '[') ++close;
                const std::string_view inner = text.substr(pos, close - pos);
                if (close < text.size() && text[close] == '=') {
                    if (inner.empty()) syntax("missing field name before '='", pos);
                    step.kind = path_step::kind::select;
                    step.name = std::string(inner);
                    pos = close + 1;
                    if (pos < text.size() && text[pos] == '"') {
                        step.match = json::string(read_quoted(text, pos));
                    } else {
                        std::size_t vend = pos;
                        while (vend < text.size() && text[vend] != ']' && text[vend] != '[') ++vend;
                        if (vend == pos) syntax("missing value after '='", pos);
                        step.match = match_value(text.substr(pos, vend - pos));
                        pos = vend;
                    }
                } else {
                    if (!parse_integer(inner, step.index)) {
                        if (inner.empty()) syntax("empty brackets", open);
                        syntax("bad selector '" + std::string(inner) +
                                   "' (an integer, *, a \"quoted\" name or name=value)",
                               pos);
                    }
                    step.kind = path_step::kind::index;
                    pos = close;
                }
            }
            if (pos >= text.size() || text[pos] != ']') syntax("missing ']'", pos);
            ++pos;
        }
        step.end = pos;
        p.steps.push_back(std::move(step));
        if (pos >= text.size()) break;
        if (text[pos] == '.') {
            ++pos;
            if (pos >= text.size()) syntax("path ends with '.'", pos - 1);
            expect_name = true;
            if (text[pos] == '[' || text[pos] == '.') syntax("empty member name", pos);
        } else if (text[pos] == '[') {
            expect_name = false;
        } else {
            syntax("unexpected '" + std::string(1, text[pos]) + "'", pos);
        }
    }
    if (p.aggregate == aggregate::none) {
        for (const path_step& s : p.steps) {
            if (s.kind == path_step::kind::wildcard) {
                throw path_syntax_error("'[*]' needs an aggregate in front: sum:, mean:, min:, max: or count:");
            }
        }
    }
    return p;
}

metric_value evaluate_metric(const metric_path& path, const json::value& results) {
    metric_value out;
    std::vector<const json::value*> current{&results};
    const bool single = path.aggregate == aggregate::none;
    for (const path_step& step : path.steps) {
        const std::string where = path.text.substr(path.path_offset, step.end - path.path_offset);
        std::vector<const json::value*> next;
        std::string detail;
        for (const json::value* v : current) {
            switch (step.kind) {
            case path_step::kind::member: {
                std::int64_t i = 0;
                if (v->is_object()) {
                    if (const json::value* m = v->get_object().if_contains(step.name)) {
                        next.push_back(m);
                    } else {
                        detail = "no member '" + step.name + "'; members: " + member_list(v->get_object());
                        for (const auto& kv : v->get_object()) {
                            if (kv.key().size() > step.name.size() &&
                                kv.key().substr(0, step.name.size()) == step.name &&
                                kv.key()[step.name.size()] == '.') {
                                detail +=
                                    "; a name with dots is written in brackets: [\"" + std::string(kv.key()) + "\"]";
                                break;
                            }
                        }
                    }
                } else if (v->is_array() && parse_integer(step.name, i)) {
                    if (const json::value* e = at_index(v->get_array(), i))
                        next.push_back(e);
                    else
                        detail = "index " + step.name + " outside an array of " + std::to_string(v->get_array().size());
                } else {
                    detail = "not an object";
                }
                break;
            }
            case path_step::kind::index:
                if (!v->is_array()) {
                    detail = "not an array";
                } else if (const json::value* e = at_index(v->get_array(), step.index)) {
                    next.push_back(e);
                } else {
                    detail = "index " + std::to_string(step.index) + " outside an array of " +
                             std::to_string(v->get_array().size());
                }
                break;
            case path_step::kind::wildcard:
                if (v->is_array()) {
                    for (const json::value& e : v->get_array()) next.push_back(&e);
                } else if (v->is_object()) {
                    for (const auto& kv : v->get_object()) next.push_back(&kv.value());
                } else {
                    detail = "neither an array nor an object";
                }
                break;
            case path_step::kind::select:
                if (!v->is_array()) {
                    detail = "not an array";
                    break;
                }
                for (const json::value& e : v->get_array()) {
                    if (!e.is_object()) continue;
                    const json::value* field = e.get_object().if_contains(step.name);
                    if (field != nullptr && same_value(*field, step.match)) next.push_back(&e);
                }
                if (next.empty()) detail = "no element with " + step.name + "=" + value_text(step.match);
                break;
            }
        }
        if (next.empty()) {
            if (path.aggregate == aggregate::count) {
                out.value = json::value(std::int64_t{0});
                return out;
            }
            out.error = "nothing at '" + where + "'" + (single && !detail.empty() ? " (" + detail + ")" : "");
            return out;
        }
        if (single && next.size() > 1) {
            out.error = "'" + where + "' matches " + std::to_string(next.size()) +
                        " values; use an aggregate (sum:, mean:, min:, max:, count:)";
            return out;
        }
        current = std::move(next);
    }
    if (single) {
        out.value = *current.front();
        return out;
    }
    if (path.aggregate == aggregate::count) {
        out.value = json::value(static_cast<std::int64_t>(current.size()));
        return out;
    }
    bool all_integers = true;
    for (const json::value* v : current) {
        if (!is_number(*v)) {
            out.error = std::string(aggregate_name(path.aggregate)) + ": a value at '" +
                        path.text.substr(path.path_offset) + "' is not a number";
            return out;
        }
        if (!v->is_int64()) all_integers = false;
    }
    switch (path.aggregate) {
    case aggregate::sum:
    case aggregate::mean: {
        if (all_integers && path.aggregate == aggregate::sum) {
            std::int64_t sum = 0;
            for (const json::value* v : current) sum += v->get_int64();
            out.value = json::value(sum);
            return out;
        }
        double sum = 0.0;
        for (const json::value* v : current) sum += as_number(*v);
        out.value = json::value(path.aggregate == aggregate::sum ? sum : sum / static_cast<double>(current.size()));
        return out;
    }
    case aggregate::min:
    case aggregate::max: {
        const json::value* best = current.front();
        for (const json::value* v : current) {
            const bool better =
                path.aggregate == aggregate::min ? as_number(*v) < as_number(*best) : as_number(*v) > as_number(*best);
            if (better) best = v;
        }
        out.value = *best;
        return out;
    }
    default:
        return out;
    }
}

}  // namespace rnic::sweep
