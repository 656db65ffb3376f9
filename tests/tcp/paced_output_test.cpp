// Output paced by the owner (Env::may_transmit, a NIC generating segments as its link drains):
// new data stops where the owner says no and resumes at on_transmit_ready(); what is not sent is
// not in flight; ACKs and fast retransmissions never wait. Two connections joined by hand.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <vector>

#include "proto/tcp/connection.h"

namespace {

namespace net = rnic::proto::net;
namespace tcp = rnic::proto::tcp;

struct Segment {
    net::TcpHeader h;
    std::size_t len = 0;
};

class Side : public tcp::Env {
public:
    std::deque<Segment> out;
    std::unique_ptr<tcp::Connection> conn;
    std::size_t room = SIZE_MAX;  // new data segments the owner still takes
    std::size_t refusals = 0;
    void transmit(const net::TcpHeader& header, std::uint64_t, std::size_t len) override { out.push_back({header, len}); }
    void deliver(const std::uint8_t*, std::size_t) override {}
    void acked(std::uint64_t) override {}
    void state_changed(tcp::State, tcp::State) override {}
    bool may_transmit() override {
        if (room == 0) {
            ++refusals;
            return false;
        }
        --room;
        return true;
    }
};

struct Pair {
    Side a, b;
    std::vector<std::uint8_t> zeros = std::vector<std::uint8_t>(64 * 1024, 0);
    std::uint64_t now = 1000;

    Pair() {
        tcp::Config ca, cb;
        ca.local_port = 40000;
        ca.remote_port = 18515;
        ca.iss = 1000;
        ca.initial_window_segments = 10;
        cb.local_port = 18515;
        cb.iss = 5000;
        a.conn = std::make_unique<tcp::Connection>(ca, a);
        b.conn = std::make_unique<tcp::Connection>(cb, b);
        b.conn->listen();
        a.conn->connect(now);
        pass(a);  // SYN
        pass(b);  // SYN-ACK
        pass(a);  // ACK
    }
    Segment pass(Side& from) {
        Side& to = &from == &a ? b : a;
        Segment s = from.out.front();
        from.out.pop_front();
        now += 1000;
        to.conn->on_segment(now, s.h, s.len > 0 ? zeros.data() : nullptr, s.len, false);
        return s;
    }
    std::size_t data_segments_out(const Side& s) const {
        std::size_t n = 0;
        for (const Segment& seg : s.out) n += seg.len > 0 ? 1 : 0;
        return n;
    }
};

TEST(TcpPacedOutput, NewDataStopsWhereTheOwnerSaysNoAndIsNotInFlight) {
    Pair p;
    ASSERT_EQ(p.a.conn->state(), tcp::State::established);
    p.a.room = 3;
    p.a.conn->on_send_data(p.now, 10 * 1460);  // the initial window would take all ten
    EXPECT_EQ(p.data_segments_out(p.a), 3u);
    EXPECT_EQ(p.a.conn->bytes_in_flight(), 3u * 1460u);
    EXPECT_EQ(p.a.refusals, 1u);
    // Room again: the rest follows without any new call from the application.
    p.a.room = SIZE_MAX;
    p.a.conn->on_transmit_ready(p.now);
    EXPECT_EQ(p.data_segments_out(p.a), 10u);
    EXPECT_EQ(p.a.conn->bytes_in_flight(), 10u * 1460u);
    // A second call without a refusal in between changes nothing.
    p.a.conn->on_transmit_ready(p.now);
    EXPECT_EQ(p.data_segments_out(p.a), 10u);
}

TEST(TcpPacedOutput, AcksAndFastRetransmissionsDoNotWait) {
    Pair p;
    p.a.room = 6;
    p.a.conn->on_send_data(p.now, 20 * 1460);
    ASSERT_EQ(p.data_segments_out(p.a), 6u);
    // The first segment is lost; the next five arrive and B answers each with a duplicate ACK,
    // even though B's own output is closed (ACKs never ask).
    p.a.out.pop_front();
    p.b.room = 0;
    for (int i = 0; i < 5; ++i) p.pass(p.a);
    EXPECT_EQ(p.b.out.size(), 5u);
    EXPECT_EQ(p.b.refusals, 0u);
    // A takes the duplicate ACKs while its own room is zero (the first also updates the window
    // from the handshake's unscaled one, so it is not a duplicate): the third duplicate
    // retransmits anyway.
    p.a.room = 0;
    for (int i = 0; i < 5; ++i) p.pass(p.b);
    ASSERT_EQ(p.data_segments_out(p.a), 1u);
    EXPECT_EQ(p.a.out.back().h.seq, 1001u);  // the lost first segment, at once
    EXPECT_EQ(p.a.conn->stats().fast_retransmits, 1u);
}

TEST(TcpPacedOutput, WithoutRefusalsNothingChanges) {
    Pair p;
    p.a.conn->on_send_data(p.now, 10 * 1460);
    EXPECT_EQ(p.data_segments_out(p.a), 10u);
    EXPECT_EQ(p.a.refusals, 0u);
}

}  // namespace
