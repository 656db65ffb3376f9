// Traffic matrices across a fabric (docs/architecture.md, "Fabric"): every flow is one QP (one TCP
// connection) from a source host to a destination host carrying `messages` RDMA Writes of `size`
// bytes with `queue_depth` outstanding, all flows at once.
//  - all_to_all: every host to every other host;
//  - permutation: host i to host perm(i), a seeded derangement (no host sends to itself), so every
//    host sends one flow and receives one, and ECMP decides which of them share an uplink.
// Connections are opened in one global order of flows (source then destination), each host taking
// part in its own flows in that order, so no two hosts wait for each other; a destination listens
// on port + source index, so that an accept takes the right source's connection. Once every host is
// connected (an out-of-band barrier, as perftest's hosts agree to start) each flow begins after a
// seeded 0..jitter of its own. A flow's
// completion time runs from its first post to its last completion at the source; when every source
// is done, each flow's destination slots are compared with its source slots byte for byte.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oob.h"
#include "workloads/fabric_workload.h"

namespace rnic::platform {

struct traffic_matrix_config {
    bool all_to_all = true;  // else permutation
    int hosts = 2;
    std::uint64_t size = 64 * 1024;  // bytes per RDMA Write
    std::uint32_t messages = 16;     // per flow
    std::uint32_t queue_depth = 4;   // per flow; also the slots of each flow's buffers
    std::uint16_t port = 18515;
    std::uint64_t poll_interval_ps = 50000;
    std::uint64_t seed = 1;
    std::uint64_t jitter_ps = 0;             // each flow starts a seeded 0..jitter after every host is connected
    idle_wait idle = idle_wait::every_pass;  // workload.idle_poll
};

struct matrix_flow {
    int src = 0, dst = 0;
};

// The flows of a pattern, in the global order connections are opened (exposed for tests).
std::vector<matrix_flow> matrix_flows(const traffic_matrix_config& cfg);

class traffic_matrix : public fabric_workload {
public:
    traffic_matrix(const traffic_matrix_config& cfg, std::vector<std::string> host_names, oob_channel& oob,
                   host_peek peek, std::function<void()> on_done);

    bool has_program(int host) const override;
    void program(int host, drv::host_bus& bus, const drv::station_config& station) override;
    const workload_result& result() const override { return result_; }
    boost::json::object fabric_results() const override;

private:
    void fail(const std::string& what) { record_failure(result_, what); }
    void finish_host();
    std::uint64_t slot_bytes() const { return cfg_.size * cfg_.queue_depth; }

    traffic_matrix_config cfg_;
    std::vector<std::string> names_;
    oob_channel& oob_;
    host_peek peek_;
    std::function<void()> on_done_;
    std::vector<matrix_flow> flows_;
    workload_result result_;
    std::vector<std::uint64_t> flow_ps_;              // completion time per flow (0: not done)
    std::vector<std::uint64_t> src_addr_, dst_addr_;  // per flow: the slots at each end
    int hosts_done_ = 0, sources_ = 0;
    bool reported_ = false;
    std::uint64_t first_post_ps_ = UINT64_MAX, last_completion_ps_ = 0;
};

}  // namespace rnic::platform
