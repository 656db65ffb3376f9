// The socket bridge against a peer written here (a thread with a plain TCP socket speaking QEMU's
// -netdev socket format): frames both ways byte for byte, frames split across reads, bad lengths, a
// peer that closes mid-frame, listen mode, a refused connection, and real-time pacing.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <limits>
#include <thread>

#include "core/stream.h"
#include "link/socket_bridge.h"
#include "proto/bytes.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

using namespace std::chrono_literals;
using bytes = std::vector<std::uint8_t>;

// Blocking helpers for the peer side.
bool write_all(int fd, const std::uint8_t* p, std::size_t n) {
    while (n > 0) {
        const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}
bool read_all(int fd, std::uint8_t* p, std::size_t n) {
    while (n > 0) {
        const ssize_t r = ::recv(fd, p, n, 0);
        if (r <= 0) return false;
        p += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}
bytes prefixed(const bytes& frame, std::uint32_t len) {
    bytes out(4 + frame.size());
    proto::put_be32(out.data(), len);
    std::copy(frame.begin(), frame.end(), out.begin() + 4);
    return out;
}
bytes prefixed(const bytes& frame) {
    return prefixed(frame, static_cast<std::uint32_t>(frame.size()));
}
bool read_frame(int fd, bytes& frame) {
    std::uint8_t len[4];
    if (!read_all(fd, len, 4)) return false;
    frame.resize(proto::get_be32(len));
    return read_all(fd, frame.data(), frame.size());
}
bytes pattern(std::size_t len, std::uint8_t seed) {
    bytes f(len);
    for (std::size_t i = 0; i < len; ++i) f[i] = static_cast<std::uint8_t>(seed + i * 7);
    return f;
}

// A peer that listens on an ephemeral loopback port and runs `script` on the accepted connection.
class socket_peer {
public:
    explicit socket_peer(std::function<void(int)> script) {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        EXPECT_EQ(::listen(listen_fd_, 1), 0);
        socklen_t len = sizeof a;
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this, script = std::move(script)] {
            const int fd = ::accept(listen_fd_, nullptr, nullptr);
            if (fd < 0) return;
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            script(fd);
            ::close(fd);
        });
    }
    ~socket_peer() {
        join();
        ::close(listen_fd_);
    }
    void join() {
        if (thread_.joinable()) thread_.join();
    }
    std::uint16_t port() const { return port_; }

private:
    int listen_fd_ = -1;
    std::uint16_t port_ = 0;
    std::thread thread_;
};

struct bridge_bench {
    socket_bridge bridge;
    tb_initiator sim_side;  // plays the simulated link's output toward the bridge
    tb_sink link_in;        // receives what the bridge injects
    explicit bridge_bench(const socket_bridge_params& p)
        : bridge("bridge", p), sim_side("sim_side"), link_in("link_in") {
        sim_side.out.bind(bridge.eth_rx);
        bridge.eth_tx.bind(link_in.in);
    }
    void send(const bytes& f) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        send_frame_bytes(sim_side.out, f.data(), f.size(), d);
    }
    // Runs the simulation in 1 ms steps until `done` or `limit` of wall time.
    void run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = 5000ms) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (!done() && std::chrono::steady_clock::now() < end)
            sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
    }
    std::uint64_t stat(const char* key) {
        boost::json::object o;
        bridge.report_stats(o);
        return o[key].to_number<std::uint64_t>();
    }
};

socket_bridge_params params_for(std::uint16_t port) {
    socket_bridge_params p;
    p.address = "127.0.0.1";
    p.port = port;
    p.open_timeout = 2000ms;
    return p;
}

TEST(SocketBridge, FramesRoundTripThroughAPeerByteForByte) {
    const std::vector<bytes> frames = {pattern(60, 1), pattern(1514, 2), pattern(200, 3)};
    std::vector<bytes> peer_got;
    socket_peer peer([&](int fd) {
        // Echo each frame; the long one comes back in two writes 5 ms apart (a partial frame
        // must wait in the bridge for its rest).
        for (std::size_t i = 0; i < frames.size(); ++i) {
            bytes f;
            if (!read_frame(fd, f)) return;
            peer_got.push_back(f);
            const bytes out = prefixed(f);
            if (f.size() > 1000) {
                write_all(fd, out.data(), 700);
                std::this_thread::sleep_for(5ms);
                write_all(fd, out.data() + 700, out.size() - 700);
            } else {
                write_all(fd, out.data(), out.size());
            }
        }
        std::uint8_t b;
        ::recv(fd, &b, 1, 0);  // hold the connection until the bridge goes away
    });
    bridge_bench b(params_for(peer.port()));
    std::string error;
    ASSERT_TRUE(b.bridge.open(&error)) << error;
    for (const bytes& f : frames) b.send(f);
    b.run_until([&] { return b.link_in.items.size() >= frames.size(); });

    ASSERT_EQ(b.link_in.items.size(), frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(b.link_in.items[i].data, frames[i]) << "frame " << i;
    // Injected frames arrive at the simulated time of a poll, in order.
    EXPECT_LE(b.link_in.items[0].at, b.link_in.items[1].at);
    EXPECT_LE(b.link_in.items[1].at, b.link_in.items[2].at);
    EXPECT_EQ(b.stat("frames_to_socket"), 3u);
    EXPECT_EQ(b.stat("bytes_to_socket"), 60u + 1514u + 200u);
    EXPECT_EQ(b.stat("frames_from_socket"), 3u);
    EXPECT_TRUE(b.bridge.connection_error().empty()) << b.bridge.connection_error();
    b.bridge.close();
    peer.join();
    // Frames the simulation sent reached the peer unchanged, each with its own length prefix.
    ASSERT_EQ(peer_got.size(), frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(peer_got[i], frames[i]) << "frame " << i;
}

TEST(SocketBridge, BadLengthsAreReportedAndNeverCrash) {
    const bytes good = pattern(100, 9);
    socket_peer peer([&](int fd) {
        bytes s = prefixed(pattern(5, 1));             // shorter than an Ethernet header
        const bytes big = prefixed(pattern(2000, 2));  // longer than MTU 1500 + 14
        const bytes ok = prefixed(good);
        s.insert(s.end(), big.begin(), big.end());
        s.insert(s.end(), ok.begin(), ok.end());
        const bytes absurd = {0x7f, 0xff, 0xff, 0xff, 1, 2, 3};  // no QEMU sends 2 GiB frames
        s.insert(s.end(), absurd.begin(), absurd.end());
        write_all(fd, s.data(), s.size());
        std::uint8_t b;
        ::recv(fd, &b, 1, 0);  // returns when the bridge closes the connection
    });
    bridge_bench b(params_for(peer.port()));
    std::string error;
    ASSERT_TRUE(b.bridge.open(&error)) << error;
    // The bridge closes the connection and stops by itself: sc_start returns when nothing is left.
    sc_core::sc_start();
    peer.join();

    ASSERT_EQ(b.link_in.items.size(), 1u);  // only the good frame got in, whole
    EXPECT_EQ(b.link_in.items[0].data, good);
    EXPECT_EQ(b.stat("short_frames_from_socket"), 1u);
    EXPECT_EQ(b.stat("oversize_frames_from_socket"), 1u);
    EXPECT_EQ(b.stat("frames_from_socket"), 1u);
    EXPECT_FALSE(b.bridge.connected());
    EXPECT_FALSE(b.bridge.active());
    EXPECT_NE(b.bridge.connection_error().find("bad frame length 2147483647"), std::string::npos)
        << b.bridge.connection_error();
    // What the simulation sends now is dropped and counted, not written anywhere.
    b.send(pattern(64, 4));
    EXPECT_EQ(b.stat("drops_not_connected"), 1u);
    EXPECT_EQ(b.stat("frames_to_socket"), 0u);
}

TEST(SocketBridge, PeerClosingInTheMiddleOfAFrameIsReported) {
    socket_peer peer([&](int fd) {
        const bytes f = prefixed(pattern(300, 5));
        write_all(fd, f.data(), 100);  // the length and 96 bytes of the frame, then gone
    });
    bridge_bench b(params_for(peer.port()));
    std::string error;
    ASSERT_TRUE(b.bridge.open(&error)) << error;
    sc_core::sc_start();
    EXPECT_TRUE(b.link_in.items.empty());
    EXPECT_FALSE(b.bridge.connected());
    EXPECT_NE(b.bridge.connection_error().find("closed the connection in the middle of a frame (100 bytes"),
              std::string::npos)
        << b.bridge.connection_error();
}

TEST(SocketBridge, ListenModeAcceptsAPeerThatConnects) {
    // Find a free port, then let the bridge listen on it while a peer thread connects.
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(probe);
    const bytes from_peer = pattern(90, 11), from_sim = pattern(80, 12);
    bytes peer_got;
    std::thread peer([&] {
        int fd = -1;
        for (int i = 0; i < 100 && fd < 0; ++i) {
            fd = ::socket(AF_INET, SOCK_STREAM, 0);
            if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
                ::close(fd);
                fd = -1;
                std::this_thread::sleep_for(20ms);
            }
        }
        if (fd < 0) return;
        const bytes out = prefixed(from_peer);
        write_all(fd, out.data(), out.size());
        read_frame(fd, peer_got);
        ::close(fd);
    });
    socket_bridge_params p = params_for(ntohs(a.sin_port));
    p.listen = true;
    bridge_bench b(p);
    std::string error;
    ASSERT_TRUE(b.bridge.open(&error)) << error;
    b.send(from_sim);
    sc_core::sc_start();  // ends when the peer has closed
    peer.join();
    ASSERT_EQ(b.link_in.items.size(), 1u);
    EXPECT_EQ(b.link_in.items[0].data, from_peer);
    EXPECT_EQ(peer_got, from_sim);
    EXPECT_EQ(b.bridge.connection_error(), "the peer closed the connection");
}

TEST(SocketBridge, RefusedConnectionIsAClearError) {
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(probe);  // nobody listens there now
    socket_bridge_params p = params_for(ntohs(a.sin_port));
    p.open_timeout = 200ms;
    bridge_bench b(p);
    std::string error;
    EXPECT_FALSE(b.bridge.open(&error));
    EXPECT_NE(error.find("bridge: connect to 127.0.0.1:" + std::to_string(ntohs(a.sin_port))), std::string::npos)
        << error;
    EXPECT_NE(error.find("Connection refused"), std::string::npos) << error;
    // Started anyway, the bridge stays inactive and the simulation does not hang.
    sc_core::sc_start();
    EXPECT_FALSE(b.bridge.active());
}

// Samples simulated time against wall-clock time at odd intervals, independently of the bridge.
struct lead_observer : sc_core::sc_module {
    const socket_bridge& bridge;
    sc_core::sc_time step;
    std::int64_t max_lead_ns = std::numeric_limits<std::int64_t>::min();
    std::uint64_t samples = 0;
    lead_observer(const sc_core::sc_module_name& n, const socket_bridge& b, sc_core::sc_time s)
        : sc_module(n), bridge(b), step(s) {
        SC_HAS_PROCESS(lead_observer);
        SC_THREAD(observe_thread);
    }
    void observe_thread() {
        for (;;) {
            const auto wall = std::chrono::steady_clock::now() - bridge.wall_epoch();
            const std::int64_t sim_ns = static_cast<std::int64_t>((sc_core::sc_time_stamp() - bridge.sim_epoch()) /
                                                                  sc_core::sc_time(1, sc_core::SC_NS));
            const std::int64_t lead = sim_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count();
            max_lead_ns = std::max(max_lead_ns, lead);
            ++samples;
            wait(step);
        }
    }
};

TEST(SocketBridge, RealTimePacingKeepsSimulatedTimeWithinTheSlack) {
    socket_peer peer([&](int fd) {
        std::uint8_t b;
        ::recv(fd, &b, 1, 0);
    });
    socket_bridge_params p = params_for(peer.port());
    p.realtime_slack = sc_core::sc_time(2, sc_core::SC_MS);
    p.poll_interval = sc_core::sc_time(50, sc_core::SC_US);
    bridge_bench b(p);
    lead_observer obs("obs", b.bridge, sc_core::sc_time(37, sc_core::SC_US));
    std::string error;
    ASSERT_TRUE(b.bridge.open(&error)) << error;
    const auto start = std::chrono::steady_clock::now();
    sc_core::sc_start(sc_core::sc_time(60, sc_core::SC_MS));
    const auto wall = std::chrono::steady_clock::now() - start;
    b.bridge.close();
    peer.join();
    // Deterministic bounds (not a speed check): simulated time was never more than the slack
    // ahead of wall-clock time, so 60 ms of simulated time took at least 58 ms of wall time.
    EXPECT_GT(obs.samples, 1000u);
    EXPECT_LE(obs.max_lead_ns, 2'000'000) << "simulated time ran " << obs.max_lead_ns << " ns ahead";
    EXPECT_LE(b.bridge.max_lead(), p.realtime_slack);
    EXPECT_GE(std::chrono::duration_cast<std::chrono::microseconds>(wall).count(), 58'000);
}

TEST(SocketBridge, WithoutRealTimeTheSimulationIsNotPaced) {
    socket_peer peer([&](int fd) {
        std::uint8_t b;
        ::recv(fd, &b, 1, 0);
    });
    socket_bridge_params p = params_for(peer.port());
    p.realtime = false;
    p.poll_interval = sc_core::sc_time(100, sc_core::SC_US);
    bridge_bench b(p);
    std::string error;
    ASSERT_TRUE(b.bridge.open(&error)) << error;
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
    // Polling still ran at every interval: 0, 0.1 ms, ... (10 ms itself may or may not be in).
    EXPECT_GE(b.stat("polls"), 100u);
    EXPECT_LE(b.stat("polls"), 101u);
    EXPECT_EQ(b.bridge.max_lead(), sc_core::SC_ZERO_TIME);  // pace() never ran
    b.bridge.close();
}

}  // namespace
}  // namespace rnic::test
