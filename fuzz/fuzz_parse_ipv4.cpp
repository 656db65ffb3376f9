// libFuzzer target: net::parse_ipv4 (strict dotted quad) and net::format_ipv4.
// Invariants: whatever parses formats back to the very same text (the syntax is canonical: no
// leading zeros, no spaces or signs); any address formats to text that parses back to it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "proto/net.h"

namespace net = rnic::proto::net;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto addr = net::parse_ipv4(text);
    if (addr) {
        FUZZ_CHECK(text.size() >= 7 && text.size() <= 15);
        FUZZ_CHECK(net::format_ipv4(*addr) == text);
    }
    if (size >= 4) {
        const std::uint32_t value =
            (std::uint32_t{data[0]} << 24) | (std::uint32_t{data[1]} << 16) | (std::uint32_t{data[2]} << 8) | data[3];
        FUZZ_CHECK(net::parse_ipv4(net::format_ipv4(value)) == value);
    }
    return 0;
}
