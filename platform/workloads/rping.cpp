#include "workloads/rping.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <vector>

#include "core/log.h"
#include "proto/bytes.h"

#define RPING_LOG(lvl, bus, expr) RNIC_LOG_AT(lvl, app, (bus).now_ps(), (bus).host_name() + ".rping", expr)

namespace rnic::platform {

namespace acc = regmap::mr_access;

void rping_encode_info(const rping_info& info, std::uint8_t out[16]) {
    proto::put_be64(out, info.buf);
    proto::put_be32(out + 8, info.rkey);
    proto::put_be32(out + 12, info.size);
}

rping_info rping_decode_info(const std::uint8_t in[16]) {
    rping_info info;
    info.buf = proto::get_be64(in);
    info.rkey = proto::get_be32(in + 8);
    info.size = proto::get_be32(in + 12);
    return info;
}

std::string rping_ping_data(std::uint32_t ping, std::uint32_t size) {
    // rping's client: "rdma-ping-%d: " (snprintf into size bytes), then letters from `start`, which
    // begins at 'A' (65) and moves on by one per ping, each byte the next letter up to 'z' (122)
    // and back to 'A'; the last byte is NUL.
    std::string data(size, '\0');
    if (size == 0) return data;
    char head[32];
    const int n = std::snprintf(head, sizeof head, "rdma-ping-%d: ", static_cast<int>(ping));
    const std::size_t cc = std::min<std::size_t>(static_cast<std::size_t>(n), size - 1);
    std::memcpy(data.data(), head, cc);
    unsigned char c = static_cast<unsigned char>(65 + ping % 58);
    for (std::size_t i = cc; i < size; ++i) {
        data[i] = static_cast<char>(c);
        if (++c > 122) c = 65;
    }
    data[size - 1] = '\0';
    return data;
}

namespace {
constexpr std::uint32_t kInfo = 16;                     // sizeof(struct rping_rdma_info)
constexpr std::uint32_t kMinSize = 26;                  // rping's RPING_MIN_BUFSIZE
constexpr std::uint64_t kWakeCapPs = 1'000'000'000ULL;  // 1 ms: longest sleep between two CQ polls
constexpr std::uint64_t kRecvId = 1, kSendId = 2, kRdmaId = 3;

std::string printable(const std::vector<std::uint8_t>& v, std::size_t max) {
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < max && v[i] != 0; ++i) s += static_cast<char>(v[i]);
    return s;
}
}  // namespace

struct rping::side {
    explicit side(drv::host_bus& host, bool server) : bus(host), ctx(host), is_server(server) {}
    drv::host_bus& bus;
    drv::context ctx;
    bool is_server;
    std::uint32_t pd = 0;
    std::uint64_t base = 0;
    drv::memory_region recv_mr, send_mr, rdma_mr, start_mr;
    drv::completion_queue* cq = nullptr;
    drv::queue_pair* qp = nullptr;
    rping_info peer;  // the last advertisement received
    workload_row row;
    bool failed = false;

    bool post_recv() {
        drv::recv_wr wr;
        wr.wr_id = kRecvId;
        wr.addr = recv_mr.addr;
        wr.length = kInfo;
        wr.stag = recv_mr.stag;
        return ctx.post_recv(qp, wr) == drv::status::ok;
    }
    bool post_send_info() {
        drv::send_wr wr;
        wr.wr_id = kSendId;
        wr.opcode = regmap::wr_opcode::send;
        wr.local_addr = send_mr.addr;
        wr.length = kInfo;
        wr.local_stag = send_mr.stag;
        return ctx.post_send(qp, wr) == drv::status::ok;
    }
    bool advertise(const drv::memory_region& mr, std::uint32_t size) {
        // rping_format_send: the buffer's address (our tagged offset), its rkey and the ping size.
        std::uint8_t b[kInfo];
        rping_encode_info({mr.to_base, mr.stag, size}, b);
        bus.mem_write(send_mr.addr, b, sizeof b);
        return post_send_info();
    }
    bool post_rdma(regmap::wr_opcode op, std::uint32_t length) {
        drv::send_wr wr;
        wr.wr_id = kRdmaId;
        wr.opcode = op;
        wr.local_addr = rdma_mr.addr;
        wr.length = length;
        wr.local_stag = rdma_mr.stag;
        wr.remote_addr = peer.buf;
        wr.remote_stag = peer.rkey;
        return ctx.post_send(qp, wr) == drv::status::ok;
    }
};

rping::rping(const rping_config& cfg, oob_channel& oob, std::function<void()> on_done)
    : cfg_(cfg), oob_(oob), on_done_(std::move(on_done)) {}

void rping::fail(side& s, const std::string& what) {
    s.failed = true;
    RPING_LOG(error, s.bus, what);
    if (result_.error.empty()) result_.error = std::string(s.is_server ? "server: " : "client: ") + what;
}

void rping::finish_side() {
    // Both programs report before the run ends when both hosts are simulated; host a alone otherwise.
    if (++sides_done_ < (cfg_.real_peer ? 1 : 2)) return;
    bool ok = result_.error.empty() && !result_.rows.empty();
    for (const workload_row& r : result_.rows) ok = ok && r.integrity.ok && r.errors == 0;
    result_.finished = ok;
    on_done_();
}

bool rping::setup(side& s, const drv::station_config& station, const char* who) {
    if (cfg_.size < kMinSize) {
        fail(s, "size " + std::to_string(cfg_.size) + " is below rping's minimum of " + std::to_string(kMinSize));
        return false;
    }
    // Accept and connect wait for a real peer (a guest boots in seconds): the step timeout, not the
    // driver's default command timeout, bounds them.
    drv::station_config st = station;
    st.command_timeout_ps = std::max(st.command_timeout_ps, cfg_.timeout_ps);
    const std::uint64_t slot = (static_cast<std::uint64_t>(cfg_.size) + 63) / 64 * 64;
    const std::uint64_t total = 64 + 2 * slot;
    const bool ok = s.ctx.open(st) == drv::status::ok && s.ctx.alloc_pd(&s.pd) == drv::status::ok &&
                    s.ctx.alloc_buffer(total, &s.base) == drv::status::ok &&
                    s.ctx.reg_mr(s.pd, s.base, kInfo, acc::local_write, &s.recv_mr) == drv::status::ok &&
                    s.ctx.reg_mr(s.pd, s.base + 32, kInfo, 0, &s.send_mr) == drv::status::ok &&
                    s.ctx.reg_mr(s.pd, s.base + 64, cfg_.size, acc::local_write | acc::remote_read | acc::remote_write,
                                 &s.rdma_mr) == drv::status::ok &&
                    (s.is_server || s.ctx.reg_mr(s.pd, s.base + 64 + slot, cfg_.size,
                                                 acc::local_write | acc::remote_read | acc::remote_write,
                                                 &s.start_mr) == drv::status::ok) &&
                    s.ctx.create_cq(64, &s.cq) == drv::status::ok &&
                    s.ctx.create_qp(s.pd, s.cq, s.cq, 16, 2, &s.qp) == drv::status::ok;
    if (!ok) {
        fail(s, std::string(who) + " set-up failed (see the log)");
        return false;
    }
    // The send buffer starts zeroed (rping's control block is memset); the server never fills it.
    const std::vector<std::uint8_t> zero(kInfo, 0);
    s.bus.mem_write(s.send_mr.addr, zero.data(), zero.size());
    s.row.op = s.is_server ? "rping server" : "rping client";
    s.row.size = cfg_.size;
    // rping posts its one receive before connecting or accepting.
    if (!s.post_recv()) {
        fail(s, "post_recv failed");
        return false;
    }
    return true;
}

rping::got rping::next(side& s, drv::wc_opcode want, const char* step) {
    const std::uint64_t deadline = s.bus.now_ps() + cfg_.timeout_ps;
    std::vector<drv::work_completion> wcs;
    for (;;) {
        wcs.clear();
        int n = 0;
        s.ctx.poll_cq(s.cq, 1, &wcs, &n);
        if (n == 0) {
            const std::uint64_t now = s.bus.now_ps();
            if (now >= deadline) {
                regmap::qp_state st = regmap::qp_state::rts;
                s.ctx.query_qp(s.qp, &st);
                if (st != regmap::qp_state::rts) return got::disconnected;
                fail(s, std::string("no completion while waiting for ") + step);
                return got::failed;
            }
            if (s.ctx.wait_cq(s.cq, std::min(deadline - now, kWakeCapPs)) == drv::status::timeout) {
                // A quiet millisecond: has the stream gone (the peer left without a flush to show)?
                regmap::qp_state st = regmap::qp_state::rts;
                if (s.ctx.query_qp(s.qp, &st) == drv::status::ok && st != regmap::qp_state::rts) {
                    return got::disconnected;
                }
            }
            continue;
        }
        const drv::work_completion& wc = wcs[0];
        if (wc.opcode == drv::wc_opcode::qp_error || wc.status == regmap::cqe_status::flushed) {
            RPING_LOG(info, s.bus,
                      "the connection ended (" << regmap::to_string(wc.status) << ") while waiting for " << step);
            return got::disconnected;
        }
        if (wc.status != regmap::cqe_status::success) {
            fail(s, std::string("cq completion failed status ") + regmap::to_string(wc.status) + " while waiting for " +
                        step);
            return got::failed;
        }
        if (wc.opcode == drv::wc_opcode::send) continue;
        if (wc.opcode == drv::wc_opcode::recv) {
            if (wc.byte_len != kInfo) {
                fail(s, "Received bogus data, size " + std::to_string(wc.byte_len));
                return got::failed;
            }
            std::uint8_t b[kInfo];
            s.bus.mem_read(s.recv_mr.addr, b, sizeof b);
            s.peer = rping_decode_info(b);
            if (!s.post_recv()) {
                fail(s, "post recv error");
                return got::failed;
            }
        } else if (wc.opcode != drv::wc_opcode::rdma_read && wc.opcode != drv::wc_opcode::rdma_write) {
            fail(s, "unknown completion (opcode " + std::to_string(static_cast<int>(wc.opcode)) + ")");
            return got::failed;
        }
        if (wc.opcode != want) {
            fail(s, std::string("unexpected completion while waiting for ") + step);
            return got::failed;
        }
        return got::ok;
    }
}

void rping::client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    if (cfg_.real_peer && cfg_.server_role) {
        server(bus, station);
        return;
    }
    side s(bus, false);
    if (!setup(s, station, "client")) {
        finish_side();
        return;
    }
    if (!cfg_.real_peer) oob_.wait_for("rping-server");
    std::uint64_t t0 = bus.now_ps();
    // rping_init_conn_param: responder_resources = initiator_depth = 1, no private data (unless
    // workload.rping.private_data asks for some, for a passive side that checks it).
    const std::vector<std::uint8_t> pdata(cfg_.private_data.begin(), cfg_.private_data.end());
    drv::status st = s.ctx.connect(s.qp, server_ip, cfg_.port, 40000, drv::read_limits{1, 1}, nullptr, &pdata);
    for (std::uint32_t attempt = 2;
         attempt <= cfg_.connect_attempts && (st == drv::status::connection_refused || st == drv::status::timeout);
         ++attempt) {
        RPING_LOG(info, bus,
                  "connect attempt " << attempt - 1 << " failed (" << drv::to_string(st) << "); again in "
                                     << cfg_.retry_interval_ps / 1e9 << " ms on a fresh QP");
        for (const std::uint64_t until = bus.now_ps() + cfg_.retry_interval_ps; bus.now_ps() < until;) {
            s.ctx.wait_cq(s.cq, std::min(until - bus.now_ps(), kWakeCapPs));
        }
        if (s.ctx.destroy_qp(s.qp) != drv::status::ok ||
            s.ctx.create_qp(s.pd, s.cq, s.cq, 16, 2, &s.qp) != drv::status::ok || !s.post_recv()) {
            fail(s, "could not make a fresh QP for another connect attempt");
            finish_side();
            return;
        }
        t0 = bus.now_ps();
        st = s.ctx.connect(s.qp, server_ip, cfg_.port, static_cast<std::uint16_t>(40000 + attempt - 1),
                           drv::read_limits{1, 1}, nullptr, &pdata);
    }
    if (st != drv::status::ok) {
        char ip[16];
        std::snprintf(ip, sizeof ip, "%u.%u.%u.%u", server_ip >> 24, server_ip >> 16 & 255, server_ip >> 8 & 255,
                      server_ip & 255);
        fail(s, std::string("connect to ") + ip + ":" + std::to_string(cfg_.port) + " failed: " + drv::to_string(st));
        regmap::qp_state qs = regmap::qp_state::idle;
        s.ctx.query_qp(s.qp, &qs);
        RPING_LOG(info, bus, "after the failed connect the QP is " << regmap::to_string(qs));
        if (cfg_.real_peer) {
            // Let the TCP close (the firmware's FIN, the peer's answer) finish before the run ends.
            for (const std::uint64_t until = bus.now_ps() + 200'000'000'000ULL; bus.now_ps() < until;) {
                s.ctx.wait_cq(s.cq, std::min(until - bus.now_ps(), kWakeCapPs));
            }
        }
        finish_side();
        return;
    }
    result_.connect_ps = bus.now_ps() - t0;
    result_.setup_ok = true;
    RPING_LOG(info, bus, "connected in " << std::fixed << std::setprecision(3) << result_.connect_ps / 1e6 << " us");

    // Linux siw (6.1, siw_accept) sends its MPA Reply before it hands the socket to the QP's
    // receive path; an FPDU arriving in between wakes nobody and sits unread. rping never hits
    // that (its first Send follows a user-space wake-up); a fast client can (start_delay).
    for (const std::uint64_t until = bus.now_ps() + cfg_.start_delay_ps; bus.now_ps() < until;) {
        s.ctx.wait_cq(s.cq, std::min(until - bus.now_ps(), kWakeCapPs));
    }
    const std::uint64_t start = bus.now_ps();
    std::vector<std::uint8_t> got_back(cfg_.size);
    for (std::uint32_t ping = 0; ping < cfg_.count && !s.failed; ++ping) {
        const std::string data = rping_ping_data(ping, cfg_.size);
        bus.mem_write(s.start_mr.addr, data.data(), data.size());
        const std::uint64_t t = bus.now_ps();
        // Advertise the start buffer (the server RDMA Reads it), wait for the go-ahead; advertise
        // the rdma buffer (the server RDMA Writes into it), wait for the second go-ahead.
        if (!s.advertise(s.start_mr, cfg_.size)) {
            fail(s, "post send error");
            break;
        }
        got g = next(s, drv::wc_opcode::recv, "the go-ahead after the RDMA Read (RDMA_WRITE_ADV)");
        if (g != got::ok) {
            if (g == got::disconnected) fail(s, "the server disconnected at ping " + std::to_string(ping));
            break;
        }
        if (!s.advertise(s.rdma_mr, cfg_.size)) {
            fail(s, "post send error");
            break;
        }
        g = next(s, drv::wc_opcode::recv, "the go-ahead after the RDMA Write (RDMA_WRITE_COMPLETE)");
        if (g != got::ok) {
            if (g == got::disconnected) fail(s, "the server disconnected at ping " + std::to_string(ping));
            break;
        }
        s.row.latencies_ps.push_back(bus.now_ps() - t);
        ++s.row.iterations;
        s.row.bytes += 2ULL * cfg_.size;
        bus.mem_read(s.rdma_mr.addr, got_back.data(), got_back.size());
        if (cfg_.validate) {
            std::uint64_t bad = 0, first = 0;
            for (std::size_t i = 0; i < got_back.size(); ++i) {
                if (got_back[i] != static_cast<std::uint8_t>(data[i]) && bad++ == 0) first = i;
            }
            s.row.integrity.bytes_checked += cfg_.size;
            s.row.integrity.bytes_mismatched += bad;
            if (bad != 0) {
                s.row.integrity.ok = false;
                s.row.integrity.first_mismatch = first;
                s.row.integrity.detail = "ping " + std::to_string(ping) + ": " + std::to_string(bad) +
                                         " bytes differ, the first at offset " + std::to_string(first);
                fail(s, "data mismatch! (" + s.row.integrity.detail + ")");
                break;
            }
        }
        RPING_LOG(info, bus, "ping data: " << printable(got_back, 64));
    }
    s.row.elapsed_ps = bus.now_ps() - start;
    if (!s.failed && s.row.iterations != cfg_.count) fail(s, "only " + std::to_string(s.row.iterations) + " pings");
    result_.rows.push_back(s.row);
    if (s.qp->state == drv::qp_state::rts && s.ctx.disconnect(s.qp) == drv::status::ok) {
        // rping_disconnect. The run must not end before the close is on the wire: the peer's rping
        // leaves its loop only when it sees the disconnect.
        const std::uint64_t deadline = bus.now_ps() + std::min<std::uint64_t>(cfg_.timeout_ps, 10'000'000'000'000ULL);
        regmap::qp_state qs = regmap::qp_state::closing;
        while (s.ctx.query_qp(s.qp, &qs) == drv::status::ok && qs == regmap::qp_state::closing &&
               bus.now_ps() < deadline) {
            s.ctx.wait_cq(s.cq, kWakeCapPs);
        }
        RPING_LOG(info, bus, "disconnected: the QP is " << regmap::to_string(qs));
    }
    finish_side();
}

void rping::server(drv::host_bus& bus, const drv::station_config& station) {
    side s(bus, true);
    if (!setup(s, station, "server")) {
        finish_side();
        return;
    }
    if (!cfg_.real_peer) oob_.publish("rping-server", {station.ipv4, cfg_.port, 0, 0, 0});
    const std::uint64_t t0 = bus.now_ps();
    const drv::status st = s.ctx.accept(s.qp, cfg_.port, drv::read_limits{1, 1});
    if (st != drv::status::ok) {
        fail(s, "accept on port " + std::to_string(cfg_.port) + " failed: " + drv::to_string(st));
        finish_side();
        return;
    }
    if (cfg_.real_peer) {
        // Host a is the server: its set-up time is the accept's (mostly waiting for the peer).
        result_.connect_ps = bus.now_ps() - t0;
        result_.setup_ok = true;
    }
    RPING_LOG(info, bus, "accepted a connection on port " << cfg_.port);

    std::vector<std::uint8_t> data(cfg_.size);
    std::uint64_t start = 0;
    bool clean_end = false;
    for (std::uint32_t ping = 0; !s.failed; ++ping) {
        // Wait for the client's start buffer (RDMA_READ_ADV); a disconnect here ends rping normally.
        got g = next(s, drv::wc_opcode::recv, "the client's start buffer (RDMA_READ_ADV)");
        if (g == got::disconnected) {
            clean_end = true;
            break;
        }
        if (g != got::ok) break;
        const std::uint64_t t = bus.now_ps();
        if (ping == 0) start = t;
        if (s.peer.size > cfg_.size) {
            fail(s, "the client's size " + std::to_string(s.peer.size) + " is larger than ours (" +
                        std::to_string(cfg_.size) + ")");
            break;
        }
        if (!s.post_rdma(regmap::wr_opcode::rdma_read, s.peer.size)) {
            fail(s, "post send error (RDMA Read)");
            break;
        }
        if (next(s, drv::wc_opcode::rdma_read, "the RDMA Read (RDMA_READ_COMPLETE)") != got::ok) {
            if (!s.failed) fail(s, "the client disconnected during ping " + std::to_string(ping));
            break;
        }
        bus.mem_read(s.rdma_mr.addr, data.data(), data.size());
        if (cfg_.validate) {
            const std::string want = rping_ping_data(ping, s.peer.size);
            std::uint64_t bad = 0, first = 0;
            for (std::size_t i = 0; i < want.size(); ++i) {
                if (data[i] != static_cast<std::uint8_t>(want[i]) && bad++ == 0) first = i;
            }
            s.row.integrity.bytes_checked += want.size();
            s.row.integrity.bytes_mismatched += bad;
            if (bad != 0) {
                s.row.integrity.ok = false;
                s.row.integrity.first_mismatch = first;
                s.row.integrity.detail =
                    "ping " + std::to_string(ping) + ": the RDMA Read brought " + std::to_string(bad) +
                    " bytes that are not rping's pattern, the first at offset " + std::to_string(first);
                fail(s, s.row.integrity.detail);
                break;
            }
        }
        RPING_LOG(info, bus, "server ping data: " << printable(data, 64));
        if (!s.post_send_info()) {  // the go-ahead
            fail(s, "post send error (go-ahead)");
            break;
        }
        if (next(s, drv::wc_opcode::recv, "the client's rdma buffer (RDMA_WRITE_ADV)") != got::ok) {
            if (!s.failed) fail(s, "the client disconnected during ping " + std::to_string(ping));
            break;
        }
        // RDMA Write the echo: strlen(rdma_buf) + 1 bytes.
        const auto nul = std::find(data.begin(), data.end(), std::uint8_t{0});
        const std::uint32_t len = static_cast<std::uint32_t>(
            std::min<std::size_t>(static_cast<std::size_t>(nul - data.begin()) + 1, data.size()));
        if (len > s.peer.size) {
            fail(s, "the client's rdma buffer (" + std::to_string(s.peer.size) + " bytes) is smaller than the echo (" +
                        std::to_string(len) + ")");
            break;
        }
        if (!s.post_rdma(regmap::wr_opcode::rdma_write, len)) {
            fail(s, "post send error (RDMA Write)");
            break;
        }
        if (next(s, drv::wc_opcode::rdma_write, "the RDMA Write (RDMA_WRITE_COMPLETE)") != got::ok) {
            if (!s.failed) fail(s, "the client disconnected during ping " + std::to_string(ping));
            break;
        }
        if (!s.post_send_info()) {
            fail(s, "post send error (go-ahead)");
            break;
        }
        s.row.latencies_ps.push_back(bus.now_ps() - t);
        ++s.row.iterations;
        s.row.bytes += static_cast<std::uint64_t>(s.peer.size) + len;
    }
    s.row.elapsed_ps = start == 0 ? 0 : bus.now_ps() - start;
    if (!s.failed && s.row.iterations != cfg_.count) {
        fail(s, "served " + std::to_string(s.row.iterations) + " pings, expected " + std::to_string(cfg_.count));
    } else if (!s.failed) {
        RPING_LOG(info, bus,
                  "served " << s.row.iterations << " pings; the client " << (clean_end ? "disconnected" : "is gone"));
    }
    result_.rows.push_back(s.row);
    finish_side();
}

}  // namespace rnic::platform
