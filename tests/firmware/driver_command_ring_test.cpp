// The driver's side of the firmware command ring (driver/device.cpp) against a plain fake device:
// a firmware that stops fetching commands must not make the driver write over commands it has not
// fetched. Commands that time out stay in the ring; once a whole ring of them is outstanding the
// next command is refused with ring_full (after the command timeout) instead of overwriting slot 0,
// and commands are issued again as soon as the firmware catches up.
#include <gtest/gtest.h>

#include "driver/device.h"
#include "driver/verbs.h"
#include "fake_device_bus.h"
#include "rnic/regmap.h"

namespace rnic::drv {
namespace {

constexpr std::uint64_t kTimeoutPs = 1'000'000'000ULL;  // 1 ms

TEST(DriverCommandRing, AFullRingOfUnfetchedCommandsRefusesTheNextWithRingFullAndRecovers) {
    fake_device_bus bus;
    device dev(bus);
    station_config st;
    st.command_ring_entries = 4;
    st.command_timeout_ps = kTimeoutPs;
    ASSERT_TRUE(dev.init(st));
    // The firmware fetches nothing: four commands time out and stay in the ring.
    for (int i = 0; i < 4; ++i) {
        const command_result r = dev.execute(regmap::command::nop, {});
        EXPECT_TRUE(r.timed_out) << i;
        EXPECT_FALSE(r.ring_full) << i;
    }
    EXPECT_EQ(bus.doorbells, 4u);
    // The fifth would overwrite slot 0, which the firmware has not fetched: refused, after waiting
    // the command timeout for the firmware, and not written.
    const std::uint64_t before = bus.now_ps();
    const command_result full = dev.execute(regmap::command::query_qp, {});
    EXPECT_TRUE(full.ring_full);
    EXPECT_FALSE(full.answered());
    EXPECT_GE(bus.now_ps() - before, kTimeoutPs);
    EXPECT_EQ(bus.doorbells, 4u);
    EXPECT_EQ(bus.opcode_at(0), static_cast<std::uint8_t>(regmap::command::nop));
    // The firmware catches up: the next commands are issued and answered.
    bus.answering = true;
    bus.catch_up();
    for (int i = 0; i < 6; ++i) {
        const command_result r = dev.execute(regmap::command::nop, {});
        EXPECT_TRUE(r.answered()) << i;
        EXPECT_EQ(r.status, regmap::cmd_status::ok) << i;
        EXPECT_EQ(r.result, 4u + static_cast<std::uint32_t>(i)) << i;
    }
}

TEST(DriverCommandRing, AnsweredCommandsNeverReadTheConsumerRegister) {
    // A well-behaved firmware: the driver's back-pressure costs no register read (no timing moves).
    struct counting_bus : fake_device_bus {
        int consumer_reads = 0;
        std::uint32_t mmio_read32(std::uint32_t offset) override {
            if (offset == regmap::CMDQ_CONS) ++consumer_reads;
            return fake_device_bus::mmio_read32(offset);
        }
    } bus;
    bus.answering = true;
    device dev(bus);
    station_config st;
    st.command_ring_entries = 4;
    ASSERT_TRUE(dev.init(st));
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(dev.execute(regmap::command::nop, {}).answered());
    EXPECT_EQ(bus.consumer_reads, 0);
}

}  // namespace
}  // namespace rnic::drv
