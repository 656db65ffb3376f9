// A plain fake of the device for the driver library's unit tests (tests/firmware/driver_*_test.cpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "driver/device.h"
#include "proto/bytes.h"
#include "rnic/regmap.h"

namespace rnic::drv {

// BAR0 registers as the driver reads them, host memory, and a firmware that answers commands only
// while `answering` (at the doorbell, all it has not answered) and reports CMDQ_CONS as it goes.
class fake_device_bus : public host_bus {
public:
    bool answering = false;
    std::uint32_t consumer = 0;   // CMDQ_CONS
    std::uint32_t doorbells = 0;  // CMDQ_PROD writes
    std::uint32_t last_producer = 0;
    std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(1 << 20);

    std::uint32_t mmio_read32(std::uint32_t offset) override {
        switch (offset) {
        case regmap::ID:
            return 0x1a4e0001;
        case regmap::STATUS:
            return regmap::status::ready;
        case regmap::CMDQ_CONS:
            return consumer;
        default:
            return regs_[offset];
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
            proto::put_le32(mem.data() + slot + regmap::cmd_off::status,
                            static_cast<std::uint32_t>(regmap::cmd_status::ok));
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

    // Parameter i (p0..p5) of the command in ring slot `slot`, as the driver wrote it.
    std::uint64_t param_at(std::uint32_t slot, unsigned i) const {
        const std::uint64_t ring = std::uint64_t{regs_.at(regmap::CMDQ_BASE_HI)} << 32 | regs_.at(regmap::CMDQ_BASE_LO);
        return proto::get_le64(mem.data() + ring + (slot % regs_.at(regmap::CMDQ_ENTRIES)) * regmap::kCommandSize +
                               regmap::cmd_off::param + 8 * i);
    }

private:
    std::map<std::uint32_t, std::uint32_t> regs_;
    std::uint64_t next_ = 0x1000, now_ = 0;
    std::string name_ = "fake";
};

}  // namespace rnic::drv
