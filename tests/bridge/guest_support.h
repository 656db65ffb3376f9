// What the tests against the siw guest (tools/siw-peer) share: where the built guest is, whether a
// variant of it exists, and a free loopback port for QEMU's socket netdev.
#pragma once

#include <arpa/inet.h>
#include <glob.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#ifndef RNIC_SOURCE_DIR
#error "RNIC_SOURCE_DIR must name the source tree"
#endif

namespace rnic::test {

// Where the siw-peer scripts cache the guest (the SiwGuest.Build fixture sets SIW_PEER_DIR).
inline std::string siw_peer_dir() {
    const char* env = std::getenv("SIW_PEER_DIR");
    return env != nullptr ? env : std::string(RNIC_SOURCE_DIR) + "/build/siw-peer";
}

inline bool exists_glob(const std::string& pattern) {
    glob_t g{};
    const bool found = ::glob(pattern.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0;
    ::globfree(&g);
    return found;
}

// A loopback TCP port nobody listens on right now (bound, read back, released).
inline std::uint16_t free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    const bool bound = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                       ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    ::close(s);
    return bound ? ntohs(a.sin_port) : 0;  // 0: no port (the caller's connect then fails by name)
}

}  // namespace rnic::test
