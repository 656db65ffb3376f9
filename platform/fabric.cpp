#include "fabric.h"

#include <stdexcept>

#include "build_params.h"
#include "core/sim_log.h"

namespace rnic::platform {

namespace {

ethernet_switch_params switch_params(const config::scenario& s, const std::string& name, std::vector<double> rates) {
    ethernet_switch_params p;
    p.ports = static_cast<int>(rates.size());
    p.rate_bps = rates.empty() ? 0.0 : rates.front();
    p.port_rate_bps = std::move(rates);
    p.mode = s.get_string("switch.mode") == "cut_through" ? forwarding_mode::cut_through
                                                          : forwarding_mode::store_and_forward;
    p.latency = from_ps(s.get_time_ps("switch.latency"));
    p.mtu = static_cast<std::uint32_t>(s.get_int("link.mtu"));
    p.buffer_bytes = s.get_size("switch.buffer");
    p.alpha = s.get_number("switch.alpha");
    p.ecn = s.get_bool("switch.ecn.enabled");
    p.ecn_threshold = s.get_size("switch.ecn.threshold");
    p.pfc = s.get_bool("switch.pfc.enabled");
    p.pfc_xoff = s.get_size("switch.pfc.xoff");
    p.pfc_xon = s.get_size("switch.pfc.xon");
    p.pfc_headroom = s.get_size("switch.pfc.headroom");
    p.stats_interval = from_ps(s.get_time_ps("switch.stats_interval"));
    // The ECMP salt differs per switch, as real switches seed their hash per device.
    std::uint64_t h = static_cast<std::uint64_t>(s.get_int("simulation.seed")) * 0x9e3779b97f4a7c15ULL;
    for (char c : name) h = (h ^ static_cast<std::uint8_t>(c)) * 0x100000001b3ULL;
    p.seed = h;
    return p;
}

// Every link draws its faults from its own seeded generators: host i's link from seed and i.
std::uint64_t link_seed(const config::scenario& s, std::size_t index) {
    return static_cast<std::uint64_t>(s.get_int("simulation.seed")) * 0x100000001b3ULL + index + 1;
}

}  // namespace

fabric::fabric(const config::scenario& s, const std::vector<host_system*>& hosts,
               const std::vector<drv::station_config>& stations, const std::string& pcap)
    : kind_(s.get_string("topology.kind")) {
    const std::size_t n = hosts.size();
    for (host_system* h : hosts) host_names_.push_back(h->name());
    // Host i's link (hosts.<i>.link, or link.* for what it leaves unset); the switch port facing the
    // host runs at that link's rate.
    std::vector<ethernet_link_params> links;
    for (std::size_t i = 0; i < n; ++i) {
        links.push_back(build_host_link_params(s, static_cast<int>(i)));
        links.back().seed = link_seed(s, i);
    }
    if (!pcap.empty() && pcap.find("%h") == std::string::npos) {
        pcaps_.push_back(std::make_unique<proto::pcap_writer>());
        std::string error;
        if (!pcaps_.back()->open(pcap, &error)) throw std::runtime_error(error);
    }
    if (kind_ == "star") {
        // Only the ports in use are built: an idle port changes nothing (the buffer is shared, and
        // topology.switch_ports bounds how many there may be).
        std::vector<double> rates;
        for (const ethernet_link_params& l : links) rates.push_back(l.rate_bps);
        switches_.push_back(std::make_unique<ethernet_switch>("switch", switch_params(s, "switch", rates)));
        for (std::size_t i = 0; i < n; ++i) {
            join(*hosts[i], *switches_[0], static_cast<int>(i), i, links[i], pcap);
            switches_[0]->add_route(stations[i].mac, {static_cast<int>(i)});
        }
        return;
    }
    // leaf_spine: leaf l carries hosts l*per_leaf .. (l+1)*per_leaf-1 on ports 0..per_leaf-1 and its
    // uplink to spine k on port per_leaf + k; spine k reaches leaf l on port l.
    const auto leaves = static_cast<std::size_t>(s.get_int("topology.leaves"));
    const auto spines = static_cast<std::size_t>(s.get_int("topology.spines"));
    const std::size_t per_leaf = n / leaves;
    const double up_rate = s.get_rate_bps("topology.uplink.rate");
    for (std::size_t l = 0; l < leaves; ++l) {
        std::vector<double> rates(per_leaf + spines, up_rate);
        for (std::size_t j = 0; j < per_leaf; ++j) rates[j] = links[l * per_leaf + j].rate_bps;
        const std::string name = "leaf" + std::to_string(l);
        switches_.push_back(std::make_unique<ethernet_switch>(name.c_str(), switch_params(s, name, rates)));
    }
    for (std::size_t k = 0; k < spines; ++k) {
        const std::string name = "spine" + std::to_string(k);
        switches_.push_back(std::make_unique<ethernet_switch>(
            name.c_str(), switch_params(s, name, std::vector<double>(leaves, up_rate))));
    }
    // Port a is the leaf: "up" faults hit what a leaf sends to a spine.
    ethernet_link_params up = build_link_params(s, "topology.uplink.rate", "topology.uplink.propagation",
                                                "topology.uplink.up", "topology.uplink.down");
    for (std::size_t l = 0; l < leaves; ++l) {
        for (std::size_t k = 0; k < spines; ++k) {
            ethernet_switch& leaf = *switches_[l];
            ethernet_switch& spine = *switches_[leaves + k];
            const std::string name = "uplink_leaf" + std::to_string(l) + "_spine" + std::to_string(k);
            up.seed = link_seed(s, n + l * spines + k);
            uplinks_.push_back(std::make_unique<ethernet_link>(name.c_str(), up));
            ethernet_link& link = *uplinks_.back();
            leaf.port_out[per_leaf + k]->bind(link.port_a_in);
            link.port_a_out.bind(*leaf.port_in[per_leaf + k]);
            spine.port_out[l]->bind(link.port_b_in);
            link.port_b_out.bind(*spine.port_in[l]);
        }
    }
    std::vector<int> uplink_ports;
    for (std::size_t k = 0; k < spines; ++k) uplink_ports.push_back(static_cast<int>(per_leaf + k));
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t l = i / per_leaf;
        join(*hosts[i], *switches_[l], static_cast<int>(i % per_leaf), i, links[i], pcap);
        for (std::size_t other = 0; other < leaves; ++other) {
            // Its own leaf delivers; every other leaf sends it up any spine (ECMP per flow).
            if (other == l)
                switches_[other]->add_route(stations[i].mac, {static_cast<int>(i % per_leaf)});
            else
                switches_[other]->add_route(stations[i].mac, uplink_ports);
        }
        for (std::size_t k = 0; k < spines; ++k)
            switches_[leaves + k]->add_route(stations[i].mac, {static_cast<int>(l)});
    }
}

fabric::~fabric() = default;

void fabric::join(host_system& host, ethernet_switch& sw, int port, std::size_t index, const ethernet_link_params& p,
                  const std::string& pcap) {
    const std::string name = "link_" + host_names_[index];
    host_links_.push_back(std::make_unique<ethernet_link>(name.c_str(), p));
    ethernet_link& link = *host_links_.back();
    host.nic.eth_tx.bind(link.port_a_in);
    link.port_a_out.bind(host.nic.eth_rx);
    sw.port_out[static_cast<std::size_t>(port)]->bind(link.port_b_in);
    link.port_b_out.bind(*sw.port_in[static_cast<std::size_t>(port)]);
    attachment_.emplace_back(sw.name(), port);
    if (pcap.empty()) return;
    if (pcap.find("%h") == std::string::npos) {
        link.set_pcap(pcaps_.front().get(), /*a_to_b=*/false, /*b_to_a=*/true);  // as delivered to the host
        return;
    }
    std::string file = pcap;
    for (std::size_t at; (at = file.find("%h")) != std::string::npos;) file.replace(at, 2, host_names_[index]);
    pcaps_.push_back(std::make_unique<proto::pcap_writer>());
    std::string error;
    if (!pcaps_.back()->open(file, &error)) throw std::runtime_error(error);
    link.set_pcap(pcaps_.back().get());
}

void fabric::report(boost::json::object& modules) const {
    boost::json::object links, uplinks, switches;
    for (std::size_t i = 0; i < host_links_.size(); ++i) {
        boost::json::object o;
        host_links_[i]->report_stats(o);
        links[host_names_[i]] = std::move(o);
    }
    for (const auto& l : uplinks_) {
        boost::json::object o;
        l->report_stats(o);
        uplinks[l->basename()] = std::move(o);
    }
    for (const auto& sw : switches_) {
        boost::json::object o;
        sw->report_stats(o);
        switches[sw->basename()] = std::move(o);
    }
    modules["links"] = std::move(links);
    if (!uplinks.empty()) modules["uplinks"] = std::move(uplinks);
    modules["switches"] = std::move(switches);
}

boost::json::object fabric::describe() const {
    boost::json::object o;
    o["kind"] = kind_;
    o["hosts"] = host_names_.size();
    boost::json::object at;
    for (std::size_t i = 0; i < host_names_.size(); ++i) {
        at[host_names_[i]] = {{"switch", attachment_[i].first}, {"port", attachment_[i].second}};
    }
    o["attachment"] = std::move(at);
    return o;
}

}  // namespace rnic::platform
