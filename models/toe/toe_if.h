// Control interfaces of the TCP offload engine (the data paths are TLM sockets).
//  toe_ctl_if          firmware / RDMA engine -> TCP engine: open, listen, close, room to send.
//  toe_conn_events_if  TCP engine -> control processor: connection state changes.
//  toe_tx_progress_if  TCP engine -> RDMA engine: acknowledged send-stream bytes, room freed.
#pragma once

#include <cstdint>
#include <systemc>

namespace rnic {

struct tcp_open_params {
    std::uint32_t remote_ip = 0;
    std::uint16_t remote_port = 0;
    std::uint16_t local_port = 0;
};

// A connection's addresses; all zero for an id that names nothing.
struct tcp_addresses {
    std::uint32_t local_ip = 0, remote_ip = 0;
    std::uint16_t local_port = 0, remote_port = 0;
};

// released: the connection was freed (closed and released by its owner); its id may name the next
// connection, so whatever still waits to be told about the old one must be dropped.
// refused: a SYN reached a listening port but no send region could be reserved for it; it was
// answered with a reset at once (the conn argument names nothing, local_port is the listening port).
enum class toe_event : std::uint8_t { established, closed, reset, failed, released, refused };

class toe_ctl_if : public virtual sc_core::sc_interface {
public:
    // Active open; returns the connection id, kNoConnectionSlot when the connection table is full,
    // or kNoSendRegion when the connection's send region cannot be reserved in buffer memory.
    static constexpr int kNoConnectionSlot = -1;
    static constexpr int kNoSendRegion = -2;
    virtual int tcp_connect(const tcp_open_params& p) = 0;
    // Passive open on a port; connections that arrive are reported as established with their id.
    virtual bool tcp_listen(std::uint16_t port) = 0;
    // Stops the passive open on `port` (the unlisten command); false when the port was not
    // listening. Handshakes still half-open on the port are reset, and from now on a SYN to it is
    // answered with a reset (RFC 9293 §3.10.7.1) until it listens again. Connections already
    // established on it (the firmware's or a QP's) are not touched.
    virtual bool tcp_unlisten(std::uint16_t port) = 0;
    virtual void tcp_close(std::uint32_t conn) = 0;
    // Abortive close: a reset to the peer and CLOSED at once (RFC 9293 §3.10.4, ABORT call).
    virtual void tcp_abort(std::uint32_t conn) = 0;
    // The caller owned `conn` (the firmware until a QP takes it, then the QP) and is done with it:
    // once the connection is closed (at once, or after its FIN exchange, TIME-WAIT or a reset) its
    // table slot, its send region and its id are freed, and the id may name a later connection.
    // Closing does not release: a closed connection's id stays valid until its owner lets it go.
    virtual void tcp_release(std::uint32_t conn) = 0;
    // The send-stream offset after the last byte stream_tx_in took on `conn` (0 for an unknown id):
    // a ULPDU's frame just sent is acknowledged once on_tx_acked reaches this offset.
    virtual std::uint64_t tcp_send_stream_end(std::uint32_t conn) const = 0;
    // Bytes that stream_tx_in will accept now on `conn`.
    virtual std::size_t tcp_send_space(std::uint32_t conn) const = 0;
    virtual std::uint16_t tcp_effective_mss(std::uint32_t conn) const = 0;
    virtual std::uint16_t tcp_local_port(std::uint32_t conn) const = 0;
    // Both ends' IPv4 address and port (the firmware reports a waiting peer's, next_peer).
    virtual tcp_addresses tcp_addresses_of(std::uint32_t conn) const = 0;
    // Send each FPDU in a segment of its own (MPA with markers).
    virtual void tcp_one_fpdu_per_segment(std::uint32_t conn, bool on) = 0;
    // VI/TCP's Urgent Marker (seed 003 §3.7): from now on, the first byte of the first VI segment
    // each TCP segment of `conn` carries is designated urgent (URG and the urgent pointer). Every
    // append to the send stream after this call starts a VI segment. An engine without the
    // Urgent Marker (test stubs) marks nothing, which the draft allows (§3.7 "MAY").
    virtual void tcp_mark_urgent(std::uint32_t /*conn*/) {}
    // Payload bytes sent again since reset, over all connections (query_stats).
    virtual std::uint64_t tcp_retransmitted_bytes() const = 0;
};

class toe_conn_events_if : public virtual sc_core::sc_interface {
public:
    virtual void on_tcp_event(std::uint32_t conn, toe_event ev, std::uint16_t local_port) = 0;
};

class toe_tx_progress_if : public virtual sc_core::sc_interface {
public:
    // Every send-stream byte below `acked_offset` on `conn` has been acknowledged by the peer.
    virtual void on_tx_acked(std::uint32_t conn, std::uint64_t acked_offset, const sc_core::sc_time& delay) = 0;
};

}  // namespace rnic
