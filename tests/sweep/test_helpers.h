// Helpers of the rnic-sweep tests: temporary folders, files, running commands.
#pragma once

#include <string>
#include <vector>

namespace rnic::sweep::test {

// A fresh folder under $TMPDIR (or /tmp), removed when the object goes away.
class temp_dir {
public:
    explicit temp_dir(const std::string& name);
    ~temp_dir();
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);
bool file_nonempty(const std::string& path);

struct command_result {
    int exit_code = -1;
    std::string output;  // stdout and stderr
};
// Runs argv (no shell interpretation of the words: each is single-quoted), optionally with stdin from a file and
// extra environment assignments ("NAME=value").
command_result run_command(const std::vector<std::string>& argv, const std::string& stdin_file = "",
                           const std::vector<std::string>& env = {});

// True when `name` is an executable on the PATH.
bool have_program(const std::string& name);

// The sweep file of the end-to-end tests: 2 loss values x 2 seeds of a tiny workload.
std::string tiny_sweep(const std::string& name, const std::string& extra = "");

}  // namespace rnic::sweep::test
