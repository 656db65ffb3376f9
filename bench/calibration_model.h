// Calibration of the host-bus models (docs/calibration.md): the published references, the analytical
// TLP model they are checked against, and small rigs that drive the SystemC models through their
// sockets. Used by rnic-calibrate (bench/calibration.cpp) and by tests/tb/calibration_tb.cpp.
// The rigs call b_transport from sc_main after sc_start(SC_ZERO_TIME) has completed elaboration
// (multi-sockets register their callbacks then); the models are loosely timed and never wait, so
// each call returns its finish time in `delay` while simulated time stays at zero.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "core/mem_access.h"
#include "dma/dma_engine.h"
#include "host/host_memory.h"
#include "pcie/pcie_endpoint.h"
#include "pcix/pcix_bridge.h"

namespace rnic::calib {

// ---- References --------------------------------------------------------------------------------

// pcie-bench (Neugebauer et al., "Understanding PCIe performance for end host networking",
// SIGCOMM 2018), data set github.com/pcie-bench/data, directory
// nfp6000-1.2GHz_hsw-Xeon-E5-2620v3_dell-t630, file lat_dma_sizes.txt: LAT_DMA_RD, sequential,
// warm host cache, median in ns (NFP-6000 on PCIe Gen3 x8).
struct latency_point {
    std::uint32_t size;
    double median_ns;
};
inline const std::vector<latency_point>& pciebench_read_latency() {
    static const std::vector<latency_point> v = {{64, 546},   {128, 573},  {256, 626},  {512, 706},  {768, 786},
                                                 {1024, 853}, {1280, 933}, {1520, 986}, {2048, 1133}};
    return v;
}

// PCI-X 133: 64 bits x 133.33 MHz = 1066.7 MB/s peak (PCI-X Addendum 1.0; PCI-SIG bandwidth table).
// Sustained: PCI-X is quoted at about 85% bus efficiency (split transactions and the attribute
// phase instead of PCI's retries and wait states; PCI 50-60%), i.e. about 907 MB/s.
constexpr double kPcixPeakMBps = 133.33e6 * 8 / 1e6;
constexpr double kPcixQuotedEfficiency = 0.85;

// ---- The analytical TLP model (pcie-bench's model/mem_bw.py, restated) --------------------------
// Bandwidth for TLPs: raw bandwidth less ACK and UpdateFC DLLPs at the spec's rates and SKP
// ordered sets; a transfer of `size` bytes costs its payload plus a header per TLP
// (8 bytes framing/data link + 12/16 bytes TLP header + ECRC).

inline double tlp_bandwidth(const pcie_params& p) {
    return p.raw_bytes_per_second() * (1.0 - p.overhead_share());
}

// Goodput (bytes/s) of back-to-back DMA writes of `size` bytes.
inline double model_write_goodput(const pcie_params& p, std::uint32_t size) {
    const double tlps = std::ceil(static_cast<double>(size) / p.max_payload);
    return tlp_bandwidth(p) * size / (size + tlps * p.tlp_overhead(p.addr64));
}

// Goodput of back-to-back DMA reads of `size` bytes: completions (MPS-sized, 3DW) limit the
// downstream direction, read requests the upstream; whichever saturates first.
inline double model_read_goodput(const pcie_params& p, std::uint32_t size) {
    const double cpls =
        std::ceil(static_cast<double>(size) / (p.rcb_completions ? p.read_completion_boundary : p.max_payload));
    const double reqs = std::ceil(static_cast<double>(size) / p.max_read_request);
    const double down = size + cpls * p.tlp_overhead(false);
    const double up = reqs * p.tlp_overhead(p.addr64);
    const double bw = tlp_bandwidth(p);
    return std::min(bw * size / down, bw * size / up);
}

// The same bounded by the tags (Little's law): `tags` requests of MRRS bytes per round trip.
inline double model_read_goodput_tags(const pcie_params& p, std::uint32_t size, double round_trip_s) {
    return std::min(model_read_goodput(p, size), p.tags * static_cast<double>(p.max_read_request) / round_trip_s);
}

// ---- Rigs ---------------------------------------------------------------------------------------

struct initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<initiator> out;
    explicit initiator(const sc_core::sc_module_name& n) : sc_module(n), out("out") {}
};

// A sink for the MMIO and interrupt sides of a host interface.
struct null_target : sc_core::sc_module {
    tlm_utils::simple_target_socket<null_target> in;
    explicit null_target(const sc_core::sc_module_name& n) : sc_module(n), in("in") {
        in.register_b_transport(this, &null_target::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) { gp.set_response_status(tlm::TLM_OK_RESPONSE); }
};

// Host memory + a host bus (+ optionally a DMA engine in front), one device-side initiator.
template <typename Bus, typename Params>
std::function<std::unique_ptr<host_interface>()> make(const Params& p) {
    return [p] { return std::make_unique<Bus>(std::is_same_v<Bus, pcie_endpoint> ? "pcie" : "pcix", p); };
}

class rig : public sc_core::sc_module {
public:
    host_memory mem;
    std::unique_ptr<host_interface> bus;
    std::unique_ptr<dma_engine> dma;
    initiator dev;
    initiator cpu;
    initiator nic_irq;
    initiator host_cpu;  // host memory's CPU port
    null_target bar;
    null_target irq;

    // `make_bus` builds the host interface as a child of this rig.
    rig(const sc_core::sc_module_name& n, const host_memory_params& mp,
        const std::function<std::unique_ptr<host_interface>()>& make_bus, const dma_params* dp)
        : sc_module(n),
          mem("mem", mp),
          bus(make_bus()),
          dev("dev"),
          cpu("cpu"),
          nic_irq("nic_irq"),
          host_cpu("host_cpu"),
          bar("bar"),
          irq("irq") {
        if (dp != nullptr) {
            dma = std::make_unique<dma_engine>("dma", *dp);
            dev.out.bind(dma->dma_in);
            dma->pcie_out.bind(bus->dma_in);
        } else {
            dev.out.bind(bus->dma_in);
        }
        bus->mem_out.bind(mem.dma_in);
        cpu.out.bind(bus->mmio_in);
        bus->mmio_out.bind(bar.in);
        bus->irq_out.bind(irq.in);
        nic_irq.out.bind(bus->msix_in);
        host_cpu.out.bind(mem.cpu_in);
        mem.map_dma(0, mem.size());
    }

    // One transfer issued at absolute time `at`; returns its latency (finish - at).
    sc_core::sc_time transfer(bool read, std::uint64_t addr, std::uint32_t len, const sc_core::sc_time& at) {
        buf_.resize(len);
        sc_core::sc_time d = at - sc_core::sc_time_stamp();
        if (read) {
            mem_read(dev.out, addr, buf_.data(), len, d);
        } else {
            mem_write(dev.out, addr, buf_.data(), len, d);
        }
        return sc_core::sc_time_stamp() + d - at;
    }

    // `count` transfers of `len` bytes, all ready at `at`, at consecutive addresses from `base`;
    // returns the goodput in bytes/s (bytes over the time from `at` to the last finish).
    double stream(bool read, std::uint64_t base, std::uint32_t len, int count, const sc_core::sc_time& at,
                  std::uint64_t window = 1u << 20) {
        sc_core::sc_time last = at;
        for (int i = 0; i < count; ++i) {
            const std::uint64_t addr = base + (static_cast<std::uint64_t>(i) * len) % window;
            last = std::max(last, at + transfer(read, addr, len, at));
        }
        return static_cast<double>(len) * count / (last - at).to_seconds();
    }

private:
    std::vector<std::uint8_t> buf_;
};

inline host_memory_params calibration_memory() {
    host_memory_params m;
    m.size = 16ull << 20;
    // Eight DDR4-3200 channels of a server socket, so that memory does not limit Gen4/Gen5 x16.
    m.bandwidth_bps = 8 * 25.6e9 * 8;
    return m;
}

}  // namespace rnic::calib
