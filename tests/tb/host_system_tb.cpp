// The host bus is chosen by the scenario (host_bus.kind): the parameters built from a scenario and
// the module host_system assembles.
#include <gtest/gtest.h>

#include "build_params.h"
#include "config/scenario.h"
#include "host_system.h"
#include "scenario_schema.h"

namespace rnic::test {
namespace {

using platform::host_bus_kind;

TEST(HostSystemTb, PcieIsTheDefaultAndKeepsItsKeys) {
    const config::scenario s = config::scenario::defaults(platform::scenario_schema(), {"pcie.lanes=16"});
    const platform::host_params p = platform::build_host_params(s, 0);
    EXPECT_EQ(p.pcie.kind, host_bus_kind::pcie);
    EXPECT_EQ(p.pcie.pcie.lanes, 16);
    EXPECT_EQ(p.pcie.pcie.tlps_per_ack, 0);
    EXPECT_EQ(p.pcie.pcie.completion_latency, pcie_params{}.completion_latency);  // schema default = model default
    platform::host_system h("h", p);
    EXPECT_STREQ(h.pcie.bus_kind(), "pcie");
    // SystemC's own kind() is left to SystemC (it once returned the bus kind, hiding sc_object's).
    EXPECT_STREQ(h.pcie.kind(), "sc_module");
    EXPECT_STREQ(h.bus().name(), "h.pcie");
    EXPECT_NE(dynamic_cast<pcie_endpoint*>(&h.bus()), nullptr);
}

TEST(HostSystemTb, PcixIsChosenByTheScenario) {
    const config::scenario s = config::scenario::defaults(
        platform::scenario_schema(),
        {"host_bus.kind=pcix", "pcix.max_read_byte_count=4096", "pcix.max_outstanding_splits=8"});
    const platform::host_params p = platform::build_host_params(s, 1);
    EXPECT_EQ(p.pcie.kind, host_bus_kind::pcix);
    EXPECT_EQ(p.pcie.pcix.max_read_byte_count, 4096u);
    EXPECT_EQ(p.pcie.pcix.max_outstanding_splits, 8u);
    EXPECT_NEAR(p.pcie.pcix.clock_hz, 133.33e6, 1.0);
    platform::host_system h("h", p);
    EXPECT_STREQ(h.pcie.bus_kind(), "pcix");
    EXPECT_STREQ(h.bus().name(), "h.pcix");
    boost::json::object stats;
    h.pcie.report_stats(stats);
    EXPECT_EQ(stats["kind"].as_string(), "pcix");
}

TEST(HostSystemTb, BadHostBusKeysAreRejected) {
    EXPECT_THROW(config::scenario::defaults(platform::scenario_schema(), {"host_bus.kind=pci"}),
                 config::scenario_error);
    EXPECT_THROW(config::scenario::defaults(platform::scenario_schema(), {"pcix.max_read_byte_count=1000"}),
                 config::scenario_error);
    EXPECT_THROW(config::scenario::defaults(platform::scenario_schema(), {"pcie.tlps_per_ack=65"}),
                 config::scenario_error);
}

}  // namespace
}  // namespace rnic::test
