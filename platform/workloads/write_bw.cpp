#include "workloads/write_bw.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/log.h"

namespace rnic::platform {

namespace {
std::uint32_t next_pow2(std::uint64_t n) {
    std::uint32_t p = 2;
    while (p < n) p <<= 1;
    return p;
}
}  // namespace

void fill_pattern(std::uint8_t* dst, std::size_t len, std::uint64_t seed, std::uint64_t size) {
    std::uint64_t state = seed * 0x9e3779b97f4a7c15ULL ^ (size + 0x632be59bd9b4e019ULL);
    for (std::size_t i = 0; i < len; i += 8) {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        std::memcpy(dst + i, &z, std::min<std::size_t>(8, len - i));
    }
}

write_bw::write_bw(const write_bw_config& cfg, oob_channel& oob, checker check, std::function<void()> on_done)
    : cfg_(cfg), oob_(oob), check_(std::move(check)), on_done_(std::move(on_done)) {}

void write_bw::fail(const std::string& what) {
    if (result_.error.empty()) result_.error = what;
}

void write_bw::server(drv::host_bus& bus, const drv::station_config& station) {
    drv::context ctx(bus);
    std::uint32_t pd = 0;
    std::uint64_t buf = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
    if (ctx.open(station) != drv::status::ok || ctx.alloc_pd(&pd) != drv::status::ok ||
        ctx.alloc_buffer(cfg_.buffer, &buf) != drv::status::ok ||
        ctx.reg_mr(pd, buf, cfg_.buffer,
                   regmap::mr_access::remote_write | regmap::mr_access::remote_read | regmap::mr_access::local_write |
                       (cfg_.atomic ? regmap::mr_access::remote_atomic : 0u),
                   &mr) != drv::status::ok ||
        ctx.create_cq(next_pow2(2 * cfg_.queue_depth + 2), &cq) != drv::status::ok ||
        ctx.create_qp(pd, cq, cq, 16, next_pow2(cfg_.queue_depth + 1), &qp) != drv::status::ok) {
        fail("server set-up failed (see the log)");
        return;
    }
    oob_.publish("server", {station.ipv4, cfg_.port, mr.stag, mr.addr, mr.length});
    if (ctx.accept(qp, cfg_.port) != drv::status::ok) {
        fail("server accept failed");
        return;
    }
    // RDMA Writes need no receive-side software: the server's CPU is idle from here on.
    if (cfg_.send) serve_receives(ctx, qp, cq, mr);
    if (cfg_.atomic) {
        // The counter lives in the server's first 8 bytes; the server reports it when asked.
        oob_.wait_for("atomics-done");
        std::uint8_t counter[8];
        ctx.bus().mem_read(mr.addr, counter, sizeof counter);
        std::uint64_t value = 0;
        std::memcpy(&value, counter, sizeof value);
        oob_.publish("atomic-counter", {0, 0, 0, value, 0});
    }
    if (cfg_.read) {
        // The client reads from here: the server lays out each size's pattern, then says so.
        for (std::uint64_t size : cfg_.sizes) {
            const std::uint64_t span = mr.length / size * size;
            const std::uint64_t touched = std::min<std::uint64_t>(span, size * cfg_.iterations);
            std::vector<std::uint8_t> pattern(touched);
            fill_pattern(pattern.data(), pattern.size(), cfg_.seed, size);
            ctx.bus().mem_write(mr.addr, pattern.data(), pattern.size());
            oob_.publish("pattern-" + std::to_string(size), {});
            oob_.wait_for("read-done-" + std::to_string(size));
        }
    }
}

void write_bw::serve_receives(drv::context& ctx, drv::queue_pair* qp, drv::completion_queue* cq,
                              const drv::memory_region& mr) {
    drv::host_bus& bus = ctx.bus();
    std::vector<drv::work_completion> wcs;
    for (std::uint64_t size : cfg_.sizes) {
        // Receive i lands where the client sends message i from: (i * size) mod span.
        const std::uint64_t span = mr.length / size * size;
        std::uint32_t posted = 0, completed = 0;
        auto post = [&] {
            while (posted < cfg_.iterations && posted - completed < qp->rq_entries) {
                drv::recv_wr wr;
                wr.wr_id = posted;
                wr.addr = mr.addr + (static_cast<std::uint64_t>(posted) * size) % span;
                wr.length = static_cast<std::uint32_t>(size);
                wr.stag = mr.stag;
                if (ctx.post_recv(qp, wr) != drv::status::ok) return false;
                ++posted;
            }
            return true;
        };
        if (!post()) {
            fail("server post_recv failed");
            return;
        }
        oob_.publish("receives-" + std::to_string(size), {});
        while (completed < cfg_.iterations) {
            wcs.clear();
            int n = 0;
            ctx.poll_cq(cq, 64, &wcs, &n);
            if (n == 0) {
                bus.spend(cfg_.poll_interval_ps);
                continue;
            }
            for (const drv::work_completion& wc : wcs) {
                if (wc.status != regmap::cqe_status::success || wc.byte_len != size) {
                    fail("server receive completion with status " + std::string(regmap::to_string(wc.status)) +
                         " and " + std::to_string(wc.byte_len) + " bytes at size " + std::to_string(size));
                    return;
                }
                ++completed;
            }
            if (!post()) {
                fail("server post_recv failed");
                return;
            }
        }
    }
}

void write_bw::client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    drv::context ctx(bus);
    std::uint32_t pd = 0;
    std::uint64_t buf = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
    const std::uint32_t depth = next_pow2(cfg_.queue_depth);
    if (ctx.open(station) != drv::status::ok || ctx.alloc_pd(&pd) != drv::status::ok ||
        ctx.alloc_buffer(cfg_.buffer, &buf) != drv::status::ok ||
        ctx.reg_mr(pd, buf, cfg_.buffer, regmap::mr_access::local_write, &mr) != drv::status::ok ||
        ctx.create_cq(depth * 2, &cq) != drv::status::ok ||
        ctx.create_qp(pd, cq, cq, depth, 2, &qp) != drv::status::ok) {
        fail("client set-up failed (see the log)");
        on_done_();
        return;
    }
    const remote_buffer remote = oob_.wait_for("server");
    const std::uint64_t t0 = bus.now_ps();
    if (ctx.connect(qp, server_ip, remote.port, 40000) != drv::status::ok) {
        fail("client connect failed");
        on_done_();
        return;
    }
    result_.connect_ps = bus.now_ps() - t0;
    result_.setup_ok = true;
    if (cfg_.atomic) {
        run_atomics(ctx, qp, cq, mr, remote);
    } else {
        for (std::uint64_t size : cfg_.sizes) {
            if (!run_size(ctx, qp, cq, mr, remote, size)) break;
        }
    }
    result_.finished = result_.error.empty();
    on_done_();
}

bool write_bw::run_ops(drv::context& ctx, drv::queue_pair* qp, drv::completion_queue* cq, write_bw_row& row,
                       const std::function<drv::send_wr(std::uint32_t)>& make_wr, const std::string& what) {
    // Keep queue_depth operations outstanding until `iterations` have completed; each one's latency
    // is post to completion, as perftest measures it.
    drv::host_bus& bus = ctx.bus();
    std::vector<std::uint64_t> posted_at(cfg_.iterations, 0);
    row.latencies_ps.reserve(cfg_.iterations);
    std::vector<drv::work_completion> wcs;
    std::uint32_t posted = 0, completed = 0;
    const std::uint64_t start = bus.now_ps();
    while (completed < cfg_.iterations) {
        while (posted < cfg_.iterations && posted - completed < cfg_.queue_depth) {
            drv::send_wr wr = make_wr(posted);
            wr.wr_id = posted;
            posted_at[posted] = bus.now_ps();
            if (ctx.post_send(qp, wr) != drv::status::ok) {
                fail("post_send failed (" + what + ")");
                return false;
            }
            ++posted;
        }
        wcs.clear();
        int n = 0;
        ctx.poll_cq(cq, 64, &wcs, &n);
        if (n == 0) {
            if (cfg_.event_mode) ctx.wait_cq(cq, 1'000'000'000'000ULL);
            else bus.spend(cfg_.poll_interval_ps);
            continue;
        }
        const std::uint64_t now = bus.now_ps();
        for (const drv::work_completion& wc : wcs) {
            if (wc.status != regmap::cqe_status::success) ++row.errors;
            if (wc.wr_id < posted_at.size()) row.latencies_ps.push_back(now - posted_at[wc.wr_id]);
            ++completed;
        }
        if (row.errors > 0) {
            fail("completion with error status (" + what + ")");
            row.integrity.ok = false;
            row.integrity.detail = "not checked: the run failed";
            result_.rows.push_back(std::move(row));
            return false;
        }
    }
    row.elapsed_ps = bus.now_ps() - start;
    return true;
}

bool write_bw::run_atomics(drv::context& ctx, drv::queue_pair* qp, drv::completion_queue* cq,
                           const drv::memory_region& mr, const remote_buffer& remote) {
    drv::host_bus& bus = ctx.bus();
    write_bw_row row;
    row.size = 8;
    row.iterations = cfg_.iterations;
    const std::uint64_t slots = mr.length / 8;
    const auto fetch_add = [&](std::uint32_t i) {
        drv::send_wr wr;
        wr.opcode = regmap::wr_opcode::atomic_fetch_add;
        wr.local_addr = mr.addr + 8 * (i % slots);
        wr.length = 8;
        wr.local_stag = mr.stag;
        wr.remote_addr = remote.addr;  // one shared 64-bit counter
        wr.remote_stag = remote.stag;
        wr.operand = 1;
        return wr;
    };
    if (!run_ops(ctx, qp, cq, row, fetch_add, "atomics")) return false;
    row.bytes = 8ull * cfg_.iterations;
    // Linearizable FetchAdd(1): the returned originals are exactly 0 .. n-1 and the counter ends at n.
    oob_.publish("atomics-done", {});
    const std::uint64_t counter = oob_.wait_for("atomic-counter").addr;
    const std::uint64_t checked = std::min<std::uint64_t>(cfg_.iterations, slots);
    std::vector<std::uint8_t> results(checked * 8);
    bus.mem_read(mr.addr, results.data(), results.size());
    std::vector<bool> seen(cfg_.iterations, false);
    std::uint64_t bad = 0;
    for (std::uint64_t i = 0; i < checked; ++i) {
        std::uint64_t v = 0;
        std::memcpy(&v, results.data() + 8 * i, 8);
        if (v >= cfg_.iterations || seen[v]) ++bad;
        else seen[v] = true;
    }
    row.integrity.bytes_checked = results.size() + 8;
    row.integrity.ok = bad == 0 && counter == cfg_.iterations;
    row.integrity.bytes_mismatched = bad * 8 + (counter == cfg_.iterations ? 0 : 8);
    if (!row.integrity.ok) {
        row.integrity.detail = "counter " + std::to_string(counter) + " (expected " + std::to_string(cfg_.iterations) +
                               "), " + std::to_string(bad) + " returned values out of place";
    }
    result_.rows.push_back(std::move(row));
    return true;
}

bool write_bw::run_size(drv::context& ctx, drv::queue_pair* qp, drv::completion_queue* cq,
                        const drv::memory_region& mr, const remote_buffer& remote, std::uint64_t size) {
    drv::host_bus& bus = ctx.bus();
    write_bw_row row;
    row.size = size;
    row.iterations = cfg_.iterations;
    const std::uint64_t span = std::min(mr.length, remote.length) / size * size;
    const std::uint64_t touched = std::min<std::uint64_t>(span, size * cfg_.iterations);
    // A fresh pattern per size: stale bytes from an earlier size cannot pass the check.
    if (cfg_.read) {
        oob_.wait_for("pattern-" + std::to_string(size));
    } else {
        std::vector<std::uint8_t> pattern(touched);
        fill_pattern(pattern.data(), pattern.size(), cfg_.seed, size);
        bus.mem_write(mr.addr, pattern.data(), pattern.size());
    }
    // Sends need the peer's receives posted first (RNR would be a Terminate in iWARP).
    if (cfg_.send) oob_.wait_for("receives-" + std::to_string(size));

    const auto op = [&](std::uint32_t i) {
        const std::uint64_t off = (static_cast<std::uint64_t>(i) * size) % span;
        if (i == 0 && cfg_.inject != "none" && !cfg_.send && !cfg_.read) {
            drv::send_wr bad;
            bad.opcode = regmap::wr_opcode::rdma_write;
            bad.local_addr = mr.addr;
            bad.length = static_cast<std::uint32_t>(size);
            bad.local_stag = mr.stag;
            bad.remote_stag = cfg_.inject == "invalid_stag" ? remote.stag ^ 0xffu : remote.stag;
            // Out of bounds: start 8 bytes before the end of the peer's region.
            bad.remote_addr = cfg_.inject == "out_of_bounds" ? remote.addr + remote.length - 8 : remote.addr;
            return bad;
        }
        drv::send_wr wr;
        wr.opcode = cfg_.send   ? regmap::wr_opcode::send
                    : cfg_.read ? regmap::wr_opcode::rdma_read
                                : regmap::wr_opcode::rdma_write;
        wr.local_addr = mr.addr + off;
        wr.length = static_cast<std::uint32_t>(size);
        wr.local_stag = mr.stag;
        wr.remote_addr = remote.addr + off;
        wr.remote_stag = remote.stag;
        return wr;
    };
    if (!run_ops(ctx, qp, cq, row, op, "size " + std::to_string(size))) return false;
    row.bytes = size * cfg_.iterations;
    row.integrity = cfg_.read ? check_(false, remote.addr, mr.addr, touched) : check_(true, mr.addr, remote.addr, touched);
    if (cfg_.read) oob_.publish("read-done-" + std::to_string(size), {});
    RNIC_LOG_AT(info, app, bus.now_ps(), bus.host_name() + ".write_bw",
                "size " << size << ": " << cfg_.iterations << " writes done, integrity "
                        << (row.integrity.ok ? "ok" : row.integrity.detail));
    result_.rows.push_back(std::move(row));
    return true;
}

}  // namespace rnic::platform
