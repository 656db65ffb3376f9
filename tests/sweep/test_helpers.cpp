#include "test_helpers.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run_dir.h"

namespace rnic::sweep::test {

namespace fs = std::filesystem;

temp_dir::temp_dir(const std::string& name) {
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/rnic-sweep-test-" +
            std::to_string(::getpid()) + "-" + name;
    fs::remove_all(path_);
    fs::create_directories(path_);
}

temp_dir::~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

void write_file(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

bool file_nonempty(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && st.st_size > 0;
}

command_result run_command(const std::vector<std::string>& argv, const std::string& stdin_file,
                           const std::vector<std::string>& env) {
    std::string cmd;
    for (const std::string& e : env) cmd += shell_quote(e) + " ";
    if (!env.empty()) cmd = "env " + cmd;
    cmd += shell_join(argv);
    cmd += stdin_file.empty() ? " </dev/null" : " <" + shell_quote(stdin_file);
    cmd += " 2>&1";
    command_result r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf{};
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
    const int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

bool have_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream ss(path != nullptr ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(ss, dir, ':')) {
        if (dir.empty()) continue;
        const std::string candidate = dir + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return true;
    }
    return false;
}

std::string tiny_sweep(const std::string& name, const std::string& extra) {
    return R"({
  // tiny: 2 loss values x 2 seeds, 20 writes of 256 bytes
  "name": ")" +
           name + R"(",
  "base": "platform/scenarios/default.json",
  "set": { "workload.sizes": [256], "workload.iterations": 20 },
  "axes": [ { "key": "link.a_to_b.loss", "values": [0, 0.05] } ],
  "seeds": [1, 2],
  "metrics": {
    "goodput_gbps": { "path": "workload.rows[-1].goodput_gbps", "unit": "Gb/s" },
    "bytes": "sum:workload.rows[*].bytes",
    "b_buffer_peak": "modules[\"b.rnic\"].buffer.occupancy_peak_bytes",
    "a_tx_frames": "modules[\"a.rnic\"].toe.tx_frames"
  })" + extra +
           R"(
})";
}

}  // namespace rnic::sweep::test
