// The connection-setup probes (workload.type = probe): peer_to_peer and responder_waits (the
// server has the first message: RFC 6581 §9.2, RFC 5044 §7.1.2 rule 4), reject (RFC 5044
// §7.1.5), unlisten (a listener closed) and send_regions (NIC buffer memory without a send region
// for one more connection); the catalogue and the dispatch are in probe.cpp.
#include <algorithm>
#include <cstring>
#include <deque>
#include <sstream>
#include <tuple>

#include "core/log.h"
#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"

#include "workloads/probe_side.h"
#include "workloads/write_bw.h"

namespace rnic::platform {

namespace ddp = proto::ddp;
namespace acc = regmap::mr_access;
using namespace probe_detail;

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
        check("server: the held Send completes, flushed",
              got && wc.wr_id == kFirstMessageWrId && wc.status == regmap::cqe_status::flushed,
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
        const bool got = poll_for(
            s, s.cq,
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
          s.ctx.query_qp(s.qp, &state) == drv::status::ok && state == regmap::qp_state::idle, regmap::to_string(state));
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
          s.ctx.query_qp(s.qp, &state) == drv::status::ok && state == regmap::qp_state::idle, regmap::to_string(state));
    check("client: the refused QP can be destroyed", s.ctx.destroy_qp(s.qp) == drv::status::ok);
    // A second attempt is answered the same way by nobody: no reject is waiting any more, so the
    // connection waits in the server's backlog until the negotiation times out (not run here).
}

// ---- unlisten: a listener closed with connections in every stage ------------------------------

void probe::server_unlisten(side& s) {
    // The first peer is accepted; the second waits in the backlog, its MPA Request unanswered, when
    // the port closes: it is reset. The accepted connection carries on.
    check("server: the first peer accepted", s.ctx.accept(s.qp, cfg_.port) == drv::status::ok);
    oob_.wait_for("client-second-connecting");
    s.bus.spend(kBacklogWaitPs);
    std::uint32_t reset = 0;
    const drv::status st = s.ctx.unlisten(cfg_.port, &reset);
    check("server: unlisten resets the one backlog peer", st == drv::status::ok && reset == 1,
          std::string(drv::to_string(st)) + ", " + std::to_string(reset) + " peers reset");
    oob_.publish("server-unlistened", {});
    oob_.wait_for("client-done");
    check("server: unlisten of a port that no longer listens is not_listening",
          s.ctx.unlisten(cfg_.port) == drv::status::not_listening);
    const std::vector<std::uint8_t> want = pattern(cfg_.seed, 0xba5e, kBaseline);
    std::vector<std::uint8_t> got(want.size());
    s.bus.mem_read(s.buf, got.data(), got.size());
    check("server: the accepted connection's Write after the unlisten landed", got == want);
}

void probe::client_unlisten(side& s, std::uint32_t server_ip, const remote_buffer& a) {
    if (s.ctx.connect(s.qp, server_ip, a.port, 40000) != drv::status::ok) {
        fail("client connect failed");
        return;
    }
    result_.setup_ok = true;
    drv::queue_pair *waiting = nullptr, *late = nullptr;
    if (s.ctx.create_qp(s.pd, s.cq, s.cq, 4, 4, &waiting) != drv::status::ok ||
        s.ctx.create_qp(s.pd, s.cq, s.cq, 4, 4, &late) != drv::status::ok) {
        fail("client: two more QPs could not be created");
        return;
    }
    oob_.publish("client-second-connecting", {});
    std::uint64_t t0 = s.bus.now_ps();
    drv::status st = s.ctx.connect(waiting, server_ip, a.port, 40001);
    check("client: a backlog peer is refused when the server stops listening",
          st == drv::status::connection_refused && s.bus.now_ps() - t0 >= kBacklogWaitPs,
          std::string(drv::to_string(st)) + " after " + std::to_string((s.bus.now_ps() - t0) / 1'000'000) + " us");
    oob_.wait_for("server-unlistened");
    // A SYN to the closed port draws a reset: refused at once, not after SYN retransmissions
    // (rnic.tcp.rto_initial, 1 ms) or the MPA timeout.
    t0 = s.bus.now_ps();
    st = s.ctx.connect(late, server_ip, a.port, 40002);
    const std::uint64_t took = s.bus.now_ps() - t0;
    check("client: a connect after the unlisten is refused by a reset",
          st == drv::status::connection_refused && took < 500'000'000,
          std::string(drv::to_string(st)) + " after " + std::to_string(took / 1'000'000) + " us");
    check("client: the accepted connection still carries an RDMA Write", baseline_write_completes(s, a, 1));
}

// ---- send_regions: NIC buffer memory without a send region for one more connection -------------
// With rnic.buffer.send_regions = reserved every connection carves rnic.tcp.send_buffer out of its
// NIC's buffer memory when it opens (issue 19). The client opens connections until the NIC that holds
// fewer regions (hosts.N.buffer_capacity sets one apart) has none left for the next:
//   - the client's own NIC: its connect completes at once with no_buffer_memory, nothing on the wire;
//   - the server's NIC: the client's SYN is answered with a reset (connect: connection_refused, at
//     once, not after SYN retransmissions or the MPA timeout) and the server's waiting accept
//     completes with no_buffer_memory.
// Then one connection closes and is destroyed on both ends; once the active closer's TIME-WAIT
// (2MSL, 1 ms in the model) has passed, its region serves the next connection, and the first
// connection still carries an RDMA Write.

namespace {
constexpr std::uint64_t kMostSendRegions = 16;              // the probe opens at most this many connections
constexpr std::uint64_t kTimeWaitPassedPs = 2'000'000'000;  // 2 ms: past the model's 1 ms TIME-WAIT
constexpr std::uint64_t kRefusedAtOncePs = 500'000'000;     // 500 us: well inside the SYN's 1 ms RTO
constexpr std::uint16_t kFirstExtraPort = 41000;

// Connections the probe opens beside the first before the refused one.
std::uint64_t extra_connections(const probe_config& c) {
    return std::min(c.client_send_regions, c.server_send_regions) - 1;
}

// Waits (in simulated time) until `qp` has left RTS and Closing, as a graceful close ends.
regmap::qp_state wait_closed(drv::context& ctx, drv::host_bus& bus, drv::queue_pair* qp) {
    regmap::qp_state state = regmap::qp_state::rts;
    const std::uint64_t deadline = bus.now_ps() + kBudgetPs;
    while (bus.now_ps() < deadline && ctx.query_qp(qp, &state) == drv::status::ok &&
           (state == regmap::qp_state::rts || state == regmap::qp_state::closing)) {
        bus.spend(1'000'000);
    }
    return state;
}
}  // namespace

std::string probe::send_regions_unusable() const {
    if (!cfg_.reserved_send_regions) {
        return "needs rnic.buffer.send_regions = reserved (shared regions are address space, never exhausted)";
    }
    const std::uint64_t fewest = std::min(cfg_.client_send_regions, cfg_.server_send_regions);
    if (fewest < 2 || fewest > kMostSendRegions) {
        return "needs a NIC whose buffer memory holds 2 to " + std::to_string(kMostSendRegions) +
               " send regions (rnic.tcp.send_buffer each; set hosts.0.buffer_capacity or hosts.1.buffer_capacity); "
               "they hold " +
               std::to_string(cfg_.client_send_regions) + " and " + std::to_string(cfg_.server_send_regions);
    }
    // A NIC whose regions fill its buffer memory to the byte has nothing left to receive into: with the
    // window clamped to the free reassembly memory its last connection could not receive its MPA
    // Request, and the probe would measure that stall instead of the refusal. Only the NIC that runs
    // out fills up (the other holds as many connections).
    for (const auto& [who, regions, room] :
         {std::tuple{"client", cfg_.client_send_regions, cfg_.client_receive_room},
          std::tuple{"server", cfg_.server_send_regions, cfg_.server_receive_room}}) {
        if (regions == fewest && room < cfg_.mss) {
            return std::string("needs buffer memory that leaves at least one segment (") + std::to_string(cfg_.mss) +
                   " bytes) beside the send regions; the " + who + "'s leaves " + std::to_string(room) +
                   " (e.g. hosts.1.buffer_capacity = 700KiB)";
        }
    }
    return "";
}

void probe::server_send_regions(side& s) {
    const bool server_runs_out = cfg_.server_send_regions < cfg_.client_send_regions;
    std::vector<drv::queue_pair*> qps;
    for (std::uint64_t i = 0; i < extra_connections(cfg_); ++i) {
        drv::queue_pair* qp = nullptr;
        const bool ok = s.ctx.create_qp(s.pd, s.cq, s.cq, 4, 4, &qp) == drv::status::ok &&
                        s.ctx.accept(qp, cfg_.port) == drv::status::ok;
        check("server: connection " + std::to_string(i + 2) + " accepted", ok);
        if (!ok) return;
        qps.push_back(qp);
    }
    drv::queue_pair* next = nullptr;
    if (s.ctx.create_qp(s.pd, s.cq, s.cq, 4, 4, &next) != drv::status::ok) {
        fail("server: a QP for the refused connection could not be created");
        return;
    }
    if (server_runs_out) {
        oob_.publish("server-accepting", {});
        const drv::status st = s.ctx.accept(next, cfg_.port);
        check("server: the accept of a peer its buffer memory has no send region for fails with no_buffer_memory",
              st == drv::status::no_buffer_memory, std::string("returned ") + drv::to_string(st));
    }
    // The client closes the last connection it opened: this end's QP follows and is destroyed, which
    // gives its connection (and send region) back once the TCP close is done.
    oob_.wait_for("client-closed-one");
    const regmap::qp_state state = wait_closed(s.ctx, s.bus, qps.back());
    check("server: the closed connection's QP left RTS", state != regmap::qp_state::rts, regmap::to_string(state));
    check("server: the closed connection's QP destroyed", s.ctx.destroy_qp(qps.back()) == drv::status::ok);
    qps.pop_back();
    // An accept that failed leaves its QP used, as a failed connect does: the next takes a fresh one.
    drv::queue_pair* again = next;
    if (server_runs_out && s.ctx.create_qp(s.pd, s.cq, s.cq, 4, 4, &again) != drv::status::ok) {
        fail("server: a QP for the second accept could not be created");
        return;
    }
    oob_.publish("server-accepting-again", {});
    check("server: the next peer is accepted once a send region is free",
          s.ctx.accept(again, cfg_.port) == drv::status::ok);
    oob_.wait_for("client-done");
}

void probe::client_send_regions(side& s, std::uint32_t server_ip, const remote_buffer& a) {
    if (s.ctx.connect(s.qp, server_ip, a.port, 40000) != drv::status::ok) {
        fail("client connect failed");
        return;
    }
    result_.setup_ok = true;
    const bool client_runs_out = cfg_.client_send_regions <= cfg_.server_send_regions;
    std::vector<drv::queue_pair*> qps;
    for (std::uint64_t i = 0; i < extra_connections(cfg_); ++i) {
        drv::queue_pair* qp = nullptr;
        const bool ok =
            s.ctx.create_qp(s.pd, s.cq, s.cq, 4, 4, &qp) == drv::status::ok &&
            s.ctx.connect(qp, server_ip, a.port, static_cast<std::uint16_t>(kFirstExtraPort + i)) == drv::status::ok;
        check("client: connection " + std::to_string(i + 2) + " of " +
                  std::to_string(std::min(cfg_.client_send_regions, cfg_.server_send_regions)) + " opened",
              ok);
        if (!ok) return;
        qps.push_back(qp);
    }
    drv::queue_pair* next = nullptr;
    if (s.ctx.create_qp(s.pd, s.cq, s.cq, 4, 4, &next) != drv::status::ok) {
        fail("client: a QP for the refused connection could not be created");
        return;
    }
    const auto port = static_cast<std::uint16_t>(kFirstExtraPort + qps.size());
    if (!client_runs_out) oob_.wait_for("server-accepting");
    std::uint64_t t0 = s.bus.now_ps();
    drv::status st = s.ctx.connect(next, server_ip, a.port, port);
    std::uint64_t took = s.bus.now_ps() - t0;
    if (client_runs_out) {
        check("client: a connect its own buffer memory has no send region for fails with no_buffer_memory",
              st == drv::status::no_buffer_memory,
              std::string("returned ") + drv::to_string(st) + " after " + std::to_string(took / 1'000'000) + " us");
    } else {
        check("client: a connect the server has no send region for is refused by a reset, at once",
              st == drv::status::connection_refused && took < kRefusedAtOncePs,
              std::string("returned ") + drv::to_string(st) + " after " + std::to_string(took / 1'000'000) + " us");
    }
    // Recovery: close the last connection opened, destroy its QP, let TIME-WAIT pass, connect again.
    check("client: the last connection opened closes", s.ctx.disconnect(qps.back()) == drv::status::ok);
    const regmap::qp_state state = wait_closed(s.ctx, s.bus, qps.back());
    check("client: its QP is Idle after the close", state == regmap::qp_state::idle, regmap::to_string(state));
    check("client: its QP destroyed", s.ctx.destroy_qp(qps.back()) == drv::status::ok);
    qps.pop_back();
    oob_.publish("client-closed-one", {});
    oob_.wait_for("server-accepting-again");
    s.bus.spend(kTimeWaitPassedPs);
    drv::queue_pair* retry = nullptr;  // a fresh QP: a failed connect leaves `next` used
    if (s.ctx.create_qp(s.pd, s.cq, s.cq, 4, 4, &retry) != drv::status::ok) {
        fail("client: a QP for the second try could not be created");
        return;
    }
    t0 = s.bus.now_ps();
    st = s.ctx.connect(retry, server_ip, a.port, static_cast<std::uint16_t>(port + 1));
    took = s.bus.now_ps() - t0;
    check("client: a connect succeeds once a send region is free again", st == drv::status::ok,
          std::string("returned ") + drv::to_string(st) + " after " + std::to_string(took / 1'000'000) + " us");
    check("client: the first connection still carries an RDMA Write", baseline_write_completes(s, a, 1));
}

}  // namespace rnic::platform
