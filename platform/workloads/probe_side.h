// What the probe workload's files share (probe.cpp, probe_rdmap.cpp, probe_connection.cpp,
// probe_verbs_misuse.cpp): one host's side of a probe, the server's buffer layout and the helpers.
// Private to those files.
#pragma once

#include <cstdint>
#include <deque>
#include <sstream>
#include <string>
#include <vector>

#include "driver/verbs.h"
#include "workloads/probe.h"
#include "workloads/workload.h"
#include "workloads/write_bw.h"

namespace rnic::platform {

struct probe::side {
    explicit side(drv::host_bus& host) : bus(host), ctx(host) {}
    drv::host_bus& bus;
    drv::context ctx;
    std::uint32_t pd = 0, pd2 = 0;
    std::uint64_t buf = 0;
    drv::memory_region a, b, c, z;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
    std::deque<drv::work_completion> polled;  // taken from the CQ, not yet looked at
};

namespace probe_detail {
// Server buffer layout: region A (all rights, VA-based), B (remote read only), C (another
// protection domain), Z (zero-based); receive buffers sit inside A.
inline constexpr std::uint64_t kBuffer = 256 * 1024;
inline constexpr std::uint64_t kOffB = 128 * 1024, kOffC = 160 * 1024, kOffZ = 192 * 1024;
inline constexpr std::uint64_t kLenA = 128 * 1024, kLenB = 32 * 1024, kLenC = 32 * 1024, kLenZ = 64 * 1024;
inline constexpr std::uint64_t kRecvOff = 64 * 1024;    // receive buffers in A
inline constexpr std::uint64_t kAtomicOff = 96 * 1024;  // atomic targets in A
inline constexpr std::uint64_t kBaseline = 4096;        // the client's first (good) RDMA Write, at A + 0
inline constexpr std::uint64_t kClientBuffer = 1 << 20;
inline constexpr std::uint64_t kBudgetPs = 5'000'000'000ULL;  // 5 ms of simulated time to see an outcome
inline constexpr std::uint64_t kBacklogWaitPs = 200'000'000;  // listen_backlog: the server accepts 200 us late

inline std::string term_text(const drv::terminate_info& t) {
    std::ostringstream o;
    o << "layer " << int(t.layer) << " etype " << int(t.etype) << " code 0x" << std::hex << int(t.code)
      << (t.received ? " (received)" : " (sent)");
    return o.str();
}

inline std::vector<std::uint8_t> pattern(std::uint64_t seed, std::uint64_t tag, std::size_t len) {
    std::vector<std::uint8_t> v(len);
    fill_pattern(v.data(), v.size(), seed, tag);
    return v;
}
}  // namespace probe_detail

}  // namespace rnic::platform
