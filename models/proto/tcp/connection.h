// The TCP connection state machine (RFC 9293) with the sender and receiver algorithms a TCP offload
// engine needs: sliding window and window scaling (RFC 7323), MSS negotiation, SACK generation
// (RFC 2018), slow start / congestion avoidance (RFC 5681) with NewReno fast recovery (RFC 6582)
// or, opt-in, SACK-based loss recovery (RFC 6675),
// retransmission timer (RFC 6298), delayed ACK (RFC 1122 §4.2.3.2, RFC 5681 §4.2), zero-window
// persist, and FPDU-aligned segmentation for MPA (RFC 5044 §5).
//
// Plain C++, no SystemC and no clock of its own: every entry point takes the current time in
// nanoseconds, and the owner (the TOE model or a test harness) calls on_timer() at next_deadline().
// The Connection never stores send-stream payload: the owner keeps the stream, indexed by stream
// offset (0 = first data byte after the SYN), and supplies the bytes when Env::transmit asks for
// them. Only out-of-order received bytes are copied (into a ring of receive_buffer bytes allocated
// on the first out-of-order segment).
//
// Sequence numbers are tracked internally as 64-bit offsets from the ISN (send side) and IRS
// (receive side) and converted to 32-bit wire values mod 2^32 at the edges, so wrap-around is
// handled in one place.
//
// Threading / reentrancy: single-threaded. Env callbacks are made synchronously from inside the
// Connection's entry points and must not call back into the same Connection (queue the action and
// perform it after the entry point returns).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "proto/net.h"

namespace rnic::proto::tcp {

enum class state {
    closed,
    listen,
    syn_sent,
    syn_received,
    established,
    fin_wait_1,
    fin_wait_2,
    close_wait,
    closing,
    last_ack,
    time_wait
};
const char* to_string(tcp::state);

struct config {
    std::uint16_t local_port = 0, remote_port = 0;  // remote_port 0 while listening: taken from the SYN
    std::uint32_t iss = 0;                      // initial send sequence number (the model picks it from its seeded RNG)
    std::uint16_t mss = 1460;                   // MSS we announce (MTU - 40)
    std::uint32_t send_buffer = 256 * 1024;     // bytes of send stream that may be outstanding (unacked + unsent)
    std::uint32_t receive_buffer = 256 * 1024;  // our receive window (before scaling)
    std::uint8_t window_scale = 7;              // shift we offer (RFC 7323); used only if the peer offers too
    bool sack = false;                          // offer SACK-permitted; generate SACK blocks for out-of-order data
    std::uint64_t delayed_ack_ns =
        0;  // 0 = ACK every segment; else RFC 1122: ack at least every 2nd full segment or after this delay
    std::uint64_t rto_initial_ns = 1'000'000'000;  // RFC 6298 initial RTO
    std::uint64_t rto_min_ns = 200'000'000;
    std::uint64_t rto_max_ns = 60'000'000'000ULL;
    std::uint32_t initial_window_segments = 10;  // RFC 6928 IW
    std::uint32_t dupack_threshold = 3;
    std::uint64_t time_wait_ns = 1'000'000;  // short 2MSL for simulation

    // --- additions ---
    // Offer the window-scale option at all (false: never scale, windows are capped at 65535).
    bool window_scaling = true;
    // Receive-side flow control by the owner. false (default): delivered bytes are consumed at
    // once, so the window offered from RCV.NXT is the whole receive_buffer (out-of-order data held
    // for reassembly sits inside it). true: delivered bytes occupy the receive buffer until the
    // owner calls receive_consumed(), and the window shrinks accordingly (down to zero).
    bool owner_consumes = false;
    // Consecutive retransmission timeouts (SYN included) after which the connection is aborted
    // (RST sent, state closed; RFC 9293 §3.8.3 R2).
    std::uint32_t max_retransmits = 15;
    // One FPDU per segment: a segment ends at the first marked boundary after its start instead of
    // the last one that fits. MPA with markers wants this (RFC 5044 Appendix A's MPA-aware TCP),
    // and Wireshark's MPA dissector decodes marker streams only in that form.
    bool one_boundary_per_segment = false;
    // SACK-based loss recovery (RFC 6675) instead of NewReno: a scoreboard of the SACK blocks the
    // peer reports, loss detection by IsLost(), pipe estimation and NextSeg() while in recovery.
    // Takes effect only when SACK was negotiated (`sack` on both ends); otherwise NewReno is used.
    bool sack_recovery = false;
    // Explicit Congestion Notification (RFC 3168): offered in the SYN (ECE and CWR), accepted in
    // the SYN-ACK (ECE alone). Once negotiated, the owner marks new data ECT(0) (ecn_active()) and
    // reports CE-marked arrivals (on_segment's `ce`); the receiver echoes ECE until it sees CWR,
    // the sender halves its window once per window of data on ECE and sets CWR (§6.1.2, §6.1.3).
    bool ecn = false;
    // The most bytes beyond RCV.NXT the receiver can hold at this moment (a NIC's reassembly
    // memory: what it holds for this connection plus what is free). The window offered never
    // reaches past RCV.NXT + this, so the peer is not invited to send what would be dropped for want
    // of memory. It is asked each time a window is computed; the right edge still never moves back
    // (RFC 9293 §3.8.6: shrinking the window is strongly discouraged). Empty: no such limit.
    std::function<std::uint64_t()> receive_window_cap;
};

// What the connection needs from its owner (the TOE model). Payload bytes are NOT stored in the
// Connection: the owner keeps the send stream (indexed by stream offset, 0 = first data byte after
// the SYN) and frees bytes once acked; the Connection only tracks sequence numbers.
class env {
public:
    virtual ~env() = default;
    // Send a segment. Its payload is send-stream bytes [stream_offset, stream_offset+len) (len may be 0).
    virtual void transmit(const net::tcp_header& header, std::uint64_t stream_offset, std::size_t len) = 0;
    // In-order received bytes, exactly once each, in order.
    virtual void deliver(const std::uint8_t* data, std::size_t len) = 0;
    // All send-stream bytes below `acked_offset` are acknowledged (monotonic); the owner may free them.
    virtual void acked(std::uint64_t acked_offset) = 0;
    virtual void state_changed(tcp::state from, tcp::state to) = 0;
    // Whether the owner can take another new data segment now (a NIC that generates segments as
    // its link drains, instead of queueing the whole window in front of the link). When it says
    // no, output stops there and the owner calls on_transmit_ready() once it has room. Only new
    // data sent by output() asks: ACKs, fast retransmissions, SACK recovery and timeouts go at once.
    virtual bool may_transmit() { return true; }
};

struct stats {
    std::uint64_t segments_sent = 0;        // every segment handed to Env::transmit (RSTs included)
    std::uint64_t segments_received = 0;    // every call of on_segment
    std::uint64_t bytes_sent = 0;           // payload bytes transmitted, retransmissions included
    std::uint64_t bytes_retransmitted = 0;  // the part of bytes_sent that had been sent before
    std::uint64_t bytes_delivered = 0;      // bytes passed to Env::deliver
    std::uint64_t retransmit_timeouts = 0;
    std::uint64_t fast_retransmits = 0;  // entries into fast retransmit / fast recovery
    std::uint64_t dupacks_received = 0;
    std::uint64_t out_of_order_segments = 0;  // segments (partly) held for reassembly
    std::uint64_t duplicate_segments = 0;     // segments carrying only already-received data
    std::uint64_t acks_sent = 0;              // pure ACKs (no data, no SYN/FIN/RST), window updates included
    std::uint64_t bad_segments = 0;           // dropped per RFC 9293 §3.10.7 / RFC 5961
    // --- additions ---
    std::uint64_t window_probes = 0;  // zero-window probes sent by the persist timer
    std::uint64_t rsts_sent = 0;
    // RFC 3168.
    std::uint64_t ecn_ce_received = 0;      // segments that arrived marked CE
    std::uint64_t ecn_ece_received = 0;     // ACKs with ECE while ECN was in use
    std::uint64_t ecn_cwnd_reductions = 0;  // window reductions for ECE (at most one per window)
    std::uint64_t ecn_cwr_sent = 0;         // segments sent with CWR
};

namespace detail {
// Growable ring of ascending stream offsets (FPDU ends not yet acknowledged). Capacity doubles
// when full and is kept, so steady-state operation does not allocate.
class offset_queue {
public:
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    std::uint64_t at(std::size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }
    std::uint64_t back() const { return at(size_ - 1); }
    void push_back(std::uint64_t v);
    void pop_front();
    void clear() { head_ = size_ = 0; }
    // Largest element in (lo, hi], or 0 when there is none.
    std::uint64_t last_in(std::uint64_t lo, std::uint64_t hi) const;
    // Smallest element in (lo, hi], or 0 when there is none.
    std::uint64_t first_in(std::uint64_t lo, std::uint64_t hi) const;

private:
    std::vector<std::uint64_t> buf_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};
}  // namespace detail

class connection {
public:
    connection(const tcp::config& cfg, env& env);

    // Opening. Both only act in CLOSED. A Connection may be opened again after it closed: the
    // send stream then restarts at offset 0 (data appended before the first open is kept); give
    // it a fresh ISS with set_iss() first (stats() keep accumulating).
    void connect(std::uint64_t now_ns);  // active open: sends SYN (with MSS, WS, SACK-permitted options)
    void listen();                       // passive open
    void set_iss(std::uint32_t iss);     // CLOSED only: the ISS for the next connect()/listen()
    // `ce`: the segment's IP header carried Congestion Experienced (RFC 3168 §5).
    void on_segment(std::uint64_t now_ns, const net::tcp_header& h, const std::uint8_t* payload, std::size_t len,
                    bool ce = false);
    // The owner appended `len` bytes to its send stream (only while send_space() >= len; any
    // excess is ignored). Data may be queued before the connection is established; it is sent
    // once it is. Ignored after close().
    void on_send_data(std::uint64_t now_ns, std::size_t len);
    std::size_t send_space() const;    // bytes the owner may still append
    void close(std::uint64_t now_ns);  // FIN after all queued data
    void abort(std::uint64_t now_ns);  // RST
    std::uint64_t next_deadline()
        const;  // earliest pending timer (RTO, delayed ACK, persist, TIME-WAIT), UINT64_MAX if none
    void on_timer(std::uint64_t now_ns);  // handle every timer expired at now_ns

    // FPDU-aligned segmentation (RFC 5044 §5). The owner calls mark_boundary(end) with the stream
    // offset just past each FPDU (= the stream length after appending it), before or right after
    // the on_send_data() that appends it; offsets must increase, out-of-order or already-acked
    // ones are ignored. Whenever at least one marked boundary lies in (start, start + MSS] of a
    // segment being built, the segment ends at the last such boundary (so an FPDU that fits in a
    // segment is never split, and several small FPDUs share one segment); otherwise the segment
    // is filled to the MSS (FPDU larger than the MSS) or ends at the end of the queued data (which
    // the owner only ever extends by whole FPDUs). When the peer's receive window is the limit,
    // the segment is cut at the last boundary inside the window; if there is none (or cwnd is the
    // limit) it waits for the window to open while data is in flight (sender SWS avoidance), and
    // only with nothing in flight does it send what fits, splitting the FPDU rather than stall.
    // Retransmissions start at snd_una (always a segment start) and follow the same rule, so they
    // are aligned too. Exception: a zero-window probe carries a single byte. Each boundary costs
    // 8 bytes until acknowledged (a ring that grows by doubling, no per-segment allocation).
    // Since each on_send_data() transmits at once what the window allows, an owner appending one
    // FPDU at a time into a full window gets one FPDU per segment; to pack small FPDUs it appends
    // them under set_cork().
    void mark_boundary(std::uint64_t stream_offset);
    // Switches Config::one_boundary_per_segment (MPA decides on markers after the handshake).
    void set_one_boundary_per_segment(bool on) { cfg_.one_boundary_per_segment = on; }

    // Corking: while corked, nothing new is sent (no data from on_send_data, nor from ACKs that
    // open the window; ACKs, fast retransmissions and timeouts still go out), so the owner can
    // append a batch of FPDUs with their boundaries and have them segmented together when it
    // uncorks. Meant to be held only for the duration of such a batch.
    void set_cork(std::uint64_t now_ns, bool corked);
    // The owner has room again after Env::may_transmit() said no: output resumes.
    void on_transmit_ready(std::uint64_t now_ns);

    // Receive flow control (Config::owner_consumes only): the owner has consumed `len` more
    // delivered bytes; sends a window update when the window opened enough (RFC 1122 SWS rule).
    void receive_consumed(std::uint64_t now_ns, std::size_t len);

    tcp::state state() const { return state_; }
    const tcp::stats& stats() const { return stats_; }
    std::uint64_t bytes_in_flight() const;  // sequence space sent and not yet acknowledged (snd_nxt - snd_una)
    std::uint32_t cwnd() const;
    std::uint32_t effective_mss() const { return mss_; }            // after negotiation
    std::uint64_t send_stream_acked() const { return acked_off_; }  // == last value passed to Env::acked
    std::uint64_t send_stream_sent() const;                         // highest stream offset ever transmitted

    // --- additions: introspection for the model's statistics and for tests ---
    const tcp::config& config() const { return cfg_; }
    std::uint64_t send_stream_queued() const { return stream_end_; }  // total bytes appended by the owner
    std::uint64_t send_window() const { return snd_wnd_; }            // peer's receive window, scaled
    std::uint32_t ssthresh() const;
    std::uint64_t rto() const { return rto_; }    // current RTO including backoff
    std::uint64_t srtt() const { return srtt_; }  // 0 before the first sample
    std::uint64_t rttvar() const { return rttvar_; }
    bool in_fast_recovery() const { return in_recovery_; }
    bool window_scaling_enabled() const { return ws_ok_; }
    std::uint8_t send_window_shift() const { return snd_shift_; }     // peer's shift we apply to its windows
    std::uint8_t receive_window_shift() const { return rcv_shift_; }  // our shift applied to our window
    bool sack_enabled() const { return sack_ok_; }
    bool ecn_active() const { return ecn_ok_; }                        // negotiated: new data goes out ECT(0)
    bool sack_recovery_enabled() const { return sack_mode(); }         // tcp::Config::sack_recovery and SACK negotiated
    std::size_t sack_scoreboard_blocks() const { return sb_.size(); }  // SACKed ranges above SND.UNA
    std::uint64_t sack_pipe() const;  // RFC 6675 SetPipe() now (0 unless sack_recovery_enabled())
    std::uint16_t remote_port() const { return remote_port_; }
    std::uint32_t iss() const { return cfg_.iss; }
    std::uint32_t irs() const { return irs_; }
    std::uint64_t receive_stream_delivered() const { return rcv_delivered_; }  // this connection's
    std::uint64_t receive_window() const;    // window currently advertised (rcv_adv - rcv_nxt)
    std::size_t out_of_order_bytes() const;  // bytes held for reassembly
    // The out-of-order bytes held for reassembly, in receive-stream offsets (0: the first byte
    // after the SYN), for an owner that assembles frames split across segments (RFC 5044
    // Appendix A: markers let a receiver find FPDUs in out-of-order data). held_run_start(at): the
    // start of the held run that reaches `at` from below (`at` when none does); held_run_end(at):
    // the end of the held run that starts at or before `at` and goes past it (`at` when none);
    // copy_held copies [from, to) when it is held in one run, else returns false.
    std::uint64_t held_run_start(std::uint64_t at) const;
    std::uint64_t held_run_end(std::uint64_t at) const;
    bool copy_held(std::uint64_t from, std::uint64_t to, std::uint8_t* out) const;

private:
    using u64 = std::uint64_t;
    using s64 = std::int64_t;
    static constexpr u64 kNever = UINT64_MAX;
    static constexpr std::size_t kMaxSackBlocks = 4;     // no timestamps: 4 blocks fit in 40 bytes
    static constexpr std::size_t kMaxOooIntervals = 64;  // reassembly holes we track at most
    static constexpr std::size_t kMaxScoreboard = 256;   // SACKed ranges the sender tracks at most

    struct interval {
        u64 start;  // sequence offsets (from IRS for received data, from ISS in the SACK scoreboard)
        u64 end;
    };

    void reset_sequence_state();
    void reset_stream_state();
    void set_state(tcp::state s);
    void enter_closed();
    void enter_time_wait(u64 now);
    bool sending_state() const;
    bool synchronized() const;
    bool fin_acked() const;

    // segment processing
    void segment_closed(const net::tcp_header& h, std::size_t len);
    void segment_listen(u64 now, const net::tcp_header& h);
    void segment_syn_sent(u64 now, const net::tcp_header& h);
    void segment_synchronized(u64 now, const net::tcp_header& h, const std::uint8_t* payload, std::size_t len);
    void negotiate(const net::tcp_header& syn);
    bool process_ack(u64 now, const net::tcp_header& h, s64 seg_seq, bool may_dup, bool bare);
    void on_new_ack(u64 now, u64 ack);
    u64 reduced_ssthresh() const;  // RFC 5681 eq. (4)
    void on_dupack(u64 now);
    bool receive_data(u64 now, u64 start, const std::uint8_t* data, std::size_t len);
    void receive_fin(u64 now);
    bool store_out_of_order(u64 start, const std::uint8_t* data, std::size_t len);
    void deliver_in_order_from_ring();
    void note_sack_arrival(u64 start);

    // SACK-based loss recovery (RFC 6675); only used when sack_mode().
    bool sack_mode() const { return cfg_.sack_recovery && sack_ok_; }
    bool sack_update(const net::tcp_header& h, u64 una);  // Update(): true when new data was SACKed
    void sack_trim();                                     // drop scoreboard ranges below SND.UNA
    bool sack_hole_lost(std::size_t above) const;         // IsLost() for a hole below sb_[above]
    bool sack_is_lost(u64 seq) const;                     // IsLost(seq) for an unSACKed seq
    void sack_dupack(u64 now);                            // §5 steps (1)-(4) on a duplicate ACK
    void sack_transmit(u64 now);                          // §5 step (C): NextSeg() while cwnd - pipe >= SMSS
    u64 sack_hole_end(u64 s) const;                       // start of the first SACKed range above s (or snd_max)
    u64 sack_resend(u64 now, u64 s, u64 cap);             // FPDU-aligned segment from s, below cap; returns its end

    // sending
    void output(u64 now);
    u64 segment_end(u64 start, u64 data_end, u64 limit, bool peer_limited) const;
    void send_data_segment(u64 now, u64 start, u64 end, bool fin, bool arm = true);
    void retransmit_first(u64 now);
    void send_syn(u64 now);
    void send_ack(u64 now);
    void send_rst(std::uint16_t dst_port, std::uint32_t seq, std::uint32_t ack, bool with_ack);
    void fill_header(bool with_ack);
    std::uint16_t advertise_window();
    u64 receive_space() const;
    void ack_sent();
    void finish(u64 now);
    void send_probe(u64 now);

    // timers and RTT
    void on_rto(u64 now);
    void rtt_sample(u64 rtt);
    u64 persist_interval() const;
    void arm_rto(u64 now);

    std::uint32_t wire_seq(u64 sseq) const { return cfg_.iss + static_cast<std::uint32_t>(sseq); }
    std::uint32_t wire_ack() const { return irs_ + static_cast<std::uint32_t>(rcv_nxt_); }
    s64 unwrap_ack(std::uint32_t ack) const;
    s64 unwrap_seq(std::uint32_t seq) const;
    u64 data_end() const { return 1 + stream_end_; }  // send sequence offset just past the queued data

    tcp::config cfg_;
    env& env_;
    tcp::state state_ = tcp::state::closed;
    tcp::stats stats_;
    bool passive_ = false;
    bool opened_ = false;  // connect() or listen() was called before
    std::uint16_t remote_port_ = 0;

    // Send side, in sequence offsets from the ISS (0 = SYN, 1 + k = stream byte k, FIN after the data).
    u64 snd_una_ = 0, snd_nxt_ = 0, snd_max_ = 0;
    u64 stream_end_ = 0;  // stream bytes appended by the owner
    u64 acked_off_ = 0;   // stream bytes acknowledged (reported to Env::acked)
    bool fin_queued_ = false;
    bool corked_ = false;
    bool waiting_for_owner_ = false;  // output stopped because Env::may_transmit() said no
    u64 snd_wnd_ = 0, max_snd_wnd_ = 0;
    s64 snd_wl1_ = 0, snd_wl2_ = 0;
    std::uint8_t snd_shift_ = 0, rcv_shift_ = 0;
    bool ws_ok_ = false, sack_ok_ = false;
    std::uint32_t mss_;
    detail::offset_queue boundaries_;

    // Congestion control
    u64 cwnd_ = 0, ssthresh_ = 0, ca_acc_ = 0;
    std::uint32_t dupacks_ = 0;
    bool in_recovery_ = false, first_partial_ = false;
    u64 recover_ = 0;
    // RFC 3168: negotiated; receiver echoing ECE until CWR; sender owes a CWR; no second
    // reduction until SND.UNA passes ecn_recover_ (one per window of data).
    bool ecn_ok_ = false, ece_pending_ = false, cwr_pending_ = false;
    u64 ecn_recover_ = 0;

    // RFC 6675 sender state (sequence offsets, half-open ranges).
    std::vector<interval> sb_;  // SACKed ranges above snd_una_, sorted, disjoint, not adjacent
    u64 high_rxt_ = 0;          // end of the highest range retransmitted in this recovery (HighRxt + 1)
    u64 rescue_rxt_ = 0;        // RescueRxt + 1

    // RTT / RTO
    bool rtt_active_ = false;
    u64 rtt_seq_ = 0, rtt_start_ = 0;
    u64 srtt_ = 0, rttvar_ = 0, rto_;
    std::uint32_t rexmit_count_ = 0;  // consecutive timeouts without new data acknowledged
    bool syn_lost_ = false;

    // Timers (absolute ns, kNever when off)
    u64 rto_deadline_ = kNever, delack_deadline_ = kNever, persist_deadline_ = kNever, tw_deadline_ = kNever;
    std::uint32_t persist_backoff_ = 0;
    u64 last_send_ = 0;  // time of the last segment carrying data, SYN or FIN
    bool probe_outstanding_ = false;

    // Receive side, in sequence offsets from the IRS (0 = peer's SYN, 1 + k = stream byte k).
    std::uint32_t irs_ = 0;
    u64 rcv_nxt_ = 0, rcv_adv_ = 0;
    u64 unconsumed_ = 0;
    u64 rcv_delivered_ = 0;  // stream bytes delivered on this connection
    bool ack_now_ = false;
    std::uint32_t delack_segs_ = 0;
    bool fin_pending_ = false;  // FIN received beyond a gap
    u64 fin_rseq_ = 0;
    std::vector<std::uint8_t> ooo_buf_;  // ring indexed by receive offset mod size
    std::vector<interval> ooo_;          // held out-of-order ranges, sorted, disjoint, > rcv_nxt_
    std::array<u64, kMaxSackBlocks> sack_recent_{};
    std::size_t sack_recent_n_ = 0;

    net::tcp_header hdr_;  // reused for every transmitted segment (keeps its SACK vector's capacity)
};

}  // namespace rnic::proto::tcp
