#include "workloads/probe.h"

#include <cstring>
#include <deque>
#include <sstream>

#include "core/log.h"
#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"
#include "workloads/write_bw.h"

namespace rnic::platform {

namespace ddp = proto::ddp;
namespace acc = regmap::mr_access;

const std::vector<probe_expectation>& probe_catalogue() {
    // layer 0 RDMAP / 1 DDP; etype and code as RFC 5040 Figure 9 and RFC 5041 §7.2 number them.
    static const std::vector<probe_expectation> all = {
        {"invalid_stag", true, 1, 1, 0x00, "RFC 5041 §7.2: tagged buffer, invalid STag"},
        {"out_of_bounds", true, 1, 1, 0x01, "RFC 5041 §7.2: tagged buffer, base or bounds violation"},
        {"pd_mismatch", true, 1, 1, 0x02, "RFC 5041 §7.2: tagged buffer, STag not associated with the stream"},
        {"access_rights", true, 0, 1, 0x02, "RFC 5040 §7.2: remote protection, access rights violation"},
        {"read_invalid_stag", true, 0, 1, 0x00, "RFC 5040 §7.2: a Read Request's source STag is invalid"},
        {"misaligned_atomic", true, 0, 2, 0x07, "RFC 7306 §8.2: misaligned atomic, catastrophic to the stream"},
        {"unexpected_opcode", true, 0, 2, 0x06, "RFC 5040 §7.2: remote operation, unexpected opcode"},
        {"invalid_queue", true, 1, 2, 0x01, "RFC 5041 §7.2: untagged buffer, invalid QN"},
        {"no_receive_buffer", true, 1, 2, 0x02, "RFC 5041 §7.2: untagged buffer, no buffer available"},
        {"msn_out_of_range", true, 1, 2, 0x03, "RFC 5041 §7.2: untagged buffer, MSN range not valid"},
        {"message_too_long", true, 1, 2, 0x05, "RFC 5041 §7.2: untagged buffer, message too long"},
        {"too_many_reads", true, 1, 2, 0x02, "RFC 5040 §6.1 IRD: queue 1 has no free buffer (RFC 5041 §7.2)"},
        {"invalidate_bad_stag", true, 0, 1, 0x09, "RFC 5040 §5.3: STag cannot be invalidated"},
        {"local_invalidate", true, 1, 1, 0x00, "RFC 5040 §2.2: an invalidated STag is invalid to the peer"},
        {"send_invalidate", true, 1, 1, 0x00, "RFC 5040 §5.3: Send with Invalidate invalidates the STag"},
        {"write_imm", false, 0, 0, 0, "RFC 7306 §6, §7: Immediate Data completes after the Write before it"},
        {"zero_based", false, 0, 0, 0, "RFC 5040 §2.2: zero-based tagged offsets"},
        {"masked_atomics", false, 0, 0, 0, "RFC 7306 §5.1: masked FetchAdd and CmpSwap"},
        {"qp_states", false, 0, 0, 0, "RFC 5040 §6.2: graceful close; QP query and destroy"},
        {"response_order", false, 0, 0, 0, "RFC 7306 §7: Read and Atomic Responses leave in request order"},
        {"abort", false, 0, 0, 0, "RFC 5040 §6.2: abortive close by the driver (modify to Error)"},
        {"reject", false, 0, 0, 0, "RFC 5044 §7.1.5, RFC 6581: MPA Reply with R = 1 and private data refuses"},
        {"verbs_misuse", false, 0, 0, 0, "Driver misuse: every bad call returns an error and logs it"},
        {"peer_to_peer", false, 0, 0, 0,
         "RFC 6581 §9.2: the initiator's RTR lets the responder send first (needs rnic.mpa.revision = 2)"},
        {"listen_backlog", false, 0, 0, 0,
         "listen: a peer that connects before the accept waits in the backlog, then is served"},
        {"mpa_timeout", false, 0, 0, 0,
         "A listening peer that never answers the MPA Request: connect times out after rnic.mpa.timeout"},
        {"held_close", false, 0, 0, 0,
         "A responder that closes before the initiator's first FPDU: its unsent work flushes, the QP goes Idle"},
        {"responder_waits", false, 0, 0, 0,
         "RFC 5044 §7.1.2 rule 4: the responder sends nothing before the initiator's first FPDU"},
        {"page_list", false, 0, 0, 0,
         "reg_mr_pages: regions over non-contiguous pages, every access split at page boundaries"},
        {"device_reset", false, 0, 0, 0,
         "CTRL.RESET with objects open: all gone, new ones numbered from 0, commands from ring slot 0"},
    };
    return all;
}

const probe_expectation* find_probe(const std::string& name) {
    for (const probe_expectation& p : probe_catalogue()) {
        if (name == p.name) return &p;
    }
    return nullptr;
}

namespace {
// Server buffer layout: region A (all rights, VA-based), B (remote read only), C (another
// protection domain), Z (zero-based); receive buffers sit inside A.
constexpr std::uint64_t kBuffer = 256 * 1024;
constexpr std::uint64_t kOffB = 128 * 1024, kOffC = 160 * 1024, kOffZ = 192 * 1024;
constexpr std::uint64_t kLenA = 128 * 1024, kLenB = 32 * 1024, kLenC = 32 * 1024, kLenZ = 64 * 1024;
constexpr std::uint64_t kRecvOff = 64 * 1024;   // receive buffers in A
constexpr std::uint64_t kAtomicOff = 96 * 1024; // atomic targets in A
constexpr std::uint64_t kBaseline = 4096;       // the client's first (good) RDMA Write, at A + 0
constexpr std::uint64_t kClientBuffer = 1 << 20;
constexpr std::uint64_t kBudgetPs = 5'000'000'000ULL;  // 5 ms of simulated time to see an outcome
constexpr std::uint64_t kBacklogWaitPs = 200'000'000;   // listen_backlog: the server accepts 200 us late

std::string term_text(const drv::terminate_info& t) {
    std::ostringstream o;
    o << "layer " << int(t.layer) << " etype " << int(t.etype) << " code 0x" << std::hex << int(t.code)
      << (t.received ? " (received)" : " (sent)");
    return o.str();
}

std::vector<std::uint8_t> pattern(std::uint64_t seed, std::uint64_t tag, std::size_t len) {
    std::vector<std::uint8_t> v(len);
    fill_pattern(v.data(), v.size(), seed, tag);
    return v;
}
}  // namespace

struct probe::side {
    explicit side(drv::host_bus& host) : bus(host), ctx(host) {}
    drv::host_bus& bus;
    drv::context ctx;
    std::uint32_t pd = 0, pd2 = 0;
    std::uint64_t buf = 0;
    drv::memory_region a, b, c, z;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
    std::deque<drv::work_completion> polled;  // taken from the CQ, not yet looked at
};

probe::probe(const probe_config& cfg, oob_channel& oob, std::function<void()> on_done)
    : cfg_(cfg), expect_(find_probe(cfg.probe)), oob_(oob), on_done_(std::move(on_done)) {}

void probe::check(const std::string& what, bool ok, const std::string& detail) {
    record_check(result_, what, ok, detail);
}

void probe::fail(const std::string& what) { record_failure(result_, what); }

bool probe::poll_for(side& s, drv::completion_queue* cq, const std::function<bool(const drv::work_completion&)>& pred,
                     std::uint64_t budget_ps, drv::work_completion* out) {
    // Completions are looked at in order; those the predicate passes over are consumed.
    const std::uint64_t deadline = s.bus.now_ps() + budget_ps;
    std::vector<drv::work_completion> wcs;
    for (;;) {
        while (!s.polled.empty()) {
            const drv::work_completion wc = s.polled.front();
            s.polled.pop_front();
            if (pred(wc)) {
                if (out != nullptr) *out = wc;
                return true;
            }
        }
        if (s.bus.now_ps() >= deadline) return false;
        wcs.clear();
        int n = 0;
        s.ctx.poll_cq(cq, 16, &wcs, &n);
        s.polled.insert(s.polled.end(), wcs.begin(), wcs.end());
        if (n == 0) s.bus.spend(cfg_.poll_interval_ps);
    }
}

drv::send_wr probe::baseline_write(side& s, const remote_buffer& a) {
    const std::vector<std::uint8_t> baseline = pattern(cfg_.seed, 0xba5e, kBaseline);
    s.bus.mem_write(s.buf, baseline.data(), baseline.size());
    drv::send_wr w;
    w.wr_id = 1;
    w.local_addr = s.buf;
    w.length = kBaseline;
    w.local_stag = s.a.stag;
    w.remote_addr = a.addr;
    w.remote_stag = a.stag;
    return w;
}

// ---- server (host b) ---------------------------------------------------------------------------

void probe::server(drv::host_bus& bus, const drv::station_config& station) {
    if (cfg_.probe == "page_list" || cfg_.probe == "device_reset") {
        if (cfg_.probe == "page_list") server_page_list(bus, station);
        else server_device_reset(bus, station);
        oob_.publish("server-done", {});
        return;
    }
    side s(bus);
    const std::string& p = cfg_.probe;
    const std::uint32_t all = acc::remote_write | acc::remote_read | acc::remote_atomic | acc::local_write;
    if (s.ctx.open(station) != drv::status::ok || s.ctx.alloc_pd(&s.pd) != drv::status::ok ||
        s.ctx.alloc_pd(&s.pd2) != drv::status::ok || s.ctx.alloc_buffer(kBuffer, &s.buf) != drv::status::ok ||
        s.ctx.reg_mr(s.pd, s.buf, kLenA, all, &s.a) != drv::status::ok ||
        s.ctx.reg_mr(s.pd, s.buf + kOffB, kLenB, acc::remote_read | acc::local_write, &s.b) != drv::status::ok ||
        s.ctx.reg_mr(s.pd2, s.buf + kOffC, kLenC, all, &s.c) != drv::status::ok ||
        s.ctx.reg_mr(s.pd, s.buf + kOffZ, kLenZ, all, &s.z, true) != drv::status::ok ||
        s.ctx.create_cq(64, &s.cq) != drv::status::ok ||
        s.ctx.create_qp(s.pd, s.cq, s.cq, 16, 64, &s.qp) != drv::status::ok) {
        fail("server set-up failed (see the log)");
        return;
    }
    // Known contents everywhere, so that any stray placement shows.
    const std::vector<std::uint8_t> before = pattern(cfg_.seed, 0x5e4e, kBuffer);
    bus.mem_write(s.buf, before.data(), before.size());
    if (p == "response_order") {
        const std::uint8_t zero[8] = {};
        bus.mem_write(s.buf + kAtomicOff, zero, sizeof zero);  // the counter the atomics work on
    }
    // Receives the probe needs before the peer's first message can arrive.
    std::uint32_t receives = 0;
    if (p == "write_imm") receives = 40;
    if (p == "message_too_long") receives = 1;
    if (p == "msn_out_of_range" || p == "invalid_queue" || p == "unexpected_opcode" || p == "invalidate_bad_stag" ||
        p == "send_invalidate") {
        receives = 1;
    }
    for (std::uint32_t i = 0; i < receives; ++i) {
        drv::recv_wr r;
        r.wr_id = 1000 + i;
        r.addr = s.buf + kRecvOff + 256 * i;
        r.length = p == "message_too_long" ? 64 : 256;
        r.stag = s.a.stag;
        if (s.ctx.post_recv(s.qp, r) != drv::status::ok) fail("server post_recv failed");
    }
    if (p == "listen_backlog" || p == "mpa_timeout") check("server: listen", s.ctx.listen(cfg_.port) == drv::status::ok);
    if (p == "mpa_timeout") {
        // Listening, never accepting: the client's MPA Request is never answered.
        oob_.publish("server", {station.ipv4, cfg_.port, s.a.stag, s.a.to_base, s.a.length});
        oob_.wait_for("client-done");
        oob_.publish("server-done", {});
        return;
    }
    oob_.publish("server", {station.ipv4, cfg_.port, s.a.stag, s.a.to_base, s.a.length});
    oob_.publish("server-b", {station.ipv4, cfg_.port, s.b.stag, s.b.to_base, s.b.length});
    oob_.publish("server-c", {station.ipv4, cfg_.port, s.c.stag, s.c.to_base, s.c.length});
    oob_.publish("server-z", {station.ipv4, cfg_.port, s.z.stag, s.z.to_base, s.z.length});
    if (p == "reject") {
        server_reject(s);
        oob_.publish("server-done", {});
        return;
    }
    if (p == "listen_backlog") {
        // The client connects now; its connection waits in the device's backlog until this accept.
        oob_.wait_for("client-connecting");
        bus.spend(kBacklogWaitPs);
    }
    drv::read_limits limits;
    if (p == "too_many_reads") limits.ird = 2;  // the client will ask for more (ORD 8)
    if (s.ctx.accept(s.qp, cfg_.port, limits) != drv::status::ok) {
        fail("server accept failed");
        return;
    }
    if (p == "write_imm") server_write_imm(s);
    else if (p == "masked_atomics") server_masked_atomics(s);
    else if (p == "qp_states") server_qp_states(s);
    else if (p == "response_order" || p == "verbs_misuse" || p == "listen_backlog") oob_.wait_for("client-done");
    else if (p == "abort") server_qp_states(s);
    else if (p == "peer_to_peer" || p == "responder_waits" || p == "held_close") server_sends_first(s);
    else if (p == "zero_based") {
        oob_.wait_for("client-done");
        const std::vector<std::uint8_t> want = pattern(cfg_.seed, 0x2e40, 8192);
        std::vector<std::uint8_t> got(want.size());
        bus.mem_read(s.buf + kOffZ + 100, got.data(), got.size());
        check("server: the Write landed at zero-based TO 100 of its region", got == want);
    }
    else server_error_probe(s);
    oob_.publish("server-done", {});
}

void probe::server_error_probe(side& s) {
    const std::string& p = cfg_.probe;
    if (p == "local_invalidate") {
        // Once the client's good Write is in, invalidate A here, in send-queue order.
        oob_.wait_for("baseline-done");
        drv::send_wr inv;
        inv.wr_id = 77;
        inv.opcode = regmap::wr_opcode::local_invalidate;
        inv.invalidate_stag = s.a.stag;
        check("server: local invalidate posted", s.ctx.post_send(s.qp, inv) == drv::status::ok);
        drv::work_completion wc;
        const bool done = poll_for(s, s.cq, [](const drv::work_completion& w) { return w.wr_id == 77; }, kBudgetPs, &wc);
        check("server: local invalidate completed", done && wc.status == regmap::cqe_status::success,
              done ? regmap::to_string(wc.status) : "no completion");
        oob_.publish("invalidated", {});
    }
    if (p == "send_invalidate") {
        drv::work_completion wc;
        const bool got = poll_for(s, s.cq, [](const drv::work_completion& w) { return w.opcode == drv::wc_opcode::recv; },
                                  kBudgetPs, &wc);
        check("server: Send with Invalidate delivered and STag reported",
              got && wc.status == regmap::cqe_status::success && wc.invalidated_stag == s.a.stag,
              got ? "invalidated STag 0x" + std::to_string(wc.invalidated_stag) : "no receive completion");
        oob_.publish("invalidated", {});
    }
    // The server's RNIC answers the bad message with a Terminate and reports the QP error.
    drv::work_completion err;
    const bool seen = poll_for(s, s.cq, [](const drv::work_completion& w) { return w.opcode == drv::wc_opcode::qp_error; },
                               kBudgetPs, &err);
    const bool term_ok = seen && err.terminate.valid && !err.terminate.received && err.terminate.layer == expect_->layer &&
                         err.terminate.etype == expect_->etype && err.terminate.code == expect_->code;
    check("server: QP error completion with the Terminate it sent", term_ok,
          seen ? term_text(err.terminate) + ", status " + regmap::to_string(err.status) : "no QP error completion");
    regmap::qp_state state = regmap::qp_state::rts;
    s.ctx.query_qp(s.qp, &state);
    check("server: QP in Error", state == regmap::qp_state::error, regmap::to_string(state));
    // Memory: what it held before, except the client's good Write (and a delivered Send).
    std::vector<std::uint8_t> expected = pattern(cfg_.seed, 0x5e4e, kBuffer);
    const std::vector<std::uint8_t> baseline = pattern(cfg_.seed, 0xba5e, kBaseline);
    std::memcpy(expected.data(), baseline.data(), baseline.size());
    if (p == "send_invalidate") std::memcpy(expected.data() + kRecvOff, baseline.data(), 64);
    std::vector<std::uint8_t> now(kBuffer);
    s.bus.mem_read(s.buf, now.data(), now.size());
    std::uint64_t diff = 0, first = 0;
    for (std::uint64_t i = 0; i < kBuffer; ++i) {
        if (now[i] != expected[i] && diff++ == 0) first = i;
    }
    check("server: target memory unchanged", diff == 0,
          diff == 0 ? "" : std::to_string(diff) + " bytes differ, first at offset " + std::to_string(first));
}

void probe::server_write_imm(side& s) {
    // Each Immediate Data completion must find its Write's bytes already in memory (RFC 7306 §7).
    const std::uint32_t n = static_cast<std::uint32_t>(oob_.wait_for("imm-count").addr);
    std::uint32_t in_order = 0, data_ok = 0;
    std::string detail;
    for (std::uint32_t i = 0; i < n; ++i) {
        drv::work_completion wc;
        if (!poll_for(s, s.cq, [](const drv::work_completion& w) { return w.opcode != drv::wc_opcode::qp_error; },
                      kBudgetPs, &wc)) {
            detail = "no completion for Immediate Data " + std::to_string(i);
            break;
        }
        const remote_buffer w = oob_.wait_for("imm-" + std::to_string(i));  // what the client wrote for it
        if (wc.status == regmap::cqe_status::success && wc.opcode == drv::wc_opcode::recv_imm && wc.with_imm &&
            wc.imm_data == (0xabcd000000000000ULL | i) && wc.byte_len == 0) {
            ++in_order;
        } else if (detail.empty()) {
            detail = "completion " + std::to_string(i) + ": imm 0x" + std::to_string(wc.imm_data) + " status " +
                     regmap::to_string(wc.status);
        }
        const std::vector<std::uint8_t> want = pattern(cfg_.seed, 0x1000 + i, w.length);
        std::vector<std::uint8_t> got(w.length);
        s.bus.mem_read(s.buf + w.addr, got.data(), got.size());
        if (got == want) ++data_ok;
        else if (detail.empty()) detail = "Write " + std::to_string(i) + " not fully placed at its Immediate Data";
    }
    check("server: Immediate Data completions in order with their values", in_order == n,
          std::to_string(in_order) + "/" + std::to_string(n));
    check("server: each Write placed before its Immediate Data completed", data_ok == n,
          detail.empty() ? std::to_string(data_ok) + "/" + std::to_string(n) : detail);
    drv::work_completion last;
    const bool got = poll_for(s, s.cq, [](const drv::work_completion&) { return true; }, kBudgetPs, &last);
    check("server: Immediate Data with SE completes a receive with the solicited flag",
          got && last.opcode == drv::wc_opcode::recv_imm && last.solicited && last.imm_data == 0x5e5e5e5e5e5e5e5eULL);
}

void probe::server_masked_atomics(side& s) {
    // Targets: word 0 for a lane-wise FetchAdd, word 1 for masked CmpSwaps, word 2 for a plain add.
    std::uint8_t init[24];
    proto::put_le64(init, 0x00000001ffffffffULL);
    proto::put_le64(init + 8, 0x1111222233334444ULL);
    proto::put_le64(init + 16, 0);
    s.bus.mem_write(s.buf + kAtomicOff, init, sizeof init);
    oob_.publish("atomics-ready", {});
    oob_.wait_for("atomics-done");
    std::uint8_t now[24];
    s.bus.mem_read(s.buf + kAtomicOff, now, sizeof now);
    // RFC 7306 §5.1: add mask bit 31 cuts the carry between the two 32-bit lanes.
    check("server: masked FetchAdd result in memory", proto::get_le64(now) == 0x0000000200000000ULL);
    check("server: masked CmpSwap swapped the upper half only", proto::get_le64(now + 8) == 0xaaaabbbb33334444ULL);
    check("server: plain FetchAdd result in memory", proto::get_le64(now + 16) == 5);
}

void probe::server_qp_states(side& s) {
    // The client closes gracefully: here the stream ends and the QP leaves RTS without a Terminate.
    drv::work_completion err;
    const bool seen = poll_for(s, s.cq, [](const drv::work_completion& w) { return w.opcode == drv::wc_opcode::qp_error; },
                               kBudgetPs, &err);
    check("server: stream close reported as a QP error completion without a Terminate",
          seen && !err.terminate.valid, seen ? term_text(err.terminate) : "no QP error completion");
    regmap::qp_state state = regmap::qp_state::rts;
    s.ctx.query_qp(s.qp, &state);
    check("server: QP in Error after the peer closed", state == regmap::qp_state::error, regmap::to_string(state));
    check("server: CQ in use cannot be destroyed", s.ctx.destroy_cq(s.cq) == drv::status::bad_state);
    check("server: QP destroyed", s.ctx.destroy_qp(s.qp) == drv::status::ok);
    check("server: CQ destroyed", s.ctx.destroy_cq(s.cq) == drv::status::ok);
}

// ---- client (host a) ---------------------------------------------------------------------------

void probe::client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    if (cfg_.probe == "page_list" || cfg_.probe == "device_reset") {
        if (cfg_.probe == "page_list") client_page_list(bus, station, server_ip);
        else client_device_reset(bus, station, server_ip);
        // After a failed set-up the server may wait for a step that never comes: do not wait for it.
        if (result_.setup_ok) oob_.wait_for("server-done");
        result_.finished = result_.error.empty();
        on_done_();
        return;
    }
    side s(bus);
    if (expect_ == nullptr) {
        fail("unknown probe '" + cfg_.probe + "'");
        on_done_();
        return;
    }
    if (s.ctx.open(station) != drv::status::ok || s.ctx.alloc_pd(&s.pd) != drv::status::ok ||
        s.ctx.alloc_buffer(kClientBuffer, &s.buf) != drv::status::ok ||
        s.ctx.reg_mr(s.pd, s.buf, kClientBuffer, acc::local_write, &s.a) != drv::status::ok ||
        s.ctx.create_cq(64, &s.cq) != drv::status::ok ||
        s.ctx.create_qp(s.pd, s.cq, s.cq, 64, 4, &s.qp) != drv::status::ok) {
        fail("client set-up failed (see the log)");
        on_done_();
        return;
    }
    const remote_buffer a = oob_.wait_for("server");
    drv::read_limits limits;
    if (cfg_.probe == "too_many_reads") limits.ord = 8;
    if (cfg_.probe == "listen_backlog") oob_.publish("client-connecting", {});
    const std::uint64_t t0 = bus.now_ps();
    if (cfg_.probe == "mpa_timeout") {
        const drv::status st = s.ctx.connect(s.qp, server_ip, a.port, 40000, limits);
        const std::uint64_t took = bus.now_ps() - t0;
        check("client: connect to a peer that never answers the MPA Request times out", st == drv::status::timeout,
              std::string("returned ") + drv::to_string(st) + " after " + std::to_string(took / 1'000'000) + " us");
        // The firmware's deadline (rnic.mpa.timeout) runs from the connect command; the driver's
        // command timeout is longer, so the firmware's verdict is what returned.
        check("client: it took the MPA timeout", took >= cfg_.mpa_timeout_ps && took < cfg_.mpa_timeout_ps + 1'000'000'000,
              std::to_string(took / 1'000'000) + " us, timeout " + std::to_string(cfg_.mpa_timeout_ps / 1'000'000) + " us");
        result_.setup_ok = true;
        bus.spend(100'000'000);  // 100 us: the connection's close goes out and is answered
        oob_.publish("client-done", {});
        oob_.wait_for("server-done");
        result_.finished = result_.error.empty();
        on_done_();
        return;
    }
    if (cfg_.probe == "reject") {
        client_reject(s, server_ip, a);
        oob_.wait_for("server-done");
        result_.finished = result_.error.empty();
        on_done_();
        return;
    }
    if (cfg_.probe == "peer_to_peer" || cfg_.probe == "responder_waits" || cfg_.probe == "held_close") {
        client_server_sends_first(s, server_ip, a);
        oob_.publish("client-done", {});
        oob_.wait_for("server-done");
        result_.finished = result_.error.empty();
        on_done_();
        return;
    }
    if (s.ctx.connect(s.qp, server_ip, a.port, 40000, limits) != drv::status::ok) {
        fail("client connect failed");
        on_done_();
        return;
    }
    result_.connect_ps = bus.now_ps() - t0;
    result_.setup_ok = true;
    if (cfg_.probe == "listen_backlog") {
        // Not before the accept; and well before a SYN retransmission (rnic.tcp.rto_initial, 1 ms),
        // which a port that was not listening would have needed.
        check("client: connected once the server accepted, from the backlog",
              result_.connect_ps >= kBacklogWaitPs && result_.connect_ps < kBacklogWaitPs + 500'000'000,
              "connect took " + std::to_string(result_.connect_ps / 1000) + " ns");
    }
    // A good RDMA Write first: the path works, and the server knows what it must hold.
    const drv::send_wr w = baseline_write(s, a);
    drv::work_completion wc;
    const bool ok = s.ctx.post_send(s.qp, w) == drv::status::ok &&
                    poll_for(s, s.cq, [](const drv::work_completion& c) { return c.wr_id == 1; }, kBudgetPs, &wc) &&
                    wc.status == regmap::cqe_status::success;
    check("client: first RDMA Write completes", ok);
    oob_.publish("baseline-done", {});
    if (ok) {
        const std::string& p = cfg_.probe;
        if (p == "write_imm") client_write_imm(s, a);
        else if (p == "zero_based") client_zero_based(s);
        else if (p == "masked_atomics") client_masked_atomics(s, a);
        else if (p == "qp_states") client_qp_states(s, a);
        else if (p == "response_order") client_response_order(s, a);
        else if (p == "abort") client_abort(s, a);
        else if (p == "verbs_misuse") client_verbs_misuse(s, a);
        else if (p == "listen_backlog") {}  // the connection and the first Write were the probe
        else client_error_probe(s, a);
    }
    oob_.publish("client-done", {});
    oob_.wait_for("server-done");
    result_.finished = result_.error.empty();
    on_done_();
}

void probe::client_error_probe(side& s, const remote_buffer& a) {
    const std::string& p = cfg_.probe;
    // A ULPDU built here and sent verbatim (test mode): for errors no correct driver can commit.
    auto raw = [&](const ddp::Header& h, const std::uint8_t* body, std::size_t body_len) {
        std::vector<std::uint8_t> u(h.size() + body_len);
        ddp::encode(h, u.data());
        if (body_len > 0) std::memcpy(u.data() + h.size(), body, body_len);
        const std::uint64_t at = s.buf + 512 * 1024;
        s.bus.mem_write(at, u.data(), u.size());
        drv::send_wr r;
        r.wr_id = 2;
        r.opcode = regmap::wr_opcode::raw_ulpdu;
        r.local_addr = at;
        r.length = static_cast<std::uint32_t>(u.size());
        r.local_stag = s.a.stag;
        return r;
    };
    std::vector<drv::send_wr> wrs;
    drv::send_wr w;
    w.wr_id = 2;
    w.local_addr = s.buf;
    w.length = 64;
    w.local_stag = s.a.stag;
    w.remote_addr = a.addr + 8192;
    w.remote_stag = a.stag;
    if (p == "invalid_stag") {
        w.remote_stag = a.stag ^ 0xffu;
        wrs.push_back(w);
    } else if (p == "out_of_bounds") {
        w.remote_addr = a.addr + a.length - 8;
        wrs.push_back(w);
    } else if (p == "pd_mismatch" || p == "access_rights") {
        const remote_buffer other = oob_.wait_for(p == "pd_mismatch" ? "server-c" : "server-b");
        w.remote_addr = other.addr;
        w.remote_stag = other.stag;
        wrs.push_back(w);
    } else if (p == "read_invalid_stag") {
        w.opcode = regmap::wr_opcode::rdma_read;
        w.local_addr = s.buf + 64 * 1024;
        w.remote_stag = a.stag ^ 0xffu;
        wrs.push_back(w);
    } else if (p == "misaligned_atomic") {
        // The driver refuses this itself; the raw ULPDU shows what a peer's RNIC must do.
        drv::send_wr bad = w;
        bad.opcode = regmap::wr_opcode::atomic_fetch_add;
        bad.length = 8;
        bad.remote_addr = a.addr + kAtomicOff + 4;
        check("client: the driver refuses a misaligned atomic", s.ctx.post_send(s.qp, bad) == drv::status::invalid_argument);
        ddp::Header h;
        h.tagged = false;
        h.opcode = ddp::Opcode::atomic_request;
        h.queue = ddp::kQueueReadRequest;
        h.msn = 1;
        ddp::AtomicRequest req;
        req.op = ddp::AtomicOpcode::fetch_add;
        req.request_id = 9;
        req.stag = a.stag;
        req.tagged_offset = a.addr + kAtomicOff + 4;
        req.add_or_swap_data = 1;
        std::uint8_t body[ddp::kAtomicRequestSize];
        ddp::encode(req, body);
        wrs.push_back(raw(h, body, sizeof body));
    } else if (p == "unexpected_opcode" || p == "invalid_queue" || p == "msn_out_of_range") {
        ddp::Header h;
        h.tagged = false;
        h.opcode = p == "unexpected_opcode" ? static_cast<ddp::Opcode>(12) : ddp::Opcode::send;  // 12: reserved
        h.queue = p == "invalid_queue" ? 6 : ddp::kQueueSend;
        h.msn = p == "msn_out_of_range" ? 5 : 1;
        const std::uint8_t body[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        wrs.push_back(raw(h, body, sizeof body));
    } else if (p == "no_receive_buffer" || p == "message_too_long") {
        w.opcode = regmap::wr_opcode::send;
        w.length = p == "message_too_long" ? 256 : 64;
        wrs.push_back(w);
    } else if (p == "too_many_reads") {
        for (int i = 0; i < 8; ++i) {
            w.wr_id = 2 + static_cast<std::uint64_t>(i);
            w.opcode = regmap::wr_opcode::rdma_read;
            w.local_addr = s.buf + 64 * 1024 * static_cast<std::uint64_t>(i + 1);
            w.length = 32 * 1024;
            w.remote_addr = a.addr + 32 * 1024;
            wrs.push_back(w);
        }
    } else if (p == "invalidate_bad_stag") {
        w.opcode = regmap::wr_opcode::send;
        w.length = 0;  // nothing to place: only the invalidation can fail
        w.invalidate_stag = 0x00abcd42;
        wrs.push_back(w);
    } else if (p == "local_invalidate" || p == "send_invalidate") {
        if (p == "send_invalidate") {
            drv::send_wr si = w;
            si.opcode = regmap::wr_opcode::send;
            si.invalidate_stag = a.stag;
            si.wr_id = 3;
            check("client: Send with Invalidate posted", s.ctx.post_send(s.qp, si) == drv::status::ok);
        }
        oob_.wait_for("invalidated");
        wrs.push_back(w);  // a Write to the STag that is no longer valid
    }
    for (const drv::send_wr& wr : wrs) {
        if (s.ctx.post_send(s.qp, wr) != drv::status::ok) {
            check("client: bad work request posted", false);
            return;
        }
    }
    // The peer's Terminate comes back: the QP error completion carries it.
    drv::work_completion err;
    const bool seen = poll_for(s, s.cq, [](const drv::work_completion& c) { return c.opcode == drv::wc_opcode::qp_error; },
                               kBudgetPs, &err);
    const bool term_ok = seen && err.terminate.received && err.terminate.layer == expect_->layer &&
                         err.terminate.etype == expect_->etype && err.terminate.code == expect_->code;
    check("client: QP error completion with the peer's Terminate", term_ok,
          seen ? term_text(err.terminate) + ", status " + regmap::to_string(err.status) : "no QP error completion");
    regmap::qp_state state = regmap::qp_state::rts;
    s.ctx.query_qp(s.qp, &state);
    check("client: QP in Error", state == regmap::qp_state::error, regmap::to_string(state));
    drv::send_wr after = w;
    after.opcode = regmap::wr_opcode::rdma_write;
    after.remote_stag = a.stag;
    after.invalidate_stag = 0;
    check("client: posting to a QP in Error is refused", s.ctx.post_send(s.qp, after) == drv::status::bad_state);
}

void probe::client_write_imm(side& s, const remote_buffer& a) {
    // Writes of sizes across the segment and FPDU boundaries, each with Immediate Data right behind it.
    static const std::uint32_t sizes[] = {1, 7, 64, 511, 512, 1000, 1460, 4096, 9000, 20000};
    const std::uint32_t n = 20;
    oob_.publish("imm-count", {0, 0, 0, n, 0});
    std::uint64_t off = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t len = sizes[i % (sizeof sizes / sizeof sizes[0])];
        const std::vector<std::uint8_t> data = pattern(cfg_.seed, 0x1000 + i, len);
        const std::uint64_t local = s.buf + 8192 + off;
        s.bus.mem_write(local, data.data(), data.size());
        drv::send_wr w;
        w.wr_id = 100 + i;
        w.opcode = regmap::wr_opcode::rdma_write_with_imm;
        w.local_addr = local;
        w.length = len;
        w.local_stag = s.a.stag;
        w.remote_addr = a.addr + 8192 + off;
        w.remote_stag = a.stag;
        w.imm_data = 0xabcd000000000000ULL | i;
        w.signaled = i + 1 == n;
        oob_.publish("imm-" + std::to_string(i), {0, 0, 0, 8192 + off, len});
        while (s.ctx.post_send(s.qp, w) == drv::status::ring_full) {
            poll_for(s, s.cq, [](const drv::work_completion&) { return true; }, 1'000'000, nullptr);
        }
        off += (len + 63) / 64 * 64;
    }
    drv::send_wr imm;
    imm.wr_id = 999;
    imm.opcode = regmap::wr_opcode::immediate_data;
    imm.imm_data = 0x5e5e5e5e5e5e5e5eULL;
    imm.solicited = true;
    check("client: Immediate Data with SE posted", s.ctx.post_send(s.qp, imm) == drv::status::ok);
    drv::work_completion wc;
    const bool done = poll_for(s, s.cq, [](const drv::work_completion& c) { return c.wr_id == 999; }, kBudgetPs, &wc);
    check("client: Writes with Immediate and Immediate Data complete", done && wc.status == regmap::cqe_status::success,
          done ? regmap::to_string(wc.status) : "no completion");
}

void probe::client_zero_based(side& s) {
    // Zero-based region Z: the peer addresses it from tagged offset 0 (RFC 5040 §2.2).
    const remote_buffer z = oob_.wait_for("server-z");
    check("client: zero-based region advertised with TO base 0", z.addr == 0);
    const std::vector<std::uint8_t> data = pattern(cfg_.seed, 0x2e40, 8192);
    s.bus.mem_write(s.buf + 16384, data.data(), data.size());
    drv::send_wr w;
    w.wr_id = 10;
    w.local_addr = s.buf + 16384;
    w.length = 8192;
    w.local_stag = s.a.stag;
    w.remote_addr = 100;  // TO 100 of Z
    w.remote_stag = z.stag;
    drv::send_wr r = w;
    r.wr_id = 11;
    r.opcode = regmap::wr_opcode::rdma_read;
    r.local_addr = s.buf + 65536;
    drv::work_completion wc;
    const bool ok = s.ctx.post_send(s.qp, w) == drv::status::ok && s.ctx.post_send(s.qp, r) == drv::status::ok &&
                    poll_for(s, s.cq, [](const drv::work_completion& c) { return c.wr_id == 11; }, kBudgetPs, &wc) &&
                    wc.status == regmap::cqe_status::success;
    check("client: Write and Read at zero-based offsets complete", ok);
    std::vector<std::uint8_t> back(8192);
    s.bus.mem_read(s.buf + 65536, back.data(), back.size());
    check("client: the Read returns what the Write placed", back == data);
}

void probe::client_masked_atomics(side& s, const remote_buffer& a) {
    oob_.wait_for("atomics-ready");
    struct op {
        regmap::wr_opcode opcode;
        std::uint64_t offset, operand, compare, mask0, mask1;
        bool masked;
        std::uint64_t expect_original;
    };
    const op ops[] = {
        // FetchAdd of 1 to each 32-bit lane of 0x00000001_ffffffff: the low lane wraps to 0 without
        // carrying into the high lane (add mask bit 31).
        {regmap::wr_opcode::atomic_fetch_add, 0, 0x0000000100000001ULL, 0, 0x80000000ULL, 0, true, 0x00000001ffffffffULL},
        // CmpSwap comparing the low half only and swapping the high half only: matches, swaps.
        {regmap::wr_opcode::atomic_compare_swap, 8, 0xaaaabbbb00000000ULL, 0x0000000033334444ULL, 0xffffffff00000000ULL,
         0x00000000ffffffffULL, true, 0x1111222233334444ULL},
        // Compares the low half with 0: no match, no swap.
        {regmap::wr_opcode::atomic_compare_swap, 8, 0x12345678ffffffffULL, 0, ~0ULL, 0x00000000ffffffffULL, true,
         0xaaaabbbb33334444ULL},
        {regmap::wr_opcode::atomic_fetch_add, 16, 5, 0, 0, 0, false, 0},
    };
    int i = 0;
    for (const op& o : ops) {
        drv::send_wr w;
        w.wr_id = 50 + static_cast<std::uint64_t>(i);
        w.opcode = o.opcode;
        w.local_addr = s.buf + 8192 + 8 * static_cast<std::uint64_t>(i);
        w.length = 8;
        w.local_stag = s.a.stag;
        w.remote_addr = a.addr + kAtomicOff + o.offset;
        w.remote_stag = a.stag;
        w.operand = o.operand;
        w.compare = o.compare;
        w.masked = o.masked;
        w.add_or_swap_mask = o.mask0;
        w.compare_mask = o.mask1;
        if (s.ctx.post_send(s.qp, w) != drv::status::ok) check("client: atomic posted", false);
        ++i;
    }
    drv::work_completion wc;
    const bool done = poll_for(s, s.cq, [](const drv::work_completion& c) { return c.wr_id == 53; }, kBudgetPs, &wc);
    check("client: masked and plain atomics complete", done && wc.status == regmap::cqe_status::success);
    std::uint8_t got[32];
    s.bus.mem_read(s.buf + 8192, got, sizeof got);
    for (int k = 0; k < 4; ++k) {
        const std::uint64_t v = proto::get_le64(got + 8 * k);
        check("client: atomic " + std::to_string(k) + " returned the original value", v == ops[k].expect_original,
              "0x" + [&] { std::ostringstream o; o << std::hex << v; return o.str(); }());
    }
    oob_.publish("atomics-done", {});
}

void probe::client_response_order(side& s, const remote_buffer& a) {
    // Atomics and Reads interleaved on one QP: the responder answers them in request order (one
    // queue for both, RFC 7306 §5.2.1 rule 5 and §7), and the requester completes them in posting order.
    const regmap::wr_opcode kinds[] = {regmap::wr_opcode::atomic_fetch_add, regmap::wr_opcode::rdma_read,
                                       regmap::wr_opcode::atomic_compare_swap, regmap::wr_opcode::rdma_read,
                                       regmap::wr_opcode::atomic_fetch_add};
    for (std::uint64_t i = 0; i < 5; ++i) {
        drv::send_wr w;
        w.wr_id = 30 + i;
        w.opcode = kinds[i];
        const bool atomic = w.opcode != regmap::wr_opcode::rdma_read;
        w.local_addr = s.buf + 16384 + 16384 * i;
        w.length = atomic ? 8 : 12000;
        w.local_stag = s.a.stag;
        w.remote_addr = atomic ? a.addr + kAtomicOff : a.addr + 8192;
        w.remote_stag = a.stag;
        w.operand = 1;
        w.compare = ~0ULL;  // never equal: the CmpSwap only reads
        if (s.ctx.post_send(s.qp, w) != drv::status::ok) check("client: request posted", false);
    }
    std::string order;
    bool all_ok = true;
    for (int i = 0; i < 5; ++i) {
        drv::work_completion wc;
        if (!poll_for(s, s.cq, [](const drv::work_completion&) { return true; }, kBudgetPs, &wc)) break;
        order += (order.empty() ? "" : ",") + std::to_string(wc.wr_id);
        all_ok = all_ok && wc.status == regmap::cqe_status::success;
    }
    check("client: Reads and atomics complete in posting order", order == "30,31,32,33,34" && all_ok, order);
    std::uint8_t got[8];
    s.bus.mem_read(s.buf + 16384 + 16384 * 2, got, 8);
    check("client: the CmpSwap between the FetchAdds saw the first one's result", proto::get_le64(got) == 1);
}

void probe::client_abort(side& s, const remote_buffer& a) {
    // Large Writes posted, then the QP is moved to Error at once: whatever has not completed is
    // flushed, every work request gets exactly one completion, and the peer sees the stream close.
    for (std::uint64_t i = 0; i < 8; ++i) {
        drv::send_wr w;
        w.wr_id = 60 + i;
        w.local_addr = s.buf;
        w.length = 64 * 1024;
        w.local_stag = s.a.stag;
        w.remote_addr = a.addr + 8192;
        w.remote_stag = a.stag;
        s.ctx.post_send(s.qp, w);
    }
    check("client: modify to Error accepted", s.ctx.modify_qp_to_error(s.qp) == drv::status::ok);
    int done = 0, flushed = 0;
    std::string order;
    for (int i = 0; i < 8; ++i) {
        drv::work_completion wc;
        if (!poll_for(s, s.cq, [](const drv::work_completion& c) { return c.opcode != drv::wc_opcode::qp_error; },
                      kBudgetPs, &wc)) {
            break;
        }
        ++done;
        flushed += wc.status == regmap::cqe_status::flushed;
        order += (order.empty() ? "" : ",") + std::to_string(wc.wr_id);
    }
    check("client: every posted Write completes exactly once, in order", done == 8 &&
          order == "60,61,62,63,64,65,66,67", order);
    check("client: the Writes cut off by the abort are flushed", flushed >= 1, std::to_string(flushed) + " flushed");
    regmap::qp_state state = regmap::qp_state::rts;
    s.ctx.query_qp(s.qp, &state);
    check("client: QP in Error", state == regmap::qp_state::error, regmap::to_string(state));
}

void probe::client_qp_states(side& s, const remote_buffer& a) {
    regmap::qp_state state = regmap::qp_state::idle;
    check("client: query says RTS", s.ctx.query_qp(s.qp, &state) == drv::status::ok && state == regmap::qp_state::rts,
          regmap::to_string(state));
    const std::vector<std::uint8_t> data = pattern(cfg_.seed, 0xc105e, 32768);
    s.bus.mem_write(s.buf + 8192, data.data(), data.size());
    for (int i = 0; i < 4; ++i) {
        drv::send_wr w;
        w.wr_id = 20 + static_cast<std::uint64_t>(i);
        w.local_addr = s.buf + 8192 + 8192 * static_cast<std::uint64_t>(i);
        w.length = 8192;
        w.local_stag = s.a.stag;
        w.remote_addr = a.addr + 8192 + 8192 * static_cast<std::uint64_t>(i);
        w.remote_stag = a.stag;
        s.ctx.post_send(s.qp, w);
    }
    // Graceful: the Writes already posted still complete, then the stream closes.
    check("client: disconnect accepted", s.ctx.disconnect(s.qp) == drv::status::ok);
    int good = 0;
    for (int i = 0; i < 4; ++i) {
        drv::work_completion wc;
        if (poll_for(s, s.cq, [](const drv::work_completion& c) { return c.wr_id >= 20 && c.wr_id < 24; }, kBudgetPs,
                     &wc) &&
            wc.status == regmap::cqe_status::success) {
            ++good;
        }
    }
    check("client: Writes posted before the close complete successfully", good == 4, std::to_string(good) + "/4");
    const std::uint64_t deadline = s.bus.now_ps() + kBudgetPs;
    while (s.bus.now_ps() < deadline && s.ctx.query_qp(s.qp, &state) == drv::status::ok &&
           state != regmap::qp_state::idle) {
        s.bus.spend(1'000'000);
    }
    check("client: QP Idle after the graceful close", state == regmap::qp_state::idle, regmap::to_string(state));
    drv::send_wr w;
    w.local_addr = s.buf;
    w.length = 8;
    w.local_stag = s.a.stag;
    check("client: posting after the close is refused", s.ctx.post_send(s.qp, w) == drv::status::bad_state);
    check("client: CQ in use cannot be destroyed", s.ctx.destroy_cq(s.cq) == drv::status::bad_state);
    drv::queue_pair* qp = s.qp;
    check("client: QP destroyed", s.ctx.destroy_qp(qp) == drv::status::ok);
    check("client: destroyed QP handle is refused", s.ctx.destroy_qp(qp) == drv::status::bad_handle);
    check("client: CQ destroyed", s.ctx.destroy_cq(s.cq) == drv::status::ok);
}

// ---- peer_to_peer, responder_waits: RFC 6581 §9.2, RFC 5044 §7.1.2 rule 4 ----------------------

namespace {
constexpr std::uint64_t kFirstMessageTag = 0x5e1f;
constexpr std::uint32_t kFirstMessageLen = 64;
constexpr std::uint64_t kFirstMessageWrId = 900, kFirstRecvWrId = 500;
}  // namespace

void probe::server_sends_first(side& s) {
    // An application with no client or server role: the accepting side has the first word.
    const std::vector<std::uint8_t> msg = pattern(cfg_.seed, kFirstMessageTag, kFirstMessageLen);
    s.bus.mem_write(s.buf + kRecvOff, msg.data(), msg.size());
    drv::send_wr w;
    w.wr_id = kFirstMessageWrId;
    w.opcode = regmap::wr_opcode::send;
    w.local_addr = s.buf + kRecvOff;
    w.length = kFirstMessageLen;
    w.local_stag = s.a.stag;
    const std::uint64_t posted = s.bus.now_ps();
    const auto any = [](const drv::work_completion&) { return true; };
    drv::work_completion wc;
    if (cfg_.probe == "held_close") {
        // The client stays silent; the server closes gracefully with its Send still held (RFC 5044
        // §7.1.2 rule 4): the Send can never go out, so it completes flushed, and the QP is Idle.
        check("server: Send posted", s.ctx.post_send(s.qp, w) == drv::status::ok);
        check("server: graceful disconnect while held", s.ctx.disconnect(s.qp) == drv::status::ok);
        const bool got = poll_for(s, s.cq, any, kBudgetPs, &wc);
        check("server: the held Send completes, flushed", got && wc.wr_id == kFirstMessageWrId &&
                                                              wc.status == regmap::cqe_status::flushed,
              got ? "wr_id " + std::to_string(wc.wr_id) + ", " + regmap::to_string(wc.status) : "no completion");
        regmap::qp_state state = regmap::qp_state::rts;
        s.ctx.query_qp(s.qp, &state);
        check("server: QP Idle after the close", state == regmap::qp_state::idle, regmap::to_string(state));
        oob_.publish("server-closed", {});
        oob_.wait_for("client-done");
        return;
    }
    // The first completion on the server's CQ is its Send's (nothing from the RTR before it).
    const bool ok = s.ctx.post_send(s.qp, w) == drv::status::ok && poll_for(s, s.cq, any, kBudgetPs, &wc) &&
                    wc.wr_id == kFirstMessageWrId && wc.status == regmap::cqe_status::success;
    check("server: its Send, posted right after accept, completed", ok,
          ok ? "after " + std::to_string((s.bus.now_ps() - posted) / 1000) + " ns"
             : "first completion wr_id " + std::to_string(wc.wr_id) + ", " + regmap::to_string(wc.status));
    oob_.wait_for("client-done");
    const bool more = poll_for(s, s.cq, any, 50'000'000, &wc);  // 50 us
    check("server: no other completion", !more, more ? "wr_id " + std::to_string(wc.wr_id) : "");
}

void probe::client_server_sends_first(side& s, std::uint32_t server_ip, const remote_buffer& a) {
    const bool p2p = cfg_.probe == "peer_to_peer";
    drv::recv_wr r;
    r.wr_id = kFirstRecvWrId;
    r.addr = s.buf + 256 * 1024;
    r.length = 256;
    r.stag = s.a.stag;
    check("client: receive posted before connecting", s.ctx.post_recv(s.qp, r) == drv::status::ok);
    drv::read_limits limits;
    limits.peer_to_peer = p2p;
    if (s.ctx.connect(s.qp, server_ip, a.port, 40000, limits) != drv::status::ok) {
        fail(p2p ? "client connect (peer-to-peer) failed: it needs rnic.mpa.revision = 2" : "client connect failed");
        return;
    }
    result_.setup_ok = true;
    auto first_message_ok = [&](const drv::work_completion& wc) {
        std::vector<std::uint8_t> got(kFirstMessageLen);
        s.bus.mem_read(r.addr, got.data(), got.size());
        return wc.wr_id == kFirstRecvWrId && wc.status == regmap::cqe_status::success &&
               wc.byte_len == kFirstMessageLen && got == pattern(cfg_.seed, kFirstMessageTag, kFirstMessageLen);
    };
    const auto any = [](const drv::work_completion&) { return true; };
    drv::work_completion wc;
    if (p2p) {
        // The RTR went out before anything of ours: the server's Send arrives with us silent, and
        // the RTR itself completes nothing on either side.
        const bool got = poll_for(s, s.cq, any, kBudgetPs, &wc);
        check("client: the server's first message arrives though the client sent nothing", got && first_message_ok(wc),
              got ? "completion wr_id " + std::to_string(wc.wr_id) + ", " + regmap::to_string(wc.status) : "none");
        const bool more = poll_for(s, s.cq, any, 100'000'000, &wc);  // 100 us
        check("client: the RTR made no completion", !more, more ? "wr_id " + std::to_string(wc.wr_id) : "");
        return;
    }
    if (cfg_.probe == "held_close") {
        // The server closes before we send anything: we see the stream end, never its message.
        oob_.wait_for("server-closed");
        bool message = false;
        const bool got = poll_for(s, s.cq,
                                  [&](const drv::work_completion& c) {
                                      message |= c.wr_id == kFirstRecvWrId && c.status == regmap::cqe_status::success;
                                      return c.opcode == drv::wc_opcode::qp_error;
                                  },
                                  kBudgetPs, &wc);
        check("client: the stream's end arrives as a QP error completion without a Terminate",
              got && !wc.terminate.valid, got ? term_text(wc.terminate) : "none");
        check("client: the server's held message never arrived", !message);
        return;
    }
    // Client-server: the server's Send waits in its NIC until our first FPDU (RFC 5044 §7.1.2 rule 4).
    const bool early = poll_for(s, s.cq, any, 200'000'000, &wc);  // 200 us
    check("client: nothing arrives while the client has sent nothing", !early,
          early ? "completion wr_id " + std::to_string(wc.wr_id) : "");
    const drv::send_wr w = baseline_write(s, a);
    check("client: first RDMA Write posted", s.ctx.post_send(s.qp, w) == drv::status::ok);
    bool wrote = false, received = false, message_ok = false;
    while ((!wrote || !received) && poll_for(s, s.cq, any, kBudgetPs, &wc)) {
        if (wc.wr_id == 1) wrote = wc.status == regmap::cqe_status::success;
        if (wc.wr_id == kFirstRecvWrId) {
            received = true;
            message_ok = first_message_ok(wc);
        }
    }
    check("client: first RDMA Write completes", wrote);
    check("client: the server's message arrives once the client's first FPDU went out", received && message_ok);
}

// ---- reject: RFC 5044 §7.1.5 ------------------------------------------------------------------

std::vector<std::uint8_t> probe::reject_reason() const {
    const std::string text = "rnic-vp: no room on this port";
    std::vector<std::uint8_t> v(text.begin(), text.end());
    const std::vector<std::uint8_t> tail = pattern(cfg_.seed, 0x4e7, 16);  // binary bytes too
    v.insert(v.end(), tail.begin(), tail.end());
    return v;
}

void probe::server_reject(side& s) {
    // Misuse first (nothing reaches the device), then the real refusal.
    const std::vector<std::uint8_t> too_long(regmap::kMaxRejectPrivateData + 1, 0x55);
    check("server: reject with too much private data is refused",
          s.ctx.reject(cfg_.port, too_long) == drv::status::invalid_argument);
    check("server: reject on port 0 is refused", s.ctx.reject(0, {}) == drv::status::invalid_argument);
    check("server: the peer's MPA Request rejected with private data",
          s.ctx.reject(cfg_.port, reject_reason()) == drv::status::ok);
    drv::context::device_stats st{};
    check("server: query_stats counts one refusal and no connection",
          s.ctx.query_stats(&st) == drv::status::ok &&
              st[static_cast<std::size_t>(regmap::device_counter::connections_rejected)] == 1 &&
              st[static_cast<std::size_t>(regmap::device_counter::connections_established)] == 0);
    regmap::qp_state state = regmap::qp_state::rts;
    check("server: its QP untouched by the refusal (idle)",
          s.ctx.query_qp(s.qp, &state) == drv::status::ok && state == regmap::qp_state::idle,
          regmap::to_string(state));
}

void probe::client_reject(side& s, std::uint32_t server_ip, const remote_buffer& a) {
    std::vector<std::uint8_t> why;
    const drv::status st = s.ctx.connect(s.qp, server_ip, a.port, 40000, {}, &why);
    check("client: connect refused by the MPA Reply (R = 1)", st == drv::status::connection_refused,
          drv::to_string(st));
    const std::vector<std::uint8_t> want = reject_reason();
    check("client: the Reject's private data reached the driver", why == want,
          std::to_string(why.size()) + " bytes, " + std::to_string(want.size()) + " sent");
    drv::send_wr w;
    w.local_addr = s.buf;
    w.length = 8;
    w.local_stag = s.a.stag;
    w.remote_addr = a.addr;
    w.remote_stag = a.stag;
    check("client: nothing can be posted on the refused QP", s.ctx.post_send(s.qp, w) == drv::status::bad_state);
    regmap::qp_state state = regmap::qp_state::rts;
    check("client: the refused QP is idle in the device",
          s.ctx.query_qp(s.qp, &state) == drv::status::ok && state == regmap::qp_state::idle,
          regmap::to_string(state));
    check("client: the refused QP can be destroyed", s.ctx.destroy_qp(s.qp) == drv::status::ok);
    // A second attempt is answered the same way by nobody: no reject is waiting any more, so the
    // connection waits in the server's backlog until the negotiation times out (not run here).
}

// ---- verbs_misuse: every bad call returns an error and logs it ---------------------------------

void probe::client_verbs_misuse(side& s, const remote_buffer& a) {
    using drv::status;
    // Each misuse must return `want` and write at least one error line (with the simulated time,
    // core/log.h) to the log, when the log takes drv errors (--log off writes nothing); the e2e
    // test reads the lines themselves.
    const bool logging = log::enabled(log::category::drv, log::level::error);
    auto misuse = [&](const std::string& what, status want, const std::function<status()>& call) {
        const std::uint64_t before = log::errors_logged();
        const status got = call();
        const std::uint64_t lines = log::errors_logged() - before;
        check("misuse: " + what, got == want && (lines >= 1 || !logging),
              std::string("returned ") + drv::to_string(got) + " (want " + drv::to_string(want) + "), " +
                  std::to_string(lines) + " error lines");
    };
    drv::context& c = s.ctx;
    {
        // The device's counters after one signaled RDMA Write (query_stats).
        using dc = regmap::device_counter;
        drv::context::device_stats st{};
        const bool ok = c.query_stats(&st) == status::ok;
        auto at = [&](dc k) { return st[static_cast<std::size_t>(k)]; };
        std::ostringstream o;
        for (std::size_t i = 0; i < st.size(); ++i) o << regmap::kDeviceCounters[i].name << "=" << st[i] << " ";
        check("verbs: query_stats after one RDMA Write",
              ok && at(dc::wqes) == 1 && at(dc::cqes) == 1 && at(dc::terminates_sent) == 0 &&
                  at(dc::terminates_received) == 0 && at(dc::placed_bytes) == 0 && at(dc::connections_established) == 1 &&
                  at(dc::connections_failed) == 0 && at(dc::connections_rejected) == 0 && at(dc::commands) == 4,
              o.str());
        misuse("query_stats with null output", status::invalid_argument, [&] { return c.query_stats(nullptr); });
    }
    // Calls on a context that was never opened (a second one on the same bus: opening it would
    // reset the device, so it stays closed).
    drv::context closed(s.bus);
    std::uint32_t pd = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
    misuse("alloc_pd before open", status::bad_state, [&] { return closed.alloc_pd(&pd); });
    misuse("reg_mr before open", status::bad_state, [&] { return closed.reg_mr(1, s.buf, 4096, 1, &mr); });
    misuse("create_cq before open", status::bad_state, [&] { return closed.create_cq(16, &cq); });
    misuse("create_qp before open", status::bad_state, [&] { return closed.create_qp(1, s.cq, s.cq, 4, 4, &qp); });
    misuse("reject before open", status::bad_state, [&] { return closed.reject(18000, {}); });
    misuse("listen before open", status::bad_state, [&] { return closed.listen(18000); });
    misuse("listen on port 0", status::invalid_argument, [&] { return c.listen(0); });
    misuse("query_stats before open", status::bad_state, [&] {
        drv::context::device_stats st{};
        return closed.query_stats(&st);
    });
    misuse("post_send with another context's QP", status::bad_handle, [&] { return closed.post_send(s.qp, {}); });
    misuse("poll_cq with another context's CQ", status::bad_handle, [&] {
        std::vector<drv::work_completion> out;
        int n = 0;
        return closed.poll_cq(s.cq, 1, &out, &n);
    });
    misuse("open twice", status::bad_state, [&] { return c.open({}); });
    misuse("alloc_pd with null output", status::invalid_argument, [&] { return c.alloc_pd(nullptr); });
    // Memory regions.
    misuse("reg_mr with protection domain 0", status::bad_handle, [&] { return c.reg_mr(0, s.buf, 4096, 1, &mr); });
    misuse("reg_mr with an unallocated protection domain", status::bad_handle,
           [&] { return c.reg_mr(999, s.buf, 4096, 1, &mr); });
    misuse("reg_mr of zero bytes", status::invalid_argument, [&] { return c.reg_mr(s.pd, s.buf, 0, 1, &mr); });
    misuse("reg_mr with unknown access bits", status::invalid_argument,
           [&] { return c.reg_mr(s.pd, s.buf, 4096, 0x100, &mr); });
    misuse("reg_mr wrapping the address space", status::out_of_bounds,
           [&] { return c.reg_mr(s.pd, ~0ULL - 100, 4096, 1, &mr); });
    drv::memory_region unknown;
    unknown.stag = 0xdead00;
    misuse("dereg_mr of an unknown STag", status::bad_handle, [&] { return c.dereg_mr(unknown); });
    // Queues.
    misuse("create_cq of 3 entries", status::invalid_argument, [&] { return c.create_cq(3, &cq); });
    misuse("create_cq above the limit", status::invalid_argument, [&] { return c.create_cq(1u << 21, &cq); });
    misuse("create_cq with null output", status::invalid_argument, [&] { return c.create_cq(16, nullptr); });
    drv::completion_queue foreign_cq;
    misuse("create_qp with a foreign CQ", status::bad_handle,
           [&] { return c.create_qp(s.pd, &foreign_cq, s.cq, 4, 4, &qp); });
    misuse("create_qp with a null CQ", status::bad_handle, [&] { return c.create_qp(s.pd, nullptr, s.cq, 4, 4, &qp); });
    misuse("create_qp with a bad protection domain", status::bad_handle,
           [&] { return c.create_qp(999, s.cq, s.cq, 4, 4, &qp); });
    misuse("create_qp of depth 3", status::invalid_argument, [&] { return c.create_qp(s.pd, s.cq, s.cq, 3, 4, &qp); });
    misuse("create_qp above the depth limit", status::invalid_argument,
           [&] { return c.create_qp(s.pd, s.cq, s.cq, 4, 1u << 17, &qp); });
    // A second, never connected QP for the state checks.
    drv::queue_pair* fresh = nullptr;
    check("verbs: a second QP for the state checks", c.create_qp(s.pd, s.cq, s.cq, 4, 4, &fresh) == status::ok);
    drv::queue_pair foreign_qp;
    drv::send_wr w;
    w.wr_id = 77;
    w.local_addr = s.buf;
    w.length = 8;
    w.local_stag = s.a.stag;
    w.remote_addr = a.addr;
    w.remote_stag = a.stag;
    misuse("post_send with a null QP", status::bad_handle, [&] { return c.post_send(nullptr, w); });
    misuse("post_send with a foreign QP", status::bad_handle, [&] { return c.post_send(&foreign_qp, w); });
    if (fresh != nullptr) {
        misuse("post_send to a QP not in RTS", status::bad_state, [&] { return c.post_send(fresh, w); });
        misuse("disconnect of a QP not in RTS", status::bad_state, [&] { return c.disconnect(fresh); });
        misuse("connect to remote port 0", status::invalid_argument,
               [&] { return c.connect(fresh, a.ipv4, 0, 40001); });
        misuse("connect with ORD above 16383", status::invalid_argument, [&] {
            drv::read_limits l;
            l.ord = 0x4000;
            return c.connect(fresh, a.ipv4, a.port, 40001, l);
        });
        misuse("accept on port 0", status::invalid_argument, [&] { return c.accept(fresh, 0); });
    }
    misuse("connect of a QP already in RTS", status::bad_state, [&] { return c.connect(s.qp, a.ipv4, a.port, 40002); });
    misuse("accept on a QP already in RTS", status::bad_state, [&] { return c.accept(s.qp, 18600); });
    // Work requests the QP or the device cannot do.
    auto with = [&](auto change) {
        drv::send_wr x = w;
        change(x);
        return c.post_send(s.qp, x);
    };
    misuse("post_send with an unknown opcode", status::bad_opcode,
           [&] { return with([](drv::send_wr& x) { x.opcode = static_cast<regmap::wr_opcode>(0x42); }); });
    misuse("post_send of a masks slot as a work request", status::bad_opcode,
           [&] { return with([](drv::send_wr& x) { x.opcode = regmap::wr_opcode::atomic_masks; }); });
    misuse("post_send with masks on an RDMA Write", status::invalid_argument,
           [&] { return with([](drv::send_wr& x) { x.masked = true; }); });
    misuse("post_send of an atomic of 4 bytes", status::invalid_argument, [&] {
        return with([](drv::send_wr& x) {
            x.opcode = regmap::wr_opcode::atomic_fetch_add;
            x.length = 4;
        });
    });
    misuse("post_send of a misaligned atomic", status::invalid_argument, [&] {
        return with([](drv::send_wr& x) {
            x.opcode = regmap::wr_opcode::atomic_compare_swap;
            x.remote_addr += 4;
        });
    });
    misuse("post_send of inline data above the limit", status::invalid_argument, [&] {
        return with([](drv::send_wr& x) {
            x.inline_data = true;
            x.length = regmap::kMaxInlineData + 1;
        });
    });
    misuse("post_send of an inline RDMA Read", status::invalid_argument, [&] {
        return with([](drv::send_wr& x) {
            x.inline_data = true;
            x.opcode = regmap::wr_opcode::rdma_read;
        });
    });
    misuse("post_send from an unknown local STag", status::bad_handle,
           [&] { return with([](drv::send_wr& x) { x.local_stag = 0xbad00; }); });
    misuse("post_send beyond the end of its region", status::out_of_bounds, [&] {
        return with([&](drv::send_wr& x) {
            x.local_addr = s.buf + kClientBuffer - 4;
            x.length = 64;
        });
    });
    misuse("post_send before the start of its region", status::out_of_bounds,
           [&] { return with([&](drv::send_wr& x) { x.local_addr = s.buf - 8; }); });
    misuse("post_send of a huge length", status::out_of_bounds,
           [&] { return with([](drv::send_wr& x) { x.length = 0xffffffffu; }); });
    misuse("local invalidate of an unknown STag", status::bad_handle, [&] {
        return with([](drv::send_wr& x) {
            x.opcode = regmap::wr_opcode::local_invalidate;
            x.invalidate_stag = 0xbad00;
        });
    });
    drv::memory_region ro;
    check("verbs: a region without local write", c.reg_mr(s.pd, s.buf, 4096, acc::remote_read, &ro) == status::ok);
    misuse("RDMA Read into a region without local write", status::invalid_argument, [&] {
        return with([&](drv::send_wr& x) {
            x.opcode = regmap::wr_opcode::rdma_read;
            x.local_stag = ro.stag;
        });
    });
    drv::recv_wr r;
    r.addr = s.buf + 8192;
    r.length = 256;
    r.stag = s.a.stag;
    misuse("post_recv with a null QP", status::bad_handle, [&] { return c.post_recv(nullptr, r); });
    misuse("post_recv into a region without local write", status::invalid_argument, [&] {
        drv::recv_wr x = r;
        x.stag = ro.stag;
        x.addr = s.buf;
        return c.post_recv(s.qp, x);
    });
    misuse("post_recv beyond its region", status::out_of_bounds, [&] {
        drv::recv_wr x = r;
        x.addr = s.buf + kClientBuffer - 100;
        return c.post_recv(s.qp, x);
    });
    misuse("post_recv from an unknown STag", status::bad_handle, [&] {
        drv::recv_wr x = r;
        x.stag = 0xbad00;
        return c.post_recv(s.qp, x);
    });
    // Full rings: the client's receive queue has 4 entries; the send queue 64, and unsignaled
    // work requests retire only with a signaled one, so 64 of them fill it until one completes.
    bool posted = true;
    for (int i = 0; i < 4; ++i) posted = posted && c.post_recv(s.qp, r) == status::ok;
    check("verbs: four receives fill the receive queue", posted);
    misuse("post_recv to a full receive queue", status::ring_full, [&] { return c.post_recv(s.qp, r); });
    posted = true;
    for (int i = 0; i < 64; ++i) posted = posted && with([](drv::send_wr& x) { x.signaled = false; }) == status::ok;
    check("verbs: 64 unsignaled RDMA Writes fill the send queue", posted);
    misuse("post_send to a full send queue", status::ring_full, [&] { return c.post_send(s.qp, w); });
    // Destroys while in use, polling arguments.
    misuse("destroy_qp of a QP in RTS", status::bad_state, [&] { return c.destroy_qp(s.qp); });
    misuse("destroy_cq of a CQ in use", status::bad_state, [&] { return c.destroy_cq(s.cq); });
    misuse("poll_cq of at most 0", status::invalid_argument, [&] {
        std::vector<drv::work_completion> out;
        int n = 0;
        return c.poll_cq(s.cq, 0, &out, &n);
    });
    misuse("poll_cq with null output", status::invalid_argument, [&] {
        int n = 0;
        return c.poll_cq(s.cq, 4, nullptr, &n);
    });
    misuse("query_qp with null output", status::invalid_argument, [&] { return c.query_qp(s.qp, nullptr); });
    misuse("wait_cq with a foreign CQ", status::bad_handle, [&] { return c.wait_cq(&foreign_cq, 1000); });
    // Error state: no more work, receives included; then destroy, and destroy again.
    check("verbs: modify_qp_to_error", c.modify_qp_to_error(s.qp) == status::ok);
    misuse("post_send to a QP in error", status::bad_state, [&] { return c.post_send(s.qp, w); });
    misuse("post_recv to a QP in error", status::bad_state, [&] { return c.post_recv(s.qp, r); });
    misuse("disconnect of a QP in error", status::bad_state, [&] { return c.disconnect(s.qp); });
    check("verbs: the QP in error is destroyed", c.destroy_qp(s.qp) == status::ok);
    misuse("destroy_qp twice", status::bad_handle, [&] { return c.destroy_qp(s.qp); });
    misuse("query_qp of a destroyed QP", status::bad_handle, [&] {
        regmap::qp_state st;
        return c.query_qp(s.qp, &st);
    });
    if (fresh != nullptr) check("verbs: the idle QP is destroyed", c.destroy_qp(fresh) == status::ok);
    check("verbs: the CQ, now unused, is destroyed", c.destroy_cq(s.cq) == status::ok);
    misuse("destroy_cq twice", status::bad_handle, [&] { return c.destroy_cq(s.cq); });
    misuse("poll_cq of a destroyed CQ", status::bad_handle, [&] {
        std::vector<drv::work_completion> out;
        int n = 0;
        return c.poll_cq(s.cq, 4, &out, &n);
    });
    check("verbs: dereg_mr of a real region", c.dereg_mr(ro) == status::ok);
    misuse("dereg_mr twice", status::bad_handle, [&] { return c.dereg_mr(ro); });
}

}  // namespace rnic::platform
