// Who each host is: its name, MAC and IPv4 address, from the scenario's `hosts` array where it names
// the host, derived from the host's index otherwise (docs/architecture.md, "Fabric"). The one place
// that knows the derivation, so the assembly, the schema checks and the workloads agree.
#pragma once

#include <cstdint>
#include <string>

#include "config/scenario.h"
#include "proto/net.h"

namespace rnic::platform {

struct host_identity {
    std::string name;
    std::string mac;   // "02:00:00:01:00:05"
    std::string ipv4;  // "10.0.0.6"
    std::string mpa_rtr = "same";
    std::string vitcp_reliability = "same";  // VI/TCP: this host's level when it differs (seed 003 §3.3)
    std::uint64_t buffer_capacity = 0;       // this NIC's buffer memory when it differs (0: rnic.buffer.capacity)
    std::string key;                         // where it came from: "hosts.3" (named) or "topology.hosts" (derived)
};

// Hosts in the run: 2 for back_to_back, topology.hosts otherwise.
int host_count(const config::scenario& s);

// Host i's identity (0 <= i < host_count(s)).
host_identity identity_of(const config::scenario& s, int i);

// Host i's NIC buffer memory: its own hosts.i.buffer_capacity, else rnic.buffer.capacity.
std::uint64_t buffer_capacity_of(const config::scenario& s, int i);

// The smallest NIC buffer memory of the run, and the key that set it (what a check of send regions
// against buffer memory must hold for every host).
struct smallest_buffer {
    std::uint64_t bytes = 0;
    std::string key;
};
smallest_buffer smallest_buffer_capacity(const config::scenario& s);

// Parses "aa:bb:cc:dd:ee:ff"; false on anything else.
bool parse_mac(const std::string& text, proto::net::mac_address* out);

}  // namespace rnic::platform
