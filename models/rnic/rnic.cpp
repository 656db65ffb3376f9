#include "rnic/rnic.h"

#include <cstring>

#include "core/sim_log.h"

namespace rnic {

rnic_device::rnic_device(const sc_core::sc_module_name& name, const rnic_params& params,
                         const fw::program_factory& firmware)
    : sc_module(name),
      mmio_in("mmio_in"),
      dma_out("dma_out"),
      irq_out("irq_out"),
      eth_tx("eth_tx"),
      eth_rx("eth_rx"),
      rdma_doorbell_out("rdma_doorbell_out"),
      cp_doorbell_out("cp_doorbell_out"),
      irq_collect_("irq_collect"),
      regs_(std::size(regmap::kRegisters)) {
    for (std::size_t i = 0; i < regs_.size(); ++i) regs_[i] = regmap::kRegisters[i].reset;
    mmio_in.register_b_transport(this, &rnic_device::mmio_b_transport);
    irq_collect_.register_b_transport(this, &rnic_device::irq_b_transport);

    dma_ = std::make_unique<dma_engine>("dma", with_device_formats(params.dma));
    buffer_ = std::make_unique<buffer_memory>("buffer", params.buffer);
    // The framing (MPA or IFT) and its datapath model (TLM or RTL) are chosen here, once: the framer
    // runs it, the TCP engine re-frames retransmissions with it, the RDMA engine asks it for send
    // room and for where the frame put bytes between a payload's (the DMA engine's breaks).
    framing_ = make_framing(params.framing);
    toe_ = std::make_unique<tcp_engine>("toe", params.tcp, *buffer_, *framing_);
    framer_ = std::make_unique<mpa_framer>("framer", params.framer, *framing_);
    ctx_ = std::make_unique<context_memory>("ctx", params.contexts);
    rdma_ = std::make_unique<rdma_engine>("rdma", params.rdma, *framing_);
    // The capability registers report what this device was built with.
    std::size_t at = 0;
    if (reg_index(regmap::CAP_MAX_QP, &at)) regs_[at] = params.contexts.max_qp;
    if (reg_index(regmap::CAP_MAX_CQ, &at)) regs_[at] = params.contexts.max_cq;
    if (reg_index(regmap::CAP_MAX_MR, &at)) regs_[at] = params.contexts.max_mr;
    if (reg_index(regmap::CAP_CTX_BYTES, &at)) regs_[at] = static_cast<std::uint32_t>(ctx_->area_bytes());
    cp_ = std::make_unique<control_processor>("cp", params.cp, firmware);

    // Transmit: RDMA engine / firmware -> framer -> TCP engine -> link.
    rdma_->ulpdu_tx_out.bind(framer_->ulpdu_tx_in);
    cp_->startup_tx_out.bind(framer_->ulpdu_tx_in);
    framer_->fpdu_tx_out.bind(toe_->stream_tx_in);
    toe_->buf_out.bind(buffer_->mem_in);
    toe_->dma_out.bind(dma_->dma_in);
    toe_->eth_tx.bind(eth_tx);
    // Receive: link -> TCP engine -> framer -> RDMA engine.
    eth_rx.bind(toe_->eth_rx);
    toe_->stream_rx_out.bind(framer_->stream_rx_in);
    framer_->ulpdu_rx_out.bind(rdma_->ulpdu_rx_in);
    // Host memory traffic and interrupts. The context memory's fetches and write-backs take the DMA
    // engine like every other client: dma_in serves its initiators alike (the binding index plays no
    // part), so they cost what they cost when they went out through the RDMA engine's dma_out.
    rdma_->dma_out.bind(dma_->dma_in);
    ctx_->dma_out.bind(dma_->dma_in);
    cp_->dma_out.bind(dma_->dma_in);
    dma_->pcie_out.bind(dma_out);
    rdma_->irq_out.bind(irq_collect_);
    cp_->irq_out.bind(irq_collect_);
    // Control paths.
    rdma_->toe_out.bind(toe_->ctl_in);
    rdma_->ctx_out.bind(ctx_->ctx_in);
    toe_->tx_progress_out.bind(rdma_->tx_progress_in);
    toe_->ooo_out.bind(framer_->ooo_in);
    framer_->reasm_out.bind(toe_->reasm_in);
    framer_->llp_error_out.bind(rdma_->llp_in);
    toe_->conn_events_out.bind(cp_->toe_events_in);
    framer_->events_out.bind(cp_->framer_events_in);
    cp_->rdma_out.bind(rdma_->ctl_in);
    cp_->toe_out.bind(toe_->ctl_in);
    cp_->framer_out.bind(framer_->ctl_in);
    cp_->regs_out.bind(*this);
    rdma_doorbell_out.bind(rdma_->doorbell_in);
    cp_doorbell_out.bind(cp_->doorbell_in);
}

// The generic bus blocks learn the device's layouts from their parameters; these are the RNIC's,
// declared once in regmap.h. The MSI-X entry format is the PCIe specification's: regmap's
// declaration of it (for the device documentation) must say the same as the bus block's.
static_assert(regmap::kMsixEntrySize == msix_entry::kSize && regmap::msix_off::addr_lo == msix_entry::kAddrLo &&
              regmap::msix_off::addr_hi == msix_entry::kAddrHi && regmap::msix_off::data == msix_entry::kData &&
              regmap::msix_off::control == msix_entry::kControl && regmap::msix_ctrl::mask == msix_entry::kMask);

msix_layout rnic_device::msix_function() {
    msix_layout m;
    m.vectors = regmap::kMsixVectors;
    m.table_offset = regmap::kMsixTableOffset;
    m.pba_offset = regmap::kMsixPbaOffset;
    m.page_bytes = regmap::kMsixPageSize;
    return m;
}

dma_params rnic_device::with_device_formats(dma_params p) {
    p.sge.size = static_cast<std::uint32_t>(regmap::kSgeSize);
    p.sge.addr_offset = regmap::sge_off::addr;
    p.sge.length_offset = regmap::sge_off::length;
    p.sge.flags_offset = regmap::sge_off::flags;
    p.sge.last_flag = regmap::sge_flags::last;
    return p;
}

bool rnic_device::reg_index(std::uint32_t offset, std::size_t* index) const {
    for (std::size_t i = 0; i < regs_.size(); ++i) {
        if (regmap::kRegisters[i].offset == offset) {
            *index = i;
            return true;
        }
    }
    return false;
}

std::uint32_t rnic_device::fw_read(std::uint32_t offset) const {
    std::size_t i = 0;
    return reg_index(offset, &i) ? regs_[i] : 0;
}

void rnic_device::fw_write(std::uint32_t offset, std::uint32_t value) {
    std::size_t i = 0;
    if (reg_index(offset, &i)) regs_[i] = value;
}

void rnic_device::update_station() {
    const std::uint32_t lo = fw_read(regmap::MAC_LO);
    const std::uint32_t hi = fw_read(regmap::MAC_HI);
    tcp_station st;
    st.mac = {static_cast<std::uint8_t>(hi >> 8),  static_cast<std::uint8_t>(hi),
              static_cast<std::uint8_t>(lo >> 24), static_cast<std::uint8_t>(lo >> 16),
              static_cast<std::uint8_t>(lo >> 8),  static_cast<std::uint8_t>(lo)};
    st.ip = fw_read(regmap::IPV4_ADDR);
    toe_->set_station(st);
}

std::uint32_t rnic_device::host_read(std::uint32_t offset) const {
    std::size_t i = 0;
    if (!reg_index(offset, &i)) return 0;  // doorbells and holes read as zero
    if (regmap::kRegisters[i].acc == regmap::access::wo) return 0;
    // CTX_AREA: with the context cache, the tables live in host memory the driver must provide.
    if (offset == regmap::STATUS && ctx_->area_bytes() != 0) return regs_[i] | regmap::status::ctx_area;
    if (offset == regmap::ASYNC_EVENT) return rdma_->async_event();
    return regs_[i];
}

void rnic_device::host_write(std::uint32_t offset, std::uint32_t value, const sc_core::sc_time& delay) {
    using namespace regmap;
    const bool low = offset >= kQpDoorbellBase && offset < kCqDoorbellBase;
    if (low || (offset >= kQpDoorbellHighBase && offset < qp_doorbell(kMaxQps))) {
        const std::uint32_t rel = low ? offset - kQpDoorbellBase : offset - kQpDoorbellHighBase;
        const std::uint32_t qpn = rel / kQpDoorbellStride + (low ? 0 : kQpDoorbellLowCount);
        const std::uint32_t which = rel % kQpDoorbellStride;
        ++doorbells_;
        if (which == kSqDoorbell)
            rdma_doorbell_out->sq_doorbell(qpn, value, delay);
        else if (which == kRqDoorbell)
            rdma_doorbell_out->rq_doorbell(qpn, value, delay);
        return;
    }
    if (offset >= kCqDoorbellBase && offset < kMsixTableOffset) {
        const std::uint32_t cqn = (offset - kCqDoorbellBase) / kCqDoorbellStride;
        const std::uint32_t which = (offset - kCqDoorbellBase) % kCqDoorbellStride;
        if (which == kCqConsumer)
            rdma_doorbell_out->cq_doorbell(cqn, value, delay);
        else if (which == kCqArm)
            rdma_doorbell_out->cq_arm(cqn, delay);
        return;
    }
    std::size_t i = 0;
    if (!reg_index(offset, &i)) return;
    switch (kRegisters[i].acc) {
    case access::ro:
        return;
    case access::rw1c:
        regs_[i] &= ~value;
        return;
    case access::rw:
    case access::wo:
        regs_[i] = value;
        break;
    }
    if (offset == CTRL && (value & ctrl::reset) != 0) {
        reset_registers();
        regs_[i] = value & ~ctrl::reset;  // self-clearing
        cp_doorbell_out->device_reset(delay);
    }
    if (offset == CMDQ_PROD) {
        ++doorbells_;
        cp_doorbell_out->command_doorbell(delay);
    }
    if (offset == ASYNC_EVENT_ACK) rdma_->ack_async_event();
    if (offset == MAC_LO || offset == MAC_HI || offset == IPV4_ADDR) update_station();
    if (offset == CTX_BASE_HI) {
        ctx_->set_area(static_cast<std::uint64_t>(value) << 32 | fw_read(CTX_BASE_LO));
    }
}

void rnic_device::reset_registers() {
    // CTRL.RESET: what the driver programs (and the command ring's consumer index) goes back to its
    // reset value; identification, capabilities and STATUS (the firmware keeps running) stay.
    using namespace regmap;
    const bool station_set = fw_read(MAC_LO) != 0 || fw_read(MAC_HI) != 0 || fw_read(IPV4_ADDR) != 0;
    const bool area_set = fw_read(CTX_BASE_LO) != 0 || fw_read(CTX_BASE_HI) != 0;
    for (std::size_t r = 0; r < regs_.size(); ++r) {
        if (kRegisters[r].acc != access::ro || kRegisters[r].offset == CMDQ_CONS) regs_[r] = kRegisters[r].reset;
    }
    if (station_set) update_station();
    if (area_set) ctx_->set_area(0);
    rdma_->clear_async_events();  // the CQs they named are gone
}

void rnic_device::mmio_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const std::uint64_t offset = gp.get_address();
    // BAR0 is a 32-bit register space: aligned single-word accesses only.
    if (gp.get_data_length() != 4 || offset % 4 != 0 || offset >= regmap::kBar0Size ||
        gp.get_byte_enable_ptr() != nullptr) {
        ++mmio_errors_;
        RNIC_MLOG_D(error, pcie, delay,
                    "BAR0 " << (gp.is_read() ? "read" : "write") << " of " << gp.get_data_length()
                            << " bytes at offset 0x" << std::hex << offset
                            << " refused: only aligned 32-bit accesses inside 0x" << regmap::kBar0Size);
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    std::uint32_t value = 0;
    if (gp.is_write()) {
        std::memcpy(&value, gp.get_data_ptr(), 4);
        host_write(static_cast<std::uint32_t>(offset), value, delay);
    } else {
        value = host_read(static_cast<std::uint32_t>(offset));
        std::memcpy(gp.get_data_ptr(), &value, 4);
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void rnic_device::irq_b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const auto vector = static_cast<std::uint32_t>(gp.get_address());
    std::size_t i = 0;
    if (reg_index(regmap::INTR_CAUSE, &i) && vector < 32) regs_[i] |= 1u << vector;
    irq_out->b_transport(gp, delay);
}

std::uint64_t rnic_device::progress() const {
    const rdma_ctl_if::counter_snapshot r = rdma_->counters();
    return r.wqes + r.cqes + toe_->frames() + cp_->commands_executed();
}

void rnic_device::report_diagnostics(boost::json::object& out) const {
    boost::json::object rdma, toe;
    rdma_->report_diagnostics(rdma);
    toe_->report_diagnostics(toe);
    out["qps"] = std::move(rdma["qps"]);
    out["tcp_connections"] = std::move(toe["connections"]);
    out["buffer_occupancy_bytes"] = buffer_->occupancy();
    out["firmware_commands_executed"] = cp_->commands_executed();
}

void rnic_device::report_live_objects(boost::json::object& out) const {
    std::uint64_t qps = 0, cqs = 0;
    for (std::uint32_t i = 0; i < ctx_->qp_slots(); ++i) qps += ctx_->qp(i) != nullptr;
    for (std::uint32_t i = 0; i < ctx_->cq_slots(); ++i) cqs += ctx_->cq_slot(i).valid;
    std::uint32_t conns = 0, time_wait = 0;
    toe_->count_live(&conns, &time_wait);
    out["qps"] = qps;
    out["cqs"] = cqs;
    out["stags"] = ctx_->stags_in_use();
    out["buffer_regions"] = buffer_->region_count();
    out["tcp_connections"] = conns;
    out["tcp_connections_time_wait"] = time_wait;
}

void rnic_device::report_stats(boost::json::object& out) const {
    auto add = [&out](const char* key, const stats_reporter& r) {
        boost::json::object o;
        r.report_stats(o);
        out[key] = std::move(o);
    };
    add("dma", *dma_);
    add("buffer", *buffer_);
    add("toe", *toe_);
    add("framer", *framer_);
    // The context memory's statistics sit inside the engine's, where the results have always had
    // them (rdma.context_cache).
    boost::json::object rdma;
    rdma_->report_stats(rdma);
    ctx_->report_stats(rdma, rdma_->work_requests(), rdma_->rx_ulpdus());
    out["rdma"] = std::move(rdma);
    add("cp", *cp_);
    out["mmio_errors"] = mmio_errors_;
    out["doorbells"] = doorbells_;
}

}  // namespace rnic
