// perf_server (workload.type = perf_server): host b's side of a perftest-like exchange with a client
// outside the simulation (the Linux guest's driver/linux/tools/rnic_perf over /dev/rnic0, with
// host_bus.transport = qemu). Host a runs no program of this workload.
//
// The server registers one buffer (workload.perf_server.buffer bytes) with every remote right, keeps
// workload.perf_server.receives receives of max_send bytes posted, accepts one connection on
// workload.perf_server.port and answers the client's control messages, each a 32-byte Send
// (little-endian), with a 32-byte Send:
//   request  u32 magic kPerfMagic, u32 op, u32 size, u32 count, u64 seed, u64 0
//   reply    u32 magic, u32 status (0 ok, 1 bytes differ, 2 bad request), u64 a, u64 b, u32 c, u32 0
//   hello         -> a = the region's tagged offset, b = its length, c = its STag
//                    (the atomic counter: 8 bytes at offset 0; data from offset kPerfDataOffset)
//   check_write   the client RDMA-Wrote `count` x `size` bytes at data offsets (i * size) mod span
//                 (span = the largest multiple of size in the data area) with perf_pattern(seed, o):
//                 -> the server checks every byte of [0, min(count * size, span)); a = bytes checked,
//                    b = bytes that differ, c = the first differing offset
//   fill_read     the server writes perf_pattern(seed, o) over [0, min(count * size, span)) for the
//                 client's RDMA Reads (which it checks itself) -> a = bytes written
//   expect_sends  the next `count` receives are Sends of `size` bytes, Send i carrying
//                 perf_pattern(seed + i, j); after the last the server replies as check_write does
//   check_atomic  the client ran `count` FetchAdds of 1 on the counter -> status 0 when the counter
//                 equals count (a = the counter); the counter is then set back to 0
//   bye           the server replies, records its rows and ends the run once the client disconnects
// Every check is a row of the results (bytes checked, integrity), so rnic-sim judges the data too.
#pragma once

#include <cstdint>
#include <functional>

#include "workloads/workload.h"

namespace rnic::platform {

constexpr std::uint32_t kPerfMagic = 0x46524e52;  // "RNRF" little-endian
constexpr std::uint32_t kPerfDataOffset = 64;
enum class perf_op : std::uint32_t {
    hello = 1,
    check_write = 2,
    fill_read = 3,
    expect_sends = 4,
    check_atomic = 5,
    bye = 6
};

// The byte at data offset `o` of pattern `seed` (the client computes the same).
inline std::uint8_t perf_pattern(std::uint64_t seed, std::uint64_t o) {
    return static_cast<std::uint8_t>((seed * 151u + o * 131u + (o >> 8) * 7u + (o >> 16)) & 0xffu);
}

struct perf_server_config {
    std::uint16_t port = 18515;                         // perftest's default port
    std::uint64_t buffer = 1 << 20;                     // bytes of the registered buffer
    std::uint32_t max_send = 4096;                      // bytes of each posted receive
    std::uint32_t receives = 64;                        // receives kept posted
    std::uint64_t timeout_ps = 120'000'000'000'000ULL;  // accept, and between two control messages
};

class perf_server : public host_workload {
public:
    perf_server(const perf_server_config& cfg, std::function<void()> on_done);
    void client(drv::host_bus&, const drv::station_config&, std::uint32_t) override {}
    void server(drv::host_bus& bus, const drv::station_config& station) override;
    const workload_result& result() const override { return result_; }

private:
    perf_server_config cfg_;
    std::function<void()> on_done_;
    workload_result result_;
};

}  // namespace rnic::platform
