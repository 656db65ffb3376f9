// libFuzzer target: IFT framing (seed 001, proto/seeds/ift.h): ift::parse / decode /
// frame_length_at and the streaming ift::Deframer.
//
// Input: byte 0 flags (bit 0: Config::stop_on_payload_crc_error; bit 1: limits follow as u16
// min_header_size, u16 max_header_size, u16 max_payload_size), u32 seed, then the stream S.
// Invariants:
//  - parse(S): a frame spans frame_length_at(S) == 12 + header + payload bytes, all present, with
//    header and payload inside them; encode() of its header and payload gives exactly those bytes
//    (no padding, every bit represented); decode() returns the same header and payload;
//  - Deframer, S fed whole and in chunks of input-derived sizes: the same frames (header, payload,
//    payload_ok), the same error and detail, and bytes_consumed() == |S| unless an error stopped
//    it; header() precedes a frame's payload_piece() calls, which are contiguous from offset 0 and
//    add up to the frame's payload; frame() sees header() and payload_piece() agree with it;
//  - a stream built with encode() from frames cut out of S is deframed back exactly, no error.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "proto/seeds/ift.h"

namespace ift = rnic::proto::ift;
using rnic::fuzz::fuzz_input;
using rnic::fuzz::split_mix;
using bytes = std::vector<std::uint8_t>;

namespace {

struct delivered {
    bytes header, payload;
    bool ok = false;
    bool operator==(const delivered& o) const { return header == o.header && payload == o.payload && ok == o.ok; }
};

struct run {
    std::vector<delivered> frames;
    ift::error_code error = ift::error_code::none;
    std::string detail;
    std::uint64_t consumed = 0;
};

run deframe(const ift::deframer::config& cfg, const std::uint8_t* s, std::size_t len, split_mix* rng) {
    run run;
    // State of the frame in progress as seen through header() and payload_piece().
    bool in_frame = false;
    bytes header, pieces;
    std::size_t payload_size = 0;
    ift::deframer::handler_set h;
    h.header = [&](const std::uint8_t* hdr, std::size_t hdr_size, std::size_t psize) {
        FUZZ_CHECK(!in_frame);
        FUZZ_CHECK(hdr_size <= cfg.limits.max_header_size && hdr_size >= cfg.limits.min_header_size);
        FUZZ_CHECK(psize <= cfg.limits.max_payload_size);
        in_frame = true;
        header.assign(hdr, hdr + hdr_size);
        pieces.clear();
        payload_size = psize;
    };
    h.payload_piece = [&](std::size_t offset, const std::uint8_t* data, std::size_t n) {
        FUZZ_CHECK(in_frame && offset == pieces.size() && n > 0 && n <= payload_size - offset);
        pieces.insert(pieces.end(), data, data + n);
    };
    h.frame = [&](const ift::frame_view& v, bool ok) {
        FUZZ_CHECK(in_frame);
        FUZZ_CHECK(v.header_size == header.size() &&
                   (v.header_size == 0 || std::memcmp(v.header, header.data(), v.header_size) == 0));
        FUZZ_CHECK(v.payload_size == payload_size && pieces.size() == payload_size);
        FUZZ_CHECK(v.payload_size == 0 || std::memcmp(v.payload, pieces.data(), v.payload_size) == 0);
        FUZZ_CHECK(v.wire_length == ift::frame_length(v.header_size, v.payload_size));
        FUZZ_CHECK(ok || !cfg.stop_on_payload_crc_error);
        in_frame = false;
        run.frames.push_back({header, pieces, ok});
    };
    ift::deframer d(cfg, h);
    std::size_t at = 0;
    while (at < len) {
        const std::size_t n = rng != nullptr ? std::min(rnic::fuzz::next_chunk(*rng), len - at) : len - at;
        const ift::error_code was = d.error();
        const std::uint64_t before = d.bytes_consumed();
        const ift::error_code e = d.feed(s + at, n);
        FUZZ_CHECK(e == d.error() && d.bytes_consumed() - before <= n);
        if (was != ift::error_code::none) FUZZ_CHECK(e == was && d.bytes_consumed() == before);
        if (e == ift::error_code::none) FUZZ_CHECK(d.bytes_consumed() - before == n);
        at += n;
    }
    run.error = d.error();
    run.detail = d.error_detail();
    run.consumed = d.bytes_consumed();
    FUZZ_CHECK(d.frames() == run.frames.size());
    FUZZ_CHECK((run.error == ift::error_code::none) == run.detail.empty());
    if (run.error == ift::error_code::none) FUZZ_CHECK(run.consumed == len && (!d.at_frame_boundary() || !in_frame));
    return run;
}

void check_parse(const std::uint8_t* s, std::size_t len, const ift::decode_options& limits) {
    std::string error;
    ift::error_code code = ift::error_code::none;
    const auto v = ift::parse(s, len, &error, &code, limits);
    if (!v) {
        FUZZ_CHECK(code != ift::error_code::none && !error.empty());
        return;
    }
    FUZZ_CHECK(code == ift::error_code::none);
    FUZZ_CHECK(v->wire_length == ift::frame_length_at(s, len) && v->wire_length <= len);
    FUZZ_CHECK(v->wire_length == ift::frame_length(v->header_size, v->payload_size));
    FUZZ_CHECK(v->header == s + ift::kPrefixSize);
    FUZZ_CHECK(v->payload == s + ift::kPrefixSize + v->header_size + ift::kCrcSize);
    bytes again;
    FUZZ_CHECK(ift::encode(v->header, v->header_size, v->payload, v->payload_size, again));
    FUZZ_CHECK(again.size() == v->wire_length && std::memcmp(again.data(), s, again.size()) == 0);
    const auto f = ift::decode(s, len, nullptr, nullptr, limits);
    FUZZ_CHECK(f && f->header.size() == v->header_size && f->payload.size() == v->payload_size);
    FUZZ_CHECK(ift::encode(*f) == again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz_input in(data, size);
    const std::uint8_t flags = in.u8();
    ift::deframer::config cfg;
    cfg.stop_on_payload_crc_error = (flags & 1) != 0;
    if (flags & 2) {
        cfg.limits.min_header_size = in.u16();
        cfg.limits.max_header_size = in.u16();
        cfg.limits.max_payload_size = in.u16();
    }
    const std::uint32_t seed = in.u32();
    std::size_t len = 0;
    const std::uint8_t* s = in.rest(len);

    check_parse(s, len, cfg.limits);

    split_mix chunks(seed);
    const run whole = deframe(cfg, s, len, nullptr);
    const run pieces = deframe(cfg, s, len, &chunks);
    FUZZ_CHECK(whole.frames == pieces.frames);
    FUZZ_CHECK(whole.error == pieces.error && whole.detail == pieces.detail && whole.consumed == pieces.consumed);

    // Well-formed stream cut from S.
    split_mix cuts(~std::uint64_t{seed});
    ift::deframer::config good_cfg;
    good_cfg.stop_on_payload_crc_error = true;
    std::vector<delivered> sent;
    bytes wire;
    std::size_t at = 0;
    while (sent.size() < 64 && (at < len || sent.empty())) {
        const std::size_t h = std::min(cuts.below(33), len - at);
        const std::size_t p = std::min(cuts.below(1500), len - at - h);
        sent.push_back({bytes(s + at, s + at + h), bytes(s + at + h, s + at + h + p), true});
        at += h + p;
        FUZZ_CHECK(ift::encode(sent.back().header.data(), h, sent.back().payload.data(), p, wire));
    }
    split_mix chunks_b(seed ^ 0x5A5A5A5Au);
    const run good = deframe(good_cfg, wire.data(), wire.size(), &chunks_b);
    FUZZ_CHECK(good.error == ift::error_code::none && good.frames == sent && good.consumed == wire.size());
    return 0;
}
