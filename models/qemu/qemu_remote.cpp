#include "qemu/qemu_remote.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>

#include "core/log.h"
#include "rnic/regmap.h"

namespace rnic::qemu {
namespace {

using steady = std::chrono::steady_clock;

std::string hex(std::uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

}  // namespace

qemu_remote::qemu_remote(const std::string& name, const qemu_remote_params& params, guest_ram& ram)
    : name_(name), params_(params), ram_(ram), channel_(params.fd), config_(rnic_pci_identity()) {}

qemu_remote::~qemu_remote() {
    for (int& fd : irqfds_) {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
    if (channel_.fd() >= 0) ::close(channel_.fd());
}

bool qemu_remote::reply(std::uint64_t value) {
    return channel_.send(mpqemu::encode_ret(value));
}

std::uint64_t qemu_remote::bar_read(drv::host_bus& bus, const mpqemu::bar_access& a) {
    std::uint32_t off = 0;
    if (!a.memory || !config_.bar0_decode(a.address, a.size, &off)) {
        ++stats_.undecoded_accesses;
        RNIC_LOG_AT(warn, host, bus.now_ps(), name_,
                    "BAR read of " << a.size << " bytes at " << hex(a.address) << (a.memory ? "" : " (I/O space)")
                                   << " is outside BAR0 (base " << hex(config_.bar0_base()) << ", memory decoding "
                                   << (config_.memory_enabled() ? "on" : "off") << "): reads as all-ones");
        return ~std::uint64_t{0};
    }
    std::uint64_t v = 0;
    if (a.size == 8 && off % 8 == 0) {
        const std::uint64_t lo = bus.mmio_read32(off);
        v = lo | static_cast<std::uint64_t>(bus.mmio_read32(off + 4)) << 32;
    } else if (a.size == 4 && off % 4 == 0) {
        v = bus.mmio_read32(off);
    } else if (a.size < 4 && off % 4 + a.size <= 4) {
        // The device takes aligned words only; a narrower read returns its bytes of the word.
        v = (bus.mmio_read32(off & ~3u) >> (8 * (off % 4))) & ((1u << (8 * a.size)) - 1);
    } else {
        ++stats_.refused_accesses;
        RNIC_LOG_AT(error, host, bus.now_ps(), name_,
                    "BAR0 read of " << a.size << " bytes at offset " << hex(off)
                                    << " refused: the device takes aligned 32- and 64-bit accesses only");
        return ~std::uint64_t{0};
    }
    RNIC_LOG_AT(debug, host, bus.now_ps(), name_,
                "BAR0 read " << a.size << " bytes at " << hex(off) << " = " << hex(v));
    return v;
}

void qemu_remote::bar_write(drv::host_bus& bus, const mpqemu::bar_access& a) {
    std::uint32_t off = 0;
    if (!a.memory || !config_.bar0_decode(a.address, a.size, &off)) {
        ++stats_.undecoded_accesses;
        RNIC_LOG_AT(warn, host, bus.now_ps(), name_,
                    "BAR write of " << a.size << " bytes at " << hex(a.address) << " is outside BAR0 (base "
                                    << hex(config_.bar0_base()) << ", memory decoding "
                                    << (config_.memory_enabled() ? "on" : "off") << "): ignored");
        return;
    }
    RNIC_LOG_AT(debug, host, bus.now_ps(), name_,
                "BAR0 write " << a.size << " bytes at " << hex(off) << " = " << hex(a.value));
    if (a.size == 8 && off % 8 == 0) {
        bus.mmio_write32(off, static_cast<std::uint32_t>(a.value));
        bus.mmio_write32(off + 4, static_cast<std::uint32_t>(a.value >> 32));
    } else if (a.size == 4 && off % 4 == 0) {
        bus.mmio_write32(off, static_cast<std::uint32_t>(a.value));
    } else {
        ++stats_.refused_accesses;
        RNIC_LOG_AT(error, host, bus.now_ps(), name_,
                    "BAR0 write of " << a.size << " bytes at offset " << hex(off)
                                     << " refused: the device takes aligned 32- and 64-bit accesses only");
    }
}

bool qemu_remote::handle(drv::host_bus& bus, mpqemu::message& m) {
    ++stats_.messages;
    std::string error;
    const auto c = static_cast<mpqemu::cmd>(m.cmd);
    switch (c) {
    case mpqemu::cmd::sync_sysmem: {
        std::vector<mpqemu::ram_region> regions;
        ++stats_.syncs;
        if (!mpqemu::decode_sync_sysmem(m, &regions, &error) || !ram_.sync(std::move(regions), &error)) {
            ++stats_.sync_errors;
            ram_.clear();
            RNIC_LOG_AT(error, host, bus.now_ps(), name_,
                        "guest RAM not mapped: " << error << " (the device's DMA is refused until the next sync)");
        } else {
            RNIC_LOG_AT(debug, host, bus.now_ps(), name_,
                        "guest RAM mapped: " << ram_.regions() << " regions, " << ram_.bytes() << " bytes");
        }
        return true;  // no reply
    }
    case mpqemu::cmd::pci_cfgread:
    case mpqemu::cmd::pci_cfgwrite: {
        mpqemu::config_access a;
        if (!mpqemu::decode_config(m, &a, &error)) {
            ++stats_.bad_messages;
            m.close_fds();
            RNIC_LOG_AT(error, host, bus.now_ps(), name_, error << " (answered with all-ones)");
            return reply(~std::uint64_t{0});
        }
        if (c == mpqemu::cmd::pci_cfgread) {
            ++stats_.config_reads;
            const std::uint32_t v = config_.read(a.address, a.length);
            RNIC_LOG_AT(trace, host, bus.now_ps(), name_,
                        "config read " << a.length << " at " << hex(a.address) << " = " << hex(v));
            return reply(v);
        }
        ++stats_.config_writes;
        const bool master = config_.bus_master();
        config_.write(a.address, a.value, a.length);
        ram_.set_bus_master(config_.bus_master());
        RNIC_LOG_AT(trace, host, bus.now_ps(), name_,
                    "config write " << a.length << " at " << hex(a.address) << " = " << hex(a.value));
        if (master != config_.bus_master()) {
            RNIC_LOG_AT(info, host, bus.now_ps(), name_,
                        "bus mastering " << (config_.bus_master() ? "enabled" : "disabled") << " by the guest");
        }
        return reply(0);
    }
    case mpqemu::cmd::bar_read:
    case mpqemu::cmd::bar_write: {
        const steady::time_point t0 = steady::now();
        mpqemu::bar_access a;
        if (!mpqemu::decode_bar(m, &a, &error)) {
            ++stats_.bad_messages;
            m.close_fds();
            RNIC_LOG_AT(error, host, bus.now_ps(), name_, error << " (answered with all-ones)");
            return reply(~std::uint64_t{0});
        }
        std::uint64_t v = 0;
        if (c == mpqemu::cmd::bar_read) {
            ++stats_.bar_reads;
            v = bar_read(bus, a);
        } else {
            ++stats_.bar_writes;
            bar_write(bus, a);
        }
        const bool ok = reply(v);
        stats_.bar_wall += steady::now() - t0;
        return ok;
    }
    case mpqemu::cmd::device_reset:
        ++stats_.resets;
        m.close_fds();
        RNIC_LOG_AT(info, host, bus.now_ps(), name_, "device reset by QEMU");
        config_.reset();
        ram_.set_bus_master(false);
        bus.mmio_write32(regmap::CTRL, regmap::ctrl::reset);
        return reply(0);
    case mpqemu::cmd::set_irqfd:
        ++stats_.irqfds;
        if (!m.data.empty() || m.fds.size() != 2) {
            ++stats_.bad_messages;
            RNIC_LOG_AT(error, host, bus.now_ps(), name_,
                        "set_irqfd with " << m.data.size() << " bytes of data and " << m.fds.size()
                                          << " descriptors (0 and 2 expected): ignored");
            m.close_fds();
            return true;
        }
        for (int i = 0; i < 2; ++i) {
            if (irqfds_[i] >= 0) ::close(irqfds_[i]);
            irqfds_[i] = m.fds[static_cast<std::size_t>(i)];
        }
        m.fds.clear();
        RNIC_LOG_AT(info, host, bus.now_ps(), name_,
                    "INTx eventfds received (interrupts cannot reach a TCG guest through the proxy: the driver polls)");
        return true;
    case mpqemu::cmd::ret:
    default:
        ++stats_.unknown;
        m.close_fds();
        RNIC_LOG_AT(error, host, bus.now_ps(), name_,
                    "unexpected message: command " << m.cmd << " (" << mpqemu::to_string(c) << ") with "
                                                   << m.data.size() << " bytes of data: skipped, not answered");
        return true;
    }
}

void qemu_remote::pace_wait(drv::host_bus& bus) {
    // Simulated time moves on by poll_interval once wall-clock time allows it; a message arriving
    // meanwhile ends the wait early (and is served before simulated time moves).
    std::int64_t timeout_us = 0;
    if (params_.realtime) {
        const std::int64_t sim_next_ns =
            static_cast<std::int64_t>((bus.now_ps() + params_.poll_interval_ps - sim_epoch_ps_) / 1000);
        const std::int64_t slack_ns = static_cast<std::int64_t>(params_.realtime_slack_ps / 1000);
        const steady::time_point target = wall_epoch_ + std::chrono::nanoseconds(sim_next_ns - slack_ns);
        const steady::time_point now = steady::now();
        if (target > now) {
            timeout_us = std::min<std::int64_t>(
                std::chrono::duration_cast<std::chrono::microseconds>(target - now).count(), 1'000'000);
        }
    }
    if (timeout_us > 0 && channel_.wait_readable_us(timeout_us)) return;
    bus.spend(params_.poll_interval_ps);
}

std::string qemu_remote::run(drv::host_bus& bus) {
    wall_epoch_ = steady::now();
    sim_epoch_ps_ = bus.now_ps();
    RNIC_LOG_AT(info, host, bus.now_ps(), name_, "serving QEMU's x-pci-proxy-dev on descriptor " << channel_.fd());
    for (;;) {
        mpqemu::message m;
        switch (channel_.receive(&m)) {
        case mpqemu_channel::result::message:
            if (!handle(bus, m)) {
                RNIC_LOG_AT(error, host, bus.now_ps(), name_, channel_.error());
                return channel_.error();
            }
            break;
        case mpqemu_channel::result::again:
            pace_wait(bus);
            break;
        case mpqemu_channel::result::closed:
            if (!channel_.error().empty()) {
                RNIC_LOG_AT(error, host, bus.now_ps(), name_, channel_.error());
                return channel_.error();
            }
            RNIC_LOG_AT(info, host, bus.now_ps(), name_, "QEMU closed the connection");
            return "";
        case mpqemu_channel::result::error:
            RNIC_LOG_AT(error, host, bus.now_ps(), name_, channel_.error() << ": connection dropped");
            return channel_.error();
        }
    }
}

}  // namespace rnic::qemu
