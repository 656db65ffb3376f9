#include "workloads/trace_replay.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "proto/bytes.h"

#ifndef RNIC_SOURCE_DIR
#define RNIC_SOURCE_DIR "."
#endif

namespace rnic::platform {

namespace {

constexpr std::size_t kMaxOps = 1000000;
constexpr std::uint32_t kMaxQps = 64;
constexpr std::uint32_t kMaxSize = 16u << 20;
constexpr std::uint64_t kServerImage = 0xfffffffffULL;  // payload() key of the server's initial image

std::uint64_t splitmix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::vector<std::uint8_t> pattern(std::uint64_t seed, std::uint64_t key, std::size_t len) {
    std::vector<std::uint8_t> out(len);
    std::uint64_t state = seed * 0xd1b54a32d192ed03ULL ^ (key * 0x2545f4914f6cdd1dULL + 0x7472616365ULL);
    for (std::size_t k = 0; k < len; k += 8) {
        const std::uint64_t z = splitmix(state);
        std::memcpy(out.data() + k, &z, std::min<std::size_t>(8, len - k));
    }
    return out;
}

std::uint32_t next_pow2(std::uint64_t n) {
    std::uint32_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

// Unsigned decimal integer, the whole string.
bool parse_u64(const std::string& s, std::uint64_t* out) {
    if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::strtoull(s.c_str(), nullptr, 10);
    return true;
}

// A time: a decimal number of microseconds, or with a unit (ns, us, ms).
bool parse_time(const std::string& s, std::uint64_t* ps) {
    std::string num = s;
    double scale = 1e6;
    for (const auto& [unit, sc] : {std::pair<const char*, double>{"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}}) {
        const std::string u = unit;
        if (num.size() > u.size() && num.compare(num.size() - u.size(), u.size(), u) == 0) {
            num = trim(num.substr(0, num.size() - u.size()));
            scale = sc;
            break;
        }
    }
    if (num.empty() || num.find_first_not_of("0123456789.") != std::string::npos ||
        std::count(num.begin(), num.end(), '.') > 1 || num == ".") {
        return false;
    }
    const double v = std::strtod(num.c_str(), nullptr);
    if (!std::isfinite(v) || v * scale > 3.6e15) return false;  // at most an hour
    *ps = static_cast<std::uint64_t>(std::llround(v * scale));
    return true;
}

bool is_atomic(trace_op_kind k) {
    return k == trace_op_kind::fetch_add || k == trace_op_kind::cmp_swap;
}
bool consumes_receive(trace_op_kind k) {
    return k == trace_op_kind::send || k == trace_op_kind::write_imm;
}
// The client's CPU writes the payload into its mirror before posting (write, write_imm, send), or the
// NIC places data there (read): either changes the client's bytes of the range.
bool touches_local(trace_op_kind k) {
    return !is_atomic(k);
}

}  // namespace

const char* trace_name(trace_op_kind k) {
    static const char* const names[kTraceOpKinds] = {"write", "read", "send", "fetch_add", "cmp_swap", "write_imm"};
    return names[static_cast<std::size_t>(k)];
}

const char* result_name(trace_op_kind k) {
    static const char* const names[kTraceOpKinds] = {"rdma_write",       "rdma_read",           "send",
                                                     "atomic_fetch_add", "atomic_compare_swap", "rdma_write_with_imm"};
    return names[static_cast<std::size_t>(k)];
}

bool load_op_trace(const std::string& path, std::uint64_t buffer, trace_config* out, std::string* error) {
    if (path.empty()) {
        *error = "no trace file given (workload.type \"trace\" needs one)";
        return false;
    }
    std::ifstream in(path);
    if (!in && path[0] != '/') in.open(std::string(RNIC_SOURCE_DIR) + "/" + path);
    if (!in) {
        *error = path + ": cannot open: " + std::strerror(errno);
        return false;
    }
    out->path = path;
    out->ops.clear();
    out->qps = 1;
    std::unordered_map<std::uint64_t, std::size_t> by_id;
    std::string line;
    std::size_t n = 0;
    const auto bad = [&](const std::string& what) {
        *error = path + ":" + std::to_string(n) + ": " + what;
        return false;
    };
    while (std::getline(in, line)) {
        ++n;
        const auto hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        line = trim(line);
        if (line.empty()) continue;
        std::vector<std::string> f;
        std::stringstream ss(line);
        std::string field;
        while (std::getline(ss, field, ',')) f.push_back(trim(field));
        if (!line.empty() && line.back() == ',') f.push_back("");
        if (f.size() != 6) {
            return bad("expected 6 fields (when, id, qp, op, size, offset), found " + std::to_string(f.size()));
        }
        if (out->ops.size() >= kMaxOps) return bad("more than " + std::to_string(kMaxOps) + " operations");
        trace_op op;
        op.line = n;
        if (!parse_u64(f[1], &op.id)) return bad("id: expected an unsigned integer, got \"" + f[1] + "\"");
        if (by_id.count(op.id) != 0) {
            return bad("id " + f[1] + " used before (line " + std::to_string(out->ops[by_id[op.id]].line) + ")");
        }
        if (f[0].rfind("after:", 0) == 0) {
            op.has_time = false;
            const std::string dep = trim(f[0].substr(6));
            if (!parse_u64(dep, &op.after)) return bad("when: expected after:<id>, got \"" + f[0] + "\"");
            const auto it = by_id.find(op.after);
            if (it == by_id.end()) {
                return bad("when: after:" + dep + " names no operation on an earlier line");
            }
            op.after_index = it->second;
        } else if (!parse_time(f[0], &op.time_ps)) {
            return bad("when: expected a time in microseconds (e.g. 12.5, 800ns) or after:<id>, got \"" + f[0] + "\"");
        }
        std::uint64_t qp = 0;
        if (!parse_u64(f[2], &qp) || qp >= kMaxQps) {
            return bad("qp: expected 0.." + std::to_string(kMaxQps - 1) + ", got \"" + f[2] + "\"");
        }
        op.qp = static_cast<std::uint32_t>(qp);
        bool known = false;
        for (std::size_t k = 0; k < kTraceOpKinds; ++k) {
            if (f[3] == trace_name(static_cast<trace_op_kind>(k))) {
                op.kind = static_cast<trace_op_kind>(k);
                known = true;
            }
        }
        if (!known) {
            return bad("op: expected write, read, send, fetch_add, cmp_swap or write_imm, got \"" + f[3] + "\"");
        }
        std::uint64_t size = 0;
        if (!parse_u64(f[4], &size) || size == 0 || size > kMaxSize) {
            return bad("size: expected 1.." + std::to_string(kMaxSize) + " bytes, got \"" + f[4] + "\"");
        }
        if (is_atomic(op.kind) && size != 8) return bad("size: an atomic operation is 8 bytes, got " + f[4]);
        op.size = static_cast<std::uint32_t>(size);
        if (!parse_u64(f[5], &op.offset)) return bad("offset: expected an unsigned integer, got \"" + f[5] + "\"");
        if (is_atomic(op.kind) && op.offset % 8 != 0) return bad("offset: an atomic's target must be 8-byte aligned");
        if (op.offset > buffer || size > buffer - op.offset) {
            return bad("offset " + f[5] + " + size " + f[4] + " runs past workload.buffer (" + std::to_string(buffer) +
                       " bytes)");
        }
        out->qps = std::max(out->qps, op.qp + 1);
        by_id[op.id] = out->ops.size();
        out->ops.push_back(op);
    }
    if (out->ops.empty()) {
        *error = path + ": no operations (one per line: when, id, qp, op, size, offset)";
        return false;
    }
    return true;
}

trace_replay::trace_replay(const trace_config& cfg, oob_channel& oob, std::function<void()> on_done)
    : cfg_(cfg), oob_(oob), on_done_(std::move(on_done)) {
    state_.resize(cfg_.ops.size());
    recv_order_.resize(cfg_.qps);
}

void trace_replay::fail(const std::string& what) {
    if (result_.error.empty()) result_.error = what;
}

std::vector<std::uint8_t> trace_replay::payload(std::size_t index) const {
    return pattern(cfg_.seed, cfg_.ops[index].id, cfg_.ops[index].size);
}

bool trace_replay::modifies_remote(trace_op_kind k) const {
    return k == trace_op_kind::write || k == trace_op_kind::write_imm || is_atomic(k);
}

void trace_replay::server(drv::host_bus& bus, const drv::station_config& station) {
    drv::context ctx(bus);
    std::uint32_t pd = 0;
    std::uint64_t buf = 0, recv_buf = 0;
    drv::memory_region mr, recv_mr;
    drv::completion_queue* cq = nullptr;
    std::vector<drv::queue_pair*> qps(cfg_.qps, nullptr);
    std::vector<std::uint32_t> slot_size(cfg_.qps, 8), needed(cfg_.qps, 0), posted(cfg_.qps, 0), received(cfg_.qps, 0);
    std::uint64_t total_needed = 0, total_received = 0;
    for (const trace_op& op : cfg_.ops) {
        if (!consumes_receive(op.kind)) continue;
        slot_size[op.qp] = std::max(slot_size[op.qp], (op.size + 7) / 8 * 8);
        ++needed[op.qp];
        ++total_needed;
    }
    std::vector<std::uint64_t> slot_base(cfg_.qps, 0);
    std::uint64_t recv_bytes = 0;
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
        slot_base[q] = recv_bytes;
        recv_bytes += static_cast<std::uint64_t>(slot_size[q]) * cfg_.receives;
    }
    bool ok = ctx.open(station) == drv::status::ok && ctx.alloc_pd(&pd) == drv::status::ok &&
              ctx.alloc_buffer(cfg_.buffer, &buf) == drv::status::ok &&
              ctx.reg_mr(pd, buf, cfg_.buffer,
                         regmap::mr_access::remote_write | regmap::mr_access::remote_read |
                             regmap::mr_access::remote_atomic | regmap::mr_access::local_write,
                         &mr) == drv::status::ok &&
              ctx.alloc_buffer(recv_bytes, &recv_buf) == drv::status::ok &&
              ctx.reg_mr(pd, recv_buf, recv_bytes, regmap::mr_access::local_write, &recv_mr) == drv::status::ok &&
              ctx.create_cq(next_pow2(2ULL * cfg_.qps * (cfg_.receives + 2)), &cq) == drv::status::ok;
    for (std::uint32_t q = 0; ok && q < cfg_.qps; ++q) {
        ok = ctx.create_qp(pd, cq, cq, 16, next_pow2(cfg_.receives), &qps[q]) == drv::status::ok;
    }
    if (!ok) {
        fail("trace: server set-up failed (see the log)");
        oob_.publish("trace-server-done", {});
        return;
    }
    // The buffer starts as a seeded image; the client's shadow starts from the same.
    const std::vector<std::uint8_t> image = pattern(cfg_.seed, kServerImage, cfg_.buffer);
    bus.mem_write(buf, image.data(), image.size());
    if (cfg_.flip_byte) {
        std::uint64_t at = cfg_.ops.front().offset;
        for (const trace_op& op : cfg_.ops) {
            if (op.kind == trace_op_kind::read) {
                at = op.offset;
                break;
            }
        }
        const std::uint8_t flipped = static_cast<std::uint8_t>(image[at] ^ 0x5a);
        bus.mem_write(buf + at, &flipped, 1);
    }
    oob_.publish("server", {station.ipv4, cfg_.port, mr.stag, mr.addr, mr.length});
    const auto slot_addr = [&](std::uint32_t q, std::uint32_t k) {
        return recv_buf + slot_base[q] + static_cast<std::uint64_t>(k % cfg_.receives) * slot_size[q];
    };
    const auto post = [&](std::uint32_t q) {
        while (posted[q] < needed[q] && posted[q] - received[q] < cfg_.receives) {
            drv::recv_wr wr;
            wr.wr_id = static_cast<std::uint64_t>(q) << 32 | posted[q];
            wr.addr = slot_addr(q, posted[q]);
            wr.length = slot_size[q];
            wr.stag = recv_mr.stag;
            if (ctx.post_recv(qps[q], wr) != drv::status::ok) return false;
            ++posted[q];
        }
        oob_.publish("trace-credits-" + std::to_string(q), {0, 0, 0, posted[q], 0});
        return true;
    };
    if (const std::string err = accept_all(ctx, qps, cfg_.port, post, "server post_recv failed"); !err.empty()) {
        fail("trace: " + err);
        oob_.publish("trace-server-done", {});
        return;
    }
    std::vector<drv::work_completion> wcs;
    std::vector<std::uint8_t> got;
    std::uint64_t empty_polls = 0;
    while (total_received < total_needed && result_.error.empty() && !client_stopped_) {
        wcs.clear();
        int n = 0;
        ctx.poll_cq(cq, 64, &wcs, &n);
        if (n == 0) {
            // A trace may leave long gaps: after 1000 empty polls the server polls every 1 us (the
            // receives it reposts meanwhile are those already announced).
            bus.spend(++empty_polls > 1000 ? std::max<std::uint64_t>(cfg_.poll_interval_ps, 1'000'000)
                                           : cfg_.poll_interval_ps);
            continue;
        }
        empty_polls = 0;
        for (const drv::work_completion& wc : wcs) {
            const std::uint64_t q = wc.wr_id >> 32;
            const auto k = static_cast<std::uint32_t>(wc.wr_id);
            if (wc.status != regmap::cqe_status::success || q >= cfg_.qps || k != received[q] ||
                k >= recv_order_[q].size()) {
                fail("trace: server receive completion " + std::to_string(k) + " of QP " + std::to_string(q) +
                     " with status " + regmap::to_string(wc.status));
                break;
            }
            const std::size_t idx = recv_order_[q][k];
            const trace_op& op = cfg_.ops[idx];
            op_state& st = state_[idx];
            st.received = true;
            if (op.kind == trace_op_kind::write_imm) {
                st.received_ok = wc.with_imm && wc.imm_data == op.id;
            } else {
                got.assign(op.size, 0);
                bus.mem_read(slot_addr(static_cast<std::uint32_t>(q), k), got.data(), got.size());
                st.received_ok = !wc.with_imm && wc.byte_len == op.size && got == payload(idx);
            }
            ++received[q];
            ++total_received;
            if (!post(static_cast<std::uint32_t>(q))) {
                fail("trace: server post_recv failed");
                break;
            }
        }
    }
    // At the end: the whole buffer against the client's shadow, wherever the shadow knows it.
    oob_.wait_for("trace-client-done");
    if (!shadow_.empty() && result_.error.empty()) {
        std::vector<std::uint8_t> now(cfg_.buffer);
        bus.mem_read(buf, now.data(), now.size());
        final_image_.ok = true;
        for (std::uint64_t b = 0; b < cfg_.buffer; ++b) {
            if (known_[b] == 0) continue;
            const std::int64_t w = last_writer_[b];
            const bool same = now[b] == shadow_[b];
            if (w >= 0) {
                state_[static_cast<std::size_t>(w)].final_checked += same ? 1 : 0;
                if (!same) state_[static_cast<std::size_t>(w)].final_mismatch = true;
            }
            ++final_image_.bytes_checked;
            if (!same) {
                ++final_image_.bytes_mismatched;
                if (final_image_.ok) {
                    final_image_.ok = false;
                    final_image_.first_mismatch = b;
                    final_image_.detail =
                        "server buffer byte " + std::to_string(b) + " is " + std::to_string(now[b]) + ", expected " +
                        std::to_string(shadow_[b]) +
                        (w >= 0 ? " (operation " + std::to_string(cfg_.ops[static_cast<std::size_t>(w)].id) + ")"
                                : " (the initial image)");
                }
            }
        }
    }
    oob_.publish("trace-server-done", {});
}

void trace_replay::client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    const auto finish = [&] {
        client_stopped_ = true;
        on_done_();
    };
    drv::context ctx(bus);
    std::uint32_t pd = 0;
    std::uint64_t buf = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    std::vector<drv::queue_pair*> qps(cfg_.qps, nullptr);
    std::size_t atomics = 0;
    for (std::size_t i = 0; i < cfg_.ops.size(); ++i) {
        if (is_atomic(cfg_.ops[i].kind)) state_[i].atomic_slot = cfg_.buffer + 8 * atomics++;
    }
    const std::uint64_t local_len = cfg_.buffer + 8 * atomics;
    const std::uint32_t sq_depth = next_pow2(cfg_.queue_depth);
    bool ok = ctx.open(station) == drv::status::ok && ctx.alloc_pd(&pd) == drv::status::ok &&
              ctx.alloc_buffer(local_len, &buf) == drv::status::ok &&
              ctx.reg_mr(pd, buf, local_len, regmap::mr_access::local_write, &mr) == drv::status::ok &&
              ctx.create_cq(next_pow2(2ULL * cfg_.qps * sq_depth), &cq) == drv::status::ok;
    for (std::uint32_t q = 0; ok && q < cfg_.qps; ++q) {
        ok = ctx.create_qp(pd, cq, cq, sq_depth, 16, &qps[q]) == drv::status::ok;
    }
    if (!ok) {
        fail("trace: client set-up failed (see the log)");
        finish();
        return;
    }
    const remote_buffer peer = oob_.wait_for("server");
    const std::string err = connect_all(ctx, qps, server_ip, peer.port, result_);
    if (!err.empty()) {
        fail("trace: " + err);
        finish();
        return;
    }
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) oob_.wait_for("trace-credits-" + std::to_string(q));

    // The shadow of the server's buffer: expected bytes, whether they are known, who wrote them last.
    shadow_ = pattern(cfg_.seed, kServerImage, cfg_.buffer);
    known_.assign(cfg_.buffer, 1);
    last_writer_.assign(cfg_.buffer, -1);
    std::vector<std::uint8_t>& shadow = shadow_;
    std::vector<std::uint8_t>& known = known_;
    const std::size_t n = cfg_.ops.size();
    std::vector<std::vector<std::size_t>> dependents(n);
    std::vector<std::size_t> timed;
    for (std::size_t i = 0; i < n; ++i) {
        if (cfg_.ops[i].has_time)
            timed.push_back(i);
        else
            dependents[cfg_.ops[i].after_index].push_back(i);
    }
    std::stable_sort(timed.begin(), timed.end(),
                     [&](std::size_t a, std::size_t b) { return cfg_.ops[a].time_ps < cfg_.ops[b].time_ps; });
    std::size_t next_timed = 0;
    std::vector<std::deque<std::size_t>> ready(cfg_.qps);
    std::vector<std::size_t> inflight;
    std::vector<std::uint64_t> recvs_posted(cfg_.qps, 0);
    std::size_t completed = 0;
    start_ps_ = bus.now_ps();

    const auto overlap = [&](std::size_t a, std::size_t b) {
        const trace_op& x = cfg_.ops[a];
        const trace_op& y = cfg_.ops[b];
        return x.offset < y.offset + y.size && y.offset < x.offset + x.size;
    };
    // Registers operation i as posted: conflicts with what is in flight, then the shadow.
    const auto account = [&](std::size_t i) {
        const trace_op& x = cfg_.ops[i];
        op_state& sx = state_[i];
        for (std::size_t j : inflight) {
            const trace_op& y = cfg_.ops[j];
            if (!overlap(i, j)) continue;
            if (is_atomic(x.kind) && is_atomic(y.kind) && x.qp == y.qp && x.offset == y.offset) continue;  // ordered
            const bool local = touches_local(x.kind) && touches_local(y.kind);
            const bool remote = modifies_remote(x.kind) || modifies_remote(y.kind);
            if (!local && !remote) continue;
            sx.conflict = true;
            state_[j].conflict = true;
            if (modifies_remote(y.kind)) std::fill_n(known.begin() + static_cast<std::ptrdiff_t>(y.offset), y.size, 0);
        }
        const auto off = static_cast<std::ptrdiff_t>(x.offset);
        if (x.kind == trace_op_kind::write || x.kind == trace_op_kind::write_imm) {
            const std::vector<std::uint8_t> p = payload(i);
            std::copy(p.begin(), p.end(), shadow.begin() + off);
            std::fill_n(known.begin() + off, x.size, sx.conflict ? 0 : 1);
            std::fill_n(last_writer_.begin() + off, x.size, static_cast<std::int64_t>(i));
        } else if (is_atomic(x.kind)) {
            const bool word_known =
                std::all_of(known.begin() + off, known.begin() + off + 8, [](std::uint8_t k) { return k; });
            sx.atomic_known = word_known && !sx.conflict;
            const std::uint64_t old = proto::get_le64(shadow.data() + x.offset);
            sx.expected_original = old;
            std::uint64_t now = old;
            if (x.kind == trace_op_kind::fetch_add)
                now = old + x.id + 1;
            else {
                std::uint64_t st = x.id * 3 + cfg_.seed;
                now = splitmix(st);  // the swap value; the compare is the shadow's value
            }
            proto::put_le64(shadow.data() + x.offset, now);
            std::fill_n(known.begin() + off, 8, sx.atomic_known ? 1 : 0);
            std::fill_n(last_writer_.begin() + off, 8, static_cast<std::int64_t>(i));
        }
        inflight.push_back(i);
    };

    const auto post_one = [&](std::size_t i, bool* blocked) -> bool {
        const trace_op& x = cfg_.ops[i];
        drv::queue_pair* qp = qps[x.qp];
        *blocked = false;
        if (qp->sq_producer - qp->sq_completed >= qp->sq_entries) {
            *blocked = true;
            return true;
        }
        if (consumes_receive(x.kind) &&
            recvs_posted[x.qp] >= oob_.wait_for("trace-credits-" + std::to_string(x.qp)).addr) {
            *blocked = true;
            return true;
        }
        account(i);
        op_state& sx = state_[i];
        drv::send_wr w;
        w.wr_id = i;
        w.local_addr = buf + x.offset;
        w.length = x.size;
        w.local_stag = mr.stag;
        w.remote_addr = peer.addr + x.offset;
        w.remote_stag = peer.stag;
        switch (x.kind) {
        case trace_op_kind::write:
            w.opcode = regmap::wr_opcode::rdma_write;
            break;
        case trace_op_kind::write_imm:
            w.opcode = regmap::wr_opcode::rdma_write_with_imm;
            w.imm_data = x.id;
            break;
        case trace_op_kind::send:
            w.opcode = regmap::wr_opcode::send;
            break;
        case trace_op_kind::read:
            w.opcode = regmap::wr_opcode::rdma_read;
            break;
        case trace_op_kind::fetch_add:
            w.opcode = regmap::wr_opcode::atomic_fetch_add;
            w.local_addr = buf + sx.atomic_slot;
            w.operand = x.id + 1;
            break;
        case trace_op_kind::cmp_swap:
            w.opcode = regmap::wr_opcode::atomic_compare_swap;
            w.local_addr = buf + sx.atomic_slot;
            w.compare = sx.expected_original;
            w.operand = proto::get_le64(shadow.data() + x.offset);  // what account() set as the new value
            break;
        }
        if (x.kind == trace_op_kind::write || x.kind == trace_op_kind::write_imm || x.kind == trace_op_kind::send) {
            const std::vector<std::uint8_t> p = payload(i);
            bus.mem_write(buf + x.offset, p.data(), p.size());
        }
        if (consumes_receive(x.kind)) {
            recv_order_[x.qp].push_back(i);
            ++recvs_posted[x.qp];
        }
        sx.posted = true;
        sx.post_ps = bus.now_ps() - start_ps_;
        sx.status = "posted";
        if (ctx.post_send(qp, w) != drv::status::ok) {
            fail("trace: post_send of operation " + std::to_string(x.id) + " (" + cfg_.path + ":" +
                 std::to_string(x.line) + ") failed (see the log)");
            return false;
        }
        return true;
    };

    std::vector<drv::work_completion> wcs;
    std::vector<std::uint8_t> got;
    std::uint64_t idle_spins = 0;
    while (completed < n && result_.error.empty()) {
        const std::uint64_t now = bus.now_ps() - start_ps_;
        while (next_timed < timed.size() && cfg_.ops[timed[next_timed]].time_ps <= now) {
            ready[cfg_.ops[timed[next_timed]].qp].push_back(timed[next_timed]);
            ++next_timed;
        }
        bool progress = false;
        for (std::uint32_t q = 0; q < cfg_.qps && result_.error.empty(); ++q) {
            while (!ready[q].empty()) {
                bool blocked = false;
                if (!post_one(ready[q].front(), &blocked)) break;
                if (blocked) break;
                ready[q].pop_front();
                progress = true;
            }
        }
        if (!result_.error.empty()) break;
        wcs.clear();
        int got_n = 0;
        ctx.poll_cq(cq, 64, &wcs, &got_n);
        for (const drv::work_completion& wc : wcs) {
            if (wc.opcode == drv::wc_opcode::qp_error) continue;  // the failing operation's own entry says why
            const std::size_t i = static_cast<std::size_t>(wc.wr_id);
            if (i >= n || !state_[i].posted || state_[i].done) {
                fail("trace: completion for an unknown work request " + std::to_string(wc.wr_id));
                break;
            }
            const trace_op& x = cfg_.ops[i];
            op_state& sx = state_[i];
            sx.done = true;
            sx.done_ps = bus.now_ps() - start_ps_;
            sx.status = regmap::to_string(wc.status);
            ++completed;
            inflight.erase(std::find(inflight.begin(), inflight.end(), i));
            if (wc.status != regmap::cqe_status::success) {
                fail("trace: operation " + std::to_string(x.id) + " (" + cfg_.path + ":" + std::to_string(x.line) +
                     ", " + trace_name(x.kind) + " on QP " + std::to_string(x.qp) + ") completed with status " +
                     sx.status);
                break;
            }
            if (sx.conflict) {
                sx.data = data_check::unchecked;
            } else if (x.kind == trace_op_kind::read) {
                got.assign(x.size, 0);
                bus.mem_read(buf + x.offset, got.data(), got.size());
                bool same = true;
                for (std::uint32_t k = 0; k < x.size && same; ++k) {
                    same = known[x.offset + k] == 0 || got[k] == shadow[x.offset + k];
                }
                sx.data = same ? data_check::ok : data_check::mismatch;
            } else if (is_atomic(x.kind)) {
                std::uint8_t b[8];
                bus.mem_read(buf + sx.atomic_slot, b, 8);
                sx.data = !sx.atomic_known                             ? data_check::unchecked
                          : proto::get_le64(b) == sx.expected_original ? data_check::ok
                                                                       : data_check::mismatch;
            }
            for (std::size_t d : dependents[i]) ready[cfg_.ops[d].qp].push_back(d);
            progress = true;
        }
        if (!result_.error.empty() || completed == n) break;
        if (progress || got_n > 0) {
            idle_spins = 0;
            continue;
        }
        bool any_ready = false;
        for (const auto& r : ready) any_ready = any_ready || !r.empty();
        if (inflight.empty() && !any_ready && next_timed < timed.size()) {
            // Nothing to wait for but the clock: sleep until the next timed operation.
            bus.spend(std::max<std::uint64_t>(cfg_.ops[timed[next_timed]].time_ps - now, 1));
            continue;
        }
        if (inflight.empty() && !any_ready) {
            fail("trace: operations left that nothing will release");
            break;
        }
        const std::uint64_t wait = next_timed < timed.size()
                                       ? std::min(cfg_.poll_interval_ps, cfg_.ops[timed[next_timed]].time_ps - now)
                                       : cfg_.poll_interval_ps;
        bus.spend(std::max<std::uint64_t>(wait, 1));
        if (++idle_spins > 20'000'000ULL) {
            fail("trace: no completion for a long time");
            break;
        }
    }
    oob_.publish("trace-client-done", {});
    if (result_.error.empty()) oob_.wait_for("trace-server-done");
    client_stopped_ = true;

    // Sends and Writes with Immediate: what the server saw.
    for (std::size_t i = 0; i < n; ++i) {
        op_state& s = state_[i];
        const trace_op& x = cfg_.ops[i];
        if (!s.done) continue;
        if (x.kind == trace_op_kind::send || x.kind == trace_op_kind::write_imm) {
            if (!s.received)
                s.data = data_check::mismatch;  // never arrived
            else if (s.conflict && x.kind == trace_op_kind::send)
                s.data = data_check::unchecked;
            else
                s.data = s.received_ok ? data_check::ok : data_check::mismatch;
        }
    }
    // Writes and atomics: the server's buffer at the end (compared by the server, final_check_).
    for (std::size_t i = 0; i < n; ++i) {
        op_state& s = state_[i];
        const trace_op& x = cfg_.ops[i];
        if (!s.done || !modifies_remote(x.kind) || s.data == data_check::mismatch) continue;
        if (s.conflict) {
            s.data = data_check::unchecked;
        } else if (s.final_mismatch) {
            s.data = data_check::mismatch;
        } else if (x.kind == trace_op_kind::write) {
            // Every byte written again later: the later operations' checks cover the range.
            s.data = s.final_checked > 0 ? data_check::ok : data_check::overwritten;
        }
    }

    // Rows: one per kind present in the trace.
    std::vector<workload_row> rows(kTraceOpKinds);
    std::vector<std::uint64_t> first(kTraceOpKinds, ~0ULL), last(kTraceOpKinds, 0);
    std::vector<bool> present(kTraceOpKinds, false);
    std::uint64_t unchecked = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const trace_op& x = cfg_.ops[i];
        const op_state& s = state_[i];
        const auto k = static_cast<std::size_t>(x.kind);
        workload_row& row = rows[k];
        present[k] = true;
        row.op = result_name(x.kind);
        if (!s.done) continue;
        ++row.iterations;
        row.bytes += x.size;
        row.latencies_ps.push_back(s.done_ps - s.post_ps);
        first[k] = std::min(first[k], s.post_ps);
        last[k] = std::max(last[k], s.done_ps);
        if (s.status != regmap::to_string(regmap::cqe_status::success)) ++row.errors;
        if (s.data == data_check::unchecked) ++unchecked;
        if (s.data == data_check::ok) {
            row.integrity.bytes_checked += x.kind == trace_op_kind::write ? s.final_checked : x.size;
        }
        if (s.data == data_check::mismatch) {
            row.integrity.bytes_mismatched += x.size;
            if (row.integrity.ok) {
                row.integrity.ok = false;
                row.integrity.detail = "operation " + std::to_string(x.id) + " (" + cfg_.path + ":" +
                                       std::to_string(x.line) + ", " + trace_name(x.kind) + " of " +
                                       std::to_string(x.size) + " bytes at " + std::to_string(x.offset) + ", QP " +
                                       std::to_string(x.qp) + "): data differ from what the trace's pattern says";
            }
        }
    }
    for (std::size_t k = 0; k < kTraceOpKinds; ++k) {
        if (!present[k]) continue;
        rows[k].elapsed_ps = last[k] > first[k] && first[k] != ~0ULL ? last[k] - first[k] : 0;
        if (!result_.error.empty()) {
            rows[k].integrity.ok = false;
            if (rows[k].integrity.detail.empty()) rows[k].integrity.detail = "not checked: the run failed";
        }
        result_.rows.push_back(std::move(rows[k]));
    }
    workload_row extra;
    extra.op = "unchecked (overlap)";
    extra.iterations = unchecked;
    result_.rows.push_back(extra);
    workload_row image;
    image.op = "server buffer at end";
    image.iterations = 1;
    image.integrity = final_image_;
    result_.rows.push_back(image);
    result_.finished = result_.error.empty();
    finish();
}

boost::json::array trace_replay::operation_log() const {
    boost::json::array out;
    for (std::size_t i = 0; i < cfg_.ops.size(); ++i) {
        const trace_op& x = cfg_.ops[i];
        const op_state& s = state_[i];
        boost::json::object o;
        o["id"] = x.id;
        if (x.has_time)
            o["time_ns"] = static_cast<double>(x.time_ps) / 1000.0;
        else
            o["after"] = x.after;
        o["qp"] = x.qp;
        o["op"] = trace_name(x.kind);
        o["size"] = x.size;
        o["offset"] = x.offset;
        o["line"] = x.line;
        o["status"] = s.status;
        if (s.posted) o["post_ns"] = static_cast<double>(s.post_ps) / 1000.0;
        if (s.done) o["complete_ns"] = static_cast<double>(s.done_ps) / 1000.0;
        o["data"] = s.data == data_check::ok            ? "ok"
                    : s.data == data_check::mismatch    ? "mismatch"
                    : s.data == data_check::unchecked   ? "unchecked"
                    : s.data == data_check::overwritten ? "overwritten"
                                                        : "none";
        out.push_back(std::move(o));
    }
    return out;
}

}  // namespace rnic::platform
