#include "run_helpers.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rnic::test {

namespace {
std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) {
        if (c == '\'')
            q += "'\\''";
        else
            q += c;
    }
    return q + "'";
}
}  // namespace

std::string shell(const std::string& cmd) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return out;
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    pclose(p);
    return out;
}

bool have_tshark() {
    return std::system("command -v tshark >/dev/null 2>&1") == 0;
}

std::string tshark(const std::string& pcap, const std::string& filter, const std::string& fields) {
    return shell("tshark -r " + pcap + " --disable-protocol rpcordma --disable-protocol smb_direct -Y '" + filter +
                 "' -T fields -E separator=/t " + fields + " 2>/dev/null");
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        if (!l.empty()) out.push_back(l);
    }
    return out;
}

std::string pcap_check(const std::string& pcap) {
    return shell(quote(RNIC_PCAP_CHECK) + " " + quote(pcap) + " 2>&1; echo exit=$?");
}

sim_run run_sim(const std::vector<std::string>& args) {
    std::string cmd = std::string("cd ") + quote(RNIC_SOURCE_DIR) + " && " + quote(RNIC_SIM_PATH);
    for (const std::string& a : args) cmd += " " + quote(a);
    cmd += " 2>&1";
    sim_run r;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string temp_path(const std::string& name) {
    const char* dir = std::getenv("TMPDIR");
    std::ostringstream os;
    os << (dir != nullptr ? dir : "/tmp") << "/rnic-e2e-" << getpid() << "-" << name;
    return os.str();
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream os;
    os << f.rdbuf();
    return os.str();
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
}

boost::json::value read_json(const std::string& path) {
    return boost::json::parse(read_file(path));
}

boost::json::value run_with_sets(const std::string& tag, const std::vector<std::string>& sets, sim_run* run) {
    const std::string results = temp_path(tag + ".json");
    std::vector<std::string> args = {"--log", "warn", "--results", results};
    for (const std::string& s : sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    *run = run_sim(args);
    if (run->exit_code != 0) return boost::json::object{{"failed", run->output}};
    return read_json(results);
}

boost::json::value run_ok(const std::string& tag, const std::vector<std::string>& sets) {
    sim_run r;
    boost::json::value v = run_with_sets(tag, sets, &r);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return v;
}

boost::json::value expect_same_results_and_pcap(const std::string& tag, const std::vector<std::string>& args) {
    std::string pcaps[2];
    boost::json::value modules[2];
    for (int i = 0; i < 2; ++i) {
        pcaps[i] = temp_path(tag + "-" + std::to_string(i) + ".pcap");
        const std::string results = temp_path(tag + "-" + std::to_string(i) + ".json");
        std::vector<std::string> a = args;
        a.insert(a.end(), {"--pcap", pcaps[i], "--results", results, "--log", "off"});
        const sim_run r = run_sim(a);
        if (r.exit_code != 0) {
            ADD_FAILURE() << "run " << i << " exited " << r.exit_code << ": " << r.output;
            return {};
        }
        modules[i] = read_json(results).at("modules");
    }
    EXPECT_EQ(modules[0], modules[1]);
    const std::string first = read_file(pcaps[0]);
    EXPECT_GT(first.size(), 0U);
    EXPECT_TRUE(first == read_file(pcaps[1])) << "pcaps differ";
    return modules[0];
}

std::vector<std::string> quick_args() {
    return {"--scenario", "platform/scenarios/default.json", "--set", "workload.sizes=[64,1500,9000]",
            "--set",      "workload.iterations=60",          "--log", "warn"};
}

void expect_refused(const std::vector<std::string>& sets, const std::vector<std::string>& must_contain) {
    std::vector<std::string> args;
    for (const std::string& s : sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    const sim_run r = run_sim(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    for (const std::string& s : must_contain)
        EXPECT_NE(r.output.find(s), std::string::npos) << s << " in: " << r.output;
    EXPECT_EQ(r.output.find("status:"), std::string::npos) << "simulated anyway: " << r.output;
}

}  // namespace rnic::test
