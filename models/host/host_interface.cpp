#include "host/host_interface.h"

#include <cstring>

#include "core/sim_log.h"
#include "core/timeline.h"

namespace rnic {

host_interface::host_interface(const sc_core::sc_module_name& name, const msix_layout& msix)
    : sc_module(name),
      mmio_in("mmio_in"),
      mmio_out("mmio_out"),
      dma_in("dma_in"),
      mem_out("mem_out"),
      msix_in("msix_in"),
      irq_out("irq_out"),
      msix_(msix) {
    mmio_in.register_b_transport(this, &host_interface::mmio_b_transport);
    dma_in.register_b_transport(this, &host_interface::dma_b_transport);
    msix_in.register_b_transport(this, &host_interface::msix_b_transport);
}

void host_interface::mmio_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    mmio_transport(gp, delay);
}

void host_interface::dma_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    bus_txn_ext* ext = nullptr;
    gp.get_extension(ext);
    dma_transport(gp, delay, ext);
}

void host_interface::bar_access(tlm::tlm_generic_payload& gp, sc_core::sc_time& dev_delay) {
    const std::uint64_t offset = gp.get_address();
    if (!msix_.claims(offset)) {
        mmio_out->b_transport(gp, dev_delay);
        return;
    }
    const unsigned len = gp.get_data_length();
    if (!msix_.valid_access(offset, len) || gp.get_byte_enable_ptr() != nullptr) {
        ++msix_access_errors_;
        RNIC_MLOG_D(error, pcie, dev_delay,
                    "MSI-X " << (gp.is_read() ? "read" : "write") << " of " << len << " bytes at BAR0 offset 0x"
                             << std::hex << offset << " refused: only aligned 32- or 64-bit accesses");
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    std::uint64_t value = 0;
    if (gp.is_read()) {
        value = msix_.read(static_cast<std::uint32_t>(offset), len);
        std::memcpy(gp.get_data_ptr(), &value, len);
    } else {
        std::memcpy(&value, gp.get_data_ptr(), len);
        std::vector<unsigned> released;
        msix_.write(static_cast<std::uint32_t>(offset), len, value, &released);
        // Unmasking a pending vector sends its message now (PCIe Base Spec §6.1.4.5).
        for (const unsigned v : released) deliver(msix_.take_pending(v), v, sim_now() + dev_delay);
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void host_interface::deliver(const msix_table::message& m, unsigned vector, const sc_core::sc_time& ready) {
    const sc_core::sc_time arrive = send_msi(m.address, m.data, ready);
    // The host's interrupt controller sees the vector the driver put in Message Data.
    std::uint32_t data = m.data;
    tlm::tlm_generic_payload irq;
    irq.set_command(tlm::TLM_WRITE_COMMAND);
    irq.set_address(m.data);
    irq.set_data_ptr(reinterpret_cast<unsigned char*>(&data));
    irq.set_data_length(4);
    irq.set_streaming_width(4);
    irq.set_byte_enable_ptr(nullptr);
    irq.set_dmi_allowed(false);
    irq.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time host_delay = arrive - sim_now();
    irq_out->b_transport(irq, host_delay);
    if (timeline::enabled()) {
        timeline::instant_event(
            track("msix"), "MSI-X " + std::to_string(vector), to_ps(arrive),
            timeline::args().add("vector", vector).add("data", m.data).add("programmed", m.programmed ? "yes" : "no"),
            "pcie");
    }
}

void host_interface::msix_b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const auto vector = static_cast<unsigned>(gp.get_address());
    const msix_table::message m = msix_.raise(vector);
    if (m.send) {
        deliver(m, vector, sim_now() + delay);
    } else {
        RNIC_MLOG_D(debug, pcie, delay, "MSI-X vector " << vector << " is masked: pending");
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void host_interface::report_stats(boost::json::object& out) const {
    out["kind"] = bus_kind();
    report_bus_stats(out);
    const msix_table::counters& c = msix_.stats();
    out["msix"] = {{"raised", c.raised},
                   {"sent_programmed", c.sent_programmed},
                   {"sent_unprogrammed", c.sent_fallback},
                   {"masked_pending", c.masked},
                   {"released", c.released},
                   {"table_reads", c.table_reads},
                   {"table_writes", c.table_writes},
                   {"access_errors", msix_access_errors_}};
    out["dma_errors"] = dma_errors_;
}

}  // namespace rnic
