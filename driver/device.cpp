#include "driver/device.h"

#include <cstring>

#include "core/log.h"
#include "proto/bytes.h"

#define DRV_LOG(lvl, expr) RNIC_LOG_AT(lvl, drv, bus_.now_ps(), bus_.host_name() + ".driver", expr)

namespace rnic::drv {

namespace {
constexpr std::uint32_t kExpectedId = 0x1a4e0001;
constexpr std::uint64_t kReadyTimeoutPs = 10'000'000'000ULL;  // 10 ms
constexpr std::uint64_t kReadyPollPs = 1'000'000ULL;          // 1 us
}  // namespace

bool device::init(const station_config& cfg) {
    cfg_ = cfg;
    const std::uint32_t id = read(regmap::ID);
    if (id != kExpectedId) {
        DRV_LOG(error, "unexpected device ID 0x" << std::hex << id << " (expected 0x" << kExpectedId << ")");
        return false;
    }
    const std::uint32_t n = cfg.command_ring_entries;
    if (n < 2 || n > 4096 || (n & (n - 1)) != 0) {
        DRV_LOG(error, "command ring size " << n << " is not a power of two in [2, 4096]");
        return false;
    }
    write(regmap::CTRL, regmap::ctrl::reset);
    producer_ = fetched_ = 0;  // the reset sets CMDQ_CONS to 0
    ring_ = bus_.dma_alloc(static_cast<std::size_t>(n) * regmap::kCommandSize, 4096);
    if (ring_ == 0) {
        DRV_LOG(error, "no host memory for the command ring");
        return false;
    }
    write(regmap::CMDQ_BASE_LO, static_cast<std::uint32_t>(ring_));
    write(regmap::CMDQ_BASE_HI, static_cast<std::uint32_t>(ring_ >> 32));
    write(regmap::CMDQ_ENTRIES, n);
    write(regmap::MAC_HI, static_cast<std::uint32_t>(cfg.mac[0]) << 8 | cfg.mac[1]);
    write(regmap::MAC_LO, static_cast<std::uint32_t>(cfg.mac[2]) << 24 | static_cast<std::uint32_t>(cfg.mac[3]) << 16 |
                              static_cast<std::uint32_t>(cfg.mac[4]) << 8 | cfg.mac[5]);
    write(regmap::IPV4_ADDR, cfg.ipv4);
    // MSI-X: every vector to the interrupt controller's address with its own number as data, then
    // unmasked (PCIe Base Spec §6.1.4); the host sees vector v as interrupt v.
    for (std::uint32_t v = 0; v < regmap::kMsixVectors; ++v) {
        const std::uint32_t entry = regmap::kMsixTableOffset + v * regmap::kMsixEntrySize;
        bus_.mmio_write32(entry + regmap::msix_off::addr_lo, 0xfee00000u);
        bus_.mmio_write32(entry + regmap::msix_off::addr_hi, 0);
        bus_.mmio_write32(entry + regmap::msix_off::data, v);
        bus_.mmio_write32(entry + regmap::msix_off::control, 0);
    }
    write(regmap::CTRL, regmap::ctrl::enable);
    const std::uint64_t deadline = bus_.now_ps() + kReadyTimeoutPs;
    std::uint32_t status = 0;
    while (((status = read(regmap::STATUS)) & regmap::status::ready) == 0) {
        if (bus_.now_ps() > deadline) {
            DRV_LOG(error, "device did not become ready within 10 ms");
            return false;
        }
        bus_.spend(kReadyPollPs);
    }
    if ((status & regmap::status::ctx_area) != 0) {
        // The device caches its QP contexts and STag entries and keeps the tables in host memory.
        const std::uint32_t bytes = read(regmap::CAP_CTX_BYTES);
        const std::uint64_t area = bus_.dma_alloc(bytes, 4096);
        if (area == 0) {
            DRV_LOG(error, "no host memory for the device's context tables (" << bytes << " bytes)");
            return false;
        }
        write(regmap::CTX_BASE_LO, static_cast<std::uint32_t>(area));
        write(regmap::CTX_BASE_HI, static_cast<std::uint32_t>(area >> 32));
        DRV_LOG(info, "context tables of " << bytes << " bytes at 0x" << std::hex << area);
    }
    ready_ = true;
    DRV_LOG(info, "device ready, command ring of " << n << " entries at 0x" << std::hex << ring_);
    return true;
}

command_result device::execute(regmap::command op, const std::array<std::uint64_t, 6>& params) {
    command_result res;
    if (!ready_) {
        DRV_LOG(error, "command " << static_cast<int>(op) << " issued before the device was initialised");
        res.status = regmap::cmd_status::bad_state;
        return res;
    }
    // One command at a time from this driver, but a command that timed out stays in the ring until
    // the firmware fetches it. Before writing a slot the driver makes sure the firmware has fetched
    // the command a ring ago (CMDQ_CONS), waiting up to the command timeout: it never overwrites
    // an unfetched command (the firmware would count a ring overrun). CMDQ_CONS is read only when
    // commands are outstanding, so a driver whose commands are all answered pays nothing for it.
    const std::uint32_t entries = cfg_.command_ring_entries;
    if (producer_ - fetched_ >= entries) {
        const std::uint64_t wait_deadline = bus_.now_ps() + cfg_.command_timeout_ps;
        while ((fetched_ = read(regmap::CMDQ_CONS)), producer_ - fetched_ >= entries) {
            if (bus_.now_ps() >= wait_deadline) {
                DRV_LOG(error, "command ring full: the firmware has fetched none of the last "
                                   << entries << " commands (consumer " << fetched_ << ", producer " << producer_
                                   << "); command " << static_cast<int>(op) << " not issued");
                res.ring_full = true;
                return res;
            }
            bus_.spend(kReadyPollPs);
        }
    }
    const std::uint32_t slot = producer_;
    const std::uint64_t addr =
        ring_ + static_cast<std::uint64_t>(slot % cfg_.command_ring_entries) * regmap::kCommandSize;
    std::uint8_t cmd[regmap::kCommandSize] = {};
    cmd[regmap::cmd_off::opcode] = static_cast<std::uint8_t>(op);
    proto::put_le32(cmd + regmap::cmd_off::cookie, slot);
    for (std::size_t i = 0; i < params.size(); ++i) proto::put_le64(cmd + regmap::cmd_off::param + 8 * i, params[i]);
    proto::put_le32(cmd + regmap::cmd_off::status, regmap::kStatusPending);
    bus_.mem_write(addr, cmd, sizeof cmd);
    ++producer_;
    write(regmap::CMDQ_PROD, producer_);
    const std::uint64_t deadline = bus_.now_ps() + cfg_.command_timeout_ps;
    for (;;) {
        std::uint8_t tail[8];
        bus_.mem_read(addr + regmap::cmd_off::status, tail, sizeof tail);
        const std::uint32_t st = proto::get_le32(tail);
        if (st != regmap::kStatusPending) {
            fetched_ = slot + 1;  // answered, so fetched, and so was every command before it
            res.status = static_cast<regmap::cmd_status>(st);
            res.result = proto::get_le32(tail + 4);
            return res;
        }
        const std::uint64_t now = bus_.now_ps();
        if (now >= deadline) {
            DRV_LOG(error, "firmware command " << static_cast<int>(op) << " timed out");
            res.timed_out = true;
            return res;
        }
        bus_.wait_interrupt(regmap::kMsixCommandVector, deadline - now);
    }
}

void device::ring_sq(std::uint32_t qpn, std::uint32_t producer) {
    bus_.mmio_write32(regmap::qp_doorbell(qpn) + regmap::kSqDoorbell, producer);
}

void device::ring_cq_consumer(std::uint32_t cqn, std::uint32_t consumer) {
    bus_.mmio_write32(regmap::kCqDoorbellBase + cqn * regmap::kCqDoorbellStride + regmap::kCqConsumer, consumer);
}

void device::arm_cq(std::uint32_t cqn) {
    bus_.mmio_write32(regmap::kCqDoorbellBase + cqn * regmap::kCqDoorbellStride + regmap::kCqArm, 1);
}

}  // namespace rnic::drv
