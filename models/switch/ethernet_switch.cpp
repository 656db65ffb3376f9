// sc_spawn (one method per output port, their number known at run time) needs the dynamic processes.
#ifndef SC_INCLUDE_DYNAMIC_PROCESSES
#define SC_INCLUDE_DYNAMIC_PROCESSES
#endif

#include "switch/ethernet_switch.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "core/sim_log.h"
#include "core/stream.h"
#include "core/timed_resource.h"
#include "link/ethernet_link.h"
#include "proto/bytes.h"

namespace rnic {

namespace net = proto::net;
using proto::get_be16;

namespace {

shared_buffer_config buffer_config(const ethernet_switch_params& p) {
    shared_buffer_config c;
    c.ports = p.ports;
    c.buffer_bytes = p.buffer_bytes;
    c.alpha = p.alpha;
    c.ecn = p.ecn;
    c.ecn_threshold = p.ecn_threshold;
    c.pfc = p.pfc;
    c.pfc_xoff = p.pfc_xoff;
    c.pfc_xon = p.pfc_xon;
    c.pfc_headroom = p.pfc_headroom;
    return c;
}

// splitmix64's finaliser: spreads FNV's weak low bits over the whole word before the modulo.
std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

constexpr std::uint8_t kIpProtocolUdp = 17;
constexpr std::uint16_t kIpFragmentMask = 0x3FFF;  // MF flag and fragment offset

const char* mode_name(forwarding_mode m) {
    return m == forwarding_mode::cut_through ? "cut_through" : "store_and_forward";
}

}  // namespace

std::uint64_t ecmp_flow_hash(const std::uint8_t* frame, std::size_t len, std::uint64_t salt) {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a offset basis and prime (64 bit)
    auto add = [&h](const std::uint8_t* p, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            h ^= p[i];
            h *= 0x100000001b3ULL;
        }
    };
    std::uint8_t s[8];
    for (int i = 0; i < 8; ++i) s[i] = static_cast<std::uint8_t>(salt >> (8 * i));
    add(s, sizeof s);
    if (len < 12) return mix64(h);
    bool ip = false;
    if (len >= net::kEthernetHeaderSize + net::kIpv4HeaderSize && get_be16(frame + 12) == net::kEtherTypeIpv4) {
        const std::uint8_t* iph = frame + net::kEthernetHeaderSize;
        const std::size_t ihl = static_cast<std::size_t>(iph[0] & 0x0F) * 4;
        if ((iph[0] >> 4) == 4 && ihl >= net::kIpv4HeaderSize && net::kEthernetHeaderSize + ihl <= len) {
            ip = true;
            add(iph + 12, 8);  // source, destination
            add(iph + 9, 1);   // protocol
            const bool ports = (iph[9] == net::kIpProtocolTcp || iph[9] == kIpProtocolUdp) &&
                               (get_be16(iph + 6) & kIpFragmentMask) == 0 && net::kEthernetHeaderSize + ihl + 4 <= len;
            if (ports) add(iph + ihl, 4);
        }
    }
    if (!ip) add(frame, 12);  // destination and source MAC
    return mix64(h);
}

ethernet_switch::ethernet_switch(const sc_core::sc_module_name& name, const ethernet_switch_params& params)
    : sc_module(name), params_(params), buffer_(buffer_config(params)) {
    if (!params.port_rate_bps.empty() && params.port_rate_bps.size() != static_cast<std::size_t>(params.ports)) {
        throw std::invalid_argument(std::string(this->name()) + ": " + std::to_string(params.port_rate_bps.size()) +
                                    " port rates for " + std::to_string(params.ports) + " ports");
    }
    for (int i = 0; i < params.ports; ++i) {
        const double rate = params.port_rate_bps.empty() ? params.rate_bps : params.port_rate_bps[i];
        if (!(rate > 0)) {
            throw std::invalid_argument(std::string(this->name()) + ": port " + std::to_string(i) +
                                        " has no positive rate");
        }
        port_in.push_back(std::make_unique<in_socket>(("port_in_" + std::to_string(i)).c_str()));
        port_in.back()->register_b_transport(this, &ethernet_switch::receive, i);
        port_out.push_back(std::make_unique<out_socket>(("port_out_" + std::to_string(i)).c_str()));
        auto p = std::make_unique<port_state>();
        p->rate_bps = rate;
        p->occupancy = interval_max_trace(to_ps(params.stats_interval));
        ports_.push_back(std::move(p));
    }
    for (int i = 0; i < params.ports; ++i) {
        sc_core::sc_spawn_options opts;
        opts.spawn_method();
        opts.set_sensitivity(&ports_[i]->wake);
        opts.dont_initialize();
        sc_core::sc_spawn([this, i]() { output_method(i); }, ("output_" + std::to_string(i) + "_method").c_str(),
                          &opts);
    }
}

void ethernet_switch::add_route(const net::mac_address& mac, std::vector<int> ports) {
    if (ports.empty())
        throw std::invalid_argument(std::string(name()) + ": route to " + net::format_mac(mac) + " has no port");
    for (const int p : ports) {
        if (p < 0 || p >= this->ports()) {
            throw std::invalid_argument(std::string(name()) + ": route to " + net::format_mac(mac) + " names port " +
                                        std::to_string(p) + " of " + std::to_string(this->ports()));
        }
    }
    routes_[route_key(mac.data())] = std::move(ports);
}

net::mac_address ethernet_switch::port_mac(int port) const {
    net::mac_address mac = params_.mac_base;
    const unsigned low = ((unsigned{mac[4]} << 8) | mac[5]) + static_cast<unsigned>(port);
    mac[4] = static_cast<std::uint8_t>(low >> 8);
    mac[5] = static_cast<std::uint8_t>(low);
    return mac;
}

sc_core::sc_time ethernet_switch::wire_time(std::uint32_t len, double rate_bps) const {
    return transfer_time(ethernet_link::kPreambleSfd + std::max(len, ethernet_link::kMinFrame) + ethernet_link::kFcs +
                             ethernet_link::kIfg,
                         rate_bps);
}

sc_core::sc_time ethernet_switch::serialisation(std::uint32_t len, double rate_bps) const {
    // As ethernet_link computes its last bit: the whole wire time less the gap after it.
    return wire_time(len, rate_bps) - transfer_time(ethernet_link::kIfg, rate_bps);
}

void ethernet_switch::receive(int port, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const sc_core::sc_time now = sim_now();
    const sc_core::sc_time arrival = now + delay;
    port_state& in = *ports_[port];
    const std::uint8_t* frame = gp.get_data_ptr();
    const std::uint32_t len = gp.get_data_length();
    ++in.c.frames_in;
    in.c.bytes_in += len;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    if (gp.get_command() != tlm::TLM_WRITE_COMMAND) {
        ++in.c.bad_frames;
        gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
        RNIC_MLOG_D(warn, link, delay, "port " << port << ": a frame must be a WRITE; refused");
        return;
    }
    if (frame == nullptr || len < net::kEthernetHeaderSize || len > params_.mtu + net::kEthernetHeaderSize) {
        ++in.c.bad_frames;
        RNIC_MLOG_D(debug, link, delay,
                    "port " << port << ": dropped a " << len << "-byte frame (header 14, MTU " << params_.mtu << ")");
        return;
    }
    if (get_be16(frame + 12) == net::kEtherTypeMacControl) {
        receive_mac_control(port, frame, len, arrival);
        return;
    }
    // Everything that has left by now gives its bytes back before the buffer judges this frame.
    retire_all(now);
    const auto route = routes_.find(route_key(frame));
    if ((frame[0] & 0x01) != 0 || route == routes_.end()) {
        ++in.c.flooded;
        for (int o = 0; o < ports(); ++o) {
            if (o != port) forward(port, o, frame, len, arrival);
        }
        return;
    }
    const std::vector<int>& group = route->second;
    const int out = group.size() == 1 ? group[0] : group[ecmp_flow_hash(frame, len, params_.seed) % group.size()];
    if (out == port) {
        ++in.c.filtered;
        net::mac_address dst;
        std::copy(frame, frame + 6, dst.begin());
        RNIC_MLOG_D(
            debug, link, delay,
            "port " << port << ": frame to " << net::format_mac(dst) << " routed back to its ingress port: filtered");
        return;
    }
    forward(port, out, frame, len, arrival);
}

void ethernet_switch::receive_mac_control(int port, const std::uint8_t* frame, std::size_t len,
                                          const sc_core::sc_time& arrival) {
    port_state& p = *ports_[port];
    const std::optional<std::uint16_t> opcode = net::mac_control_opcode(frame, len);
    if (opcode && *opcode != net::kMacControlPfc) {
        ++p.c.mac_control_other;
        return;
    }
    std::string error;
    const std::optional<net::pfc_frame> pfc = net::parse_pfc_frame(frame, len, &error);
    if (!pfc) {
        ++p.c.bad_frames;
        RNIC_MLOG(debug, link, "port " << port << ": bad PFC frame: " << error);
        return;
    }
    if ((pfc->class_enable & 0x01) == 0) {  // only other priorities: nothing of ours
        ++p.c.mac_control_other;
        return;
    }
    // The pause in progress (if any) counts until this frame replaces it.
    const sc_core::sc_time old_end = std::min(arrival, p.paused_until);
    if (old_end > p.pause_began) p.paused_total += old_end - p.pause_began;
    const std::uint16_t quanta = pfc->quanta[0];
    p.pause_began = arrival;
    p.paused_until = arrival + transfer_time(quanta * 64.0, p.rate_bps);  // 512 bit times per quantum
    if (quanta == 0) {
        ++p.c.resume_received;
    } else {
        ++p.c.pause_received;
    }
    RNIC_MLOG(debug, link, "port " << port << ": PFC received, output paused for " << quanta << " quanta");
    schedule(port);
}

sc_core::sc_time ethernet_switch::ready_time(int ingress, int output, std::uint32_t len,
                                             const sc_core::sc_time& arrival) const {
    const double in_rate = ports_[ingress]->rate_bps, out_rate = ports_[output]->rate_bps;
    if (params_.mode == forwarding_mode::cut_through && out_rate <= in_rate) {
        // max(arrival - ingress serialisation + latency, now), without going below time zero.
        const sc_core::sc_time now = sim_now();
        const sc_core::sc_time ser_in = serialisation(len, in_rate);
        const sc_core::sc_time t = arrival + params_.latency;
        return t > ser_in && t - ser_in > now ? t - ser_in : now;
    }
    return arrival + params_.latency;
}

void ethernet_switch::forward(int ingress, int output, const std::uint8_t* frame, std::uint32_t len,
                              const sc_core::sc_time& arrival) {
    port_state& out = *ports_[output];
    const shared_buffer::admission a = buffer_.admit(ingress, output, len);
    if (a.admitted()) {
        queued_frame q;
        q.data.assign(frame, frame + len);
        q.ready = ready_time(ingress, output, len, arrival);
        q.ingress = ingress;
        q.charged = a.charged;
        if (a.ecn_congested && net::mark_ecn_ce(q.data.data(), len) == net::ecn_mark::marked) ++out.c.ecn_marked;
        out.queue.push_back(std::move(q));
        note_occupancy(output, sim_now());
        schedule(output);
    } else {
        const char* cause = "";
        switch (a.result) {
        case shared_buffer::verdict::dt_threshold:
            ++out.c.drops_dt_threshold;
            cause = "dynamic threshold";
            break;
        case shared_buffer::verdict::buffer_full:
            ++out.c.drops_buffer_full;
            cause = "buffer full";
            break;
        case shared_buffer::verdict::headroom_full:
            ++out.c.drops_headroom_full;
            cause = "PFC headroom full";
            break;
        case shared_buffer::verdict::admitted:
            break;
        }
        RNIC_MLOG(debug, link,
                  "port " << output << ": dropped a " << len << "-byte frame from port " << ingress << " (" << cause
                          << ", queue " << buffer_.queue_bytes(output) << " bytes)");
    }
    on_pfc_signal(ingress, a.pfc);
}

void ethernet_switch::on_pfc_signal(int ingress, shared_buffer::pfc_signal s) {
    if (s == shared_buffer::pfc_signal::none) return;
    port_state& p = *ports_[ingress];
    if (s == shared_buffer::pfc_signal::xoff) {
        p.pfc_to_send = pfc_pending::xoff;
        // From now on the resume depends on when this port's frames leave: wake at their last bits.
        for (const int o : leaving_ports_) {
            if (ports_[o]->leaving->ingress == ingress) schedule(o);
        }
    } else {
        // A pause that never went out is simply withdrawn; otherwise the sender is told to resume.
        p.pfc_to_send = p.pfc_sender_paused ? pfc_pending::xon : pfc_pending::none;
        p.pfc_refresh_at.reset();
    }
    schedule(ingress);
}

void ethernet_switch::retire(int port, const sc_core::sc_time& t) {
    port_state& p = *ports_[port];
    if (!p.leaving || p.leaving->last_bit > t) return;
    const leaving_frame f = *p.leaving;
    p.leaving.reset();
    leaving_ports_.erase(port);
    const shared_buffer::pfc_signal s = buffer_.release(f.ingress, port, f.len, f.charged);
    note_occupancy(port, f.last_bit);
    on_pfc_signal(f.ingress, s);
}

void ethernet_switch::retire_all(const sc_core::sc_time& t) {
    // Only the ports with a frame on the wire, in port order (the order the buffer sees releases):
    // the work per frame follows the frames in flight, not the switch's size.
    for (auto it = leaving_ports_.begin(); it != leaving_ports_.end();) {
        const int o = *it++;  // retire() may erase o
        retire(o, t);
    }
}

void ethernet_switch::note_occupancy(int port, const sc_core::sc_time& t) {
    ports_[port]->occupancy.set(to_ps(t), buffer_.queue_bytes(port));
}

bool ethernet_switch::needs_timely_release(const port_state& p) const {
    return params_.pfc && p.leaving && buffer_.paused(p.leaving->ingress);
}

void ethernet_switch::schedule(int port) {
    port_state& p = *ports_[port];
    const sc_core::sc_time now = sim_now();
    std::optional<sc_core::sc_time> next;
    auto consider = [&next](const sc_core::sc_time& t) {
        if (!next || t < *next) next = t;
    };
    if (needs_timely_release(p)) consider(p.leaving->last_bit);
    if (p.pfc_to_send != pfc_pending::none) {
        consider(p.wire_free);
    } else if (!p.queue.empty()) {
        consider(std::max({p.queue.front().ready, p.wire_free, p.paused_until}));
    }
    if (p.pfc_refresh_at) consider(*p.pfc_refresh_at);
    // An earlier pending notification stays; a later one is replaced (IEEE 1666 §5.10.8).
    if (next) p.wake.notify(*next > now ? *next - now : sc_core::SC_ZERO_TIME);
}

void ethernet_switch::output_method(int port) {
    port_state& p = *ports_[port];
    const sc_core::sc_time now = sim_now();
    retire(port, now);
    if (p.pfc_refresh_at && *p.pfc_refresh_at <= now) {
        p.pfc_refresh_at.reset();
        if (buffer_.paused(port) && p.pfc_to_send == pfc_pending::none) p.pfc_to_send = pfc_pending::xoff;
    }
    if (p.wire_free <= now) {
        if (p.pfc_to_send != pfc_pending::none) {
            start_pfc_frame(port);
        } else if (!p.queue.empty() && p.queue.front().ready <= now && p.paused_until <= now) {
            start_data_frame(port);
        }
    }
    schedule(port);
}

void ethernet_switch::start_pfc_frame(int port) {
    port_state& p = *ports_[port];
    const sc_core::sc_time now = sim_now();
    const bool pause = p.pfc_to_send == pfc_pending::xoff;
    p.pfc_to_send = pfc_pending::none;
    net::pfc_frame pfc;
    pfc.class_enable = 0x01;
    pfc.quanta[0] = pause ? net::kPfcMaxQuanta : 0;
    std::vector<std::uint8_t> frame = net::build_pfc_frame(port_mac(port), pfc);
    p.wire_free = now + wire_time(static_cast<std::uint32_t>(frame.size()), p.rate_bps);
    p.pfc_sender_paused = pause;
    if (pause) {
        ++p.c.pause_sent;
        // Re-sent after half its time (0xFFFF * 256 bit times) if the port is still above xon.
        p.pfc_refresh_at = now + transfer_time(net::kPfcMaxQuanta * 32.0, p.rate_bps);
    } else {
        ++p.c.resume_sent;
        p.pfc_refresh_at.reset();
    }
    RNIC_MLOG(debug, link,
              "port " << port << ": PFC " << (pause ? "pause" : "resume") << " sent (ingress holds "
                      << buffer_.ingress_bytes(port) << " bytes)");
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    send_frame_bytes(*port_out[port], frame.data(), frame.size(), delay);
}

void ethernet_switch::start_data_frame(int port) {
    port_state& p = *ports_[port];
    const sc_core::sc_time now = sim_now();
    queued_frame q = std::move(p.queue.front());
    p.queue.pop_front();
    const std::uint32_t len = static_cast<std::uint32_t>(q.data.size());
    assert(!p.leaving);  // the previous frame's last bit left before its IFG ended
    p.wire_free = now + wire_time(len, p.rate_bps);
    p.leaving = leaving_frame{now + serialisation(len, p.rate_bps), q.ingress, len, q.charged};
    leaving_ports_.insert(port);
    ++p.c.frames_out;
    p.c.bytes_out += len;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    send_frame_bytes(*port_out[port], q.data.data(), len, delay);
}

sc_core::sc_time ethernet_switch::time_paused(int port) const {
    const port_state& p = *ports_[port];
    const sc_core::sc_time end = std::min(sim_now(), p.paused_until);
    return p.paused_total + (end > p.pause_began ? end - p.pause_began : sc_core::SC_ZERO_TIME);
}

std::vector<std::uint64_t> ethernet_switch::occupancy_maxima(int port) const {
    const port_state& p = *ports_[port];
    const sc_core::sc_time now = sim_now();
    interval_max_trace trace = p.occupancy;
    if (p.leaving && p.leaving->last_bit <= now) {  // left, not yet given back (lazily)
        trace.set(to_ps(p.leaving->last_bit), buffer_.queue_bytes(port) - p.leaving->len);
    }
    return trace.maxima(to_ps(now));
}

void ethernet_switch::report_stats(boost::json::object& out) const {
    out["ports"] = ports();
    out["mode"] = mode_name(params_.mode);
    out["latency_ps"] = to_ps(params_.latency);
    out["buffer_bytes"] = params_.buffer_bytes;
    out["shared_bytes"] = buffer_.shared_capacity();
    out["buffer_peak_bytes"] = buffer_.total_peak();
    out["alpha"] = params_.alpha;
    out["stats_interval_ps"] = to_ps(params_.stats_interval);
    for (int i = 0; i < ports(); ++i) {
        const port_counters& c = ports_[i]->c;
        boost::json::object o;
        o["rate_gbps"] = ports_[i]->rate_bps / 1e9;
        o["frames_in"] = c.frames_in;
        o["bytes_in"] = c.bytes_in;
        o["bad_frames"] = c.bad_frames;
        o["flooded"] = c.flooded;
        o["filtered"] = c.filtered;
        o["mac_control_other"] = c.mac_control_other;
        o["frames_out"] = c.frames_out;
        o["bytes_out"] = c.bytes_out;
        o["drops"] = {{"dt_threshold", c.drops_dt_threshold},
                      {"buffer_full", c.drops_buffer_full},
                      {"headroom_full", c.drops_headroom_full}};
        o["ecn_marked"] = c.ecn_marked;
        o["pause_sent"] = c.pause_sent;
        o["resume_sent"] = c.resume_sent;
        o["pause_received"] = c.pause_received;
        o["resume_received"] = c.resume_received;
        o["paused_ps"] = to_ps(time_paused(i));
        o["queue_peak_bytes"] = buffer_.queue_peak(i);
        o["ingress_peak_bytes"] = buffer_.ingress_peak(i);
        boost::json::array occupancy;
        for (const std::uint64_t v : occupancy_maxima(i)) occupancy.push_back(v);
        o["occupancy_max_bytes"] = std::move(occupancy);
        out["port_" + std::to_string(i)] = std::move(o);
    }
}

}  // namespace rnic
