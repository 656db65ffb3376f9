#include "workloads/incast.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "core/log.h"
#include "integrity.h"
#include "workloads/workload_math.h"
#include "workloads/write_bw.h"  // fill_pattern

namespace rnic::platform {

namespace {

constexpr std::uint64_t kRequestTag = 1ull << 62;  // wr_id of a request Send (receiver) or its receive (sender)

boost::json::object spread_ns(const std::vector<std::uint64_t>& v) {
    return {{"mean", mean_ns(v)},
            {"p50", percentile_ns(v, 50)},
            {"p99", percentile_ns(v, 99)},
            {"p999", percentile_ns(v, 99.9)},
            {"max", percentile_ns(v, 100)}};
}

}  // namespace

incast::incast(const incast_config& cfg, std::vector<std::string> host_names, oob_channel& oob, host_peek peek,
               std::function<void()> on_done)
    : cfg_(cfg),
      names_(std::move(host_names)),
      oob_(oob),
      peek_(std::move(peek)),
      on_done_(std::move(on_done)),
      flow_ps_(cfg.senders.size(), std::vector<std::uint64_t>(static_cast<std::size_t>(cfg.rounds) * cfg.qps, 0)),
      sender_bytes_(cfg.senders.size(), 0) {}

bool incast::has_program(int host) const {
    return host == cfg_.receiver || std::find(cfg_.senders.begin(), cfg_.senders.end(), host) != cfg_.senders.end();
}

void incast::program(int host, drv::host_bus& bus, const drv::station_config& station) {
    if (host == cfg_.receiver) {
        receive(bus, station);
        return;
    }
    const auto it = std::find(cfg_.senders.begin(), cfg_.senders.end(), host);
    if (it != cfg_.senders.end()) send(static_cast<int>(it - cfg_.senders.begin()), bus, station);
}

void incast::fail(const std::string& what) {
    record_failure(result_, what);
}

std::uint64_t incast::service_time_ps(int k, std::uint32_t q, std::uint32_t round) const {
    if (cfg_.jitter_ps == 0) return 0;
    std::uint64_t z = cfg_.seed * 0x9e3779b97f4a7c15ULL ^ (static_cast<std::uint64_t>(k) << 40) ^
                      (static_cast<std::uint64_t>(q) << 24) ^ round;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;  // splitmix64's finaliser
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return z % (cfg_.jitter_ps + 1);
}

std::uint64_t incast::pattern_seed(int k, std::uint32_t round) const {
    return cfg_.seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(k + 1)) ^
           (0xc2b2ae3d27d4eb4fULL * (static_cast<std::uint64_t>(round) + 1));
}

void incast::receive(drv::host_bus& bus, const drv::station_config& station) {
    drv::context ctx(bus);
    const auto n = static_cast<std::uint32_t>(cfg_.senders.size());
    const std::uint32_t flows = n * cfg_.qps;
    const std::uint64_t data_bytes = n * cfg_.size;
    // The buffer: every sender's slice of `size` bytes, then one request message per sender.
    const std::uint64_t length = data_bytes + n * cfg_.request_bytes;
    std::uint32_t pd = 0;
    std::uint64_t buf = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    std::vector<drv::queue_pair*> qps(flows, nullptr);
    bool ok = ctx.open(station) == drv::status::ok && ctx.alloc_pd(&pd) == drv::status::ok &&
              ctx.alloc_buffer(length, &buf) == drv::status::ok &&
              ctx.reg_mr(pd, buf, length, regmap::mr_access::remote_write | regmap::mr_access::local_write, &mr) ==
                  drv::status::ok &&
              ctx.create_cq(next_pow2(4ull * flows + 2ull * n + 2), &cq) == drv::status::ok;
    for (std::uint32_t f = 0; ok && f < flows; ++f) ok = ctx.create_qp(pd, cq, cq, 4, 4, &qps[f]) == drv::status::ok;
    if (!ok) {
        fail("incast receiver set-up failed (see the log)");
        on_done_();
        return;
    }
    // Immediate Data consumes a receive (RFC 7306 §6): one posted per flow, reposted as each arrives.
    auto post_receive = [&](std::uint32_t f) {
        drv::recv_wr wr;
        wr.wr_id = f;
        wr.addr = mr.addr + data_bytes;
        wr.length = static_cast<std::uint32_t>(cfg_.request_bytes);
        wr.stag = mr.stag;
        return ctx.post_recv(qps[f], wr) == drv::status::ok;
    };
    oob_.publish("incast-receiver", {station.ipv4, cfg_.port, mr.stag, mr.addr, length});
    // The aggregator opens the connections, as a partition-aggregate front end does: it is then the
    // MPA initiator and may send first (RFC 5044 §7.1.2 rule 4 holds a responder until then).
    for (std::uint32_t k = 0; k < n; ++k) {
        const remote_buffer sender = oob_.wait_for("incast-listening-" + std::to_string(k));
        for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
            const std::uint32_t f = k * cfg_.qps + q;
            const std::uint64_t t0 = bus.now_ps();
            if (!post_receive(f) ||
                ctx.connect(qps[f], sender.ipv4, cfg_.port, static_cast<std::uint16_t>(40000 + f)) != drv::status::ok) {
                fail("incast receiver: connecting flow " + std::to_string(q) + " of " +
                     names_[static_cast<std::size_t>(cfg_.senders[k])] + " failed");
                on_done_();
                return;
            }
            if (f == 0) result_.connect_ps = bus.now_ps() - t0;
        }
    }
    for (std::uint32_t k = 0; k < n; ++k) oob_.wait_for("incast-sender-" + std::to_string(k));

    workload_row flows_row;  // one row: every flow of every round (the rounds are in fabric_results)
    flows_row.op = "incast_flow";
    flows_row.size = chunk();
    std::vector<drv::work_completion> wcs;
    std::vector<std::uint8_t> expected(cfg_.size);
    first_start_ps_ = bus.now_ps();
    for (std::uint32_t r = 0; r < cfg_.rounds; ++r) {
        const std::uint64_t t0 = bus.now_ps();
        // One request per connection: an MPA responder sends nothing before the initiator's first
        // FPDU (RFC 5044 §7.1.2 rule 4), and a partition-aggregate front end asks each connection.
        for (std::uint32_t f = 0; f < flows; ++f) {
            drv::send_wr req;
            req.wr_id = kRequestTag | f;
            req.opcode = regmap::wr_opcode::send;
            req.local_addr = mr.addr + data_bytes + (f / cfg_.qps) * cfg_.request_bytes;
            req.length = static_cast<std::uint32_t>(cfg_.request_bytes);
            req.local_stag = mr.stag;
            if (ctx.post_send(qps[f], req) != drv::status::ok) {
                fail("incast receiver: request " + std::to_string(r) + " on flow " + std::to_string(f) + " not posted");
                on_done_();
                return;
            }
        }
        std::uint32_t immediates = 0, requests_done = 0;
        std::uint64_t t_last = t0;
        while (immediates < flows || requests_done < flows) {
            if (!poll_once(ctx, cq, wcs, cfg_.poll_interval_ps, cfg_.idle)) continue;
            const std::uint64_t now = bus.now_ps();
            for (const drv::work_completion& wc : wcs) {
                if (wc.status != regmap::cqe_status::success) {
                    fail("incast receiver: completion with status " + std::string(regmap::to_string(wc.status)) +
                         " in round " + std::to_string(r));
                    on_done_();
                    return;
                }
                if (wc.opcode == drv::wc_opcode::send) {
                    ++requests_done;
                    continue;
                }
                const auto k = static_cast<std::uint32_t>(wc.imm_data >> 40);
                const auto q = static_cast<std::uint32_t>(wc.imm_data >> 32) & 0xffu;
                const auto round = static_cast<std::uint32_t>(wc.imm_data & 0xffffffffu);
                if (wc.opcode != drv::wc_opcode::recv_imm || !wc.with_imm || k >= n || q >= cfg_.qps || round != r ||
                    wc.wr_id != k * cfg_.qps + q) {
                    fail("incast receiver: unexpected completion (opcode " +
                         std::to_string(static_cast<int>(wc.opcode)) + ", immediate " + std::to_string(wc.imm_data) +
                         ") in round " + std::to_string(r));
                    on_done_();
                    return;
                }
                flow_ps_[k][static_cast<std::size_t>(r) * cfg_.qps + q] = now - t0;
                flows_row.latencies_ps.push_back(now - t0);
                sender_bytes_[k] += chunk();  // placed and seen by the receiver
                t_last = now;
                ++immediates;
                if (!post_receive(k * cfg_.qps + q)) {
                    fail("incast receiver: post_recv failed");
                    on_done_();
                    return;
                }
            }
        }
        round_ps_.push_back(t_last - t0);
        last_end_ps_ = t_last;
        // Every byte of the round against the pattern sender k was to send in it (the senders' own
        // source buffers change for the next round as soon as their Writes are acknowledged).
        for (std::uint32_t k = 0; k < n; ++k) {
            fill_pattern(expected.data(), expected.size(), pattern_seed(static_cast<int>(k), r), cfg_.size);
            const integrity_result part = compare_ranges(
                [&expected](std::uint64_t a, void* d, std::size_t len) {
                    if (a + len > expected.size()) return false;
                    std::copy_n(expected.data() + a, len, static_cast<std::uint8_t*>(d));
                    return true;
                },
                0, [this](std::uint64_t a, void* d, std::size_t len) { return peek_(cfg_.receiver, a, d, len); },
                mr.addr + k * cfg_.size, cfg_.size);
            if (!part.ok && flows_row.integrity.ok) {
                RNIC_LOG_AT(error, app, bus.now_ps(), bus.host_name() + ".incast",
                            "round " << r << ", sender " << names_[static_cast<std::size_t>(cfg_.senders[k])] << ": "
                                     << part.detail);
            }
            integrity_result labelled = part;
            if (!part.ok)
                labelled.detail = "round " + std::to_string(r) + ", sender " +
                                  names_[static_cast<std::size_t>(cfg_.senders[k])] + ": " + part.detail;
            merge_integrity(flows_row.integrity, labelled);
        }
    }
    const std::uint64_t total = cfg_.size * n * cfg_.rounds;
    flows_row.iterations = static_cast<std::uint64_t>(flows) * cfg_.rounds;
    flows_row.bytes = total;
    flows_row.elapsed_ps = last_end_ps_ - first_start_ps_;
    RNIC_LOG_AT(info, app, bus.now_ps(), bus.host_name() + ".incast",
                cfg_.rounds << " rounds of " << n << " x " << cfg_.size << " bytes done, integrity "
                            << (flows_row.integrity.ok ? "ok" : flows_row.integrity.detail));
    result_.rows.push_back(std::move(flows_row));
    result_.finished = result_.error.empty();
    on_done_();
}

void incast::send(int k, drv::host_bus& bus, const drv::station_config& station) {
    drv::context ctx(bus);
    const std::uint64_t length = cfg_.size + cfg_.request_bytes;
    std::uint32_t pd = 0;
    std::uint64_t buf = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    std::vector<drv::queue_pair*> qps(cfg_.qps, nullptr);
    const std::string me = names_[static_cast<std::size_t>(cfg_.senders[static_cast<std::size_t>(k)])];
    bool ok = ctx.open(station) == drv::status::ok && ctx.alloc_pd(&pd) == drv::status::ok &&
              ctx.alloc_buffer(length, &buf) == drv::status::ok &&
              ctx.reg_mr(pd, buf, length, regmap::mr_access::local_write, &mr) == drv::status::ok &&
              ctx.create_cq(next_pow2(4ull * cfg_.qps + 4), &cq) == drv::status::ok;
    for (std::uint32_t q = 0; ok && q < cfg_.qps; ++q) ok = ctx.create_qp(pd, cq, cq, 4, 4, &qps[q]) == drv::status::ok;
    if (!ok) {
        fail("incast sender " + me + ": set-up failed (see the log)");
        return;
    }
    if (ctx.listen(cfg_.port) != drv::status::ok) {
        fail("incast sender " + me + ": listen failed");
        return;
    }
    oob_.publish("incast-listening-" + std::to_string(k), {station.ipv4, cfg_.port, 0, 0, 0});
    // The receiver connects this sender's QPs in order.
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
        if (ctx.accept(qps[q], cfg_.port) != drv::status::ok) {
            fail("incast sender " + me + ": accepting QP " + std::to_string(q + 1) + " failed");
            return;
        }
    }
    const remote_buffer remote = oob_.wait_for("incast-receiver");
    // One request receive per QP, reposted as each request arrives.
    auto post_request_receive = [&](std::uint32_t q) {
        drv::recv_wr wr;
        wr.wr_id = kRequestTag | q;
        wr.addr = mr.addr + cfg_.size;
        wr.length = static_cast<std::uint32_t>(cfg_.request_bytes);
        wr.stag = mr.stag;
        return ctx.post_recv(qps[q], wr) == drv::status::ok;
    };
    std::vector<std::uint8_t> source(cfg_.size);
    fill_pattern(source.data(), source.size(), pattern_seed(k, 0), cfg_.size);
    bus.mem_write(mr.addr, source.data(), source.size());
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
        if (!post_request_receive(q)) {
            fail("incast sender " + me + ": post_recv failed");
            return;
        }
    }
    oob_.publish("incast-sender-" + std::to_string(k), {station.ipv4, 0, mr.stag, mr.addr, cfg_.size});
    std::vector<drv::work_completion> wcs;
    // Requests that have come and wait for their answer: a QP, and when its answer is ready (the
    // request's arrival plus this sender's service time for it, seeded per sender, QP and round).
    struct request {
        std::uint32_t q;
        std::uint64_t ready_ps;
    };
    std::deque<request> asked;  // in order of ready time
    std::vector<std::uint32_t> requests_seen(cfg_.qps, 0);
    for (std::uint32_t r = 0; r < cfg_.rounds; ++r) {
        // Each request is answered on its own connection as it comes; a request of the next round
        // (possible once the receiver has this round's data) waits until this round is acknowledged
        // and the next data is in place.
        std::uint32_t answered = 0, done = 0;
        while (done < cfg_.qps) {
            while (!asked.empty() && answered < cfg_.qps && asked.front().ready_ps <= bus.now_ps()) {
                const std::uint32_t q = asked.front().q;
                asked.pop_front();
                drv::send_wr wr;
                wr.wr_id = q;
                wr.opcode = regmap::wr_opcode::rdma_write_with_imm;
                wr.local_addr = mr.addr + q * chunk();
                wr.length = static_cast<std::uint32_t>(chunk());
                wr.local_stag = mr.stag;
                wr.remote_addr = remote.addr + static_cast<std::uint64_t>(k) * cfg_.size + q * chunk();
                wr.remote_stag = remote.stag;
                wr.imm_data = flow_tag(k, q, r);
                if (ctx.post_send(qps[q], wr) != drv::status::ok) {
                    fail("incast sender " + me + ": post_send failed in round " + std::to_string(r));
                    return;
                }
                ++answered;
            }
            wcs.clear();
            int got = 0;
            ctx.poll_cq(cq, 16, &wcs, &got);
            if (got == 0) {
                if (!asked.empty() && answered < cfg_.qps) {
                    // Busy preparing an answer: the CPU is occupied until it is ready.
                    const std::uint64_t now = bus.now_ps();
                    bus.spend(asked.front().ready_ps > now ? asked.front().ready_ps - now : cfg_.poll_interval_ps);
                } else if (cfg_.senders_sleep) {
                    // A worker with nothing to do sleeps until its CQ interrupts (event) or polls again.
                    ctx.wait_cq(cq, 1'000'000'000'000ULL);
                } else {
                    // Nothing to do until a completion (a request or a Write done).
                    idle_pass(ctx, cq, cfg_.poll_interval_ps, cfg_.idle);
                }
            }
            for (const drv::work_completion& wc : wcs) {
                if (wc.status != regmap::cqe_status::success) {
                    fail("incast sender " + me + ": completion with status " + regmap::to_string(wc.status) +
                         " in round " + std::to_string(r));
                    return;
                }
                if (wc.opcode == drv::wc_opcode::recv) {
                    const auto q = static_cast<std::uint32_t>(wc.wr_id & 0xffffffffu);
                    if (q >= cfg_.qps || !post_request_receive(q)) {
                        fail("incast sender " + me + ": bad request completion or post_recv failed");
                        return;
                    }
                    const request req{q, bus.now_ps() + service_time_ps(k, q, requests_seen[q]++)};
                    auto at = asked.end();
                    while (at != asked.begin() && std::prev(at)->ready_ps > req.ready_ps) --at;
                    asked.insert(at, req);
                } else {
                    ++done;
                }
            }
        }
        // The next round's data, ready before the receiver asks again (a server with its answer cached).
        if (r + 1 < cfg_.rounds) {
            fill_pattern(source.data(), source.size(), pattern_seed(k, r + 1), cfg_.size);
            bus.mem_write(mr.addr, source.data(), source.size());
        }
    }
}

boost::json::object incast::fabric_results() const {
    boost::json::object o;
    const auto n = cfg_.senders.size();
    o["pattern"] = "incast";
    o["receiver"] = names_[static_cast<std::size_t>(cfg_.receiver)];
    o["senders"] = n;
    o["qps_per_sender"] = cfg_.qps;
    o["bytes_per_sender_per_round"] = cfg_.size;
    o["rounds_planned"] = cfg_.rounds;
    boost::json::array rounds;
    for (std::uint64_t t : round_ps_) rounds.push_back(static_cast<double>(t) / 1000.0);
    o["round_completion_ns"] = std::move(rounds);
    o["round_completion"] = spread_ns(round_ps_);
    std::vector<std::uint64_t> all;
    std::vector<double> goodput;
    for (const auto& per_sender : flow_ps_) {
        for (std::size_t i = 0; i < round_ps_.size() * cfg_.qps && i < per_sender.size(); ++i) {
            all.push_back(per_sender[i]);
            if (per_sender[i] > 0)
                goodput.push_back(static_cast<double>(chunk()) * 8 / (static_cast<double>(per_sender[i]) * 1e-3));
        }
    }
    o["flow_completion"] = spread_ns(all);
    std::sort(goodput.begin(), goodput.end());
    double sum = 0;
    for (double g : goodput) sum += g;
    // Per flow: its bytes over its completion time (from the request), in Gb/s.
    o["flow_goodput_gbps"] = {{"min", goodput.empty() ? 0.0 : goodput.front()},
                              {"mean", goodput.empty() ? 0.0 : sum / static_cast<double>(goodput.size())},
                              {"max", goodput.empty() ? 0.0 : goodput.back()}};
    // Every flow: sender k's QP q in round r (from the receiver's request to the data checked).
    boost::json::array per_flow;
    for (std::size_t k = 0; k < n; ++k) {
        for (std::size_t r = 0; r < round_ps_.size(); ++r) {
            for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
                boost::json::object f = flow_record(names_[static_cast<std::size_t>(cfg_.senders[k])],
                                                    names_[static_cast<std::size_t>(cfg_.receiver)], chunk(),
                                                    flow_ps_[k][r * cfg_.qps + q]);
                f["round"] = r;
                f["qp"] = q;
                per_flow.push_back(std::move(f));
            }
        }
    }
    o["per_flow"] = std::move(per_flow);
    const double secs = static_cast<double>(last_end_ps_ - first_start_ps_) * 1e-12;
    boost::json::array hosts;
    for (std::size_t k = 0; k < n; ++k) {
        std::vector<std::uint64_t> mine(
            flow_ps_[k].begin(), flow_ps_[k].begin() + static_cast<std::ptrdiff_t>(
                                                           std::min(flow_ps_[k].size(), round_ps_.size() * cfg_.qps)));
        hosts.push_back({{"host", names_[static_cast<std::size_t>(cfg_.senders[k])]},
                         {"role", "sender"},
                         {"bytes_delivered", sender_bytes_[k]},
                         {"goodput_gbps", secs > 0 ? static_cast<double>(sender_bytes_[k]) * 8 / secs / 1e9 : 0.0},
                         {"flow_completion_mean_ns", mean_ns(mine)},
                         {"flow_completion_max_ns", percentile_ns(mine, 100)}});
    }
    const std::uint64_t placed = cfg_.size * n * round_ps_.size();
    hosts.push_back({{"host", names_[static_cast<std::size_t>(cfg_.receiver)]},
                     {"role", "receiver"},
                     {"bytes_received", placed},
                     {"goodput_gbps", secs > 0 ? static_cast<double>(placed) * 8 / secs / 1e9 : 0.0}});
    o["hosts"] = std::move(hosts);
    return o;
}

}  // namespace rnic::platform
