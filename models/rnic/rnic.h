// The RNIC: assembles the NIC's blocks and owns BAR0's register file (declared in regmap.h).
//  mmio_in  <- BAR0 accesses from the PCIe endpoint (registers and doorbells)
//  dma_out  -> bus-master traffic to the PCIe endpoint (from the DMA engine)
//  irq_out  -> MSI-X requests to the PCIe endpoint (from the RDMA engine and the control processor)
//  eth_tx   -> frames to the link;  eth_rx <- frames from the link
// This is the one place that chooses which model each block uses.
#pragma once

#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "buffer/buffer_memory.h"
#include "core/stats.h"
#include "cp/control_processor.h"
#include "dma/dma_engine.h"
#include "framing/framing_factory.h"
#include "framing/mpa_framer.h"
#include "host/msix_table.h"
#include "rdma/context_memory.h"
#include "rdma/rdma_engine.h"
#include "rnic/regmap.h"
#include "toe/tcp_engine.h"

namespace rnic {

struct rnic_params {
    dma_params dma;
    buffer_memory_params buffer;
    tcp_engine_params tcp;
    framing_params framing;  // which framing, on which datapath model
    mpa_framer_params framer;
    rdma_engine_params rdma;
    context_memory_params contexts;
    control_processor_params cp;
};

class rnic_device : public sc_core::sc_module, public regfile_if, public stats_reporter {
public:
    tlm_utils::simple_target_socket<rnic_device> mmio_in;
    tlm::tlm_initiator_socket<> dma_out;
    tlm_utils::simple_initiator_socket<rnic_device> irq_out;
    tlm::tlm_initiator_socket<> eth_tx;
    tlm::tlm_target_socket<> eth_rx;
    // BAR0's doorbells go out through these, bound to the engines' doorbell exports (the control
    // paths are narrow interfaces behind ports, docs/architecture.md).
    sc_core::sc_port<rdma_doorbell_if> rdma_doorbell_out;
    sc_core::sc_port<cp_doorbell_if> cp_doorbell_out;

    // `firmware` makes the program the control processor runs (the platform gives the firmware of
    // firmware/, a testbench may give its own); the device knows it only as a fw::program.
    rnic_device(const sc_core::sc_module_name& name, const rnic_params& params, const fw::program_factory& firmware);

    // Where BAR0 puts the MSI-X table and PBA and how many vectors the device raises (regmap.h): the
    // host bus in front of the device decodes them (pcie_params::msix, pcix_params::msix), so the
    // platform hands them to it.
    static msix_layout msix_function();
    // `p` with the device's scatter/gather element format (regmap.h) for the DMA engine.
    static dma_params with_device_formats(dma_params p);

    tcp_engine& toe() { return *toe_; }
    // Every block's statistics, keyed by block name.
    void report_stats(boost::json::object& out) const override;
    // What is outstanding in the blocks (the stuck-run watchdog's dump).
    void report_diagnostics(boost::json::object& out) const override;
    // What is alive on the device now (results key live_objects, simulation.live_objects): QPs, CQs,
    // valid STags, buffer-memory regions, TCP connections (and those of them in TIME-WAIT, which
    // keep their region until 2MSL has passed, RFC 793).
    void report_live_objects(boost::json::object& out) const;
    // Grows with every work request taken, completion written, frame sent or received and firmware
    // command executed: unchanged over an interval means the NIC made no progress in it.
    std::uint64_t progress() const;

    // regfile_if (the firmware's view of BAR0)
    std::uint32_t fw_read(std::uint32_t offset) const override;
    void fw_write(std::uint32_t offset, std::uint32_t value) override;

private:
    void mmio_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void irq_b_transport(int initiator, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    bool reg_index(std::uint32_t offset, std::size_t* index) const;
    void host_write(std::uint32_t offset, std::uint32_t value, const sc_core::sc_time& delay);
    std::uint32_t host_read(std::uint32_t offset) const;
    void update_station();
    void reset_registers();

    tlm_utils::multi_passthrough_target_socket<rnic_device> irq_collect_;
    std::unique_ptr<dma_engine> dma_;
    std::unique_ptr<buffer_memory> buffer_;
    std::unique_ptr<framing> framing_;  // before its users: destroyed after them
    std::unique_ptr<tcp_engine> toe_;
    std::unique_ptr<mpa_framer> framer_;
    std::unique_ptr<context_memory> ctx_;
    std::unique_ptr<rdma_engine> rdma_;
    std::unique_ptr<control_processor> cp_;
    std::vector<std::uint32_t> regs_;
    std::uint64_t mmio_errors_ = 0, doorbells_ = 0;
};

}  // namespace rnic
