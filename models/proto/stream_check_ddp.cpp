// Capture checker, the DDP and RDMAP layer: each ULPDU's headers (RFC 5041 §4, RFC 5040 §4, RFC
// 7306), the messages of each untagged queue by MSN and MO, the ready-to-receive message of RFC
// 6581 §9.2 and Terminates.
#include "proto/stream_check_impl.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>

#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "proto/net.h"
#include "proto/seeds/ift.h"
#include "proto/stream_check_rdmatcp.h"
#include "proto/stream_check_text.h"

namespace rnic::proto::check {
namespace {

// Fixed RDMAP header size after the untagged DDP header for the opcodes whose message is exactly
// that header (RFC 5040 §4.4, RFC 7306 §5.2, §6.2); 0 for the others.
std::size_t fixed_message_size(ddp::opcode op) {
    switch (op) {
    case ddp::opcode::read_request:
        return ddp::kReadRequestSize;
    case ddp::opcode::atomic_request:
        return ddp::kAtomicRequestSize;
    case ddp::opcode::atomic_response:
        return ddp::kAtomicResponseSize;
    case ddp::opcode::immediate:
    case ddp::opcode::immediate_se:
        return ddp::kImmediateDataSize;
    default:
        return 0;
    }
}

// RFC 5040 §4.1 Figure 4 and RFC 7306 §4.1 Figure 2: the untagged queue of each opcode.
std::uint32_t expected_queue(ddp::opcode op) {
    switch (op) {
    case ddp::opcode::read_request:
    case ddp::opcode::atomic_request:
        return ddp::kQueueReadRequest;
    case ddp::opcode::terminate:
        return ddp::kQueueTerminate;
    case ddp::opcode::atomic_response:
        return ddp::kQueueAtomicResponse;
    default:
        return ddp::kQueueSend;
    }
}

const char* layer_name(unsigned layer) {
    switch (layer) {
    case 0:
        return "RDMAP";
    case 1:
        return "DDP";
    case 2:
        return "LLP";
    default:
        return "reserved layer";
    }
}

const char* mpa_error_name(unsigned code) {
    switch (code) {
    case ddp::term::kMpaConnectionLost:
        return "TCP connection closed, terminated or lost";
    case ddp::term::kMpaCrcError:
        return "MPA CRC error";
    case ddp::term::kMpaMarkerLengthMismatch:
        return "MPA Marker and ULPDU_Length mismatch";
    case ddp::term::kMpaInvalidRequestReply:
        return "invalid MPA Request/Reply";
    case ddp::term::kMpaLocalCatastrophic:
        return "local catastrophic error";
    case ddp::term::kMpaInsufficientIrd:
        return "insufficient IRD resources";
    case ddp::term::kMpaNoMatchingRtr:
        return "no matching RTR option";
    default:
        return nullptr;
    }
}

std::string describe_terminate(const ddp::terminate& t) {
    const unsigned layer = static_cast<unsigned>(t.layer);
    std::string s = format("layer %s (%u), error type 0x%x, error code 0x%02x", layer_name(layer), layer,
                           static_cast<unsigned>(t.etype), static_cast<unsigned>(t.code));
    if (t.layer == ddp::term_layer::llp && t.etype == ddp::term::kLlpMpa && mpa_error_name(t.code) != nullptr)
        s += format(" (%s)", mpa_error_name(t.code));
    if (t.m || t.d || t.r) {
        s += ", HdrCt";
        if (t.m) s += " M";
        if (t.d) s += " D";
        if (t.r) s += " R";
    }
    if (t.d) s += format(", DDP segment length %u", static_cast<unsigned>(t.ddp_segment_length));
    return s;
}

}  // namespace

void stream_checker::Impl::check_ulpdu(dir_state& d, const std::uint8_t* p, std::size_t len, fpdu_info& info) {
    const std::string where = format("frame %llu, %s at stream byte %llu", static_cast<ull>(frame_no), frame_word(d),
                                     static_cast<ull>(d.fpdu_start));
    auto header_error = [&](const std::string& text) {
        dir_issue(d, severity::error, category::header, where + ": " + text, frame_no);
    };
    if (opt.keep_fpdu_log) info.head.assign(p, p + std::min(len, kFpduHeadBytes));
    if (len >= 2) {
        const unsigned raw = p[1] & 0x0F;
        ++d.rep.opcodes[raw];
        d.rep.opcode_sequence.push_back(static_cast<std::uint8_t>(raw));
    }
    std::string error;
    const auto h = ddp::decode_header(p, len, &error);
    if (!h) {
        header_error(format("ULPDU of %zu bytes: %s", len, error.c_str()));
        if (d.expect_rtr) rtr_check(d, nullptr, 0, where);
        return;
    }
    info.header_ok = true;
    info.header = *h;
    if (h->last) ++d.rep.messages;
    const unsigned op = static_cast<unsigned>(h->opcode);
    if (h->ddp_version != 1)
        header_error(format("DDP version (DV) %u, expected 1", static_cast<unsigned>(h->ddp_version)));
    if (h->rdmap_version != 1)
        header_error(format("RDMAP version (RV) %u, expected 1", static_cast<unsigned>(h->rdmap_version)));
    if (opt.strict_reserved_bits) {
        if ((p[0] & 0x3C) != 0)
            header_error(
                format("DDP control Rsvd bits 0x%x set (must be zero)", static_cast<unsigned>((p[0] >> 2) & 0xF)));
        if ((p[1] & 0x30) != 0)
            header_error(
                format("RDMAP control Rsv bits 0x%x set (must be zero)", static_cast<unsigned>((p[1] >> 4) & 0x3)));
    }
    if (op > static_cast<unsigned>(ddp::opcode::atomic_response)) {
        header_error(format("reserved RDMAP opcode %u", op));
        if (d.expect_rtr) rtr_check(d, &*h, 0, where);
        return;
    }
    const ddp::opcode opcode = h->opcode;
    if (h->tagged != ddp::is_tagged(opcode)) {
        header_error(format("%s (opcode %u) uses the %s buffer model but T = %d", opcode_name(op), op,
                            ddp::is_tagged(opcode) ? "tagged" : "untagged", h->tagged ? 1 : 0));
    }
    const std::size_t payload_len = len - h->size();
    const std::uint8_t* payload = p + h->size();
    if (d.expect_rtr) rtr_check(d, &*h, payload_len, where, payload);
    if (h->tagged) return;

    const std::uint32_t qn = expected_queue(opcode);
    if (!ddp::is_tagged(opcode) && h->queue != qn)
        header_error(format("%s (opcode %u) on QN %u, expected QN %u", opcode_name(op), op,
                            static_cast<unsigned>(h->queue), static_cast<unsigned>(qn)));
    if (opt.strict_reserved_bits && !carries_invalidate_stag(opcode) && h->invalidate_stag != 0)
        header_error(format("%s: Invalidate STag field 0x%08x must be zero for this opcode", opcode_name(op),
                            static_cast<unsigned>(h->invalidate_stag)));
    const std::size_t fixed = fixed_message_size(opcode);
    if (fixed != 0 || opcode == ddp::opcode::terminate) {
        if (!h->last || h->mo != 0)
            header_error(format("%s must be a single DDP segment (L = 1, MO 0), got L = %d MO %u", opcode_name(op),
                                h->last ? 1 : 0, static_cast<unsigned>(h->mo)));
    }
    if (fixed != 0 && payload_len != fixed)
        header_error(
            format("%s carries %zu bytes after the DDP header, expected %zu", opcode_name(op), payload_len, fixed));
    switch (opcode) {
    case ddp::opcode::read_request:
        if (!ddp::decode_read_request(payload, payload_len, &error)) header_error(error);
        break;
    case ddp::opcode::atomic_request: {
        const auto req = ddp::decode_atomic_request(payload, payload_len, &error);
        if (!req) {
            header_error(error);
            break;
        }
        if (req->op == ddp::atomic_opcode::fetch_add)
            ++d.rep.atomic_fetch_add;
        else if (req->op == ddp::atomic_opcode::compare_swap)
            ++d.rep.atomic_compare_swap;
        else
            header_error(format("Atomic Request with unassigned AOpCode %u", static_cast<unsigned>(req->op)));
        const bool reserved_set = payload[0] != 0 || payload[1] != 0 || payload[2] != 0 || (payload[3] & 0xF0) != 0;
        if (opt.strict_reserved_bits && reserved_set)
            header_error(format("Atomic Request: reserved bits before AOpCode 0x%07x set (must be zero)",
                                static_cast<unsigned>(get_be32(payload) >> 4)));
        break;
    }
    case ddp::opcode::atomic_response:
        if (!ddp::decode_atomic_response(payload, payload_len, &error)) header_error(error);
        break;
    case ddp::opcode::immediate:
    case ddp::opcode::immediate_se:
        if (!ddp::decode_immediate(payload, payload_len, &error)) header_error(error);
        break;
    case ddp::opcode::terminate: {
        const auto term = ddp::decode_terminate(payload, payload_len, &error);
        if (!term) {
            header_error(error);
            break;
        }
        if (static_cast<unsigned>(term->layer) > static_cast<unsigned>(ddp::term_layer::llp))
            header_error(format("Terminate with reserved layer %u", static_cast<unsigned>(term->layer)));
        if (opt.strict_reserved_bits && ((payload[2] & 0x1F) != 0 || payload[3] != 0))
            header_error("Terminate: reserved bits after HdrCt set (must be zero)");
        if (d.rep.terminates.size() < opt.max_issues)
            d.rep.terminates.push_back(format("frame %llu: ", static_cast<ull>(frame_no)) + describe_terminate(*term));
        break;
    }
    default:
        break;
    }
    track_message(d, *h, payload_len, header_error);
}

void stream_checker::Impl::rtr_check(dir_state& d, const ddp::header* h, std::size_t payload_len,
                                     const std::string& where, const std::uint8_t* payload) {
    d.expect_rtr = false;
    const mpa::request_reply& rep = *d.conn->rep.reply;
    const char* kind = nullptr;
    bool offered = false;
    if (h != nullptr) {
        switch (h->opcode) {
        case ddp::opcode::send:
            if (payload_len == 0) {
                kind = "zero-length Send";
                offered = rep.zero_length_send_rtr;
            }
            break;
        case ddp::opcode::rdma_write:
            if (payload_len == 0) {
                kind = "zero-length RDMA Write";
                offered = rep.zero_length_write_rtr;
            }
            break;
        case ddp::opcode::read_request:
            if (payload != nullptr && payload_len >= ddp::kReadRequestSize && get_be32(payload + 12) == 0) {
                kind = "zero-length RDMA Read Request";
                offered = rep.zero_length_read_rtr;
            }
            break;
        case ddp::opcode::terminate:
            kind = "Terminate";
            offered = true;
            break;
        default:
            break;
        }
    }
    Conn& c = *d.conn;
    if (kind == nullptr) {
        conn_issue(c, severity::error, category::negotiation,
                   where +
                       ": RFC 6581 peer-to-peer mode: the initiator's first FPDU must be an RTR indication "
                       "(zero-length Send, RDMA Write or RDMA Read), got " +
                       (h != nullptr ? std::string(opcode_name(static_cast<unsigned>(h->opcode))) +
                                           format(" with %zu payload bytes", payload_len)
                                     : std::string("an undecodable ULPDU")),
                   frame_no);
    } else if (!offered) {
        conn_issue(c, severity::error, category::negotiation,
                   where + ": RFC 6581 RTR indication " + kind + " was not offered in the MPA Reply", frame_no);
    }
}

}  // namespace rnic::proto::check
