#include "config/schema.h"

#include "config/json_text.h"
#include "config/scenario.h"
#include "config/units.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace rnic::config {
namespace json = boost::json;

const char* kind_name(config::kind kind) {
    switch (kind) {
    case config::kind::object:
        return "object";
    case config::kind::array:
        return "array";
    case config::kind::boolean:
        return "boolean";
    case config::kind::integer:
        return "integer";
    case config::kind::number:
        return "number";
    case config::kind::string:
        return "string";
    case config::kind::enumeration:
        return "enumeration";
    case config::kind::time:
        return "time";
    case config::kind::rate:
        return "rate";
    case config::kind::size:
        return "size";
    case config::kind::frequency:
        return "frequency";
    case config::kind::size_list:
        return "size list";
    }
    return "?";
}

namespace {

std::string range_text(const std::string& lo, const std::string& hi, bool has_lo, bool has_hi) {
    if (has_lo && has_hi) return "[" + lo + ", " + hi + "]";
    if (has_lo) return ">= " + lo;
    if (has_hi) return "<= " + hi;
    return "";
}

std::string with_range(const std::string& what, const std::string& range) {
    if (range.empty()) return what;
    if (range[0] == '[') return what + " in " + range;
    if (range.rfind("one of", 0) == 0) return what + ", " + range;
    return what + " " + range;
}

std::string join_ints(const std::vector<std::int64_t>& values) {
    std::string s;
    for (std::int64_t v : values) s += (s.empty() ? "" : ", ") + std::to_string(v);
    return s;
}

std::string join_quoted(const std::vector<std::string>& values) {
    std::string s;
    for (const std::string& v : values) s += (s.empty() ? "" : ", ") + quote(v);
    return s;
}

bool valid_key(const std::string& name) {
    if (name.empty()) return false;
    if (std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
    return name.find_first_of(".= \t\n") == std::string::npos;
}

std::string length_text(std::size_t lo, std::size_t hi) {
    auto elems = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " element" : " elements"); };
    if (lo == hi) return "exactly " + elems(lo);
    if (hi == node::kUnbounded) return lo == 0 ? "any number of elements" : "at least " + elems(lo);
    if (lo == 0) return "at most " + elems(hi);
    return std::to_string(lo) + " to " + elems(hi);
}

}  // namespace

node::node(config::kind kind, std::string path, std::string description)
    : kind_(kind), path_(std::move(path)), description_(std::move(description)) {}

node::~node() = default;

void node::require(config::kind kind, const char* what) const {
    if (kind_ != kind) {
        throw std::logic_error("schema: " + (path_.empty() ? std::string("(root)") : path_) + ": " + what +
                               " needs a node of kind " + kind_name(kind) + ", not " + kind_name(kind_));
    }
}

std::unique_ptr<node> node::make_child(config::kind kind, const std::string& name,
                                       const std::string& description) const {
    require(config::kind::object, "declaring a field");
    return std::make_unique<node>(kind, path_.empty() ? name : path_ + "." + name, description);
}

node& node::add(const std::string& name, std::unique_ptr<node> child) {
    if (!valid_key(name)) {
        throw std::logic_error("schema: " + child->path_ + ": invalid key name \"" + name +
                               "\" (must be non-empty, not all digits, without '.', '=' or blanks)");
    }
    if (field(name) != nullptr) throw std::logic_error("schema: " + child->path_ + ": declared twice");
    fields_.push_back(named_child{name, std::move(child)});
    node& n = *fields_.back().node;
    n.check_own_default();
    return n;
}

void node::check_own_default() {
    auto fail = [this](const std::string& why) {
        throw std::logic_error("schema: " + path_ + ": invalid default: " + why);
    };
    if (kind_ == config::kind::size_list) {
        if (min_length_ > max_length_) fail("min_length > max_length");
        const json::array& a = default_.as_array();
        if (a.size() < min_length_ || a.size() > max_length_) fail("expected " + length_text(min_length_, max_length_));
        for (const json::value& e : a) {
            std::string err = element_->check_leaf(e, nullptr);
            if (!err.empty()) fail(err);
        }
    } else if (kind_ == config::kind::array) {
        if (min_length_ > max_length_) fail("min_length > max_length");
    } else if (is_leaf()) {
        std::string err = check_leaf(default_, nullptr);
        if (!err.empty()) fail(err);
    }
}

const node* node::field(const std::string& name) const {
    for (const named_child& f : fields_) {
        if (f.name == name) return f.node.get();
    }
    return nullptr;
}

node& node::object(const std::string& name, const std::string& description) {
    return add(name, make_child(config::kind::object, name, description));
}

node& node::array(const std::string& name, const std::string& description, std::size_t min_length,
                  std::size_t max_length) {
    auto n = make_child(config::kind::array, name, description);
    n->min_length_ = min_length;
    n->max_length_ = max_length;
    n->element_ = std::make_unique<node>(config::kind::object, n->path_ + ".<i>", "An element of " + n->path_);
    return add(name, std::move(n));
}

node& node::boolean(const std::string& name, bool default_value, const std::string& description) {
    auto n = make_child(config::kind::boolean, name, description);
    n->default_ = default_value;
    return add(name, std::move(n));
}

node& node::integer(const std::string& name, std::int64_t default_value, const std::string& description,
                    std::int64_t min, std::int64_t max) {
    auto n = make_child(config::kind::integer, name, description);
    if (min > max) throw std::logic_error("schema: " + n->path_ + ": min > max");
    n->default_ = default_value;
    n->int_min_ = min;
    n->int_max_ = max;
    return add(name, std::move(n));
}

node& node::number(const std::string& name, double default_value, const std::string& description, double min,
                   double max) {
    auto n = make_child(config::kind::number, name, description);
    if (!(min <= max)) throw std::logic_error("schema: " + n->path_ + ": min > max");
    n->default_ = default_value;
    n->real_min_ = min;
    n->real_max_ = max;
    return add(name, std::move(n));
}

node& node::string(const std::string& name, const std::string& default_value, const std::string& description) {
    auto n = make_child(config::kind::string, name, description);
    n->default_ = json::string(default_value);
    return add(name, std::move(n));
}

node& node::enumeration(const std::string& name, const std::string& default_value, const std::string& description,
                        std::vector<std::string> allowed) {
    auto n = make_child(config::kind::enumeration, name, description);
    if (allowed.empty()) throw std::logic_error("schema: " + n->path_ + ": enumeration without allowed values");
    n->default_ = json::string(default_value);
    n->choices_ = std::move(allowed);
    return add(name, std::move(n));
}

node& node::time(const std::string& name, const std::string& default_value, const std::string& description,
                 std::uint64_t min_ps, std::uint64_t max_ps) {
    auto n = make_child(config::kind::time, name, description);
    if (min_ps > max_ps) throw std::logic_error("schema: " + n->path_ + ": min > max");
    n->default_ = json::string(default_value);
    n->u_min_ = min_ps;
    n->u_max_ = max_ps;
    return add(name, std::move(n));
}

node& node::rate(const std::string& name, const std::string& default_value, const std::string& description,
                 double min_bps, double max_bps) {
    auto n = make_child(config::kind::rate, name, description);
    if (!(min_bps <= max_bps)) throw std::logic_error("schema: " + n->path_ + ": min > max");
    n->default_ = json::string(default_value);
    n->real_min_ = min_bps;
    n->real_max_ = max_bps;
    return add(name, std::move(n));
}

node& node::size(const std::string& name, const std::string& default_value, const std::string& description,
                 std::uint64_t min_bytes, std::uint64_t max_bytes) {
    auto n = make_child(config::kind::size, name, description);
    if (min_bytes > max_bytes) throw std::logic_error("schema: " + n->path_ + ": min > max");
    n->default_ = json::string(default_value);
    n->u_min_ = min_bytes;
    n->u_max_ = max_bytes;
    return add(name, std::move(n));
}

node& node::frequency(const std::string& name, const std::string& default_value, const std::string& description,
                      double min_hz, double max_hz) {
    auto n = make_child(config::kind::frequency, name, description);
    if (!(min_hz <= max_hz)) throw std::logic_error("schema: " + n->path_ + ": min > max");
    n->default_ = json::string(default_value);
    n->real_min_ = min_hz;
    n->real_max_ = max_hz;
    return add(name, std::move(n));
}

node& node::size_list(const std::string& name, json::array default_value, const std::string& description,
                      std::uint64_t min_bytes, std::uint64_t max_bytes, std::size_t min_length,
                      std::size_t max_length) {
    auto n = make_child(config::kind::size_list, name, description);
    if (min_bytes > max_bytes) throw std::logic_error("schema: " + n->path_ + ": min > max");
    n->default_ = std::move(default_value);
    n->min_length_ = min_length;
    n->max_length_ = max_length;
    n->element_ = std::make_unique<node>(config::kind::size, n->path_ + ".<i>", "An element of " + n->path_);
    n->element_->u_min_ = min_bytes;
    n->element_->u_max_ = max_bytes;
    n->element_->default_ = json::string("0B");
    return add(name, std::move(n));
}

node& node::allowed(std::vector<std::int64_t> values) {
    require(config::kind::integer, "allowed()");
    if (values.empty()) throw std::logic_error("schema: " + path_ + ": allowed() with no values");
    allowed_ints_ = std::move(values);
    check_own_default();
    return *this;
}

node& node::inherits(const std::string& path) {
    if (!is_leaf()) throw std::logic_error("schema: " + path_ + ": inherits() needs a leaf, not " + kind_name(kind_));
    if (path.empty()) throw std::logic_error("schema: " + path_ + ": inherits() without a key");
    inherits_ = path;
    default_ = nullptr;
    return *this;
}

node& node::inherit_leaves_from(const std::string& object_path) {
    require(config::kind::object, "inherit_leaves_from()");
    for (const named_child& f : fields_) {
        const std::string from = object_path + "." + f.name;
        if (f.node->kind() == config::kind::object) {
            f.node->inherit_leaves_from(from);
        } else {
            f.node->inherits(from);  // an array or size list below is refused there: only leaves inherit
        }
    }
    return *this;
}

node& node::element() {
    if (kind_ != config::kind::array) require(config::kind::array, "element()");
    return *element_;
}

const node& node::element() const {
    if (kind_ != config::kind::array && kind_ != config::kind::size_list) require(config::kind::array, "element()");
    return *element_;
}

node& node::defaults(json::array elements) {
    require(config::kind::array, "defaults()");
    if (elements.size() < min_length_ || elements.size() > max_length_) {
        throw std::logic_error("schema: " + path_ + ": invalid default: expected " +
                               length_text(min_length_, max_length_) + ", got " + std::to_string(elements.size()));
    }
    default_ = std::move(elements);
    return *this;
}

std::string node::constraint() const {
    switch (kind_) {
    case config::kind::integer:
        if (!allowed_ints_.empty()) return "one of " + join_ints(allowed_ints_);
        return range_text(std::to_string(int_min_), std::to_string(int_max_), int_min_ != kIntMin, int_max_ != kIntMax);
    case config::kind::number:
        return range_text(format_double(real_min_), format_double(real_max_), std::isfinite(real_min_),
                          std::isfinite(real_max_));
    case config::kind::enumeration:
        return "one of " + join_quoted(choices_);
    case config::kind::time:
        return range_text(format_time_ps(u_min_), format_time_ps(u_max_), u_min_ != 0, u_max_ != kU64Max);
    case config::kind::size:
        return range_text(format_size(u_min_), format_size(u_max_), u_min_ != 0, u_max_ != kU64Max);
    case config::kind::rate:
        return range_text(format_rate(real_min_), format_rate(real_max_), real_min_ > 0, std::isfinite(real_max_));
    case config::kind::frequency:
        return range_text(format_frequency(real_min_), format_frequency(real_max_), real_min_ > 0,
                          std::isfinite(real_max_));
    case config::kind::array:
        return length_text(min_length_, max_length_);
    case config::kind::size_list: {
        std::string each = element_->constraint();
        return length_text(min_length_, max_length_) + (each.empty() ? "" : ", each " + each);
    }
    default:
        return "";
    }
}

std::string node::expectation() const {
    const std::string own = own_expectation();
    return inherits_.empty() ? own : own + ", or null for the value of " + inherits_;
}

std::string node::own_expectation() const {
    switch (kind_) {
    case config::kind::object: {
        std::string keys;
        for (const named_child& f : fields_) keys += (keys.empty() ? "" : ", ") + f.name;
        return "an object" + (keys.empty() ? std::string() : " (keys: " + keys + ")");
    }
    case config::kind::array:
        return "an array of " + length_text(min_length_, max_length_);
    case config::kind::size_list:
        return "a list of sizes such as [64, \"4KiB\"] with " + length_text(min_length_, max_length_);
    case config::kind::boolean:
        return "a boolean (true or false)";
    case config::kind::integer:
        if (!allowed_ints_.empty()) return "one of " + join_ints(allowed_ints_);
        return with_range("an integer", constraint());
    case config::kind::number:
        return with_range("a number", constraint());
    case config::kind::string:
        return "a string";
    case config::kind::enumeration:
        return constraint();
    case config::kind::time:
        return with_range(time_expectation(), constraint());
    case config::kind::rate:
        return with_range(rate_expectation(), constraint());
    case config::kind::size:
        return with_range(size_expectation(), constraint());
    case config::kind::frequency:
        return with_range(frequency_expectation(), constraint());
    }
    return "?";
}

std::string node::check_leaf(const json::value& v, json::value* canonical) const {
    auto type_error = [&](const std::string& expected) { return "expected " + expected + ", got " + brief_json(v); };
    auto out_of_range = [&](const std::string& what) {
        return brief_json(v) + " is out of range: expected " + with_range(what, constraint());
    };
    auto store = [&](json::value c) {
        if (canonical != nullptr) *canonical = std::move(c);
        return std::string();
    };
    if (v.is_null() && !inherits_.empty()) return store(nullptr);  // unset: the getters read inherits_
    switch (kind_) {
    case config::kind::boolean:
        if (!v.is_bool()) return type_error(expectation());
        return store(v.get_bool());
    case config::kind::integer: {
        std::int64_t i = 0;
        if (v.is_int64()) {
            i = v.get_int64();
        } else if (v.is_uint64()) {
            return out_of_range("an integer");
        } else {
            return type_error(expectation());
        }
        if (!allowed_ints_.empty()) {
            if (std::find(allowed_ints_.begin(), allowed_ints_.end(), i) == allowed_ints_.end()) {
                return brief_json(v) + " is not allowed: expected one of " + join_ints(allowed_ints_);
            }
        }
        if (i < int_min_ || i > int_max_) return out_of_range("an integer");
        return store(i);
    }
    case config::kind::number: {
        if (!v.is_number()) return type_error(expectation());
        const double d = v.to_number<double>();
        if (d < real_min_ || d > real_max_) return out_of_range("a number");
        return store(d);
    }
    case config::kind::string:
        if (!v.is_string()) return type_error(expectation());
        return store(v.get_string());
    case config::kind::enumeration: {
        if (!v.is_string()) return type_error(expectation());
        const std::string s(v.get_string());
        if (std::find(choices_.begin(), choices_.end(), s) == choices_.end()) {
            return brief_json(v) + " is not allowed: expected " + constraint();
        }
        return store(v.get_string());
    }
    case config::kind::time: {
        if (!v.is_string()) return type_error(time_expectation());
        std::string err;
        auto ps = parse_time_ps(std::string_view(v.get_string().data(), v.get_string().size()), &err);
        if (!ps) return err;
        if (*ps < u_min_ || *ps > u_max_) return out_of_range("a time");
        return store(*ps);
    }
    case config::kind::size: {
        std::optional<std::uint64_t> bytes;
        if (v.is_uint64()) {
            bytes = v.get_uint64();
        } else if (v.is_int64()) {
            if (v.get_int64() < 0) return type_error(size_expectation()) + " (negative values are not allowed)";
            bytes = static_cast<std::uint64_t>(v.get_int64());
        } else if (v.is_string()) {
            std::string err;
            bytes = parse_size_bytes(std::string_view(v.get_string().data(), v.get_string().size()), &err);
            if (!bytes) return err;
        } else {
            return type_error(size_expectation());
        }
        if (*bytes < u_min_ || *bytes > u_max_) return out_of_range("a size");
        return store(*bytes);
    }
    case config::kind::rate:
    case config::kind::frequency: {
        const bool is_rate = kind_ == config::kind::rate;
        if (!v.is_string()) return type_error(is_rate ? rate_expectation() : frequency_expectation());
        std::string err;
        const std::string_view text(v.get_string().data(), v.get_string().size());
        auto value = is_rate ? parse_rate_bps(text, &err) : parse_frequency_hz(text, &err);
        if (!value) return err;
        if (*value < real_min_ || *value > real_max_) return out_of_range(is_rate ? "a data rate" : "a frequency");
        return store(*value);
    }
    default:
        throw std::logic_error("schema: " + path_ + ": check_leaf() on a " + kind_name(kind_));
    }
}

// ---------------------------------------------------------------------------------------------------------------

schema::schema() : root_(std::make_shared<node>(config::kind::object, "", "A scenario")) {}

namespace {

// The leaf at a dotted path through objects only ("" if there is none).
const node* object_leaf(const node& root, const std::string& path) {
    const node* n = &root;
    std::size_t start = 0;
    while (n != nullptr && n->kind() == config::kind::object) {
        const std::size_t dot = path.find('.', start);
        n = n->field(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return n != nullptr && n->is_leaf() && n->path() == path ? n : nullptr;
}

void verify_inheritance(const node& root, const node& object) {
    for (const node::named_child& f : object.fields()) {
        const node& n = *f.node;
        if (n.kind() == config::kind::object) verify_inheritance(root, n);
        if (n.kind() == config::kind::array) verify_inheritance(root, n.element());
        if (n.inherited_from().empty()) continue;
        const node* from = object_leaf(root, n.inherited_from());
        if (from == nullptr || from->kind() != n.kind() || !from->inherited_from().empty()) {
            throw std::logic_error("schema: " + n.path() + ": inherits " + n.inherited_from() +
                                   ", which is not a non-inheriting " + kind_name(n.kind()) + " key outside arrays");
        }
    }
}

}  // namespace

void schema::verify() const {
    verify_inheritance(*root_, *root_);
    try {
        (void)scenario::from_string(*this, "{}", "(schema defaults)", {});
    } catch (const scenario_error& e) {
        throw std::logic_error(std::string("schema defaults are not a valid scenario: ") + e.what());
    }
}

namespace {

struct row {
    std::string key, kind, default_text, constraint, description;
};

void collect(const node& object, std::vector<row>& rows) {
    for (const node::named_child& f : object.fields()) {
        const node& n = *f.node;
        row r{n.path(), kind_name(n.kind()), "", n.constraint(), n.description()};
        if (!n.inherited_from().empty()) {
            r.default_text = "as " + n.inherited_from();
        } else if (n.is_leaf() || n.kind() == config::kind::size_list) {
            r.default_text = to_compact_json(n.default_value());
        } else if (n.kind() == config::kind::array && !n.default_value().is_null()) {
            r.default_text = to_compact_json(n.default_value());
        }
        rows.push_back(std::move(r));
        if (n.kind() == config::kind::object) collect(n, rows);
        if (n.kind() == config::kind::array) collect(n.element(), rows);
    }
}

std::string md_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace

std::string schema::describe() const {
    std::vector<row> rows;
    collect(*root_, rows);
    std::size_t key_width = 0;
    for (const row& r : rows) key_width = std::max(key_width, r.key.size());
    key_width = std::min<std::size_t>(key_width, 40);
    std::ostringstream out;
    out << "Scenario keys (dotted paths; <i> is an array index; every key is optional):\n";
    for (const row& r : rows) {
        std::string key = r.key;
        if (key.size() < key_width) key.resize(key_width, ' ');
        std::string kind = r.kind;
        if (kind.size() < 12) kind.resize(12, ' ');
        out << "  " << key << "  " << kind << r.description;
        std::string extra;
        if (!r.default_text.empty()) extra += "default " + r.default_text;
        if (!r.constraint.empty()) {
            const bool is_range = r.constraint[0] == '[' || r.constraint[0] == '<' || r.constraint[0] == '>';
            extra += (extra.empty() ? "" : "; ") + (is_range ? "range " + r.constraint : r.constraint);
        }
        if (!extra.empty()) out << " (" << extra << ")";
        out << "\n";
    }
    return out.str();
}

std::string schema::describe_markdown() const {
    std::vector<row> rows;
    collect(*root_, rows);
    std::ostringstream out;
    out << "| Key | Kind | Default | Allowed | Description |\n";
    out << "|---|---|---|---|---|\n";
    for (const row& r : rows) {
        out << "| `" << r.key << "` | " << r.kind << " | "
            << (r.default_text.empty() ? "" : "`" + md_escape(r.default_text) + "`") << " | " << md_escape(r.constraint)
            << " | " << md_escape(r.description) << " |\n";
    }
    return out.str();
}

}  // namespace rnic::config
