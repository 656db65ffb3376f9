// A framing: how DDP segments (ULPDUs) are framed in the TCP byte stream, behind one interface.
// Plain C++ (no SystemC): the framer module (mpa_framer.h) wraps it with sockets and timing, and the
// other blocks ask it what they need to know about the frames instead of knowing the format:
//   the RDMA engine   room a ULPDU needs in the TCP send stream (tx_room), where the frame put
//                     bytes between the payload's bytes for the DMA gather (placement_breaks);
//   the TCP engine    the same frame again for a retransmission from host memory (reframe);
//   the framer        build, deframe in order, find and deframe frames out of order.
// Implementations: mpa_framing (RFC 5044, through an fpdu_datapath: TLM codecs or Verilated RTL),
// ift_framing (seed 001) and rdmatcp_framing (seed 000). One is made per device by make_framing
// (framing_factory.h), the one place that chooses the framing and the datapath model.
//
// "Position" is the marker-space position of a stream byte (proto/mpa.h): the byte's offset from
// the first byte of full operation, modulo 2^32. A framing without markers ignores it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framing/fpdu_datapath.h"

namespace rnic {

// What frames the DDP segments on the wire: MPA (RFC 5044), IFT (seed 001,
// draft-williams-iwarp-ift-00: two size fields, the DDP header, a Header CRC, the payload, a
// Payload CRC; no markers, no padding) or RDMA/TCP (seed 000, draft-williams-rdmatcp-00: the
// seed's segments with a Connection ID, message numbers and a CRC-32, rdmatcp_framing.h).
// VI/TCP (seed 003, draft-dicecco-vitcp-01) is a whole protocol with its own connection
// establishment (firmware, proto/seeds/vitcp_ce.h); its segments are vitcp_framing.h's.
enum class framing_kind : std::uint8_t { mpa, ift, rdmatcp, vitcp };

// What the MPA negotiation settled for one connection (RFC 5044 §7.1).
struct mpa_settings {
    bool tx_markers = false;  // we insert markers (the peer asked for them)
    bool rx_markers = false;  // the peer inserts markers (we asked for them)
    bool crc = true;          // either side set C
    std::size_t max_ulpdu = 1454;
    // VI/TCP: the RDMA Read Window agreed in the CE exchange (seed 003 §2.2.2.2.6); others ignore it.
    std::uint16_t read_window = 0xFFFF;
    // VI/TCP: Unreliable Delivery was agreed (seed 003 §3.3): some message errors leave the
    // connection up (proto/seeds/vitcp_errors.h); others ignore it.
    bool unreliable = false;
    // VI/TCP: Reliable Reception was agreed (seed 003 §3.3): both ends acknowledge placed messages
    // with Message ACK and report errors with the Remote Error Code (§3.2, proto/seeds/vitcp_ack.h).
    bool reliable_reception = false;
};

// The options one direction of a connection frames with (RFC 5044 §7.1: the M and C flags).
struct frame_options {
    bool markers = false;
    bool crc = true;
    // The framer's connection: a framing with per-connection state keys it by this (RDMA/TCP's
    // Connection ID and message numbers); MPA and IFT frames do not depend on it.
    std::uint32_t conn = 0;
    // VI/TCP: the negotiated RDMA Read Window the receive side holds the peer to (mpa_settings).
    std::uint16_t read_window = 0xFFFF;
    // VI/TCP: Unreliable Delivery (mpa_settings).
    bool unreliable = false;
    // VI/TCP: Reliable Reception (mpa_settings).
    bool reliable_reception = false;
    // Transmit only, set by the framer for the frame being built: the send-stream offset of its
    // first byte (0 = the first byte after the SYN) and the simulated time (ps) it is built for.
    // VI/TCP Reliable Reception acknowledges in it what was placed by then and completes work
    // requests by those offsets; other framings ignore both.
    std::uint64_t stream_offset = 0;
    std::uint64_t at_ps = 0;
};

// What the peer reported about the messages this end sent (VI/TCP Reliable Reception, seed 003
// §3.2: Message ACK and the VI Error Type of the Remote Error Code). `placed_through` is a
// send-stream offset: every message ending at or before it is placed in the peer's memory.
enum class peer_error_kind : std::uint8_t {
    none,
    memory_protection,  // the peer found an RDMA Memory Protection Error in our message
    descriptor,         // a VI Descriptor Error (no receive descriptor, or one too small)
    transport,          // an Unrecoverable Transport Error (CRC, framing, a protocol error)
};
struct peer_acknowledgement {
    bool placed = false;  // placed_through moved on
    std::uint64_t placed_through = 0;
    // The peer reports a message in error; the connection is breaking. `error_named`: the report
    // names one of our messages not yet placed, the first after placed_through; else it names none
    // of ours (an error in the peer's own message, or a stream the peer could no longer read).
    peer_error_kind error = peer_error_kind::none;
    bool error_named = false;
};

// Errors the RDMA engine finds in a received message that the framing's protocol may let its
// connection survive (VI/TCP at Unreliable Delivery, proto/seeds/vitcp_errors.h). Over every
// other framing none does: the receiver Terminates and closes (RFC 5040 §6.2).
enum class rx_message_error : std::uint8_t {
    protection,  // a tagged Write's STag, rights or bounds
    descriptor,  // a Send with no receive posted, or too long for it
};

// Why an in-order stream stopped deframing: the two LLP errors of RFC 5044 §8 (code 2, a CRC
// error; code 3, a frame that cannot be delineated), which IFT reports the same way.
enum class deframe_status : std::uint8_t { ok, crc_error, framing_error };

// A good frame's ULPDU (valid only during the call) and what checking it cost the datapath.
using frame_sink = std::function<void(const std::uint8_t* ulpdu, std::size_t len, const datapath_cycles& cycles)>;

// The receive side of one connection in full operation: fed the in-order stream in any chunks,
// delivers each good frame's ULPDU; after the first error nothing more is delivered.
class frame_deframer {
public:
    virtual ~frame_deframer() = default;
    virtual deframe_status feed(const std::uint8_t* data, std::size_t len) = 0;
    // After an error: its name (for the log) and what and where (for the log and the firmware).
    virtual std::string error_name() const = 0;
    virtual const std::string& error_detail() const = 0;
    // During a sink call: the frame being delivered belongs to a message in error that the
    // connection survives (placement_ext::in_error).
    virtual bool delivering_in_error() const { return false; }
    // During a sink call: the ULPDU being delivered is placed, with its completion written, by
    // simulated time `at_ps` (a framing that acknowledges placed messages, VI/TCP Reliable
    // Reception, acknowledges it from then on).
    virtual void landed(std::uint64_t /*at_ps*/) {}
    // What the frames fed since the last call reported about this end's messages (VI/TCP Reliable
    // Reception); nothing for other framings.
    virtual peer_acknowledgement take_peer_acknowledgement() { return {}; }
};

class framing {
public:
    virtual ~framing() = default;
    virtual framing_kind kind() const = 0;
    // The datapath that builds and checks the frames (the results name it).
    virtual datapath_model model() const = 0;

    // The settings a connection runs with, from what the MPA negotiation settled (a framing
    // without markers or with more overhead per frame changes them).
    virtual mpa_settings settle(const mpa_settings& negotiated) const = 0;

    // ---- transmit
    // Send-stream room a ULPDU of `ulpdu_len` bytes needs beyond its own bytes, at any position: an
    // upper bound of what build() adds (the RDMA engine waits for it before it sends).
    virtual std::size_t tx_room(std::size_t ulpdu_len) const = 0;
    // Bytes the frame carrying `ulpdu_len` bytes occupies in the stream when it starts at `pos`.
    virtual std::size_t wire_length(std::size_t ulpdu_len, const frame_options& options, std::uint32_t pos) const = 0;
    // The same for the frame of this very ULPDU: a framing whose frame length depends on the ULPDU's
    // type (VI/TCP: the RDMA header only on some types) answers from its bytes.
    virtual std::size_t frame_wire_length(const std::uint8_t* /*ulpdu*/, std::size_t ulpdu_len,
                                          const frame_options& options, std::uint32_t pos) const {
        return wire_length(ulpdu_len, options, pos);
    }
    // Appends the frame carrying `ulpdu` at position `pos` to `out`, through the datapath.
    virtual datapath_cycles build(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options,
                                  std::uint32_t pos, std::vector<std::uint8_t>& out) = 0;
    // Appends a frame that carries only the acknowledgement of placed messages the protocol owes
    // the peer (VI/TCP Reliable Reception: a NOP with the Message ACK, seed 003 §3.2 Notes on NOP),
    // or nothing when the frames already sent told the peer as much, or the framing has no such
    // acknowledgement.
    virtual datapath_cycles build_acknowledgement(const frame_options& /*options*/, std::uint32_t /*pos*/,
                                                  std::vector<std::uint8_t>& /*out*/) {
        return {0, 0};
    }
    // Appends the same bytes build() gave for the same ULPDU at the same position, with the codec
    // (no datapath, no cost): a retransmission re-framed from host memory.
    virtual void reframe(const std::uint8_t* ulpdu, std::size_t len, const frame_options& options, std::uint32_t pos,
                         std::vector<std::uint8_t>& out) const = 0;

    // ---- placement
    // For a frame at `frame_pos` whose ULPDU carries `header_len` bytes of DDP/RDMAP headers and
    // then `payload_len` payload bytes: the offsets o (0 < o < payload_len, ascending) at which the
    // stream had framing bytes between payload byte o-1 and o (MPA Markers, RFC 5044 §4.3), for a
    // DMA engine that must break its transfer there (seed 001 §6). False when the frame puts
    // nothing between payload bytes (a plain write), true with `breaks` filled (maybe empty) else.
    virtual bool placement_breaks(const frame_options& options, std::uint32_t frame_pos, std::size_t header_len,
                                  std::size_t payload_len, std::vector<std::uint32_t>* breaks) const = 0;

    // ---- receive
    // The in-order deframer of one connection; its first byte is at position 0.
    virtual std::unique_ptr<frame_deframer> make_deframer(const frame_options& options, frame_sink sink) = 0;
    // Out of order: deframes the whole frames from the start of `data` (at position `pos`), a
    // trailing partial frame left alone, and hands each to `sink`. False when the bytes there are
    // not a frame (the frames before it were delivered).
    virtual bool deframe_whole(const frame_options& options, std::uint32_t pos, const std::uint8_t* data,
                               std::size_t len, const frame_sink& sink) = 0;
    // Whether the framing can find frames inside out-of-order bytes (MPA Markers, RFC 5044 §4.3).
    virtual bool locates_frames() const = 0;
    // The position of the first frame that starts at or after `pos` inside [pos, pos + len) and
    // that the bytes locate; false when none does (or the framing cannot locate frames).
    virtual bool locate_frame(const frame_options& options, const std::uint8_t* data, std::size_t len,
                              std::uint32_t pos, std::uint32_t* start) const = 0;
    // Held bytes on either side of an out-of-order segment that locating and deframing the frames
    // straddling its edges needs to see (RFC 5044 Appendix A); 0 when the framing cannot.
    virtual std::size_t split_frame_reach(const frame_options& options) const = 0;

    // Whether the frames can carry RFC 7306 atomic operations; the RDMA engine refuses atomic work
    // requests (bad opcode) when not (RDMA/TCP: none of seed 000's four message types is one).
    virtual bool carries_atomics() const { return true; }

    // Whether `conn` survives error `e` in a received message of the given kind (tagged: an RDMA
    // Write, else a Send); false unless the framing's protocol says so.
    virtual bool connection_survives(std::uint32_t /*conn*/, rx_message_error /*e*/) const { return false; }
};

}  // namespace rnic
