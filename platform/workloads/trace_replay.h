// Trace-driven workload (workload.type = trace): replays an operation trace (docs/traces.md,
// traces/ops-*.csv) through the verbs API. Host a's client opens as many QPs as the trace names and
// posts each operation at its time (microseconds after the last QP is connected) or when the operation
// it depends on completes; host b's server registers workload.buffer (filled with a seeded pattern)
// and keeps receives posted for the Sends and Writes with Immediate (credits, as the mixed workload).
// Every byte is checked against a shadow of the server's buffer: a Write's payload, a Read's data, each
// Send's bytes at the server, each atomic's original. Operations whose ranges overlap another one in
// flight (except atomics on one word from one QP, which the responder orders) are not data-checked
// and make the bytes they touch unknown; the log says which. Results: one row per kind of operation
// and, per operation, its post and completion time and status (results' workload.operation_log, which
// tools/rnic-trace-from-results turns back into a trace).
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oob.h"
#include "workloads/workload.h"

namespace rnic::platform {

enum class trace_op_kind : std::uint8_t { write, read, send, fetch_add, cmp_swap, write_imm };
constexpr std::size_t kTraceOpKinds = 6;
const char* trace_name(trace_op_kind k);   // the trace's word: "write", "read", ...
const char* result_name(trace_op_kind k);  // the results' row: "rdma_write", "rdma_read", ...

struct trace_op {
    std::uint64_t id = 0;
    bool has_time = true;         // else: after `after`
    std::uint64_t time_ps = 0;    // from the start of the replay
    std::uint64_t after = 0;      // id of the operation this one waits for
    std::size_t after_index = 0;  // its index in the trace
    std::uint32_t qp = 0;
    trace_op_kind kind = trace_op_kind::write;
    std::uint32_t size = 0;
    std::uint64_t offset = 0;  // in the server's buffer (and the client's mirror of it)
    std::size_t line = 0;
};

struct trace_config {
    std::string path;                // as given in workload.trace
    std::vector<trace_op> ops;       // in file order
    std::uint32_t qps = 1;           // highest QP number + 1
    std::uint64_t buffer = 1 << 20;  // workload.buffer: each side's registered buffer
    std::uint32_t queue_depth = 16;  // send-queue depth per QP
    std::uint32_t receives = 16;     // receives the server keeps posted per QP
    std::uint16_t port = 18515;
    std::uint64_t poll_interval_ps = 50000;
    std::uint64_t seed = 1;
    // workload.inject = flip_byte: the server changes one byte of its buffer after writing its
    // image, the first byte the trace's first Read reads (else its first operation's), to see the
    // checks fail.
    bool flip_byte = false;
};

// Reads an operation trace. `path` relative: first to the working directory, then to the project's
// source directory. Returns false with "<file>:<line>: <what>" in *error; never throws on bad input.
bool load_op_trace(const std::string& path, std::uint64_t buffer, trace_config* out, std::string* error);

class trace_replay : public host_workload {
public:
    trace_replay(const trace_config& cfg, oob_channel& oob, std::function<void()> on_done);

    void client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) override;
    void server(drv::host_bus& bus, const drv::station_config& station) override;
    const workload_result& result() const override { return result_; }
    // One entry per operation of the trace (results' workload.operation_log).
    boost::json::array operation_log() const;

private:
    enum class data_check : std::uint8_t { pending, ok, mismatch, unchecked, overwritten };
    struct op_state {
        bool posted = false, done = false;
        std::uint64_t post_ps = 0, done_ps = 0;  // from the replay's start
        std::string status = "not posted";
        bool conflict = false;      // overlapped another operation in flight
        bool atomic_known = false;  // the shadow knew the word's value at post
        std::uint64_t expected_original = 0;
        std::uint64_t atomic_slot = 0;  // client: where the original lands
        data_check data = data_check::pending;
        bool received_ok = false;  // server: Send / Immediate Data as expected
        bool received = false;
        std::uint64_t final_checked = 0;  // server buffer at the end: bytes it wrote that still match
        bool final_mismatch = false;
    };

    void fail(const std::string& what);
    std::vector<std::uint8_t> payload(std::size_t index) const;
    bool modifies_remote(trace_op_kind k) const;

    trace_config cfg_;
    oob_channel& oob_;
    std::function<void()> on_done_;
    workload_result result_;
    std::vector<op_state> state_;
    std::vector<std::vector<std::size_t>> recv_order_;  // per QP: trace indices consuming receives, posted order
    std::vector<std::uint8_t> shadow_, known_;          // the server's buffer as the client's posts made it
    std::vector<std::int64_t> last_writer_;             // per byte: trace index of its last writer (-1: image)
    integrity_result final_image_;
    std::uint64_t start_ps_ = 0;
    bool client_stopped_ = false;
};

}  // namespace rnic::platform
