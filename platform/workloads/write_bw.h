// Bandwidth and latency workload in the spirit of perftest's ib_write_bw / ib_send_bw: host b
// (server) registers a buffer and waits for a connection; host a (client) connects, then for every
// message size keeps `queue_depth` signaled RDMA Writes (or Sends) outstanding until `iterations`
// have completed. With Sends the server keeps receives posted at the same offsets the client sends
// from, and tells the client (out of band) when the receives of each size are posted.
// It records each operation's post-to-completion latency and checks the placed bytes after each size.
// With `qps` > 1 the client opens that many QPs, each on its own TCP connection (local ports 40000,
// 40001, ...) to the server's one port; every QP runs `iterations` operations per size with
// `queue_depth` of them outstanding, on its own slice of each side's buffer (atomics: all QPs on the
// one shared counter).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "driver/verbs.h"
#include "integrity.h"
#include "oob.h"
#include "workloads/workload.h"

namespace rnic::platform {

struct write_bw_config {
    bool send = false;    // Send/Receive (perftest ib_send_bw) instead of RDMA Write
    bool read = false;    // RDMA Read (perftest ib_read_bw): the client reads the server's buffer
    bool atomic = false;  // FetchAdd of 1 on one 64-bit counter at the server (perftest ib_atomic_bw)
    std::vector<std::uint64_t> sizes;
    std::uint32_t iterations = 1000;
    std::uint32_t queue_depth = 16;
    std::uint64_t buffer = 1 << 20;
    std::uint16_t port = 18515;
    bool event_mode = false;
    std::uint64_t poll_interval_ps = 50000;
    std::uint64_t seed = 1;
    std::uint32_t qps = 1;  // QPs, each on its own connection; iterations are per QP
    // A deliberately bad first RDMA Write, to see the peer's Terminate (tests, driver bring-up):
    // "invalid_stag" (wrong STag key) or "out_of_bounds" (runs past the peer's region).
    std::string inject = "none";
};

using write_bw_row = workload_row;
using write_bw_result = workload_result;

class write_bw : public host_workload {
public:
    // `check` compares a range of the data's source host with the range it was placed at on the
    // other host; `from_client` says which way the data went.
    using checker =
        std::function<integrity_result(bool from_client, std::uint64_t src, std::uint64_t dst, std::uint64_t len)>;

    write_bw(const write_bw_config& cfg, oob_channel& oob, checker check, std::function<void()> on_done);

    void client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) override;
    void server(drv::host_bus& bus, const drv::station_config& station) override;

    const write_bw_result& result() const override { return result_; }

private:
    using qp_list = std::vector<drv::queue_pair*>;
    bool run_size(drv::context& ctx, const qp_list& qps, drv::completion_queue* cq, const drv::memory_region& mr,
                  const remote_buffer& remote, std::uint64_t size);
    void fail(const std::string& what);
    // Work request `i` of QP number `q` (0-based index into the QP list).
    bool run_ops(drv::context& ctx, const qp_list& qps, drv::completion_queue* cq, write_bw_row& row,
                 const std::function<drv::send_wr(std::uint32_t q, std::uint32_t i)>& make_wr, const std::string& what);
    bool run_atomics(drv::context& ctx, const qp_list& qps, drv::completion_queue* cq, const drv::memory_region& mr,
                     const remote_buffer& remote);
    void serve_receives(drv::context& ctx, const qp_list& qps, drv::completion_queue* cq, const drv::memory_region& mr);
    // Bytes of each QP's slice of a buffer of `length` bytes (8-byte aligned).
    std::uint64_t slice_of(std::uint64_t length) const { return length / cfg_.qps / 8 * 8; }
    // Seed of QP q's payload pattern (QP 0 keeps the single-QP pattern).
    std::uint64_t pattern_seed(std::uint32_t q) const { return cfg_.seed ^ (0x9e3779b97f4a7c15ULL * q); }

    write_bw_config cfg_;
    oob_channel& oob_;
    checker check_;
    std::function<void()> on_done_;
    write_bw_result result_;
};

// The payload pattern of one message size (deterministic per seed and size).
void fill_pattern(std::uint8_t* dst, std::size_t len, std::uint64_t seed, std::uint64_t size);

}  // namespace rnic::platform
