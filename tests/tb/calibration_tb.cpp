// The calibrations of docs/calibration.md as tests (rnic-calibrate prints the same figures): DMA
// read round trip against pcie-bench's measurements, goodput against the analytical TLP model,
// PCI-X 133 sustained bandwidth against its peak and the quoted sustained figure.
#include <gtest/gtest.h>

#include "bench/calibration_model.h"

namespace rnic::test {
namespace {

using namespace rnic::calib;

sc_core::sc_time us(double v) {
    return sc_core::sc_time(v, sc_core::SC_US);
}

TEST(Calibration, DmaReadRoundTripMatchesPcieBenchWithin3Percent) {
    dma_params dp;
    rig r("lat", host_memory_params{}, make<pcie_endpoint>(pcie_params{}), &dp);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    int k = 0;
    for (const latency_point& pt : pciebench_read_latency()) {
        const double ns = r.transfer(true, 0x100000, pt.size, us(50.0 * ++k)).to_seconds() * 1e9;
        EXPECT_NEAR(ns / pt.median_ns, 1.0, 0.03)
            << pt.size << " bytes: model " << ns << " ns, pcie-bench " << pt.median_ns << " ns";
    }
}

TEST(Calibration, GoodputMatchesTheAnalyticalTlpModelWithin2Percent) {
    std::vector<std::unique_ptr<rig>> rigs;
    for (const auto& [gen, lanes] : std::vector<std::pair<int, int>>{{3, 8}, {4, 16}, {5, 16}}) {
        for (std::uint32_t mps : {128u, 256u, 512u}) {
            pcie_params p;
            p.generation = gen;
            p.lanes = lanes;
            p.max_payload = mps;
            p.addr64 = true;
            p.tags = 256;
            const std::string n = "g" + std::to_string(gen) + "m" + std::to_string(mps);
            rigs.push_back(std::make_unique<rig>(n.c_str(), calibration_memory(), make<pcie_endpoint>(p), nullptr));
        }
    }
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    for (auto& r : rigs) {
        const pcie_params& p = static_cast<pcie_endpoint&>(*r->bus).params();
        const double wr = r->stream(false, 0x100000, 4096, 500, us(10));
        const double rd = r->stream(true, 0x100000, 4096, 500, us(10000));
        EXPECT_NEAR(wr / model_write_goodput(p, 4096), 1.0, 0.02)
            << "Gen" << p.generation << " x" << p.lanes << " MPS " << p.max_payload << " write";
        EXPECT_NEAR(rd / model_read_goodput(p, 4096), 1.0, 0.02)
            << "Gen" << p.generation << " x" << p.lanes << " MPS " << p.max_payload << " read";
    }
}

TEST(Calibration, Pcix133SustainsNearItsQuotedFigureAndNeverExceedsPeak) {
    pcix_params defaults;
    pcix_params big;
    big.max_write_burst = 4096;
    big.max_read_byte_count = 4096;
    rig mixed("mixed", host_memory_params{}, make<pcix_bridge>(defaults), nullptr);
    rig bursts("bursts", host_memory_params{}, make<pcix_bridge>(big), nullptr);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    sc_core::sc_time last = us(10);
    for (int i = 0; i < 1000; ++i) {
        last = std::max(last, us(10) + mixed.transfer(i % 2 == 0, 0x100000 + (i % 64) * 4096u, 4096, us(10)));
    }
    const double mixed_mbps = 1000.0 * 4096 / (last - us(10)).to_seconds() / 1e6;
    EXPECT_NEAR(mixed_mbps / (kPcixPeakMBps * kPcixQuotedEfficiency), 1.0, 0.05) << mixed_mbps << " MB/s";
    const double burst_mbps = bursts.stream(false, 0x100000, 4096, 1000, us(10)) / 1e6;
    EXPECT_LE(burst_mbps, kPcixPeakMBps);
    EXPECT_GE(burst_mbps, 0.95 * kPcixPeakMBps);
}

}  // namespace
}  // namespace rnic::test
