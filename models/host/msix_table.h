// The MSI-X table and Pending Bit Array of a function (PCIe Base Specification §6.1.4, §7.7.2), as
// BAR0 registers at regmap::kMsixTableOffset / kMsixPbaOffset. Plain C++: the host-bus endpoints
// (pcie_endpoint, pcix_bridge) decode the range and ask this class what to do.
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

class msix_table {
public:
    explicit msix_table(unsigned vectors);

    unsigned vectors() const { return static_cast<unsigned>(entries_.size()); }

    // True if a BAR0 offset lies in the table's or the PBA's page (the endpoint handles it).
    static bool claims(std::uint64_t bar_offset);
    // An access of `len` bytes at `bar_offset` is valid: 4 or 8 bytes, naturally aligned, inside the
    // table or the PBA (offsets past the last entry in the table's page read as zero, ignore writes).
    static bool valid_access(std::uint64_t bar_offset, unsigned len);

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

    std::vector<entry> entries_;
    mutable counters counters_;  // reads are counted too
};

}  // namespace rnic
