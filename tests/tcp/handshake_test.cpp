// Connection establishment: three-way handshake, option negotiation, simultaneous open, SYN loss,
// refused and timed-out connections, LISTEN / SYN-SENT / SYN-RECEIVED corner cases.
#include <string>

#include "harness.h"

namespace tcptest {
namespace {

using transitions = std::vector<std::pair<state, state>>;

TEST(TcpState, Names) {
    EXPECT_STREQ(tcp::to_string(state::closed), "CLOSED");
    EXPECT_STREQ(tcp::to_string(state::syn_received), "SYN-RECEIVED");
    EXPECT_STREQ(tcp::to_string(state::time_wait), "TIME-WAIT");
}

TEST(TcpHandshake, ActiveAndPassiveOpen) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.open();
    sim.run(10 * kMs);
    ASSERT_TRUE(sim.both(state::established));
    EXPECT_EQ(sim.a().transitions,
              (transitions{{state::closed, state::syn_sent}, {state::syn_sent, state::established}}));
    EXPECT_EQ(sim.b().transitions, (transitions{{state::closed, state::listen},
                                                {state::listen, state::syn_received},
                                                {state::syn_received, state::established}}));
    // SYN, SYN-ACK, ACK on the wire.
    ASSERT_EQ(sim.a().sent.size(), 2u);
    ASSERT_EQ(sim.b().sent.size(), 1u);
    const net::tcp_header& syn = sim.a().sent[0].h;
    EXPECT_EQ(syn.flags, tf::kSyn);
    EXPECT_EQ(syn.seq, 0x1000u);
    EXPECT_EQ(syn.src_port, 1000);
    EXPECT_EQ(syn.dst_port, 2000);
    EXPECT_EQ(syn.mss, std::optional<std::uint16_t>(1460));
    EXPECT_EQ(syn.window_scale, std::optional<std::uint8_t>(7));
    EXPECT_FALSE(syn.sack_permitted);
    EXPECT_EQ(syn.window, 65535);  // never scaled in a SYN
    const net::tcp_header& synack = sim.b().sent[0].h;
    EXPECT_EQ(synack.flags, tf::kSyn | tf::kAck);
    EXPECT_EQ(synack.seq, 0x70000000u);
    EXPECT_EQ(synack.ack, 0x1001u);
    EXPECT_EQ(synack.dst_port, 1000);
    EXPECT_EQ(synack.window_scale, std::optional<std::uint8_t>(7));
    const net::tcp_header& ack = sim.a().sent[1].h;
    EXPECT_EQ(ack.flags, tf::kAck);
    EXPECT_EQ(ack.seq, 0x1001u);
    EXPECT_EQ(ack.ack, 0x70000001u);
    EXPECT_EQ(ack.window, (256 * 1024) >> 7);

    EXPECT_EQ(sim.conn_a().irs(), 0x70000000u);
    EXPECT_EQ(sim.conn_b().irs(), 0x1000u);
    EXPECT_EQ(sim.conn_b().remote_port(), 1000);
    EXPECT_EQ(sim.conn_a().effective_mss(), 1460u);
    EXPECT_EQ(sim.conn_b().effective_mss(), 1460u);
    EXPECT_EQ(sim.conn_a().cwnd(), 10u * 1460u);
    EXPECT_TRUE(sim.conn_a().window_scaling_enabled());
    EXPECT_FALSE(sim.conn_a().sack_enabled());
    EXPECT_GT(sim.conn_a().srtt(), 0u);  // sampled from the SYN
    EXPECT_EQ(sim.conn_a().srtt(), 20 * kUs);
    EXPECT_EQ(sim.conn_a().rto(), 200 * kMs);  // clamped to rto_min
    EXPECT_EQ(sim.conn_b().srtt(), 20 * kUs);  // from the SYN-ACK
    EXPECT_EQ(sim.conn_a().next_deadline(), UINT64_MAX);
    EXPECT_EQ(sim.conn_b().next_deadline(), UINT64_MAX);
    EXPECT_EQ(sim.conn_a().stats().bad_segments + sim.conn_b().stats().bad_segments, 0u);
}

struct combo {
    bool a_ws, b_ws, a_sack, b_sack;
    std::uint16_t a_mss, b_mss;
    std::uint8_t a_shift, b_shift;
};

TEST(TcpHandshake, OptionNegotiationCombinations) {
    const combo combos[] = {
        {true, true, true, true, 1460, 1460, 7, 7},   {true, false, true, false, 1460, 9000, 7, 3},
        {false, true, false, true, 9000, 1460, 2, 9}, {false, false, true, true, 536, 1460, 0, 0},
        {true, true, false, true, 1460, 1200, 0, 14}, {true, true, true, false, 8960, 8960, 14, 1},
    };
    for (const combo& k : combos) {
        SCOPED_TRACE(testing::Message() << "ws " << k.a_ws << k.b_ws << " sack " << k.a_sack << k.b_sack << " mss "
                                        << k.a_mss << "/" << k.b_mss << " shift " << int(k.a_shift) << "/"
                                        << int(k.b_shift));
        tcp::config ca = Sim::config_a(), cb = Sim::config_b();
        ca.window_scaling = k.a_ws;
        cb.window_scaling = k.b_ws;
        ca.sack = k.a_sack;
        cb.sack = k.b_sack;
        ca.mss = k.a_mss;
        cb.mss = k.b_mss;
        ca.window_scale = k.a_shift;
        cb.window_scale = k.b_shift;
        ca.receive_buffer = cb.receive_buffer = 1024 * 1024;
        ca.send_buffer = cb.send_buffer = 1024 * 1024;
        net_config net;
        net.loss = 0.01;
        Sim sim(ca, cb, net, 7);
        sim.a().tx_total = 300'000;
        sim.b().tx_total = 200'000;
        sim.open();
        sim.run(60 * kSec, [&] { return sim.a().rx_bytes == 200'000 && sim.b().rx_bytes == 300'000; });
        ASSERT_TRUE(sim.both(state::established));
        const bool ws = k.a_ws && k.b_ws;
        const bool sack = k.a_sack && k.b_sack;
        const std::uint32_t mss = std::min(k.a_mss, k.b_mss);
        EXPECT_EQ(sim.conn_a().window_scaling_enabled(), ws);
        EXPECT_EQ(sim.conn_b().window_scaling_enabled(), ws);
        EXPECT_EQ(sim.conn_a().sack_enabled(), sack);
        EXPECT_EQ(sim.conn_b().sack_enabled(), sack);
        EXPECT_EQ(sim.conn_a().effective_mss(), mss);
        EXPECT_EQ(sim.conn_b().effective_mss(), mss);
        EXPECT_EQ(sim.conn_a().send_window_shift(), ws ? k.b_shift : 0);
        EXPECT_EQ(sim.conn_a().receive_window_shift(), ws ? k.a_shift : 0);
        EXPECT_EQ(sim.conn_b().send_window_shift(), ws ? k.a_shift : 0);
        // The SYN carries what A offers; the SYN-ACK only what both agreed on.
        const net::tcp_header& syn = sim.a().sent[0].h;
        EXPECT_EQ(syn.window_scale.has_value(), k.a_ws);
        EXPECT_EQ(syn.sack_permitted, k.a_sack);
        const net::tcp_header& synack = sim.b().sent[0].h;
        EXPECT_EQ(synack.window_scale.has_value(), ws);
        EXPECT_EQ(synack.sack_permitted, sack);
        EXPECT_EQ(synack.mss, std::optional<std::uint16_t>(k.b_mss));
        // Windows: unscaled peers never see more than 65535; scaled ones see the whole buffer.
        if (ws) {
            EXPECT_GT(sim.conn_a().send_window(), 65535u);
        } else {
            EXPECT_LE(sim.conn_a().send_window(), 65535u);
            EXPECT_LE(sim.conn_b().send_window(), 65535u);
        }
        // Segments never exceed the effective MSS; SACK blocks only when negotiated.
        for (const endpoint* e : {&sim.a(), &sim.b()}) {
            for (const sent_segment& s : e->sent) {
                EXPECT_LE(s.len, mss);
                if (!sack) {
                    EXPECT_TRUE(s.h.sack_blocks.empty());
                }
                if (!has(s.h, tf::kSyn)) {
                    EXPECT_FALSE(s.h.mss.has_value());
                    EXPECT_FALSE(s.h.window_scale.has_value());
                }
            }
        }
        EXPECT_EQ(sim.a().rx_mismatches + sim.b().rx_mismatches, 0u);
    }
}

TEST(TcpHandshake, PeerWithoutOptionsGetsDefaultMss) {
    recorder r;
    tcp::config cfg = Sim::config_b();
    cfg.sack = true;
    tcp::connection c(cfg, r);
    c.listen();
    c.on_segment(0, make_header(4444, 2000, 5000, 0, tf::kSyn, 8192), nullptr, 0);
    ASSERT_EQ(c.state(), state::syn_received);
    EXPECT_EQ(c.effective_mss(), 536u);
    EXPECT_FALSE(c.window_scaling_enabled());
    EXPECT_FALSE(c.sack_enabled());
    EXPECT_EQ(c.remote_port(), 4444);
    ASSERT_EQ(r.sent.size(), 1u);
    const net::tcp_header& synack = r.sent[0].h;
    EXPECT_EQ(synack.flags, tf::kSyn | tf::kAck);
    EXPECT_EQ(synack.ack, 5001u);
    EXPECT_EQ(synack.dst_port, 4444);
    EXPECT_FALSE(synack.window_scale.has_value());
    EXPECT_FALSE(synack.sack_permitted);
    EXPECT_EQ(synack.mss, std::optional<std::uint16_t>(1460));
    // Completing the handshake: the window of the ACK is not scaled either.
    c.on_segment(10, make_header(4444, 2000, 5001, 0x70000001, tf::kAck, 8192), nullptr, 0);
    EXPECT_EQ(c.state(), state::established);
    EXPECT_EQ(c.send_window(), 8192u);
    // Our data goes out in 536-byte segments.
    c.on_send_data(20, 2000);
    ASSERT_EQ(r.sent.size(), 5u);
    EXPECT_EQ(r.sent[1].len, 536u);
    EXPECT_EQ(r.sent[4].len, 2000u - 3 * 536u);
    EXPECT_EQ(r.sent[4].stream_offset, 3u * 536u);
}

TEST(TcpHandshake, SimultaneousOpen) {
    tcp::config ca = Sim::config_a(), cb = Sim::config_b();
    cb.remote_port = 1000;
    Sim sim(ca, cb);
    sim.a().tx_total = 100'000;
    sim.b().tx_total = 70'000;
    sim.conn_a().connect(0);
    sim.conn_b().connect(0);
    sim.run(10 * kSec, [&] { return sim.a().rx_bytes == 70'000 && sim.b().rx_bytes == 100'000; });
    ASSERT_TRUE(sim.both(state::established));
    const transitions expect{{state::closed, state::syn_sent},
                             {state::syn_sent, state::syn_received},
                             {state::syn_received, state::established}};
    EXPECT_EQ(sim.a().transitions, expect);
    EXPECT_EQ(sim.b().transitions, expect);
    EXPECT_EQ(sim.a().rx_mismatches + sim.b().rx_mismatches, 0u);
    EXPECT_EQ(sim.conn_a().stats().retransmit_timeouts + sim.conn_b().stats().retransmit_timeouts, 0u);
}

TEST(TcpHandshake, LostSynIsRetransmittedAndStartsWithOneSegment) {
    Sim sim(Sim::config_a(), Sim::config_b());
    int syns = 0;
    sim.drop = [&](int from, const sent_segment& s) { return from == 0 && has(s.h, tf::kSyn) && syns++ == 0; };
    sim.a().tx_total = 50'000;
    sim.open();
    sim.run(5 * kSec, [&] { return sim.conn_a().state() == state::established; });
    ASSERT_EQ(sim.conn_a().state(), state::established);
    ASSERT_GE(sim.a().sent.size(), 2u);
    EXPECT_EQ(sim.a().sent[1].time, 1 * kSec);  // initial RTO
    EXPECT_TRUE(has(sim.a().sent[1].h, tf::kSyn));
    EXPECT_EQ(sim.conn_a().stats().retransmit_timeouts, 1u);
    EXPECT_EQ(sim.conn_a().rto(), 2 * kSec);  // backed off; Karn: no sample from the repeated SYN
    // RFC 5681 §3.1: after a lost SYN the initial window is one segment.
    EXPECT_EQ(sim.a().count_sent([](const sent_segment& s) { return s.len > 0; }), 1u);
    sim.run(10 * kSec, [&] { return sim.b().rx_bytes == 50'000; });
    EXPECT_EQ(sim.b().rx_bytes, 50'000u);
    EXPECT_EQ(sim.conn_a().rto(), 200 * kMs);  // first data sample resets the backoff
}

TEST(TcpHandshake, LostSynAckIsRetransmitted) {
    Sim sim(Sim::config_a(), Sim::config_b());
    int synacks = 0;
    sim.drop = [&](int from, const sent_segment& s) { return from == 1 && has(s.h, tf::kSyn) && synacks++ < 2; };
    sim.open();
    sim.run(20 * kSec, [&] { return sim.both(state::established); });
    ASSERT_TRUE(sim.both(state::established));
    // A repeats its SYN after 1 s; B answers the repeated SYN with its SYN-ACK at once (dropped
    // again), and B's own retransmission timer, expiring at the same instant, sends the third.
    EXPECT_EQ(sim.b().count_sent([](const sent_segment& s) { return has(s.h, tf::kSyn); }), 3u);
    EXPECT_EQ(sim.conn_b().stats().bad_segments, 0u);
}

TEST(TcpHandshake, LostFinalAckIsRecoveredByData) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.drop = [&](int from, const sent_segment& s) { return from == 0 && s.len == 0 && !has(s.h, tf::kSyn); };
    sim.open();
    sim.run(1 * kMs);
    EXPECT_EQ(sim.conn_a().state(), state::established);
    EXPECT_EQ(sim.conn_b().state(), state::syn_received);
    EXPECT_EQ(sim.packets_dropped, 1u);
    sim.a().tx_total = 10'000;  // the first data segment carries the ACK B is waiting for
    sim.pump();
    sim.run(1 * kSec, [&] { return sim.b().rx_bytes == 10'000; });
    EXPECT_EQ(sim.conn_b().state(), state::established);
    EXPECT_EQ(sim.b().rx_bytes, 10'000u);
    EXPECT_EQ(sim.conn_b().stats().retransmit_timeouts, 0u);
}

TEST(TcpHandshake, ConnectionRefusedByClosedPeer) {
    Sim sim(Sim::config_a(), Sim::config_b());  // B never listens
    sim.conn_a().connect(0);
    sim.run(1 * kSec);
    EXPECT_EQ(sim.conn_a().state(), state::closed);
    EXPECT_EQ(sim.a().transitions.back(), (std::pair<state, state>{state::syn_sent, state::closed}));
    ASSERT_EQ(sim.b().sent.size(), 1u);
    EXPECT_EQ(sim.b().sent[0].h.flags, tf::kRst | tf::kAck);
    EXPECT_EQ(sim.b().sent[0].h.ack, 0x1001u);
    EXPECT_EQ(sim.conn_a().next_deadline(), UINT64_MAX);
}

TEST(TcpHandshake, ConnectTimesOutWithExponentialBackoff) {
    tcp::config ca = Sim::config_a();
    ca.max_retransmits = 5;
    Sim sim(ca, Sim::config_b());
    sim.drop = [](int from, const sent_segment&) { return from == 0; };
    sim.open();
    sim.run(600 * kSec);
    EXPECT_EQ(sim.conn_a().state(), state::closed);
    std::vector<std::uint64_t> times;
    for (const sent_segment& s : sim.a().sent) {
        if (has(s.h, tf::kSyn)) times.push_back(s.time);
    }
    ASSERT_EQ(times.size(), 6u);
    for (std::size_t k = 1; k < times.size(); ++k) EXPECT_EQ(times[k] - times[k - 1], (kSec << (k - 1)));
    EXPECT_EQ(sim.a().transition_times.back(), (1 + 2 + 4 + 8 + 16 + 32) * kSec);
    EXPECT_EQ(sim.conn_a().stats().retransmit_timeouts, 5u);
    EXPECT_EQ(sim.conn_b().state(), state::listen);
}

TEST(TcpHandshake, ListenIgnoresRstAndResetsAcks) {
    recorder r;
    tcp::config cfg = Sim::config_b();
    tcp::connection c(cfg, r);
    c.listen();
    c.on_segment(0, make_header(1000, 2000, 1, 0, tf::kRst), nullptr, 0);
    EXPECT_TRUE(r.sent.empty());
    c.on_segment(0, make_header(1000, 2000, 1, 777, tf::kAck), nullptr, 0);
    ASSERT_EQ(r.sent.size(), 1u);
    EXPECT_EQ(r.sent[0].h.flags, tf::kRst);
    EXPECT_EQ(r.sent[0].h.seq, 777u);
    EXPECT_EQ(r.sent[0].h.dst_port, 1000);
    const std::uint8_t data[3] = {1, 2, 3};
    c.on_segment(0, make_header(1000, 2000, 1, 0, 0), data, 3);                       // no SYN
    c.on_segment(0, make_header(1000, 2001, 1, 0, tf::kSyn), nullptr, 0);             // not our port
    c.on_segment(0, make_header(1000, 2000, 1, 0, tf::kSyn | tf::kFin), nullptr, 0);  // nonsense flags
    EXPECT_EQ(c.state(), state::listen);
    EXPECT_EQ(c.stats().bad_segments, 4u);
    EXPECT_EQ(c.stats().segments_received, 5u);
    EXPECT_EQ(r.sent.size(), 1u);
    EXPECT_EQ(c.next_deadline(), UINT64_MAX);

    // A listener bound to a remote port only accepts SYNs from it.
    recorder r2;
    tcp::config cfg2 = Sim::config_b();
    cfg2.remote_port = 1000;
    tcp::connection c2(cfg2, r2);
    c2.listen();
    c2.on_segment(0, make_header(1001, 2000, 1, 0, tf::kSyn), nullptr, 0);
    EXPECT_EQ(c2.state(), state::listen);
    c2.on_segment(0, make_header(1000, 2000, 1, 0, tf::kSyn), nullptr, 0);
    EXPECT_EQ(c2.state(), state::syn_received);
}

TEST(TcpHandshake, SynSentRejectsBadAcksAndAcceptsRefusal) {
    recorder r;
    tcp::connection c(Sim::config_a(), r);
    c.connect(0);
    ASSERT_EQ(r.sent.size(), 1u);
    // SYN-ACK acknowledging something we never sent: RST <SEQ=SEG.ACK>, stay in SYN-SENT.
    c.on_segment(5, make_header(2000, 1000, 9000, 0x1000 + 5, tf::kSyn | tf::kAck), nullptr, 0);
    EXPECT_EQ(c.state(), state::syn_sent);
    ASSERT_EQ(r.sent.size(), 2u);
    EXPECT_EQ(r.sent[1].h.flags, tf::kRst);
    EXPECT_EQ(r.sent[1].h.seq, 0x1005u);
    // A RST without ACK is not acceptable in SYN-SENT.
    c.on_segment(6, make_header(2000, 1000, 9000, 0, tf::kRst), nullptr, 0);
    EXPECT_EQ(c.state(), state::syn_sent);
    // Segment from the wrong port.
    c.on_segment(7, make_header(2001, 1000, 9000, 0x1001, tf::kSyn | tf::kAck), nullptr, 0);
    EXPECT_EQ(c.state(), state::syn_sent);
    EXPECT_EQ(c.stats().bad_segments, 3u);
    // RST,ACK acknowledging our SYN: refused.
    c.on_segment(8, make_header(2000, 1000, 0, 0x1001, tf::kRst | tf::kAck), nullptr, 0);
    EXPECT_EQ(c.state(), state::closed);
    EXPECT_EQ(c.next_deadline(), UINT64_MAX);
}

TEST(TcpHandshake, SynReceivedResetReturnsToListen) {
    recorder r;
    tcp::connection c(Sim::config_b(), r);
    c.listen();
    c.on_segment(0, make_header(1000, 2000, 41, 0, tf::kSyn), nullptr, 0);
    ASSERT_EQ(c.state(), state::syn_received);
    // RST with a sequence number inside the window but not RCV.NXT: challenge ACK only.
    c.on_segment(1, make_header(1000, 2000, 50, 0, tf::kRst), nullptr, 0);
    EXPECT_EQ(c.state(), state::syn_received);
    // The exact one resets, back to LISTEN.
    c.on_segment(2, make_header(1000, 2000, 42, 0, tf::kRst), nullptr, 0);
    EXPECT_EQ(c.state(), state::listen);
    EXPECT_EQ(r.transitions.back(), (std::pair<state, state>{state::syn_received, state::listen}));
    EXPECT_EQ(c.next_deadline(), UINT64_MAX);
    // And it can accept the next connection.
    c.on_segment(3, make_header(1001, 2000, 900, 0, tf::kSyn), nullptr, 0);
    EXPECT_EQ(c.state(), state::syn_received);
    EXPECT_EQ(c.remote_port(), 1001);
    EXPECT_EQ(r.sent.back().h.ack, 901u);
}

TEST(TcpHandshake, SynReceivedRejectsBadAck) {
    recorder r;
    tcp::connection c(Sim::config_b(), r);
    c.listen();
    c.on_segment(0, make_header(1000, 2000, 41, 0, tf::kSyn), nullptr, 0);
    const std::size_t n = r.sent.size();
    c.on_segment(1, make_header(1000, 2000, 42, 0x70000000 + 9, tf::kAck), nullptr, 0);
    EXPECT_EQ(c.state(), state::syn_received);
    ASSERT_EQ(r.sent.size(), n + 1);
    EXPECT_EQ(r.sent.back().h.flags, tf::kRst);
    EXPECT_EQ(r.sent.back().h.seq, 0x70000009u);
    EXPECT_EQ(c.stats().bad_segments, 1u);
    c.on_segment(2, make_header(1000, 2000, 42, 0x70000001, tf::kAck), nullptr, 0);
    EXPECT_EQ(c.state(), state::established);
}

TEST(TcpHandshake, DataQueuedBeforeConnectIsSentOnceEstablished) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.conn_a().on_send_data(0, 5000);
    EXPECT_EQ(sim.conn_a().send_space(), 256u * 1024 - 5000);
    sim.a().tx_queued = sim.a().tx_total = 5000;
    sim.open();
    sim.run(1 * kSec, [&] { return sim.b().rx_bytes == 5000; });
    EXPECT_EQ(sim.b().rx_bytes, 5000u);
    sim.run_for(1 * kMs);
    EXPECT_EQ(sim.b().rx_mismatches, 0u);
    EXPECT_EQ(sim.conn_a().send_stream_acked(), 5000u);
    EXPECT_EQ(sim.a().acked_offset, 5000u);
}

TEST(TcpHandshake, CloseBeforeEstablished) {
    recorder r;
    tcp::connection c(Sim::config_a(), r);
    c.connect(0);
    c.close(1);
    EXPECT_EQ(c.state(), state::closed);
    EXPECT_EQ(c.next_deadline(), UINT64_MAX);
    tcp::connection l(Sim::config_b(), r);
    l.listen();
    l.close(1);
    EXPECT_EQ(l.state(), state::closed);
}

TEST(TcpHandshake, CloseInSynReceivedSendsFinAfterEstablishing) {
    Sim sim(Sim::config_a(), Sim::config_b());
    sim.open();
    sim.run(15 * kUs);  // SYN arrived at B, SYN-ACK in flight
    ASSERT_EQ(sim.conn_b().state(), state::syn_received);
    sim.conn_b().close(sim.now);
    EXPECT_EQ(sim.conn_b().state(), state::syn_received);
    sim.run(1 * kSec);
    EXPECT_EQ(sim.conn_b().state(), state::fin_wait_2);
    EXPECT_EQ(sim.conn_a().state(), state::close_wait);
}

}  // namespace
}  // namespace tcptest
