// Offline checker of iWARP traffic in a capture: follows every TCP connection, reassembles each
// direction's byte stream from the sequence numbers, finds the MPA Request/Reply exchange
// (RFC 5044 §7.1, RFC 6581), reframes the FPDUs with mpa::Deframer (with or without Markers),
// verifies every CRC and the DDP/RDMAP headers (RFC 5040, RFC 5041, RFC 7306), and counts what it
// saw per connection and direction. Used by the rnic-pcap-check tool and by tests.
//
// What counts as an error (Severity::error; warnings do not fail a check):
//   capture      a TCP/IPv4 frame that cannot be parsed, or a record cut short by the snaplen
//   tcp          a hole in a stream that no later segment fills ("missing N bytes at seq X"),
//                including bytes the peer acknowledged that the capture does not hold
//   negotiation  no MPA Request/Reply at the start of a stream, an undecodable frame, reserved
//                bits, revision/S-flag mismatches, no RFC 6581 RTR as the first FPDU in P2P mode
//   reject       the MPA Reply has R set (the connection is refused)
//   crc          an FPDU whose CRC does not match (the direction is not checked any further)
//   framing      ULPDU_Length too large, a Marker whose FPDUPTR is wrong, a stream that stops in
//                the middle of an FPDU after a FIN
//   header       DDP/RDMAP header problems: short header, DV/RV not 1, reserved opcode, T bit not
//                matching the opcode, QN not matching the opcode, MSN out of sequence, MO/L
//                inconsistencies, wrong opcode-specific header size, non-zero reserved bits
// A bad TCP checksum or a bad IPv4 header checksum is a warning: the frame is dropped as a
// receiver would drop it (a retransmission fills the hole; if none does, the hole is an error).
// Such a frame never opens a connection (its ports may be the damaged bytes): it is charged to the
// connection its 4-tuple names, or else to the capture. A capture with no frame at all is an error.
//
// With Options::framing == Framing::ift (seed 001, draft-williams-iwarp-ift-00, proto/seeds/ift.h)
// the MPA Request/Reply is still the switch into RDMA mode, but each direction is then reframed
// with ift::Deframer: a bad Header CRC is a crc error that ends the direction's checks (the
// framing is lost); a bad Payload CRC is a crc error after which deframing goes on (the frame's
// verified DDP header still advances the MSN tracking, its ULPDU is not checked). A size field
// outside the DDP header sizes (14..18 bytes), or a header_size that is not the DDP header's own
// size, is a framing / header error. An FPDU count means IFT frames then.
//
// With Framing::rdmatcp (seed 000, draft-williams-rdmatcp-00; proto/stream_check_rdmatcp.h) each
// direction is reframed by the §5 length rule with rdmatcp::Deframer: a bad CRC-32 is a crc error
// that ends the direction's checks; a bad Version or length, a second Connection ID (§3.4: one
// value in both directions), Control Data that does not fit the type (proto/seeds/rdmatcp_ddp.h)
// or a message out of sequence (§3.4 message numbers, §4) is a framing error that ends them too.
// The ULPDU each good segment carries gets the DDP/RDMAP checks. An FPDU count means RDMA/TCP
// segments then.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"

namespace rnic::proto::check {

enum class severity { warning, error };
enum class category { capture, tcp, negotiation, reject, crc, framing, header };
const char* to_string(severity);
const char* to_string(category);

// What frames DDP segments after the MPA Request/Reply: MPA FPDUs (RFC 5044), IFT frames (seed
// 001) or RDMA/TCP segments (seed 000).
enum class framing { mpa, ift, rdmatcp };

struct issue {
    check::severity severity = severity::error;
    check::category category = category::header;
    std::uint64_t frame = 0;  // 1-based frame number in capture order; 0 = found at the end of the capture
    std::string text;
};

// One FPDU (or IFT frame) with good CRCs (kept only with Options::keep_fpdu_log).
struct fpdu_info {
    std::uint64_t frame = 0;          // frame that completed the FPDU
    std::uint64_t stream_offset = 0;  // of its first byte, counted from the first byte after the Request/Reply
    std::size_t wire_length = 0;      // incl. Markers, PAD and CRC (IFT: size fields and both CRCs)
    std::size_t ulpdu_length = 0;
    bool header_ok = false;  // the DDP header could be decoded (then `header` is valid)
    ddp::header header;
    std::vector<std::uint8_t> head;  // the ULPDU's first kFpduHeadBytes bytes (DDP + RDMAP headers)
};
constexpr std::size_t kFpduHeadBytes = 96;  // untagged DDP header (18) + the largest RDMAP header (52) fits

// Index 0 of ConnectionReport::directions is initiator -> responder, 1 is responder -> initiator.
enum direction : int { k_to_responder = 0, k_to_initiator = 1 };

struct direction_report {
    // TCP
    std::uint64_t segments = 0;               // segments carrying payload
    std::uint64_t stream_bytes = 0;           // bytes reassembled in order
    std::uint64_t retransmitted_bytes = 0;    // payload bytes already seen (dropped)
    std::uint64_t out_of_order_segments = 0;  // segments that arrived ahead of a hole
    std::uint64_t missing_bytes = 0;          // in holes never filled
    bool syn = false, fin = false, rst = false;
    // MPA (or IFT)
    bool full_operation = false;            // reached FPDU framing
    check::framing framing = framing::mpa;  // of the frames after the Request/Reply
    bool markers = false;
    std::uint64_t fpdus = 0;       // FPDUs (IFT frames) with good CRCs
    std::uint64_t fpdu_bytes = 0;  // their wire bytes (length field, ULPDU, PAD, CRC, Markers)
    std::uint64_t ulpdu_bytes = 0;
    std::uint64_t unchecked_bytes = 0;  // stream bytes after a stop (CRC error, reject, no MPA)
    // DDP / RDMAP
    std::array<std::uint64_t, 16> opcodes{};  // FPDUs per RDMAP opcode (4-bit field)
    std::uint64_t atomic_fetch_add = 0, atomic_compare_swap = 0;
    std::uint64_t messages = 0;                 // DDP segments with L = 1
    std::vector<std::uint8_t> opcode_sequence;  // opcode of every good FPDU in stream order
    std::vector<std::string> terminates;        // one line per Terminate (at most Options::max_issues)
    std::vector<fpdu_info> fpdu_log;            // Options::keep_fpdu_log
    // Error counts (every occurrence, even beyond Options::max_issues)
    std::uint64_t bad_crcs = 0, framing_errors = 0, header_errors = 0, tcp_errors = 0;
    std::uint64_t warning_count = 0;
    std::vector<issue> issues;  // this direction's errors and warnings
};

struct connection_report {
    std::uint32_t initiator_ip = 0, responder_ip = 0;  // host byte order
    std::uint16_t initiator_port = 0, responder_port = 0;
    bool roles_from_mpa = false;  // the MPA Request told who the initiator is (else the SYN or first sender)
    std::uint64_t first_frame = 0, last_frame = 0;
    std::uint64_t first_time_ns = 0, last_time_ns = 0;
    std::optional<mpa::request_reply> request, reply;
    bool negotiated = false;  // valid Request and Reply, not rejected: Full Operation
    bool rejected = false;
    bool crc = false;           // CRC in use (either C bit; always with IFT)
    std::uint8_t revision = 0;  // of the Reply (0 until seen)
    std::array<direction_report, 2> directions;
    std::vector<issue> issues;             // connection-level: negotiation, reject
    std::uint64_t negotiation_errors = 0;  // negotiation and reject issues
    std::uint64_t warning_count = 0;       // connection-level warnings

    std::uint64_t errors() const;  // all errors of the connection and both directions
    std::uint64_t warnings() const;
};

struct capture_report {
    std::uint64_t frames = 0;
    std::uint64_t tcp_frames = 0;
    std::uint64_t other_frames = 0;  // not IPv4/TCP (ARP, ...): ignored
    std::vector<issue> issues;       // capture-level (unparsable frames)
    std::uint64_t capture_errors = 0;
    std::uint64_t warning_count = 0;             // capture-level warnings
    std::uint64_t damaged_frames = 0;            // frames with a bad checksum that match no connection (dropped)
    std::vector<connection_report> connections;  // in order of their first frame

    std::uint64_t errors() const;
    std::uint64_t warnings() const;
    bool ok() const { return errors() == 0; }
};

struct options {
    // Drop (with a warning) frames whose TCP or IPv4 header checksum is wrong. Turn off for captures taken on a host with checksum
    // offload, where outgoing frames carry no valid checksums: both are then ignored.
    bool verify_checksums = true;
    // Report non-zero reserved bits (MPA Res and R-in-Request, DDP Rsvd, RDMAP Rsv, Invalidate
    // STag of messages without one, Terminate and Atomic Request reserved fields) as errors.
    // Off: accept them silently (e.g. Linux siw sets MPA Res bit 0x08).
    bool strict_reserved_bits = true;
    bool keep_fpdu_log = false;
    // Framing after the MPA Request/Reply (rnic.framing of the platform; rnic-pcap-check --framing).
    check::framing framing = framing::mpa;
    std::size_t max_issues = 50;  // issues stored per direction / connection / capture
};

// Feed frames in capture order, then call finish() once.
class stream_checker {
public:
    explicit stream_checker(const check::options& options = check::options{});
    ~stream_checker();
    stream_checker(const stream_checker&) = delete;
    stream_checker& operator=(const stream_checker&) = delete;

    // One captured Ethernet frame (without FCS). `original_length` is the length on the wire when
    // the capture cut the frame short (0 = not cut).
    void add_frame(std::uint64_t time_ns, const std::uint8_t* data, std::size_t len, std::size_t original_length = 0);
    // Reports holes, incomplete FPDUs and missing negotiation; later add_frame() calls are ignored.
    const capture_report& finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Reads a classic pcap file and checks it; nullopt + *error when the file cannot be read.
std::optional<capture_report> check_pcap_file(const std::string& path, const options& options, std::string* error);

// Human-readable summary: per connection the endpoints, MPA revision, Markers each way, CRC (or the
// IFT framing), then per direction FPDUs (IFT frames), bytes, opcode histogram and the issues;
// verbose adds one line per FPDU (needs Options::keep_fpdu_log) and every TCP counter. The last
// line is "summary: N connections, N FPDUs, ..." ("N IFT frames" when any direction used IFT).
std::string format_report(const capture_report& report, bool verbose);

}  // namespace rnic::proto::check
