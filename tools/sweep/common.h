// Shared helpers of rnic-sweep: the error type for bad input files, value rendering, small file utilities.
#pragma once

#include <boost/json/value.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rnic::sweep {

// A bad sweep file, plot spec or table: the message names the file and the field ("sweep.json: axes[1].range.step:
// must not be 0"). rnic-sweep prints it and exits with status 2.
class input_error : public std::runtime_error {
public:
    input_error(const std::string& file, const std::string& field, const std::string& problem);
    explicit input_error(const std::string& message) : std::runtime_error(message) {}
};

// The text of a value as rnic-sim's `--set KEY=VALUE` reads it, and as table cells show it: strings as they are
// (no quotes), integers in decimal, doubles through format_number ("0.001", "2.0", "61160.0"), true/false,
// null as "", arrays and objects as compact JSON without spaces ("[64,4096]").
std::string value_text(const boost::json::value& v);
// "name (unit)", or the name alone when the unit is empty (axis and legend labels).
std::string with_unit(const std::string& name, const std::string& unit);

// Shortest text that reads back as the same double, without an exponent from 1e-6 to 1e15: "0.001", "61160.0",
// "2.5e-07", "1e+20". Integral values keep ".0".
std::string format_number(double v);

// True when the value is a JSON number (int64, uint64 or double); as_number converts it.
bool is_number(const boost::json::value& v);
double as_number(const boost::json::value& v);

// Equality of table cells: numbers by value (1 == 1.0), everything else by value_text.
bool same_value(const boost::json::value& a, const boost::json::value& b);

// Whole-file read; throws InputError naming the file when it cannot be read.
std::string read_text_file(const std::string& path);
// Writes through a temporary file and a rename, so a reader never sees half a file. Throws std::runtime_error.
void write_text_file(const std::string& path, const std::string& text);

// A name made safe for file names: letters, digits, '.', '_', '+' and '-' kept, anything else becomes '_'.
std::string sanitize_name(std::string_view text, std::size_t max_length = 60);

}  // namespace rnic::sweep
