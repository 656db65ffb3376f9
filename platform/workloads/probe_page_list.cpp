// The page_list probe (workload.type = probe, workload.probe = page_list): memory regions registered
// by page list (regmap::command::reg_mr_pages) over host pages that are deliberately not contiguous
// and not in order, as a process's pinned user pages are. Each host takes 24 pages, lists 16 of them
// in a shuffled order and keeps the other 8 as guards that no access may touch. RDMA Writes, Reads,
// Sends and a FetchAdd cross page boundaries at both ends; every byte is checked on both hosts, and
// each host's whole arena (listed pages and guards) is compared with what it must hold. Then the
// device's refusals (page list outside mapped memory, count 0, count over the maximum, an unaligned
// page) and a Write that runs past the region's end into a page not in the list, which must draw
// the same Terminate as any bounds violation (RFC 5041 §7.2) and write nothing.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "proto/bytes.h"
#include "workloads/probe.h"
#include "workloads/write_bw.h"

namespace rnic::platform {

namespace acc = regmap::mr_access;

namespace {

constexpr unsigned kShift = 12;
constexpr std::uint64_t kPage = std::uint64_t{1} << kShift;
constexpr std::uint64_t kArenaPages = 24, kListed = 16;
constexpr std::uint64_t kBudgetPs = 5'000'000'000ULL;
constexpr std::uint64_t kPollPs = 50'000;
// Region virtual addresses: not host addresses, with a first-byte offset inside the first page.
constexpr std::uint64_t kServerVa = 0x7f0000000000ULL + 0x234;
constexpr std::uint64_t kClientVa = 0x550000000000ULL + 0x9c0;
constexpr std::uint64_t kServerLen = kListed * kPage - 0x234;  // ends with its last listed page
constexpr std::uint64_t kClientLen = kListed * kPage - 0x9c0;

// What each test moves, as offsets in the regions (chosen to cross page boundaries at both ends).
struct span {
    std::uint64_t client_off, server_off, len;
};
constexpr span kWrite{1000, 2500, 3 * kPage + 777};
constexpr span kRead{9 * kPage + 3000, 7 * kPage + 4000, 2 * kPage + 1234};
constexpr span kSend{13 * kPage + 100, 11 * kPage + 3800, 4000};
// FetchAdd: the target is the last 8 bytes of one of the server's pages; the result lands across a
// boundary of the client's pages (4 bytes either side).
constexpr std::uint64_t kAtomicServerOff = 5 * kPage - 0x234 - 8 + kPage;  // region offset, 8-aligned in its page
constexpr std::uint64_t kAtomicClientOff = 15 * kPage - 0x9c0 - 4;

std::vector<std::uint8_t> pattern(std::uint64_t seed, std::uint64_t tag, std::size_t len) {
    std::vector<std::uint8_t> v(len);
    fill_pattern(v.data(), v.size(), seed, tag);
    return v;
}

// One host's arena, the pages its region lists (shuffled) and the region.
struct paged_side {
    explicit paged_side(drv::host_bus& host) : bus(host), ctx(host) {}
    drv::host_bus& bus;
    drv::context ctx;
    std::uint32_t pd = 0;
    std::uint64_t arena = 0;
    std::vector<std::uint64_t> pages;  // host address of each listed page, in list order
    std::uint64_t va = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
    std::vector<std::uint8_t> expected;  // what the whole arena must hold

    // Host address of byte `off` of the region.
    std::uint64_t host(std::uint64_t off) const {
        const std::uint64_t pos = (va & (kPage - 1)) + off;
        return pages[pos >> kShift] + (pos & (kPage - 1));
    }
    // Region bytes through the page list, read (or expected) byte run by byte run.
    std::vector<std::uint8_t> read(std::uint64_t off, std::uint64_t len) {
        std::vector<std::uint8_t> out(len);
        for (std::uint64_t i = 0; i < len;) {
            const std::uint64_t n = std::min(len - i, kPage - ((host(off + i)) & (kPage - 1)));
            bus.mem_read(host(off + i), out.data() + i, n);
            i += n;
        }
        return out;
    }
    void write(std::uint64_t off, const std::vector<std::uint8_t>& data) {
        for (std::uint64_t i = 0; i < data.size();) {
            const std::uint64_t n = std::min<std::uint64_t>(data.size() - i, kPage - (host(off + i) & (kPage - 1)));
            bus.mem_write(host(off + i), data.data() + i, n);
            std::memcpy(expected.data() + (host(off + i) - arena), data.data() + i, n);
            i += n;
        }
    }
    void expect(std::uint64_t off, const std::vector<std::uint8_t>& data) {
        for (std::uint64_t i = 0; i < data.size(); ++i) expected[host(off + i) - arena] = data[i];
    }
    // "" when the whole arena (listed pages and guards) holds what it must.
    std::string arena_diff() {
        std::vector<std::uint8_t> now(expected.size());
        bus.mem_read(arena, now.data(), now.size());
        std::uint64_t diff = 0, first = 0;
        for (std::uint64_t i = 0; i < now.size(); ++i) {
            if (now[i] != expected[i] && diff++ == 0) first = i;
        }
        if (diff == 0) return "";
        const bool listed = std::find(pages.begin(), pages.end(), arena + (first & ~(kPage - 1))) != pages.end();
        return std::to_string(diff) + " bytes differ, first at arena offset " + std::to_string(first) +
               (listed ? " (a listed page)" : " (a guard page, not in the list)");
    }
};

// Sets up the arena: known contents, 16 of its 24 pages listed in a shuffled order; registers the
// region over them. False (and *why) on failure.
bool set_up(paged_side& s, const drv::station_config& station, std::uint64_t seed, std::uint64_t va, std::uint64_t len,
            std::string* why) {
    s.va = va;
    if (s.ctx.open(station) != drv::status::ok || s.ctx.alloc_pd(&s.pd) != drv::status::ok ||
        s.ctx.alloc_buffer(kArenaPages * kPage, &s.arena) != drv::status::ok) {
        *why = "open, protection domain or arena allocation failed";
        return false;
    }
    s.expected = pattern(seed, 0xa2e4, kArenaPages * kPage);
    s.bus.mem_write(s.arena, s.expected.data(), s.expected.size());
    std::vector<std::uint64_t> order(kArenaPages);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed * 7919 + va);
    std::shuffle(order.begin(), order.end(), rng);
    for (std::uint64_t i = 0; i < kListed; ++i) s.pages.push_back(s.arena + order[i] * kPage);
    const std::uint32_t all = acc::local_write | acc::remote_write | acc::remote_read | acc::remote_atomic;
    if (s.ctx.reg_mr_pages(s.pd, va, len, all, s.pages, kShift, &s.mr) != drv::status::ok) {
        *why = "reg_mr_pages failed";
        return false;
    }
    if (s.ctx.create_cq(64, &s.cq) != drv::status::ok ||
        s.ctx.create_qp(s.pd, s.cq, s.cq, 16, 16, &s.qp) != drv::status::ok) {
        *why = "CQ or QP creation failed";
        return false;
    }
    return true;
}

// Polls until a completion with `wr_id` (or, for wr_id ~0, a receive) arrives.
bool wait_completion(paged_side& s, std::uint64_t wr_id, drv::work_completion* out) {
    const std::uint64_t deadline = s.bus.now_ps() + kBudgetPs;
    std::vector<drv::work_completion> wcs;
    while (s.bus.now_ps() < deadline) {
        wcs.clear();
        int n = 0;
        s.ctx.poll_cq(s.cq, 1, &wcs, &n);
        if (n == 0) {
            s.bus.spend(kPollPs);
            continue;
        }
        if (wcs[0].wr_id == wr_id || (wr_id == ~0ULL && wcs[0].opcode == drv::wc_opcode::recv)) {
            *out = wcs[0];
            return true;
        }
    }
    return false;
}

// Polls the QP's state until it is Error (a Terminate sent or received) or the budget is spent.
regmap::qp_state wait_for_error(paged_side& s, drv::terminate_info* term) {
    const std::uint64_t deadline = s.bus.now_ps() + kBudgetPs;
    regmap::qp_state state = regmap::qp_state::rts;
    while (s.bus.now_ps() < deadline && state != regmap::qp_state::error) {
        s.bus.spend(kPollPs);
        s.ctx.query_qp(s.qp, &state, term);
    }
    return state;
}

std::string term_text(regmap::qp_state state, const drv::terminate_info& term) {
    return std::string(regmap::to_string(state)) + ", layer " + std::to_string(term.layer) + " etype " +
           std::to_string(term.etype) + " code " + std::to_string(term.code);
}

std::string status_text(bool got, const drv::work_completion& wc) {
    return got ? regmap::to_string(wc.status) : "no completion";
}

}  // namespace

void probe::server_page_list(drv::host_bus& bus, const drv::station_config& station) {
    paged_side s(bus);
    std::string why;
    if (!set_up(s, station, cfg_.seed, kServerVa, kServerLen, &why)) {
        fail("server set-up failed: " + why);
        return;
    }
    // The Read's source and the atomic's target: known values in the region.
    s.write(kRead.server_off, pattern(cfg_.seed, 0x2ead, kRead.len));
    std::vector<std::uint8_t> counter(8);
    proto::put_le64(counter.data(), 0x1111222233334444ULL);
    s.write(kAtomicServerOff, counter);
    drv::recv_wr r;
    r.wr_id = 500;
    r.addr = kServerVa + kSend.server_off;
    r.length = static_cast<std::uint32_t>(kSend.len);
    r.stag = s.mr.stag;
    check("server: receive posted in the page-list region", s.ctx.post_recv(s.qp, r) == drv::status::ok);
    oob_.publish("server", {station.ipv4, cfg_.port, s.mr.stag, s.mr.to_base, s.mr.length});
    if (s.ctx.accept(s.qp, cfg_.port) != drv::status::ok) {
        fail("server accept failed");
        return;
    }
    // The Write's bytes, through the page list.
    oob_.wait_for("write-done");
    const std::vector<std::uint8_t> written = pattern(cfg_.seed, 0x3217e, kWrite.len);
    check("server: RDMA Write placed across its pages", s.read(kWrite.server_off, kWrite.len) == written);
    s.expect(kWrite.server_off, written);
    drv::work_completion wc;
    const bool got = wait_completion(s, ~0ULL, &wc);
    const std::vector<std::uint8_t> sent = pattern(cfg_.seed, 0x5e2d, kSend.len);
    check("server: Send received across its pages",
          got && wc.status == regmap::cqe_status::success && wc.byte_len == kSend.len &&
              s.read(kSend.server_off, kSend.len) == sent,
          status_text(got, wc));
    s.expect(kSend.server_off, sent);
    oob_.wait_for("atomic-done");
    std::uint8_t now[8];
    bus.mem_read(s.host(kAtomicServerOff), now, sizeof now);
    check("server: FetchAdd applied in its page", proto::get_le64(now) == 0x1111222233334444ULL + 0x1001);
    proto::put_le64(counter.data(), 0x1111222233334444ULL + 0x1001);
    s.expect(kAtomicServerOff, counter);
    check("server: arena after Write, Read, Send and FetchAdd", s.arena_diff().empty(), s.arena_diff());
    // The client's Write past the region's end: a bounds Terminate from here, nothing written.
    oob_.publish("server-checked", {});
    drv::terminate_info term;
    const regmap::qp_state state = wait_for_error(s, &term);
    check("server: a Write past the region's end draws a base-or-bounds Terminate (RFC 5041 §7.2)",
          state == regmap::qp_state::error && term.valid && !term.received && term.layer == 1 && term.etype == 1 &&
              term.code == 0x01,
          term_text(state, term));
    check("server: nothing written past the region's end, nor in a page not listed", s.arena_diff().empty(),
          s.arena_diff());
    oob_.wait_for("client-done");
}

void probe::client_page_list(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    paged_side s(bus);
    std::string why;
    if (!set_up(s, station, cfg_.seed, kClientVa, kClientLen, &why)) {
        fail("client set-up failed: " + why);
        return;
    }
    check("client: reg_mr_pages over 16 shuffled pages", true);
    device_refusals(s.ctx, s.pd, s.arena);
    const remote_buffer server = oob_.wait_for("server");
    if (s.ctx.connect(s.qp, server_ip, server.port, 40000) != drv::status::ok) {
        fail("client connect failed");
        return;
    }
    result_.setup_ok = true;
    auto post = [&](drv::send_wr w) {
        drv::work_completion wc;
        const bool got = s.ctx.post_send(s.qp, w) == drv::status::ok && wait_completion(s, w.wr_id, &wc);
        return std::make_pair(got && wc.status == regmap::cqe_status::success, status_text(got, wc));
    };
    // A work request on the client's region (local offset) and the server's (remote tagged offset).
    auto request = [&](std::uint64_t wr_id, regmap::wr_opcode op, std::uint64_t local_off, std::uint64_t len,
                       std::uint64_t remote_to) {
        drv::send_wr w;
        w.wr_id = wr_id;
        w.opcode = op;
        w.local_addr = kClientVa + local_off;
        w.length = static_cast<std::uint32_t>(len);
        w.local_stag = s.mr.stag;
        w.remote_addr = remote_to;
        w.remote_stag = server.stag;
        return w;
    };
    using op = regmap::wr_opcode;
    // RDMA Write: source across the client's pages, sink across the server's.
    const std::vector<std::uint8_t> written = pattern(cfg_.seed, 0x3217e, kWrite.len);
    s.write(kWrite.client_off, written);
    auto [ok, detail] =
        post(request(1, op::rdma_write, kWrite.client_off, kWrite.len, server.addr + kWrite.server_off));
    check("client: RDMA Write from its pages completes", ok, detail);
    oob_.publish("write-done", {});
    // RDMA Read: the server's pages into the client's.
    std::tie(ok, detail) = post(request(2, op::rdma_read, kRead.client_off, kRead.len, server.addr + kRead.server_off));
    const std::vector<std::uint8_t> read = pattern(cfg_.seed, 0x2ead, kRead.len);
    check("client: RDMA Read into its pages, every byte", ok && s.read(kRead.client_off, kRead.len) == read, detail);
    s.expect(kRead.client_off, read);
    // Send: from the client's pages into the server's posted receive.
    const std::vector<std::uint8_t> sent = pattern(cfg_.seed, 0x5e2d, kSend.len);
    s.write(kSend.client_off, sent);
    std::tie(ok, detail) = post(request(3, op::send, kSend.client_off, kSend.len, 0));
    check("client: Send from its pages completes", ok, detail);
    // FetchAdd: the original value lands across a boundary of the client's pages.
    drv::send_wr fetch_add = request(4, op::atomic_fetch_add, kAtomicClientOff, 8, server.addr + kAtomicServerOff);
    fetch_add.operand = 0x1001;
    std::tie(ok, detail) = post(fetch_add);
    const std::vector<std::uint8_t> original = s.read(kAtomicClientOff, 8);
    check("client: FetchAdd's original value lands across two of its pages",
          ok && proto::get_le64(original.data()) == 0x1111222233334444ULL, detail);
    s.expect(kAtomicClientOff, original);
    oob_.publish("atomic-done", {});
    check("client: arena after Write, Read, Send and FetchAdd", s.arena_diff().empty(), s.arena_diff());
    // A Write that starts inside the server's region and runs 100 bytes past its end, which is the
    // end of its last listed page: the bytes would go to a page not in the list. Refused whole.
    oob_.wait_for("server-checked");
    const std::vector<std::uint8_t> past = pattern(cfg_.seed, 0xbad, 300);
    s.write(0, past);
    const drv::send_wr w = request(5, op::rdma_write, 0, past.size(), server.addr + server.length - 200);
    // The Write itself completes once TCP has it acknowledged (RFC 5040 §5.5); the peer's Terminate
    // then takes the QP to Error.
    check("client: the Write past the region's end is posted", s.ctx.post_send(s.qp, w) == drv::status::ok);
    drv::terminate_info term;
    const regmap::qp_state state = wait_for_error(s, &term);
    check("client: the peer's bounds Terminate puts the QP in Error",
          state == regmap::qp_state::error && term.valid && term.received && term.layer == 1 && term.etype == 1 &&
              term.code == 0x01,
          term_text(state, term));
    check("client: arena unchanged by the failed Write", s.arena_diff().empty(), s.arena_diff());
    oob_.publish("client-done", {});
}

void probe::device_refusals(drv::context& ctx, std::uint32_t pd, std::uint64_t arena) {
    // Commands straight to the device (the driver library refuses these itself): the device must
    // answer bad_parameter, never read or map anything it was not given.
    auto reg = [&](std::uint64_t pbl, std::uint64_t count, unsigned shift, std::uint64_t len) {
        const std::uint64_t p5 = count | static_cast<std::uint64_t>(shift) << 24;
        return ctx.dev().execute(
            regmap::command::reg_mr_pages,
            {0x1000, len, acc::local_write | static_cast<std::uint64_t>(pd) << 32, 0x1000, pbl, p5});
    };
    auto refused = [](const drv::command_result& r) {
        return !r.timed_out && r.status == regmap::cmd_status::bad_parameter;
    };
    // A page list the device reads from the arena: one good page, then an unaligned one.
    std::uint8_t list[16];
    proto::put_le64(list, arena);
    proto::put_le64(list + 8, arena + kPage + 8);
    const std::uint64_t pbl = arena + (kArenaPages - 1) * kPage;  // the last page, never listed below
    std::uint8_t saved[16];
    ctx.bus().mem_read(pbl, saved, sizeof saved);
    ctx.bus().mem_write(pbl, list, sizeof list);
    const drv::command_result outside = reg(0xdead0000000ULL, 1, kShift, 64);
    check("device: a page list outside mapped memory is refused", refused(outside), regmap::to_string(outside.status));
    const drv::command_result zero = reg(pbl, 0, kShift, 64);
    check("device: a page count of 0 is refused", refused(zero), regmap::to_string(zero.status));
    const drv::command_result over = reg(pbl, regmap::kMaxPageListEntries + 1, kShift, 64);
    check("device: a page count over kMaxPageListEntries is refused", refused(over), regmap::to_string(over.status));
    const drv::command_result unaligned = reg(pbl, 2, kShift, 2 * kPage);
    check("device: an unaligned page in the list is refused", refused(unaligned), regmap::to_string(unaligned.status));
    const drv::command_result small = reg(pbl, 1, kShift - 1, 64);
    check("device: a page size under 4 KiB is refused", refused(small), regmap::to_string(small.status));
    const drv::command_result good = reg(pbl, 1, kShift, 64);
    check("device: the same list with its good page only is taken",
          !good.timed_out && good.status == regmap::cmd_status::ok, regmap::to_string(good.status));
    if (good.status == regmap::cmd_status::ok)
        ctx.dev().execute(regmap::command::dereg_mr, {good.result, 0, 0, 0, 0, 0});
    ctx.bus().mem_write(pbl, saved, sizeof saved);
}

}  // namespace rnic::platform
