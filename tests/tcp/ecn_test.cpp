// RFC 3168 ECN in the TCP state machine, segment by segment: negotiation in the handshake (§6.1.1),
// the receiver echoing CE as ECE until CWR (§6.1.3), the sender halving its window at most once
// per window of data and saying so with CWR on new data (§6.1.2). Two connections joined by hand,
// so that each test decides which segment arrives, and whether it carries CE.
#include <gtest/gtest.h>

#include "hand_pair.h"

namespace {

namespace net = rnic::proto::net;
namespace tcp = rnic::proto::tcp;
namespace tf = rnic::proto::net::tcp_flags;

using handpair::segment;

struct pair : handpair::hand_pair<> {
    pair(bool a_ecn, bool b_ecn)
        : hand_pair([&](tcp::config& ca, tcp::config& cb) {
              ca.ecn = a_ecn;
              cb.ecn = b_ecn;
          }) {}
};

TEST(TcpEcn, NegotiatedWhenBothOffer) {
    pair p(true, true);
    const segment syn = p.pass(p.a);
    EXPECT_TRUE(syn.h.flags & tf::kEce);
    EXPECT_TRUE(syn.h.flags & tf::kCwr);
    const segment syn_ack = p.pass(p.b);
    EXPECT_TRUE(syn_ack.h.flags & tf::kEce);
    EXPECT_FALSE(syn_ack.h.flags & tf::kCwr);  // §6.1.1: ECE alone, so that it is not a reflected SYN
    p.pass(p.a);
    EXPECT_TRUE(p.a.conn->ecn_active());
    EXPECT_TRUE(p.b.conn->ecn_active());
}

TEST(TcpEcn, NotUsedUnlessBothOffer) {
    for (const auto& [a, b] : {std::pair{true, false}, std::pair{false, true}, std::pair{false, false}}) {
        pair p(a, b);
        const segment syn = p.pass(p.a);
        EXPECT_EQ((syn.h.flags & (tf::kEce | tf::kCwr)) != 0, a);
        const segment syn_ack = p.pass(p.b);
        EXPECT_FALSE(syn_ack.h.flags & tf::kEce) << a << b;
        p.pass(p.a);
        EXPECT_FALSE(p.a.conn->ecn_active()) << a << b;
        EXPECT_FALSE(p.b.conn->ecn_active()) << a << b;
    }
}

TEST(TcpEcn, CeIsEchoedUntilCwrAndTheSenderReducesOnce) {
    pair p(true, true);
    p.handshake();
    p.a.conn->on_send_data(p.now, 8 * 1460);
    ASSERT_GE(p.a.out.size(), 4u);
    const std::uint32_t cwnd_before = p.a.conn->cwnd();
    // The first data segment arrives marked CE: every ACK from b echoes ECE from then on.
    p.pass(p.a, /*ce=*/true);
    ASSERT_FALSE(p.b.out.empty());
    EXPECT_TRUE(p.b.out.back().h.flags & tf::kEce);
    p.pass(p.a);  // not marked: b still echoes (no CWR seen yet)
    EXPECT_TRUE(p.b.out.back().h.flags & tf::kEce);
    EXPECT_EQ(p.b.conn->stats().ecn_ce_received, 1u);
    // a takes the ECE ACKs: one reduction for this window, however many ECEs.
    const std::size_t acks = p.b.out.size();
    for (std::size_t k = 0; k < acks; ++k) p.pass(p.b);
    EXPECT_EQ(p.a.conn->stats().ecn_ece_received, acks);
    EXPECT_EQ(p.a.conn->stats().ecn_cwnd_reductions, 1u);
    EXPECT_LT(p.a.conn->cwnd(), cwnd_before);
    EXPECT_EQ(p.a.conn->ssthresh(), p.a.conn->cwnd());
    // The next new data segment carries CWR; b stops echoing once it has it.
    p.a.conn->on_send_data(p.now, 1460);
    bool saw_cwr = false;
    while (!p.a.out.empty() || !p.b.out.empty()) {
        if (p.a.out.empty()) {
            p.pass(p.b);  // ACKs open a's reduced window for the new data
            continue;
        }
        const segment s = p.pass(p.a);
        if (s.h.flags & tf::kCwr) {
            saw_cwr = true;
            EXPECT_GT(s.len, 0u);  // on new data, never on a pure ACK
            ASSERT_FALSE(p.b.out.empty());
            EXPECT_FALSE(p.b.out.back().h.flags & tf::kEce);
        }
    }
    EXPECT_TRUE(saw_cwr);
    EXPECT_EQ(p.a.conn->stats().ecn_cwr_sent, 1u);
}

TEST(TcpEcn, AReductionPerWindowNotPerAck) {
    pair p(true, true);
    p.handshake();
    // Two windows of data, CE on a segment of each: two reductions, not one per ECE ACK.
    for (int window = 0; window < 2; ++window) {
        p.a.conn->on_send_data(p.now, 4 * 1460);
        bool first = true;
        while (!p.a.out.empty()) {
            p.pass(p.a, first);
            first = false;
        }
        while (!p.b.out.empty()) p.pass(p.b);
    }
    EXPECT_EQ(p.a.conn->stats().ecn_cwnd_reductions, 2u);
    EXPECT_GE(p.a.conn->stats().ecn_ece_received, 4u);
}

TEST(TcpEcn, CeWithoutNegotiationIsCountedButNotEchoed) {
    pair p(true, false);
    p.handshake();
    p.a.conn->on_send_data(p.now, 1460);
    p.pass(p.a, /*ce=*/true);
    EXPECT_EQ(p.b.conn->stats().ecn_ce_received, 1u);
    ASSERT_FALSE(p.b.out.empty());
    EXPECT_FALSE(p.b.out.back().h.flags & tf::kEce);
}

}  // namespace
