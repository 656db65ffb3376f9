// What the translation units of the TCP connection share (connection.cpp: state, user calls;
// arrival.cpp: segment arrival; acknowledgement.cpp: ACK processing; receive.cpp: receiving data;
// sack_recovery.cpp: RFC 6675; send.cpp: sending and timers). Not part of the library's interface.
#pragma once

#include <algorithm>
#include <cstdint>

#include "proto/tcp/connection.h"

namespace rnic::proto::tcp {

namespace tf = net::tcp_flags;

namespace detail {
constexpr std::uint64_t kMaxCwnd = std::uint64_t{1} << 30;
constexpr std::uint32_t kDefaultMss = 536;    // RFC 9293 §3.7.1: when the peer sends no MSS option
constexpr std::uint8_t kMaxWindowShift = 14;  // RFC 7323 §2.3

inline std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}
}  // namespace detail

using detail::add_sat;
using detail::kDefaultMss;
using detail::kMaxCwnd;
using detail::kMaxWindowShift;

}  // namespace rnic::proto::tcp
