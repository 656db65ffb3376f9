#include "workloads/write_bw.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/log.h"
#include "workloads/workload_math.h"

namespace rnic::platform {

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
    qp_list qps(cfg_.qps, nullptr);
    bool ok = ctx.open(station) == drv::status::ok && ctx.alloc_pd(&pd) == drv::status::ok &&
              ctx.alloc_buffer(cfg_.buffer, &buf) == drv::status::ok &&
              ctx.reg_mr(pd, buf, cfg_.buffer,
                         regmap::mr_access::remote_write | regmap::mr_access::remote_read |
                             regmap::mr_access::local_write | (cfg_.atomic ? regmap::mr_access::remote_atomic : 0u),
                         &mr) == drv::status::ok &&
              ctx.create_cq(next_pow2(static_cast<std::uint64_t>(cfg_.qps) * (2 * cfg_.queue_depth + 2)), &cq) ==
                  drv::status::ok;
    for (std::uint32_t q = 0; ok && q < cfg_.qps; ++q) {
        ok = ctx.create_qp(pd, cq, cq, 16, next_pow2(cfg_.queue_depth + 1), &qps[q]) == drv::status::ok;
    }
    if (!ok) {
        fail("server set-up failed (see the log)");
        return;
    }
    oob_.publish("server", {station.ipv4, cfg_.port, mr.stag, mr.addr, mr.length});
    // One connection per QP, all to the one listening port, accepted in the order the client opens them.
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
        if (ctx.accept(qps[q], cfg_.port) != drv::status::ok) {
            fail("server accept failed (connection " + std::to_string(q + 1) + " of " + std::to_string(cfg_.qps) + ")");
            return;
        }
    }
    // RDMA Writes need no receive-side software: the server's CPU is idle from here on.
    if (cfg_.send) serve_receives(ctx, qps, cq, mr);
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
        // The client reads from here: the server lays out each size's pattern in every QP's slice,
        // then says so.
        const std::uint64_t slice = slice_of(mr.length);
        for (std::uint64_t size : cfg_.sizes) {
            const std::uint64_t span = slice / size * size;
            const std::uint64_t touched = std::min<std::uint64_t>(span, size * cfg_.iterations);
            std::vector<std::uint8_t> pattern(touched);
            for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
                fill_pattern(pattern.data(), pattern.size(), pattern_seed(q), size);
                ctx.bus().mem_write(mr.addr + q * slice, pattern.data(), pattern.size());
            }
            oob_.publish("pattern-" + std::to_string(size), {});
            oob_.wait_for("read-done-" + std::to_string(size));
        }
    }
}

void write_bw::serve_receives(drv::context& ctx, const qp_list& qps, drv::completion_queue* cq,
                              const drv::memory_region& mr) {
    std::vector<drv::work_completion> wcs;
    const std::uint64_t slice = slice_of(mr.length);
    for (std::uint64_t size : cfg_.sizes) {
        // Receive i of QP q lands where the client sends message i from: its slice + (i * size) mod span.
        const std::uint64_t span = slice / size * size;
        std::vector<std::uint32_t> posted(qps.size(), 0), completed(qps.size(), 0);
        std::uint64_t done = 0;
        const std::uint64_t total = static_cast<std::uint64_t>(cfg_.iterations) * qps.size();
        auto post = [&] {
            for (std::size_t q = 0; q < qps.size(); ++q) {
                while (posted[q] < cfg_.iterations && posted[q] - completed[q] < qps[q]->rq_entries) {
                    drv::recv_wr wr;
                    wr.wr_id = static_cast<std::uint64_t>(q) << 32 | posted[q];
                    wr.addr = mr.addr + q * slice + (static_cast<std::uint64_t>(posted[q]) * size) % span;
                    wr.length = static_cast<std::uint32_t>(size);
                    wr.stag = mr.stag;
                    if (ctx.post_recv(qps[q], wr) != drv::status::ok) return false;
                    ++posted[q];
                }
            }
            return true;
        };
        if (!post()) {
            fail("server post_recv failed");
            return;
        }
        oob_.publish("receives-" + std::to_string(size), {});
        while (done < total) {
            wcs.clear();
            int n = 0;
            ctx.poll_cq(cq, 64, &wcs, &n);
            if (n == 0) {
                ctx.idle_cq(cq, cfg_.poll_interval_ps);
                continue;
            }
            for (const drv::work_completion& wc : wcs) {
                const std::uint64_t q = wc.wr_id >> 32;
                if (wc.status != regmap::cqe_status::success || wc.byte_len != size || q >= qps.size()) {
                    fail("server receive completion with status " + std::string(regmap::to_string(wc.status)) +
                         " and " + std::to_string(wc.byte_len) + " bytes at size " + std::to_string(size));
                    return;
                }
                ++completed[q];
                ++done;
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
    qp_list qps(cfg_.qps, nullptr);
    const std::uint32_t depth = next_pow2(cfg_.queue_depth);
    bool ok = ctx.open(station) == drv::status::ok && ctx.alloc_pd(&pd) == drv::status::ok &&
              ctx.alloc_buffer(cfg_.buffer, &buf) == drv::status::ok &&
              ctx.reg_mr(pd, buf, cfg_.buffer, regmap::mr_access::local_write, &mr) == drv::status::ok &&
              ctx.create_cq(next_pow2(static_cast<std::uint64_t>(depth) * 2 * cfg_.qps), &cq) == drv::status::ok;
    for (std::uint32_t q = 0; ok && q < cfg_.qps; ++q) {
        ok = ctx.create_qp(pd, cq, cq, depth, 2, &qps[q]) == drv::status::ok;
    }
    if (!ok) {
        fail("client set-up failed (see the log)");
        on_done_();
        return;
    }
    const remote_buffer remote = oob_.wait_for("server");
    if (const std::string why = connect_all(ctx, qps, server_ip, remote.port, result_); !why.empty()) {
        fail(why);
        on_done_();
        return;
    }
    if (cfg_.atomic) {
        run_atomics(ctx, qps, cq, mr, remote);
    } else {
        for (std::uint64_t size : cfg_.sizes) {
            if (!run_size(ctx, qps, cq, mr, remote, size)) break;
        }
    }
    result_.finished = result_.error.empty();
    on_done_();
}

bool write_bw::run_ops(drv::context& ctx, const qp_list& qps, drv::completion_queue* cq, write_bw_row& row,
                       const std::function<drv::send_wr(std::uint32_t, std::uint32_t)>& make_wr,
                       const std::string& what) {
    // Keep queue_depth operations outstanding on every QP until each has completed `iterations`;
    // each one's latency is post to completion, as perftest measures it.
    drv::host_bus& bus = ctx.bus();
    const std::size_t nq = qps.size();
    std::vector<std::vector<std::uint64_t>> posted_at(nq, std::vector<std::uint64_t>(cfg_.iterations, 0));
    row.latencies_ps.reserve(static_cast<std::size_t>(cfg_.iterations) * nq);
    std::vector<drv::work_completion> wcs;
    std::vector<std::uint32_t> posted(nq, 0), completed(nq, 0);
    const std::uint64_t total = static_cast<std::uint64_t>(cfg_.iterations) * nq;
    std::uint64_t done = 0;
    const std::uint64_t start = bus.now_ps();
    // After a pass every QP is full or done: only a QP with a completion since has room again, so a
    // pass visits those (ascending, as a pass over all would reach them), not all nq.
    std::vector<std::uint32_t> with_room(nq);
    for (std::uint32_t q = 0; q < nq; ++q) with_room[q] = q;
    while (done < total) {
        for (const std::uint32_t q : with_room) {
            while (posted[q] < cfg_.iterations && posted[q] - completed[q] < cfg_.queue_depth) {
                drv::send_wr wr = make_wr(q, posted[q]);
                wr.wr_id = static_cast<std::uint64_t>(q) << 32 | posted[q];
                posted_at[q][posted[q]] = bus.now_ps();
                if (ctx.post_send(qps[q], wr) != drv::status::ok) {
                    fail("post_send failed (" + what + ")");
                    return false;
                }
                ++posted[q];
            }
        }
        with_room.clear();
        wcs.clear();
        int n = 0;
        ctx.poll_cq(cq, 64, &wcs, &n);
        if (n == 0) {
            if (cfg_.event_mode)
                ctx.wait_cq(cq, 1'000'000'000'000ULL);
            else
                ctx.idle_cq(cq, cfg_.poll_interval_ps);
            continue;
        }
        const std::uint64_t now = bus.now_ps();
        for (const drv::work_completion& wc : wcs) {
            if (wc.status != regmap::cqe_status::success) ++row.errors;
            const std::uint64_t q = wc.wr_id >> 32;
            const std::uint64_t i = wc.wr_id & 0xffffffffu;
            if (q < nq && i < cfg_.iterations) {
                row.latencies_ps.push_back(now - posted_at[q][i]);
                ++completed[q];
                with_room.push_back(static_cast<std::uint32_t>(q));
            }
            ++done;
        }
        std::sort(with_room.begin(), with_room.end());
        with_room.erase(std::unique(with_room.begin(), with_room.end()), with_room.end());
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

bool write_bw::run_atomics(drv::context& ctx, const qp_list& qps, drv::completion_queue* cq,
                           const drv::memory_region& mr, const remote_buffer& remote) {
    drv::host_bus& bus = ctx.bus();
    write_bw_row row;
    row.size = 8;
    const std::uint64_t total = static_cast<std::uint64_t>(cfg_.iterations) * qps.size();
    row.iterations = total;
    // Every QP keeps its results in its own slice of the local buffer; all target one counter.
    const std::uint64_t slice = slice_of(mr.length);
    const std::uint64_t slots = slice / 8;
    const auto fetch_add = [&](std::uint32_t q, std::uint32_t i) {
        drv::send_wr wr;
        wr.opcode = regmap::wr_opcode::atomic_fetch_add;
        wr.local_addr = mr.addr + q * slice + 8 * (i % slots);
        wr.length = 8;
        wr.local_stag = mr.stag;
        wr.remote_addr = remote.addr;  // one shared 64-bit counter
        wr.remote_stag = remote.stag;
        wr.operand = 1;
        return wr;
    };
    if (!run_ops(ctx, qps, cq, row, fetch_add, "atomics")) return false;
    row.bytes = 8ull * total;
    // Linearizable FetchAdd(1) from all QPs: the returned originals are exactly 0 .. n-1 (each once,
    // whichever QP got it) and the counter ends at n.
    oob_.publish("atomics-done", {});
    const std::uint64_t counter = oob_.wait_for("atomic-counter").addr;
    const std::uint64_t checked = std::min<std::uint64_t>(cfg_.iterations, slots);
    std::vector<std::uint8_t> results(checked * 8);
    std::vector<bool> seen(total, false);
    std::uint64_t bad = 0;
    for (std::uint32_t q = 0; q < qps.size(); ++q) {
        bus.mem_read(mr.addr + q * slice, results.data(), results.size());
        for (std::uint64_t i = 0; i < checked; ++i) {
            std::uint64_t v = 0;
            std::memcpy(&v, results.data() + 8 * i, 8);
            if (v >= total || seen[v])
                ++bad;
            else
                seen[v] = true;
        }
    }
    row.integrity.bytes_checked = results.size() * qps.size() + 8;
    row.integrity.ok = bad == 0 && counter == total;
    row.integrity.bytes_mismatched = bad * 8 + (counter == total ? 0 : 8);
    if (!row.integrity.ok) {
        row.integrity.detail = "counter " + std::to_string(counter) + " (expected " + std::to_string(total) + "), " +
                               std::to_string(bad) + " returned values out of place";
    }
    result_.rows.push_back(std::move(row));
    return true;
}

bool write_bw::run_size(drv::context& ctx, const qp_list& qps, drv::completion_queue* cq, const drv::memory_region& mr,
                        const remote_buffer& remote, std::uint64_t size) {
    drv::host_bus& bus = ctx.bus();
    write_bw_row row;
    row.size = size;
    row.iterations = static_cast<std::uint64_t>(cfg_.iterations) * qps.size();
    const std::uint64_t slice = slice_of(std::min(mr.length, remote.length));
    const std::uint64_t span = slice / size * size;
    const std::uint64_t touched = std::min<std::uint64_t>(span, size * cfg_.iterations);
    // A fresh pattern per size and QP: stale bytes from an earlier size cannot pass the check.
    if (cfg_.read) {
        oob_.wait_for("pattern-" + std::to_string(size));
    } else {
        std::vector<std::uint8_t> pattern(touched);
        for (std::uint32_t q = 0; q < qps.size(); ++q) {
            fill_pattern(pattern.data(), pattern.size(), pattern_seed(q), size);
            bus.mem_write(mr.addr + q * slice, pattern.data(), pattern.size());
        }
    }
    // Sends need the peer's receives posted first (RNR would be a Terminate in iWARP).
    if (cfg_.send) oob_.wait_for("receives-" + std::to_string(size));

    const auto op = [&](std::uint32_t q, std::uint32_t i) {
        const std::uint64_t off = q * slice + (static_cast<std::uint64_t>(i) * size) % span;
        if (q == 0 && i == 0 && cfg_.inject != "none" && !cfg_.send && !cfg_.read) {
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
    if (!run_ops(ctx, qps, cq, row, op, "size " + std::to_string(size))) return false;
    row.bytes = size * row.iterations;
    for (std::uint32_t q = 0; q < qps.size(); ++q) {
        const std::uint64_t off = q * slice;
        merge_integrity(row.integrity, cfg_.read ? check_(false, remote.addr + off, mr.addr + off, touched)
                                                 : check_(true, mr.addr + off, remote.addr + off, touched));
    }
    if (cfg_.read) oob_.publish("read-done-" + std::to_string(size), {});
    RNIC_LOG_AT(info, app, bus.now_ps(), bus.host_name() + ".write_bw",
                "size " << size << ": " << row.iterations << " operations done, integrity "
                        << (row.integrity.ok ? "ok" : row.integrity.detail));
    result_.rows.push_back(std::move(row));
    return true;
}

}  // namespace rnic::platform
