// Trace-driven workloads (workload.type = trace, docs/traces.md) through rnic-sim: the example traces
// replayed with their data checked and their operation counts, timed operations not posted before
// their time, dependencies after what they wait for, malformed traces refused with file:line (exit
// 2), and rnic-trace-from-results turning a run's operation log into a trace that replays the same
// operations (also on another configuration).
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "run_helpers.h"

namespace rnic::test {
namespace {

struct trace_run {
    sim_run run;
    boost::json::value results;
    std::string results_path;
};

trace_run replay(const std::string& trace, std::vector<std::string> extra = {}) {
    static int n = 0;
    const std::string results = temp_path("trace-" + std::to_string(n++) + ".json");
    std::vector<std::string> args = {
        "--set", "workload.type=trace", "--set", "workload.trace=" + trace, "--results", results, "--log", "off"};
    args.insert(args.end(), extra.begin(), extra.end());
    trace_run r;
    r.results_path = results;
    r.run = run_sim(args);
    if (r.run.exit_code != 2) r.results = read_json(results);
    return r;
}

// Operations per kind as the trace file has them (the results' row names).
std::map<std::string, std::uint64_t> count_ops(const std::string& text) {
    static const std::map<std::string, std::string> row = {{"write", "rdma_write"},
                                                           {"read", "rdma_read"},
                                                           {"send", "send"},
                                                           {"fetch_add", "atomic_fetch_add"},
                                                           {"cmp_swap", "atomic_compare_swap"},
                                                           {"write_imm", "rdma_write_with_imm"}};
    std::map<std::string, std::uint64_t> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        std::istringstream f(line);
        std::string field;
        std::vector<std::string> fields;
        while (std::getline(f, field, ',')) fields.push_back(field.substr(field.find_first_not_of(' ')));
        if (fields.size() == 6) ++out[row.at(fields[3])];
    }
    return out;
}

const boost::json::array& op_log(const trace_run& r) {
    return r.results.at("workload").at("operation_log").as_array();
}

double num(const boost::json::value& o, const char* key) {
    return o.at(key).to_number<double>();
}

// Everything every replay must show: status ok, counts per kind as in the trace, every timed
// operation posted at or after its time, every dependent one at or after its dependency's completion.
void expect_faithful(const trace_run& r, const std::string& trace_text) {
    ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
    EXPECT_EQ(r.results.at("status").as_string(), "ok");
    EXPECT_TRUE(r.results.at("integrity").at("ok").as_bool());
    const auto want = count_ops(trace_text);
    std::map<std::string, std::uint64_t> got;
    for (const auto& row : r.results.at("workload").at("rows").as_array()) {
        const std::string op(row.at("op").as_string());
        if (want.count(op) != 0) got[op] = row.at("iterations").to_number<std::uint64_t>();
        EXPECT_TRUE(row.at("integrity_ok").as_bool()) << op;
    }
    EXPECT_EQ(got, want);
    std::uint64_t total = 0;
    for (const auto& [op, count] : want) total += count;
    const auto& log = op_log(r);
    ASSERT_EQ(log.size(), total);
    std::map<std::uint64_t, const boost::json::object*> by_id;
    for (const auto& e : log) by_id[e.at("id").to_number<std::uint64_t>()] = &e.as_object();
    for (const auto& v : log) {
        const auto& e = v.as_object();
        EXPECT_EQ(e.at("status").as_string(), "success");
        EXPECT_NE(e.at("data").as_string(), "mismatch");
        EXPECT_LE(num(e, "post_ns"), num(e, "complete_ns"));
        if (e.contains("time_ns")) {
            EXPECT_GE(num(e, "post_ns"), num(e, "time_ns")) << "operation " << e.at("id");
        } else {
            const auto* dep = by_id.at(e.at("after").to_number<std::uint64_t>());
            EXPECT_GE(num(e, "post_ns"), num(*dep, "complete_ns")) << "operation " << e.at("id");
        }
    }
}

std::size_t count_data(const trace_run& r, const std::string& verdict) {
    std::size_t n = 0;
    for (const auto& e : op_log(r)) n += e.at("data").as_string() == verdict ? 1 : 0;
    return n;
}

TEST(Trace, StorageExampleReplaysWithItsCountsAndData) {
    const trace_run r = replay("traces/ops-storage.csv");
    expect_faithful(r, read_file(std::string(RNIC_SOURCE_DIR) + "/traces/ops-storage.csv"));
    // Nearly everything is data-checked (only operations overlapping one in flight are not).
    EXPECT_GE(count_data(r, "ok"), 180u);
    EXPECT_GT(r.results.at("integrity").at("bytes_checked").to_number<std::uint64_t>(), 500'000u);
    EXPECT_NE(r.run.output.find("rdma_read"), std::string::npos) << r.run.output;
}

TEST(Trace, AChangedServerByteIsCaughtByTheReadAndTheFinalCheck) {
    // workload.inject = flip_byte: the server changes the first byte the trace's first Read reads
    // (operation 4, line 10 of the storage trace, a block nothing wrote before).
    const trace_run r = replay("traces/ops-storage.csv", {"--set", "workload.inject=flip_byte"});
    EXPECT_EQ(r.run.exit_code, 1) << r.run.output;
    EXPECT_EQ(r.results.at("status").as_string(), "integrity check failed");
    EXPECT_FALSE(r.results.at("integrity").at("ok").as_bool());
    EXPECT_EQ(op_log(r)[3].at("id").to_number<std::uint64_t>(), 4u);
    EXPECT_EQ(op_log(r)[3].at("data").as_string(), "mismatch");
    EXPECT_EQ(count_data(r, "mismatch"), 1u);
    EXPECT_NE(r.run.output.find("operation 4 (traces/ops-storage.csv:10, read of 4096 bytes"), std::string::npos)
        << r.run.output;
    EXPECT_NE(r.run.output.find("(the initial image)"), std::string::npos) << r.run.output;
}

TEST(Trace, MpiExampleChecksEveryAtomicOriginalAndSend) {
    const trace_run r = replay("traces/ops-mpi.csv");
    expect_faithful(r, read_file(std::string(RNIC_SOURCE_DIR) + "/traces/ops-mpi.csv"));
    for (const auto& e : op_log(r)) {
        const std::string op(e.at("op").as_string());
        if (op == "fetch_add" || op == "cmp_swap" || op == "send") {
            EXPECT_EQ(e.at("data").as_string(), "ok") << "operation " << e.at("id");
        }
    }
}

TEST(Trace, TimedOperationWaitsForItsTimeAndDependentsForTheirDependency) {
    const std::string trace = temp_path("timed.csv");
    write_file(trace,
               "# a write now, a write at 100 us, a read of it when it completes, a Send and a\n"
               "# Write with Immediate after that, FetchAdds on one word\n"
               "0, 1, 0, write, 4096, 0\n"
               "100, 2, 0, write, 1000, 8192\n"
               "after:2, 3, 1, read, 1000, 8192\n"
               "after:3, 4, 1, send, 100, 16384\n"
               "after:4, 5, 0, write_imm, 300, 20000\n"
               "250ns, 6, 1, fetch_add, 8, 65536\n"
               "300ns, 7, 1, fetch_add, 8, 65536\n"
               "400ns, 8, 1, cmp_swap, 8, 65536\n");
    const trace_run r = replay(trace);
    expect_faithful(r, read_file(trace));
    const auto& log = op_log(r);
    ASSERT_EQ(log.size(), 8u);
    EXPECT_GE(num(log[1], "post_ns"), 100'000.0);
    EXPECT_LT(num(log[1], "post_ns"), 101'000.0);  // and not much later: nothing else was queued
    // The read of what operation 2 wrote returned its bytes (checked against the trace's pattern).
    EXPECT_EQ(log[2].at("data").as_string(), "ok");
    EXPECT_GE(num(log[2], "post_ns"), num(log[1], "complete_ns"));
    EXPECT_GE(num(log[3], "post_ns"), num(log[2], "complete_ns"));
    for (std::size_t i = 3; i < 8; ++i) EXPECT_EQ(log[i].at("data").as_string(), "ok") << i;
    EXPECT_GT(r.results.at("simulated_time_ps").to_number<double>(), 100e6);
}

TEST(Trace, OverlappingOperationsInFlightAreNotCheckedButStillCounted) {
    const std::string trace = temp_path("overlap.csv");
    // Two QPs writing the same block at the same time: which lands last is not decided.
    write_file(trace, "0, 1, 0, write, 65536, 0\n0, 2, 1, write, 65536, 0\nafter:1, 3, 0, write, 64, 131072\n");
    const trace_run r = replay(trace);
    expect_faithful(r, read_file(trace));
    EXPECT_EQ(count_data(r, "unchecked"), 2u);
    EXPECT_EQ(op_log(r)[2].at("data").as_string(), "ok");
}

TEST(Trace, MalformedTraceStopsWithFileAndLine) {
    const struct {
        const char* line;
        const char* says;
    } cases[] = {
        {"0, 2, 0, move, 64, 0", "op: expected write, read"},
        {"after:9, 2, 0, read, 64, 0", "after:9 names no operation"},
        {"0, 2, 0, read, 64", "expected 6 fields"},
        {"0, 2, 0, fetch_add, 7, 0", "an atomic operation is 8 bytes"},
        {"0, 2, 0, fetch_add, 8, 4", "8-byte aligned"},
        {"0, 2, 0, write, 4096, 1048000", "runs past workload.buffer"},
        {"0, 2, 64, write, 64, 0", "qp: expected 0..63"},
        {"soon, 2, 0, write, 64, 0", "when: expected a time"},
        {"0, 1, 0, write, 64, 0", "id 1 used before (line 2)"},
        {"-5, 2, 0, write, 64, 0", "when: expected a time"},
        {"0, 2, 0, write, 0, 0", "size: expected 1.."},
    };
    for (const auto& c : cases) {
        const std::string trace = temp_path("bad.csv");
        write_file(trace, std::string("# header\n0, 1, 0, write, 64, 0\n") + c.line + "\n");
        const trace_run r = replay(trace);
        EXPECT_EQ(r.run.exit_code, 2) << c.line << "\n" << r.run.output;
        EXPECT_NE(r.run.output.find(trace + ":3: "), std::string::npos) << c.line << "\n" << r.run.output;
        EXPECT_NE(r.run.output.find(c.says), std::string::npos) << c.line << "\n" << r.run.output;
    }
    const trace_run missing = replay("traces/no-such-trace.csv");
    EXPECT_EQ(missing.run.exit_code, 2) << missing.run.output;
    EXPECT_NE(missing.run.output.find("traces/no-such-trace.csv: cannot open"), std::string::npos)
        << missing.run.output;
    const std::string empty = temp_path("empty.csv");
    write_file(empty, "# nothing\n\n");
    EXPECT_EQ(replay(empty).run.exit_code, 2);
    EXPECT_EQ(replay("").run.exit_code, 2);
}

std::string convert(const std::string& results, const std::string& out, const std::string& extra = "") {
    return shell(std::string(RNIC_TRACE_FROM_RESULTS) + " " + results + " -o " + out + " " + extra +
                 " 2>&1; echo exit=$?");
}

TEST(Trace, ConverterRoundTripReplaysTheSameOperations) {
    const trace_run first = replay("traces/ops-mpi.csv");
    const std::string& first_results = first.results_path;
    ASSERT_EQ(first.run.exit_code, 0) << first.run.output;
    const std::string converted = temp_path("round.csv");
    ASSERT_NE(convert(first_results, converted).find("exit=0"), std::string::npos);
    const std::string text = read_file(converted);
    // Replayed on another configuration: a 10 Gb/s link and Gen2 x4 PCIe.
    const trace_run second =
        replay(converted, {"--set", "link.rate=10Gbps", "--set", "pcie.generation=2", "--set", "pcie.lanes=4"});
    expect_faithful(second, text);
    EXPECT_EQ(count_ops(text), count_ops(read_file(std::string(RNIC_SOURCE_DIR) + "/traces/ops-mpi.csv")));
    const auto& a = op_log(first);
    const auto& b = op_log(second);
    ASSERT_EQ(a.size(), b.size());
    bool slower = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        for (const char* key : {"id", "qp", "op", "size", "offset"}) EXPECT_EQ(a[i].at(key), b[i].at(key)) << i << key;
        EXPECT_EQ(a[i].as_object().contains("after"), b[i].as_object().contains("after")) << i;
        if (b[i].as_object().contains("time_ns")) {
            // Timed operations now start when the first run posted them.
            EXPECT_NEAR(num(b[i], "time_ns"), num(a[i], "post_ns"), 0.001) << i;
        }
        slower =
            slower || num(b[i], "complete_ns") - num(b[i], "post_ns") > num(a[i], "complete_ns") - num(a[i], "post_ns");
    }
    EXPECT_TRUE(slower);  // the slower configuration shows in the latencies
    // --timing scheduled keeps the trace's own times.
    const std::string scheduled = temp_path("round-scheduled.csv");
    ASSERT_NE(convert(first_results, scheduled, "--timing scheduled").find("exit=0"), std::string::npos);
    EXPECT_NE(read_file(scheduled).find("\n20.000000, "), std::string::npos) << read_file(scheduled);
}

TEST(Trace, ConverterRefusesWhatIsNotATraceRunsResults) {
    const std::string other = temp_path("write-bw.json");
    ASSERT_EQ(
        run_sim({"--set", "workload.sizes=[64]", "--set", "workload.iterations=10", "--results", other, "--log", "off"})
            .exit_code,
        0);
    EXPECT_NE(convert(other, temp_path("x.csv")).find("no workload.operation_log"), std::string::npos);
    const std::string junk = temp_path("junk.json");
    write_file(junk, "{ not json");
    EXPECT_NE(convert(junk, temp_path("y.csv")).find("exit=2"), std::string::npos);
    EXPECT_NE(convert(temp_path("absent.json"), temp_path("z.csv")).find("exit=2"), std::string::npos);
}

}  // namespace
}  // namespace rnic::test
