// rnic-sim with host_bus.transport = "qemu", driven by the test playing QEMU's x-pci-proxy-dev over a
// socketpair (no QEMU needed): configuration space and BAR accesses answered by the real device
// model through host a's PCIe model, guest RAM from a memfd, the run ending when "QEMU" closes; and
// the scenario refusals, each naming its key.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "qemu/mpqemu.h"
#include "rnic/regmap.h"
#include "test_util.h"

#ifndef RNIC_SIM
#error "RNIC_SIM must name the rnic-sim binary"
#endif

namespace rnic::test {
namespace {

namespace mp = qemu::mpqemu;

struct run_result {
    int status = -1;
    std::string output;
};

// Runs rnic-sim from the source tree with `args`; `close_fd` (the test's end of the socketpair) is
// closed in the child, so that rnic-sim sees the end of the stream when the test closes it.
pid_t spawn(const std::vector<std::string>& args, int close_fd, int out_fd) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (close_fd >= 0) ::close(close_fd);
        if (::chdir(RNIC_SOURCE_DIR) != 0) ::_exit(127);
        ::dup2(out_fd, 1);
        ::dup2(out_fd, 2);
        std::vector<char*> argv;
        std::string sim = RNIC_SIM;
        argv.push_back(sim.data());
        std::vector<std::string> copy = args;
        for (std::string& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(RNIC_SIM, argv.data());
        ::_exit(127);
    }
    return pid;
}

run_result run_sim(const std::vector<std::string>& args) {
    const std::string out = ::testing::TempDir() + "qemu-scenario-" + std::to_string(::getpid()) + ".out";
    const int fd = ::open(out.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    const pid_t pid = spawn(args, -1, fd);
    ::close(fd);
    run_result r;
    int st = 0;
    ::waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    r.output = ss.str();
    return r;
}

void expect_refused(const std::vector<std::string>& sets, const std::string& message) {
    std::vector<std::string> args;
    for (const std::string& s : sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    const run_result r = run_sim(args);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << "expected \"" << message << "\" in:\n" << r.output;
}

TEST(QemuScenario, SettingsThatMakeNoSenseAreRefusedNamingTheKey) {
    expect_refused({"host_bus.transport=qemu", "workload.type=rping"},
                   "qemu.fd: host_bus.transport \"qemu\" needs exactly one of");
    expect_refused({"host_bus.transport=qemu", "qemu.fd=3", "qemu.listen=/tmp/x", "workload.type=rping"},
                   "needs exactly one of");
    expect_refused({"qemu.fd=3"}, "qemu.fd: only used with host_bus.transport \"qemu\"");
    expect_refused({"qemu.listen=/tmp/x"}, "qemu.listen: only used with");
    expect_refused({"host_bus.transport=qemu", "qemu.fd=3"}, "workload.type: with host_bus.transport \"qemu\"");
    expect_refused({"host_bus.transport=qemu", "qemu.fd=3", "workload.type=write_bw"},
                   "workload.rping.role is the guest's");
    expect_refused({"host_bus.transport=qemu", "qemu.fd=3", "workload.type=rping", "host_bus.kind=pcix"},
                   "host_bus.kind must be \"pcie\"");
    expect_refused({"host_bus.transport=qemu", "qemu.fd=3", "workload.type=rping", "topology.kind=star",
                    "topology.hosts=4", "topology.switch_ports=4"},
                   "replaces host a of a back_to_back topology only");
    expect_refused({"host_bus.transport=bogus"}, "host_bus.transport");
    expect_refused({"workload.type=perf_server"},
                   "workload.type: \"perf_server\" serves a client outside the simulation");
    // Valid settings, but the descriptor is not an open socket: refused before simulation.
    expect_refused({"host_bus.transport=qemu", "qemu.fd=250", "workload.type=rping"},
                   "qemu.fd: descriptor 250 is not open");
    // The guest as the rping server (host b runs the client) passes the checks as well.
    expect_refused({"host_bus.transport=qemu", "qemu.fd=250", "workload.type=rping", "workload.rping.role=server"},
                   "qemu.fd: descriptor 250 is not open");
}

// Sends one message as QEMU does and returns the ret value (or nothing for messages without reply).
std::uint64_t exchange(int sock, const std::vector<std::uint8_t>& bytes, bool reply, const std::vector<int>& fds = {}) {
    EXPECT_TRUE(send_with_fds(sock, bytes, fds));
    if (!reply) return 0;
    pollfd p{sock, POLLIN, 0};
    EXPECT_GT(::poll(&p, 1, 10000), 0) << "no reply within 10 s";
    const auto r = read_exact(sock, 24);
    if (r.size() != 24) return ~0ULL;
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | r[16 + i];
    return v;
}

TEST(QemuScenario, ScriptedProxyReachesTheModelledDevice) {
    socket_pair sp;
    ASSERT_GE(sp.qemu, 0);
    const std::string results = ::testing::TempDir() + "qemu-scripted-" + std::to_string(::getpid()) + ".json";
    const std::string out = ::testing::TempDir() + "qemu-scripted-" + std::to_string(::getpid()) + ".out";
    const int ofd = ::open(out.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    const pid_t pid =
        spawn({"--set", "host_bus.transport=qemu", "--set", "qemu.fd=" + std::to_string(sp.remote), "--set",
               "workload.type=rping", "--set", "simulation.time_limit=60s", "--results", results, "--log", "info"},
              sp.qemu, ofd);
    ::close(ofd);
    ::close(sp.remote);
    sp.remote = -1;
    const int q = sp.qemu;
    constexpr std::uint32_t kBase = 0xfe000000;
    // What QEMU's proxy and the guest's PCI core do first.
    EXPECT_EQ(exchange(q, mp::encode_config(mp::cmd::pci_cfgread, {0, 0, 4}), true), 0x00011a4eu);
    EXPECT_EQ(exchange(q, mp::encode_config(mp::cmd::pci_cfgwrite, {0x10, 0xffffffff, 4}), true), 0u);
    EXPECT_EQ(exchange(q, mp::encode_config(mp::cmd::pci_cfgread, {0x10, 0, 4}), true), ~(regmap::kBar0Size - 1));
    exchange(q, mp::encode_config(mp::cmd::pci_cfgwrite, {0x10, kBase, 4}), true);
    exchange(q, mp::encode_config(mp::cmd::pci_cfgwrite, {0x04, 0x6, 2}), true);
    const int ram = make_memfd(16 << 20);
    ASSERT_GE(ram, 0);
    exchange(q, mp::encode_sync_sysmem({{0, 16 << 20, 0, -1}}), false, {ram});
    // The device model's registers through host a's PCIe model.
    EXPECT_EQ(exchange(q, mp::encode_bar(mp::cmd::bar_read, {kBase + regmap::ID, 0, 4, true}), true), 0x1a4e0001u);
    EXPECT_EQ(exchange(q, mp::encode_bar(mp::cmd::bar_read, {kBase + regmap::VERSION, 0, 4, true}), true), 0x00010000u);
    exchange(q, mp::encode_bar(mp::cmd::bar_write, {kBase + regmap::CMDQ_BASE_LO, 0x123440, 4, true}), true);
    EXPECT_EQ(exchange(q, mp::encode_bar(mp::cmd::bar_read, {kBase + regmap::CMDQ_BASE_LO, 0, 8, true}), true),
              0x123440u)
        << "a 64-bit read: CMDQ_BASE_LO and _HI";
    EXPECT_EQ(exchange(q, mp::encode_bar(mp::cmd::bar_read, {kBase + regmap::kBar0Size, 0, 4, true}), true), ~0ULL)
        << "beyond BAR0";
    // Garbage that QEMU never sends: answered or skipped, the stream stays in step.
    exchange(q, mp::encode(99, nullptr, 0), false);
    EXPECT_EQ(exchange(q, mp::encode_config(mp::cmd::pci_cfgread, {2, 0, 2}), true), 0x0001u);
    ::close(ram);
    ::close(sp.qemu);
    sp.qemu = -1;
    int st = 0;
    ::waitpid(pid, &st, 0);
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    ASSERT_TRUE(WIFEXITED(st)) << ss.str();
    EXPECT_EQ(WEXITSTATUS(st), 1) << "the workload never ran: status 1, not a crash\n" << ss.str();
    EXPECT_NE(ss.str().find("QEMU closed the connection"), std::string::npos) << ss.str();
    std::ifstream rf(results);
    std::stringstream rs;
    rs << rf.rdbuf();
    const boost::json::value r = boost::json::parse(rs.str());
    const auto& qm = r.at("modules").at("a.qemu").as_object();
    EXPECT_EQ(qm.at("bar_reads").to_number<int>(), 4);
    EXPECT_EQ(qm.at("bar_writes").to_number<int>(), 1);
    EXPECT_EQ(qm.at("undecoded_accesses").to_number<int>(), 1);
    EXPECT_EQ(qm.at("unknown_messages").to_number<int>(), 1);
    EXPECT_EQ(qm.at("ram_syncs").to_number<int>(), 1);
    EXPECT_EQ(r.at("modules").at("a.mem").at("guest_ram_bytes").to_number<std::uint64_t>(), 16u << 20);
    EXPECT_EQ(r.at("status").as_string(), "incomplete: QEMU closed the connection before the workload finished");
    EXPECT_GT(r.at("modules").at("a.rnic").as_object().size(), 0u);
}

}  // namespace
}  // namespace rnic::test
