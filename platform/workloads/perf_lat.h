// Latency workloads in the spirit of perftest's ib_write_lat, ib_read_lat, ib_send_lat and
// ib_atomic_lat (workload.type = write_lat | read_lat | send_lat | atomic_lat), one QP, one message
// in flight:
//  - write_lat: ping-pong. The client RDMA-Writes a message into the server's buffer; the server's
//    CPU polls the message's last byte until the iteration's value appears there and writes the same
//    size back; the client polls likewise. One iteration's latency is half the round trip, as
//    perftest reports it.
//  - send_lat: the same ping-pong with Send/Receive; each side polls its CQ for the receive.
//  - read_lat: the client RDMA-Reads the server's buffer; latency is post to completion.
//  - atomic_lat: FetchAdd (or CmpSwap, workload.lat.atomic = cmp_swap) on one server word; post
//    to completion.
// Rows per message size carry every iteration's latency; rnic-sim prints perftest's columns
// (t_min, t_max, t_typical = median, t_avg, t_stdev, 99% and 99.9% percentiles).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oob.h"
#include "workloads/workload.h"

namespace rnic::platform {

struct perf_lat_config {
    enum class kind { write, send, read, atomic } op = kind::write;
    bool cmp_swap = false;             // atomic_lat: CmpSwap instead of FetchAdd
    std::vector<std::uint64_t> sizes;  // message sizes (atomic: ignored, 8)
    std::uint32_t iterations = 1000;
    std::uint32_t warmup = 16;  // iterations run first and not measured (perftest: 1..)
    // write_lat / send_lat messages up to this size go inline in the WQE (perftest -I; its default is
    // the device's maximum), so the sender's NIC reads no payload from host memory.
    std::uint32_t max_inline = 192;
    std::uint64_t buffer = 1 << 20;
    std::uint16_t port = 18515;
    std::uint64_t poll_interval_ps = 50000;
    std::uint64_t seed = 1;
};

class perf_lat : public host_workload {
public:
    perf_lat(const perf_lat_config& cfg, oob_channel& oob, std::function<void()> on_done);

    void client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) override;
    void server(drv::host_bus& bus, const drv::station_config& station) override;
    const workload_result& result() const override { return result_; }

private:
    struct side;
    void fail(const std::string& what);
    bool setup(side& s, const drv::station_config& station, bool server);
    // The ping-pong peer's half of one iteration (write_lat / send_lat): wait for the message, answer.
    bool ping_pong(side& s, bool client, std::uint64_t size, std::uint32_t iteration, const remote_buffer& peer);
    bool wait_byte(side& s, std::uint64_t addr, std::uint8_t value);
    bool wait_completion(side& s, bool receive, drv::work_completion* out);

    perf_lat_config cfg_;
    oob_channel& oob_;
    std::function<void()> on_done_;
    workload_result result_;
};

}  // namespace rnic::platform
