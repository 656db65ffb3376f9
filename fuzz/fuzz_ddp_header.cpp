// libFuzzer target: ddp::decode_header (DDP header + RDMAP control, RFC 5041 §4, RFC 5040 §4.1).
// Invariants:
//  - decoding fails exactly when the input is shorter than the header its T bit announces;
//  - encode(decode(x)) reproduces the header bytes except the reserved bits (which decode ignores
//    and encode writes as zero), and decoding that gives the same header.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "proto/ddp_rdmap.h"

namespace ddp = rnic::proto::ddp;

namespace {

bool same(const ddp::header& a, const ddp::header& b) {
    return a.tagged == b.tagged && a.last == b.last && a.ddp_version == b.ddp_version &&
           a.rdmap_version == b.rdmap_version && a.opcode == b.opcode && a.invalidate_stag == b.invalidate_stag &&
           a.stag == b.stag && a.tagged_offset == b.tagged_offset && a.queue == b.queue && a.msn == b.msn &&
           a.mo == b.mo;
}

// DDP control |T|L|Rsvd(4)|DV(2)|, RDMAP control |RV(2)|Rsv(2)|Opcode(4)|.
constexpr std::uint8_t kDdpControlMask = 0xC3;
constexpr std::uint8_t kRdmapControlMask = 0xCF;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string error;
    const auto h = ddp::decode_header(data, size, &error);
    const bool long_enough = size >= 1 && size >= ddp::header_size_from_control(data[0]);
    FUZZ_CHECK(h.has_value() == long_enough);
    if (!h) {
        FUZZ_CHECK(!error.empty());
        return 0;
    }
    FUZZ_CHECK(h->size() == ddp::header_size_from_control(data[0]));
    FUZZ_CHECK(h->ddp_version <= 3 && h->rdmap_version <= 3 && static_cast<unsigned>(h->opcode) <= 15);
    (void)ddp::to_string(h->opcode);
    (void)ddp::is_tagged(h->opcode);

    std::uint8_t out[ddp::kUntaggedHeaderSize + 1];
    out[h->size()] = 0xA5;  // canary: encode writes exactly size() bytes
    const std::size_t n = ddp::encode(*h, out);
    FUZZ_CHECK(n == h->size());
    FUZZ_CHECK(out[n] == 0xA5);
    FUZZ_CHECK(out[0] == (data[0] & kDdpControlMask));
    FUZZ_CHECK(out[1] == (data[1] & kRdmapControlMask));
    for (std::size_t i = 2; i < n; ++i) FUZZ_CHECK(out[i] == data[i]);
    const auto again = ddp::decode_header(out, n, nullptr);
    FUZZ_CHECK(again && same(*h, *again));
    return 0;
}
