#include "host_identity.h"

#include <algorithm>
#include <cstdio>

namespace rnic::platform {

int host_count(const config::scenario& s) {
    if (s.get_string("topology.kind") == "back_to_back") return 2;
    return static_cast<int>(s.get_int("topology.hosts"));
}

host_identity identity_of(const config::scenario& s, int i) {
    host_identity id;
    if (static_cast<std::size_t>(i) < s.array_size("hosts")) {
        const std::string p = "hosts." + std::to_string(i);
        id.name = s.get_string(p + ".name");
        id.mac = s.get_string(p + ".mac");
        id.ipv4 = s.get_string(p + ".ipv4");
        id.mpa_rtr = s.get_string(p + ".mpa_rtr");
        id.vitcp_reliability = s.get_string(p + ".vitcp_reliability");
        id.buffer_capacity = s.get_size(p + ".buffer_capacity");
        id.key = p;
        return id;
    }
    // Derived: the 01 in the fourth byte keeps these apart from the named defaults (…:0a, …:0b), and
    // 250 addresses per /24 keep .0 and .255 out while hosts 0 and 1 would get .1 and .2 as named.
    char mac[18];
    std::snprintf(mac, sizeof mac, "02:00:00:01:%02x:%02x", (i >> 8) & 0xff, i & 0xff);
    id.name = "h" + std::to_string(i);
    id.mac = mac;
    id.ipv4 = "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
    id.key = "topology.hosts";
    return id;
}

std::uint64_t buffer_capacity_of(const config::scenario& s, int i) {
    const std::uint64_t own = identity_of(s, i).buffer_capacity;
    return own != 0 ? own : s.get_size("rnic.buffer.capacity");
}

smallest_buffer smallest_buffer_capacity(const config::scenario& s) {
    smallest_buffer b{s.get_size("rnic.buffer.capacity"), "rnic.buffer.capacity"};
    // Only hosts the array names can differ; the derived ones all take rnic.buffer.capacity.
    const int named = std::min(host_count(s), static_cast<int>(s.array_size("hosts")));
    for (int i = 0; i < named; ++i) {
        const std::uint64_t own = identity_of(s, i).buffer_capacity;
        if (own != 0 && own < b.bytes) b = {own, "hosts." + std::to_string(i) + ".buffer_capacity"};
    }
    return b;
}

bool parse_mac(const std::string& text, proto::net::mac_address* out) {
    unsigned b[6];
    char tail;
    if (text.size() != 17 ||
        std::sscanf(text.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6) {
        return false;
    }
    for (int k = 0; k < 6; ++k) (*out)[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(b[k]);
    return true;
}

}  // namespace rnic::platform
