#include "workloads/vipl_example.h"

#include <algorithm>

#include "driver/vipl.h"

namespace rnic::examples {

namespace vi = drv::vipl;

namespace {

// Byte j of round r's message of kind k: what both ends can compute to check the other's bytes.
std::uint8_t pattern(std::uint32_t round, std::uint32_t kind, std::uint64_t j) {
    return static_cast<std::uint8_t>(round * 131u + kind * 61u + j * 7u + 1u);
}
std::vector<std::uint8_t> message(std::uint32_t round, std::uint32_t kind, std::uint64_t len) {
    std::vector<std::uint8_t> m(len);
    for (std::uint64_t j = 0; j < len; ++j) m[j] = pattern(round, kind, j);
    return m;
}
constexpr std::uint32_t kSendKind = 0, kWriteKind = 1;
constexpr std::uint32_t kReceives = 4;  // receive descriptors the server keeps posted

}  // namespace

std::uint64_t vipl_example::max_size() const {
    return cfg_.sizes.empty() ? 0 : *std::max_element(cfg_.sizes.begin(), cfg_.sizes.end());
}

void vipl_example::fail(const std::string& what) {
    platform::record_failure(result_, what);
}

void vipl_example::server(drv::host_bus& bus, const drv::station_config& station) {
    drv::context ctx(bus);
    vi::provider nic(ctx);
    vi::vi v;
    vi::mem_handle mem;
    std::uint64_t buf = 0;
    const std::uint64_t slot = std::max<std::uint64_t>(max_size(), 1);
    // Memory: kReceives receive slots, then the block the client writes and reads back.
    const std::uint64_t len = slot * (kReceives + 1);
    if (ctx.open(station) != drv::status::ok || nic.create_vi({}, &v) != vi::vip_return::success ||
        ctx.alloc_buffer(len, &buf) != drv::status::ok ||
        nic.register_mem(v.pd, buf, len, true, true, &mem) != vi::vip_return::success) {
        fail("vipl server: set-up failed (see the log)");
        return;
    }
    const std::uint64_t block = buf + slot * kReceives;
    oob_.publish("vipl-block", {station.ipv4, cfg_.port, mem.handle, block, slot});
    if (nic.connect_wait_accept(v, cfg_.port) != vi::vip_return::success) {
        fail("vipl server: VipConnectWait/VipConnectAccept failed");
        return;
    }
    std::vector<vi::descriptor> recvs(kReceives);
    for (std::uint32_t k = 0; k < kReceives; ++k) {
        recvs[k] = vi::descriptor{};
        recvs[k].local_addr = buf + slot * k;
        recvs[k].length = static_cast<std::uint32_t>(slot);
        recvs[k].local_handle = mem.handle;
        if (nic.post_recv(v, &recvs[k]) != vi::vip_return::success) {
            fail("vipl server: VipPostRecv failed");
            return;
        }
    }
    oob_.publish("vipl-receives-posted", {});
    platform::workload_row row;
    row.op = "vipl_recv";
    row.integrity.ok = true;
    const std::uint64_t t0 = bus.now_ps();
    for (std::uint32_t r = 0; r < cfg_.rounds; ++r) {
        vi::descriptor* d = nullptr;
        const vi::vip_return w = nic.recv_wait(v, cfg_.timeout_ps, &d);
        if (w != vi::vip_return::success) {
            fail(std::string("vipl server: VipRecvWait of round ") + std::to_string(r) + ": " + vi::to_string(w));
            return;
        }
        const std::uint64_t size = cfg_.sizes[r % cfg_.sizes.size()];
        std::vector<std::uint8_t> got(d->received_length);
        bus.mem_read(d->local_addr, got.data(), got.size());
        if (d->status != regmap::cqe_status::success || got != message(r, kSendKind, size)) {
            row.integrity.ok = false;
            row.integrity.detail = "round " + std::to_string(r) + ": the Send delivered " + std::to_string(got.size()) +
                                   " bytes, not the " + std::to_string(size) + " sent";
            ++row.errors;
        }
        row.bytes += got.size();
        row.integrity.bytes_checked += got.size();
        ++row.iterations;
        if (nic.post_recv(v, d) != vi::vip_return::success) {  // the descriptor goes back on the queue
            fail("vipl server: VipPostRecv failed");
            return;
        }
    }
    row.elapsed_ps = bus.now_ps() - t0;
    result_.rows.push_back(row);
    if (!row.integrity.ok) fail("vipl server: " + row.integrity.detail);
    oob_.wait_for("vipl-client-done");
    oob_.publish("vipl-server-done", {});
}

void vipl_example::client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    drv::context ctx(bus);
    vi::provider nic(ctx);
    vi::vi v;
    vi::mem_handle mem;
    std::uint64_t buf = 0;
    const std::uint64_t slot = std::max<std::uint64_t>(max_size(), 1);
    if (ctx.open(station) != drv::status::ok || nic.create_vi({}, &v) != vi::vip_return::success ||
        ctx.alloc_buffer(3 * slot, &buf) != drv::status::ok ||
        nic.register_mem(v.pd, buf, 3 * slot, false, false, &mem) != vi::vip_return::success) {
        fail("vipl client: set-up failed (see the log)");
        on_done_();
        return;
    }
    const platform::remote_buffer block = oob_.wait_for("vipl-block");
    const std::uint64_t t_connect = bus.now_ps();
    const vi::vip_return c = nic.connect_request(v, server_ip, cfg_.port, 40000);
    if (c != vi::vip_return::success) {
        fail(std::string("vipl client: VipConnectRequest: ") + vi::to_string(c));
        on_done_();
        return;
    }
    result_.connect_ps = bus.now_ps() - t_connect;
    oob_.wait_for("vipl-receives-posted");
    const std::uint64_t send_area = buf, write_area = buf + slot, read_area = buf + 2 * slot;
    platform::workload_row rows[3];
    const char* names[3] = {"vipl_send", "vipl_rdma_write", "vipl_rdma_read"};
    for (int k = 0; k < 3; ++k) {
        rows[k].op = names[k];
        rows[k].integrity.ok = true;
    }
    auto run = [&](vi::descriptor& d, platform::workload_row& row, const char* what) {
        const std::uint64_t t0 = bus.now_ps();
        vi::descriptor* done = nullptr;
        vi::vip_return r = nic.post_send(v, &d);
        if (r == vi::vip_return::success) r = nic.send_wait(v, cfg_.timeout_ps, &done);
        if (r != vi::vip_return::success || done != &d || d.status != regmap::cqe_status::success) {
            fail(std::string("vipl client: ") + what + ": " + vi::to_string(r) + ", descriptor status " +
                 regmap::to_string(d.status));
            return false;
        }
        row.latencies_ps.push_back(bus.now_ps() - t0);
        row.elapsed_ps += bus.now_ps() - t0;
        row.bytes += d.length;
        ++row.iterations;
        return true;
    };
    for (std::uint32_t r = 0; r < cfg_.rounds && result_.error.empty(); ++r) {
        const std::uint64_t size = cfg_.sizes[r % cfg_.sizes.size()];
        const std::vector<std::uint8_t> msg = message(r, kSendKind, size), blk = message(r, kWriteKind, size);
        bus.mem_write(send_area, msg.data(), msg.size());
        bus.mem_write(write_area, blk.data(), blk.size());
        const auto len = static_cast<std::uint32_t>(size);
        vi::descriptor send{vi::desc_op::send, send_area, len, mem.handle, 0, 0};
        vi::descriptor write{vi::desc_op::rdma_write, write_area, len, mem.handle, block.addr, block.stag};
        vi::descriptor read{vi::desc_op::rdma_read, read_area, len, mem.handle, block.addr, block.stag};
        if (!run(send, rows[0], "VipPostSend (Send)") || !run(write, rows[1], "VipPostSend (RDMA Write)") ||
            !run(read, rows[2], "VipPostSend (RDMA Read)")) {
            break;
        }
        std::vector<std::uint8_t> back(size);
        bus.mem_read(read_area, back.data(), back.size());
        rows[2].integrity.bytes_checked += size;
        if (back != blk) {
            rows[2].integrity.ok = false;
            rows[2].integrity.detail =
                "round " + std::to_string(r) + ": the RDMA Read returned other bytes than written";
            ++rows[2].errors;
            fail("vipl client: " + rows[2].integrity.detail);
        }
    }
    for (auto& row : rows) result_.rows.push_back(row);
    oob_.publish("vipl-client-done", {});
    oob_.wait_for("vipl-server-done");
    result_.finished = result_.error.empty();
    on_done_();
}

}  // namespace rnic::examples
