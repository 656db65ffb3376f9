// An Ethernet port whose far side is a real machine: frames from the simulated link go out on a TCP
// connection and frames arriving on it are injected into the simulation. The connection speaks
// QEMU's `-netdev socket` stream format: each frame (Ethernet header to payload end, no FCS) is
// preceded by its length as 4 bytes big-endian. So a QEMU guest (e.g. Linux soft-iWARP, see
// tools/siw-peer/) can be the other end of a simulated wire.
//
//  - eth_rx <- frames from the simulated link, written to the socket (in order; a bounded backlog
//             absorbs a socket that cannot take them at once, beyond it frames are dropped and counted)
//  - eth_tx -> frames read from the socket, injected at the current simulated time
//
// Real time: while the bridge is active, bridge_thread wakes every `poll_interval` of simulated time,
// reads what the socket has (non-blocking) and, in real-time mode, sleeps in wall-clock time so that
// simulated time never runs ahead of wall-clock time (both counted from the first activation) by more
// than `realtime_slack`. Falling behind is allowed and only counted (max_lag).
//
// Bad input from the socket never stops the simulation: a frame shorter than an Ethernet header or
// longer than the MTU is skipped, logged and counted; a length no QEMU would send (above
// kMaxStreamFrame) means the stream is out of step and the connection is closed with an error; a
// closed or reset connection is reported and ends the bridge's activity.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "core/stats.h"

namespace rnic {

struct socket_bridge_params {
    std::string address = "127.0.0.1";  // host name or numeric address of the QEMU socket
    std::uint16_t port = 0;
    bool listen = false;  // false: connect to address:port; true: listen there, accept one
    // Wall-clock time open() waits for the connection (connect retries, or accept).
    std::chrono::milliseconds open_timeout{10000};
    bool realtime = true;
    // How far simulated time may run ahead of wall-clock time (real-time mode).
    sc_core::sc_time realtime_slack = sc_core::sc_time(1, sc_core::SC_MS);
    // Simulated time between two socket polls: the granularity of injection and pacing.
    sc_core::sc_time poll_interval = sc_core::sc_time(20, sc_core::SC_US);
    std::uint32_t mtu = 1500;                 // larger frames (either way) are dropped and counted
    std::size_t tx_backlog_bytes = 4u << 20;  // bytes waiting for the socket, at most
};

class socket_bridge : public sc_core::sc_module, public stats_reporter {
public:
    tlm_utils::simple_target_socket<socket_bridge> eth_rx;     // from the simulated link, to the socket
    tlm_utils::simple_initiator_socket<socket_bridge> eth_tx;  // from the socket, into the simulation

    // Frames longer than this cannot come from QEMU (its receive buffer is 68 KiB): the length prefix
    // is garbage and the stream cannot be trusted any more.
    static constexpr std::uint32_t kMaxStreamFrame = 69632;
    static constexpr std::uint32_t kMinFrame = 14;  // an Ethernet header

    socket_bridge(const sc_core::sc_module_name& name, const socket_bridge_params& params);
    ~socket_bridge() override;

    // Connects (or listens and accepts one connection), within params.open_timeout of wall time.
    // Returns false with a message naming the address and the cause. Call before sc_start.
    bool open(std::string* error);
    bool connected() const { return fd_ >= 0; }
    // Stops pacing and polling (e.g. when the workload is done); the connection stays open.
    void deactivate() { active_ = false; }
    // Closes the connection (the peer sees end of stream) and deactivates the bridge.
    void close();
    bool active() const { return active_; }
    // The first error seen on the connection ("" if none): closed by the peer, reset, bad length.
    const std::string& connection_error() const { return connection_error_; }

    // The reference points of real-time pacing (set at the start of simulation).
    std::chrono::steady_clock::time_point wall_epoch() const { return wall_epoch_; }
    sc_core::sc_time sim_epoch() const { return sim_epoch_; }
    // Largest lead of simulated over wall-clock time that pacing allowed (bounded by the slack), the
    // largest lag (simulation slower than real time), and the wall time spent sleeping. Wall-clock
    // figures: not in report_stats, whose output must not depend on the machine's speed.
    sc_core::sc_time max_lead() const { return max_lead_; }
    sc_core::sc_time max_lag() const { return max_lag_; }
    std::chrono::nanoseconds slept() const { return slept_; }

    void report_stats(boost::json::object& out) const override;

private:
    void start_of_simulation() override;  // sets the epochs of real-time pacing
    void eth_rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void bridge_thread();
    void poll_socket();                 // reads what is there and injects every complete frame
    void parse_frames();                // consumes complete frames from rx_buf_
    void flush_tx();                    // writes the backlog as far as the socket takes it
    void pace();                        // real-time: sleep until simulated time is within the slack
    void fail(const std::string& why);  // records the error, logs it, closes the connection

    socket_bridge_params params_;
    int fd_ = -1;
    bool active_ = true;
    std::string connection_error_;
    std::vector<std::uint8_t> rx_buf_;  // bytes read, not yet consumed (< one frame + prefix)
    std::size_t rx_used_ = 0;
    std::vector<std::uint8_t> tx_buf_;  // length-prefixed frames not yet written
    std::size_t tx_sent_ = 0;           // bytes of tx_buf_ already written
    std::chrono::steady_clock::time_point wall_epoch_{};
    sc_core::sc_time sim_epoch_ = sc_core::SC_ZERO_TIME;
    sc_core::sc_time max_lead_ = sc_core::SC_ZERO_TIME;
    sc_core::sc_time max_lag_ = sc_core::SC_ZERO_TIME;
    std::uint64_t frames_to_socket_ = 0, bytes_to_socket_ = 0, frames_from_socket_ = 0, bytes_from_socket_ = 0;
    std::uint64_t short_frames_ = 0, oversize_rx_ = 0, oversize_tx_ = 0, tx_drops_backlog_ = 0, tx_drops_closed_ = 0,
                  polls_ = 0, sleeps_ = 0;
    std::chrono::nanoseconds slept_{0};
};

// An Ethernet port with no cable: what its NIC sends is dropped (and counted), nothing ever arrives.
// Closes off the NIC of a simulated host that a socket bridge stands in for.
class unplugged_port : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<unplugged_port> eth_rx;     // bind the NIC's eth_tx here
    tlm_utils::simple_initiator_socket<unplugged_port> eth_tx;  // bind to the NIC's eth_rx

    explicit unplugged_port(const sc_core::sc_module_name& name) : sc_module(name), eth_rx("eth_rx"), eth_tx("eth_tx") {
        eth_rx.register_b_transport(this, &unplugged_port::eth_rx_b_transport);
    }
    std::uint64_t dropped_frames() const { return dropped_; }

private:
    void eth_rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
        ++dropped_;
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    std::uint64_t dropped_ = 0;
};

}  // namespace rnic
