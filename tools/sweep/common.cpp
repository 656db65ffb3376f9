#include "common.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/json_text.h"

namespace rnic::sweep {
namespace json = boost::json;

input_error::input_error(const std::string& file, const std::string& field, const std::string& problem)
    : std::runtime_error(file + ": " + (field.empty() ? std::string() : field + ": ") + problem) {}

namespace {
void compact(const json::value& v, std::string& out) {
    switch (v.kind()) {
    case json::kind::array: {
        out += '[';
        bool first = true;
        for (const json::value& e : v.get_array()) {
            if (!first) out += ',';
            first = false;
            compact(e, out);
        }
        out += ']';
        return;
    }
    case json::kind::object: {
        out += '{';
        bool first = true;
        for (const auto& kv : v.get_object()) {
            if (!first) out += ',';
            first = false;
            out += config::quote(kv.key());
            out += ':';
            compact(kv.value(), out);
        }
        out += '}';
        return;
    }
    case json::kind::string:
        out += config::quote(v.get_string());
        return;
    default:
        out += value_text(v);
        return;
    }
}
}  // namespace

std::string format_number(double v) {
    if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    char buf[64];
    if (v == std::floor(v) && std::fabs(v) < 1e15) {
        std::snprintf(buf, sizeof buf, "%.1f", v);
        return buf;
    }
    int precision = 1;
    for (; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    std::string s = buf;
    const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    if (s.find('e') != std::string::npos && exponent >= -6 && exponent < 15) {
        std::snprintf(buf, sizeof buf, "%.*f", std::max(0, precision - 1 - exponent), v);
        if (std::strtod(buf, nullptr) == v) s = buf;
    }
    return s;
}

std::string value_text(const json::value& v) {
    switch (v.kind()) {
    case json::kind::null:
        return "";
    case json::kind::bool_:
        return v.get_bool() ? "true" : "false";
    case json::kind::int64:
        return std::to_string(v.get_int64());
    case json::kind::uint64:
        return std::to_string(v.get_uint64());
    case json::kind::double_:
        return format_number(v.get_double());
    case json::kind::string:
        return std::string(v.get_string());
    default: {
        std::string out;
        compact(v, out);
        return out;
    }
    }
}

bool is_number(const json::value& v) {
    return v.is_int64() || v.is_uint64() || v.is_double();
}

double as_number(const json::value& v) {
    if (v.is_int64()) return static_cast<double>(v.get_int64());
    if (v.is_uint64()) return static_cast<double>(v.get_uint64());
    if (v.is_double()) return v.get_double();
    return 0.0;
}

bool same_value(const json::value& a, const json::value& b) {
    if (is_number(a) && is_number(b)) {
        if (a.is_double() || b.is_double()) return as_number(a) == as_number(b);
        if (a.is_int64() && b.is_int64()) return a.get_int64() == b.get_int64();
        return value_text(a) == value_text(b);
    }
    return value_text(a) == value_text(b);
}

std::string read_text_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw input_error(path, "", "is a directory, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error(path, "", "cannot be read");
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

void write_text_file(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw std::runtime_error("cannot write " + path);
        out << text;
        out.flush();
        if (!out) throw std::runtime_error("cannot write " + path);
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw std::runtime_error("cannot write " + path);
    }
}

std::string sanitize_name(std::string_view text, std::size_t max_length) {
    std::string out;
    for (char c : text) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                          c == '_' || c == '+' || c == '-';
        out += keep ? c : '_';
        if (out.size() >= max_length) break;
    }
    if (out.empty()) out = "_";
    return out;
}

std::string with_unit(const std::string& name, const std::string& unit) {
    return unit.empty() ? name : name + " (" + unit + ")";
}

}  // namespace rnic::sweep
