// The RDMA/TCP part of the capture checker (rnic-pcap-check --framing rdmatcp, seed 000): both
// directions of one connection after the MPA Request/Reply, reframed by the §5 length rule with
// rdmatcp::Deframer (Version, lengths, CRC-32 0xDB710641, header rules), then held to what the
// platform's framing sends (proto/seeds/rdmatcp_ddp.h): one Connection ID in both directions
// (§3.4), Control Data that fits the type, and the message sequence (§3.4 message numbers, §4
// segments of a message together; a Read Response answers the oldest unanswered Read Request that
// went the other way). Each good segment's ULPDU goes to the caller for the DDP/RDMAP checks.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "proto/seeds/rdmatcp.h"
#include "proto/seeds/rdmatcp_ddp.h"

namespace rnic::proto::check {

class rdma_tcp_streams {
public:
    struct segment {
        std::uint64_t stream_offset = 0;  // of its first byte, from the first byte after the Request/Reply
        std::size_t wire_length = 0;
        const rdmatcp::segment_view* view = nullptr;
        const std::uint8_t* ulpdu = nullptr;  // the DDP/RDMAP segment it carries (valid during the call)
        std::size_t ulpdu_len = 0;
    };
    // Why a direction stopped: a CRC error or something else (framing, order); `text` says what,
    // with the stream byte of the segment.
    struct failure {
        bool crc = false;
        std::string text;
    };
    using sink_fn = std::function<void(int dir, const segment&)>;

    explicit rdma_tcp_streams(sink_fn sink);
    // Bytes of direction `dir` (0 or 1) in stream order; the first failure stops the direction.
    std::optional<failure> feed(int dir, const std::uint8_t* data, std::size_t len);
    std::uint64_t bytes_consumed(int dir) const { return dirs_[dir].deframer->bytes_consumed(); }
    bool at_segment_boundary(int dir) const { return dirs_[dir].deframer->at_segment_boundary(); }
    const std::optional<std::uint64_t>& connection_id() const { return connection_id_; }

private:
    struct dir_state {
        std::unique_ptr<rdmatcp::deframer> deframer;
        rdmatcp_map::session receiver;  // the state of the side receiving this direction
        std::uint64_t next_offset = 0;
        std::optional<rdma_tcp_streams::failure> failure;
    };
    void on_segment(int dir, const rdmatcp::segment_view& seg);

    sink_fn sink_;
    std::array<dir_state, 2> dirs_;
    std::optional<std::uint64_t> connection_id_;
    std::vector<std::uint8_t> ulpdu_;
};

}  // namespace rnic::proto::check
