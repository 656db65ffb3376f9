// Example application of the verbs API (driver/verbs.h): a small key-value store in the server's
// memory that clients look up and update with one-sided RDMA only, the server's CPU never touching a
// request. Runs inside rnic-sim as workload.type = "kv_example" (host a: the clients, host b: the
// server); the walk-through is in kv_example.cpp, the scenario in platform/scenarios/kv-example.json.
//
//  - The server registers a table of kSlots slots of kSlotSize bytes (an open-addressing hash table
//    keyed by name) for remote read, write and atomics, and tells the clients its STag and address.
//  - A lookup is an RDMA Read of the key's slot (linear probing on a miss).
//  - An update takes the slot's lock word with an atomic CmpSwap(0 -> my id), reads the value with
//    an RDMA Read, writes the new value with an RDMA Write and releases the lock with CmpSwap(my id
//    -> 0). Each value carries a version; every update records the version it saw, so the run can
//    prove mutual exclusion: the versions seen on a key are exactly 0, 1, ..., n-1 (a lost update
//    would show as a version seen twice) and the key ends at version n.
//  - With workload.qps = N there are N clients, each on its own QP and TCP connection, all
//    updating the same two keys at once: the lock is contended and refused CmpSwaps retry after a
//    random back-off.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oob.h"
#include "workloads/workload.h"

namespace rnic::examples {

// ---- The table in the server's memory ---------------------------------------------------------
constexpr std::uint32_t kSlots = 16;
constexpr std::uint64_t kSlotSize = 128;
// One slot. The lock word is first so that the atomics address the slot's own tagged offset.
namespace slot_off {
constexpr std::uint64_t kLock = 0x00;       // u64: 0 free, otherwise the holder's client id
constexpr std::uint64_t kEy = 0x08;         // 24 bytes, NUL-padded; empty: the slot is unused
constexpr std::uint64_t kVersion = 0x20;    // u64: number of updates so far
constexpr std::uint64_t kWriter = 0x28;     // u64: client id of the last update (0: the server's initial value)
constexpr std::uint64_t kText = 0x30;       // 80 bytes, NUL-padded: the value itself, human-readable
constexpr std::uint64_t kValue = kVersion;  // what an update rewrites: version, writer and text
constexpr std::uint64_t kValueLen = kSlotSize - kValue;
}  // namespace slot_off
constexpr std::size_t kKeyLen = 24;
constexpr std::size_t kTextLen = 80;

// The keys the server stores, and how many of them (the first ones) the clients update.
const std::vector<std::string>& kv_keys();
constexpr std::uint32_t kHotKeys = 2;

// FNV-1a: the hash that places a key (server) and finds it (client).
std::uint64_t kv_hash(const std::string& key);

struct kv_example_config {
    std::uint32_t clients = 1;    // workload.qps: one QP and one client id each
    std::uint32_t updates = 100;  // workload.iterations: locked updates per client
    std::uint16_t port = 18515;
    std::uint64_t poll_interval_ps = 50000;
    std::uint64_t seed = 1;  // back-off jitter
    bool skip_lock = false;  // workload.inject = skip_lock: update without the lock (to see it fail)
};

class kv_example : public platform::host_workload {
public:
    kv_example(const kv_example_config& cfg, platform::oob_channel& oob, std::function<void()> on_done);

    void client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) override;
    void server(drv::host_bus& bus, const drv::station_config& station) override;
    const platform::workload_result& result() const override { return result_; }

private:
    struct session;  // one client: its QP, its id, where it is in its current update
    void check(const std::string& what, bool ok, const std::string& detail = "");
    void fail(const std::string& what);

    kv_example_config cfg_;
    platform::oob_channel& oob_;
    std::function<void()> on_done_;
    platform::workload_result result_;
};

}  // namespace rnic::examples
