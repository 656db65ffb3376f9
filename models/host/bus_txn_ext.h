// What the host bus (PCIe endpoint, PCI-X bridge) reports about one DMA transaction that carries
// this extension; the DMA engine attaches one to every bus transfer it issues.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>

namespace rnic {

// Filled by the host bus for a DMA transaction that carries it (the DMA engine attaches one).
struct bus_txn_ext : tlm::tlm_extension<bus_txn_ext> {
    std::uint64_t packets = 0;     // TLPs (PCIe, both directions) or bus transactions (PCI-X)
    std::uint64_t wire_bytes = 0;  // bytes those occupied on the bus, overheads included
    // Absolute time the first data reached the device (reads) or left it (writes).
    sc_core::sc_time first_data = sc_core::SC_ZERO_TIME;

    tlm::tlm_extension_base* clone() const override { return new bus_txn_ext(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const bus_txn_ext&>(other); }
};

}  // namespace rnic
