// A bad scenario stops the run before simulation, names the file, the dotted key and what was
// expected, and exits non-zero.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace rnic::test {
namespace {

struct bad_case {
    const char* name;
    const char* json;
    std::vector<const char*> must_contain;
};

void expect_rejected(const bad_case& c) {
    const std::string path = temp_path(std::string(c.name) + ".json");
    write_file(path, c.json);
    const sim_run r = run_sim({"--scenario", path});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(path), std::string::npos) << "file not named: " << r.output;
    for (const char* s : c.must_contain) EXPECT_NE(r.output.find(s), std::string::npos) << s << " in: " << r.output;
    // Nothing was simulated.
    EXPECT_EQ(r.output.find("status:"), std::string::npos) << r.output;
}

TEST(ScenarioValidation, UnknownKeyIsRejected) {
    expect_rejected({"unknown", R"({"link": {"rate": "10Gbps", "speed": "10Gbps"}})", {"link.speed", "unknown key"}});
}

TEST(ScenarioValidation, UnknownKeyInsideAnArrayElementIsRejected) {
    expect_rejected({"unknown_host",
                     R"({"hosts": [{"name": "a", "colour": "red"}, {"name": "b", "ipv4": "10.0.0.2"}]})",
                     {"hosts.0.colour", "unknown key"}});
}

TEST(ScenarioValidation, SackRecoveryNeedsSack) {
    expect_rejected({"sack_recovery",
                     R"({"rnic": {"tcp": {"sack_recovery": true}}})",
                     {"rnic.tcp.sack_recovery", "set rnic.tcp.sack to true"}});
}

TEST(ScenarioValidation, RealPeerOnlyRunsRping) {
    // The other workloads need the simulated host b's server program, which a real peer replaces.
    expect_rejected({"socket_peer_write_bw",
                     R"({"peer": {"kind": "socket", "port": 5555}})",
                     {"workload.type", "\"write_bw\" needs the simulated host b", "\"rping\""}});
}

TEST(ScenarioValidation, WrongTypeIsRejected) {
    expect_rejected({"type", R"({"pcie": {"lanes": "eight"}})", {"pcie.lanes", "expected"}});
    expect_rejected({"type2", R"({"rnic": {"mpa": {"markers": 1}}})", {"rnic.mpa.markers", "expected"}});
}

TEST(ScenarioValidation, BadUnitIsRejected) {
    expect_rejected({"unit", R"({"link": {"rate": "100Gbs"}})", {"link.rate", "Gbps", "100Gbs"}});
    expect_rejected({"unit2", R"({"link": {"propagation": "500"}})", {"link.propagation", "ns"}});
}

TEST(ScenarioValidation, OutOfRangeValueIsRejected) {
    expect_rejected({"range", R"({"pcie": {"lanes": 12}})", {"pcie.lanes", "12"}});
    expect_rejected({"range2", R"({"link": {"mtu": 100000}})", {"link.mtu", "9000"}});
    expect_rejected({"range3", R"({"pcie": {"max_payload": "8KiB"}})", {"pcie.max_payload"}});
}

TEST(ScenarioValidation, SyntaxErrorNamesLineAndColumn) {
    expect_rejected({"syntax", "{\n  \"link\": {\"rate\": \"10Gbps\",,}\n}", {":2:"}});
}

TEST(ScenarioValidation, BadOverrideIsRejected) {
    const sim_run r = run_sim({"--set", "link.rate=fast"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("--set"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("link.rate"), std::string::npos) << r.output;
    const sim_run unknown = run_sim({"--set", "link.colour=red"});
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.output.find("link.colour"), std::string::npos) << unknown.output;
}

TEST(ScenarioValidation, MissingFileAndBadOptionsAreRejected) {
    const sim_run missing = run_sim({"--scenario", "/nonexistent/x.json"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.output.find("/nonexistent/x.json"), std::string::npos) << missing.output;
    EXPECT_EQ(run_sim({"--bogus"}).exit_code, 2);
    EXPECT_EQ(run_sim({"--seed", "-4"}).exit_code, 2);
    const sim_run log = run_sim({"--log", "loud"});
    EXPECT_EQ(log.exit_code, 2);
    EXPECT_NE(log.output.find("loud"), std::string::npos) << log.output;
}

TEST(ScenarioValidation, CrossFieldRulesAreChecked) {
    expect_rejected({"same_ip",
                     R"({"hosts": [{"name": "a", "ipv4": "10.0.0.1"}, {"name": "b", "ipv4": "10.0.0.1"}]})",
                     {"hosts.1.ipv4"}});
    expect_rejected({"bad_ip",
                     R"({"hosts": [{"name": "a", "ipv4": "10.0.0.300"}, {"name": "b", "ipv4": "10.0.0.2"}]})",
                     {"hosts.0.ipv4"}});
}

}  // namespace
}  // namespace rnic::test
