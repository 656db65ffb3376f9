// The passive side for a connection manager that sees a peer before it has a QP for it (the Linux
// RDMA core's IW_CM_EVENT_CONNECT_REQUEST): next_peer reports each listen-backlog peer whose MPA
// Request has arrived, once, with a handle; accept and reject name that handle. Private data of an
// MPA Reply goes back to a connect that asked for it. docs/architecture.md, "The passive side for
// connection managers".
#include <algorithm>
#include <limits>

#include "core/log.h"
#include "firmware/firmware.h"
#include "proto/bytes.h"
#include "proto/mpa.h"

#define FW_LOG(lvl, expr) RNIC_LOG_AT(lvl, fw, hal_.now_ps(), hal_.name(), expr)

namespace rnic::fw {

namespace mpa = proto::mpa;
using regmap::cmd_status;

void firmware::take_named_peer(std::uint32_t handle, pending_connection pc) {
    for (auto b = backlog_.begin(); b != backlog_.end(); ++b) {
        if (b->second.handle != handle) continue;
        if (b->first != pc.port) {
            FW_LOG(warn, "command " << pc.cmd_slot << ": peer " << handle << " waits on port " << b->first
                                    << ", not on port " << pc.port);
            complete(pc.cmd_slot, cmd_status::bad_handle, 0);
            return;
        }
        const std::uint32_t conn = b->second.conn;
        backlog_.erase(b);
        claim(conn, pc);
        return;
    }
    // Never reported, already answered, or the peer left (on_connection_lost took it out).
    FW_LOG(warn, "command " << pc.cmd_slot << ": no peer " << handle << " waits (it left, or was answered)");
    complete(pc.cmd_slot, cmd_status::bad_handle, 0);
}

void firmware::next_peer(std::uint32_t slot, const std::uint64_t* p) {
    const auto port = static_cast<std::uint16_t>(p[1]);
    if (p[1] > 0xffff || p[4] == 0 || p[5] < regmap::kPeerRecordSize) {
        FW_LOG(warn, "command " << slot << ": next_peer needs a port (0: any) and a buffer of at least "
                                << regmap::kPeerRecordSize << " bytes (p4 0x" << std::hex << p[4] << std::dec << ", p5 "
                                << p[5] << ")");
        complete(slot, cmd_status::bad_parameter, 0);
        return;
    }
    if (hal_.policy().vitcp) {
        FW_LOG(warn, "command " << slot << ": next_peer reports MPA Requests; this device runs VI/TCP");
        complete(slot, cmd_status::bad_state, 0);
        return;
    }
    for (;;) {
        // The oldest (lowest handle) unreported peer whose Request is in, on the port or any port.
        auto found = backlog_.end();
        for (auto b = backlog_.begin(); b != backlog_.end(); ++b) {
            if (b->second.reported || (port != 0 && b->first != port) || !request_arrived(b->second.conn)) continue;
            if (found == backlog_.end() || b->second.handle < found->second.handle) found = b;
        }
        if (found == backlog_.end()) {
            complete(slot, cmd_status::ok, 0);
            return;
        }
        const std::uint32_t conn = found->second.conn;
        const std::vector<std::uint8_t>& bytes = hal_.startup_bytes(conn);
        std::string error;
        hal_.consume_cycles(costs_.mpa_frame);
        const auto req = mpa::decode(bytes.data(), mpa::request_reply_length(bytes.data(), bytes.size()), &error);
        if (!req || !req->request) {
            // Nobody could accept it (responder_got_request would refuse it too): close it now.
            FW_LOG(warn, "connection " << conn << " on port " << found->first
                                       << ": bad MPA Request: " << (req ? "a Reply instead of a Request" : error)
                                       << "; closing it (listen backlog)");
            abandon(conn);
            backlog_.erase(found);
            continue;
        }
        const connection_addresses a = hal_.tcp_addresses(conn);
        std::uint8_t rec[regmap::kPeerRecordSize] = {};
        namespace off = regmap::peer_off;
        proto::put_le32(rec + off::handle, found->second.handle);
        proto::put_le32(rec + off::local_ip, a.local_ip);
        proto::put_le32(rec + off::remote_ip, a.remote_ip);
        proto::put_le16(rec + off::local_port, found->first);
        proto::put_le16(rec + off::remote_port, a.remote_port);
        rec[off::revision] = req->revision;
        namespace fl = regmap::peer_flags;
        rec[off::flags] =
            static_cast<std::uint8_t>((req->marker ? fl::marker : 0) | (req->crc ? fl::crc : 0) |
                                      (req->enhanced ? fl::enhanced : 0) | (req->peer_to_peer ? fl::peer_to_peer : 0));
        proto::put_le16(rec + off::pd_length, static_cast<std::uint16_t>(req->private_data.size()));
        proto::put_le16(rec + off::ird, req->enhanced ? req->ird : 0);
        proto::put_le16(rec + off::ord, req->enhanced ? req->ord : 0);
        const std::size_t pd = std::min<std::uint64_t>(req->private_data.size(), p[5] - regmap::kPeerRecordSize);
        if (!hal_.dma_write(p[4], rec, sizeof rec) ||
            (pd != 0 && !hal_.dma_write(p[4] + regmap::kPeerRecordSize, req->private_data.data(), pd))) {
            FW_LOG(warn, "command " << slot << ": next_peer buffer at 0x" << std::hex << p[4] << std::dec
                                    << " not writable; the peer stays unreported");
            complete(slot, cmd_status::bad_parameter, 0);
            return;
        }
        found->second.reported = true;
        FW_LOG(info, "connection " << conn << " on port " << found->first << " reported as peer "
                                   << found->second.handle << " (" << req->private_data.size()
                                   << " bytes of private data)");
        complete(slot, cmd_status::ok, 1);
        return;
    }
}

void firmware::unlisten(std::uint32_t slot, const std::uint64_t* p) {
    const auto port = static_cast<std::uint16_t>(p[1]);
    if (port == 0 || p[1] > 0xffff) {
        complete(slot, cmd_status::bad_parameter, 0);
        return;
    }
    if (!hal_.tcp_unlisten(port)) {
        FW_LOG(warn, "command " << slot << ": unlisten of port " << port << ", which is not listening");
        complete(slot, cmd_status::not_listening, 0);
        return;
    }
    // The backlog's peers were the listener's: nobody can take them any more, so each is reset (a
    // reset, not a FIN: the peer must not take the connection for one that may still be accepted).
    // Released first, so that the TCP engine frees it without reporting its close back here.
    std::uint32_t reset = 0;
    for (auto [b, end] = backlog_.equal_range(port); b != end;) {
        const std::uint32_t conn = b->second.conn;
        b = backlog_.erase(b);
        hal_.tcp_release(conn);
        hal_.tcp_abort(conn);
        ++reset;
    }
    // Accepts and rejects still waiting for a peer on the port would wait for ever.
    for (auto [a, end] = accepts_.equal_range(port); a != end;) {
        FW_LOG(info, "command " << a->second.cmd_slot << ": port " << port << " stopped listening");
        complete(a->second.cmd_slot, cmd_status::not_listening, 0);
        a = accepts_.erase(a);
    }
    FW_LOG(info, "port " << port << ": no longer listening; " << reset << " backlog peers reset");
    complete(slot, cmd_status::ok, reset);
}

std::uint32_t firmware::reply_private_data_to_host(std::uint32_t conn, const pending_connection& pc,
                                                   const mpa::request_reply& reply) {
    return answer_to_host(conn, pc, reply.private_data.data(), reply.private_data.size());
}

std::uint32_t firmware::answer_to_host(std::uint32_t conn, const pending_connection& pc, const std::uint8_t* data,
                                       std::size_t size) {
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(size, pc.reject_buf_len));
    if (n > 0 && !hal_.dma_write(pc.reject_buf, data, n)) {
        FW_LOG(error, "connection " << conn << ": cannot write the Reply's private data to the host");
    }
    if (pc.reply_private_data_back) {
        std::uint8_t len[8];
        proto::put_le64(len, size);
        if (!hal_.dma_write(ring_addr(pc.cmd_slot) + regmap::cmd_off::param + 8 * 5, len, sizeof len)) {
            FW_LOG(error, "connection " << conn << ": cannot write the Reply's private-data length to command "
                                        << pc.cmd_slot);
        }
    }
    return n;
}

}  // namespace rnic::fw
