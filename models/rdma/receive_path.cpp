#include "rdma/receive_path.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/mem_access.h"
#include "core/sim_log.h"
#include "dma/dma_ext.h"
#include "proto/bytes.h"
#include "rdma/access_checks.h"
#include "rdma/completions.h"
#include "rdma/qp_lifecycle.h"
#include "rdma/region_dma.h"
#include "rdma/responder.h"

namespace rnic {

namespace ddp = proto::ddp;
using proto::get_le32;
using proto::get_le64;
using proto::put_le64;
using qp_state = regmap::qp_state;

namespace {
// The oldest Read or atomic still waiting for its response: responses come in request order.
pending_completion* oldest_unanswered(qp_context& qp) {
    for (pending_completion& p : qp.pending) {
        if (!p.done) return &p;
    }
    return nullptr;
}
}  // namespace

receive_path::receive_path(const engine_resources& res, completion_unit& completions, qp_lifecycle& lifecycle,
                           responder& requests)
    : engine_part(res), completions_(completions), lifecycle_(lifecycle), requests_(requests) {}

void receive_path::receive(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    stream_ext* ext = get_stream_ext(gp);
    const placement_ext* where = find_ext<placement_ext>(gp);
    rx_placement_ = where;
    const bool already_placed = where != nullptr && where->already_placed;
    const int qpn = ext != nullptr ? res_.contexts->qpn_of_connection(ext->conn) : -1;
    if (qpn < 0) {
        ++counters().rx_dropped;
        return;
    }
    qp_context& qp = *res_.contexts->qp(static_cast<std::uint32_t>(qpn));
    res_.rx_pipe.reserve_lt(delay, cycles_time(params().cycles_per_segment, params().clock_hz));
    res_.contexts->access_qp(static_cast<std::uint32_t>(qpn), true, context_if::side::rx, delay, &res_.rx_pipe);
    if (ext->kind == stream_kind::out_of_order) {
        const bool placed = place_out_of_order(qp, gp.get_data_ptr(), gp.get_data_length(), delay);
        gp.set_response_status(placed ? tlm::TLM_OK_RESPONSE : tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    ++counters().rx_segments;
    const std::uint8_t* ulpdu = gp.get_data_ptr();
    const std::size_t len = gp.get_data_length();
    std::string error;
    const auto h = ddp::decode_header(ulpdu, len, &error);
    if (qp.state != qp_state::rts && qp.state != qp_state::closing) {
        ++counters().rx_dropped;  // after Terminate nothing more is placed (RFC 5040 §6.2)
        return;
    }
    const auto fail = [&](ddp::term_layer layer, std::uint8_t etype, std::uint8_t code) {
        send_terminate(static_cast<std::uint32_t>(qpn), qp, layer, etype, code, ulpdu, len, delay);
        lifecycle_.enter_error(static_cast<std::uint32_t>(qpn), qp, delay);
    };
    if (!h) {
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": " << error);
        fail(ddp::term_layer::llp, ddp::term::kLlpMpa, ddp::term::kMpaMarkerLengthMismatch);
        return;
    }
    if (h->ddp_version != 1) {
        // RFC 5041 §7.2: invalid DDP version, reported in the buffer model the segment claims.
        fail(ddp::term_layer::ddp, h->tagged ? ddp::term::kDdpTaggedBuffer : ddp::term::kDdpUntaggedBuffer,
             h->tagged ? ddp::term::kDdpTaggedInvalidVersion : ddp::term::kDdpUntaggedInvalidVersion);
        return;
    }
    if (h->rdmap_version != 1) {
        fail(ddp::term_layer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaInvalidVersion);
        return;
    }
    if (qp.hold_tx) {
        // The initiator's first FPDU (its RTR, or its first message): the responder may send now
        // (RFC 5044 §7.1.2 rule 4, RFC 6581 §5).
        qp.hold_tx = false;
        if (qp.sq_producer != qp.sq_consumer || !qp.sq_doorbells.empty()) ++counters().tx_held;
        res_.work_event.notify(delay);
    }
    const std::uint32_t n = static_cast<std::uint32_t>(qpn);
    if (h->opcode == ddp::opcode::terminate && !h->tagged) {
        terminate_received(n, qp, ulpdu, len, delay);
        return;
    }
    const bool in_error = where != nullptr && where->in_error;
    if (in_error && h->tagged && h->opcode == ddp::opcode::rdma_write) {
        // A Write in a message in error that the connection survives (VI/TCP Unreliable Delivery,
        // seed 003 §3.6 option 2): no descriptor could tell the consumer its data is bad, so none
        // of it is placed (vitcp_errors.h).
        ++counters().messages_in_error;
        ++counters().messages_in_error_dropped;
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": RDMA Write segment of a message in error dropped");
        return;
    }
    if (h->tagged && h->opcode == ddp::opcode::rdma_write) {
        if (already_placed) {
            // Its payload went to host memory when the segment arrived out of order; in order now,
            // only the (ordered) rest of the processing remains (RFC 5041 §5: placement may be out
            // of order, delivery is not).
            ++counters().rx_already_placed;
            return;
        }
        place_tagged(n, qp, *h, ulpdu, len, delay);
        return;
    }
    if (!h->tagged && (h->opcode == ddp::opcode::atomic_request || h->opcode == ddp::opcode::read_request)) {
        take_request(n, qp, *h, ulpdu, len, delay);
        return;
    }
    if (!h->tagged && h->opcode == ddp::opcode::atomic_response) {
        complete_atomic(n, qp, *h, ulpdu, len, delay);
        return;
    }
    if (h->tagged && h->opcode == ddp::opcode::read_response) {
        place_read_response(n, qp, *h, ulpdu, len, already_placed, delay);
        return;
    }
    const bool is_send = h->opcode == ddp::opcode::send || h->opcode == ddp::opcode::send_se ||
                         h->opcode == ddp::opcode::send_invalidate || h->opcode == ddp::opcode::send_se_invalidate ||
                         h->opcode == ddp::opcode::immediate || h->opcode == ddp::opcode::immediate_se;
    if (!h->tagged && is_send) {
        place_send(n, qp, *h, ulpdu, len, in_error, delay);
        return;
    }
    // A reserved opcode, or a known one in the wrong buffer model (RFC 5040 §7.2 "Unexpected OpCode").
    ++counters().protection_errors;
    RNIC_MLOG_D(warn, rdma, delay,
                "QP " << qpn << ": unexpected or unsupported opcode " << ddp::to_string(h->opcode)
                      << (h->tagged ? " (tagged)" : " (untagged)"));
    fail(ddp::term_layer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaUnexpectedOpcode);
}

void receive_path::terminate_received(std::uint32_t qpn, qp_context& qp, const std::uint8_t* ulpdu, std::size_t len,
                                      sc_core::sc_time& delay) {
    ++counters().terminates_received;
    std::string error;
    const auto t = ddp::decode_terminate(ulpdu + ddp::kUntaggedHeaderSize, len - ddp::kUntaggedHeaderSize, &error);
    if (t && !qp.term.valid) {
        qp.term = {true, true, t->layer, t->etype, t->code};
    }
    RNIC_MLOG_D(warn, rdma, delay,
                "QP " << qpn << ": Terminate received from the peer (layer " << (t ? static_cast<int>(t->layer) : -1)
                      << ", type " << (t ? static_cast<int>(t->etype) : -1) << ", code "
                      << (t ? static_cast<int>(t->code) : -1) << "); QP to Error");
    // RFC 5040 §5.4: a Terminate is the last message of the stream; the receiver moves to Error.
    qp.state = qp_state::terminate;
    lifecycle_.enter_error(qpn, qp, delay);
}

// ---- placement -------------------------------------------------------------------------------

void receive_path::place_tagged(std::uint32_t qpn, qp_context& qp, const ddp::header& h, const std::uint8_t* ulpdu,
                                std::size_t len, sc_core::sc_time& delay) {
    const std::size_t payload = len - ddp::kTaggedHeaderSize;
    // RFC 5041 §5.2: the STag and TO of a zero-length tagged message are not checked (an RTR, RFC 6581).
    if (payload == 0 && h.last) return;
    res_.contexts->access_stag(h.stag, false, context_if::side::rx, delay, &res_.rx_pipe);
    const access_check chk = check_tagged_access(res_.contexts->lookup_stag(h.stag), qp.cfg.pd, h.tagged_offset,
                                                 payload, regmap::mr_access::remote_write);
    if (!chk.ok) {
        ++counters().protection_errors;
        RNIC_MLOG_D(warn, rdma, delay,
                    "QP " << qpn << ": RDMA Write to STag 0x" << std::hex << h.stag << " TO 0x" << h.tagged_offset
                          << std::dec << " length " << payload << ": " << chk.what);
        if (res_.frames.connection_survives(qp.conn, rx_message_error::protection)) {
            // VI/TCP Unreliable Delivery: the Write is dropped, the connection goes on (vitcp_errors.h).
            ++counters().messages_in_error;
            ++counters().messages_in_error_dropped;
            return;
        }
        send_terminate(qpn, qp, chk.layer, chk.etype, chk.code, ulpdu, len, delay);
        lifecycle_.enter_error(qpn, qp, delay);
        return;
    }
    if (payload > 0 && place_in_region(chk.map, chk.region_off, ulpdu + ddp::kTaggedHeaderSize, payload,
                                       ddp::kTaggedHeaderSize, delay) != tlm::TLM_OK_RESPONSE) {
        // The region was registered but the host refused the DMA: a local catastrophic error.
        send_terminate(qpn, qp, ddp::term_layer::rdma, ddp::term::kRdmaLocalCatastrophic,
                       ddp::term::kRdmaCatastrophicStream, ulpdu, len, delay);
        lifecycle_.enter_error(qpn, qp, delay);
        return;
    }
    counters().placed_bytes += payload;
}

bool receive_path::place_out_of_order(const qp_context& qp, const std::uint8_t* ulpdu, std::size_t len,
                                      sc_core::sc_time& delay) {
    // Only what is safe to place before the stream is in order: a tagged RDMA Write whose STag,
    // protection domain, rights and bounds all check out. Anything else is refused without a
    // Terminate: the in-order path will see the same bytes and judge them (or they were not an FPDU).
    if (qp.state != qp_state::rts) return false;
    std::string error;
    const auto h = ddp::decode_header(ulpdu, len, &error);
    if (!h || !h->tagged || h->opcode != ddp::opcode::rdma_write || h->ddp_version != 1 || h->rdmap_version != 1) {
        return false;
    }
    const std::size_t payload = len - ddp::kTaggedHeaderSize;
    res_.contexts->access_stag(h->stag, false, context_if::side::rx, delay, &res_.rx_pipe);
    const access_check chk = check_tagged_access(res_.contexts->lookup_stag(h->stag), qp.cfg.pd, h->tagged_offset,
                                                 payload, regmap::mr_access::remote_write);
    if (!chk.ok) return false;
    if (payload > 0 && place_in_region(chk.map, chk.region_off, ulpdu + ddp::kTaggedHeaderSize, payload,
                                       ddp::kTaggedHeaderSize, delay) != tlm::TLM_OK_RESPONSE) {
        return false;
    }
    counters().placed_bytes += payload;
    counters().placed_out_of_order_bytes += payload;
    return true;
}

tlm::tlm_response_status receive_path::place_payload(std::uint64_t host_addr, const std::uint8_t* payload,
                                                     std::size_t len, std::size_t header_len, sc_core::sc_time& delay) {
    // When the payload crossed the wire with framing bytes between its bytes (MPA Markers), the
    // framing says where, so that a marker-fragmenting DMA (seed 001 §6) pays one transfer per run.
    dma_ext ext;
    // Only where the frame sat matters to the breaks, not whether it carried a CRC.
    if (rx_placement_ == nullptr ||
        !res_.frames.placement_breaks({rx_placement_->markers, false}, rx_placement_->frame_pos, header_len, len,
                                      &ext.marker_breaks)) {
        return mem_write(res_.dma_out, host_addr, payload, len, delay);
    }
    return mem_transport(res_.dma_out, tlm::TLM_WRITE_COMMAND, host_addr, const_cast<std::uint8_t*>(payload), len,
                         delay, &ext);
}

tlm::tlm_response_status receive_path::place_in_region(const region_map& map, std::uint64_t off,
                                                       const std::uint8_t* payload, std::size_t len,
                                                       std::size_t header_len, sc_core::sc_time& delay) {
    if (map.contiguous(off, len)) return place_payload(map.host_addr(off), payload, len, header_len, delay);
    tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
    const bool covered = map.for_each_run(off, len, [&](std::uint64_t host, std::uint64_t n, std::uint64_t done) {
        status = place_payload(host, payload + done, static_cast<std::size_t>(n), header_len + done, delay);
        return status == tlm::TLM_OK_RESPONSE;
    });
    return covered || status != tlm::TLM_OK_RESPONSE ? status : tlm::TLM_ADDRESS_ERROR_RESPONSE;
}

void receive_path::place_send(std::uint32_t qpn, qp_context& qp, const ddp::header& h, const std::uint8_t* ulpdu,
                              std::size_t len, bool in_error, sc_core::sc_time& delay) {
    // RFC 5041 §5.3 / §7.1 untagged checks, in the order of the error codes.
    auto untagged_error = [&](std::uint8_t code, const char* what) {
        ++counters().protection_errors;
        RNIC_MLOG_D(
            warn, rdma, delay,
            "QP " << qpn << ": " << ddp::to_string(h.opcode) << " MSN " << h.msn << " MO " << h.mo << ": " << what);
        send_terminate(qpn, qp, ddp::term_layer::ddp, ddp::term::kDdpUntaggedBuffer, code, ulpdu, len, delay);
        lifecycle_.enter_error(qpn, qp, delay);
    };
    auto local_error = [&](const char* what) {
        // The receiver's own posted buffer is unusable: a local catastrophic error (RFC 5041 §7.2 type 0).
        ++counters().protection_errors;
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": Send MSN " << h.msn << ": " << what);
        send_terminate(qpn, qp, ddp::term_layer::ddp, ddp::term::kDdpLocalCatastrophic, 0, ulpdu, len, delay);
        lifecycle_.enter_error(qpn, qp, delay);
    };
    if (h.queue != ddp::kQueueSend) {
        untagged_error(ddp::term::kDdpUntaggedInvalidQn, "invalid queue number");
        return;
    }
    // A descriptor error the connection survives (VI/TCP Unreliable Delivery, vitcp_errors.h):
    // the message is dropped; `wqe` true when it had taken a receive, which completes in error.
    const bool survives_descriptor = res_.frames.connection_survives(qp.conn, rx_message_error::descriptor);
    auto drop_message = [&](const char* what, bool wqe) {
        ++counters().messages_in_error;
        ++counters().messages_in_error_dropped;
        RNIC_MLOG_D(warn, rdma, delay,
                    "QP " << qpn << ": Send MSN " << h.msn << ": " << what
                          << "; the message is dropped, the connection goes on");
        if (wqe) {
            completions_.complete_taken_receive(qpn, qp, regmap::cqe_status::local_length_error, delay);
            ++counters().recv_completions;
        }
        qp.recv_msn = h.msn;
        qp.recv_active = false;
        qp.recv_discarding = !h.last;
    };
    if (qp.recv_discarding && h.msn == qp.recv_msn) {
        ++counters().messages_in_error_dropped;  // a later segment of a message already dropped
        qp.recv_discarding = !h.last;
        return;
    }
    qp.recv_discarding = false;
    // Messages arrive in order, so the MSN must be the next one, or the current one (later segment).
    const bool continuing = qp.recv_active && h.msn == qp.recv_msn;
    if (!continuing && h.msn != qp.recv_msn + 1) {
        untagged_error(ddp::term::kDdpUntaggedInvalidMsn, "MSN out of range");
        return;
    }
    if (!continuing && h.mo != 0) {
        untagged_error(ddp::term::kDdpUntaggedInvalidMo, "a new message must start at MO 0");
        return;
    }
    const std::size_t payload = len - ddp::kUntaggedHeaderSize;
    const bool immediate = h.opcode == ddp::opcode::immediate || h.opcode == ddp::opcode::immediate_se;
    if (immediate && (continuing || !h.last || payload != ddp::kImmediateDataSize)) {
        // RFC 7306 §6.3: exactly 8 bytes of data, in one message of its own.
        ++counters().protection_errors;
        RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": Immediate Data with " << payload << " bytes");
        send_terminate(qpn, qp, ddp::term_layer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaUnspecified,
                       ulpdu, len, delay);
        lifecycle_.enter_error(qpn, qp, delay);
        return;
    }
    if (continuing && h.opcode != qp.recv_opcode) {
        untagged_error(ddp::term::kDdpUntaggedInvalidMsn, "segment of another message type under the same MSN");
        return;
    }
    if (!continuing) {
        // A new message consumes the next posted receive WQE (RFC 5040 §5.1: in posting order).
        if (qp.rq_consumer == qp.rq_producer) {
            if (survives_descriptor) {
                drop_message("no receive descriptor posted", false);
                return;
            }
            untagged_error(ddp::term::kDdpUntaggedNoBuffer, "no receive buffer posted");
            return;
        }
        const std::uint64_t addr = qp.cfg.rq_ring + (qp.rq_consumer % qp.cfg.rq_entries) * regmap::kRecvWqeSize;
        std::uint8_t rqe[regmap::kRecvWqeSize];
        if (mem_read(res_.dma_out, addr, rqe, sizeof rqe, delay) != tlm::TLM_OK_RESPONSE) {
            local_error("receive WQE not readable");
            return;
        }
        qp.recv_wr_id = get_le64(rqe + regmap::rqe_off::wr_id);
        qp.recv_addr = get_le64(rqe + regmap::rqe_off::addr);
        qp.recv_len = get_le32(rqe + regmap::rqe_off::length);
        qp.recv_stag = get_le32(rqe + regmap::rqe_off::stag);
        qp.recv_index = qp.rq_consumer++;
        qp.recv_msn = h.msn;
        qp.recv_opcode = h.opcode;
        qp.recv_active = true;
        qp.recv_bytes = 0;
        qp.recv_in_error = false;
    }
    if (in_error && !qp.recv_in_error) {
        // §3.6 option 2: "Deliver the data to the application with status indicating transport
        // error" (VI/TCP Unreliable Delivery; seed 003 §3.2 Transmit Error likewise).
        qp.recv_in_error = true;
        ++counters().messages_in_error;
    }
    cqe_fields f;
    if (immediate) {
        // The 8 bytes go to the completion, not to the buffer (RFC 7306 §6.1: passed to the ULP).
        f.imm_data = ddp::decode_immediate(ulpdu + ddp::kUntaggedHeaderSize, payload, nullptr).value_or(0);
        f.flags |= regmap::cqe_flags::imm;
        ++counters().immediates_received;
    } else {
        if (static_cast<std::uint64_t>(h.mo) + payload > qp.recv_len) {
            if (survives_descriptor) {
                drop_message("message too long for the posted receive descriptor", true);
                return;
            }
            untagged_error(ddp::term::kDdpUntaggedMessageTooLong, "message too long for the posted buffer");
            return;
        }
        const std::uint64_t dst = qp.recv_addr + h.mo;
        res_.contexts->access_stag(qp.recv_stag, false, context_if::side::rx, delay, &res_.rx_pipe);
        const mr_context* buffer = res_.contexts->lookup_stag(qp.recv_stag);
        if (!local_writable(buffer, qp.cfg.pd, dst, payload)) {
            local_error("posted receive buffer outside its memory region");
            return;
        }
        if (payload > 0 &&
            place_in_region(local_map(*buffer), local_offset(*buffer, dst), ulpdu + ddp::kUntaggedHeaderSize, payload,
                            ddp::kUntaggedHeaderSize, delay) != tlm::TLM_OK_RESPONSE) {
            local_error("host refused the receive DMA");
            return;
        }
        counters().placed_bytes += payload;
        qp.recv_bytes = std::max<std::uint64_t>(qp.recv_bytes, h.mo + payload);
    }
    if (!h.last) return;
    if (h.opcode == ddp::opcode::send_invalidate || h.opcode == ddp::opcode::send_se_invalidate) {
        // RFC 5040 §5.3: invalidate the STag if it is associated with this stream (same protection
        // domain), else Terminate with "STag cannot be invalidated".
        res_.contexts->access_stag(h.invalidate_stag, true, context_if::side::rx, delay, &res_.rx_pipe);
        const mr_context* mr = res_.contexts->lookup_stag(h.invalidate_stag);
        if (mr == nullptr || mr->cfg.pd != qp.cfg.pd) {
            ++counters().protection_errors;
            RNIC_MLOG_D(warn, rdma, delay,
                        "QP " << qpn << ": Send with Invalidate names STag 0x" << std::hex << h.invalidate_stag
                              << " which cannot be invalidated");
            send_terminate(qpn, qp, ddp::term_layer::rdma, ddp::term::kRdmaRemoteProtection,
                           ddp::term::kRdmaStagCannotInvalidate, ulpdu, len, delay);
            lifecycle_.enter_error(qpn, qp, delay);
            return;
        }
        res_.contexts->invalidate_stag(h.invalidate_stag);
        ++counters().remote_invalidates;
        f.flags |= regmap::cqe_flags::invalidated;
        f.imm_data = h.invalidate_stag;
    }
    if (h.opcode == ddp::opcode::send_se || h.opcode == ddp::opcode::send_se_invalidate ||
        h.opcode == ddp::opcode::immediate_se) {
        f.flags |= regmap::cqe_flags::solicited;
    }
    // The last segment delivers the message: a receive completion, in MSN order (RFC 5040 §5.5).
    f.wr_id = qp.recv_wr_id;
    f.byte_len = static_cast<std::uint32_t>(qp.recv_bytes);
    f.opcode = static_cast<std::uint8_t>(immediate ? regmap::wr_opcode::immediate_data : regmap::wr_opcode::send);
    f.qpn = qpn;
    f.wqe_index = qp.recv_index;
    f.receive = true;
    if (qp.recv_in_error) f.status = regmap::cqe_status::transport_error;
    completions_.post_cqe(qp.cfg.recv_cq, f, delay);
    ++counters().recv_completions;
    qp.recv_active = false;
    qp.recv_in_error = false;
}

// ---- responses to our Reads and atomics ------------------------------------------------------

void receive_path::place_read_response(std::uint32_t qpn, qp_context& qp, const ddp::header& h,
                                       const std::uint8_t* ulpdu, std::size_t len, bool already_placed,
                                       sc_core::sc_time& delay) {
    pending_completion* read = oldest_unanswered(qp);
    const std::size_t payload = len - ddp::kTaggedHeaderSize;
    // RFC 5041 §5.2: a zero-length Response's STag is not checked.
    const bool zero_length = payload == 0 && h.last && read != nullptr && read->length == 0;
    if (read == nullptr && qp.raw_sent) {
        // Test mode: the answer to a Read Request this side sent raw (a hostile peer's): no
        // request of ours, nothing to place; dropped and counted.
        ++counters().rx_dropped;
        return;
    }
    if (read == nullptr || (h.stag != read->sink_stag && !zero_length)) {
        unexpected_response(qpn, qp, "Read Response without a matching outstanding Read", ulpdu, len, delay);
        return;
    }
    if (!already_placed && !zero_length) {
        // The sink is our own buffer: it needs local write access (RFC 5040 §2.1 sink STag). A
        // zero-length Response has nothing to place and no STag to check (RFC 5041 §5.2).
        res_.contexts->access_stag(h.stag, false, context_if::side::rx, delay, &res_.rx_pipe);
        const access_check chk = check_tagged_access(res_.contexts->lookup_stag(h.stag), qp.cfg.pd, h.tagged_offset,
                                                     payload, regmap::mr_access::local_write);
        if (!chk.ok || (payload > 0 && place_in_region(chk.map, chk.region_off, ulpdu + ddp::kTaggedHeaderSize, payload,
                                                       ddp::kTaggedHeaderSize, delay) != tlm::TLM_OK_RESPONSE)) {
            ++counters().protection_errors;
            send_terminate(qpn, qp, chk.layer, chk.etype, chk.code, ulpdu, len, delay);
            lifecycle_.enter_error(qpn, qp, delay);
            return;
        }
        counters().placed_bytes += payload;
    }
    read->received += payload;
    counters().read_bytes += payload;
    if (!h.last) return;
    answered(qpn, qp, *read, delay);
}

void receive_path::complete_atomic(std::uint32_t qpn, qp_context& qp, const ddp::header& h, const std::uint8_t* ulpdu,
                                   std::size_t len, sc_core::sc_time& delay) {
    std::string error;
    const auto resp =
        ddp::decode_atomic_response(ulpdu + ddp::kUntaggedHeaderSize, len - ddp::kUntaggedHeaderSize, &error);
    pending_completion* op = oldest_unanswered(qp);
    if (op == nullptr && qp.raw_sent) {
        ++counters().rx_dropped;  // test mode: the answer to a raw Atomic Request (see place_read_response)
        return;
    }
    if (h.queue != ddp::kQueueAtomicResponse || h.msn != qp.atomic_resp_msn_rx + 1 || !resp || op == nullptr ||
        !op->atomic || op->request_id != resp->request_id) {
        unexpected_response(qpn, qp, "Atomic Response does not match an outstanding atomic", ulpdu, len, delay);
        return;
    }
    qp.atomic_resp_msn_rx = h.msn;
    std::uint8_t bytes[8];
    put_le64(bytes, resp->original_value);
    const tlm::tlm_response_status written =
        op->result_pages != nullptr
            ? region_write(res_.dma_out, region_map{0, op->result_pages.get()}, op->result_addr, bytes, 8, delay)
            : mem_write(res_.dma_out, op->result_addr, bytes, 8, delay);
    if (written != tlm::TLM_OK_RESPONSE) {
        RNIC_MLOG_D(error, rdma, delay, "QP " << qpn << ": atomic result write refused by the host");
    }
    answered(qpn, qp, *op, delay);
}

void receive_path::answered(std::uint32_t qpn, qp_context& qp, pending_completion& request, sc_core::sc_time& delay) {
    // The request no longer counts against ORD, and it may complete now, in order (RFC 5040 §5.5).
    request.done = true;
    --qp.reads_outstanding;
    res_.read_done_event.notify(delay);
    completions_.retire(qpn, qp, delay);
}

void receive_path::unexpected_response(std::uint32_t qpn, qp_context& qp, const char* what, const std::uint8_t* ulpdu,
                                       std::size_t len, sc_core::sc_time& delay) {
    // A response that answers no outstanding request: RFC 5040 §7.2 "Unexpected OpCode".
    ++counters().protection_errors;
    RNIC_MLOG_D(warn, rdma, delay, "QP " << qpn << ": " << what);
    send_terminate(qpn, qp, ddp::term_layer::rdma, ddp::term::kRdmaRemoteOperation, ddp::term::kRdmaUnexpectedOpcode,
                   ulpdu, len, delay);
    lifecycle_.enter_error(qpn, qp, delay);
}

// ---- requests for the responder, and errors --------------------------------------------------

void receive_path::take_request(std::uint32_t qpn, qp_context& qp, const ddp::header& h, const std::uint8_t* ulpdu,
                                std::size_t len, sc_core::sc_time& delay) {
    // Read Requests and Atomic Requests share queue 1 and its MSN sequence (RFC 5040 §5.1,
    // RFC 7306 §5.2.1 rule 5); DDP untagged-buffer errors otherwise (RFC 5041 §7.2).
    if (h.queue != ddp::kQueueReadRequest) {
        fail_request(
            qpn, qp, h, ulpdu, len,
            {ddp::term_layer::ddp, ddp::term::kDdpUntaggedBuffer, ddp::term::kDdpUntaggedInvalidQn, "wrong queue"},
            delay);
        return;
    }
    if (h.msn != qp.read_req_msn_rx + 1) {
        fail_request(qpn, qp, h, ulpdu, len,
                     {ddp::term_layer::ddp, ddp::term::kDdpUntaggedBuffer, ddp::term::kDdpUntaggedInvalidMsn,
                      "MSN out of sequence"},
                     delay);
        return;
    }
    const std::optional<request_refusal> refused = h.opcode == ddp::opcode::read_request
                                                       ? requests_.accept_read_request(qp, h, ulpdu, len, delay)
                                                       : requests_.execute_atomic(qp, h, ulpdu, len, delay);
    if (refused) {
        fail_request(qpn, qp, h, ulpdu, len, *refused, delay);
    } else {
        res_.ready_qps.mark(qpn);  // a response to send
    }
}

void receive_path::fail_request(std::uint32_t qpn, qp_context& qp, const ddp::header& h, const std::uint8_t* ulpdu,
                                std::size_t len, const request_refusal& why, sc_core::sc_time& delay) {
    ++counters().protection_errors;
    RNIC_MLOG_D(warn, rdma, delay,
                "QP " << qpn << ": " << ddp::to_string(h.opcode) << " MSN " << h.msn << ": " << why.what);
    send_terminate(qpn, qp, why.layer, why.etype, why.code, ulpdu, len, delay);
    lifecycle_.enter_error(qpn, qp, delay);
}

void receive_path::send_terminate(std::uint32_t qpn, qp_context& qp, ddp::term_layer layer, std::uint8_t etype,
                                  std::uint8_t code, const std::uint8_t* ulpdu, std::size_t len,
                                  sc_core::sc_time& delay) {
    // RFC 5040 §4.8 / §5.3: one Terminate on queue 2, then the stream is dead for placement. Which
    // headers it carries (RFC 5040 Figure 10, §7.1; RFC 7306 §8.1): none for an LLP error or an
    // RDMAP local catastrophic error; otherwise the DDP Segment Length and the terminated DDP
    // header (M, D); and, for an RDMAP-layer error on an RDMA Read Request, its 28-byte RDMA header
    // too (R; §7.1 rule 3). Atomic Requests and every other message carry no RDMA header (§7.1
    // rule 2, RFC 7306 §8.1 rule 2).
    ddp::terminate t;
    t.layer = layer;
    t.etype = etype;
    t.code = code;
    const bool headers =
        layer == ddp::term_layer::ddp || (layer == ddp::term_layer::rdma && etype != ddp::term::kRdmaLocalCatastrophic);
    if (headers && ulpdu != nullptr && len >= 1 && len >= ddp::header_size_from_control(ulpdu[0])) {
        const std::size_t hlen = ddp::header_size_from_control(ulpdu[0]);
        t.d = true;
        t.m = true;
        t.ddp_segment_length = static_cast<std::uint16_t>(len);
        t.ddp_header.assign(ulpdu, ulpdu + hlen);
        const auto h = ddp::decode_header(ulpdu, len, nullptr);
        if (layer == ddp::term_layer::rdma && h && !h->tagged && h->opcode == ddp::opcode::read_request &&
            len >= hlen + ddp::kReadRequestSize) {
            t.r = true;
            t.rdma_header.assign(ulpdu + hlen, ulpdu + hlen + ddp::kReadRequestSize);
        }
    }
    const std::vector<std::uint8_t> body = ddp::encode(t);
    ddp::header h;
    h.tagged = false;
    h.last = true;
    h.opcode = ddp::opcode::terminate;
    h.queue = ddp::kQueueTerminate;
    h.msn = ++qp.terminate_msn;
    h.mo = 0;
    std::vector<std::uint8_t> msg(ddp::kUntaggedHeaderSize + body.size());
    ddp::encode(h, msg.data());
    std::memcpy(msg.data() + ddp::kUntaggedHeaderSize, body.data(), body.size());
    qp.state = qp_state::terminate;
    if (!qp.term.valid) qp.term = {true, false, layer, etype, code};
    stream_ext ext;
    ext.conn = qp.conn;
    sc_core::sc_time d = delay;
    send_stream(res_.ulpdu_tx_out, ext, msg.data(), msg.size(), d);
    ++counters().terminates_sent;
    RNIC_MLOG_D(warn, rdma, delay,
                "QP " << qpn << ": Terminate sent (layer " << static_cast<int>(layer) << ", type "
                      << static_cast<int>(etype) << ", code " << static_cast<int>(code) << ")");
}

}  // namespace rnic
