#include "rdma/transmit_path.h"

#include <algorithm>
#include <cstring>

#include "core/mem_access.h"
#include "core/sim_log.h"
#include "core/stream.h"
#include "proto/bytes.h"
#include "rdma/access_checks.h"
#include "rdma/completions.h"
#include "rdma/qp_lifecycle.h"
#include "rdma/region_dma.h"

namespace rnic {

namespace ddp = proto::ddp;
using proto::get_le32;
using proto::get_le64;
using qp_state = regmap::qp_state;

transmit_path::transmit_path(const engine_resources& res, completion_unit& completions, qp_lifecycle& lifecycle)
    : engine_part(res), completions_(completions), lifecycle_(lifecycle) {}

// ---- send queue: fetch and decode ------------------------------------------------------------

void transmit_path::process_batch(std::uint32_t qpn, qp_context& qp, wqe_prefetch* prefetch) {
    // Up to wqe_batch::kMaxBatch contiguous WQEs come with one DMA read, as NICs do to hide the
    // round trip: read now, or earlier by the fetch unit when it has several reads in flight.
    const wqe_batch batch = next_wqe_batch(qp, qp.sq_producer);
    std::uint32_t n = batch.count;
    sc_core::sc_time issue = sc_core::SC_ZERO_TIME;
    tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
    if (prefetch != nullptr && prefetch->take(qpn, qp, fetched_)) {
        wqe_cache_.swap(fetched_.bytes);
        n = fetched_.count;
        status = fetched_.status;
        const sc_core::sc_time now = sim_now();
        if (fetched_.ready > now) issue = fetched_.ready - now;  // the read's data is not in yet
    } else {
        wqe_cache_.resize(static_cast<std::size_t>(n) * regmap::kSendWqeSize);
        status = mem_read(res_.dma_out, batch.addr, wqe_cache_.data(), wqe_cache_.size(), issue);
    }
    if (status != tlm::TLM_OK_RESPONSE) {
        // The SQ ring itself is not reachable: a catastrophic local error for this QP.
        RNIC_MLOG(error, rdma, "QP " << qpn << ": cannot fetch WQEs at 0x" << std::hex << batch.addr);
        lifecycle_.enter_error(qpn, qp, issue);
        qp.sq_consumer = qp.sq_producer;  // nothing more can be read from this ring
        return;
    }
    for (std::uint32_t i = 0; i < n;) {
        const std::uint8_t* wqe = wqe_cache_.data() + static_cast<std::size_t>(i) * regmap::kSendWqeSize;
        const std::uint32_t extra = extra_slots(wqe, qp.sq_producer - qp.sq_consumer - 1);
        // A WQE's extra slots (masks, inline data): in this batch, or (ring wrap, batch end) fetched.
        const std::uint8_t* more = nullptr;
        if (extra > 0) {
            more = fetch_extra_slots(qp, i, n, extra, issue);
        }
        const std::uint32_t slots = 1 + (more != nullptr ? extra : 0);
        const std::uint32_t index = qp.sq_consumer + slots - 1;
        qp.sq_consumer += slots;
        i += slots;
        ++counters().wqes;
        send_wqe w = decode_wqe(wqe, more, index);
        if ((wqe[regmap::sqe_off::flags] & regmap::wr_flags::inline_data) != 0) {
            w.inline_payload = more;
            if (more == nullptr) w.raw_opcode = 0xff;  // its data slots are not posted (or too long)
        }
        if (qp.state != qp_state::rts) {
            complete_with_error(qpn, qp, w, regmap::cqe_status::flushed, issue);
            ++counters().flushed;
            continue;
        }
        process_wqe(qpn, qp, w, issue);
    }
    // The engine's own pipeline time; payload reads and transmission run ahead of it in the
    // downstream blocks' resources (LT annotation).
    sc_core::wait(issue);
    lifecycle_.maybe_finish_closing(qpn, qp);
}

std::uint32_t transmit_path::extra_slots(const std::uint8_t* wqe, std::uint32_t posted_after) {
    const auto op = static_cast<regmap::wr_opcode>(wqe[regmap::sqe_off::opcode]);
    const std::uint8_t flags = wqe[regmap::sqe_off::flags];
    std::uint32_t extra = 0;
    if ((op == regmap::wr_opcode::atomic_fetch_add || op == regmap::wr_opcode::atomic_compare_swap) &&
        (flags & regmap::wr_flags::masked) != 0) {
        extra = 1;  // the masks
    } else if ((flags & regmap::wr_flags::inline_data) != 0) {
        const std::uint32_t len = get_le32(wqe + regmap::sqe_off::length);
        if (len > regmap::kMaxInlineData) return 0;  // rejected in process_wqe
        extra = (len + regmap::kSendWqeSize - 1) / regmap::kSendWqeSize;
    }
    // A driver that rang the doorbell before posting all of a WQE's slots: the WQE is rejected alone.
    return extra <= posted_after ? extra : 0;
}

const std::uint8_t* transmit_path::fetch_extra_slots(qp_context& qp, std::uint32_t i, std::uint32_t n,
                                                     std::uint32_t extra, sc_core::sc_time& issue) {
    if (i + extra < n) return wqe_cache_.data() + static_cast<std::size_t>(i + 1) * regmap::kSendWqeSize;
    extra_cache_.resize(static_cast<std::size_t>(extra) * regmap::kSendWqeSize);
    for (std::uint32_t k = 0; k < extra; ++k) {
        const std::uint64_t at = qp.cfg.sq_ring + ((qp.sq_consumer + 1 + k) % qp.cfg.sq_entries) * regmap::kSendWqeSize;
        if (mem_read(res_.dma_out, at, extra_cache_.data() + static_cast<std::size_t>(k) * regmap::kSendWqeSize,
                     regmap::kSendWqeSize, issue) != tlm::TLM_OK_RESPONSE) {
            return nullptr;
        }
    }
    return extra_cache_.data();
}

send_wqe transmit_path::decode_wqe(const std::uint8_t* wqe, const std::uint8_t* masks, std::uint32_t index) {
    namespace off = regmap::sqe_off;
    send_wqe w;
    w.raw_opcode = wqe[off::opcode];
    w.opcode = static_cast<regmap::wr_opcode>(w.raw_opcode);
    w.signaled = (wqe[off::flags] & regmap::wr_flags::signaled) != 0;
    w.solicited = (wqe[off::flags] & regmap::wr_flags::solicited) != 0;
    w.wr_id = get_le64(wqe + off::wr_id);
    w.local_addr = get_le64(wqe + off::local_addr);
    w.length = get_le32(wqe + off::length);
    w.local_stag = get_le32(wqe + off::local_stag);
    w.remote_to = get_le64(wqe + off::remote_to);
    w.remote_stag = get_le32(wqe + off::remote_stag);
    w.imm_or_inv = get_le32(wqe + off::imm_or_inv);
    w.operand = get_le64(wqe + off::operand);
    w.compare = get_le64(wqe + off::compare);
    w.index = index;
    // RFC 7306 §5.1: without masks FetchAdd is a plain 64-bit add and CmpSwap compares and swaps
    // all 64 bits.
    const bool add = w.opcode == regmap::wr_opcode::atomic_fetch_add;
    w.add_or_swap_mask = add ? 0 : ~std::uint64_t{0};
    w.compare_mask = add ? 0 : ~std::uint64_t{0};
    if ((wqe[off::flags] & regmap::wr_flags::masked) != 0) {
        w.masked = true;
        if (masks != nullptr && masks[off::opcode] == static_cast<std::uint8_t>(regmap::wr_opcode::atomic_masks)) {
            w.add_or_swap_mask = get_le64(masks + regmap::atomic_mask_off::add_or_swap_mask);
            w.compare_mask = add ? 0 : get_le64(masks + regmap::atomic_mask_off::compare_mask);
        } else {
            w.masked = false;  // flagged but without its masks slot: rejected in process_wqe
            w.raw_opcode = 0xff;
        }
    }
    return w;
}

// ---- work requests -------------------------------------------------------------------------

void transmit_path::process_wqe(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue) {
    res_.tx_pipe.reserve_lt(issue, cycles_time(params().cycles_per_wqe, params().clock_hz));
    using op = regmap::wr_opcode;
    auto reject = [&](regmap::cqe_status status, const std::string& why) {
        ++counters().bad_wqes;
        RNIC_MLOG_D(warn, rdma, issue,
                    "QP " << qpn << ": WQE " << w.index << " (opcode " << int(w.raw_opcode) << "): " << why);
        complete_with_error(qpn, qp, w, status, issue);
    };
    if (w.raw_opcode == 0xff) {
        reject(regmap::cqe_status::bad_opcode, "its extra slots (masks or inline data) are missing or too long");
        return;
    }
    switch (w.opcode) {
    case op::rdma_read:
    case op::atomic_fetch_add:
    case op::atomic_compare_swap:
        if (qp.ord == 0) {
            // RFC 6581 §9.1: the stream negotiated no outbound Reads (the peer's IRD is 0).
            reject(regmap::cqe_status::bad_opcode, "the QP's ORD is 0: no RDMA Reads or atomics on this stream");
            return;
        }
        if (w.opcode != op::rdma_read && !res_.frames.carries_atomics()) {
            reject(regmap::cqe_status::bad_opcode, "the framing (RDMA/TCP, seed 000) has no message type for atomics");
            return;
        }
        if (w.opcode == op::rdma_read) {
            post_read_request(qpn, qp, w, issue);
        } else {
            post_atomic(qpn, qp, w, issue);
        }
        return;
    case op::local_invalidate:
        post_local_invalidate(qpn, qp, w, issue);
        return;
    case op::raw_ulpdu:
        if (!params().raw_ulpdu_wqes) {
            reject(regmap::cqe_status::bad_opcode, "raw ULPDUs are a test mode, off on this device");
            return;
        }
        post_raw_ulpdu(qpn, qp, w, issue);
        return;
    case op::raw_stream:
        if (!params().raw_ulpdu_wqes) {
            reject(regmap::cqe_status::bad_opcode, "raw stream bytes are a test mode, off on this device");
            return;
        }
        post_raw_stream(qpn, qp, w, issue);
        return;
    case op::rdma_write:
    case op::send:
    case op::immediate_data:
    case op::rdma_write_with_imm:
        break;
    default:
        reject(regmap::cqe_status::bad_opcode, "not a work-request opcode of this device");
        return;
    }
    if (w.inline_payload != nullptr && w.opcode != op::send && w.opcode != op::rdma_write &&
        w.opcode != op::rdma_write_with_imm) {
        reject(regmap::cqe_status::bad_opcode, "inline data on a work request that carries no payload");
        return;
    }
    const bool carries_payload = w.opcode != op::immediate_data && w.inline_payload == nullptr;
    if (carries_payload) res_.contexts->access_stag(w.local_stag, false, context_if::side::tx, issue);
    if (carries_payload && !check_local(qp, w.local_stag, w.local_addr, w.length)) {
        reject(regmap::cqe_status::local_protection_error,
               "local STag does not cover the buffer (or belongs to another protection domain)");
        return;
    }
    std::uint64_t stream_end = 0;
    if (w.opcode == op::rdma_write || w.opcode == op::rdma_write_with_imm) {
        if (!post_message(qpn, qp, w, true, ddp::opcode::rdma_write, w.inline_payload, w.length, issue, &stream_end)) {
            return;
        }
        ++counters().writes;
        counters().write_bytes += w.length;
    }
    if (w.opcode == op::send) {
        // RFC 5040 §4.3/§5: the Send variants differ in SE and in carrying an STag to invalidate.
        const ddp::opcode o = w.imm_or_inv != 0
                                  ? (w.solicited ? ddp::opcode::send_se_invalidate : ddp::opcode::send_invalidate)
                                  : (w.solicited ? ddp::opcode::send_se : ddp::opcode::send);
        if (!post_message(qpn, qp, w, false, o, w.inline_payload, w.length, issue, &stream_end)) return;
        ++counters().sends;
        counters().send_bytes += w.length;
    }
    if (w.opcode == op::immediate_data || w.opcode == op::rdma_write_with_imm) {
        // RFC 7306 §6: 8 bytes in one untagged message on queue 0; after the Write it belongs to, so
        // the peer completes it only once the Write is placed (in-order delivery, RFC 5040 §5.5).
        std::uint8_t imm[ddp::kImmediateDataSize];
        ddp::encode_immediate(w.operand, imm);
        if (!post_message(qpn, qp, w, false, w.solicited ? ddp::opcode::immediate_se : ddp::opcode::immediate, imm,
                          sizeof imm, issue, &stream_end)) {
            return;
        }
        ++counters().immediates;
    }
    // Complete at the sender once TCP has the last byte acknowledged (RFC 5040 §5.5).
    qp.pending.push_back({stream_end, w.index, w.wr_id, w.length, w.opcode, w.signaled});
}

bool transmit_path::post_message(std::uint32_t qpn, qp_context& qp, const send_wqe& w, bool tagged, ddp::opcode opcode,
                                 const std::uint8_t* inline_data, std::uint32_t length, sc_core::sc_time& issue,
                                 std::uint64_t* stream_end) {
    const std::vector<ddp::segment> segments = ddp::segment_message(length, qp.max_ulpdu, tagged);
    // Untagged messages on queue 0 carry the next MSN (RFC 5041 §5.1: per queue, from 1).
    const std::uint32_t msn = tagged ? 0 : ++qp.send_msn;
    // A payload in a page-list region is read through its pages, the list held across the waits
    // for TCP space (the region may be deregistered meanwhile, as a contiguous one may).
    std::shared_ptr<const mr_page_list> pages;
    std::uint64_t source = w.local_addr;
    if (inline_data == nullptr) {
        const mr_context* mr = res_.contexts->lookup_stag(w.local_stag);
        if (mr != nullptr && mr->cfg.pages != nullptr) {
            pages = mr->cfg.pages;
            source = local_offset(*mr, w.local_addr);
        }
    }
    for (const ddp::segment& seg : segments) {
        ddp::header h;
        h.tagged = tagged;
        h.last = seg.last;
        h.opcode = opcode;
        if (tagged) {
            h.stag = w.remote_stag;
            h.tagged_offset = w.remote_to + seg.offset;
        } else {
            h.invalidate_stag =
                opcode == ddp::opcode::send_invalidate || opcode == ddp::opcode::send_se_invalidate ? w.imm_or_inv : 0;
            h.queue = ddp::kQueueSend;
            h.msn = msn;
            h.mo = static_cast<std::uint32_t>(seg.offset);
        }
        const std::uint8_t* segment_inline = inline_data != nullptr ? inline_data + seg.offset : nullptr;
        switch (emit(qp, h, segment_inline, source + seg.offset, seg.length, issue, stream_end, pages.get())) {
        case emit_status::sent:
            break;
        case emit_status::qp_failed:
            // The QP failed while this request waited for room: it completes as flushed.
            complete_with_error(qpn, qp, w, regmap::cqe_status::flushed, issue);
            ++counters().flushed;
            return false;
        case emit_status::payload_unreadable:
            RNIC_MLOG_D(error, rdma, issue,
                        "QP " << qpn << ": payload DMA read failed at 0x" << std::hex << w.local_addr + seg.offset);
            complete_with_error(qpn, qp, w, regmap::cqe_status::local_protection_error, issue);
            lifecycle_.enter_error(qpn, qp, issue);
            return false;
        case emit_status::refused:
            RNIC_MLOG_D(error, rdma, issue, "QP " << qpn << ": the framing unit refused a segment");
            complete_with_error(qpn, qp, w, regmap::cqe_status::transport_error, issue);
            lifecycle_.enter_error(qpn, qp, issue);
            return false;
        }
    }
    return true;
}

ddp::header transmit_path::request_header(const qp_context& qp, ddp::opcode opcode) {
    // Queue 1 carries Read and Atomic Requests; its MSN is taken once the request is sent.
    ddp::header h;
    h.tagged = false;
    h.last = true;
    h.opcode = opcode;
    h.queue = ddp::kQueueReadRequest;
    h.msn = qp.read_req_msn + 1;
    return h;
}

void transmit_path::send_rtr(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& issue) {
    // RFC 6581 §9.2: the negotiated zero-length message. Its STag and TO are not checked by the
    // receiver (RFC 5041 §5.2, RFC 5040 §5.2.1); STag 1 rather than 0, which some devices treat
    // specially (Linux siw does the same). Neither takes a send-queue slot or makes a completion.
    const qp_stream::rtr kind = qp.rtr_to_send;
    qp.rtr_to_send = qp_stream::rtr::none;
    constexpr std::uint32_t kRtrStag = 1;
    if (kind == qp_stream::rtr::write) {
        ddp::header h;
        h.tagged = true;
        h.last = true;
        h.opcode = ddp::opcode::rdma_write;
        h.stag = kRtrStag;
        h.tagged_offset = 0;
        const emit_status result = emit(qp, h, nullptr, 0, 0, issue, nullptr);
        if (result == emit_status::qp_failed) return;
        if (result != emit_status::sent) {
            lifecycle_.enter_error(qpn, qp, issue);
            return;
        }
    } else {
        const ddp::header h = request_header(qp, ddp::opcode::read_request);
        ddp::read_request rr;
        rr.sink_stag = kRtrStag;
        rr.sink_to = 0;
        rr.size = 0;
        rr.src_stag = kRtrStag;
        rr.src_to = 0;
        std::uint8_t body[ddp::kReadRequestSize];
        ddp::encode(rr, body);
        pending_completion p{0, 0, 0, 0, regmap::wr_opcode::rdma_read, false};
        p.rtr = true;
        p.sink_stag = kRtrStag;
        // Not held to ORD: it goes first, and RFC 6581 §9.1 has the responder offer an IRD of 1
        // for it even when the initiator's ORD is 0.
        if (!send_untagged(qp, h, body, sizeof body, issue, &p.stream_end)) {
            lifecycle_.enter_error(qpn, qp, issue);
            return;
        }
        ++qp.read_req_msn;
        ++qp.reads_outstanding;
        p.done = false;
        qp.pending.push_back(p);
    }
    ++counters().rtrs_sent;
    RNIC_MLOG_D(debug, rdma, issue,
                "QP " << qpn << ": RTR sent ("
                      << (kind == qp_stream::rtr::write ? "zero-length RDMA Write" : "zero-length RDMA Read Request")
                      << ")");
}

void transmit_path::send_acknowledgement(qp_context& qp, sc_core::sc_time& issue) {
    // What lands after now is owed again once it has landed (the framing reports only what has).
    if (qp.ack_until > sim_now()) {
        qp.ack_due = qp.ack_until;
    } else {
        qp.ack_owed = false;
    }
    if (!wait_for_space(qp, 0, issue)) return;
    res_.tx_pipe.reserve_lt(issue, cycles_time(params().cycles_per_segment, params().clock_hz));
    stream_ext ext;
    ext.conn = qp.conn;
    ext.kind = stream_kind::acknowledgement;
    sc_core::sc_time d = issue;
    send_stream(res_.ulpdu_tx_out, ext, nullptr, 0, d);
}

void transmit_path::post_read_request(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue) {
    res_.contexts->access_stag(w.local_stag, false, context_if::side::tx, issue);
    const mr_context* sink = writable_local(qp, w.local_stag, w.local_addr, w.length);
    if (sink == nullptr) {
        ++counters().bad_wqes;
        complete_with_error(qpn, qp, w, regmap::cqe_status::local_protection_error, issue);
        return;
    }
    wait_for_ord(qp, issue);
    const ddp::header h = request_header(qp, ddp::opcode::read_request);
    ddp::read_request rr;
    rr.sink_stag = w.local_stag;
    rr.sink_to = sink->cfg.to_base + (w.local_addr - sink->cfg.addr);
    rr.size = w.length;
    rr.src_stag = w.remote_stag;
    rr.src_to = w.remote_to;
    std::uint8_t body[ddp::kReadRequestSize];
    ddp::encode(rr, body);
    pending_completion p{0, w.index, w.wr_id, w.length, w.opcode, w.signaled};
    p.sink_stag = rr.sink_stag;
    p.sink_to = rr.sink_to;
    if (send_request(qpn, qp, h, body, sizeof body, w, issue, p)) ++counters().reads;
}

bool transmit_path::send_request(std::uint32_t qpn, qp_context& qp, const ddp::header& h, const std::uint8_t* body,
                                 std::size_t body_len, const send_wqe& w, sc_core::sc_time& issue,
                                 pending_completion p) {
    // Reads and atomics: the next MSN of queue 1 is taken only once the request is on its way; it
    // then waits for its response (done = false) and counts against ORD.
    if (!send_untagged(qp, h, body, body_len, issue, &p.stream_end)) {
        complete_with_error(qpn, qp, w, regmap::cqe_status::flushed, issue);
        ++counters().flushed;
        return false;
    }
    ++qp.read_req_msn;
    ++qp.reads_outstanding;
    p.done = false;
    qp.pending.push_back(p);
    return true;
}

void transmit_path::post_atomic(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue) {
    res_.contexts->access_stag(w.local_stag, false, context_if::side::tx, issue);
    const mr_context* result = w.length == 8 ? writable_local(qp, w.local_stag, w.local_addr, 8) : nullptr;
    if (result == nullptr) {
        ++counters().bad_wqes;
        complete_with_error(qpn, qp, w, regmap::cqe_status::local_protection_error, issue);
        return;
    }
    // Where the result lands, taken before any wait (as the host address of a contiguous one is).
    std::shared_ptr<const mr_page_list> result_pages = result->cfg.pages;
    const std::uint64_t result_addr = result_pages != nullptr ? local_offset(*result, w.local_addr) : w.local_addr;
    wait_for_ord(qp, issue);  // atomics count against ORD like Reads (RFC 7306 §5.2.1 rule 4)
    ddp::atomic_request req;
    const bool add = w.opcode == regmap::wr_opcode::atomic_fetch_add;
    req.op = add ? ddp::atomic_opcode::fetch_add : ddp::atomic_opcode::compare_swap;
    req.request_id = w.index;
    req.stag = w.remote_stag;
    req.tagged_offset = w.remote_to;
    req.add_or_swap_data = w.operand;
    req.add_or_swap_mask = w.add_or_swap_mask;
    req.compare_data = add ? 0 : w.compare;
    req.compare_mask = w.compare_mask;
    std::uint8_t body[ddp::kAtomicRequestSize];
    ddp::encode(req, body);
    // RFC 7306 §5.2.1 rule 5: atomics share the Read Request queue.
    const ddp::header h = request_header(qp, ddp::opcode::atomic_request);
    pending_completion p{0, w.index, w.wr_id, 8, w.opcode, w.signaled};
    p.atomic = true;
    p.request_id = w.index;
    p.result_addr = result_addr;
    p.result_pages = std::move(result_pages);
    if (send_request(qpn, qp, h, body, sizeof body, w, issue, p)) ++counters().atomics;
}

void transmit_path::post_local_invalidate(std::uint32_t qpn, qp_context& qp, const send_wqe& w,
                                          sc_core::sc_time& issue) {
    // In send-queue order: work requests posted before it have already been processed (their
    // payload read), so the STag stops being usable exactly at this point of the queue.
    res_.contexts->access_stag(w.imm_or_inv, true, context_if::side::tx, issue);
    const mr_context* mr = res_.contexts->lookup_stag(w.imm_or_inv);
    if (mr == nullptr || mr->cfg.pd != qp.cfg.pd) {
        ++counters().bad_wqes;
        RNIC_MLOG_D(warn, rdma, issue,
                    "QP " << qpn << ": local invalidate of STag 0x" << std::hex << w.imm_or_inv
                          << ": not a valid STag of this protection domain");
        complete_with_error(qpn, qp, w, regmap::cqe_status::local_protection_error, issue);
        return;
    }
    res_.contexts->invalidate_stag(w.imm_or_inv);
    ++counters().local_invalidates;
    // Completes in order with the rest of the send queue, with nothing to wait for on the wire.
    const std::uint64_t after = qp.pending.empty() ? 0 : qp.pending.back().stream_end;
    qp.pending.push_back({after, w.index, w.wr_id, 0, w.opcode, w.signaled});
    completions_.retire(qpn, qp, issue);
}

bool transmit_path::stage_raw(std::uint32_t qpn, qp_context& qp, const send_wqe& w, bool length_ok,
                              sc_core::sc_time& issue, sc_core::sc_time& data) {
    if (!check_local(qp, w.local_stag, w.local_addr, w.length) || !length_ok) {
        ++counters().bad_wqes;
        complete_with_error(qpn, qp, w, regmap::cqe_status::local_length_error, issue);
        return false;
    }
    const mr_context* mr = res_.contexts->lookup_stag(w.local_stag);
    const std::shared_ptr<const mr_page_list> pages = mr->cfg.pages;  // held across the wait
    const region_map map{mr->cfg.addr, pages.get()};
    const std::uint64_t off = local_offset(*mr, w.local_addr);
    if (!wait_for_space(qp, w.length, issue)) {
        complete_with_error(qpn, qp, w, regmap::cqe_status::flushed, issue);
        return false;
    }
    tx_scratch_.resize(w.length);
    data = issue;
    if (region_read(res_.dma_out, map, off, tx_scratch_.data(), w.length, data) != tlm::TLM_OK_RESPONSE) {
        complete_with_error(qpn, qp, w, regmap::cqe_status::local_protection_error, issue);
        return false;
    }
    return true;
}

void transmit_path::post_raw_ulpdu(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue) {
    sc_core::sc_time data;
    const bool length_ok = w.length >= 1 && w.length <= qp.max_ulpdu && w.length >= ddp::header_size_from_control(0);
    if (!stage_raw(qpn, qp, w, length_ok, issue, data)) return;
    stream_ext ext;
    ext.conn = qp.conn;
    if (send_stream(res_.ulpdu_tx_out, ext, tx_scratch_.data(), w.length, data) != tlm::TLM_OK_RESPONSE) {
        complete_with_error(qpn, qp, w, regmap::cqe_status::transport_error, issue);
        return;
    }
    ++counters().raw_ulpdus;
    qp.raw_sent = true;
    ++counters().tx_segments;
    RNIC_MLOG_D(info, rdma, issue, "QP " << qpn << ": raw ULPDU of " << w.length << " bytes sent (test mode)");
    qp.pending.push_back({res_.toe->tcp_send_stream_end(qp.conn), w.index, w.wr_id, w.length, w.opcode, w.signaled});
}

void transmit_path::post_raw_stream(std::uint32_t qpn, qp_context& qp, const send_wqe& w, sc_core::sc_time& issue) {
    // The bytes go into the TCP stream as they are: the workload frames its own FPDUs (a wrong CRC,
    // a ULPDU_Length that does not match what follows) and cuts the stream where it likes. Each
    // work request is one TCP segment (a boundary per segment), so the cuts reach the wire.
    sc_core::sc_time data;
    if (!stage_raw(qpn, qp, w, w.length >= 1, issue, data)) return;
    res_.toe->tcp_one_fpdu_per_segment(qp.conn, true);
    stream_ext ext;
    ext.conn = qp.conn;
    ext.kind = stream_kind::verbatim;
    if (send_stream(res_.ulpdu_tx_out, ext, tx_scratch_.data(), w.length, data) != tlm::TLM_OK_RESPONSE) {
        complete_with_error(qpn, qp, w, regmap::cqe_status::transport_error, issue);
        return;
    }
    ++counters().raw_stream_writes;
    qp.raw_sent = true;
    RNIC_MLOG_D(info, rdma, issue, "QP " << qpn << ": " << w.length << " raw stream bytes sent (test mode)");
    qp.pending.push_back({res_.toe->tcp_send_stream_end(qp.conn), w.index, w.wr_id, w.length, w.opcode, w.signaled});
}

void transmit_path::complete_with_error(std::uint32_t qpn, qp_context& qp, const send_wqe& w, regmap::cqe_status status,
                                        sc_core::sc_time& delay) {
    cqe_fields f;
    f.wr_id = w.wr_id;
    f.opcode = w.raw_opcode;
    f.status = status;
    f.qpn = qpn;
    f.wqe_index = w.index;
    completions_.post_cqe(qp.cfg.send_cq, f, delay);
}

bool transmit_path::check_local(const qp_context& qp, std::uint32_t stag, std::uint64_t addr, std::uint64_t len) const {
    return covers_local(res_.contexts->lookup_stag(stag), qp.cfg.pd, addr, len);
}

const mr_context* transmit_path::writable_local(const qp_context& qp, std::uint32_t stag, std::uint64_t addr,
                                                std::uint64_t len) const {
    const mr_context* mr = res_.contexts->lookup_stag(stag);
    return local_writable(mr, qp.cfg.pd, addr, len) ? mr : nullptr;
}

// ---- emission --------------------------------------------------------------------------------

void transmit_path::wait_for_ord(qp_context& qp, sc_core::sc_time& issue) {
    // ORD: no more Reads and atomics in flight than negotiated.
    while (qp.state == qp_state::rts && qp.reads_outstanding >= qp.ord) {
        sc_core::wait(issue);
        issue = sc_core::SC_ZERO_TIME;
        sc_core::wait(res_.read_done_event);
    }
}

bool transmit_path::wait_for_space(qp_context& qp, std::size_t ulpdu_len, sc_core::sc_time& issue) {
    // Room the ULPDU needs in the TCP send stream once framed (framing::tx_room).
    const std::size_t room = ulpdu_len + res_.frames.tx_room(ulpdu_len);
    if (res_.toe->tcp_send_space(qp.conn) < room) {
        // Back-pressure from the TCP send buffer: catch up with time, then wait for ACKs.
        sc_core::wait(issue);
        issue = sc_core::SC_ZERO_TIME;
        while ((qp.state == qp_state::rts || qp.state == qp_state::closing) &&
               res_.toe->tcp_send_space(qp.conn) < room) {
            sc_core::wait(res_.space_event);
        }
    }
    return qp.state == qp_state::rts || qp.state == qp_state::closing;
}

transmit_path::emit_status transmit_path::emit(qp_context& qp, const ddp::header& h, const std::uint8_t* inline_data,
                                               std::uint64_t host_addr, std::size_t len, sc_core::sc_time& issue,
                                               std::uint64_t* stream_end, const mr_page_list* pages) {
    const std::size_t header_len = h.size();
    const std::size_t ulpdu_len = header_len + len;
    if (!wait_for_space(qp, ulpdu_len, issue)) return emit_status::qp_failed;
    tx_scratch_.resize(ulpdu_len);
    ddp::encode(h, tx_scratch_.data());
    res_.tx_pipe.reserve_lt(issue, cycles_time(params().cycles_per_segment, params().clock_hz));
    // The payload read is issued now and completes later; reads of successive segments overlap on
    // the bus (the PCIe model serialises their TLPs and completions).
    sc_core::sc_time data = issue;
    stream_ext ext;
    ext.conn = qp.conn;
    refetch_ext refetch;
    if (inline_data != nullptr) {
        std::memcpy(tx_scratch_.data() + header_len, inline_data, len);
    } else if (len > 0) {
        const region_map map{0, pages};
        if (pages != nullptr) {
            if (region_read(res_.dma_out, map, host_addr, tx_scratch_.data() + header_len, len, data) !=
                tlm::TLM_OK_RESPONSE) {
                return emit_status::payload_unreadable;
            }
        } else if (mem_read(res_.dma_out, host_addr, tx_scratch_.data() + header_len, len, data) !=
                   tlm::TLM_OK_RESPONSE) {
            return emit_status::payload_unreadable;
        }
        // A payload over several pages is not one host range: not refetchable (host_addr 0).
        refetch.host_addr = pages == nullptr                 ? host_addr
                            : map.contiguous(host_addr, len) ? map.host_addr(host_addr)
                                                             : 0;
        refetch.host_len = static_cast<std::uint32_t>(len);
        refetch.header_len = static_cast<std::uint32_t>(header_len);
        std::memcpy(refetch.header, tx_scratch_.data(), header_len);
    }
    if (send_stream(res_.ulpdu_tx_out, ext, tx_scratch_.data(), ulpdu_len, data, nullptr,
                    refetch.host_addr != 0 ? &refetch : nullptr) != tlm::TLM_OK_RESPONSE) {
        return emit_status::refused;
    }
    ++counters().tx_segments;
    if (stream_end != nullptr) *stream_end = res_.toe->tcp_send_stream_end(qp.conn);
    return emit_status::sent;
}

bool transmit_path::send_untagged(qp_context& qp, const ddp::header& h, const std::uint8_t* body, std::size_t body_len,
                                  sc_core::sc_time& issue, std::uint64_t* stream_end) {
    const emit_status result = emit(qp, h, body, 0, body_len, issue, stream_end);
    if (result == emit_status::refused) qp.state = qp_state::error;
    return result == emit_status::sent;
}

}  // namespace rnic
