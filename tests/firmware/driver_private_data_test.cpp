// The driver library's limit on the private data of an MPA Request (driver/verbs.cpp, connect):
// RFC 5044 §7.1 caps PD_Length at 512 bytes, and under MPA revision 2 the RFC 6581 §9.1 IRD/ORD
// word takes 4 of them, so a consumer may give at most regmap::kMaxConnPrivateData = 508 bytes.
// More is refused by name before anything reaches the device; 508 go to the device whole.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "driver/verbs.h"
#include "fake_device_bus.h"
#include "rnic/regmap.h"

namespace rnic::drv {
namespace {

constexpr std::uint32_t kPeerIp = 0x0a000002;
constexpr std::uint16_t kPeerPort = 7174, kLocalPort = 40000;

struct connected_context {
    fake_device_bus bus;
    context ctx{bus};
    queue_pair* qp = nullptr;
    connected_context() {
        bus.answering = true;  // every command ok
        std::uint32_t pd = 0;
        completion_queue* cq = nullptr;
        EXPECT_EQ(ctx.open(station_config{}), status::ok);
        EXPECT_EQ(ctx.alloc_pd(&pd), status::ok);
        EXPECT_EQ(ctx.create_cq(16, &cq), status::ok);
        EXPECT_EQ(ctx.create_qp(pd, cq, cq, 4, 4, &qp), status::ok);
    }
};

std::vector<std::uint8_t> bytes_of(std::size_t n) {
    std::vector<std::uint8_t> v(n);
    std::iota(v.begin(), v.end(), std::uint8_t{1});
    return v;
}

TEST(DriverPrivateData, AnMpaRequestWithMoreThan508BytesIsRefusedBeforeTheDevice) {
    connected_context c;
    ASSERT_NE(c.qp, nullptr);
    const std::uint32_t doorbells = c.bus.doorbells;
    const std::vector<std::uint8_t> too_long = bytes_of(regmap::kMaxConnPrivateData + 1);
    EXPECT_EQ(c.ctx.connect(c.qp, kPeerIp, kPeerPort, kLocalPort, {}, nullptr, &too_long), status::invalid_argument);
    EXPECT_EQ(c.bus.doorbells, doorbells);  // no command issued
    // The QP is untouched by the refusal: a connect with 508 bytes goes ahead on it.
    const std::vector<std::uint8_t> most = bytes_of(regmap::kMaxConnPrivateData);
    EXPECT_EQ(c.ctx.connect(c.qp, kPeerIp, kPeerPort, kLocalPort, {}, nullptr, &most), status::ok);
    ASSERT_EQ(c.bus.doorbells, doorbells + 1);
    const std::uint32_t slot = c.bus.last_producer - 1;
    EXPECT_EQ(c.bus.opcode_at(slot), static_cast<std::uint8_t>(regmap::command::connect));
    EXPECT_NE(c.bus.param_at(slot, 3) & regmap::kConnectPrivateData, 0u);
    EXPECT_EQ(c.bus.param_at(slot, 5) >> 32 & 0xffff, regmap::kMaxConnPrivateData);
    const std::uint64_t at = c.bus.param_at(slot, 4);
    ASSERT_NE(at, 0u);
    EXPECT_EQ(std::vector<std::uint8_t>(c.bus.mem.begin() + static_cast<std::ptrdiff_t>(at),
                                        c.bus.mem.begin() + static_cast<std::ptrdiff_t>(at + most.size())),
              most);
}

}  // namespace
}  // namespace rnic::drv
