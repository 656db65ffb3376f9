// Text helpers shared by the capture checker (stream_check.cpp) and its report
// (stream_check_report.cpp). Internal to them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "proto/ddp_rdmap.h"
#include "proto/net.h"

namespace rnic::proto::check {

using ull = unsigned long long;  // printf %llu

template <typename... Args>
std::string format(const char* fmt, Args... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

inline const char* opcode_name(unsigned op) {
    if (op <= static_cast<unsigned>(ddp::opcode::atomic_response)) return ddp::to_string(static_cast<ddp::opcode>(op));
    return "reserved opcode";
}

inline bool carries_invalidate_stag(ddp::opcode op) {
    return op == ddp::opcode::send_invalidate || op == ddp::opcode::send_se_invalidate;
}

inline std::string endpoint(std::uint32_t ip, std::uint16_t port) {
    return net::format_ipv4(ip) + ":" + std::to_string(port);
}

}  // namespace rnic::proto::check
