// Parameters of the host side (host memory, host bus) from the scenario.
#include "build_params.h"
#include "core/sim_log.h"

namespace rnic::platform {

namespace {

void read_memory(const config::Scenario& s, host_memory_params& memory) {
    memory.size = s.get_size("host_memory.size");
    memory.latency = from_ps(s.get_time_ps("host_memory.latency"));
    memory.bandwidth_bps = s.get_rate_bps("host_memory.bandwidth");
}

void read_pcie(const config::Scenario& s, pcie_params& pcie) {
    auto t = [&s](const std::string& key) { return from_ps(s.get_time_ps(key)); };
    auto u32 = [&s](const std::string& key) { return static_cast<std::uint32_t>(s.get_int(key)); };
    pcie.generation = static_cast<int>(s.get_int("pcie.generation"));
    pcie.lanes = static_cast<int>(s.get_int("pcie.lanes"));
    pcie.max_payload = static_cast<std::uint32_t>(s.get_size("pcie.max_payload"));
    pcie.max_read_request = static_cast<std::uint32_t>(s.get_size("pcie.max_read_request"));
    pcie.read_completion_boundary = static_cast<std::uint32_t>(s.get_size("pcie.read_completion_boundary"));
    pcie.rcb_completions = s.get_bool("pcie.rcb_completions");
    pcie.tags = static_cast<int>(s.get_int("pcie.tags"));
    pcie.ecrc = s.get_bool("pcie.ecrc");
    pcie.addr64 = s.get_bool("pcie.addr64");
    pcie.completion_latency = t("pcie.completion_latency");
    pcie.tlps_per_ack = static_cast<int>(s.get_int("pcie.tlps_per_ack"));
    pcie.posted_header_credits = u32("pcie.posted_header_credits");
    pcie.posted_data_credits = u32("pcie.posted_data_credits");
    pcie.nonposted_header_credits = u32("pcie.nonposted_header_credits");
    pcie.credit_return = t("pcie.credit_return");
    pcie.posted_write_cost = t("pcie.posted_write_cost");
}

void read_pcix(const config::Scenario& s, pcix_params& pcix) {
    pcix.clock_hz = s.get_frequency_hz("pcix.clock");
    pcix.width_bytes = static_cast<std::uint32_t>(s.get_int("pcix.width"));
    pcix.arbitration_cycles = s.get_number("pcix.arbitration_cycles");
    pcix.target_response_cycles = s.get_number("pcix.target_response_cycles");
    pcix.turnaround_cycles = s.get_number("pcix.turnaround_cycles");
    pcix.max_read_byte_count = static_cast<std::uint32_t>(s.get_int("pcix.max_read_byte_count"));
    pcix.max_outstanding_splits = static_cast<std::uint32_t>(s.get_int("pcix.max_outstanding_splits"));
    pcix.max_write_burst = static_cast<std::uint32_t>(s.get_size("pcix.max_write_burst"));
    pcix.split_completion_bytes = static_cast<std::uint32_t>(s.get_size("pcix.split_completion_bytes"));
    pcix.completion_latency = from_ps(s.get_time_ps("pcix.completion_latency"));
    pcix.posted_write_cost = from_ps(s.get_time_ps("pcix.posted_write_cost"));
}

}  // namespace

void build_host_side_params(const config::Scenario& s, host_memory_params& memory, host_bus_params& bus) {
    read_memory(s, memory);
    bus.kind = s.get_string("host_bus.kind") == "pcix" ? host_bus_kind::pcix : host_bus_kind::pcie;
    read_pcie(s, bus.pcie);
    read_pcix(s, bus.pcix);
}

// The declaration in build_params.h (PCIe only), kept for callers that hold a pcie_params.
void build_host_side_params(const config::Scenario& s, host_memory_params& memory, pcie_params& pcie) {
    read_memory(s, memory);
    read_pcie(s, pcie);
}

}  // namespace rnic::platform
