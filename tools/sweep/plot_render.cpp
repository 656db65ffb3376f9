// Drawing a plot with gnuplot (its data file and script, PNG and SVG) and the sweep's report page.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common.h"
#include "plot.h"

namespace rnic::sweep {
namespace json = boost::json;

namespace {

std::string fmt(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// gnuplot single-quoted string: '' stands for '.
std::string gq(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "''";
        else if (c == '\n' || c == '\r')
            out += ' ';
        else
            out += c;
    }
    return out + "'";
}

// gnuplot data file string column: double quotes, no escapes inside, so '"' becomes '\''.
std::string dq(const std::string& s) {
    std::string out = "\"";
    for (char c : s) out += (c == '"' || c == '\n' || c == '\r') ? '\'' : c;
    return out + "\"";
}

std::string num(double v) {
    return value_text(json::value(v));
}

int run_program(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log_path) {
    std::vector<char*> cargv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (log < 0 || in < 0) {
        if (log >= 0) ::close(log);
        if (in >= 0) ::close(in);
        return -1;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::dup2(in, 0) < 0 || ::dup2(log, 1) < 0 || ::dup2(log, 2) < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(127);
        ::execvp(cargv[0], cargv.data());
        ::_exit(127);
    }
    ::close(log);
    ::close(in);
    if (pid < 0) return -1;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

bool non_empty_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && st.st_size > 0;
}

std::string read_all(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

}  // namespace

std::string render_plot(const plot_spec& spec, const plot_data& data, const std::string& dir,
                        const std::string& gnuplot) {
    const std::string dat = spec.name + ".dat";
    const std::string gp = spec.name + ".gp";
    const bool bars = spec.style == plot_spec::style::bars;
    const std::size_t n_series = data.series.size();
    // Bars: a cluster per x value (at 0, 1, ...), the series' bars side by side within 0.8 of it.
    const double bar_width = 0.8 / static_cast<double>(std::max<std::size_t>(1, n_series));
    auto bar_offset = [&](std::size_t i) {
        return (static_cast<double>(i) - (static_cast<double>(n_series) - 1.0) / 2.0) * bar_width;
    };
    std::string d = "# rnic-sweep plot " + spec.name + ": " + spec.y + " over " + spec.x +
                    "; columns: position x mean low high n min max stddev" +
                    (data.references.empty() ? "" : "; then one block per reference line: position y") + "\n";
    for (std::size_t i = 0; i < n_series; ++i) {
        const plot_series& s = data.series[i];
        if (i != 0) d += "\n\n";
        d += "# series " + std::to_string(i) + ": " + s.title + "\n";
        for (const plot_point& p : s.points) {
            d += num(p.position + (bars ? bar_offset(i) : 0.0)) + " " + dq(value_text(p.x)) + " " + num(p.mean) + " " +
                 num(p.low()) + " " + num(p.high()) + " " + std::to_string(p.n) + " " + num(p.min) + " " + num(p.max) +
                 " " + num(p.stddev) + "\n";
        }
        if (s.points.empty()) d += "\n";  // keep the block (gnuplot indexes blocks by blank-line pairs)
    }
    for (std::size_t j = 0; j < data.references.size(); ++j) {
        const reference_line& r = data.references[j];
        d += "\n\n# reference " + std::to_string(j) + ": " + r.title +
             ": y = " + spec.references[r.reference].y.text() + (r.values.empty() ? "" : " with " + r.values) + "\n";
        for (const auto& [x, y] : r.points) d += num(x) + " " + num(y) + "\n";
        if (r.points.empty()) d += "\n";
    }
    std::string g = "# written by rnic-sweep; redraw with: gnuplot " + gp + "\n";
    g += "set encoding utf8\n";
    g += "set terminal pngcairo size 960,600 font 'Sans,12' noenhanced\n";
    g += "set output " + gq(spec.name + ".png") + "\n";
    // The title is centred on the whole image, not over the plot area: with the key outside on the
    // right, gnuplot's title is centred left of the image's middle and a long one lost its start.
    g += "set label 1 " + gq(spec.title) + " at screen 0.5, screen 0.965 center front\n";
    g += "set tmargin 3\n";
    g += "set xlabel " + gq(spec.x_label) + "\n";
    g += "set ylabel " + gq(spec.y_label) + "\n";
    g += "set grid\n";
    g += "set border lw 1\n";
    // x: the data's ends plus a margin (not stretched to the next tic); y: a margin where no limit is given.
    const std::string y_low = spec.has_y_min ? "0" : "graph 0.05";
    const std::string y_high = spec.has_y_max ? "0" : "graph 0.05";
    if (bars) {
        g += "set xrange [-0.5:" + num(static_cast<double>(data.x_values.size()) - 0.5) + "]\n";
        std::string tics;
        for (std::size_t k = 0; k < data.x_values.size(); ++k) {
            tics += (k == 0 ? "" : ", ") + gq(value_text(data.x_values[k])) + " " + std::to_string(k);
        }
        g += "set xtics (" + tics + ")\n";
        g += "set style fill solid 0.75 border -1\n";
        g += "set boxwidth " + num(bar_width) + " absolute\n";
        bool all_positive = true;
        for (const plot_series& s : data.series) {
            for (const plot_point& p : s.points) all_positive = all_positive && p.low() >= 0.0;
        }
        // Bars stand on 0: no margin below them.
        g += "set offsets 0, 0, " + y_high + ", " + (all_positive || spec.has_y_min ? "0" : y_low) + "\n";
        if (all_positive && !spec.has_y_min) {
            g += "set yrange [0:" + (spec.has_y_max ? num(spec.y_max) : std::string("*")) + "]\n";
        }
    } else if (data.categorical_x) {
        g += "set xrange [-0.5:" + num(static_cast<double>(data.x_values.size()) - 0.5) + "]\n";
        g += "set offsets 0, 0, " + y_high + ", " + y_low + "\n";
    } else {
        g += "set autoscale xfix\n";
        g += "set offsets graph 0.04, graph 0.04, " + y_high + ", " + y_low + "\n";
    }
    if (spec.log_x && !data.categorical_x) g += "set logscale x 10\nset format x '%g'\n";
    if (spec.log_y) g += "set logscale y 10\nset format y '%g'\n";
    if (spec.has_y_min || spec.has_y_max) {
        g += "set yrange [" + (spec.has_y_min ? num(spec.y_min) : std::string("*")) + ":" +
             (spec.has_y_max ? num(spec.y_max) : std::string("*")) + "]\n";
    }
    if (!spec.series.empty()) {
        g += "set key outside right top vertical title " + gq(spec.series_label) + " box\n";
    } else if (!data.references.empty()) {
        g += "set key outside right top vertical box\n";
    } else {
        g += "set key off\n";
    }
    std::string clauses;
    std::vector<int> series_lt(n_series, 0);  // each series' line type (its colour), for its reference lines
    int drawn = 0;
    for (std::size_t i = 0; i < n_series; ++i) {
        const plot_series& s = data.series[i];
        if (s.points.empty()) continue;
        if (!clauses.empty()) clauses += ", \\\n     ";
        if (bars) {
            series_lt[i] = static_cast<int>(i) + 1;
            clauses += gq(dat) + " index " + std::to_string(i) + " using 1:3 with boxes lt " +
                       std::to_string(series_lt[i]) + " title " + gq(s.title);
            if (spec.error != plot_spec::error_bars::none) {
                clauses += ", \\\n     " + gq(dat) + " index " + std::to_string(i) +
                           " using 1:3:4:5 with yerrorbars lt -1 lw 1.5 pt 0 notitle";
            }
            continue;
        }
        series_lt[i] = ++drawn;  // gnuplot's default: the n-th plot clause draws with line type n
        std::string using_spec = spec.error == plot_spec::error_bars::none ? "1:3" : "1:3:4:5";
        if (data.categorical_x) using_spec += ":xtic(2)";
        const std::string style = spec.error == plot_spec::error_bars::none ? "linespoints" : "yerrorlines";
        // Five filled point types against gnuplot's eight colours: colour and point repeat together
        // only after 40 series (with four, series 9 and 10 looked like series 1 and 2).
        clauses += gq(dat) + " index " + std::to_string(i) + " using " + using_spec + " with " + style + " lw 2 pt " +
                   std::to_string(5 + 2 * (i % 5)) + " ps 1.3 title " + gq(s.title);
    }
    if (clauses.empty()) return "no points to draw (no ok run has a value of " + spec.y + ")";
    // Reference lines: dashed (a dash pattern per reference), in the series' colour or dark grey.
    for (std::size_t j = 0; j < data.references.size(); ++j) {
        const reference_line& r = data.references[j];
        if (r.points.empty()) continue;
        const std::string colour = r.series >= 0 && series_lt[static_cast<std::size_t>(r.series)] > 0
                                       ? "lt " + std::to_string(series_lt[static_cast<std::size_t>(r.series)])
                                       : std::string("lc rgb '#404040'");
        clauses += ", \\\n     " + gq(dat) + " index " + std::to_string(n_series + j) + " using 1:2 with lines " +
                   colour + " dt " + std::to_string(2 + r.reference % 4) + " lw 2 title " + gq(r.title);
    }
    g += "plot " + clauses + "\n";
    g += "set terminal svg size 960,600 dynamic font 'Sans,12' noenhanced background '#ffffff'\n";
    g += "set output " + gq(spec.name + ".svg") + "\n";
    g += "replot\nunset output\n";
    try {
        write_text_file(dir + "/" + dat, d);
        write_text_file(dir + "/" + gp, g);
    } catch (const std::exception& e) {
        return e.what();
    }
    const std::string png = dir + "/" + spec.name + ".png";
    const std::string svg = dir + "/" + spec.name + ".svg";
    std::remove(png.c_str());
    std::remove(svg.c_str());
    const std::string log = dir + "/" + spec.name + ".gnuplot.log";
    const int rc = run_program({gnuplot, gp}, dir, log);
    if (rc == 127 || rc < 0) return "cannot run " + gnuplot + " (install the Debian package gnuplot-nox)";
    if (rc != 0 || !non_empty_file(png) || !non_empty_file(svg)) {
        std::string msg = read_all(log);
        if (msg.size() > 600) msg = msg.substr(0, 600) + "...";
        return gnuplot + " failed (exit status " + std::to_string(rc) + "): " + msg;
    }
    return "";
}

std::string markdown_cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '|')
            out += "\\|";
        else if (c == '\n' || c == '\r')
            out += ' ';
        else
            out += c;
    }
    return out;
}

std::string report_markdown(const table& table, const std::vector<report_figure>& figures, const std::string& intro) {
    std::string md =
        "# Sweep " + table.name + "\n\n" + intro + "\n\nTables: [table.csv](table.csv) · [table.json](table.json)\n";
    for (const report_figure& f : figures) {
        const plot_spec& spec = *f.spec;
        md += "\n## " + markdown_cell(spec.title) + "\n\n";
        if (f.problem.empty()) {
            md += "![" + markdown_cell(spec.title) + "](" + f.png + ")\n\n";
            md += "[SVG](" + f.svg + ") · [data](plots/" + spec.name + ".dat) · [gnuplot script](plots/" + spec.name +
                  ".gp)\n\n";
        } else {
            md += "*No figure: " + markdown_cell(f.problem) + "*\n\n";
        }
        if (f.data == nullptr) continue;
        const plot_data& data = *f.data;
        std::string how = "Each cell: mean over the seeds' runs with status ok";
        if (spec.error == plot_spec::error_bars::minmax) how += ", [min, max] (the error bars)";
        if (spec.error == plot_spec::error_bars::stddev) how += " ± sample standard deviation (the error bars)";
        if (spec.error == plot_spec::error_bars::ci95)
            how += " ± half-width of its 95% confidence interval (Student's t; the error bars)";
        if (!spec.y_divide.empty()) {
            how +=
                "; each run's " + spec.y + " divided by `" + spec.y_divide.text() + "` before the mean and the spread";
        }
        how += "; (n=...) when fewer runs than seeds were averaged";
        for (const auto& w : spec.where) how += "; " + w.first + " = " + value_text(w.second);
        md += how + ".\n\n";
        md += "| " + markdown_cell(spec.x_label) + " |";
        std::string rule = "|---:|";
        for (const plot_series& s : data.series) {
            md += " " + markdown_cell(spec.series.empty() ? spec.y_label : s.title) + " |";
            rule += "---:|";
        }
        for (const reference_line& r : data.references) {
            md += " " + markdown_cell(r.title) + " |";
            rule += "---:|";
        }
        md += "\n" + rule + "\n";
        std::size_t max_n = 0;
        for (const plot_series& s : data.series) {
            for (const plot_point& p : s.points) max_n = std::max(max_n, p.n);
        }
        for (const json::value& x : data.x_values) {
            md += "| " + markdown_cell(value_text(x)) + " |";
            for (const plot_series& s : data.series) {
                auto it = std::find_if(s.points.begin(), s.points.end(),
                                       [&](const plot_point& p) { return same_value(p.x, x); });
                std::string cell;
                if (it != s.points.end()) {
                    cell = fmt(it->mean);
                    if (spec.error == plot_spec::error_bars::minmax)
                        cell += " [" + fmt(it->min) + ", " + fmt(it->max) + "]";
                    if (spec.error == plot_spec::error_bars::stddev) cell += " ± " + fmt(it->stddev);
                    if (spec.error == plot_spec::error_bars::ci95) cell += " ± " + fmt(it->ci95);
                    if (it->n < max_n) cell += " (n=" + std::to_string(it->n) + ")";
                }
                md += " " + markdown_cell(cell) + " |";
            }
            for (const reference_line& r : data.references) {
                // The line's value at this x (a level line on categories has one value).
                const bool level = data.categorical_x || spec.style == plot_spec::style::bars;
                std::string cell;
                for (const auto& [px, py] : r.points) {
                    if (level || (is_number(x) && px == as_number(x))) {
                        cell = fmt(py);
                        break;
                    }
                }
                md += " " + markdown_cell(cell) + " |";
            }
            md += "\n";
        }
        if (!data.references.empty()) {
            md += "\nReference lines (dashed):\n\n";
            for (const reference_line& r : data.references) {
                md += "- " + markdown_cell(r.title) + ": y = `" + spec.references[r.reference].y.text() + "`" +
                      (r.values.empty() ? "" : " with " + markdown_cell(r.values)) + "\n";
            }
        }
        for (const std::string& w : data.warnings) md += "\n*" + markdown_cell(w) + "*\n";
    }
    md += "\n## Runs\n\n";
    constexpr std::size_t kMaxRows = 200;
    if (table.rows.size() > kMaxRows) {
        md += std::to_string(table.rows.size()) + " runs: see [table.csv](table.csv).\n";
        return md;
    }
    md += "|";
    std::string rule = "|";
    for (const column& c : table.columns) {
        md += " " + markdown_cell(with_unit(c.name, c.unit)) + " |";
        rule += c.kind == "metric" || c.kind == "run" || c.kind == "seed" ? "---:|" : "---|";
    }
    md += "\n" + rule + "\n";
    for (const auto& row : table.rows) {
        md += "|";
        for (std::size_t i = 0; i < row.size(); ++i) {
            std::string cell = row[i].is_double() ? fmt(row[i].get_double()) : value_text(row[i]);
            if (table.columns[i].kind == "id") cell = "[" + cell + "](runs/" + cell + "/)";
            md += " " + markdown_cell(cell) + " |";
        }
        md += "\n";
    }
    return md;
}

}  // namespace rnic::sweep
