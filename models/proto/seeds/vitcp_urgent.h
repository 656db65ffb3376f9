// VI/TCP's Urgent Marker option (seed 003 §3.7) without SystemC: which byte of a TCP segment a
// sender designates as urgent, and where a receiver finds a VI segment start from a segment's
// urgent pointer. The TCP engine (sender) and the framer's urgent receive path use these; the
// capture checker holds captures to the same rules.
//
// The pointer's meaning is the seed's: "the urgent pointer in the TCP header must point to the
// urgent byte (the first byte of the VI segment) and not the byte following the urgent byte"
// (§3.7, after RFC 1122 §4.2.2.4). RFC 9293 §3.1 (MUST-62, after RFC 6093) has since defined the
// pointer as naming the byte after the urgent data; the seed says an implementation that cannot
// point at the urgent byte itself must never mark, and the platform follows the seed: the byte at
// SEG.SEQ + urgent pointer is the first byte of a VI segment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace rnic::proto::vitcp_urgent {

// The sending side of one connection: told where each VI segment starts in the TCP send stream,
// it answers, for a TCP segment about to leave, the urgent pointer that names the first VI segment
// starting in it. §3.7: "Unless and until the Urgent Marker Option was received from the remote
// end ... no TCP data may be designated as urgent", so nothing is marked before start().
class marker {
public:
    // The peer's CE header carried the Urgent Marker option: VI segments starting at or after
    // `stream_offset` (the first one of full operation) may be marked.
    void start(std::uint64_t stream_offset) {
        on_ = true;
        from_ = stream_offset;
    }
    bool on() const { return on_; }
    // A VI segment starts at `stream_offset` (ascending; earlier or repeated offsets are ignored).
    void segment_start(std::uint64_t stream_offset);
    // Bytes below `stream_offset` are acknowledged and never sent again.
    void acked(std::uint64_t stream_offset);
    // The urgent pointer for a TCP segment carrying [stream_offset, stream_offset + len): the
    // offset from its first byte of the first VI segment start inside it; none when no VI segment
    // starts there (a segment continuing one), when marking is off or the offset does not fit 16 bits.
    std::optional<std::uint16_t> pointer_for(std::uint64_t stream_offset, std::size_t len) const;
    std::size_t starts_held() const { return starts_.size(); }

private:
    bool on_ = false;
    std::uint64_t from_ = 0;
    std::deque<std::uint64_t> starts_;
};

// The receiving side: the stream offset of the VI segment start a TCP segment's urgent pointer
// names, for a segment whose first byte is at `stream_offset` and which carries `len` bytes; none
// when URG is clear or the named byte is not in this segment (RFC 9293 §3.8.5 lets the urgent
// pointer run ahead of the data; §3.7 marks only a byte of the segment itself).
std::optional<std::uint64_t> located_start(std::uint64_t stream_offset, std::size_t len, bool urg,
                                           std::uint16_t urgent_pointer);

}  // namespace rnic::proto::vitcp_urgent
