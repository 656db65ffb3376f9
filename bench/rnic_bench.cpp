// rnic-bench: simulation speed of the platform. Runs rnic-sim several times per workload and reports
// the medians of simulated payload bytes per wall second, FPDUs per wall second, and the slowdown
// versus real time (wall seconds per simulated second). Speed is measured here, never in tests.
//
// It also measures, in the same run, what this machine allows per payload byte: the work no model
// of this NIC can avoid doing for a byte it carries (copy it in, CRC32c it on transmit and again
// on receive, copy it out, at the default segment size, on one core). The bulk figure is printed
// as a share of that limit, so that runs on different machines compare.
#include <chrono>
#include <cstring>

#include "bench_common.h"
#include "proto/crc32c.h"

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
        const workload w{
            "incast",
            {"--set", "topology.kind=star", "--set", "topology.hosts=" + std::to_string(hosts), "--set",
             "workload.type=incast", "--set", "workload.incast.rounds=4", "--set", "rnic.buffer.capacity=32MiB"}};
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
    std::printf("\n%-26s %8s %16s %16s %12s\n", "RDMA Writes on many QPs", "QPs", "wall s", "wall us/Write", "Writes");
    for (int qps : {64, 1024, 4096}) {
        const std::string n = std::to_string(qps);
        const workload w{"many QPs",
                         {"--set", "workload.qps=" + n, "--set", "rnic.rdma.max_qp=" + n, "--set",
                          "rnic.tcp.max_connections=" + n, "--set", "workload.sizes=[4096]", "--set",
                          "workload.iterations=2", "--set", "workload.buffer=64MiB", "--set", "host_memory.size=512MiB",
                          "--set", "rnic.buffer.send_regions=shared", "--set", "rnic.context_cache.enabled=true"}};
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
        std::printf("%-26s %8d %16.2f %16.1f %12.0f\n", "2 x 4 KiB Writes per QP", qps, median(wall), median(per_write),
                    median(writes));
    }
    return true;
}

// The per-byte limit: 100 MB moved as 1460-byte segments (the default 1500-byte MTU's TCP payload),
// each copied from a host buffer into a NIC scratch buffer, CRC32c'd twice (the sender's and the
// receiver's FPDU CRC) and copied out to another host buffer. Bytes per second, best of `runs`
// (the least disturbed run is the limit).
double per_byte_limit(int runs) {
    constexpr std::size_t kSegment = 1460, kTotal = 100'000'000, kBuffer = 1 << 20;
    std::vector<std::uint8_t> src(kBuffer), dst(kBuffer), scratch(kSegment);
    for (std::size_t i = 0; i < kBuffer; ++i) src[i] = static_cast<std::uint8_t>(i * 131 + 7);
    double best = 0;
    std::uint32_t sink = 0;
    for (int r = 0; r < std::max(runs, 3); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        std::size_t off = 0;
        for (std::size_t done = 0; done < kTotal; done += kSegment) {
            if (off + kSegment > kBuffer) off = 0;
            std::memcpy(scratch.data(), src.data() + off, kSegment);
            sink ^= rnic::proto::crc32c(scratch.data(), kSegment);
            sink ^= rnic::proto::crc32c(scratch.data(), kSegment);
            std::memcpy(dst.data() + off, scratch.data(), kSegment);
            off += kSegment;
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::max(best, static_cast<double>(kTotal) / s);
    }
    if (sink == 0x12345678u) std::puts("");  // keeps the loop from being optimised away
    return best;
}

// The goals (issue 17): bulk payload at >= 35% of the per-byte limit, 64-byte Writes at
// >= 1.5 M FPDUs per wall second, RTL in the loop at most 4x the TLM run's wall time.
bool goal_table(const options& o) {
    const double limit = per_byte_limit(o.runs);
    std::printf(
        "\nper-byte limit of this machine: %.0f MB/s (copy in, CRC32c twice, copy out, 1460-byte "
        "segments, one core)\n\n",
        limit / 1e6);
    std::printf("%-44s %14s %12s %12s\n", "figure", "measured", "of limit", "goal");
    const workload bulk{
        "bulk", {"--set", "link.rate=10Gbps", "--set", "workload.sizes=[65536]", "--set", "workload.iterations=1526"}};
    const workload small{"small", {"--set", "workload.sizes=[64]", "--set", "workload.iterations=200000"}};
    std::vector<double> bulk_bps, small_fps, tlm_wall, rtl_wall;
    for (int r = 0; r < o.runs; ++r) {
        sample s;
        if (!run_once(o, bulk, &s)) return false;
        bulk_bps.push_back(s.payload_bps);
        if (!run_once(o, small, &s)) return false;
        small_fps.push_back(s.fpdus_ps);
        boost::json::value v;
        if (!run_sim("rnic-bench", o, workload{"tlm", {}}, {"--set", "rnic.mpa.model=tlm"}, &v)) return false;
        tlm_wall.push_back(v.at("wallclock").at("seconds").to_number<double>());
        if (!run_sim("rnic-bench", o, workload{"rtl", {}}, {"--set", "rnic.mpa.model=rtl"}, &v)) return false;
        rtl_wall.push_back(v.at("wallclock").at("seconds").to_number<double>());
    }
    const double bulk_m = median(bulk_bps);
    std::printf("%-44s %9.0f MB/s %11.0f%% %12s\n", "100 MB of 64 KiB Writes, 10 Gb/s, 1500 MTU", bulk_m / 1e6,
                100 * bulk_m / limit, ">= 35%");
    std::printf("%-44s %8.2f M/s %12s %12s\n", "64-byte Writes (200,000): FPDUs per second", median(small_fps) / 1e6,
                "", ">= 1.5 M/s");
    std::printf("%-44s %13.1fx %12s %12s\n", "RTL datapath, default scenario: wall vs TLM",
                median(rtl_wall) / std::max(median(tlm_wall), 1e-9), "", "<= 4x");
    return true;
}

}  // namespace

int main(int argc, char* argv[]) {
    options o;
    o.runs = 5;
    const int rc =
        parse_options(argc, argv,
                      "usage: rnic-bench [--sim PATH] [--scenario FILE] [--runs N]\n"
                      "  reports medians over N runs (default 5) of the default workload and of 64-byte writes,\n"
                      "  the issue-17 goal figures against this machine's per-byte limit, an incast on a star\n"
                      "  and Writes on many QPs\n",
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
    return goal_table(o) && fabric_table(o) && many_qp_table(o) ? 0 : 1;
}
