// mpqemu messages: encoding as QEMU lays them out, decoding with every bad input named, and the
// non-blocking channel (split messages, descriptors, end of stream, a stream out of step).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <string>
#include <thread>

#include "qemu/mpqemu.h"
#include "test_util.h"

namespace rnic::test {
namespace {

namespace mp = qemu::mpqemu;
using qemu::mpqemu_channel;

mp::message msg(mp::cmd c, std::size_t size, std::vector<int> fds = {}) {
    mp::message m;
    m.cmd = static_cast<std::int32_t>(c);
    m.data.assign(size, 0);
    m.fds = std::move(fds);
    return m;
}

TEST(Mpqemu, HeaderIsSixteenBytesCmdPaddingSize) {
    const auto bytes = mp::encode_ret(0x1122334455667788ULL);
    ASSERT_EQ(bytes.size(), 24u);
    EXPECT_EQ(bytes[0], 1);  // cmd ret, little-endian int
    for (int i = 1; i < 8; ++i) EXPECT_EQ(bytes[i], 0) << i;
    EXPECT_EQ(bytes[8], 8);  // size_t size = 8
    EXPECT_EQ(bytes[16], 0x88);
    EXPECT_EQ(bytes[23], 0x11);
    std::int32_t c = 0;
    std::uint64_t size = 0;
    std::string err;
    ASSERT_TRUE(mp::parse_header(bytes.data(), &c, &size, &err));
    EXPECT_EQ(c, 1);
    EXPECT_EQ(size, 8u);
}

TEST(Mpqemu, OversizeHeaderIsRefusedNamingTheSize) {
    auto bytes = mp::encode(5, nullptr, 0);
    bytes[8] = 193;
    std::int32_t c = 0;
    std::uint64_t size = 0;
    std::string err;
    EXPECT_FALSE(mp::parse_header(bytes.data(), &c, &size, &err));
    EXPECT_NE(err.find("193 bytes"), std::string::npos) << err;
    bytes[8] = 0;
    bytes[15] = 0x80;  // a size_t no sender could mean
    EXPECT_FALSE(mp::parse_header(bytes.data(), &c, &size, &err));
}

TEST(Mpqemu, ConfigAndBarRoundTrip) {
    mp::message m;
    const auto cfg = mp::encode_config(mp::cmd::pci_cfgwrite, {0x10, 0xfffffff0, 4});
    m.cmd = 2;
    m.data.assign(cfg.begin() + 16, cfg.end());
    mp::config_access a;
    std::string err;
    ASSERT_TRUE(mp::decode_config(m, &a, &err)) << err;
    EXPECT_EQ(a.address, 0x10u);
    EXPECT_EQ(a.value, 0xfffffff0u);
    EXPECT_EQ(a.length, 4u);

    const auto bar = mp::encode_bar(mp::cmd::bar_read, {0xfebc0008, 0, 8, true});
    ASSERT_EQ(bar.size(), 16u + 24u);
    m.cmd = 5;
    m.data.assign(bar.begin() + 16, bar.end());
    mp::bar_access b;
    ASSERT_TRUE(mp::decode_bar(m, &b, &err)) << err;
    EXPECT_EQ(b.address, 0xfebc0008u);
    EXPECT_EQ(b.size, 8u);
    EXPECT_TRUE(b.memory);
}

TEST(Mpqemu, BadConfigMessagesAreNamed) {
    std::string err;
    mp::config_access a;
    auto m = msg(mp::cmd::pci_cfgread, 11);
    EXPECT_FALSE(mp::decode_config(m, &a, &err));
    EXPECT_NE(err.find("11 bytes of data, expected 12"), std::string::npos) << err;
    m = msg(mp::cmd::pci_cfgread, 12);
    m.data[8] = 3;  // length 3
    EXPECT_FALSE(mp::decode_config(m, &a, &err));
    EXPECT_NE(err.find("access length 3"), std::string::npos) << err;
    m.data[8] = 4;
    m.data[0] = 0xfe;  // 0xfe + 4 > 256
    EXPECT_FALSE(mp::decode_config(m, &a, &err));
    EXPECT_NE(err.find("beyond the 256-byte"), std::string::npos) << err;
    m = msg(mp::cmd::bar_read, 12);
    EXPECT_FALSE(mp::decode_config(m, &a, &err));
    EXPECT_NE(err.find("not a pci_cfgwrite"), std::string::npos) << err;
}

TEST(Mpqemu, BadBarMessagesAreNamed) {
    std::string err;
    mp::bar_access b;
    auto m = msg(mp::cmd::bar_write, 16);
    EXPECT_FALSE(mp::decode_bar(m, &b, &err));
    EXPECT_NE(err.find("16 bytes of data, expected 24"), std::string::npos) << err;
    m = msg(mp::cmd::bar_write, 24);
    m.data[16] = 3;
    EXPECT_FALSE(mp::decode_bar(m, &b, &err));
    EXPECT_NE(err.find("access size 3"), std::string::npos) << err;
    m.data[16] = 4;
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    m.fds = {p[0]};
    EXPECT_FALSE(mp::decode_bar(m, &b, &err));
    EXPECT_NE(err.find("1 file descriptors, expected 0"), std::string::npos) << err;
    m.close_fds();
    ::close(p[1]);
}

TEST(Mpqemu, SyncSysmemDecodesRegionsAndRefusesBadOnes) {
    std::string err;
    std::vector<mp::ram_region> regions;
    const int fd = make_memfd(1 << 20);
    ASSERT_GE(fd, 0);
    auto bytes = mp::encode_sync_sysmem({{0x100000, 1 << 20, 0, -1}});
    mp::message m;
    m.cmd = 0;
    m.data.assign(bytes.begin() + 16, bytes.end());
    m.fds = {fd};
    ASSERT_TRUE(mp::decode_sync_sysmem(m, &regions, &err)) << err;
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].gpa, 0x100000u);
    EXPECT_EQ(regions[0].size, 1u << 20);
    EXPECT_EQ(regions[0].fd, fd);
    EXPECT_TRUE(m.fds.empty());
    ::close(fd);

    // No descriptor.
    m.fds.clear();
    EXPECT_FALSE(mp::decode_sync_sysmem(m, &regions, &err));
    EXPECT_NE(err.find("0 file descriptors"), std::string::npos) << err;
    // A descriptor that is not open.
    m.fds = {987};
    EXPECT_FALSE(mp::decode_sync_sysmem(m, &regions, &err));
    EXPECT_NE(err.find("not open"), std::string::npos) << err;
    // A region of size 0.
    const int fd2 = make_memfd(4096);
    bytes = mp::encode_sync_sysmem({{0, 0, 0, -1}});
    m.data.assign(bytes.begin() + 16, bytes.end());
    m.fds = {fd2};
    EXPECT_FALSE(mp::decode_sync_sysmem(m, &regions, &err));
    EXPECT_NE(err.find("size 0"), std::string::npos) << err;
    EXPECT_EQ(::fcntl(fd2, F_GETFD), -1) << "a refused message's descriptors are closed";
    // Short data.
    m = msg(mp::cmd::sync_sysmem, 100);
    EXPECT_FALSE(mp::decode_sync_sysmem(m, &regions, &err));
    EXPECT_NE(err.find("100 bytes of data"), std::string::npos) << err;
}

TEST(MpqemuChannel, ReassemblesSplitMessagesAndTakesDescriptors) {
    socket_pair sp;
    ASSERT_GE(sp.qemu, 0);
    mpqemu_channel ch(sp.remote);
    sp.remote = -1;  // owned by nobody in particular: closed below by the pair's destructor copy
    const auto bytes = mp::encode_config(mp::cmd::pci_cfgread, {0, 0, 2});
    mp::message m;
    EXPECT_EQ(ch.receive(&m), mpqemu_channel::result::again);
    ASSERT_TRUE(send_with_fds(sp.qemu, {bytes.begin(), bytes.begin() + 10}));
    EXPECT_EQ(ch.receive(&m), mpqemu_channel::result::again);
    ASSERT_TRUE(send_with_fds(sp.qemu, {bytes.begin() + 10, bytes.end()}));
    ASSERT_EQ(ch.receive(&m), mpqemu_channel::result::message);
    EXPECT_EQ(m.cmd, 3);
    EXPECT_EQ(m.data.size(), 12u);

    const int fd = make_memfd(4096);
    const auto sync = mp::encode_sync_sysmem({{0, 4096, 0, -1}});
    ASSERT_TRUE(send_with_fds(sp.qemu, sync, {fd}));
    ::close(fd);
    ASSERT_EQ(ch.receive(&m), mpqemu_channel::result::message);
    EXPECT_EQ(m.cmd, 0);
    ASSERT_EQ(m.fds.size(), 1u);
    struct stat st {};
    EXPECT_EQ(::fstat(m.fds[0], &st), 0);
    EXPECT_EQ(st.st_size, 4096);
    m.close_fds();
    ::close(ch.fd());
}

TEST(MpqemuChannel, DescriptorsGoToTheirOwnMessageWhenOneReadSpansTwo) {
    // A message's tail and the next message with its descriptor can come in one read (the kernel
    // glues a descriptor-less buffer to the next one): the descriptor belongs to the second.
    socket_pair sp;
    mpqemu_channel ch(sp.remote);
    const auto a = mp::encode_bar(mp::cmd::bar_read, {0xfe000000, 0, 4, true});
    ASSERT_TRUE(send_with_fds(sp.qemu, {a.begin(), a.begin() + 10}));
    mp::message m;
    EXPECT_EQ(ch.receive(&m), mpqemu_channel::result::again);
    ASSERT_TRUE(send_with_fds(sp.qemu, {a.begin() + 10, a.end()}));
    const int fd = make_memfd(4096);
    ASSERT_TRUE(send_with_fds(sp.qemu, mp::encode_sync_sysmem({{0, 4096, 0, -1}}), {fd}));
    ::close(fd);
    ASSERT_EQ(ch.receive(&m), mpqemu_channel::result::message);
    EXPECT_EQ(m.cmd, 5);
    EXPECT_TRUE(m.fds.empty()) << "the BAR read came without descriptors";
    m.close_fds();
    mp::message s;
    ASSERT_EQ(ch.receive(&s), mpqemu_channel::result::message);
    EXPECT_EQ(s.cmd, 0);
    EXPECT_EQ(s.fds.size(), 1u) << "the sync's descriptor";
    s.close_fds();
}

TEST(MpqemuChannel, EndOfStreamInsideAMessageIsAnError) {
    socket_pair sp;
    mpqemu_channel ch(sp.remote);
    const auto bytes = mp::encode_bar(mp::cmd::bar_read, {0, 0, 4, true});
    ASSERT_TRUE(send_with_fds(sp.qemu, {bytes.begin(), bytes.begin() + 20}));
    ::close(sp.qemu);
    sp.qemu = -1;
    mp::message m;
    mpqemu_channel::result r = mpqemu_channel::result::again;
    for (int i = 0; i < 4 && r == mpqemu_channel::result::again; ++i) r = ch.receive(&m);
    EXPECT_EQ(r, mpqemu_channel::result::closed);
    EXPECT_NE(ch.error().find("middle of a message (20 bytes"), std::string::npos) << ch.error();
}

TEST(MpqemuChannel, CleanEndOfStreamIsClosedWithoutError) {
    socket_pair sp;
    mpqemu_channel ch(sp.remote);
    ::close(sp.qemu);
    sp.qemu = -1;
    mp::message m;
    EXPECT_EQ(ch.receive(&m), mpqemu_channel::result::closed);
    EXPECT_TRUE(ch.error().empty());
}

TEST(MpqemuChannel, OversizeSizeMeansOutOfStep) {
    socket_pair sp;
    mpqemu_channel ch(sp.remote);
    auto bytes = mp::encode(4, nullptr, 0);
    bytes[9] = 0x10;  // 4096 bytes announced
    ASSERT_TRUE(send_with_fds(sp.qemu, bytes));
    mp::message m;
    EXPECT_EQ(ch.receive(&m), mpqemu_channel::result::error);
    EXPECT_NE(ch.error().find("out of step"), std::string::npos) << ch.error();
    EXPECT_EQ(ch.receive(&m), mpqemu_channel::result::error) << "the channel stays failed";
}

TEST(MpqemuChannel, TooManyDescriptorsMeansOutOfStep) {
    socket_pair sp;
    mpqemu_channel ch(sp.remote);
    std::vector<int> fds;
    for (int i = 0; i < 9; ++i) fds.push_back(make_memfd(4096));
    ASSERT_TRUE(send_with_fds(sp.qemu, mp::encode_sync_sysmem({}), fds));
    for (int fd : fds) ::close(fd);
    mp::message m;
    EXPECT_EQ(ch.receive(&m), mpqemu_channel::result::error);
    EXPECT_NE(ch.error().find("9 file descriptors"), std::string::npos) << ch.error();
}

TEST(ProxySocket, BadDescriptorsAndPathsAreNamed) {
    std::string err;
    EXPECT_EQ(qemu::open_proxy_socket(999, "", 10, &err), -1);
    EXPECT_NE(err.find("qemu.fd: descriptor 999 is not open"), std::string::npos) << err;
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    EXPECT_EQ(qemu::open_proxy_socket(p[0], "", 10, &err), -1);
    EXPECT_NE(err.find("is not a stream socket"), std::string::npos) << err;
    ::close(p[0]);
    ::close(p[1]);
    EXPECT_EQ(qemu::open_proxy_socket(-1, std::string(200, 'x'), 10, &err), -1);
    EXPECT_NE(err.find("qemu.listen"), std::string::npos) << err;
    const std::string path = ::testing::TempDir() + "rnic-qemu-test-" + std::to_string(::getpid()) + ".sock";
    EXPECT_EQ(qemu::open_proxy_socket(-1, path, 50, &err), -1);
    EXPECT_NE(err.find("no connection"), std::string::npos) << err;
    socket_pair sp;
    EXPECT_EQ(qemu::open_proxy_socket(sp.remote, "", 10, &err), sp.remote);
}

TEST(ProxySocket, AcceptsOneConnectionOnAPath) {
    const std::string path = ::testing::TempDir() + "rnic-qemu-accept-" + std::to_string(::getpid()) + ".sock";
    std::thread client([&] {
        for (int i = 0; i < 100; ++i) {
            const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
            sockaddr_un a{};
            a.sun_family = AF_UNIX;
            std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
            if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
                ::send(s, "x", 1, 0);
                ::close(s);
                return;
            }
            ::close(s);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    std::string err;
    const int fd = qemu::open_proxy_socket(-1, path, 5000, &err);
    client.join();
    ASSERT_GE(fd, 0) << err;
    char c = 0;
    EXPECT_EQ(::recv(fd, &c, 1, 0), 1);
    EXPECT_EQ(c, 'x');
    ::close(fd);
    struct stat st {};
    EXPECT_NE(::stat(path.c_str(), &st), 0) << "the path is removed once accepted";
}

}  // namespace
}  // namespace rnic::test
