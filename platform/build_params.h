// Turns a validated scenario into the typed parameters of each model.
#pragma once

#include "config/scenario.h"
#include "host_system.h"
#include "link/ethernet_link.h"
#include "workloads/kv_example.h"
#include "workloads/vipl_example.h"
#include "workloads/incast.h"
#include "workloads/traffic_matrix.h"
#include "workloads/mixed.h"
#include "workloads/perf_lat.h"
#include "workloads/perf_server.h"
#include "workloads/probe.h"
#include "workloads/hostile.h"
#include "workloads/rping.h"
#include "workloads/trace_replay.h"
#include "workloads/write_bw.h"

namespace rnic::platform {

host_params build_host_params(const config::scenario& s, int host_index);
// A link from the keys of its rate, propagation and two fault directions (a_to_b: from port a), the
// MTU of link.mtu and simulation.seed as its seed (callers with several links give each its own).
ethernet_link_params build_link_params(const config::scenario& s, const std::string& rate,
                                       const std::string& propagation, const std::string& a_to_b,
                                       const std::string& b_to_a);
// The one link of back_to_back (link.*; port a is host a).
ethernet_link_params build_link_params(const config::scenario& s);
// Faults of one direction of a link from the fault keys under `prefix` (link.a_to_b,
// hosts.3.link.to_switch, topology.uplink.up, ...); an unreadable loss trace throws naming its key.
fault_config build_faults(const config::scenario& s, const std::string& prefix);
// The key of host i's link setting `what` ("rate", "propagation", "to_switch", "from_switch") in a
// star or leaf_spine: under hosts.<i>.link where the hosts array names host i (whose unset keys read
// link.*), the link.* key itself for a derived host.
std::string host_link_key(const config::scenario& s, int host_index, const std::string& what);
// Host i's link to its switch (port a: the host); the seed is the caller's (one per link).
ethernet_link_params build_host_link_params(const config::scenario& s, int host_index);
write_bw_config build_write_bw_config(const config::scenario& s);
mixed_config build_mixed_config(const config::scenario& s);
probe_config build_probe_config(const config::scenario& s);
perf_lat_config build_perf_lat_config(const config::scenario& s);
examples::kv_example_config build_kv_example_config(const config::scenario& s);
examples::vipl_example_config build_vipl_example_config(const config::scenario& s);
rping_config build_rping_config(const config::scenario& s);
perf_server_config build_perf_server_config(const config::scenario& s);
hostile_config build_hostile_config(const config::scenario& s);
// Reads workload.trace; a bad trace throws config::ScenarioError naming file and line.
trace_config build_trace_config(const config::scenario& s);
incast_config build_incast_config(const config::scenario& s);
traffic_matrix_config build_traffic_matrix_config(const config::scenario& s);
drv::station_config build_station(const config::scenario& s, int host_index);

}  // namespace rnic::platform
