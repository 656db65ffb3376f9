// Register-level layer and device driver: BAR0 access by register name (regmap.h), reset and
// initialisation, the firmware command ring, doorbells. The verbs layer (verbs.h) builds on it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "host/host_bus.h"
#include "rnic/regmap.h"

namespace rnic::drv {

struct station_config {
    std::array<std::uint8_t, 6> mac{};
    std::uint32_t ipv4 = 0;
    std::uint32_t command_ring_entries = 16;
    std::uint64_t command_timeout_ps = 100'000'000'000ULL;  // 100 ms
};

struct command_result {
    regmap::cmd_status status = regmap::cmd_status::ok;
    std::uint32_t result = 0;
    bool timed_out = false;
    // Not issued: the ring still held a whole ring of commands the firmware had not fetched after
    // the command timeout (commands that timed out before; a firmware that stopped).
    bool ring_full = false;
    bool answered() const { return !timed_out && !ring_full; }
};

class device {
public:
    explicit device(host_bus& bus) : bus_(bus) {}

    // Register layer.
    std::uint32_t read(regmap::reg r) { return bus_.mmio_read32(r); }
    void write(regmap::reg r, std::uint32_t v) { bus_.mmio_write32(r, v); }

    // Checks the ID, resets, sets up the command ring and the station address, enables the device
    // and waits for the firmware to report READY. Returns false (and logs) when something is wrong.
    bool init(const station_config& cfg);

    // Posts one firmware command and waits for its completion (interrupt, with polling fallback).
    command_result execute(regmap::command op, const std::array<std::uint64_t, 6>& params);

    void ring_sq(std::uint32_t qpn, std::uint32_t producer);
    void ring_cq_consumer(std::uint32_t cqn, std::uint32_t consumer);
    void arm_cq(std::uint32_t cqn);

    host_bus& bus() { return bus_; }
    const std::string& name() const { return bus_.host_name(); }
    // The firmware command ring: host address and entries (0 before init).
    std::uint64_t command_ring() const { return ring_; }
    std::uint32_t command_ring_entries() const { return cfg_.command_ring_entries; }

private:
    host_bus& bus_;
    station_config cfg_;
    std::uint64_t ring_ = 0;
    std::uint32_t producer_ = 0;
    std::uint32_t fetched_ = 0;  // commands the firmware is known to have fetched (CMDQ_CONS)
    bool ready_ = false;
};

}  // namespace rnic::drv
