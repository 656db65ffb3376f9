// A workload across many hosts (docs/architecture.md, "Fabric"): one program per host, coordinated out
// of band only for what applications exchange before a test (addresses, STags). The two-host
// workloads (host_workload: a client and a server) run in a fabric through two_host_workload, on the
// hosts workload.client and workload.server.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver/verbs.h"
#include "workloads/workload.h"

namespace rnic::platform {

// Reads host memory as a debugger would (no simulated time); false when outside it.
using host_peek = std::function<bool(int host, std::uint64_t addr, void* dst, std::size_t len)>;

class fabric_workload {
public:
    virtual ~fabric_workload() = default;
    // The program of host `host`; a host without a part in the workload has no program.
    virtual bool has_program(int host) const = 0;
    virtual void program(int host, drv::host_bus& bus, const drv::station_config& station) = 0;
    virtual const workload_result& result() const = 0;
    // Figures of the workload beyond the rows (results key "fabric_workload"); empty for two-host ones.
    virtual boost::json::object fabric_results() const { return {}; }
};

// One flow of a fabric workload as results list it (key "per_flow"): its ends, its bytes, its completion
// time (from its start as the workload defines it) and its goodput, bytes over that time; a flow that
// did not complete has completion_ns 0 and goodput 0.
inline boost::json::object flow_record(const std::string& src, const std::string& dst, std::uint64_t bytes,
                                       std::uint64_t completion_ps) {
    const double gbps =
        completion_ps > 0 ? static_cast<double>(bytes) * 8 / (static_cast<double>(completion_ps) * 1e-3) : 0.0;
    return {{"src", src},
            {"dst", dst},
            {"bytes", bytes},
            {"completion_ns", static_cast<double>(completion_ps) / 1000.0},
            {"goodput_gbps", gbps}};
}

// How a polling loop waits after finding its CQ empty (workload.idle_poll).
enum class idle_wait {
    every_pass,        // runs each empty pass: a wake-up of the CPU's thread every poll interval
    until_completion,  // sleeps until a completion is written (context::idle_cq)
};

// The rest of an empty poll pass: the CPU spends `poll_ps`, or with until_completion sleeps through
// the empty passes that would follow (below).
inline void idle_pass(drv::context& ctx, drv::completion_queue* cq, std::uint64_t poll_ps, idle_wait wait) {
    if (wait == idle_wait::until_completion)
        ctx.idle_cq(cq, poll_ps);
    else
        ctx.bus().spend(poll_ps);
}

// One pass of a polling loop: up to 64 completions of `cq` into `wcs` (cleared first); with none
// there the CPU spends `poll_ps` (one empty pass). Returns whether anything came. With
// until_completion, which a loop may ask for only when nothing but a completion can give it work,
// the host sleeps through the empty passes that would follow and polls again at the instant its
// passes would have reached the completion (host_cpu::idle_poll, as write_bw waits). The poll
// instants are the same, but a fabric of hosts that no longer wake every pass gives SystemC another
// order among events due at one instant, so results differ within that order's noise.
inline bool poll_once(drv::context& ctx, drv::completion_queue* cq, std::vector<drv::work_completion>& wcs,
                      std::uint64_t poll_ps, idle_wait wait) {
    wcs.clear();
    int got = 0;
    ctx.poll_cq(cq, 64, &wcs, &got);
    if (got == 0) idle_pass(ctx, cq, poll_ps, wait);
    return got > 0;
}

// A client/server workload on two hosts of a larger fabric.
class two_host_workload : public fabric_workload {
public:
    two_host_workload(std::unique_ptr<host_workload> inner, int client, int server, std::uint32_t server_ip)
        : inner_(std::move(inner)), client_(client), server_(server), server_ip_(server_ip) {}

    bool has_program(int host) const override { return host == client_ || host == server_; }
    void program(int host, drv::host_bus& bus, const drv::station_config& station) override {
        if (host == client_)
            inner_->client(bus, station, server_ip_);
        else if (host == server_)
            inner_->server(bus, station);
    }
    const workload_result& result() const override { return inner_->result(); }
    host_workload& inner() { return *inner_; }

private:
    std::unique_ptr<host_workload> inner_;
    int client_, server_;
    std::uint32_t server_ip_;
};

}  // namespace rnic::platform
