// Leaves that inherit another key's value while unset (Node::inherits): per-element overrides of a global
// setting, as hosts.<i>.link.* of link.* in the platform.
#include "config/scenario.h"
#include "config/schema.h"

#include "test_schema.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <stdexcept>

namespace rnic::config {
namespace {

namespace json = boost::json;
using testing::contains_all;
using testing::error_of;

schema inheriting_schema() {
    using namespace rnic::config::literals;
    schema s;
    auto& link = s.root().object("link", "Every host's link");
    link.rate("rate", "100Gbps", "Line rate", 1_Mbps, 1.6_Tbps);
    link.number("loss", 0.0, "Loss probability", 0.0, 1.0);
    link.boolean("pfc", false, "Priority flow control");
    link.string("trace", "", "Loss trace");
    auto& hosts = s.root().array("hosts", "The hosts", 1, 4);
    auto& own = hosts.element().object("link", "This host's link (unset keys: link.*)");
    own.rate("rate", "100Gbps", "Line rate", 1_Mbps, 1.6_Tbps).inherits("link.rate");
    own.number("loss", 0.0, "Loss probability", 0.0, 1.0).inherits("link.loss");
    own.boolean("pfc", false, "Priority flow control").inherits("link.pfc");
    own.string("trace", "", "Loss trace").inherits("link.trace");
    s.verify();
    return s;
}

scenario load(const std::string& text, const std::vector<std::string>& overrides = {}) {
    return scenario::from_string(inheriting_schema(), text, "x.json", overrides);
}

TEST(Inherit, UnsetLeavesReadTheKeyTheyInherit) {
    const scenario s =
        load(R"({"link": {"rate": "40Gbps", "loss": 0.5}, "hosts": [{}, {"link": {"rate": "10Gbps"}}]})");
    EXPECT_DOUBLE_EQ(s.get_rate_bps("hosts.0.link.rate"), 40e9);
    EXPECT_DOUBLE_EQ(s.get_rate_bps("hosts.1.link.rate"), 10e9);
    EXPECT_DOUBLE_EQ(s.get_number("hosts.1.link.loss"), 0.5);
    EXPECT_FALSE(s.get_bool("hosts.1.link.pfc"));
    EXPECT_EQ(s.get_string("hosts.1.link.trace"), "");
    EXPECT_FALSE(s.is_set("hosts.0.link.rate"));
    EXPECT_TRUE(s.is_set("hosts.1.link.rate"));
    EXPECT_TRUE(s.is_set("link.rate"));
    EXPECT_EQ(s.value_key("hosts.0.link.rate"), "link.rate");
    EXPECT_EQ(s.value_key("hosts.1.link.rate"), "hosts.1.link.rate");
    // The echo keeps what was written: null for unset keys, and it loads back the same.
    EXPECT_TRUE(s.as_run().at("hosts").at(0).at("link").at("rate").is_null());
    EXPECT_EQ(s.as_run().at("hosts").at(1).at("link").at("rate"), json::value("10Gbps"));
    EXPECT_EQ(load(s.as_run_text()).as_run(), s.as_run());
}

TEST(Inherit, OverridesOfTheGlobalKeyReachUnsetLeavesOnly) {
    const scenario s = load(R"({"hosts": [{}, {"link": {"loss": 0.25}}]})", {"link.loss=0.125", "link.pfc=true"});
    EXPECT_DOUBLE_EQ(s.get_number("hosts.0.link.loss"), 0.125);
    EXPECT_DOUBLE_EQ(s.get_number("hosts.1.link.loss"), 0.25);
    EXPECT_TRUE(s.get_bool("hosts.1.link.pfc"));
}

TEST(Inherit, NullUnsetsAgainInFilesAndOverrides) {
    const scenario s = load(R"({"hosts": [{"link": {"rate": "1Gbps", "trace": "t.txt"}}]})",
                            {"hosts.0.link.rate=null", "hosts.0.link.trace=null"});
    EXPECT_FALSE(s.is_set("hosts.0.link.rate"));
    EXPECT_DOUBLE_EQ(s.get_rate_bps("hosts.0.link.rate"), 100e9);
    EXPECT_EQ(s.get_string("hosts.0.link.trace"), "");
    const scenario f = load(R"({"hosts": [{"link": {"pfc": null}}]})");
    EXPECT_FALSE(f.is_set("hosts.0.link.pfc"));
}

TEST(Inherit, OwnValuesAreCheckedAgainstTheirOwnRange) {
    const schema schema = inheriting_schema();
    const std::string range =
        error_of([&] { (void)scenario::from_string(schema, R"({"hosts": [{"link": {"loss": 1.5}}]})", "x.json"); });
    EXPECT_TRUE(contains_all(range, {"x.json: hosts.0.link.loss: 1.5 is out of range"})) << range;
    const std::string type = error_of([&] { (void)scenario::defaults(schema, {"hosts.0.link.pfc=3"}); });
    EXPECT_TRUE(contains_all(type, {"hosts.0.link.pfc", "or null for the value of link.pfc", "got 3"})) << type;
    // null is no value for a key that inherits nothing.
    const std::string plain = error_of([&] { (void)scenario::defaults(schema, {"link.loss=null"}); });
    EXPECT_TRUE(contains_all(plain, {"link.loss", "got null"})) << plain;
    // For a string-like key that inherits nothing, null is the plain text "null".
    const std::string rate = error_of([&] { (void)scenario::defaults(schema, {"link.rate=null"}); });
    EXPECT_TRUE(contains_all(rate, {"link.rate", "\"null\""})) << rate;
}

TEST(Inherit, DescribeSaysWhatAnUnsetKeyTakes) {
    const std::string text = inheriting_schema().describe();
    EXPECT_TRUE(contains_all(text, {"hosts.<i>.link.rate", "(default as link.rate; range [1Mbps, 1.6Tbps])"})) << text;
}

TEST(Inherit, VerifyRefusesWhatCannotBeInherited) {
    auto refused = [](const std::string& from, const char* why) {
        schema s;
        s.root().number("x", 0, "x");
        s.root().integer("n", 0, "n");
        s.root().number("y", 0, "y").inherits("x");
        s.root().array("arr", "arr", 1, 1).element().number("z", 0, "z");
        s.root().number("w", 0, "w").inherits(from);
        EXPECT_THROW(s.verify(), std::logic_error) << why;
    };
    refused("nope", "unknown key");
    refused("n", "another kind");
    refused("y", "a key that inherits in turn");
    refused("arr.0.z", "a key inside an array");
    schema s;
    EXPECT_THROW(s.root().object("o", "o").inherits("x"), std::logic_error);
}

TEST(Inherit, AnObjectInheritsLeafByLeaf) {
    // One declaration used twice: the global object and a per-host copy that follows it key by key.
    schema schema;
    auto declare_bus = [](node& bus) -> node& {
        bus.integer("lanes", 8, "Lane count", 1, 16).allowed({1, 2, 4, 8, 16});
        bus.object("credits", "Flow control").integer("posted", 64, "Posted credits", 0, 4096);
        return bus;
    };
    declare_bus(schema.root().object("bus", "Every host's bus"));
    declare_bus(schema.root().array("hosts", "The hosts", 2, 2).element().object("bus", "This host's bus"))
        .inherit_leaves_from("bus");
    schema.verify();
    const scenario s = scenario::defaults(schema, {"bus.lanes=4", "hosts.1.bus.credits.posted=16"});
    EXPECT_EQ(s.get_int("hosts.0.bus.lanes"), 4);
    EXPECT_EQ(s.get_int("hosts.1.bus.lanes"), 4);
    EXPECT_EQ(s.get_int("hosts.0.bus.credits.posted"), 64);
    EXPECT_EQ(s.get_int("hosts.1.bus.credits.posted"), 16);
    EXPECT_EQ(s.value_key("hosts.1.bus.credits.posted"), "hosts.1.bus.credits.posted");
    EXPECT_EQ(s.value_key("hosts.0.bus.credits.posted"), "bus.credits.posted");
    // The copy keeps the declaration's own rules.
    const std::string bad = error_of([&] { (void)scenario::defaults(schema, {"hosts.1.bus.lanes=12"}); });
    EXPECT_TRUE(contains_all(bad, {"hosts.1.bus.lanes", "12"})) << bad;
    // Only objects may hand their leaves down, and only leaves inherit.
    config::schema leafy;
    EXPECT_THROW(leafy.root().integer("n", 0, "n").inherit_leaves_from("m"), std::logic_error);
    config::schema listy;
    auto& o = listy.root().object("o", "o");
    o.size_list("sizes", {64}, "Sizes");
    EXPECT_THROW(o.inherit_leaves_from("p"), std::logic_error);
}

}  // namespace
}  // namespace rnic::config
