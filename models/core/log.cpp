#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <cstring>

namespace rnic::log {

int g_levels[static_cast<int>(category::count)] = {
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
};

namespace {
const char* const kCategoryNames[] = {"sim", "host", "pcie", "dma", "mem", "buf",  "toe",
                                      "mpa", "rdma", "cp",   "fw",  "drv", "link", "app"};
const char* const kLevelNames[] = {"off", "error", "warn", "info", "debug", "trace"};
std::uint64_t g_errors = 0;
std::uint64_t g_warnings = 0;

bool parse_level(const std::string& text, level* out) {
    for (int i = 0; i <= static_cast<int>(level::trace); ++i) {
        if (text == kLevelNames[i]) {
            *out = static_cast<level>(i);
            return true;
        }
    }
    return false;
}

bool parse_category(const std::string& text, category* out) {
    for (int i = 0; i < static_cast<int>(category::count); ++i) {
        if (text == kCategoryNames[i]) {
            *out = static_cast<category>(i);
            return true;
        }
    }
    return false;
}

std::string known_levels() {
    return "off, error, warn, info, debug, trace";
}
std::string known_categories() {
    std::string s;
    for (const char* n : kCategoryNames) s += (s.empty() ? "" : ", ") + std::string(n);
    return s;
}
}  // namespace

const char* name(category c) {
    return kCategoryNames[static_cast<int>(c)];
}
const char* name(level l) {
    return kLevelNames[static_cast<int>(l)];
}

void set_level(category c, level l) {
    g_levels[static_cast<int>(c)] = static_cast<int>(l);
}

bool configure(const std::string& spec, std::string* error) {
    std::size_t pos = 0;
    while (pos <= spec.size()) {
        std::size_t comma = spec.find(',', pos);
        if (comma == std::string::npos) comma = spec.size();
        std::string item = spec.substr(pos, comma - pos);
        pos = comma + 1;
        if (item.empty()) {
            if (comma == spec.size()) break;
            continue;
        }
        std::size_t eq = item.find('=');
        level lvl;
        if (eq == std::string::npos) {
            if (!parse_level(item, &lvl)) {
                *error = "--log: unknown level \"" + item + "\" (expected one of " + known_levels() + ")";
                return false;
            }
            for (int& l : g_levels) l = static_cast<int>(lvl);
        } else {
            category cat;
            std::string cat_text = item.substr(0, eq);
            std::string lvl_text = item.substr(eq + 1);
            if (!parse_category(cat_text, &cat)) {
                *error = "--log: unknown category \"" + cat_text + "\" (expected one of " + known_categories() + ")";
                return false;
            }
            if (!parse_level(lvl_text, &lvl)) {
                *error = "--log: unknown level \"" + lvl_text + "\" for category " + cat_text + " (expected one of " +
                         known_levels() + ")";
                return false;
            }
            set_level(cat, lvl);
        }
        if (comma == spec.size()) break;
    }
    return true;
}

std::string format_time(std::uint64_t time_ps) {
    char buf[48];
    // Fixed microseconds with picosecond resolution keeps lines aligned and sortable.
    std::snprintf(buf, sizeof buf, "%llu.%06llu us", static_cast<unsigned long long>(time_ps / 1000000ULL),
                  static_cast<unsigned long long>(time_ps % 1000000ULL));
    return buf;
}

void write(level l, category c, std::uint64_t time_ps, const std::string& who, const std::string& message) {
    if (l == level::error) ++g_errors;
    if (l == level::warn) ++g_warnings;
    std::fprintf(stderr, "[%16s] %-5s %-4s %s: %s\n", format_time(time_ps).c_str(), name(l), name(c), who.c_str(),
                 message.c_str());
}

std::uint64_t errors_logged() {
    return g_errors;
}
std::uint64_t warnings_logged() {
    return g_warnings;
}

}  // namespace rnic::log
