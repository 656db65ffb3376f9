#include "runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "common.h"
#include "run_dir.h"

namespace rnic::sweep {

namespace {

volatile sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) {
    g_stop = 1;
}

class signal_guard {
public:
    signal_guard() {
        g_stop = 0;
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
    }
    ~signal_guard() {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }
    signal_guard(const signal_guard&) = delete;
    signal_guard& operator=(const signal_guard&) = delete;

private:
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
};

using clock = std::chrono::steady_clock;

std::string clock_text(double seconds) {
    if (seconds < 0) seconds = 0;
    const auto s = static_cast<long long>(seconds + 0.5);
    char buf[32];
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
    return buf;
}

class progress {
public:
    progress(std::FILE* out, std::string name, std::size_t total, std::size_t reused, double interval)
        : out_(out),
          name_(std::move(name)),
          total_(total),
          reused_(reused),
          done_(reused),
          interval_(interval),
          tty_(out != nullptr && ::isatty(::fileno(out)) != 0),
          start_(clock::now()),
          last_(start_) {}

    void finished(bool ok) {
        ++done_;
        if (!ok) ++failed_;
    }
    void set_running(std::size_t n) { running_ = n; }

    // Prints when due: on a terminal at most 5 times a second, otherwise every `interval` seconds.
    void tick(bool force = false) {
        if (out_ == nullptr) return;
        const auto now = clock::now();
        const double since = std::chrono::duration<double>(now - last_).count();
        if (!force && since < (tty_ ? 0.2 : interval_)) return;
        last_ = now;
        const std::string text = line();
        if (tty_)
            std::fprintf(out_, "\r%s\x1b[K", text.c_str());
        else
            std::fprintf(out_, "%s\n", text.c_str());
        std::fflush(out_);
    }

    void end() {
        if (out_ == nullptr) return;
        if (tty_) {
            tick(true);
            std::fprintf(out_, "\n");
        } else {
            tick(true);
        }
        std::fflush(out_);
    }

private:
    std::string line() const {
        const double elapsed = std::chrono::duration<double>(clock::now() - start_).count();
        constexpr std::size_t kWidth = 24;
        const std::size_t filled = total_ == 0 ? kWidth : done_ * kWidth / total_;
        std::string bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, '-') + "]";
        const std::size_t executed = done_ - reused_;
        std::string eta = "ETA ?";
        if (done_ == total_)
            eta = "done";
        else if (executed > 0)
            eta = "ETA " + clock_text(elapsed / static_cast<double>(executed) * static_cast<double>(total_ - done_));
        std::ostringstream os;
        os << "rnic-sweep " << name_ << " " << bar << " " << done_ << "/" << total_ << " runs, " << failed_
           << " failed, " << running_ << " running, " << clock_text(elapsed) << " elapsed, " << eta;
        return os.str();
    }

    std::FILE* out_;
    std::string name_;
    std::size_t total_;
    std::size_t reused_;
    std::size_t done_;
    std::size_t failed_ = 0;
    std::size_t running_ = 0;
    double interval_;
    bool tty_;
    clock::time_point start_;
    clock::time_point last_;
};

// fork/exec with stdin from /dev/null, stdout and stderr into files, in directory `cwd`. No shell.
pid_t spawn(const std::vector<std::string>& argv, const std::string& cwd, const std::string& out_path,
            const std::string& err_path) {
    std::vector<char*> cargv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in < 0 || out < 0 || err < 0) {
        if (in >= 0) ::close(in);
        if (out >= 0) ::close(out);
        if (err >= 0) ::close(err);
        return -1;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
        if (::chdir(cwd.c_str()) != 0) {
            const char msg[] = "rnic-sweep: cannot change to the project root\n";
            (void)!::write(2, msg, sizeof msg - 1);
            ::_exit(127);
        }
        ::execv(cargv[0], cargv.data());
        const char msg[] = "rnic-sweep: cannot execute rnic-sim\n";
        (void)!::write(2, msg, sizeof msg - 1);
        ::_exit(127);
    }
    ::close(in);
    ::close(out);
    ::close(err);
    return pid;
}

std::string first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty()) return line.size() > 200 ? line.substr(0, 200) + "..." : line;
    }
    return "";
}

std::string status_text(int wait_status, bool timed_out, const std::string& results) {
    if (timed_out) return "failed timeout";
    if (WIFEXITED(wait_status)) {
        const int code = WEXITSTATUS(wait_status);
        if (code != 0) return "failed " + std::to_string(code);
        struct stat st {};
        if (::stat(results.c_str(), &st) != 0 || st.st_size == 0) return "failed no-results";
        return "ok";
    }
    if (WIFSIGNALED(wait_status)) return "failed signal " + std::to_string(WTERMSIG(wait_status));
    return "failed";
}

struct active_run {
    const sweep::run* run;
    clock::time_point start;
    bool timed_out = false;
};

}  // namespace

std::vector<const run*> pending_runs(const std::vector<run>& runs, const std::string& out_dir, bool force) {
    std::vector<const run*> pending;
    for (const run& r : runs) {
        if (force || read_status(out_dir, r).state != run_state::ok) pending.push_back(&r);
    }
    return pending;
}

run_summary run_local(const std::vector<run>& runs, const runner_options& options, const std::string& sweep_name) {
    run_summary summary;
    summary.total = runs.size();
    const std::vector<const run*> pending = pending_runs(runs, options.out_dir, options.force);
    summary.reused = runs.size() - pending.size();
    progress progress(options.progress, sweep_name, runs.size(), summary.reused, options.progress_interval_s);
    if (pending.empty()) {
        progress.end();
        return summary;
    }
    signal_guard guard;
    std::map<pid_t, active_run> active;
    std::size_t next = 0;
    const std::size_t jobs = options.jobs < 1 ? 1 : static_cast<std::size_t>(options.jobs);
    bool first_done = false;

    auto launch = [&](const run* run) {
        const run_paths p = paths_of(options.out_dir, *run);
        prepare_run_dir(options.out_dir, *run, run_shell_command(options.sim, options.root, options.out_dir, *run));
        const pid_t pid = spawn(sim_argv(options.sim, *run, p.results), options.root, p.out, p.err);
        if (pid < 0) {
            write_status(options.out_dir, *run, "failed spawn");
            ++summary.executed;
            ++summary.failed;
            progress.finished(false);
            if (summary.failures.size() < 5) summary.failures.push_back("runs/" + run->id + ": cannot start rnic-sim");
            return;
        }
        active[pid] = active_run{run, clock::now()};
    };

    auto finish = [&](pid_t pid, int wait_status) {
        auto it = active.find(pid);
        if (it == active.end()) return;
        const active_run a = it->second;
        active.erase(it);
        const run_paths p = paths_of(options.out_dir, *a.run);
        if (g_stop && !a.timed_out) return;  // interrupted: no status, so it runs again next time
        const std::string status = status_text(wait_status, a.timed_out, p.results);
        write_status(options.out_dir, *a.run, status);
        ++summary.executed;
        const bool ok = status == "ok";
        if (ok) {
            ++summary.ok;
        } else {
            ++summary.failed;
            if (summary.failures.size() < 5) {
                const std::string why = first_line(p.err);
                summary.failures.push_back("runs/" + a.run->id + ": " + status + (why.empty() ? "" : ": " + why));
            }
        }
        progress.finished(ok);
        if (!first_done && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 2) {
            summary.invalid_scenario = true;
            try {
                summary.invalid_message = read_text_file(p.err);
            } catch (const input_error&) {}
        }
        first_done = true;
    };

    while (true) {
        // The first run alone: a bad scenario (exit status 2) stops the sweep before the others start.
        const std::size_t limit = first_done ? jobs : 1;
        while (!g_stop && !summary.invalid_scenario && active.size() < limit && next < pending.size()) {
            launch(pending[next++]);
            if (!first_done && active.empty()) first_done = true;  // could not even start: go on
        }
        progress.set_running(active.size());
        if (active.empty()) break;
        int wait_status = 0;
        const pid_t pid = ::waitpid(-1, &wait_status, WNOHANG);
        if (pid > 0) {
            finish(pid, wait_status);
            progress.set_running(active.size());
            progress.tick();
            continue;
        }
        if (pid < 0 && errno != EINTR) break;  // no children left (should not happen)
        if (g_stop) {
            for (const auto& kv : active) ::kill(kv.first, SIGTERM);
            while (!active.empty()) {
                const pid_t p = ::waitpid(-1, &wait_status, 0);
                if (p > 0)
                    active.erase(p);
                else if (errno != EINTR)
                    break;
            }
            break;
        }
        if (options.timeout_s > 0) {
            const auto now = clock::now();
            for (auto& kv : active) {
                if (!kv.second.timed_out &&
                    std::chrono::duration<double>(now - kv.second.start).count() > options.timeout_s) {
                    kv.second.timed_out = true;
                    ::kill(kv.first, SIGKILL);
                }
            }
        }
        progress.tick();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    summary.interrupted = g_stop != 0;
    progress.end();
    return summary;
}

std::size_t emit_parallel(const std::string& path, const std::vector<const run*>& runs, const runner_options& options) {
    std::string text;
    for (const run* run : runs) {
        const std::string cmd = run_shell_command(options.sim, options.root, options.out_dir, *run);
        prepare_run_dir(options.out_dir, *run, cmd);
        text += cmd + "\n";
    }
    write_text_file(path, text);
    return runs.size();
}

std::size_t emit_slurm(const std::string& path, const std::vector<const run*>& runs, const runner_options& options,
                       const std::string& sweep_name, const std::string& collect_hint) {
    std::string text = "#!/bin/bash\n";
    text += "# Slurm job array for sweep " + sweep_name + ", written by rnic-sweep: " + std::to_string(runs.size()) +
            " runs, one per array index.\n";
    text += "# Submit: sbatch " + shell_quote(path) + "   (add --time, --partition, ... as your cluster needs)\n";
    text += "# Then build the table: " + collect_hint + "\n";
    text += "#SBATCH --job-name=" + sanitize_name("rnic-sweep-" + sweep_name) + "\n";
    if (!runs.empty()) text += "#SBATCH --array=0-" + std::to_string(runs.size() - 1) + "\n";
    text += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
    text += "#SBATCH --output=" + options.out_dir + "/slurm-%A_%a.out\n\n";
    text += "case \"${SLURM_ARRAY_TASK_ID:?not set: run this script through sbatch}\" in\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const std::string cmd = run_shell_command(options.sim, options.root, options.out_dir, *runs[i]);
        prepare_run_dir(options.out_dir, *runs[i], cmd);
        text += "  " + std::to_string(i) + ") " + cmd + " ;;\n";
    }
    text += "  *) echo \"rnic-sweep: no run for array index $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\nesac\n";
    write_text_file(path, text);
    ::chmod(path.c_str(), 0755);
    return runs.size();
}

}  // namespace rnic::sweep
