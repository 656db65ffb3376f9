// VI/TCP connection establishment in the firmware (seed 003 §4): where an iWARP connection
// exchanges the MPA Request and Reply, a VI/TCP connection exchanges ConnectRequest and
// ConnectAccept (or ConnectReject / ConnectNoMatch). The rules are proto::vitcp_ce's state
// machines; here they meet the HAL: start-up bytes, the switch to full operation, the QP.
#include <algorithm>

#include "core/log.h"
#include "firmware/firmware.h"
#include "proto/seeds/vitcp_ddp.h"

#define FW_LOG(lvl, expr) RNIC_LOG_AT(lvl, fw, hal_.now_ps(), hal_.name(), expr)

namespace rnic::fw {

namespace ce = proto::vitcp_ce;
using regmap::cmd_status;

namespace {
std::string bytes_count(std::size_t n) {
    return std::to_string(n) + " bytes";
}
}  // namespace

void firmware::vitcp_send_request(std::uint32_t conn, pending_connection& pc, std::uint16_t local_port) {
    // §4.2: Connecting -> (TCP connection established) ConnectRequest -> Pending Accept.
    pc.vi_active = std::make_shared<ce::active>(hal_.policy().vitcp_proposal, local_port, pc.remote_port);
    pc.vi_active->connect_request();
    // Test mode (rnic.vitcp.raw_connect_requests): the driver built the ConnectRequest itself.
    const std::vector<std::uint8_t> request =
        pc.raw_request ? pc.vi_active->tcp_established(pc.private_data) : pc.vi_active->tcp_established();
    hal_.consume_cycles(costs_.mpa_frame);
    hal_.send_startup(conn, request);
    pc.request_sent = true;
    FW_LOG(debug, "connection " << conn << ": VI/TCP ConnectRequest sent (" << bytes_count(request.size())
                                << ", discriminator port " << pc.remote_port << ")");
}

void firmware::vitcp_startup_bytes(std::uint32_t conn, pending_connection& pc) {
    const std::vector<std::uint8_t>& bytes = hal_.startup_bytes(conn);
    const std::size_t need = ce::ce_segment_length(bytes.data(), bytes.size());
    if (need == 0 || bytes.size() < need) return;  // wait for the rest of the CE segment
    hal_.consume_cycles(costs_.mpa_frame);
    if (pc.r == role::initiator) {
        vitcp_active_answer(conn, pc);
    } else {
        vitcp_passive_request(conn, pc);
    }
}

void firmware::vitcp_active_answer(std::uint32_t conn, pending_connection& pc) {
    if (!pc.vi_active) return;  // bytes before our ConnectRequest went out: not an answer yet
    const std::vector<std::uint8_t>& bytes = hal_.startup_bytes(conn);
    ce::active& a = *pc.vi_active;
    switch (a.on_bytes(bytes.data(), bytes.size())) {
    case ce::active::result::need_more:
        return;
    case ce::active::result::connected: {
        const ce::agreement agreed = a.agreed();
        vitcp_start_stream(conn, pc, agreed, a.consumed());
        return;
    }
    case ce::active::result::rejected:
    case ce::active::result::no_match: {
        // §4.2: Pending Accept -> Disconnected, close the TCP connection. The answer goes to
        // the connect's buffer when it asked for the peer's (kConnectPrivateData): a VI/TCP
        // refusal has no private data, the segment itself says why (IS Error Code).
        FW_LOG(warn, "connection " << conn << ": the peer refused the VI connection: " << a.why()
                                   << "; closing the TCP connection");
        const std::uint32_t n = pc.reply_private_data_back ? answer_to_host(conn, pc, bytes.data(), a.consumed()) : 0;
        abandon(conn);
        finish(conn, pc, cmd_status::connection_refused, n);
        return;
    }
    case ce::active::result::protocol_error:
        FW_LOG(warn, "connection " << conn << ": " << a.why() << "; closing the TCP connection");
        abandon(conn);
        finish(conn, pc, cmd_status::mpa_negotiation_failed);
        return;
    }
}

void firmware::vitcp_passive_request(std::uint32_t conn, pending_connection& pc) {
    const std::vector<std::uint8_t>& bytes = hal_.startup_bytes(conn);
    ce::passive p(pc.port);  // §4.3 Incoming: the state lives in the bytes until they are whole
    p.tcp_accepted();
    const ce::passive::result got = p.on_bytes(bytes.data(), bytes.size());
    if (got == ce::passive::result::invalid) {
        // Not a valid ConnectRequest: refused with its reason (vitcp_ce.h), then TCP closes.
        hal_.send_startup(conn, p.refuse());
        FW_LOG(warn, "connection " << conn << ": ConnectReject sent (" << ce::to_string(p.reason()) << "): " << p.why()
                                   << "; closing the TCP connection");
        abandon(conn);
        ++rejected_;
        finish(conn, pc, cmd_status::mpa_negotiation_failed);
        return;
    }
    if (got != ce::passive::result::request) {
        FW_LOG(warn, "connection " << conn << ": " << p.why() << "; closing the TCP connection");
        abandon(conn);
        finish(conn, pc, cmd_status::mpa_negotiation_failed);
        return;
    }
    if (!p.discriminator_matches()) {
        // §4.3 Matching: "No Matching Discriminator - Send Connect NoMatch; close TCP connection".
        // The accept waiting on this port is not this peer's: it waits for the next one.
        hal_.send_startup(conn, p.no_match());
        abandon(conn);
        FW_LOG(warn, "connection " << conn << " on port " << pc.port
                                   << ": ConnectRequest for another discriminator; ConnectNoMatch sent");
        pending_connection again = pc;
        by_conn_.erase(conn);
        wait_for_peer(again);
        return;
    }
    if (pc.reject) {
        // VipConnectReject (§4.3 Pending Accept): ConnectReject, close TCP.
        hal_.send_startup(conn, p.reject(ce::refusal::consumer_rejected));
        abandon(conn);
        ++rejected_;
        FW_LOG(info, "connection " << conn << ": VI ConnectRequest rejected (ConnectReject)");
        complete(pc.cmd_slot, cmd_status::ok, conn);
        by_conn_.erase(conn);
        return;
    }
    ce::proposal us = hal_.policy().vitcp_proposal;
    const std::vector<std::uint8_t> answer = p.accept(us);
    hal_.consume_cycles(costs_.mpa_frame);
    hal_.send_startup(conn, answer);
    if (p.current() != ce::passive::state::connected) {
        FW_LOG(warn, "connection " << conn << ": ConnectReject sent: " << p.why() << "; closing the TCP connection");
        abandon(conn);
        ++rejected_;
        finish(conn, pc, cmd_status::mpa_negotiation_failed);
        return;
    }
    vitcp_start_stream(conn, pc, p.agreed(), p.consumed());
}

void firmware::vitcp_start_stream(std::uint32_t conn, pending_connection& pc, const ce::agreement& agreed,
                                  std::size_t consumed) {
    const mpa_policy& pol = hal_.policy();
    mpa_mode mode{};
    mode.tx_markers = mode.rx_markers = false;
    mode.crc = agreed.crc;
    // One VI segment per TCP segment (§2.2.2.2.3): the largest ULPDU whose segment fits the EMSS.
    const std::size_t emss = hal_.tcp_effective_mss(conn);
    const std::size_t added = proto::vitcp_map::kMaxAdded - (agreed.crc ? 0 : proto::vitcp::kTrailerSize);
    mode.max_ulpdu = emss > added ? emss - added : 0;
    mode.read_window = agreed.rdma_read_window;
    mode.urgent_marks = agreed.may_mark_urgent;
    mode.unreliable = agreed.level == ce::reliability::unreliable;  // §3.7: only once the peer's option was received
    // §3.2: at Reliable Reception both ends acknowledge placed messages and complete send
    // descriptors on the peer's Message ACK.
    mode.reliable_reception = agreed.level == ce::reliability::reliable_reception;
    hal_.full_operation(conn, mode, consumed);
    // §2.2.2.2.6: the window is the per-VI limit of outstanding RDMA Reads, both ways.
    stream_start st;
    st.conn = conn;
    st.max_ulpdu = mode.max_ulpdu;
    st.negotiated = true;
    st.ird = std::min<std::uint32_t>(agreed.rdma_read_window, pol.max_ird);
    st.ord = std::min<std::uint32_t>(agreed.rdma_read_window, pol.max_ord);
    st.responder = false;  // the ConnectAccept orders the two ends; no MPA hold (RFC 5044 §7.1.2)
    st.peer_acknowledges = mode.reliable_reception;
    FW_LOG(info, "connection " << conn << ": VI/TCP connected (" << ce::to_string(agreed.level) << ", MTU "
                               << agreed.mtu << ", RDMA Read Window " << agreed.rdma_read_window << ", CRC "
                               << (agreed.crc ? "on" : "off") << ", MULPDU " << mode.max_ulpdu << ")");
    if (!hal_.qp_connect(pc.qpn, st)) {
        abandon(conn);
        finish(conn, pc, cmd_status::bad_state);
        return;
    }
    finish(conn, pc, cmd_status::ok);
}

}  // namespace rnic::fw
