// One host: host memory, the host CPU running its program, the host bus (PCIe or PCI-X, chosen by
// the scenario key host_bus.kind) and the RNIC behind it.
#pragma once

#include <memory>
#include <systemc>

#include "firmware/firmware.h"
#include "host/host_interface.h"
#include "host/host_memory.h"
#include "host_cpu.h"
#include "pcie/pcie_endpoint.h"
#include "pcix/pcix_bridge.h"
#include "rnic/rnic.h"

namespace rnic::config {
class scenario;
}

namespace rnic::platform {

enum class host_bus_kind { pcie, pcix };

// Which host bus and the parameters of each (only the chosen one is used).
struct host_bus_params {
    host_bus_kind kind = host_bus_kind::pcie;
    pcie_params pcie;
    pcix_params pcix;
};

struct host_params {
    host_memory_params memory;
    host_bus_params pcie;  // the host bus; named `pcie` because build_params.cpp fills it as p.pcie
    rnic_params nic;
    fw::costs firmware;  // the firmware's handler costs in control-processor cycles (rnic.cp.*_cycles)
    host_cpu_params cpu;
};

// Host `host`'s memory and host-bus parameters from the scenario: its own hosts.<i>.* keys where it
// has them, the global ones otherwise (build_host_params.cpp).
void build_host_side_params(const config::scenario& s, int host, host_memory_params& memory, host_bus_params& bus);
// simulation.resource_order: how the shared resources without a key of their own book requests.
inline booking resource_order(const config::scenario& s) {
    return s.get_string("simulation.resource_order") == "time" ? booking::backfill : booking::in_order;
}

class host_system : public sc_core::sc_module {
public:
    host_memory mem;
    host_cpu cpu;

private:
    std::unique_ptr<host_interface> bus_;

public:
    // The host bus, PCIe or PCI-X (its statistics say which under "kind"). Named `pcie` so that the
    // results keep their "<host>.pcie" key; bus() is the same object.
    host_interface& pcie;
    rnic_device nic;

    host_system(const sc_core::sc_module_name& name, const host_params& p)
        : sc_module(name),
          mem("mem", p.memory),
          cpu("cpu", p.cpu, mem),
          bus_(make_bus(p.pcie)),
          pcie(*bus_),
          nic("rnic", p.nic, firmware_for(p.firmware)) {
        cpu.mmio_out.bind(pcie.mmio_in);
        cpu.mem_out.bind(mem.cpu_in);
        pcie.mmio_out.bind(nic.mmio_in);
        nic.dma_out.bind(pcie.dma_in);
        pcie.mem_out.bind(mem.dma_in);
        nic.irq_out.bind(pcie.msix_in);
        pcie.irq_out.bind(cpu.irq_in);
    }

    host_interface& bus() { return *bus_; }
    const host_interface& bus() const { return *bus_; }

private:
    // The one place the NIC's program is chosen: the firmware of firmware/, on the control
    // processor's HAL, as the host CPU is given its program by the simulation.
    static fw::program_factory firmware_for(const fw::costs& costs) {
        return [costs](fw::hal& hal) { return std::make_unique<fw::firmware>(hal, costs); };
    }
    // The bus decodes the MSI-X table and PBA of the function behind it: the RNIC's (regmap.h).
    static std::unique_ptr<host_interface> make_bus(host_bus_params p) {
        p.pcie.msix = p.pcix.msix = rnic_device::msix_function();
        if (p.kind == host_bus_kind::pcix) return std::make_unique<pcix_bridge>("pcix", p.pcix);
        return std::make_unique<pcie_endpoint>("pcie", p.pcie);
    }
};

}  // namespace rnic::platform
