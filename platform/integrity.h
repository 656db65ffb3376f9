// Data-integrity check of a run: compares, byte for byte, what the receiver's memory holds with what
// the sender posted. It looks at memory the way a debugger does (no simulated time).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace rnic::platform {

struct integrity_result {
    bool ok = true;
    std::uint64_t bytes_checked = 0;
    std::uint64_t bytes_mismatched = 0;
    std::uint64_t first_mismatch = 0;  // offset into the compared range
    std::string detail;
};

// Reads `len` bytes at `addr` into `dst`; returns false when the range is outside the memory.
using memory_reader = std::function<bool(std::uint64_t addr, void* dst, std::size_t len)>;

integrity_result compare_ranges(const memory_reader& src, std::uint64_t src_addr, const memory_reader& dst,
                                std::uint64_t dst_addr, std::uint64_t len);

}  // namespace rnic::platform
