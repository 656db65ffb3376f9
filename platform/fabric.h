// The network of a star or leaf-spine topology (docs/architecture.md, "Fabric"): the switches, one
// ethernet_link per host joining its NIC to a switch port, the leaf-spine uplinks, the forwarding
// tables, and the captures. The hosts themselves belong to the simulation; this joins them.
#pragma once

#include <boost/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "driver/device.h"
#include "host_system.h"
#include "link/ethernet_link.h"
#include "proto/pcap.h"
#include "switch/ethernet_switch.h"

namespace rnic::platform {

class fabric {
public:
    // Builds the topology of `s` (star or leaf_spine) around `hosts` (station i is host i's MAC and
    // address). `pcap` is "" (no capture), a file (frames as delivered to the hosts, each once) or a
    // pattern with %h (one file per host link, both directions, %h replaced by the host's name).
    // Throws std::runtime_error when a capture cannot be opened.
    fabric(const config::scenario& s, const std::vector<host_system*>& hosts,
           const std::vector<drv::station_config>& stations, const std::string& pcap);
    ~fabric();

    void report(boost::json::object& modules) const;  // "links", "uplinks", "switches"
    boost::json::object describe() const;             // kind, hosts, which switch port each host is on

private:
    void join(host_system& host, ethernet_switch& sw, int port, std::size_t index, const ethernet_link_params& p,
              const std::string& pcap);

    std::string kind_;
    std::vector<std::unique_ptr<ethernet_switch>> switches_;  // star: one; leaf_spine: leaves, then spines
    std::vector<std::unique_ptr<ethernet_link>> host_links_;  // host i's link (port a: the host)
    std::vector<std::unique_ptr<ethernet_link>> uplinks_;     // leaf l to spine s at l * spines + s (port a: leaf)
    std::vector<std::unique_ptr<proto::pcap_writer>> pcaps_;
    std::vector<std::string> host_names_;
    std::vector<std::pair<std::string, int>> attachment_;  // host i: switch name, port
};

}  // namespace rnic::platform
