// Incast (docs/architecture.md, "Fabric"): the partition-aggregate pattern that overflows a switch's
// output queue. One receiver and `senders` senders, each sender with `qps` QPs (one TCP connection
// each, opened by the receiver as the MPA initiator). In each of `rounds` rounds the receiver asks every sender for `size` bytes
// with a Send on each of the sender's QPs, at the same instant; each QP answers with one RDMA Write
// with Immediate Data per QP (size / qps bytes each, into its own slice of the receiver's buffer);
// the round ends when the receiver has every flow's Immediate Data. Flow completion time: request
// posted to that flow's Immediate Data seen; round completion: to the last one. After each round the
// receiver checks every byte of every slice against the sender's source, whose pattern changes per
// round, before it asks again.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oob.h"
#include "workloads/fabric_workload.h"

namespace rnic::platform {

struct incast_config {
    int receiver = 0;
    std::vector<int> senders;        // host indices
    std::uint32_t qps = 1;           // per sender
    std::uint64_t size = 64 * 1024;  // bytes per sender per round (a multiple of qps x 8)
    std::uint32_t rounds = 10;
    std::uint16_t port = 18515;  // every sender listens here; the receiver connects to it
    std::uint64_t poll_interval_ps = 50000;
    std::uint64_t seed = 1;
    std::uint64_t request_bytes = 64;  // the request Send
    // Senders wait for work by arming their CQ and sleeping until MSI-X (true), as a server blocked
    // on its completion channel does, or by polling (false), as perftest does.
    bool senders_sleep = true;
    // Each answer is ready a uniform random time in [0, jitter] after its request (a server's
    // service time; seeded per sender, QP and round), so the answers do not leave in lock step.
    std::uint64_t jitter_ps = 0;
    idle_wait idle = idle_wait::every_pass;  // workload.idle_poll
};

class incast : public fabric_workload {
public:
    incast(const incast_config& cfg, std::vector<std::string> host_names, oob_channel& oob, host_peek peek,
           std::function<void()> on_done);

    bool has_program(int host) const override;
    void program(int host, drv::host_bus& bus, const drv::station_config& station) override;
    const workload_result& result() const override { return result_; }
    boost::json::object fabric_results() const override;

private:
    void receive(drv::host_bus& bus, const drv::station_config& station);
    void send(int k, drv::host_bus& bus, const drv::station_config& station);
    void fail(const std::string& what);
    std::uint64_t chunk() const { return cfg_.size / cfg_.qps; }
    std::uint64_t pattern_seed(int k, std::uint32_t round) const;
    std::uint64_t service_time_ps(int k, std::uint32_t q, std::uint32_t round) const;
    // Immediate Data naming a flow and a round.
    static std::uint64_t flow_tag(int k, std::uint32_t q, std::uint32_t round) {
        return static_cast<std::uint64_t>(k) << 40 | static_cast<std::uint64_t>(q) << 32 | round;
    }

    incast_config cfg_;
    std::vector<std::string> names_;
    oob_channel& oob_;
    host_peek peek_;
    std::function<void()> on_done_;
    workload_result result_;
    std::vector<std::uint64_t> round_ps_;              // completion time of each round
    std::vector<std::vector<std::uint64_t>> flow_ps_;  // [sender index][round * qps + q]
    std::vector<std::uint64_t> sender_bytes_;          // per sender index, seen by the receiver
    std::uint64_t first_start_ps_ = 0, last_end_ps_ = 0;
};

}  // namespace rnic::platform
