// The TCP engine's record of one offloaded connection (tcp_engine::connection): the proto state
// machine, its send stream in buffer memory and what the engine keeps per connection. Private to
// models/toe: the engine's sources (tcp_engine.cpp, tcp_engine_reassembly.cpp, tcp_engine_timers.cpp)
// share it.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <utility>

#include "core/mem_access.h"
#include "core/stream.h"
#include "proto/seeds/vitcp_urgent.h"
#include "toe/tcp_engine.h"

namespace rnic {

namespace tcp = proto::tcp;
namespace net = proto::net;

namespace toe_detail {
inline std::uint64_t time_ns(const sc_core::sc_time& t) {
    return to_ps(t) / 1000;
}
}  // namespace toe_detail

// One offloaded connection: the proto state machine plus its send stream in buffer memory.
class tcp_engine::connection : public tcp::env {
public:
    connection(tcp_engine& engine, std::uint32_t id, const tcp::config& cfg, std::uint64_t buffer_base,
               std::uint32_t remote_ip)
        : engine_(engine),
          id_(id),
          buffer_base_(buffer_base),
          buffer_size_(cfg.send_buffer),
          remote_ip_(remote_ip),
          tcp_(cfg, *this) {}

    // Every non-const use may move the connection's timers: the engine re-indexes its deadline at
    // the next reschedule_timer() (const uses cannot change them).
    tcp::connection& tcp() {
        engine_.note_touched(*this);
        return tcp_;
    }
    const tcp::connection& tcp() const { return tcp_; }
    std::uint32_t id() const { return id_; }
    std::uint32_t remote_ip() const { return remote_ip_; }
    std::uint16_t local_port() const { return local_port_; }
    std::uint16_t remote_port() const { return remote_port_; }
    void set_ports(std::uint16_t local, std::uint16_t remote) {
        local_port_ = local;
        remote_port_ = remote;
    }
    std::uint64_t buffer_base() const { return buffer_base_; }

    // The context delay of the current call (LT annotation relative to the kernel time).
    sc_core::sc_time ctx_delay = sc_core::SC_ZERO_TIME;
    // The state machine must not be re-entered from its own callbacks (deliver -> ... -> send).
    int in_callback = 0;
    std::size_t deferred = 0;
    bool close_deferred = false;
    std::uint64_t sent_high = 0;  // send-stream offset below which every byte went out at least once
    bool tx_waiting = false;      // in the engine's queue of connections waiting for link room
    sc_core::sc_time last_wire_start = sc_core::SC_ZERO_TIME;  // of its latest frame (tx_order time)
    sc_core::sc_time tx_retry_at = sc_core::SC_ZERO_TIME;      // waiting, tx_order time: when to ask again
    // Lifecycle (tcp_engine_connections.cpp): who holds the id and when it can be freed.
    std::uint64_t serial = 0;  // opening order over the engine's life (ids are reused, serials not)
    bool owned = false;        // an owner holds the id: the caller of tcp_connect, or the firmware
                               // once a passive connection was reported established
    bool released = false;     // the owner let it go (tcp_release): freed once closed
    bool finished = false;     // closed (or an unowned passive one reset back to LISTEN)
    bool touched = false;      // in the engine's list of connections to re-index
    std::uint64_t indexed_deadline = std::numeric_limits<std::uint64_t>::max();  // its key in deadlines_
    // Link-paced generation: when each append's bytes were there (its end offset, its time), so that
    // a segment built later, when the link has room, never leaves before its bytes arrived.
    std::deque<std::pair<std::uint64_t, sc_core::sc_time>> appended_at;

    // How each FPDU of the send stream can be rebuilt from host memory (retransmit_from_host).
    struct fpdu_record {
        std::uint64_t stream_off = 0;
        std::uint32_t length = 0;     // bytes on the wire
        std::uint64_t host_addr = 0;  // payload in host memory; 0: not refetchable
        std::uint32_t payload_len = 0;
        std::uint32_t header_len = 0;
        std::uint8_t header[32] = {};
        std::uint32_t fpdu_pos = 0;  // the frame's position and options, for framing::reframe
        frame_options options{false, false};
    };
    std::deque<fpdu_record> records;
    // VI/TCP's Urgent Marker (tcp_mark_urgent): where VI segments start in the send stream.
    proto::vitcp_urgent::marker urgent;

    // retransmit_from_host: how far below `offset` the send ring may let go, namely up to the first
    // unacknowledged frame that cannot be fetched again from host memory (records are in stream
    // order; acknowledged ones are gone).
    std::uint64_t refetchable_until(std::uint64_t offset) const {
        for (const fpdu_record& r : records) {
            if (r.stream_off >= offset) break;
            if (r.host_addr == 0) return r.stream_off;
        }
        return offset;
    }

    // Releases buffer-memory occupancy up to `offset` (at ack, or at first transmission when the
    // retransmit source is host memory).
    void release_until(std::uint64_t offset) {
        if (offset > released_) {
            engine_.buffer_.release_send(offset - released_);
            released_ = offset;
        }
    }

    // Appends send-stream bytes at the stream's end into the ring in buffer memory.
    void append(const std::uint8_t* data, std::size_t len, sc_core::sc_time& delay) {
        std::size_t done = 0;
        while (done < len) {
            const std::uint64_t pos = (appended_ + done) % buffer_size_;
            const std::size_t chunk = std::min<std::size_t>(len - done, buffer_size_ - pos);
            mem_write(engine_.buf_out, buffer_base_ + pos, data + done, chunk, delay);
            done += chunk;
        }
        appended_ += len;
        engine_.buffer_.hold_send(len);
        tx_held_peak = std::max(tx_held_peak, appended_ - released_);
    }
    std::uint64_t tx_held_peak = 0;  // most send-stream bytes held in its region at once
    std::uint64_t appended() const { return appended_; }

    // tcp::Env
    void transmit(const net::tcp_header& header, std::uint64_t stream_offset, std::size_t len) override {
        engine_.transmit_segment(*this, header, stream_offset, len);
    }
    bool may_transmit() override { return engine_.may_transmit(*this); }
    void deliver(const std::uint8_t* data, std::size_t len) override {
        stream_ext ext;
        ext.conn = id_;
        sc_core::sc_time d = ctx_delay;
        send_stream(engine_.stream_rx_out, ext, data, len, d);
        // `d` now ends when the bytes have landed in host memory; the ACK does not wait for that,
        // but the next segment waits while too many are still on their way (placement_backlog).
        engine_.placing_.add(to_ps(sim_now() + d), len);
    }
    void acked(std::uint64_t acked_offset) override {
        release_until(acked_offset);
        urgent.acked(acked_offset);
        while (!records.empty() && records.front().stream_off + records.front().length <= acked_offset) {
            records.pop_front();
        }
        // A frame held for want of a host copy is acknowledged: what was sent behind it can go too.
        if (engine_.params_.retransmit_from_host) release_until(refetchable_until(sent_high));
        engine_.tx_progress_out->on_tx_acked(id_, acked_offset, ctx_delay);
    }
    void state_changed(tcp::state from, tcp::state to) override {
        RNIC_LOG_AT(debug, toe, to_ps(sim_now() + ctx_delay), engine_.name(),
                    "connection " << id_ << ": " << tcp::to_string(from) << " -> " << tcp::to_string(to));
        // Once released, the owner hears nothing more of it (it may be gone, and the id may soon
        // name another connection).
        if (released) {
            // nothing reported
        } else if (to == tcp::state::established) {
            owned = true;  // a passive connection becomes the firmware's when it hears of it
            engine_.conn_events_out->on_tcp_event(id_, toe_event::established, local_port_);
        } else if (to == tcp::state::closed || to == tcp::state::close_wait) {
            // CLOSE-WAIT: the peer closed its direction; the RDMAP stream is over (RFC 5040 §6.2).
            engine_.conn_events_out->on_tcp_event(
                id_, from == tcp::state::syn_sent ? toe_event::failed : toe_event::closed, local_port_);
        }
        // A passive connection that never got established was never anyone's: free it at once, also
        // when a reset sent it back to LISTEN (RFC 9293 §3.10.7.4; the engine's listening ports
        // answer that peer's next SYN with a fresh connection).
        if (to == tcp::state::closed || (to == tcp::state::listen && from == tcp::state::syn_received && !owned)) {
            if (!owned) released = true;
            finished = true;
            engine_.note_closed(*this);
        }
    }

private:
    tcp_engine& engine_;
    std::uint32_t id_;
    std::uint64_t buffer_base_;
    std::uint64_t buffer_size_;
    std::uint32_t remote_ip_;
    std::uint16_t local_port_ = 0, remote_port_ = 0;
    std::uint64_t appended_ = 0, released_ = 0;
    tcp::connection tcp_;
};

}  // namespace rnic
