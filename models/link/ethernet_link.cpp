#include "link/ethernet_link.h"

#include <algorithm>

#include "core/sim_log.h"
#include "core/stream.h"
#include "proto/net.h"

namespace rnic {

ethernet_link::ethernet_link(const sc_core::sc_module_name& name, const ethernet_link_params& params)
    : sc_module(name),
      port_a_in("port_a_in"),
      port_a_out("port_a_out"),
      port_b_in("port_b_in"),
      port_b_out("port_b_out"),
      params_(params),
      ab_("a_to_b", params.a_to_b, params.seed * 2 + 1, params.order),
      ba_("b_to_a", params.b_to_a, params.seed * 2 + 2, params.order) {
    port_a_in.register_b_transport(this, &ethernet_link::a_b_transport);
    port_b_in.register_b_transport(this, &ethernet_link::b_b_transport);
    SC_HAS_PROCESS(ethernet_link);
    SC_METHOD(deliver_ab_method);
    sensitive << ab_.arrival_event;
    dont_initialize();
    SC_METHOD(deliver_ba_method);
    sensitive << ba_.arrival_event;
    dont_initialize();
}

void ethernet_link::transmit(direction& dir, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const std::uint32_t len = gp.get_data_length();
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    if (len > params_.mtu + proto::net::kEthernetHeaderSize) {
        ++dir.oversize_drops;
        RNIC_MLOG_D(warn, link, delay,
                    dir.label << ": dropped a " << len << "-byte frame larger than MTU " << params_.mtu << " + 14");
        return;
    }
    const sc_core::sc_time now = sim_now();
    std::vector<std::uint8_t> bytes;  // storage of a delivered frame, reused
    if (!dir.spare.empty()) {
        bytes = std::move(dir.spare.back());
        dir.spare.pop_back();
    }
    bytes.assign(gp.get_data_ptr(), gp.get_data_ptr() + len);
    // A frame goes on the wire and joins the receiver's queue in arrival order.
    const auto send = [&](std::vector<std::uint8_t>& frame, std::uint64_t extra_delay_ps) {
        const std::uint32_t flen = static_cast<std::uint32_t>(frame.size());
        const std::uint32_t on_wire = kPreambleSfd + std::max(flen, kMinFrame) + kFcs + kIfg;
        // The frame's last bit leaves at `sent` minus the IFG, which only keeps the wire idle after it.
        const sc_core::sc_time sent = dir.wire.reserve(now + delay, transfer_time(on_wire, params_.rate_bps));
        const sc_core::sc_time arrival =
            sent - transfer_time(kIfg, params_.rate_bps) + params_.propagation + from_ps(extra_delay_ps);
        auto it = dir.queue.end();
        while (it != dir.queue.begin() && std::prev(it)->arrival > arrival) --it;
        dir.queue.insert(it, {arrival, std::move(frame)});
        ++dir.frames;
        dir.bytes += flen;
        dir.wire_bytes += on_wire;
    };
    if (dir.faults.inert()) {
        // No fault configured: the frame goes as apply() would return it, without its draws.
        dir.faults.pass();
        send(bytes, 0);
    } else {
        fault_injector::outcome fate = dir.faults.apply(std::move(bytes));
        if (fate.dropped != fault_injector::cause::none) {
            // A lost frame still took its time on the sender's wire.
            dir.wire.reserve(now + delay,
                             transfer_time(kPreambleSfd + std::max(len, kMinFrame) + kFcs + kIfg, params_.rate_bps));
            RNIC_MLOG_D(debug, link, delay, dir.label << ": frame lost");
            return;
        }
        for (std::vector<std::uint8_t>& frame : fate.frames) send(frame, fate.extra_delay_ps);
    }
    dir.arrival_event.notify(dir.queue.front().arrival - now);
    // The transmitter (MAC) is free to go on once the frame has been handed over: the sender's
    // next frame queues behind this one on the wire resource.
}

void ethernet_link::deliver(direction& dir, tlm_utils::simple_initiator_socket<ethernet_link>& out) {
    const sc_core::sc_time now = sim_now();
    while (!dir.queue.empty() && dir.queue.front().arrival <= now) {
        in_flight f = std::move(dir.queue.front());
        dir.queue.pop_front();
        if (dir.pcap != nullptr) dir.pcap->write_at(to_ps(now), dir.pcap_source, f.frame.data(), f.frame.size());
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        send_frame_bytes(out, f.frame.data(), f.frame.size(), delay);
        if (dir.spare.size() < kSpareFrames) dir.spare.push_back(std::move(f.frame));
    }
    if (!dir.queue.empty()) dir.arrival_event.notify(dir.queue.front().arrival - now);
}

void ethernet_link::report_stats(boost::json::object& out) const {
    for (const direction* d : {&ab_, &ba_}) {
        boost::json::object o;
        o["frames"] = d->frames;
        o["frame_bytes"] = d->bytes;
        o["wire_bytes"] = d->wire_bytes;
        o["oversize_drops"] = d->oversize_drops;
        o["busy_ps"] = to_ps(d->wire.busy_total());
        const fault_injector::counters& f = d->faults.stats();
        o["faults"] = {{"dropped_random", f.dropped_random}, {"dropped_burst", f.dropped_burst},
                       {"dropped_trace", f.dropped_trace},   {"reordered", f.reordered},
                       {"duplicated", f.duplicated},         {"corrupted", f.corrupted},
                       {"resegmented", f.resegmented}};
        out[d->label] = std::move(o);
    }
    out["rate_gbps"] = params_.rate_bps / 1e9;
}

}  // namespace rnic
