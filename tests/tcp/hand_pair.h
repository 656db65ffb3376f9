// Two proto::tcp::Connection endpoints joined by hand: every segment a side sends waits in its
// `out` queue until the test passes it to the other side (HandPair::pass), so each test decides
// which segment arrives, when, whether it is lost (popped without passing) and whether it carries
// CE. Payload bytes are zeros: these tests are about sequence space and flags, not data (the event
// driven harness.h checks bytes). A's port is 40000, B listens on 18515.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "proto/tcp/connection.h"

namespace handpair {

namespace net = rnic::proto::net;
namespace tcp = rnic::proto::tcp;

struct segment {
    net::tcp_header h;
    std::size_t len = 0;
};

class side : public tcp::env {
public:
    std::deque<segment> out;
    std::unique_ptr<tcp::connection> conn;
    void transmit(const net::tcp_header& header, std::uint64_t, std::size_t len) override {
        out.push_back({header, len});
    }
    void deliver(const std::uint8_t*, std::size_t) override {}
    void acked(std::uint64_t) override {}
    void state_changed(tcp::state, tcp::state) override {}
};

// `SideT` lets a test override Env hooks (e.g. may_transmit) on both sides.
template <typename SideT = side>
struct hand_pair {
    SideT a, b;
    std::vector<std::uint8_t> zeros = std::vector<std::uint8_t>(64 * 1024, 0);
    std::uint64_t now = 1000;

    // The configurations start from tcp::Config's defaults with the ports and ISSs set here;
    // `configure` adjusts them before the connections exist. A connects at once.
    template <typename Configure>
    explicit hand_pair(Configure configure) {
        tcp::config ca, cb;
        ca.local_port = 40000;
        ca.remote_port = 18515;
        ca.iss = 1000;
        cb.local_port = 18515;
        cb.iss = 5000;
        configure(ca, cb);
        a.conn = std::make_unique<tcp::connection>(ca, a);
        b.conn = std::make_unique<tcp::connection>(cb, b);
        b.conn->listen();
        a.conn->connect(now);
    }
    hand_pair() : hand_pair([](tcp::config&, tcp::config&) {}) {}

    // Hands the oldest segment `from` sent to the other side, 1 us later; returns it.
    segment pass(SideT& from, bool ce = false) {
        SideT& to = &from == &a ? b : a;
        segment s = from.out.front();
        from.out.pop_front();
        now += 1000;
        to.conn->on_segment(now, s.h, s.len > 0 ? zeros.data() : nullptr, s.len, ce);
        return s;
    }
    void handshake() {
        pass(a);  // SYN
        pass(b);  // SYN-ACK
        pass(a);  // ACK
        ASSERT_EQ(a.conn->state(), tcp::state::established);
        ASSERT_EQ(b.conn->state(), tcp::state::established);
    }
    void drain(SideT& s) {
        while (!s.out.empty()) pass(s);
    }
};

}  // namespace handpair
