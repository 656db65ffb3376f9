// The driver's side of the firmware command ring (driver/device.cpp) against a plain fake device:
// a firmware that stops fetching commands must not make the driver write over commands it has not
// fetched. Commands that time out stay in the ring; once a whole ring of them is outstanding the
// next command is refused with ring_full (after the command timeout) instead of overwriting slot 0,
// and commands are issued again as soon as the firmware catches up.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "driver/device.h"
#include "driver/verbs.h"
#include "proto/bytes.h"
#include "rnic/regmap.h"

namespace rnic::drv {
namespace {

// BAR0 registers as the driver reads them, host memory, and a firmware that answers commands only
// while `answering` (at the doorbell, all it has not answered) and reports CMDQ_CONS as it goes.
class fake_device_bus : public host_bus {
public:
    bool answering = false;
    std::uint32_t consumer = 0;        // CMDQ_CONS
    std::uint32_t doorbells = 0;       // CMDQ_PROD writes
    std::uint32_t last_producer = 0;
    std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(1 << 20);

    std::uint32_t mmio_read32(std::uint32_t offset) override {
        switch (offset) {
            case regmap::ID: return 0x1a4e0001;
            case regmap::STATUS: return regmap::status::ready;
            case regmap::CMDQ_CONS: return consumer;
            default: return regs_[offset];
        }
    }
    void mmio_write32(std::uint32_t offset, std::uint32_t value) override {
        regs_[offset] = value;
        if (offset == regmap::CMDQ_PROD) {
            ++doorbells;
            last_producer = value;
            if (answering) catch_up();
        }
    }
    // The firmware fetches and answers every command up to the last doorbell.
    void catch_up() {
        const std::uint64_t ring = std::uint64_t{regs_[regmap::CMDQ_BASE_HI]} << 32 | regs_[regmap::CMDQ_BASE_LO];
        const std::uint32_t entries = regs_[regmap::CMDQ_ENTRIES];
        for (; consumer != last_producer; ++consumer) {
            const std::uint64_t slot = ring + (consumer % entries) * regmap::kCommandSize;
            proto::put_le32(mem.data() + slot + regmap::cmd_off::status, static_cast<std::uint32_t>(regmap::cmd_status::ok));
            proto::put_le32(mem.data() + slot + regmap::cmd_off::result, consumer);
        }
    }
    std::uint8_t opcode_at(std::uint32_t slot) const {
        const std::uint64_t ring = std::uint64_t{regs_.at(regmap::CMDQ_BASE_HI)} << 32 | regs_.at(regmap::CMDQ_BASE_LO);
        return mem[ring + (slot % regs_.at(regmap::CMDQ_ENTRIES)) * regmap::kCommandSize + regmap::cmd_off::opcode];
    }
    void mem_read(std::uint64_t addr, void* dst, std::size_t len) override { std::memcpy(dst, mem.data() + addr, len); }
    void mem_write(std::uint64_t addr, const void* src, std::size_t len) override {
        std::memcpy(mem.data() + addr, src, len);
    }
    std::uint64_t dma_alloc(std::size_t len, std::size_t align) override {
        next_ = (next_ + align - 1) / align * align;
        const std::uint64_t a = next_;
        next_ += len;
        return next_ <= mem.size() ? a : 0;
    }
    void dma_free(std::uint64_t) override {}
    bool wait_interrupt(unsigned, std::uint64_t timeout_ps) override {
        now_ += timeout_ps;
        return false;
    }
    void spend(std::uint64_t ps) override { now_ += ps; }
    std::uint64_t now_ps() override { return now_; }
    const std::string& host_name() const override { return name_; }

private:
    std::map<std::uint32_t, std::uint32_t> regs_;
    std::uint64_t next_ = 0x1000, now_ = 0;
    std::string name_ = "fake";
};

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
