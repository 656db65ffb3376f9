#include "pcie/pcie_endpoint.h"

#include <algorithm>
#include <cstring>

#include "core/sim_log.h"
#include "core/timeline.h"

namespace rnic {

namespace {

// ACK latency limits / UpdateFC intervals recommended by the PCIe Base Specification (rev 5.0
// tables 3-7..3-9 for ACK, 2-46..2-48 for UpdateFC; the two agree for x1..x16), in symbol times,
// by generation (1, 2, 3 and later), link width (x1, x2, x4, x8, x16) and MPS (128..4096). Read,
// as the pcie-bench model does, as one 8-byte DLLP per that many bytes of link traffic.
constexpr std::uint32_t kAckInterval[3][5][6] = {
    {{237, 416, 559, 1071, 2095, 4143},
     {128, 217, 289, 545, 1057, 2081},
     {73, 118, 154, 282, 538, 1050},
     {67, 107, 86, 150, 278, 534},
     {48, 72, 86, 150, 278, 534}},
    {{288, 467, 610, 1122, 2146, 4194},
     {179, 268, 340, 596, 1108, 2132},
     {124, 169, 205, 333, 589, 1101},
     {118, 158, 137, 201, 329, 585},
     {99, 123, 137, 201, 329, 585}},
    {{333, 512, 655, 1167, 2191, 4239},
     {224, 313, 385, 641, 1153, 2177},
     {169, 214, 250, 378, 634, 1146},
     {163, 203, 182, 246, 374, 630},
     {144, 168, 182, 246, 374, 630}},
};
constexpr std::uint32_t kDllpBytes = 8;     // 6-byte DLLP + framing (SDP/END, or the Gen3 SDP token)
constexpr double kSkpShare = 4.0 / 1538.0;  // SKP ordered sets for clock compensation
constexpr std::uint64_t k4GiB = 1ull << 32;

int index_of_power(std::uint32_t v, std::uint32_t first, int count) {
    int i = 0;
    while (i + 1 < count && (first << i) < v) ++i;
    return i;
}

const char* type_name(int t) {
    static const char* const kNames[] = {"MWr", "MRd", "CplD", "Cpl", "MSI-X", "AtomicOp"};
    return kNames[t];
}

}  // namespace

double pcie_params::raw_bytes_per_second() const {
    static const double kGigaTransfers[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0};
    const int g = std::clamp(generation, 1, 5);
    const double encoding = g <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
    return kGigaTransfers[g] * 1e9 * encoding / 8.0 * std::max(lanes, 1);
}

std::uint32_t pcie_params::ack_interval_bytes() const {
    const int g = std::clamp(generation, 1, 3) - 1;
    const int w = index_of_power(static_cast<std::uint32_t>(std::max(lanes, 1)), 1, 5);
    const int m = index_of_power(max_payload, 128, 6);
    return kAckInterval[g][w][m];
}

double pcie_params::overhead_share() const {
    if (tlps_per_ack > 0) return kSkpShare;
    return 2.0 * kDllpBytes / static_cast<double>(ack_interval_bytes()) + kSkpShare;
}

pcie_endpoint::pcie_endpoint(const sc_core::sc_module_name& name, const pcie_params& params)
    : host_interface(name, params.msix),
      params_(params),
      tlp_rate_(params.tlp_bytes_per_second()),
      ticks_per_byte_(1.0 / tlp_rate_ / sc_core::sc_get_time_resolution().to_seconds()),
      ack_interval_(params.ack_interval_bytes()),
      up_link_(up_dir_.link),
      down_link_(down_dir_.link),
      up_(up_dir_.counts),
      down_(down_dir_.counts),
      tags_(static_cast<std::uint64_t>(std::max(params.tags, 0))),
      posted_hdr_(params.posted_header_credits),
      posted_data_(params.posted_data_credits),
      nonposted_hdr_(params.nonposted_header_credits) {
    up_dir_.link = timed_resource(params.order);
    down_dir_.link = timed_resource(params.order);
    up_dir_.track = track("upstream");
    down_dir_.track = track("downstream");
}

bool pcie_endpoint::four_dw(std::uint64_t addr, std::uint32_t) const {
    return params_.addr64 || addr >= k4GiB;
}

sc_core::sc_time pcie_endpoint::send_tlp(direction& dir, tlp_type type, const sc_core::sc_time& ready,
                                         std::uint32_t payload, std::uint64_t addr, bool four, bus_txn_ext* ext) {
    const std::uint32_t bytes = params_.tlp_overhead(four) + payload;
    std::uint32_t on_wire = bytes;
    tlp_counts& c = dir.counts;
    if (params_.tlps_per_ack > 0) {
        // One ACK and one UpdateFC DLLP per N TLPs, in this direction's stream.
        if ((c.tlps() + 1) % static_cast<std::uint64_t>(params_.tlps_per_ack) == 0) {
            on_wire += 2 * kDllpBytes;
            ++c.ack;
            ++c.update_fc;
        }
    } else {
        // DLLPs at the spec's rate are a share of the bandwidth (tlp_rate_); count them here.
        dir.ack_acc += bytes;
        while (dir.ack_acc >= ack_interval_) {
            dir.ack_acc -= ack_interval_;
            ++c.ack;
            ++c.update_fc;
            c.wire_bytes += 2 * kDllpBytes;
        }
    }
    c.wire_bytes += on_wire;
    // from_ps: the same value as sc_time::from_value, without the library call (a few ns of link
    // time, far below from_ps's exact range).
    const sc_core::sc_time service = from_ps(static_cast<std::uint64_t>(on_wire * ticks_per_byte_ + 0.5));
    const bool keep_posted_order =
        params_.order == booking::backfill && (type == tlp_type::mwr || type == tlp_type::msi);
    const sc_core::sc_time finish =
        dir.link.reserve(keep_posted_order && dir.last_posted_start > ready ? dir.last_posted_start : ready, service);
    if (keep_posted_order) dir.last_posted_start = finish - service;
    switch (type) {
    case tlp_type::mwr:
        ++c.mwr;
        c.mwr_bytes += payload;
        break;
    case tlp_type::mrd:
        ++c.mrd;
        break;
    case tlp_type::cpld:
        ++c.cpld;
        c.cpld_bytes += payload;
        break;
    case tlp_type::cpl:
        ++c.cpl;
        break;
    case tlp_type::msi:
        ++c.msi;
        break;
    case tlp_type::atomic:
        ++c.atomic;
        c.atomic_bytes += payload;
        break;
    }
    // Completions always have a 3DW header; requests as chosen.
    ++((four && type != tlp_type::cpld && type != tlp_type::cpl) ? c.hdr_4dw : c.hdr_3dw);
    if (ext != nullptr) {
        ++ext->packets;
        ext->wire_bytes += on_wire;
    }
    if (timeline::enabled()) {
        timeline::complete_event(dir.track, type_name(static_cast<int>(type)), to_ps(finish - service), to_ps(service),
                                 timeline::args().add("payload", payload).add("wire_bytes", on_wire).add("addr", addr),
                                 "pcie");
    }
    return finish;
}

void pcie_endpoint::mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const sc_core::sc_time now = sim_now();
    const std::uint32_t len = gp.get_data_length();
    const std::uint64_t addr = gp.get_address();
    if (gp.is_write()) {
        // Posted MWr downstream: the CPU goes on after the store leaves it; the device sees the
        // write when the TLP has crossed the link.
        const sc_core::sc_time arrive =
            send_tlp(down_dir_, tlp_type::mwr, now + delay, len, addr, params_.addr64, nullptr);
        sc_core::sc_time dev_delay = arrive - now;
        bar_access(gp, dev_delay);
        delay += params_.posted_write_cost;
    } else {
        // Non-posted MRd downstream, CplD upstream; the CPU stalls for the round trip.
        const sc_core::sc_time arrive =
            send_tlp(down_dir_, tlp_type::mrd, now + delay, 0, addr, params_.addr64, nullptr);
        sc_core::sc_time dev_delay = arrive - now;
        bar_access(gp, dev_delay);
        const sc_core::sc_time done = send_tlp(up_dir_, tlp_type::cpld, now + dev_delay, len, addr, false, nullptr);
        delay = done - now;
    }
}

sc_core::sc_time pcie_endpoint::dma_write(tlm::tlm_generic_payload& gp, const sc_core::sc_time& ready,
                                          bus_txn_ext* ext) {
    // MWr TLPs of at most MPS bytes that never cross a 4 KB boundary (§2.2.7), each needing one
    // posted-header credit and a data credit per 16 bytes.
    const sc_core::sc_time now = sim_now();
    std::uint64_t addr = gp.get_address();
    std::uint32_t len = gp.get_data_length();
    sc_core::sc_time t = ready, last = ready, first_arrive = ready;
    bool first = true;
    while (len > 0) {
        const auto to_4k = static_cast<std::uint32_t>(4096 - (addr & 4095));
        const std::uint32_t chunk = std::min({len, params_.max_payload, to_4k});
        const std::uint64_t units = (chunk + 15) / 16;
        sc_core::sc_time start = posted_hdr_.acquire(t);
        start = posted_data_.acquire(start, units);
        const sc_core::sc_time arrive = send_tlp(up_dir_, tlp_type::mwr, start, chunk, addr, four_dw(addr, chunk), ext);
        posted_hdr_.release_at(arrive + params_.credit_return);
        posted_data_.release_at(arrive + params_.credit_return, units);
        if (first) {
            first_arrive = arrive;
            if (ext != nullptr) ext->first_data = start;
            first = false;
        }
        t = start;
        last = arrive;
        addr += chunk;
        len -= chunk;
    }
    // The root complex writes the bytes into host memory, which checks the IOMMU mapping of the
    // whole transfer: refused, not one byte changes (the MWr TLPs were posted all the same and are
    // dropped; the RC logs an Unsupported Request).
    sc_core::sc_time mem_delay = first_arrive - now;
    mem_out->b_transport(gp, mem_delay);
    if (gp.get_response_status() == tlm::TLM_OK_RESPONSE) dma_write_bytes_ += gp.get_data_length();
    return last;
}

sc_core::sc_time pcie_endpoint::dma_read(tlm::tlm_generic_payload& gp, const sc_core::sc_time& ready,
                                         bus_txn_ext* ext) {
    // Read requests of at most MRRS bytes, not crossing 4 KB, each holding a tag and a non-posted
    // header credit; each answered after the completion latency plus host memory's time by CplD
    // TLPs cut at the RCB and MPS (§2.3.1.1).
    const sc_core::sc_time now = sim_now();
    const std::uint64_t base = gp.get_address();
    std::uint64_t addr = base;
    std::uint32_t left = gp.get_data_length();
    const std::uint32_t rcb = std::max<std::uint32_t>(params_.read_completion_boundary, 1);
    sc_core::sc_time issue = ready, last = ready;
    bool first_data = true;
    tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
    while (left > 0) {
        const auto to_4k = static_cast<std::uint32_t>(4096 - (addr & 4095));
        const std::uint32_t req = std::min({left, params_.max_read_request, to_4k});
        sc_core::sc_time start = tags_.acquire(issue);
        start = nonposted_hdr_.acquire(start);
        const sc_core::sc_time arrive = send_tlp(up_dir_, tlp_type::mrd, start, 0, addr, four_dw(addr, req), ext);
        nonposted_hdr_.release_at(arrive + params_.credit_return);

        tlm::tlm_generic_payload& sub = mem_scratch_;  // reused: no allocation per request
        sub.set_command(tlm::TLM_READ_COMMAND);
        sub.set_address(addr);
        sub.set_data_ptr(gp.get_data_ptr() + (addr - base));
        sub.set_data_length(req);
        sub.set_streaming_width(req);
        sub.set_byte_enable_ptr(nullptr);
        sub.set_dmi_allowed(false);
        sub.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_core::sc_time mem_delay = arrive + params_.completion_latency - now;
        mem_out->b_transport(sub, mem_delay);
        if (sub.get_response_status() != tlm::TLM_OK_RESPONSE) {
            // Completion without data, status Unsupported Request; the engine stops here.
            const sc_core::sc_time done =
                send_tlp(down_dir_, tlp_type::cpl, arrive + params_.completion_latency, 0, addr, false, ext);
            tags_.release_at(done);
            last = std::max(last, done);
            status = sub.get_response_status();
            break;
        }
        const sc_core::sc_time data_ready = now + mem_delay;
        std::uint64_t a = addr;
        std::uint32_t cleft = req;
        sc_core::sc_time done = data_ready;
        while (cleft > 0) {
            // The first completion ends at an RCB boundary when the address is not aligned; later
            // ones carry up to MPS (or one RCB each with rcb_completions).
            std::uint32_t chunk = std::min(cleft, params_.max_payload);
            if (params_.rcb_completions || a % rcb != 0) {
                chunk = std::min(chunk, static_cast<std::uint32_t>(rcb - a % rcb));
            }
            done = send_tlp(down_dir_, tlp_type::cpld, data_ready, chunk, a, false, ext);
            if (first_data && ext != nullptr) ext->first_data = done;
            first_data = false;
            a += chunk;
            cleft -= chunk;
        }
        tags_.release_at(done);
        last = std::max(last, done);
        issue = start;
        addr += req;
        left -= req;
    }
    gp.set_response_status(status);
    if (status == tlm::TLM_OK_RESPONSE) dma_read_bytes_ += gp.get_data_length();
    return last;
}

sc_core::sc_time pcie_endpoint::dma_atomic(tlm::tlm_generic_payload& gp, atomic_op_ext& aop,
                                           const sc_core::sc_time& ready, bus_txn_ext* ext) {
    // One non-posted AtomicOp request upstream (FetchAdd: one 8-byte operand, CAS: compare + swap),
    // holding a tag and a non-posted header credit like a read; the root complex performs it on
    // host memory as one indivisible read-modify-write and answers with a CplD carrying the
    // original 8 bytes (PCIe Base Spec §6.15.1-§6.15.3; 8-byte aligned, within one 4 KB page).
    const sc_core::sc_time now = sim_now();
    const std::uint64_t addr = gp.get_address();
    if (gp.get_data_length() != 8 || addr % 8 != 0) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return ready;
    }
    sc_core::sc_time start = tags_.acquire(ready);
    start = nonposted_hdr_.acquire(start);
    const sc_core::sc_time arrive =
        send_tlp(up_dir_, tlp_type::atomic, start, aop.request_payload(), addr, four_dw(addr, 8), ext);
    nonposted_hdr_.release_at(arrive + params_.credit_return);
    // The completer's read and write happen back to back, with nothing else in between.
    std::uint8_t bytes[8];
    tlm::tlm_generic_payload& sub = mem_scratch_;
    sub.set_command(tlm::TLM_READ_COMMAND);
    sub.set_address(addr);
    sub.set_data_ptr(bytes);
    sub.set_data_length(8);
    sub.set_streaming_width(8);
    sub.set_byte_enable_ptr(nullptr);
    sub.set_dmi_allowed(false);
    sub.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time mem_delay = arrive + params_.completion_latency - now;
    mem_out->b_transport(sub, mem_delay);
    tlm::tlm_response_status status = sub.get_response_status();
    if (status == tlm::TLM_OK_RESPONSE) {
        std::uint64_t original = 0;
        for (int i = 7; i >= 0; --i) original = original << 8 | bytes[i];
        aop.original = original;
        const bool write = aop.kind == atomic_op_ext::op::fetch_add || original == aop.compare;
        if (write) {
            const std::uint64_t value = aop.kind == atomic_op_ext::op::fetch_add ? original + aop.operand : aop.operand;
            std::uint8_t out[8];
            for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(value >> (8 * i));
            sub.set_command(tlm::TLM_WRITE_COMMAND);
            sub.set_data_ptr(out);
            sub.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            // The memory controller writes the new value back while the completion with the original
            // is on its way: the write does not delay the CplD.
            sc_core::sc_time write_delay = mem_delay;
            mem_out->b_transport(sub, write_delay);
            status = sub.get_response_status();
        }
        std::memcpy(gp.get_data_ptr(), bytes, 8);
    }
    const sc_core::sc_time data_ready = now + mem_delay;
    const sc_core::sc_time done = status == tlm::TLM_OK_RESPONSE
                                      ? send_tlp(down_dir_, tlp_type::cpld, data_ready, 8, addr, false, ext)
                                      : send_tlp(down_dir_, tlp_type::cpl, data_ready, 0, addr, false, ext);
    if (ext != nullptr) ext->first_data = done;
    tags_.release_at(done);
    ++atomic_ops_;
    gp.set_response_status(status);
    return done;
}

void pcie_endpoint::dma_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay, bus_txn_ext* ext) {
    const sc_core::sc_time now = sim_now();
    if (gp.get_data_length() == 0) {
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    atomic_op_ext* aop = nullptr;
    gp.get_extension(aop);
    const sc_core::sc_time finish = aop != nullptr  ? dma_atomic(gp, *aop, now + delay, ext)
                                    : gp.is_write() ? dma_write(gp, now + delay, ext)
                                                    : dma_read(gp, now + delay, ext);
    delay = finish - now;
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
        count_dma_error();
        RNIC_MLOG_D(warn, pcie, delay,
                    "DMA " << (gp.is_read() ? "read" : "write") << " of " << gp.get_data_length() << " bytes at 0x"
                           << std::hex << gp.get_address() << std::dec
                           << (gp.is_read() ? " completed with Unsupported Request"
                                            : " dropped by the root complex (Unsupported Request)"));
        if (timeline::enabled()) {
            timeline::instant_event(up_dir_.track, "refused DMA", to_ps(finish),
                                    timeline::args().add("addr", gp.get_address()).add("bytes", gp.get_data_length()),
                                    "pcie");
        }
    }
}

sc_core::sc_time pcie_endpoint::send_msi(std::uint64_t address, std::uint32_t, const sc_core::sc_time& ready) {
    // A DWORD MWr upstream, ordered behind earlier posted writes (the CQE).
    sc_core::sc_time start = posted_hdr_.acquire(ready);
    start = posted_data_.acquire(start, 1);
    const sc_core::sc_time arrive = send_tlp(up_dir_, tlp_type::msi, start, 4, address, four_dw(address, 4), nullptr);
    posted_hdr_.release_at(arrive + params_.credit_return);
    posted_data_.release_at(arrive + params_.credit_return, 1);
    return arrive;
}

namespace {
boost::json::object counts_json(const pcie_endpoint::tlp_counts& c) {
    boost::json::object o;
    o["tlps"] = c.tlps();
    o["mwr"] = c.mwr;
    o["mrd"] = c.mrd;
    o["cpld"] = c.cpld;
    o["cpl"] = c.cpl;
    o["msi"] = c.msi;
    o["atomic"] = c.atomic;
    o["hdr_3dw"] = c.hdr_3dw;
    o["hdr_4dw"] = c.hdr_4dw;
    o["ack_dllps"] = c.ack;
    o["update_fc_dllps"] = c.update_fc;
    o["mwr_payload_bytes"] = c.mwr_bytes;
    o["cpld_payload_bytes"] = c.cpld_bytes;
    o["wire_bytes"] = c.wire_bytes;
    return o;
}
boost::json::object pool_json(const occupancy_pool& p) {
    return {{"capacity", p.capacity()}, {"waits", p.waits()}, {"wait_ps", to_ps(p.wait_total())}, {"peak", p.peak()}};
}
}  // namespace

void pcie_endpoint::report_bus_stats(boost::json::object& out) const {
    const sc_core::sc_time now = sim_now();
    out["generation"] = params_.generation;
    out["lanes"] = params_.lanes;
    out["max_payload"] = params_.max_payload;
    out["max_read_request"] = params_.max_read_request;
    out["link_gbps_per_direction"] = params_.raw_bytes_per_second() * 8.0 / 1e9;
    out["tlp_gbps_per_direction"] = tlp_rate_ * 8.0 / 1e9;
    out["upstream"] = counts_json(up_);
    out["downstream"] = counts_json(down_);
    out["upstream_busy_ps"] = to_ps(up_link_.busy_total());
    out["downstream_busy_ps"] = to_ps(down_link_.busy_total());
    // Busy time of each direction over the simulated time (TLP bytes; the DLLP/SKP share is in the rate).
    out["upstream_utilisation"] = up_link_.utilization(now);
    out["downstream_utilisation"] = down_link_.utilization(now);
    out["dma_read_bytes"] = dma_read_bytes_;
    out["dma_write_bytes"] = dma_write_bytes_;
    out["atomic_ops"] = atomic_ops_;
    const double mb = static_cast<double>(dma_read_bytes_ + dma_write_bytes_) / 1e6;
    out["tlps_per_mb"] = mb > 0 ? static_cast<double>(up_.tlps() + down_.tlps()) / mb : 0.0;
    out["write_tlps_per_mb"] = dma_write_bytes_ > 0 ? static_cast<double>(up_.mwr) / (dma_write_bytes_ / 1e6) : 0.0;
    out["read_tlps_per_mb"] =
        dma_read_bytes_ > 0 ? static_cast<double>(up_.mrd + down_.cpld) / (dma_read_bytes_ / 1e6) : 0.0;
    out["tags"] = pool_json(tags_);
    out["credits"] = {{"posted_header", pool_json(posted_hdr_)},
                      {"posted_data", pool_json(posted_data_)},
                      {"nonposted_header", pool_json(nonposted_hdr_)}};
}

}  // namespace rnic
