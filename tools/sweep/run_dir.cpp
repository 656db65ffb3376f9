#include "run_dir.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common.h"

namespace rnic::sweep {

namespace fs = std::filesystem;

run_paths paths_of(const std::string& out_dir, const run& run) {
    run_paths p;
    p.dir = (fs::path(out_dir) / "runs" / run.id).string();
    p.args = p.dir + "/scenario-args.txt";
    p.command = p.dir + "/command.txt";
    p.results = p.dir + "/results.json";
    p.out = p.dir + "/stdout.txt";
    p.err = p.dir + "/stderr.txt";
    p.status = p.dir + "/status";
    return p;
}

std::string args_text(const run& run) {
    std::string text;
    for (const std::string& a : run.scenario_args) text += a + "\n";
    return text;
}

std::vector<std::string> sim_argv(const std::string& sim, const run& run, const std::string& results) {
    std::vector<std::string> argv{sim};
    argv.insert(argv.end(), run.scenario_args.begin(), run.scenario_args.end());
    argv.insert(argv.end(), {"--results", results, "--log", "error"});
    return argv;
}

namespace {
bool read_small_file(const std::string& path, std::string& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream os;
    os << in.rdbuf();
    out = os.str();
    return true;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    return s.substr(i);
}
}  // namespace

run_status read_status(const std::string& out_dir, const run& run) {
    const run_paths p = paths_of(out_dir, run);
    run_status st;
    std::string status;
    if (!read_small_file(p.status, status)) {
        st.state = run_state::missing;
        st.text = "missing";
        return st;
    }
    std::string args;
    if (!read_small_file(p.args, args) || args != args_text(run)) {
        st.state = run_state::stale;
        st.text = "stale";
        return st;
    }
    status = trim(status);
    if (status == "ok") {
        st.state = run_state::ok;
        st.text = "ok";
    } else {
        st.state = run_state::failed;
        st.text = status.empty() ? "failed" : status;
        if (st.text.rfind("failed", 0) != 0) st.text = "failed " + st.text;
    }
    return st;
}

std::size_t adopt_finished_runs(const std::string& out_dir, const std::vector<run>& runs) {
    const fs::path dir = fs::path(out_dir) / "runs";
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return 0;
    // Finished run directories by their arguments.
    std::map<std::string, std::string> finished;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (!entry.is_directory(ec)) continue;
        std::string status;
        std::string args;
        if (!read_small_file((entry.path() / "status").string(), status) || trim(status) != "ok") continue;
        if (!read_small_file((entry.path() / "scenario-args.txt").string(), args)) continue;
        finished.emplace(args, entry.path().filename().string());
    }
    std::vector<std::pair<std::string, std::string>> moves;  // from, to
    for (const run& run : runs) {
        if (read_status(out_dir, run).state == run_state::ok) continue;
        auto it = finished.find(args_text(run));
        if (it == finished.end() || it->second == run.id) continue;
        moves.emplace_back(it->second, run.id);
    }
    // Two steps, so that directories may swap names.
    struct parked_move {
        std::string temp, from, to;
    };
    std::vector<parked_move> parked;
    for (std::size_t i = 0; i < moves.size(); ++i) {
        const std::string temp = ".adopt-" + std::to_string(i);
        fs::remove_all(dir / temp, ec);
        fs::rename(dir / moves[i].first, dir / temp, ec);
        if (!ec) parked.push_back({temp, moves[i].first, moves[i].second});
    }
    std::size_t adopted = 0;
    for (const parked_move& p : parked) {
        fs::remove_all(dir / p.to, ec);
        fs::rename(dir / p.temp, dir / p.to, ec);
        if (ec) continue;
        ++adopted;
        // command.txt names the run directory: give it the new name.
        const std::string command = (dir / p.to / "command.txt").string();
        std::string text;
        if (read_small_file(command, text)) {
            const std::string old_part = "/runs/" + p.from + "/";
            const std::string new_part = "/runs/" + p.to + "/";
            for (std::size_t pos = text.find(old_part); pos != std::string::npos;
                 pos = text.find(old_part, pos + new_part.size())) {
                text.replace(pos, old_part.size(), new_part);
            }
            write_text_file(command, text);
        }
    }
    return adopted;
}

void prepare_run_dir(const std::string& out_dir, const run& run, const std::string& command_line) {
    const run_paths p = paths_of(out_dir, run);
    std::error_code ec;
    fs::create_directories(p.dir, ec);
    if (ec) throw std::runtime_error("cannot create " + p.dir + ": " + ec.message());
    fs::remove(p.status, ec);
    fs::remove(p.results, ec);
    fs::remove(p.out, ec);
    fs::remove(p.err, ec);
    write_text_file(p.args, args_text(run));
    write_text_file(p.command, command_line + "\n");
}

void write_status(const std::string& out_dir, const run& run, const std::string& status) {
    write_text_file(paths_of(out_dir, run).status, status + "\n");
}

std::string shell_quote(std::string_view word) {
    if (word.empty()) return "''";
    bool safe = true;
    for (char c : word) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-' || c == '.' || c == '/' || c == ',' || c == ':' || c == '+' || c == '@' || c == '%' ||
                        c == '=';
        safe = safe && ok;
    }
    // '=' only matters in a first word shaped like NAME=..., and the first word here is always a path.
    if (safe) return std::string(word);
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    out += "'";
    return out;
}

std::string shell_join(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) {
        if (!out.empty()) out += ' ';
        out += shell_quote(w);
    }
    return out;
}

std::string run_shell_command(const std::string& sim, const std::string& root, const std::string& out_dir,
                              const run& run) {
    const run_paths p = paths_of(out_dir, run);
    const std::string d = shell_quote(p.dir);
    std::string cmd = "cd " + shell_quote(root) + " && rm -f " + d + "/status " + d + "/results.json && " +
                      shell_join(sim_argv(sim, run, p.results)) + " >" + d + "/stdout.txt 2>" + d + "/stderr.txt";
    cmd += "; rc=$?; if [ $rc -eq 0 ] && [ -s " + d +
           "/results.json ]; then s=ok; elif [ $rc -eq 0 ]; then "
           "s='failed no-results'; elif [ $rc -gt 128 ]; then s=\"failed signal $((rc-128))\"; else s=\"failed $rc\"; "
           "fi; echo \"$s\" >" +
           d + "/status.tmp && mv -f " + d + "/status.tmp " + d + "/status; exit $rc";
    return cmd;
}

}  // namespace rnic::sweep
