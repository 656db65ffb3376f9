// Tables (CSV quoting, JSON round trip), run directories, resume decisions and the emitted shell commands.
#include "table.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "common.h"
#include "run_dir.h"
#include "runner.h"
#include "sweep_file.h"
#include "test_helpers.h"

namespace json = boost::json;
using namespace rnic::sweep;
using rnic::sweep::test::temp_dir;

namespace {

Sweep small_sweep() {
    return parse_sweep(R"({"name": "t", "base": "b.json",
      "axes": [{"key": "k", "values": ["x,y", "q\"uote"]}], "seeds": [1],
      "metrics": {"m": "v", "n": "sum:l[*]"}})",
                       "t.json");
}

void fake_run(const std::string& out, const rnic::sweep::run& run, const std::string& status,
              const std::string& results, const std::string& args) {
    rnic::sweep::test::write_file(paths_of(out, run).args, args);
    if (!results.empty()) rnic::sweep::test::write_file(paths_of(out, run).results, results);
    if (!status.empty()) rnic::sweep::test::write_file(paths_of(out, run).status, status);
}

}  // namespace

TEST(Table, CsvQuoting) {
    EXPECT_EQ(csv_field("plain"), "plain");
    EXPECT_EQ(csv_field(""), "");
    EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
    EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
    EXPECT_EQ(csv_field("[64,4096]"), "\"[64,4096]\"");
}

TEST(Table, ValueText) {
    EXPECT_EQ(value_text(json::value(0.001)), "0.001");
    EXPECT_EQ(value_text(json::value(61160.0)), "61160.0");
    EXPECT_EQ(value_text(json::value(2.5e-7)), "2.5e-07");
    EXPECT_EQ(value_text(json::value(1e20)), "1e+20");
    EXPECT_EQ(value_text(json::value(48.89961685251993)), "48.89961685251993");
    EXPECT_EQ(value_text(json::value(std::int64_t{-3})), "-3");
    EXPECT_EQ(value_text(json::value(nullptr)), "");
    EXPECT_EQ(value_text(json::parse(R"([64,"4KiB",{"a":true}])")), "[64,\"4KiB\",{\"a\":true}]");
    EXPECT_TRUE(same_value(json::value(1), json::value(1.0)));
    EXPECT_FALSE(same_value(json::value(1), json::value(1.5)));
    EXPECT_TRUE(same_value(json::value("a"), json::value("a")));
}

TEST(Table, CollectReadsRunDirectoriesAndMarksTheirState) {
    temp_dir dir("collect");
    const Sweep sw = small_sweep();
    const std::vector<rnic::sweep::run> runs = expand(sw);
    ASSERT_EQ(runs.size(), 2u);
    fake_run(dir.path(), runs[0], "ok\n", R"({"v": 1.5, "l": [1, 2, 3]})", args_text(runs[0]));
    std::vector<std::string> warnings;
    table t = collect_table(sw, runs, dir.path(), &warnings);
    EXPECT_EQ(to_csv(t),
              "run,id,k,seed,status,m,n\n"
              "0,0000-k_x_y-seed_1,\"x,y\",1,ok,1.5,6\n"
              "1,0001-k_q_uote-seed_1,\"q\"\"uote\",1,missing,,\n");
    EXPECT_TRUE(warnings.empty());

    // A failed run keeps what results it has; a status with other arguments is stale and its results are ignored.
    fake_run(dir.path(), runs[0], "failed 1\n", R"({"v": 2})", args_text(runs[0]));
    fake_run(dir.path(), runs[1], "ok\n", R"({"v": 3, "l": []})", "--scenario\nother.json\n");
    t = collect_table(sw, runs, dir.path(), &warnings);
    EXPECT_EQ(to_csv(t),
              "run,id,k,seed,status,m,n\n"
              "0,0000-k_x_y-seed_1,\"x,y\",1,failed 1,2,\n"
              "1,0001-k_q_uote-seed_1,\"q\"\"uote\",1,stale,,\n");

    // An ok run whose metric is missing gets a warning naming the metric, the path and the run.
    fake_run(dir.path(), runs[1], "ok\n", R"({"w": 3})", args_text(runs[1]));
    warnings.clear();
    t = collect_table(sw, runs, dir.path(), &warnings);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_EQ(warnings[0], "metric m (v): nothing at 'v' (no member 'v'; members: w) in run 0001-k_q_uote-seed_1");

    // Results that do not parse.
    fake_run(dir.path(), runs[1], "ok\n", "{not json", args_text(runs[1]));
    t = collect_table(sw, runs, dir.path(), nullptr);
    EXPECT_EQ(value_text(t.rows[1][4]), "bad-results");
}

TEST(Table, JsonRoundTrip) {
    temp_dir dir("json");
    const Sweep sw = small_sweep();
    const std::vector<rnic::sweep::run> runs = expand(sw);
    fake_run(dir.path(), runs[0], "ok\n", R"({"v": 1.5, "l": [1, 2, 3]})", args_text(runs[0]));
    const table t = collect_table(sw, runs, dir.path(), nullptr);
    const json::value j = to_json(t);
    EXPECT_EQ(json::serialize(j.at("columns").at(2)), R"({"name":"k","kind":"axis","group":"k"})");
    const json::object& row = j.at("rows").at(0).as_object();
    EXPECT_EQ(row.size(), 7u);
    EXPECT_EQ(row.at("k").as_string(), "x,y");
    EXPECT_EQ(row.at("status").as_string(), "ok");
    EXPECT_EQ(row.at("m").as_double(), 1.5);
    EXPECT_EQ(row.at("n").as_int64(), 6);
    EXPECT_TRUE(j.at("rows").at(1).at("m").is_null());
    const table back = table_from_json(json::parse(json::serialize(j)), "t.json");
    EXPECT_EQ(to_csv(back), to_csv(t));
    EXPECT_EQ(back.columns[2].group, "k");
    EXPECT_THROW(table_from_json(json::parse("{}"), "t.json"), input_error);
}

// The sweep's "set" and the "name" of a plain axis travel with the table, for plot expressions drawn from table.json.
TEST(Table, SetAndAxisNamesRoundTrip) {
    const Sweep sw = parse_sweep(R"({"name": "t", "base": "b.json", "set": {"link.rate": "10Gbps", "a.b": 2},
      "axes": [{"key": "link.propagation", "values": [0.5, 5], "unit": "us", "name": "prop"},
               {"key": "link.a_to_b.loss", "values": [0]}],
      "metrics": {"m": "v"}})",
                                 "t.json");
    const table t = collect_table(sw, expand(sw), "/nonexistent", nullptr);
    ASSERT_EQ(t.set.size(), 2u);
    EXPECT_EQ(t.columns[2].alias, "prop");
    EXPECT_EQ(t.columns[3].alias, "");  // no "name": the key only
    const json::value j = to_json(t);
    EXPECT_EQ(json::serialize(j.at("set")), R"({"link.rate":"10Gbps","a.b":2})");
    EXPECT_EQ(json::serialize(j.at("columns").at(2)),
              R"({"name":"link.propagation","kind":"axis","group":"link.propagation","unit":"us","alias":"prop"})");
    const table back = table_from_json(json::parse(json::serialize(j)), "t.json");
    ASSERT_EQ(back.set.size(), 2u);
    EXPECT_EQ(back.set[0].first, "link.rate");
    EXPECT_EQ(value_text(back.set[0].second), "10Gbps");
    EXPECT_EQ(back.columns[2].alias, "prop");
    // A sweep without "set" writes none (table.json as before).
    EXPECT_FALSE(to_json(collect_table(small_sweep(), expand(small_sweep()), "/nonexistent", nullptr))
                     .as_object()
                     .contains("set"));
}

TEST(Resume, OnlyOkRunsWithTheSameArgumentsAreSkipped) {
    temp_dir dir("resume");
    const Sweep sw = parse_sweep(R"({"base": "b.json", "repetitions": 5})", "r.json");
    const std::vector<rnic::sweep::run> runs = expand(sw);
    fake_run(dir.path(), runs[0], "ok\n", "{}", args_text(runs[0]));        // done
    fake_run(dir.path(), runs[1], "ok\n", "{}", "--scenario\nb.json\n");    // other arguments: stale
    fake_run(dir.path(), runs[2], "failed 1\n", "{}", args_text(runs[2]));  // failed: runs again
    fake_run(dir.path(), runs[3], "", "", args_text(runs[3]));              // started, never finished
    EXPECT_EQ(read_status(dir.path(), runs[0]).state, run_state::ok);
    EXPECT_EQ(read_status(dir.path(), runs[1]).state, run_state::stale);
    EXPECT_EQ(read_status(dir.path(), runs[2]).text, "failed 1");
    EXPECT_EQ(read_status(dir.path(), runs[3]).state, run_state::missing);
    EXPECT_EQ(read_status(dir.path(), runs[4]).state, run_state::missing);
    std::vector<std::size_t> pending;
    for (const rnic::sweep::run* r : pending_runs(runs, dir.path(), false)) pending.push_back(r->index);
    EXPECT_EQ(pending, (std::vector<std::size_t>{1, 2, 3, 4}));
    EXPECT_EQ(pending_runs(runs, dir.path(), true).size(), 5u);

    // Preparing a run again clears its old status and results, and records its arguments and command.
    prepare_run_dir(dir.path(), runs[0], "the command");
    EXPECT_EQ(read_status(dir.path(), runs[0]).state, run_state::missing);
    EXPECT_FALSE(rnic::sweep::test::file_nonempty(paths_of(dir.path(), runs[0]).results));
    EXPECT_EQ(rnic::sweep::test::read_file(paths_of(dir.path(), runs[0]).args), "--scenario\nb.json\n--seed\n1\n");
    EXPECT_EQ(rnic::sweep::test::read_file(paths_of(dir.path(), runs[0]).command), "the command\n");
}

TEST(Resume, FinishedRunsAreFoundUnderTheirNewIdsWhenTheSweepChanges) {
    temp_dir dir("adopt");
    const Sweep before =
        parse_sweep(R"({"base": "b.json", "axes": [{"key": "k", "values": [1]}], "seeds": [1, 2]})", "a.json");
    const std::vector<rnic::sweep::run> old_runs = expand(before);
    for (const auto& r : old_runs) {
        prepare_run_dir(dir.path(), r, "cd x && sim --results " + paths_of(dir.path(), r).results);
        write_status(dir.path(), r, "ok");
    }
    // A seed in front renumbers every run: 0000-k_1-seed_1 becomes 0001-k_1-seed_1.
    const Sweep after =
        parse_sweep(R"({"base": "b.json", "axes": [{"key": "k", "values": [1]}], "seeds": [3, 1, 2]})", "a.json");
    const std::vector<rnic::sweep::run> runs = expand(after);
    ASSERT_EQ(runs[1].id, "0001-k_1-seed_1");
    EXPECT_EQ(pending_runs(runs, dir.path(), false).size(), 3u);
    EXPECT_EQ(adopt_finished_runs(dir.path(), runs), 2u);
    const auto pending = pending_runs(runs, dir.path(), false);
    ASSERT_EQ(pending.size(), 1u);
    EXPECT_EQ(pending[0]->id, "0000-k_1-seed_3");
    EXPECT_EQ(read_status(dir.path(), runs[2]).state, run_state::ok);
    EXPECT_EQ(rnic::sweep::test::read_file(paths_of(dir.path(), runs[2]).command),
              "cd x && sim --results " + paths_of(dir.path(), runs[2]).results + "\n");
    EXPECT_FALSE(std::filesystem::exists(dir / "runs/0001-k_1-seed_2"));
    EXPECT_EQ(adopt_finished_runs(dir.path(), runs), 0u);
}

TEST(Shell, Quoting) {
    EXPECT_EQ(shell_quote("plain/path-1.0_x"), "plain/path-1.0_x");
    EXPECT_EQ(shell_quote("k=v"), "k=v");
    EXPECT_EQ(shell_quote(""), "''");
    EXPECT_EQ(shell_quote("a b"), "'a b'");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(shell_quote("[64,4096]"), "'[64,4096]'");
    EXPECT_EQ(shell_quote("$(rm -rf /)"), "'$(rm -rf /)'");
    EXPECT_EQ(shell_join({"a", "b c", "d'e"}), "a 'b c' 'd'\\''e'");
}

TEST(Shell, TheEmittedCommandRecordsTheStatus) {
    // A stand-in for rnic-sim: writes its --results file unless told otherwise, and exits with the status it is given.
    temp_dir dir("shell");
    const std::string sim = dir / "fake sim";
    rnic::sweep::test::write_file(sim,
                                  "#!/bin/sh\n"
                                  "code=0; results=\n"
                                  "while [ $# -gt 0 ]; do\n"
                                  "  case \"$1\" in --results) results=$2; shift;; --set) case \"$2\" in code=*) "
                                  "code=${2#code=};; esac; shift;; esac\n"
                                  "  shift\n"
                                  "done\n"
                                  "echo \"to stdout\"; echo \"to stderr\" >&2\n"
                                  "if [ \"$code\" != none ]; then echo '{\"ok\": 1}' > \"$results\"; else code=0; fi\n"
                                  "exit $code\n");
    ::chmod(sim.c_str(), 0755);
    const Sweep sw =
        parse_sweep(R"({"base": "odd 'name'.json", "axes": [{"key": "code", "values": [0, 3, "none"]}]})", "s.json");
    const std::vector<rnic::sweep::run> runs = expand(sw);
    const std::string out = dir / "out dir";
    const std::vector<std::string> expected = {"ok", "failed 3", "failed no-results"};
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const std::string cmd = run_shell_command(sim, dir.path(), out, runs[i]);
        prepare_run_dir(out, runs[i], cmd);
        const auto r = rnic::sweep::test::run_command({"sh", "-c", cmd});
        EXPECT_EQ(r.exit_code, i == 1 ? 3 : 0) << r.output;
        EXPECT_EQ(read_status(out, runs[i]).text, expected[i]);
        EXPECT_EQ(rnic::sweep::test::read_file(paths_of(out, runs[i]).out), "to stdout\n");
        EXPECT_EQ(rnic::sweep::test::read_file(paths_of(out, runs[i]).err), "to stderr\n");
    }
}
