// Assembles the platform from one scenario (two hosts, the link, the workload), runs it, and
// reports results. The one place where hosts, link and workload are put together.
#pragma once

#include <boost/json.hpp>
#include <memory>
#include <ostream>
#include <string>

#include "config/scenario.h"
#include "host_system.h"
#include "link/ethernet_link.h"
#include "link/socket_bridge.h"
#include "oob.h"
#include "proto/pcap.h"
#include "workloads/workload.h"

namespace rnic::platform {

class simulation {
public:
    // Elaborates the platform. Throws std::runtime_error when the pcap cannot be opened.
    simulation(const config::Scenario& scenario, const std::string& pcap_path);
    ~simulation();

    // Runs until the workload is done or the time limit; returns true when the workload finished and
    // every integrity check passed.
    bool run();

    // Everything but wall-clock figures: deterministic for a scenario and seed.
    boost::json::object results() const;
    void print_summary(std::ostream& os) const;
    void print_latency_summary(std::ostream& os) const;  // the *_lat workloads: perftest's columns

    std::uint64_t payload_bytes() const;
    std::uint64_t fpdus() const;
    double simulated_seconds() const;

private:
    const config::Scenario& scenario_;
    std::unique_ptr<host_system> hosts_[2];
    std::unique_ptr<ethernet_link> link_;
    std::unique_ptr<socket_bridge> peer_;         // peer.kind "socket": a real host b behind a socket
    std::unique_ptr<unplugged_port> unplugged_;   // then the simulated host b's NIC is off the wire
    proto::PcapWriter pcap_;
    oob_channel oob_;
    std::unique_ptr<host_workload> workload_;  // write_bw or mixed, by workload.type
    bool done_ = false;
};

}  // namespace rnic::platform
