#include "workloads/ring_guard.h"

#include <algorithm>
#include <sstream>

#include "rnic/regmap.h"

namespace rnic::platform {

void ring_guard::add(std::uint64_t addr, std::uint64_t len, ring_kind kind) {
    rings_[addr] = {len, kind};
}

void ring_guard::remove(std::uint64_t addr) {
    rings_.erase(addr);
}

void ring_guard::exclude(std::uint64_t addr, std::uint64_t len) {
    excl_begin_ = addr;
    excl_end_ = addr + len;
}

std::uint64_t ring_guard::forbidden(std::uint64_t base, const ring& r, std::uint64_t addr, std::uint64_t len) const {
    const std::uint64_t off = addr - base;
    switch (r.kind) {
    case ring_kind::sq:
    case ring_kind::rq:
        return len;  // the driver's work requests: never the device's to write
    case ring_kind::cq:
        // A CQE is written whole, into its slot (regmap: 32-byte CQEs).
        return off % regmap::kCqeSize == 0 && len % regmap::kCqeSize == 0 ? 0 : len;
    case ring_kind::command: {
        // Only the status and result words of an entry (they are adjacent: 8 bytes).
        std::uint64_t bad = 0;
        for (std::uint64_t i = 0; i < len; ++i) {
            const std::uint64_t in_entry = (off + i) % regmap::kCommandSize;
            if (in_entry < regmap::cmd_off::status || in_entry >= regmap::cmd_off::result + 4) ++bad;
        }
        return bad;
    }
    }
    return len;
}

void ring_guard::finding(std::uint64_t addr, std::uint64_t len, const char* what) {
    if (findings_.size() >= 8) return;
    std::ostringstream s;
    s << "device wrote " << len << " bytes at 0x" << std::hex << addr << std::dec << " " << what;
    findings_.push_back(s.str());
}

void ring_guard::on_device_write(std::uint64_t addr, std::uint64_t len) {
    static const char* const kNames[] = {"into a CQ ring outside a whole CQE slot", "into a send queue ring",
                                         "into a receive queue ring",
                                         "into a command entry outside its status and result"};
    const std::uint64_t end = addr + len;
    std::uint64_t covered = 0;  // bytes inside some ring or the excluded memory
    if (addr < excl_end_ && end > excl_begin_) covered += std::min(end, excl_end_) - std::max(addr, excl_begin_);
    // Rings that overlap the write: the one starting at or before it, and every one starting inside it.
    auto it = rings_.upper_bound(addr);
    if (it != rings_.begin()) --it;
    for (; it != rings_.end() && it->first < end; ++it) {
        const std::uint64_t lo = std::max(addr, it->first), hi = std::min(end, it->first + it->second.len);
        if (lo >= hi) continue;
        covered += hi - lo;
        const std::uint64_t bad = forbidden(it->first, it->second, lo, hi - lo);
        outside_ += bad;
        allowed_ += hi - lo - bad;
        if (bad != 0) finding(lo, hi - lo, kNames[static_cast<int>(it->second.kind)]);
    }
    elsewhere_ += len - std::min(len, covered);
}

}  // namespace rnic::platform
