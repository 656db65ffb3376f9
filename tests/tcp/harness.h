// Deterministic test harness for proto::tcp::Connection: two endpoints joined by a simulated network
// (one-way delay, optional serialisation rate, seeded loss / duplication / reordering, and a hook
// for targeted drops), driven by a discrete-event loop over a priority queue of (time, action).
// Send streams are generated from a per-endpoint byte pattern, so every delivered byte is checked.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "proto/tcp/connection.h"

namespace tcptest {

namespace net = rnic::proto::net;
namespace tcp = rnic::proto::tcp;
namespace tf = rnic::proto::net::tcp_flags;
using tcp::state;

constexpr std::uint64_t kUs = 1'000;
constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kSec = 1'000'000'000;

// Byte `i` of the send stream with pattern `salt`.
inline std::uint8_t pattern_byte(std::uint64_t salt, std::uint64_t i) {
    std::uint64_t x = i * 0x9E3779B97F4A7C15ULL + salt * 0xD1B54A32D192ED03ULL;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 32;
    return static_cast<std::uint8_t>(x);
}

inline bool has(const net::tcp_header& h, std::uint8_t flag) {
    return (h.flags & flag) != 0;
}

struct sent_segment {
    std::uint64_t time = 0;
    net::tcp_header h;
    std::uint64_t stream_offset = 0;
    std::size_t len = 0;
    bool retransmission = false;  // payload below the highest offset sent before
    bool dropped = false;         // by the network
    std::uint32_t cwnd = 0;       // connection state right when it was sent
    std::uint64_t send_window = 0;
    std::uint64_t acked = 0;  // send_stream_acked() at that moment
    std::uint64_t rto = 0;
};

struct net_config {
    std::uint64_t delay_ns = 10 * kUs;  // one way
    std::uint64_t rate_bps = 0;         // 0: no serialisation delay
    double loss = 0.0;
    double duplicate = 0.0;
    double reorder = 0.0;  // probability that a packet is held back by reorder_extra_ns
    std::uint64_t reorder_extra_ns = 25 * kUs;
};

class Sim;

class endpoint : public tcp::env {
public:
    Sim* sim = nullptr;
    int id = 0;
    std::unique_ptr<tcp::connection> conn;
    std::uint64_t salt = 0;       // pattern of our send stream
    std::uint64_t peer_salt = 0;  // pattern of the stream we receive

    // Application behaviour, applied by Sim::pump after every event.
    std::uint64_t tx_total = 0;  // bytes the application writes in all
    std::uint64_t tx_queued = 0;
    std::size_t chunk = 64 * 1024;
    std::function<std::size_t()> next_fpdu;  // set: write whole FPDUs and mark their ends
    bool close_when_sent = false;            // close() once everything is queued (and established)
    bool close_on_peer_fin = false;          // close() in CLOSE-WAIT once everything is queued
    bool close_called = false;
    bool consume = true;  // Config::owner_consumes: consume delivered bytes at once
    std::uint64_t unconsumed = 0;
    std::size_t pending_fpdu = 0;

    // Observations.
    std::uint64_t rx_bytes = 0;
    std::uint64_t rx_mismatches = 0;
    std::uint64_t acked_offset = 0;
    bool acked_monotonic = true;
    std::vector<std::pair<state, state>> transitions;
    std::vector<std::uint64_t> transition_times;
    std::vector<sent_segment> sent;
    std::uint64_t max_sent_end = 0;
    std::function<void(const sent_segment&)> on_transmit;  // extra per-test checks

    tcp::connection& c() { return *conn; }

    void transmit(const net::tcp_header& header, std::uint64_t stream_offset, std::size_t len) override;
    void deliver(const std::uint8_t* data, std::size_t len) override {
        for (std::size_t k = 0; k < len; ++k) {
            if (data[k] != pattern_byte(peer_salt, rx_bytes + k)) ++rx_mismatches;
        }
        rx_bytes += len;
        unconsumed += len;
    }
    void acked(std::uint64_t off) override {
        if (off <= acked_offset) acked_monotonic = false;
        acked_offset = off;
    }
    void state_changed(state from, state to) override;

    std::size_t count_sent(const std::function<bool(const sent_segment&)>& pred) const {
        std::size_t n = 0;
        for (const sent_segment& s : sent) n += pred(s) ? 1 : 0;
        return n;
    }
    std::size_t data_segments() const {
        return count_sent([](const sent_segment& s) { return s.len > 0; });
    }
};

class Sim {
public:
    Sim(const tcp::config& a, const tcp::config& b, const net_config& net_cfg = {}, std::uint64_t seed = 1)
        : net(net_cfg), rng(seed) {
        const tcp::config* cfgs[2] = {&a, &b};
        for (int i = 0; i < 2; ++i) {
            ep[i].sim = this;
            ep[i].id = i;
            ep[i].salt = 100 + static_cast<std::uint64_t>(i);
            ep[i].peer_salt = 100 + static_cast<std::uint64_t>(1 - i);
            ep[i].conn = std::make_unique<tcp::connection>(*cfgs[i], ep[i]);
        }
    }

    // Default pair: A (port 1000, active) and B (port 2000, passive).
    static tcp::config config_a() {
        tcp::config c;
        c.local_port = 1000;
        c.remote_port = 2000;
        c.iss = 0x1000;
        return c;
    }
    static tcp::config config_b() {
        tcp::config c;
        c.local_port = 2000;
        c.remote_port = 0;
        c.iss = 0x70000000;
        return c;
    }

    endpoint ep[2];
    endpoint& a() { return ep[0]; }
    endpoint& b() { return ep[1]; }
    tcp::connection& conn_a() { return *ep[0].conn; }
    tcp::connection& conn_b() { return *ep[1].conn; }

    net_config net;
    std::mt19937_64 rng;
    std::uint64_t now = 0;
    std::uint64_t events = 0;
    // Targeted loss: return true to drop. Called for every packet before random loss.
    std::function<bool(int from, const sent_segment&)> drop;
    std::uint64_t packets_dropped = 0;

    void schedule(std::uint64_t t, std::function<void()> fn) { queue_.push(event{t, seq_++, std::move(fn)}); }

    // B listens, A connects now.
    void open() {
        conn_b().listen();
        conn_a().connect(now);
        pump();
    }

    // Called by Endpoint::transmit.
    void send(int from, sent_segment& seg) {
        if (drop && drop(from, seg)) {
            seg.dropped = true;
            ++packets_dropped;
            return;
        }
        if (net.loss > 0 && uni_(rng) < net.loss) {
            seg.dropped = true;
            ++packets_dropped;
            return;
        }
        std::uint64_t depart = now;
        if (net.rate_bps > 0) {
            const std::uint64_t bits = (seg.len + 54 + 24) * 8;  // headers, preamble, FCS, IFG
            const std::uint64_t ser = bits * kSec / net.rate_bps;
            link_free_[from] = std::max(link_free_[from], now) + ser;
            depart = link_free_[from];
        }
        std::uint64_t arrive = depart + net.delay_ns;
        if (net.reorder > 0 && uni_(rng) < net.reorder) arrive += net.reorder_extra_ns;
        auto pkt = std::make_shared<packet>();
        pkt->h = seg.h;
        pkt->payload.resize(seg.len);
        for (std::size_t k = 0; k < seg.len; ++k) pkt->payload[k] = pattern_byte(ep[from].salt, seg.stream_offset + k);
        const int to = 1 - from;
        schedule(arrive, [this, to, pkt] { deliver(to, *pkt); });
        if (net.duplicate > 0 && uni_(rng) < net.duplicate) {
            schedule(arrive + net.delay_ns / 2 + 1, [this, to, pkt] { deliver(to, *pkt); });
        }
    }

    // Injects a segment into endpoint `to` right now (as if it had arrived).
    void inject(int to, const net::tcp_header& h, const std::vector<std::uint8_t>& payload = {}) {
        ep[to].conn->on_segment(now, h, payload.empty() ? nullptr : payload.data(), payload.size());
        pump();
    }

    // Processes one event (packet arrival, timer or scheduled action) at or before t_end.
    bool step(std::uint64_t t_end) {
        const std::uint64_t tq = queue_.empty() ? UINT64_MAX : queue_.top().time;
        const std::uint64_t ta = conn_a().next_deadline();
        const std::uint64_t tb = conn_b().next_deadline();
        const std::uint64_t t = std::min({tq, ta, tb});
        if (t == UINT64_MAX || t > t_end) return false;
        now = std::max(now, t);
        ++events;
        if (tq == t) {
            event ev = queue_.top();
            queue_.pop();
            ev.fn();
        } else if (ta == t) {
            conn_a().on_timer(now);
        } else {
            conn_b().on_timer(now);
        }
        pump();
        return true;
    }

    // Runs until nothing is left to do, t_end passes, or done() holds. Returns done().
    bool run(std::uint64_t t_end, const std::function<bool()>& done = {}) {
        while (!(done && done())) {
            if (events > kMaxEvents) {
                ADD_FAILURE() << "event limit reached at t=" << now;
                return false;
            }
            if (!step(t_end)) break;
        }
        if (now < t_end && t_end != UINT64_MAX && !(done && done())) now = t_end;
        return done ? done() : true;
    }
    bool run_for(std::uint64_t dt, const std::function<bool()>& done = {}) { return run(now + dt, done); }

    bool both(state s) { return conn_a().state() == s && conn_b().state() == s; }

    // Application step for both endpoints.
    void pump() {
        for (endpoint& e : ep) pump(e);
    }

private:
    struct packet {
        net::tcp_header h;
        std::vector<std::uint8_t> payload;
    };
    struct event {
        std::uint64_t time;
        std::uint64_t seq;
        std::function<void()> fn;
        bool operator>(const event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
    };
    static constexpr std::uint64_t kMaxEvents = 20'000'000;

    void deliver(int to, const packet& p) {
        ep[to].conn->on_segment(now, p.h, p.payload.empty() ? nullptr : p.payload.data(), p.payload.size());
    }

    void pump(endpoint& e) {
        tcp::connection& c = *e.conn;
        if (c.config().owner_consumes && e.consume && e.unconsumed > 0) {
            const std::uint64_t n = e.unconsumed;
            e.unconsumed = 0;
            c.receive_consumed(now, static_cast<std::size_t>(n));
        }
        if (c.state() == state::closed && e.close_called) return;
        c.set_cork(now, true);  // append the whole batch, then let the connection segment it
        while (e.tx_queued < e.tx_total) {
            const std::size_t space = c.send_space();
            const std::uint64_t remaining = e.tx_total - e.tx_queued;
            std::uint64_t n;
            if (e.next_fpdu) {
                if (e.pending_fpdu == 0) e.pending_fpdu = e.next_fpdu();
                n = std::min<std::uint64_t>(e.pending_fpdu, remaining);
                if (space < n) break;
                e.pending_fpdu = 0;
            } else {
                n = std::min<std::uint64_t>({space, e.chunk, remaining});
                if (n == 0) break;
            }
            c.on_send_data(now, static_cast<std::size_t>(n));
            e.tx_queued += n;
            if (e.next_fpdu) c.mark_boundary(e.tx_queued);
        }
        c.set_cork(now, false);
        if (!e.close_called && e.tx_queued == e.tx_total) {
            const bool go =
                (e.close_when_sent && (c.state() == state::established || c.state() == state::close_wait)) ||
                (e.close_on_peer_fin && c.state() == state::close_wait);
            if (go) {
                e.close_called = true;
                c.close(now);
            }
        }
    }

    std::priority_queue<event, std::vector<event>, std::greater<event>> queue_;
    std::uint64_t seq_ = 0;
    std::uint64_t link_free_[2] = {0, 0};
    std::uniform_real_distribution<double> uni_{0.0, 1.0};
};

inline void endpoint::transmit(const net::tcp_header& header, std::uint64_t stream_offset, std::size_t len) {
    sent_segment s;
    s.time = sim->now;
    s.h = header;
    s.stream_offset = stream_offset;
    s.len = len;
    s.retransmission = len > 0 && stream_offset < max_sent_end;
    if (len > 0) max_sent_end = std::max<std::uint64_t>(max_sent_end, stream_offset + len);
    s.cwnd = conn->cwnd();
    s.send_window = conn->send_window();
    s.acked = conn->send_stream_acked();
    s.rto = conn->rto();
    sim->send(id, s);
    if (on_transmit) on_transmit(s);
    sent.push_back(std::move(s));
}

inline void endpoint::state_changed(state from, state to) {
    transitions.emplace_back(from, to);
    transition_times.push_back(sim->now);
}

// A single Connection driven directly by a test: records what it sends and receives.
class recorder : public tcp::env {
public:
    struct tx {
        net::tcp_header h;
        std::uint64_t stream_offset;
        std::size_t len;
    };
    std::vector<tx> sent;
    std::vector<std::uint8_t> received;
    std::vector<std::pair<state, state>> transitions;
    std::uint64_t acked_offset = 0;

    void transmit(const net::tcp_header& header, std::uint64_t stream_offset, std::size_t len) override {
        sent.push_back(tx{header, stream_offset, len});
    }
    void deliver(const std::uint8_t* data, std::size_t len) override {
        received.insert(received.end(), data, data + len);
    }
    void acked(std::uint64_t off) override { acked_offset = off; }
    void state_changed(state from, state to) override { transitions.emplace_back(from, to); }
};

inline net::tcp_header make_header(std::uint16_t src, std::uint16_t dst, std::uint32_t seq, std::uint32_t ack,
                                   std::uint8_t flags, std::uint16_t window = 65535) {
    net::tcp_header h;
    h.src_port = src;
    h.dst_port = dst;
    h.seq = seq;
    h.ack = ack;
    h.flags = flags;
    h.window = window;
    return h;
}

// Drives `c` (configured like Sim::config_a) through an active open against a scripted peer
// (ISS 5000, MSS 1460, WS 7; SYN-ACK at t_synack), then gives it the peer window `window` (scaled
// by 2^7: the SYN-ACK's own window is never scaled) with a bare ACK at t_synack + 1.
inline void establish(tcp::connection& c, recorder& r, std::uint16_t window = 65535, std::uint64_t t_synack = 10) {
    c.connect(0);
    net::tcp_header synack = make_header(2000, 1000, 5000, c.iss() + 1, tf::kSyn | tf::kAck, 65535);
    synack.mss = 1460;
    synack.window_scale = 7;
    c.on_segment(t_synack, synack, nullptr, 0);
    ASSERT_EQ(c.state(), state::established);
    c.on_segment(t_synack + 1, make_header(2000, 1000, 5001, c.iss() + 1, tf::kAck, window), nullptr, 0);
    ASSERT_EQ(c.send_window(), std::uint64_t{window} << 7);
    r.sent.clear();
}

// Wire sequence number at which endpoint `e`'s next new byte / FIN would go (no FIN sent yet).
inline std::uint32_t next_send_seq(tcp::connection& c) {
    return c.iss() + 1 + static_cast<std::uint32_t>(c.send_stream_sent());
}
// Wire value of RCV.NXT at `c` (no FIN received yet).
inline std::uint32_t rcv_nxt(tcp::connection& c) {
    return c.irs() + 1 + static_cast<std::uint32_t>(c.receive_stream_delivered());
}

}  // namespace tcptest
