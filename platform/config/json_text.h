// JSON text helpers for scenario files: parsing with line:column diagnostics and duplicate-key detection,
// pretty printing, and short renderings of values for error messages.
#pragma once

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rnic::config {

struct json_syntax_error {
    std::size_t line = 1;    // 1-based
    std::size_t column = 1;  // 1-based, in bytes
    std::string key;         // dotted key where the error was detected ("" if at top level or unknown)
    std::string message;     // e.g. "expected ',' or '}'", "duplicate key"
};

// Parses a scenario file text. Accepts // and /* */ comments and trailing commas (Boost.JSON allow_comments,
// allow_trailing_commas); rejects duplicate keys (Boost.JSON would silently keep the last one) and any text after
// the document. Returns the error, or std::nullopt with the value in `out`.
std::optional<json_syntax_error> parse_json_text(std::string_view text, boost::json::value& out);

// Strict JSON (no comments, no trailing commas); nullopt if `text` is not exactly one JSON value.
std::optional<boost::json::value> try_parse_strict_json(std::string_view text);

// Shortest spelling of a double that reads back identically; integral values keep a ".0" so that they read back as
// doubles ("2.0", "0.1", "1e+20").
std::string format_double(double value);

// Indented JSON text (2 spaces), doubles through format_double. Ends with a newline.
std::string to_pretty_json(const boost::json::value& value);

// One-line JSON text with ", " and ": " separators, doubles through format_double: {"a": [1, 2.5]}.
std::string to_compact_json(const boost::json::value& value);

// Short rendering for messages: strings as JSON literals ("abc", cut after 60 characters), numbers, true/false/null,
// "an object", "an array of 3 elements".
std::string brief_json(const boost::json::value& value);

// A string as a JSON literal: "a\"b".
std::string quote(std::string_view text);

}  // namespace rnic::config
