// A loaded, validated scenario: JSON file + `--set KEY=VALUE` overrides + schema defaults.
//
// Loading (Scenario::load / Scenario::from_string):
//   1. read the file (UTF-8 JSON; // and /* */ comments and trailing commas are allowed; duplicate keys are errors);
//   2. validate it against the schema and fill in defaults for every omitted key (arrays omitted get the array's
//      declared defaults, or min_length default elements; elements given get defaults for their omitted keys);
//   3. apply the overrides in order (a later override of the same key wins). An override may name any key of the
//      schema, including keys the file omitted, array elements ("hosts.1.pcie.lanes") and size-list elements
//      ("workload.sizes.0"); the index must exist (no appending). A whole object or array may be replaced
//      ("--set workload.sizes=[64,4096]"); it is validated and default-filled like file content;
//   4. run the schema's cross-field checks.
//
// Override values: the text after the first '=' is parsed as strict JSON if it is valid JSON (numbers, true/false,
// null, "quoted strings", arrays, objects), else taken as a plain string. For string-like keys (string,
// enumeration, time, rate, frequency) a value that parses as non-string JSON is also taken as the plain text, so
// `--set hosts.0.name=123` gives the name "123" and `--set link.propagation=500` reports a missing unit.
//
// Errors: every failure throws ScenarioError (a std::runtime_error) whose what() is ONE line:
//   <file>: <dotted.key>: <what was expected and what was found>
//   <file>:<line>:<column>: [<dotted.key>: ]<JSON syntax problem>
//   --set <override text>: <dotted.key>: <problem>
// e.g.  x.json: link.rate: expected a data rate such as "100Gbps" (units bps, ...), got "100Gbs" (unknown unit "Gbs")
//       x.json: hosts.0.pcie.lanes: 12 is not allowed: expected one of 1, 2, 4, 8, 16
//       x.json: link.rat: unknown key (known keys in link: rate, propagation, mtu); did you mean "rate"?
//       x.json:3:17: syntax error near "\"mtu\": 1500" (at link.rate)
// The file is validated before overrides are applied, so an override cannot repair an invalid file.
//
// Access: getters take dotted paths into the validated tree. Asking for a path the schema does not have, an array
// index that does not exist, or the wrong kind (get_int on a time) is a programming error: std::logic_error.
// An inheriting leaf left unset (null; Node::inherits) reads as the key it inherits.
// get_number also accepts integer keys; get_string also accepts enumeration keys; array_size works on arrays and
// size lists. A Scenario keeps the schema's node tree alive (shared), so it may outlive the Schema object.
#pragma once

#include "config/schema.h"

#include <boost/json/value.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rnic::config {

class scenario_error : public std::runtime_error {
public:
    explicit scenario_error(const std::string& message) : std::runtime_error(message) {}
};

class scenario {
public:
    // Loads the file at `path` (the path is used verbatim in messages).
    static scenario load(const schema& schema, const std::string& path, const std::vector<std::string>& overrides = {});
    // Same from JSON text; `origin_name` stands for the file name in messages.
    static scenario from_string(const schema& schema, const std::string& json_text, const std::string& origin_name,
                                const std::vector<std::string>& overrides = {});
    // All defaults (plus overrides); origin "(defaults)".
    static scenario defaults(const schema& schema, const std::vector<std::string>& overrides = {});

    bool get_bool(const std::string& path) const;
    std::int64_t get_int(const std::string& path) const;
    double get_number(const std::string& path) const;
    std::string get_string(const std::string& path) const;
    std::uint64_t get_time_ps(const std::string& path) const;
    double get_rate_bps(const std::string& path) const;
    std::uint64_t get_size(const std::string& path) const;
    double get_frequency_hz(const std::string& path) const;
    std::vector<std::uint64_t> get_size_list(const std::string& path) const;
    std::size_t array_size(const std::string& path) const;
    // Whether `path` names an existing key or element (e.g. to probe "hosts.2").
    bool has(const std::string& path) const;
    // Whether the leaf at `path` has a value of its own: false only for an inheriting leaf left unset.
    bool is_set(const std::string& path) const;
    // The key whose value the getters return for `path`: `path`, or the key an unset inheriting leaf inherits
    // (for messages about the value, e.g. a loss trace that cannot be read).
    std::string value_key(const std::string& path) const;
    // The subtree at `path` as it appears in as_run() (user notation); "" for the whole tree.
    const boost::json::value& get_json(const std::string& path) const;

    // The scenario as run: every key (schema order), defaults filled, overrides applied, values in the user's notation
    // ("100Gbps", 4096 or "4KiB"). Loading its serialization again yields the same as_run().
    const boost::json::value& as_run() const { return run_; }
    // as_run() as indented JSON text, for the results file.
    std::string as_run_text() const;

    const std::string& origin() const { return origin_; }
    const std::vector<std::string>& overrides() const { return overrides_; }

private:
    scenario() = default;
    static scenario build(const schema& schema, const boost::json::value& file_value, const std::string& origin,
                          const std::vector<std::string>& overrides);
    struct found {
        const config::node* node;
        const boost::json::value* run;
        const boost::json::value* canonical;
    };
    // Throws std::logic_error naming `caller` on unknown paths.
    found lookup(const std::string& path, const char* caller) const;
    found lookup_leaf(const std::string& path, const char* caller, config::kind kind, config::kind alt) const;

    std::shared_ptr<const config::node> root_;
    boost::json::value run_;        // user notation
    boost::json::value canonical_;  // same shape; leaves canonical (uint64 ps/bytes, double bps/Hz, ...)
    std::string origin_;
    std::vector<std::string> overrides_;
};

}  // namespace rnic::config
