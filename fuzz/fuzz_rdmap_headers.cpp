// libFuzzer target: the fixed-size RDMAP headers, all decoded from the same bytes:
// ddp::decode_read_request (RFC 5040 §4.4), ddp::decode_atomic_request / decode_atomic_response
// (RFC 7306 §5.2.1 / §5.2.2) and ddp::decode_immediate (RFC 7306 §6.2).
// Invariants: each decoder fails exactly on input shorter than its header; encode(decode(x))
// reproduces the header bytes (the Atomic Request's 28 reserved bits as zero); decoding that
// gives the same values.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "proto/ddp_rdmap.h"

namespace ddp = rnic::proto::ddp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string error;
    std::uint8_t out[ddp::kAtomicRequestSize];

    const auto rr = ddp::decode_read_request(data, size, &error);
    FUZZ_CHECK(rr.has_value() == (size >= ddp::kReadRequestSize));
    if (rr) {
        ddp::encode(*rr, out);
        FUZZ_CHECK(std::memcmp(out, data, ddp::kReadRequestSize) == 0);
        const auto again = ddp::decode_read_request(out, ddp::kReadRequestSize, nullptr);
        FUZZ_CHECK(again && again->sink_stag == rr->sink_stag && again->sink_to == rr->sink_to &&
                   again->size == rr->size && again->src_stag == rr->src_stag && again->src_to == rr->src_to);
    } else {
        FUZZ_CHECK(!error.empty());
    }

    const auto req = ddp::decode_atomic_request(data, size, &error);
    FUZZ_CHECK(req.has_value() == (size >= ddp::kAtomicRequestSize));
    if (req) {
        FUZZ_CHECK(static_cast<unsigned>(req->op) <= 15);
        (void)ddp::to_string(req->op);
        ddp::encode(*req, out);
        FUZZ_CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0 && out[3] == (data[3] & 0x0F));
        FUZZ_CHECK(std::memcmp(out + 4, data + 4, ddp::kAtomicRequestSize - 4) == 0);
        const auto again = ddp::decode_atomic_request(out, ddp::kAtomicRequestSize, nullptr);
        FUZZ_CHECK(again && again->op == req->op && again->request_id == req->request_id && again->stag == req->stag &&
                   again->tagged_offset == req->tagged_offset && again->add_or_swap_data == req->add_or_swap_data &&
                   again->add_or_swap_mask == req->add_or_swap_mask && again->compare_data == req->compare_data &&
                   again->compare_mask == req->compare_mask);
    }

    const auto resp = ddp::decode_atomic_response(data, size, &error);
    FUZZ_CHECK(resp.has_value() == (size >= ddp::kAtomicResponseSize));
    if (resp) {
        ddp::encode(*resp, out);
        FUZZ_CHECK(std::memcmp(out, data, ddp::kAtomicResponseSize) == 0);
        const auto again = ddp::decode_atomic_response(out, ddp::kAtomicResponseSize, nullptr);
        FUZZ_CHECK(again && again->request_id == resp->request_id && again->original_value == resp->original_value);
    }

    const auto imm = ddp::decode_immediate(data, size, &error);
    FUZZ_CHECK(imm.has_value() == (size >= ddp::kImmediateDataSize));
    if (imm) {
        ddp::encode_immediate(*imm, out);
        FUZZ_CHECK(std::memcmp(out, data, ddp::kImmediateDataSize) == 0);
        FUZZ_CHECK(ddp::decode_immediate(out, ddp::kImmediateDataSize, nullptr) == imm);
    }
    return 0;
}
