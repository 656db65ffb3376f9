// Arithmetic expressions of plot specs ("references" and "y_divide"): parsing and evaluation, no plotting.
//
//   expression := term { ("+" | "-") term }
//   term       := unary { ("*" | "/") unary }
//   unary      := ("-" | "+") unary | primary
//   primary    := number | name | function "(" expression "," expression ")" | "(" expression ")"
//   number     := digits [ "." digits ] [ ("e" | "E") [ "+" | "-" ] digits ]   (also ".5"; no hex, inf or nan)
//   name       := letter or "_", then letters, digits, "_" and "." ("x", "rate", "link.a_to_b.loss")
//   function   := "min" | "max"
// A name followed by "(" is a function call; any other name is a variable, resolved by the caller at evaluation.
// Evaluation follows IEEE arithmetic: a division by zero gives an infinity or NaN, which the caller checks.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rnic::sweep {

// A text that does not parse: `position` is the 0-based character offset of the problem.
class expression_error : public std::runtime_error {
public:
    expression_error(std::size_t position, const std::string& problem);
    std::size_t position() const { return position_; }

private:
    std::size_t position_;
};

class expression {
public:
    expression() = default;
    // Throws ExpressionError, e.g. "at character 5: expected a number, a name or '('".
    static expression parse(const std::string& text);

    const std::string& text() const { return text_; }
    bool empty() const { return ops_.empty(); }
    // The variables it uses, each once, in order of first use.
    const std::vector<std::string>& names() const { return names_; }
    bool uses(const std::string& name) const;
    // `value(i)` gives the value of names()[i].
    double evaluate(const std::function<double(std::size_t)>& value) const;

private:
    enum class op { number, name, negate, add, subtract, multiply, divide, min, max };
    struct step {
        expression::op op;
        double number = 0.0;   // Op::number
        std::size_t name = 0;  // Op::name: index into names_
    };
    friend class ExpressionParser;
    std::string text_;
    std::vector<step> ops_;  // postfix order
    std::vector<std::string> names_;
};

}  // namespace rnic::sweep
