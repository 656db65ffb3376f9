// rnic-sim: runs one scenario of the iWARP RNIC virtual platform.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <systemc>
#include <vector>

#include "config/scenario.h"
#include "core/log.h"
#include "core/timeline.h"
#include "scenario_schema.h"
#include "simulation.h"

namespace {

// Keep the output to the table and the log: SystemC prints its banner before sc_main runs, so the
// switch must be set during static initialisation.
const int kNoBanner = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);

const char* const kUsage = R"(usage: rnic-sim [options]

Runs a scenario of the iWARP RNIC virtual platform: hosts with PCIe and an RNIC, on one Ethernet
link or behind switches (topology.kind), and a workload; prints a perftest-like table.

options:
  --scenario FILE      scenario JSON (default: platform/scenarios/default.json)
  --set KEY=VALUE      override any scenario key by its dotted path (repeatable), e.g.
                       --set link.rate=40Gbps --set pcie.lanes=16 --set workload.sizes=[64,4096]
  --seed N             seed of every random choice (same as --set simulation.seed=N)
  --results FILE       write the results as JSON (scenario as run, statistics, latencies)
  --pcap FILE          write the wire traffic as a pcap (Wireshark decodes MPA/DDP/RDMAP); in a
                       fabric the frames delivered to hosts, or one file per host link when
                       FILE contains %h (replaced by the host's name)
  --timeline FILE      write a transaction timeline (Chrome trace-event JSON; open it in Perfetto
                       or chrome://tracing): TLPs or PCI-X transactions, DMA transfers, MSI-X
  --log SPEC           log levels: LEVEL[,category=LEVEL...]; levels off, error, warn, info,
                       debug, trace; categories sim, host, pcie, dma, mem, buf, toe, mpa, rdma,
                       cp, fw, drv, link, app (default: warn)
  --help-scenario      list every scenario key with its unit, default, range and description
  --help               this text
exit status: 0 success; 1 the run failed (workload error, integrity check, time limit);
             2 bad command line or scenario
)";

struct options {
    std::string scenario = "platform/scenarios/default.json";
    std::vector<std::string> overrides;
    std::string results, pcap, timeline, log = "warn";
};

int usage_error(const std::string& msg) {
    std::fprintf(stderr, "rnic-sim: %s\n(see rnic-sim --help)\n", msg.c_str());
    return 2;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
    options opt;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char* what) -> const char* {
            if (i + 1 >= argc) return nullptr;
            (void)what;
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--help-scenario") {
            std::fputs(rnic::platform::scenario_schema().describe().c_str(), stdout);
            return 0;
        } else if (a == "--scenario" || a == "--set" || a == "--seed" || a == "--results" || a == "--pcap" ||
                   a == "--log" || a == "--timeline") {
            const char* v = value(a.c_str());
            if (v == nullptr) return usage_error(a + " needs a value");
            if (a == "--scenario")
                opt.scenario = v;
            else if (a == "--set")
                opt.overrides.push_back(v);
            else if (a == "--seed") {
                char* end = nullptr;
                const unsigned long long seed = std::strtoull(v, &end, 10);
                if (*v == '\0' || *end != '\0' || v[0] == '-') {
                    return usage_error(std::string("--seed: expected a non-negative integer, got \"") + v + "\"");
                }
                opt.overrides.push_back("simulation.seed=" + std::to_string(seed));
            } else if (a == "--results")
                opt.results = v;
            else if (a == "--pcap")
                opt.pcap = v;
            else if (a == "--timeline")
                opt.timeline = v;
            else
                opt.log = v;
        } else {
            return usage_error("unknown argument \"" + a + "\"");
        }
    }
    std::string error;
    if (!rnic::log::configure(opt.log, &error)) return usage_error(error);
    // sc_stop() at the end of the workload is the normal way out, not news.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);

    std::unique_ptr<rnic::config::scenario> scenario;
    try {
        scenario = std::make_unique<rnic::config::scenario>(
            rnic::config::scenario::load(rnic::platform::scenario_schema(), opt.scenario, opt.overrides));
    } catch (const rnic::config::scenario_error& e) {
        std::fprintf(stderr, "rnic-sim: %s\n", e.what());
        return 2;
    }

    const auto wall_start = std::chrono::steady_clock::now();
    std::unique_ptr<rnic::platform::simulation> sim;
    try {
        sim = std::make_unique<rnic::platform::simulation>(*scenario, opt.pcap);
    } catch (const std::runtime_error& e) {
        std::fprintf(stderr, "rnic-sim: %s\n", e.what());
        return 2;
    }
    if (!opt.timeline.empty() && !rnic::timeline::open(opt.timeline, &error)) {
        std::fprintf(stderr, "rnic-sim: %s\n", error.c_str());
        return 2;
    }
    const bool ok = sim->run();
    rnic::timeline::close();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

    sim->print_summary(std::cout);
    boost::json::object results = sim->results();
    const double sim_s = sim->simulated_seconds();
    results["wallclock"] = {
        {"seconds", wall},
        {"payload_bytes_per_second", wall > 0 ? static_cast<double>(sim->payload_bytes()) / wall : 0.0},
        {"fpdus_per_second", wall > 0 ? static_cast<double>(sim->fpdus()) / wall : 0.0},
        {"slowdown", sim_s > 0 ? wall / sim_s : 0.0}};
    if (boost::json::object q = sim->qemu_wallclock(); !q.empty()) {
        results["wallclock"].as_object()["qemu"] = std::move(q);
        std::printf(
            "qemu: %llu BAR accesses, %.1f us wall each (from the message to the reply)\n",
            static_cast<unsigned long long>(
                results["wallclock"].as_object()["qemu"].as_object()["bar_accesses"].to_number<std::uint64_t>()),
            results["wallclock"].as_object()["qemu"].as_object()["bar_wall_us_mean"].as_double());
    }
    std::printf("status: %s; simulated %.3f ms in %.2f s wall (slowdown %.0fx)\n",
                results["status"].as_string().c_str(), sim_s * 1e3, wall, sim_s > 0 ? wall / sim_s : 0.0);
    if (!opt.results.empty()) {
        std::ofstream f(opt.results);
        if (!f) {
            std::fprintf(stderr, "rnic-sim: cannot write results to %s: %s\n", opt.results.c_str(),
                         std::strerror(errno));
            return 1;
        }
        f << boost::json::serialize(results) << "\n";
    }
    return ok ? 0 : 1;
}
