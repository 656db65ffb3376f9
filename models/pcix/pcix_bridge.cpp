#include "pcix/pcix_bridge.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "core/sim_log.h"
#include "core/timed_resource.h"
#include "core/timeline.h"
#include "host/atomic_op_ext.h"

namespace rnic {

namespace {
constexpr std::uint32_t kAdb = 128;  // allowable disconnect boundary
constexpr std::uint64_t k4GiB = 1ull << 32;
const char* type_name(int t) {
    static const char* const kNames[] = {"MemWrBlock", "MemRdBlock", "SplitCpl", "SplitCplErr",
                                         "MMIO MemWr", "MMIO MemRd", "MSI-X"};
    return kNames[t];
}
}  // namespace

pcix_bridge::pcix_bridge(const sc_core::sc_module_name& name, const pcix_params& params)
    : host_interface(name, params.msix), params_(params), splits_(params.max_outstanding_splits) {
    track_ = track("bus");
}

sc_core::sc_time pcix_bridge::transaction(txn_type type, const sc_core::sc_time& ready, std::uint64_t addr,
                                          std::uint32_t data_bytes, double extra_cycles, bool dual_address,
                                          bus_txn_ext* ext) {
    const std::uint32_t w = std::max<std::uint32_t>(params_.width_bytes, 1);
    const std::uint64_t data_phases =
        data_bytes == 0 ? 0 : (addr % w + data_bytes + w - 1) / w;  // from the start address's lane
    const double cycles = params_.arbitration_cycles + (dual_address ? 2.0 : 1.0) + 1.0 /* attribute */ +
                          params_.target_response_cycles + static_cast<double>(data_phases) + extra_cycles +
                          params_.turnaround_cycles;
    const sc_core::sc_time service = cycles_time(cycles, params_.clock_hz);
    const sc_core::sc_time finish = bus_.reserve(ready, service);
    switch (type) {
    case txn_type::mem_write:
        ++counts_.mem_write;
        break;
    case txn_type::read_request:
        ++counts_.read_request;
        break;
    case txn_type::split_completion:
        ++counts_.split_completion;
        break;
    case txn_type::split_error:
        ++counts_.split_error;
        break;
    case txn_type::mmio_write:
        ++counts_.mmio_write;
        break;
    case txn_type::mmio_read:
        ++counts_.mmio_read;
        break;
    case txn_type::msi:
        ++counts_.msi;
        break;
    }
    if (dual_address) ++counts_.dual_address;
    counts_.data_bytes += data_bytes;
    counts_.clocks += static_cast<std::uint64_t>(std::llround(cycles));
    if (ext != nullptr) {
        ++ext->packets;
        ext->wire_bytes += static_cast<std::uint64_t>(std::llround(cycles)) * w;
    }
    if (timeline::enabled()) {
        timeline::complete_event(track_, type_name(static_cast<int>(type)), to_ps(finish - service), to_ps(service),
                                 timeline::args().add("bytes", data_bytes).add("clocks", cycles).add("addr", addr),
                                 "pcix");
    }
    return finish;
}

void pcix_bridge::mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const std::uint32_t len = gp.get_data_length();
    const std::uint64_t addr = gp.get_address();
    if (gp.is_write()) {
        // The host bridge masters a Memory Write (posted): the CPU goes on, the device sees it after.
        const sc_core::sc_time done = transaction(txn_type::mmio_write, now + delay, addr, len, 0, false, nullptr);
        sc_core::sc_time dev_delay = done - now;
        bar_access(gp, dev_delay);
        delay += params_.posted_write_cost;
    } else {
        // A register read completes immediately on the bus (the target has the data); the CPU waits.
        const sc_core::sc_time done = transaction(txn_type::mmio_read, now + delay, addr, len, 0, false, nullptr);
        sc_core::sc_time dev_delay = done - now;
        bar_access(gp, dev_delay);
        delay = std::max(done, now + dev_delay) - now;
    }
}

sc_core::sc_time pcix_bridge::dma_write(tlm::tlm_generic_payload& gp, const sc_core::sc_time& ready, bus_txn_ext* ext) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    std::uint64_t addr = gp.get_address();
    std::uint32_t len = gp.get_data_length();
    sc_core::sc_time t = ready, first_done = ready;
    bool first = true;
    const std::uint32_t burst = std::max<std::uint32_t>(params_.max_write_burst, kAdb);
    while (len > 0) {
        // Disconnect at the last ADB within `burst` bytes of the start (or after `burst` if none).
        std::uint64_t end = addr + burst;
        if (end / kAdb * kAdb > addr) end = end / kAdb * kAdb;
        const auto chunk = static_cast<std::uint32_t>(std::min<std::uint64_t>(len, end - addr));
        t = transaction(txn_type::mem_write, t, addr, chunk, 0, addr >= k4GiB, ext);
        if (first) {
            first_done = t;
            if (ext != nullptr) ext->first_data = t;
            first = false;
        }
        addr += chunk;
        len -= chunk;
    }
    // The bridge writes host memory, which checks the whole transfer; a refusal drops it (posted).
    sc_core::sc_time mem_delay = first_done - now;
    mem_out->b_transport(gp, mem_delay);
    if (gp.get_response_status() == tlm::TLM_OK_RESPONSE) dma_write_bytes_ += gp.get_data_length();
    return t;
}

sc_core::sc_time pcix_bridge::dma_read(tlm::tlm_generic_payload& gp, const sc_core::sc_time& ready, bus_txn_ext* ext) {
    // The device's read requests and the bridge's split completions compete for the bus. They are
    // booked in the order the arbiter grants them: whoever is ready first, alternating between the
    // two masters when both wait for the bus.
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const std::uint64_t base = gp.get_address();
    const std::uint32_t len = gp.get_data_length();
    const std::uint32_t mmrbc = std::max<std::uint32_t>(params_.max_read_byte_count, 1);
    struct completion {
        sc_core::sc_time ready;
        std::uint64_t addr;
        std::uint32_t len;
        bool last_of_request;
        bool error;
    };
    std::deque<completion> pending;
    std::uint64_t next_addr = base;  // next request
    sc_core::sc_time issue = ready, last = ready;
    bool first_data = true, device_had_bus = false;
    tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
    const sc_core::sc_time never = sc_core::sc_max_time();
    while (next_addr < base + len || !pending.empty()) {
        const sc_core::sc_time rq = next_addr < base + len ? splits_.available_at(issue) : never;
        const sc_core::sc_time cq = pending.empty() ? never : pending.front().ready;
        bool device = rq < cq;
        if (rq != never && cq != never) {
            const sc_core::sc_time grant = bus_.next_idle(std::min(rq, cq));
            if (rq <= grant && cq <= grant) device = !device_had_bus;  // both waiting: alternate
        }
        device_had_bus = device;
        if (device) {
            // Memory Read Block; the bridge answers with a Split Response (one more clock).
            const std::uint32_t req =
                static_cast<std::uint32_t>(std::min<std::uint64_t>(base + len - next_addr, mmrbc));
            const sc_core::sc_time slot = splits_.acquire(issue);
            const sc_core::sc_time requested =
                transaction(txn_type::read_request, slot, next_addr, 0, 1.0, next_addr >= k4GiB, ext);
            tlm::tlm_generic_payload& sub = mem_scratch_;  // reused: no allocation per request
            sub.set_command(tlm::TLM_READ_COMMAND);
            sub.set_address(next_addr);
            sub.set_data_ptr(gp.get_data_ptr() + (next_addr - base));
            sub.set_data_length(req);
            sub.set_streaming_width(req);
            sub.set_byte_enable_ptr(nullptr);
            sub.set_dmi_allowed(false);
            sub.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            sc_core::sc_time mem_delay = requested + params_.completion_latency - now;
            mem_out->b_transport(sub, mem_delay);
            if (sub.get_response_status() != tlm::TLM_OK_RESPONSE) {
                // A Split Completion Error message; nothing more is requested.
                pending.push_back({requested + params_.completion_latency, next_addr, 4, true, true});
                status = sub.get_response_status();
                next_addr = base + len;
            } else {
                const std::uint32_t piece =
                    params_.split_completion_bytes == 0 ? req : std::min(req, params_.split_completion_bytes);
                for (std::uint32_t off = 0; off < req; off += piece) {
                    const std::uint32_t n = std::min(piece, req - off);
                    pending.push_back({now + mem_delay, next_addr + off, n, off + n == req, false});
                }
                next_addr += req;
            }
            issue = requested;
        } else {
            const completion c = pending.front();
            pending.pop_front();
            const sc_core::sc_time done = transaction(c.error ? txn_type::split_error : txn_type::split_completion,
                                                      c.ready, c.addr, c.len, 0, false, ext);
            if (first_data && !c.error && ext != nullptr) ext->first_data = done;
            first_data = false;
            if (c.last_of_request) splits_.release_at(done);
            last = std::max(last, done);
        }
    }
    gp.set_response_status(status);
    if (status == tlm::TLM_OK_RESPONSE) dma_read_bytes_ += len;
    return last;
}

void pcix_bridge::dma_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay, bus_txn_ext* ext) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    atomic_op_ext* aop = nullptr;
    gp.get_extension(aop);
    if (aop != nullptr) {
        // PCI-X has no AtomicOp transaction (PCIe Base Spec §6.15 is PCIe only).
        RNIC_MLOG_D(error, pcie, delay, "AtomicOp requested on PCI-X, which has none: refused");
        gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
        return;
    }
    if (gp.get_data_length() == 0) {
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    const sc_core::sc_time finish = gp.is_write() ? dma_write(gp, now + delay, ext) : dma_read(gp, now + delay, ext);
    delay = finish - now;
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
        count_dma_error();
        RNIC_MLOG_D(
            warn, pcie, delay,
            "PCI-X DMA " << (gp.is_read() ? "read" : "write") << " of " << gp.get_data_length() << " bytes at 0x"
                         << std::hex << gp.get_address() << std::dec
                         << (gp.is_read() ? " answered with a Split Completion Error" : " dropped by the host bridge"));
    }
}

sc_core::sc_time pcix_bridge::send_msi(std::uint64_t address, std::uint32_t, const sc_core::sc_time& ready) {
    // A DWORD Memory Write mastered by the device.
    return transaction(txn_type::msi, ready, address, 4, 0, address >= k4GiB, nullptr);
}

void pcix_bridge::report_bus_stats(boost::json::object& out) const {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    out["clock_mhz"] = params_.clock_hz / 1e6;
    out["width_bytes"] = params_.width_bytes;
    out["peak_mbytes_per_s"] = params_.peak_bytes_per_second() / 1e6;
    out["max_read_byte_count"] = params_.max_read_byte_count;
    out["max_outstanding_splits"] = params_.max_outstanding_splits;
    const txn_counts& c = counts_;
    out["transactions"] = c.transactions();
    out["mem_write"] = c.mem_write;
    out["read_request"] = c.read_request;
    out["split_completion"] = c.split_completion;
    out["split_error"] = c.split_error;
    out["mmio_write"] = c.mmio_write;
    out["mmio_read"] = c.mmio_read;
    out["msi"] = c.msi;
    out["dual_address"] = c.dual_address;
    out["data_bytes"] = c.data_bytes;
    out["clocks"] = c.clocks;
    out["busy_ps"] = to_ps(bus_.busy_total());
    out["utilisation"] = bus_.utilization(now);
    out["dma_read_bytes"] = dma_read_bytes_;
    out["dma_write_bytes"] = dma_write_bytes_;
    const double mb = static_cast<double>(dma_read_bytes_ + dma_write_bytes_) / 1e6;
    out["transactions_per_mb"] = mb > 0 ? static_cast<double>(c.transactions()) / mb : 0.0;
    out["splits"] = {{"capacity", splits_.capacity()},
                     {"waits", splits_.waits()},
                     {"wait_ps", to_ps(splits_.wait_total())},
                     {"peak", splits_.peak()}};
}

}  // namespace rnic
