// Runs rnic-sim as a subprocess and reads what it wrote.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

namespace rnic::test {

struct sim_run {
    int exit_code = -1;
    std::string output;  // stdout and stderr together
};

// Runs rnic-sim from the source directory with `args` (each passed as one argument).
sim_run run_sim(const std::vector<std::string>& args);
// Output (stdout and stderr) of a shell command.
std::string shell(const std::string& cmd);
// Whether tshark is installed (tests that decode captures skip without it).
bool have_tshark();
// tshark's tab-separated `fields` (e.g. "-e ip.src -e iwarp_rdma.opcode") of the frames matching
// `filter`, with the iWARP dissectors that matter (two others claim the same ports).
std::string tshark(const std::string& pcap, const std::string& filter, const std::string& fields);
// The non-empty lines of `text`.
std::vector<std::string> lines(const std::string& text);
// rnic-pcap-check's report on a capture, ending with "exit=N".
std::string pcap_check(const std::string& pcap);
// A fresh path under the test's temporary directory.
std::string temp_path(const std::string& name);
boost::json::value read_json(const std::string& path);
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);
// Runs rnic-sim with `--set` for each of `sets` and `--results` to a fresh file named after `tag`;
// *run gets the exit code and output. The results, or {"failed": output} when the run failed.
boost::json::value run_with_sets(const std::string& tag, const std::vector<std::string>& sets, sim_run* run);
// run_with_sets that also expects the run to exit 0 (a gtest failure with its output otherwise).
boost::json::value run_ok(const std::string& tag, const std::vector<std::string>& sets);
// Runs rnic-sim with `--set` for each of `sets` and expects it refused before simulation (exit 2, no
// status line) with every one of `must_contain` in its output (a gtest failure otherwise).
void expect_refused(const std::vector<std::string>& sets, const std::vector<std::string>& must_contain);
// Runs rnic-sim twice with `args` plus a capture, results and --log off (files named after `tag`)
// and expects both to exit 0 with the same `modules` results and byte-identical, non-empty pcaps:
// the same seed gives the same run. Returns the first run's `modules` (null when a run failed).
boost::json::value expect_same_results_and_pcap(const std::string& tag, const std::vector<std::string>& args);
// Small, quick workload arguments used by most tests.
std::vector<std::string> quick_args();

}  // namespace rnic::test
