// The checks of a memory access against a memory region: a peer's tagged access (RFC 5041 §7.1,
// RFC 5040 §7) and the engine's own use of a local buffer (work requests, posted receives). Plain
// functions of the region's context: no SystemC, no lookups (the caller looks the STag up in the
// context_store and passes nullptr for an invalid STag).
#pragma once

#include <cstdint>

#include "proto/ddp_rdmap.h"
#include "rdma/context_store.h"

namespace rnic {

// Outcome of checking a tagged access: the Terminate it draws, or the host address it reaches.
struct access_check {
    bool ok = false;
    proto::ddp::term_layer layer = proto::ddp::term_layer::ddp;
    std::uint8_t etype = 0, code = 0;
    std::uint64_t host_addr = 0;  // of the first byte
    const char* what = "";
    // The region's host memory and the access's offset in it from the region's first byte: the
    // placement or source runs (page_list.h), one for a contiguous region.
    region_map map;
    std::uint64_t region_off = 0;
};

// A peer's access to `len` bytes at tagged offset `to` of region `mr` from a stream of protection
// domain `pd`, needing the rights `right` (regmap::mr_access).
access_check check_tagged_access(const mr_context* mr, std::uint32_t pd, std::uint64_t to, std::uint64_t len,
                                 std::uint32_t right);

// The RDMAP code (RFC 5040 §7.2) for what a tagged check found, where the RDMAP layer checks a source
// (a Read Request's or an Atomic Request's).
std::uint8_t rdmap_protection_code(const access_check& chk);

// A local buffer [addr, addr + len) inside region `mr` of protection domain `pd`.
bool covers_local(const mr_context* mr, std::uint32_t pd, std::uint64_t addr, std::uint64_t len);
// The same, in a region with local write access: where a Send, a Read Response or an atomic's result lands.
bool local_writable(const mr_context* mr, std::uint32_t pd, std::uint64_t addr, std::uint64_t len);
// Where local buffer address `addr` of region `mr` (checked by covers_local) is: the region's map and
// the offset in it. A contiguous region gives host address `addr` itself.
inline region_map local_map(const mr_context& mr) {
    return mr.cfg.map();
}
inline std::uint64_t local_offset(const mr_context& mr, std::uint64_t addr) {
    return addr - mr.cfg.addr;
}

}  // namespace rnic
