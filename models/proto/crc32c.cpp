// CRC32c and CRC-32 implementations: a slicing-by-8 table walk that works everywhere and, for
// CRC32c on x86-64, the SSE4.2 crc32 instruction selected at run time. The library is built
// without -msse4.2, so only the one hardware function carries the target attribute.
#include "proto/crc32c.h"

#include <array>
#include <cstring>

#include "proto/bytes.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RNIC_CRC32C_HAVE_SSE42 1
#include <nmmintrin.h>
#else
#define RNIC_CRC32C_HAVE_SSE42 0
#endif

namespace rnic::proto {
namespace {

constexpr std::uint32_t kCastagnoliReflected = 0x82F63B78u;  // 0x1EDC6F41 bit-reversed
constexpr std::uint32_t kIeeeReflected = 0xEDB88320u;        // 0x04C11DB7 bit-reversed
constexpr std::uint32_t kSeedsReflected = 0x82608EDBu;       // 0xDB710641 bit-reversed (seeds 000/003)

// table[k][b]: CRC register contribution of byte b followed by k zero bytes (reflected
// polynomial). Slicing-by-8 consumes 8 input bytes per step with 8 independent lookups.
template <std::uint32_t Poly>
struct slicing_tables {
    std::array<std::array<std::uint32_t, 256>, 8> table{};

    constexpr slicing_tables() {
        for (std::uint32_t b = 0; b < 256; ++b) {
            std::uint32_t r = b;
            for (int bit = 0; bit < 8; ++bit) r = (r & 1u) ? (r >> 1) ^ Poly : r >> 1;
            table[0][b] = r;
        }
        for (std::size_t k = 1; k < 8; ++k) {
            for (std::size_t b = 0; b < 256; ++b) {
                const std::uint32_t prev = table[k - 1][b];
                table[k][b] = (prev >> 8) ^ table[0][prev & 0xFFu];
            }
        }
    }
};

constexpr slicing_tables<kCastagnoliReflected> kCastagnoliTables{};
constexpr slicing_tables<kIeeeReflected> kIeeeTables{};
constexpr slicing_tables<kSeedsReflected> kSeedsTables{};

// Advances the raw (already pre-inverted) CRC register over `len` bytes.
template <std::uint32_t Poly>
std::uint32_t slicing_by_8(const slicing_tables<Poly>& tables, std::uint32_t reg, const std::uint8_t* p,
                           std::size_t len) {
    const auto& t = tables.table;
    while (len >= 8) {
        const std::uint32_t lo = reg ^ get_le32(p);
        const std::uint32_t hi = get_le32(p + 4);
        reg = t[7][lo & 0xFFu] ^ t[6][(lo >> 8) & 0xFFu] ^ t[5][(lo >> 16) & 0xFFu] ^ t[4][lo >> 24] ^
              t[3][hi & 0xFFu] ^ t[2][(hi >> 8) & 0xFFu] ^ t[1][(hi >> 16) & 0xFFu] ^ t[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len-- != 0) reg = (reg >> 8) ^ t[0][(reg ^ *p++) & 0xFFu];
    return reg;
}

std::uint32_t castagnoli_portable(std::uint32_t reg, const std::uint8_t* p, std::size_t len) {
    return slicing_by_8(kCastagnoliTables, reg, p, len);
}

#if RNIC_CRC32C_HAVE_SSE42
// The crc32 instruction implements exactly the reflected Castagnoli register update.
// One dependent chain (3-cycle latency per 8 bytes) is far faster than the simulator needs.
__attribute__((target("sse4.2"))) std::uint32_t castagnoli_sse42(std::uint32_t reg, const std::uint8_t* p,
                                                                 std::size_t len) {
    while (len != 0 && (reinterpret_cast<std::uintptr_t>(p) & 7u) != 0) {
        reg = _mm_crc32_u8(reg, *p++);
        --len;
    }
    std::uint64_t reg64 = reg;
    while (len >= 8) {
        std::uint64_t word;
        std::memcpy(&word, p, sizeof word);  // aligned here; memcpy keeps it well-defined
        reg64 = _mm_crc32_u64(reg64, word);
        p += 8;
        len -= 8;
    }
    reg = static_cast<std::uint32_t>(reg64);
    while (len-- != 0) reg = _mm_crc32_u8(reg, *p++);
    return reg;
}

bool cpu_has_sse42() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0;
}
#endif

using raw_update = std::uint32_t (*)(std::uint32_t, const std::uint8_t*, std::size_t);

raw_update castagnoli_update() {
#if RNIC_CRC32C_HAVE_SSE42
    static const raw_update chosen = cpu_has_sse42() ? &castagnoli_sse42 : &castagnoli_portable;
#else
    static const raw_update chosen = &castagnoli_portable;
#endif
    return chosen;
}

}  // namespace

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t len) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    return ~castagnoli_update()(~crc, p, len);
}

std::uint32_t crc32c(const void* data, std::size_t len) {
    return crc32c_extend(0, data, len);
}

bool crc32c_uses_hardware() {
#if RNIC_CRC32C_HAVE_SSE42
    return castagnoli_update() == &castagnoli_sse42;
#else
    return false;
#endif
}

std::uint32_t crc32c_portable(const void* data, std::size_t len) {
    return ~castagnoli_portable(0xFFFFFFFFu, static_cast<const std::uint8_t*>(data), len);
}

std::uint32_t ethernet_fcs(const void* data, std::size_t len) {
    return ~slicing_by_8(kIeeeTables, 0xFFFFFFFFu, static_cast<const std::uint8_t*>(data), len);
}

std::uint32_t crc_db710641_extend(std::uint32_t crc, const void* data, std::size_t len) {
    return ~slicing_by_8(kSeedsTables, ~crc, static_cast<const std::uint8_t*>(data), len);
}

std::uint32_t crc_db710641(const void* data, std::size_t len) {
    return crc_db710641_extend(0, data, len);
}

}  // namespace rnic::proto
