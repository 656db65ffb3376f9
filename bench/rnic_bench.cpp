// rnic-bench: simulation speed of the platform. Runs rnic-sim several times per workload and reports
// the medians of simulated payload bytes per wall second, FPDUs per wall second, and the slowdown
// versus real time (wall seconds per simulated second). Speed is measured here, never in tests.
#include "bench_common.h"

namespace {

using namespace rnic::bench;

struct sample {
    double payload_bps = 0, fpdus_ps = 0, slowdown = 0, wall = 0;
};

bool run_once(const options& o, const workload& w, sample* out) {
    boost::json::value v;
    if (!run_sim("rnic-bench", o, w, {}, &v)) return false;
    const auto& wc = v.at("wallclock").as_object();
    out->payload_bps = wc.at("payload_bytes_per_second").to_number<double>();
    out->fpdus_ps = wc.at("fpdus_per_second").to_number<double>();
    out->slowdown = wc.at("slowdown").to_number<double>();
    out->wall = wc.at("seconds").to_number<double>();
    return true;
}

}  // namespace

int main(int argc, char* argv[]) {
    options o;
    o.runs = 5;
    const int rc = parse_options(argc, argv,
                                 "usage: rnic-bench [--sim PATH] [--scenario FILE] [--runs N]\n"
                                 "  reports medians over N runs (default 5) of the default workload and of 64-byte writes\n",
                                 &o);
    if (rc >= 0) return rc;
    const int runs = o.runs;
    const std::string& sim = o.sim;
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
            if (!run_once(o, w, &s)) return 1;
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
