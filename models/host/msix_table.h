// The MSI-X table and Pending Bit Array of a function (PCIe Base Specification §6.1.4, §7.7.2), as
// BAR registers where the function's msix_layout puts them. Plain C++: the host-bus endpoints
// (pcie_endpoint, pcix_bridge) decode the range and ask this class what to do. The layout is the
// device's (for the RNIC: regmap.h, handed over by the platform's host assembly); the entry format
// is the specification's.
//
// What a raised vector becomes:
//  - entry programmed (Message Address != 0) and not masked: an MSI-X message, a DWORD memory write
//    of Message Data to Message Address;
//  - entry programmed and masked: no message; the vector's Pending bit is set and the message goes
//    out when software clears the Mask bit (the spec's rule);
//  - entry never programmed (Message Address == 0, the reset state): the message goes out anyway
//    with data = the vector number. This keeps a driver that does not program the table working
//    (the platform's behaviour before the table existed); a driver that programs it gets the spec's
//    behaviour. (The MSI-X Enable and Function Mask bits live in configuration space, not modelled.)
#pragma once

#include <cstdint>
#include <vector>

namespace rnic {

// A table entry as PCIe Base Specification §7.7.2 lays it out: 16 bytes, Message Address low and
// high, Message Data, Vector Control (bit 0: Mask).
namespace msix_entry {
constexpr std::uint32_t kSize = 16;
constexpr std::uint32_t kAddrLo = 0x0, kAddrHi = 0x4, kData = 0x8, kControl = 0xc;
constexpr std::uint32_t kMask = 1u << 0;
}  // namespace msix_entry

// Where the function puts its table and PBA in its BAR, and how many vectors it has.
struct msix_layout {
    unsigned vectors = 0;               // table entries (0: no table; every vector raised uses the fallback)
    std::uint32_t table_offset = 0;     // BAR offset of the table's page
    std::uint32_t pba_offset = 0;       // BAR offset of the PBA's page
    std::uint32_t page_bytes = 0x1000;  // each owns its page: no other register shares it (§6.1.4)
};

class msix_table {
public:
    explicit msix_table(const msix_layout& layout);

    unsigned vectors() const { return static_cast<unsigned>(entries_.size()); }
    const msix_layout& layout() const { return layout_; }

    // True if a BAR offset lies in the table's or the PBA's page (the endpoint handles it).
    bool claims(std::uint64_t bar_offset) const;
    // An access of `len` bytes at `bar_offset` is valid: 4 or 8 bytes, naturally aligned, inside the
    // table or the PBA (offsets past the last entry in the table's page read as zero, ignore writes).
    bool valid_access(std::uint64_t bar_offset, unsigned len) const;

    // Register reads and writes (len 4 or 8, already validated). Writes to the PBA are ignored
    // (read-only). A write that unmasks an entry with its Pending bit set appends the vector to
    // *released: its message must now be sent.
    std::uint64_t read(std::uint32_t bar_offset, unsigned len) const;
    void write(std::uint32_t bar_offset, unsigned len, std::uint64_t value, std::vector<unsigned>* released);

    struct message {
        bool send = false;          // false: masked, now pending
        bool programmed = false;    // false: fallback (data = vector number)
        std::uint64_t address = 0;  // Message Address (fallback: 0xfee00000, the x86 interrupt window)
        std::uint32_t data = 0;     // Message Data (fallback: the vector number)
    };
    // The device raises `vector` (vectors beyond the table use the fallback).
    message raise(unsigned vector);
    // The message of a vector whose Pending bit was just released (clears the bit).
    message take_pending(unsigned vector);

    bool pending(unsigned vector) const;

    struct counters {
        std::uint64_t raised = 0, sent_programmed = 0, sent_fallback = 0, masked = 0, released = 0;
        std::uint64_t table_writes = 0, table_reads = 0;
    };
    const counters& stats() const { return counters_; }

private:
    struct entry {
        std::uint32_t addr_lo = 0, addr_hi = 0, data = 0, control = 1;  // masked at reset
        bool pending = false;
    };
    std::uint32_t read32(std::uint32_t bar_offset) const;
    void write32(std::uint32_t bar_offset, std::uint32_t value, std::vector<unsigned>* released);
    message message_of(unsigned vector) const;
    bool in_page(std::uint64_t bar_offset, std::uint32_t page) const {
        return bar_offset >= page && bar_offset < std::uint64_t{page} + layout_.page_bytes;
    }

    msix_layout layout_;
    std::vector<entry> entries_;
    mutable counters counters_;  // reads are counted too
};

}  // namespace rnic
