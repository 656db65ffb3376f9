// libFuzzer target: VI/TCP segments (seed 003, proto/seeds/vitcp.h): vitcp::decode_header,
// parse / decode / encode, negotiate, and the streaming vitcp::Deframer.
//
// Input: byte 0 flags (bit 0 crc_negotiated, bit 1 ignore_reserved_bits, bit 2 skip the CRC
// check), u32 seed, then the stream S.
// Invariants:
//  - decode_header(S) -> encode_header gives back the 24 header bytes exactly;
//  - parse(S): the segment spans Segment Length <= |S| bytes with the payload inside it;
//    decode() -> encode() succeeds, has the same length, parses again to the same segment, and
//    reproduces the bytes (all of them when the discriminators' unused bytes are zero and the CRC
//    was checked; the trailer is not compared otherwise);
//  - a ConnectRequest/ConnectAccept pair made with make_request / make_accept from a decoded CE
//    header negotiates, with the lesser MTU and RDMA Read Window;
//  - Deframer, S fed whole and in chunks: the same segments, error and detail, all of S consumed
//    unless an error stopped it, nothing more after an error;
//  - segments encoded from input-derived fields deframe back exactly, without error.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "proto/seeds/vitcp.h"

namespace vi = rnic::proto::vitcp;
using rnic::fuzz::fuzz_input;
using rnic::fuzz::split_mix;
using bytes = std::vector<std::uint8_t>;

namespace {

bool same_ce(const vi::ce_header& a, const vi::ce_header& b) {
    if (a.attributes.pack() != b.attributes.pack() || a.mtu != b.mtu || a.rdma_read_window != b.rdma_read_window ||
        a.calling_discriminator != b.calling_discriminator || a.called_discriminator != b.called_discriminator ||
        a.end_of_options != b.end_of_options || a.options.size() != b.options.size())
        return false;
    for (std::size_t i = 0; i < a.options.size(); ++i)
        if (a.options[i].type != b.options[i].type || a.options[i].data != b.options[i].data) return false;
    return true;
}

bool same(const vi::segment& a, const vi::segment& b) {
    bytes ha(vi::kSegmentHeaderSize), hb(vi::kSegmentHeaderSize);
    vi::encode_header(a.header, ha.data());
    vi::encode_header(b.header, hb.data());
    if (ha != hb || a.payload != b.payload || a.crc != b.crc) return false;
    if (a.rdma.has_value() != b.rdma.has_value() || a.ce.has_value() != b.ce.has_value()) return false;
    if (a.rdma && (a.rdma->address != b.rdma->address || a.rdma->memory_handle != b.rdma->memory_handle ||
                   a.rdma->length != b.rdma->length))
        return false;
    return !a.ce || same_ce(*a.ce, *b.ce);
}

// A delivered segment as bytes: its whole wire image (Segment Length bytes).
struct run {
    std::vector<bytes> segments;
    vi::error_code error = vi::error_code::none;
    std::string detail;
    std::uint64_t consumed = 0;
};

run deframe(const vi::deframer::config& cfg, const std::uint8_t* s, std::size_t len, split_mix* rng) {
    run run;
    vi::deframer d(cfg, [&](const vi::segment_view& v) {
        FUZZ_CHECK(v.wire_length == v.header.segment_length);
        bytes b(vi::kSegmentHeaderSize);
        vi::encode_header(v.header, b.data());
        b.insert(b.end(), v.payload, v.payload + v.payload_len);
        b.push_back(v.crc_present ? 1 : 0);
        run.segments.push_back(std::move(b));
    });
    std::size_t at = 0;
    while (at < len) {
        const std::size_t n = rng != nullptr ? std::min(rnic::fuzz::next_chunk(*rng), len - at) : len - at;
        const vi::error_code was = d.error();
        const std::uint64_t before = d.bytes_consumed();
        const vi::error_code e = d.feed(s + at, n);
        FUZZ_CHECK(e == d.error() && d.bytes_consumed() - before <= n);
        if (was != vi::error_code::none) FUZZ_CHECK(e == was && d.bytes_consumed() == before);
        if (e == vi::error_code::none) FUZZ_CHECK(d.bytes_consumed() - before == n);
        at += n;
    }
    run.error = d.error();
    run.detail = d.error_detail();
    run.consumed = d.bytes_consumed();
    FUZZ_CHECK(d.segments() == run.segments.size());
    FUZZ_CHECK((run.error == vi::error_code::none) == run.detail.empty());
    if (run.error == vi::error_code::none) FUZZ_CHECK(run.consumed == len);
    return run;
}

void check_negotiation(const vi::ce_header& request_ce) {
    vi::local_parameters local;
    local.attributes = request_ce.attributes;
    local.mtu = request_ce.mtu / 2 + 1;
    local.rdma_read_window = static_cast<std::uint16_t>(request_ce.rdma_read_window / 3);
    local.crc = true;
    local.urgent_marker = request_ce.has_option(vi::kOptionUrgentMarker);
    const vi::ce_header req =
        vi::make_request(local, request_ce.calling_discriminator, request_ce.called_discriminator);
    const vi::ce_header acc = vi::make_accept(request_ce, local);
    std::string error;
    const auto g = vi::negotiate(request_ce, acc, &error);
    FUZZ_CHECK(g.has_value());
    FUZZ_CHECK(g->mtu == std::min(request_ce.mtu, local.mtu));
    FUZZ_CHECK(g->rdma_read_window == std::min(request_ce.rdma_read_window, local.rdma_read_window));
    FUZZ_CHECK(g->crc == request_ce.has_option(vi::kOptionCrc));
    // Both headers encode as segments of their own.
    for (const vi::ce_header* ce : {&req, &acc}) {
        vi::segment s;
        s.header.type = ce == &req ? vi::segment_type::connect_request : vi::segment_type::connect_accept;
        s.ce = *ce;
        s.crc = ce->has_option(vi::kOptionCrc);
        const bytes b = vi::encode(s);
        FUZZ_CHECK(!b.empty());
        s.header.segment_length = static_cast<std::uint16_t>(b.size());  // encode() fills it in
        vi::decode_options lenient;  // the request's reserved attribute bits are carried over
        lenient.ignore_reserved_bits = true;
        const auto back = vi::decode(b.data(), b.size(), false, &error, nullptr, lenient);
        FUZZ_CHECK(back && same(*back, s));
    }
}

void check_parse(const std::uint8_t* s, std::size_t len, bool crc_negotiated, const vi::decode_options& options) {
    std::string error;
    const auto h = vi::decode_header(s, len, &error);
    FUZZ_CHECK(h.has_value() == (len >= vi::kSegmentHeaderSize));
    if (h) {
        bytes b(vi::kSegmentHeaderSize);
        vi::encode_header(*h, b.data());
        FUZZ_CHECK(std::memcmp(b.data(), s, b.size()) == 0);
    }
    vi::error_code code = vi::error_code::none;
    const auto v = vi::parse(s, len, crc_negotiated, &error, &code, options);
    if (!v) {
        FUZZ_CHECK(code != vi::error_code::none && !error.empty());
        return;
    }
    FUZZ_CHECK(code == vi::error_code::none);
    FUZZ_CHECK(v->wire_length == v->header.segment_length && v->wire_length <= len);
    FUZZ_CHECK(v->payload >= s + vi::kSegmentHeaderSize &&
               v->payload + v->payload_len + (v->crc_present ? vi::kTrailerSize : 0) == s + v->wire_length);
    FUZZ_CHECK(v->rdma.has_value() == vi::has_rdma_header(v->header.type));
    FUZZ_CHECK(v->ce.has_value() == vi::has_ce_header(v->header.type));
    const auto seg = vi::decode(s, len, crc_negotiated, nullptr, nullptr, options);
    FUZZ_CHECK(seg);
    std::string why;
    bytes again;
    const bool encoded = vi::encode(*seg, again, &why);
    if (!encoded) std::fprintf(stderr, "decoded segment does not encode: %s\n", why.c_str());
    FUZZ_CHECK(encoded && again.size() == v->wire_length);
    const auto back = vi::decode(again.data(), again.size(), crc_negotiated, &error, nullptr, options);
    FUZZ_CHECK(back && same(*back, *seg));
    bool clean = true;  // the discriminators' unused bytes are zero
    if (v->ce) {
        const std::uint8_t* ce = s + vi::kSegmentHeaderSize;
        const std::size_t calling = v->ce->calling_discriminator.size(), called = v->ce->called_discriminator.size();
        clean = std::all_of(ce + 8 + calling, ce + 8 + vi::kDiscriminatorSize, [](std::uint8_t b) { return b == 0; }) &&
                std::all_of(ce + 76 + called, ce + 76 + vi::kDiscriminatorSize, [](std::uint8_t b) { return b == 0; });
    }
    if (clean) {
        const std::size_t compare = v->wire_length - (v->crc_present && !options.check_crc ? vi::kTrailerSize : 0);
        FUZZ_CHECK(std::memcmp(again.data(), s, compare) == 0);
    }
    if (v->ce && v->header.type == vi::segment_type::connect_request) check_negotiation(*v->ce);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz_input in(data, size);
    const std::uint8_t flags = in.u8();
    vi::deframer::config cfg;
    cfg.crc_negotiated = (flags & 1) != 0;
    cfg.decode.ignore_reserved_bits = (flags & 2) != 0;
    cfg.decode.check_crc = (flags & 4) == 0;
    const std::uint32_t seed = in.u32();
    std::size_t len = 0;
    const std::uint8_t* s = in.rest(len);

    check_parse(s, len, cfg.crc_negotiated, cfg.decode);
    split_mix chunks(seed);
    const run whole = deframe(cfg, s, len, nullptr);
    const run pieces = deframe(cfg, s, len, &chunks);
    FUZZ_CHECK(whole.segments == pieces.segments && whole.error == pieces.error && whole.detail == pieces.detail);
    if (whole.error == vi::error_code::none) FUZZ_CHECK(whole.consumed == pieces.consumed);

    // Well-formed segments with fields and payloads taken from S.
    split_mix cuts(~std::uint64_t{seed});
    vi::deframer::config good_cfg;
    good_cfg.crc_negotiated = cfg.crc_negotiated;
    std::vector<bytes> sent;
    bytes wire;
    std::size_t at = 0;
    while (sent.size() < 32 && (at < len || sent.empty())) {
        vi::segment seg;
        seg.header.type = static_cast<vi::segment_type>(cuts.below(vi::kMaxSegmentType + 1));
        const vi::segment_type t = seg.header.type;
        seg.header.eom = cuts.below(2) != 0;
        seg.header.immediate_valid = cuts.below(2) != 0;
        seg.header.immediate_data = static_cast<std::uint32_t>(cuts.next());
        seg.header.message_number = static_cast<std::uint32_t>(cuts.next());
        seg.header.message_ack = static_cast<std::uint32_t>(cuts.next());
        seg.header.rx_descriptors_posted = static_cast<std::uint16_t>(cuts.next());
        seg.header.remote_error.is_error_code = static_cast<std::uint8_t>(cuts.next());
        seg.header.remote_error.transport_error = cuts.below(2) != 0;
        seg.header.data_offset = vi::is_single_segment_message(t) ? 0 : static_cast<std::uint32_t>(cuts.next());
        if (vi::has_rdma_header(t))
            seg.rdma = vi::rdma_header{cuts.next(), static_cast<std::uint32_t>(cuts.next()), 77};
        if (vi::has_ce_header(t)) {
            vi::ce_header ce;
            ce.attributes.rdma_read_enable = cuts.below(2) != 0;
            ce.mtu = static_cast<std::uint32_t>(cuts.next());
            ce.rdma_read_window = static_cast<std::uint16_t>(cuts.next());
            const std::size_t calling = std::min(cuts.below(65), len - at);
            ce.calling_discriminator.assign(s + at, s + at + calling);
            at += calling;
            ce.called_discriminator.assign(cuts.below(65), 0x5C);
            if (cuts.below(2) != 0) ce.options.push_back({vi::kOptionCrc, {}});
            if (cuts.below(2) != 0)
                ce.options.push_back({static_cast<std::uint16_t>(3 + cuts.below(100)), bytes(cuts.below(9), 0xAB)});
            ce.end_of_options = ce.has_option(vi::kOptionCrc) || cuts.below(2) != 0;
            seg.crc = ce.has_option(vi::kOptionCrc);
            seg.ce = std::move(ce);
        } else if (t == vi::segment_type::connect_reject || t == vi::segment_type::connect_no_match) {
            seg.crc = cuts.below(2) != 0;
        } else {
            seg.crc = cfg.crc_negotiated;
        }
        if (vi::has_payload(t)) {
            const std::size_t n = std::min(cuts.below(800), len - at);
            seg.payload.assign(s + at, s + at + n);
            at += n;
        }
        const std::size_t before = wire.size();
        std::string why;
        const bool ok = vi::encode(seg, wire, &why);
        if (!ok) std::fprintf(stderr, "generated segment does not encode: %s\n", why.c_str());
        FUZZ_CHECK(ok);
        const auto v = vi::parse(wire.data() + before, wire.size() - before, cfg.crc_negotiated, &why);
        if (!v) std::fprintf(stderr, "generated segment does not parse: %s\n", why.c_str());
        FUZZ_CHECK(v && v->wire_length == wire.size() - before);
        bytes b(vi::kSegmentHeaderSize);
        vi::encode_header(v->header, b.data());
        b.insert(b.end(), v->payload, v->payload + v->payload_len);
        b.push_back(v->crc_present ? 1 : 0);
        sent.push_back(std::move(b));
    }
    split_mix chunks_b(seed ^ 0x5A5A5A5Au);
    const run good = deframe(good_cfg, wire.data(), wire.size(), &chunks_b);
    FUZZ_CHECK(good.error == vi::error_code::none && good.segments == sent && good.consumed == wire.size());
    return 0;
}
