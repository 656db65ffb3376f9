// Probes whose client builds the seeds' segments itself, because no correct NIC sends what they
// test (docs/protocol-probes.md, "Segments the peer builds"). The bytes go out raw: data segments
// as raw_stream work requests (rnic.rdma.raw_ulpdu_wqes: one TCP segment each, unframed by the
// client's NIC), ConnectRequests through the connect command's private data
// (rnic.vitcp.raw_connect_requests). Each probe judges the server's reaction by what the seed
// requires, or where the seed is silent by the platform's documented choice (docs/framings.md):
//  - vi_ce_version, vi_ce_bad_option (seed 003 §3.2 Version, §3.3 Options): a ConnectRequest of
//    version 2, and one whose CRC option has Length 8: the server answers a ConnectReject naming
//    the reason in its IS Error Code (5 unsupported version, 6 malformed option) and closes; the
//    client's connect is refused and gets the ConnectReject back.
//  - vi_ce_unknown_option (§3.3 "A receiver MUST ignore any unsupported or unknown options"): a
//    ConnectRequest with an option of an unknown type connects, and a Write over it lands.
//  - vi_transmit_error (§3.2 Transmit Error, §2.2.2.2.5): a Send, the same Send padded with the
//    Transmit Error bit set (what a sender that cannot resend the original data sends), a Send.
//    Unreliable Delivery: the second receive completes transport_error, the others succeed, the VI
//    stays connected; the reliable levels: the first succeeds, the connection breaks, the rest flush.
//  - vi_read_window (§2.2.2.2.6): one more RdmaReadRequest than the negotiated RDMA Read Window,
//    in one TCP segment: the connection closes at every level and no Read Response is sent.
//  - rdmatcp_connection_id (seed 000 §3.4): after good RDMA_Write segments (the baseline Write)
//    one with another Connection ID: Terminate LLP / MPA / code 3 (docs/framings.md: the Connection
//    ID must be the connection's; a framing error), nothing of it placed.
//  - rdmatcp_unknown_type: seed 000's 2-bit Type field has no unknown value (§3.4 defines all four),
//    so the unknown type a receiver can meet is the message's inside it: a Send segment whose
//    Control Data carries RDMAP opcode 12, which no RDMAP message has: Terminate RDMAP / remote
//    operation / unexpected opcode (RFC 5040 §7.2), as over MPA.
#include <cstring>
#include <string>
#include <vector>

#include "proto/ddp_rdmap.h"
#include "proto/seeds/rdmatcp_ddp.h"
#include "proto/seeds/vitcp.h"
#include "proto/seeds/vitcp_ce.h"
#include "proto/seeds/vitcp_ddp.h"
#include "workloads/probe_side.h"

namespace rnic::platform {

using namespace probe_detail;
namespace ddp = proto::ddp;
namespace vt = proto::vitcp;

namespace {
using bytes = std::vector<std::uint8_t>;

constexpr std::uint64_t kRawArea = 512 * 1024;  // where the client stages its raw bytes
constexpr std::uint16_t kClientPort = 40000;    // the client's local port (the Calling Discriminator)
constexpr std::uint32_t kViSend = 128;          // vi_transmit_error: each Send's bytes
constexpr std::uint32_t kReadLen = 64;          // vi_read_window: each Read's bytes
constexpr std::uint32_t kBadWriteOff = 8192;    // rdmatcp_connection_id: where the bad Write aims
constexpr std::uint32_t kBadWriteLen = 64;
constexpr std::uint16_t kUnknownOption = 0x4242;  // an option type seed 003 does not define

bool ce_probe(const std::string& p) {
    return p.rfind("vi_ce_", 0) == 0;
}
bool rdmatcp_probe(const std::string& p) {
    return p.rfind("rdmatcp_", 0) == 0;
}

// The first Message Number of the client's raw segments: the receiver learns it (seed 000 and 003
// §3.2/§3.4: "may be varied", "SHOULD be selected at random").
std::uint32_t first_number(std::uint64_t seed) {
    return 0x51000000u ^ static_cast<std::uint32_t>(seed * 2654435761u);
}
}  // namespace

bool probe::raw_frames_probe() const {
    const std::string& p = cfg_.probe;
    return ce_probe(p) || rdmatcp_probe(p) || p == "vi_transmit_error" || p == "vi_read_window";
}

bool probe::raw_frames_enabled() const {
    return ce_probe(cfg_.probe) ? cfg_.vi_raw_connect_requests : cfg_.raw_wqes;
}

std::uint32_t probe::raw_frames_receives() const {
    return cfg_.probe == "vi_transmit_error" ? 3 : 0;
}

bool probe::post_raw(side& s, const std::vector<std::vector<std::uint8_t>>& segments, std::uint64_t first_wr_id) {
    // One raw_stream work request (one TCP segment) per element, staged in the client's buffer.
    std::uint64_t at = s.buf + kRawArea;
    for (std::size_t i = 0; i < segments.size(); ++i) {
        s.bus.mem_write(at, segments[i].data(), segments[i].size());
        drv::send_wr r;
        r.wr_id = first_wr_id + i;
        r.opcode = regmap::wr_opcode::raw_stream;
        r.local_addr = at;
        r.length = static_cast<std::uint32_t>(segments[i].size());
        r.local_stag = s.a.stag;
        if (s.ctx.post_send(s.qp, r) != drv::status::ok) {
            fail("client: raw_stream work request refused (does the run set rnic.rdma.raw_ulpdu_wqes = true?)");
            return false;
        }
        at += (segments[i].size() + 63) / 64 * 64;
    }
    return true;
}

// ---- client ------------------------------------------------------------------------------------

void probe::client_raw_frames(side& s, std::uint32_t server_ip, const remote_buffer& a) {
    const std::string& p = cfg_.probe;
    if (ce_probe(p)) {
        client_vi_ce(s, server_ip, a);
        return;
    }
    if (s.ctx.connect(s.qp, server_ip, a.port, kClientPort, {}) != drv::status::ok) {
        fail("client connect failed");
        return;
    }
    result_.setup_ok = true;
    const std::uint32_t n0 = first_number(cfg_.seed);
    std::vector<bytes> raw;
    if (rdmatcp_probe(p)) {
        // The baseline Write as RDMA_Write segments of our own (their Connection ID is learned
        // by the server from the first, §3.4), then the bad one.
        proto::rdmatcp_map::session tx;
        tx.connection_id = 0x0123456789abcdefULL ^ cfg_.seed;
        tx.tx_started = true;
        tx.tx_next_message = n0;
        const bytes baseline = pattern(cfg_.seed, 0xba5e, kBaseline);
        auto segment = [&](const bytes& ulpdu) {
            proto::rdmatcp_map::segment_parts parts;
            if (proto::rdmatcp_map::to_segment(tx, ulpdu.data(), ulpdu.size(), parts) !=
                proto::rdmatcp_map::refusal::none) {
                return std::make_pair(parts, false);
            }
            return std::make_pair(parts, true);
        };
        auto write_ulpdu = [&](std::uint64_t to, const std::uint8_t* data, std::size_t len, bool last) {
            ddp::header h;
            h.tagged = true;
            h.last = last;
            h.opcode = ddp::opcode::rdma_write;
            h.stag = a.stag;
            h.tagged_offset = to;
            bytes u(h.size());
            ddp::encode(h, u.data());
            u.insert(u.end(), data, data + len);
            return u;
        };
        for (std::size_t off = 0; off < baseline.size(); off += 1024) {
            const bytes u = write_ulpdu(a.addr + off, baseline.data() + off, 1024, off + 1024 == baseline.size());
            auto [parts, ok] = segment(u);
            bytes wire;
            if (!ok || !proto::rdmatcp_map::encode(parts, wire)) {
                fail("client: cannot build the RDMA/TCP baseline segments");
                return;
            }
            raw.push_back(std::move(wire));
        }
        bytes bad;
        if (p == "rdmatcp_connection_id") {
            const bytes payload = pattern(cfg_.seed, 0xbad1, kBadWriteLen);
            const bytes u = write_ulpdu(a.addr + kBadWriteOff, payload.data(), payload.size(), true);
            auto [parts, ok] = segment(u);
            parts.header.connection_id ^= 0x1;  // not the connection's (§3.4)
            if (!ok || !proto::rdmatcp_map::encode(parts, bad)) {
                fail("client: cannot build the RDMA/TCP segment");
                return;
            }
        } else {
            // A plain Send, its RDMAP opcode then made 12 (reserved: no RDMAP message, RFC 5040 §4.3).
            ddp::header h;
            h.opcode = ddp::opcode::send;
            h.queue = ddp::kQueueSend;
            h.msn = 1;
            bytes u(h.size());
            ddp::encode(h, u.data());
            u.resize(u.size() + 16, 0x5a);
            auto [parts, ok] = segment(u);
            parts.control[1] = static_cast<std::uint8_t>((parts.control[1] & 0xF0) | 12);
            if (!ok || !proto::rdmatcp_map::encode(parts, bad)) {
                fail("client: cannot build the RDMA/TCP segment");
                return;
            }
        }
        raw.push_back(std::move(bad));
        if (!post_raw(s, raw, 1)) return;
        oob_.publish("baseline-done", {});
        drv::send_wr after;
        after.wr_id = 99;
        after.local_addr = s.buf;
        after.length = 64;
        after.local_stag = s.a.stag;
        after.remote_addr = a.addr + kBadWriteOff;
        after.remote_stag = a.stag;
        expect_peer_terminate(s, after);
        return;
    }
    // VI/TCP data segments of our own (the server learns the first number, §3.2).
    auto vi = [&](vt::segment seg) {
        seg.crc = cfg_.vi_crc;
        return vt::encode(seg);
    };
    if (p == "vi_transmit_error") {
        for (std::uint32_t i = 0; i < 3; ++i) {
            vt::segment send;
            send.header.type = vt::segment_type::send;
            send.header.eom = true;
            send.header.message_number = n0 + i;
            send.payload = pattern(cfg_.seed, 0x7e00 + i, kViSend);
            bytes wire = vi(send);
            // §2.2.2.2.5: the second is what a sender that cannot resend the original data sends,
            // "padding ... maintaining the correct size" with the Transmit Error bit set.
            if (i == 1) wire = proto::vitcp_map::pad_for_retransmission(wire.data(), wire.size(), cfg_.vi_crc);
            if (wire.empty()) {
                fail("client: cannot build the VI segments");
                return;
            }
            raw.push_back(std::move(wire));
        }
        // One TCP segment: the receiver meets all three in one go.
        bytes one;
        for (const bytes& w : raw) one.insert(one.end(), w.begin(), w.end());
        raw = {one};
    } else {  // vi_read_window
        bytes one;
        for (std::uint32_t i = 0; i <= cfg_.vi_read_window; ++i) {
            vt::segment rr;
            rr.header.type = vt::segment_type::read_request;
            rr.header.eom = true;
            rr.header.message_number = n0 + i;
            rr.rdma = vt::rdma_header{a.addr + std::uint64_t{kReadLen} * i, a.stag, kReadLen};
            const bytes wire = vi(rr);
            one.insert(one.end(), wire.begin(), wire.end());
        }
        raw = {one};
    }
    if (!post_raw(s, raw, 1)) return;
    // Every work request completes (its status depends on the level: the raw bytes are no message
    // the client's own framing numbered, so at Reliable Reception no Message ACK covers them).
    drv::work_completion wc;
    check("client: the raw work request completes",
          poll_for(
              s, s.cq, [](const drv::work_completion& c) { return c.wr_id == 1; }, kBudgetPs, &wc),
          "no completion");
    const bool survives = p == "vi_transmit_error" && cfg_.vi_level == "unreliable";
    regmap::qp_state state{};
    if (survives) {
        bus_spend_and_check_state(s, regmap::qp_state::rts, "client (" + cfg_.vi_level + "): the VI stays connected");
    } else {
        const std::uint64_t deadline = s.bus.now_ps() + kBudgetPs;
        while ((s.ctx.query_qp(s.qp, &state) != drv::status::ok || state != regmap::qp_state::error) &&
               s.bus.now_ps() < deadline) {
            s.bus.spend(1'000'000);
        }
        check("client (" + cfg_.vi_level + "): the server closed the connection, the VI goes to Error",
              state == regmap::qp_state::error, std::string("state ") + regmap::to_string(state));
    }
}

void probe::client_vi_ce(side& s, std::uint32_t server_ip, const remote_buffer& a) {
    const std::string& p = cfg_.probe;
    vt::local_parameters local;
    local.attributes = proto::vitcp_ce::attributes_for(
        cfg_.vi_level == "unreliable"           ? proto::vitcp_ce::reliability::unreliable
        : cfg_.vi_level == "reliable_reception" ? proto::vitcp_ce::reliability::reliable_reception
                                                : proto::vitcp_ce::reliability::reliable_delivery,
        false);
    local.attributes.rdma_write_enable = local.attributes.rdma_read_enable = true;
    local.mtu = 1u << 20;
    local.rdma_read_window = cfg_.vi_read_window;
    local.crc = cfg_.vi_crc;
    vt::segment req;
    req.header.type = vt::segment_type::connect_request;
    req.ce = vt::make_request(local, proto::vitcp_ce::port_discriminator(kClientPort),
                              proto::vitcp_ce::port_discriminator(a.port));
    req.crc = cfg_.vi_crc;
    std::uint8_t want = 0;  // the IS Error Code of the ConnectReject (0: accepted)
    if (p == "vi_ce_version") {
        req.header.version = 2;
        want = static_cast<std::uint8_t>(proto::vitcp_ce::refusal::unsupported_version);
    } else if (p == "vi_ce_bad_option") {
        // The CRC option is "Length = 4 (no data)" (§3.3): 4 data bytes make it Length 8.
        req.ce->options.clear();
        req.ce->options.push_back({vt::kOptionCrc, {0, 0, 0, 0}});
        req.crc = true;
        want = static_cast<std::uint8_t>(proto::vitcp_ce::refusal::bad_option);
    } else {
        req.ce->options.insert(req.ce->options.begin(), {kUnknownOption, {0xde, 0xad, 0xbe, 0xef}});
    }
    const bytes request = vt::encode(req);
    if (request.empty()) {
        fail("client: cannot build the ConnectRequest");
        return;
    }
    bytes answer;
    const drv::status st = s.ctx.connect(s.qp, server_ip, a.port, kClientPort, {}, &answer, &request);
    if (st == drv::status::invalid_argument) {
        fail(
            "client: the device would not send the ConnectRequest built here (the probe needs "
            "rnic.vitcp.raw_connect_requests = true)");
        return;
    }
    result_.setup_ok = true;
    if (want == 0) {
        check("client: a ConnectRequest with an unknown option connects (§3.3: ignored)", st == drv::status::ok,
              drv::to_string(st));
        if (st != drv::status::ok) return;
        const drv::send_wr w = baseline_write(s, a);
        drv::work_completion wc;
        const bool ok = s.ctx.post_send(s.qp, w) == drv::status::ok &&
                        poll_for(
                            s, s.cq, [](const drv::work_completion& c) { return c.wr_id == 1; }, kBudgetPs, &wc) &&
                        wc.status == regmap::cqe_status::success;
        check("client: an RDMA Write over the connection completes", ok);
        oob_.publish("baseline-done", {});
        return;
    }
    check("client: the connect is refused", st == drv::status::connection_refused, drv::to_string(st));
    std::string why;
    const auto v = vt::parse(answer.data(), answer.size(), false, &why);
    const bool reject = v && v->header.type == vt::segment_type::connect_reject;
    check("client: the answer is a ConnectReject", reject,
          v ? std::string("a ") + vt::to_string(v->header.type) : "no answer segment (" + why + ")");
    if (reject) {
        const std::uint8_t code = v->header.remote_error.is_error_code;
        check(std::string("client: its IS Error Code names the reason: ") +
                  proto::vitcp_ce::to_string(static_cast<proto::vitcp_ce::refusal>(want)),
              code == want, "IS Error Code " + std::to_string(code));
    }
    regmap::qp_state state{};
    s.ctx.query_qp(s.qp, &state);
    check("client: the QP did not reach RTS", state != regmap::qp_state::rts, regmap::to_string(state));
}

// ---- server ------------------------------------------------------------------------------------

void probe::server_raw_frames(side& s, const std::vector<std::uint8_t>& before) {
    const std::string& p = cfg_.probe;
    const drv::status accepted = s.ctx.accept(s.qp, cfg_.port, {});
    if (p == "vi_ce_version" || p == "vi_ce_bad_option") {
        check("server: the accept fails: the ConnectRequest was refused", accepted == drv::status::connection_refused,
              drv::to_string(accepted));
        return;
    }
    if (accepted != drv::status::ok) {
        fail("server accept failed");
        return;
    }
    auto region = [&](std::uint64_t off, std::size_t len) {
        std::vector<std::uint8_t> got(len);
        s.bus.mem_read(s.buf + off, got.data(), got.size());
        return got;
    };
    if (rdmatcp_probe(p)) {
        server_error_probe(s);  // the Terminate, the QP in Error, memory unchanged but the baseline
        return;
    }
    if (p == "vi_ce_unknown_option") {
        oob_.wait_for("baseline-done");
        check("server: the Write landed", region(0, kBaseline) == pattern(cfg_.seed, 0xba5e, kBaseline));
        return;
    }
    const bool survives = p == "vi_transmit_error" && cfg_.vi_level == "unreliable";
    if (p == "vi_transmit_error") {
        std::vector<drv::work_completion> wcs;
        for (std::uint32_t i = 0; i < raw_frames_receives(); ++i) {
            drv::work_completion wc;
            if (!poll_for(
                    s, s.cq, [](const drv::work_completion& c) { return c.opcode != drv::wc_opcode::qp_error; },
                    kBudgetPs, &wc)) {
                break;
            }
            wcs.push_back(wc);
        }
        std::string list;
        for (const auto& wc : wcs) list += (list.empty() ? "" : ",") + std::string(regmap::to_string(wc.status));
        check("server: every receive descriptor completes", wcs.size() == 3, list);
        if (wcs.size() == 3) {
            const bool first = wcs[0].status == regmap::cqe_status::success && wcs[0].byte_len == kViSend &&
                               region(kRecvOff, kViSend) == pattern(cfg_.seed, 0x7e00, kViSend);
            check("server: the Send before the one in error succeeds with its bytes", first, list);
            if (survives) {
                check(
                    "server (unreliable): the Send with the Transmit Error bit completes with a transport error "
                    "(§3.2: the receiver MUST regard the entire message as in error)",
                    wcs[1].status == regmap::cqe_status::transport_error, list);
                check("server (unreliable): the Send after it succeeds with its bytes",
                      wcs[2].status == regmap::cqe_status::success &&
                          region(kRecvOff + 2 * 256, kViSend) == pattern(cfg_.seed, 0x7e02, kViSend),
                      list);
            } else {
                check("server (" + cfg_.vi_level + "): the Transmit Error bit breaks the connection, the rest flush",
                      wcs[1].status == regmap::cqe_status::flushed && wcs[2].status == regmap::cqe_status::flushed,
                      list);
            }
        }
    } else {
        // vi_read_window: nothing to read from it is answered; the region read from is unchanged.
        drv::work_completion err;
        const bool seen = poll_for(
            s, s.cq, [](const drv::work_completion& w) { return w.opcode == drv::wc_opcode::qp_error; }, kBudgetPs,
            &err);
        check("server: the Read Request beyond the RDMA Read Window breaks the connection (§2.2.2.2.6)", seen,
              "no QP error completion");
        check("server: the regions read from are unchanged",
              region(0, std::size_t{kReadLen} * (cfg_.vi_read_window + 1u)) ==
                  std::vector<std::uint8_t>(before.begin(),
                                            before.begin() + std::ptrdiff_t{kReadLen} * (cfg_.vi_read_window + 1)));
    }
    if (survives) {
        bus_spend_and_check_state(s, regmap::qp_state::rts, "server (unreliable): the VI stays connected");
        return;
    }
    regmap::qp_state state{};
    const std::uint64_t deadline = s.bus.now_ps() + kBudgetPs;
    while ((s.ctx.query_qp(s.qp, &state) != drv::status::ok || state != regmap::qp_state::error) &&
           s.bus.now_ps() < deadline) {
        s.bus.spend(1'000'000);
    }
    check("server (" + cfg_.vi_level + "): the VI goes to Error", state == regmap::qp_state::error,
          std::string("state ") + regmap::to_string(state));
}

}  // namespace rnic::platform
