// Running a sweep's runs: locally in parallel (fork/exec of rnic-sim, no shell), or as job files for GNU parallel
// and Slurm job arrays.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "sweep_file.h"

namespace rnic::sweep {

struct runner_options {
    std::string sim;      // rnic-sim, absolute path
    std::string root;     // working directory of every run (the project root), absolute
    std::string out_dir;  // absolute
    int jobs = 1;
    double timeout_s = 0.0;             // wall-clock limit per run; 0: none
    bool force = false;                 // run again even when done
    double progress_interval_s = 10.0;  // when stderr is not a terminal: a progress line this often
    std::FILE* progress = stderr;       // nullptr: quiet
};

struct run_summary {
    std::size_t total = 0;
    std::size_t reused = 0;  // done before (status ok, same arguments): not run again
    std::size_t executed = 0;
    std::size_t ok = 0;                 // of the executed
    std::size_t failed = 0;             // of the executed
    bool interrupted = false;           // SIGINT/SIGTERM: unfinished runs have no status and run again next time
    bool invalid_scenario = false;      // the first run exited with status 2: nothing else was started
    std::string invalid_message;        // its stderr
    std::vector<std::string> failures;  // "runs/<id>: failed 1: <first stderr line>" (first few)
};

// The runs that still have to run (all with force).
std::vector<const run*> pending_runs(const std::vector<run>& runs, const std::string& out_dir, bool force);

// Runs the pending runs: the first alone (exit status 2 means a bad scenario: stop), then the rest with up to
// `jobs` at a time, with a progress line on `progress`.
run_summary run_local(const std::vector<run>& runs, const runner_options& options, const std::string& sweep_name);

// Job files for the pending runs; they prepare the run directories as a local run would. Return the job count.
// GNU parallel: one sh command line per run ("parallel --will-cite -j N -a FILE"); Slurm: an sbatch script with
// one array index per run.
std::size_t emit_parallel(const std::string& path, const std::vector<const run*>& runs, const runner_options& options);
std::size_t emit_slurm(const std::string& path, const std::vector<const run*>& runs, const runner_options& options,
                       const std::string& sweep_name, const std::string& collect_hint);

}  // namespace rnic::sweep
