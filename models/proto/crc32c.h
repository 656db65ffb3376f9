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
class crc32c_stream {
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

// ---------------------------------------------------------------------------------------------
// The seeds' CRC-32 with generator 0xDB710641: draft-williams-rdmatcp-00 §3.4 (RDMA/TCP segment
// CRC) and draft-dicecco-vitcp-01 §3.6 (VI/TCP trailer CRC). Both drafts say the algorithm "is
// exactly that used for the ethernet CRC except that a different generator polynomial is used";
// the polynomial is the Ethernet one "with a left-right reversal" (its reciprocal), written
// 0xDB710641 MSB-first with the x^32 term removed. Parameters, each taken from the seeds:
//   - width 32, polynomial 0xDB710641 (0x82608EDB in the reflected, LSB-first register);
//   - reflected input and output: Ethernet takes each octet least significant bit first, so the
//     first bit of M(x) (the x^(n-1) coefficient, 003 §3.6 (c)) is bit 0 of the first byte;
//   - init 0xFFFFFFFF: "Complement the first 32 bits of the segment" (003 §3.6 (b));
//   - xorout 0xFFFFFFFF: "The bit sequence of R(x) is complemented" (003 §3.6 (e)).
// Check value: crc_db710641("123456789") == 0xE07E661E (kCrcDb710641Check).
//
// What the value covers (003 §3.6 (a), (d)): M(x) is "the entire VI segment including all VI
// headers and trailers" with zero in the CRC field, divided by G(x) *without* a further x^32
// factor. Because the CRC field is the last 32 bits of the segment, those 32 zero bits are
// exactly the x^32 factor of the Ethernet algorithm, so the §3.6 value equals
// crc_db710641(segment bytes before the CRC field). Do NOT run crc_db710641() over the segment
// with the zeroed field appended: that multiplies by x^32 twice and gives a different value.
//
// Byte order of the CRC field on the wire: the conventional value least significant byte first
// (put_le32() from proto/bytes.h), as for the Ethernet FCS. §3.6 (e) places "the bit sequence of
// R(x)" in the CRC field, i.e. the CRC is a bit string, not a number: each coefficient goes to
// the bit position that held the same power of x in M(x), and with Ethernet bit order that is
// little-endian for the conventional value. The general "network byte order" sentence of
// 000 §3 / 003 §3 applies to the numeric fields. With this placement a good segment has the
// constant residue crc_db710641(whole segment incl. CRC) == kCrcDb710641Residue.
constexpr std::uint32_t kCrcDb710641Check = 0xE07E661Eu;
constexpr std::uint32_t kCrcDb710641Residue = 0xB9509BB6u;

// One-shot CRC (conventional value: init and xorout 0xFFFFFFFF, reflected) of `len` bytes.
std::uint32_t crc_db710641(const void* data, std::size_t len);

// Continues a conventional value over more bytes:
// crc_db710641_extend(crc_db710641(A), B) == crc_db710641(A ‖ B); extend(0, B) == crc_db710641(B).
std::uint32_t crc_db710641_extend(std::uint32_t crc, const void* data, std::size_t len);

// Streaming form, fed in any number of pieces.
class crc_db710641_stream {
public:
    void update(const void* data, std::size_t len) { value_ = crc_db710641_extend(value_, data, len); }
    // Conventional CRC of all bytes fed since construction or reset().
    std::uint32_t value() const { return value_; }
    void reset() { value_ = 0; }

private:
    std::uint32_t value_ = 0;  // conventional CRC of the empty message
};

}  // namespace rnic::proto
