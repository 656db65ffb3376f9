// A small schema shaped like the platform's, shared by the config tests.
#pragma once

#include "config/scenario.h"
#include "config/schema.h"
#include "config/units.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>

namespace rnic::config::testing {

inline schema make_test_schema() {
    using namespace rnic::config::literals;
    schema s;
    auto& link = s.root().object("link", "The Ethernet link between the hosts");
    link.rate("rate", "100Gbps", "Line rate", 1_Mbps, 1.6_Tbps);
    link.time("propagation", "500ns", "One-way propagation delay", 0, 1_ms);
    link.integer("mtu", 1500, "IP MTU in bytes", 576, 9216);
    link.number("loss", 0.0, "Packet loss probability", 0.0, 1.0);
    link.boolean("pfc", false, "Priority flow control");

    auto& hosts = s.root().array("hosts", "The two hosts", 2, 2);
    hosts.defaults({{{"name", "a"}}, {{"name", "b"}}});
    auto& host = hosts.element();
    host.string("name", "host", "Host name");
    host.frequency("cpu_clock", "3GHz", "CPU clock", 100_MHz, 10_GHz);
    host.size("memory", "1GiB", "Host memory", 1_MiB, 64_GiB);
    auto& pcie = host.object("pcie", "PCIe link to the NIC");
    pcie.integer("lanes", 8, "PCIe lane count", 1, 16).allowed({1, 2, 4, 8, 16});
    pcie.rate("lane_rate", "16Gbps", "Per-lane rate");
    pcie.time("latency", "1us", "One-way PCIe latency", 10_ns, 100_us);

    auto& wl = s.root().object("workload", "The traffic");
    wl.enumeration("type", "write", "RDMA verb", {"send", "write", "read"});
    wl.size_list("sizes", {64, "4KiB", "1MiB"}, "Message sizes", 1, 1_GiB, 1, 8);
    wl.integer("iterations", 100, "Messages per size", 1, 1000000);
    wl.time("duration", "10ms", "Simulated time limit", 1_us, 10_s);
    wl.size("buffer", "64KiB", "Registered buffer size", 4_KiB, 1_GiB);

    auto& queues = s.root().array("queues", "Extra queue pairs", 0, 4);
    queues.element().integer("depth", 64, "Queue depth", 1, 4096);

    s.add_check([](const scenario& sc) -> std::string {
        if (sc.get_string("hosts.0.name") == sc.get_string("hosts.1.name")) {
            return "hosts.1.name: must differ from hosts.0.name (both \"" + sc.get_string("hosts.0.name") + "\")";
        }
        return "";
    });
    return s;
}

// The message of the ScenarioError thrown by `f` ("" and a test failure if none is thrown).
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const scenario_error& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a ScenarioError";
    return "";
}

inline std::string load_error(const std::string& json_text, const std::vector<std::string>& overrides = {}) {
    const schema schema = make_test_schema();
    return error_of([&] { (void)scenario::from_string(schema, json_text, "scenarios/x.json", overrides); });
}

inline ::testing::AssertionResult contains_all(const std::string& text, std::initializer_list<std::string> parts) {
    for (const std::string& p : parts) {
        if (text.find(p) == std::string::npos) {
            return ::testing::AssertionFailure() << "message does not contain [" << p << "]\n  message: " << text;
        }
    }
    return ::testing::AssertionSuccess();
}

// Writes `content` to a fresh file in the test temp dir and returns its path.
inline std::string write_temp_file(const std::string& name, const std::string& content) {
    const std::string path = ::testing::TempDir() + "rnic_config_" + name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    return path;
}

}  // namespace rnic::config::testing
