#include "expression.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace rnic::sweep {

expression_error::expression_error(std::size_t position, const std::string& problem)
    : std::runtime_error("at character " + std::to_string(position + 1) + ": " + problem), position_(position) {}

// Recursive descent over the text, emitting postfix steps.
class ExpressionParser {
public:
    explicit ExpressionParser(const std::string& text) : text_(text) { e_.text_ = text; }

    expression run() {
        skip_space();
        if (pos_ == text_.size()) throw expression_error(pos_, "empty expression");
        parse_expression(0);
        skip_space();
        if (pos_ != text_.size()) throw expression_error(pos_, "unexpected '" + std::string(1, text_[pos_]) + "'");
        return std::move(e_);
    }

private:
    static constexpr int kMaxDepth = 100;

    void skip_space() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0) ++pos_;
    }
    bool take(char c) {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    void emit(expression::op op) { e_.ops_.push_back({op, 0.0, 0}); }

    void parse_expression(int depth) {
        if (depth > kMaxDepth) throw expression_error(pos_, "nested too deeply");
        term(depth);
        for (;;) {
            if (take('+')) {
                term(depth);
                emit(expression::op::add);
            } else if (take('-')) {
                term(depth);
                emit(expression::op::subtract);
            } else {
                return;
            }
        }
    }

    void term(int depth) {
        unary(depth);
        for (;;) {
            if (take('*')) {
                unary(depth);
                emit(expression::op::multiply);
            } else if (take('/')) {
                unary(depth);
                emit(expression::op::divide);
            } else {
                return;
            }
        }
    }

    void unary(int depth) {
        if (depth > kMaxDepth) throw expression_error(pos_, "nested too deeply");
        if (take('-')) {
            unary(depth + 1);
            emit(expression::op::negate);
        } else if (take('+')) {
            unary(depth + 1);
        } else {
            primary(depth);
        }
    }

    void primary(int depth) {
        skip_space();
        if (pos_ == text_.size()) throw expression_error(pos_, "expected a number, a name or '(' at the end");
        const char c = text_[pos_];
        if (c == '(') {
            ++pos_;
            parse_expression(depth + 1);
            if (!take(')')) throw expression_error(pos_, "expected ')'");
            return;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.') {
            number();
            return;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
            const std::size_t start = pos_;
            while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) != 0 ||
                                           text_[pos_] == '_' || text_[pos_] == '.')) {
                ++pos_;
            }
            const std::string name = text_.substr(start, pos_ - start);
            if (name.back() == '.') throw expression_error(pos_ - 1, "a name does not end with '.'");
            if (take('(')) {
                expression::op op;
                if (name == "min")
                    op = expression::op::min;
                else if (name == "max")
                    op = expression::op::max;
                else
                    throw expression_error(start, "unknown function '" + name + "' (functions: min, max)");
                parse_expression(depth + 1);
                if (!take(',')) throw expression_error(pos_, name + "() takes two arguments: expected ','");
                parse_expression(depth + 1);
                if (!take(')')) throw expression_error(pos_, name + "() takes two arguments: expected ')'");
                emit(op);
                return;
            }
            auto it = std::find(e_.names_.begin(), e_.names_.end(), name);
            if (it == e_.names_.end()) it = e_.names_.insert(e_.names_.end(), name);
            e_.ops_.push_back({expression::op::name, 0.0, static_cast<std::size_t>(it - e_.names_.begin())});
            return;
        }
        throw expression_error(pos_, "expected a number, a name or '(', got '" + std::string(1, c) + "'");
    }

    void number() {
        const std::size_t start = pos_;
        auto digits = [&] {
            const std::size_t from = pos_;
            while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0) ++pos_;
            return pos_ - from;
        };
        std::size_t n = digits();
        if (pos_ < text_.size() && text_[pos_] == '.') {
            ++pos_;
            n += digits();
        }
        if (n == 0) throw expression_error(start, "'.' is not a number");
        if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
            if (digits() == 0) throw expression_error(pos_, "expected the exponent's digits");
        }
        if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) != 0 || text_[pos_] == '_')) {
            throw expression_error(pos_, "a number followed by a letter (units are not part of expressions)");
        }
        // strtod reads exactly the characters accepted above (decimal digits, one '.', an exponent).
        e_.ops_.push_back({expression::op::number, std::strtod(text_.substr(start, pos_ - start).c_str(), nullptr), 0});
    }

    const std::string& text_;
    std::size_t pos_ = 0;
    expression e_;
};

expression expression::parse(const std::string& text) {
    return ExpressionParser(text).run();
}

bool expression::uses(const std::string& name) const {
    return std::find(names_.begin(), names_.end(), name) != names_.end();
}

double expression::evaluate(const std::function<double(std::size_t)>& value) const {
    std::vector<double> stack;
    stack.reserve(ops_.size());
    std::vector<double> values(names_.size());
    for (std::size_t i = 0; i < names_.size(); ++i) values[i] = value(i);
    for (const step& s : ops_) {
        if (s.op == op::number) {
            stack.push_back(s.number);
            continue;
        }
        if (s.op == op::name) {
            stack.push_back(values[s.name]);
            continue;
        }
        if (s.op == op::negate) {
            stack.back() = -stack.back();
            continue;
        }
        const double b = stack.back();
        stack.pop_back();
        double& a = stack.back();
        switch (s.op) {
        case op::add:
            a = a + b;
            break;
        case op::subtract:
            a = a - b;
            break;
        case op::multiply:
            a = a * b;
            break;
        case op::divide:
            a = a / b;
            break;
        case op::min:
            a = std::min(a, b);
            break;
        case op::max:
            a = std::max(a, b);
            break;
        default:
            break;
        }
    }
    return stack.empty() ? 0.0 : stack.back();
}

}  // namespace rnic::sweep
