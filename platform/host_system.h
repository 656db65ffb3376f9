// One host: host memory, the host CPU running its program, the PCIe link and the RNIC behind it.
#pragma once

#include <memory>
#include <systemc>

#include "host/host_memory.h"
#include "host_cpu.h"
#include "pcie/pcie_endpoint.h"
#include "rnic/rnic.h"

namespace rnic::platform {

struct host_params {
    host_memory_params memory;
    pcie_params pcie;
    rnic_params nic;
    host_cpu_params cpu;
};

class host_system : public sc_core::sc_module {
public:
    host_memory mem;
    host_cpu cpu;
    pcie_endpoint pcie;
    rnic_device nic;

    host_system(const sc_core::sc_module_name& name, const host_params& p)
        : sc_module(name), mem("mem", p.memory), cpu("cpu", p.cpu, mem), pcie("pcie", p.pcie), nic("rnic", p.nic) {
        cpu.mmio_out.bind(pcie.mmio_in);
        cpu.mem_out.bind(mem.cpu_in);
        pcie.mmio_out.bind(nic.mmio_in);
        nic.dma_out.bind(pcie.dma_in);
        pcie.mem_out.bind(mem.dma_in);
        nic.irq_out.bind(pcie.msix_in);
        pcie.irq_out.bind(cpu.irq_in);
    }
};

}  // namespace rnic::platform
