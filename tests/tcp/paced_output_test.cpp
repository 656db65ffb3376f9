// Output paced by the owner (Env::may_transmit, a NIC generating segments as its link drains):
// new data stops where the owner says no and resumes at on_transmit_ready(); what is not sent is
// not in flight; ACKs and fast retransmissions never wait. Two connections joined by hand.
#include <gtest/gtest.h>

#include <cstdint>

#include "hand_pair.h"

namespace {

namespace net = rnic::proto::net;
namespace tcp = rnic::proto::tcp;

using handpair::segment;

// A side whose owner takes `room` more new data segments, then says no.
class side : public handpair::side {
public:
    std::size_t room = SIZE_MAX;
    std::size_t refusals = 0;
    bool may_transmit() override {
        if (room == 0) {
            ++refusals;
            return false;
        }
        --room;
        return true;
    }
};

struct pair : handpair::hand_pair<side> {
    pair() {
        pass(a);  // SYN
        pass(b);  // SYN-ACK
        pass(a);  // ACK
    }
    std::size_t data_segments_out(const side& s) const {
        std::size_t n = 0;
        for (const segment& seg : s.out) n += seg.len > 0 ? 1 : 0;
        return n;
    }
};

TEST(TcpPacedOutput, NewDataStopsWhereTheOwnerSaysNoAndIsNotInFlight) {
    pair p;
    ASSERT_EQ(p.a.conn->state(), tcp::state::established);
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
    pair p;
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
    pair p;
    p.a.conn->on_send_data(p.now, 10 * 1460);
    EXPECT_EQ(p.data_segments_out(p.a), 10u);
    EXPECT_EQ(p.a.refusals, 0u);
}

}  // namespace
