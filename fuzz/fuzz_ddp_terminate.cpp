// libFuzzer target: ddp::decode_terminate (RDMAP Terminate header, RFC 5040 §4.8).
// Invariants:
//  - a decoded Terminate uses 4 + (D ? 2 + 14|18 : 0) + (R ? 28 : 0) bytes, all present, with
//    the terminated DDP header sized by its own T bit;
//  - encode(decode(x)) reproduces those bytes except the reserved bits of the control word, and
//    decoding that gives the same Terminate.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "proto/ddp_rdmap.h"

namespace ddp = rnic::proto::ddp;

namespace {

bool same(const ddp::terminate& a, const ddp::terminate& b) {
    return a.layer == b.layer && a.etype == b.etype && a.code == b.code && a.m == b.m && a.d == b.d && a.r == b.r &&
           a.ddp_segment_length == b.ddp_segment_length && a.ddp_header == b.ddp_header &&
           a.rdma_header == b.rdma_header;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string error;
    const auto t = ddp::decode_terminate(data, size, &error);
    if (!t) {
        FUZZ_CHECK(!error.empty());
        return 0;
    }
    std::size_t used = ddp::kTerminateControlSize;
    if (t->d) {
        FUZZ_CHECK(t->ddp_header.size() == ddp::header_size_from_control(data[used + 2]));
        used += 2 + t->ddp_header.size();
    } else {
        FUZZ_CHECK(t->ddp_header.empty() && t->ddp_segment_length == 0);
    }
    if (t->r) {
        FUZZ_CHECK(t->rdma_header.size() == ddp::kReadRequestSize);
        used += t->rdma_header.size();
    } else {
        FUZZ_CHECK(t->rdma_header.empty());
    }
    FUZZ_CHECK(used <= size);
    FUZZ_CHECK(static_cast<unsigned>(t->layer) <= 15 && t->etype <= 15);
    // A decoded header of the terminated segment decodes as a DDP header in its own right.
    if (t->d) FUZZ_CHECK(ddp::decode_header(t->ddp_header.data(), t->ddp_header.size(), nullptr));

    const auto bytes = ddp::encode(*t);
    FUZZ_CHECK(bytes.size() == used);
    FUZZ_CHECK(bytes[0] == data[0] && bytes[1] == data[1]);
    FUZZ_CHECK(bytes[2] == (data[2] & 0xE0) && bytes[3] == 0);  // M, D, R kept; 13 reserved bits zero
    for (std::size_t i = ddp::kTerminateControlSize; i < used; ++i) FUZZ_CHECK(bytes[i] == data[i]);
    const auto again = ddp::decode_terminate(bytes.data(), bytes.size(), nullptr);
    FUZZ_CHECK(again && same(*t, *again));
    return 0;
}
