#include "pcie/pcie_endpoint.h"

#include <algorithm>
#include <vector>

#include "core/sim_log.h"

namespace rnic {

double pcie_params::lane_bytes_per_second() const {
    // Gen1/2 use 8b/10b, Gen3+ 128b/130b (PCIe Base Spec 3.0 §4.2.2, 4.0, 5.0).
    static const double kGigaTransfers[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0};
    const int g = std::clamp(generation, 1, 5);
    const double encoding = g <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
    return kGigaTransfers[g] * 1e9 * encoding / 8.0;
}

std::uint32_t pcie_params::tlp_overhead_bytes() const {
    // Physical framing (STP/END for 8b/10b = 2, Gen3 STP token = 4), sequence number 2,
    // 4DW header (64-bit addressing) 16, optional ECRC 4, LCRC 4.
    const std::uint32_t framing = generation <= 2 ? 2 : 4;
    return framing + 2 + 16 + (ecrc ? 4 : 0) + 4;
}

pcie_endpoint::pcie_endpoint(const sc_core::sc_module_name& name, const pcie_params& params)
    : sc_module(name),
      mmio_in("mmio_in"),
      mmio_out("mmio_out"),
      dma_in("dma_in"),
      mem_out("mem_out"),
      msix_in("msix_in"),
      irq_out("irq_out"),
      params_(params),
      link_bps_(params.lane_bytes_per_second() * 8.0 * params.lanes) {
    mmio_in.register_b_transport(this, &pcie_endpoint::mmio_b_transport);
    dma_in.register_b_transport(this, &pcie_endpoint::dma_b_transport);
    msix_in.register_b_transport(this, &pcie_endpoint::msix_b_transport);
}

sc_core::sc_time pcie_endpoint::send_tlp(timed_resource& dir, tlp_counts& counts, const sc_core::sc_time& ready,
                                         std::uint32_t payload) {
    std::uint32_t bytes = params_.tlp_overhead_bytes() + payload;
    counts.wire_bytes += bytes;
    // ACK and flow-control DLLPs (6 bytes + 2 framing) travel the other way; charge them here as a
    // share of this direction's TLP stream, which is where they originate the credit traffic.
    static constexpr std::uint32_t kDllpBytes = 8;
    const std::uint64_t tlps = counts.mwr + counts.mrd + counts.cpld + counts.cpl + counts.msi;
    if (params_.tlps_per_ack > 0 && (tlps + 1) % static_cast<std::uint64_t>(params_.tlps_per_ack) == 0) {
        bytes += kDllpBytes;
        counts.wire_bytes += kDllpBytes;
        ++counts.dllp;
    }
    return dir.reserve(ready, transfer_time(bytes, link_bps_));
}

void pcie_endpoint::mmio_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const std::uint32_t len = gp.get_data_length();
    if (gp.is_write()) {
        // Posted MWr downstream: the CPU goes on after the store leaves it; the device sees the
        // write when the TLP has crossed the link.
        const sc_core::sc_time arrive = send_tlp(down_link_, down_, now + delay, len);
        ++down_.mwr;
        down_.mwr_bytes += len;
        sc_core::sc_time dev_delay = arrive - now;
        mmio_out->b_transport(gp, dev_delay);
        delay += params_.posted_write_cost;
    } else {
        // Non-posted MRd downstream, CplD upstream; the CPU stalls for the round trip.
        const sc_core::sc_time arrive = send_tlp(down_link_, down_, now + delay, 0);
        ++down_.mrd;
        sc_core::sc_time dev_delay = arrive - now;
        mmio_out->b_transport(gp, dev_delay);
        const sc_core::sc_time done = send_tlp(up_link_, up_, now + dev_delay, len);
        ++up_.cpld;
        up_.cpld_bytes += len;
        delay = done - now;
    }
}

sc_core::sc_time pcie_endpoint::dma_write(std::uint64_t addr, std::uint32_t len, const sc_core::sc_time& ready) {
    // MWr TLPs of at most MPS bytes that never cross a 4 KB boundary (PCIe Base Spec §2.2.7).
    sc_core::sc_time t = ready;
    while (len > 0) {
        const std::uint32_t to_4k = static_cast<std::uint32_t>(4096 - (addr & 4095));
        const std::uint32_t chunk = std::min({len, params_.max_payload, to_4k});
        t = send_tlp(up_link_, up_, t, chunk);
        ++up_.mwr;
        up_.mwr_bytes += chunk;
        addr += chunk;
        len -= chunk;
    }
    return t;
}

sc_core::sc_time pcie_endpoint::dma_read(std::uint64_t addr, std::uint32_t len, const sc_core::sc_time& ready,
                                         const sc_core::sc_time& memory_time) {
    // Read requests of at most MRRS bytes, not crossing 4 KB; each answered after the completion
    // latency by CplD TLPs split at the read-completion boundary and MPS (§2.3.1.1). At most `tags`
    // requests are outstanding: request i waits for the completion of request i - tags.
    std::vector<sc_core::sc_time> done;
    sc_core::sc_time req_ready = ready;
    sc_core::sc_time last = ready;
    while (len > 0) {
        const std::uint32_t to_4k = static_cast<std::uint32_t>(4096 - (addr & 4095));
        const std::uint32_t req = std::min({len, params_.max_read_request, to_4k});
        if (params_.tags > 0 && done.size() >= static_cast<std::size_t>(params_.tags)) {
            req_ready = std::max(req_ready, done[done.size() - static_cast<std::size_t>(params_.tags)]);
        }
        const sc_core::sc_time req_arrive = send_tlp(up_link_, up_, req_ready, 0);
        ++up_.mrd;
        req_ready = req_arrive;
        // Host memory streams the whole transfer: its latency and transfer time are charged once.
        sc_core::sc_time cpl_ready = req_arrive + params_.completion_latency + (done.empty() ? memory_time : sc_core::SC_ZERO_TIME);
        std::uint64_t a = addr;
        std::uint32_t left = req;
        while (left > 0) {
            // The first completion ends at the next RCB boundary; later ones carry up to MPS.
            const std::uint32_t rcb = params_.read_completion_boundary;
            std::uint32_t chunk = std::min(left, params_.max_payload);
            if (a % rcb != 0) chunk = std::min(chunk, static_cast<std::uint32_t>(rcb - a % rcb));
            cpl_ready = send_tlp(down_link_, down_, cpl_ready, chunk);
            ++down_.cpld;
            down_.cpld_bytes += chunk;
            a += chunk;
            left -= chunk;
        }
        done.push_back(cpl_ready);
        last = std::max(last, cpl_ready);
        addr += req;
        len -= req;
    }
    return last;
}

void pcie_endpoint::dma_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    // The bytes move through the root complex to host memory, which may refuse the access.
    sc_core::sc_time mem_delay = delay;
    mem_out->b_transport(gp, mem_delay);
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
        // Unsupported Request completion / master abort: the device sees an error.
        ++dma_errors_;
        RNIC_MLOG_D(warn, pcie, delay, "DMA " << (gp.is_read() ? "read" : "write") << " at 0x" << std::hex
                                             << gp.get_address() << std::dec << " completed with an error");
        sc_core::sc_time t = send_tlp(up_link_, up_, now + delay, 0);
        ++up_.mrd;
        t = send_tlp(down_link_, down_, t + params_.completion_latency, 0);
        ++down_.cpl;
        delay = t - now;
        return;
    }
    const sc_core::sc_time memory_time = mem_delay - delay;  // host memory's own latency/bandwidth
    const std::uint32_t len = gp.get_data_length();
    sc_core::sc_time finish;
    if (gp.is_write()) {
        finish = std::max(dma_write(gp.get_address(), len, now + delay), mem_delay + now);
    } else {
        finish = dma_read(gp.get_address(), len, now + delay, memory_time);
    }
    delay = finish - now;
}

void pcie_endpoint::msix_b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    // An MSI-X message is a posted 4-byte MWr upstream, ordered behind earlier writes (the CQE).
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const sc_core::sc_time arrive = send_tlp(up_link_, up_, now + delay, 4);
    ++up_.msi;
    sc_core::sc_time host_delay = arrive - now;
    irq_out->b_transport(gp, host_delay);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

namespace {
boost::json::object counts_json(const pcie_endpoint::tlp_counts& c) {
    boost::json::object o;
    o["mwr"] = c.mwr;
    o["mrd"] = c.mrd;
    o["cpld"] = c.cpld;
    o["cpl"] = c.cpl;
    o["msi"] = c.msi;
    o["dllp"] = c.dllp;
    o["mwr_payload_bytes"] = c.mwr_bytes;
    o["cpld_payload_bytes"] = c.cpld_bytes;
    o["wire_bytes"] = c.wire_bytes;
    return o;
}
}  // namespace

void pcie_endpoint::report_stats(boost::json::object& out) const {
    out["link_gbps_per_direction"] = link_bps_ / 1e9;
    out["upstream"] = counts_json(up_);
    out["downstream"] = counts_json(down_);
    out["upstream_busy_ps"] = to_ps(up_link_.busy_total());
    out["downstream_busy_ps"] = to_ps(down_link_.busy_total());
    out["dma_errors"] = dma_errors_;
}

}  // namespace rnic
