// The VI/TCP part of the capture checker (rnic-pcap-check --framing vitcp, seed 003,
// draft-dicecco-vitcp-01), apart from the iWARP checker (proto/stream_check.h) because VI/TCP has
// its own start-up: each TCP connection is reassembled per direction, the CE exchange checked (§4:
// the SYN sender's ConnectRequest first, then the passive side's ConnectAccept, ConnectReject or
// ConnectNoMatch; the Accept held to the Request with vitcp::negotiate, §3.3, §3.6), then every
// later segment of both directions is deframed by its Segment Length with vitcp::Deframer (Version,
// Type, lengths, options, the trailer CRC when both CE segments carried the CRC option) and held to
// the message rules of proto/seeds/vitcp_ddp.h (message numbers, Data Offsets, one message at a
// time with Read Responses interleaved, a Read Response answering the oldest Read Request that went
// the other way, the agreed RDMA Read Window, the Transmit Error bit). At Reliable Reception (§3.2)
// each Message ACK that reports no error must name a message the other direction has completed, at
// or after the one it named before (acknowledgements are cumulative; vitcp_ack.h). Every error names
// the connection, the direction, the stream byte and what is wrong; the first error in a direction
// ends its checks.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "proto/pcap.h"
#include "proto/seeds/vitcp.h"
#include "proto/seeds/vitcp_ddp.h"

namespace rnic::proto::check {

struct vi_tcp_direction_report {
    std::uint64_t bytes = 0;     // stream bytes seen in order
    std::uint64_t segments = 0;  // VI segments after the CE exchange that passed every check
    std::uint64_t payload_bytes = 0;
    std::map<std::string, std::uint64_t> by_type;  // segments per VI type
    std::uint64_t unchecked_bytes = 0;             // after an error, or a partial segment at the end
    std::uint64_t urgent_marks = 0;                // distinct urgent bytes named by URG segments (§3.7), each checked
};

struct vi_tcp_connection_report {
    std::string name;  // "10.0.0.1:40000 -> 10.0.0.2:18515" (the SYN sender first)
    std::string ce;    // what the CE exchange settled, or why it failed
    bool connected = false;
    bool crc = false;
    std::array<vi_tcp_direction_report, 2> dir;  // 0: active (SYN sender), 1: passive
    std::vector<std::string> errors;
    std::vector<std::string> crc_errors;  // the subset of errors that are trailer CRC mismatches
};

struct vi_tcp_capture_report {
    std::uint64_t frames = 0, tcp_frames = 0;
    std::vector<vi_tcp_connection_report> connections;
    std::vector<std::string> errors;  // capture-level (unreadable frames)
    std::size_t error_count() const;
};

// Both directions of one connection in stream order (dir 0 the active side's); testable without a
// capture.
class vi_tcp_streams {
public:
    explicit vi_tcp_streams(vi_tcp_connection_report& report) : rep_(report) {}
    void feed(int dir, const std::uint8_t* data, std::size_t len);
    // A TCP segment of `dir` (frame `frame_no`) carried URG with an urgent pointer naming stream byte
    // `stream_offset` (SEG.SEQ + pointer, from the first byte after the SYN). Seed 003 §3.7: only
    // the first byte of a VI segment, and only once the other end's CE segment carried the Urgent
    // Marker option; checked at finish(), when the segment starts are known.
    void urgent(int dir, std::uint64_t stream_offset, std::uint64_t frame_no);
    // End of the capture: a partial segment or a CE exchange that never finished is reported.
    void finish();

private:
    struct dir_state {
        std::vector<std::uint8_t> pending;  // bytes before the CE exchange is decided
        bool ce_done = false;
        std::unique_ptr<vitcp::deframer> deframer;
        vitcp_map::session receiver;  // the state of the side receiving this direction
        bool failed = false;
        std::uint64_t offset = 0;        // stream offset of the next data segment
        std::uint64_t base = 0;          // stream offset of the first data segment (the CE segment's length)
        bool may_mark = false;           // the other end's CE segment carried the Urgent Marker option
        std::set<std::uint64_t> starts;  // stream offsets of the VI segments that passed every check
        std::vector<std::pair<std::uint64_t, std::uint64_t>> urgent;  // (stream offset, frame) claimed
        // Reliable Reception: this direction's completed messages the other has not acknowledged
        // yet, and the last Message ACK this direction carried.
        std::deque<std::uint32_t> completed;
        std::uint32_t last_ack = 0;
    };
    // Reliable Reception: the Message ACK fields of a segment of `dir` against the messages the other
    // direction completed before it in the capture.
    void check_ack(int dir, const vitcp::segment_view& seg, std::uint64_t at);
    void check_urgent(int dir);
    void try_ce();
    void start_data();
    void data(int dir, const std::uint8_t* p, std::size_t len);
    void on_segment(int dir, const vitcp::segment_view& seg);
    void error(int dir, const std::string& text, bool crc = false);

    vi_tcp_connection_report& rep_;
    std::array<dir_state, 2> dirs_;
    std::optional<vitcp::ce_header> request_;
    std::size_t request_len_ = 0;
    bool refused_ = false;
    bool ce_failed_ = false;
    bool acknowledging_ = false;  // Reliable Reception was agreed
    std::vector<std::uint8_t> ulpdu_;
};

// Checks every TCP connection of the capture as VI/TCP. `verify_checksums`: frames with a bad IPv4
// or TCP checksum are errors (and skipped) rather than taken.
vi_tcp_capture_report check_vitcp_capture(const std::vector<pcap_record>& records, bool verify_checksums);
// The report as rnic-pcap-check prints it.
std::string format_vitcp_report(const vi_tcp_capture_report& report, bool verbose);

}  // namespace rnic::proto::check
