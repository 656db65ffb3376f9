#include "config/json_text.h"

#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

namespace rnic::config {
namespace json = boost::json;

namespace {

// SAX handler that only tracks where the parser is (for messages) and rejects duplicate keys.
class locating_handler {
public:
    // Boost.JSON's basic_parser reads these names from its handler: they are its, not the dialect's.
    // NOLINTBEGIN(readability-identifier-naming)
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);
    // NOLINTEND(readability-identifier-naming)

    bool duplicate = false;

    // Dotted key of the current position (the key being read or the last key/index entered).
    std::string current_path() const {
        std::string path;
        for (std::size_t i = 0; i < stack_.size(); ++i) {
            const frame& f = stack_[i];
            const bool innermost = i + 1 == stack_.size();
            std::string part;
            if (f.is_object) {
                if (!f.has_key) break;
                part = f.key;
            } else if (!innermost) {
                part = std::to_string(f.index);  // inside the element being read
            } else {
                if (f.index == 0) break;             // nothing read yet: just the array
                part = std::to_string(f.index - 1);  // between elements: the last one read
            }
            path += path.empty() ? part : "." + part;
        }
        return path;
    }

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code&) {
        stack_.push_back(frame{true});
        return true;
    }
    bool on_object_end(std::size_t, json::error_code&) { return end_container(); }
    bool on_array_begin(json::error_code&) {
        stack_.push_back(frame{false});
        return true;
    }
    bool on_array_end(std::size_t, json::error_code&) { return end_container(); }
    bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
        key_buf_.append(s.data(), s.size());
        return true;
    }
    bool on_key(json::string_view s, std::size_t, json::error_code& ec) {
        key_buf_.append(s.data(), s.size());
        frame& f = stack_.back();
        f.key = key_buf_;
        f.has_key = true;
        key_buf_.clear();
        if (!f.seen.insert(f.key).second) {
            duplicate = true;
            ec = json::error::syntax;
            return false;
        }
        return true;
    }
    bool on_string_part(json::string_view, std::size_t, json::error_code&) { return true; }
    bool on_string(json::string_view, std::size_t, json::error_code&) { return value_done(); }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t, json::string_view, json::error_code&) { return value_done(); }
    bool on_uint64(std::uint64_t, json::string_view, json::error_code&) { return value_done(); }
    bool on_double(double, json::string_view, json::error_code&) { return value_done(); }
    bool on_bool(bool, json::error_code&) { return value_done(); }
    bool on_null(json::error_code&) { return value_done(); }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    struct frame {
        bool is_object;
        std::set<std::string> seen{};
        std::string key{};
        bool has_key = false;
        std::size_t index = 0;
    };

    bool value_done() {
        if (!stack_.empty() && !stack_.back().is_object) ++stack_.back().index;
        return true;
    }
    bool end_container() {
        stack_.pop_back();
        return value_done();
    }

    std::vector<frame> stack_;
    std::string key_buf_;
};

json::parse_options scenario_parse_options() {
    json::parse_options opt;
    opt.allow_comments = true;
    opt.allow_trailing_commas = true;
    return opt;
}

std::string excerpt_at(std::string_view text, std::size_t offset) {
    if (offset >= text.size()) return "at end of input";
    std::string_view rest = text.substr(offset);
    rest = rest.substr(0, rest.find('\n'));
    if (rest.empty() || rest == "\r") return "at end of line";
    if (rest.size() > 20) rest = rest.substr(0, 20);
    return "near " + quote(rest);
}

void compact(const json::value& v, std::string& out) {
    switch (v.kind()) {
    case json::kind::object: {
        out += "{";
        bool first = true;
        for (const auto& kv : v.get_object()) {
            if (!first) out += ", ";
            first = false;
            out += quote(kv.key()) + ": ";
            compact(kv.value(), out);
        }
        out += "}";
        return;
    }
    case json::kind::array: {
        out += "[";
        bool first = true;
        for (const auto& e : v.get_array()) {
            if (!first) out += ", ";
            first = false;
            compact(e, out);
        }
        out += "]";
        return;
    }
    case json::kind::double_:
        out += format_double(v.get_double());
        return;
    default:
        out += json::serialize(v);
        return;
    }
}

void pretty(const json::value& v, std::string& out, int indent) {
    const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
    switch (v.kind()) {
    case json::kind::object: {
        const json::object& o = v.get_object();
        if (o.empty()) {
            out += "{}";
            return;
        }
        out += "{\n";
        bool first = true;
        for (const auto& kv : o) {
            if (!first) out += ",\n";
            first = false;
            out += pad + "  " + quote(kv.key()) + ": ";
            pretty(kv.value(), out, indent + 1);
        }
        out += "\n" + pad + "}";
        return;
    }
    case json::kind::array: {
        const json::array& a = v.get_array();
        bool scalars = true;
        for (const auto& e : a) scalars = scalars && !e.is_structured();
        if (a.empty() || scalars) {
            out += "[";
            for (std::size_t i = 0; i < a.size(); ++i) {
                if (i != 0) out += ", ";
                pretty(a[i], out, indent + 1);
            }
            out += "]";
            return;
        }
        out += "[\n";
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (i != 0) out += ",\n";
            out += pad + "  ";
            pretty(a[i], out, indent + 1);
        }
        out += "\n" + pad + "]";
        return;
    }
    case json::kind::double_:
        out += format_double(v.get_double());
        return;
    default:
        out += json::serialize(v);
        return;
    }
}

}  // namespace

std::optional<json_syntax_error> parse_json_text(std::string_view text, json::value& out) {
    const json::parse_options opt = scenario_parse_options();
    json::basic_parser<locating_handler> parser(opt);
    json::error_code ec;
    std::size_t offset = parser.write_some(false, text.data(), text.size(), ec);
    std::string message;
    if (ec) {
        if (parser.handler().duplicate) {
            message = "duplicate key";
            // The parser stops at the key's closing quote: point at its opening quote instead.
            if (offset < text.size() && text[offset] == '"') {
                std::size_t i = offset;
                while (i > 0) {
                    --i;
                    if (text[i] == '"' && (i == 0 || text[i - 1] != '\\')) break;
                }
                offset = i;
            }
        } else if (ec == json::error::incomplete) {
            message = "unexpected end of input (unclosed object, array or string?)";
        } else {
            message = ec.message() + " " + excerpt_at(text, offset);
        }
    } else if (offset < text.size()) {
        message = "unexpected text after the end of the JSON document " + excerpt_at(text, offset);
    }
    if (!message.empty()) {
        json_syntax_error err;
        err.message = message;
        err.key = parser.handler().current_path();
        for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++err.line;
                err.column = 1;
            } else {
                ++err.column;
            }
        }
        return err;
    }
    out = json::parse(json::string_view(text.data(), text.size()), ec, {}, opt);
    if (ec) {  // cannot happen: the same grammar was accepted above
        return json_syntax_error{1, 1, "", ec.message()};
    }
    return std::nullopt;
}

std::optional<json::value> try_parse_strict_json(std::string_view text) {
    json::error_code ec;
    json::value v = json::parse(json::string_view(text.data(), text.size()), ec);
    if (ec) return std::nullopt;
    return v;
}

std::string format_double(double value) {
    char buf[64];
    for (int precision = 1; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, value);
        if (std::strtod(buf, nullptr) == value) break;
    }
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
}

std::string to_pretty_json(const json::value& value) {
    std::string out;
    pretty(value, out, 0);
    out += "\n";
    return out;
}

std::string to_compact_json(const json::value& value) {
    std::string out;
    compact(value, out);
    return out;
}

std::string quote(std::string_view text) {
    return json::serialize(json::string_view(text.data(), text.size()));
}

std::string brief_json(const json::value& value) {
    switch (value.kind()) {
    case json::kind::string: {
        const json::string& s = value.get_string();
        if (s.size() > 60) return quote(std::string_view(s.data(), 57)) + "...";
        return quote(std::string_view(s.data(), s.size()));
    }
    case json::kind::double_:
        return format_double(value.get_double());
    case json::kind::object:
        return value.get_object().empty() ? "an empty object" : "an object";
    case json::kind::array: {
        const std::size_t n = value.get_array().size();
        if (n == 0) return "an empty array";
        return "an array of " + std::to_string(n) + (n == 1 ? " element" : " elements");
    }
    default:
        return json::serialize(value);
    }
}

}  // namespace rnic::config
