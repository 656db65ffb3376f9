// rnic-rtl-bench: what RTL in the loop costs and what it says. Runs rnic-sim on the same workload
// with the framing datapath's TLM model and with its Verilated RTL (rnic.mpa.model), and reports
// the wall-time ratio (medians over --runs) and, per FPDU, the clock cycles the RTL took from first
// word in to last word out against the cycles the TLM model charges (beats + cycles_per_fpdu).
#include "bench_common.h"

namespace {

using namespace rnic::bench;

struct sample {
    double wall = 0;
    std::uint64_t fpdus = 0, beats = 0, latency = 0;
    double cycles_per_fpdu = 0;
};

std::uint64_t u64(const boost::json::object& o, const char* key) {
    return o.at(key).to_number<std::uint64_t>();
}

bool run_once(const options& o, const workload& w, const char* model, sample* out) {
    boost::json::value v;
    if (!run_sim("rnic-rtl-bench", o, w, {"--set", std::string("rnic.mpa.model=") + model}, &v)) return false;
    out->wall = v.at("wallclock").at("seconds").to_number<double>();
    out->cycles_per_fpdu = v.at("scenario").at("rnic").at("mpa").at("cycles_per_fpdu").to_number<double>();
    *out = sample{out->wall, 0, 0, 0, out->cycles_per_fpdu};
    for (const auto& [name, module] : v.at("modules").as_object()) {
        if (!module.is_object() || !module.as_object().contains("framer")) continue;
        const auto& fr = module.at("framer").as_object();
        out->fpdus += u64(fr, "tx_fpdus") + u64(fr, "rx_fpdus");
        out->beats += u64(fr, "tx_datapath_beats") + u64(fr, "rx_datapath_beats");
        out->latency += u64(fr, "tx_datapath_latency_cycles") + u64(fr, "rx_datapath_latency_cycles");
    }
    return true;
}

}  // namespace

int main(int argc, char* argv[]) {
    options o;
    o.runs = 3;
    const int rc =
        parse_options(argc, argv,
                      "usage: rnic-rtl-bench [--sim PATH] [--scenario FILE] [--runs N]\n"
                      "  runs each workload N times (default 3) with rnic.mpa.model tlm and rtl; reports medians\n",
                      &o);
    if (rc >= 0) return rc;
    const int runs = o.runs;
    const std::string& sim = o.sim;
    const std::vector<workload> workloads = {
        {"default workload", {}},
        {"64-byte writes", {"--set", "workload.sizes=[64]", "--set", "workload.iterations=20000"}},
        {"markers, 4 KiB", {"--set", "rnic.mpa.markers=true", "--set", "workload.sizes=[4096]"}},
    };
    std::printf("rnic-rtl-bench: %d runs per workload and model, medians (sim %s)\n", runs, sim.c_str());
    std::printf("%-18s %9s %9s %7s %9s %11s %11s %11s\n", "workload", "tlm s", "rtl s", "ratio", "FPDUs", "beats/FPDU",
                "rtl cyc/F", "tlm cyc/F");
    for (const workload& w : workloads) {
        std::vector<double> tlm_wall, rtl_wall;
        sample rtl_s, tlm_s;
        for (int r = 0; r < runs; ++r) {
            if (!run_once(o, w, "tlm", &tlm_s) || !run_once(o, w, "rtl", &rtl_s)) return 1;
            tlm_wall.push_back(tlm_s.wall);
            rtl_wall.push_back(rtl_s.wall);
        }
        if (rtl_s.fpdus != tlm_s.fpdus || rtl_s.beats != tlm_s.beats) {
            std::fprintf(stderr, "rnic-rtl-bench: %s: the RTL and TLM runs moved different FPDUs or beats\n", w.name);
            return 1;
        }
        const double f = static_cast<double>(std::max<std::uint64_t>(1, rtl_s.fpdus));
        const double beats = static_cast<double>(rtl_s.beats) / f;
        std::printf("%-18s %9.2f %9.2f %6.1fx %9llu %11.2f %11.2f %11.2f\n", w.name, median(tlm_wall), median(rtl_wall),
                    median(rtl_wall) / median(tlm_wall), static_cast<unsigned long long>(rtl_s.fpdus), beats,
                    static_cast<double>(rtl_s.latency) / f, beats + tlm_s.cycles_per_fpdu);
    }
    std::printf(
        "(FPDUs sent plus received; beats: bus words per FPDU, the same in both models; rtl cyc/F: RTL clock\n"
        " cycles from first word in to last word out; tlm cyc/F: what the TLM model charges, beats +\n"
        " rnic.mpa.cycles_per_fpdu)\n");
    return 0;
}
