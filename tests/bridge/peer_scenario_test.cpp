// rnic-sim with peer.kind = "socket": host b is whatever is behind the socket, here a peer written in
// the test. Host a's RNIC answers the peer's ARP request across the simulated link and the bridge;
// bad input from the peer ends the bridge with a clear error, never a crash.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "proto/bytes.h"
#include "proto/net.h"
#include "proto/pcap.h"

#ifndef RNIC_SOURCE_DIR
#error "RNIC_SOURCE_DIR must name the source tree"
#endif
#ifndef RNIC_SIM
#error "RNIC_SIM must name the rnic-sim binary"
#endif

namespace rnic::test {
namespace {

namespace net = proto::net;
using bytes = std::vector<std::uint8_t>;

const net::mac_address kPeerMac{0x52, 0x54, 0, 0, 0, 0x02};
const net::mac_address kHostAMac{0x02, 0, 0, 0, 0, 0x0a};  // hosts.0.mac by default

// Listens on an ephemeral loopback port; runs `script` on the one connection it accepts.
class peer_thread {
public:
    explicit peer_thread(std::function<void(int)> script) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        const bool listening = ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd_, 1) == 0 &&
                               ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0;
        EXPECT_TRUE(listening) << "the scripted peer could not listen on a loopback port";
        port_ = listening ? ntohs(a.sin_port) : 0;
        thread_ = std::thread([this, script = std::move(script)] {
            timeval tv{20, 0};
            const int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            script(c);
            ::close(c);
        });
    }
    ~peer_thread() {
        if (thread_.joinable()) thread_.join();
        ::close(fd_);
    }
    std::uint16_t port() const { return port_; }

private:
    int fd_ = -1;
    std::uint16_t port_ = 0;
    std::thread thread_;
};

bool write_frame(int fd, const bytes& f, std::uint32_t len) {
    bytes out(4 + f.size());
    proto::put_be32(out.data(), len);
    std::copy(f.begin(), f.end(), out.begin() + 4);
    return ::send(fd, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size());
}
bool read_exact(int fd, std::uint8_t* p, std::size_t n) {
    while (n > 0) {
        const ssize_t r = ::recv(fd, p, n, 0);
        if (r <= 0) return false;
        p += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}
bool read_frame(int fd, bytes& f) {
    std::uint8_t len[4];
    if (!read_exact(fd, len, 4)) return false;
    f.resize(proto::get_be32(len));
    return read_exact(fd, f.data(), f.size());
}

struct sim_run {
    int status = -1;
    std::string output;
    boost::json::object results;
};

sim_run run_sim(std::uint16_t port, const std::string& tag) {
    const std::string base = "/tmp/rnic-peer-scenario-" + std::to_string(::getpid()) + "-" + tag;
    const std::string cmd = std::string(RNIC_SIM) + " --scenario " RNIC_SOURCE_DIR "/platform/scenarios/default.json" +
                            " --set peer.kind=socket --set peer.port=" + std::to_string(port) +
                            " --set workload.type=rping --set workload.rping.role=server" +
                            " --set simulation.time_limit=50ms --results " + base + ".json --pcap " + base +
                            ".pcap 2>&1";
    sim_run r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p) != nullptr) r.output += buf;
    r.status = ::pclose(p);
    std::ifstream in(base + ".json");
    std::stringstream ss;
    ss << in.rdbuf();
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(ss.str(), ec);
    if (!ec && v.is_object()) r.results = v.as_object();
    std::remove((base + ".json").c_str());
    std::remove((base + ".pcap").c_str());
    return r;
}

TEST(PeerScenario, HostAAnswersARealPeersArpAcrossTheLinkAndBridge) {
    bytes reply;
    std::uint64_t requests = 0;
    const bytes request = net::build_arp_request(kPeerMac, 0x0a000002, 0x0a000001);  // who has 10.0.0.1?
    peer_thread peer([&](int fd) {
        // Like a real peer, ask again while nobody answers: a request that crosses the default 2 m
        // link before host a's driver has programmed the station address is (rightly) not answered.
        // rnic-sim paces simulated time to wall-clock time, so 5 ms of wall time is plenty for a reply.
        bytes f;
        for (int attempt = 0; attempt < 200 && reply.empty(); ++attempt) {
            ASSERT_TRUE(write_frame(fd, request, static_cast<std::uint32_t>(request.size())));
            ++requests;
            pollfd pfd{fd, POLLIN, 0};
            while (reply.empty() && ::poll(&pfd, 1, 5) > 0) {
                if (!read_frame(fd, f)) return;
                if (net::frame_ethertype(f.data(), f.size()) == net::kEtherTypeArp) reply = f;
            }
        }
        // Closing now: the bridge reports it and the run goes on to its time limit.
    });
    const sim_run r = run_sim(peer.port(), "arp");
    ASSERT_TRUE(WIFEXITED(r.status)) << r.output;
    EXPECT_EQ(WEXITSTATUS(r.status), 1) << r.output;  // no rping client ever came: incomplete
    const auto req = net::parse_arp_frame(request.data(), request.size(), nullptr);
    ASSERT_TRUE(req);
    EXPECT_EQ(reply, net::build_arp_reply(req->arp, kHostAMac));
    ASSERT_FALSE(r.results.empty()) << r.output;
    const boost::json::object& modules = r.results.at("modules").as_object();
    const boost::json::object& bridge = modules.at("peer").as_object();
    EXPECT_EQ(bridge.at("frames_from_socket").to_number<std::uint64_t>(), requests);
    EXPECT_GE(bridge.at("frames_to_socket").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(bridge.at("error").as_string(), "the peer closed the connection");
    const boost::json::object& arp = modules.at("a.rnic").at("toe").at("arp").as_object();
    EXPECT_EQ(arp.at("requests_received").to_number<std::uint64_t>(), requests);
    EXPECT_GE(arp.at("replies_sent").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(arp.at("learned").to_number<std::uint64_t>(), 1u);
    EXPECT_NE(r.output.find("peer: the peer closed the connection"), std::string::npos) << r.output;
}

TEST(PeerScenario, GarbageFromThePeerIsReportedNotACrash) {
    peer_thread peer([&](int fd) {
        write_frame(fd, bytes(3, 0xab), 3);            // too short for Ethernet
        write_frame(fd, bytes(8, 0xcd), 0xfffffff0u);  // a length no QEMU sends
        std::uint8_t b;
        ::recv(fd, &b, 1, 0);  // until the bridge hangs up
    });
    const sim_run r = run_sim(peer.port(), "garbage");
    ASSERT_TRUE(WIFEXITED(r.status)) << r.output;
    EXPECT_EQ(WEXITSTATUS(r.status), 1) << r.output;
    EXPECT_NE(r.output.find("dropped a 3-byte frame from the socket"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("bad frame length 4294967280"), std::string::npos) << r.output;
    ASSERT_FALSE(r.results.empty()) << r.output;
    const boost::json::object& bridge = r.results.at("modules").at("peer").as_object();
    EXPECT_EQ(bridge.at("short_frames_from_socket").to_number<std::uint64_t>(), 1u);
    EXPECT_FALSE(bridge.at("connected").as_bool());
}

}  // namespace
}  // namespace rnic::test
