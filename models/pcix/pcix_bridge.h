// PCI-X (PCI-X Addendum to the PCI Local Bus Specification, rev 1.0b/2.0) as the RNIC's host bus:
// a host_interface whose bus is one 64-bit, 133 MHz PCI-X segment shared by everything on it (the
// host bridge and the RNIC). The bus is half duplex: one timed resource carries every transaction,
// DMA in both directions, MMIO and MSI-X alike.
//
// A transaction costs whole bus clocks:
//   arbitration (REQ#/GNT# hand-over that the previous transaction could not hide)
//   + address phase (1 clock; 2 with a dual-address cycle for addresses at or above 4 GiB)
//   + attribute phase (1 clock: requester ID, tag, byte count, relaxed ordering)
//   + target response (DEVSEL# decode: 1 = A, 2 = B, 3 = C, 4 = subtractive)
//   + data phases (8 bytes each for a 64-bit bus, counted from the 8-byte lane of the start address)
//   + bus turnaround (1 clock of idle between transactions).
// DMA writes are Memory Write Block transactions, posted by the host bridge, which disconnects a
// burst at an allowable disconnect boundary (ADB, every 128 bytes) once `max_write_burst` bytes
// have gone. DMA reads are split transactions: a Memory Read Block request of at most MMRBC bytes
// (the Maximum Memory Read Byte Count of the device's PCI-X Command register) answered with a
// Split Response (one more clock), then, `completion_latency` plus host memory's time later, the
// bridge arbitrates and returns the data in Split Completion transactions of at most
// `split_completion_bytes` (0: the whole request). At most `max_outstanding_splits` reads are
// outstanding (also in the Command register). A read the host refuses comes back as a Split
// Completion Error message; a refused write is dropped by the bridge (it was posted).
#pragma once

#include <cstdint>
#include <string>

#include "host/host_interface.h"
#include "pcix/bus_calendar.h"
#include "host/occupancy_pool.h"

namespace rnic {

struct pcix_params {
    double clock_hz = 133.33e6;         // PCI-X 133 (7.5 ns clock)
    std::uint32_t width_bytes = 8;      // 64-bit bus
    double arbitration_cycles = 1;      // per transaction
    double target_response_cycles = 2;  // decode B
    double turnaround_cycles = 1;
    std::uint32_t max_read_byte_count = 512;   // MMRBC: 512, 1024, 2048 or 4096 (reset value 512)
    std::uint32_t max_outstanding_splits = 4;  // 1, 2, 3, 4, 8, 12, 16 or 32 (reset value 1)
    std::uint32_t max_write_burst = 512;       // bytes before the host bridge disconnects at an ADB
    std::uint32_t split_completion_bytes = 0;  // 0: a split completion carries the whole request
    // Host-bridge turnaround of a read request before host memory's own time.
    sc_core::sc_time completion_latency = sc_core::sc_time(500, sc_core::SC_NS);
    sc_core::sc_time posted_write_cost = sc_core::sc_time(20, sc_core::SC_NS);
    // The function's MSI-X table and PBA in BAR0 (as pcie_params::msix).
    msix_layout msix;

    double peak_bytes_per_second() const { return clock_hz * width_bytes; }
};

class pcix_bridge : public host_interface {
public:
    pcix_bridge(const sc_core::sc_module_name& name, const pcix_params& params);

    const char* bus_kind() const override { return "pcix"; }
    const pcix_params& params() const { return params_; }

    struct txn_counts {
        std::uint64_t mem_write = 0;         // Memory Write Block bursts (DMA writes)
        std::uint64_t read_request = 0;      // Memory Read Block requests (DMA reads)
        std::uint64_t split_completion = 0;  // data returned to the device
        std::uint64_t split_error = 0;       // Split Completion Error messages
        std::uint64_t mmio_write = 0, mmio_read = 0, msi = 0;
        std::uint64_t dual_address = 0;  // transactions with a DAC
        std::uint64_t data_bytes = 0;    // bytes in data phases
        std::uint64_t clocks = 0;        // bus clocks used
        std::uint64_t transactions() const {
            return mem_write + read_request + split_completion + split_error + mmio_write + mmio_read + msi;
        }
    };
    const txn_counts& counts() const { return counts_; }
    const bus_calendar& bus() const { return bus_; }

protected:
    void mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override;
    void dma_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay, bus_txn_ext* ext) override;
    sc_core::sc_time send_msi(std::uint64_t address, std::uint32_t data, const sc_core::sc_time& ready) override;
    void report_bus_stats(boost::json::object& out) const override;

private:
    enum class txn_type { mem_write, read_request, split_completion, split_error, mmio_write, mmio_read, msi };
    // One transaction with `data_bytes` of data starting at `addr` (extra_cycles for e.g. a split
    // response); returns when the bus is free again.
    sc_core::sc_time transaction(txn_type type, const sc_core::sc_time& ready, std::uint64_t addr,
                                 std::uint32_t data_bytes, double extra_cycles, bool dual_address, bus_txn_ext* ext);
    sc_core::sc_time dma_write(tlm::tlm_generic_payload& gp, const sc_core::sc_time& ready, bus_txn_ext* ext);
    sc_core::sc_time dma_read(tlm::tlm_generic_payload& gp, const sc_core::sc_time& ready, bus_txn_ext* ext);

    pcix_params params_;
    bus_calendar bus_;
    occupancy_pool splits_;
    txn_counts counts_;
    std::string track_;
    std::uint64_t dma_read_bytes_ = 0, dma_write_bytes_ = 0;
    tlm::tlm_generic_payload mem_scratch_;  // a read request's access to host memory
};

}  // namespace rnic
