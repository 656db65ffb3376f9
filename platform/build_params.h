// Turns a validated scenario into the typed parameters of each model.
#pragma once

#include "config/scenario.h"
#include "host_system.h"
#include "link/ethernet_link.h"
#include "driver/examples/kv_example.h"
#include "workloads/incast.h"
#include "workloads/traffic_matrix.h"
#include "workloads/mixed.h"
#include "workloads/perf_lat.h"
#include "workloads/probe.h"
#include "workloads/rping.h"
#include "workloads/trace_replay.h"
#include "workloads/write_bw.h"

namespace rnic::platform {

host_params build_host_params(const config::Scenario& s, int host_index);
// Host memory and host-bus parameters (build_host_params.cpp).
void build_host_side_params(const config::Scenario& s, host_memory_params& memory, pcie_params& pcie);
ethernet_link_params build_link_params(const config::Scenario& s);
write_bw_config build_write_bw_config(const config::Scenario& s);
mixed_config build_mixed_config(const config::Scenario& s);
probe_config build_probe_config(const config::Scenario& s);
perf_lat_config build_perf_lat_config(const config::Scenario& s);
examples::kv_example_config build_kv_example_config(const config::Scenario& s);
rping_config build_rping_config(const config::Scenario& s);
// Reads workload.trace; a bad trace throws config::ScenarioError naming file and line.
trace_config build_trace_config(const config::Scenario& s);
incast_config build_incast_config(const config::Scenario& s);
traffic_matrix_config build_traffic_matrix_config(const config::Scenario& s);
drv::station_config build_station(const config::Scenario& s, int host_index);

}  // namespace rnic::platform
