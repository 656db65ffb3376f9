#include "dma/dma_engine.h"

#include <algorithm>

#include "core/sim_log.h"
#include "core/timeline.h"
#include "host/host_interface.h"

namespace rnic {

namespace {
std::uint64_t le(const std::uint8_t* p, int n) {
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}
}  // namespace

dma_engine::dma_engine(const sc_core::sc_module_name& name, const dma_params& params)
    : sc_module(name),
      dma_in("dma_in"),
      pcie_out("pcie_out"),
      params_(params),
      setup_time_(cycles_time(params.setup_cycles, params.clock_hz)),
      channels_(static_cast<std::size_t>(std::max(params.channels, 1))),
      reads_(static_cast<std::uint64_t>(std::max(params.max_outstanding_reads, 0))) {
    dma_in.register_b_transport(this, &dma_engine::b_transport);
    const double rate = params_.bytes_per_cycle * params_.clock_hz;  // bytes/s
    if (rate > 0) datapath_ticks_per_byte_ = 1.0 / rate / sc_core::sc_get_time_resolution().to_seconds();
    for (std::size_t i = 0; i < channels_.size(); ++i) {
        channels_[i].setup = timed_resource(params_.order);
        channels_[i].datapath = timed_resource(params_.order);
        channels_[i].track = std::string(this->name()) + "/ch" + std::to_string(i);
    }
}

tlm::tlm_response_status dma_engine::bus_transfer(channel& ch, tlm::tlm_command cmd, std::uint64_t addr,
                                                  unsigned char* data, std::uint32_t len, const sc_core::sc_time& ready,
                                                  sc_core::sc_time* issued, sc_core::sc_time* finish, bus_txn_ext* bx,
                                                  atomic_op_ext* aop) {
    const sc_core::sc_time now = sim_now();
    sc_core::sc_time start = ch.setup.reserve(ready, setup_time_);
    const bool read = cmd == tlm::TLM_READ_COMMAND;
    if (read) start = reads_.acquire(start);
    *issued = start;
    tlm::tlm_generic_payload& sub = scratch_;  // reused: no allocation per transfer
    sub.set_command(cmd);
    sub.set_address(addr);
    sub.set_data_ptr(data);
    sub.set_data_length(len);
    sub.set_streaming_width(len);
    sub.set_byte_enable_ptr(nullptr);
    sub.set_dmi_allowed(false);
    sub.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sub.set_extension(bx);
    if (aop != nullptr) sub.set_extension(aop);  // an AtomicOp: the bus performs it (host/atomic_op_ext.h)
    sc_core::sc_time d = start - now;
    pcie_out->b_transport(sub, d);
    sub.clear_extension(bx);
    if (aop != nullptr) sub.clear_extension(aop);
    *finish = now + d;
    if (read) reads_.release_at(*finish);
    ++ch.stats.bus_transfers;
    ch.stats.bus_packets += bx->packets;
    return sub.get_response_status();
}

bool dma_engine::fetch_sgl(channel& ch, const dma_ext& ext, sc_core::sc_time& t, std::vector<sg_element>* sg,
                           std::string* error, tlm::tlm_response_status* status) {
    if (ext.sgl_entries == 0 || ext.sgl_first >= ext.sgl_entries || ext.sgl_count > ext.sgl_entries) {
        *error = "scatter/gather ring of " + std::to_string(ext.sgl_entries) + " entries cannot supply " +
                 std::to_string(ext.sgl_count) + " elements from index " + std::to_string(ext.sgl_first);
        *status = tlm::TLM_GENERIC_ERROR_RESPONSE;
        return false;
    }
    const sg_element_format& f = params_.sge;
    if (f.size == 0) {
        *error = "scatter/gather ring given, but the engine was built without an SG element format";
        *status = tlm::TLM_GENERIC_ERROR_RESPONSE;
        return false;
    }
    std::vector<std::uint8_t> raw(static_cast<std::size_t>(ext.sgl_count) * f.size);
    // One descriptor fetch per contiguous run of the ring (two when it wraps).
    std::uint32_t index = ext.sgl_first, done = 0;
    sc_core::sc_time last = t;
    while (done < ext.sgl_count) {
        const std::uint32_t run = std::min(ext.sgl_count - done, ext.sgl_entries - index);
        const auto bytes = static_cast<std::uint32_t>(run * f.size);
        bus_txn_ext bx;
        sc_core::sc_time issued, finish;
        const tlm::tlm_response_status st =
            bus_transfer(ch, tlm::TLM_READ_COMMAND, ext.sgl_ring + static_cast<std::uint64_t>(index) * f.size,
                         raw.data() + static_cast<std::size_t>(done) * f.size, bytes, t, &issued, &finish, &bx);
        ++ch.stats.descriptor_fetches;
        ch.stats.descriptor_bytes += bytes;
        last = std::max(last, finish);
        if (st != tlm::TLM_OK_RESPONSE) {
            *error = "scatter/gather element fetch refused by the host";
            *status = st;
            return false;
        }
        done += run;
        index = (index + run) % ext.sgl_entries;
    }
    t = last;  // the data transfers need the elements first
    for (std::uint32_t i = 0; i < ext.sgl_count; ++i) {
        const std::uint8_t* e = raw.data() + static_cast<std::size_t>(i) * f.size;
        const sg_element el{le(e + f.addr_offset, 8), static_cast<std::uint32_t>(le(e + f.length_offset, 4))};
        if (el.len > 0) sg->push_back(el);
        if ((le(e + f.flags_offset, 4) & f.last_flag) != 0) break;
    }
    return true;
}

void dma_engine::fail(tlm::tlm_generic_payload& gp, channel& ch, const sc_core::sc_time& delay,
                      tlm::tlm_response_status status, const std::string& why) {
    ++ch.stats.errors;
    if (status == tlm::TLM_GENERIC_ERROR_RESPONSE) {
        // A malformed request from a NIC block (SG list, marker breaks): the client's error.
        RNIC_MLOG_D(error, dma, delay,
                    (gp.is_read() ? "read" : "write") << " of " << gp.get_data_length() << " bytes refused: " << why);
    } else {
        // The host refused it; host memory and the bus have logged it already.
        RNIC_MLOG_D(debug, dma, delay,
                    (gp.is_read() ? "read" : "write") << " of " << gp.get_data_length() << " bytes at 0x" << std::hex
                                                      << gp.get_address() << std::dec << " failed: " << why);
    }
    gp.set_response_status(status);
}

void dma_engine::b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const sc_core::sc_time now = sim_now();
    const sc_core::sc_time ready = now + delay;
    const std::uint32_t len = gp.get_data_length();
    const bool read = gp.is_read();
    dma_ext* ext = nullptr;
    gp.get_extension(ext);
    atomic_op_ext* aop = nullptr;
    gp.get_extension(aop);

    // The channel whose datapath frees first (ties: the lower number).
    std::size_t ci = 0;
    for (std::size_t i = 1; i < channels_.size(); ++i) {
        if (std::max(ready, channels_[i].datapath.free_at()) < std::max(ready, channels_[ci].datapath.free_at()))
            ci = i;
    }
    channel& ch = channels_[ci];
    ++ch.stats.transfers;

    // Host side: an SG list (given or fetched) or the contiguous range.
    sc_core::sc_time t = ready;
    std::vector<sg_element>& sg = sg_scratch_;
    sg.clear();
    if (ext != nullptr && ext->sgl_ring != 0 && ext->sgl_count > 0) {
        std::string why;
        tlm::tlm_response_status st = tlm::TLM_OK_RESPONSE;
        if (!fetch_sgl(ch, *ext, t, &sg, &why, &st)) {
            if (st == tlm::TLM_GENERIC_ERROR_RESPONSE) ++bad_requests_;
            fail(gp, ch, t - now, st, why);
            delay = t - now;
            return;
        }
    } else if (ext != nullptr && !ext->sg.empty()) {
        sg = ext->sg;
    } else {
        sg.push_back({gp.get_address(), len});
    }
    std::uint64_t covered = 0;
    for (const sg_element& e : sg) covered += e.len;
    if (covered != len) {
        ++bad_requests_;
        fail(gp, ch, delay, tlm::TLM_GENERIC_ERROR_RESPONSE,
             "scatter/gather list covers " + std::to_string(covered) + " bytes, the transfer has " +
                 std::to_string(len));
        return;
    }
    ch.stats.sg_elements += sg.size();

    // Marker break points inside the data (only a fragmenting engine cares).
    static const std::vector<std::uint32_t> kNoBreaks;
    const std::vector<std::uint32_t>* break_list = &kNoBreaks;
    if (ext != nullptr && params_.markers == dma_marker_mode::fragment) {
        std::uint32_t prev = 0;
        for (const std::uint32_t b : ext->marker_breaks) {
            if (b <= prev || b >= len) {
                ++bad_requests_;
                fail(gp, ch, delay, tlm::TLM_GENERIC_ERROR_RESPONSE,
                     "marker break " + std::to_string(b) + " is not ascending inside (0, " + std::to_string(len) + ")");
                return;
            }
            prev = b;
        }
        break_list = &ext->marker_breaks;
    }
    const std::vector<std::uint32_t>& breaks = *break_list;

    // Pieces: each SG element, cut at the marker breaks that fall inside it.
    std::vector<piece>& pieces = pieces_scratch_;
    pieces.clear();
    std::uint32_t off = 0;
    std::size_t bi = 0;
    for (const sg_element& e : sg) {
        std::uint64_t a = e.addr;
        std::uint32_t left = e.len;
        bool after_marker = false;
        while (left > 0) {
            while (bi < breaks.size() && breaks[bi] <= off) ++bi;
            std::uint32_t n = left;
            if (bi < breaks.size() && breaks[bi] < off + left) n = breaks[bi] - off;
            pieces.push_back({a, off, n, after_marker});
            after_marker = true;
            a += n;
            off += n;
            left -= n;
        }
    }

    // Issue the pieces back to back (each needs the channel's set-up), then stream the data.
    sc_core::sc_time last = t, first_data = sc_core::SC_ZERO_TIME, first_issue = t;
    std::uint64_t packets = 0;
    std::uint32_t fragments = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        const piece& p = pieces[i];
        bus_txn_ext bx;
        sc_core::sc_time issued, finish;
        const tlm::tlm_response_status st = bus_transfer(
            ch, gp.get_command(), p.host_addr, gp.get_data_ptr() + p.nic_off, p.len, t, &issued, &finish, &bx, aop);
        packets += bx.packets;
        if (p.marker_split) ++fragments;
        if (i == 0) {
            first_issue = issued;
            first_data = bx.first_data > sc_core::SC_ZERO_TIME ? bx.first_data : finish;
        }
        last = std::max(last, finish);
        if (st != tlm::TLM_OK_RESPONSE) {
            ch.stats.marker_fragments += fragments;
            fail(gp, ch, last - now, st, "the host bus reported an error");
            delay = last - now;
            return;
        }
        t = issued;
    }
    ch.stats.marker_fragments += fragments;
    sc_core::sc_time finish = last;
    if (datapath_ticks_per_byte_ > 0 && len > 0) {
        const auto ticks = static_cast<sc_core::sc_time::value_type>(len * datapath_ticks_per_byte_ + 0.5);
        const sc_core::sc_time stream_end = ch.datapath.reserve(read ? first_data : first_issue, from_ps(ticks));
        finish = std::max(finish, stream_end);
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    if (read) {
        ++ch.stats.reads;
        ch.stats.read_bytes += len;
        read_latency_.add(to_ps(finish - ready));
    } else {
        ++ch.stats.writes;
        ch.stats.write_bytes += len;
    }
    if (ext != nullptr) {
        ext->bus_transfers = static_cast<std::uint32_t>(pieces.size());
        ext->marker_fragments = fragments;
        ext->bus_packets = packets;
    }
    if (timeline::enabled()) {
        timeline::complete_event(ch.track, read ? "DMA read" : "DMA write", to_ps(ready), to_ps(finish - ready),
                                 timeline::args()
                                     .add("bytes", len)
                                     .add("addr", gp.get_address())
                                     .add("bus_transfers", static_cast<std::uint64_t>(pieces.size()))
                                     .add("marker_fragments", fragments)
                                     .add("bus_packets", packets),
                                 "dma");
    }
    delay = finish - now;
}

dma_engine::channel_stats dma_engine::totals() const {
    channel_stats t;
    for (const channel& c : channels_) {
        const channel_stats& s = c.stats;
        t.transfers += s.transfers;
        t.reads += s.reads;
        t.writes += s.writes;
        t.read_bytes += s.read_bytes;
        t.write_bytes += s.write_bytes;
        t.bus_transfers += s.bus_transfers;
        t.marker_fragments += s.marker_fragments;
        t.sg_elements += s.sg_elements;
        t.descriptor_fetches += s.descriptor_fetches;
        t.descriptor_bytes += s.descriptor_bytes;
        t.bus_packets += s.bus_packets;
        t.errors += s.errors;
    }
    return t;
}

namespace {
boost::json::object stats_json(const dma_engine::channel_stats& s) {
    return {{"transfers", s.transfers},
            {"reads", s.reads},
            {"writes", s.writes},
            {"read_bytes", s.read_bytes},
            {"write_bytes", s.write_bytes},
            {"bus_transfers", s.bus_transfers},
            {"marker_fragments", s.marker_fragments},
            {"sg_elements", s.sg_elements},
            {"descriptor_fetches", s.descriptor_fetches},
            {"descriptor_bytes", s.descriptor_bytes},
            {"bus_packets", s.bus_packets},
            {"errors", s.errors}};
}
}  // namespace

void dma_engine::report_stats(boost::json::object& out) const {
    const channel_stats t = totals();
    out = stats_json(t);
    out["marker_mode"] = params_.markers == dma_marker_mode::fragment ? "fragment" : "skip";
    out["bad_requests"] = bad_requests_;
    const double mb = static_cast<double>(t.read_bytes + t.write_bytes) / 1e6;
    out["bus_transfers_per_mb"] = mb > 0 ? static_cast<double>(t.bus_transfers) / mb : 0.0;
    out["bus_packets_per_mb"] = mb > 0 ? static_cast<double>(t.bus_packets) / mb : 0.0;
    out["read_latency"] = read_latency_.json();
    out["outstanding_reads"] = {{"capacity", reads_.capacity()},
                                {"waits", reads_.waits()},
                                {"wait_ps", to_ps(reads_.wait_total())},
                                {"peak", reads_.peak()}};
    boost::json::array chans;
    const sc_core::sc_time now = sim_now();
    for (const channel& c : channels_) {
        boost::json::object o = stats_json(c.stats);
        o["datapath_utilisation"] = c.datapath.utilization(now);
        chans.push_back(std::move(o));
    }
    out["channels"] = std::move(chans);
}

}  // namespace rnic
