// rnic-trace-from-results: turns the per-operation log of a trace replay (rnic-sim --results, key
// workload.operation_log) back into an operation trace (docs/traces.md), so that a run can be
// replayed on another configuration. Timed operations get the time they were posted (--timing
// posted, the default: what the replayed system actually did) or the time the trace asked for
// (--timing scheduled); dependent operations keep their after:<id>. Operations that were never
// posted (a failed run) are left out, with the ones that depend on them.
//
//   rnic-trace-from-results RESULTS.json [-o TRACE] [--timing posted|scheduled]
//
// Exit status: 0 written, 2 bad arguments or input (one line saying what and where).
#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

namespace {

int usage(const std::string& why) {
    if (!why.empty()) std::fprintf(stderr, "rnic-trace-from-results: %s\n", why.c_str());
    std::fprintf(stderr, "usage: rnic-trace-from-results RESULTS.json [-o TRACE] [--timing posted|scheduled]\n");
    return 2;
}

bool number(const boost::json::object& o, const char* key, double* out) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || !v->is_number()) return false;
    *out = v->to_number<double>();
    return true;
}

bool integer(const boost::json::object& o, const char* key, std::uint64_t* out) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) return false;
    if (v->is_uint64())
        *out = v->as_uint64();
    else if (v->is_int64() && v->as_int64() >= 0)
        *out = static_cast<std::uint64_t>(v->as_int64());
    else
        return false;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    std::string in_path, out_path, timing = "posted";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            usage("");
            return 0;
        }
        if ((a == "-o" || a == "--timing") && i + 1 < argc) {
            (a == "-o" ? out_path : timing) = argv[++i];
        } else if (!a.empty() && a[0] == '-') {
            return usage("unknown option " + a);
        } else if (in_path.empty()) {
            in_path = a;
        } else {
            return usage("one results file only");
        }
    }
    if (in_path.empty()) return usage("no results file");
    if (timing != "posted" && timing != "scheduled") return usage("--timing: posted or scheduled, not " + timing);

    std::ifstream in(in_path);
    if (!in) return usage("cannot read " + in_path);
    std::stringstream text;
    text << in.rdbuf();
    boost::system::error_code ec;
    const boost::json::value doc = boost::json::parse(text.str(), ec);
    if (ec) return usage(in_path + ": not JSON: " + ec.message());
    const boost::json::array* log = nullptr;
    if (doc.is_object()) {
        if (const auto* wl = doc.as_object().if_contains("workload"); wl != nullptr && wl->is_object()) {
            if (const auto* l = wl->as_object().if_contains("operation_log"); l != nullptr && l->is_array()) {
                log = &l->as_array();
            }
        }
    }
    if (log == nullptr) return usage(in_path + ": no workload.operation_log (results of workload.type = trace?)");

    std::ostringstream out;
    std::string source = "?";
    if (const auto* sc = doc.as_object().if_contains("scenario"); sc != nullptr && sc->is_object()) {
        if (const auto* w = sc->as_object().if_contains("workload"); w != nullptr && w->is_object()) {
            if (const auto* t = w->as_object().if_contains("trace"); t != nullptr && t->is_string()) {
                source = std::string(t->as_string());
            }
        }
    }
    out << "# Operation trace (docs/traces.md), converted by rnic-trace-from-results from " << in_path << "\n"
        << "# (a replay of " << source << "); timing: " << timing << "\n"
        << "# when, id, qp, op, size, offset\n";
    std::set<std::uint64_t> kept;
    std::size_t skipped = 0;
    for (std::size_t i = 0; i < log->size(); ++i) {
        const std::string where = in_path + ": workload.operation_log[" + std::to_string(i) + "]";
        if (!(*log)[i].is_object()) return usage(where + ": not an object");
        const boost::json::object& o = (*log)[i].as_object();
        std::uint64_t id = 0, qp = 0, size = 0, offset = 0, after = 0;
        const auto* op = o.if_contains("op");
        if (!integer(o, "id", &id) || !integer(o, "qp", &qp) || !integer(o, "size", &size) ||
            !integer(o, "offset", &offset) || op == nullptr || !op->is_string()) {
            return usage(where + ": needs id, qp, op, size and offset");
        }
        double post_ns = 0, time_ns = 0;
        const bool posted = number(o, "post_ns", &post_ns);
        const bool dependent = integer(o, "after", &after);
        if (!dependent && !number(o, "time_ns", &time_ns)) return usage(where + ": needs time_ns or after");
        if (!posted || (dependent && kept.count(after) == 0)) {
            ++skipped;
            continue;
        }
        char when[64];
        if (dependent)
            std::snprintf(when, sizeof when, "after:%llu", static_cast<unsigned long long>(after));
        else
            std::snprintf(when, sizeof when, "%.6f", (timing == "posted" ? post_ns : time_ns) / 1000.0);
        out << when << ", " << id << ", " << qp << ", " << std::string(op->as_string()) << ", " << size << ", "
            << offset << "\n";
        kept.insert(id);
    }
    if (skipped > 0) out << "# " << skipped << " operation(s) of the log were never posted and are left out\n";
    if (kept.empty()) return usage(in_path + ": no posted operation in the log");
    if (out_path.empty() || out_path == "-") {
        std::cout << out.str();
    } else {
        std::ofstream f(out_path);
        if (!f || !(f << out.str())) return usage("cannot write " + out_path);
    }
    if (skipped > 0)
        std::fprintf(stderr, "rnic-trace-from-results: %zu operation(s) never posted, left out\n", skipped);
    return 0;
}
