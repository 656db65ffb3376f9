// Assembles the platform from one scenario (the hosts, the link or the fabric of switches, the
// workload), runs it, and reports results. The one place where hosts, network and workload are put
// together.
#pragma once

#include <boost/json.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "host_system.h"
#include "link/ethernet_link.h"
#include "link/socket_bridge.h"
#include "oob.h"
#include "proto/pcap.h"
#include "watchdog.h"
#include "qemu/guest_ram.h"
#include "qemu/qemu_remote.h"
#include "fabric.h"
#include "workloads/fabric_workload.h"
#include "workloads/workload.h"

namespace rnic::platform {

class simulation {
public:
    // Elaborates the platform. Throws std::runtime_error when the pcap cannot be opened.
    simulation(const config::scenario& scenario, const std::string& pcap_path);
    ~simulation();

    // Runs until the workload is done or the time limit; returns true when the workload finished and
    // every integrity check passed.
    bool run();

    // Everything but wall-clock figures: deterministic for a scenario and seed (with a QEMU guest
    // on host a, what the guest does decides).
    boost::json::object results() const;
    // Wall-clock figures of the QEMU transport (empty without it), for the results' wallclock key.
    boost::json::object qemu_wallclock() const;
    void print_summary(std::ostream& os) const;
    void print_latency_summary(std::ostream& os) const;  // the *_lat workloads: perftest's columns
    void print_incast_summary(std::ostream& os) const;
    void print_matrix_summary(std::ostream& os) const;  // all_to_all, permutation
    // "<what>: G Gb/s over T us; data ok" per row, then the workload's error if any.
    static void print_goodput_rows(std::ostream& os, const char* what, const workload_result& r);

    std::uint64_t payload_bytes() const;
    std::uint64_t fpdus() const;
    double simulated_seconds() const;

private:
    // The stuck-run watchdog (simulation.watchdog; 0: off): the NICs' progress count, and the dump
    // of every host's outstanding work when a run is stuck, for the results and stderr.
    std::uint64_t progress() const;
    void record_stuck(std::uint64_t last_progress_ps);
    std::uint64_t watchdog_interval_ps_ = 0;
    bool stuck_ = false;
    boost::json::object stuck_dump_;
    // Each host's effective bus and memory-timing keys as "settings" of its <host>.pcie and <host>.mem
    // entries, when any host sets keys of its own (hosts.<i>.pcie.*, ...).
    void report_host_side_settings(boost::json::object& modules) const;

    const config::scenario& scenario_;
    std::vector<std::unique_ptr<host_system>> hosts_;
    std::unique_ptr<ethernet_link> link_;        // back_to_back
    std::unique_ptr<fabric> fabric_;             // star, leaf_spine
    std::unique_ptr<socket_bridge> peer_;        // peer.kind "socket": a real host b behind a socket
    std::unique_ptr<unplugged_port> unplugged_;  // then the simulated host b's NIC is off the wire
    // host_bus.transport "qemu": host a's memory is the guest's RAM and its program serves the proxy.
    std::unique_ptr<qemu::guest_ram> guest_ram_;
    std::unique_ptr<qemu::qemu_remote> qemu_;
    std::string qemu_error_;
    proto::pcap_writer pcap_;
    oob_channel oob_;
    std::unique_ptr<fabric_workload> workload_;  // by workload.type; two-host ones wrapped
    const host_workload* two_host_ = nullptr;    // the wrapped one, if any
    bool done_ = false;
};

}  // namespace rnic::platform
