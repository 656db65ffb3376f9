// The scenario schema is declared in parts, one per area of the platform; scenario_schema.cpp
// puts them together. Each part declares its keys with unit, range, default and source.
#pragma once

#include <cstddef>
#include <string>

#include <boost/json/object.hpp>

#include "config/scenario.h"
#include "config/schema.h"

namespace rnic::platform {

void declare_host_memory(config::node& root);  // schema_host.cpp
void declare_pcie(config::node& root);         // schema_host.cpp (host_bus, pcie, qemu, pcix)
// Refuses host_bus.transport "qemu" where it makes no sense, and qemu.* keys without it.
std::string check_qemu(const config::scenario& s);  // schema_host.cpp
// hosts.<i>.host_memory (latency, bandwidth), .host_bus.kind, .pcie and .pcix: a named host's own
// host side, each key inheriting its global counterpart while unset.
void declare_host_bus(config::node& host);  // schema_host.cpp
// The key of host `host`'s setting `key` (e.g. "pcie.lanes"): under hosts.<host> where the hosts
// array names the host (an unset key there reads the global one), the global key for a derived host.
std::string host_setting_key(const config::scenario& s, int host, const std::string& key);  // schema_host.cpp
// The first hosts.<host> host-side key (host_bus, pcie, pcix, host_memory) the scenario sets ("" if none).
std::string host_bus_key_set(const config::scenario& s, std::size_t host);  // schema_host.cpp
// Refuses per-host bus keys where they cannot apply (host b behind peer.kind "socket", PCI-X for a
// QEMU guest) and PCIe sizes that are not powers of two, naming the key.
std::string check_host_buses(const config::scenario& s);  // schema_host.cpp
// Host `host`'s effective value of every per-host leaf of `object` ("pcie", "host_memory", ...), in
// the scenario's notation, for the results.
boost::json::object host_side_settings(const config::scenario& s, int host,
                                       const std::string& object);  // schema_host.cpp
void declare_topology(config::node& root);                          // schema_fabric.cpp
void declare_switch(config::node& root);                            // schema_fabric.cpp
// The fault keys of one direction of a link under `f`; with `inherit` (e.g. "link.a_to_b") each key
// inherits the key of the same name there while unset.
void declare_faults(config::node& f, const std::string& inherit);  // schema_links.cpp
// hosts.<i>.link: a fabric host's own link (rate, propagation, to_switch and from_switch faults).
void declare_host_link(config::node& host);  // schema_links.cpp
// The first leaf under `v` (an as-run subtree at `path`) that is set, i.e. not null; "" if none.
std::string first_key_set(const boost::json::value& v, const std::string& path);  // schema_links.cpp
// The first hosts.<host>.link key the scenario sets ("" if none).
std::string host_link_key_set(const config::scenario& s, std::size_t host);  // schema_links.cpp
// Refuses per-host link keys where a host has no link of its own (back_to_back).
std::string check_host_links(const config::scenario& s);  // schema_links.cpp
// Refuses a topology that cannot be built (host count, ports, leaves, duplicate identities).
std::string check_topology(const config::scenario& s);  // schema_fabric.cpp
void declare_rnic(config::node& root);                  // schema_rnic.cpp
// Refuse rnic.* combinations that cannot work, naming the key (schema_rnic.cpp): context cache
// geometry, atomics, the framing's needs, SACK recovery, MPA peer-to-peer, the receive path.
std::string check_context_cache(const config::scenario& s);
std::string check_atomics(const config::scenario& s);
std::string check_framing(const config::scenario& s);
std::string check_sack_recovery(const config::scenario& s);
std::string check_peer_to_peer(const config::scenario& s);
std::string check_rx_path(const config::scenario& s);
void declare_workload(config::node& root);  // schema_workload.cpp
// Refuse a workload the platform cannot run as configured, naming the key (schema_workload.cpp):
// message sizes against the buffer, QPs and regions against memory, fabric workloads' needs.
std::string check_powers_of_two(const config::scenario& s);
std::string check_workload(const config::scenario& s);
std::string check_fabric_workload(const config::scenario& s);

}  // namespace rnic::platform
