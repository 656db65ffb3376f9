// The probe workload (workload.type = probe, docs/protocol-probes.md): the catalogue of probes and
// what each expects, the helpers every probe uses, and the server and client programs that set up
// the regions and run the chosen probe. The probes themselves: probe_rdmap.cpp (RDMAP/DDP error and
// semantics probes), probe_connection.cpp, probe_verbs_misuse.cpp, probe_page_list.cpp,
// probe_reset.cpp.
#include "workloads/probe.h"

#include <cstring>
#include <deque>
#include <sstream>

#include "core/log.h"
#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"
#include "workloads/probe_side.h"
#include "workloads/write_bw.h"

namespace rnic::platform {

namespace ddp = proto::ddp;
namespace acc = regmap::mr_access;
using namespace probe_detail;

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
        {"resource_limits", false, 0, 0, 0,
         "Send queue, STag/QP/CQ tables and host DMA memory filled: refused by name, then recovered"},
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
        {"vi_errors", false, 0, 0, 0,
         "VI/TCP (seed 003 §3.3): a bad Memory Handle and a too long Send, per reliability level"},
        {"vi_descriptor", false, 0, 0, 0, "VI/TCP (seed 003 §3.3): a too long Send alone, per reliability level"},
        {"vi_crc", false, 0, 0, 0,
         "VI/TCP (seed 003 §3.6 option 2): CRC errors per reliability level (with link corruption)"},
        {"unlisten", false, 0, 0, 0,
         "unlisten: the accepted connection stays, a backlog peer is reset, a later SYN is refused (RST)"},
        {"cq_overrun", false, 0, 0, 0,
         "a CQ too small for its QP's completions: that QP to Error (RDMAP Local Catastrophic Terminate), one "
         "cq_error asynchronous event, the other QP carries on"},
        {"send_regions", false, 0, 0, 0,
         "NIC buffer memory without a send region for one more connection: refused by name (no_buffer_memory), "
         "recovered once one is freed"},
        // The client builds the segments (probe_raw_frames.cpp; rnic.rdma.raw_ulpdu_wqes, and for
        // vi_ce_* rnic.vitcp.raw_connect_requests).
        {"vi_ce_version", false, 0, 0, 0, "VI/TCP (seed 003 §3.2): a ConnectRequest of version 2 is refused, reason 5"},
        {"vi_ce_bad_option", false, 0, 0, 0,
         "VI/TCP (seed 003 §3.3): a ConnectRequest with a malformed option is refused, reason 6"},
        {"vi_ce_unknown_option", false, 0, 0, 0,
         "VI/TCP (seed 003 §3.3): an unknown option is ignored and the connection accepted"},
        {"vi_transmit_error", false, 0, 0, 0,
         "VI/TCP (seed 003 §3.2, §2.2.2.2.5): a Send with the Transmit Error bit, per reliability level"},
        {"vi_read_window", false, 0, 0, 0,
         "VI/TCP (seed 003 §2.2.2.2.6): one RDMA Read Request beyond the negotiated window closes the connection"},
        {"rdmatcp_connection_id", true, 2, 0, 0x03,
         "RDMA/TCP (seed 000 §3.4): a segment with another Connection ID is a framing error (LLP, MPA, code 3)"},
        {"rdmatcp_unknown_type", true, 0, 2, 0x06,
         "RDMA/TCP (seed 000 §3.4): a Send segment carrying an RDMAP opcode no message has (RFC 5040 §7.2)"},
    };
    return all;
}

const probe_expectation* find_probe(const std::string& name) {
    for (const probe_expectation& p : probe_catalogue()) {
        if (name == p.name) return &p;
    }
    return nullptr;
}

probe::probe(const probe_config& cfg, oob_channel& oob, std::function<void()> on_done)
    : cfg_(cfg), expect_(find_probe(cfg.probe)), oob_(oob), on_done_(std::move(on_done)) {}

void probe::check(const std::string& what, bool ok, const std::string& detail) {
    record_check(result_, what, ok, detail);
}

void probe::fail(const std::string& what) {
    record_failure(result_, what);
}

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

bool probe::baseline_write_completes(side& s, const remote_buffer& a, std::uint64_t wr_id) {
    drv::send_wr w = baseline_write(s, a);
    w.wr_id = wr_id;
    drv::work_completion wc;
    return s.ctx.post_send(s.qp, w) == drv::status::ok &&
           poll_for(
               s, s.cq, [wr_id](const drv::work_completion& c) { return c.wr_id == wr_id; }, kBudgetPs, &wc) &&
           wc.status == regmap::cqe_status::success;
}

// ---- server (host b) ---------------------------------------------------------------------------

void probe::server(drv::host_bus& bus, const drv::station_config& station) {
    if (cfg_.probe == "page_list" || cfg_.probe == "device_reset") {
        if (cfg_.probe == "page_list")
            server_page_list(bus, station);
        else
            server_device_reset(bus, station);
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
    for (std::uint32_t i = 0; i < vi_receives(); ++i) {
        if (s.ctx.post_recv(s.qp, vi_receive(s, i)) != drv::status::ok) fail("server post_recv failed");
    }
    receives += raw_frames_receives();
    for (std::uint32_t i = 0; i < receives; ++i) {
        drv::recv_wr r;
        r.wr_id = 1000 + i;
        r.addr = s.buf + kRecvOff + 256 * i;
        r.length = p == "message_too_long" ? 64 : 256;
        r.stag = s.a.stag;
        if (s.ctx.post_recv(s.qp, r) != drv::status::ok) fail("server post_recv failed");
    }
    if (p == "listen_backlog" || p == "mpa_timeout" || p == "unlisten") {
        check("server: listen", s.ctx.listen(cfg_.port) == drv::status::ok);
    }
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
    if (p == "unlisten") {
        server_unlisten(s);
        oob_.publish("server-done", {});
        return;
    }
    if (p == "reject") {
        server_reject(s);
        oob_.publish("server-done", {});
        return;
    }
    if (raw_frames_probe()) {
        server_raw_frames(s, before);
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
    if (p == "write_imm")
        server_write_imm(s);
    else if (p == "vi_errors" || p == "vi_descriptor" || p == "vi_crc")
        server_vi(s, before);
    else if (p == "masked_atomics")
        server_masked_atomics(s);
    else if (p == "qp_states")
        server_qp_states(s);
    else if (p == "send_regions")
        server_send_regions(s);
    else if (p == "cq_overrun")
        server_cq_overrun(s);
    else if (p == "response_order" || p == "verbs_misuse" || p == "resource_limits" || p == "listen_backlog")
        oob_.wait_for("client-done");
    else if (p == "abort")
        server_qp_states(s);
    else if (p == "peer_to_peer" || p == "responder_waits" || p == "held_close")
        server_sends_first(s);
    else if (p == "zero_based") {
        oob_.wait_for("client-done");
        const std::vector<std::uint8_t> want = pattern(cfg_.seed, 0x2e40, 8192);
        std::vector<std::uint8_t> got(want.size());
        bus.mem_read(s.buf + kOffZ + 100, got.data(), got.size());
        check("server: the Write landed at zero-based TO 100 of its region", got == want);
    } else
        server_error_probe(s);
    oob_.publish("server-done", {});
}

// ---- client (host a) ---------------------------------------------------------------------------

void probe::client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    if (cfg_.probe == "page_list" || cfg_.probe == "device_reset") {
        if (cfg_.probe == "page_list")
            client_page_list(bus, station, server_ip);
        else
            client_device_reset(bus, station, server_ip);
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
    if (cfg_.probe.rfind("vi_", 0) == 0 && cfg_.framing != "vitcp") {
        fail("probe '" + cfg_.probe + "' needs rnic.framing = vitcp (it is '" + cfg_.framing + "')");
        on_done_();
        return;
    }
    if (cfg_.probe.rfind("rdmatcp_", 0) == 0 && cfg_.framing != "rdmatcp") {
        fail("probe '" + cfg_.probe + "' needs rnic.framing = rdmatcp (it is '" + cfg_.framing + "')");
        on_done_();
        return;
    }
    if (cfg_.probe == "vi_crc" && (!cfg_.vi_crc || !cfg_.client_link_corrupts_past_checksum)) {
        // Without both nothing is corrupted, or nothing catches it: every Send would succeed and
        // the probe would report the level's error behaviour as broken.
        fail(
            "probe 'vi_crc' needs rnic.vitcp.crc = true and link corruption the TCP checksum does "
            "not catch (link.a_to_b.corrupt > 0, link.a_to_b.corrupt_fixes_checksum = true)");
        on_done_();
        return;
    }
    if (cfg_.probe == "send_regions" && !send_regions_unusable().empty()) {
        fail("probe 'send_regions' " + send_regions_unusable());
        on_done_();
        return;
    }
    if (raw_frames_probe() && !raw_frames_enabled()) {
        fail("probe '" + cfg_.probe + "' sends bytes no correct NIC sends: it needs " +
             (cfg_.probe.rfind("vi_ce_", 0) == 0 ? "rnic.vitcp.raw_connect_requests" : "rnic.rdma.raw_ulpdu_wqes") +
             " = true");
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
        check("client: it took the MPA timeout",
              took >= cfg_.mpa_timeout_ps && took < cfg_.mpa_timeout_ps + 1'000'000'000,
              std::to_string(took / 1'000'000) + " us, timeout " + std::to_string(cfg_.mpa_timeout_ps / 1'000'000) +
                  " us");
        result_.setup_ok = true;
        bus.spend(100'000'000);  // 100 us: the connection's close goes out and is answered
        oob_.publish("client-done", {});
        oob_.wait_for("server-done");
        result_.finished = result_.error.empty();
        on_done_();
        return;
    }
    if (cfg_.probe == "send_regions") {
        client_send_regions(s, server_ip, a);
        oob_.publish("client-done", {});
        oob_.wait_for("server-done");
        result_.finished = result_.error.empty();
        on_done_();
        return;
    }
    if (cfg_.probe == "unlisten") {
        client_unlisten(s, server_ip, a);
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
    if (raw_frames_probe()) {
        client_raw_frames(s, server_ip, a);
        oob_.publish("client-done", {});
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
    const bool ok = baseline_write_completes(s, a, 1);
    check("client: first RDMA Write completes", ok);
    oob_.publish("baseline-done", {});
    if (ok) {
        const std::string& p = cfg_.probe;
        if (p == "write_imm")
            client_write_imm(s, a);
        else if (p == "vi_errors" || p == "vi_descriptor" || p == "vi_crc")
            client_vi(s, a);
        else if (p == "zero_based")
            client_zero_based(s);
        else if (p == "masked_atomics")
            client_masked_atomics(s, a);
        else if (p == "qp_states")
            client_qp_states(s, a);
        else if (p == "response_order")
            client_response_order(s, a);
        else if (p == "abort")
            client_abort(s, a);
        else if (p == "verbs_misuse")
            client_verbs_misuse(s, a);
        else if (p == "resource_limits")
            client_resource_limits(s, a);
        else if (p == "cq_overrun")
            client_cq_overrun(s, server_ip, a);
        else if (p == "listen_backlog") {
        }  // the connection and the first Write were the probe
        else
            client_error_probe(s, a);
    }
    oob_.publish("client-done", {});
    oob_.wait_for("server-done");
    vi_cross_check();
    result_.finished = result_.error.empty();
    on_done_();
}

}  // namespace rnic::platform
