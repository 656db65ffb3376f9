// One run's directory, OUT/runs/<id>/:
//   scenario-args.txt  the arguments that define the run (--scenario BASE, --set K=V..., --seed N), one per line;
//                      resuming compares it with the sweep's expansion
//   command.txt        the exact command, shell-quoted (cd ROOT && SIM ARGS --results ... --log error)
//   results.json       rnic-sim --results
//   stdout.txt, stderr.txt
//   status             "ok", or "failed N" (exit status N), "failed signal N", "failed timeout",
//                      "failed no-results"; written last, when the run has ended
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sweep_file.h"

namespace rnic::sweep {

struct run_paths {
    std::string dir;
    std::string args;
    std::string command;
    std::string results;
    std::string out;
    std::string err;
    std::string status;
};
run_paths paths_of(const std::string& out_dir, const run& run);

// scenario-args.txt's text: one argument per line.
std::string args_text(const run& run);

// argv of the run: SIM, the scenario arguments, --results RESULTS, --log error.
std::vector<std::string> sim_argv(const std::string& sim, const run& run, const std::string& results);

enum class run_state { ok, failed, missing, stale };
struct run_status {
    run_state state = run_state::missing;
    std::string text;  // "ok", "failed 1", "missing", "stale", ...
};
// ok only when the status says ok and scenario-args.txt matches the run; stale when a status is there but the
// arguments differ; missing without a status.
run_status read_status(const std::string& out_dir, const run& run);

// Finished runs (status ok) whose directory name changed because the sweep changed (seeds added, values inserted
// into an axis) are found by their scenario-args.txt and renamed to their new run id, so they are not run again.
// Directories in the way (runs not done) are removed. Returns how many were renamed.
std::size_t adopt_finished_runs(const std::string& out_dir, const std::vector<run>& runs);

// Creates the directory, writes scenario-args.txt and command.txt, removes an earlier status, results and output.
void prepare_run_dir(const std::string& out_dir, const run& run, const std::string& command_line);
void write_status(const std::string& out_dir, const run& run, const std::string& status);

// POSIX shell quoting: words of safe characters as they are, others in single quotes ('it'\''s').
std::string shell_quote(std::string_view word);
std::string shell_join(const std::vector<std::string>& words);

// The run as one POSIX sh command line (for command.txt, GNU parallel and Slurm): changes to `root`, runs rnic-sim
// with its output into the run directory and writes the status file (ok when rnic-sim exits 0 and wrote results),
// and exits with rnic-sim's status.
std::string run_shell_command(const std::string& sim, const std::string& root, const std::string& out_dir,
                              const run& run);

}  // namespace rnic::sweep
