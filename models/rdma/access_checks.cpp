#include "rdma/access_checks.h"

namespace rnic {

namespace ddp = proto::ddp;

access_check check_tagged_access(const mr_context* mr, std::uint32_t pd, std::uint64_t to, std::uint64_t len,
                                 std::uint32_t right) {
    access_check r;
    // RFC 5041 §7.1 tagged checks (DDP layer), then RFC 5040 §7 access rights (RDMAP layer).
    if (mr == nullptr) {
        r.etype = ddp::term::kDdpTaggedBuffer;
        r.code = ddp::term::kDdpTaggedInvalidStag;
        r.what = "invalid STag";
        return r;
    }
    if (mr->cfg.pd != pd) {
        r.etype = ddp::term::kDdpTaggedBuffer;
        r.code = ddp::term::kDdpTaggedStagNotAssociated;
        r.what = "STag not associated with this stream (protection domain)";
        return r;
    }
    if (to + len < to) {
        r.etype = ddp::term::kDdpTaggedBuffer;
        r.code = ddp::term::kDdpTaggedToWrap;
        r.what = "tagged offset wraps";
        return r;
    }
    if (to < mr->cfg.to_base || len > mr->cfg.length || to - mr->cfg.to_base > mr->cfg.length - len) {
        r.etype = ddp::term::kDdpTaggedBuffer;
        r.code = ddp::term::kDdpTaggedBaseOrBounds;
        r.what = "base or bounds violation";
        return r;
    }
    if ((mr->cfg.access & right) == 0) {
        r.layer = ddp::term_layer::rdma;
        r.etype = ddp::term::kRdmaRemoteProtection;
        r.code = ddp::term::kRdmaAccessRights;
        r.what = "access rights violation";
        return r;
    }
    r.ok = true;
    r.map = mr->cfg.map();
    r.region_off = to - mr->cfg.to_base;
    r.host_addr = r.map.host_addr(r.region_off);
    return r;
}

std::uint8_t rdmap_protection_code(const access_check& chk) {
    // A source checked by the RDMAP layer reports RDMAP codes (RFC 5040 §7.2) for what DDP's tagged
    // checks found.
    if (chk.layer == ddp::term_layer::rdma) return chk.code;
    switch (chk.code) {
    case ddp::term::kDdpTaggedInvalidStag:
        return ddp::term::kRdmaInvalidStag;
    case ddp::term::kDdpTaggedBaseOrBounds:
        return ddp::term::kRdmaBaseOrBounds;
    case ddp::term::kDdpTaggedToWrap:
        return ddp::term::kRdmaToWrap;
    default:
        return ddp::term::kRdmaStagNotAssociated;
    }
}

bool covers_local(const mr_context* mr, std::uint32_t pd, std::uint64_t addr, std::uint64_t len) {
    if (mr == nullptr || mr->cfg.pd != pd) return false;
    return addr >= mr->cfg.addr && len <= mr->cfg.length && addr - mr->cfg.addr <= mr->cfg.length - len;
}

bool local_writable(const mr_context* mr, std::uint32_t pd, std::uint64_t addr, std::uint64_t len) {
    return covers_local(mr, pd, addr, len) && (mr->cfg.access & regmap::mr_access::local_write) != 0;
}

}  // namespace rnic
