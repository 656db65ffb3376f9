// What rnic-bench and rnic-rtl-bench share: their options, the workloads they name, running rnic-sim
// once and reading its results JSON, and medians.
#pragma once

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace rnic::bench {

struct workload {
    const char* name;
    std::vector<std::string> args;  // rnic-sim arguments on top of the scenario
};

struct options {
    std::string sim = "build/bin/rnic-sim";
    std::string scenario = "platform/scenarios/default.json";
    int runs = 0;
};

// Parses --sim, --scenario, --runs. Returns -1 to go on, else the exit status (usage printed).
inline int parse_options(int argc, char* argv[], const char* usage, options* o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--sim" && i + 1 < argc)
            o->sim = argv[++i];
        else if (a == "--scenario" && i + 1 < argc)
            o->scenario = argv[++i];
        else if (a == "--runs" && i + 1 < argc)
            o->runs = std::max(1, std::atoi(argv[++i]));
        else {
            std::fputs(usage, stderr);
            return a == "--help" ? 0 : 2;
        }
    }
    return -1;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0.0 : (n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

// Runs rnic-sim once with the workload's arguments and `extra`; *results gets its results JSON.
// False (with a message naming `tool` and the command) when the run failed.
inline bool run_sim(const char* tool, const options& o, const workload& w, const std::vector<std::string>& extra,
                    boost::json::value* results) {
    const std::string path = "/tmp/" + std::string(tool) + "-" + std::to_string(getpid()) + ".json";
    std::string cmd = o.sim + " --scenario " + o.scenario + " --log error --results " + path;
    for (const std::string& a : extra) cmd += " '" + a + "'";
    for (const std::string& a : w.args) cmd += " '" + a + "'";
    cmd += " > /dev/null";
    const int rc = std::system(cmd.c_str());
    if (rc != 0) {
        std::fprintf(stderr, "%s: '%s' failed (status %d)\n", tool, cmd.c_str(), rc);
        return false;
    }
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    std::remove(path.c_str());
    *results = boost::json::parse(ss.str());
    return true;
}

}  // namespace rnic::bench
