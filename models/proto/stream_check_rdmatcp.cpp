#include "proto/stream_check_rdmatcp.h"

#include <utility>

namespace rnic::proto::check {

rdma_tcp_streams::rdma_tcp_streams(sink_fn sink) : sink_(std::move(sink)) {
    for (int d = 0; d < 2; ++d) {
        // The Connection ID is checked here, across both directions (§3.4), not per direction.
        dirs_[d].deframer = std::make_unique<rdmatcp::deframer>(
            rdmatcp::deframer::config{}, [this, d](const rdmatcp::segment_view& seg) { on_segment(d, seg); });
    }
}

std::optional<rdma_tcp_streams::failure> rdma_tcp_streams::feed(int dir, const std::uint8_t* data, std::size_t len) {
    dir_state& d = dirs_[dir];
    if (d.failure) return d.failure;
    const rdmatcp::error_code e = d.deframer->feed(data, len);
    if (!d.failure && e != rdmatcp::error_code::none) {
        d.failure = failure{e == rdmatcp::error_code::crc_mismatch,
                            std::string("RDMA/TCP ") + rdmatcp::to_string(e) + ": " + d.deframer->error_detail()};
    }
    return d.failure;
}

void rdma_tcp_streams::on_segment(int dir, const rdmatcp::segment_view& seg) {
    dir_state& d = dirs_[dir];
    if (d.failure) return;
    const std::uint64_t at = d.next_offset;
    d.next_offset += seg.wire_length;
    auto fail = [&](const std::string& what) {
        d.failure = failure{false, "RDMA/TCP segment at stream byte " + std::to_string(at) + " (" +
                                       rdmatcp::to_string(seg.header.type) + ", message " +
                                       std::to_string(seg.header.message_number) + "): " + what};
    };
    const std::uint64_t id = seg.header.connection_id;
    if (connection_id_ && *connection_id_ != id) {
        fail("Connection ID " + std::to_string(id) + ", the connection's is " + std::to_string(*connection_id_) +
             " (seed 000 §3.4: one value in both directions)");
        return;
    }
    connection_id_ = id;
    std::string why;
    if (!rdmatcp_map::to_ulpdu(seg, ulpdu_, &why)) {
        fail("Control Data: " + why);
        return;
    }
    if (!rdmatcp_map::accept_in_order(d.receiver, seg.header, seg.payload_len, &why,
                                      rdmatcp_map::carries_terminate(seg))) {
        fail(why);
        return;
    }
    if (seg.header.type == rdmatcp::message_type::read_request) {
        // The other direction's receiver sent it: its Read Response must carry this number.
        dirs_[1 - dir].receiver.tx_read_requests.push_back(seg.header.message_number);
    }
    segment s;
    s.stream_offset = at;
    s.wire_length = seg.wire_length;
    s.view = &seg;
    s.ulpdu = ulpdu_.data();
    s.ulpdu_len = ulpdu_.size();
    sink_(dir, s);
}

}  // namespace rnic::proto::check
