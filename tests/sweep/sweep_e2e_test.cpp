// rnic-sweep end to end with the real rnic-sim: local parallel runs and resume, GNU parallel and Slurm job files
// collected into the same table, validation stops, plots with gnuplot.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "test_helpers.h"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace rnic::sweep::test;

namespace {

const std::string sweep_bin = RNIC_SWEEP_PATH;
const std::string sim_bin = RNIC_SIM_PATH;
const std::string root = RNIC_SOURCE_DIR;

command_result sweep(const std::string& file, const std::string& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv{sweep_bin, file, "--root", root, "--sim", sim_bin, "--out", out};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_command(argv);
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::size_t count_lines(const std::string& text) {
    std::size_t n = 0;
    for (char c : text) n += c == '\n' ? 1 : 0;
    return n;
}

}  // namespace

TEST(SweepE2E, LocalRunKeepsEachRunAndResumes) {
    temp_dir dir("local");
    write_file(dir / "tiny.json", tiny_sweep("tiny"));
    const std::string out = dir / "out";
    command_result r = sweep(dir / "tiny.json", out, {"-j2"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "4 runs: 4 ok, 0 failed, 0 not run (4 run now, 0 done before)")) << r.output;
    EXPECT_TRUE(contains(r.output, "4/4 runs, 0 failed")) << r.output;  // the final progress line

    const std::string csv = read_file(out + "/table.csv");
    EXPECT_EQ(count_lines(csv), 5u) << csv;
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "run,id,link.a_to_b.loss,seed,status,goodput_gbps,bytes,b_buffer_peak,a_tx_frames");
    const json::value table = json::parse(read_file(out + "/table.json"));
    const json::array& rows = table.at("rows").as_array();
    ASSERT_EQ(rows.size(), 4u);
    for (const json::value& row : rows) {
        EXPECT_EQ(row.at("status").as_string(), "ok");
        EXPECT_GT(row.at("goodput_gbps").as_double(), 0.0);
        EXPECT_EQ(row.at("bytes").as_int64(), 5120);
        EXPECT_TRUE(row.at("b_buffer_peak").is_int64());
    }
    EXPECT_EQ(rows[3].at("id").as_string(), "0003-loss_0.05-seed_2");

    // Each run directory keeps its exact arguments, results, output and status; the manifest has the expansion.
    const std::string run3 = out + "/runs/0003-loss_0.05-seed_2";
    EXPECT_EQ(
        read_file(run3 + "/scenario-args.txt"),
        "--scenario\nplatform/scenarios/default.json\n--set\nworkload.sizes=[256]\n--set\nworkload.iterations=20\n"
        "--set\nlink.a_to_b.loss=0.05\n--seed\n2\n");
    EXPECT_EQ(read_file(run3 + "/status"), "ok\n");
    EXPECT_TRUE(file_nonempty(run3 + "/stdout.txt"));
    const json::value results = json::parse(read_file(run3 + "/results.json"));
    EXPECT_EQ(results.at("seed").as_int64(), 2);
    EXPECT_TRUE(contains(read_file(run3 + "/command.txt"), "--seed 2 --results " + run3 + "/results.json --log error"));
    const json::value manifest = json::parse(read_file(out + "/manifest.json"));
    EXPECT_EQ(manifest.at("runs").as_array().size(), 4u);
    EXPECT_EQ(read_file(out + "/sweep-file.json"), read_file(dir / "tiny.json"));

    // Again: nothing runs, the table is the same.
    r = sweep(dir / "tiny.json", out, {"-j2"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "(0 run now, 4 done before)")) << r.output;
    EXPECT_EQ(read_file(out + "/table.csv"), csv);

    // A run whose status went missing (interrupted) runs again, alone; --force runs all.
    fs::remove(out + "/runs/0001-loss_0-seed_2/status");
    r = sweep(dir / "tiny.json", out, {"-j2"});
    EXPECT_TRUE(contains(r.output, "(1 run now, 3 done before)")) << r.output;
    EXPECT_EQ(read_file(out + "/table.csv"), csv);
    r = sweep(dir / "tiny.json", out, {"-j2", "--force"});
    EXPECT_TRUE(contains(r.output, "(4 run now, 0 done before)")) << r.output;
    EXPECT_EQ(read_file(out + "/table.csv"), csv);  // rnic-sim is deterministic per seed

    // One more seed renumbers the runs: the finished ones are found by their arguments, only the new ones run.
    std::string more = tiny_sweep("tiny");
    more.replace(more.find("\"seeds\": [1, 2]"), 15, "\"seeds\": [1, 2, 3]");
    write_file(dir / "tiny.json", more);
    r = sweep(dir / "tiny.json", out, {"-j2"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "2 finished run(s) of an earlier expansion renamed")) << r.output;
    EXPECT_TRUE(contains(r.output, "6 runs: 6 ok, 0 failed, 0 not run (2 run now, 4 done before)")) << r.output;
    // The old run 3 (loss 0.05, seed 2) is now run 4, with the same metrics.
    const std::string old_row = "3,0003-loss_0.05-seed_2,";
    const std::size_t at = csv.find(old_row);
    ASSERT_NE(at, std::string::npos);
    const std::string rest = csv.substr(at + old_row.size(), csv.find('\n', at) - at - old_row.size());
    EXPECT_TRUE(contains(read_file(out + "/table.csv"), "4,0004-loss_0.05-seed_2," + rest + "\n"))
        << read_file(out + "/table.csv");
}

TEST(SweepE2E, GnuParallelJobFileAndCollectGiveTheLocalTable) {
    if (!have_program("parallel")) GTEST_SKIP() << "GNU parallel is not installed (Debian package parallel)";
    temp_dir dir("parallel");
    write_file(dir / "tiny.json", tiny_sweep("tiny"));
    command_result r = sweep(dir / "tiny.json", dir / "local", {"-j2"});
    ASSERT_EQ(r.exit_code, 0) << r.output;

    const std::string out = dir / "cluster";
    r = sweep(dir / "tiny.json", out, {"--emit", "parallel", dir / "jobs.txt"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "4 of 4 runs")) << r.output;
    const std::string jobs = read_file(dir / "jobs.txt");
    EXPECT_EQ(count_lines(jobs), 4u) << jobs;
    EXPECT_TRUE(contains(jobs, "--set 'workload.sizes=[256]'")) << jobs;

    // Before the jobs ran: every run is missing.
    r = sweep(dir / "tiny.json", out, {"--collect", "--no-plots"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "4 runs: 0 ok, 0 failed, 4 not run")) << r.output;
    EXPECT_TRUE(contains(read_file(out + "/table.csv"), ",missing,")) << read_file(out + "/table.csv");

    r = run_command({"parallel", "--will-cite", "-j2", "-a", dir / "jobs.txt"}, "", {"HOME=" + dir.path()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = sweep(dir / "tiny.json", out, {"--collect"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "4 runs: 4 ok, 0 failed, 0 not run")) << r.output;
    EXPECT_EQ(read_file(out + "/table.csv"), read_file(dir / "local/table.csv"));
    EXPECT_EQ(read_file(out + "/table.json"), read_file(dir / "local/table.json"));

    // The runs are done: a second emit has nothing left, and a local run reuses them.
    r = sweep(dir / "tiny.json", out, {"--emit", "parallel", dir / "jobs2.txt"});
    EXPECT_TRUE(contains(r.output, "0 of 4 runs")) << r.output;
    EXPECT_EQ(read_file(dir / "jobs2.txt"), "");
    r = sweep(dir / "tiny.json", out);
    EXPECT_TRUE(contains(r.output, "(0 run now, 4 done before)")) << r.output;
}

TEST(SweepE2E, SlurmArrayScriptRunsOneRunPerIndex) {
    temp_dir dir("slurm");
    write_file(dir / "tiny.json", tiny_sweep("tiny"));
    command_result r = sweep(dir / "tiny.json", dir / "local", {"-j2"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string out = dir / "cluster";
    const std::string script = dir / "array.sbatch";
    r = sweep(dir / "tiny.json", out, {"--emit", "slurm", script});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string text = read_file(script);
    EXPECT_TRUE(contains(text, "#SBATCH --array=0-3\n")) << text;
    EXPECT_TRUE(contains(text, "#SBATCH --job-name=rnic-sweep-tiny\n")) << text;
    EXPECT_TRUE(contains(text, "--collect")) << text;
    // What Slurm would do: run the script once per array index.
    for (int i = 0; i < 4; ++i) {
        r = run_command({"bash", script}, "", {"SLURM_ARRAY_TASK_ID=" + std::to_string(i)});
        ASSERT_EQ(r.exit_code, 0) << r.output;
    }
    r = run_command({"bash", script}, "", {"SLURM_ARRAY_TASK_ID=4"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    r = sweep(dir / "tiny.json", out, {"--collect"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(read_file(out + "/table.csv"), read_file(dir / "local/table.csv"));
}

TEST(SweepE2E, PlotsGivePngSvgAndAReport) {
    if (!have_program("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian package gnuplot-nox)";
    temp_dir dir("plots");
    write_file(dir / "tiny.json", tiny_sweep("tiny", R"J(,
  "plots": [ { "name": "goodput", "x": "link.a_to_b.loss", "y": "goodput_gbps", "x_label": "loss probability",
               "y_label": "goodput (Gb/s)", "y_min": 0 } ])J"));
    const std::string out = dir / "out";
    command_result r = sweep(dir / "tiny.json", out, {"-j2"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string png = read_file(out + "/plots/goodput.png");
    ASSERT_GT(png.size(), 1000u);
    EXPECT_EQ(png.substr(1, 3), "PNG");
    const std::string svg = read_file(out + "/plots/goodput.svg");
    EXPECT_TRUE(contains(svg, "<svg")) << svg.substr(0, 200);
    EXPECT_TRUE(contains(svg, "goodput (Gb/s)"));
    const std::string md = read_file(out + "/report.md");
    EXPECT_TRUE(contains(md, "![goodput (Gb/s) vs loss probability](plots/goodput.png)")) << md;
    EXPECT_TRUE(contains(md, "| loss probability | goodput (Gb/s) |\n|---:|---:|\n| 0 | ")) << md;

    // Another figure from the table alone.
    write_file(dir / "more.json", R"({"plots": [{"name": "peak", "x": "link.a_to_b.loss", "y": "b_buffer_peak",
                                              "log_x": false, "error": "stddev"}]})");
    r = run_command({sweep_bin, "--plot", dir / "more.json", "--table", out + "/table.json", "--out", dir / "again"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(file_nonempty(dir / "again/plots/peak.png"));
    EXPECT_TRUE(file_nonempty(dir / "again/plots/peak.svg"));
    EXPECT_TRUE(contains(read_file(dir / "again/report.md"), "(plots/peak.png)"));
}

TEST(SweepE2E, BadSweepFilesStopBeforeAnythingRuns) {
    temp_dir dir("bad");
    write_file(dir / "range.json", R"({"base": "platform/scenarios/default.json",
    "axes": [{"key": "link.a_to_b.loss", "range": {"from": 0, "to": 0.1, "step": 0}}]})");
    command_result r = sweep(dir / "range.json", dir / "out");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.output, "rnic-sweep: " + dir / "range.json" + ": axes[0].range.step: must not be 0"))
        << r.output;

    write_file(dir / "base.json", R"({"base": "platform/scenarios/nope.json"})");
    r = sweep(dir / "base.json", dir / "out");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.output, dir / "base.json" +
                                       ": base: cannot read 'platform/scenarios/nope.json' "
                                       "(relative to the project root " +
                                       root))
        << r.output;

    write_file(dir / "plot.json", tiny_sweep("p", R"(, "plots": [{"x": "link.a_to_b.loss", "y": "goodput"}])"));
    r = sweep(dir / "plot.json", dir / "out");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.output, "plots[0].y: 'goodput' is not a metric")) << r.output;
    EXPECT_FALSE(fs::exists(dir / "out"));

    // Plot expressions are checked against the sweep's "set" and axis values before anything runs.
    write_file(dir / "ref.json", tiny_sweep("p", R"(, "plots": [{"x": "link.a_to_b.loss", "y": "goodput_gbps",
      "references": [{"label": "size", "y": "workload.sizes / 8"}]}])"));
    r = sweep(dir / "ref.json", dir / "out");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.output, "ref.json: plots[0].references[0].y: 'workload.sizes' is not a number ([256])"))
        << r.output;
    write_file(dir / "divide.json", tiny_sweep("p", R"(, "plots": [{"x": "link.a_to_b.loss", "y": "goodput_gbps",
      "y_divide": "x * workload.iterations"}])"));
    r = sweep(dir / "divide.json", dir / "out");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.output, "divide.json: plots[0].y_divide: is 0.0 for run 0000-loss_0-seed_1 (x = 0)"))
        << r.output;
    EXPECT_FALSE(fs::exists(dir / "out"));

    r = run_command({sweep_bin, dir / "range.json", "--jobs", "0"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.output, "-j needs a number from 1 to 4096")) << r.output;
}

TEST(SweepE2E, AnInvalidFirstRunStopsTheSweepAndLaterBadRunsFail) {
    temp_dir dir("invalid");
    std::string text = tiny_sweep("bad");
    text.replace(text.find("link.a_to_b.loss"), 16, "link.a_to_b.lossy");
    write_file(dir / "bad.json", text);
    command_result r = sweep(dir / "bad.json", dir / "out", {"-j2"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(contains(r.output, "the first run's scenario is invalid (rnic-sim exit status 2); nothing else ran"))
        << r.output;
    EXPECT_TRUE(contains(r.output, "link.a_to_b.lossy: unknown key")) << r.output;
    std::size_t statuses = 0;
    for (const auto& e : fs::directory_iterator(dir / "out/runs")) statuses += fs::exists(e.path() / "status") ? 1 : 0;
    EXPECT_EQ(statuses, 1u);

    // Valid first run, out-of-range later value: those runs fail with rnic-sim's status 2, the rest are ok.
    text = tiny_sweep("later");
    text.replace(text.find("[0, 0.05]"), 9, "[0, 2]");
    write_file(dir / "later.json", text);
    r = sweep(dir / "later.json", dir / "out2", {"-j2"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "4 runs: 2 ok, 2 failed")) << r.output;
    EXPECT_TRUE(contains(r.output, "failed 2: rnic-sim: --set link.a_to_b.loss=2")) << r.output;
    EXPECT_TRUE(contains(read_file(dir / "out2/table.csv"), "0002-loss_2-seed_1,2,1,failed 2,,,,\n"))
        << read_file(dir / "out2/table.csv");
}

TEST(SweepE2E, DryRunPrintsTheCommands) {
    temp_dir dir("dry");
    write_file(dir / "tiny.json", tiny_sweep("tiny"));
    const command_result r = sweep(dir / "tiny.json", dir / "out", {"--dry-run"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(count_lines(r.output), 4u) << r.output;
    EXPECT_TRUE(contains(r.output, sim_bin + " --scenario platform/scenarios/default.json --set 'workload.sizes=[256]' "
                                             "--set workload.iterations=20 --set link.a_to_b.loss=0.05 --seed 2"))
        << r.output;
    EXPECT_FALSE(fs::exists(dir / "out"));
}

// Every sweep the project ships (the study's among them) parses and validates, plots included:
// a sweep file is checked whole before anything runs, so a dry run is enough.
TEST(SweepE2E, EveryShippedSweepFileIsValid) {
    std::size_t checked = 0;
    for (const auto& entry : fs::directory_iterator(fs::path(root) / "platform" / "sweeps")) {
        if (entry.path().extension() != ".json") continue;
        temp_dir dir("shipped");
        const command_result r = sweep(entry.path().string(), dir / "out", {"--dry-run"});
        EXPECT_EQ(r.exit_code, 0) << entry.path() << ": " << r.output;
        ++checked;
    }
    EXPECT_GE(checked, 9u);
}
