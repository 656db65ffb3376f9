// Connection release: active / passive / simultaneous close, half close, lost FIN and lost last
// ACK, TIME-WAIT, RST (abort, RFC 5961 checks).
#include "harness.h"

namespace tcptest {
namespace {

using transitions = std::vector<std::pair<state, state>>;

std::uint64_t time_of(const endpoint& e, state to) {
    for (std::size_t k = 0; k < e.transitions.size(); ++k) {
        if (e.transitions[k].second == to) return e.transition_times[k];
    }
    return UINT64_MAX;
}

TEST(TcpClose, ActiveCloseAfterDataThenPassiveClose) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.a().tx_total = 100'000;
    sim.a().close_when_sent = true;
    sim.b().close_on_peer_fin = true;
    std::uint64_t rx_at_close_wait = 0;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] {
        if (sim.conn_b().state() == state::close_wait && rx_at_close_wait == 0) rx_at_close_wait = sim.b().rx_bytes;
        return sim.both(state::closed);
    }));
    EXPECT_EQ(sim.b().rx_bytes, 100'000u);
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    EXPECT_EQ(sim.a().transitions, (transitions{{state::closed, state::syn_sent},
                                                {state::syn_sent, state::established},
                                                {state::established, state::fin_wait_1},
                                                {state::fin_wait_1, state::fin_wait_2},
                                                {state::fin_wait_2, state::time_wait},
                                                {state::time_wait, state::closed}}));
    EXPECT_EQ(sim.b().transitions, (transitions{{state::closed, state::listen},
                                                {state::listen, state::syn_received},
                                                {state::syn_received, state::established},
                                                {state::established, state::close_wait},
                                                {state::close_wait, state::last_ack},
                                                {state::last_ack, state::closed}}));
    EXPECT_EQ(time_of(sim.a(), state::closed) - time_of(sim.a(), state::time_wait), 1 * kMs);
    EXPECT_EQ(sim.conn_a().send_stream_acked(), 100'000u);
    EXPECT_EQ(sim.conn_a().next_deadline(), UINT64_MAX);
    EXPECT_EQ(sim.conn_b().next_deadline(), UINT64_MAX);
    EXPECT_EQ(sim.conn_a().send_space(), 0u);  // nothing more after close
    // The FIN went out with (or right after) the last data and was acknowledged.
    std::size_t fins = sim.a().count_sent([](const sent_segment& s) { return has(s.h, tf::kFin); });
    EXPECT_EQ(fins, 1u);
    EXPECT_EQ(sim.conn_a().stats().bad_segments + sim.conn_b().stats().bad_segments, 0u);
}

TEST(TcpClose, SimultaneousCloseGoesThroughClosing) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.open();
    sim.run(1 * kMs);
    ASSERT_TRUE(sim.both(state::established));
    sim.conn_a().close(sim.now);
    sim.conn_b().close(sim.now);
    ASSERT_TRUE(sim.run(1 * kSec, [&] { return sim.both(state::closed); }));
    for (const endpoint* e : {&sim.a(), &sim.b()}) {
        const transitions tail(e->transitions.end() - 4, e->transitions.end());
        EXPECT_EQ(tail, (transitions{{state::established, state::fin_wait_1},
                                     {state::fin_wait_1, state::closing},
                                     {state::closing, state::time_wait},
                                     {state::time_wait, state::closed}}));
    }
}

TEST(TcpClose, HalfCloseKeepsReceiving) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.a().close_when_sent = true;  // A sends nothing and closes at once
    sim.b().tx_total = 500'000;
    sim.b().close_when_sent = true;  // B sends its data after A's FIN, then closes
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.both(state::closed); }));
    EXPECT_EQ(sim.a().rx_bytes, 500'000u);
    EXPECT_EQ(sim.a().rx_mismatches, 0u);
    // A received the whole stream while in FIN-WAIT-2.
    EXPECT_LT(time_of(sim.a(), state::fin_wait_2), time_of(sim.b(), state::last_ack));
    EXPECT_EQ(sim.conn_a().stats().bytes_delivered, 500'000u);
}

TEST(TcpClose, LostFinIsRetransmitted) {
    Sim sim(Sim::config_a(), Sim::config_b());
    int fins = 0;
    sim.drop = [&](int from, const sent_segment& s) { return from == 0 && has(s.h, tf::kFin) && fins++ == 0; };
    sim.a().tx_total = 30'000;
    sim.a().close_when_sent = true;
    sim.b().close_on_peer_fin = true;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.both(state::closed); }));
    EXPECT_EQ(fins, 2);
    EXPECT_EQ(sim.conn_a().stats().retransmit_timeouts, 1u);
    EXPECT_EQ(sim.b().rx_bytes, 30'000u);
}

TEST(TcpClose, FinArrivingBeforeMissingDataWaitsForTheGap) {
    Sim sim(Sim::config_a(), Sim::config_b());
    int dropped = 0;
    sim.drop = [&](int from, const sent_segment& s) {
        return from == 0 && s.len > 0 && s.stream_offset == 1460 && dropped++ == 0;
    };
    sim.a().tx_total = 3 * 1460;
    sim.a().close_when_sent = true;
    sim.b().close_on_peer_fin = true;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.both(state::closed); }));
    EXPECT_EQ(sim.b().rx_bytes, 3u * 1460);
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    EXPECT_EQ(sim.conn_a().stats().retransmit_timeouts, 1u);     // too few segments for three dupacks
    EXPECT_EQ(sim.conn_a().stats().bytes_retransmitted, 1460u);  // the FIN segment itself was kept by B
}

TEST(TcpClose, LostLastAckIsAnsweredFromTimeWait) {
    tcp::config ca = Sim::config_a();
    ca.time_wait_ns = 1 * kSec;  // longer than B's RTO
    Sim sim(ca, Sim::config_b());
    int dropped = 0;
    sim.drop = [&](int from, const sent_segment&) {
        return from == 0 && sim.conn_a().state() == state::time_wait && dropped++ == 0;
    };
    sim.a().close_when_sent = true;
    sim.b().close_on_peer_fin = true;
    sim.open();
    ASSERT_TRUE(sim.run(10 * kSec, [&] { return sim.both(state::closed); }));
    EXPECT_EQ(dropped, 2);  // two ACKs of B's FIN sent from TIME-WAIT, the first one dropped
    EXPECT_EQ(sim.conn_b().stats().retransmit_timeouts, 1u);
    EXPECT_EQ(sim.a().transitions.back(), (std::pair<state, state>{state::time_wait, state::closed}));
    EXPECT_EQ(sim.b().transitions.back(), (std::pair<state, state>{state::last_ack, state::closed}));
    EXPECT_EQ(sim.conn_a().stats().rsts_sent, 0u);
    EXPECT_EQ(sim.conn_a().stats().duplicate_segments, 1u);  // the repeated FIN
    // The repeated FIN restarted the 2MSL timer.
    const std::uint64_t fin2 = sim.b().sent.back().time;
    EXPECT_EQ(time_of(sim.a(), state::closed), fin2 + 10 * kUs + 1 * kSec);
}

TEST(TcpClose, AbortSendsRstAndPeerCloses) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.a().tx_total = 1'000'000;
    sim.open();
    sim.run(100 * kUs);
    ASSERT_TRUE(sim.both(state::established));
    ASSERT_GT(sim.conn_a().bytes_in_flight(), 0u);
    sim.conn_a().abort(sim.now);
    EXPECT_EQ(sim.conn_a().state(), state::closed);
    EXPECT_EQ(sim.conn_a().next_deadline(), UINT64_MAX);
    ASSERT_TRUE(has(sim.a().sent.back().h, tf::kRst));
    sim.run(1 * kSec);
    EXPECT_EQ(sim.conn_b().state(), state::closed);
    EXPECT_EQ(sim.b().transitions.back(), (std::pair<state, state>{state::established, state::closed}));
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    EXPECT_EQ(sim.conn_b().next_deadline(), UINT64_MAX);
}

TEST(TcpClose, RstChecksPerRfc5961) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.a().tx_total = 10'000;
    sim.open();
    sim.run(1 * kMs);
    ASSERT_TRUE(sim.both(state::established));
    const std::uint32_t rn = rcv_nxt(sim.conn_b());
    const std::size_t sent_before = sim.b().sent.size();
    // In window but not exact: challenge ACK, no reset.
    sim.inject(1, make_header(1000, 2000, rn + 100, 0, tf::kRst));
    EXPECT_EQ(sim.conn_b().state(), state::established);
    ASSERT_EQ(sim.b().sent.size(), sent_before + 1);
    EXPECT_EQ(sim.b().sent.back().h.flags, tf::kAck);
    EXPECT_EQ(sim.b().sent.back().h.ack, rn);
    // Outside the window: silently dropped.
    sim.inject(1, make_header(1000, 2000, rn - 5000, 0, tf::kRst));
    sim.inject(1, make_header(1000, 2000, rn + 10'000'000, 0, tf::kRst | tf::kAck));
    EXPECT_EQ(sim.conn_b().state(), state::established);
    EXPECT_EQ(sim.b().sent.size(), sent_before + 1);
    EXPECT_EQ(sim.conn_b().stats().bad_segments, 3u);
    // Wrong port: ignored.
    sim.inject(1, make_header(1001, 2000, rn, 0, tf::kRst));
    EXPECT_EQ(sim.conn_b().state(), state::established);
    // Exact: reset.
    sim.inject(1, make_header(1000, 2000, rn, 0, tf::kRst));
    EXPECT_EQ(sim.conn_b().state(), state::closed);
    EXPECT_EQ(sim.conn_b().next_deadline(), UINT64_MAX);
}

TEST(TcpClose, RstInTimeWaitCloses) {
    tcp::config ca = Sim::config_a();
    ca.time_wait_ns = 10 * kSec;
    Sim sim(ca, Sim::config_b());
    sim.a().close_when_sent = true;
    sim.b().close_on_peer_fin = true;
    sim.open();
    ASSERT_TRUE(sim.run(
        1 * kSec, [&] { return sim.conn_a().state() == state::time_wait && sim.conn_b().state() == state::closed; }));
    sim.inject(0, make_header(2000, 1000, rcv_nxt(sim.conn_a()) + 1, 0, tf::kRst));  // +1: B's FIN
    EXPECT_EQ(sim.conn_a().state(), state::closed);
}

TEST(TcpClose, ClosedConnectionAnswersWithRst) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.a().close_when_sent = true;
    sim.b().close_on_peer_fin = true;
    sim.open();
    ASSERT_TRUE(sim.run(1 * kSec, [&] { return sim.both(state::closed); }));
    const std::size_t n = sim.b().sent.size();
    const std::uint8_t data[4] = {1, 2, 3, 4};
    sim.conn_b().on_segment(sim.now, make_header(1000, 2000, 77, 99, tf::kAck), data, 4);
    ASSERT_EQ(sim.b().sent.size(), n + 1);
    EXPECT_EQ(sim.b().sent.back().h.flags, tf::kRst);
    EXPECT_EQ(sim.b().sent.back().h.seq, 99u);
    sim.conn_b().on_segment(sim.now, make_header(1000, 2000, 77, 0, 0), data, 4);
    EXPECT_EQ(sim.b().sent.back().h.flags, tf::kRst | tf::kAck);
    EXPECT_EQ(sim.b().sent.back().h.ack, 81u);
    sim.conn_b().on_segment(sim.now, make_header(1000, 2000, 77, 0, tf::kRst), nullptr, 0);
    EXPECT_EQ(sim.b().sent.size(), n + 2);  // never a RST for a RST
}

TEST(TcpClose, CloseIsIdempotentAndStopsSending) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.open();
    sim.run(1 * kMs);
    sim.conn_a().close(sim.now);
    sim.conn_a().close(sim.now);
    sim.conn_a().on_send_data(sim.now, 1000);  // ignored after close
    EXPECT_EQ(sim.conn_a().send_stream_queued(), 0u);
    sim.run(1 * kSec);
    EXPECT_EQ(sim.conn_a().state(), state::fin_wait_2);
    EXPECT_EQ(sim.conn_b().state(), state::close_wait);
    EXPECT_EQ(sim.a().count_sent([](const sent_segment& s) { return has(s.h, tf::kFin); }), 1u);
}

}  // namespace
}  // namespace tcptest
