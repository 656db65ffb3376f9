// The remote side of QEMU's x-pci-proxy-dev, as the program of a host whose CPU is a QEMU guest:
// it serves the guest's configuration-space and BAR accesses and keeps the guest's RAM mapped for
// the device's DMA. It runs on the driver's host_bus interface (host/host_bus.h) like any host
// program, so a BAR access becomes the same MMIO transaction through the host-bus model (PCIe or
// PCI-X) as the in-process driver's, and the guest's vCPU waits for the answer. No SystemC here:
// the platform runs it on host a's host_cpu thread; the unit tests run it on a plain host_bus.
//
//  - sync_sysmem: the guest's RAM regions are re-mapped into `ram` (the host memory's backing).
//  - pci_cfgread / pci_cfgwrite: answered from pci_config_space (identity and BAR0 from regmap.h);
//    the Command register's memory and bus-master bits gate BAR decoding and DMA.
//  - bar_read / bar_write: the absolute guest-physical address minus BAR0's base is the BAR0
//    offset; aligned 4-byte accesses go to the device as one MMIO access, aligned 8-byte ones as two
//    (low word first). The device takes nothing else: a 1- or 2-byte read returns the bytes of the
//    aligned word (reads have no side effects), a 1- or 2-byte or unaligned write is refused. Refused
//    and undecoded accesses read as all-ones, are logged and counted, and are still answered.
//  - device_reset: the device's CTRL.RESET and the configuration space's reset values.
//  - set_irqfd: kept and closed at the end; interrupts do not reach a TCG guest through the proxy
//    (QEMU routes the eventfd through KVM only), so the driver polls.
// Real time: while it waits for the guest, simulated time advances in steps of poll_interval, never
// more than realtime_slack ahead of wall-clock time since the start (as socket_bridge paces), and a
// message that arrives during the wait is served at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "host/host_bus.h"
#include "qemu/guest_ram.h"
#include "qemu/mpqemu.h"
#include "qemu/pci_config.h"

namespace rnic::qemu {

struct qemu_remote_params {
    int fd = -1;  // the connected socket (owned by the remote from run() on)
    bool realtime = true;
    std::uint64_t realtime_slack_ps = 1'000'000'000;  // 1 ms
    std::uint64_t poll_interval_ps = 20'000'000;      // 20 us
};

struct qemu_remote_stats {
    std::uint64_t messages = 0, config_reads = 0, config_writes = 0, bar_reads = 0, bar_writes = 0, syncs = 0,
                  sync_errors = 0, resets = 0, irqfds = 0, unknown = 0, bad_messages = 0, refused_accesses = 0,
                  undecoded_accesses = 0;
    // Wall-clock time from a BAR message's arrival to its reply (not deterministic).
    std::chrono::nanoseconds bar_wall{0};
};

class qemu_remote {
public:
    qemu_remote(const std::string& name, const qemu_remote_params& params, guest_ram& ram);
    ~qemu_remote();

    // Serves the guest until QEMU closes the connection or the stream fails; returns "" on a clean
    // close, else what went wrong (also logged).
    std::string run(drv::host_bus& bus);

    const qemu_remote_stats& stats() const { return stats_; }
    const pci_config_space& config() const { return config_; }
    bool bus_master() const { return config_.bus_master(); }

    // One message, for tests: the reply bytes it produced ("" when it gets none) are sent on the
    // socket. False when the channel failed.
    bool handle(drv::host_bus& bus, mpqemu::message& m);

private:
    std::uint64_t bar_read(drv::host_bus& bus, const mpqemu::bar_access& a);
    void bar_write(drv::host_bus& bus, const mpqemu::bar_access& a);
    bool reply(std::uint64_t value);
    void pace_wait(drv::host_bus& bus);

    std::string name_;
    qemu_remote_params params_;
    guest_ram& ram_;
    mpqemu_channel channel_;
    pci_config_space config_;
    int irqfds_[2] = {-1, -1};
    qemu_remote_stats stats_;
    std::chrono::steady_clock::time_point wall_epoch_{};
    std::uint64_t sim_epoch_ps_ = 0;
};

}  // namespace rnic::qemu
