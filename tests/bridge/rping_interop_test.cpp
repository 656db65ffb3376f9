// rping between the platform (rnic-sim, workload.type = rping, peer.kind = socket) and Linux
// soft-iWARP's own `rping` in a QEMU guest (tools/siw-peer), both ways round, for the siw variants
// default (MPA revision 2, CRC off), crc (siw insists on CRC) and rev1 (MPA revision 1), plus the
// platform asking siw for markers (refused). Each run: 20 pings of 3000 bytes; the guest's rping
// validates its side (-V, -v prints each ping; init.sh counts them), the platform its own (the
// workload's result); both captures (the simulator's --pcap and QEMU's filter-dump at the guest's
// NIC) decode in tshark and pass rnic-pcap-check. Assertions are on data and protocol only; the
// times (connection set-up, round trip as each side sees them) are printed, not judged.
//
// The guest comes from tools/siw-peer (built by the siw_guest CTest fixture, cached under
// build/siw-peer); the tests are skipped, saying why, when QEMU or the guest are missing.
#include <gtest/gtest.h>
#include <glob.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "guest_support.h"

#ifndef RNIC_SOURCE_DIR
#error "RNIC_SOURCE_DIR must name the source tree"
#endif
#ifndef RNIC_SIM
#error "RNIC_SIM must name the rnic-sim binary"
#endif
#ifndef RNIC_PCAP_CHECK
#error "RNIC_PCAP_CHECK must name the rnic-pcap-check binary"
#endif

namespace rnic::test {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

constexpr int kCount = 20, kSize = 3000;

std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string shell(const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return out;
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    ::pclose(p);
    return out;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> v;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        if (!l.empty()) v.push_back(l);
    }
    return v;
}

// The guest, through run-guest.sh in its own process group (QEMU listens on `port`).
class guest_process {
public:
    guest_process(std::uint16_t port, const std::string& variant, const std::string& rping, const std::string& log,
                  const std::string& pcap, int wait_s) {
        const std::string script = std::string(RNIC_SOURCE_DIR) + "/tools/siw-peer/run-guest.sh";
        const std::string listen = "127.0.0.1:" + std::to_string(port);
        const std::string wait = std::to_string(wait_s), timeout = std::to_string(wait_s + 60);
        pid_ = ::fork();
        if (pid_ == 0) {
            ::setpgid(0, 0);
            ::execl(script.c_str(), script.c_str(), "--quiet", "--listen", listen.c_str(), "--ip", "10.0.0.2/24",
                    "--variant", variant.c_str(), "--rping", rping.c_str(), "--wait", wait.c_str(), "--timeout",
                    timeout.c_str(), "--log", log.c_str(), "--pcap", pcap.c_str(), static_cast<char*>(nullptr));
            std::_Exit(127);
        }
        if (pid_ > 0) ::setpgid(pid_, pid_);
    }
    ~guest_process() { stop(); }
    bool started() const { return pid_ > 0; }
    // run-guest.sh's exit status (0 PASS, 1 FAIL), or -1 when it did not end in time (then stopped).
    int wait_exit(std::chrono::seconds limit) {
        const auto deadline = clock_type::now() + limit;
        while (pid_ > 0 && clock_type::now() < deadline) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            }
            std::this_thread::sleep_for(100ms);
        }
        stop();
        return -1;
    }
    void stop() {
        if (pid_ <= 0) return;
        // run-guest.sh runs QEMU under `timeout`, which makes its own process group: stop that
        // group too (the script's children are found by their parent pid).
        for (const pid_t group : child_groups(pid_)) {
            if (group != pid_) ::kill(-group, SIGTERM);
        }
        ::kill(-pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

private:
    static std::vector<pid_t> child_groups(pid_t parent) {
        std::vector<pid_t> groups;
        glob_t g{};
        if (::glob("/proc/[0-9]*/stat", 0, nullptr, &g) == 0) {
            for (std::size_t i = 0; i < g.gl_pathc; ++i) {
                // /proc/PID/stat: pid (comm) state ppid pgrp ...; comm may hold spaces, so parse after ')'.
                const std::string stat = read_file(g.gl_pathv[i]);
                const std::size_t close = stat.rfind(')');
                if (close == std::string::npos) continue;
                std::istringstream in(stat.substr(close + 1));
                std::string state;
                long ppid = 0, pgrp = 0;
                if (in >> state >> ppid >> pgrp && ppid == parent) groups.push_back(static_cast<pid_t>(pgrp));
            }
        }
        ::globfree(&g);
        return groups;
    }
    pid_t pid_ = -1;
};

struct sim_result {
    int exit_code = -1;
    std::string output;
    boost::json::value results;
};

sim_result run_sim(std::uint16_t port, const std::vector<std::string>& sets, const std::string& pcap,
                   const std::string& results) {
    std::string cmd = "cd " + quote(RNIC_SOURCE_DIR) + " && " + quote(RNIC_SIM);
    std::vector<std::string> all = {"workload.type=rping", "peer.kind=socket", "peer.port=" + std::to_string(port),
                                    "peer.open_timeout=60s", "simulation.time_limit=120s", "rnic.mpa.timeout=10s",
                                    "workload.rping.timeout=60s", "workload.rping.count=" + std::to_string(kCount),
                                    "workload.rping.size=" + std::to_string(kSize),
                                    // siw 6.1 leaves an FPDU that arrives right after its MPA Reply unread
                                    // (siw_accept: Reply sent before the socket is the QP's): real rping's
                                    // first Send comes after a user-space wake-up; so does ours.
                                    "workload.rping.start_delay=20ms"};
    all.insert(all.end(), sets.begin(), sets.end());
    for (const std::string& s : all) cmd += " --set " + quote(s);
    cmd += " --log info,toe=warn,rdma=warn,mpa=warn --pcap " + quote(pcap) + " --results " + quote(results) + " 2>&1";
    sim_result r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
    const int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    boost::system::error_code ec;
    r.results = boost::json::parse(read_file(results), ec);
    return r;
}

std::string tshark(const std::string& pcap, const std::string& filter, const std::string& fields) {
    return shell("tshark -r " + quote(pcap) + " --disable-protocol rpcordma --disable-protocol smb_direct -Y " +
                 quote(filter) + " -T fields -E separator=/t -E occurrence=a " + fields + " 2>/dev/null");
}

// Excludes TCP's second copies: against a TCG guest both TCPs may retransmit (spuriously), and
// tshark decodes a retransmitted FPDU again in one capture but not in the other.
const std::string kFirstCopies =
    " && !tcp.analysis.retransmission && !tcp.analysis.fast_retransmission && !tcp.analysis.spurious_retransmission";

std::size_t count_fpdus(const std::string& pcap, const std::string& filter) {
    std::size_t n = 0;
    for (const std::string& l : lines_of(tshark(pcap, filter, "-e iwarp_rdma.opcode"))) {
        n += 1 + static_cast<std::size_t>(std::count(l.begin(), l.end(), ','));
    }
    return n;
}

// What a capture shows of the rping conversation: the MPA Request/Reply, the FPDUs by opcode, the
// CRC verdicts, and the times (seconds) of connection set-up (first SYN to MPA Reply) and of each
// ping's round trip (the client's first advertisement to the server's second go-ahead).
struct capture_view {
    std::string request, reply;  // "rev C M R pdlength"
    std::map<int, std::size_t> opcodes;
    std::size_t crc_bad = 0, crc_good = 0;
    double setup_s = 0, rtt_avg_s = 0, rtt_min_s = 0, rtt_max_s = 0;
    std::size_t pings = 0;
    std::string pcap_check;
};

capture_view view_of(const std::string& pcap, const std::string& client_ip) {
    capture_view v;
    const auto rr = [&](const char* f) {
        const auto l = lines_of(tshark(pcap, f,
                                       "-e iwarp_mpa.rev -e iwarp_mpa.crc_flag -e iwarp_mpa.marker_flag "
                                       "-e iwarp_mpa.rej_flag -e iwarp_mpa.pdlength"));
        return l.empty() ? std::string() : l[0];
    };
    v.request = rr("iwarp_mpa.key.req");
    v.reply = rr("iwarp_mpa.key.rep");
    for (int op : {0, 1, 2, 3}) {
        v.opcodes[op] = count_fpdus(pcap, "iwarp_rdma.opcode == " + std::to_string(op) + kFirstCopies);
    }
    // tshark's verdict on each FPDU's CRC32c appears only as text: "0x... (Good CRC32)" or
    // "0x... (Bad CRC32, should be 0x...)" (docs: ../shared/specs/wireshark-iwarp.md §3).
    const std::string verbose =
        shell("tshark -r " + quote(pcap) + " --disable-protocol rpcordma --disable-protocol smb_direct -V 2>/dev/null");
    for (std::size_t at = verbose.find("(Good CRC32)"); at != std::string::npos;
         at = verbose.find("(Good CRC32)", at + 1)) {
        ++v.crc_good;
    }
    for (std::size_t at = verbose.find("(Bad CRC32"); at != std::string::npos;
         at = verbose.find("(Bad CRC32", at + 1)) {
        ++v.crc_bad;
    }
    // Times: epoch seconds of the first SYN and of the MPA Reply; the Sends with their source.
    // (The connection that got the Reply: earlier attempts, while the guest booted, do not count.)
    const auto rep = lines_of(tshark(pcap, "iwarp_mpa.key.rep", "-e frame.time_epoch -e tcp.stream"));
    if (!rep.empty()) {
        const std::string stream = rep[0].substr(rep[0].find('\t') + 1);
        const auto syn = lines_of(
            tshark(pcap, "tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.stream == " + stream, "-e frame.time_epoch"));
        if (!syn.empty()) v.setup_s = std::stod(rep[0].substr(0, rep[0].find('\t'))) - std::stod(syn[0]);
    }
    std::vector<double> client_sends, server_sends;
    for (const std::string& l : lines_of(tshark(pcap, "iwarp_rdma.opcode == 3" + kFirstCopies,
                                                "-e frame.time_epoch -e ip.src -e iwarp_rdma.opcode"))) {
        std::istringstream in(l);
        std::string t, src, ops;
        std::getline(in, t, '\t');
        std::getline(in, src, '\t');
        std::getline(in, ops, '\t');
        const std::size_t sends = 1 + static_cast<std::size_t>(std::count(ops.begin(), ops.end(), ','));
        for (std::size_t i = 0; i < sends; ++i)
            (src == client_ip ? client_sends : server_sends).push_back(std::stod(t));
    }
    double sum = 0;
    for (std::size_t k = 0; 2 * k + 1 < server_sends.size() && 2 * k < client_sends.size(); ++k) {
        const double rtt = server_sends[2 * k + 1] - client_sends[2 * k];
        sum += rtt;
        v.rtt_min_s = v.pings == 0 ? rtt : std::min(v.rtt_min_s, rtt);
        v.rtt_max_s = std::max(v.rtt_max_s, rtt);
        ++v.pings;
    }
    if (v.pings != 0) v.rtt_avg_s = sum / static_cast<double>(v.pings);
    v.pcap_check = shell(quote(RNIC_PCAP_CHECK) + " --lenient " + quote(pcap) + " 2>&1; echo exit=$?");
    return v;
}

void print_view(const char* who, const capture_view& v) {
    std::printf("  %-38s set-up %.3f ms, %zu pings, round trip avg %.3f ms (min %.3f, max %.3f)\n", who,
                v.setup_s * 1e3, v.pings, v.rtt_avg_s * 1e3, v.rtt_min_s * 1e3, v.rtt_max_s * 1e3);
}

const boost::json::object* row_of(const boost::json::value& r, const std::string& op) {
    if (!r.is_object() || !r.as_object().contains("workload")) return nullptr;
    for (const auto& row : r.at("workload").at("rows").as_array()) {
        if (row.at("op").as_string() == op) return &row.as_object();
    }
    return nullptr;
}

struct interop_case {
    std::string variant;   // siw variant
    bool guest_is_client;  // the guest runs rping -c, the platform the server
    std::vector<std::string> sets;
};

class RpingInterop : public ::testing::Test {
protected:
    void SetUp() override {
        if (::access("/usr/bin/qemu-system-x86_64", X_OK) != 0) GTEST_SKIP() << "qemu-system-x86_64 not installed";
        if (std::system("command -v tshark >/dev/null 2>&1") != 0) GTEST_SKIP() << "tshark not installed";
        dir_ = siw_peer_dir();
        if (!exists_glob(dir_ + "/kernel-*/boot/vmlinuz-*")) {
            GTEST_SKIP() << "no guest kernel under " << dir_ << ": run tools/siw-peer/install-deps.sh";
        }
    }
    bool have_variant(const std::string& variant) { return exists_glob(dir_ + "/initramfs-*-" + variant + ".cpio.gz"); }
    // Captures, logs and results of this process's runs: a directory of their own (kept for a look
    // afterwards; the path is printed), not the shared guest cache.
    static const std::string& out_dir() {
        static const std::string dir = [] {
            char tmpl[] = "/tmp/rnic-rping-interop-XXXXXX";
            const char* d = ::mkdtemp(tmpl);
            return std::string(d != nullptr ? d : "/tmp");
        }();
        return dir;
    }
    std::string path(const std::string& what) {
        const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
        return out_dir() + "/" + t->name() + "-" + what;
    }

    struct outcome {
        int guest_exit = -1;
        std::string guest_log;
        sim_result sim;
        capture_view sim_view, guest_view;
    };

    // Boots the guest with `rping_args`, runs the platform's rping against it, returns both sides.
    // `await_guest`: wait for the guest's verdict (else stop it once the platform is done).
    outcome run(const interop_case& c, const std::string& rping_args, int guest_wait_s = 45, bool await_guest = true) {
        outcome o;
        const std::uint16_t port = free_port();
        const std::string log = path("guest.log"), gpcap = path("guest.pcap"), spcap = path("sim.pcap"),
                          results = path("results.json");
        std::printf("  files: %s-*\n", path("").substr(0, path("").size() - 1).c_str());
        std::remove(gpcap.c_str());
        guest_process guest(port, c.variant, rping_args, log, gpcap, guest_wait_s);
        EXPECT_TRUE(guest.started());
        // The bridge connects to QEMU at once, while the guest boots (frames sent before its NIC is
        // up are lost, like on a real wire). Connecting only once the guest is up was seen to leave
        // QEMU's socket netdev unread for seconds (the guest's capture shows our ARP requests
        // arriving in one burst when the bridge closed). The platform's client therefore tries again
        // until the guest's rping -s listens (a closed port answers RST, an unbooted guest nothing).
        std::vector<std::string> sets = c.sets;
        if (!c.guest_is_client) {
            sets.insert(sets.begin(), {"workload.rping.connect_attempts=60", "rnic.mpa.timeout=3s"});
        }
        sets.push_back(std::string("workload.rping.role=") + (c.guest_is_client ? "server" : "client"));
        o.sim = run_sim(port, sets, spcap, results);
        // Without a bridge connection the guest has no peer: do not wait for its rping limit.
        o.guest_exit =
            guest.wait_exit(o.sim.results.is_object() && await_guest ? std::chrono::seconds(guest_wait_s + 30) : 1s);
        o.guest_log = read_file(log);
        const std::string client_ip = c.guest_is_client ? "10.0.0.2" : "10.0.0.1";
        o.sim_view = view_of(spcap, client_ip);
        o.guest_view = view_of(gpcap, client_ip);
        return o;
    }

    // Both sides validated all pings; the wire is what rping exchanges.
    // `rtr_reads`: zero-length Read Requests the platform sent as its RTR (RFC 6581 §9.2).
    void expect_pass(const interop_case& c, const outcome& o, bool crc, unsigned rtr_reads = 0) {
        const std::string ctx = "\n--- guest log:\n" + o.guest_log + "\n--- simulator:\n" + o.sim.output;
        EXPECT_EQ(o.guest_exit, 0) << ctx;
        EXPECT_NE(o.guest_log.find("SIW-PEER: PASS"), std::string::npos) << ctx;
        EXPECT_NE(o.guest_log.find("SIW-PEER: rping validated lines: " + std::to_string(kCount) + " of " +
                                   std::to_string(kCount)),
                  std::string::npos)
            << ctx;
        // The guest printed rping's pattern for the last ping (client: "ping data", server: "server ping data").
        EXPECT_NE(o.guest_log.find("ping data: rdma-ping-19: TUVWXYZ"), std::string::npos) << ctx;
        EXPECT_EQ(o.sim.exit_code, 0) << ctx;
        const char* op = c.guest_is_client ? "rping server" : "rping client";
        const boost::json::object* row = row_of(o.sim.results, op);
        ASSERT_NE(row, nullptr) << ctx;
        EXPECT_EQ(row->at("iterations").to_number<std::uint64_t>(), static_cast<std::uint64_t>(kCount));
        EXPECT_TRUE(row->at("integrity_ok").as_bool());
        EXPECT_EQ(o.sim.results.at("integrity").at("bytes_checked").to_number<std::uint64_t>(),
                  static_cast<std::uint64_t>(kCount) * kSize);
        EXPECT_EQ(o.sim.results.at("integrity").at("bytes_mismatched").to_number<std::uint64_t>(), 0u);
        for (const capture_view* v : {&o.sim_view, &o.guest_view}) {
            const std::string which = v == &o.sim_view ? "simulator capture" : "guest capture";
            EXPECT_EQ(v->opcodes.at(3), 4u * kCount) << which;              // Sends: 2 advertisements + 2 go-aheads
            EXPECT_EQ(v->opcodes.at(1), 1u * kCount + rtr_reads) << which;  // RDMA Read Requests
            EXPECT_GE(v->opcodes.at(2), 1u * kCount) << which;              // Read Responses (3000 bytes each)
            EXPECT_GE(v->opcodes.at(0), 1u * kCount) << which;              // RDMA Writes of the echo
            EXPECT_EQ(v->pings, static_cast<std::size_t>(kCount)) << which;
            EXPECT_EQ(v->reply.substr(v->reply.find('\t') + 1, std::string::npos).substr(0, 1), crc ? "1" : "0")
                << which << ": Reply " << v->reply;
            if (crc) {
                EXPECT_GT(v->crc_good, 4u * kCount) << which;
                EXPECT_EQ(v->crc_bad, 0u) << which;
            }
            EXPECT_NE(v->pcap_check.find("exit=0"), std::string::npos) << which << ": " << v->pcap_check;
            EXPECT_NE(v->pcap_check.find(", 0 bad CRC"), std::string::npos) << which << ": " << v->pcap_check;
        }
        const auto& wl = o.sim.results.at("workload");
        std::printf("  siw %s, %s: platform connect %.3f ms, round trip avg %.3f ms (p50 %.3f, max %.3f)\n",
                    c.variant.c_str(),
                    c.guest_is_client ? "guest rping -c -> platform server" : "platform client -> guest rping -s",
                    wl.at("connect_latency_ns").to_number<double>() / 1e6,
                    row->at("latency_ns").at("avg").to_number<double>() / 1e6,
                    row->at("latency_ns").at("p50").to_number<double>() / 1e6,
                    row->at("latency_ns").at("max").to_number<double>() / 1e6);
        print_view("simulator capture (simulated time):", o.sim_view);
        print_view("guest capture (QEMU host clock):", o.guest_view);
        const std::size_t at = o.guest_log.find("SIW-PEER: rping ran");
        if (at != std::string::npos)
            std::printf("  guest: %s\n", o.guest_log.substr(at, o.guest_log.find('\n', at) - at).c_str());
    }

    std::string dir_;
};

const std::string kServerArgs =
    "-s -a 0.0.0.0 -p 7174 -C " + std::to_string(kCount) + " -S " + std::to_string(kSize) + " -v -V";
const std::string kClientArgs =
    "-c -a 10.0.0.1 -p 7174 -C " + std::to_string(kCount) + " -S " + std::to_string(kSize) + " -v -V";

// siw's defaults: MPA revision 2 with the IRD/ORD word, CRC off; the platform asks for neither CRC
// nor markers, so both sides run without CRC.
TEST_F(RpingInterop, PlatformClientAgainstSiwServerRev2NoCrc) {
    if (!have_variant("default")) GTEST_SKIP() << "no default guest: tools/siw-peer/mkinitramfs.sh default";
    const interop_case c{"default", false, {"rnic.mpa.revision=2", "rnic.mpa.crc=false"}};
    const outcome o = run(c, kServerArgs);
    expect_pass(c, o, false);
    // Revision 2 both ways, 4 bytes of private data (the IRD/ORD word only).
    EXPECT_EQ(o.sim_view.request, "2\t0\t0\t0\t4");
    EXPECT_EQ(o.sim_view.reply, "2\t0\t0\t0\t4");
}

TEST_F(RpingInterop, SiwClientAgainstPlatformServerRev2NoCrc) {
    if (!have_variant("default")) GTEST_SKIP() << "no default guest: tools/siw-peer/mkinitramfs.sh default";
    const interop_case c{"default", true, {"rnic.mpa.revision=2", "rnic.mpa.crc=false"}};
    const outcome o = run(c, kClientArgs);
    expect_pass(c, o, false);
    EXPECT_EQ(o.sim_view.request, "2\t0\t0\t0\t4");
    EXPECT_EQ(o.sim_view.reply, "2\t0\t0\t0\t4");
}

// RFC 6581 §9.2 against a real implementation: the platform asks siw's rping server for the
// peer-to-peer model. siw as responder grants the zero-length Write RTR when it is offered, else the
// Read; it then waits for that RTR before it lets its QP send (siw_rtr_data_ready), so a wrong RTR
// shows as a failed rping. siw never uses the peer-to-peer model as an initiator (compile-time off).
TEST_F(RpingInterop, PlatformPeerToPeerClientSendsSiwAZeroLengthWriteRtr) {
    if (!have_variant("default")) GTEST_SKIP() << "no default guest: tools/siw-peer/mkinitramfs.sh default";
    const interop_case c{"default", false, {"rnic.mpa.revision=2", "rnic.mpa.crc=false", "rnic.mpa.peer_to_peer=true"}};
    const outcome o = run(c, kServerArgs);
    expect_pass(c, o, false);
    ASSERT_TRUE(o.sim.results.is_object()) << o.sim.output;
    const auto& rdma = o.sim.results.at("modules").at("a.rnic").at("rdma");
    EXPECT_EQ(rdma.at("rtrs_sent").to_number<std::uint64_t>(), 1u);
    // The Reply granted the Write RTR: the word's ORD half carries C (0x8000) and not D.
    const std::string rtr_write =
        tshark(path("sim.pcap"), "ip.src == 10.0.0.2 && iwarp_mpa.pdlength", "-e iwarp_mpa.privatedata");
    ASSERT_EQ(rtr_write.size(), 9u) << rtr_write;         // 8 hex digits and a newline
    EXPECT_EQ(rtr_write.substr(0, 1), "8") << rtr_write;  // A
    EXPECT_EQ(rtr_write.substr(4, 1), "8") << rtr_write;  // C only
    // The platform's first FPDU is that zero-length RDMA Write, STag 1.
    const std::string first = tshark(path("sim.pcap"), "ip.src == 10.0.0.1 && iwarp_rdma.opcode",
                                     "-e iwarp_rdma.opcode -e iwarp_ddp.stag -e iwarp_mpa.ulpdulength");
    EXPECT_EQ(first.substr(0, first.find('\n')), "0x00\t0x00000001\t14") << first;
}

TEST_F(RpingInterop, PlatformPeerToPeerClientSendsSiwAZeroLengthReadRtr) {
    if (!have_variant("default")) GTEST_SKIP() << "no default guest: tools/siw-peer/mkinitramfs.sh default";
    const interop_case c{
        "default",
        false,
        {"rnic.mpa.revision=2", "rnic.mpa.crc=false", "rnic.mpa.peer_to_peer=true", "rnic.mpa.rtr=read"}};
    const outcome o = run(c, kServerArgs);
    expect_pass(c, o, false, 1);
    ASSERT_TRUE(o.sim.results.is_object()) << o.sim.output;
    EXPECT_EQ(o.sim.results.at("modules").at("a.rnic").at("rdma").at("rtrs_sent").to_number<std::uint64_t>(), 1u);
    // siw answered the zero-length Read with a zero-length Read Response before anything else.
    const std::string resp = tshark(path("sim.pcap"), "ip.src == 10.0.0.2 && iwarp_rdma.opcode",
                                    "-e iwarp_rdma.opcode -e iwarp_mpa.ulpdulength");
    EXPECT_EQ(resp.substr(0, resp.find('\n')), "0x02\t14") << resp;
}

// CRC on. siw's crc variant (mpa_crc_required) sets C in its Request and refuses a Reply without
// it, but as a responder it only mirrors the Request's C (siw_proc_mpareq), so the platform's
// client asks for the CRC here; tshark checks every FPDU's CRC32c.
TEST_F(RpingInterop, PlatformClientAgainstSiwServerWithCrc) {
    if (!have_variant("crc")) GTEST_SKIP() << "no crc guest: tools/siw-peer/mkinitramfs.sh crc";
    const interop_case c{"crc", false, {"rnic.mpa.revision=2", "rnic.mpa.crc=true"}};
    const outcome o = run(c, kServerArgs);
    expect_pass(c, o, true);
}

// The platform's server does not ask for the CRC, siw's client does: the CRC is used (RFC 5044
// §7.1.2: if either side asks), so the platform's rnic.mpa.crc = false is negotiable.
TEST_F(RpingInterop, SiwClientAgainstPlatformServerWithCrc) {
    if (!have_variant("crc")) GTEST_SKIP() << "no crc guest: tools/siw-peer/mkinitramfs.sh crc";
    const interop_case c{"crc", true, {"rnic.mpa.revision=2", "rnic.mpa.crc=false"}};
    const outcome o = run(c, kClientArgs);
    expect_pass(c, o, true);
}

// MPA revision 1 carries no IRD/ORD word. The siw client then keeps the IRD rping asked for (1),
// so the platform's server (ORD 1, used as given) can RDMA Read from it: this works.
TEST_F(RpingInterop, SiwClientAgainstPlatformServerRev1) {
    if (!have_variant("rev1")) GTEST_SKIP() << "no rev1 guest: tools/siw-peer/mkinitramfs.sh rev1";
    const interop_case c{"rev1", true, {"rnic.mpa.revision=1", "rnic.mpa.crc=true"}};
    const outcome o = run(c, kClientArgs);
    expect_pass(c, o, true);
    // siw's Request: revision 1, C = 0 (siw's default); the platform asks for the CRC in its Reply.
    EXPECT_EQ(o.sim_view.request, "1\t0\t0\t0\t0");
    EXPECT_EQ(o.sim_view.reply, "1\t1\t0\t0\t0");
}

// ... but a siw server under revision 1 cannot: siw's listener learns IRD = ORD = 0 from a
// Request without the RFC 6581 word (siw_proc_mpareq sets cep->ird/ord only from that word, and
// the CONNECT_REQUEST event hands them to rdma_cm), rping's server accepts with rdma_accept(id,
// NULL), which keeps those values, so its QP gets ORD 0 (siw_accept: orq_size = ord), and siw
// refuses to post an RDMA Read on a QP with no ORQ (siw_qp.c: "We negotiated not to send READ
// req's", -EINVAL). rping prints "post send error" at its first Read. That is siw's/rping's
// limitation, not the platform's: the test shows exactly that and nothing else.
TEST_F(RpingInterop, PlatformClientAgainstSiwServerRev1FailsAtSiwsFirstRdmaRead) {
    if (!have_variant("rev1")) GTEST_SKIP() << "no rev1 guest: tools/siw-peer/mkinitramfs.sh rev1";
    const interop_case c{"rev1", false, {"rnic.mpa.revision=1", "rnic.mpa.crc=true", "workload.rping.timeout=10s"}};
    const outcome o = run(c, kServerArgs);
    const std::string ctx = "\n--- guest log:\n" + o.guest_log + "\n--- simulator:\n" + o.sim.output;
    // The connection itself is fine: revision 1 both ways, CRC on, accepted.
    EXPECT_EQ(o.sim_view.request, "1\t1\t0\t0\t0") << ctx;
    EXPECT_EQ(o.sim_view.reply, "1\t1\t0\t0\t0") << ctx;
    // The client's first advertisement reached siw, and siw never sent a Read Request.
    EXPECT_GE(o.sim_view.opcodes.at(3), 1u) << ctx;
    EXPECT_EQ(o.sim_view.opcodes.at(1), 0u) << ctx;
    EXPECT_EQ(o.sim_view.opcodes.at(2), 0u) << ctx;
    // rping's own words, and its failure.
    EXPECT_NE(o.guest_log.find("post send error"), std::string::npos) << ctx;
    EXPECT_NE(o.guest_log.find("SIW-PEER: FAIL"), std::string::npos) << ctx;
    EXPECT_NE(o.guest_exit, 0) << ctx;
    // The platform reports it as the server leaving during the first ping; no data was judged wrong.
    EXPECT_EQ(o.sim.exit_code, 1) << ctx;
    const std::string error = o.sim.results.at("workload").at("error").as_string().c_str();
    EXPECT_NE(error.find("the server disconnected at ping 0"), std::string::npos) << error;
    EXPECT_EQ(o.sim.results.at("integrity").at("bytes_mismatched").to_number<std::uint64_t>(), 0u);
    EXPECT_NE(o.sim_view.pcap_check.find("exit=0"), std::string::npos) << o.sim_view.pcap_check;
}

// The platform asks for markers; siw does not do markers and rejects the Request (siw_proc_mpareq:
// "MPA Markers: currently not supported", a Reply with R = 1 and M = 0). The platform's connect
// returns connection_refused with a log line naming the reason, closes the TCP connection (our FIN
// follows siw's Reply) and leaves nothing open.
TEST_F(RpingInterop, PlatformAskingSiwForMarkersIsRefusedCleanly) {
    if (!have_variant("default")) GTEST_SKIP() << "no default guest: tools/siw-peer/mkinitramfs.sh default";
    const interop_case c{
        "default",
        false,
        {"rnic.mpa.revision=2", "rnic.mpa.crc=false", "rnic.mpa.markers=true", "workload.rping.count=1",
         // attempts while the guest boots go unanswered; once it is up each one is refused
         "workload.rping.connect_attempts=6"}};
    const outcome o = run(c, kServerArgs, 30, false);
    const std::string ctx = "\n--- guest log:\n" + o.guest_log + "\n--- simulator:\n" + o.sim.output;
    EXPECT_EQ(o.sim.exit_code, 1) << ctx;
    const std::string error = o.sim.results.at("workload").at("error").as_string().c_str();
    EXPECT_NE(error.find("failed: connection refused"), std::string::npos) << error;
    // The firmware names the refusal (and the private data the Reply carried), then closes TCP.
    EXPECT_NE(o.sim.output.find("the peer rejected the connection (MPA Reply with R = 1; it refuses the markers we "
                                "asked for (M = 1 sent, M = 0 back), 0 bytes of private data); closing the TCP "
                                "connection"),
              std::string::npos)
        << ctx;
    EXPECT_NE(o.sim.output.find("after the failed connect the QP is"), std::string::npos) << ctx;
    EXPECT_EQ(o.sim_view.request, "2\t0\t1\t0\t4") << ctx;                                     // M = 1 asked
    EXPECT_EQ(o.sim_view.reply.substr(0, o.sim_view.reply.rfind('\t')), "2\t0\t0\t1") << ctx;  // R = 1
    // No FPDU ever; the platform sent its FIN after the Reply (the TCP connection is closed, not
    // left half-open), and nothing was reset.
    for (int op : {0, 1, 2, 3}) EXPECT_EQ(o.sim_view.opcodes.at(op), 0u) << op;
    const auto fins = lines_of(tshark(path("sim.pcap"), "tcp.flags.fin == 1", "-e ip.src"));
    EXPECT_NE(std::find(fins.begin(), fins.end(), "10.0.0.1"), fins.end()) << ctx;
    const auto rep_time = lines_of(tshark(path("sim.pcap"), "iwarp_mpa.key.rep", "-e frame.time_epoch"));
    const auto fin_time =
        lines_of(tshark(path("sim.pcap"), "tcp.flags.fin == 1 && ip.src == 10.0.0.1", "-e frame.time_epoch"));
    ASSERT_FALSE(rep_time.empty());
    ASSERT_FALSE(fin_time.empty());
    EXPECT_GE(std::stod(fin_time[0]), std::stod(rep_time[0]));
    // Linux acknowledged our FIN: both directions are closed.
    const auto fin_seq =
        lines_of(tshark(path("sim.pcap"), "tcp.flags.fin == 1 && ip.src == 10.0.0.1", "-e tcp.seq_raw"));
    ASSERT_FALSE(fin_seq.empty());
    const auto acks = lines_of(
        tshark(path("sim.pcap"), "ip.src == 10.0.0.2 && tcp.ack_raw == " + std::to_string(std::stoull(fin_seq[0]) + 1),
               "-e frame.number"));
    EXPECT_FALSE(acks.empty()) << "no ACK of the platform's FIN";
    for (const std::string& l : lines_of(o.sim.output)) {
        if (l.find("rejected") != std::string::npos || l.find("QP is") != std::string::npos ||
            l.find("connect:") != std::string::npos) {
            std::printf("  %s\n", l.c_str());
        }
    }
    // The guest's rping never saw a connection (it waits for one until its limit).
    EXPECT_EQ(o.guest_log.find("ping data"), std::string::npos) << ctx;
}

}  // namespace
}  // namespace rnic::test
