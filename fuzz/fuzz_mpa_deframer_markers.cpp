// libFuzzer target: mpa::Deframer with Markers (RFC 5044 §4.2-§4.4, §8). See deframer_common.h
// for the input layout and the invariants checked.
#include "deframer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return rnic::fuzz::fuzz_deframer(data, size, true);
}
