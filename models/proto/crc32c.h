// CRC32c (Castagnoli) as used by MPA (RFC 5044 §4.4, "in the manner described in iSCSI",
// RFC 3720 §12.1 / App. B.4), and the IEEE 802.3 CRC-32 of the Ethernet FCS.
//
// All functions return the *conventional* CRC value (init and xorout 0xFFFFFFFF, reflected
// input and output), e.g. crc32c("123456789") == 0xE3069283. MPA puts that value on the wire
// little-endian (test-vectors.md §1.2): use put_le32() from proto/bytes.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rnic::proto {

// One-shot CRC32c of `len` bytes. Uses the SSE4.2 crc32 instruction when the CPU has it.
std::uint32_t crc32c(const void* data, std::size_t len);

// Continues a conventional CRC32c value over more bytes (zlib style):
// crc32c_extend(crc32c(A), B) == crc32c(A ‖ B), and crc32c_extend(0, B) == crc32c(B).
std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t len);

// Streaming CRC32c over bytes fed in any number of pieces.
class Crc32c {
public:
    void update(const void* data, std::size_t len) { value_ = crc32c_extend(value_, data, len); }
    // Conventional CRC of all bytes fed since construction or reset().
    std::uint32_t value() const { return value_; }
    void reset() { value_ = 0; }

private:
    std::uint32_t value_ = 0;  // conventional CRC of the empty message
};

// True when crc32c() runs on the SSE4.2 crc32 instruction (decided once, at run time).
bool crc32c_uses_hardware();

// Table-driven (slicing-by-8) CRC32c; always available, used to cross-check the hardware path.
std::uint32_t crc32c_portable(const void* data, std::size_t len);

// IEEE 802.3 CRC-32 (polynomial 0x04C11DB7 reflected), the conventional value; equals zlib's
// crc32(). The Ethernet FCS is this value sent least significant byte first.
std::uint32_t ethernet_fcs(const void* data, std::size_t len);

}  // namespace rnic::proto
