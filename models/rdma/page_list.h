// Where a memory region's bytes are in host memory: one contiguous range (reg_mr), or a list of
// pages (reg_mr_pages, regmap.h) that need not be contiguous, as pinned user pages are. A plain
// value with no SystemC: the engine's translation of (STag, tagged offset) and of local buffers to
// host addresses, after the protection checks (access_checks.h) have passed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace rnic {

// The page list the firmware copied into the device's page-list memory at registration. Shared (not
// copied) by whoever still needs it after a context lookup: a Read Response queued for sending, a
// message being sent across waits for TCP space.
struct mr_page_list {
    std::vector<std::uint64_t> pages;  // host address of each page, aligned to the page size
    unsigned page_shift = 12;
    std::uint64_t first_byte_offset = 0;  // of the region's first byte, in pages[0]
};

// The host memory behind a region: contiguous from `addr`, or through `pages` when set.
struct region_map {
    std::uint64_t addr = 0;
    const mr_page_list* pages = nullptr;

    // Calls f(host_addr, run_len, done) for each run of contiguous host memory behind bytes
    // [off, off + len) of the region (off counted from its first byte), in order; `done` is the
    // run's offset in the access. A contiguous region is one run; a page list one run per page
    // touched. Stops when f returns false. Returns false when f did, or when the bytes reach past
    // the list (the caller checked the region's bounds, so that is a model bug, reported not crashed).
    template <typename F>
    bool for_each_run(std::uint64_t off, std::uint64_t len, F&& f) const {
        if (pages == nullptr) return f(addr + off, len, std::uint64_t{0});
        const std::uint64_t size = std::uint64_t{1} << pages->page_shift;
        std::uint64_t pos = pages->first_byte_offset + off;
        for (std::uint64_t done = 0; done < len;) {
            const std::uint64_t index = pos >> pages->page_shift;
            if (index >= pages->pages.size()) return false;
            const std::uint64_t in_page = pos & (size - 1);
            const std::uint64_t n = std::min(len - done, size - in_page);
            if (!f(pages->pages[index] + in_page, n, done)) return false;
            done += n;
            pos += n;
        }
        return true;
    }

    // The host address of byte `off` of the region (0 past a page list's end).
    std::uint64_t host_addr(std::uint64_t off) const {
        if (pages == nullptr) return addr + off;
        const std::uint64_t pos = pages->first_byte_offset + off;
        const std::uint64_t index = pos >> pages->page_shift;
        if (index >= pages->pages.size()) return 0;
        return pages->pages[index] + (pos & ((std::uint64_t{1} << pages->page_shift) - 1));
    }

    // Whether bytes [off, off + len) are one run of host memory.
    bool contiguous(std::uint64_t off, std::uint64_t len) const {
        if (pages == nullptr || len == 0) return true;
        const std::uint64_t pos = pages->first_byte_offset + off;
        return (pos >> pages->page_shift) == ((pos + len - 1) >> pages->page_shift);
    }
};

}  // namespace rnic
