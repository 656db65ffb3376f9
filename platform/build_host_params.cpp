// Parameters of the host side (host memory, host bus) from the scenario. Each key is read for one
// host: its own hosts.<i>.* key where the hosts array names the host (which reads the global key
// while unset), the global key otherwise (host_setting_key, schema_host.cpp).
#include "build_params.h"
#include "core/sim_log.h"
#include "schema_parts.h"

namespace rnic::platform {

namespace {

// Reads one host's keys: key("pcie.lanes") is that host's key of the setting.
class host_keys {
public:
    host_keys(const config::scenario& s, int host) : s_(s), host_(host) {}
    std::string key(const std::string& name) const { return host_setting_key(s_, host_, name); }
    sc_core::sc_time time(const std::string& name) const { return from_ps(s_.get_time_ps(key(name))); }
    std::uint32_t u32(const std::string& name) const { return static_cast<std::uint32_t>(s_.get_int(key(name))); }
    std::uint32_t size32(const std::string& name) const { return static_cast<std::uint32_t>(s_.get_size(key(name))); }
    int integer(const std::string& name) const { return static_cast<int>(s_.get_int(key(name))); }
    bool boolean(const std::string& name) const { return s_.get_bool(key(name)); }
    double number(const std::string& name) const { return s_.get_number(key(name)); }
    double rate_bps(const std::string& name) const { return s_.get_rate_bps(key(name)); }
    double frequency_hz(const std::string& name) const { return s_.get_frequency_hz(key(name)); }
    std::string string(const std::string& name) const { return s_.get_string(key(name)); }

private:
    const config::scenario& s_;
    int host_;
};

void read_memory(const config::scenario& s, const host_keys& k, host_memory_params& memory) {
    memory.size = s.get_size("host_memory.size");  // every host's (the workloads lay buffers out by it)
    memory.latency = k.time("host_memory.latency");
    memory.bandwidth_bps = k.rate_bps("host_memory.bandwidth");
}

void read_pcie(const host_keys& k, pcie_params& pcie) {
    pcie.generation = k.integer("pcie.generation");
    pcie.lanes = k.integer("pcie.lanes");
    pcie.max_payload = k.size32("pcie.max_payload");
    pcie.max_read_request = k.size32("pcie.max_read_request");
    pcie.read_completion_boundary = k.size32("pcie.read_completion_boundary");
    pcie.rcb_completions = k.boolean("pcie.rcb_completions");
    pcie.tags = k.integer("pcie.tags");
    pcie.ecrc = k.boolean("pcie.ecrc");
    pcie.addr64 = k.boolean("pcie.addr64");
    pcie.completion_latency = k.time("pcie.completion_latency");
    pcie.tlps_per_ack = k.integer("pcie.tlps_per_ack");
    pcie.posted_header_credits = k.u32("pcie.posted_header_credits");
    pcie.posted_data_credits = k.u32("pcie.posted_data_credits");
    pcie.nonposted_header_credits = k.u32("pcie.nonposted_header_credits");
    pcie.credit_return = k.time("pcie.credit_return");
    pcie.posted_write_cost = k.time("pcie.posted_write_cost");
}

void read_pcix(const host_keys& k, pcix_params& pcix) {
    pcix.clock_hz = k.frequency_hz("pcix.clock");
    pcix.width_bytes = k.u32("pcix.width");
    pcix.arbitration_cycles = k.number("pcix.arbitration_cycles");
    pcix.target_response_cycles = k.number("pcix.target_response_cycles");
    pcix.turnaround_cycles = k.number("pcix.turnaround_cycles");
    pcix.max_read_byte_count = k.u32("pcix.max_read_byte_count");
    pcix.max_outstanding_splits = k.u32("pcix.max_outstanding_splits");
    pcix.max_write_burst = k.size32("pcix.max_write_burst");
    pcix.split_completion_bytes = k.size32("pcix.split_completion_bytes");
    pcix.completion_latency = k.time("pcix.completion_latency");
    pcix.posted_write_cost = k.time("pcix.posted_write_cost");
}

}  // namespace

void build_host_side_params(const config::scenario& s, int host, host_memory_params& memory, host_bus_params& bus) {
    const host_keys k(s, host);
    read_memory(s, k, memory);
    bus.kind = k.string("host_bus.kind") == "pcix" ? host_bus_kind::pcix : host_bus_kind::pcie;
    read_pcie(k, bus.pcie);
    read_pcix(k, bus.pcix);
    const booking order = resource_order(s);
    memory.port_order = order;
    bus.pcie.order = order;
}

}  // namespace rnic::platform
