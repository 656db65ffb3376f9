#include "host/msix_table.h"

namespace rnic {

namespace {
constexpr std::uint64_t kFallbackAddress = 0xfee00000u;  // x86 local-APIC message window
}  // namespace

msix_table::msix_table(const msix_layout& layout) : layout_(layout), entries_(layout.vectors) {}

bool msix_table::claims(std::uint64_t bar_offset) const {
    if (layout_.vectors == 0) return false;  // no table: the whole BAR is the device's
    return in_page(bar_offset, layout_.table_offset) || in_page(bar_offset, layout_.pba_offset);
}

bool msix_table::valid_access(std::uint64_t bar_offset, unsigned len) const {
    if ((len != 4 && len != 8) || bar_offset % len != 0) return false;
    return claims(bar_offset) && claims(bar_offset + len - 1);
}

std::uint32_t msix_table::read32(std::uint32_t off) const {
    if (in_page(off, layout_.pba_offset)) {
        const std::uint32_t bit0 = (off - layout_.pba_offset) * 8;  // first vector of this dword
        std::uint32_t v = 0;
        for (std::uint32_t b = 0; b < 32; ++b) {
            if (bit0 + b < entries_.size() && entries_[bit0 + b].pending) v |= 1u << b;
        }
        return v;
    }
    const std::uint32_t index = (off - layout_.table_offset) / msix_entry::kSize;
    if (index >= entries_.size()) return 0;
    const entry& e = entries_[index];
    switch ((off - layout_.table_offset) % msix_entry::kSize) {
    case msix_entry::kAddrLo:
        return e.addr_lo;
    case msix_entry::kAddrHi:
        return e.addr_hi;
    case msix_entry::kData:
        return e.data;
    default:
        return e.control;
    }
}

void msix_table::write32(std::uint32_t off, std::uint32_t value, std::vector<unsigned>* released) {
    if (in_page(off, layout_.pba_offset)) return;  // the PBA is read-only
    const std::uint32_t index = (off - layout_.table_offset) / msix_entry::kSize;
    if (index >= entries_.size()) return;  // reserved space of the table's page
    entry& e = entries_[index];
    switch ((off - layout_.table_offset) % msix_entry::kSize) {
    case msix_entry::kAddrLo:
        e.addr_lo = value & ~3u;
        break;  // DWORD aligned: bits 1:0 are zero
    case msix_entry::kAddrHi:
        e.addr_hi = value;
        break;
    case msix_entry::kData:
        e.data = value;
        break;
    default: {
        const bool was_masked = (e.control & msix_entry::kMask) != 0;
        e.control = value & msix_entry::kMask;  // other bits reserved
        if (was_masked && (e.control & msix_entry::kMask) == 0 && e.pending && released != nullptr) {
            released->push_back(index);
        }
    }
    }
}

std::uint64_t msix_table::read(std::uint32_t bar_offset, unsigned len) const {
    ++counters_.table_reads;
    std::uint64_t v = read32(bar_offset);
    if (len == 8) v |= static_cast<std::uint64_t>(read32(bar_offset + 4)) << 32;
    return v;
}

void msix_table::write(std::uint32_t bar_offset, unsigned len, std::uint64_t value, std::vector<unsigned>* released) {
    ++counters_.table_writes;
    write32(bar_offset, static_cast<std::uint32_t>(value), released);
    if (len == 8) write32(bar_offset + 4, static_cast<std::uint32_t>(value >> 32), released);
}

msix_table::message msix_table::message_of(unsigned vector) const {
    message m;
    m.send = true;
    if (vector < entries_.size()) {
        const entry& e = entries_[vector];
        const std::uint64_t addr = (static_cast<std::uint64_t>(e.addr_hi) << 32) | e.addr_lo;
        if (addr != 0) {
            m.programmed = true;
            m.address = addr;
            m.data = e.data;
            return m;
        }
    }
    m.address = kFallbackAddress;
    m.data = vector;
    return m;
}

msix_table::message msix_table::raise(unsigned vector) {
    ++counters_.raised;
    message m = message_of(vector);
    if (m.programmed && (entries_[vector].control & msix_entry::kMask) != 0) {
        entries_[vector].pending = true;
        ++counters_.masked;
        m.send = false;
        return m;
    }
    ++(m.programmed ? counters_.sent_programmed : counters_.sent_fallback);
    return m;
}

msix_table::message msix_table::take_pending(unsigned vector) {
    message m = message_of(vector);
    if (vector < entries_.size()) entries_[vector].pending = false;
    ++counters_.released;
    ++counters_.sent_programmed;
    return m;
}

bool msix_table::pending(unsigned vector) const {
    return vector < entries_.size() && entries_[vector].pending;
}

}  // namespace rnic
