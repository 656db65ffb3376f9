// The serving loop of the proxy's remote on a scripted host_bus, with the test playing QEMU on the
// other end of a socketpair: the boot sequence (sizing BAR0, enabling memory and bus mastering,
// syncing RAM), BAR accesses becoming the device's 32-bit MMIO, and bad input answered or skipped
// so that the stream stays in step and the guest never hangs.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "qemu/qemu_remote.h"
#include "rnic/regmap.h"
#include "test_util.h"

namespace rnic::test {
namespace {

namespace mp = qemu::mpqemu;

// A device behind the bus: a register array; records every access (touched by the remote's thread
// only while it runs).
class scripted_bus : public drv::host_bus {
public:
    std::map<std::uint32_t, std::uint32_t> regs;
    std::vector<std::string> log;
    std::uint64_t now = 0;
    std::uint32_t mmio_read32(std::uint32_t off) override {
        log.push_back("r " + std::to_string(off));
        now += 1000;
        return regs[off];
    }
    void mmio_write32(std::uint32_t off, std::uint32_t v) override {
        log.push_back("w " + std::to_string(off) + " " + std::to_string(v));
        regs[off] = v;
    }
    void mem_read(std::uint64_t, void*, std::size_t) override {}
    void mem_write(std::uint64_t, const void*, std::size_t) override {}
    std::uint64_t dma_alloc(std::size_t, std::size_t) override { return 0; }
    void dma_free(std::uint64_t) override {}
    bool wait_interrupt(unsigned, std::uint64_t) override { return false; }
    void spend(std::uint64_t ps) override { now += ps; }
    std::uint64_t now_ps() override { return now; }
    const std::string& host_name() const override { return name_; }

private:
    std::string name_ = "a";
};

constexpr std::uint64_t kNoReply = 0xdeadbeefcafef00dULL;
constexpr std::uint32_t kBase = 0xfeb00000;

// The remote runs in its own thread; the test is QEMU.
class RemoteTest : public ::testing::Test {
protected:
    socket_pair sp_;
    qemu::guest_ram ram_;
    scripted_bus bus_;
    std::unique_ptr<qemu::qemu_remote> remote_;
    std::thread runner_;
    std::string run_result_ = "not run";
    std::chrono::steady_clock::time_point started_;

    void SetUp() override {
        ASSERT_GE(sp_.qemu, 0);
        qemu::qemu_remote_params p;
        p.fd = sp_.remote;
        sp_.remote = -1;  // the remote owns it now
        p.realtime = true;
        p.realtime_slack_ps = 0;
        p.poll_interval_ps = 1'000'000'000;  // 1 ms
        remote_ = std::make_unique<qemu::qemu_remote>("a.qemu", p, ram_);
        started_ = std::chrono::steady_clock::now();
        runner_ = std::thread([this] { run_result_ = remote_->run(bus_); });
    }
    // Ends the run (QEMU goes away) and waits for the remote.
    void finish() {
        if (sp_.qemu >= 0) ::close(sp_.qemu);
        sp_.qemu = -1;
        if (runner_.joinable()) runner_.join();
    }
    void TearDown() override { finish(); }

    // Sends bytes (and descriptors) as QEMU does; returns the ret value, or kNoReply when none came
    // within `wait_ms`.
    std::uint64_t send(const std::vector<std::uint8_t>& bytes, const std::vector<int>& fds = {}, int wait_ms = 2000) {
        EXPECT_TRUE(send_with_fds(sp_.qemu, bytes, fds));
        pollfd p{sp_.qemu, POLLIN, 0};
        if (::poll(&p, 1, wait_ms) <= 0) return kNoReply;
        const auto reply = read_exact(sp_.qemu, 24);
        if (reply.size() != 24) return kNoReply;
        EXPECT_EQ(reply[0], 1) << "replies are ret messages";
        EXPECT_EQ(reply[8], 8) << "with 8 bytes of data";
        std::uint64_t v = 0;
        for (int i = 7; i >= 0; --i) v = v << 8 | reply[16 + i];
        return v;
    }
    std::uint64_t cfg_read(std::uint32_t addr, unsigned len) {
        return send(mp::encode_config(mp::cmd::pci_cfgread, {addr, 0, len}));
    }
    std::uint64_t cfg_write(std::uint32_t addr, std::uint32_t v, unsigned len) {
        return send(mp::encode_config(mp::cmd::pci_cfgwrite, {addr, v, len}));
    }
    std::uint64_t bar_read(std::uint64_t addr, unsigned size) {
        return send(mp::encode_bar(mp::cmd::bar_read, {addr, 0, size, true}));
    }
    std::uint64_t bar_write(std::uint64_t addr, std::uint64_t v, unsigned size) {
        return send(mp::encode_bar(mp::cmd::bar_write, {addr, v, size, true}));
    }
    // What QEMU and the guest do before the driver's first BAR access.
    void boot() {
        EXPECT_EQ(cfg_read(0x00, 4), 0x00011a4eu);
        EXPECT_EQ(cfg_write(0x10, 0xffffffff, 4), 0u);
        EXPECT_EQ(cfg_read(0x10, 4), ~(regmap::kBar0Size - 1));
        EXPECT_EQ(cfg_write(0x10, kBase, 4), 0u);
        EXPECT_EQ(cfg_write(0x04, 0x0006, 2), 0u);  // memory + bus master
    }
};

TEST_F(RemoteTest, BootSequenceAndBarAccessesReachTheDevice) {
    bus_.regs[regmap::ID] = 0x1a4e0001;
    bus_.regs[regmap::STATUS] = 1;
    boot();
    EXPECT_EQ(bar_read(kBase + regmap::ID, 4), 0x1a4e0001u);
    EXPECT_EQ(bar_write(kBase + regmap::CMDQ_PROD, 7, 4), 0u);
    EXPECT_EQ(bar_read(kBase + regmap::STATUS, 4), 1u);
    finish();
    EXPECT_EQ(run_result_, "");
    const std::vector<std::string> want = {"r 0", "w 44 7", "r 12"};
    EXPECT_EQ(bus_.log, want);
    EXPECT_TRUE(remote_->bus_master());
    EXPECT_TRUE(ram_.bus_master());
    EXPECT_EQ(remote_->stats().bar_reads, 2u);
    EXPECT_EQ(remote_->stats().bar_writes, 1u);
}

TEST_F(RemoteTest, WideAndNarrowAccesses) {
    boot();
    bus_.regs[regmap::CMDQ_BASE_LO] = 0x11223344;
    bus_.regs[regmap::CMDQ_BASE_HI] = 0x55667788;
    EXPECT_EQ(bar_read(kBase + regmap::CMDQ_BASE_LO, 8), 0x5566778811223344ULL) << "two reads, low word first";
    EXPECT_EQ(bar_read(kBase + regmap::CMDQ_BASE_LO + 1, 2), 0x2233u) << "the bytes of the aligned word";
    EXPECT_EQ(bar_write(kBase + regmap::CTX_BASE_LO, 0x0000000900001000ULL, 8), 0u);
    EXPECT_EQ(bar_write(kBase + regmap::MAC_LO, 0xff, 1), 0u) << "refused, but answered";
    EXPECT_EQ(bar_read(kBase + regmap::CMDQ_BASE_LO + 2, 4), ~0ULL) << "unaligned: all-ones";
    finish();
    const std::vector<std::string> want = {"r 32", "r 36", "r 32", "w 96 4096", "w 100 9"};
    EXPECT_EQ(bus_.log, want);
    EXPECT_EQ(remote_->stats().refused_accesses, 2u);
}

TEST_F(RemoteTest, AccessesOutsideBar0OrWithDecodingOffReadAllOnes) {
    EXPECT_EQ(bar_read(kBase, 4), ~0ULL) << "before the BAR is programmed and enabled";
    boot();
    EXPECT_EQ(bar_read(kBase + regmap::kBar0Size, 4), ~0ULL);
    EXPECT_EQ(bar_write(kBase - 4, 1, 4), 0u);
    EXPECT_EQ(send(mp::encode_bar(mp::cmd::bar_read, {kBase, 0, 4, false})), ~0ULL) << "I/O space";
    EXPECT_EQ(cfg_write(0x04, 0x0004, 2), 0u);  // memory decoding off
    EXPECT_EQ(bar_read(kBase, 4), ~0ULL);
    finish();
    EXPECT_TRUE(bus_.log.empty()) << "nothing reached the device";
    EXPECT_EQ(remote_->stats().undecoded_accesses, 5u);
}

TEST_F(RemoteTest, SyncSysmemMapsGuestRamAndBadSyncsUnmapIt) {
    const int fd = make_memfd(1 << 20);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(send(mp::encode_sync_sysmem({{0, 1 << 20, 0, -1}}), {fd}, 100), kNoReply) << "sync gets no reply";
    EXPECT_EQ(cfg_read(0, 2), 0x1a4eu) << "the stream is in step after it";
    EXPECT_EQ(ram_.regions(), 1u);
    auto* view = static_cast<std::uint8_t*>(::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    ASSERT_NE(view, MAP_FAILED);
    ASSERT_TRUE(ram_.write(0x1234, "x", 1));
    EXPECT_EQ(view[0x1234], 'x');
    ::munmap(view, 1 << 20);
    // A sync whose region runs past its file: nothing mapped, an error logged, no reply, still in step.
    EXPECT_EQ(send(mp::encode_sync_sysmem({{0, 2 << 20, 0, -1}}), {fd}, 100), kNoReply);
    EXPECT_EQ(cfg_read(0, 2), 0x1a4eu);
    EXPECT_EQ(ram_.regions(), 0u);
    ::close(fd);
    finish();
    EXPECT_EQ(remote_->stats().syncs, 2u);
    EXPECT_EQ(remote_->stats().sync_errors, 1u);
}

TEST_F(RemoteTest, UnknownAndMalformedMessagesKeepTheStreamInStep) {
    EXPECT_EQ(send(mp::encode(42, nullptr, 0), {}, 100), kNoReply) << "unknown: skipped, not answered";
    const std::uint8_t junk[5] = {1, 2, 3, 4, 5};
    EXPECT_EQ(send(mp::encode(static_cast<std::int32_t>(mp::cmd::ret), junk, 5), {}, 100), kNoReply)
        << "a ret from QEMU is not expected";
    EXPECT_EQ(send(mp::encode(static_cast<std::int32_t>(mp::cmd::pci_cfgread), junk, 5)), ~0ULL)
        << "a short config read is answered with all-ones (the vCPU waits for an answer)";
    EXPECT_EQ(send(mp::encode(static_cast<std::int32_t>(mp::cmd::bar_write), junk, 5)), ~0ULL);
    const int e = make_memfd(16);
    EXPECT_EQ(send(mp::encode(static_cast<std::int32_t>(mp::cmd::set_irqfd), nullptr, 0), {e}, 100), kNoReply)
        << "set_irqfd with one descriptor instead of two";
    ::close(e);
    EXPECT_EQ(cfg_read(0x02, 2), 0x0001u);
    finish();
    EXPECT_EQ(run_result_, "");
    EXPECT_EQ(remote_->stats().unknown, 2u);
    EXPECT_EQ(remote_->stats().bad_messages, 3u);
}

TEST_F(RemoteTest, ResetReachesTheDeviceAndClearsTheFunction) {
    boot();
    EXPECT_EQ(send(mp::encode(static_cast<std::int32_t>(mp::cmd::device_reset), nullptr, 0)), 0u);
    EXPECT_EQ(cfg_read(0x04, 2), 0u);
    EXPECT_EQ(cfg_read(0x10, 4), 0u);
    finish();
    ASSERT_EQ(bus_.log.size(), 1u);
    EXPECT_EQ(bus_.log[0], "w 8 " + std::to_string(regmap::ctrl::reset));
    EXPECT_FALSE(ram_.bus_master());
}

TEST_F(RemoteTest, AStreamOutOfStepEndsTheRunWithAnError) {
    auto bytes = mp::encode(4, nullptr, 0);
    bytes[9] = 0x20;  // 8192 bytes announced
    ASSERT_TRUE(send_with_fds(sp_.qemu, bytes));
    if (runner_.joinable()) runner_.join();
    EXPECT_NE(run_result_.find("out of step"), std::string::npos) << run_result_;
}

TEST_F(RemoteTest, SimulatedTimeAdvancesWhileTheGuestIsQuiet) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_EQ(cfg_read(0, 2), 0x1a4eu);
    finish();
    const auto wall_ps =
        static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started_).count()) *
        1000;
    // 30 ms of wall time in 1 ms steps: simulated time keeps up (within two steps and scheduling
    // noise) and is never ahead of wall-clock time (slack 0).
    EXPECT_GE(bus_.now, 25'000'000'000ULL);
    EXPECT_LE(bus_.now, wall_ps);
}

}  // namespace
}  // namespace rnic::test
