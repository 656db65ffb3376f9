#include "firmware/firmware.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <string>

#include "core/log.h"
#include "proto/bytes.h"
#include "proto/mpa.h"

#define FW_LOG(lvl, expr) RNIC_LOG_AT(lvl, fw, hal_.now_ps(), hal_.name(), expr)

namespace rnic::fw {

namespace mpa = proto::mpa;
using regmap::cmd_status;

namespace {
std::string to_hex(std::uint64_t v) {
    std::ostringstream o;
    o << std::hex << v;
    return o.str();
}
// MPA private data for a log line: printable ASCII as is, anything else as '.', at most 64 bytes.
std::string printable(const std::vector<std::uint8_t>& bytes) {
    std::string s;
    for (std::size_t i = 0; i < bytes.size() && i < 64; ++i)
        s += bytes[i] >= 0x20 && bytes[i] < 0x7f ? static_cast<char>(bytes[i]) : '.';
    return bytes.size() > 64 ? s + "..." : s;
}
}  // namespace

firmware::firmware(hal& h, const costs& c) : hal_(h), costs_(c) {}

std::vector<std::pair<const char*, std::uint64_t>> firmware::counters() const {
    std::vector<std::pair<const char*, std::uint64_t>> out = {{"commands_executed", commands_},
                                                              {"connections_established", established_},
                                                              {"connections_failed", failed_},
                                                              {"connections_rejected", rejected_}};
    // Only when a host flooded the ring, so results of well-behaved drivers keep their keys.
    if (ring_overruns_ != 0) {
        out.emplace_back("command_ring_overruns", ring_overruns_);
        out.emplace_back("commands_overwritten", commands_overwritten_);
    }
    return out;
}

void firmware::run() {
    hal_.reg_write(regmap::STATUS, regmap::status::ready);
    FW_LOG(info, "firmware running");
    for (;;) {
        const event ev = hal_.wait_event();
        switch (ev.kind) {
        case event_kind::command_doorbell:
            on_command_doorbell();
            break;
        case event_kind::tcp_established:
            on_established(ev.conn, ev.port);
            break;
        case event_kind::startup_bytes:
            on_startup_bytes(ev.conn);
            break;
        case event_kind::tcp_closed:
            on_connection_lost(ev.conn, "TCP connection closed");
            break;
        case event_kind::tcp_failed:
            on_connection_lost(ev.conn, "TCP connection could not be opened");
            break;
        case event_kind::tcp_refused:
            on_refused(ev.port);
            break;
        case event_kind::framing_error:
            on_connection_lost(ev.conn, "framing error");
            break;
        case event_kind::timer:
            on_timer();
            break;
        case event_kind::device_reset:
            on_reset();
            break;
        }
    }
}

std::uint64_t firmware::ring_addr(std::uint32_t slot) const {
    return ring_base_ + static_cast<std::uint64_t>(slot % ring_entries_) * regmap::kCommandSize;
}

void firmware::on_command_doorbell() {
    ring_base_ =
        static_cast<std::uint64_t>(hal_.reg_read(regmap::CMDQ_BASE_HI)) << 32 | hal_.reg_read(regmap::CMDQ_BASE_LO);
    ring_entries_ = hal_.reg_read(regmap::CMDQ_ENTRIES);
    const std::uint32_t producer = hal_.reg_read(regmap::CMDQ_PROD);
    if (ring_entries_ < 2 || ring_entries_ > 4096 || (ring_entries_ & (ring_entries_ - 1)) != 0 ||
        ring_base_ % regmap::kCommandSize != 0) {
        FW_LOG(error, "command ring misconfigured (base 0x" << std::hex << ring_base_ << std::dec << ", "
                                                            << ring_entries_ << " entries): doorbell ignored");
        return;
    }
    // A producer more than a ring ahead of the consumer means the host wrote over commands the
    // firmware had not fetched yet: their slots now hold later commands, so they are gone. The
    // firmware cannot answer what it never saw; it answers every command still in the ring (the
    // last ring_entries_ ones, in order), counts the overwritten ones and logs the overrun, rather
    // than executing a slot twice or wrapping its consumer index past the producer.
    const std::uint32_t ahead = producer - consumer_;  // free-running indices, mod 2^32
    if (ahead > ring_entries_) {
        const std::uint32_t lost = ahead - ring_entries_;
        ++ring_overruns_;
        commands_overwritten_ += lost;
        FW_LOG(error, "command ring overrun: producer " << producer << " is " << ahead << " commands ahead of consumer "
                                                        << consumer_ << " in a ring of " << ring_entries_ << "; "
                                                        << lost
                                                        << " commands were overwritten before they were fetched");
        consumer_ = producer - ring_entries_;
    }
    while (consumer_ != producer) {
        const std::uint32_t slot = consumer_++;
        std::uint8_t cmd[regmap::kCommandSize];
        if (!hal_.dma_read(ring_addr(slot), cmd, sizeof cmd)) {
            FW_LOG(error, "cannot read command " << slot << " at 0x" << std::hex << ring_addr(slot));
            continue;
        }
        hal_.reg_write(regmap::CMDQ_CONS, consumer_);
        hal_.consume_cycles(costs_.command);
        execute(slot, cmd);
    }
}

void firmware::complete(std::uint32_t slot, cmd_status status, std::uint32_t result) {
    std::uint8_t tail[8];
    proto::put_le32(tail, static_cast<std::uint32_t>(status));
    proto::put_le32(tail + 4, result);
    ++commands_;
    if (!hal_.dma_write(ring_addr(slot) + regmap::cmd_off::status, tail, sizeof tail)) {
        FW_LOG(error, "cannot write the completion of command " << slot);
        return;
    }
    FW_LOG(debug, "command " << slot << " done: " << regmap::to_string(status) << ", result " << result);
    hal_.raise_msix(regmap::kMsixCommandVector);
}

void firmware::reg_mr_pages(std::uint32_t slot, const std::uint64_t* p) {
    // p5: page count (bits 0-23) | log2 page size (bits 24-31) | first byte's offset << 32 (regmap.h).
    const auto count = static_cast<std::uint32_t>(p[5] & 0xffffff);
    const auto shift = static_cast<unsigned>(p[5] >> 24 & 0xff);
    const std::uint64_t offset = p[5] >> 32;
    const auto access = static_cast<std::uint32_t>(p[2]);
    auto refuse = [&](const std::string& why) {
        FW_LOG(warn, "command " << slot << ": reg_mr_pages refused: " << why);
        complete(slot, cmd_status::bad_parameter, 0);
    };
    if (count == 0 || count > regmap::kMaxPageListEntries) {
        refuse("page count " + std::to_string(count) + " (1.." + std::to_string(regmap::kMaxPageListEntries) + ")");
        return;
    }
    if (shift < regmap::kMinPageShift || shift > regmap::kMaxPageShift) {
        refuse("page size 2^" + std::to_string(shift) + " (2^" + std::to_string(regmap::kMinPageShift) + "..2^" +
               std::to_string(regmap::kMaxPageShift) + ")");
        return;
    }
    const std::uint64_t page = std::uint64_t{1} << shift;
    if (offset >= page || p[1] == 0 || p[1] > std::uint64_t{count} * page - offset || p[0] + p[1] < p[0]) {
        refuse("length " + std::to_string(p[1]) + " from offset " + std::to_string(offset) + " does not fit " +
               std::to_string(count) + " pages of " + std::to_string(page) + " bytes");
        return;
    }
    if ((access & regmap::mr_access::remote_atomic) != 0 && (offset - p[3]) % 8 != 0) {
        // An 8-aligned tagged offset must be 8-aligned in its page, so an atomic never crosses one.
        refuse("remote atomics need the first byte's offset equal to its tagged offset modulo 8");
        return;
    }
    if (p[4] % 8 != 0) {
        refuse("page list address 0x" + to_hex(p[4]) + " not 8-byte aligned");
        return;
    }
    std::vector<std::uint8_t> raw(std::size_t{count} * 8);
    if (!hal_.dma_read(p[4], raw.data(), raw.size())) {
        refuse("page list at 0x" + to_hex(p[4]) + " (" + std::to_string(raw.size()) + " bytes) not readable");
        return;
    }
    hal_.consume_cycles(costs_.page_entry * count);
    mr_params mr{p[0], p[1], access, static_cast<std::uint32_t>(p[2] >> 32), p[3]};
    mr.pages.resize(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        mr.pages[i] = proto::get_le64(raw.data() + 8 * i);
        if (mr.pages[i] % page != 0 || mr.pages[i] + page < mr.pages[i]) {
            refuse("page " + std::to_string(i) + " at 0x" + to_hex(mr.pages[i]) + " not aligned to its size");
            return;
        }
    }
    mr.page_shift = shift;
    mr.first_byte_offset = offset;
    const std::int64_t stag = hal_.register_mr(mr);
    if (stag < 0) FW_LOG(warn, "command " << slot << ": reg_mr_pages: no free STag or page-list memory");
    complete(slot, stag < 0 ? cmd_status::no_resources : cmd_status::ok,
             stag < 0 ? 0 : static_cast<std::uint32_t>(stag));
}

void firmware::execute(std::uint32_t slot, const std::uint8_t* cmd) {
    using regmap::command;
    const auto op = static_cast<command>(cmd[regmap::cmd_off::opcode]);
    std::uint64_t p[6];
    for (int i = 0; i < 6; ++i) p[i] = proto::get_le64(cmd + regmap::cmd_off::param + 8 * i);
    switch (op) {
    case command::nop:
        complete(slot, cmd_status::ok, 0);
        return;
    case command::create_cq: {
        const auto entries = static_cast<std::uint32_t>(p[1]);
        if (entries < 2 || entries > (1u << 20) || (entries & (entries - 1)) != 0 || p[0] % regmap::kCqeSize != 0 ||
            p[2] >= regmap::kMsixVectors) {
            complete(slot, cmd_status::bad_parameter, 0);
            return;
        }
        const int cqn = hal_.create_cq({p[0], entries, static_cast<std::uint32_t>(p[2])});
        complete(slot, cqn < 0 ? cmd_status::no_resources : cmd_status::ok,
                 cqn < 0 ? 0 : static_cast<std::uint32_t>(cqn));
        return;
    }
    case command::create_qp: {
        const auto sq_entries = static_cast<std::uint32_t>(p[1]);
        const auto rq_entries = static_cast<std::uint32_t>(p[3]);
        auto pow2 = [](std::uint32_t n) { return n >= 2 && n <= (1u << 16) && (n & (n - 1)) == 0; };
        if (!pow2(sq_entries) || !pow2(rq_entries)) {
            complete(slot, cmd_status::bad_parameter, 0);
            return;
        }
        const int qpn = hal_.create_qp({p[0], sq_entries, p[2], rq_entries, static_cast<std::uint32_t>(p[4]),
                                        static_cast<std::uint32_t>(p[4] >> 32), static_cast<std::uint32_t>(p[5])});
        if (qpn == -2)
            complete(slot, cmd_status::bad_handle, 0);
        else if (qpn < 0)
            complete(slot, cmd_status::no_resources, 0);
        else
            complete(slot, cmd_status::ok, static_cast<std::uint32_t>(qpn));
        return;
    }
    case command::reg_mr: {
        if (p[1] == 0 || p[0] + p[1] < p[0]) {
            complete(slot, cmd_status::bad_parameter, 0);
            return;
        }
        const std::int64_t stag = hal_.register_mr(
            {p[0], p[1], static_cast<std::uint32_t>(p[2]), static_cast<std::uint32_t>(p[2] >> 32), p[3]});
        complete(slot, stag < 0 ? cmd_status::no_resources : cmd_status::ok,
                 stag < 0 ? 0 : static_cast<std::uint32_t>(stag));
        return;
    }
    case command::reg_mr_pages:
        reg_mr_pages(slot, p);
        return;
    case command::dereg_mr:
        complete(slot, hal_.deregister_mr(static_cast<std::uint32_t>(p[0])) ? cmd_status::ok : cmd_status::bad_handle,
                 0);
        return;
    case command::connect: {
        const auto qpn = static_cast<std::uint32_t>(p[0]);
        if (!hal_.qp_idle(qpn)) {
            complete(slot, cmd_status::bad_state, 0);
            return;
        }
        const bool with_private_data = (p[3] & regmap::kConnectPrivateData) != 0;
        std::vector<std::uint8_t> request_private_data;
        if (with_private_data) {
            const auto n = static_cast<std::uint32_t>(p[5] >> 32 & 0xffff);
            // VI/TCP has no private data; in its test mode the bytes are the ConnectRequest.
            const bool raw_ce = hal_.policy().vitcp && hal_.policy().vitcp_raw_connect_requests;
            if (n > regmap::kMaxConnPrivateData || (n != 0 && p[4] == 0) || (hal_.policy().vitcp && !raw_ce) ||
                (raw_ce && n == 0)) {
                FW_LOG(warn,
                       "command " << slot << ": connect with " << n << " bytes of private data refused (at most "
                                  << regmap::kMaxConnPrivateData << ", a buffer at p4, MPA framing"
                                  << (hal_.policy().vitcp ? "; VI/TCP only with rnic.vitcp.raw_connect_requests" : "")
                                  << ")");
                complete(slot, cmd_status::bad_parameter, 0);
                return;
            }
            request_private_data.resize(n);
            if (n != 0 && !hal_.dma_read(p[4], request_private_data.data(), n)) {
                FW_LOG(warn, "command " << slot << ": connect: private data at 0x" << to_hex(p[4]) << " not readable");
                complete(slot, cmd_status::bad_parameter, 0);
                return;
            }
        }
        if ((p[3] & regmap::kConnectPeerToPeer) != 0 && hal_.policy().revision < 2) {
            // The RTR is negotiated in the RFC 6581 word, which revision 1 does not have.
            FW_LOG(warn, "command " << slot
                                    << ": connect asks for peer-to-peer, which needs MPA revision 2 "
                                       "(rnic.mpa.revision is 1)");
            complete(slot, cmd_status::bad_parameter, 0);
            return;
        }
        const int conn = hal_.tcp_connect(static_cast<std::uint32_t>(p[1]), static_cast<std::uint16_t>(p[1] >> 32),
                                          static_cast<std::uint16_t>(p[2]));
        if (conn < 0) {
            complete(slot, conn == hal::kTcpNoSendRegion ? cmd_status::no_buffer_memory : cmd_status::no_resources, 0);
            return;
        }
        pending_connection pc;
        pc.r = role::initiator;
        pc.qpn = qpn;
        pc.cmd_slot = slot;
        pc.ird = static_cast<std::uint16_t>(p[3] & 0x3fff);
        pc.ord = static_cast<std::uint16_t>(p[3] >> 16 & 0x3fff);
        pc.peer_to_peer = (p[3] & regmap::kConnectPeerToPeer) != 0 || hal_.policy().peer_to_peer;
        pc.reject_buf = p[4];
        pc.reject_buf_len = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(with_private_data ? p[5] & 0xffffffff : p[5], mpa::kMaxPrivateData));
        pc.private_data = std::move(request_private_data);
        pc.reply_private_data_back = with_private_data;
        pc.raw_request = with_private_data && hal_.policy().vitcp;
        pc.remote_port = static_cast<std::uint16_t>(p[1] >> 32);
        pc.deadline_ps = hal_.now_ps() + hal_.policy().timeout_ps;
        by_conn_[static_cast<std::uint32_t>(conn)] = pc;
        arm_next_timer();
        return;  // completes when negotiation ends
    }
    case command::accept: {
        const auto qpn = static_cast<std::uint32_t>(p[0]);
        const auto port = static_cast<std::uint16_t>(p[1]);
        if (!hal_.qp_idle(qpn) || port == 0) {
            complete(slot, qpn == 0 && port == 0 ? cmd_status::bad_parameter : cmd_status::bad_state, 0);
            return;
        }
        pending_connection pc;
        pc.r = role::responder;
        pc.qpn = qpn;
        pc.cmd_slot = slot;
        pc.port = port;
        pc.ird = static_cast<std::uint16_t>(p[3] & 0x3fff);
        pc.ord = static_cast<std::uint16_t>(p[3] >> 16 & 0x3fff);
        if (p[5] > regmap::kMaxConnPrivateData || (p[5] != 0 && p[4] == 0)) {
            FW_LOG(warn, "command " << slot << ": accept with " << p[5] << " bytes of private data refused (at most "
                                    << regmap::kMaxConnPrivateData << ", from a buffer at p4)");
            complete(slot, cmd_status::bad_parameter, 0);
            return;
        }
        answer_peer(pc, p);
        return;
    }
    case command::reject: {
        const auto port = static_cast<std::uint16_t>(p[1]);
        if (port == 0 || p[5] > regmap::kMaxRejectPrivateData || (p[5] != 0 && p[4] == 0)) {
            complete(slot, cmd_status::bad_parameter, 0);
            return;
        }
        pending_connection pc;
        pc.r = role::responder;
        pc.cmd_slot = slot;
        pc.port = port;
        pc.reject = true;
        if (p[2] == 0) hal_.tcp_listen(port);  // before the DMA read, so a peer's SYN already finds the port open
        answer_peer(pc, p);
        return;
    }
    case command::listen: {
        const auto port = static_cast<std::uint16_t>(p[1]);
        if (port == 0 || p[1] > 0xffff) {
            complete(slot, cmd_status::bad_parameter, 0);
            return;
        }
        // Peers that connect before an accept wait in the backlog (on_established).
        complete(slot, hal_.tcp_listen(port) ? cmd_status::ok : cmd_status::no_resources, 0);
        return;
    }
    case command::destroy_qp:
    case command::destroy_cq: {
        const auto id = static_cast<std::uint32_t>(p[0]);
        const int r = op == command::destroy_qp ? hal_.destroy_qp(id) : hal_.destroy_cq(id);
        complete(slot, r == 0 ? cmd_status::ok : r == -1 ? cmd_status::bad_handle : cmd_status::bad_state, 0);
        return;
    }
    case command::modify_qp: {
        const auto qpn = static_cast<std::uint32_t>(p[0]);
        const auto target = static_cast<regmap::qp_state>(p[1]);
        if (hal_.qp_query(qpn) < 0) {
            complete(slot, cmd_status::bad_handle, 0);
            return;
        }
        if (target != regmap::qp_state::error && target != regmap::qp_state::closing) {
            complete(slot, cmd_status::bad_parameter, 0);  // the other states are reached by events
            return;
        }
        complete(slot, hal_.qp_modify(qpn, static_cast<std::uint8_t>(target)) ? cmd_status::ok : cmd_status::bad_state,
                 0);
        return;
    }
    case command::query_stats: {
        constexpr std::size_t kN = regmap::kDeviceCounterCount;
        if (p[0] == 0 || p[0] % 8 != 0 || p[1] < 8 * kN) {
            complete(slot, cmd_status::bad_parameter, 0);
            return;
        }
        using c = regmap::device_counter;
        std::uint64_t v[kN] = {};
        hal_.read_counters(v);
        v[static_cast<int>(c::commands)] = commands_;
        v[static_cast<int>(c::connections_established)] = established_;
        v[static_cast<int>(c::connections_failed)] = failed_;
        v[static_cast<int>(c::connections_rejected)] = rejected_;
        std::uint8_t bytes[8 * kN];
        for (std::size_t i = 0; i < kN; ++i) proto::put_le64(bytes + 8 * i, v[i]);
        complete(slot, hal_.dma_write(p[0], bytes, sizeof bytes) ? cmd_status::ok : cmd_status::bad_parameter,
                 static_cast<std::uint32_t>(kN));
        return;
    }
    case command::next_peer:
        next_peer(slot, p);
        return;
    case command::unlisten:
        unlisten(slot, p);
        return;
    case command::query_qp: {
        const std::int64_t word = hal_.qp_query(static_cast<std::uint32_t>(p[0]));
        complete(slot, word < 0 ? cmd_status::bad_handle : cmd_status::ok,
                 word < 0 ? 0 : static_cast<std::uint32_t>(word));
        return;
    }
    }
    FW_LOG(warn, "command " << slot << ": unknown opcode " << static_cast<int>(cmd[regmap::cmd_off::opcode]));
    complete(slot, cmd_status::bad_opcode, 0);
}

void firmware::answer_peer(pending_connection pc, const std::uint64_t* p) {
    pc.private_data.resize(static_cast<std::size_t>(p[5]));
    if (!pc.private_data.empty() && !hal_.dma_read(p[4], pc.private_data.data(), pc.private_data.size())) {
        complete(pc.cmd_slot, cmd_status::bad_parameter, 0);
        return;
    }
    if (p[2] != 0) {
        take_named_peer(static_cast<std::uint32_t>(p[2]), pc);
        return;
    }
    wait_for_peer(pc);
}

void firmware::wait_for_peer(pending_connection pc) {
    pc.deadline_ps = std::numeric_limits<std::uint64_t>::max();  // waits for a peer as long as it takes
    hal_.tcp_listen(pc.port);
    if (auto waiting = backlog_.find(pc.port); waiting != backlog_.end()) {
        const std::uint32_t conn = waiting->second.conn;  // a peer connected before this accept
        backlog_.erase(waiting);
        claim(conn, pc);
        return;
    }
    accepts_.emplace(pc.port, pc);
}

void firmware::on_established(std::uint32_t conn, std::uint16_t port) {
    hal_.consume_cycles(costs_.event);
    auto it = by_conn_.find(conn);
    if (it != by_conn_.end() && it->second.r == role::initiator && hal_.policy().vitcp) {
        vitcp_send_request(conn, it->second, port);
        return;
    }
    if (it != by_conn_.end() && it->second.r == role::initiator) {
        // RFC 5044 §7.1.2: the initiator sends the MPA Request first.
        mpa::request_reply req = make_request(policy_for(it->second));
        req.private_data = it->second.private_data;  // RFC 6581 §9.1: after the IRD/ORD word
        hal_.consume_cycles(costs_.mpa_frame);
        hal_.send_startup(conn, mpa::encode(req));
        it->second.request_sent = true;
        it->second.sent = req;
        FW_LOG(debug, "connection " << conn << ": MPA Request sent (rev " << static_cast<int>(req.revision)
                                    << (req.peer_to_peer ? ", peer-to-peer" : "") << ")");
        return;
    }
    auto acc = accepts_.find(port);
    if (acc == accepts_.end()) {
        // Nobody has asked for it yet: hold it until an accept on this port does (the peer's MPA
        // Request waits in the startup bytes; the peer's own negotiation timeout still runs).
        FW_LOG(info, "connection " << conn << " on port " << port << " waits for an accept");
        backlog_.emplace(port, backlog_entry{conn, hal_.now_ps() + hal_.policy().timeout_ps, next_handle_++, false});
        if (next_handle_ == 0) next_handle_ = 1;  // 0 means "no handle" in accept and reject
        arm_next_timer();
        return;
    }
    pending_connection pc = acc->second;
    accepts_.erase(acc);
    claim(conn, pc);
}

void firmware::on_refused(std::uint16_t port) {
    // The TCP engine reset a SYN on `port` for want of a send region: the accept it would have
    // served (the first waiting, as in on_established) fails now, by name, rather than waiting on.
    hal_.consume_cycles(costs_.event);
    auto acc = accepts_.find(port);
    if (acc == accepts_.end()) {
        FW_LOG(warn, "port " << port << ": a peer was refused (no send region in buffer memory)");
        return;
    }
    FW_LOG(warn, "command " << acc->second.cmd_slot << ": accept on port " << port
                            << " fails: no send region in buffer memory for the peer");
    ++failed_;
    complete(acc->second.cmd_slot, cmd_status::no_buffer_memory, 0);
    accepts_.erase(acc);
}

void firmware::claim(std::uint32_t conn, pending_connection pc) {
    pc.deadline_ps = hal_.now_ps() + hal_.policy().timeout_ps;
    by_conn_[conn] = pc;
    arm_next_timer();
    // The peer's Request may already be waiting.
    if (!hal_.startup_bytes(conn).empty()) on_startup_bytes(conn);
}

void firmware::on_startup_bytes(std::uint32_t conn) {
    auto it = by_conn_.find(conn);
    if (it == by_conn_.end()) return;  // bytes before the accept was matched: handled on establishment
    if (hal_.policy().vitcp) {
        vitcp_startup_bytes(conn, it->second);
        return;
    }
    const std::vector<std::uint8_t>& bytes = hal_.startup_bytes(conn);
    const std::size_t need = mpa::request_reply_length(bytes.data(), bytes.size());
    if (need == 0 || bytes.size() < need) return;  // wait for the rest of the frame
    hal_.consume_cycles(costs_.mpa_frame);
    if (it->second.r == role::initiator) {
        initiator_got_reply(conn, it->second);
    } else {
        responder_got_request(conn, it->second);
    }
}

void firmware::initiator_got_reply(std::uint32_t conn, pending_connection& pc) {
    const std::vector<std::uint8_t>& bytes = hal_.startup_bytes(conn);
    const std::size_t len = mpa::request_reply_length(bytes.data(), bytes.size());
    std::string error;
    const auto rep = mpa::decode(bytes.data(), len, &error);
    if (!rep || rep->request) {
        FW_LOG(warn, "connection " << conn << ": bad MPA Reply: " << (rep ? "a Request instead of a Reply" : error)
                                   << "; closing the TCP connection");
        abandon(conn);
        finish(conn, pc, cmd_status::mpa_negotiation_failed);
        return;
    }
    const mpa_policy& pol = hal_.policy();
    if (rep->reject) {
        // RFC 5044 §7.1.5: R = 1, the responder refuses the connection. Name what it refused when
        // the Reply shows it (an implementation that does not do markers answers M = 0).
        std::string why;
        if (pol.want_markers && !rep->marker) why = "; it refuses the markers we asked for (M = 1 sent, M = 0 back)";
        if (rep->revision < pol.revision) why += "; it answered MPA revision " + std::to_string(rep->revision);
        // RFC 6581 §5: the ULP's private data follows the IRD/ORD word; the driver gets it.
        const std::uint32_t n = reply_private_data_to_host(conn, pc, *rep);
        FW_LOG(warn, "connection " << conn << ": the peer rejected the connection (MPA Reply with R = 1" << why << ", "
                                   << rep->private_data.size() << " bytes of private data"
                                   << (rep->private_data.empty() ? "" : " \"" + printable(rep->private_data) + "\"")
                                   << "); closing the TCP connection");
        abandon(conn);
        finish(conn, pc, cmd_status::connection_refused, n);
        return;
    }
    if (pc.reply_private_data_back) reply_private_data_to_host(conn, pc, *rep);
    if (!rep->private_data.empty()) {
        FW_LOG(info, "connection " << conn << ": MPA Reply accepts with " << rep->private_data.size()
                                   << " bytes of private data \"" << printable(rep->private_data) << "\"");
    }
    mpa_mode mode;
    mode.tx_markers = rep->marker;  // the responder's M: it wants markers in what it receives
    mode.rx_markers = pol.want_markers;
    mode.pack_fpdus = pol.pack_marker_fpdus;
    mode.crc = pol.want_crc || rep->crc;  // CRC if either side asked (RFC 5044 §7.1.2)
    mode.max_ulpdu = mpa::max_ulpdu(hal_.tcp_effective_mss(conn), mode.tx_markers);
    hal_.full_operation(conn, mode, len);
    // RFC 6581 §9: our IRD/ORD follow the Reply's; without revision 2 nothing was negotiated and
    // the application's own limits apply. In the peer-to-peer model the RTR goes first.
    const initiator_outcome out = conclude_reply(pc.sent, *rep, policy_for(pc));
    stream_start st;
    st.conn = conn;
    st.max_ulpdu = mode.max_ulpdu;
    st.negotiated = pc.sent.enhanced && rep->enhanced;
    st.ird = st.negotiated ? out.ird : pc.ird;
    st.ord = st.negotiated ? out.ord : pc.ord;
    st.rtr = out.rtr;
    if (!hal_.qp_connect(pc.qpn, st)) {
        abandon(conn);  // the QP cannot take the stream: nothing stays half-open
        finish(conn, pc, cmd_status::bad_state);
        return;
    }
    if (!out.ok) {
        // RFC 6581 §8/§9: the stream is in RDMA mode; a Terminate (LLP, MPA, code) ends it.
        FW_LOG(warn, "connection " << conn << ": MPA negotiation failed after the Reply: " << out.why
                                   << "; Terminate (LLP/MPA code " << static_cast<int>(out.terminate_code) << ") sent");
        hal_.terminate_stream(conn, out.terminate_code);
        finish(conn, pc, cmd_status::mpa_negotiation_failed);
        return;
    }
    if (out.rtr != rtr_kind::none) {
        FW_LOG(info, "connection " << conn << ": peer-to-peer, RTR is a " << to_string(out.rtr));
    }
    if (!out.warning.empty()) FW_LOG(warn, "connection " << conn << ": " << out.warning);
    finish(conn, pc, cmd_status::ok);
}

void firmware::responder_got_request(std::uint32_t conn, pending_connection& pc) {
    const std::vector<std::uint8_t>& bytes = hal_.startup_bytes(conn);
    const std::size_t len = mpa::request_reply_length(bytes.data(), bytes.size());
    std::string error;
    const auto req = mpa::decode(bytes.data(), len, &error);
    if (!req || !req->request) {
        FW_LOG(warn, "connection " << conn << ": bad MPA Request: " << (req ? "a Reply instead of a Request" : error)
                                   << "; closing the TCP connection");
        abandon(conn);
        finish(conn, pc, cmd_status::mpa_negotiation_failed);
        return;
    }
    const mpa_policy& pol = hal_.policy();
    if (!req->private_data.empty()) {
        FW_LOG(info, "connection " << conn << ": MPA Request with " << req->private_data.size()
                                   << " bytes of private data \"" << printable(req->private_data) << "\"");
    }
    const responder_outcome out = answer_request(*req, policy_for(pc));
    mpa::request_reply rep = out.reply;
    rep.private_data = pc.private_data;  // the accept's (RFC 5044 §7.1.4), or the reject's below
    hal_.consume_cycles(costs_.mpa_frame);
    if (pc.reject) {
        // RFC 5044 §7.1.5: R = 1 refuses the connection; the private data says why (RFC 6581 §5:
        // after the IRD/ORD word). The stream never enters RDMA mode; TCP closes after the Reply.
        rep.reject = true;
        rep.private_data = pc.private_data;
        hal_.send_startup(conn, mpa::encode(rep));
        abandon(conn);
        ++rejected_;
        FW_LOG(info, "connection " << conn << ": MPA Request rejected (R = 1, " << pc.private_data.size()
                                   << " bytes of private data)");
        complete(pc.cmd_slot, cmd_status::ok, conn);
        by_conn_.erase(conn);
        return;
    }
    hal_.send_startup(conn, mpa::encode(rep));
    mpa_mode mode;
    mode.tx_markers = req->marker;
    mode.rx_markers = pol.want_markers;
    mode.pack_fpdus = pol.pack_marker_fpdus;
    mode.crc = rep.crc;
    mode.max_ulpdu = mpa::max_ulpdu(hal_.tcp_effective_mss(conn), mode.tx_markers);
    hal_.full_operation(conn, mode, len);
    stream_start st;
    st.conn = conn;
    st.max_ulpdu = mode.max_ulpdu;
    st.negotiated = rep.enhanced;
    st.ird = st.negotiated ? out.ird : pc.ird;
    st.ord = st.negotiated ? out.ord : pc.ord;
    st.responder = true;
    if (out.expect_rtr) FW_LOG(info, "connection " << conn << ": peer-to-peer, waiting for the initiator's RTR");
    if (!hal_.qp_connect(pc.qpn, st)) {
        abandon(conn);
        finish(conn, pc, cmd_status::bad_state);
        return;
    }
    finish(conn, pc, cmd_status::ok);
}

negotiation_policy firmware::policy_for(const pending_connection& pc) const {
    const mpa_policy& pol = hal_.policy();
    negotiation_policy n;
    n.revision = pol.revision;
    n.markers = pol.want_markers;
    n.crc = pol.want_crc;
    n.ird = pc.ird != 0 ? pc.ird : pol.ird;
    n.ord = pc.ord != 0 ? pc.ord : pol.ord;
    n.max_ird = pol.max_ird;
    n.max_ord = pol.max_ord;
    n.peer_to_peer = pc.peer_to_peer;
    n.rtr_types = pol.rtr_types;
    return n;
}

void firmware::finish(std::uint32_t conn, pending_connection& pc, cmd_status status,
                      std::optional<std::uint32_t> result) {
    if (status == cmd_status::ok) {
        ++established_;
        FW_LOG(info, "connection " << conn << ": QP " << pc.qpn << " in RTS");
    } else {
        ++failed_;
    }
    complete(pc.cmd_slot, status, result ? *result : status == cmd_status::ok ? conn : 0);
    by_conn_.erase(conn);
}

void firmware::on_reset() {
    // CTRL.RESET (docs/device.md): the register file is back at its reset values; the firmware's
    // own state goes now, before any command of the driver that follows (events are in order):
    // the command ring index, the connections it holds (closed), the accepts waiting, then every
    // QP, CQ and memory region of the RDMA engine. New objects are numbered from 0 again.
    hal_.consume_cycles(costs_.command);
    const std::size_t held = by_conn_.size() + backlog_.size(), waiting = accepts_.size();
    for (const auto& held_conn : by_conn_) abandon(held_conn.first);
    for (const auto& waiting_peer : backlog_) abandon(waiting_peer.second.conn);
    by_conn_.clear();
    backlog_.clear();
    accepts_.clear();
    consumer_ = 0;
    ring_base_ = 0;
    ring_entries_ = 0;
    hal_.reset_contexts();
    hal_.reg_write(regmap::CMDQ_CONS, 0);
    FW_LOG(info,
           "device reset: command ring index 0; " << held << " connections closed, " << waiting << " accepts dropped");
}

void firmware::abandon(std::uint32_t conn) {
    hal_.tcp_close(conn);
    hal_.tcp_release(conn);
}

void firmware::on_connection_lost(std::uint32_t conn, const char* why) {
    hal_.consume_cycles(costs_.event);
    hal_.stream_failed(conn, why);
    for (auto b = backlog_.begin(); b != backlog_.end(); ++b) {
        if (b->second.conn == conn) {
            // Lost before any accept took it (the peer gave up): close our half too.
            FW_LOG(info, "connection " << conn << " on port " << b->first << " left the backlog: " << why);
            backlog_.erase(b);
            abandon(conn);
            break;
        }
    }
    auto it = by_conn_.find(conn);
    if (it == by_conn_.end()) return;
    FW_LOG(warn, "connection " << conn << " lost during negotiation: " << why);
    abandon(conn);  // our half too (the peer's FIN left it in CLOSE-WAIT)
    finish(conn, it->second, cmd_status::connection_refused);
}

bool firmware::request_arrived(std::uint32_t conn) const {
    const std::vector<std::uint8_t>& bytes = hal_.startup_bytes(conn);
    const std::size_t need = hal_.policy().vitcp ? proto::vitcp_ce::ce_segment_length(bytes.data(), bytes.size())
                                                 : mpa::request_reply_length(bytes.data(), bytes.size());
    return need != 0 && bytes.size() >= need;
}

void firmware::on_timer() {
    const std::uint64_t now = hal_.now_ps();
    for (auto b = backlog_.begin(); b != backlog_.end();) {
        auto next = std::next(b);
        if (b->second.deadline_ps <= now) {
            if (request_arrived(b->second.conn)) {
                b->second.deadline_ps = std::numeric_limits<std::uint64_t>::max();  // waits for an accept
            } else {
                FW_LOG(warn, "connection " << b->second.conn << " on port " << b->first
                                           << ": no MPA Request in time; closing it (listen backlog)");
                abandon(b->second.conn);
                backlog_.erase(b);
            }
        }
        b = next;
    }
    for (auto it = by_conn_.begin(); it != by_conn_.end();) {
        auto next = std::next(it);
        if (it->second.deadline_ps <= now) {
            FW_LOG(warn, "connection " << it->first << ": MPA negotiation timed out");
            hal_.stream_failed(it->first, "negotiation timeout");
            abandon(it->first);
            pending_connection pc = it->second;
            finish(it->first, pc, cmd_status::connection_timeout);
        }
        it = next;
    }
    arm_next_timer();
}

void firmware::arm_next_timer() {
    std::uint64_t next = std::numeric_limits<std::uint64_t>::max();
    for (const auto& [conn, pc] : by_conn_) next = pc.deadline_ps < next ? pc.deadline_ps : next;
    for (const auto& [port, b] : backlog_) next = b.deadline_ps < next ? b.deadline_ps : next;
    if (next != std::numeric_limits<std::uint64_t>::max()) hal_.arm_timer(next);
}

}  // namespace rnic::fw
