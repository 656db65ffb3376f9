// A full-duplex Ethernet link between two ports. Each direction is a timed resource: a frame occupies
// the wire for preamble (7) + SFD (1) + frame (padded to 60) + FCS (4) + inter-frame gap (12) bytes
// at the line rate (IEEE 802.3 §4.4), then arrives after the propagation delay. Frames are delivered
// by one event per arrival, and written to the pcap (if any) at their arrival time, i.e. the capture
// point is the receiving port. A fault injector per direction may drop, delay (reorder), duplicate,
// corrupt or re-segment frames on the way.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "core/stats.h"
#include "core/timed_resource.h"
#include "link/fault_injector.h"
#include "proto/pcap.h"

namespace rnic {

struct ethernet_link_params {
    double rate_bps = 100e9;
    sc_core::sc_time propagation = sc_core::sc_time(10, sc_core::SC_NS);  // ~2 m cable, back to back
    std::uint32_t mtu = 1500;
    fault_config a_to_b, b_to_a;  // what the network does in each direction
    std::uint64_t seed = 1;
    // How each direction's wire serves frames handed over out of time order: in_order (each frame
    // after every frame handed over before it) or backfill (the earliest idle gap at or after the
    // frame is ready; a sender that books in time order, rnic.tcp.tx_order = time, needs it).
    booking order = booking::in_order;
};

class ethernet_link : public sc_core::sc_module, public stats_reporter {
public:
    tlm_utils::simple_target_socket<ethernet_link> port_a_in;
    tlm_utils::simple_initiator_socket<ethernet_link> port_a_out;
    tlm_utils::simple_target_socket<ethernet_link> port_b_in;
    tlm_utils::simple_initiator_socket<ethernet_link> port_b_out;

    ethernet_link(const sc_core::sc_module_name& name, const ethernet_link_params& params);

    // Write every frame to this pcap (shared by the platform, may be null).
    void set_pcap(proto::pcap_writer* pcap) { set_pcap(pcap, true, true); }
    // Only the frames of the chosen directions (a fabric captures what reaches each host once).
    void set_pcap(proto::pcap_writer* pcap, bool a_to_b, bool b_to_a) {
        ab_.pcap = a_to_b ? pcap : nullptr;
        ba_.pcap = b_to_a ? pcap : nullptr;
        if (ab_.pcap != nullptr) ab_.pcap_source = pcap->add_source();
        if (ba_.pcap != nullptr) ba_.pcap_source = pcap->add_source();
    }

    void report_stats(boost::json::object& out) const override;

    static constexpr std::uint32_t kPreambleSfd = 8, kFcs = 4, kIfg = 12, kMinFrame = 60;
    static constexpr std::size_t kSpareFrames = 64;

private:
    struct in_flight {
        sc_core::sc_time arrival;
        std::vector<std::uint8_t> frame;
    };
    struct direction {
        direction(const char* l, const fault_config& f, std::uint64_t seed, booking order)
            : label(l), faults(f, seed), wire(order) {}
        const char* label;
        fault_injector faults;
        timed_resource wire;
        std::deque<in_flight> queue;                   // ordered by arrival time
        std::vector<std::vector<std::uint8_t>> spare;  // buffers of delivered frames, for the next ones
        sc_core::sc_event arrival_event;
        std::uint64_t frames = 0, bytes = 0, wire_bytes = 0, oversize_drops = 0;
        proto::pcap_writer* pcap = nullptr;  // capture at the receiving port, if any
        unsigned pcap_source = 0;
    };

    void a_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) { transmit(ab_, gp, delay); }
    void b_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) { transmit(ba_, gp, delay); }
    void transmit(direction& dir, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void deliver(direction& dir, tlm_utils::simple_initiator_socket<ethernet_link>& out);
    void deliver_ab_method() { deliver(ab_, port_b_out); }
    void deliver_ba_method() { deliver(ba_, port_a_out); }

    ethernet_link_params params_;
    direction ab_;
    direction ba_;
};

}  // namespace rnic
