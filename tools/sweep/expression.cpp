#include "expression.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace rnic::sweep {

ExpressionError::ExpressionError(std::size_t position, const std::string& problem)
    : std::runtime_error("at character " + std::to_string(position + 1) + ": " + problem), position_(position) {}

// Recursive descent over the text, emitting postfix steps.
class ExpressionParser {
 public:
  explicit ExpressionParser(const std::string& text) : text_(text) { e_.text_ = text; }

  Expression run() {
    skip_space();
    if (pos_ == text_.size()) throw ExpressionError(pos_, "empty expression");
    parse_expression(0);
    skip_space();
    if (pos_ != text_.size()) throw ExpressionError(pos_, "unexpected '" + std::string(1, text_[pos_]) + "'");
    return std::move(e_);
  }

 private:
  static constexpr int max_depth = 100;

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
  void emit(Expression::Op op) { e_.ops_.push_back({op, 0.0, 0}); }

  void parse_expression(int depth) {
    if (depth > max_depth) throw ExpressionError(pos_, "nested too deeply");
    term(depth);
    for (;;) {
      if (take('+')) {
        term(depth);
        emit(Expression::Op::add);
      } else if (take('-')) {
        term(depth);
        emit(Expression::Op::subtract);
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
        emit(Expression::Op::multiply);
      } else if (take('/')) {
        unary(depth);
        emit(Expression::Op::divide);
      } else {
        return;
      }
    }
  }

  void unary(int depth) {
    if (depth > max_depth) throw ExpressionError(pos_, "nested too deeply");
    if (take('-')) {
      unary(depth + 1);
      emit(Expression::Op::negate);
    } else if (take('+')) {
      unary(depth + 1);
    } else {
      primary(depth);
    }
  }

  void primary(int depth) {
    skip_space();
    if (pos_ == text_.size()) throw ExpressionError(pos_, "expected a number, a name or '(' at the end");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      parse_expression(depth + 1);
      if (!take(')')) throw ExpressionError(pos_, "expected ')'");
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
      if (name.back() == '.') throw ExpressionError(pos_ - 1, "a name does not end with '.'");
      if (take('(')) {
        Expression::Op op;
        if (name == "min")
          op = Expression::Op::min;
        else if (name == "max")
          op = Expression::Op::max;
        else
          throw ExpressionError(start, "unknown function '" + name + "' (functions: min, max)");
        parse_expression(depth + 1);
        if (!take(',')) throw ExpressionError(pos_, name + "() takes two arguments: expected ','");
        parse_expression(depth + 1);
        if (!take(')')) throw ExpressionError(pos_, name + "() takes two arguments: expected ')'");
        emit(op);
        return;
      }
      auto it = std::find(e_.names_.begin(), e_.names_.end(), name);
      if (it == e_.names_.end()) it = e_.names_.insert(e_.names_.end(), name);
      e_.ops_.push_back({Expression::Op::name, 0.0, static_cast<std::size_t>(it - e_.names_.begin())});
      return;
    }
    throw ExpressionError(pos_, "expected a number, a name or '(', got '" + std::string(1, c) + "'");
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
    if (n == 0) throw ExpressionError(start, "'.' is not a number");
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) throw ExpressionError(pos_, "expected the exponent's digits");
    }
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) != 0 || text_[pos_] == '_')) {
      throw ExpressionError(pos_, "a number followed by a letter (units are not part of expressions)");
    }
    // strtod reads exactly the characters accepted above (decimal digits, one '.', an exponent).
    e_.ops_.push_back({Expression::Op::number, std::strtod(text_.substr(start, pos_ - start).c_str(), nullptr), 0});
  }

  const std::string& text_;
  std::size_t pos_ = 0;
  Expression e_;
};

Expression Expression::parse(const std::string& text) { return ExpressionParser(text).run(); }

bool Expression::uses(const std::string& name) const {
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

double Expression::evaluate(const std::function<double(std::size_t)>& value) const {
  std::vector<double> stack;
  stack.reserve(ops_.size());
  std::vector<double> values(names_.size());
  for (std::size_t i = 0; i < names_.size(); ++i) values[i] = value(i);
  for (const Step& s : ops_) {
    if (s.op == Op::number) {
      stack.push_back(s.number);
      continue;
    }
    if (s.op == Op::name) {
      stack.push_back(values[s.name]);
      continue;
    }
    if (s.op == Op::negate) {
      stack.back() = -stack.back();
      continue;
    }
    const double b = stack.back();
    stack.pop_back();
    double& a = stack.back();
    switch (s.op) {
      case Op::add:
        a = a + b;
        break;
      case Op::subtract:
        a = a - b;
        break;
      case Op::multiply:
        a = a * b;
        break;
      case Op::divide:
        a = a / b;
        break;
      case Op::min:
        a = std::min(a, b);
        break;
      case Op::max:
        a = std::max(a, b);
        break;
      default:
        break;
    }
  }
  return stack.empty() ? 0.0 : stack.back();
}

}  // namespace rnic::sweep
