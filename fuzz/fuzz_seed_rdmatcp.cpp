// libFuzzer target: RDMA/TCP segments (seed 000, proto/seeds/rdmatcp.h): rdmatcp::decode_header,
// parse / decode, the streaming rdmatcp::Deframer and the §5 framing recovery Recovery::assess.
//
// Input: byte 0 flags (bit 0 ignore_reserved_bits, bit 1 skip the CRC check, bit 2 a u64
// Connection ID follows, bit 3 Recovery: scan_words, bit 4 Recovery: accept_partial == false,
// bit 5 Recovery: a u32 stream offset follows, bit 6 Recovery: message-number window (u32 next,
// u8 window) follows), the optional fields, u32 seed, then the stream S.
// Invariants:
//  - decode_header(S) -> encode_header gives back the header bytes exactly;
//  - parse(S): the segment spans wire_length(Segment Length) <= |S| bytes; control data and payload
//    lie inside it; re-encoding header, control and payload reproduces the first Segment Length
//    bytes (and, with zero padding and the CRC checked, the whole segment); decode() agrees;
//  - Deframer, S fed whole and in chunks: the same segments, error and detail; all of S consumed
//    unless an error stopped it; after an error nothing more is consumed;
//  - Recovery::assess(S): candidates in increasing order inside S, each re-examined alike; the
//    verdict agrees with the accepted candidates (aligned: offset 0 accepted), accepted segments
//    lie in [first_segment, accepted_end] within S; the statistics count what was examined;
//  - segments encoded from input-derived fields (obeying the header rules) deframe back exactly,
//    and Recovery finds that stream aligned with every segment accepted.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "proto/seeds/rdmatcp.h"

namespace rt = rnic::proto::rdmatcp;
using rnic::fuzz::fuzz_input;
using rnic::fuzz::split_mix;
using bytes = std::vector<std::uint8_t>;

namespace {

// A delivered segment as comparable bytes: its header re-encoded, control data and payload.
bytes flatten(const rt::segment_view& v) {
    bytes b(v.header.size());
    rt::encode_header(v.header, b.data());
    b.insert(b.end(), v.control, v.control + v.control_len);
    b.insert(b.end(), v.payload, v.payload + v.payload_len);
    return b;
}

struct run {
    std::vector<bytes> segments;
    rt::error_code error = rt::error_code::none;
    std::string detail;
    std::uint64_t consumed = 0;
};

run deframe(const rt::deframer::config& cfg, const std::uint8_t* s, std::size_t len, split_mix* rng) {
    run run;
    rt::deframer d(cfg, [&](const rt::segment_view& v) {
        FUZZ_CHECK(v.wire_length == rt::wire_length(v.header.segment_length));
        FUZZ_CHECK(v.control_len == v.header.control_length());
        FUZZ_CHECK(v.header.size() + v.control_len + v.payload_len == v.header.segment_length);
        run.segments.push_back(flatten(v));
    });
    std::size_t at = 0;
    while (at < len) {
        const std::size_t n = rng != nullptr ? std::min(rnic::fuzz::next_chunk(*rng), len - at) : len - at;
        const rt::error_code was = d.error();
        const std::uint64_t before = d.bytes_consumed();
        const rt::error_code e = d.feed(s + at, n);
        FUZZ_CHECK(e == d.error() && d.bytes_consumed() - before <= n);
        if (was != rt::error_code::none) FUZZ_CHECK(e == was && d.bytes_consumed() == before);
        if (e == rt::error_code::none) FUZZ_CHECK(d.bytes_consumed() - before == n);
        at += n;
    }
    run.error = d.error();
    run.detail = d.error_detail();
    run.consumed = d.bytes_consumed();
    FUZZ_CHECK(d.segments() == run.segments.size());
    FUZZ_CHECK((run.error == rt::error_code::none) == run.detail.empty());
    if (run.error == rt::error_code::none) FUZZ_CHECK(run.consumed == len);
    // A learned (or configured) Connection ID is that of every delivered segment.
    if (!run.segments.empty()) FUZZ_CHECK(d.connection_id().has_value());
    return run;
}

void check_parse(const std::uint8_t* s, std::size_t len, const rt::decode_options& options) {
    std::string error;
    rt::error_code code = rt::error_code::none;
    const auto h = rt::decode_header(s, len, &error, &code);
    if (h) {
        bytes b(h->size());
        rt::encode_header(*h, b.data());
        FUZZ_CHECK(std::memcmp(b.data(), s, b.size()) == 0);
    } else {
        FUZZ_CHECK(code == rt::error_code::truncated);
    }
    const auto v = rt::parse(s, len, &error, &code, options);
    if (!v) {
        FUZZ_CHECK(code != rt::error_code::none && !error.empty());
        return;
    }
    FUZZ_CHECK(h && code == rt::error_code::none);
    FUZZ_CHECK(rt::check_header(v->header, options, nullptr) == rt::error_code::none);
    FUZZ_CHECK(v->wire_length == rt::wire_length(v->header.segment_length) && v->wire_length <= len);
    FUZZ_CHECK(v->control == s + v->header.size() && v->payload == v->control + v->control_len);
    FUZZ_CHECK(v->header.size() + v->control_len + v->payload_len == v->header.segment_length);
    bytes again;
    FUZZ_CHECK(rt::encode(v->header, v->control, v->control_len, v->payload, v->payload_len, again));
    FUZZ_CHECK(again.size() == v->wire_length);
    FUZZ_CHECK(std::memcmp(again.data(), s, v->header.segment_length) == 0);
    const bool zero_pad = std::all_of(s + v->header.segment_length, s + v->wire_length - rt::kCrcSize,
                                      [](std::uint8_t b) { return b == 0; });
    if (zero_pad && options.check_crc) FUZZ_CHECK(std::memcmp(again.data(), s, again.size()) == 0);
    const auto seg = rt::decode(s, len, nullptr, nullptr, options);
    FUZZ_CHECK(seg && seg->control.size() == v->control_len && seg->payload.size() == v->payload_len);
}

void check_recovery(const rt::recovery::settings& cfg, const std::uint8_t* s, std::size_t len,
                    std::optional<std::uint32_t> stream_offset) {
    rt::recovery r(cfg);
    const auto a = r.assess(s, len, stream_offset);
    std::size_t accepted = 0;
    for (std::size_t i = 0; i < a.candidates.size(); ++i) {
        const auto& c = a.candidates[i];
        FUZZ_CHECK(c.offset <= len && (i == 0 || c.offset > a.candidates[i - 1].offset));
        const auto again = r.examine(s, len, c.offset, stream_offset);
        FUZZ_CHECK(again.reason == c.reason && again.complete == c.complete && again.wire_length == c.wire_length);
        if (c.reason == rt::recovery::reason::accepted) {
            ++accepted;
            FUZZ_CHECK(c.header_decoded && c.offset >= a.first_segment && c.offset < a.accepted_end);
            FUZZ_CHECK(c.complete ? c.offset + c.wire_length <= len : cfg.accept_partial);
        }
    }
    FUZZ_CHECK(a.segments == accepted);
    FUZZ_CHECK((a.verdict == rt::recovery::verdict::buffer) == (accepted == 0));
    if (a.verdict == rt::recovery::verdict::aligned) FUZZ_CHECK(a.first_segment == 0 && !a.candidates.empty());
    if (accepted == 0)
        FUZZ_CHECK(a.first_segment == len);
    else
        FUZZ_CHECK(a.first_segment < a.accepted_end && a.accepted_end <= len);
    if (a.partial_tail) FUZZ_CHECK(a.accepted_end == len && accepted > 0);
    FUZZ_CHECK(r.stats().assessed == 1 && r.stats().candidates == a.candidates.size());
    (void)rt::recovery::to_string(a.verdict);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz_input in(data, size);
    const std::uint8_t flags = in.u8();
    rt::decode_options options;
    options.ignore_reserved_bits = (flags & 1) != 0;
    options.check_crc = (flags & 2) == 0;
    if (flags & 4) options.connection_id = in.u64();
    rt::recovery::settings rcfg;
    rcfg.connection_id = options.connection_id.value_or(0);
    rcfg.ignore_reserved_bits = options.ignore_reserved_bits;
    rcfg.check_crc = options.check_crc;
    rcfg.strategy = (flags & 8) ? rt::recovery::strategy::scan_words : rt::recovery::strategy::assume_aligned;
    rcfg.accept_partial = (flags & 16) == 0;
    std::optional<std::uint32_t> stream_offset;
    if (flags & 32) stream_offset = in.u32();
    if (flags & 64) {
        rcfg.check_message_number = true;
        rcfg.next_message_number = in.u32();
        rcfg.message_window = in.u8();
        rcfg.read_response_first = rcfg.next_message_number;
        rcfg.read_responses_outstanding = rcfg.message_window / 2;
    }
    const std::uint32_t seed = in.u32();
    std::size_t len = 0;
    const std::uint8_t* s = in.rest(len);

    check_parse(s, len, options);
    rt::deframer::config dcfg;
    dcfg.connection_id = options.connection_id;
    dcfg.ignore_reserved_bits = options.ignore_reserved_bits;
    dcfg.check_crc = options.check_crc;
    split_mix chunks(seed);
    const run whole = deframe(dcfg, s, len, nullptr);
    const run pieces = deframe(dcfg, s, len, &chunks);
    FUZZ_CHECK(whole.segments == pieces.segments && whole.error == pieces.error && whole.detail == pieces.detail);
    if (whole.error == rt::error_code::none) FUZZ_CHECK(whole.consumed == pieces.consumed);
    check_recovery(rcfg, s, len, stream_offset);

    // Well-formed segments with fields taken from S.
    split_mix cuts(~std::uint64_t{seed});
    const std::uint64_t conn = cuts.next();
    std::vector<bytes> sent;
    bytes wire;
    std::size_t at = 0;
    while (sent.size() < 32 && (at < len || sent.empty())) {
        rt::header h;
        h.type = static_cast<rt::message_type>(cuts.below(4));
        h.connection_id = conn;
        h.message_number = static_cast<std::uint32_t>(cuts.next());
        h.order = static_cast<std::uint16_t>(cuts.next());
        h.client_bits = static_cast<std::uint8_t>(cuts.below(16));
        h.begin = cuts.below(2) != 0;
        h.end = cuts.below(2) != 0;
        const std::size_t control = 4 * std::min(cuts.below(4), (len - at) / 4);
        std::size_t payload =
            h.type == rt::message_type::read_request ? 0 : std::min(cuts.below(600), len - at - control);
        switch (h.type) {
        case rt::message_type::read_request:
            h.begin = h.end = true;
            h.buffer_id = static_cast<std::uint32_t>(cuts.next());
            h.buffer_offset = static_cast<std::uint32_t>(cuts.next());
            h.rdma_length = static_cast<std::uint32_t>(cuts.next());
            break;
        case rt::message_type::rdma_write:
            h.buffer_id = static_cast<std::uint32_t>(cuts.next());
            h.rdma_length = static_cast<std::uint32_t>(payload + ((h.begin && h.end) ? 0 : cuts.below(5000)));
            break;
        default:
            h.data_offset = h.begin ? 0 : static_cast<std::uint32_t>(cuts.next());
            break;
        }
        const std::size_t before = wire.size();
        FUZZ_CHECK(rt::encode(h, s + at, control, s + at + control, payload, wire));
        at += control + payload;
        const auto v = rt::parse(wire.data() + before, wire.size() - before, nullptr);
        FUZZ_CHECK(v && v->wire_length == wire.size() - before);
        sent.push_back(flatten(*v));
    }
    split_mix chunks_b(seed ^ 0x5A5A5A5Au);
    const run good = deframe(rt::deframer::config{}, wire.data(), wire.size(), &chunks_b);
    FUZZ_CHECK(good.error == rt::error_code::none && good.segments == sent);
    rt::recovery::settings aligned;
    aligned.connection_id = conn;
    rt::recovery r(aligned);
    const auto a = r.assess(wire.data(), wire.size(), 0);
    FUZZ_CHECK(a.verdict == rt::recovery::verdict::aligned && a.segments == sent.size() && !a.partial_tail &&
               a.accepted_end == wire.size());
    return 0;
}
