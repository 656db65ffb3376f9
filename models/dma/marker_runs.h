// Where MPA markers interrupt a placement (RFC 5044 §4.3): plain C++, no SystemC.
//
// A DDP payload that crossed the wire inside an FPDU with markers is contiguous in host memory but,
// in the TCP stream, has a 4-byte marker at every multiple of 512 of marker space. A DMA engine
// that can skip markers moves it as one transfer; a general-purpose DMA engine that cannot (seed 001
// §6) must break the transfer at every marker and issue one transfer per marker-free run. This
// helper gives those break points for the DMA engine's dma_ext::marker_breaks.
#pragma once

#include <cstdint>
#include <vector>

namespace rnic {

// Offsets o (0 < o < len, ascending) in a placement of `len` payload bytes at which a marker sat
// between payload byte o-1 and byte o in the stream. `first_pos` is the marker-space position (TCP
// sequence number minus that of the first marker, modulo 2^32; see proto/mpa.h) of the first
// payload byte. If first_pos falls inside a marker, the payload starts right after it.
inline std::vector<std::uint32_t> mpa_marker_breaks(std::uint32_t first_pos, std::uint32_t len,
                                                    std::uint32_t interval = 512, std::uint32_t marker_size = 4) {
    std::vector<std::uint32_t> breaks;
    if (interval == 0 || marker_size >= interval) return breaks;
    std::uint64_t pos = first_pos;
    if (pos % interval < marker_size) pos += marker_size - pos % interval;
    std::uint32_t off = 0;
    while (off < len) {
        const std::uint64_t next_marker = (pos / interval + 1) * interval;
        const std::uint64_t run = next_marker - pos;
        if (run >= static_cast<std::uint64_t>(len - off)) break;
        off += static_cast<std::uint32_t>(run);
        breaks.push_back(off);
        pos = next_marker + marker_size;
    }
    return breaks;
}

// Number of DMA transfers a placement needs: 1 + breaks when the engine must fragment, else 1.
inline std::size_t marker_transfers(std::uint32_t first_pos, std::uint32_t len, bool fragment) {
    return fragment ? 1 + mpa_marker_breaks(first_pos, len).size() : 1;
}

}  // namespace rnic
