// The TCP engine, through the socket bridge, against a real Linux soft-iWARP guest (tools/siw-peer)
// running `rping -s`: our ARP request is answered by Linux, the TCP handshake completes with Linux's
// TCP, and siw answers our MPA Request (revision 1, CRC, as the default scenario asks) with a valid
// MPA Reply that accepts CRC. Skipped (with the reason) when QEMU or the guest's kernel/initramfs
// have not been built: `tools/siw-peer/mkinitramfs.sh default` builds them.
#include <gtest/gtest.h>
#include <glob.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "buffer/buffer_memory.h"
#include "core/stream.h"
#include "engine_stubs.h"
#include "framing/framing_factory.h"
#include "guest_support.h"
#include "link/socket_bridge.h"
#include "proto/mpa.h"
#include "proto/net.h"
#include "tb_support.h"
#include "toe/tcp_engine.h"

#ifndef RNIC_SOURCE_DIR
#error "RNIC_SOURCE_DIR must name the source tree"
#endif

namespace rnic::test {
namespace {

namespace net = proto::net;
using namespace std::chrono_literals;

const net::mac_address kNicMac{0x02, 0, 0, 0, 0, 0x0a};
constexpr std::uint32_t kNicIp = 0x0a000001, kGuestIp = 0x0a000002;
constexpr std::uint16_t kRpingPort = 7174;

// The guest, started through run-guest.sh in its own process group; stopped (that group only) at the end.
class guest_process {
public:
    guest_process(std::uint16_t port, const std::string& log) {
        const std::string script = std::string(RNIC_SOURCE_DIR) + "/tools/siw-peer/run-guest.sh";
        const std::string listen = "127.0.0.1:" + std::to_string(port);
        pid_ = ::fork();
        if (pid_ == 0) {
            ::setpgid(0, 0);
            ::execl(script.c_str(), script.c_str(), "--quiet", "--listen", listen.c_str(), "--ip", "10.0.0.2/24",
                    "--rping", "-s -a 0.0.0.0 -p 7174 -v -C 1", "--wait", "60", "--timeout", "120", "--log",
                    log.c_str(), static_cast<char*>(nullptr));
            std::_Exit(127);
        }
        if (pid_ > 0) ::setpgid(pid_, pid_);
    }
    ~guest_process() {
        if (pid_ <= 0) return;
        // The guest powers off by itself once rping ends; give it a moment, then stop what is left.
        for (int i = 0; i < 100; ++i) {
            if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
            std::this_thread::sleep_for(100ms);
        }
        ::kill(-pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
    }
    bool started() const { return pid_ > 0; }

private:
    pid_t pid_ = -1;
};

struct interop_bench : sc_core::sc_module {
    std::unique_ptr<framing> frames;  // the device's framing (MPA, TLM datapath)
    buffer_memory buffer;
    tcp_engine toe;
    socket_bridge bridge;
    tb_initiator framer;
    tb_sink rx_out, dma;
    engine_stubs stubs;
    int conn = -1;
    bool established = false;

    interop_bench(const sc_core::sc_module_name& n, const socket_bridge_params& bp)
        : sc_module(n),
          frames(make_framing(framing_params{})),
          buffer("buffer", buffer_memory_params{}),
          toe("toe", tcp_engine_params{}, buffer, *frames),
          bridge("bridge", bp),
          framer("framer"),
          rx_out("rx_out"),
          dma("dma"),
          stubs("stubs") {
        toe.set_station({kNicMac, kNicIp});
        toe.buf_out.bind(buffer.mem_in);
        toe.dma_out.bind(dma.in);
        toe.stream_rx_out.bind(rx_out.in);
        framer.out.bind(toe.stream_tx_in);
        toe.eth_tx.bind(bridge.eth_rx);
        bridge.eth_tx.bind(toe.eth_rx);
        toe.conn_events_out.bind(stubs);
        toe.tx_progress_out.bind(stubs);
        toe.ooo_out.bind(stubs);
        SC_HAS_PROCESS(interop_bench);
        SC_THREAD(connect_thread);
    }
    // Connects to rping's port, again and again until the guest's rping listens (its RST or silence
    // ends an attempt), then sends an MPA Request as raw stream bytes.
    void connect_thread() {
        for (std::uint16_t local = 40000; local < 40040 && !established; ++local) {
            tcp_open_params p;
            p.remote_ip = kGuestIp;
            p.remote_port = kRpingPort;
            p.local_port = local;
            conn = toe.tcp_connect(p);
            if (conn < 0) return;
            const std::size_t seen = stubs.events.size();
            wait(sc_core::sc_time(2, sc_core::SC_SEC), stubs.event);  // an event, or 2 s of silence
            established = stubs.events.size() > seen && stubs.events[seen] == toe_event::established;
            if (!established) {
                toe.tcp_close(static_cast<std::uint32_t>(conn));
                wait(sc_core::sc_time(300, sc_core::SC_MS));
            }
        }
        if (!established) return;
        proto::mpa::request_reply req;
        req.request = true;
        req.revision = 1;
        req.crc = true;
        const std::vector<std::uint8_t> bytes = proto::mpa::encode(req);
        stream_ext ext;
        ext.conn = static_cast<std::uint32_t>(conn);
        ext.kind = stream_kind::raw;
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        send_stream(framer.out, ext, bytes.data(), bytes.size(), d);
    }
    std::vector<std::uint8_t> received() const {
        std::vector<std::uint8_t> all;
        for (const auto& it : rx_out.items) all.insert(all.end(), it.data.begin(), it.data.end());
        return all;
    }
    std::uint64_t arp_stat(const char* key) {
        boost::json::object o;
        toe.report_stats(o);
        return o["arp"].as_object()[key].to_number<std::uint64_t>();
    }
};

TEST(SiwInterop, ArpTcpAndMpaNegotiationWithLinuxSoftIwarp) {
    if (::access("/usr/bin/qemu-system-x86_64", X_OK) != 0) GTEST_SKIP() << "qemu-system-x86_64 not installed";
    const std::string dir = siw_peer_dir();
    if (!exists_glob(dir + "/initramfs-*-default.cpio.gz") || !exists_glob(dir + "/kernel-*/boot/vmlinuz-*")) {
        GTEST_SKIP() << "no siw guest under " << dir << ": run tools/siw-peer/mkinitramfs.sh default";
    }
    const std::uint16_t port = free_port();
    const std::string log = dir + "/interop-test-" + std::to_string(::getpid()) + ".log";
    guest_process guest(port, log);
    ASSERT_TRUE(guest.started());

    socket_bridge_params bp;
    bp.port = port;
    bp.open_timeout = 60s;  // QEMU listens once run-guest.sh has checked its inputs
    bp.realtime_slack = sc_core::sc_time(1, sc_core::SC_MS);
    interop_bench b("b", bp);
    std::string error;
    ASSERT_TRUE(b.bridge.open(&error)) << error;

    std::optional<proto::mpa::request_reply> reply;
    const auto deadline = std::chrono::steady_clock::now() + 90s;
    while (std::chrono::steady_clock::now() < deadline && !reply) {
        sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_MS));
        const std::vector<std::uint8_t> got = b.received();
        if (proto::mpa::request_reply_length(got.data(), got.size()) != 0 &&
            got.size() >= proto::mpa::request_reply_length(got.data(), got.size())) {
            proto::mpa::decode_options opt;
            opt.ignore_reserved_bits = true;  // siw may set its GSO bit
            reply = proto::mpa::decode(got.data(), got.size(), &error, opt);
            ASSERT_TRUE(reply) << "siw's reply does not decode: " << error;
        }
        ASSERT_TRUE(b.bridge.connection_error().empty()) << b.bridge.connection_error() << " (guest log " << log << ")";
    }
    EXPECT_TRUE(b.established) << "no TCP connection to the guest's rping (guest log " << log << ")";
    ASSERT_TRUE(reply) << "no MPA Reply from siw within 90 s (guest log " << log << ")";
    // Linux answered our ARP request (we learnt its MAC from the reply, not from a static entry).
    EXPECT_GE(b.arp_stat("requests_sent"), 1u);
    EXPECT_GE(b.arp_stat("replies_received"), 1u);
    EXPECT_EQ(b.arp_stat("learned"), 1u);
    // siw accepts a revision 1 Request with CRC: a Reply, revision 1, CRC on, no markers, no reject.
    EXPECT_FALSE(reply->request);
    EXPECT_FALSE(reply->reject);
    EXPECT_EQ(reply->revision, 1);
    EXPECT_TRUE(reply->crc);
    EXPECT_FALSE(reply->marker);
    b.toe.tcp_close(static_cast<std::uint32_t>(b.conn));
    sc_core::sc_start(sc_core::sc_time(50, sc_core::SC_MS));
    b.bridge.close();
}

}  // namespace
}  // namespace rnic::test
