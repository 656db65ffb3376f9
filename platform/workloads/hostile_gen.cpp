#include "workloads/hostile_gen.h"

#include <algorithm>
#include <cstdio>

#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"

namespace rnic::platform::attack {

namespace ddp = proto::ddp;
namespace term = proto::ddp::term;

namespace {

constexpr std::uint8_t kRdma = 0, kDdp = 1;
// The raw-ULPDU work request sends at least an untagged header's worth (18 bytes): a tagged ULPDU
// carries 4 payload bytes or more.
constexpr std::size_t kMinTagged = ddp::kUntaggedHeaderSize - ddp::kTaggedHeaderSize;

expectation terminate(std::uint8_t layer, std::uint8_t etype, std::uint8_t code) {
    expectation e;
    e.what = expectation::kind::terminate;
    e.layer = layer;
    e.etype = etype;
    e.code = code;
    return e;
}
// RFC 5041 §7.2 tagged buffer errors, RFC 5040 §7.2 RDMAP errors.
expectation ddp_tagged(std::uint8_t code) {
    return terminate(kDdp, term::kDdpTaggedBuffer, code);
}
expectation ddp_untagged(std::uint8_t code) {
    return terminate(kDdp, term::kDdpUntaggedBuffer, code);
}
expectation rdma_protection(std::uint8_t code) {
    return terminate(kRdma, term::kRdmaRemoteProtection, code);
}
expectation rdma_operation(std::uint8_t code) {
    return terminate(kRdma, term::kRdmaRemoteOperation, code);
}
// RFC 5044 §8 codes in a Terminate of layer LLP, error type MPA (RFC 5040 §4.8).
constexpr std::uint8_t kLlp = 2;
expectation llp_mpa(std::uint8_t code) {
    return terminate(kLlp, term::kLlpMpa, code);
}

}  // namespace

std::string term_text(std::uint8_t layer, std::uint8_t etype, std::uint8_t code) {
    static const char* const layers[] = {"rdmap", "ddp", "llp"};
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s/%u/0x%02x", layer < 3 ? layers[layer] : "reserved", etype, code);
    return buf;
}

const std::vector<std::string>& generator::classes() {
    static const std::vector<std::string> all = {
        "write_invalid_stag", "write_stale_stag", "write_invalidated_stag", "write_other_pd", "write_beyond_bounds",
        "write_across_bounds", "write_before_base", "write_to_wrap", "write_read_only", "write_no_remote",
        "ddp_version", "rdmap_version", "reserved_opcode", "wrong_buffer_model", "unsolicited_read_response",
        "unsolicited_atomic_response", "send_invalid_queue", "send_msn_range", "send_mo_nonzero", "send_too_long",
        "send_no_receive", "immediate_bad_length", "send_invalidate_bad_stag", "read_invalid_stag", "read_stale_stag",
        "read_other_pd", "read_no_rights", "read_beyond_bounds", "read_to_wrap", "read_wrong_queue", "read_msn_range",
        "read_beyond_ird", "read_truncated", "atomic_misaligned", "atomic_read_only", "atomic_invalid_stag",
        "atomic_beyond_bounds", "atomic_other_pd", "atomic_bad_opcode", "peer_terminate",
        // Framing damage (the peer frames its own FPDUs, workload.hostile.stream = peer).
        "mpa_bad_crc", "mpa_length_short", "mpa_length_overrun", "mpa_length_beyond_stream", "mpa_ulpdu_runt"};
    return all;
}

generator::generator(const target& t, std::uint64_t seed) : t_(t), rng_(seed) {}

std::uint64_t generator::pick(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
}

std::size_t generator::payload_len() {
    const std::size_t max = t_.max_payload;
    switch (pick(0, 5)) {
    case 0:
        return 1;
    case 1:
        return pick(0, max / 2) | 1;  // odd
    case 2:
        return max;
    default:
        return pick(1, max);
    }
}

std::vector<std::uint8_t> generator::bytes(std::size_t n) {
    std::vector<std::uint8_t> b(n);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng_());
    return b;
}

std::uint32_t generator::bogus_stag() {
    // An index far beyond any STag table (RFC 5040 §2.2: index and key), or a known STag's key changed.
    if (pick(0, 1) == 0) return 0xff000000u | static_cast<std::uint32_t>(pick(0, 0xffffff));
    return t_.writable.stag ^ static_cast<std::uint32_t>(pick(1, 0xff));
}

void generator::new_stream() {
    s_ = stream{};
    s_.receives_left = t_.receives;
}

fpdu generator::tagged(const std::string& cls, std::uint32_t stag, std::uint64_t to, std::size_t len) {
    len = std::max(len, kMinTagged);
    ddp::header h;
    h.tagged = true;
    h.opcode = ddp::opcode::rdma_write;
    h.stag = stag;
    h.tagged_offset = to;
    fpdu f;
    f.cls = cls;
    f.ulpdu.resize(ddp::kTaggedHeaderSize + len);
    ddp::encode(h, f.ulpdu.data());
    const std::vector<std::uint8_t> body = bytes(len);
    std::copy(body.begin(), body.end(), f.ulpdu.begin() + ddp::kTaggedHeaderSize);
    return f;
}

fpdu generator::untagged(const std::string& cls, std::uint8_t opcode, std::uint32_t queue, std::uint32_t msn,
                         std::uint32_t mo, const std::vector<std::uint8_t>& body, std::uint32_t inv) {
    ddp::header h;
    h.tagged = false;
    h.opcode = static_cast<ddp::opcode>(opcode & 0x0f);
    h.queue = queue;
    h.msn = msn;
    h.mo = mo;
    h.invalidate_stag = inv;
    fpdu f;
    f.cls = cls;
    f.ulpdu.resize(ddp::kUntaggedHeaderSize + body.size());
    ddp::encode(h, f.ulpdu.data());
    std::copy(body.begin(), body.end(), f.ulpdu.begin() + ddp::kUntaggedHeaderSize);
    return f;
}

fpdu generator::read_request(const std::string& cls, std::uint32_t stag, std::uint64_t to, std::uint32_t size,
                             std::uint32_t queue, std::uint32_t msn) {
    ddp::read_request rr;
    rr.sink_stag = static_cast<std::uint32_t>(pick(1, 0xffffffff));
    rr.sink_to = pick(0, 1u << 20);
    rr.size = size;
    rr.src_stag = stag;
    rr.src_to = to;
    std::vector<std::uint8_t> body(ddp::kReadRequestSize);
    ddp::encode(rr, body.data());
    return untagged(cls, static_cast<std::uint8_t>(ddp::opcode::read_request), queue, msn, 0, body);
}

fpdu generator::atomic_request(const std::string& cls, std::uint8_t aop, std::uint32_t stag, std::uint64_t to,
                               std::uint32_t msn) {
    ddp::atomic_request req;
    req.op = static_cast<ddp::atomic_opcode>(aop);
    req.request_id = static_cast<std::uint32_t>(rng_());
    req.stag = stag;
    req.tagged_offset = to;
    req.add_or_swap_data = rng_();
    req.add_or_swap_mask = pick(0, 1) ? ~0ull : rng_();
    req.compare_data = rng_();
    req.compare_mask = ~0ull;
    std::vector<std::uint8_t> body(ddp::kAtomicRequestSize);
    ddp::encode(req, body.data());
    return untagged(cls, static_cast<std::uint8_t>(ddp::opcode::atomic_request), ddp::kQueueReadRequest, msn, 0, body);
}

fpdu generator::good() {
    // Well-formed traffic within the grants: it must be placed (or answered) and draw no Terminate.
    for (;;) {
        const std::uint64_t k = pick(0, 9);
        if (k <= 4) {  // RDMA Write into the writable or the atomic region, boundaries included
            if (t_.peer_frames && t_.mulpdu + 1 < ddp::kTaggedHeaderSize + t_.writable.length && pick(0, 4) == 0) {
                // A ULPDU longer than the MULPDU (RFC 5044 §4.5: DDP SHOULD not, MPA need not
                // support it): valid otherwise, so it must be placed like any other.
                const region& r = t_.writable;
                const std::size_t len = pick(t_.mulpdu + 1 - ddp::kTaggedHeaderSize, r.length);
                const std::uint64_t off = pick(0, r.length - len);
                return tagged("good_write_over_mulpdu", r.stag, r.to + off, len);
            }
            const region& r = pick(0, 3) == 0 ? t_.atomic : t_.writable;
            const std::size_t len = std::max<std::size_t>(kMinTagged, std::min<std::size_t>(payload_len(), r.length));
            std::uint64_t off = pick(0, r.length - len);
            if (pick(0, 3) == 0) off = pick(0, 1) ? 0 : r.length - len;  // at the base, or ending at the end
            return tagged("good_write", r.stag, r.to + off, len);
        }
        if ((k == 5 || k == 6) && s_.receives_left > 0) {
            --s_.receives_left;
            const std::uint8_t op = static_cast<std::uint8_t>(pick(0, 1) ? ddp::opcode::send : ddp::opcode::send_se);
            return untagged("good_send", op, ddp::kQueueSend, s_.send_msn++, 0,
                            bytes(pick(0, std::min<std::size_t>(t_.recv_len, t_.max_payload))));
        }
        if (k == 7 && s_.receives_left > 0) {  // RFC 7306 §6: Immediate Data takes a receive
            --s_.receives_left;
            const std::uint8_t op =
                static_cast<std::uint8_t>(pick(0, 1) ? ddp::opcode::immediate : ddp::opcode::immediate_se);
            return untagged("good_immediate", op, ddp::kQueueSend, s_.send_msn++, 0, bytes(8));
        }
        if (k == 8 && s_.requests == 0) {  // one Read Request per stream: never near the IRD
            ++s_.requests;
            const region& r = pick(0, 1) ? t_.writable : t_.read_only;
            const std::uint32_t size = static_cast<std::uint32_t>(pick(0, std::min<std::uint64_t>(r.length, 4096)));
            return read_request("good_read_request", r.stag, r.to + pick(0, r.length - size), size,
                                ddp::kQueueReadRequest, s_.req_msn++);
        }
        if (k == 9 && s_.requests == 0) {
            ++s_.requests;
            const std::uint64_t to = t_.atomic.to + 8 * pick(0, t_.atomic.length / 8 - 1);
            return atomic_request("good_atomic", pick(0, 1) ? 0 : 2, t_.atomic.stag, to, s_.req_msn++);
        }
    }
}

fpdu generator::violation(const std::string& c) {
    const std::size_t len = std::max<std::size_t>(1, payload_len());
    const region& w = t_.writable;
    auto tagged_err = [&](const region& r, std::uint64_t to, expectation e) {
        fpdu f = tagged(c, r.stag, to, len);
        f.expect = e;
        return f;
    };
    auto with = [](fpdu f, expectation e) {
        f.expect = e;
        return f;
    };
    if (c == "write_invalid_stag")
        return with(tagged(c, bogus_stag(), w.to, len), ddp_tagged(term::kDdpTaggedInvalidStag));
    if (c == "write_stale_stag") return tagged_err(t_.stale, t_.stale.to, ddp_tagged(term::kDdpTaggedInvalidStag));
    if (c == "write_invalidated_stag")
        return tagged_err(t_.invalidated, t_.invalidated.to, ddp_tagged(term::kDdpTaggedInvalidStag));
    if (c == "write_other_pd")
        return tagged_err(t_.other_pd, t_.other_pd.to, ddp_tagged(term::kDdpTaggedStagNotAssociated));
    if (c == "write_beyond_bounds")
        return tagged_err(w, w.to + w.length + pick(0, 1) * pick(0, 1u << 20),
                          ddp_tagged(term::kDdpTaggedBaseOrBounds));
    if (c == "write_across_bounds") {
        const std::size_t n = std::max(kMinTagged, len);
        fpdu f = tagged(c, w.stag, w.to + w.length - pick(1, n - 1), n);
        return with(f, ddp_tagged(term::kDdpTaggedBaseOrBounds));
    }
    if (c == "write_before_base")
        return tagged_err(w, w.to - pick(1, std::min<std::uint64_t>(w.to, 4096)),
                          ddp_tagged(term::kDdpTaggedBaseOrBounds));
    if (c == "write_to_wrap") {
        const std::size_t n = std::max(kMinTagged, len);
        fpdu f = tagged(c, w.stag, ~0ull - pick(0, n - 2), n);
        return with(f, ddp_tagged(term::kDdpTaggedToWrap));
    }
    if (c == "write_read_only")
        return tagged_err(t_.read_only, t_.read_only.to, rdma_protection(term::kRdmaAccessRights));
    if (c == "write_no_remote")
        return tagged_err(t_.no_remote, t_.no_remote.to, rdma_protection(term::kRdmaAccessRights));
    if (c == "ddp_version") {
        // DV is the low 2 bits of the DDP control byte (RFC 5041 §4.2); reported in the buffer model T claims.
        const bool tag = pick(0, 1) == 0;
        fpdu f = tag ? tagged(c, w.stag, w.to, std::min<std::size_t>(len, w.length))
                     : untagged(c, static_cast<std::uint8_t>(ddp::opcode::send), 0, s_.send_msn, 0, bytes(8));
        const std::uint8_t dv = static_cast<std::uint8_t>(pick(0, 1) ? 0 : pick(2, 3));
        f.ulpdu[0] = static_cast<std::uint8_t>((f.ulpdu[0] & ~0x03) | dv);
        return with(f,
                    tag ? ddp_tagged(term::kDdpTaggedInvalidVersion) : ddp_untagged(term::kDdpUntaggedInvalidVersion));
    }
    if (c == "rdmap_version") {
        fpdu f = tagged(c, w.stag, w.to, std::min<std::size_t>(len, w.length));
        const std::uint8_t rv = static_cast<std::uint8_t>(pick(0, 1) ? 0 : pick(2, 3));
        f.ulpdu[1] = static_cast<std::uint8_t>((f.ulpdu[1] & 0x3f) | (rv << 6));
        return with(f, rdma_operation(term::kRdmaInvalidVersion));
    }
    if (c == "reserved_opcode") {
        const std::uint8_t op = static_cast<std::uint8_t>(pick(12, 15));
        fpdu f = pick(0, 1) ? untagged(c, op, 0, s_.send_msn, 0, bytes(len)) : tagged(c, w.stag, w.to, 8);
        f.ulpdu[1] = static_cast<std::uint8_t>((f.ulpdu[1] & 0xf0) | op);
        return with(f, rdma_operation(term::kRdmaUnexpectedOpcode));
    }
    if (c == "wrong_buffer_model") {
        // An untagged RDMA Write, or a tagged Send (RFC 5040 §4.1: the opcode fixes the model).
        fpdu f = pick(0, 1) ? untagged(c, 0, 0, s_.send_msn, 0, bytes(len)) : tagged(c, w.stag, w.to, 8);
        if (f.ulpdu[0] & 0x80) f.ulpdu[1] = static_cast<std::uint8_t>((f.ulpdu[1] & 0xf0) | 3);
        return with(f, rdma_operation(term::kRdmaUnexpectedOpcode));
    }
    if (c == "unsolicited_read_response") {
        fpdu f = tagged(c, w.stag, w.to, std::min<std::size_t>(len, w.length));
        f.ulpdu[1] = static_cast<std::uint8_t>((f.ulpdu[1] & 0xf0) | 2);
        return with(f, rdma_operation(term::kRdmaUnexpectedOpcode));
    }
    if (c == "unsolicited_atomic_response")
        return with(untagged(c, 11, ddp::kQueueAtomicResponse, 1, 0, bytes(ddp::kAtomicResponseSize)),
                    rdma_operation(term::kRdmaUnexpectedOpcode));
    if (c == "send_invalid_queue") {
        const std::uint32_t qn =
            pick(0, 1) ? static_cast<std::uint32_t>(pick(1, 3)) : static_cast<std::uint32_t>(rng_());
        return with(untagged(c, 3, qn == 0 ? 7 : qn, s_.send_msn, 0, bytes(pick(0, 64))),
                    ddp_untagged(term::kDdpUntaggedInvalidQn));
    }
    if (c == "send_msn_range") {
        std::uint32_t msn = s_.send_msn + static_cast<std::uint32_t>(pick(1, 1u << 30));
        if (pick(0, 2) == 0) msn = s_.send_msn - 1;  // a finished message's MSN again (0 on a new stream)
        return with(untagged(c, 3, 0, msn, 0, bytes(pick(0, 64))), ddp_untagged(term::kDdpUntaggedInvalidMsn));
    }
    if (c == "send_mo_nonzero" && s_.receives_left > 0)
        return with(untagged(c, 3, 0, s_.send_msn, static_cast<std::uint32_t>(pick(1, 0xffffffff)), bytes(pick(0, 64))),
                    ddp_untagged(term::kDdpUntaggedInvalidMo));
    if (c == "send_too_long" && s_.receives_left > 0 && t_.max_payload > t_.recv_len)
        return with(untagged(c, 3, 0, s_.send_msn, 0, bytes(pick(t_.recv_len + 1, t_.max_payload))),
                    ddp_untagged(term::kDdpUntaggedMessageTooLong));
    if (c == "send_no_receive" && s_.receives_left == 0)
        return with(untagged(c, 3, 0, s_.send_msn, 0, bytes(pick(0, 64))), ddp_untagged(term::kDdpUntaggedNoBuffer));
    if (c == "immediate_bad_length" && s_.receives_left > 0) {
        std::size_t n = pick(0, 24);
        if (n == 8) n = 9;
        return with(untagged(c, 8, 0, s_.send_msn, 0, bytes(n)), rdma_operation(term::kRdmaUnspecified));
    }
    if (c == "send_invalidate_bad_stag" && s_.receives_left > 0) {
        const std::uint32_t inv = pick(0, 1) ? bogus_stag() : pick(0, 1) ? t_.other_pd.stag : t_.stale.stag;
        return with(untagged(c, pick(0, 1) ? 4 : 6, 0, s_.send_msn, 0, bytes(pick(0, 64)), inv),
                    rdma_protection(term::kRdmaStagCannotInvalidate));
    }
    const std::uint32_t size = static_cast<std::uint32_t>(pick(1, 4096));
    if (c == "read_invalid_stag")
        return with(read_request(c, bogus_stag(), w.to, size, 1, s_.req_msn), rdma_protection(term::kRdmaInvalidStag));
    if (c == "read_stale_stag")
        return with(read_request(c, t_.stale.stag, t_.stale.to, size, 1, s_.req_msn),
                    rdma_protection(term::kRdmaInvalidStag));
    if (c == "read_other_pd")
        return with(read_request(c, t_.other_pd.stag, t_.other_pd.to, size, 1, s_.req_msn),
                    rdma_protection(term::kRdmaStagNotAssociated));
    if (c == "read_no_rights")
        return with(
            read_request(c, t_.no_remote.stag, t_.no_remote.to, std::min<std::uint32_t>(size, 64), 1, s_.req_msn),
            rdma_protection(term::kRdmaAccessRights));
    if (c == "read_beyond_bounds")
        return with(read_request(c, w.stag, w.to + w.length - pick(0, size - 1), size, 1, s_.req_msn),
                    rdma_protection(term::kRdmaBaseOrBounds));
    if (c == "read_to_wrap")
        return with(read_request(c, w.stag, ~0ull - pick(0, size - 1), size + 1, 1, s_.req_msn),
                    rdma_protection(term::kRdmaToWrap));
    if (c == "read_wrong_queue")
        return with(read_request(c, w.stag, w.to, size,
                                 pick(0, 1) ? 0 : static_cast<std::uint32_t>(pick(2, 0xffffffff)), s_.req_msn),
                    ddp_untagged(term::kDdpUntaggedInvalidQn));
    if (c == "read_msn_range")
        return with(read_request(c, w.stag, w.to, size, 1, s_.req_msn + static_cast<std::uint32_t>(pick(1, 1000))),
                    ddp_untagged(term::kDdpUntaggedInvalidMsn));
    if (c == "read_truncated") {
        fpdu f = read_request(c, w.stag, w.to, size, 1, s_.req_msn);
        f.ulpdu.resize(ddp::kUntaggedHeaderSize + pick(0, ddp::kReadRequestSize - 1));
        return with(f, rdma_operation(term::kRdmaUnspecified));
    }
    const std::uint64_t aligned = t_.atomic.to + 8 * pick(0, t_.atomic.length / 8 - 1);
    if (c == "atomic_misaligned")
        return with(atomic_request(c, 0, t_.atomic.stag, aligned + pick(1, 7), s_.req_msn),
                    rdma_operation(term::kRdmaCatastrophicStream));
    if (c == "atomic_read_only")
        return with(atomic_request(c, pick(0, 1) ? 0 : 2, t_.read_only.stag, t_.read_only.to, s_.req_msn),
                    rdma_protection(term::kRdmaAccessRights));
    if (c == "atomic_invalid_stag")
        return with(atomic_request(c, 0, bogus_stag(), aligned, s_.req_msn), rdma_protection(term::kRdmaInvalidStag));
    if (c == "atomic_beyond_bounds")
        return with(atomic_request(c, 2, t_.atomic.stag, t_.atomic.to + t_.atomic.length + 8 * pick(0, 64), s_.req_msn),
                    rdma_protection(term::kRdmaBaseOrBounds));
    if (c == "atomic_other_pd")
        return with(atomic_request(c, 0, t_.other_pd.stag, t_.other_pd.to, s_.req_msn),
                    rdma_protection(term::kRdmaStagNotAssociated));
    if (c == "atomic_bad_opcode") {
        std::uint8_t aop = static_cast<std::uint8_t>(pick(1, 15));
        if (aop == 2) aop = 1;
        return with(atomic_request(c, aop, t_.atomic.stag, aligned, s_.req_msn),
                    rdma_operation(term::kRdmaUnexpectedOpcode));
    }
    if (c == "peer_terminate") {
        ddp::terminate t;
        t.layer = static_cast<ddp::term_layer>(pick(0, 2));
        t.etype = static_cast<std::uint8_t>(pick(0, 3));
        t.code = static_cast<std::uint8_t>(rng_());
        fpdu f = untagged(c, 7, ddp::kQueueTerminate, 1, 0, ddp::encode(t));
        f.expect.what = expectation::kind::peer_terminate;
        return f;
    }
    if (c.rfind("mpa_", 0) == 0 && t_.peer_frames) {
        if (c == "mpa_ulpdu_runt") {
            // A well-framed FPDU (right length, right CRC) whose ULPDU is shorter than any DDP header:
            // the model reports the stream as no longer delineable (RFC 5044 §8 code 3).
            fpdu f;
            f.cls = c;
            f.ulpdu = bytes(pick(0, ddp::kTaggedHeaderSize - 1));
            return with(f, llp_mpa(term::kMpaMarkerLengthMismatch));
        }
        if (!t_.crc) return fpdu{};  // without the CRC a damaged length is not detectable (RFC 5044 §6)
        // An FPDU that would be good but for its framing: RFC 5044 §6 says the receiver verifies the
        // CRC before passing the ULPDU on; §8 code 2 follows for each of these.
        fpdu f = good();
        f.cls = c;
        if (c == "mpa_bad_crc") f.damage = damage::bad_crc;
        if (c == "mpa_length_short") f.damage = damage::length_short;
        if (c == "mpa_length_overrun") f.damage = damage::length_overrun;
        if (c == "mpa_length_beyond_stream") {
            // The receiver waits for bytes that never come; the peer closes: a closed stream is the
            // answer (RFC 5044 §8 code 1), and nothing of the FPDU is delivered.
            f.damage = damage::length_beyond;
            f.expect.what = expectation::kind::closed;
            return f;
        }
        return with(f, llp_mpa(term::kMpaCrcError));
    }
    return fpdu{};  // a class whose precondition does not hold now (the caller draws again)
}

std::pair<std::size_t, std::size_t> generator::lengths_beyond_the_stream(std::size_t n) {
    // The frame sent is 2 + n + pad + 4 bytes, the pad bringing 2 + n to a multiple of 4; one that
    // declares d is as long unless 2 + d rounds up past it, i.e. unless d >= that multiple - 1.
    const std::size_t padded = (2 + n + 3) / 4 * 4;
    return {padded - 1, proto::mpa::kMaxUlpduLength};
}

stream_plan generator::frame_stream(const std::vector<fpdu>& episode) {
    namespace mpa = proto::mpa;
    stream_plan p;
    std::vector<std::size_t> starts;
    for (const fpdu& f : episode) {
        const std::size_t at = p.bytes.size();
        starts.push_back(at);
        mpa::build_fpdu(f.ulpdu.data(), f.ulpdu.size(), t_.crc, false, 0, p.bytes);
        const std::size_t n = f.ulpdu.size();
        auto set_length = [&](std::size_t v) {
            p.bytes[at] = static_cast<std::uint8_t>(v >> 8);
            p.bytes[at + 1] = static_cast<std::uint8_t>(v);
        };
        switch (f.damage) {
        case damage::none:
            break;
        case damage::bad_crc: {
            std::uint8_t* crc = &p.bytes[p.bytes.size() - mpa::kCrcSize];
            if (pick(0, 1) == 0) {
                crc[pick(0, 3)] ^= static_cast<std::uint8_t>(1u << pick(0, 7));  // one bit
            } else {
                crc[0] = static_cast<std::uint8_t>(crc[0] + pick(1, 255));  // any other value
                for (std::size_t i = 1; i < mpa::kCrcSize; ++i) crc[i] = static_cast<std::uint8_t>(rng_());
            }
            break;
        }
        case damage::length_short:
            set_length(pick(0, n - 1));
            break;
        case damage::length_overrun: {
            // The receiver reads the declared ULPDU, PAD and CRC from what follows: send enough.
            const std::size_t declared = std::min<std::size_t>(mpa::kMaxUlpduLength, n + pick(1, 2048));
            set_length(declared);
            const std::vector<std::uint8_t> tail = bytes(declared - n + mpa::kCrcSize + 3);
            p.bytes.insert(p.bytes.end(), tail.begin(), tail.end());
            break;
        }
        case damage::length_beyond: {
            const auto [first, last] = lengths_beyond_the_stream(n);
            set_length(pick(first, last));
            p.close_after = true;
            break;
        }
        }
    }
    const std::size_t total = p.bytes.size();
    starts.push_back(total);
    std::vector<std::size_t> cuts;  // segment ends, any order
    static const char* const kinds[] = {"aligned", "split", "coalesced", "random"};
    p.cut = kinds[pick(0, 3)];
    if (p.cut == "aligned") {
        cuts.assign(starts.begin() + 1, starts.end());
    } else if (p.cut == "split") {
        // Every FPDU cut at 1-3 bytes inside it (inside the length field, a header, the CRC).
        for (std::size_t i = 0; i + 1 < starts.size(); ++i) {
            cuts.push_back(starts[i + 1]);
            if (starts[i + 1] - starts[i] < 2) continue;
            for (std::uint64_t k = pick(1, 3); k > 0; --k) cuts.push_back(pick(starts[i] + 1, starts[i + 1] - 1));
        }
    } else if (p.cut == "coalesced") {
        // Several whole FPDUs in one segment: keep about one FPDU end in three.
        for (std::size_t i = 1; i < starts.size(); ++i)
            if (i + 1 == starts.size() || pick(0, 2) == 0) cuts.push_back(starts[i]);
    } else {
        // Anywhere: 1-byte segments, cuts inside and between FPDUs, long runs.
        const std::uint64_t n = pick(1, 2 * starts.size());
        for (std::uint64_t k = 0; k < n && total > 1; ++k) cuts.push_back(pick(1, total - 1));
        cuts.push_back(total);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    while (cuts.size() > t_.max_segments)
        cuts.erase(cuts.begin() + static_cast<std::ptrdiff_t>(pick(0, cuts.size() - 2)));
    p.ends = cuts;
    // What the cuts did to the FPDUs.
    std::size_t seg = 0, seg_start = 0;
    std::uint64_t starts_in_seg = 0;
    for (std::size_t i = 0; i + 1 < starts.size(); ++i) {
        while (p.ends[seg] <= starts[i]) {
            if (starts_in_seg > 1) ++p.segments_coalesced;
            seg_start = p.ends[seg++];
            starts_in_seg = 0;
        }
        ++starts_in_seg;
        if (p.ends[seg] < starts[i + 1]) ++p.fpdus_split;
    }
    if (starts_in_seg > 1) ++p.segments_coalesced;
    (void)seg_start;
    return p;
}

std::vector<fpdu> generator::episode(std::size_t max_good) {
    new_stream();
    std::vector<fpdu> out;
    const std::vector<std::string>& all = classes();
    const std::string cls = all[pick(0, all.size() - 1)];
    const std::size_t n = pick(0, max_good);
    for (std::size_t i = 0; i < n; ++i) out.push_back(good());
    if (cls == "send_no_receive") {
        while (s_.receives_left > 0) {
            --s_.receives_left;
            out.push_back(untagged("good_send", 3, 0, s_.send_msn++, 0, bytes(pick(0, 16))));
        }
    }
    if (cls == "read_beyond_ird") {
        // Large Reads back to back until one finds every inbound slot taken (RFC 5040 §6.1). A
        // Read's slot is free again once its Response is in the TCP send stream, so the burst first
        // fills that stream (send_buffer / length Reads), then asks 4 x IRD more, more than the
        // link can drain while they arrive. Fewer can all be answered in time: no violation then.
        const region& w = t_.writable;
        const std::uint64_t wanted = (t_.send_buffer + w.length - 1) / w.length + 4 * t_.ird;
        const auto burst = static_cast<std::uint32_t>(std::min<std::uint64_t>(wanted, t_.max_fpdus - out.size()));
        for (std::uint32_t i = 0; i < burst; ++i) {
            fpdu f = read_request(i + 1 < burst ? "good_read_request" : cls, w.stag, w.to,
                                  static_cast<std::uint32_t>(w.length), 1, s_.req_msn++);
            if (i + 1 == burst) f.expect = ddp_untagged(term::kDdpUntaggedNoBuffer);
            out.push_back(std::move(f));
        }
        // Earlier good requests may still hold slots: the Terminate may come one Read sooner.
        return out;
    }
    fpdu v = violation(cls);
    while (v.ulpdu.empty()) v = violation(all[pick(0, all.size() - 1)]);
    out.push_back(std::move(v));
    return out;
}

std::vector<fpdu> generator::good_conversation(std::size_t n) {
    new_stream();
    std::vector<fpdu> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(good());
    return out;
}

std::vector<fpdu> generator::mutate(const std::vector<fpdu>& conv) {
    std::vector<fpdu> out = conv;
    if (out.empty()) return out;
    fpdu& f = out[pick(0, out.size() - 1)];
    const std::size_t at = pick(0, std::min<std::size_t>(f.ulpdu.size(), 96) - 1);  // the headers, mostly
    std::uint8_t& b = f.ulpdu[at];
    const std::uint8_t was = b;
    switch (pick(0, 2)) {
    case 0:
        b = static_cast<std::uint8_t>(b ^ (1u << pick(0, 7)));
        break;
    case 1:
        b = pick(0, 1) ? 0x00 : 0xff;
        break;
    default:
        b = static_cast<std::uint8_t>(rng_());
        break;
    }
    if (b == was) b = static_cast<std::uint8_t>(was ^ 0x80);
    f.cls = "mutated";
    f.expect.what = expectation::kind::unknown;
    return out;
}

}  // namespace rnic::platform::attack
