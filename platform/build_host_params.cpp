// Parameters of the host side (host memory, host bus) from the scenario.
#include "build_params.h"
#include "core/sim_log.h"

namespace rnic::platform {

void build_host_side_params(const config::Scenario& s, host_memory_params& memory, pcie_params& pcie) {
    auto t = [&s](const std::string& key) { return from_ps(s.get_time_ps(key)); };
    memory.size = s.get_size("host_memory.size");
    memory.latency = t("host_memory.latency");
    memory.bandwidth_bps = s.get_rate_bps("host_memory.bandwidth");

    pcie.generation = static_cast<int>(s.get_int("pcie.generation"));
    pcie.lanes = static_cast<int>(s.get_int("pcie.lanes"));
    pcie.max_payload = static_cast<std::uint32_t>(s.get_size("pcie.max_payload"));
    pcie.max_read_request = static_cast<std::uint32_t>(s.get_size("pcie.max_read_request"));
    pcie.read_completion_boundary = static_cast<std::uint32_t>(s.get_size("pcie.read_completion_boundary"));
    pcie.tags = static_cast<int>(s.get_int("pcie.tags"));
    pcie.ecrc = s.get_bool("pcie.ecrc");
    pcie.completion_latency = t("pcie.completion_latency");
    pcie.tlps_per_ack = static_cast<int>(s.get_int("pcie.tlps_per_ack"));
    pcie.posted_write_cost = t("pcie.posted_write_cost");
}

}  // namespace rnic::platform
