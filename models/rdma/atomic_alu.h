// The atomic unit's arithmetic: RFC 7306 §5.1 masked FetchAdd and masked CmpSwap on 64-bit values,
// exactly as the RFC's pseudocode states them. Plain C++ (no SystemC): the RDMA engine performs the
// read-modify-write on host memory around these functions; tests call them directly.
#pragma once

#include <cstdint>

namespace rnic::atomic {

// RFC 7306 §5.1.1: independent additions on the fields that `add_mask` delimits (a set bit marks
// the most significant bit of a field: its carry out is dropped). add_mask 0 is a plain 64-bit add.
std::uint64_t fetch_add(std::uint64_t original, std::uint64_t add_data, std::uint64_t add_mask);

// RFC 7306 §5.1.2: if the masked compare matches, the masked swap bits are replaced.
std::uint64_t compare_swap(std::uint64_t original, std::uint64_t swap_data, std::uint64_t swap_mask,
                           std::uint64_t compare_data, std::uint64_t compare_mask);

}  // namespace rnic::atomic
