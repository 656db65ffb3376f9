// The firmware alone (no SystemC): a scripted HAL feeds it events and records what it does, so
// connection management can be checked where the platform cannot provoke it, e.g. a peer that
// opens TCP but never sends its MPA Request.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>

#include "firmware/firmware.h"
#include "proto/bytes.h"
#include "proto/mpa.h"
#include "proto/seeds/vitcp_ce.h"

namespace rnic::fw {
namespace {

namespace mpa = proto::mpa;

// Thrown by wait_event when the script has no more events: ends firmware::run().
struct script_done {};

class scripted_hal : public hal {
public:
    scripted_hal() {
        pol_.timeout_ps = 10'000'000'000ULL;  // 10 ms
        host_.resize(1 << 16);
    }

    // ---- the script ----
    void at(std::uint64_t t_ps, event ev) { script_.push_back({t_ps, ev}); }
    // Posts one firmware command into the ring (slot n) and rings the doorbell at t_ps.
    void command(std::uint64_t t_ps, regmap::command op, std::initializer_list<std::uint64_t> params) {
        write_command(op, params);
        doorbell(t_ps);
    }
    // Writes one command into the next slot without ringing (a host that ignores CMDQ_CONS may
    // write a whole ring or more before its doorbell).
    void write_command(regmap::command op, std::initializer_list<std::uint64_t> params) {
        const std::uint32_t slot = producer_++;
        encode_command(host_.data() + ring_ + (slot % kEntries) * regmap::kCommandSize, op, params);
    }
    // A command the host writes only when its doorbell is delivered (at t_ps), into a slot that an
    // earlier command still occupies while the script is being written.
    void command_written_at_doorbell(std::uint64_t t_ps, regmap::command op,
                                     std::initializer_list<std::uint64_t> params) {
        const std::uint32_t slot = producer_++;
        std::array<std::uint8_t, regmap::kCommandSize> bytes{};
        encode_command(bytes.data(), op, params);
        doorbell(t_ps);
        deferred_[script_.size() - 1].push_back({ring_ + (slot % kEntries) * regmap::kCommandSize, bytes});
    }
    static void encode_command(std::uint8_t* c, regmap::command op, std::initializer_list<std::uint64_t> params) {
        std::memset(c, 0, regmap::kCommandSize);
        c[regmap::cmd_off::opcode] = static_cast<std::uint8_t>(op);
        int i = 0;
        for (std::uint64_t p : params) proto::put_le64(c + regmap::cmd_off::param + 8 * i++, p);
        proto::put_le32(c + regmap::cmd_off::status, regmap::kStatusPending);
    }
    void doorbell(std::uint64_t t_ps) {
        at(t_ps, {event_kind::command_doorbell, 0, 0});
        doorbell_producers_[script_.size() - 1] = producer_;
        doorbell_rings_[script_.size() - 1] = ring_;
    }
    regmap::cmd_status status_of(std::uint32_t slot, std::uint32_t ring = kRing) const {
        return static_cast<regmap::cmd_status>(
            proto::get_le32(host_.data() + ring + (slot % kEntries) * regmap::kCommandSize + regmap::cmd_off::status));
    }
    std::uint32_t result_of(std::uint32_t slot, std::uint32_t ring = kRing) const {
        return proto::get_le32(host_.data() + ring + slot * regmap::kCommandSize + regmap::cmd_off::result);
    }
    std::uint64_t param_of(std::uint32_t slot, int i, std::uint32_t ring = kRing) const {
        return proto::get_le64(host_.data() + ring + slot * regmap::kCommandSize + regmap::cmd_off::param + 8 * i);
    }
    std::vector<std::uint8_t> peek_bytes(std::uint64_t addr, std::size_t n) const {
        return {host_.begin() + static_cast<std::ptrdiff_t>(addr),
                host_.begin() + static_cast<std::ptrdiff_t>(addr + n)};
    }
    void poke_bytes(std::uint64_t addr, const std::vector<std::uint8_t>& bytes) {
        std::copy(bytes.begin(), bytes.end(), host_.begin() + static_cast<std::ptrdiff_t>(addr));
    }
    void set_addresses(std::uint32_t conn, connection_addresses a) { addresses_[conn] = a; }
    void set_startup(std::uint32_t conn, std::vector<std::uint8_t> bytes) { startup_[conn] = std::move(bytes); }
    mpa_policy& policy_to_set() { return pol_; }

    // ---- what the firmware did ----
    std::vector<std::uint32_t> closed, released, aborted;
    std::set<std::uint16_t> listening;  // tcp_listen minus tcp_unlisten
    std::map<std::uint32_t, std::vector<std::uint8_t>> sent_startup;
    std::vector<std::uint32_t> connected_qps;
    std::vector<mr_params> mrs;
    int resets = 0;
    // A driver loaded again (after CTRL.RESET): a new command ring at `ring`, from slot 0.
    void restart_ring(std::uint32_t ring) {
        producer_ = 0;
        ring_ = ring;
    }
    void poke(std::uint64_t addr, const std::vector<std::uint64_t>& words) {
        for (std::size_t i = 0; i < words.size(); ++i) proto::put_le64(host_.data() + addr + 8 * i, words[i]);
    }

    // ---- hal ----
    event wait_event() override {
        // The earliest of the next scripted event and the armed timer.
        if (timer_ps_ != kNever && (script_.empty() || timer_ps_ <= script_.front().first)) {
            now_ = std::max(now_, timer_ps_);
            timer_ps_ = kNever;
            return {event_kind::timer, 0, 0};
        }
        if (script_.empty()) throw script_done{};
        auto [t, ev] = script_.front();
        script_.pop_front();
        now_ = std::max(now_, t);
        if (auto it = doorbell_producers_.find(delivered_); it != doorbell_producers_.end()) {
            producer_seen_ = it->second;
            ring_seen_ = doorbell_rings_.at(it->first);
        }
        for (const auto& [addr, bytes] : deferred_[delivered_])
            std::memcpy(host_.data() + addr, bytes.data(), bytes.size());
        ++delivered_;
        return ev;
    }
    void consume_cycles(std::uint64_t cycles) override { now_ += cycles * 1000; }  // 1 GHz
    std::uint64_t now_ps() const override { return now_; }
    void arm_timer(std::uint64_t at_ps) override { timer_ps_ = at_ps; }
    const char* name() const override { return "fw-test"; }
    const mpa_policy& policy() const override { return pol_; }
    std::uint32_t reg_read(std::uint32_t offset) override {
        switch (offset) {
        case regmap::CMDQ_BASE_LO:
            return ring_seen_;
        case regmap::CMDQ_BASE_HI:
            return 0;
        case regmap::CMDQ_ENTRIES:
            return kEntries;
        case regmap::CMDQ_PROD:
            return producer_seen_;
        default:
            return 0;
        }
    }
    void reg_write(std::uint32_t, std::uint32_t) override {}
    bool dma_read(std::uint64_t addr, void* dst, std::size_t len) override {
        if (addr + len > host_.size()) return false;
        std::memcpy(dst, host_.data() + addr, len);
        return true;
    }
    bool dma_write(std::uint64_t addr, const void* src, std::size_t len) override {
        if (addr + len > host_.size()) return false;
        std::memcpy(host_.data() + addr, src, len);
        return true;
    }
    void raise_msix(std::uint32_t) override {}
    int create_cq(const cq_params&) override { return 0; }
    int create_qp(const qp_params&) override { return 0; }
    std::int64_t register_mr(const mr_params& p) override {
        mrs.push_back(p);
        return 0x100 + static_cast<std::int64_t>(mrs.size());
    }
    void reset_contexts() override { ++resets; }
    bool deregister_mr(std::uint32_t) override { return true; }
    bool qp_idle(std::uint32_t) const override { return true; }
    bool qp_connect(std::uint32_t qpn, const stream_start&) override {
        connected_qps.push_back(qpn);
        return true;
    }
    void terminate_stream(std::uint32_t, std::uint8_t) override {}
    bool qp_modify(std::uint32_t, std::uint8_t) override { return true; }
    std::int64_t qp_query(std::uint32_t) const override { return 0; }
    int destroy_qp(std::uint32_t) override { return 0; }
    int destroy_cq(std::uint32_t) override { return 0; }
    void stream_failed(std::uint32_t, const char*) override {}
    void read_counters(std::uint64_t*) const override {}
    int tcp_connect(std::uint32_t, std::uint16_t, std::uint16_t) override { return connect_answer; }
    int connect_answer = 7;  // the TCP engine's answer: a connection id, kTcpNoSlot or kTcpNoSendRegion
    bool tcp_listen(std::uint16_t port) override {
        listening.insert(port);
        return true;
    }
    bool tcp_unlisten(std::uint16_t port) override { return listening.erase(port) != 0; }
    void tcp_close(std::uint32_t conn) override { closed.push_back(conn); }
    void tcp_abort(std::uint32_t conn) override { aborted.push_back(conn); }
    void tcp_release(std::uint32_t conn) override { released.push_back(conn); }
    std::uint16_t tcp_effective_mss(std::uint32_t) const override { return 1460; }
    connection_addresses tcp_addresses(std::uint32_t conn) const override {
        auto it = addresses_.find(conn);
        return it == addresses_.end() ? connection_addresses{} : it->second;
    }
    bool send_startup(std::uint32_t conn, const std::vector<std::uint8_t>& bytes) override {
        sent_startup[conn] = bytes;
        return true;
    }
    const std::vector<std::uint8_t>& startup_bytes(std::uint32_t conn) const override {
        static const std::vector<std::uint8_t> none;
        auto it = startup_.find(conn);
        return it == startup_.end() ? none : it->second;
    }
    void full_operation(std::uint32_t, const mpa_mode&, std::size_t) override {}

    static constexpr std::uint32_t kRing = 0x1000;
    static constexpr std::uint32_t kEntries = 16;

private:
    static constexpr std::uint64_t kNever = ~std::uint64_t{0};
    mpa_policy pol_;
    std::vector<std::uint8_t> host_;
    std::deque<std::pair<std::uint64_t, event>> script_;
    std::map<std::size_t, std::uint32_t> doorbell_producers_, doorbell_rings_;
    std::map<std::size_t, std::vector<std::pair<std::uint64_t, std::array<std::uint8_t, regmap::kCommandSize>>>>
        deferred_;
    std::uint32_t ring_ = kRing, ring_seen_ = kRing;
    std::size_t delivered_ = 0;
    std::uint32_t producer_ = 0, producer_seen_ = 0;
    std::map<std::uint32_t, std::vector<std::uint8_t>> startup_;
    std::map<std::uint32_t, connection_addresses> addresses_;
    std::uint64_t now_ = 0, timer_ps_ = kNever;
};

void run(scripted_hal& h) {
    firmware fw(h, costs{});
    try {
        fw.run();
    } catch (const script_done&) {}
}

constexpr std::uint64_t kMs = 1'000'000'000ULL;
constexpr std::uint16_t kPort = 18515;

std::vector<std::uint8_t> request_bytes() {
    mpa::request_reply req;
    req.request = true;
    req.crc = true;
    return mpa::encode(req);
}

TEST(FirmwareBacklog, PeerThatNeverSendsItsRequestIsClosedAfterTheTimeout) {
    // RFC 5044 §7.1.2: the responder SHOULD time out waiting for the MPA Request.
    scripted_hal h;
    h.command(0, regmap::command::listen, {0, kPort});
    h.at(1 * kMs, {event_kind::tcp_established, 3, kPort});  // handshake done, no Request ever
    h.at(30 * kMs, {event_kind::tcp_closed, 99, 0});         // unrelated: lets time pass the deadline
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::ok);
    ASSERT_EQ(h.closed.size(), 1u);
    EXPECT_EQ(h.closed[0], 3u);
    EXPECT_EQ(h.released, h.closed);  // no QP took it: the TCP engine may free it once closed
}

TEST(FirmwareLifecycle, RejectedRequestClosesAndReleasesTheConnection) {
    scripted_hal h;
    h.command(0, regmap::command::reject, {0, kPort, 0, 0, 0, 0});
    h.set_startup(4, request_bytes());
    h.at(1 * kMs, {event_kind::tcp_established, 4, kPort});
    h.at(1 * kMs, {event_kind::startup_bytes, 4, 0});
    run(h);
    ASSERT_EQ(h.sent_startup.count(4), 1u);
    const auto rep = mpa::decode(h.sent_startup[4].data(), h.sent_startup[4].size(), nullptr);
    ASSERT_TRUE(rep);
    EXPECT_TRUE(rep->reject);
    EXPECT_EQ(h.closed, std::vector<std::uint32_t>{4});
    EXPECT_EQ(h.released, std::vector<std::uint32_t>{4});
    EXPECT_TRUE(h.connected_qps.empty());
}

TEST(FirmwareLifecycle, ConnectionLostDuringNegotiationIsClosedAndReleased) {
    // The peer closes after the handshake, before its MPA Request: our half closes too (no
    // CLOSE-WAIT left behind), the accept fails, and the connection goes back to the TCP engine.
    scripted_hal h;
    h.command(0, regmap::command::accept, {5, kPort, 0, 0, 0, 0});
    h.at(1 * kMs, {event_kind::tcp_established, 6, kPort});
    h.at(2 * kMs, {event_kind::tcp_closed, 6, 0});
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::connection_refused);
    EXPECT_EQ(h.closed, std::vector<std::uint32_t>{6});
    EXPECT_EQ(h.released, std::vector<std::uint32_t>{6});
}

TEST(FirmwareBacklog, PeerWhoseRequestArrivedWaitsForTheAcceptPastTheTimeout) {
    scripted_hal h;
    h.command(0, regmap::command::listen, {0, kPort});
    h.set_startup(3, request_bytes());
    h.at(1 * kMs, {event_kind::tcp_established, 3, kPort});
    h.at(1 * kMs, {event_kind::startup_bytes, 3, 0});
    // The accept comes 40 ms later, long after the 10 ms timeout: the peer is still served.
    h.command(41 * kMs, regmap::command::accept, {5, kPort, 0, 0, 0, 0});
    run(h);
    EXPECT_TRUE(h.closed.empty());
    ASSERT_EQ(h.sent_startup.count(3), 1u);
    const auto& reply = h.sent_startup[3];
    const auto rep = mpa::decode(reply.data(), reply.size(), nullptr);
    ASSERT_TRUE(rep);
    EXPECT_FALSE(rep->request);
    EXPECT_FALSE(rep->reject);
    EXPECT_EQ(h.status_of(1), regmap::cmd_status::ok);
    ASSERT_EQ(h.connected_qps.size(), 1u);
    EXPECT_EQ(h.connected_qps[0], 5u);
}

TEST(FirmwareBacklog, ListenOnPortZeroIsABadParameter) {
    scripted_hal h;
    h.command(0, regmap::command::listen, {0, 0});
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::bad_parameter);
}

TEST(FirmwareUnlisten, ResetsUnacceptedBacklogPeersAndLeavesTheAcceptedOne) {
    scripted_hal h;
    h.command(0, regmap::command::listen, {0, kPort});
    h.set_startup(3, request_bytes());
    h.at(1 * kMs, {event_kind::tcp_established, 3, kPort});
    h.at(1 * kMs, {event_kind::startup_bytes, 3, 0});
    h.command(2 * kMs, regmap::command::accept, {5, kPort, 0, 0, 0, 0});  // takes peer 3
    h.set_startup(4, request_bytes());
    h.at(3 * kMs, {event_kind::tcp_established, 4, kPort});  // Request in, never accepted
    h.at(3 * kMs, {event_kind::startup_bytes, 4, 0});
    h.at(3 * kMs, {event_kind::tcp_established, 6, kPort});  // no Request yet
    h.command(4 * kMs, regmap::command::unlisten, {0, kPort});
    run(h);
    EXPECT_EQ(h.status_of(1), regmap::cmd_status::ok);  // the accept
    EXPECT_EQ(h.connected_qps, std::vector<std::uint32_t>{5});
    EXPECT_EQ(h.status_of(2), regmap::cmd_status::ok);  // the unlisten
    EXPECT_EQ(h.result_of(2), 2u);                      // two backlog peers reset
    EXPECT_EQ(h.aborted, (std::vector<std::uint32_t>{4, 6}));
    EXPECT_EQ(h.released, (std::vector<std::uint32_t>{4, 6}));
    EXPECT_TRUE(h.closed.empty());           // reset, not closed with a FIN; peer 3 untouched
    EXPECT_EQ(h.sent_startup.count(4), 0u);  // no Reply for the reset peer
    EXPECT_EQ(h.listening.count(kPort), 0u);
}

TEST(FirmwareUnlisten, APortNotListeningIsNamedAndPortZeroIsABadParameter) {
    scripted_hal h;
    h.command(0, regmap::command::unlisten, {0, kPort});  // never listened
    h.command(1 * kMs, regmap::command::listen, {0, kPort});
    h.command(2 * kMs, regmap::command::unlisten, {0, kPort});
    h.command(3 * kMs, regmap::command::unlisten, {0, kPort});  // already closed
    h.command(4 * kMs, regmap::command::unlisten, {0, 0});
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::not_listening);
    EXPECT_EQ(h.status_of(1), regmap::cmd_status::ok);
    EXPECT_EQ(h.status_of(2), regmap::cmd_status::ok);
    EXPECT_EQ(h.result_of(2), 0u);
    EXPECT_EQ(h.status_of(3), regmap::cmd_status::not_listening);
    EXPECT_EQ(h.status_of(4), regmap::cmd_status::bad_parameter);
    EXPECT_TRUE(h.aborted.empty());
}

TEST(FirmwareUnlisten, AnAcceptWaitingOnThePortCompletesWithNotListening) {
    scripted_hal h;
    h.command(0, regmap::command::accept, {5, kPort, 0, 0, 0, 0});  // opens the port, waits
    h.command(1 * kMs, regmap::command::unlisten, {0, kPort});
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::not_listening);
    EXPECT_EQ(h.status_of(1), regmap::cmd_status::ok);
    EXPECT_TRUE(h.connected_qps.empty());
}

// ---- next_peer: the passive side for connection managers, and private data -------------------

constexpr std::uint64_t kPeerBuf = 0x4000;  // next_peer's record + private data
constexpr std::uint64_t kPdBuf = 0x6000;    // private data the driver sends or gets back
constexpr std::uint32_t kPeerIp = 0x0a000002, kOwnIp = 0x0a000001;
constexpr std::uint16_t kPeerPort = 40001;

std::vector<std::uint8_t> text(const char* s) {
    return {s, s + std::strlen(s)};
}

// A revision 2 Request with the RFC 6581 word (IRD 4, ORD 2) and private data.
std::vector<std::uint8_t> request_with_private_data(const std::vector<std::uint8_t>& pd) {
    mpa::request_reply req;
    req.request = true;
    req.crc = true;
    req.revision = 2;
    req.enhanced = true;
    req.ird = 4;
    req.ord = 2;
    req.private_data = pd;
    return mpa::encode(req);
}

// A listening port with one peer (connection 3) whose Request is in, reported by next_peer at 2 ms.
scripted_hal& with_reported_peer(scripted_hal& h, const std::vector<std::uint8_t>& pd) {
    h.command(0, regmap::command::listen, {0, kPort});
    h.set_startup(3, request_with_private_data(pd));
    h.set_addresses(3, {kOwnIp, kPeerIp, kPort, kPeerPort});
    h.at(1 * kMs, {event_kind::tcp_established, 3, kPort});
    h.at(1 * kMs, {event_kind::startup_bytes, 3, 0});
    h.command(2 * kMs, regmap::command::next_peer, {0, 0, 0, 0, kPeerBuf, 256});
    return h;
}

std::uint32_t reported_handle(const scripted_hal& h) {
    return proto::get_le32(h.peek_bytes(kPeerBuf + regmap::peer_off::handle, 4).data());
}

TEST(FirmwarePassive, NextPeerReportsAWaitingPeerOnceWithItsAddressesAndRequest) {
    scripted_hal h;
    with_reported_peer(h, text("hello, passive side"));
    h.command(3 * kMs, regmap::command::next_peer, {0, kPort, 0, 0, kPeerBuf + 0x800, 256});  // nothing new
    run(h);
    EXPECT_EQ(h.status_of(1), regmap::cmd_status::ok);
    EXPECT_EQ(h.result_of(1), 1u);
    namespace off = regmap::peer_off;
    const auto rec = h.peek_bytes(kPeerBuf, regmap::kPeerRecordSize + 19);
    EXPECT_NE(proto::get_le32(rec.data() + off::handle), 0u);
    EXPECT_EQ(proto::get_le32(rec.data() + off::local_ip), kOwnIp);
    EXPECT_EQ(proto::get_le32(rec.data() + off::remote_ip), kPeerIp);
    EXPECT_EQ(proto::get_le16(rec.data() + off::local_port), kPort);
    EXPECT_EQ(proto::get_le16(rec.data() + off::remote_port), kPeerPort);
    EXPECT_EQ(rec[off::revision], 2u);
    EXPECT_EQ(rec[off::flags], regmap::peer_flags::crc | regmap::peer_flags::enhanced);
    EXPECT_EQ(proto::get_le16(rec.data() + off::pd_length), 19u);
    EXPECT_EQ(proto::get_le16(rec.data() + off::ird), 4u);
    EXPECT_EQ(proto::get_le16(rec.data() + off::ord), 2u);
    EXPECT_EQ(std::vector<std::uint8_t>(rec.begin() + regmap::kPeerRecordSize, rec.end()), text("hello, passive side"));
    EXPECT_EQ(h.status_of(2), regmap::cmd_status::ok);
    EXPECT_EQ(h.result_of(2), 0u);        // reported once only
    EXPECT_TRUE(h.sent_startup.empty());  // nothing answered yet
    EXPECT_TRUE(h.closed.empty());
}

TEST(FirmwarePassive, NextPeerWithNobodyWaitingOrARequestNotYetInReportsNothing) {
    scripted_hal h;
    h.command(0, regmap::command::listen, {0, kPort});
    h.at(1 * kMs, {event_kind::tcp_established, 3, kPort});  // handshake done, Request not yet in
    h.command(2 * kMs, regmap::command::next_peer, {0, 0, 0, 0, kPeerBuf, 256});
    h.command(2 * kMs, regmap::command::next_peer, {0, 0, 0, 0, kPeerBuf, regmap::kPeerRecordSize - 1});
    run(h);
    EXPECT_EQ(h.status_of(1), regmap::cmd_status::ok);
    EXPECT_EQ(h.result_of(1), 0u);
    EXPECT_EQ(h.status_of(2), regmap::cmd_status::bad_parameter);  // buffer smaller than a record
}

TEST(FirmwarePassive, AcceptNamingTheReportedPeerAnswersItWithTheAcceptsPrivateData) {
    scripted_hal h2;
    h2.policy_to_set().revision = 2;
    with_reported_peer(h2, text("req"));
    h2.poke_bytes(kPdBuf, text("welcome"));
    h2.command(3 * kMs, regmap::command::accept, {5, kPort, 1, 0, kPdBuf, 7});  // handles start at 1
    run(h2);
    EXPECT_EQ(reported_handle(h2), 1u);
    EXPECT_EQ(h2.status_of(2), regmap::cmd_status::ok);
    ASSERT_EQ(h2.sent_startup.count(3), 1u);
    const auto rep = mpa::decode(h2.sent_startup[3].data(), h2.sent_startup[3].size(), nullptr);
    ASSERT_TRUE(rep);
    EXPECT_FALSE(rep->request);
    EXPECT_FALSE(rep->reject);
    EXPECT_TRUE(rep->enhanced);
    EXPECT_EQ(rep->private_data, text("welcome"));
    EXPECT_EQ(h2.connected_qps, std::vector<std::uint32_t>{5});
    EXPECT_TRUE(h2.closed.empty());
}

TEST(FirmwarePassive, RejectNamingTheReportedPeerSendsAReplyWithTheRejectedBit) {
    // RFC 5044 §7.1.5: R = 1, with the reject's private data; TCP closes and nothing reaches a QP.
    scripted_hal h;
    with_reported_peer(h, text("req"));
    h.poke_bytes(kPdBuf, text("go away"));
    h.command(3 * kMs, regmap::command::reject, {0, kPort, 1, 0, kPdBuf, 7});  // handles start at 1
    run(h);
    EXPECT_EQ(reported_handle(h), 1u);
    EXPECT_EQ(h.status_of(2), regmap::cmd_status::ok);
    ASSERT_EQ(h.sent_startup.count(3), 1u);
    const auto rep = mpa::decode(h.sent_startup[3].data(), h.sent_startup[3].size(), nullptr);
    ASSERT_TRUE(rep);
    EXPECT_TRUE(rep->reject);
    EXPECT_EQ(rep->private_data, text("go away"));
    EXPECT_EQ(h.closed, std::vector<std::uint32_t>{3});
    EXPECT_EQ(h.released, std::vector<std::uint32_t>{3});
    EXPECT_TRUE(h.connected_qps.empty());
}

TEST(FirmwarePassive, APeerThatLeavesBeforeItIsTakenIsClosedAndItsHandleRefused) {
    scripted_hal h;
    with_reported_peer(h, {});
    h.at(3 * kMs, {event_kind::tcp_closed, 3, 0});                        // the peer gives up
    h.command(4 * kMs, regmap::command::accept, {5, kPort, 1, 0, 0, 0});  // too late
    h.command(4 * kMs, regmap::command::next_peer, {0, 0, 0, 0, kPeerBuf + 0x800, 256});
    run(h);
    EXPECT_EQ(h.result_of(1), 1u);
    EXPECT_EQ(h.closed, std::vector<std::uint32_t>{3});
    EXPECT_EQ(h.released, std::vector<std::uint32_t>{3});
    EXPECT_EQ(h.status_of(2), regmap::cmd_status::bad_handle);
    EXPECT_EQ(h.result_of(3), 0u);
    EXPECT_TRUE(h.sent_startup.empty());
    EXPECT_TRUE(h.connected_qps.empty());
}

TEST(FirmwarePassive, AnUnknownHandleOrAnotherPortsPeerIsRefusedWithBadHandle) {
    scripted_hal h;
    with_reported_peer(h, {});
    h.command(3 * kMs, regmap::command::accept, {5, kPort, 77, 0, 0, 0});
    h.command(3 * kMs, regmap::command::reject, {0, kPort, 77, 0, 0, 0});
    h.command(3 * kMs, regmap::command::accept, {5, kPort + 1, 1, 0, 0, 0});
    run(h);
    EXPECT_EQ(h.status_of(2), regmap::cmd_status::bad_handle);
    EXPECT_EQ(h.status_of(3), regmap::cmd_status::bad_handle);
    EXPECT_EQ(h.status_of(4), regmap::cmd_status::bad_handle);
    EXPECT_TRUE(h.sent_startup.empty());  // the peer still waits, unanswered
    EXPECT_TRUE(h.closed.empty());
}

TEST(FirmwarePassive, ConnectCarriesPrivateDataInTheRequestAndGetsTheRepliesBack) {
    scripted_hal h;
    h.policy_to_set().revision = 2;
    h.poke_bytes(kPdBuf, text("from the initiator"));
    h.command(0, regmap::command::connect,
              {5, kPeerIp | std::uint64_t{kPort} << 32, 0, regmap::kConnectPrivateData, kPdBuf,
               std::uint64_t{18} << 32 | 64});
    h.at(1 * kMs, {event_kind::tcp_established, 7, 50000});
    mpa::request_reply rep;
    rep.request = false;
    rep.crc = true;
    rep.revision = 2;
    rep.enhanced = true;
    rep.ird = 1;
    rep.ord = 1;
    rep.private_data = text("from the responder!");
    h.set_startup(7, mpa::encode(rep));
    h.at(2 * kMs, {event_kind::startup_bytes, 7, 0});
    run(h);
    ASSERT_EQ(h.sent_startup.count(7), 1u);
    const auto req = mpa::decode(h.sent_startup[7].data(), h.sent_startup[7].size(), nullptr);
    ASSERT_TRUE(req);
    EXPECT_TRUE(req->request);
    EXPECT_TRUE(req->enhanced);  // RFC 6581 §9.1: the IRD/ORD word first, then the private data
    EXPECT_EQ(req->private_data, text("from the initiator"));
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::ok);
    EXPECT_EQ(h.param_of(0, 5), 19u);  // the Reply's private-data length
    EXPECT_EQ(h.peek_bytes(kPdBuf, 19), text("from the responder!"));
}

TEST(FirmwarePassive, ConnectRefusedByAReplyWithPrivateDataReportsItsLength) {
    scripted_hal h;
    h.command(0, regmap::command::connect,
              {5, kPeerIp | std::uint64_t{kPort} << 32, 0, regmap::kConnectPrivateData, kPdBuf, 4});
    h.at(1 * kMs, {event_kind::tcp_established, 7, 50000});
    mpa::request_reply rep;
    rep.request = false;
    rep.reject = true;
    rep.private_data = text("not today");
    h.set_startup(7, mpa::encode(rep));
    h.at(2 * kMs, {event_kind::startup_bytes, 7, 0});
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::connection_refused);
    EXPECT_EQ(h.result_of(0), 4u);    // bytes written: cut to the buffer
    EXPECT_EQ(h.param_of(0, 5), 9u);  // the whole length
    EXPECT_EQ(h.peek_bytes(kPdBuf, 4), text("not "));
}

// Issue 19: a connection that gets no send region in NIC buffer memory is refused by name. The
// active side: the TCP engine cannot open it, and the connect says why (a full connection table
// stays no_resources).
TEST(FirmwareRefusal, ConnectWithoutASendRegionFailsWithNoBufferMemory) {
    for (const auto& [answer, want] : {std::pair{hal::kTcpNoSendRegion, regmap::cmd_status::no_buffer_memory},
                                       std::pair{hal::kTcpNoSlot, regmap::cmd_status::no_resources}}) {
        scripted_hal h;
        h.connect_answer = answer;
        h.command(0, regmap::command::connect, {5, kPeerIp | std::uint64_t{kPort} << 32, 0, 0, 0, 0});
        run(h);
        EXPECT_EQ(h.status_of(0), want) << "TCP engine answer " << answer;
        EXPECT_TRUE(h.sent_startup.empty());
        EXPECT_TRUE(h.connected_qps.empty());
    }
}

// The passive side: the TCP engine reset a SYN on the port for want of a send region (tcp_refused).
// The accept waiting there fails at once with no_buffer_memory, rather than waiting for a peer that
// was turned away; a second accept on the port is left waiting, and a refusal on a port nobody
// accepts on changes nothing.
TEST(FirmwareRefusal, SynRefusedForWantOfASendRegionFailsTheWaitingAccept) {
    scripted_hal h;
    h.command(0, regmap::command::accept, {5, kPort, 0, 0, 0, 0});
    h.command(0, regmap::command::accept, {6, kPort, 0, 0, 0, 0});
    h.at(1 * kMs, {event_kind::tcp_refused, 0, static_cast<std::uint16_t>(kPort + 1)});  // no accept there
    h.at(2 * kMs, {event_kind::tcp_refused, 0, kPort});
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::no_buffer_memory);
    EXPECT_EQ(h.status_of(1), static_cast<regmap::cmd_status>(regmap::kStatusPending));
    EXPECT_TRUE(h.closed.empty());
    EXPECT_TRUE(h.connected_qps.empty());
    EXPECT_EQ(h.listening.count(kPort), 1u);  // the port still listens for the next peer
}

TEST(FirmwarePassive, ConnectWithTooMuchPrivateDataIsABadParameter) {
    scripted_hal h;
    h.command(0, regmap::command::connect,
              {5, kPeerIp | std::uint64_t{kPort} << 32, 0, regmap::kConnectPrivateData, kPdBuf,
               std::uint64_t{regmap::kMaxConnPrivateData + 1} << 32});
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::bad_parameter);
    EXPECT_TRUE(h.sent_startup.empty());
}

TEST(FirmwarePassive, AcceptWithMoreThan508BytesOfPrivateDataIsABadParameter) {
    // RFC 5044 §7.1 PD_Length <= 512, less the RFC 6581 word: the accepting Reply's data is capped
    // like the Request's, and the peer waiting on the port is left for another accept.
    scripted_hal h;
    h.command(0, regmap::command::listen, {0, kPort});
    h.set_startup(3, request_bytes());
    h.at(1 * kMs, {event_kind::tcp_established, 3, kPort});
    h.at(1 * kMs, {event_kind::startup_bytes, 3, 0});
    h.command(2 * kMs, regmap::command::accept, {5, kPort, 0, 0, kPdBuf, regmap::kMaxConnPrivateData + 1});
    run(h);
    EXPECT_EQ(h.status_of(1), regmap::cmd_status::bad_parameter);
    EXPECT_TRUE(h.sent_startup.empty());
    EXPECT_TRUE(h.connected_qps.empty());
}

// ---- reg_mr_pages -----------------------------------------------------------------------------

constexpr std::uint64_t kPbl = 0x8000;
std::uint64_t pages_p5(std::uint64_t count, unsigned shift, std::uint64_t offset) {
    return count | static_cast<std::uint64_t>(shift) << 24 | offset << 32;
}

TEST(FirmwarePageList, ReadsTheListByDmaAndRegistersThePages) {
    scripted_hal h;
    h.poke(kPbl, {0x7000, 0x3000, 0x5000});
    const std::uint64_t len = 3 * 4096 - 0x234 - 10;
    h.command(0, regmap::command::reg_mr_pages,
              {0x7f0000000234, len, regmap::mr_access::remote_atomic | 9ULL << 32, 0x7f0000000234, kPbl,
               pages_p5(3, 12, 0x234)});
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::ok);
    ASSERT_EQ(h.mrs.size(), 1u);
    EXPECT_EQ(h.mrs[0].pages, (std::vector<std::uint64_t>{0x7000, 0x3000, 0x5000}));
    EXPECT_EQ(h.mrs[0].page_shift, 12u);
    EXPECT_EQ(h.mrs[0].first_byte_offset, 0x234u);
    EXPECT_EQ(h.mrs[0].addr, 0x7f0000000234u);
    EXPECT_EQ(h.mrs[0].length, len);
    EXPECT_EQ(h.mrs[0].pd, 9u);
    EXPECT_EQ(h.mrs[0].to_base, 0x7f0000000234u);
}

TEST(FirmwarePageList, BadListsAreRefusedWithBadParameter) {
    scripted_hal h;
    h.poke(kPbl, {0x7000, 0x3008});
    const std::uint64_t rights = regmap::mr_access::local_write | 1ULL << 32;
    const std::uint64_t atomics = regmap::mr_access::remote_atomic | 1ULL << 32;
    struct bad {
        std::uint64_t p1, p2, p3, p4, p5;
    };
    const bad cases[] = {
        {100, rights, 0, kPbl, pages_p5(0, 12, 0)},                                // count 0
        {100, rights, 0, kPbl, pages_p5(regmap::kMaxPageListEntries + 1, 12, 0)},  // over the maximum
        {100, rights, 0, kPbl, pages_p5(1, 11, 0)},                                // 2 KiB pages
        {100, rights, 0, kPbl, pages_p5(1, 22, 0)},                                // 4 MiB pages
        {100, rights, 0, kPbl, pages_p5(1, 12, 4096)},                             // offset past the page
        {4097, rights, 0, kPbl, pages_p5(1, 12, 0)},                               // longer than the page
        {0, rights, 0, kPbl, pages_p5(1, 12, 0)},                                  // length 0
        {100, rights, 0, 0x100000, pages_p5(1, 12, 0)},                            // list outside memory
        {100, rights, 0, kPbl + 4, pages_p5(1, 12, 0)},                            // list not 8-aligned
        {100, rights, 0, kPbl, pages_p5(2, 12, 0)},                                // page 1 unaligned
        {100, atomics, 0, kPbl, pages_p5(1, 12, 4)},                               // atomics: 4 != 0 mod 8
    };
    for (const bad& c : cases) {
        h.command(0, regmap::command::reg_mr_pages, {0x1000, c.p1, c.p2, c.p3, c.p4, c.p5});
    }
    // The same list, good: the first page only; and atomics with offset = tagged offset mod 8.
    h.command(0, regmap::command::reg_mr_pages, {0x1000, 100, rights, 0, kPbl, pages_p5(1, 12, 0)});
    h.command(0, regmap::command::reg_mr_pages, {0x1004, 100, atomics, 0x1004, kPbl, pages_p5(1, 12, 4)});
    run(h);
    for (std::uint32_t slot = 0; slot < std::size(cases); ++slot) {
        EXPECT_EQ(h.status_of(slot), regmap::cmd_status::bad_parameter) << "case " << slot;
    }
    EXPECT_EQ(h.status_of(std::size(cases)), regmap::cmd_status::ok);
    EXPECT_EQ(h.status_of(std::size(cases) + 1), regmap::cmd_status::ok);
    EXPECT_EQ(h.mrs.size(), 2u);
}

// ---- CTRL.RESET -------------------------------------------------------------------------------

TEST(FirmwareReset, StartsTheRingAgainAtZeroClosesWhatItHeldAndRemovesTheObjects) {
    scripted_hal h;
    h.command(0, regmap::command::listen, {0, kPort});
    h.command(0, regmap::command::accept, {5, kPort + 1, 0, 0, 0, 0});
    h.at(1 * kMs, {event_kind::tcp_established, 3, kPort});  // in the backlog
    h.at(2 * kMs, {event_kind::device_reset, 0, 0});
    // The driver loaded again: its first command is at slot 0.
    constexpr std::uint32_t kNewRing = 0x2000;
    h.restart_ring(kNewRing);
    h.command(3 * kMs, regmap::command::reg_mr, {0x1000, 64, regmap::mr_access::local_write | 1ULL << 32, 0x1000});
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::ok);  // listen
    EXPECT_EQ(h.resets, 1);
    EXPECT_EQ(h.closed, std::vector<std::uint32_t>{3});
    EXPECT_EQ(h.released, std::vector<std::uint32_t>{3});
    ASSERT_EQ(h.mrs.size(), 1u);  // the command at slot 0 of the new ring was executed
    EXPECT_EQ(h.status_of(0, kNewRing), regmap::cmd_status::ok);
}

// A host that writes more commands than the ring holds before one doorbell (20 into 16 slots) has
// overwritten the first 4 before the firmware saw them. The firmware answers the 16 still in the
// ring, each once and in order (not slots 0-3 twice, as a consumer that wrapped did), counts the
// overrun, and answers the next command normally.
TEST(FirmwareCommandRing, AFloodBeyondTheRingIsCountedAndEveryCommandStillThereIsAnsweredOnce) {
    scripted_hal h;
    for (std::uint64_t i = 0; i < 20; ++i) {
        h.write_command(regmap::command::reg_mr, {0x1000 + 64 * i, 64, regmap::mr_access::local_write | 1ULL << 32, 0});
    }
    h.doorbell(0);
    h.command_written_at_doorbell(1 * kMs, regmap::command::reg_mr,
                                  {0x9000, 64, regmap::mr_access::local_write | 1ULL << 32, 0});
    firmware fw(h, costs{});
    try {
        fw.run();
    } catch (const script_done&) {}
    ASSERT_EQ(h.mrs.size(), 17u);
    for (std::uint64_t i = 0; i < 16; ++i) EXPECT_EQ(h.mrs[i].addr, 0x1000 + 64 * (i + 4)) << "registration " << i;
    EXPECT_EQ(h.mrs[16].addr, 0x9000u);
    for (std::uint32_t slot = 4; slot <= 20; ++slot) EXPECT_EQ(h.status_of(slot), regmap::cmd_status::ok) << slot;
    EXPECT_EQ(fw.command_ring_overruns(), 1u);
    EXPECT_EQ(fw.commands_overwritten(), 4u);
    EXPECT_EQ(fw.commands_executed(), 17u);
}

// ---- VI/TCP connection establishment (seed 003 §4, firmware_vitcp.cpp) ---------------------------

namespace ce = proto::vitcp_ce;

std::vector<std::uint8_t> vi_request(std::uint16_t called_port, ce::proposal us = {}) {
    ce::active a(us, 40000, called_port);
    a.connect_request();
    return a.tcp_established();
}

TEST(FirmwareViTcp, ConnectNoMatchClosesThatPeerAndTheAcceptServesTheNext) {
    // §4.3 Matching: "No Matching Discriminator - Send Connect NoMatch; close TCP connection".
    scripted_hal h;
    h.policy_to_set().vitcp = true;
    h.command(0, regmap::command::accept, {5, kPort, 0, 0, 0, 0});
    h.set_startup(6, vi_request(7777));
    h.at(1 * kMs, {event_kind::tcp_established, 6, kPort});
    h.at(1 * kMs, {event_kind::startup_bytes, 6, 0});
    h.set_startup(8, vi_request(kPort));
    h.at(2 * kMs, {event_kind::tcp_established, 8, kPort});
    h.at(2 * kMs, {event_kind::startup_bytes, 8, 0});
    run(h);
    ASSERT_EQ(h.sent_startup.count(6), 1u);
    EXPECT_EQ(h.sent_startup[6][1], 0x88);  // EOM | ConnectNoMatch
    EXPECT_EQ(h.closed, std::vector<std::uint32_t>{6});
    ASSERT_EQ(h.sent_startup.count(8), 1u);
    EXPECT_EQ(h.sent_startup[8][1], 0x86);  // EOM | ConnectAccept
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::ok);
    EXPECT_EQ(h.connected_qps, std::vector<std::uint32_t>{5});
}

TEST(FirmwareViTcp, ActiveSideSendsAConnectRequestAndTimesOutWithoutAnAnswer) {
    // §4.2: Pending Accept, Timeout -> close the TCP connection.
    scripted_hal h;
    h.policy_to_set().vitcp = true;
    h.command(0, regmap::command::connect, {5, 0x0a000002ull | std::uint64_t{kPort} << 32, 40000, 0, 0, 0});
    h.at(1 * kMs, {event_kind::tcp_established, 7, 40000});
    h.at(30 * kMs, {event_kind::tcp_closed, 99, 0});  // lets time pass the deadline
    run(h);
    ASSERT_EQ(h.sent_startup.count(7), 1u);
    std::string why;
    const auto req = proto::vitcp::decode(h.sent_startup[7].data(), h.sent_startup[7].size(), false, &why);
    ASSERT_TRUE(req) << why;
    EXPECT_EQ(req->header.type, proto::vitcp::segment_type::connect_request);
    EXPECT_EQ(req->ce->called_discriminator, ce::port_discriminator(kPort));
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::connection_timeout);
    EXPECT_EQ(h.closed, std::vector<std::uint32_t>{7});
    EXPECT_TRUE(h.connected_qps.empty());
}

TEST(FirmwareViTcp, ActiveSideRefusedByConnectRejectClosesAndSaysSo) {
    scripted_hal h;
    h.policy_to_set().vitcp = true;
    h.command(0, regmap::command::connect, {5, 0x0a000002ull | std::uint64_t{kPort} << 32, 40000, 0, 0, 0});
    // The passive side's answer: a ConnectReject for a reliability mismatch.
    ce::passive p(kPort);
    p.tcp_accepted();
    const auto req = vi_request(kPort);
    ASSERT_EQ(p.on_bytes(req.data(), req.size()), ce::passive::result::request);
    ce::proposal theirs;
    theirs.level = ce::reliability::unreliable;
    h.set_startup(7, p.accept(theirs));
    h.at(1 * kMs, {event_kind::tcp_established, 7, 40000});
    h.at(2 * kMs, {event_kind::startup_bytes, 7, 0});
    run(h);
    EXPECT_EQ(h.status_of(0), regmap::cmd_status::connection_refused);
    EXPECT_EQ(h.closed, std::vector<std::uint32_t>{7});
    EXPECT_TRUE(h.connected_qps.empty());
}

}  // namespace
}  // namespace rnic::fw
