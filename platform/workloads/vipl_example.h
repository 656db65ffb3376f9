// Example application of the VIPL-style API (driver/vipl.h) over VI/TCP (seed 003): host a's VI
// connects to host b's (VipConnectRequest / VipConnectWait + VipConnectAccept, the firmware's CE
// exchange on the wire), then for each of workload.iterations rounds sends a Send message into a
// posted receive descriptor, RDMA-Writes a block into the server's registered memory and RDMA-Reads
// it back, waiting for each descriptor (VipSendWait / VipRecvWait) and checking every byte: the
// server checks what each Send delivered, the client what each Read returned. Sizes cycle through
// workload.sizes. Runs inside rnic-sim as workload.type = "vipl_example" (with rnic.framing = vitcp,
// or over any framing: the API is the same).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "oob.h"
#include "workloads/workload.h"

namespace rnic::examples {

struct vipl_example_config {
    std::uint32_t rounds = 10;                      // workload.iterations
    std::vector<std::uint64_t> sizes = {64, 4096};  // workload.sizes
    std::uint16_t port = 18515;
    std::uint64_t timeout_ps = 20'000'000'000ULL;  // VipSendWait/VipRecvWait timeout (20 ms)
};

class vipl_example : public platform::host_workload {
public:
    vipl_example(const vipl_example_config& cfg, platform::oob_channel& oob, std::function<void()> on_done)
        : cfg_(cfg), oob_(oob), on_done_(std::move(on_done)) {}
    void client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) override;
    void server(drv::host_bus& bus, const drv::station_config& station) override;
    const platform::workload_result& result() const override { return result_; }

private:
    void fail(const std::string& what);
    std::uint64_t max_size() const;

    vipl_example_config cfg_;
    platform::oob_channel& oob_;
    std::function<void()> on_done_;
    platform::workload_result result_;
};

}  // namespace rnic::examples
