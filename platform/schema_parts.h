// The scenario schema is declared in parts, one per area of the platform; scenario_schema.cpp
// puts them together. Each part declares its keys with unit, range, default and source.
#pragma once

#include <string>

#include "config/scenario.h"
#include "config/schema.h"

namespace rnic::platform {

void declare_host_memory(config::Node& root);  // schema_host.cpp
void declare_pcie(config::Node& root);         // schema_host.cpp
void declare_topology(config::Node& root);     // schema_fabric.cpp
void declare_switch(config::Node& root);       // schema_fabric.cpp
// Refuses a topology that cannot be built (host count, ports, leaves, duplicate identities).
std::string check_topology(const config::Scenario& s);  // schema_fabric.cpp

}  // namespace rnic::platform
