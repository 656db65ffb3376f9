// The RNIC's host-bus interface: what sits between the host (CPU, memory, interrupt controller) and
// the device, whichever bus it is. PCIe (models/pcie/pcie_endpoint) and PCI-X
// (models/pcix/pcix_bridge) derive from it and model their bus's timing; this base owns the TLM
// plumbing and what both have in common:
//  - mmio_in  <- host CPU loads/stores to BAR0;     mmio_out -> the RNIC's register file
//    (BAR0 offsets of the MSI-X table and PBA are decoded here and never reach mmio_out)
//  - dma_in   <- the RNIC's DMA engine (bus master); mem_out -> host memory
//  - msix_in  <- the RNIC raises an MSI-X vector (address = vector number, see send_msix());
//    irq_out  -> the host's interrupt controller: a write whose address is the vector the host sees
//    (the table entry's Message Data when the driver programmed it, else the raised vector number)
// A DMA transaction may carry a bus_txn_ext; the bus then reports what the transfer cost on it.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "core/stats.h"
#include "host/bus_txn_ext.h"
#include "host/msix_table.h"

namespace rnic {

class host_interface : public sc_core::sc_module, public stats_reporter {
public:
    tlm_utils::simple_target_socket<host_interface> mmio_in;
    tlm_utils::simple_initiator_socket<host_interface> mmio_out;
    tlm_utils::simple_target_socket<host_interface> dma_in;
    tlm_utils::simple_initiator_socket<host_interface> mem_out;
    tlm_utils::multi_passthrough_target_socket<host_interface> msix_in;  // RDMA engine and control processor
    tlm_utils::simple_initiator_socket<host_interface> irq_out;

    // "pcie" or "pcix". Not sc_object::kind(), which names the SystemC class ("sc_module").
    virtual const char* bus_kind() const = 0;
    const msix_table& msix() const { return msix_; }
    std::uint64_t dma_errors() const { return dma_errors_; }

    // Writes the bus's statistics (report_bus_stats) plus the MSI-X counters and "kind".
    void report_stats(boost::json::object& out) const override;

protected:
    host_interface(const sc_core::sc_module_name& name, const msix_layout& msix);

    // ---- What a bus model implements ----
    // A CPU access to BAR0 arriving at now + delay: model the request crossing the bus, call
    // bar_access() with the delay at which the device sees it, model the response (reads) and leave
    // in `delay` what the CPU waits.
    virtual void mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) = 0;
    // A bus-master transfer; forwards the bytes to mem_out (which may refuse them: then the response
    // status is an error) and leaves the finish time in `delay`. Fills `ext` when not null.
    virtual void dma_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay, bus_txn_ext* ext) = 0;
    // An MSI-X message (a DWORD memory write of `data` to `address`) ready at absolute time `ready`;
    // returns when it reaches the host.
    virtual sc_core::sc_time send_msi(std::uint64_t address, std::uint32_t data, const sc_core::sc_time& ready) = 0;
    virtual void report_bus_stats(boost::json::object& out) const = 0;

    // ---- Helpers for the bus models ----
    // The device-side handling of a BAR0 access at now + dev_delay: the MSI-X table and PBA here,
    // everything else through mmio_out.
    void bar_access(tlm::tlm_generic_payload& gp, sc_core::sc_time& dev_delay);
    void count_dma_error() { ++dma_errors_; }
    // Timeline track names: "<hierarchical name>/<what>".
    std::string track(const char* what) const { return std::string(name()) + "/" + what; }

private:
    void mmio_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void dma_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void msix_b_transport(int initiator, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void deliver(const msix_table::message& m, unsigned vector, const sc_core::sc_time& ready);

    msix_table msix_;
    std::uint64_t dma_errors_ = 0, msix_access_errors_ = 0;
};

}  // namespace rnic
