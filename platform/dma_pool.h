// The host's pool of pinned, device-visible memory (what dma_alloc_coherent draws from): first fit
// over the free ranges, in address order, and blocks returned by free() are merged with their free
// neighbours. Plain C++ (no SystemC): host_cpu wraps it with the IOMMU mapping.
//
// A block owns the alignment padding in front of it, so that until something is freed the pool
// hands out exactly the addresses a bump allocator would (results of runs that never free do not
// move), and freeing a block returns its padding with it.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace rnic {

class dma_pool {
public:
    dma_pool(std::uint64_t base, std::uint64_t end) {
        if (end > base) free_[base] = end;
    }

    // The block's address (aligned to `align`, a power of two or 0/1 for none), or 0 when no free
    // range holds it.
    std::uint64_t allocate(std::uint64_t len, std::uint64_t align) {
        if (len == 0) return 0;
        if (align == 0) align = 1;
        for (auto it = free_.begin(); it != free_.end(); ++it) {
            const std::uint64_t start = it->first, end = it->second;
            const std::uint64_t base = (start + align - 1) / align * align;
            if (base < start || base > end || end - base < len) continue;
            free_.erase(it);
            if (base + len < end) free_[base + len] = end;
            used_[base] = {start, base + len};
            in_use_ += base + len - start;
            return base;
        }
        return 0;
    }

    // Returns the block at `base` (as allocate() gave it); false when there is none.
    bool release(std::uint64_t base) {
        const auto it = used_.find(base);
        if (it == used_.end()) return false;
        std::uint64_t start = it->second.first, end = it->second.second;
        in_use_ -= end - start;
        used_.erase(it);
        // Merge with the free range that ends where this one starts, and the one that starts where
        // this one ends.
        auto next = free_.lower_bound(start);
        if (next != free_.begin()) {
            auto prev = std::prev(next);
            if (prev->second == start) {
                start = prev->first;
                free_.erase(prev);
            }
        }
        if (next != free_.end() && next->first == end) {
            end = next->second;
            free_.erase(next);
        }
        free_[start] = end;
        return true;
    }

    std::uint64_t bytes_in_use() const { return in_use_; }  // blocks with their padding
    std::size_t blocks() const { return used_.size(); }

private:
    std::map<std::uint64_t, std::uint64_t> free_;                            // start -> end
    std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> used_;  // base -> [start, end)
    std::uint64_t in_use_ = 0;
};

}  // namespace rnic
