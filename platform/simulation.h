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
#include "oob.h"
#include "proto/pcap.h"
#include "workloads/write_bw.h"

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

    std::uint64_t payload_bytes() const;
    std::uint64_t fpdus() const;
    double simulated_seconds() const;

private:
    const config::Scenario& scenario_;
    std::unique_ptr<host_system> hosts_[2];
    std::unique_ptr<ethernet_link> link_;
    proto::PcapWriter pcap_;
    oob_channel oob_;
    std::unique_ptr<write_bw> workload_;
    bool done_ = false;
};

}  // namespace rnic::platform
