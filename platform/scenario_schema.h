// The scenario schema: every key a scenario file may set, with its unit, range, default and the
// source of the default. Declared once here; docs and `rnic-sim --help-scenario` print it.
#pragma once

#include "config/schema.h"

namespace rnic::platform {

const config::schema& scenario_schema();

}  // namespace rnic::platform
