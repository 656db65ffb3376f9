// libFuzzer target: tcp::Connection (RFC 9293 state machine, RFC 7323 / 2018 / 5681 / 6582 /
// 6298 algorithms) driven by a script of user calls, timer expiries and arbitrary incoming
// segments (input format: tcp_connection_format.h).
// Invariants, checked in the Env callbacks and after every operation:
//  - nothing crashes, leaks or runs into undefined behaviour, whatever the segments;
//  - Env::transmit only names send-stream bytes the owner still has: [acked, queued); SYN and RST
//    carry no payload; every header's options fit the 40-byte option space and survive
//    build_tcp_frame -> parse_tcp_frame;
//  - Env::deliver hands over non-empty runs, exactly the peer's bytes at the right stream offsets
//    (the peer's payload is a function of the sequence number), and the delivered total matches
//    stats().bytes_delivered;
//  - Env::acked offsets increase and never pass the queued end; acked <= sent <= queued;
//  - Env::state_changed reports real transitions, in order, matching state();
//  - out-of-order bytes held never exceed the receive buffer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "proto/net.h"
#include "proto/tcp/connection.h"
#include "tcp_connection_format.h"

namespace net = rnic::proto::net;
namespace tcp = rnic::proto::tcp;
namespace tf = rnic::fuzz::tcp_format;
using rnic::fuzz::fuzz_input;

namespace {

// FUZZ_TRACE=1 in the environment prints every operation and callback (for reproducing a crash).
const bool kTrace = std::getenv("FUZZ_TRACE") != nullptr;

void trace_header(const char* what, const net::tcp_header& h, std::size_t len) {
    std::fprintf(stderr, "  %s flags=%02x seq=%u ack=%u win=%u len=%zu%s%s\n", what, h.flags, h.seq, h.ack, h.window,
                 len, h.mss ? " mss" : "", h.window_scale ? " ws" : "");
}

constexpr std::size_t kMaxOps = 1000;
constexpr std::size_t kMaxTimerRounds = 32;

class harness : public tcp::env {
public:
    const tcp::connection* conn = nullptr;
    tcp::state last_state = tcp::state::closed;
    std::uint64_t last_acked = 0;
    std::uint64_t delivered_total = 0;

    void transmit(const net::tcp_header& h, std::uint64_t stream_offset, std::size_t len) override {
        if (kTrace) trace_header("transmit", h, len);
        const std::uint64_t queued = conn->send_stream_queued();
        if (len > 0) {
            FUZZ_CHECK(stream_offset >= conn->send_stream_acked());
            FUZZ_CHECK(stream_offset <= queued && len <= queued - stream_offset);
        } else {
            FUZZ_CHECK(stream_offset <= queued);
        }
        if (h.flags & (net::tcp_flags::kSyn | net::tcp_flags::kRst)) FUZZ_CHECK(len == 0);
        FUZZ_CHECK(h.src_port == conn->config().local_port);
        if (!(h.flags & net::tcp_flags::kRst)) check_sequence_numbers(h, stream_offset, len);
        FUZZ_CHECK(h.sack_blocks.size() <= 4);
        FUZZ_CHECK(h.options_size() <= 40);
        if (h.mss || !h.sack_blocks.empty()) check_encoding(h);
    }

    void deliver(const std::uint8_t* data, std::size_t len) override {
        FUZZ_CHECK(len > 0 && data != nullptr);
        // receive_stream_delivered() counts what was delivered before this call.
        const std::uint32_t first = conn->irs() + 1 + static_cast<std::uint32_t>(conn->receive_stream_delivered());
        for (std::size_t i = 0; i < len; ++i)
            FUZZ_CHECK(data[i] == tf::stream_byte(first + static_cast<std::uint32_t>(i)));
        delivered_total += len;
    }

    void acked(std::uint64_t acked_offset) override {
        FUZZ_CHECK(acked_offset > last_acked);
        FUZZ_CHECK(acked_offset == conn->send_stream_acked());
        FUZZ_CHECK(acked_offset <= conn->send_stream_queued());
        last_acked = acked_offset;
    }

    void state_changed(tcp::state from, tcp::state to) override {
        if (kTrace) std::fprintf(stderr, "  state %s -> %s\n", tcp::to_string(from), tcp::to_string(to));
        FUZZ_CHECK(from != to && from == last_state && to == conn->state());
        last_state = to;
        if (to == tcp::state::closed || to == tcp::state::listen || to == tcp::state::syn_sent) have_edge_ = false;
    }

private:
    // A segment's sequence number matches the stream offset it carries; its acknowledgment is
    // the next byte expected (or that plus a received FIN); the right edge of the receive window
    // it announces never moves left (RFC 9293 §3.8.6.2.2), up to the rounding of window scaling.
    // SYN-ACKs are left out of the last check: their window is never scaled (RFC 7323 §2.2), so a
    // retransmitted one may well announce less than a scaled ACK did before it.
    void check_sequence_numbers(const net::tcp_header& h, std::uint64_t stream_offset, std::size_t len) {
        if (len > 0) FUZZ_CHECK(h.seq == conn->iss() + 1 + static_cast<std::uint32_t>(stream_offset));
        if (!(h.flags & net::tcp_flags::kAck)) return;
        const std::uint32_t expected = conn->irs() + 1 + static_cast<std::uint32_t>(conn->receive_stream_delivered());
        FUZZ_CHECK(h.ack - expected <= 1);
        if (h.flags & net::tcp_flags::kSyn) return;
        const unsigned shift = conn->receive_window_shift();
        const std::uint32_t edge = h.ack + (static_cast<std::uint32_t>(h.window) << shift);
        if (have_edge_) {
            const std::uint32_t slack = (1u << shift) - 1;
            FUZZ_CHECK(static_cast<std::int32_t>(edge + slack - edge_) >= 0);
            if (static_cast<std::int32_t>(edge - edge_) > 0) edge_ = edge;
        } else {
            edge_ = edge;
            have_edge_ = true;
        }
    }

    bool have_edge_ = false;
    std::uint32_t edge_ = 0;  // right edge of the receive window announced so far
    static void check_encoding(const net::tcp_header& h) {
        std::vector<std::uint8_t> frame;
        net::build_tcp_frame(net::endpoints{}, net::ipv4_header{}, h, nullptr, 0, frame);
        const auto p = net::parse_tcp_frame(frame.data(), frame.size(), nullptr);
        FUZZ_CHECK(p && p->tcp.seq == h.seq && p->tcp.ack == h.ack && p->tcp.flags == h.flags && p->tcp.mss == h.mss &&
                   p->tcp.window_scale == h.window_scale && p->tcp.sack_permitted == h.sack_permitted &&
                   p->tcp.sack_blocks.size() == h.sack_blocks.size());
    }
};

tcp::config read_config(fuzz_input& in) {
    tcp::config cfg;
    const std::uint16_t bits = in.u16();
    cfg.local_port = tf::kLocalPort;
    cfg.remote_port = (bits & tf::kCfgAnyRemotePort) ? 0 : tf::kRemotePort;
    cfg.sack = (bits & tf::kCfgSack) != 0;
    cfg.window_scaling = (bits & tf::kCfgNoWindowScaling) == 0;
    cfg.owner_consumes = (bits & tf::kCfgOwnerConsumes) != 0;
    cfg.one_boundary_per_segment = (bits & tf::kCfgOneBoundary) != 0;
    cfg.delayed_ack_ns = (bits & tf::kCfgDelayedAck) ? 200'000 : 0;
    cfg.iss = in.u32();
    cfg.mss = static_cast<std::uint16_t>(1 + in.u16() % 9000);
    cfg.send_buffer = 1 + std::uint32_t{in.u16()} * 4;
    cfg.receive_buffer = 1 + std::uint32_t{in.u16()} * 4;
    cfg.window_scale = in.u8();  // the Connection clamps it to 14
    cfg.initial_window_segments = 1 + in.u8() % 16;
    cfg.dupack_threshold = in.u8() % 8;  // 0 is raised to 1 by the Connection
    cfg.max_retransmits = in.u8() % 20;
    cfg.rto_min_ns = 1000 * (std::uint64_t{in.u8()} + 1);
    cfg.rto_initial_ns = 1'000'000;
    cfg.rto_max_ns = 1'000'000'000;
    cfg.time_wait_ns = 1000 * std::uint64_t{in.u8()};
    return cfg;
}

class driver {
public:
    driver(const tcp::config& cfg) : conn_(cfg, env_) { env_.conn = &conn_; }

    void run(fuzz_input& in) {
        for (std::size_t ops = 0; ops < kMaxOps && !in.empty(); ++ops) {
            step(in);
            check();
        }
        // Let the timers run out: retransmissions up to the limit, TIME-WAIT, persist probes.
        for (std::size_t k = 0; k < 64 && conn_.next_deadline() != UINT64_MAX; ++k) {
            now_ = std::max(now_, conn_.next_deadline());
            conn_.on_timer(now_);
            check();
        }
    }

private:
    void step(fuzz_input& in) {
        const unsigned op = in.u8() % tf::k_op_count;
        if (kTrace) std::fprintf(stderr, "op %u at t=%llu\n", op, static_cast<unsigned long long>(now_));
        switch (op) {
        case tf::k_connect:
            conn_.connect(now_);
            env_.last_acked = conn_.send_stream_acked();
            break;
        case tf::k_listen:
            conn_.listen();
            env_.last_acked = conn_.send_stream_acked();
            break;
        case tf::k_segment:
            segment(in);
            break;
        case tf::k_time: {
            const std::uint8_t kind = in.u8();
            const std::uint64_t amount = in.u16();
            if (kind & 1) {
                if (conn_.next_deadline() != UINT64_MAX) now_ = std::max(now_, conn_.next_deadline());
            } else {
                now_ += amount << ((kind >> 1) & 31);
            }
            for (std::size_t k = 0; k < kMaxTimerRounds && conn_.next_deadline() <= now_; ++k) {
                conn_.on_timer(now_);
            }
            break;
        }
        case tf::k_send: {
            const std::size_t len = in.u16();
            const bool mark = in.flag();
            const std::uint64_t queued = conn_.send_stream_queued();
            const std::size_t n = std::min(len, conn_.send_space());
            if (mark && n > 0) conn_.mark_boundary(queued + n);
            conn_.on_send_data(now_, len);
            FUZZ_CHECK(conn_.send_stream_queued() == queued + n);
            break;
        }
        case tf::k_close:
            conn_.close(now_);
            break;
        case tf::k_abort:
            conn_.abort(now_);
            FUZZ_CHECK(conn_.state() == tcp::state::closed);
            break;
        case tf::k_consume:
            conn_.receive_consumed(now_, in.u16());
            break;
        case tf::k_cork:
            conn_.set_cork(now_, in.flag());
            break;
        case tf::k_set_iss:
            conn_.set_iss(in.u32());
            break;
        case tf::k_one_boundary:
            conn_.set_one_boundary_per_segment(in.flag());
            break;
        case tf::k_mark_boundary: {
            const std::int64_t at = static_cast<std::int64_t>(conn_.send_stream_queued()) + in.i16();
            conn_.mark_boundary(static_cast<std::uint64_t>(std::max<std::int64_t>(at, 0)));
            break;
        }
        default:
            break;
        }
    }

    void segment(fuzz_input& in) {
        net::tcp_header h;
        h.flags = in.u8();
        const std::uint8_t mode = in.u8();
        const std::uint32_t rcv_base = conn_.irs() + 1 + static_cast<std::uint32_t>(conn_.receive_stream_delivered());
        const std::uint32_t snd_base = conn_.iss() + 1 + static_cast<std::uint32_t>(conn_.send_stream_sent());
        h.seq = (mode & tf::kSeqAbsolute) ? in.u32() : rcv_base + static_cast<std::uint32_t>(in.i16());
        h.ack = (mode & tf::kAckAbsolute) ? in.u32() : snd_base + static_cast<std::uint32_t>(in.i16());
        h.window = in.u16();
        h.src_port = (mode & tf::kWrongSrcPort) ? tf::kRemotePort + 1 : tf::kRemotePort;
        h.dst_port = (mode & tf::kWrongDstPort) ? tf::kLocalPort + 1 : tf::kLocalPort;
        if (mode & tf::kHasOptions) {
            const std::uint8_t opts = in.u8();
            if (opts & tf::kOptMss) h.mss = in.u16();
            if (opts & tf::kOptWindowScale) h.window_scale = in.u8();
            h.sack_permitted = (opts & tf::kOptSackPermitted) != 0;
            if (opts & tf::kOptTimestamps) {
                const std::uint32_t tsval = in.u32();
                h.timestamps = std::make_pair(tsval, in.u32());
            }
            const std::uint32_t acked_base = conn_.iss() + 1 + static_cast<std::uint32_t>(conn_.send_stream_acked());
            for (unsigned b = 0; b < ((opts >> tf::kOptSackBlockShift) & 7u); ++b) {
                const std::uint32_t left = acked_base + static_cast<std::uint32_t>(in.i16());
                h.sack_blocks.push_back({left, left + in.u16()});
            }
        }
        const std::size_t len = in.u16() & 0x7FF;
        const bool syn = (h.flags & net::tcp_flags::kSyn) != 0;
        payload_.resize(len);
        for (std::size_t i = 0; i < len; ++i)
            payload_[i] = tf::stream_byte(h.seq + (syn ? 1u : 0u) + static_cast<std::uint32_t>(i));
        const std::uint8_t* p = (mode & tf::kNullPayload) ? nullptr : payload_.data();
        if (kTrace) trace_header("receive", h, len);
        conn_.on_segment(now_, h, len == 0 ? nullptr : p, len);
    }

    void check() const {
        FUZZ_CHECK(conn_.state() == env_.last_state);
        FUZZ_CHECK(conn_.send_stream_acked() <= conn_.send_stream_sent());
        FUZZ_CHECK(conn_.send_stream_sent() <= conn_.send_stream_queued());
        FUZZ_CHECK(conn_.stats().bytes_delivered == env_.delivered_total);
        FUZZ_CHECK(conn_.out_of_order_bytes() <= conn_.config().receive_buffer);
        FUZZ_CHECK(conn_.send_stream_queued() - conn_.send_stream_acked() + conn_.send_space() <=
                   std::max<std::uint64_t>(conn_.config().send_buffer,
                                           conn_.send_stream_queued() - conn_.send_stream_acked()));
    }

    harness env_;
    tcp::connection conn_;
    std::uint64_t now_ = 1;
    std::vector<std::uint8_t> payload_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz_input in(data, size);
    const tcp::config cfg = read_config(in);
    driver driver(cfg);
    driver.run(in);
    return 0;
}
