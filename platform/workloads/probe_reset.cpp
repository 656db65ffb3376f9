// The device_reset probe (workload.type = probe, workload.probe = device_reset): CTRL.RESET with
// objects open, as a driver loaded again finds the device (docs/device.md: RESET returns the device
// to its reset state). The client opens the device, creates a CQ, a QP and a region, connects and
// writes; then a second driver instance opens the same device, which resets it. Everything of the
// first is gone: the new instance's first CQ, QP and region get number 0, 0 and index 1 again (a
// new STag key), the firmware takes its commands from ring slot 0, the old QP's connection is
// closed (the server's QP leaves RTS) and the old STag no longer names anything. A new connection
// and Write through the new objects then work.
#include <cstring>

#include "workloads/probe.h"
#include "workloads/write_bw.h"

namespace rnic::platform {

namespace acc = regmap::mr_access;

namespace {

constexpr std::uint64_t kBuffer = 64 * 1024;
constexpr std::uint64_t kBudgetPs = 5'000'000'000ULL;
constexpr std::uint64_t kPollPs = 50'000;
constexpr std::uint64_t kWrite = 3000;

struct reset_side {
    explicit reset_side(drv::host_bus& host) : ctx(host) {}
    drv::context ctx;
    std::uint32_t pd = 0;
    std::uint64_t buf = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
};

bool open_side(reset_side& s, const drv::station_config& station, std::uint32_t rights) {
    return s.ctx.open(station) == drv::status::ok && s.ctx.alloc_pd(&s.pd) == drv::status::ok &&
           s.ctx.alloc_buffer(kBuffer, &s.buf) == drv::status::ok && s.ctx.create_cq(16, &s.cq) == drv::status::ok &&
           s.ctx.create_qp(s.pd, s.cq, s.cq, 8, 8, &s.qp) == drv::status::ok &&
           s.ctx.reg_mr(s.pd, s.buf, kBuffer, rights, &s.mr) == drv::status::ok;
}

// Writes `len` pattern bytes (tag) from the start of the client's buffer to the server's region at
// `to`; true once it completed successfully.
bool write_and_wait(drv::host_bus& bus, reset_side& s, const remote_buffer& server, std::uint64_t to, std::uint64_t tag,
                    std::uint64_t seed) {
    std::vector<std::uint8_t> data(kWrite);
    fill_pattern(data.data(), data.size(), seed, tag);
    bus.mem_write(s.buf, data.data(), data.size());
    drv::send_wr w;
    w.wr_id = tag;
    w.local_addr = s.buf;
    w.length = static_cast<std::uint32_t>(kWrite);
    w.local_stag = s.mr.stag;
    w.remote_addr = to;
    w.remote_stag = server.stag;
    if (s.ctx.post_send(s.qp, w) != drv::status::ok) return false;
    const std::uint64_t deadline = bus.now_ps() + kBudgetPs;
    std::vector<drv::work_completion> wcs;
    while (bus.now_ps() < deadline) {
        wcs.clear();
        int n = 0;
        s.ctx.poll_cq(s.cq, 1, &wcs, &n);
        if (n == 1) return wcs[0].wr_id == tag && wcs[0].status == regmap::cqe_status::success;
        bus.spend(kPollPs);
    }
    return false;
}

bool holds(drv::host_bus& bus, std::uint64_t addr, std::uint64_t tag, std::uint64_t seed) {
    std::vector<std::uint8_t> want(kWrite), got(kWrite);
    fill_pattern(want.data(), want.size(), seed, tag);
    bus.mem_read(addr, got.data(), got.size());
    return got == want;
}

}  // namespace

void probe::server_device_reset(drv::host_bus& bus, const drv::station_config& station) {
    reset_side s(bus);
    drv::queue_pair* second = nullptr;
    const std::uint32_t rights = acc::remote_write | acc::local_write;
    if (!open_side(s, station, rights) || s.ctx.create_qp(s.pd, s.cq, s.cq, 8, 8, &second) != drv::status::ok) {
        fail("server set-up failed (see the log)");
        return;
    }
    oob_.publish("server", {station.ipv4, cfg_.port, s.mr.stag, s.mr.to_base, s.mr.length});
    if (s.ctx.accept(s.qp, cfg_.port) != drv::status::ok) {
        fail("server accept failed");
        return;
    }
    oob_.wait_for("reset-done");
    // The client's device closed the old QP's connection at its reset: this QP leaves RTS.
    const std::uint64_t deadline = bus.now_ps() + kBudgetPs;
    regmap::qp_state state = regmap::qp_state::rts;
    while (bus.now_ps() < deadline && state == regmap::qp_state::rts) {
        bus.spend(kPollPs);
        s.ctx.query_qp(s.qp, &state);
    }
    check("server: the QP of the reset client's old connection left RTS", state != regmap::qp_state::rts,
          regmap::to_string(state));
    if (s.ctx.accept(second, cfg_.port) != drv::status::ok) {
        fail("server accept of the reset client's new connection failed");
        return;
    }
    oob_.wait_for("client-done");
    check("server: the first Write (before the reset) is in place", holds(bus, s.buf, 1, cfg_.seed));
    check("server: the Write through the new objects is in place", holds(bus, s.buf + 8192, 2, cfg_.seed));
}

void probe::client_device_reset(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    reset_side first(bus);
    if (!open_side(first, station, acc::local_write)) {
        fail("client set-up failed (see the log)");
        return;
    }
    const remote_buffer server = oob_.wait_for("server");
    if (first.ctx.connect(first.qp, server_ip, server.port, 40000) != drv::status::ok) {
        fail("client connect failed");
        return;
    }
    result_.setup_ok = true;
    check("client: CQ 0, QP 0 and region index 1 before the reset",
          first.cq->cqn == 0 && first.qp->qpn == 0 && first.mr.stag >> 8 == 1);
    check("client: a Write before the reset", write_and_wait(bus, first, server, server.addr, 1, cfg_.seed));
    // A second driver instance: its open writes CTRL.RESET with the first one's objects open.
    reset_side again(bus);
    const bool opened = again.ctx.open(station) == drv::status::ok;
    check("client: the device opens again (CTRL.RESET with a QP, a CQ and a region open)", opened);
    if (!opened) return;
    drv::context::device_stats stats{};
    check("client: the firmware takes the new driver's commands from ring slot 0",
          again.ctx.query_stats(&stats) == drv::status::ok);
    const bool made = again.ctx.alloc_pd(&again.pd) == drv::status::ok &&
                      again.ctx.alloc_buffer(kBuffer, &again.buf) == drv::status::ok &&
                      again.ctx.create_cq(16, &again.cq) == drv::status::ok &&
                      again.ctx.create_qp(again.pd, again.cq, again.cq, 8, 8, &again.qp) == drv::status::ok &&
                      again.ctx.reg_mr(again.pd, again.buf, kBuffer, acc::local_write, &again.mr) == drv::status::ok;
    check("client: new objects after the reset", made);
    if (!made) return;
    check("client: they are numbered from 0 again: CQ 0, QP 0, region index 1",
          again.cq->cqn == 0 && again.qp->qpn == 0 && again.mr.stag >> 8 == 1,
          "CQ " + std::to_string(again.cq->cqn) + ", QP " + std::to_string(again.qp->qpn) + ", STag 0x" +
              std::to_string(again.mr.stag));
    check("client: the region's STag has a new key (the old STag names nothing)", again.mr.stag != first.mr.stag);
    // The old region: invalid now. Its deregistration is refused by the device.
    const drv::command_result old = again.ctx.dev().execute(regmap::command::dereg_mr, {first.mr.stag, 0, 0, 0, 0, 0});
    check("client: the old region's STag was invalidated by the reset",
          !old.timed_out && old.status == regmap::cmd_status::bad_handle, regmap::to_string(old.status));
    oob_.publish("reset-done", {});
    if (again.ctx.connect(again.qp, server_ip, server.port, 40001) != drv::status::ok) {
        fail("client connect after the reset failed");
        return;
    }
    check("client: a Write through the new objects",
          write_and_wait(bus, again, server, server.addr + 8192, 2, cfg_.seed));
    oob_.publish("client-done", {});
}

}  // namespace rnic::platform
