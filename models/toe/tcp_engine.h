// TCP offload engine. Wraps one proto::tcp::Connection per connection with the NIC's timing:
//  - stream_tx_in  <- FPDUs (or raw MPA negotiation bytes) from the framing unit, appended to the
//                     connection's send stream, which lives in NIC buffer memory (buf_out) until acked
//  - eth_tx        -> Ethernet/IPv4/TCP frames with valid checksums, to the link
//  - eth_rx        <- frames from the link; checksums verified, in-order bytes go out on stream_rx_out;
//                     ARP requests for the station's address are answered (RFC 826)
//  - stream_rx_out -> in-order receive bytes to the framing unit
// Per-segment processing costs on separate transmit and receive pipelines; timers (RTO, delayed ACK,
// TIME-WAIT) in simulated time with one event for the engine.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tuple>
#include <vector>

#include "buffer/buffer_memory.h"
#include "framing/framing.h"
#include "framing/framing_if.h"
#include "core/stats.h"
#include "core/timed_resource.h"
#include "proto/net.h"
#include "proto/tcp/connection.h"
#include "toe/placement_backlog.h"
#include "toe/reassembly.h"
#include "toe/toe_if.h"
#include "toe/tx_schedule.h"

namespace rnic {

struct tcp_engine_params {
    double clock_hz = 500e6;
    double tx_cycles_per_segment = 40;  // header build, checksum offload, scheduling
    // Cycles between the starts of two frames in the transmit pipeline (its initiation interval);
    // 0: tx_cycles_per_segment, i.e. one frame in the pipeline at a time.
    double tx_interval_cycles = 0;
    // How the transmit pipeline and the engine's record of its wire serve frames booked out of time
    // order (a frame built for an append ahead in local time, then one built on a wake-up at kernel
    // time): in call order the later call waits behind the earlier booking, leaving the gap idle;
    // in time order it takes the gap (docs/architecture.md, "Segments built as the link drains").
    booking tx_order = booking::in_order;
    double rx_cycles_per_segment = 50;  // parse, checksum check, lookup, state update
    std::uint32_t mtu = 1500;
    std::uint32_t send_buffer = 256 * 1024;
    std::uint32_t receive_buffer = 256 * 1024;
    // The receive window offered never reaches past what the reassembly memory can hold for the
    // connection: the out-of-order bytes it holds now plus the memory free (a NIC does not invite
    // data it would have to drop). Off: the window is receive_buffer whatever the memory.
    bool clamp_window_to_reassembly = false;
    std::uint8_t window_scale = 7;
    bool sack = false;
    bool sack_recovery = false;  // RFC 6675 SACK-based loss recovery (only with SACK negotiated)
    bool ecn = false;            // RFC 3168 ECN: negotiate, mark new data ECT(0), react to ECE, echo CE
    sc_core::sc_time delayed_ack = sc_core::SC_ZERO_TIME;
    sc_core::sc_time rto_initial = sc_core::sc_time(1, sc_core::SC_MS);
    sc_core::sc_time rto_min = sc_core::sc_time(200, sc_core::SC_US);
    std::uint32_t initial_window_segments = 10;
    std::uint32_t max_connections = 64;
    std::uint64_t seed = 1;  // initial sequence numbers
    // Where retransmitted bytes come from: the send stream kept in NIC buffer memory until acked
    // (false), or host memory, fetched again by DMA and re-framed, so NIC buffer holds transmit data
    // only until it has been sent once (true; seed 001 §5.3 weighs the two).
    bool retransmit_from_host = false;
    // ARP (RFC 826) for neighbours without a static entry: frames to an unresolved address wait (at
    // most arp_queue_frames per address, the oldest dropped beyond) while a request goes out, repeated
    // at most once per arp_retry when more frames come (TCP's retransmissions keep asking).
    sc_core::sc_time arp_retry = sc_core::sc_time(1, sc_core::SC_MS);  // Linux: retrans_time 1 s; a NIC asks sooner
    std::uint32_t arp_queue_frames = 16;  // Linux: unres_qlen_bytes 212992 (~140 full frames)
    // Ingress: frames wait for the receive pipeline (rx_cycles_per_segment each) in an on-chip FIFO
    // of rx_ingress_frames frames (0: unbounded, the pipeline only delays) and, when that is full,
    // in NIC buffer memory up to rx_ingress_buffer bytes; a frame finding both full is dropped
    // (seed 001 §5.3: bursts of small packets against the packet-processing rate).
    std::uint32_t rx_ingress_frames = 0;
    std::uint64_t rx_ingress_buffer = 0;
    // Bytes handed on for placement (in-order delivery to the framing unit, then DMA writes over the
    // host bus) that may still be on their way to host memory before the receive pipeline waits for
    // room (toe/placement_backlog.h). 0: unbounded, the receive side never feels its host bus.
    std::uint64_t rx_placement_backlog = 0;
    // MAC flow control (IEEE 802.3 Annex 31B PAUSE, 802.1Qbb PFC priority 0): a received pause stops
    // transmission for its quanta x 512 bit times at line_rate_bps. Off, MAC control frames are
    // dropped as bad frames (a port without flow control negotiated).
    bool honour_pause = false;
    double line_rate_bps = 100e9;
    // Segment generation paced by the link: new data segments are built only while fewer than
    // tx_ahead_frames frames wait for the wire or are on it, so a retransmission never queues behind
    // a whole window and unsent data stays unsent (in the send stream) rather than in flight.
    // 0: every segment the windows allow is built at once and queued in front of the link.
    std::uint32_t tx_ahead_frames = 0;
};

struct tcp_station {
    proto::net::mac_address mac{};
    std::uint32_t ip = 0;
};

class tcp_engine : public sc_core::sc_module, public toe_ctl_if, public stats_reporter {
public:
    tlm_utils::simple_target_socket<tcp_engine> stream_tx_in;
    tlm_utils::simple_initiator_socket<tcp_engine> stream_rx_out;
    tlm_utils::simple_initiator_socket<tcp_engine> eth_tx;
    tlm_utils::simple_target_socket<tcp_engine> eth_rx;
    tlm_utils::simple_initiator_socket<tcp_engine> buf_out;
    tlm_utils::simple_initiator_socket<tcp_engine> dma_out;  // host memory, for retransmit_from_host
    sc_core::sc_export<toe_ctl_if> ctl_in;
    sc_core::sc_port<toe_conn_events_if> conn_events_out;
    sc_core::sc_port<toe_tx_progress_if> tx_progress_out;
    sc_core::sc_port<framer_ooo_if> ooo_out;     // out-of-order segments offered for direct placement
    sc_core::sc_export<reassembly_if> reasm_in;  // the framer records what it placed (reassembly_)

    // `framing` (the device's) re-frames retransmissions from host memory; it outlives the engine.
    tcp_engine(const sc_core::sc_module_name& name, const tcp_engine_params& params, buffer_memory& buffer,
               const framing& framing);
    ~tcp_engine() override;

    void set_station(const tcp_station& st) { station_ = st; }
    // Static neighbour entry (IPv4 -> MAC): used as is, never replaced by ARP. Other neighbours are
    // resolved with ARP requests and learnt from ARP traffic addressed to the station.
    void add_neighbour(std::uint32_t ip, const proto::net::mac_address& mac) { neighbours_[ip] = {mac, true}; }

    // toe_ctl_if
    int tcp_connect(const tcp_open_params& p) override;
    bool tcp_listen(std::uint16_t port) override;
    bool tcp_unlisten(std::uint16_t port) override;
    void tcp_close(std::uint32_t conn) override;
    void tcp_abort(std::uint32_t conn) override;
    void tcp_release(std::uint32_t conn) override;
    std::uint64_t tcp_send_stream_end(std::uint32_t conn) const override;
    std::size_t tcp_send_space(std::uint32_t conn) const override;
    std::uint16_t tcp_effective_mss(std::uint32_t conn) const override;
    tcp_addresses tcp_addresses_of(std::uint32_t conn) const override;
    std::uint16_t tcp_local_port(std::uint32_t conn) const override;
    void tcp_one_fpdu_per_segment(std::uint32_t conn, bool on) override;
    void tcp_mark_urgent(std::uint32_t conn) override;
    std::uint64_t tx_refetch_failures() const { return tx_refetch_failures_; }
    std::uint64_t tcp_retransmitted_bytes() const override {
        return tx_retransmitted_from_buffer_ + tx_refetched_from_host_;
    }

    void report_stats(boost::json::object& out) const override;
    void report_diagnostics(boost::json::object& out) const override;
    // Connections not yet freed, and how many of them wait out TIME-WAIT.
    void count_live(std::uint32_t* live, std::uint32_t* time_wait) const;
    std::uint64_t frames() const { return tx_frames_ + rx_frames_; }  // progress, for the watchdog

private:
    class connection;
    friend class connection;

    void stream_tx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void eth_rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void timer_method();
    void transmit_segment(connection& c, const proto::net::tcp_header& header, std::uint64_t stream_offset,
                          std::size_t len);
    void reschedule_timer();
    // The earliest timer of every connection, kept in deadlines_ (deadline, id): re-indexed only for
    // the connections whose state machine was used since (note_touched), so the per-frame cost does
    // not grow with the number of connections.
    void note_touched(connection& c);
    void index_deadlines();
    std::set<std::pair<std::uint64_t, std::uint32_t>> deadlines_;
    std::vector<std::uint32_t> touched_;
    // Connections by (local port, remote port, remote address), in creation order.
    std::map<std::tuple<std::uint16_t, std::uint16_t, std::uint32_t>, std::vector<std::uint32_t>> by_tuple_;
    // Returns false when the segment must be dropped (no NIC buffer for its out-of-order bytes).
    bool admit_out_of_order(connection& c, const proto::net::parsed_tcp_frame& f, const std::uint8_t* payload,
                            sc_core::sc_time& delay);
    // Offers the framer the out-of-order run around an admitted segment, so that FPDUs split across
    // segments can be placed once their pieces are all held (markers, RFC 5044 Appendix A).
    void note_placed_out_of_order();
    void join_split_fpdus(connection& c, std::uint64_t seg, const std::uint8_t* payload, std::size_t len,
                          sc_core::sc_time& delay);
    std::vector<std::uint8_t> join_scratch_;
    // The connection table (tcp_engine_connections.cpp). Ids are slots: a connection closed and
    // released by its owner is freed and its id goes to the next connection opened.
    connection* create_connection(std::uint16_t local_port, std::uint32_t remote_ip, std::uint16_t remote_port);
    connection* find(std::uint32_t conn) const;  // nullptr for a free id
    void note_closed(connection& c);             // reached CLOSED: freed once released
    void free_closed_connections();              // at the end of each entry point (reschedule_timer)
    void free_connection(connection& c);
    boost::json::object connection_report(const connection& c) const;
    void report_connections(boost::json::object& out) const;
    std::set<std::uint32_t> free_ids_;
    std::vector<std::uint32_t> to_free_;
    std::uint32_t live_connections_ = 0;
    std::uint64_t connections_opened_ = 0, connections_freed_ = 0, table_full_refusals_ = 0, no_region_refusals_ = 0;
    // Freed connections' report entries by opening order (the first few hundred), and their sums.
    std::map<std::uint64_t, boost::json::object> closed_reports_;
    std::uint64_t closed_not_listed_ = 0, closed_peak_sum_ = 0, closed_tx_peak_sum_ = 0;
    std::uint64_t next_iss();
    void handle_arp(const std::uint8_t* frame, std::size_t len, sc_core::sc_time& delay);
    // Keeps a finished frame until `ip` is resolved (asking for it if not asked recently).
    void hold_for_arp(std::uint32_t ip, const std::vector<std::uint8_t>& frame, sc_core::sc_time& delay);
    // Hands a finished frame to the link (or the MAC's queue); `not_before`: the earliest it may start
    // on the wire (its connection's previous frame, with tx_order time); `decided`: the local time of
    // the call that built it (by default when it is ready). Returns when it starts, by the engine's
    // record (the ready time when the record is not kept).
    sc_core::sc_time send_frame(const std::uint8_t* frame, std::size_t len, std::uint32_t conn, sc_core::sc_time& delay,
                                const sc_core::sc_time& not_before = sc_core::SC_ZERO_TIME,
                                const sc_core::sc_time* decided = nullptr);
    // A reset for a segment that reaches no connection (RFC 9293 §3.10.7.1).
    void send_reset_for(const proto::net::parsed_tcp_frame& f, sc_core::sc_time& delay);
    std::uint64_t tx_resets_no_connection_ = 0;
    // Link-paced segment generation (tx_ahead_frames): whether the link has room for another new
    // segment at the connection's current time, remembering it as waiting when not.
    bool may_transmit(connection& c);
    // When the connection's next new segment is decided: its current time, and in time order not
    // before the segment's first byte was appended.
    sc_core::sc_time decision_time(const connection& c) const;
    // Books one frame through the transmit pipeline: `delay` advances to when it leaves it.
    void through_tx_pipeline(sc_core::sc_time& delay);
    std::size_t frames_ahead(const sc_core::sc_time& at) const;
    void schedule_tx_ready();
    void tx_ready_method();
    sc_core::sc_time wire_time(std::size_t frame_bytes) const;
    tx_schedule tx_wire_;                   // when each frame handed to the link is on the wire
    std::deque<std::uint32_t> tx_waiting_;  // connections waiting for room, served in turn
    sc_core::sc_event tx_ready_event_;
    std::uint64_t tx_paced_waits_ = 0;

    tcp_engine_params params_;
    buffer_memory& buffer_;
    reassembly reassembly_;  // every connection's out-of-order state (docs/architecture.md)
    const framing& framing_;
    tcp_station station_;
    struct neighbour {
        proto::net::mac_address mac{};
        bool is_static = false;
    };
    std::map<std::uint32_t, neighbour> neighbours_;
    struct unresolved {
        bool asked = false;
        sc_core::sc_time asked_at = sc_core::SC_ZERO_TIME;
        std::deque<std::vector<std::uint8_t>> frames;  // finished frames, destination MAC filled on reply
    };
    std::map<std::uint32_t, unresolved> unresolved_;
    std::uint64_t arp_requests_sent_ = 0, arp_replies_sent_ = 0, arp_requests_received_ = 0, arp_replies_received_ = 0,
                  arp_learned_ = 0, arp_held_frames_ = 0, arp_queue_drops_ = 0, rx_bad_arp_ = 0;
    std::vector<std::unique_ptr<connection>> conns_;
    std::vector<std::uint16_t> listen_ports_;
    // Ports that listened and were closed with tcp_unlisten: a SYN to one draws a reset, unlike a
    // SYN to a port that never listened (dropped, see eth_rx_b_transport).
    std::vector<std::uint16_t> unlistened_ports_;
    timed_resource tx_pipe_, rx_pipe_;
    // Frames admitted but not yet started by the receive pipeline, oldest first.
    struct ingress_entry {
        sc_core::sc_time start;  // when the pipeline takes it
        std::uint32_t bytes;
        bool spilled;  // waiting in buffer memory (the on-chip FIFO was full)
    };
    std::deque<ingress_entry> ingress_;
    std::uint64_t ingress_spilled_bytes_ = 0;
    struct ingress_stats {
        std::uint64_t drops = 0, spilled_frames = 0, peak_frames = 0, peak_spilled_bytes = 0;
    } ingress_stats_;
    // Admits a frame arriving at `arrival` into the ingress queue, or says it is dropped.
    bool admit_ingress(std::uint32_t bytes, const sc_core::sc_time& arrival);
    // Placements not yet landed in host memory; a frame enters the pipeline once they leave room.
    placement_backlog placing_;
    void wait_for_placement_room(sc_core::sc_time& delay);
    sc_core::sc_event timer_event_;
    sc_core::sc_time timer_at_ = sc_core::SC_ZERO_TIME;
    bool timer_armed_ = false;
    std::uint64_t rng_state_;
    std::vector<std::uint8_t> frame_scratch_;
    std::uint64_t rx_frames_ = 0, rx_bad_frames_ = 0, rx_no_connection_ = 0, tx_frames_ = 0, rx_wrong_mac_ = 0;
    // MAC flow control: no frame starts before paused_until_; the pause in force began at pause_began_.
    void handle_mac_control(const std::uint8_t* frame, std::size_t len, const sc_core::sc_time& arrival);
    // With flow control the MAC paces its own wire: each frame is handed to the link when its
    // transmission starts, so a pause holds every frame not yet started (802.3 Annex 31B).
    void mac_tx_method();
    void mac_schedule();
    struct held_frame {
        std::vector<std::uint8_t> bytes;
        std::uint32_t conn;
        sc_core::sc_time ready;  // when the engine finished it
    };
    std::deque<held_frame> mac_held_;
    sc_core::sc_time mac_wire_free_ = sc_core::SC_ZERO_TIME;  // end of the last frame's IFG
    sc_core::sc_event mac_tx_event_;
    sc_core::sc_time paused_until_ = sc_core::SC_ZERO_TIME, pause_began_ = sc_core::SC_ZERO_TIME;
    sc_core::sc_time paused_total_ = sc_core::SC_ZERO_TIME;
    std::uint64_t pause_frames_ = 0, resume_frames_ = 0, mac_control_ignored_ = 0;
    std::uint64_t rx_ooo_segments_ = 0, rx_drops_buffer_full_ = 0;
    std::uint64_t tx_retransmitted_from_buffer_ = 0, tx_refetched_from_host_ = 0, tx_refetch_dma_reads_ = 0;
    std::uint64_t tx_refetch_mismatches_ = 0;
    std::uint64_t tx_refetch_failures_ = 0;  // records the framing could not build again (refetch)
    std::vector<std::uint8_t> refetch_ulpdu_, refetch_fpdu_, shadow_;
    // Fills frame bytes [stream_offset, +len) of a retransmission from host memory; returns false
    // when the bytes must come from the buffer (not refetchable).
    // Reads len bytes of the send stream from stream_offset out of its ring in buffer memory.
    void read_send_ring(connection& c, std::uint64_t stream_offset, std::uint8_t* out, std::size_t len,
                        sc_core::sc_time& delay);
    void refetch(connection& c, std::uint64_t stream_offset, std::size_t len, std::uint8_t* out,
                 sc_core::sc_time& delay);
};

}  // namespace rnic
