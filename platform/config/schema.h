// Declarative schema of scenario files.
//
// A schema is a tree of Nodes:
//   * object nodes: named fields, in declaration order (which is also the order of the "as run" output);
//   * array nodes: an element schema (an object node) and a min/max length;
//   * leaves: boolean, integer (int64, min/max, optional list of allowed values), number (double, min/max), string,
//     enumeration (allowed strings), time / rate / size / frequency (min/max in canonical units: ps, bit/s, bytes,
//     Hz; see units.h), and size_list (an array of sizes with per-element and length bounds).
// Every node has a one-line description and every leaf a default, so scenario files may omit any key.
//
// Builder usage (each declaration returns the new node; leaves return themselves so they can be refined):
//
//   using namespace rnic::config::literals;
//   rnic::config::Schema s;
//   auto& link = s.root().object("link", "The Ethernet link between the hosts");
//   link.rate("rate", "100Gbps", "Line rate", 1_Mbps, 1.6_Tbps);
//   link.time("propagation", "500ns", "One-way propagation delay", 0, 1_ms);
//   link.integer("mtu", 1500, "IP MTU in bytes", 576, 9216);
//   auto& hosts = s.root().array("hosts", "The two hosts", 2, 2);
//   hosts.defaults({{{"name", "a"}}, {{"name", "b"}}});   // optional; otherwise min_length default elements
//   auto& host = hosts.element();                           // the element schema: an object node
//   host.string("name", "host", "Host name");
//   host.object("pcie", "PCIe link to the NIC").integer("lanes", 8, "Lane count", 1, 16).allowed({1, 2, 4, 8, 16});
//   auto& wl = s.root().object("workload", "Traffic");
//   wl.enumeration("type", "write", "RDMA verb", {"send", "write", "read"});
//   wl.size_list("sizes", {64, "4KiB", "1MiB"}, "Message sizes", 1, 1_GiB, 1, 64);
//
// A leaf may inherit another key's value while it is not set (`inherits`): its default is then null, a file or
// override may write null to unset it again, and the getters read the key it inherits, e.g.
//   host.rate("rate", "100Gbps", "This host's line rate").inherits("link.rate");
//
// Declaration errors (duplicate or malformed names, defaults that violate their own bounds, builder calls on the
// wrong kind of node) throw std::logic_error immediately: they are programming errors.
// Keys may not contain '.', '=' or blanks and may not be all digits (dotted paths use numbers as array indices).
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace rnic::config {

class scenario;

enum class kind {
    object,
    array,
    boolean,
    integer,
    number,
    string,
    enumeration,
    time,
    rate,
    size,
    frequency,
    size_list,
};

// "object", "array", "boolean", "integer", "number", "string", "enumeration", "time", "rate", "size", "frequency",
// "size list".
const char* kind_name(config::kind kind);

class node {
public:
    static constexpr std::int64_t kIntMin = std::numeric_limits<std::int64_t>::min();
    static constexpr std::int64_t kIntMax = std::numeric_limits<std::int64_t>::max();
    static constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
    static constexpr double kInf = std::numeric_limits<double>::infinity();
    static constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();

    struct named_child {
        std::string name;
        std::unique_ptr<config::node> node;
    };

    node(config::kind kind, std::string path, std::string description);
    node(const node&) = delete;
    node& operator=(const node&) = delete;
    ~node();

    // ---- Building (object nodes only). Each returns the newly declared child. ----
    node& object(const std::string& name, const std::string& description);
    node& array(const std::string& name, const std::string& description, std::size_t min_length = 0,
                std::size_t max_length = kUnbounded);
    node& boolean(const std::string& name, bool default_value, const std::string& description);
    node& integer(const std::string& name, std::int64_t default_value, const std::string& description,
                  std::int64_t min = kIntMin, std::int64_t max = kIntMax);
    node& number(const std::string& name, double default_value, const std::string& description, double min = -kInf,
                 double max = kInf);
    node& string(const std::string& name, const std::string& default_value, const std::string& description);
    node& enumeration(const std::string& name, const std::string& default_value, const std::string& description,
                      std::vector<std::string> allowed);
    node& time(const std::string& name, const std::string& default_value, const std::string& description,
               std::uint64_t min_ps = 0, std::uint64_t max_ps = kU64Max);
    node& rate(const std::string& name, const std::string& default_value, const std::string& description,
               double min_bps = 0, double max_bps = kInf);
    node& size(const std::string& name, const std::string& default_value, const std::string& description,
               std::uint64_t min_bytes = 0, std::uint64_t max_bytes = kU64Max);
    node& frequency(const std::string& name, const std::string& default_value, const std::string& description,
                    double min_hz = 0, double max_hz = kInf);
    // Default elements are sizes: JSON integers (bytes) or strings with units, e.g. {64, "4KiB"}.
    node& size_list(const std::string& name, boost::json::array default_value, const std::string& description,
                    std::uint64_t min_bytes = 0, std::uint64_t max_bytes = kU64Max, std::size_t min_length = 0,
                    std::size_t max_length = kUnbounded);

    // ---- Refining. ----
    // Integer leaves: the value must also be one of `values` (e.g. PCIe lane counts {1, 2, 4, 8, 16}).
    node& allowed(std::vector<std::int64_t> values);
    // Leaves: while unset (JSON null, which becomes the default) the value is that of the leaf at `path`, a dotted
    // key outside any array, of the same kind, that does not inherit itself (Schema::verify checks). The getters
    // follow it; Scenario::is_set tells whether the key has a value of its own. Its own range still applies.
    node& inherits(const std::string& path);
    // Object nodes: every leaf below inherits the leaf at the same relative path under `object_path` (as
    // inherits() on each), so a per-host copy of a global object declared by the same code follows that
    // object key by key, e.g. hosts.<i>.pcie.lanes -> pcie.lanes. Declare the fields first.
    node& inherit_leaves_from(const std::string& object_path);
    // Array nodes: the element schema (an object node; declare its fields on it).
    node& element();
    // Array nodes: the content used when the key is omitted (validated like user input when a scenario is loaded;
    // a violation is a std::logic_error). Without it, an omitted array has min_length default elements.
    node& defaults(boost::json::array elements);

    // ---- Introspection (used by Scenario and describe()). ----
    config::kind kind() const { return kind_; }
    bool is_leaf() const {
        return kind_ != config::kind::object && kind_ != config::kind::array && kind_ != config::kind::size_list;
    }
    // Dotted path with "<i>" for array elements, e.g. "hosts.<i>.pcie.lanes"; "" for the root.
    const std::string& path() const { return path_; }
    const std::string& description() const { return description_; }
    const std::vector<named_child>& fields() const { return fields_; }
    const node* field(const std::string& name) const;
    const node& element() const;  // arrays and size lists (a size leaf)
    std::size_t min_length() const { return min_length_; }
    std::size_t max_length() const { return max_length_; }
    // Leaves: the default in user notation; arrays: the explicit default (null if none); objects: null.
    const boost::json::value& default_value() const { return default_; }
    // Leaves: the key an unset value stands for ("" if the leaf does not inherit).
    const std::string& inherited_from() const { return inherits_; }

    // What a valid value looks like, e.g. `an integer in [1, 16]`, `one of "send", "write"`,
    // `a time such as "500ns" (units ps, ns, us, ms, s) in [0ps, 1ms]`.
    std::string expectation() const;
    // Range/allowed-value summary for documentation, e.g. "[1, 16]", ">= 1Mbps", "one of send, write" ("" if none).
    std::string constraint() const;

    // Checks a leaf value (JSON as written). Returns "" if valid, storing the canonical value (bool, int64, double,
    // string, uint64 ps/bytes, double bps/Hz) into *canonical if non-null; otherwise returns the complete
    // "expected ..., got ..." / "... is out of range: expected ..." sentence. Leaves only.
    std::string check_leaf(const boost::json::value& value, boost::json::value* canonical) const;

private:
    node& add(const std::string& name, std::unique_ptr<node> child);
    std::unique_ptr<node> make_child(config::kind kind, const std::string& name, const std::string& description) const;
    void require(config::kind kind, const char* what) const;
    void check_own_default();
    std::string own_expectation() const;  // expectation() without what null means for an inheriting leaf

    config::kind kind_;
    std::string path_;
    std::string description_;
    std::vector<named_child> fields_;
    std::unique_ptr<node> element_;
    std::size_t min_length_ = 0;
    std::size_t max_length_ = kUnbounded;
    boost::json::value default_;
    std::int64_t int_min_ = kIntMin;
    std::int64_t int_max_ = kIntMax;
    std::vector<std::int64_t> allowed_ints_;
    double real_min_ = -kInf;
    double real_max_ = kInf;
    std::uint64_t u_min_ = 0;
    std::uint64_t u_max_ = kU64Max;
    std::vector<std::string> choices_;
    std::string inherits_;
};

// A cross-field rule, run after defaults and overrides are applied. Returns "" if satisfied, otherwise a message
// starting with the offending dotted key, e.g. "hosts.1.name: must differ from hosts.0.name (both \"a\")".
using check_fn = std::function<std::string(const scenario&)>;

class schema {
public:
    schema();

    node& root() { return *root_; }
    const node& root() const { return *root_; }
    std::shared_ptr<const node> shared_root() const { return root_; }

    void add_check(check_fn check) { checks_.push_back(std::move(check)); }
    const std::vector<check_fn>& checks() const { return checks_; }

    // Verifies that the defaults alone form a valid scenario (array defaults, checks) and that every inheriting leaf
    // names a leaf it may inherit; throws std::logic_error if not.
    void verify() const;

    // Every key, one per line: dotted key ("<i>" for array elements), kind, description, default and range, e.g.
    //   link.rate                  rate         Line rate (default "100Gbps"; range [1Mbps, 1.6Tbps])
    // For `rnic-sim --help-scenario`.
    std::string describe() const;
    // The same as a Markdown table (Key | Kind | Default | Allowed | Description), for docs/.
    std::string describe_markdown() const;

private:
    std::shared_ptr<node> root_;
    std::vector<check_fn> checks_;
};

}  // namespace rnic::config
