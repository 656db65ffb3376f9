// rnic-bench: simulation speed of the platform. Runs rnic-sim several times per workload and reports
// the medians of simulated payload bytes per wall second, FPDUs per wall second, and the slowdown
// versus real time (wall seconds per simulated second). Speed is measured here, never in tests.
#include <sys/wait.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

struct workload {
    const char* name;
    std::vector<std::string> args;
};

struct sample {
    double payload_bps = 0, fpdus_ps = 0, slowdown = 0, wall = 0;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0.0 : (n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

bool run_once(const std::string& sim, const std::string& scenario, const workload& w, sample* out) {
    const std::string results = "/tmp/rnic-bench-" + std::to_string(getpid()) + ".json";
    std::string cmd = sim + " --scenario " + scenario + " --log error --results " + results;
    for (const std::string& a : w.args) cmd += " '" + a + "'";
    cmd += " > /dev/null";
    const int rc = std::system(cmd.c_str());
    if (rc != 0) {
        std::fprintf(stderr, "rnic-bench: '%s' failed (status %d)\n", cmd.c_str(), rc);
        return false;
    }
    std::ifstream f(results);
    std::stringstream ss;
    ss << f.rdbuf();
    std::remove(results.c_str());
    const boost::json::value v = boost::json::parse(ss.str());
    const auto& wc = v.at("wallclock").as_object();
    out->payload_bps = wc.at("payload_bytes_per_second").to_number<double>();
    out->fpdus_ps = wc.at("fpdus_per_second").to_number<double>();
    out->slowdown = wc.at("slowdown").to_number<double>();
    out->wall = wc.at("seconds").to_number<double>();
    return true;
}

}  // namespace

int main(int argc, char* argv[]) {
    std::string sim = "build/bin/rnic-sim";
    std::string scenario = "platform/scenarios/default.json";
    int runs = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--sim" && i + 1 < argc) sim = argv[++i];
        else if (a == "--scenario" && i + 1 < argc) scenario = argv[++i];
        else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr,
                         "usage: rnic-bench [--sim PATH] [--scenario FILE] [--runs N]\n"
                         "  reports medians over N runs (default 5) of the default workload and of 64-byte writes\n");
            return a == "--help" ? 0 : 2;
        }
    }
    const std::vector<workload> workloads = {
        {"default workload", {}},
        {"64-byte writes", {"--set", "workload.sizes=[64]", "--set", "workload.iterations=20000"}},
    };
    std::printf("rnic-bench: %d runs per workload, medians (sim %s)\n", runs, sim.c_str());
    std::printf("%-18s %14s %14s %12s %10s\n", "workload", "payload MB/s", "FPDUs/s", "slowdown", "wall s");
    for (const workload& w : workloads) {
        std::vector<double> bps, fps, slow, wall;
        for (int r = 0; r < runs; ++r) {
            sample s;
            if (!run_once(sim, scenario, w, &s)) return 1;
            bps.push_back(s.payload_bps);
            fps.push_back(s.fpdus_ps);
            slow.push_back(s.slowdown);
            wall.push_back(s.wall);
        }
        std::printf("%-18s %14.1f %14.0f %11.0fx %10.2f\n", w.name, median(bps) / 1e6, median(fps), median(slow),
                    median(wall));
    }
    return 0;
}
