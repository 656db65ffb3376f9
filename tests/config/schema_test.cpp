#include "config/schema.h"

#include "test_schema.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <stdexcept>

namespace rnic::config {
namespace {

using testing::make_test_schema;

TEST(Schema, BuilderRecordsKindsPathsAndDefaults) {
    const schema s = make_test_schema();
    const node* link = s.root().field("link");
    ASSERT_NE(link, nullptr);
    EXPECT_EQ(link->kind(), kind::object);
    EXPECT_EQ(link->path(), "link");
    const node* rate = link->field("rate");
    ASSERT_NE(rate, nullptr);
    EXPECT_EQ(rate->kind(), kind::rate);
    EXPECT_EQ(rate->path(), "link.rate");
    EXPECT_EQ(rate->description(), "Line rate");
    EXPECT_EQ(rate->default_value(), boost::json::value("100Gbps"));
    const node* hosts = s.root().field("hosts");
    ASSERT_NE(hosts, nullptr);
    EXPECT_EQ(hosts->kind(), kind::array);
    EXPECT_EQ(hosts->min_length(), 2u);
    EXPECT_EQ(hosts->max_length(), 2u);
    const node* lanes = hosts->element().field("pcie")->field("lanes");
    ASSERT_NE(lanes, nullptr);
    EXPECT_EQ(lanes->path(), "hosts.<i>.pcie.lanes");
    EXPECT_EQ(s.root().field("workload")->field("sizes")->kind(), kind::size_list);
    // Declaration order is kept.
    ASSERT_EQ(link->fields().size(), 5u);
    EXPECT_EQ(link->fields()[0].name, "rate");
    EXPECT_EQ(link->fields()[4].name, "pfc");
}

TEST(Schema, ExpectationsAndConstraints) {
    const schema s = make_test_schema();
    const node& link = *s.root().field("link");
    EXPECT_EQ(link.field("mtu")->expectation(), "an integer in [576, 9216]");
    EXPECT_EQ(link.field("rate")->constraint(), "[1Mbps, 1.6Tbps]");
    EXPECT_EQ(link.field("propagation")->constraint(), "<= 1ms");
    EXPECT_EQ(link.field("pfc")->expectation(), "a boolean (true or false)");
    EXPECT_EQ(s.root().field("workload")->field("type")->expectation(), "one of \"send\", \"write\", \"read\"");
    EXPECT_EQ(s.root().field("hosts")->element().field("pcie")->field("lanes")->expectation(), "one of 1, 2, 4, 8, 16");
    EXPECT_EQ(s.root().field("hosts")->expectation(), "an array of exactly 2 elements");
    EXPECT_EQ(s.root().field("queues")->expectation(), "an array of at most 4 elements");
}

TEST(Schema, InvalidDefaultsAreLogicErrors) {
    schema s;
    auto& o = s.root().object("o", "An object");
    EXPECT_THROW(o.time("t", "500", "missing unit"), std::logic_error);
    EXPECT_THROW(o.time("t2", "5ms", "above max", 0, 1'000'000), std::logic_error);
    EXPECT_THROW(o.integer("i", 0, "below min", 1, 16), std::logic_error);
    EXPECT_THROW(o.enumeration("e", "x", "not allowed", {"a", "b"}), std::logic_error);
    EXPECT_THROW(o.rate("r", "100Gbs", "bad unit"), std::logic_error);
    EXPECT_THROW(o.size("z", "0.5B", "fractional"), std::logic_error);
    EXPECT_THROW(o.size_list("l", {64, "4kb"}, "bad element"), std::logic_error);
    EXPECT_THROW(o.size_list("l2", {}, "too short", 0, 100, 1, 4), std::logic_error);
    EXPECT_THROW(o.integer("lanes", 3, "not allowed", 1, 16).allowed({1, 2, 4}), std::logic_error);
    try {
        o.frequency("f", "1GHZ", "bad unit");
        FAIL() << "no exception";
    } catch (const std::logic_error& e) {
        EXPECT_TRUE(testing::contains_all(e.what(), {"o.f", "invalid default", "unknown unit \"GHZ\""}));
    }
}

TEST(Schema, BadNamesAndDuplicatesAreLogicErrors) {
    schema s;
    auto& o = s.root().object("o", "An object");
    o.integer("x", 1, "x");
    EXPECT_THROW(o.integer("x", 2, "again"), std::logic_error);
    EXPECT_THROW(o.boolean("a.b", true, "dot"), std::logic_error);
    EXPECT_THROW(o.boolean("12", true, "digits"), std::logic_error);
    EXPECT_THROW(o.boolean("", true, "empty"), std::logic_error);
    EXPECT_THROW(o.boolean("a=b", true, "equals"), std::logic_error);
    EXPECT_THROW(o.integer("r", 5, "min > max", 10, 1), std::logic_error);
}

TEST(Schema, BuilderOnWrongKindIsLogicError) {
    schema s;
    auto& leaf = s.root().integer("n", 1, "a leaf");
    EXPECT_THROW(leaf.integer("m", 1, "child of a leaf"), std::logic_error);
    EXPECT_THROW(leaf.element(), std::logic_error);
    EXPECT_THROW(s.root().object("o", "obj").allowed({1}), std::logic_error);
    EXPECT_THROW(s.root().defaults({}), std::logic_error);
    auto& arr = s.root().array("arr", "an array", 1, 2);
    EXPECT_THROW(arr.defaults({{{"a", 1}}, {{"a", 2}}, {{"a", 3}}}), std::logic_error) << "too many default elements";
}

TEST(Schema, VerifyAcceptsConsistentSchema) {
    const schema s = make_test_schema();
    EXPECT_NO_THROW(s.verify());
}

TEST(Schema, VerifyRejectsInvalidArrayDefault) {
    schema s;
    auto& arr = s.root().array("hosts", "hosts", 1, 2);
    arr.element().integer("lanes", 4, "lanes", 1, 16);
    arr.defaults({{{"lanes", 32}}});
    EXPECT_THROW(s.verify(), std::logic_error);
    schema s2;
    auto& arr2 = s2.root().array("hosts", "hosts", 1, 2);
    arr2.element().integer("lanes", 4, "lanes", 1, 16);
    arr2.defaults({{{"lane", 2}}});
    try {
        s2.verify();
        FAIL() << "no exception";
    } catch (const std::logic_error& e) {
        EXPECT_TRUE(testing::contains_all(e.what(), {"hosts.0.lane", "unknown key", "did you mean \"lanes\"?"}));
    }
}

TEST(Schema, VerifyRunsChecksOnDefaults) {
    schema s;
    s.root().integer("a", 1, "a");
    s.add_check([](const scenario&) { return std::string("a: always fails"); });
    EXPECT_THROW(s.verify(), std::logic_error);
}

TEST(Schema, DescribeListsEveryKey) {
    const schema s = make_test_schema();
    const std::string text = s.describe();
    EXPECT_TRUE(testing::contains_all(text, {"link ",
                                             "object",
                                             "The Ethernet link between the hosts",
                                             "link.rate",
                                             "rate",
                                             "Line rate",
                                             "(default \"100Gbps\"; range [1Mbps, 1.6Tbps])",
                                             "hosts.<i>.pcie.lanes",
                                             "one of 1, 2, 4, 8, 16",
                                             "workload.type",
                                             "one of \"send\", \"write\", \"read\"",
                                             "workload.sizes",
                                             "size list",
                                             "default [64, \"4KiB\", \"1MiB\"]",
                                             "exactly 2 elements",
                                             "default [{\"name\": \"a\"}, {\"name\": \"b\"}]",
                                             "(default 0.0; range [0.0, 1.0])",
                                             "link.mtu",
                                             "[576, 9216]",
                                             "queues.<i>.depth"}));
    // One line per key plus the header.
    std::size_t lines = 0;
    for (char c : text) lines += c == '\n' ? 1 : 0;
    EXPECT_EQ(lines, 1u + 22u);
}

TEST(Schema, DescribeMarkdownIsATable) {
    const schema s = make_test_schema();
    const std::string md = s.describe_markdown();
    EXPECT_EQ(md.rfind("| Key | Kind | Default | Allowed | Description |\n|---|---|---|---|---|\n", 0), 0u);
    EXPECT_TRUE(testing::contains_all(md, {"| `link.rate` | rate | `\"100Gbps\"` | [1Mbps, 1.6Tbps] | Line rate |"}));
}

}  // namespace
}  // namespace rnic::config
