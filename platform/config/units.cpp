#include "config/units.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <system_error>
#include <tuple>
#include <vector>

namespace rnic::config {
namespace {

__extension__ typedef unsigned __int128 u128;

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

struct unit {
    const char* name;
    u128 multiplier;  // exact kinds (time, size): canonical units per unit
    int decimal_exp;  // floating kinds (rate, frequency): power of ten
    double extra;     // floating kinds: extra factor (8 for byte rates)
};

u128 pow_u128(u128 base, int n) {
    u128 r = 1;
    for (int i = 0; i < n; ++i) r *= base;
    return r;
}

const std::vector<unit>& time_units() {
    static const std::vector<unit> u = {{"ps", 1, 0, 1},
                                        {"ns", pow_u128(10, 3), 0, 1},
                                        {"us", pow_u128(10, 6), 0, 1},
                                        {"ms", pow_u128(10, 9), 0, 1},
                                        {"s", pow_u128(10, 12), 0, 1}};
    return u;
}

const std::vector<unit>& size_units() {
    static const std::vector<unit> u = {
        {"B", 1, 0, 1},
        {"KB", pow_u128(10, 3), 0, 1},
        {"kB", pow_u128(10, 3), 0, 1},
        {"MB", pow_u128(10, 6), 0, 1},
        {"GB", pow_u128(10, 9), 0, 1},
        {"KiB", pow_u128(2, 10), 0, 1},
        {"MiB", pow_u128(2, 20), 0, 1},
        {"GiB", pow_u128(2, 30), 0, 1},
    };
    return u;
}

const std::vector<unit>& rate_units() {
    static const std::vector<unit> u = {
        {"bps", 0, 0, 1},  {"Kbps", 0, 3, 1},  {"kbps", 0, 3, 1}, {"Mbps", 0, 6, 1},
        {"Gbps", 0, 9, 1}, {"Tbps", 0, 12, 1}, {"Bps", 0, 0, 8},  {"KBps", 0, 3, 8},
        {"kBps", 0, 3, 8}, {"MBps", 0, 6, 8},  {"GBps", 0, 9, 8},
    };
    return u;
}

const std::vector<unit>& frequency_units() {
    static const std::vector<unit> u = {{"Hz", 0, 0, 1}, {"kHz", 0, 3, 1}, {"MHz", 0, 6, 1}, {"GHz", 0, 9, 1}};
    return u;
}

const unit* find_unit(const std::vector<unit>& units, std::string_view name) {
    for (const unit& u : units) {
        if (name == u.name) return &u;
    }
    return nullptr;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
}

std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    out += '"';
    return out;
}

void set_error(std::string* error, const std::string& expected, std::string_view text, const std::string& reason) {
    if (error == nullptr) return;
    *error = "expected " + expected + ", got " + quoted(text);
    if (!reason.empty()) *error += " (" + reason + ")";
}

// Splits "1.5 us" into number "1.5" and unit "us". On failure returns false and a reason.
bool split_number_unit(std::string_view text, std::string_view& number, std::string_view& unit, std::string& reason) {
    std::string_view t = trim(text);
    if (t.empty()) {
        reason = "empty";
        return false;
    }
    if (t.front() == '-') {
        reason = "negative values are not allowed";
        return false;
    }
    std::size_t i = 0;
    while (i < t.size() && is_digit(t[i])) ++i;
    if (i == 0) {
        reason = "not a number";
        return false;
    }
    if (i < t.size() && t[i] == '.') {
        std::size_t j = i + 1;
        while (j < t.size() && is_digit(t[j])) ++j;
        if (j == i + 1) {
            reason = "malformed number";
            return false;
        }
        i = j;
    }
    number = t.substr(0, i);
    unit = trim(t.substr(i));
    if (unit.empty()) {
        reason = "missing unit";
        return false;
    }
    return true;
}

enum class exact { k_ok, k_overflow, k_not_whole };

// value = number * multiplier, exactly, as a uint64.
exact exact_scale(std::string_view number, u128 multiplier, std::uint64_t& out) {
    std::string_view int_part = number;
    std::string_view frac_part;
    if (auto dot = number.find('.'); dot != std::string_view::npos) {
        int_part = number.substr(0, dot);
        frac_part = number.substr(dot + 1);
    }
    while (!frac_part.empty() && frac_part.back() == '0') frac_part.remove_suffix(1);
    const std::size_t frac_digits = frac_part.size();
    if (frac_digits > 30) return exact::k_not_whole;  // 10^31 cannot be cancelled by any of our multipliers
    u128 digits = 0;
    constexpr u128 kLimit = ~static_cast<u128>(0) / 10 - 10;
    for (std::string_view part : {int_part, frac_part}) {
        for (char c : part) {
            if (digits > kLimit) return frac_digits > 0 ? exact::k_not_whole : exact::k_overflow;
            digits = digits * 10 + static_cast<unsigned>(c - '0');
        }
    }
    // digits * multiplier / 10^frac_digits, cancelling common factors first so that intermediate values stay small.
    u128 divisor = pow_u128(10, static_cast<int>(frac_digits));
    u128 a = multiplier;
    u128 b = divisor;
    while (b != 0) {
        const u128 t = a % b;
        a = b;
        b = t;
    }
    divisor /= a;
    multiplier /= a;
    if (digits % divisor != 0) return exact::k_not_whole;
    u128 value = 0;
    if (__builtin_mul_overflow(digits / divisor, multiplier, &value) || value > kU64Max) return exact::k_overflow;
    out = static_cast<std::uint64_t>(value);
    return exact::k_ok;
}

std::optional<std::uint64_t> parse_exact(std::string_view text, std::string* error, const std::vector<unit>& units,
                                         const std::string& expectation, const char* canonical_unit_name,
                                         const std::string& max_spelling) {
    std::string_view number;
    std::string_view unit_name;
    std::string reason;
    if (!split_number_unit(text, number, unit_name, reason)) {
        set_error(error, expectation, text, reason);
        return std::nullopt;
    }
    const unit* unit = find_unit(units, unit_name);
    if (unit == nullptr) {
        set_error(error, expectation, text, "unknown unit " + quoted(unit_name));
        return std::nullopt;
    }
    std::uint64_t value = 0;
    switch (exact_scale(number, unit->multiplier, value)) {
    case exact::k_ok:
        return value;
    case exact::k_overflow:
        set_error(error, expectation, text, "too large: at most " + max_spelling);
        return std::nullopt;
    case exact::k_not_whole:
        set_error(error, expectation, text, std::string("not a whole number of ") + canonical_unit_name);
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<double> parse_floating(std::string_view text, std::string* error, const std::vector<unit>& units,
                                     const std::string& expectation) {
    std::string_view number;
    std::string_view unit_name;
    std::string reason;
    if (!split_number_unit(text, number, unit_name, reason)) {
        set_error(error, expectation, text, reason);
        return std::nullopt;
    }
    const unit* unit = find_unit(units, unit_name);
    if (unit == nullptr) {
        set_error(error, expectation, text, "unknown unit " + quoted(unit_name));
        return std::nullopt;
    }
    // Let the correctly-rounded decimal conversion apply the power of ten: "8.528e9" is exact where 8.528*1e9 is not.
    std::string spelled(number);
    spelled += "e" + std::to_string(unit->decimal_exp);
    double value = 0;
    auto [ptr, ec] = std::from_chars(spelled.data(), spelled.data() + spelled.size(), value);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && !std::isfinite(value * unit->extra))) {
        set_error(error, expectation, text, "too large");
        return std::nullopt;
    }
    if (ec != std::errc() || ptr != spelled.data() + spelled.size()) {
        set_error(error, expectation, text, "malformed number");
        return std::nullopt;
    }
    return value * unit->extra;
}

// Exact decimal spelling of int_part + frac_numerator / 10^k (frac_numerator < 10^k, k <= 38).
std::string decimal_string(u128 int_part, u128 frac, int k) {
    std::string s;
    do {
        s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(int_part % 10)));
        int_part /= 10;
    } while (int_part != 0);
    if (frac != 0) {
        std::string f(static_cast<std::size_t>(k), '0');
        for (int i = k - 1; i >= 0; --i) {
            f[static_cast<std::size_t>(i)] = static_cast<char>('0' + static_cast<int>(frac % 10));
            frac /= 10;
        }
        while (!f.empty() && f.back() == '0') f.pop_back();
        s += "." + f;
    }
    return s;
}

// Exact decimal spelling of value / 10^k.
std::string decimal_string(std::uint64_t value, int k) {
    const u128 scale = pow_u128(10, k);
    return decimal_string(value / scale, value % scale, k);
}

// Keeps the best candidate: a mantissa in [1, 1000) if possible ("1.5us" rather than "1500ns" or "0.0015ms"),
// then the shortest, then an integer mantissa, then the earlier one (callers list larger units first).
void consider(std::string& best, const std::string& candidate) {
    auto rank = [](const std::string& s) {
        std::size_t int_digits = 0;
        while (int_digits < s.size() && s[int_digits] >= '0' && s[int_digits] <= '9') ++int_digits;
        const bool engineering = int_digits <= 3 && s[0] != '0';
        const bool integral = int_digits == s.size() || s[int_digits] != '.';
        return std::make_tuple(engineering ? 0 : 1, s.size(), integral ? 0 : 1);
    };
    if (best.empty() || rank(candidate) < rank(best)) best = candidate;
}

std::string format_floating(double value, const std::vector<unit>& units, const std::vector<const char*>& order,
                            std::optional<double> (*parse)(std::string_view, std::string*)) {
    if (!std::isfinite(value) || value < 0) return std::to_string(value) + units.front().name;
    std::string best;
    for (const char* name : order) {
        const unit* unit = find_unit(units, name);
        const double scaled = value / std::pow(10.0, unit->decimal_exp) / unit->extra;
        for (int precision = 0; precision <= 17; ++precision) {
            char buf[512];
            std::snprintf(buf, sizeof buf, "%.*f", precision, scaled);
            std::string s = buf;
            if (s.find('.') != std::string::npos) {
                while (s.back() == '0') s.pop_back();
                if (s.back() == '.') s.pop_back();
            }
            s += name;
            auto parsed = parse(s, nullptr);
            if (parsed && *parsed == value) {
                consider(best, s);
                break;
            }
        }
    }
    if (best.empty()) {  // no exact spelling (e.g. sub-unit fractions of the smallest unit): closest in the base unit
        char buf[512];
        std::snprintf(buf, sizeof buf, "%.6f", value);
        best = std::string(buf) + units.front().name;
    }
    return best;
}

}  // namespace

const std::string& time_expectation() {
    static const std::string s = "a time such as \"500ns\" (units ps, ns, us, ms, s)";
    return s;
}
const std::string& rate_expectation() {
    static const std::string s =
        "a data rate such as \"100Gbps\" (units bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps)";
    return s;
}
const std::string& size_expectation() {
    static const std::string s =
        "a size such as \"4KiB\" or a whole number of bytes (units B, KB, MB, GB, KiB, MiB, GiB)";
    return s;
}
const std::string& frequency_expectation() {
    static const std::string s = "a frequency such as \"1GHz\" (units Hz, kHz, MHz, GHz)";
    return s;
}

std::optional<std::uint64_t> parse_time_ps(std::string_view text, std::string* error) {
    static const std::string kMax = format_time_ps(kU64Max);
    return parse_exact(text, error, time_units(), time_expectation(), "picoseconds", kMax);
}

std::optional<std::uint64_t> parse_size_bytes(std::string_view text, std::string* error) {
    static const std::string kMax = format_size(kU64Max);
    return parse_exact(text, error, size_units(), size_expectation(), "bytes", kMax);
}

std::optional<double> parse_rate_bps(std::string_view text, std::string* error) {
    return parse_floating(text, error, rate_units(), rate_expectation());
}

std::optional<double> parse_frequency_hz(std::string_view text, std::string* error) {
    return parse_floating(text, error, frequency_units(), frequency_expectation());
}

std::string format_time_ps(std::uint64_t ps) {
    static const std::pair<const char*, int> kUnits[] = {{"s", 12}, {"ms", 9}, {"us", 6}, {"ns", 3}, {"ps", 0}};
    std::string best;
    for (const auto& [name, k] : kUnits) consider(best, decimal_string(ps, k) + name);
    return best;
}

std::string format_size(std::uint64_t bytes) {
    std::string best;
    static const std::pair<const char*, int> kDecimal[] = {{"GB", 9}, {"MB", 6}, {"KB", 3}};
    static const std::pair<const char*, int> kBinary[] = {{"GiB", 30}, {"MiB", 20}, {"KiB", 10}};
    for (const auto& [name, k] : kBinary) {
        // bytes / 2^k == q + r * 5^k / 10^k, exactly.
        const std::uint64_t q = bytes >> k;
        const std::uint64_t r = bytes & ((std::uint64_t{1} << k) - 1);
        consider(best, decimal_string(q, static_cast<u128>(r) * pow_u128(5, k), k) + name);
    }
    for (const auto& [name, k] : kDecimal) consider(best, decimal_string(bytes, k) + name);
    consider(best, decimal_string(bytes, 0) + "B");
    return best;
}

std::string format_rate(double bps) {
    return format_floating(bps, rate_units(), {"Tbps", "Gbps", "Mbps", "Kbps", "bps"}, &parse_rate_bps);
}

std::string format_frequency(double hz) {
    return format_floating(hz, frequency_units(), {"GHz", "MHz", "kHz", "Hz"}, &parse_frequency_hz);
}

}  // namespace rnic::config
