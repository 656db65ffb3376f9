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

// Frames that crossed the host links of a fabric run (each once per link direction).
double fabric_frames(const boost::json::value& v) {
    double frames = 0;
    const auto& links = v.at("modules").at("links").as_object();
    for (const auto& kv : links) {
        for (const char* dir : {"a_to_b", "b_to_a"}) frames += kv.value().at(dir).at("frames").to_number<double>();
    }
    return frames;
}

// Rack scale: the cost of a simulated millisecond and of a frame as the host count grows (one
// 64 KiB incast round per sender, all senders on one switch). The per-frame cost should not grow
// with the hosts.
bool fabric_table(const options& o) {
    std::printf("\n%-26s %8s %16s %16s %12s\n", "incast on a star", "hosts", "wall ms/sim ms", "wall us/frame",
                "frames");
    for (int hosts : {2, 16, 64}) {
        const workload w{"incast", {"--set", "topology.kind=star", "--set", "topology.hosts=" + std::to_string(hosts),
                                    "--set", "workload.type=incast", "--set", "workload.incast.rounds=4",
                                    "--set", "rnic.buffer.capacity=32MiB"}};
        std::vector<double> per_ms, per_frame, frames;
        for (int r = 0; r < o.runs; ++r) {
            boost::json::value v;
            if (!run_sim("rnic-bench", o, w, {}, &v)) return false;
            const double wall = v.at("wallclock").at("seconds").to_number<double>();
            const double sim_ms = v.at("simulated_time_ps").to_number<double>() * 1e-9;
            const double n = fabric_frames(v);
            per_ms.push_back(sim_ms > 0 ? wall * 1e3 / sim_ms : 0.0);
            per_frame.push_back(n > 0 ? wall * 1e6 / n : 0.0);
            frames.push_back(n);
        }
        std::printf("%-26s %8d %16.1f %16.2f %12.0f\n", "4 rounds x 64 KiB/sender", hosts, median(per_ms),
                    median(per_frame), median(frames));
    }
    return true;
}

// Many QPs: the cost of an operation as the connection count grows, every context behind the
// default 256-entry cache (the context-cache misses and the per-connection timers are the work that
// could grow with it). Two 4 KiB Writes per QP; the cost per Write should stay flat.
bool many_qp_table(const options& o) {
    std::printf("\n%-26s %8s %16s %16s %12s\n", "RDMA Writes on many QPs", "QPs", "wall s", "wall us/Write",
                "Writes");
    for (int qps : {64, 1024, 4096}) {
        const std::string n = std::to_string(qps);
        const workload w{"many QPs", {"--set", "workload.qps=" + n, "--set", "rnic.rdma.max_qp=" + n,
                                      "--set", "rnic.tcp.max_connections=" + n, "--set", "workload.sizes=[4096]",
                                      "--set", "workload.iterations=2", "--set", "workload.buffer=64MiB",
                                      "--set", "host_memory.size=512MiB", "--set", "rnic.buffer.send_regions=shared",
                                      "--set", "rnic.context_cache.enabled=true"}};
        std::vector<double> wall, per_write, writes;
        for (int r = 0; r < o.runs; ++r) {
            boost::json::value v;
            if (!run_sim("rnic-bench", o, w, {}, &v)) return false;
            const double s = v.at("wallclock").at("seconds").to_number<double>();
            const double ops = v.at("workload").at("rows").at(0).at("iterations").to_number<double>();
            wall.push_back(s);
            per_write.push_back(ops > 0 ? s * 1e6 / ops : 0.0);
            writes.push_back(ops);
        }
        std::printf("%-26s %8d %16.2f %16.1f %12.0f\n", "2 x 4 KiB Writes per QP", qps, median(wall),
                    median(per_write), median(writes));
    }
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
    return fabric_table(o) && many_qp_table(o) ? 0 : 1;
}
