// Control interfaces of the framing unit.
//  framer_ctl_if    firmware -> framer: leave start-up (MPA negotiation) for full operation.
//  framer_events_if framer -> control processor: start-up bytes arrived, framing errors.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "framing/framing.h"  // framing_kind, mpa_settings

namespace rnic {

class framer_ctl_if : public virtual sc_core::sc_interface {
public:
    // Bytes received on `conn` while in start-up (before full operation), not yet consumed.
    virtual const std::vector<std::uint8_t>& startup_bytes(std::uint32_t conn) const = 0;
    // Switch `conn` to full operation; the first `consumed` start-up bytes were the MPA frame, the
    // rest (if the peer's first FPDUs came right behind it) are deframed now.
    virtual void full_operation(std::uint32_t conn, const mpa_settings& settings, std::size_t consumed) = 0;
    // The longest ULPDU the framing puts in one TCP segment on `conn` in full operation (at most
    // settings.max_ulpdu: a framing with more overhead per frame than MPA lowers it).
    virtual std::size_t ulpdu_limit(std::uint32_t conn) const = 0;
};

// Receive paths for out-of-order TCP segments (docs/architecture.md, "Receive paths").
enum class rx_path : std::uint8_t {
    buffering,  // hold out-of-order data in NIC buffer memory until the hole is filled
    markers,    // MPA markers locate FPDUs in out-of-order segments: place them directly (RFC 5044)
    aligned,    // assume FPDUs start at segment starts, check them, place directly (seed 000 §5)
    urgent,     // the TCP urgent pointer names a VI segment start: check it, place directly (seed 003 §3.7)
};

// Frames placed out of order by one offer: their stream bytes, and when the last of them has
// landed in host memory (a delay from the current time).
struct placement_landing {
    std::uint64_t bytes = 0;
    sc_core::sc_time landed = sc_core::SC_ZERO_TIME;
};

// The TCP engine offers out-of-order segments to the framing unit before buffering them. What the
// framer places it records with the TCP engine, the one owner of out-of-order state
// (toe/reassembly.h: reassembly_if), not here.
class framer_ooo_if : public virtual sc_core::sc_interface {
public:
    // `stream_offset` is the TCP stream offset (0 = first byte after the SYN) of data[0]. Returns
    // how many of the `len` bytes belong to whole FPDUs that were placed directly.
    virtual std::size_t place_out_of_order(std::uint32_t conn, std::uint64_t stream_offset, const std::uint8_t* data,
                                           std::size_t len, sc_core::sc_time& delay) = 0;
    // The out-of-order segment about to be offered at `stream_offset` carries URG with this urgent
    // pointer (RFC 9293 §3.1: an offset from its first byte). Called right before
    // place_out_of_order, which takes it for that segment only (VI/TCP's Urgent Marker, seed 003
    // §3.7: the pointer names the first byte of a VI segment). A framer without that path ignores it.
    virtual void urgent_pointer(std::uint32_t /*conn*/, std::uint64_t /*stream_offset*/, std::uint16_t /*pointer*/) {}
    // After a segment [seg_offset, seg_offset + seg_len) was offered and admitted: `data` is the
    // out-of-order run around it ([run_offset, run_offset + len): held bytes before it, the segment,
    // held bytes after it). A framing that can locate frames in it (MPA markers, RFC 5044
    // Appendix A) places the whole frames that straddle the segment's edges, which neither piece
    // held alone. Returns how many such frames were placed.
    virtual std::size_t place_split_fpdus(std::uint32_t conn, std::uint64_t run_offset, const std::uint8_t* data,
                                          std::size_t len, std::uint64_t seg_offset, std::size_t seg_len,
                                          sc_core::sc_time& delay) = 0;
    // How many held bytes on either side of a segment place_split_fpdus needs to see to place every
    // frame that straddles the segment's edges; 0 when it can do nothing on `conn` (so the caller
    // need not gather the run). Bounds the caller's copy, whatever the length of the held run.
    virtual std::size_t split_fpdu_reach(std::uint32_t conn) const = 0;
    // What the last place_out_of_order or place_split_fpdus call placed: the frames' stream bytes,
    // and when their ULPDUs have landed in host memory, as a delay from the current time (the
    // in-order path returns the same through its transport delay). The TCP engine counts them in
    // its write queue to the host bus (placement_backlog) like bytes delivered in order.
    virtual placement_landing last_placement() const = 0;
    // The TCP engine freed `conn` (closed and released by its owner): its id may name a new
    // connection next, which must start from start-up, so the framing forgets all it kept for it.
    virtual void connection_released(std::uint32_t conn) = 0;
};

class framer_events_if : public virtual sc_core::sc_interface {
public:
    virtual void on_startup_bytes(std::uint32_t conn) = 0;
    virtual void on_framing_error(std::uint32_t conn, const std::string& what) = 0;
};

}  // namespace rnic
