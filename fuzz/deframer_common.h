// The body of the two MPA Deframer targets (fuzz_mpa_deframer: no Markers,
// fuzz_mpa_deframer_markers: Markers every 512 bytes of marker space).
//
// Input: byte 0 flags (bit 0: CRC checked; bit 1: a u32 stream_pos follows; bit 2: a u16
// max_ulpdu follows), the optional fields (little-endian), a u32 seed for the chunking, then the
// stream bytes S.
//
// Phase A (arbitrary stream): S is fed once whole and once in chunks of input-derived sizes.
//  - the deliveries, the error, its detail and the counters agree between the two feeds
//    (chunk boundaries must not matter, the in-place fast path agrees with the gathering one);
//  - no more ULPDU bytes are delivered than were fed, each ULPDU is at most max_ulpdu bytes,
//    fpdus() counts the deliveries, bytes_consumed() is all of S unless an error stopped it;
//  - after an error nothing more is consumed or delivered, and the error stays.
// Phase B (well-formed stream): S is cut into ULPDUs of input-derived lengths, each framed with
// build_fpdu() at its running marker-space position, and the stream fed in chunks.
//  - fpdu_wire_length() is what build_fpdu() appended;
//  - the Deframer reports no error, delivers exactly those ULPDUs, consumes every byte, and ends
//    at an FPDU boundary.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "proto/mpa.h"

namespace rnic::fuzz {

namespace mpa = rnic::proto::mpa;

struct deframe_run {
    std::vector<std::vector<std::uint8_t>> ulpdus;
    std::uint64_t delivered_bytes = 0;
    mpa::deframe_error error = mpa::deframe_error::none;
    std::string detail;
    std::uint64_t fpdus = 0;
    std::uint64_t consumed = 0;
};

// Feeds `stream` to a Deframer, in chunks drawn from `rng` (whole when rng is null).
inline deframe_run deframe(const mpa::deframer::config& cfg, const std::uint8_t* stream, std::size_t len,
                           split_mix* rng) {
    deframe_run run;
    mpa::deframer d(cfg, [&](const std::uint8_t* ulpdu, std::size_t n) {
        FUZZ_CHECK(n <= cfg.max_ulpdu);
        FUZZ_CHECK(n == 0 || ulpdu != nullptr);
        run.ulpdus.emplace_back(ulpdu, ulpdu + n);
        run.delivered_bytes += n;
    });
    std::size_t at = 0;
    while (at < len) {
        const std::size_t n = rng != nullptr ? std::min(next_chunk(*rng), len - at) : len - at;
        const std::uint64_t before = d.bytes_consumed();
        const mpa::deframe_error was = d.error();
        const std::size_t delivered_before = run.ulpdus.size();
        const mpa::deframe_error e = d.feed(stream + at, n);
        FUZZ_CHECK(e == d.error());
        FUZZ_CHECK(d.bytes_consumed() - before <= n);
        if (was != mpa::deframe_error::none) {  // §8: nothing more after the first error
            FUZZ_CHECK(e == was && d.bytes_consumed() == before && run.ulpdus.size() == delivered_before);
        }
        if (e == mpa::deframe_error::none) FUZZ_CHECK(d.bytes_consumed() - before == n);
        FUZZ_CHECK((e == mpa::deframe_error::none) == d.error_detail().empty());
        at += n;
    }
    run.error = d.error();
    run.detail = d.error_detail();
    run.fpdus = d.fpdus();
    run.consumed = d.bytes_consumed();
    FUZZ_CHECK(run.fpdus == run.ulpdus.size());
    FUZZ_CHECK(run.consumed <= len);
    FUZZ_CHECK(run.delivered_bytes <= run.consumed);  // never more ULPDU bytes out than stream bytes in
    if (run.error == mpa::deframe_error::none) FUZZ_CHECK(run.consumed == len);
    return run;
}

inline int fuzz_deframer(const std::uint8_t* data, std::size_t size, bool markers) {
    fuzz_input in(data, size);
    const std::uint8_t flags = in.u8();
    mpa::deframer::config cfg;
    cfg.markers = markers;
    cfg.crc = (flags & 1) != 0;
    if (flags & 2) cfg.stream_pos = in.u32();
    if (flags & 4) cfg.max_ulpdu = in.u16();
    const std::uint32_t seed = in.u32();
    std::size_t len = 0;
    const std::uint8_t* stream = in.rest(len);

    // Phase A.
    split_mix chunks(seed);
    const deframe_run whole = deframe(cfg, stream, len, nullptr);
    const deframe_run pieces = deframe(cfg, stream, len, &chunks);
    FUZZ_CHECK(whole.ulpdus == pieces.ulpdus);
    FUZZ_CHECK(whole.error == pieces.error);
    FUZZ_CHECK(whole.detail == pieces.detail);
    FUZZ_CHECK(whole.consumed == pieces.consumed);

    // Phase B.
    split_mix cuts(~std::uint64_t{seed});
    std::vector<std::vector<std::uint8_t>> sent;
    std::vector<std::uint8_t> wire;
    std::uint32_t pos = cfg.stream_pos;
    std::size_t at = 0;
    const std::size_t longest = std::min<std::size_t>(cfg.max_ulpdu, 1500);
    while (sent.size() < 64 && (at < len || sent.empty())) {
        const std::size_t n = std::min(cuts.below(longest + 1), len - at);
        sent.emplace_back(stream + at, stream + at + n);
        at += n;
        const std::size_t before = wire.size();
        mpa::build_fpdu(sent.back().data(), n, cfg.crc, markers, pos, wire);
        FUZZ_CHECK(wire.size() - before == mpa::fpdu_wire_length(n, markers, pos));
        pos += static_cast<std::uint32_t>(wire.size() - before);
    }
    split_mix chunks_b(seed ^ 0x5A5A5A5Au);
    const deframe_run good = deframe(cfg, wire.data(), wire.size(), &chunks_b);
    FUZZ_CHECK(good.error == mpa::deframe_error::none);
    FUZZ_CHECK(good.ulpdus == sent);
    FUZZ_CHECK(good.consumed == wire.size());
    return 0;
}

}  // namespace rnic::fuzz
