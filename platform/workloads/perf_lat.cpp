#include "workloads/perf_lat.h"

#include <algorithm>
#include <cstring>
#include <deque>

#include "proto/bytes.h"
#include "workloads/write_bw.h"

namespace rnic::platform {

namespace acc = regmap::mr_access;

namespace {
// Each side's buffer: [0, half) is the outbox it sends or writes from, [half, 2 half) the inbox the
// peer writes into (write_lat) or its receives land in (send_lat).
constexpr std::uint64_t kReceives = 4;

// The byte that marks iteration i in a message's last byte: never 0 (the inbox starts zeroed) and
// never the previous iteration's value.
std::uint8_t tag(std::uint32_t i) {
    return static_cast<std::uint8_t>(i % 255 + 1);
}
}  // namespace

struct perf_lat::side {
    explicit side(drv::host_bus& host) : bus(host), ctx(host) {}
    drv::host_bus& bus;
    drv::context ctx;
    std::uint32_t pd = 0;
    std::uint64_t buf = 0, half = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
    std::deque<drv::work_completion> receives;  // receive completions taken from the CQ, not yet used
    std::uint64_t posted_receives = 0;
};

perf_lat::perf_lat(const perf_lat_config& cfg, oob_channel& oob, std::function<void()> on_done)
    : cfg_(cfg), oob_(oob), on_done_(std::move(on_done)) {}

void perf_lat::fail(const std::string& what) {
    record_failure(result_, what);
}

bool perf_lat::setup(side& s, const drv::station_config& station, bool server) {
    s.half = cfg_.buffer / 2;
    if (s.ctx.open(station) != drv::status::ok || s.ctx.alloc_pd(&s.pd) != drv::status::ok ||
        s.ctx.alloc_buffer(cfg_.buffer, &s.buf) != drv::status::ok ||
        s.ctx.reg_mr(s.pd, s.buf, cfg_.buffer,
                     acc::local_write | acc::remote_write | acc::remote_read | acc::remote_atomic,
                     &s.mr) != drv::status::ok ||
        s.ctx.create_cq(64, &s.cq) != drv::status::ok ||
        s.ctx.create_qp(s.pd, s.cq, s.cq, 16, 16, &s.qp) != drv::status::ok) {
        fail(std::string(server ? "server" : "client") + " set-up failed (see the log)");
        return false;
    }
    const std::vector<std::uint8_t> zero(cfg_.buffer, 0);
    s.bus.mem_write(s.buf, zero.data(), zero.size());
    if (cfg_.op == perf_lat_config::kind::send) {
        // Receives before the connection, so that the peer's first Send finds one (RFC 5040 §5.1).
        for (std::uint64_t i = 0; i < kReceives; ++i) {
            drv::recv_wr r;
            r.wr_id = s.posted_receives++;
            r.addr = s.buf + s.half;
            r.length = static_cast<std::uint32_t>(s.half);
            r.stag = s.mr.stag;
            if (s.ctx.post_recv(s.qp, r) != drv::status::ok) {
                fail("post_recv failed");
                return false;
            }
        }
    }
    return true;
}

bool perf_lat::wait_completion(side& s, bool receive, drv::work_completion* out) {
    // Send-side completions are reaped here too (they free send-queue slots); an error stops the run.
    std::vector<drv::work_completion> wcs;
    for (std::uint64_t spins = 0;; ++spins) {
        if (receive && !s.receives.empty()) {
            *out = s.receives.front();
            s.receives.pop_front();
            return true;
        }
        wcs.clear();
        int n = 0;
        s.ctx.poll_cq(s.cq, 16, &wcs, &n);
        for (const drv::work_completion& wc : wcs) {
            if (wc.status != regmap::cqe_status::success) {
                fail(std::string("completion with status ") + regmap::to_string(wc.status));
                return false;
            }
            if (wc.opcode == drv::wc_opcode::recv) {
                s.receives.push_back(wc);
            } else if (!receive) {
                *out = wc;
                return true;
            }
        }
        if (n == 0) s.bus.spend(cfg_.poll_interval_ps);
        if (spins > 200'000'000ULL / std::max<std::uint64_t>(cfg_.poll_interval_ps / 1000, 1)) {
            fail("no completion for a long time");
            return false;
        }
    }
}

bool perf_lat::wait_byte(side& s, std::uint64_t addr, std::uint8_t value) {
    // perftest's write_lat polls the last byte of the buffer the peer writes into.
    std::vector<drv::work_completion> wcs;
    for (std::uint64_t spins = 0;; ++spins) {
        std::uint8_t b = 0;
        s.bus.mem_read(addr, &b, 1);
        if (b == value) return true;
        wcs.clear();
        int n = 0;
        s.ctx.poll_cq(s.cq, 16, &wcs, &n);  // reap the Write completions as they come
        for (const drv::work_completion& wc : wcs) {
            if (wc.status != regmap::cqe_status::success) {
                fail(std::string("completion with status ") + regmap::to_string(wc.status));
                return false;
            }
        }
        s.bus.spend(cfg_.poll_interval_ps);
        if (spins > 10'000'000ULL) {
            fail("the peer's message never arrived");
            return false;
        }
    }
}

bool perf_lat::ping_pong(side& s, bool client, std::uint64_t size, std::uint32_t iteration, const remote_buffer& peer) {
    const auto len = static_cast<std::uint32_t>(size);
    std::vector<std::uint8_t> msg(len);
    fill_pattern(msg.data(), msg.size(), cfg_.seed + (client ? 0 : 1), size);
    msg.back() = tag(iteration);
    const auto send = [&] {
        s.bus.mem_write(s.buf, msg.data(), msg.size());
        drv::send_wr w;
        w.wr_id = iteration;
        w.opcode = cfg_.op == perf_lat_config::kind::write ? regmap::wr_opcode::rdma_write : regmap::wr_opcode::send;
        w.local_addr = s.buf;
        w.length = len;
        w.local_stag = s.mr.stag;
        w.remote_addr = peer.addr + peer.length / 2;  // the peer's inbox
        w.remote_stag = peer.stag;
        w.inline_data = len <= cfg_.max_inline;
        while (true) {
            const drv::status st = s.ctx.post_send(s.qp, w);
            if (st == drv::status::ok) return true;
            drv::work_completion wc;
            if (st != drv::status::ring_full || !wait_completion(s, false, &wc)) {
                fail("post_send failed");
                return false;
            }
        }
    };
    const auto receive = [&] {
        if (cfg_.op == perf_lat_config::kind::write) return wait_byte(s, s.buf + s.half + len - 1, tag(iteration));
        drv::work_completion wc;
        if (!wait_completion(s, true, &wc)) return false;
        if (wc.byte_len != len) {
            fail("receive of " + std::to_string(wc.byte_len) + " bytes, expected " + std::to_string(len));
            return false;
        }
        drv::recv_wr r;
        r.wr_id = s.posted_receives++;
        r.addr = s.buf + s.half;
        r.length = static_cast<std::uint32_t>(s.half);
        r.stag = s.mr.stag;
        return s.ctx.post_recv(s.qp, r) == drv::status::ok;
    };
    return client ? send() && receive() : receive() && send();
}

void perf_lat::server(drv::host_bus& bus, const drv::station_config& station) {
    side s(bus);
    if (!setup(s, station, true)) return;
    oob_.publish("server", {station.ipv4, cfg_.port, s.mr.stag, s.mr.to_base, s.mr.length});
    if (s.ctx.accept(s.qp, cfg_.port) != drv::status::ok) {
        fail("server accept failed");
        return;
    }
    if (cfg_.op == perf_lat_config::kind::read) {
        // What the client reads: a known pattern in the outbox.
        std::vector<std::uint8_t> data(s.half);
        fill_pattern(data.data(), data.size(), cfg_.seed + 1, 0x4ead);
        bus.mem_write(s.buf, data.data(), data.size());
        oob_.publish("read-ready", {});
    }
    if (cfg_.op != perf_lat_config::kind::write && cfg_.op != perf_lat_config::kind::send) return;  // passive
    const remote_buffer peer = oob_.wait_for("client");
    for (std::uint64_t size : cfg_.sizes) {
        for (std::uint32_t i = 0; i < cfg_.warmup + cfg_.iterations; ++i) {
            if (!ping_pong(s, false, size, i, peer)) return;
        }
    }
}

void perf_lat::client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    side s(bus);
    if (!setup(s, station, false)) {
        on_done_();
        return;
    }
    oob_.publish("client", {station.ipv4, 0, s.mr.stag, s.mr.to_base, s.mr.length});
    const remote_buffer peer = oob_.wait_for("server");
    const std::uint64_t t0 = bus.now_ps();
    if (s.ctx.connect(s.qp, server_ip, peer.port, 40000) != drv::status::ok) {
        fail("client connect failed");
        on_done_();
        return;
    }
    result_.connect_ps = bus.now_ps() - t0;
    result_.setup_ok = true;
    const bool atomic = cfg_.op == perf_lat_config::kind::atomic;
    if (cfg_.op == perf_lat_config::kind::read) oob_.wait_for("read-ready");
    std::vector<std::uint64_t> sizes = atomic ? std::vector<std::uint64_t>{8} : cfg_.sizes;
    std::uint64_t counter = 0;  // the server word's value as this (only) client has made it
    for (std::uint64_t size : sizes) {
        if (size * 2 > cfg_.buffer) {
            fail("message size " + std::to_string(size) + " does not fit half of workload.buffer");
            break;
        }
        workload_row row;
        row.size = size;
        row.iterations = cfg_.iterations;
        row.bytes = size * cfg_.iterations;
        row.latencies_ps.reserve(cfg_.iterations);
        const std::uint64_t start = bus.now_ps();
        for (std::uint32_t i = 0; i < cfg_.warmup + cfg_.iterations; ++i) {
            const std::uint64_t t = bus.now_ps();
            if (cfg_.op == perf_lat_config::kind::write || cfg_.op == perf_lat_config::kind::send) {
                if (!ping_pong(s, true, size, i, peer)) break;
                // perftest reports half the round trip.
                if (i >= cfg_.warmup) row.latencies_ps.push_back((bus.now_ps() - t) / 2);
                continue;
            }
            drv::send_wr w;
            w.wr_id = i;
            w.local_addr = s.buf + s.half;
            w.length = static_cast<std::uint32_t>(size);
            w.local_stag = s.mr.stag;
            w.remote_addr = peer.addr;
            w.remote_stag = peer.stag;
            if (atomic) {
                w.opcode = cfg_.cmp_swap ? regmap::wr_opcode::atomic_compare_swap : regmap::wr_opcode::atomic_fetch_add;
                w.operand = cfg_.cmp_swap ? counter + 1 : 1;
                w.compare = counter;
            } else {
                w.opcode = regmap::wr_opcode::rdma_read;
            }
            drv::work_completion wc;
            if (s.ctx.post_send(s.qp, w) != drv::status::ok || !wait_completion(s, false, &wc)) {
                fail("operation " + std::to_string(i) + " failed");
                break;
            }
            if (atomic) {
                std::uint8_t b[8];
                bus.mem_read(s.buf + s.half, b, 8);
                if (proto::get_le64(b) != counter) {
                    fail("atomic " + std::to_string(i) + " returned " + std::to_string(proto::get_le64(b)) +
                         ", expected " + std::to_string(counter));
                    break;
                }
                ++counter;
            }
            if (i >= cfg_.warmup) row.latencies_ps.push_back(bus.now_ps() - t);
        }
        row.elapsed_ps = bus.now_ps() - start;
        if (!result_.error.empty()) {
            row.integrity.ok = false;
            row.integrity.detail = "not checked: the run failed";
            result_.rows.push_back(std::move(row));
            break;
        }
        // What arrived last is what the peer sent last.
        if (cfg_.op == perf_lat_config::kind::write || cfg_.op == perf_lat_config::kind::send) {
            std::vector<std::uint8_t> want(size), got(size);
            fill_pattern(want.data(), want.size(), cfg_.seed + 1, size);
            want.back() = tag(cfg_.warmup + cfg_.iterations - 1);
            bus.mem_read(s.buf + s.half, got.data(), got.size());
            row.integrity.bytes_checked = size;
            row.integrity.ok = got == want;
            if (!row.integrity.ok) row.integrity.detail = "the last message differs from what the server sent";
        } else if (!atomic) {
            std::vector<std::uint8_t> want(s.half), got(size);
            fill_pattern(want.data(), want.size(), cfg_.seed + 1, 0x4ead);
            want.resize(size);
            bus.mem_read(s.buf + s.half, got.data(), got.size());
            row.integrity.bytes_checked = size;
            row.integrity.ok = got == want;
            if (!row.integrity.ok)
                row.integrity.detail = "the last RDMA Read returned other bytes than the server holds";
        } else {
            row.integrity.bytes_checked = 8 * static_cast<std::uint64_t>(cfg_.warmup + cfg_.iterations);
        }
        result_.rows.push_back(std::move(row));
    }
    result_.finished = result_.error.empty();
    on_done_();
}

}  // namespace rnic::platform
