// The scenario schema is declared in parts, one per area of the platform; scenario_schema.cpp
// puts them together. Each part declares its keys with unit, range, default and source.
#pragma once

#include "config/schema.h"

namespace rnic::platform {

void declare_host_memory(config::Node& root);  // schema_host.cpp
void declare_pcie(config::Node& root);         // schema_host.cpp

}  // namespace rnic::platform
