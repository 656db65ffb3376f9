// Plot expressions: grammar (precedence, unary minus, numbers, names, min/max), evaluation, and the errors of texts
// that do not parse.
#include "expression.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

using namespace rnic::sweep;

namespace {

double eval(const std::string& text, const std::map<std::string, double>& names = {}) {
    const expression e = expression::parse(text);
    return e.evaluate([&](std::size_t i) { return names.at(e.names()[i]); });
}

std::string parse_error(const std::string& text) {
    try {
        (void)expression::parse(text);
    } catch (const expression_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Expression, ArithmeticAndPrecedence) {
    EXPECT_DOUBLE_EQ(eval("1 + 2 * 3"), 7.0);
    EXPECT_DOUBLE_EQ(eval("(1 + 2) * 3"), 9.0);
    EXPECT_DOUBLE_EQ(eval("8 / 2 / 2"), 2.0);  // left to right
    EXPECT_DOUBLE_EQ(eval("10 - 4 - 3"), 3.0);
    EXPECT_DOUBLE_EQ(eval("-2 * -3"), 6.0);
    EXPECT_DOUBLE_EQ(eval("2 - -1"), 3.0);
    EXPECT_DOUBLE_EQ(eval("-(1 + 1)"), -2.0);
    EXPECT_DOUBLE_EQ(eval("+4"), 4.0);
    EXPECT_DOUBLE_EQ(eval("--4"), 4.0);
    EXPECT_DOUBLE_EQ(eval("  3*4  "), 12.0);
}

TEST(Expression, Numbers) {
    EXPECT_DOUBLE_EQ(eval("1e-6 * 1e6"), 1.0);
    EXPECT_DOUBLE_EQ(eval(".5 + 1.5E1"), 15.5);
    EXPECT_DOUBLE_EQ(eval("2.e+2"), 200.0);
    EXPECT_DOUBLE_EQ(eval("0.5e-6"), 0.5e-6);
}

TEST(Expression, NamesAndFunctions) {
    const expression e = expression::parse("x * 1e9 * 2 * link.propagation / 8 / 1024 + x");
    ASSERT_EQ(e.names().size(), 2u);  // each name once, in order of first use
    EXPECT_EQ(e.names()[0], "x");
    EXPECT_EQ(e.names()[1], "link.propagation");
    EXPECT_TRUE(e.uses("x"));
    EXPECT_FALSE(e.uses("link"));
    EXPECT_EQ(e.text(), "x * 1e9 * 2 * link.propagation / 8 / 1024 + x");
    EXPECT_DOUBLE_EQ(eval("x * 1e9 * 2 * link.propagation / 8 / 1024 + x", {{"x", 10.0}, {"link.propagation", 0.5e-6}}),
                     10.0 * 1e9 * 2 * 0.5e-6 / 8 / 1024 + 10.0);
    EXPECT_DOUBLE_EQ(eval("min(3, max(1, 2))"), 2.0);
    EXPECT_DOUBLE_EQ(eval("max(rate, 40) / min (a_b, 2)", {{"rate", 100.0}, {"a_b", 4.0}}), 50.0);
    EXPECT_DOUBLE_EQ(eval("-min(1, 2)"), -1.0);
    // IEEE arithmetic: the caller checks for infinities and NaN.
    EXPECT_TRUE(std::isinf(eval("1 / 0")));
    EXPECT_TRUE(std::isnan(eval("0 / 0")));
}

TEST(Expression, ErrorsSayWhereAndWhat) {
    EXPECT_EQ(parse_error(""), "at character 1: empty expression");
    EXPECT_EQ(parse_error("   "), "at character 4: empty expression");
    EXPECT_EQ(parse_error("1 +"), "at character 4: expected a number, a name or '(' at the end");
    EXPECT_EQ(parse_error("(1 + 2"), "at character 7: expected ')'");
    EXPECT_EQ(parse_error("1 2"), "at character 3: unexpected '2'");
    EXPECT_EQ(parse_error("1 ) "), "at character 3: unexpected ')'");
    EXPECT_EQ(parse_error("2 * $"), "at character 5: expected a number, a name or '(', got '$'");
    EXPECT_EQ(parse_error("10Gbps / 8"),
              "at character 3: a number followed by a letter (units are not part of expressions)");
    EXPECT_EQ(parse_error("1e"), "at character 3: expected the exponent's digits");
    EXPECT_EQ(parse_error("1e+x"), "at character 4: expected the exponent's digits");
    EXPECT_EQ(parse_error(". + 1"), "at character 1: '.' is not a number");
    EXPECT_EQ(parse_error("link. * 2"), "at character 5: a name does not end with '.'");
    EXPECT_EQ(parse_error("log(2, 3)"), "at character 1: unknown function 'log' (functions: min, max)");
    EXPECT_EQ(parse_error("min(2)"), "at character 6: min() takes two arguments: expected ','");
    EXPECT_EQ(parse_error("max(1, 2, 3)"), "at character 9: max() takes two arguments: expected ')'");
    EXPECT_EQ(parse_error("x ^ 2"), "at character 3: unexpected '^'");
    EXPECT_NE(parse_error(std::string(500, '(') + "1" + std::string(500, ')')).find("nested too deeply"),
              std::string::npos);
    EXPECT_NE(parse_error(std::string(500, '-') + "1").find("nested too deeply"), std::string::npos);
}
