#include "proto/seeds/vitcp_urgent.h"

#include <algorithm>

namespace rnic::proto::vitcp_urgent {

void marker::segment_start(std::uint64_t stream_offset) {
    if (!on_ || stream_offset < from_) return;
    if (!starts_.empty() && stream_offset <= starts_.back()) return;
    starts_.push_back(stream_offset);
}

void marker::acked(std::uint64_t stream_offset) {
    while (!starts_.empty() && starts_.front() < stream_offset) starts_.pop_front();
}

std::optional<std::uint16_t> marker::pointer_for(std::uint64_t stream_offset, std::size_t len) const {
    if (!on_ || len == 0) return std::nullopt;
    const auto it = std::lower_bound(starts_.begin(), starts_.end(), stream_offset);
    if (it == starts_.end() || *it - stream_offset >= len) return std::nullopt;
    const std::uint64_t pointer = *it - stream_offset;
    if (pointer > 0xFFFFu) return std::nullopt;
    return static_cast<std::uint16_t>(pointer);
}

std::optional<std::uint64_t> located_start(std::uint64_t stream_offset, std::size_t len, bool urg,
                                           std::uint16_t urgent_pointer) {
    if (!urg || urgent_pointer >= len) return std::nullopt;
    return stream_offset + urgent_pointer;
}

}  // namespace rnic::proto::vitcp_urgent
