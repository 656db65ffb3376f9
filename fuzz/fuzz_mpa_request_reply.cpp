// libFuzzer target: MPA Request/Reply frames (mpa::decode, mpa::request_reply_length,
// mpa::encode; RFC 5044 §7.1.1, RFC 6581 §6/§9).
// Invariants:
//  - request_reply_length() is 0 exactly for fewer than 20 bytes, else 20 + PD_Length;
//  - a decoded frame uses exactly request_reply_length() bytes, at most 20 + 512, and a frame one
//    byte shorter does not decode;
//  - encode(decode(x)) reproduces those bytes exactly (every bit of the frame is represented), and
//    decoding the result gives the same frame;
//  - the strict decode accepts a subset of what the lenient one (ignore_reserved_bits) accepts,
//    with the same result.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "fuzz_util.h"
#include "proto/mpa.h"

namespace mpa = rnic::proto::mpa;

namespace {

bool same(const mpa::request_reply& a, const mpa::request_reply& b) {
    return a.request == b.request && a.marker == b.marker && a.crc == b.crc && a.reject == b.reject &&
           a.revision == b.revision && a.enhanced == b.enhanced && a.peer_to_peer == b.peer_to_peer &&
           a.zero_length_send_rtr == b.zero_length_send_rtr && a.zero_length_write_rtr == b.zero_length_write_rtr &&
           a.zero_length_read_rtr == b.zero_length_read_rtr && a.ird == b.ird && a.ord == b.ord &&
           a.private_data == b.private_data && a.reserved_bits == b.reserved_bits;
}

std::optional<mpa::request_reply> check(const std::uint8_t* data, std::size_t size, bool lenient) {
    mpa::decode_options options;
    options.ignore_reserved_bits = lenient;
    std::string error;
    const std::size_t need = mpa::request_reply_length(data, size);
    FUZZ_CHECK((need == 0) == (size < mpa::kRequestReplyHeaderSize));
    FUZZ_CHECK(need == 0 || (need >= mpa::kRequestReplyHeaderSize && need <= mpa::kRequestReplyHeaderSize + 0xFFFF));

    auto frame = mpa::decode(data, size, &error, options);
    if (!frame) {
        FUZZ_CHECK(!error.empty());
        return std::nullopt;
    }
    FUZZ_CHECK(need != 0 && need <= size && need <= mpa::kRequestReplyHeaderSize + mpa::kMaxPrivateData);
    FUZZ_CHECK(frame->private_data.size() + (frame->enhanced ? mpa::kEnhancedDataSize : 0) ==
               need - mpa::kRequestReplyHeaderSize);
    FUZZ_CHECK(frame->ird <= 0x3FFF && frame->ord <= 0x3FFF && frame->reserved_bits <= 0x0F);
    FUZZ_CHECK(!mpa::decode(data, need - 1, nullptr, options));  // truncated by one byte

    const auto bytes = mpa::encode(*frame);
    FUZZ_CHECK(bytes.size() == need);
    FUZZ_CHECK(std::memcmp(bytes.data(), data, need) == 0);
    const auto again = mpa::decode(bytes.data(), bytes.size(), &error, options);
    FUZZ_CHECK(again && same(*frame, *again));
    return frame;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto strict = check(data, size, false);
    const auto lenient = check(data, size, true);
    if (strict) FUZZ_CHECK(lenient && same(*strict, *lenient));
    return 0;
}
