#include "integrity.h"

#include <sstream>
#include <vector>

namespace rnic::platform {

integrity_result compare_ranges(const memory_reader& src, std::uint64_t src_addr, const memory_reader& dst,
                                std::uint64_t dst_addr, std::uint64_t len) {
    integrity_result r;
    constexpr std::size_t kChunk = 64 * 1024;
    std::vector<std::uint8_t> a(kChunk), b(kChunk);
    for (std::uint64_t off = 0; off < len; off += kChunk) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, len - off));
        if (!src(src_addr + off, a.data(), n) || !dst(dst_addr + off, b.data(), n)) {
            r.ok = false;
            r.detail = "range outside memory";
            return r;
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (a[i] != b[i]) {
                if (r.bytes_mismatched == 0) r.first_mismatch = off + i;
                ++r.bytes_mismatched;
            }
        }
        r.bytes_checked += n;
    }
    if (r.bytes_mismatched > 0) {
        r.ok = false;
        std::ostringstream os;
        os << r.bytes_mismatched << " of " << r.bytes_checked << " bytes differ, first at offset " << r.first_mismatch;
        r.detail = os.str();
    }
    return r;
}

}  // namespace rnic::platform
