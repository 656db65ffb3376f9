#include "config/scenario.h"

#include "test_schema.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <stdexcept>

namespace rnic::config {
namespace {

namespace json = boost::json;
using testing::contains_all;
using testing::error_of;
using testing::load_error;
using testing::make_test_schema;

const char* const kRateExpectation =
    "expected a data rate such as \"100Gbps\" (units bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps)";

scenario load_text(const std::string& text, const std::vector<std::string>& overrides = {}) {
    return scenario::from_string(make_test_schema(), text, "scenarios/x.json", overrides);
}

// ---------------------------------------------------------------------------------------------------------------
// Defaults and typed access

TEST(ScenarioDefaults, FilledWhenKeysOmitted) {
    const scenario s = load_text("{}");
    EXPECT_EQ(s.get_rate_bps("link.rate"), 100e9);
    EXPECT_EQ(s.get_time_ps("link.propagation"), 500'000u);
    EXPECT_EQ(s.get_int("link.mtu"), 1500);
    EXPECT_EQ(s.get_number("link.loss"), 0.0);
    EXPECT_FALSE(s.get_bool("link.pfc"));
    ASSERT_EQ(s.array_size("hosts"), 2u);
    EXPECT_EQ(s.get_string("hosts.0.name"), "a");
    EXPECT_EQ(s.get_string("hosts.1.name"), "b");
    EXPECT_EQ(s.get_frequency_hz("hosts.1.cpu_clock"), 3e9);
    EXPECT_EQ(s.get_size("hosts.0.memory"), 1u << 30);
    EXPECT_EQ(s.get_int("hosts.1.pcie.lanes"), 8);
    EXPECT_EQ(s.get_time_ps("hosts.1.pcie.latency"), 1'000'000u);
    EXPECT_EQ(s.get_string("workload.type"), "write");
    EXPECT_EQ(s.get_size_list("workload.sizes"), (std::vector<std::uint64_t>{64, 4096, 1 << 20}));
    EXPECT_EQ(s.array_size("workload.sizes"), 3u);
    EXPECT_EQ(s.get_size("workload.sizes.1"), 4096u);
    EXPECT_EQ(s.array_size("queues"), 0u);
    EXPECT_EQ(s.as_run().at("link").at("rate"), json::value("100Gbps"));
}

TEST(ScenarioDefaults, PartialObjectsAndElementsAreCompleted) {
    const scenario s = load_text(R"({
    "link": {"mtu": 9000},
    "hosts": [{"name": "x", "pcie": {"lanes": 16}}, {"name": "y"}],
    "queues": [{}, {"depth": 8}]
  })");
    EXPECT_EQ(s.get_int("link.mtu"), 9000);
    EXPECT_EQ(s.get_rate_bps("link.rate"), 100e9);
    EXPECT_EQ(s.get_int("hosts.0.pcie.lanes"), 16);
    EXPECT_EQ(s.get_time_ps("hosts.0.pcie.latency"), 1'000'000u);
    EXPECT_EQ(s.get_int("hosts.1.pcie.lanes"), 8);
    EXPECT_EQ(s.get_string("hosts.1.name"), "y");
    EXPECT_EQ(s.array_size("queues"), 2u);
    EXPECT_EQ(s.get_int("queues.0.depth"), 64);
    EXPECT_EQ(s.get_int("queues.1.depth"), 8);
}

TEST(ScenarioDefaults, UserNotationIsKeptAndCanonicalValuesAreExact) {
    const scenario s = load_text(R"({
    "link": {"rate": "25GBps", "propagation": "1.5us", "loss": 1e-3},
    "hosts": [{"name": "a", "memory": 2147483648}, {"name": "b", "memory": "1.5GiB"}],
    "workload": {"sizes": [1, "1.5KiB", 65536], "type": "read"}
  })");
    EXPECT_EQ(s.get_rate_bps("link.rate"), 200e9);
    EXPECT_EQ(s.get_time_ps("link.propagation"), 1'500'000u);
    EXPECT_EQ(s.get_number("link.loss"), 1e-3);
    EXPECT_EQ(s.get_size("hosts.0.memory"), 2147483648u);
    EXPECT_EQ(s.get_size("hosts.1.memory"), 3u << 29);
    EXPECT_EQ(s.get_size_list("workload.sizes"), (std::vector<std::uint64_t>{1, 1536, 65536}));
    EXPECT_EQ(s.get_string("workload.type"), "read");
    EXPECT_EQ(s.as_run().at("link").at("rate"), json::value("25GBps"));
    EXPECT_EQ(s.as_run().at("hosts").at(0).at("memory"), json::value(2147483648));
    EXPECT_EQ(s.get_json("workload.sizes"), json::parse(R"([1, "1.5KiB", 65536])"));
}

TEST(ScenarioDefaults, CommentsAndTrailingCommasAreAllowed) {
    const scenario s = load_text(R"({
    // the link
    "link": {"mtu": 4000, /* jumbo-ish */ },
    "workload": {"sizes": [64, 128,],},
  })");
    EXPECT_EQ(s.get_int("link.mtu"), 4000);
    EXPECT_EQ(s.get_size_list("workload.sizes"), (std::vector<std::uint64_t>{64, 128}));
}

TEST(ScenarioDefaults, DefaultsFactoryAndFileLoading) {
    const schema schema = make_test_schema();
    EXPECT_EQ(scenario::defaults(schema).as_run(), load_text("{}").as_run());
    EXPECT_EQ(scenario::defaults(schema, {"link.mtu=9000"}).get_int("link.mtu"), 9000);
    const std::string path = testing::write_temp_file("ok.json", R"({"link": {"rate": "40Gbps"}})");
    const scenario s = scenario::load(schema, path, {});
    EXPECT_EQ(s.get_rate_bps("link.rate"), 40e9);
    EXPECT_EQ(s.origin(), path);
}

TEST(ScenarioAccess, NumberAndStringGettersAcceptRelatedKinds) {
    const scenario s = load_text("{}");
    EXPECT_EQ(s.get_number("link.mtu"), 1500.0);
    EXPECT_EQ(s.get_string("workload.type"), "write");
    EXPECT_TRUE(s.has("hosts.1.pcie.lanes"));
    EXPECT_TRUE(s.has(""));
    EXPECT_FALSE(s.has("hosts.2"));
    EXPECT_FALSE(s.has("link.speed"));
    EXPECT_EQ(s.get_json("hosts.1.name"), json::value("b"));
}

TEST(ScenarioAccess, MisuseIsALogicError) {
    const scenario s = load_text("{}");
    EXPECT_THROW(s.get_int("link.rate"), std::logic_error);
    EXPECT_THROW(s.get_rate_bps("link.mtu"), std::logic_error);
    EXPECT_THROW(s.get_int("link.nope"), std::logic_error);
    EXPECT_THROW(s.get_string("hosts.5.name"), std::logic_error);
    EXPECT_THROW(s.get_string("hosts.x.name"), std::logic_error);
    EXPECT_THROW(s.get_int("link.mtu.x"), std::logic_error);
    EXPECT_THROW(s.get_size_list("workload.buffer"), std::logic_error);
    EXPECT_THROW(s.array_size("link"), std::logic_error);
    try {
        (void)s.get_int("link.rate");
    } catch (const std::logic_error& e) {
        EXPECT_STREQ(e.what(), "Scenario::get_int(\"link.rate\"): link.rate is a rate, not an integer");
    }
}

TEST(ScenarioAccess, ScenarioOutlivesSchemaObject) {
    std::optional<scenario> s;
    {
        const schema schema = make_test_schema();
        s = scenario::from_string(schema, "{}", "x", {});
    }
    EXPECT_EQ(s->get_int("link.mtu"), 1500);
}

// ---------------------------------------------------------------------------------------------------------------
// Unknown keys

TEST(ScenarioErrors, UnknownTopLevelKey) {
    EXPECT_EQ(load_error(R"({"lnk": {}})"),
              "scenarios/x.json: lnk: unknown key (known top-level keys: link, hosts, workload, queues); did you mean "
              "\"link\"?");
}

TEST(ScenarioErrors, UnknownNestedKey) {
    EXPECT_EQ(load_error(R"({"link": {"speed": "1Gbps"}})"),
              "scenarios/x.json: link.speed: unknown key (known keys in link: rate, propagation, mtu, loss, pfc)");
}

TEST(ScenarioErrors, UnknownKeyInsideArrayElement) {
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a"}, {"name": "b", "pcie": {"lane": 4}}]})"),
              "scenarios/x.json: hosts.1.pcie.lane: unknown key (known keys in hosts.1.pcie: lanes, lane_rate, "
              "latency); did you mean \"lanes\"?");
}

// ---------------------------------------------------------------------------------------------------------------
// Wrong types

TEST(ScenarioErrors, StringForInteger) {
    EXPECT_EQ(load_error(R"({"link": {"mtu": "1500"}})"),
              "scenarios/x.json: link.mtu: expected an integer in [576, 9216], got \"1500\"");
}

TEST(ScenarioErrors, FractionForInteger) {
    EXPECT_EQ(load_error(R"({"link": {"mtu": 1500.5}})"),
              "scenarios/x.json: link.mtu: expected an integer in [576, 9216], got 1500.5");
}

TEST(ScenarioErrors, NumberForBoolean) {
    EXPECT_EQ(load_error(R"({"link": {"pfc": 1}})"),
              "scenarios/x.json: link.pfc: expected a boolean (true or false), got 1");
}

TEST(ScenarioErrors, ObjectForLeaf) {
    EXPECT_EQ(load_error(R"({"link": {"rate": {"value": 100}}})"),
              std::string("scenarios/x.json: link.rate: ") + kRateExpectation + ", got an object");
}

TEST(ScenarioErrors, NumberForTime) {
    EXPECT_EQ(
        load_error(R"({"link": {"propagation": 500}})"),
        "scenarios/x.json: link.propagation: expected a time such as \"500ns\" (units ps, ns, us, ms, s), got 500");
}

TEST(ScenarioErrors, LeafForObjectAndObjectForArray) {
    EXPECT_EQ(load_error(R"({"link": 5})"),
              "scenarios/x.json: link: expected an object (keys: rate, propagation, mtu, loss, pfc), got 5");
    EXPECT_EQ(load_error(R"({"hosts": {"name": "a"}})"),
              "scenarios/x.json: hosts: expected an array of exactly 2 elements, got an object");
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a"}, null]})"),
              "scenarios/x.json: hosts.1: expected an object (keys: name, cpu_clock, memory, pcie), got null");
}

TEST(ScenarioErrors, WrongSizeTypes) {
    EXPECT_TRUE(contains_all(load_error(R"({"workload": {"buffer": -4096}})"),
                             {"scenarios/x.json: workload.buffer: expected a size such as \"4KiB\"", "got -4096",
                              "negative values are not allowed"}));
    EXPECT_TRUE(contains_all(load_error(R"({"workload": {"buffer": true}})"),
                             {"scenarios/x.json: workload.buffer: expected a size", "got true"}));
    EXPECT_TRUE(contains_all(load_error(R"({"workload": {"sizes": [64, 1.5]}})"),
                             {"scenarios/x.json: workload.sizes.1: expected a size", "got 1.5"}));
}

TEST(ScenarioErrors, TopLevelMustBeAnObject) {
    EXPECT_EQ(load_error("[1]"),
              "scenarios/x.json: expected a JSON object at the top level, got an array of 1 element");
}

// ---------------------------------------------------------------------------------------------------------------
// Units

TEST(ScenarioErrors, BadUnit) {
    EXPECT_EQ(
        load_error(R"({"link": {"rate": "100Gbs"}})"),
        std::string("scenarios/x.json: link.rate: ") + kRateExpectation + ", got \"100Gbs\" (unknown unit \"Gbs\")");
}

TEST(ScenarioErrors, MissingUnit) {
    EXPECT_EQ(load_error(R"({"link": {"propagation": "500"}})"),
              "scenarios/x.json: link.propagation: expected a time such as \"500ns\" (units ps, ns, us, ms, s), got "
              "\"500\" (missing unit)");
    EXPECT_TRUE(
        contains_all(load_error(R"({"hosts": [{"name": "a", "cpu_clock": "3"}, {"name": "b"}]})"),
                     {"scenarios/x.json: hosts.0.cpu_clock: expected a frequency", "got \"3\" (missing unit)"}));
}

// ---------------------------------------------------------------------------------------------------------------
// Ranges

TEST(ScenarioErrors, IntegerOutOfRange) {
    EXPECT_EQ(load_error(R"({"link": {"mtu": 100}})"),
              "scenarios/x.json: link.mtu: 100 is out of range: expected an integer in [576, 9216]");
    EXPECT_EQ(load_error(R"({"link": {"mtu": 10000}})"),
              "scenarios/x.json: link.mtu: 10000 is out of range: expected an integer in [576, 9216]");
    EXPECT_EQ(load_error(R"({"link": {"mtu": 18446744073709551615}})"),
              "scenarios/x.json: link.mtu: 18446744073709551615 is out of range: expected an integer in [576, 9216]");
}

TEST(ScenarioErrors, IntegerNotInAllowedList) {
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a", "pcie": {"lanes": 12}}, {"name": "b"}]})"),
              "scenarios/x.json: hosts.0.pcie.lanes: 12 is not allowed: expected one of 1, 2, 4, 8, 16");
}

TEST(ScenarioErrors, TimeOutOfRange) {
    EXPECT_EQ(load_error(R"({"link": {"propagation": "2ms"}})"),
              "scenarios/x.json: link.propagation: \"2ms\" is out of range: expected a time <= 1ms");
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a", "pcie": {"latency": "1ns"}}, {"name": "b"}]})"),
              "scenarios/x.json: hosts.0.pcie.latency: \"1ns\" is out of range: expected a time in [10ns, 100us]");
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a"}, {"name": "b", "pcie": {"latency": "0.2ms"}}]})"),
              "scenarios/x.json: hosts.1.pcie.latency: \"0.2ms\" is out of range: expected a time in [10ns, 100us]");
}

TEST(ScenarioErrors, RateOutOfRange) {
    EXPECT_EQ(load_error(R"({"link": {"rate": "2Tbps"}})"),
              "scenarios/x.json: link.rate: \"2Tbps\" is out of range: expected a data rate in [1Mbps, 1.6Tbps]");
    EXPECT_EQ(load_error(R"({"link": {"rate": "100KBps"}})"),
              "scenarios/x.json: link.rate: \"100KBps\" is out of range: expected a data rate in [1Mbps, 1.6Tbps]");
}

TEST(ScenarioErrors, SizeOutOfRange) {
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a", "memory": "512KiB"}, {"name": "b"}]})"),
              "scenarios/x.json: hosts.0.memory: \"512KiB\" is out of range: expected a size in [1MiB, 64GiB]");
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a", "memory": 68719476737}, {"name": "b"}]})"),
              "scenarios/x.json: hosts.0.memory: 68719476737 is out of range: expected a size in [1MiB, 64GiB]");
    EXPECT_EQ(load_error(R"({"workload": {"sizes": [64, "2GiB"]}})"),
              "scenarios/x.json: workload.sizes.1: \"2GiB\" is out of range: expected a size in [1B, 1GiB]");
    EXPECT_EQ(load_error(R"({"workload": {"sizes": [0]}})"),
              "scenarios/x.json: workload.sizes.0: 0 is out of range: expected a size in [1B, 1GiB]");
}

TEST(ScenarioErrors, NumberAndFrequencyOutOfRange) {
    EXPECT_EQ(load_error(R"({"link": {"loss": 1.5}})"),
              "scenarios/x.json: link.loss: 1.5 is out of range: expected a number in [0.0, 1.0]");
    EXPECT_EQ(
        load_error(R"({"hosts": [{"name": "a", "cpu_clock": "50MHz"}, {"name": "b"}]})"),
        "scenarios/x.json: hosts.0.cpu_clock: \"50MHz\" is out of range: expected a frequency in [100MHz, 10GHz]");
}

TEST(ScenarioErrors, BadEnumerationValueListsAllowedOnes) {
    EXPECT_EQ(load_error(R"({"workload": {"type": "atomic"}})"),
              "scenarios/x.json: workload.type: \"atomic\" is not allowed: expected one of \"send\", \"write\", "
              "\"read\"");
    EXPECT_EQ(load_error(R"({"workload": {"type": 3}})"),
              "scenarios/x.json: workload.type: expected one of \"send\", \"write\", \"read\", got 3");
}

// ---------------------------------------------------------------------------------------------------------------
// Array lengths

TEST(ScenarioErrors, ArrayTooShort) {
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a"}]})"),
              "scenarios/x.json: hosts: expected an array of exactly 2 elements, got an array of 1 element");
    EXPECT_EQ(load_error(R"({"workload": {"sizes": []}})"),
              "scenarios/x.json: workload.sizes: expected a list of sizes such as [64, \"4KiB\"] with 1 to 8 elements, "
              "got an empty array");
}

TEST(ScenarioErrors, ArrayTooLong) {
    EXPECT_EQ(load_error(R"({"queues": [{}, {}, {}, {}, {}]})"),
              "scenarios/x.json: queues: expected an array of at most 4 elements, got an array of 5 elements");
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a"}, {"name": "b"}, {"name": "c"}]})"),
              "scenarios/x.json: hosts: expected an array of exactly 2 elements, got an array of 3 elements");
}

// ---------------------------------------------------------------------------------------------------------------
// Cross-field checks

TEST(ScenarioErrors, CrossFieldCheck) {
    EXPECT_EQ(load_error(R"({"hosts": [{}, {}]})"),
              "scenarios/x.json: hosts.1.name: must differ from hosts.0.name (both \"host\")");
    EXPECT_EQ(load_error("{}", {"hosts.1.name=a"}),
              "scenarios/x.json (after --set overrides): hosts.1.name: must differ from hosts.0.name (both \"a\")");
}

// ---------------------------------------------------------------------------------------------------------------
// JSON syntax and files

TEST(ScenarioErrors, JsonSyntaxErrorHasLineAndColumn) {
    const std::string text = "{\n  \"link\": {\n    \"mtu\": 1500\n    \"rate\": \"1Gbps\"\n  }\n}\n";
    EXPECT_EQ(load_error(text),
              "scenarios/x.json:4:5: syntax error near \"\\\"rate\\\": \\\"1Gbps\\\"\" (at link.mtu)");
}

TEST(ScenarioErrors, JsonSyntaxErrorInsideArrayNamesTheElement) {
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a"}, {"name": "b"}})"),
              "scenarios/x.json:1:40: syntax error near \"}\" (at hosts.1)");
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a"}, {"name" "b"}]})"),
              "scenarios/x.json:1:35: syntax error near \"\\\"b\\\"}]}\" (at hosts.1.name)");
}

TEST(ScenarioErrors, JsonUnexpectedEndOfInput) {
    EXPECT_EQ(load_error("{\n  \"link\": {\"mtu\": 1500"),
              "scenarios/x.json:2:23: unexpected end of input (unclosed object, array or string?) (at link.mtu)");
    EXPECT_EQ(load_error(""), "scenarios/x.json:1:1: unexpected end of input (unclosed object, array or string?)");
}

TEST(ScenarioErrors, JsonTrailingGarbage) {
    EXPECT_EQ(load_error("{}\n}"),
              "scenarios/x.json:2:1: unexpected text after the end of the JSON document near \"}\"");
}

TEST(ScenarioErrors, JsonDuplicateKey) {
    EXPECT_EQ(load_error("{\"link\": {\"mtu\": 1500,\n \"mtu\": 9000}}"),
              "scenarios/x.json:2:2: link.mtu: duplicate key");
    EXPECT_EQ(load_error(R"({"hosts": [{"name": "a"}, {"name": "b", "name": "c"}]})"),
              "scenarios/x.json:1:41: hosts.1.name: duplicate key");
}

TEST(ScenarioErrors, MissingFile) {
    const schema schema = make_test_schema();
    EXPECT_EQ(error_of([&] { (void)scenario::load(schema, "/nonexistent/dir/x.json", {}); }),
              "/nonexistent/dir/x.json: cannot open scenario file: No such file or directory");
}

TEST(ScenarioErrors, DirectoryInsteadOfFile) {
    const schema schema = make_test_schema();
    const std::string dir = ::testing::TempDir();
    EXPECT_EQ(error_of([&] { (void)scenario::load(schema, dir, {}); }),
              dir + ": cannot read scenario file: is a directory");
}

TEST(ScenarioErrors, ErrorsInFilesNameTheFile) {
    const schema schema = make_test_schema();
    const std::string path = testing::write_temp_file("bad.json", "{\n  \"link\": {\"rate\": \"100Gbs\"}\n}\n");
    EXPECT_EQ(error_of([&] { (void)scenario::load(schema, path, {}); }),
              path + ": link.rate: " + kRateExpectation + ", got \"100Gbs\" (unknown unit \"Gbs\")");
    const std::string broken = testing::write_temp_file("broken.json", "{\n  \"link\": {\"rate\" \"1Gbps\"}\n}\n");
    EXPECT_EQ(error_of([&] { (void)scenario::load(schema, broken, {}); }).rfind(broken + ":2:19: syntax error", 0), 0u);
}

// ---------------------------------------------------------------------------------------------------------------
// Overrides

TEST(ScenarioOverrides, AppliedInOrderLaterWins) {
    const scenario s = load_text(R"({"link": {"mtu": 2000}})", {"link.mtu=9000", "link.rate=40Gbps", "link.mtu=1400"});
    EXPECT_EQ(s.get_int("link.mtu"), 1400);
    EXPECT_EQ(s.get_rate_bps("link.rate"), 40e9);
    EXPECT_EQ(s.as_run().at("link").at("rate"), json::value("40Gbps"));
    EXPECT_EQ(s.overrides().size(), 3u);
}

TEST(ScenarioOverrides, KeysOmittedByTheFile) {
    const scenario s = load_text("{}", {"hosts.1.pcie.lanes=16", "workload.sizes=[64,4096]", "link.pfc=true",
                                        "link.loss=0.25", "hosts.0.memory=4GiB", "workload.type=read"});
    EXPECT_EQ(s.get_int("hosts.1.pcie.lanes"), 16);
    EXPECT_EQ(s.get_int("hosts.0.pcie.lanes"), 8);
    EXPECT_EQ(s.get_size_list("workload.sizes"), (std::vector<std::uint64_t>{64, 4096}));
    EXPECT_TRUE(s.get_bool("link.pfc"));
    EXPECT_EQ(s.get_number("link.loss"), 0.25);
    EXPECT_EQ(s.get_size("hosts.0.memory"), 4ULL << 30);
    EXPECT_EQ(s.get_string("workload.type"), "read");
}

TEST(ScenarioOverrides, ValueParsing) {
    const scenario s = load_text("{}", {"hosts.0.name=123", "hosts.1.name=\"quoted\"", "workload.sizes.1=8KiB",
                                        "workload.buffer=8192", "link.propagation=1.5us"});
    EXPECT_EQ(s.get_string("hosts.0.name"), "123") << "non-string JSON for a string key is taken as text";
    EXPECT_EQ(s.get_string("hosts.1.name"), "quoted");
    EXPECT_EQ(s.get_size_list("workload.sizes"), (std::vector<std::uint64_t>{64, 8192, 1 << 20}));
    EXPECT_EQ(s.get_size("workload.buffer"), 8192u);
    EXPECT_EQ(s.as_run().at("workload").at("buffer"), json::value(8192));
    EXPECT_EQ(s.get_time_ps("link.propagation"), 1'500'000u);
}

TEST(ScenarioOverrides, WholeObjectsAndArrays) {
    const scenario s =
        load_text(R"({"link": {"rate": "40Gbps", "mtu": 2000}})",
                  {R"(link={"mtu": 9000})", R"(hosts=[{"name": "p"}, {"name": "q", "pcie": {"lanes": 4}}])",
                   R"(queues=[{"depth": 2}])"});
    EXPECT_EQ(s.get_int("link.mtu"), 9000);
    EXPECT_EQ(s.get_rate_bps("link.rate"), 100e9) << "an object override replaces the whole object";
    EXPECT_EQ(s.get_string("hosts.0.name"), "p");
    EXPECT_EQ(s.get_int("hosts.1.pcie.lanes"), 4);
    EXPECT_EQ(s.get_int("hosts.0.pcie.lanes"), 8);
    EXPECT_EQ(s.get_int("queues.0.depth"), 2);
}

TEST(ScenarioOverrides, UnknownKey) {
    EXPECT_EQ(
        load_error("{}", {"link.speed=1Gbps"}),
        "--set link.speed=1Gbps: link.speed: unknown key (known keys in link: rate, propagation, mtu, loss, pfc)");
    EXPECT_EQ(
        load_error("{}", {"hosts.0.pcie.lane=4"}),
        "--set hosts.0.pcie.lane=4: hosts.0.pcie.lane: unknown key (known keys in hosts.0.pcie: lanes, lane_rate, "
        "latency); did you mean \"lanes\"?");
    EXPECT_EQ(load_error("{}", {"link.rate.value=1"}),
              "--set link.rate.value=1: link.rate.value: link.rate is a rate and has no sub-keys");
}

TEST(ScenarioOverrides, BadValue) {
    EXPECT_EQ(load_error("{}", {"link.rate=100Gbs"}), std::string("--set link.rate=100Gbs: link.rate: ") +
                                                          kRateExpectation + ", got \"100Gbs\" (unknown unit \"Gbs\")");
    EXPECT_EQ(load_error("{}", {"link.mtu=abc"}),
              "--set link.mtu=abc: link.mtu: expected an integer in [576, 9216], got \"abc\"");
    EXPECT_EQ(load_error("{}", {"hosts.1.pcie.lanes=12"}),
              "--set hosts.1.pcie.lanes=12: hosts.1.pcie.lanes: 12 is not allowed: expected one of 1, 2, 4, 8, 16");
    EXPECT_EQ(load_error("{}", {"link.propagation=500"}),
              "--set link.propagation=500: link.propagation: expected a time such as \"500ns\" (units ps, ns, us, ms, "
              "s), got \"500\" (missing unit)");
    EXPECT_EQ(load_error("{}", {"workload.sizes=[64,\"4kb\"]"})
                  .rfind("--set workload.sizes=[64,\"4kb\"]: workload.sizes.1: expected a size", 0),
              0u);
    EXPECT_EQ(load_error("{}", {"link.pfc=yes"}),
              "--set link.pfc=yes: link.pfc: expected a boolean (true or false), got \"yes\"");
}

TEST(ScenarioOverrides, MissingEquals) {
    EXPECT_EQ(load_error("{}", {"link.rate"}),
              "--set link.rate: malformed override (no '='): expected KEY=VALUE, e.g. --set link.rate=40Gbps");
    EXPECT_EQ(load_error("{}", {"=5"}), "--set =5: malformed override: empty key before '='");
    EXPECT_EQ(load_error("{}", {"link..rate=1Gbps"}),
              "--set link..rate=1Gbps: malformed override: empty component in key \"link..rate\"");
}

TEST(ScenarioOverrides, ArrayIndexOutOfRange) {
    EXPECT_EQ(load_error("{}", {"hosts.2.pcie.lanes=4"}),
              "--set hosts.2.pcie.lanes=4: hosts.2: array index 2 is out of range: hosts has 2 elements (valid indices "
              "0..1)");
    EXPECT_EQ(load_error("{}", {"queues.0.depth=4"}),
              "--set queues.0.depth=4: queues.0: array index 0 is out of range: queues is empty");
    EXPECT_EQ(load_error("{}", {"workload.sizes.3=64"}),
              "--set workload.sizes.3=64: workload.sizes.3: array index 3 is out of range: workload.sizes has 3 "
              "elements (valid indices 0..2)");
    EXPECT_EQ(load_error("{}", {"hosts.first.name=x"}),
              "--set hosts.first.name=x: hosts.first: expected an array index: hosts has 2 elements (valid indices "
              "0..1)");
    EXPECT_EQ(load_error("{}", {"hosts.99999999999999999999999.name=x"})
                  .rfind("--set hosts.99999999999999999999999.name=x: hosts.99999999999999999999999: array index", 0),
              0u);
}

TEST(ScenarioOverrides, FileIsValidatedBeforeOverrides) {
    EXPECT_EQ(load_error(R"({"link": {"mtu": 1}})", {"link.mtu=1500"}),
              "scenarios/x.json: link.mtu: 1 is out of range: expected an integer in [576, 9216]");
}

// ---------------------------------------------------------------------------------------------------------------
// As run

TEST(ScenarioAsRun, ContainsEveryKeyInSchemaOrder) {
    const scenario s = load_text(R"({"workload": {"type": "send"}, "link": {"mtu": 9000}})");
    const json::object& root = s.as_run().as_object();
    std::vector<std::string> keys;
    for (const auto& kv : root) keys.emplace_back(kv.key());
    EXPECT_EQ(keys, (std::vector<std::string>{"link", "hosts", "workload", "queues"}));
    EXPECT_EQ(root.at("link").as_object().size(), 5u);
    EXPECT_EQ(root.at("hosts").as_array().at(1).as_object().at("pcie").as_object().size(), 3u);
    EXPECT_EQ(root.at("workload").at("type"), json::value("send"));
}

TEST(ScenarioAsRun, RoundTripsThroughCompactJson) {
    const scenario s = load_text(R"({
      "link": {"rate": "25GBps", "propagation": "1.5us", "loss": 0.1, "pfc": true},
      "hosts": [{"name": "a", "memory": 2147483648}, {"name": "b", "memory": "1.5GiB", "cpu_clock": "2.5GHz"}],
      "workload": {"sizes": [1, "1.5KiB", 65536], "type": "read", "duration": "0.5s"},
      "queues": [{"depth": 16}]
    })",
                                 {"hosts.1.pcie.lanes=16", "link.mtu=9000", "workload.sizes.0=2B"});
    const scenario again = load_text(json::serialize(s.as_run()));
    EXPECT_EQ(again.as_run(), s.as_run());
    EXPECT_EQ(again.get_int("hosts.1.pcie.lanes"), 16);
    EXPECT_EQ(again.get_size_list("workload.sizes"), s.get_size_list("workload.sizes"));
}

TEST(ScenarioAsRun, RoundTripsThroughPrettyText) {
    const scenario s = load_text(R"({"link": {"loss": 0.1, "rate": "8.528Gbps"}, "queues": [{}, {"depth": 2}]})");
    const std::string text = s.as_run_text();
    EXPECT_NE(text.find("\n  \"link\": {\n    \"rate\": \"8.528Gbps\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"loss\": 0.1,"), std::string::npos) << text;
    EXPECT_NE(text.find("\"sizes\": [64, \"4KiB\", \"1MiB\"]"), std::string::npos) << text;
    const scenario again = load_text(text);
    EXPECT_EQ(again.as_run(), s.as_run());
    EXPECT_EQ(again.as_run_text(), text);
    // Defaults alone round-trip too.
    const scenario d = load_text("{}");
    EXPECT_EQ(load_text(d.as_run_text()).as_run(), d.as_run());
}

}  // namespace
}  // namespace rnic::config
