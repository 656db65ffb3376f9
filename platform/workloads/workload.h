// What every host workload offers the platform: a client program for host a, a server program for
// host b, and a result in rows (one per message size, or one per operation kind) that rnic-sim
// reports and judges. The two programs coordinate through the out-of-band channel only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "driver/verbs.h"
#include "integrity.h"

namespace rnic::platform {

struct workload_row {
    std::string op;          // operation kind ("" for a bandwidth row of one size)
    std::uint64_t size = 0;  // message size (0 when sizes vary within the row)
    std::uint64_t iterations = 0;
    std::uint64_t bytes = 0;
    std::uint64_t elapsed_ps = 0;             // first post to last completion
    std::vector<std::uint64_t> latencies_ps;  // post to completion, per operation
    std::uint64_t errors = 0;                 // completions with a bad status
    integrity_result integrity;
};

struct workload_result {
    bool setup_ok = false;
    std::string error;
    std::uint64_t connect_ps = 0;  // connect() call to QP in RTS, as the client saw it (first QP)
    std::vector<workload_row> rows;
    bool finished = false;
};

class host_workload {
public:
    virtual ~host_workload() = default;
    virtual void client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) = 0;
    virtual void server(drv::host_bus& bus, const drv::station_config& station) = 0;
    virtual const workload_result& result() const = 0;
};

// The client's side of a multi-QP set-up: each QP on its own TCP connection (local ports 40000,
// 40001, ...) to the server's one port, in order. The first connection's set-up time goes to
// result.connect_ps. Returns "" or which connection failed.
inline std::string connect_all(drv::context& ctx, const std::vector<drv::queue_pair*>& qps, std::uint32_t server_ip,
                               std::uint16_t port, workload_result& result) {
    for (std::size_t q = 0; q < qps.size(); ++q) {
        const std::uint64_t t0 = ctx.bus().now_ps();
        if (ctx.connect(qps[q], server_ip, port, static_cast<std::uint16_t>(40000 + q)) != drv::status::ok) {
            return "client connect failed (QP " + std::to_string(q + 1) + " of " + std::to_string(qps.size()) + ")";
        }
        if (q == 0) result.connect_ps = ctx.bus().now_ps() - t0;
    }
    result.setup_ok = true;
    return "";
}

// The server's side of connect_all: accepts the QPs' connections in order on `port` (a client may
// open its next one meanwhile: the firmware holds it until accepted). After each accept `on_up(q)`
// runs (e.g. posting the QP's receives; false: `on_up_failure`); `gap_ps` of CPU time passes
// between two accepts. Returns "" or what failed.
inline std::string accept_all(drv::context& ctx, const std::vector<drv::queue_pair*>& qps, std::uint16_t port,
                              const std::function<bool(std::uint32_t)>& on_up, const std::string& on_up_failure,
                              std::uint64_t gap_ps = 0) {
    const auto n = static_cast<std::uint32_t>(qps.size());
    for (std::uint32_t q = 0; q < n; ++q) {
        if (ctx.accept(qps[q], port) != drv::status::ok) {
            return "server accept failed (connection " + std::to_string(q + 1) + " of " + std::to_string(n) + ")";
        }
        if (!on_up(q)) return on_up_failure;
        if (q + 1 < n && gap_ps > 0) ctx.bus().spend(gap_ps);
    }
    return "";
}

// The first failure of a run is what result.error reports.
inline void record_failure(workload_result& result, const std::string& what) {
    if (result.error.empty()) result.error = what;
}

// One check as a result row (op = the check, integrity = its verdict); a failed check fails the run.
inline void record_check(workload_result& result, const std::string& what, bool ok, const std::string& detail = "") {
    workload_row row;
    row.op = what;
    row.iterations = 1;
    row.errors = ok ? 0 : 1;
    row.integrity.ok = ok;
    row.integrity.detail = detail;
    result.rows.push_back(std::move(row));
    if (!ok) record_failure(result, what + (detail.empty() ? "" : ": " + detail));
}

// Folds `part` into `total` (bytes and mismatches add up; the first failure's detail is kept).
inline void merge_integrity(integrity_result& total, const integrity_result& part) {
    if (!part.ok && total.ok) {
        total.first_mismatch = part.first_mismatch;
        total.detail = part.detail;
    }
    total.ok = total.ok && part.ok;
    total.bytes_checked += part.bytes_checked;
    total.bytes_mismatched += part.bytes_mismatched;
}

}  // namespace rnic::platform
