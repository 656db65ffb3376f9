// What the control processor runs: a program given to it by whoever assembles the device (the
// platform gives it the firmware of firmware/), which reaches the hardware only through the HAL it
// is made with (cp/firmware_hal.h). The control-processor model knows this interface and nothing of
// the firmware itself, as host_cpu knows a host program only as a function of the host_bus.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "cp/firmware_hal.h"

namespace rnic::fw {

class program {
public:
    virtual ~program() = default;

    // The main loop, on the control processor's thread; never returns.
    [[noreturn]] virtual void run() = 0;
    // Commands executed from the driver's command ring: the device's progress (rnic_device::progress).
    virtual std::uint64_t commands_executed() const = 0;
    // Whether a CTRL.RESET has anything of the program's to reset (a device fresh from power-on has
    // not: its reset changes nothing and takes no time).
    virtual bool has_state() const = 0;
    // The program's own counters for the control processor's statistics, in the order reported.
    virtual std::vector<std::pair<const char*, std::uint64_t>> counters() const = 0;
};

// Makes the program on the HAL of the control processor that will run it (called once, when the
// control processor is built).
using program_factory = std::function<std::unique_ptr<program>(hal&)>;

}  // namespace rnic::fw
