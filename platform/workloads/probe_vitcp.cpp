// VI/TCP reliability-level probes (rnic.framing = vitcp, seed 003; docs/framings.md "Reliability
// levels and errors", proto/seeds/vitcp_errors.h). The same conversation at each level
// (rnic.vitcp.reliability), judged by what that level requires of every descriptor:
//  - vi_errors: after the baseline Write, the client posts an RDMA Write to a Memory Handle the
//    server never registered (protection error), a Send too long for the server's first receive
//    descriptor (descriptor error), a good RDMA Write and a Send that fits the second descriptor.
//  - vi_descriptor: the same without the bad Write (the descriptor error alone).
//  - vi_crc: 40 Sends into 40 receive descriptors while the link flips bits past the TCP checksum
//    (link.a_to_b.corrupt with corrupt_fixes_checksum), so the VI CRC (§3.6) finds them.
// Unreliable Delivery: the connection survives; the descriptor of a message in error completes in
// error (length error, transport error), the others succeed with their bytes, a bad Write places
// nothing. Reliable Delivery and Reliable Reception: the first error breaks the connection (§3.6
// option 2); both VIs go to Error and every descriptor not yet complete completes flushed, except
// at Reliable Reception the sender's descriptor of the message in error: it completes with the
// status of the VI Error Type the peer's Message ACK reported (§3.2; proto/seeds/vitcp_ack.h): a
// bad Memory Handle remote_access_error, a descriptor error remote_invalid_request, a CRC error
// transport_error (§3.6 option 2: "Unrecoverable Transport Error") on exactly the Send whose
// receive the server did not complete.
#include <string>
#include <vector>

#include "workloads/probe_side.h"

namespace rnic::platform {

using namespace probe_detail;

namespace {
constexpr std::uint64_t kBadWriteOff = 8192;    // where the Write with the bad handle aimed (in A)
constexpr std::uint64_t kGoodWriteOff = 16384;  // the good Write after it
constexpr std::uint32_t kWriteLen = 512;
constexpr std::uint32_t kLongSend = 512, kShortRecv = 64;  // the descriptor error
constexpr std::uint32_t kFitSend = 128, kFitRecv = 256;
constexpr std::uint32_t kCrcSends = 40, kCrcLen = 1024;

bool reliable(const std::string& level) {
    return level != "unreliable";
}

// Waits until the QP reaches `want` (or `budget_ps` passes); its last state in `got`.
bool wait_state(drv::host_bus& bus, drv::context& ctx, drv::queue_pair* qp, regmap::qp_state want,
                std::uint64_t budget_ps, regmap::qp_state* got) {
    const std::uint64_t deadline = bus.now_ps() + budget_ps;
    for (;;) {
        if (ctx.query_qp(qp, got) == drv::status::ok && *got == want) return true;
        if (bus.now_ps() >= deadline) return false;
        bus.spend(1'000'000);
    }
}
}  // namespace

std::uint32_t probe::vi_receives() const {
    if (cfg_.probe == "vi_errors" || cfg_.probe == "vi_descriptor") return 2;
    if (cfg_.probe == "vi_crc") return kCrcSends;
    return 0;
}

drv::recv_wr probe::vi_receive(side& s, std::uint32_t i) const {
    drv::recv_wr r;
    r.wr_id = 1000 + i;
    r.stag = s.a.stag;
    if (cfg_.probe != "vi_crc") {
        r.addr = s.buf + kRecvOff + 256 * i;
        r.length = i == 0 ? kShortRecv : kFitRecv;
    } else {
        r.addr = s.buf + kRecvOff + std::uint64_t{kCrcLen} * i;
        r.length = kCrcLen;
    }
    return r;
}

void probe::client_vi(side& s, const remote_buffer& a) {
    const std::string& level = cfg_.vi_level;
    std::vector<drv::send_wr> wrs;
    if (cfg_.probe != "vi_crc") {
        drv::send_wr w;
        w.opcode = regmap::wr_opcode::rdma_write;
        w.length = kWriteLen;
        w.local_stag = s.a.stag;
        w.wr_id = 2;  // a Memory Handle the server never registered
        w.local_addr = s.buf + 8192;
        w.remote_stag = a.stag ^ 0x00ABCD00u;
        w.remote_addr = a.addr + kBadWriteOff;
        if (cfg_.probe == "vi_errors") wrs.push_back(w);  // vi_descriptor: the descriptor error alone
        w.wr_id = 3;                                      // too long for the server's first receive descriptor
        w.opcode = regmap::wr_opcode::send;
        w.length = kLongSend;
        w.local_addr = s.buf + 16384;
        wrs.push_back(w);
        w.wr_id = 4;  // a good Write
        w.opcode = regmap::wr_opcode::rdma_write;
        w.length = kWriteLen;
        w.local_addr = s.buf + 24576;
        w.remote_stag = a.stag;
        w.remote_addr = a.addr + kGoodWriteOff;
        wrs.push_back(w);
        w.wr_id = 5;  // a Send that fits the second descriptor
        w.opcode = regmap::wr_opcode::send;
        w.length = kFitSend;
        w.local_addr = s.buf + 32768;
        wrs.push_back(w);
    } else {
        for (std::uint32_t i = 0; i < kCrcSends; ++i) {
            drv::send_wr w;
            w.wr_id = 2 + i;
            w.opcode = regmap::wr_opcode::send;
            w.length = kCrcLen;
            w.local_stag = s.a.stag;
            w.local_addr = s.buf + 8192 + std::uint64_t{kCrcLen} * i;
            wrs.push_back(w);
        }
    }
    for (const drv::send_wr& w : wrs) {
        const std::vector<std::uint8_t> data = pattern(cfg_.seed, 0x7100 + w.wr_id, w.length);
        s.bus.mem_write(w.local_addr, data.data(), data.size());
    }
    for (const drv::send_wr& w : wrs) {
        if (s.ctx.post_send(s.qp, w) != drv::status::ok) {
            fail("client: post_send of wr " + std::to_string(w.wr_id) + " refused");
            return;
        }
    }
    // Every descriptor completes, in posting order (VI: a work queue's descriptors complete in order).
    std::vector<regmap::cqe_status> status;
    for (std::size_t i = 0; i < wrs.size(); ++i) {
        drv::work_completion wc;
        if (!poll_for(
                s, s.cq, [](const drv::work_completion& c) { return c.opcode != drv::wc_opcode::qp_error; }, kBudgetPs,
                &wc)) {
            break;
        }
        if (wc.wr_id != wrs[i].wr_id) {
            check("client: descriptors complete in posting order", false,
                  "wr " + std::to_string(wc.wr_id) + " where wr " + std::to_string(wrs[i].wr_id) + " was due");
            return;
        }
        status.push_back(wc.status);
    }
    check("client: every posted descriptor completes", status.size() == wrs.size(),
          std::to_string(status.size()) + "/" + std::to_string(wrs.size()));
    std::string list;
    for (std::size_t i = 0; i < status.size(); ++i) {
        list += (i ? "," : "") + std::string(regmap::to_string(status[i]));
    }
    regmap::qp_state state{};
    if (!reliable(level)) {
        // Unreliable Delivery: no error of the peer's reaches the sender; the VI stays Connected.
        bool all_ok = true;
        for (const auto st : status) all_ok = all_ok && st == regmap::cqe_status::success;
        check("client (" + level + "): every send descriptor completes successfully", all_ok, list);
        bus_spend_and_check_state(s, regmap::qp_state::rts, "client (" + level + "): the VI stays connected");
    } else if (level == "reliable_reception") {
        // Descriptors the peer placed succeed (on its Message ACK), the one whose message it
        // found in error takes the peer's error, then all flush.
        const regmap::cqe_status peer = cfg_.probe == "vi_errors"       ? regmap::cqe_status::remote_access_error
                                        : cfg_.probe == "vi_descriptor" ? regmap::cqe_status::remote_invalid_request
                                                                        : regmap::cqe_status::transport_error;
        std::size_t at = status.size();
        bool shape = true;
        for (std::size_t i = 0; i < status.size(); ++i) {
            if (status[i] == peer && at == status.size()) {
                at = i;
            } else if (status[i] != (at == status.size() ? regmap::cqe_status::success : regmap::cqe_status::flushed)) {
                shape = false;
            }
        }
        shape = shape && at < status.size();
        // The probe's first descriptor is the one in error, except under the CRC probe's random
        // corruption, where the server's count of good receives says which one it was.
        if (cfg_.probe != "vi_crc") shape = shape && at == 0;
        vi_client_error_at_ = static_cast<std::int64_t>(at);
        check("client (" + level + "): descriptors succeed until the break, the one in error names the peer's " +
                  regmap::to_string(peer) + ", the rest complete flushed",
              shape, list);
        check("client (" + level + "): the VI goes to Error",
              wait_state(s.bus, s.ctx, s.qp, regmap::qp_state::error, kBudgetPs, &state),
              std::string("state ") + regmap::to_string(state));
    } else {
        // Reliable Delivery: descriptors the peer took before the break succeed, then all flush.
        bool shape = true, flushing = false;
        for (const auto st : status) {
            if (st == regmap::cqe_status::flushed)
                flushing = true;
            else if (st != regmap::cqe_status::success || flushing)
                shape = false;
        }
        check("client (" + level + "): descriptors succeed until the break, then complete flushed", shape, list);
        check("client (" + level + "): the VI goes to Error",
              wait_state(s.bus, s.ctx, s.qp, regmap::qp_state::error, kBudgetPs, &state),
              std::string("state ") + regmap::to_string(state));
    }
}

void probe::vi_cross_check() {
    // Reliable Reception under the CRC probe: the Send the client's descriptor reports in error is
    // the first one the server did not receive (its Message ACK named that message, §3.2).
    if (cfg_.probe != "vi_crc" || cfg_.vi_level != "reliable_reception" || vi_client_error_at_ < 0) return;
    check("client (reliable_reception): the descriptor in error is the Send the server's CRC check failed",
          static_cast<std::uint64_t>(vi_client_error_at_) == vi_server_good_,
          "client descriptor " + std::to_string(vi_client_error_at_) + ", server received " +
              std::to_string(vi_server_good_) + " Sends");
}

void probe::bus_spend_and_check_state(side& s, regmap::qp_state want, const std::string& what) {
    s.bus.spend(200'000'000);  // 200 us: a close would have happened by now
    regmap::qp_state state{};
    const bool ok = s.ctx.query_qp(s.qp, &state) == drv::status::ok && state == want;
    check(what, ok, std::string("state ") + regmap::to_string(state));
}

void probe::server_vi(side& s, const std::vector<std::uint8_t>& before) {
    const std::string& level = cfg_.vi_level;
    const std::uint32_t n = vi_receives();
    std::vector<drv::work_completion> wcs;
    for (std::uint32_t i = 0; i < n; ++i) {
        drv::work_completion wc;
        if (!poll_for(
                s, s.cq, [](const drv::work_completion& c) { return c.opcode != drv::wc_opcode::qp_error; }, kBudgetPs,
                &wc)) {
            break;
        }
        wcs.push_back(wc);
    }
    check("server: every receive descriptor completes", wcs.size() == n,
          std::to_string(wcs.size()) + "/" + std::to_string(n));
    bool order = true;
    for (std::size_t i = 0; i < wcs.size(); ++i) order = order && wcs[i].wr_id == 1000 + i;
    check("server: receive descriptors complete in posting order", order);
    auto region = [&](std::uint64_t off, std::size_t len) {
        std::vector<std::uint8_t> got(len);
        s.bus.mem_read(s.buf + off, got.data(), got.size());
        return got;
    };
    auto unchanged = [&](std::uint64_t off, std::size_t len) {
        return region(off, len) == std::vector<std::uint8_t>(before.begin() + static_cast<std::ptrdiff_t>(off),
                                                             before.begin() + static_cast<std::ptrdiff_t>(off + len));
    };
    std::string list;
    for (std::size_t i = 0; i < wcs.size(); ++i) list += (i ? "," : "") + std::string(regmap::to_string(wcs[i].status));
    regmap::qp_state state{};
    if (cfg_.probe != "vi_crc") {
        check("server: the Write with a bad Memory Handle placed nothing", unchanged(kBadWriteOff, kWriteLen));
        if (!reliable(level) && wcs.size() == 2) {
            check("server (" + level + "): the Send too long for its descriptor completes it with a length error",
                  wcs[0].status == regmap::cqe_status::local_length_error, list);
            const bool fit = wcs[1].status == regmap::cqe_status::success && wcs[1].byte_len == kFitSend &&
                             region(kRecvOff + 256, kFitSend) == pattern(cfg_.seed, 0x7100 + 5, kFitSend);
            check("server (" + level + "): the next Send completes its descriptor with its bytes", fit, list);
            check("server (" + level + "): the good Write after the errors is placed",
                  region(kGoodWriteOff, kWriteLen) == pattern(cfg_.seed, 0x7100 + 4, kWriteLen));
        } else if (reliable(level)) {
            bool flushed = wcs.size() == 2;
            for (const auto& wc : wcs) flushed = flushed && wc.status == regmap::cqe_status::flushed;
            check("server (" + level + "): the " + (cfg_.probe == "vi_errors" ? "protection" : "descriptor") +
                      " error breaks the connection, both receives flush",
                  flushed, list);
            check("server (" + level + "): nothing after the error is placed", unchanged(kGoodWriteOff, kWriteLen));
        }
    } else {
        std::uint32_t good = 0, in_error = 0, flushed = 0, other = 0;
        bool data_ok = true, shape = true;
        for (std::size_t i = 0; i < wcs.size(); ++i) {
            const auto st = wcs[i].status;
            if (st == regmap::cqe_status::success) {
                ++good;
                data_ok = data_ok && wcs[i].byte_len == kCrcLen &&
                          region(kRecvOff + std::uint64_t{kCrcLen} * i, kCrcLen) ==
                              pattern(cfg_.seed, 0x7100 + 2 + i, kCrcLen);
                if (flushed != 0) shape = false;
            } else if (st == regmap::cqe_status::transport_error) {
                ++in_error;
            } else if (st == regmap::cqe_status::flushed) {
                ++flushed;
            } else {
                ++other;
            }
        }
        const std::string counts = std::to_string(good) + " success, " + std::to_string(in_error) +
                                   " transport error, " + std::to_string(flushed) + " flushed, " +
                                   std::to_string(other) + " other";
        check("server: every successful receive holds its Send's bytes", data_ok, counts);
        if (!reliable(level)) {
            check("server (" + level +
                      "): Sends with a CRC error complete their descriptor with a transport error, "
                      "the others succeed",
                  in_error >= 1 && good >= 1 && flushed == 0 && other == 0, counts);
        } else {
            check("server (" + level + "): the first CRC error breaks the connection: receives succeed, then flush",
                  shape && in_error == 0 && other == 0 && flushed >= 1, counts);
            vi_server_good_ = good;
        }
    }
    if (!reliable(level)) {
        bus_spend_and_check_state(s, regmap::qp_state::rts, "server (" + level + "): the VI stays connected");
    } else {
        check("server (" + level + "): the VI goes to Error",
              wait_state(s.bus, s.ctx, s.qp, regmap::qp_state::error, kBudgetPs, &state),
              std::string("state ") + regmap::to_string(state));
    }
}

}  // namespace rnic::platform
