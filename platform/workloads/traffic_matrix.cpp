#include "workloads/traffic_matrix.h"

#include <algorithm>
#include <cmath>

#include "core/log.h"
#include "integrity.h"
#include "workloads/workload_math.h"
#include "workloads/write_bw.h"  // fill_pattern

namespace rnic::platform {

namespace {

std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint64_t flow_seed(std::uint64_t seed, std::size_t f) {
    return seed ^ (0x9e3779b97f4a7c15ULL * (f + 1));
}

}  // namespace

std::vector<matrix_flow> matrix_flows(const traffic_matrix_config& cfg) {
    std::vector<matrix_flow> flows;
    const int n = cfg.hosts;
    if (cfg.all_to_all) {
        for (int s = 0; s < n; ++s) {
            for (int d = 0; d < n; ++d) {
                if (s != d) flows.push_back({s, d});
            }
        }
        return flows;
    }
    // A seeded derangement: Sattolo's algorithm gives a single cycle through every host, so no
    // host maps to itself.
    std::vector<int> perm(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
    std::uint64_t state = cfg.seed * 0x632be59bd9b4e019ULL + 1;
    for (int i = n - 1; i > 0; --i) {
        state = mix(state + 0x9e3779b97f4a7c15ULL);
        const auto j = static_cast<std::size_t>(state % static_cast<std::uint64_t>(i));  // j < i
        std::swap(perm[static_cast<std::size_t>(i)], perm[j]);
    }
    for (int s = 0; s < n; ++s) flows.push_back({s, perm[static_cast<std::size_t>(s)]});
    return flows;
}

traffic_matrix::traffic_matrix(const traffic_matrix_config& cfg, std::vector<std::string> host_names, oob_channel& oob,
                               host_peek peek, std::function<void()> on_done)
    : cfg_(cfg),
      names_(std::move(host_names)),
      oob_(oob),
      peek_(std::move(peek)),
      on_done_(std::move(on_done)),
      flows_(matrix_flows(cfg)),
      flow_ps_(flows_.size(), 0),
      src_addr_(flows_.size(), 0),
      dst_addr_(flows_.size(), 0) {
    std::vector<bool> is_source(static_cast<std::size_t>(cfg.hosts), false);
    for (const matrix_flow& f : flows_) is_source[static_cast<std::size_t>(f.src)] = true;
    sources_ = static_cast<int>(std::count(is_source.begin(), is_source.end(), true));
}

bool traffic_matrix::has_program(int host) const {
    return std::any_of(flows_.begin(), flows_.end(),
                       [host](const matrix_flow& f) { return f.src == host || f.dst == host; });
}

void traffic_matrix::program(int h, drv::host_bus& bus, const drv::station_config& station) {
    drv::context ctx(bus);
    std::vector<std::size_t> mine, out;  // my flows in global order; those I send
    for (std::size_t f = 0; f < flows_.size(); ++f) {
        if (flows_[f].src == h || flows_[f].dst == h) mine.push_back(f);
        if (flows_[f].src == h) out.push_back(f);
    }
    const std::uint64_t length = mine.size() * slot_bytes();
    std::uint32_t pd = 0;
    std::uint64_t buf = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    std::vector<drv::queue_pair*> qps(flows_.size(), nullptr);
    const std::uint32_t depth = next_pow2(cfg_.queue_depth);
    bool ok = ctx.open(station) == drv::status::ok && ctx.alloc_pd(&pd) == drv::status::ok &&
              ctx.alloc_buffer(length, &buf) == drv::status::ok &&
              ctx.reg_mr(pd, buf, length, regmap::mr_access::remote_write | regmap::mr_access::local_write, &mr) ==
                  drv::status::ok &&
              ctx.create_cq(next_pow2(2ull * depth * std::max<std::size_t>(out.size(), 1) + 4), &cq) == drv::status::ok;
    for (std::size_t k = 0; ok && k < mine.size(); ++k) {
        ok = ctx.create_qp(pd, cq, cq, depth, 2, &qps[mine[k]]) == drv::status::ok;
    }
    // Each of my flows has its slots here: the source's pattern, or the destination's landing area.
    std::vector<std::uint8_t> pattern(slot_bytes());
    for (std::size_t k = 0; ok && k < mine.size(); ++k) {
        const std::size_t f = mine[k];
        const std::uint64_t at = buf + k * slot_bytes();
        if (flows_[f].src == h) {
            src_addr_[f] = at;
            fill_pattern(pattern.data(), pattern.size(), flow_seed(cfg_.seed, f), cfg_.size);
            bus.mem_write(at, pattern.data(), pattern.size());
        } else {
            dst_addr_[f] = at;
            oob_.publish("tm-flow-" + std::to_string(f), {station.ipv4, 0, mr.stag, at, slot_bytes()});
            ok = ctx.listen(static_cast<std::uint16_t>(cfg_.port + flows_[f].src)) == drv::status::ok;
        }
    }
    const std::string me = names_[static_cast<std::size_t>(h)];
    if (!ok) {
        fail(me + ": traffic matrix set-up failed (see the log)");
        finish_host();
        return;
    }
    oob_.publish("tm-listening-" + std::to_string(h), {station.ipv4, 0, 0, 0, 0});
    // Connections in the one global order: no cycle of waits (the earliest unfinished flow always
    // has both its hosts at it).
    std::uint16_t local_port = 40000;
    for (std::size_t f : mine) {
        const matrix_flow& fl = flows_[f];
        drv::status st;
        if (fl.src == h) {
            const remote_buffer dst = oob_.wait_for("tm-listening-" + std::to_string(fl.dst));
            st = ctx.connect(qps[f], dst.ipv4, static_cast<std::uint16_t>(cfg_.port + h), local_port++);
        } else {
            st = ctx.accept(qps[f], static_cast<std::uint16_t>(cfg_.port + fl.src));
        }
        if (st != drv::status::ok) {
            fail(me + ": connection of flow " + names_[static_cast<std::size_t>(fl.src)] + " -> " +
                 names_[static_cast<std::size_t>(fl.dst)] + " failed");
            finish_host();
            return;
        }
    }
    // Out of band, as perftest's hosts agree to start: every flow begins when every host is
    // connected, each after a seeded 0..jitter of its own.
    oob_.publish("tm-ready-" + std::to_string(h), {});
    for (int other = 0; other < cfg_.hosts; ++other) {
        if (has_program(other)) oob_.wait_for("tm-ready-" + std::to_string(other));
    }
    if (out.empty()) return;  // a destination only: its CPU has nothing more to do
    const std::uint64_t start = bus.now_ps();
    std::vector<std::uint64_t> start_at(out.size(), start);
    for (std::size_t k = 0; k < out.size() && cfg_.jitter_ps > 0; ++k) {
        start_at[k] += mix(flow_seed(cfg_.seed, out[k]) + 0x5bd1e995ULL) % (cfg_.jitter_ps + 1);
    }
    // Until the last flow has started, the loop must run its passes to post it on time: a flow not
    // started has nothing outstanding, so no completion would wake a sleeping CPU for it.
    const std::uint64_t last_start = *std::max_element(start_at.begin(), start_at.end());
    // queue_depth Writes outstanding on each outgoing flow.
    std::vector<remote_buffer> remote(out.size());
    for (std::size_t k = 0; k < out.size(); ++k) remote[k] = oob_.wait_for("tm-flow-" + std::to_string(out[k]));
    std::vector<std::uint32_t> posted(out.size(), 0), completed(out.size(), 0);
    std::vector<std::uint64_t> started(out.size(), 0);
    std::size_t flows_done = 0;
    std::vector<drv::work_completion> wcs;
    while (flows_done < out.size()) {
        for (std::size_t k = 0; k < out.size(); ++k) {
            while (posted[k] < cfg_.messages && posted[k] - completed[k] < cfg_.queue_depth &&
                   start_at[k] <= bus.now_ps()) {
                const std::uint64_t slot = (posted[k] % cfg_.queue_depth) * cfg_.size;
                drv::send_wr wr;
                wr.wr_id = static_cast<std::uint64_t>(k) << 32 | posted[k];
                wr.opcode = regmap::wr_opcode::rdma_write;
                wr.local_addr = src_addr_[out[k]] + slot;
                wr.length = static_cast<std::uint32_t>(cfg_.size);
                wr.local_stag = mr.stag;
                wr.remote_addr = remote[k].addr + slot;
                wr.remote_stag = remote[k].stag;
                if (posted[k] == 0) {
                    started[k] = bus.now_ps();
                    first_post_ps_ = std::min(first_post_ps_, started[k]);
                }
                if (ctx.post_send(qps[out[k]], wr) != drv::status::ok) {
                    fail(me + ": post_send failed");
                    finish_host();
                    return;
                }
                ++posted[k];
            }
        }
        if (!poll_once(ctx, cq, wcs, cfg_.poll_interval_ps,
                       bus.now_ps() < last_start ? idle_wait::every_pass : cfg_.idle))
            continue;
        const std::uint64_t now = bus.now_ps();
        for (const drv::work_completion& wc : wcs) {
            const std::size_t k = wc.wr_id >> 32;
            if (wc.status != regmap::cqe_status::success || k >= out.size()) {
                fail(me + ": completion with status " + std::string(regmap::to_string(wc.status)));
                finish_host();
                return;
            }
            if (++completed[k] == cfg_.messages) {
                flow_ps_[out[k]] = now - started[k];
                last_completion_ps_ = std::max(last_completion_ps_, now);
                ++flows_done;
            }
        }
    }
    finish_host();
}

void traffic_matrix::finish_host() {
    ++hosts_done_;
    if (reported_) return;
    if (!result_.error.empty()) {
        reported_ = true;  // a failure ends the run at once
        on_done_();
        return;
    }
    if (hosts_done_ < sources_) return;  // the last source to finish checks every flow
    reported_ = true;
    workload_row row;
    row.op = "flow";
    row.size = cfg_.size;
    const std::uint64_t touched = std::min<std::uint64_t>(cfg_.messages, cfg_.queue_depth) * cfg_.size;
    for (std::size_t f = 0; f < flows_.size(); ++f) {
        if (flow_ps_[f] > 0) row.latencies_ps.push_back(flow_ps_[f]);
        const int s = flows_[f].src, d = flows_[f].dst;
        integrity_result part = compare_ranges(
            [this, s](std::uint64_t a, void* p, std::size_t n) { return peek_(s, a, p, n); }, src_addr_[f],
            [this, d](std::uint64_t a, void* p, std::size_t n) { return peek_(d, a, p, n); }, dst_addr_[f], touched);
        if (!part.ok) {
            part.detail = "flow " + names_[static_cast<std::size_t>(s)] + " -> " + names_[static_cast<std::size_t>(d)] +
                          ": " + part.detail;
        }
        merge_integrity(row.integrity, part);
    }
    row.iterations = static_cast<std::uint64_t>(flows_.size()) * cfg_.messages;
    row.bytes = row.iterations * cfg_.size;
    row.elapsed_ps =
        last_completion_ps_ > first_post_ps_ && first_post_ps_ != UINT64_MAX ? last_completion_ps_ - first_post_ps_ : 0;
    if (result_.error.empty() && row.latencies_ps.size() != flows_.size()) {
        record_failure(result_, "only " + std::to_string(row.latencies_ps.size()) + " of " +
                                    std::to_string(flows_.size()) + " flows completed");
    }
    result_.rows.push_back(std::move(row));
    result_.setup_ok = true;
    result_.finished = result_.error.empty();
    on_done_();
}

boost::json::object traffic_matrix::fabric_results() const {
    boost::json::object o;
    o["pattern"] = cfg_.all_to_all ? "all_to_all" : "permutation";
    o["flows"] = flows_.size();
    o["bytes_per_flow"] = cfg_.size * cfg_.messages;
    std::vector<std::uint64_t> done;
    std::vector<double> goodput;
    for (std::size_t f = 0; f < flows_.size(); ++f) {
        if (flow_ps_[f] == 0) continue;
        done.push_back(flow_ps_[f]);
        goodput.push_back(static_cast<double>(cfg_.size * cfg_.messages) * 8 /
                          (static_cast<double>(flow_ps_[f]) * 1e-3));
    }
    o["flow_completion"] = {
        {"p50", percentile_ns(done, 50)}, {"p99", percentile_ns(done, 99)}, {"max", percentile_ns(done, 100)}};
    std::sort(goodput.begin(), goodput.end());
    double sum = 0;
    for (double g : goodput) sum += g;
    o["flow_goodput_gbps"] = {{"min", goodput.empty() ? 0.0 : goodput.front()},
                              {"mean", goodput.empty() ? 0.0 : sum / static_cast<double>(goodput.size())},
                              {"max", goodput.empty() ? 0.0 : goodput.back()}};
    boost::json::array per_flow;  // every flow, from its first post to its last byte checked
    for (std::size_t f = 0; f < flows_.size(); ++f) {
        per_flow.push_back(flow_record(names_[static_cast<std::size_t>(flows_[f].src)],
                                       names_[static_cast<std::size_t>(flows_[f].dst)], cfg_.size * cfg_.messages,
                                       flow_ps_[f]));
    }
    o["per_flow"] = std::move(per_flow);
    boost::json::array pairs;
    for (const matrix_flow& f : flows_) {
        pairs.push_back({names_[static_cast<std::size_t>(f.src)], names_[static_cast<std::size_t>(f.dst)]});
    }
    o["pairs"] = std::move(pairs);
    const double secs = last_completion_ps_ > first_post_ps_ && first_post_ps_ != UINT64_MAX
                            ? static_cast<double>(last_completion_ps_ - first_post_ps_) * 1e-12
                            : 0.0;
    boost::json::array hosts;
    for (int h = 0; h < cfg_.hosts; ++h) {
        std::uint64_t sent = 0, received = 0;
        for (std::size_t f = 0; f < flows_.size(); ++f) {
            if (flow_ps_[f] == 0) continue;
            if (flows_[f].src == h) sent += cfg_.size * cfg_.messages;
            if (flows_[f].dst == h) received += cfg_.size * cfg_.messages;
        }
        hosts.push_back({{"host", names_[static_cast<std::size_t>(h)]},
                         {"bytes_sent", sent},
                         {"bytes_received", received},
                         {"send_goodput_gbps", secs > 0 ? static_cast<double>(sent) * 8 / secs / 1e9 : 0.0}});
    }
    o["hosts"] = std::move(hosts);
    return o;
}

}  // namespace rnic::platform
