// The driver-ring shadow of the hostile workload (platform/workloads/ring_guard.*): the device may
// write whole CQEs into CQ rings and the status and result words of command entries; any other byte
// it writes into ring memory is counted, and writes outside every ring are told apart.
#include <gtest/gtest.h>

#include "rnic/regmap.h"
#include "workloads/ring_guard.h"

namespace rnic::platform {
namespace {

using rk = ring_guard::ring_kind;

ring_guard sample() {
    ring_guard g;
    g.add(0x10000, 64 * regmap::kCqeSize, rk::cq);
    g.add(0x20000, 16 * regmap::kSendWqeSize, rk::sq);
    g.add(0x30000, 16 * regmap::kRecvWqeSize, rk::rq);
    g.add(0x40000, 16 * regmap::kCommandSize, rk::command);
    g.exclude(0x100000, 0x10000);
    return g;
}

TEST(RingGuard, CqesAndCommandAnswersAreAllowed) {
    ring_guard g = sample();
    g.on_device_write(0x10000 + 5 * regmap::kCqeSize, regmap::kCqeSize);
    g.on_device_write(0x40000 + 3 * regmap::kCommandSize + regmap::cmd_off::status, 8);  // status + result
    g.on_device_write(0x100000 + 17, 999);                                               // the arena: its own shadow
    EXPECT_EQ(g.bytes_outside_grants(), 0u);
    EXPECT_EQ(g.allowed_bytes(), regmap::kCqeSize + 8);
    EXPECT_EQ(g.bytes_elsewhere(), 0u);
    EXPECT_TRUE(g.findings().empty());
}

TEST(RingGuard, EveryOtherRingByteTheDeviceWritesIsCounted) {
    ring_guard g = sample();
    g.on_device_write(0x20000 + 64, 16);                          // a send WQE
    g.on_device_write(0x30000, 4);                                // a receive WQE
    g.on_device_write(0x10000 + 8, regmap::kCqeSize);             // a CQE across two slots
    g.on_device_write(0x40000 + regmap::kCommandSize, 4);         // a command's opcode
    g.on_device_write(0x40000 + regmap::cmd_off::status - 2, 6);  // 2 bytes before the status word, 4 in it
    EXPECT_EQ(g.bytes_outside_grants(), 16u + 4u + regmap::kCqeSize + 4u + 2u);
    EXPECT_EQ(g.allowed_bytes(), 4u);
    EXPECT_EQ(g.findings().size(), 5u);
}

TEST(RingGuard, AWriteAcrossRingsAndFreedRingsIsSplit) {
    ring_guard g = sample();
    // From the last 8 bytes of the SQ ring into the memory after it: 8 forbidden, 24 elsewhere.
    g.on_device_write(0x20000 + 16 * regmap::kSendWqeSize - 8, 32);
    EXPECT_EQ(g.bytes_outside_grants(), 8u);
    EXPECT_EQ(g.bytes_elsewhere(), 24u);
    g.remove(0x30000);  // a destroyed QP's receive ring: a late write there is no ring's any more
    g.on_device_write(0x30000, regmap::kRecvWqeSize);
    EXPECT_EQ(g.bytes_outside_grants(), 8u);
    EXPECT_EQ(g.bytes_elsewhere(), 24u + regmap::kRecvWqeSize);
}

}  // namespace
}  // namespace rnic::platform
