// Helpers of the tools tests: temporary capture files, running commands, checking captures in
// memory with the library's StreamChecker.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/pcap.h"
#include "proto/stream_check.h"
#include "scenarios.h"

namespace rnic::tools_test {

namespace check = proto::check;

// A path in the test temp directory, unique per process; the file is removed at the end of the
// test unless the test failed (then it stays for inspection and its path is printed).
class temp_file {
public:
    explicit temp_file(const std::string& name)
        : path_(::testing::TempDir() + "rnic-tools-" + std::to_string(::getpid()) + "-" + name) {}
    ~temp_file() {
        if (::testing::Test::HasFailure())
            std::fprintf(stderr, "kept %s\n", path_.c_str());
        else
            std::remove(path_.c_str());
    }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

struct command_result {
    int exit_code = -1;
    std::string out;  // stdout (and stderr when asked)
};

inline command_result run_command(const std::string& cmd, bool with_stderr = false) {
    command_result r;
    FILE* p = ::popen((cmd + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

inline std::size_t count_of(const std::string& hay, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1)) ++n;
    return n;
}

inline check::capture_report check_capture(const capture& cap, const check::options& options = check::options{}) {
    check::stream_checker checker(options);
    for (const frame& f : cap.frames) checker.add_frame(f.time_ns, f.data.data(), f.data.size());
    return checker.finish();
}

inline std::string shell_quote(const std::string& s) {
    return "'" + s + "'";
}

#if defined(RNIC_SIM) && defined(RNIC_SOURCE_DIR) && defined(RNIC_PCAP_CHECK)
// Runs rnic-sim from the source tree (its default scenario path is relative) with `framing` and the
// extra `sets` (shell words), writing `pcap`; a failing run is a test failure.
inline void simulate_capture(const std::string& framing, const std::string& pcap, const std::string& sets) {
    const std::string cmd = "cd " + shell_quote(RNIC_SOURCE_DIR) + " && " + shell_quote(RNIC_SIM) +
                            " --set rnic.framing=" + framing + " " + sets + " --log off --pcap " + shell_quote(pcap);
    const command_result r = run_command(cmd, true);
    ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.out;
}

inline command_result run_pcap_check(const std::string& args) {
    return run_command(std::string(RNIC_PCAP_CHECK) + " " + args, true);
}
#endif

// Writes `records` as a pcap file (a damaged copy of a capture); failures are test failures.
inline void write_capture_file(const std::string& path, const std::vector<proto::pcap_record>& records) {
    std::string error;
    proto::pcap_writer w;
    EXPECT_TRUE(w.open(path, &error)) << error;
    for (const proto::pcap_record& r : records) w.write(r.time_ns, r.data.data(), r.data.size());
    w.close();
    EXPECT_TRUE(w.good());
}

// A capture file checked by the library (what rnic-pcap-check prints from).
inline check::capture_report check_file(const std::string& path, const check::options& options) {
    std::string error;
    auto r = check::check_pcap_file(path, options, &error);
    EXPECT_TRUE(r) << error;
    return r ? *r : check::capture_report{};
}

// Every stored issue of the report, one per line, for failure messages.
inline std::string all_issues(const check::capture_report& r) {
    std::string s;
    auto add = [&](const std::vector<check::issue>& v) {
        for (const auto& i : v)
            s += std::string(check::to_string(i.severity)) + " [" + check::to_string(i.category) + "] " + i.text + "\n";
    };
    add(r.issues);
    for (const auto& c : r.connections) {
        add(c.issues);
        for (const auto& d : c.directions) add(d.issues);
    }
    return s;
}

// True when some stored issue of `category` and `severity` contains `text`.
inline bool has_issue(const check::capture_report& r, check::category category, const std::string& text,
                      check::severity severity = check::severity::error) {
    auto in = [&](const std::vector<check::issue>& v) {
        for (const auto& i : v)
            if (i.category == category && i.severity == severity && i.text.find(text) != std::string::npos) return true;
        return false;
    };
    if (in(r.issues)) return true;
    for (const auto& c : r.connections) {
        if (in(c.issues)) return true;
        for (const auto& d : c.directions)
            if (in(d.issues)) return true;
    }
    return false;
}

inline bool tshark_available() {
    return std::system("command -v tshark >/dev/null 2>&1") == 0;
}

}  // namespace rnic::tools_test
