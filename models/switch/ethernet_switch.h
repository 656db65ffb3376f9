// A shared-buffer Ethernet switch for rack-scale platforms (many hosts behind one switch, incast).
// Each port is full duplex: port_in_<i> receives frames from the link to the host (or switch) on
// port i, port_out_<i> hands frames to that link. Frames are raw Ethernet frames (no preamble/FCS)
// in a stream payload (core/stream.h), as ethernet_link carries them.
//
// Forwarding. add_route(mac, ports) sends frames for a destination MAC to one port, or to one port
// of a group chosen per flow (ECMP): ports[ecmp_flow_hash(frame, seed) % ports.size()]. The hash
// covers the IPv4 5-tuple (source, destination, protocol and, for TCP and UDP, the two ports) and
// the MAC addresses for anything else, so a flow always takes the same port and distinct flows may
// collide on one. Broadcast, multicast and unknown unicast destinations are flooded to every port
// but the one the frame came in on; a frame whose route leads back to its ingress port is
// filtered (IEEE 802.1D: a bridge never forwards to the reception port). MAC control frames
// (EtherType 0x8808) are never forwarded: a PFC frame pauses the port it arrives on, any other
// opcode (e.g. 802.3 PAUSE) is counted and discarded.
//
// Timing. The link delivers a frame when its last bit arrives (`arrival`). The frame may start
// leaving at
//   store-and-forward:  arrival + latency
//   cut-through:        max(arrival - ingress serialisation + latency, now)
// where the ingress serialisation is the wire time of preamble/SFD + frame (at least 60 bytes) + FCS
// at the ingress port's rate, i.e. arrival minus it is when the frame's first bit came in. The clamp
// to the current time is a limit of the model: the switch learns of a frame only at its last bit, so
// with a latency shorter than the frame's serialisation the frame leaves at its arrival rather than
// before it. Like cut-through ASICs, a frame whose egress port is faster than its ingress port is
// stored and forwarded (it could not be streamed out faster than it comes in).
// From that time on the frame waits in its output port's FIFO behind what the port is already
// sending; each frame takes preamble/SFD 8 + max(len, 60) + FCS 4 + IFG 12 bytes of wire time at the
// port's rate, the same count as ethernet_link. A frame is handed to port_out at the moment its
// transmission starts, so the link (which serialises it again) always finds its wire idle: the
// switch port and its link must be configured with the same rate. One method per output port,
// woken by one event, hands the frames over; nothing is scheduled per byte.
//
// Buffer. Admission, the Dynamic Threshold, ECN and PFC accounting are shared_buffer's (the exact
// rules are written there). A frame is admitted when it arrives and its bytes are given back when
// its last bit has left the output port: start + (8 + max(len, 60) + 4) bytes of wire time (the IFG
// after it is not buffered). Give-backs are applied lazily, in time order, before each admission
// decision, and at their exact time when a PFC resume may depend on them, so the accounting is the
// same as with an event per departure. A frame the switch sends or forwards is a copy: ECN marks it
// (CE in the IPv4 TOS byte, header checksum updated) when the output queue held at least
// ecn_threshold bytes before it.
//
// PFC (IEEE 802.1Qbb, priority 0 only; every frame is taken as priority 0). When an ingress port's
// buffered bytes go above pfc_xoff (or its headroom is needed) the switch sends a PFC frame with
// quanta 0xFFFF on that port, re-sends it every half pause time (0xFFFF * 256 bit times) while the
// port stays above pfc_xon, and sends quanta 0 once its bytes fall to pfc_xon or below. A PFC frame
// the switch sends bypasses the output queue (it goes out as soon as the frame on the wire, if any,
// has finished) but takes its wire time; it is not counted in the buffer. A PFC frame received on
// port p with priority 0 enabled stops p's output queue for quanta * 512 bit times at p's rate from
// its arrival: no frame starts in that time (a frame already started finishes); quanta 0 resumes at
// once. The switch's own PFC frames are not held back by a received pause.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <unordered_map>
#include <vector>

#include "core/stats.h"
#include "proto/net.h"
#include "switch/shared_buffer.h"

namespace rnic {

enum class forwarding_mode { store_and_forward, cut_through };

struct ethernet_switch_params {
    int ports = 8;
    double rate_bps = 100e9;            // every port, unless port_rate_bps says otherwise
    std::vector<double> port_rate_bps;  // per port (empty: all at rate_bps); must match each port's link
    forwarding_mode mode = forwarding_mode::store_and_forward;
    // Port-to-port pipeline latency (lookup, buffer write/read) of an idle switch: data-centre
    // switch ASIC datasheets state a few hundred nanoseconds.
    sc_core::sc_time latency = sc_core::sc_time(500, sc_core::SC_NS);
    std::uint32_t mtu = 1500;  // larger frames (beyond mtu + 14 header bytes) are dropped as bad
    // Shared packet buffer: 12 MB in Broadcom Trident 2 (10/40G), 16 MB in Tomahawk (32 x 100G).
    std::uint64_t buffer_bytes = 16ull << 20;
    double alpha = 1.0;  // Dynamic Threshold factor; 1 = SONiC's default dynamic_th 0 (alpha = 2^0)
    bool ecn = false;
    // DCTCP's marking threshold K of 65 full frames at 10 Gb/s (Alizadeh et al., SIGCOMM 2010).
    std::uint64_t ecn_threshold = 65 * 1514;
    bool pfc = false;
    std::uint64_t pfc_xoff = 256 * 1024;  // per-ingress bytes above which the sender is paused
    std::uint64_t pfc_xon = 128 * 1024;   // ... and at or below which it is resumed
    // Per-ingress headroom: what arrives between the decision to pause and the pause taking hold:
    // two maximum frames (one on the wire each way), a 100 m cable's round trip at 100 Gb/s
    // (~1 us, 12.5 KB) and the sender's response time; 32 KiB leaves room for the last.
    std::uint64_t pfc_headroom = 32 * 1024;
    // Queue occupancy over time: one maximum per interval and output port (zero: not kept).
    sc_core::sc_time stats_interval = sc_core::SC_ZERO_TIME;
    std::uint64_t seed = 1;  // salt of the ECMP hash
    // Source MAC of the PFC frames of port i: mac_base with i added to its last two octets.
    proto::net::mac_address mac_base{0x02, 0x00, 0x00, 0x5e, 0x00, 0x00};
};

// The ECMP flow hash: FNV-1a (64 bit) over the salt's 8 bytes (little-endian) and the flow key,
// then the splitmix64 finaliser. The key is, for a frame holding a whole IPv4 header: source and
// destination address (4 + 4 bytes as on the wire), protocol, and for an unfragmented TCP or UDP
// packet whose first 4 transport bytes are present the source and destination ports; otherwise the
// destination and source MAC (12 bytes). Frames shorter than 12 bytes hash to the salt alone.
std::uint64_t ecmp_flow_hash(const std::uint8_t* frame, std::size_t len, std::uint64_t salt);

class ethernet_switch : public sc_core::sc_module, public stats_reporter {
public:
    using in_socket = tlm_utils::simple_target_socket_tagged<ethernet_switch>;
    using out_socket = tlm_utils::simple_initiator_socket<ethernet_switch>;
    std::vector<std::unique_ptr<in_socket>> port_in;    // port_in_<i>
    std::vector<std::unique_ptr<out_socket>> port_out;  // port_out_<i>

    struct port_counters {
        // Ingress side.
        std::uint64_t frames_in = 0, bytes_in = 0;  // everything received, bad frames included
        std::uint64_t bad_frames = 0;  // shorter than an Ethernet header, above the MTU, or a malformed PFC frame
        std::uint64_t flooded = 0;     // broadcast/multicast/unknown unicast received here
        std::uint64_t filtered = 0;    // routed back to this port: dropped
        std::uint64_t pause_received = 0, resume_received = 0;  // PFC (priority 0) with quanta > 0 / 0
        std::uint64_t mac_control_other = 0;                    // other MAC control frames (discarded)
        // Egress side.
        std::uint64_t frames_out = 0, bytes_out = 0;  // data frames (PFC frames not included)
        std::uint64_t drops_dt_threshold = 0, drops_buffer_full = 0, drops_headroom_full = 0;
        std::uint64_t ecn_marked = 0;
        std::uint64_t pause_sent = 0, resume_sent = 0;  // PFC frames sent (pause_sent counts re-sends)
    };

    ethernet_switch(const sc_core::sc_module_name& name, const ethernet_switch_params& params);

    // Frames to `mac` go to `ports` (one port, or an ECMP group). Throws std::invalid_argument on an
    // empty list or a port out of range; a second call for the same MAC replaces the first.
    void add_route(const proto::net::mac_address& mac, std::vector<int> ports);

    int ports() const { return static_cast<int>(ports_.size()); }
    double port_rate_bps(int port) const { return ports_[port]->rate_bps; }
    proto::net::mac_address port_mac(int port) const;
    const port_counters& counters(int port) const { return ports_[port]->c; }
    const shared_buffer& buffer() const { return buffer_; }
    // Time port `port`'s output queue has spent paused by received PFC frames, up to now.
    sc_core::sc_time time_paused(int port) const;
    // The output queue's per-interval maxima up to now (empty without a stats_interval).
    std::vector<std::uint64_t> occupancy_maxima(int port) const;

    void report_stats(boost::json::object& out) const override;

private:
    struct queued_frame {
        std::vector<std::uint8_t> data;
        sc_core::sc_time ready;  // earliest start of its transmission
        int ingress = 0;
        shared_buffer::part charged = shared_buffer::part::shared;
    };
    struct leaving_frame {  // started, buffer bytes not yet given back
        sc_core::sc_time last_bit;
        int ingress = 0;
        std::uint32_t len = 0;
        shared_buffer::part charged = shared_buffer::part::shared;
    };
    enum class pfc_pending { none, xoff, xon };
    struct port_state {
        double rate_bps = 0;
        std::deque<queued_frame> queue;
        std::optional<leaving_frame> leaving;
        sc_core::sc_time wire_free;  // end of the last transmission's IFG
        // Received PFC: no frame starts before paused_until.
        sc_core::sc_time paused_until, pause_began, paused_total;
        // PFC frames to send on this port (for this port's ingress), and the next re-send.
        pfc_pending pfc_to_send = pfc_pending::none;
        bool pfc_sender_paused = false;  // a pause went out and no resume after it
        std::optional<sc_core::sc_time> pfc_refresh_at;
        sc_core::sc_event wake;
        interval_max_trace occupancy;
        port_counters c;
    };

    void receive(int port, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void receive_mac_control(int port, const std::uint8_t* frame, std::size_t len, const sc_core::sc_time& arrival);
    void forward(int ingress, int output, const std::uint8_t* frame, std::uint32_t len,
                 const sc_core::sc_time& arrival);
    sc_core::sc_time ready_time(int ingress, int output, std::uint32_t len, const sc_core::sc_time& arrival) const;
    void output_method(int port);
    void start_pfc_frame(int port);
    void start_data_frame(int port);
    // Gives back the bytes of the frame that has left `port` by `t` (if any).
    void retire(int port, const sc_core::sc_time& t);
    void retire_all(const sc_core::sc_time& t);
    void on_pfc_signal(int ingress, shared_buffer::pfc_signal s);
    void note_occupancy(int port, const sc_core::sc_time& t);
    // Wakes the port's method at the next instant it has something to do.
    void schedule(int port);
    bool needs_timely_release(const port_state& p) const;
    sc_core::sc_time wire_time(std::uint32_t len, double rate_bps) const;      // with IFG
    sc_core::sc_time serialisation(std::uint32_t len, double rate_bps) const;  // without IFG

    ethernet_switch_params params_;
    shared_buffer buffer_;
    std::vector<std::unique_ptr<port_state>> ports_;
    std::set<int> leaving_ports_;  // ports whose `leaving` is set, in port order
    // Keyed by the 48-bit address as an integer: one hash lookup per frame, not a byte-wise
    // ordered-map walk (a 256-host fabric looks up every frame at every hop).
    std::unordered_map<std::uint64_t, std::vector<int>> routes_;
    static std::uint64_t route_key(const std::uint8_t* mac) {
        std::uint64_t k = 0;
        for (int i = 0; i < 6; ++i) k = k << 8 | mac[i];
        return k;
    }
};

}  // namespace rnic
