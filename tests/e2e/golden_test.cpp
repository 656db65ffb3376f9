// Results do not move by accident: each scenario of platform/scenarios/ (and variants reaching the
// out-of-order, fault, fabric and many-QP paths) is run and its results JSON without `wallclock`
// and its pcap are compared, by digest, with the reference of the commit that last moved a figure
// (tests/e2e/golden_digests.txt). Speed work and refactoring must leave every digest alone; a change
// that moves a figure updates the file in the same commit and says which figures moved and why:
//     RNIC_GOLDEN_UPDATE=1 build/bin/rnic-e2e-tests --gtest_filter='GoldenUpdate.*'
// rewrites the file from the current build. (tools/compare-scenarios.sh compares two binaries run
// for run and names the keys that differ.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "run_helpers.h"

namespace rnic::test {
namespace {

struct golden_run {
    const char* name;
    const char* scenario;
    std::vector<std::string> sets;
};

const std::vector<golden_run>& golden_runs() {
    static const std::vector<golden_run> runs = {
        {"default", "default.json", {}},
        {"kv_example", "kv-example.json", {}},
        {"mixed", "mixed.json", {}},
        {"rx_aligned", "rx-aligned.json", {}},
        {"rx_buffering", "rx-buffering.json", {}},
        {"rx_markers", "rx-markers.json", {}},
        {"rx_markers_resegment", "rx-markers.json", {"link.a_to_b.resegment=1"}},
        {"ift_loss", "default.json", {"rnic.framing=ift", "link.a_to_b.loss=0.01"}},
        {"write_10g", "default.json", {"link.rate=10Gbps", "workload.sizes=[65536]", "workload.iterations=300"}},
        {"write_64b", "default.json", {"workload.sizes=[64]", "workload.iterations=20000"}},
        {"read_bw", "default.json", {"workload.type=read_bw", "workload.sizes=[256,65536]", "workload.iterations=300"}},
        {"send_event",
         "default.json",
         {"workload.type=send_bw", "workload.completion=event", "workload.sizes=[4096]", "workload.iterations=500"}},
        {"incast_pfc",
         "default.json",
         {"topology.kind=star", "topology.hosts=17", "workload.type=incast", "rnic.buffer.capacity=16MiB",
          "switch.buffer=1MiB", "workload.incast.rounds=3", "pcie.generation=4", "pcie.lanes=16",
          "rnic.tcp.send_buffer=64KiB", "switch.pfc.enabled=true"}},
        {"leaf_spine",
         "default.json",
         {"topology.kind=leaf_spine", "topology.hosts=8", "topology.leaves=2", "topology.spines=2",
          "workload.type=permutation", "workload.matrix.messages=8"}},
        {"many_qps_loss",
         "default.json",
         {"workload.qps=64", "workload.sizes=[4096]", "workload.iterations=100", "rnic.buffer.send_regions=shared",
          "link.a_to_b.loss=0.01"}},
    };
    return runs;
}

// FNV-1a, 64 bits: a digest that needs no library and is the same on every run.
std::uint64_t fnv1a(const std::string& bytes) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

std::string hex(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

const std::string kDigestFile = std::string(RNIC_SOURCE_DIR) + "/tests/e2e/golden_digests.txt";

// name -> "results-digest pcap-digest"
std::map<std::string, std::string> read_digests() {
    std::map<std::string, std::string> out;
    std::ifstream f(kDigestFile);
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream in(line);
        std::string name, results, pcap;
        if (in >> name >> results >> pcap) out[name] = results + " " + pcap;
    }
    return out;
}

// The digests of one run: results without `wallclock`, serialised, and the pcap file.
std::string run_digests(const golden_run& r) {
    const std::string results = temp_path(std::string(r.name) + ".json");
    const std::string pcap = temp_path(std::string(r.name) + ".pcap");
    std::vector<std::string> args = {
        "--scenario", std::string("platform/scenarios/") + r.scenario, "--results", results, "--pcap", pcap, "--log",
        "error"};
    for (const std::string& s : r.sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    const sim_run run = run_sim(args);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    boost::json::value v = read_json(results);
    if (!v.is_object()) return "unreadable-results -";
    v.as_object().erase("wallclock");
    const std::string digests = hex(fnv1a(boost::json::serialize(v))) + " " + hex(fnv1a(read_file(pcap)));
    std::remove(results.c_str());
    std::remove(pcap.c_str());
    return digests;
}

class Golden : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Golden, ResultsAndPcapMatchTheReference) {
    const golden_run& r = golden_runs()[GetParam()];
    const std::string got = run_digests(r);
    const auto ref = read_digests();
    const auto it = ref.find(r.name);
    ASSERT_NE(it, ref.end()) << "no reference for " << r.name << " in " << kDigestFile;
    EXPECT_EQ(got.substr(0, 16), it->second.substr(0, 16))
        << r.name << ": the results JSON (outside wallclock) moved. If the change means to move it, "
        << "say which figures and why, and update the reference (see golden_test.cpp)";
    EXPECT_EQ(got.substr(17), it->second.substr(17))
        << r.name << ": the pcap moved. If the change means to move it, say why and update the reference";
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Golden, ::testing::Range<std::size_t>(0, golden_runs().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& param) {
                             return std::string(golden_runs()[param.param].name);
                         });

// Not a check: with RNIC_GOLDEN_UPDATE=1, writes the reference file from the current build.
TEST(GoldenUpdate, WritesTheReferenceWhenAsked) {
    if (std::getenv("RNIC_GOLDEN_UPDATE") == nullptr) GTEST_SKIP() << "set RNIC_GOLDEN_UPDATE=1 to rewrite";
    std::ofstream f(kDigestFile);
    f << "# Digests (FNV-1a 64) of each golden run's results JSON without wallclock, and of its pcap.\n"
         "# Written by RNIC_GOLDEN_UPDATE=1 rnic-e2e-tests --gtest_filter=GoldenUpdate.*; see golden_test.cpp.\n";
    for (const golden_run& r : golden_runs()) f << r.name << " " << run_digests(r) << "\n";
    ASSERT_TRUE(f.good());
}

}  // namespace
}  // namespace rnic::test
