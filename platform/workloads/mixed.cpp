#include "workloads/mixed.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/log.h"

#define MIXED_LOG(lvl, bus, expr) RNIC_LOG_AT(lvl, app, (bus).now_ps(), (bus).host_name() + ".mixed", expr)

namespace rnic::platform {

namespace {

std::uint64_t splitmix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

struct rng {
    std::uint64_t state;
    std::uint64_t next() { return splitmix(state); }
    // Uniform in [lo, hi].
    std::uint64_t between(std::uint64_t lo, std::uint64_t hi) { return hi <= lo ? lo : lo + next() % (hi - lo + 1); }
};

std::uint32_t next_pow2(std::uint64_t n) {
    std::uint32_t p = 2;
    while (p < n) p <<= 1;
    return p;
}

unsigned bit_length(std::uint64_t v) {
    unsigned b = 0;
    while (v != 0) {
        ++b;
        v >>= 1;
    }
    return b;
}

struct kind_info {
    mixed_op kind;
    const char* name;
    unsigned weight;  // relative frequency in the sequence
};
// The mix. Send with Invalidate is drawn only while the QP has spare STags left.
// The invalidates are drawn only while the QP has spare STags left.
constexpr kind_info kKinds[kMixedOpKinds] = {
    {mixed_op::write, "rdma_write", 22},
    {mixed_op::write_imm, "rdma_write_with_imm", 6},
    {mixed_op::read, "rdma_read", 18},
    {mixed_op::send, "send", 10},
    {mixed_op::send_se, "send_solicited", 5},
    {mixed_op::send_inv, "send_invalidate", 4},
    {mixed_op::immediate, "immediate_data", 4},
    {mixed_op::fetch_add, "atomic_fetch_add", 14},
    {mixed_op::cmp_swap, "atomic_compare_swap", 10},
    {mixed_op::masked_fetch_add, "masked_fetch_add", 5},
    {mixed_op::masked_cmp_swap, "masked_compare_swap", 5},
    {mixed_op::local_inv, "local_invalidate", 3},
};

// RFC 7306 §5.1's masked FetchAdd, bit by bit as the RFC's pseudocode has it: a set bit of the Add
// Mask ends a field (its carry is discarded). Written out here, independent of the NIC's ALU.
std::uint64_t rfc_masked_add(std::uint64_t original, std::uint64_t add, std::uint64_t mask) {
    std::uint64_t result = 0, carry = 0;
    for (unsigned bit = 0; bit < 64; ++bit) {
        const std::uint64_t at = 1ULL << bit;
        const std::uint64_t sum = carry + ((original & at) >> bit) + ((add & at) >> bit);
        carry = (sum & 2) >> 1;
        if ((sum & 1) != 0) result |= at;
        carry = (carry != 0 && (mask & at) == 0) ? 1 : 0;
    }
    return result;
}

// RFC 7306 §5.1.2's masked CmpSwap: the new value of the target.
std::uint64_t rfc_masked_swap(std::uint64_t original, std::uint64_t compare, std::uint64_t compare_mask,
                              std::uint64_t swap, std::uint64_t swap_mask) {
    if (((compare ^ original) & compare_mask) != 0) return original;
    return (original & ~swap_mask) | (swap & swap_mask);
}

bool is_atomic(mixed_op k) {
    return k == mixed_op::fetch_add || k == mixed_op::cmp_swap || k == mixed_op::masked_fetch_add ||
           k == mixed_op::masked_cmp_swap;
}

std::string hex8(unsigned v) {
    char b[8];
    std::snprintf(b, sizeof b, "0x%02x", v & 0xffu);
    return b;
}

}  // namespace

const char* to_string(mixed_op op) {
    return kKinds[static_cast<std::size_t>(op)].name;
}

mixed::mixed(const mixed_config& cfg, oob_channel& oob, peeker peek, std::function<void()> on_done)
    : cfg_(cfg), oob_(oob), peek_(std::move(peek)), on_done_(std::move(on_done)) {
    // Layout (the scenario check guarantees each area holds at least 4 x max_size):
    //  client, per QP slice: [0, 4 KiB) atomic result slots, then the source area, then the read sink.
    //  server: [0, 4 KiB) shared counters, then per QP slice: [0, 4 KiB) CmpSwap words, then the target.
    lay_.client_slice = cfg_.buffer / cfg_.qps / 8 * 8;
    lay_.area = (lay_.client_slice - 4096) / 2 / 8 * 8;
    lay_.src = 4096;
    lay_.sink = 4096 + lay_.area;
    lay_.server_slice = (cfg_.buffer - 4096) / cfg_.qps / 8 * 8;
    lay_.target = lay_.server_slice - 4096;
    ops_.resize(cfg_.qps);
    flights_.resize(cfg_.qps);
    sends_.resize(cfg_.qps);
    words_.assign(static_cast<std::size_t>(cfg_.qps) * kWords, 0);
    generate();
}

void mixed::fail(const std::string& what) {
    if (result_.error.empty()) result_.error = what;
}

std::uint64_t mixed::counter_initial(std::uint32_t c) const {
    // Just below a 32-bit boundary, so that the first adds carry into the upper word.
    return 0xfffff000ULL + (static_cast<std::uint64_t>(c) << 40);
}

std::vector<std::uint8_t> mixed::payload(std::uint64_t seed, std::uint32_t q, std::uint32_t i, std::size_t len) {
    std::vector<std::uint8_t> out(len);
    std::uint64_t state = seed * 0xd1b54a32d192ed03ULL ^ (static_cast<std::uint64_t>(q) << 40 | i);
    for (std::size_t k = 0; k < len; k += 8) {
        const std::uint64_t z = splitmix(state);
        std::memcpy(out.data() + k, &z, std::min<std::size_t>(8, len - k));
    }
    return out;
}

void mixed::generate() {
    unsigned total_weight = 0;
    for (const kind_info& k : kKinds) total_weight += k.weight;
    const unsigned lo_bits = bit_length(cfg_.min_size), hi_bits = bit_length(cfg_.max_size);
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
        rng r{cfg_.seed * 0x2545f4914f6cdd1dULL + q + 1};
        std::uint32_t spares_used = 0, local_spares_used = 0;
        std::uint64_t atomics = 0;
        ops_[q].reserve(cfg_.operations);
        for (std::uint32_t i = 0; i < cfg_.operations; ++i) {
            op_desc op;
            for (;;) {
                unsigned pick = static_cast<unsigned>(r.next() % total_weight);
                std::size_t k = 0;
                while (pick >= kKinds[k].weight) pick -= kKinds[k++].weight;
                op.kind = kKinds[k].kind;
                if (op.kind == mixed_op::send_inv && spares_used >= cfg_.spare_stags) continue;
                if (op.kind == mixed_op::local_inv && local_spares_used >= cfg_.spare_stags) continue;
                break;
            }
            if (op.kind == mixed_op::immediate) {
                op.value = r.next();
                ops_[q].push_back(op);
                continue;
            }
            if (op.kind == mixed_op::local_inv) {
                op.index = local_spares_used++;
                ops_[q].push_back(op);
                continue;
            }
            if (is_atomic(op.kind)) {
                op.length = 8;
                op.local_off = 8 * (atomics++ % kResultSlots);
                switch (op.kind) {
                case mixed_op::fetch_add:
                    op.index = static_cast<std::uint32_t>(r.next() % cfg_.counters);
                    op.value = r.between(1, 1ULL << 36);
                    break;
                case mixed_op::masked_fetch_add: {
                    // Fields of 8, 16 or 32 bits, or random boundaries.
                    static constexpr std::uint64_t kFields[] = {0x8080808080808080ULL, 0x8000800080008000ULL,
                                                                0x8000000080000000ULL};
                    op.index = 8 + static_cast<std::uint32_t>(r.next() % 8);
                    op.value = r.next();
                    const std::uint64_t f = r.next() % 4;
                    op.add_or_swap_mask = f < 3 ? kFields[f] : r.next() & r.next();
                    break;
                }
                default:  // CmpSwap, masked or not, on the QP's words 0-7
                    op.index = static_cast<std::uint32_t>(r.next() % 8);
                    op.value = r.next();
                    op.cas_match = r.next() % 10 < 7;
                    op.miss = r.next() | 1;
                    op.noise = r.next();
                    op.add_or_swap_mask = op.kind == mixed_op::masked_cmp_swap ? r.next() : ~0ULL;
                    op.compare_mask = op.kind == mixed_op::masked_cmp_swap ? r.next() | 1 : ~0ULL;
                    break;
                }
                ops_[q].push_back(op);
                continue;
            }
            // Sizes: small, up to a page, around one to four FPDU payloads (MSS 1460), or spread
            // log-uniformly over the whole range.
            std::uint64_t len = 0;
            const std::uint64_t shape = r.next() % 100;
            if (shape < 25) {
                len = r.between(1, 64);
            } else if (shape < 45) {
                len = r.between(65, 4096);
            } else if (shape < 65) {
                len = r.between(1, 4) * 1440 + r.between(0, 64) - 32;
            } else {
                const unsigned b = static_cast<unsigned>(r.between(lo_bits, hi_bits));
                len = r.between(b <= 1 ? 1 : 1ULL << (b - 1), (1ULL << b) - 1);
            }
            len = std::clamp<std::uint64_t>(len, cfg_.min_size, cfg_.max_size);
            op.length = static_cast<std::uint32_t>(len);
            op.local_off = r.between(0, lay_.area - len);
            op.remote_off = r.between(0, lay_.target - len);
            if (op.kind == mixed_op::send_inv) op.index = spares_used++;
            if (op.kind == mixed_op::write_imm) op.value = r.next();
            ops_[q].push_back(op);
        }
    }
}

std::vector<mixed::range> mixed::ranges_of(const op_desc& op) const {
    switch (op.kind) {
    case mixed_op::write:
    case mixed_op::write_imm:
        return {{0, op.local_off, op.local_off + op.length, true}, {3, op.remote_off, op.remote_off + op.length, true}};
    case mixed_op::read:
        return {{3, op.remote_off, op.remote_off + op.length, false},
                {1, op.local_off, op.local_off + op.length, true}};
    case mixed_op::send:
    case mixed_op::send_se:
    case mixed_op::send_inv:
        return {{0, op.local_off, op.local_off + op.length, true}};
    case mixed_op::fetch_add:
    case mixed_op::cmp_swap:
    case mixed_op::masked_fetch_add:
    case mixed_op::masked_cmp_swap:
        return {{2, op.local_off, op.local_off + 8, true}};
    case mixed_op::immediate:
    case mixed_op::local_inv:
        return {};
    }
    return {};
}

bool mixed::conflicts(std::uint32_t q, const std::vector<range>& ranges) const {
    for (const in_flight& f : flights_[q]) {
        for (const range& a : f.ranges) {
            for (const range& b : ranges) {
                if (a.space == b.space && (a.writes || b.writes) && a.begin < b.end && b.begin < a.end) return true;
            }
        }
    }
    return false;
}

void mixed::check_bytes(row_stats& row, const std::string& what, const std::uint8_t* got, const std::uint8_t* want,
                        std::size_t len) {
    std::uint64_t bad = 0, first = 0;
    for (std::size_t k = 0; k < len; ++k) {
        if (got[k] != want[k]) {
            if (bad == 0) first = k;
            ++bad;
        }
    }
    row.integrity.bytes_checked += len;
    row.integrity.bytes_mismatched += bad;
    if (bad > 0 && row.integrity.ok) {
        row.integrity.ok = false;
        row.integrity.first_mismatch = first;
        row.integrity.detail = what + ": " + std::to_string(bad) + " of " + std::to_string(len) +
                               " bytes differ, first at byte " + std::to_string(first) + " (" + hex8(got[first]) +
                               ", expected " + hex8(want[first]) + ")";
    }
}

void mixed::check_value(row_stats& row, const std::string& what, std::uint64_t got, std::uint64_t want) {
    row.integrity.bytes_checked += 8;
    if (got == want) return;
    row.integrity.bytes_mismatched += 8;
    if (row.integrity.ok) {
        row.integrity.ok = false;
        row.integrity.detail = what + ": " + std::to_string(got) + ", expected " + std::to_string(want);
    }
}

void mixed::server(drv::host_bus& bus, const drv::station_config& station) {
    drv::context ctx(bus);
    std::uint32_t pd = 0;
    std::uint64_t buf = 0, recv_buf = 0, spare_buf = 0;
    drv::memory_region mr, recv_mr;
    drv::completion_queue* cq = nullptr;
    std::vector<drv::queue_pair*> qps(cfg_.qps, nullptr);
    const std::uint64_t recv_slot = (cfg_.max_size + 7ULL) / 8 * 8;
    const std::uint64_t spares = static_cast<std::uint64_t>(cfg_.qps) * cfg_.spare_stags;
    std::vector<drv::memory_region> spare_mrs(spares);
    bool ok = ctx.open(station) == drv::status::ok && ctx.alloc_pd(&pd) == drv::status::ok &&
              ctx.alloc_buffer(cfg_.buffer, &buf) == drv::status::ok &&
              ctx.reg_mr(pd, buf, cfg_.buffer,
                         regmap::mr_access::remote_write | regmap::mr_access::remote_read |
                             regmap::mr_access::remote_atomic | regmap::mr_access::local_write,
                         &mr) == drv::status::ok &&
              ctx.alloc_buffer(cfg_.qps * cfg_.receives * recv_slot, &recv_buf) == drv::status::ok &&
              ctx.reg_mr(pd, recv_buf, cfg_.qps * cfg_.receives * recv_slot, regmap::mr_access::local_write,
                         &recv_mr) == drv::status::ok &&
              ctx.create_cq(next_pow2(2ULL * cfg_.qps * (cfg_.receives + 2)), &cq) == drv::status::ok;
    if (ok && spares > 0) ok = ctx.alloc_buffer(spares * 64, &spare_buf) == drv::status::ok;
    for (std::uint64_t s = 0; ok && s < spares; ++s) {
        ok = ctx.reg_mr(pd, spare_buf + 64 * s, 64, regmap::mr_access::remote_write | regmap::mr_access::local_write,
                        &spare_mrs[s]) == drv::status::ok;
    }
    for (std::uint32_t q = 0; ok && q < cfg_.qps; ++q) {
        ok = ctx.create_qp(pd, cq, cq, 16, next_pow2(cfg_.receives), &qps[q]) == drv::status::ok;
    }
    if (!ok) {
        fail("mixed: server set-up failed (see the log)");
        return;
    }
    // The server's buffer starts from a known image: a seeded pattern with the counters' initial
    // values; the QPs' atomic words start as the pattern has them (the shadow starts from the same).
    server_image_ = payload(cfg_.seed, 0xffffffu, 0, cfg_.buffer);
    for (std::uint32_t c = 0; c < cfg_.counters; ++c) {
        const std::uint64_t v = counter_initial(c);
        std::memcpy(server_image_.data() + 8 * c, &v, 8);
    }
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
        for (std::uint32_t w = 0; w < kWords; ++w) {
            std::memcpy(&words_[q * kWords + w], server_image_.data() + 4096 + q * lay_.server_slice + 8 * w, 8);
        }
    }
    bus.mem_write(buf, server_image_.data(), server_image_.size());
    server_addr_ = mr.addr;
    for (std::uint64_t s = 0; s < spares; ++s) {
        oob_.publish("mixed-spare-" + std::to_string(s), {0, 0, spare_mrs[s].stag, spare_mrs[s].addr, 64});
    }
    oob_.publish("server", {station.ipv4, cfg_.port, mr.stag, mr.addr, mr.length});
    // Receives: as many as the QP's sequence has Sends, at most `receives` posted at a time; the
    // client sends only into receives the server has announced (credits).
    std::vector<std::uint32_t> needed(cfg_.qps, 0), posted(cfg_.qps, 0), received(cfg_.qps, 0);
    std::uint64_t total_needed = 0, total_received = 0;
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
        for (const op_desc& op : ops_[q]) needed[q] += consumes_receive(op.kind) ? 1 : 0;
        total_needed += needed[q];
    }
    const auto slot_addr = [&](std::uint32_t q, std::uint32_t k) {
        return recv_buf + (static_cast<std::uint64_t>(q) * cfg_.receives + k % cfg_.receives) * recv_slot;
    };
    const auto post = [&](std::uint32_t q) {
        while (posted[q] < needed[q] && posted[q] - received[q] < cfg_.receives) {
            drv::recv_wr wr;
            wr.wr_id = static_cast<std::uint64_t>(q) << 32 | posted[q];
            wr.addr = slot_addr(q, posted[q]);
            wr.length = static_cast<std::uint32_t>(recv_slot);
            wr.stag = recv_mr.stag;
            if (ctx.post_recv(qps[q], wr) != drv::status::ok) return false;
            ++posted[q];
        }
        oob_.publish("mixed-credits-" + std::to_string(q), {0, 0, 0, posted[q], 0});
        return true;
    };
    // Accept the client's connections one by one, posting each QP's receives as soon as it is up.
    if (const std::string err = accept_all(ctx, qps, cfg_.port, post, "server post_recv failed", cfg_.accept_gap_ps);
        !err.empty()) {
        fail("mixed: " + err);
        return;
    }
    std::vector<drv::work_completion> wcs;
    std::vector<std::uint8_t> got;
    while (total_received < total_needed && result_.error.empty()) {
        wcs.clear();
        int n = 0;
        ctx.poll_cq(cq, 64, &wcs, &n);
        if (n == 0) {
            ctx.idle_cq(cq, cfg_.poll_interval_ps);
            continue;
        }
        for (const drv::work_completion& wc : wcs) {
            const std::uint64_t q = wc.wr_id >> 32;
            const auto k = static_cast<std::uint32_t>(wc.wr_id);
            if (wc.status != regmap::cqe_status::success || q >= cfg_.qps || k != received[q] || sends_[q].empty()) {
                fail("mixed: server receive completion " + std::to_string(k) + " of QP " + std::to_string(q) +
                     " with status " + regmap::to_string(wc.status));
                return;
            }
            const sent_message msg = std::move(sends_[q].front());
            sends_[q].pop_front();
            row_stats& row = rows_[static_cast<std::size_t>(msg.kind)];
            const std::string what = "QP " + std::to_string(q) + " op " + std::to_string(msg.op) + " (" +
                                     to_string(msg.kind) + " of " + std::to_string(msg.bytes.size()) + " bytes)";
            // What the receive completion says: Immediate Data or not (and its value), the Solicited
            // Event, the STag a Send with Invalidate invalidated.
            const bool imm = msg.kind == mixed_op::immediate || msg.kind == mixed_op::write_imm;
            check_value(row, what + ", completion with Immediate Data", wc.with_imm ? 1 : 0, imm ? 1 : 0);
            if (imm) {
                check_value(row, what + ", Immediate Data", wc.imm_data, msg.imm);
                ++received[q];
                ++total_received;
                continue;
            }
            check_value(row, what + ", completion's solicited flag", wc.solicited ? 1 : 0,
                        msg.kind == mixed_op::send_se ? 1 : 0);
            check_value(row, what + ", invalidated STag", wc.invalidated_stag, msg.invalidate);
            if (wc.byte_len != msg.bytes.size()) {
                row.integrity.ok = false;
                row.integrity.bytes_mismatched += msg.bytes.size();
                if (row.integrity.detail.empty()) {
                    row.integrity.detail = what + ": received " + std::to_string(wc.byte_len) + " bytes";
                }
            } else {
                got.assign(msg.bytes.size(), 0);
                if (!peek_(1, slot_addr(static_cast<std::uint32_t>(q), k), got.data(), got.size())) {
                    fail("mixed: receive buffer outside host memory");
                    return;
                }
                check_bytes(row, what + ", received", got.data(), msg.bytes.data(), got.size());
            }
            ++received[q];
            ++total_received;
        }
        for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
            if (!post(q)) {
                fail("mixed: server post_recv failed");
                return;
            }
        }
    }
    // Every Send has arrived, so every Send with Invalidate has done its work. The spare regions no
    // Send named must still be registered (nothing invalidated the wrong STag).
    row_stats& inv = rows_[static_cast<std::size_t>(mixed_op::send_inv)];
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
        std::uint32_t used = 0;
        for (const op_desc& op : ops_[q]) used += op.kind == mixed_op::send_inv ? 1 : 0;
        for (std::uint32_t s = used; s < cfg_.spare_stags; ++s) {
            const drv::memory_region& m = spare_mrs[q * cfg_.spare_stags + s];
            inv.integrity.bytes_checked += 4;
            if (ctx.dereg_mr(m) != drv::status::ok) {
                inv.integrity.bytes_mismatched += 4;
                if (inv.integrity.ok) {
                    inv.integrity.detail = "QP " + std::to_string(q) + ": spare STag " + std::to_string(s) +
                                           ", named by no Send with Invalidate, is no longer registered";
                }
                inv.integrity.ok = false;
            }
        }
    }
    oob_.wait_for("mixed-ops-done");
    if (cfg_.flip_byte) {
        // The deliberate flaw: one byte in the middle of QP 0's target area changes behind the
        // shadow model's back; the final check must report it.
        const std::uint64_t at = buf + 4096 + 4096 + lay_.target / 2;
        std::uint8_t b = 0;
        bus.mem_read(at, &b, 1);
        b ^= 0x5a;
        bus.mem_write(at, &b, 1);
        MIXED_LOG(info, bus, "flipped the byte at 0x" << std::hex << at << " on purpose");
    }
    oob_.publish("mixed-server-done", {});
}

void mixed::client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    drv::context ctx(bus);
    std::uint32_t pd = 0;
    std::uint64_t buf = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    std::vector<drv::queue_pair*> qps(cfg_.qps, nullptr);
    const std::uint32_t depth = next_pow2(cfg_.queue_depth);
    bool ok = ctx.open(station) == drv::status::ok && ctx.alloc_pd(&pd) == drv::status::ok &&
              ctx.alloc_buffer(cfg_.buffer, &buf) == drv::status::ok &&
              ctx.reg_mr(pd, buf, cfg_.buffer, regmap::mr_access::local_write, &mr) == drv::status::ok &&
              ctx.create_cq(next_pow2(2ULL * depth * cfg_.qps), &cq) == drv::status::ok;
    // A masked atomic takes two send-queue slots.
    for (std::uint32_t q = 0; ok && q < cfg_.qps; ++q) {
        ok = ctx.create_qp(pd, cq, cq, 2 * depth, 2, &qps[q]) == drv::status::ok;
    }
    // Regions of its own each QP's local invalidates retire, one each.
    const std::uint64_t spares = static_cast<std::uint64_t>(cfg_.qps) * cfg_.spare_stags;
    std::vector<drv::memory_region> local_spares(spares);
    std::uint64_t spare_buf = 0;
    if (ok && spares > 0) ok = ctx.alloc_buffer(spares * 64, &spare_buf) == drv::status::ok;
    for (std::uint64_t s = 0; ok && s < spares; ++s) {
        ok =
            ctx.reg_mr(pd, spare_buf + 64 * s, 64, regmap::mr_access::local_write, &local_spares[s]) == drv::status::ok;
    }
    if (!ok) {
        fail("mixed: client set-up failed (see the log)");
        on_done_();
        return;
    }
    client_addr_ = buf;
    const remote_buffer remote = oob_.wait_for("server");
    if (const std::string why = connect_all(ctx, qps, server_ip, remote.port, result_); !why.empty()) {
        fail("mixed: " + why);
        on_done_();
        return;
    }
    std::vector<std::uint32_t> spare_stag(static_cast<std::size_t>(cfg_.qps) * cfg_.spare_stags);
    for (std::size_t s = 0; s < spare_stag.size(); ++s) {
        spare_stag[s] = oob_.wait_for("mixed-spare-" + std::to_string(s)).stag;
    }
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) oob_.wait_for("mixed-credits-" + std::to_string(q));

    const auto client_base = [&](std::uint32_t q) { return buf + q * lay_.client_slice; };
    const auto server_base = [&](std::uint32_t q) { return remote.addr + 4096 + q * lay_.server_slice; };
    std::vector<std::uint32_t> next(cfg_.qps, 0), sends_posted(cfg_.qps, 0);
    std::uint64_t remaining = static_cast<std::uint64_t>(cfg_.operations) * cfg_.qps;
    std::vector<drv::work_completion> wcs;
    std::vector<std::uint8_t> got;
    const std::uint64_t start = bus.now_ps();

    // Posts op `i` of QP `q`: writes its source bytes, updates the shadow, builds the work request.
    const auto post = [&](std::uint32_t q, std::uint32_t i) {
        const op_desc& op = ops_[q][i];
        in_flight f;
        f.op = i;
        f.ranges = ranges_of(op);
        drv::send_wr wr;
        wr.wr_id = static_cast<std::uint64_t>(q) << 32 | i;
        wr.local_stag = mr.stag;
        wr.remote_stag = remote.stag;
        wr.length = op.length;
        const std::uint64_t target = 4096 + q * lay_.server_slice + 4096 + op.remote_off;  // into the server image
        switch (op.kind) {
        case mixed_op::write:
        case mixed_op::write_imm:
        case mixed_op::send:
        case mixed_op::send_se:
        case mixed_op::send_inv: {
            std::vector<std::uint8_t> bytes = payload(cfg_.seed, q, i, op.length);
            wr.local_addr = client_base(q) + lay_.src + op.local_off;
            bus.mem_write(wr.local_addr, bytes.data(), bytes.size());
            if (op.kind == mixed_op::write || op.kind == mixed_op::write_imm) {
                wr.opcode =
                    op.kind == mixed_op::write ? regmap::wr_opcode::rdma_write : regmap::wr_opcode::rdma_write_with_imm;
                wr.remote_addr = server_base(q) + 4096 + op.remote_off;
                std::memcpy(server_image_.data() + target, bytes.data(), bytes.size());
                if (op.kind == mixed_op::write_imm) {
                    wr.imm_data = op.value;
                    sends_[q].push_back({op.kind, i, {}, wr.imm_data, 0});
                    ++sends_posted[q];
                }
            } else {
                wr.opcode = regmap::wr_opcode::send;
                wr.solicited = op.kind == mixed_op::send_se;
                std::uint32_t inv = 0;
                if (op.kind == mixed_op::send_inv)
                    inv = wr.invalidate_stag = spare_stag[q * cfg_.spare_stags + op.index];
                sends_[q].push_back({op.kind, i, std::move(bytes), 0, inv});
                ++sends_posted[q];
            }
            break;
        }
        case mixed_op::immediate:
            wr.opcode = regmap::wr_opcode::immediate_data;
            wr.length = 0;
            wr.imm_data = op.value;
            sends_[q].push_back({op.kind, i, {}, op.value, 0});
            ++sends_posted[q];
            break;
        case mixed_op::local_inv:
            wr.opcode = regmap::wr_opcode::local_invalidate;
            wr.length = 0;
            wr.invalidate_stag = local_spares[q * cfg_.spare_stags + op.index].stag;
            break;
        case mixed_op::read:
            wr.opcode = regmap::wr_opcode::rdma_read;
            wr.local_addr = client_base(q) + lay_.sink + op.local_off;
            wr.remote_addr = server_base(q) + 4096 + op.remote_off;
            f.expect.assign(server_image_.begin() + static_cast<std::ptrdiff_t>(target),
                            server_image_.begin() + static_cast<std::ptrdiff_t>(target + op.length));
            break;
        case mixed_op::fetch_add: {
            wr.opcode = regmap::wr_opcode::atomic_fetch_add;
            wr.local_addr = client_base(q) + op.local_off;
            wr.remote_addr = remote.addr + 8ULL * op.index;
            wr.operand = op.value;
            // The final counter is the initial value plus every add, whatever their order.
            std::uint64_t v = 0;
            std::memcpy(&v, server_image_.data() + 8ULL * op.index, 8);
            v += op.value;
            std::memcpy(server_image_.data() + 8ULL * op.index, &v, 8);
            break;
        }
        case mixed_op::cmp_swap:
        case mixed_op::masked_cmp_swap:
        case mixed_op::masked_fetch_add: {
            wr.opcode = op.kind == mixed_op::masked_fetch_add ? regmap::wr_opcode::atomic_fetch_add
                                                              : regmap::wr_opcode::atomic_compare_swap;
            wr.local_addr = client_base(q) + op.local_off;
            wr.remote_addr = server_base(q) + 8ULL * op.index;
            wr.operand = op.value;
            // The QP's own word: its atomics execute in the QP's order, so the original each
            // returns is the shadow's value now.
            std::uint64_t& word = words_[q * kWords + op.index];
            f.expect_value = word;
            if (op.kind == mixed_op::masked_fetch_add) {
                wr.masked = true;
                wr.add_or_swap_mask = op.add_or_swap_mask;
                word = rfc_masked_add(word, op.value, op.add_or_swap_mask);
            } else {
                // Compare data equal to the word in the compared bits (or differing in one of
                // them); the uncompared bits are noise.
                const std::uint64_t cmask = op.compare_mask;
                const std::uint64_t differ = op.cas_match             ? 0
                                             : (op.miss & cmask) != 0 ? op.miss & cmask
                                                                      : cmask & (~cmask + 1);
                wr.compare = ((word ^ differ) & cmask) | (op.noise & ~cmask);
                if (op.kind == mixed_op::masked_cmp_swap) {
                    wr.masked = true;
                    wr.add_or_swap_mask = op.add_or_swap_mask;
                    wr.compare_mask = cmask;
                }
                word = rfc_masked_swap(word, wr.compare, cmask, op.value, op.add_or_swap_mask);
            }
            std::memcpy(server_image_.data() + 4096 + q * lay_.server_slice + 8ULL * op.index, &word, 8);
            break;
        }
        }
        f.posted_ps = bus.now_ps();
        if (ctx.post_send(qps[q], wr) != drv::status::ok) return false;
        row_stats& row = rows_[static_cast<std::size_t>(op.kind)];
        ++row.count;
        row.bytes += op.length;
        flights_[q].push_back(std::move(f));
        return true;
    };

    // Retires one completion: checks what it brought back (read data, atomic originals).
    const auto complete = [&](const drv::work_completion& wc) {
        const std::uint64_t q = wc.wr_id >> 32;
        const auto i = static_cast<std::uint32_t>(wc.wr_id);
        if (q >= cfg_.qps) return false;
        auto it = std::find_if(flights_[q].begin(), flights_[q].end(), [i](const in_flight& f) { return f.op == i; });
        if (it == flights_[q].end()) return false;
        const op_desc& op = ops_[q][i];
        row_stats& row = rows_[static_cast<std::size_t>(op.kind)];
        row.latencies_ps.push_back(bus.now_ps() - it->posted_ps);
        if (wc.status != regmap::cqe_status::success) {
            ++row.errors;
            fail("mixed: QP " + std::to_string(q) + " op " + std::to_string(i) + " (" + to_string(op.kind) +
                 ") completed with status " + regmap::to_string(wc.status));
            return false;
        }
        const std::string what = "QP " + std::to_string(q) + " op " + std::to_string(i) + " (" + to_string(op.kind) +
                                 " of " + std::to_string(op.length) + " bytes)";
        if (op.kind == mixed_op::read) {
            got.assign(op.length, 0);
            peek_(0, client_base(static_cast<std::uint32_t>(q)) + lay_.sink + op.local_off, got.data(), got.size());
            check_bytes(row, what, got.data(), it->expect.data(), op.length);
        } else if (is_atomic(op.kind)) {
            std::uint64_t original = 0;
            peek_(0, client_base(static_cast<std::uint32_t>(q)) + op.local_off, &original, 8);
            if (op.kind == mixed_op::fetch_add) {
                fetch_adds_.push_back({original, op.value, op.index, static_cast<std::uint32_t>(q), i});
            } else {
                check_bytes(row, what + ", original", reinterpret_cast<const std::uint8_t*>(&original),
                            reinterpret_cast<const std::uint8_t*>(&it->expect_value), 8);
            }
        }
        flights_[q].erase(it);
        --remaining;
        return true;
    };

    while (remaining > 0 && result_.error.empty()) {
        bool progress = false;
        std::size_t outstanding = 0;
        for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
            while (next[q] < cfg_.operations && flights_[q].size() < cfg_.queue_depth) {
                const op_desc& op = ops_[q][next[q]];
                if (conflicts(q, ranges_of(op))) break;
                if (consumes_receive(op.kind) &&
                    sends_posted[q] >= oob_.wait_for("mixed-credits-" + std::to_string(q)).addr) {
                    break;
                }
                if (!post(q, next[q])) {
                    fail("mixed: post_send failed on QP " + std::to_string(q) + " (op " + std::to_string(next[q]) +
                         ")");
                    break;
                }
                ++next[q];
                progress = true;
            }
            outstanding += flights_[q].size();
        }
        if (!result_.error.empty()) break;
        wcs.clear();
        int n = 0;
        ctx.poll_cq(cq, 64, &wcs, &n);
        for (const drv::work_completion& wc : wcs) {
            if (!complete(wc)) {
                fail("mixed: unexpected completion (wr_id " + std::to_string(wc.wr_id) + ")");
                break;
            }
        }
        if (n == 0 && !progress) {
            // Waiting for completions, or (nothing outstanding) for the server to post receives.
            if (cfg_.event_mode && outstanding > 0)
                ctx.wait_cq(cq, 1'000'000'000'000ULL);
            else
                bus.spend(cfg_.poll_interval_ps);
        }
    }
    elapsed_ps_ = bus.now_ps() - start;
    if (result_.error.empty()) {
        oob_.publish("mixed-ops-done", {});
        oob_.wait_for("mixed-server-done");
        check_final();
        MIXED_LOG(info, bus, "all " << cfg_.operations * cfg_.qps << " operations done and checked");
    }
    for (const kind_info& k : kKinds) {
        row_stats& s = rows_[static_cast<std::size_t>(k.kind)];
        if (s.count == 0 && s.integrity.ok) continue;
        workload_row row;
        row.op = k.name;
        row.iterations = s.count;
        row.bytes = s.bytes;
        row.elapsed_ps = elapsed_ps_;
        row.latencies_ps = std::move(s.latencies_ps);
        row.errors = s.errors;
        row.integrity = s.integrity;
        if (!result_.error.empty() && row.integrity.ok) {
            row.integrity.ok = false;
            row.integrity.detail = "not checked: the run failed";
        }
        result_.rows.push_back(std::move(row));
    }
    result_.finished = result_.error.empty();
    on_done_();
}

void mixed::check_final() {
    // 1. The server's whole buffer against the shadow image: the target areas (RDMA Writes), the
    //    CmpSwap words and the counters (FetchAdds), and everything in between (nothing else moved).
    std::vector<std::uint8_t> actual(server_image_.size());
    if (!peek_(1, server_addr_, actual.data(), actual.size())) {
        fail("mixed: server buffer outside host memory");
        return;
    }
    const auto compare = [&](mixed_op kind, const std::string& name, std::uint64_t begin, std::uint64_t end) {
        end = std::min<std::uint64_t>(end, actual.size());
        if (begin >= end) return;
        check_bytes(rows_[static_cast<std::size_t>(kind)], name, actual.data() + begin, server_image_.data() + begin,
                    end - begin);
    };
    compare(mixed_op::fetch_add, "server counters", 0, 4096);
    for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
        const std::uint64_t base = 4096 + q * lay_.server_slice;
        compare(mixed_op::cmp_swap, "QP " + std::to_string(q) + " CmpSwap words", base, base + 4096);
        compare(mixed_op::write, "QP " + std::to_string(q) + " target area", base + 4096, base + lay_.server_slice);
    }
    compare(mixed_op::write, "server buffer tail", 4096 + cfg_.qps * lay_.server_slice, actual.size());
    // 2. FetchAdd linearizability per shared counter: sorted by the original each returned, every
    //    original is the previous one plus the previous add, starting at the initial value and
    //    ending (plus the last add) at the counter's final value.
    row_stats& fa = rows_[static_cast<std::size_t>(mixed_op::fetch_add)];
    for (std::uint32_t c = 0; c < cfg_.counters; ++c) {
        std::vector<fetch_add_record> recs;
        for (const fetch_add_record& r : fetch_adds_) {
            if (r.counter == c) recs.push_back(r);
        }
        std::sort(recs.begin(), recs.end(),
                  [](const fetch_add_record& a, const fetch_add_record& b) { return a.original < b.original; });
        std::uint64_t expect = counter_initial(c);
        std::uint64_t bad = 0;
        std::string first;
        for (const fetch_add_record& r : recs) {
            if (r.original != expect && ++bad == 1) {
                first = "counter " + std::to_string(c) + ": QP " + std::to_string(r.qp) + " op " +
                        std::to_string(r.op) + " returned " + std::to_string(r.original) +
                        " where the chain of adds expects " + std::to_string(expect);
            }
            expect = r.original + r.add;
        }
        std::uint64_t final_value = 0;
        std::memcpy(&final_value, actual.data() + 8ULL * c, 8);
        if (final_value != expect && ++bad == 1) {
            first = "counter " + std::to_string(c) + " ends at " + std::to_string(final_value) + ", the chain of " +
                    std::to_string(recs.size()) + " returned originals at " + std::to_string(expect);
        }
        fa.integrity.bytes_checked += 8 * recs.size();
        fa.integrity.bytes_mismatched += 8 * bad;
        if (bad > 0 && fa.integrity.ok) {
            fa.integrity.ok = false;
            fa.integrity.detail = first;
        }
    }
}

}  // namespace rnic::platform
