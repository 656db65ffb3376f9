// rnic-sweep: runs rnic-sim over a sweep of scenario keys and seeds, builds one table, draws plots, writes a report.
// See tools/sweep/README.md.
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common.h"
#include "config/json_text.h"
#include "plot.h"
#include "run_dir.h"
#include "runner.h"
#include "sweep_file.h"
#include "table.h"

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace rnic::sweep;

namespace {

constexpr const char* kUsageText = R"(usage: rnic-sweep SWEEP.json [options]
       rnic-sweep --plot PLOTS.json (SWEEP.json | --table TABLE.json) [--out DIR]

Runs rnic-sim once per point of a sweep (axes over scenario keys, times seeds), in parallel, and writes
OUT/runs/<id>/ per run, OUT/table.csv and OUT/table.json (axes, seed, status, metrics), OUT/manifest.json,
plots (OUT/plots/*.png, *.svg) and OUT/report.md. Runs that finished before with the same arguments are not
run again. Sweep file format: tools/sweep/README.md.

options:
  --out DIR          output folder (default: sweeps-out/<sweep name> under the project root)
  --root DIR         project root: rnic-sim runs there, and a relative "base" starts there
                     (default: the current directory)
  --sim PATH         rnic-sim to run (default: the rnic-sim next to rnic-sweep)
  -j N, --jobs N     runs at a time (default: the number of cores)
  --force            run again the runs that are done
  --timeout SEC      stop a run after SEC wall-clock seconds (status "failed timeout")
  --emit parallel FILE  write a GNU parallel job file for the runs not done yet (one sh command line
                     per run: parallel --will-cite -j N -a FILE), and run nothing
  --emit slurm FILE  write an sbatch job-array script for the runs not done yet, and run nothing
  --collect          build table, plots and report from the run directories there are; run nothing
  --dry-run          print each run's command; run nothing
  --no-plots         table only: no plots, no report
  --plot FILE        draw these plot specs instead of the sweep file's "plots"; run nothing
  --table FILE       with --plot: the table.json to draw from (instead of a sweep's output folder)
  --gnuplot PATH     gnuplot program (default: gnuplot on the PATH)
  --quiet            no progress line
  --help             this text
exit status: 0 every run ok; 1 some run failed or is missing; 2 bad command line, sweep file or
             scenario (the first run exited with status 2); 130 interrupted (run again to resume)
)";

struct options {
    std::string sweep_file;
    std::string out;
    std::string root;
    std::string sim;
    int jobs = 0;
    bool force = false;
    double timeout_s = 0.0;
    std::string emit_kind;
    std::string emit_file;
    bool collect = false;
    bool dry_run = false;
    bool no_plots = false;
    std::string plot_file;
    std::string table_file;
    std::string gnuplot = "gnuplot";
    bool quiet = false;
};

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "rnic-sweep: %s\n(rnic-sweep --help for usage)\n", message.c_str());
    std::exit(2);
}

options parse_args(int argc, char** argv) {
    options o;
    auto value = [&](int& i, const std::string& name) -> std::string {
        if (i + 1 >= argc) usage_error(name + " needs a value");
        return argv[++i];
    };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kUsageText, stdout);
            std::exit(0);
        } else if (a == "--out") {
            o.out = value(i, a);
        } else if (a == "--root") {
            o.root = value(i, a);
        } else if (a == "--sim") {
            o.sim = value(i, a);
        } else if (a == "-j" || a == "--jobs" || (a.rfind("-j", 0) == 0 && a.size() > 2)) {
            const std::string v = a.size() > 2 && a[1] == 'j' ? a.substr(2) : value(i, a);
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (end == v.c_str() || *end != '\0' || n < 1 || n > 4096) usage_error("-j needs a number from 1 to 4096");
            o.jobs = static_cast<int>(n);
        } else if (a == "--force") {
            o.force = true;
        } else if (a == "--timeout") {
            const std::string v = value(i, a);
            char* end = nullptr;
            o.timeout_s = std::strtod(v.c_str(), &end);
            if (end == v.c_str() || *end != '\0' || !(o.timeout_s > 0)) usage_error("--timeout needs seconds > 0");
        } else if (a == "--emit") {
            o.emit_kind = value(i, a);
            if (o.emit_kind != "slurm" && o.emit_kind != "parallel") usage_error("--emit takes slurm or parallel");
            o.emit_file = value(i, a);
        } else if (a == "--collect") {
            o.collect = true;
        } else if (a == "--dry-run") {
            o.dry_run = true;
        } else if (a == "--no-plots") {
            o.no_plots = true;
        } else if (a == "--plot") {
            o.plot_file = value(i, a);
        } else if (a == "--table") {
            o.table_file = value(i, a);
        } else if (a == "--gnuplot") {
            o.gnuplot = value(i, a);
        } else if (a == "--quiet") {
            o.quiet = true;
        } else if (!a.empty() && a[0] == '-') {
            usage_error("unknown option " + a);
        } else if (o.sweep_file.empty()) {
            o.sweep_file = a;
        } else {
            usage_error("more than one sweep file (" + o.sweep_file + ", " + a + ")");
        }
    }
    if (!o.table_file.empty() && o.plot_file.empty()) usage_error("--table goes with --plot");
    if (!o.table_file.empty() && !o.sweep_file.empty()) usage_error("give a sweep file or --table, not both");
    if (o.sweep_file.empty() && o.table_file.empty()) usage_error("no sweep file");
    int modes =
        (o.collect ? 1 : 0) + (o.dry_run ? 1 : 0) + (o.emit_kind.empty() ? 0 : 1) + (o.plot_file.empty() ? 0 : 1);
    if (modes > 1) usage_error("--collect, --dry-run, --emit and --plot exclude each other");
    if (o.no_plots && !o.plot_file.empty()) usage_error("--no-plots and --plot exclude each other");
    return o;
}

std::string self_exe() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("rnic-sweep") : exe.string();
}

std::string self_dir() {
    const fs::path exe = self_exe();
    return exe.has_parent_path() ? exe.parent_path().string() : std::string(".");
}

std::string absolute(const std::string& p) {
    std::error_code ec;
    fs::path a = fs::absolute(p, ec);
    return (ec ? fs::path(p) : a).lexically_normal().string();
}

std::string strip_slash(std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
}

// A table of the expansion with every run "ok" and no metrics: lets plots check their axes before anything runs.
table expansion_table(const Sweep& sweep, const std::vector<run>& runs) {
    table t = collect_table(sweep, runs, "/nonexistent/rnic-sweep", nullptr);
    const int st = t.column("status");
    for (auto& row : t.rows) row[static_cast<std::size_t>(st)] = "ok";
    return t;
}

json::value manifest(const Sweep& sweep, const std::vector<run>& runs, const runner_options& ro) {
    json::object m;
    m["tool"] = "rnic-sweep";
    m["sweep_file"] = absolute(sweep.file);
    m["name"] = sweep.name;
    m["root"] = ro.root;
    m["sim"] = ro.sim;
    m["out"] = ro.out_dir;
    m["base"] = sweep.base;
    m["sweep"] = sweep.source;
    json::array cols;
    for (const column& c : table_columns(sweep)) {
        json::object co;
        co["name"] = c.name;
        co["kind"] = c.kind;
        if (!c.group.empty()) co["group"] = c.group;
        if (!c.unit.empty()) co["unit"] = c.unit;
        cols.push_back(std::move(co));
    }
    m["columns"] = std::move(cols);
    json::array rs;
    for (const run& r : runs) {
        json::object run_object;
        run_object["index"] = static_cast<std::int64_t>(r.index);
        run_object["id"] = r.id;
        json::object point;
        for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
            const axis& axis = sweep.axes[a];
            if (axis.zipped) point[axis.name] = axis.labels[r.point[a]];
            for (const axis_key& k : axis.keys) point[k.key] = k.values[r.point[a]];
        }
        run_object["point"] = std::move(point);
        run_object["seed"] = r.seed;
        json::array args;
        for (const std::string& s : r.scenario_args) args.emplace_back(s);
        run_object["args"] = std::move(args);
        rs.push_back(std::move(run_object));
    }
    m["runs"] = std::move(rs);
    return m;
}

std::string intro_text(const Sweep& sweep, const table& table) {
    std::size_t ok = 0;
    std::size_t missing = 0;
    const int st = table.column("status");
    for (const auto& row : table.rows) {
        const std::string s = value_text(row[static_cast<std::size_t>(st)]);
        if (s == "ok")
            ++ok;
        else if (s == "missing" || s == "stale")
            ++missing;
    }
    std::string t = std::to_string(table.rows.size()) + " runs of rnic-sim from `" + sweep.base + "` (sweep file `" +
                    sweep.file + "`): " + std::to_string(ok) + " ok, " +
                    std::to_string(table.rows.size() - ok - missing) + " failed, " + std::to_string(missing) +
                    " not run.";
    if (!sweep.set.empty()) {
        t += "\n\nFixed: ";
        for (std::size_t i = 0; i < sweep.set.size(); ++i) {
            t += (i ? ", " : "") + std::string("`") + sweep.set[i].first + "=" +
                 set_value_text(sweep.set[i].second, "") + "`";
        }
        t += ".";
    }
    t += "\n\nAxes: ";
    for (std::size_t i = 0; i < sweep.axes.size(); ++i) {
        const axis& a = sweep.axes[i];
        t += (i ? "; " : "") + std::string("`") + a.name + "` (";
        if (a.zipped) {
            for (std::size_t k = 0; k < a.keys.size(); ++k)
                t += (k ? ", " : "") + std::string("`") + a.keys[k].key + "`";
            t += " zipped: ";
        }
        for (std::size_t v = 0; v < a.size(); ++v) t += (v ? ", " : "") + value_text(a.labels[v]);
        if (!a.keys.front().unit.empty() && !a.zipped) t += " " + a.keys.front().unit;
        t += ")";
    }
    if (sweep.axes.empty()) t += "none";
    t += ". Seeds: ";
    for (std::size_t i = 0; i < sweep.seeds.size(); ++i) t += (i ? ", " : "") + std::to_string(sweep.seeds[i]);
    return t + ".";
}

void write_json(const std::string& path, const json::value& v) {
    write_text_file(path, rnic::config::to_pretty_json(v));
}

// Plots and report.md into out_dir; returns false when a figure could not be drawn.
bool plots_and_report(const table& table, std::vector<plot_spec>& specs, const std::string& out_dir,
                      const std::string& intro, const std::string& gnuplot) {
    std::vector<plot_data> data(specs.size());
    std::vector<report_figure> figures;
    bool all_drawn = true;
    if (!specs.empty()) fs::create_directories(out_dir + "/plots");
    for (std::size_t i = 0; i < specs.size(); ++i) {
        report_figure f;
        f.spec = &specs[i];
        f.png = "plots/" + specs[i].name + ".png";
        f.svg = "plots/" + specs[i].name + ".svg";
        try {
            data[i] = aggregate_plot(specs[i], table);
            f.data = &data[i];
            for (const std::string& w : data[i].warnings) std::fprintf(stderr, "rnic-sweep: %s\n", w.c_str());
            f.problem = render_plot(specs[i], data[i], out_dir + "/plots", gnuplot);
        } catch (const input_error& e) {
            f.problem = e.what();
        }
        if (!f.problem.empty()) {
            all_drawn = false;
            std::fprintf(stderr, "rnic-sweep: plot %s: %s\n", specs[i].name.c_str(), f.problem.c_str());
        }
        figures.push_back(f);
    }
    write_text_file(out_dir + "/report.md", report_markdown(table, figures, intro));
    return all_drawn;
}

int plot_from_table(const options& o) {
    const std::string text = read_text_file(o.table_file);
    json::error_code ec;
    const json::value v = json::parse(text, ec);
    if (ec) throw input_error(o.table_file, "", "not JSON: " + ec.message());
    table table = table_from_json(v, o.table_file);
    json::value pv;
    const std::string ptext = read_text_file(o.plot_file);
    if (auto err = rnic::config::parse_json_text(ptext, pv)) {
        throw input_error(o.plot_file + ":" + std::to_string(err->line) + ":" + std::to_string(err->column) + ": " +
                          err->message);
    }
    std::vector<plot_spec> specs = parse_plots(pv, o.plot_file, "");
    resolve_plots(specs, table.columns, o.plot_file, table.set);
    const std::string out = o.out.empty() ? fs::path(absolute(o.table_file)).parent_path().string() : absolute(o.out);
    fs::create_directories(out);
    const std::string intro = std::to_string(table.rows.size()) + " runs from `" + o.table_file + "`.";
    const bool ok = plots_and_report(table, specs, out, intro, o.gnuplot);
    std::printf("report: %s/report.md\n", out.c_str());
    return ok ? 0 : 1;
}

int run_sweep(const options& o) {
    if (!o.table_file.empty()) return plot_from_table(o);

    Sweep sweep = load_sweep(o.sweep_file);
    runner_options ro;
    ro.root = strip_slash(absolute(o.root.empty() ? "." : o.root));
    ro.sim = absolute(o.sim.empty() ? self_dir() + "/rnic-sim" : o.sim);
    ro.out_dir = strip_slash(absolute(o.out.empty() ? ro.root + "/sweeps-out/" + sweep.name : o.out));
    ro.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
    ro.force = o.force;
    ro.timeout_s = o.timeout_s;
    ro.progress = o.quiet ? nullptr : stderr;

    std::vector<plot_spec> specs = sweep.plots;
    if (!o.plot_file.empty()) {
        json::value pv;
        const std::string ptext = read_text_file(o.plot_file);
        if (auto err = rnic::config::parse_json_text(ptext, pv)) {
            throw input_error(o.plot_file + ":" + std::to_string(err->line) + ":" + std::to_string(err->column) + ": " +
                              err->message);
        }
        specs = parse_plots(pv, o.plot_file, "");
    }
    resolve_plots(specs, table_columns(sweep), sweep.file, sweep.set);
    const std::vector<run> runs = expand(sweep);
    {
        const table check = expansion_table(sweep, runs);
        for (const plot_spec& s : specs) (void)aggregate_plot(s, check);
    }

    if (o.dry_run) {
        for (const run& r : runs) std::printf("%s\n", run_shell_command(ro.sim, ro.root, ro.out_dir, r).c_str());
        return 0;
    }

    const bool runs_sim = !o.collect && o.plot_file.empty();
    if (runs_sim) {
        const fs::path base =
            fs::path(sweep.base).is_absolute() ? fs::path(sweep.base) : fs::path(ro.root) / sweep.base;
        std::error_code ec;
        if (!fs::is_regular_file(base, ec) || ::access(base.c_str(), R_OK) != 0) {
            throw input_error(sweep.file, "base",
                              "cannot read '" + sweep.base + "'" +
                                  (fs::path(sweep.base).is_absolute()
                                       ? std::string()
                                       : " (relative to the project root " + ro.root + "; see --root)"));
        }
        if (::access(ro.sim.c_str(), X_OK) != 0) {
            std::fprintf(stderr, "rnic-sweep: cannot execute rnic-sim at %s (build it, or give --sim)\n",
                         ro.sim.c_str());
            return 2;
        }
    }

    fs::create_directories(ro.out_dir + "/runs");
    if (o.plot_file.empty()) {
        write_text_file(ro.out_dir + "/sweep-file.json", sweep.text);
        write_json(ro.out_dir + "/manifest.json", manifest(sweep, runs, ro));
    }
    if (!o.force) {
        const std::size_t adopted = adopt_finished_runs(ro.out_dir, runs);
        if (adopted > 0) {
            std::fprintf(stderr,
                         "rnic-sweep: %zu finished run(s) of an earlier expansion renamed to their new run ids\n",
                         adopted);
        }
    }
    const std::string collect_hint = shell_quote(self_exe()) + " " + shell_quote(absolute(sweep.file)) +
                                     " --collect --root " + shell_quote(ro.root) + " --out " + shell_quote(ro.out_dir);

    if (!o.emit_kind.empty()) {
        const std::vector<const run*> pending = pending_runs(runs, ro.out_dir, o.force);
        const std::size_t n = o.emit_kind == "parallel"
                                  ? emit_parallel(o.emit_file, pending, ro)
                                  : emit_slurm(o.emit_file, pending, ro, sweep.name, collect_hint);
        std::printf("%s: %zu of %zu runs (the others are done)\n", o.emit_file.c_str(), n, runs.size());
        if (o.emit_kind == "parallel") {
            std::printf("run them:  parallel --will-cite -j %d -a %s\n", ro.jobs, shell_quote(o.emit_file).c_str());
        } else {
            std::printf("submit:    sbatch %s\n", shell_quote(o.emit_file).c_str());
        }
        std::printf("then:      %s\n", collect_hint.c_str());
        return 0;
    }

    run_summary summary;
    if (runs_sim) {
        summary = run_local(runs, ro, sweep.name);
        if (summary.invalid_scenario) {
            std::fprintf(stderr,
                         "rnic-sweep: %s: the first run's scenario is invalid (rnic-sim exit status 2); "
                         "nothing else ran:\n%s",
                         sweep.file.c_str(), summary.invalid_message.c_str());
            return 2;
        }
    }

    std::vector<std::string> warnings;
    const table table = collect_table(sweep, runs, ro.out_dir, &warnings);
    for (const std::string& w : warnings) std::fprintf(stderr, "rnic-sweep: warning: %s\n", w.c_str());
    write_text_file(ro.out_dir + "/table.csv", to_csv(table));
    write_json(ro.out_dir + "/table.json", to_json(table));

    std::size_t ok = 0;
    std::size_t missing = 0;
    std::vector<std::string> not_ok;
    const int st = table.column("status");
    for (const auto& row : table.rows) {
        const std::string s = value_text(row[static_cast<std::size_t>(st)]);
        if (s == "ok") {
            ++ok;
        } else {
            if (s == "missing" || s == "stale") ++missing;
            if (not_ok.size() < 5) not_ok.push_back("runs/" + value_text(row[1]) + ": " + s);
        }
    }
    // Figures that cannot be drawn are reported on stderr and in report.md, not in the exit status.
    if (!o.no_plots && !summary.interrupted) {
        (void)plots_and_report(table, specs, ro.out_dir, intro_text(sweep, table), o.gnuplot);
    }
    std::printf("%zu runs: %zu ok, %zu failed, %zu not run", table.rows.size(), ok, table.rows.size() - ok - missing,
                missing);
    if (runs_sim) std::printf(" (%zu run now, %zu done before)", summary.executed, summary.reused);
    std::printf("\n");
    for (const std::string& f : runs_sim ? summary.failures : not_ok) std::printf("  %s\n", f.c_str());
    std::printf("table:  %s/table.csv\n", ro.out_dir.c_str());
    if (!o.no_plots && !summary.interrupted) std::printf("report: %s/report.md\n", ro.out_dir.c_str());
    if (summary.interrupted) {
        std::fprintf(stderr, "rnic-sweep: interrupted; run the same command again to resume\n");
        return 130;
    }
    return ok == table.rows.size() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse_args(argc, argv);
    try {
        return run_sweep(o);
    } catch (const input_error& e) {
        std::fprintf(stderr, "rnic-sweep: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rnic-sweep: %s\n", e.what());
        return 1;
    }
}
