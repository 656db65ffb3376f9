// The receive window clamped to what the receiver can hold (Config::receive_window_cap, the NIC's
// reassembly memory): the window offered never reaches past RCV.NXT + cap, the sender therefore
// never has more than the cap in flight, and a cap that falls later does not pull back a right edge
// already offered (RFC 9293 §3.8.6). Two connections joined by hand, segment by segment.
#include <gtest/gtest.h>

#include "hand_pair.h"

namespace {

namespace net = rnic::proto::net;
namespace tcp = rnic::proto::tcp;

using handpair::segment;

// A sends to B; B's window is capped by `cap` (when set) and is 256 KiB otherwise.
struct pair : handpair::hand_pair<> {
    std::uint64_t cap = 0;
    explicit pair(bool capped)
        : hand_pair([this, capped](tcp::config& ca, tcp::config& cb) {
              ca.send_buffer = 1024 * 1024;
              ca.initial_window_segments = 100;  // the congestion window does not hide the receive window
              cb.receive_buffer = 256 * 1024;
              if (capped) cb.receive_window_cap = [this] { return cap; };
          }) {}
};

TEST(TcpWindowCap, WithoutACapTheWindowIsTheReceiveBuffer) {
    pair p(false);
    p.handshake();
    p.a.conn->on_send_data(p.now, 64 * 1024);
    while (!p.a.out.empty()) p.pass(p.a);
    EXPECT_EQ(p.b.conn->receive_window(), 256u * 1024u);
}

TEST(TcpWindowCap, TheWindowOfferedNeverPassesTheCap) {
    pair p(true);
    p.cap = 20000;
    p.handshake();
    p.a.conn->on_send_data(p.now, 64 * 1024);
    std::uint64_t acked_by_b = 0;
    while (!p.a.out.empty() || !p.b.out.empty()) {
        // The sender never has more sequence space in flight than the cap allowed.
        EXPECT_LE(p.a.conn->bytes_in_flight(), p.cap);
        EXPECT_LE(p.a.conn->send_window(), p.cap);
        if (!p.a.out.empty()) p.pass(p.a);
        if (!p.b.out.empty()) {
            p.pass(p.b);
            ++acked_by_b;
            EXPECT_LE(p.b.conn->receive_window(), p.cap);
        }
    }
    EXPECT_GT(acked_by_b, 0u);
    EXPECT_EQ(p.a.conn->bytes_in_flight(), 0u);  // everything delivered, window by window
}

TEST(TcpWindowCap, ARisingCapOpensTheWindow) {
    pair p(true);
    p.cap = 16 * 1024;
    p.handshake();
    p.a.conn->on_send_data(p.now, 1460);
    p.pass(p.a);
    p.pass(p.b);
    const std::uint64_t small = p.b.conn->receive_window();
    EXPECT_LE(small, 16u * 1024u);
    p.cap = 128 * 1024;
    p.a.conn->on_send_data(p.now, 1460);
    p.pass(p.a);
    p.pass(p.b);
    EXPECT_GT(p.b.conn->receive_window(), 100u * 1024u);
    EXPECT_LE(p.b.conn->receive_window(), 128u * 1024u);
}

TEST(TcpWindowCap, AFallingCapNeverPullsTheRightEdgeBack) {
    pair p(true);
    p.cap = 128 * 1024;
    p.handshake();
    p.a.conn->on_send_data(p.now, 1460);
    p.pass(p.a);
    const segment first_ack = p.pass(p.b);
    const std::uint64_t edge = std::uint64_t{first_ack.h.ack} + p.b.conn->receive_window();
    p.cap = 4 * 1024;  // memory taken by other connections meanwhile
    p.a.conn->on_send_data(p.now, 1460);
    const segment data = p.pass(p.a);
    const segment second_ack = p.pass(p.b);
    EXPECT_EQ(second_ack.h.ack, data.h.seq + 1460);
    // The window shrinks by the bytes just received, the right edge stays where it was.
    EXPECT_EQ(std::uint64_t{second_ack.h.ack} + p.b.conn->receive_window(), edge);
}

}  // namespace
