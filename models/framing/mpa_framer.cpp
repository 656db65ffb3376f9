#include "framing/mpa_framer.h"

#include <algorithm>

#include "core/sim_log.h"
#include "core/stream.h"
#include "proto/ddp_rdmap.h"
#include "rtl/rtl_fpdu_datapath.h"

namespace rnic {

namespace mpa = proto::mpa;

mpa_framer::mpa_framer(const sc_core::sc_module_name& name, const mpa_framer_params& params)
    : sc_module(name),
      ulpdu_tx_in("ulpdu_tx_in"),
      fpdu_tx_out("fpdu_tx_out"),
      stream_rx_in("stream_rx_in"),
      ulpdu_rx_out("ulpdu_rx_out"),
      ctl_in("ctl_in"),
      ooo_in("ooo_in"),
      events_out("events_out"),
      llp_error_out("llp_error_out"),
      params_(params) {
    ulpdu_tx_in.register_b_transport(this, &mpa_framer::tx_b_transport);
    stream_rx_in.register_b_transport(this, &mpa_framer::rx_b_transport);
    ctl_in.bind(*this);
    ooo_in.bind(*this);
    if (params_.model == datapath_model::rtl) {
        // The Verilated blocks become children of this module (rtl_crc32c, rtl_tx, rtl_rx).
        rtl::rtl_datapath_options o;
        o.bytes_per_cycle = params_.crc_bytes_per_cycle;
        o.clock_hz = params_.clock_hz;
        o.vcd_path = params_.rtl_vcd;
        datapath_ = rtl::make_rtl_datapath(o);
    } else {
        datapath_ = make_tlm_datapath(params_.crc_bytes_per_cycle);
    }
}

// Both datapaths stream one bus word per cycle, so an FPDU of F wire bytes keeps the unit busy for
// ceil(F / crc_bytes_per_cycle) beats (the RTL measures them, the TLM model computes them; the
// rtl tests check they agree for every length and Marker alignment), plus cycles_per_fpdu.
sc_core::sc_time mpa_framer::datapath_time(const datapath_cycles& c) const {
    return cycles_time(static_cast<double>(c.beats) + params_.cycles_per_fpdu, params_.clock_hz);
}

void mpa_framer::tx_b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    stream_ext* ext = get_stream_ext(gp);
    if (ext == nullptr) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    conn_state& st = state(ext->conn);
    if (ext->kind == stream_kind::raw) {
        if (st.full) {
            RNIC_MLOG_D(error, mpa, delay, "connection " << ext->conn << ": raw bytes after full operation refused");
            gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
            return;
        }
        tx_raw_bytes_ += gp.get_data_length();
        gp.set_response_status(send_stream(fpdu_tx_out, *ext, gp.get_data_ptr(), gp.get_data_length(), delay));
        return;
    }
    if (!st.full || gp.get_data_length() > st.settings.max_ulpdu) {
        RNIC_MLOG_D(error, mpa, delay, "connection " << ext->conn << ": ULPDU of " << gp.get_data_length()
                                                     << " bytes refused ("
                                                     << (st.full ? "longer than MULPDU" : "not in full operation")
                                                     << ")");
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    fpdu_scratch_.clear();
    datapath_cycles cycles;
    if (params_.kind == framing_kind::ift) {
        build_ift_frame(gp.get_data_ptr(), gp.get_data_length());
        const std::uint64_t beats = (fpdu_scratch_.size() + params_.crc_bytes_per_cycle - 1) / params_.crc_bytes_per_cycle;
        cycles = {beats, beats};
    } else {
        cycles = datapath_->build_fpdu(gp.get_data_ptr(), gp.get_data_length(), st.settings.crc, st.settings.tx_markers,
                                       st.tx_stream_pos, fpdu_scratch_);
    }
    ext->fpdu_pos = st.tx_stream_pos;
    ext->fpdu_markers = st.settings.tx_markers;
    ext->fpdu_crc = st.settings.crc;
    tx_crc_.reserve_lt(delay, datapath_time(cycles));
    tx_dp_beats_ += cycles.beats;
    tx_dp_latency_ += cycles.latency;
    st.tx_stream_pos += static_cast<std::uint32_t>(fpdu_scratch_.size());
    ++tx_fpdus_;
    tx_bytes_ += fpdu_scratch_.size();
    gp.set_response_status(send_stream(fpdu_tx_out, *ext, fpdu_scratch_.data(), fpdu_scratch_.size(), delay));
}

void mpa_framer::rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    stream_ext* ext = get_stream_ext(gp);
    if (ext == nullptr) return;
    conn_state& st = state(ext->conn);
    if (!st.full) {
        st.startup.insert(st.startup.end(), gp.get_data_ptr(), gp.get_data_ptr() + gp.get_data_length());
        events_out->on_startup_bytes(ext->conn);
        return;
    }
    rx_delay_ = delay;
    rx_landed_ = delay;
    feed(ext->conn, st, gp.get_data_ptr(), gp.get_data_length());
    delay = std::max(delay, rx_landed_);
}

void mpa_framer::feed(std::uint32_t conn, conn_state& st, const std::uint8_t* data, std::size_t len) {
    if (st.failed) {
        rx_dropped_after_error_ += len;
        return;
    }
    rx_conn_ = conn;
    rx_bytes_ += len;
    if (st.ift_deframer) {
        const proto::ift::Error e = st.ift_deframer->feed(data, len);
        if (e == proto::ift::Error::none) return;
        st.failed = true;
        const bool crc = e == proto::ift::Error::header_crc_mismatch || e == proto::ift::Error::payload_crc_mismatch;
        if (crc) ++crc_errors_;
        else ++framing_errors_;
        RNIC_LOG_AT(warn, mpa, to_ps(sc_core::sc_time_stamp() + rx_delay_), name(),
                    "connection " << conn << ": IFT " << proto::ift::to_string(e) << ": "
                                  << st.ift_deframer->error_detail());
        // The draft names no Terminate codes; the LLP codes of RFC 5044 §8 say the same: 2 a CRC
        // error, 3 a frame that cannot be delineated.
        llp_error_out->llp_error(conn, crc ? 2 : 3, rx_delay_);
        events_out->on_framing_error(conn, st.ift_deframer->error_detail());
        return;
    }
    const mpa::DeframeError err = st.deframer ? st.deframer->feed(data, len) : st.dp_deframer->feed(data, len);
    if (err != mpa::DeframeError::none) {
        const std::string& detail = st.deframer ? st.deframer->error_detail() : st.dp_deframer->error_detail();
        st.failed = true;
        if (err == mpa::DeframeError::crc_mismatch) ++crc_errors_;
        else ++framing_errors_;
        RNIC_LOG_AT(warn, mpa, to_ps(sc_core::sc_time_stamp() + rx_delay_), name(),
                    "connection " << conn << ": " << mpa::to_string(err) << ": " << detail);
        // RFC 5044 §8 codes: 2 CRC error, 3 Marker and ULPDU length field mismatch.
        llp_error_out->llp_error(conn, err == mpa::DeframeError::crc_mismatch ? 2 : 3, rx_delay_);
        events_out->on_framing_error(conn, detail);
    }
}

void mpa_framer::deliver(conn_state& st, const std::uint8_t* ulpdu, std::size_t len, const datapath_cycles& c) {
    // A good FPDU: the CRC unit has checked it; the ULPDU goes on to the RDMA engine. FPDUs are
    // contiguous in the stream, so their positions follow from their lengths.
    const std::uint32_t pos = st.rx_next_fpdu;
    st.rx_next_fpdu += static_cast<std::uint32_t>(frame_wire_length(st, len, pos, true));
    rx_crc_.reserve_lt(rx_delay_, datapath_time(c));
    rx_dp_beats_ += c.beats;
    rx_dp_latency_ += c.latency;
    ++rx_fpdus_;
    stream_ext ext;
    ext.conn = rx_conn_;
    ext.fpdu_pos = pos;
    ext.fpdu_markers = st.settings.rx_markers;
    const auto placed = st.placed.find(pos);
    if (placed != st.placed.end()) {
        // Placed when it arrived out of order: delivery still happens here, in order (RFC 5041 §5).
        ext.already_placed = true;
        st.placed_bytes -= placed->second;
        st.placed.erase(placed);
        ++in_order_already_placed_;
    }
    sc_core::sc_time d = rx_delay_;
    send_stream(ulpdu_rx_out, ext, ulpdu, len, d);
    rx_landed_ = std::max(rx_landed_, d);
}

const std::vector<std::uint8_t>& mpa_framer::startup_bytes(std::uint32_t conn) const {
    static const std::vector<std::uint8_t> kNone;
    const auto it = conns_.find(conn);
    return it == conns_.end() ? kNone : it->second.startup;
}

std::size_t mpa_framer::frame_wire_length(const conn_state& st, std::size_t ulpdu_len, std::uint32_t pos,
                                          bool rx) const {
    if (params_.kind == framing_kind::ift) return proto::ift::kOverhead + ulpdu_len;  // no padding, no markers
    return mpa::fpdu_wire_length(ulpdu_len, rx ? st.settings.rx_markers : st.settings.tx_markers, pos);
}

void mpa_framer::build_ift_frame(const std::uint8_t* ulpdu, std::size_t len) {
    // Seed 001 §3.1: the DDP header goes under the Header CRC, the rest of the ULPDU is the payload.
    const std::size_t header = len == 0 ? 0 : std::min(len, proto::ddp::header_size_from_control(ulpdu[0]));
    proto::ift::encode(ulpdu, header, ulpdu + header, len - header, fpdu_scratch_);
}

bool mpa_framer::deframe_ift(const std::uint8_t* data, std::size_t len,
                             const std::function<void(const std::uint8_t*, std::size_t)>& sink) {
    // Whole frames from the start of `data`; a trailing partial frame is left alone.
    std::vector<std::uint8_t> ulpdu;
    std::size_t at = 0;
    while (at < len) {
        const std::size_t need = proto::ift::frame_length_at(data + at, len - at);
        if (need == 0 || need > len - at) break;
        std::string error;
        proto::ift::DecodeOptions limits;
        limits.min_header_size = proto::ddp::kTaggedHeaderSize;
        limits.max_header_size = proto::ddp::kUntaggedHeaderSize;
        const auto f = proto::ift::parse(data + at, need, &error, nullptr, limits);
        if (!f) return false;
        ulpdu.assign(f->header, f->header + f->header_size);
        ulpdu.insert(ulpdu.end(), f->payload, f->payload + f->payload_size);
        sink(ulpdu.data(), ulpdu.size());
        at += need;
    }
    return true;
}

std::size_t mpa_framer::ulpdu_limit(std::uint32_t conn) const {
    const auto it = conns_.find(conn);
    return it == conns_.end() ? 0 : it->second.settings.max_ulpdu;
}

void mpa_framer::full_operation(std::uint32_t conn, const mpa_settings& settings, std::size_t consumed) {
    conn_state& st = state(conn);
    st.full = true;
    st.settings = settings;
    if (params_.kind == framing_kind::ift) {
        // No markers, CRCs always (seed 001 §3.1, §5.3). An IFT frame has 12 bytes of overhead where
        // the MPA limit the firmware computed (RFC 5044 §6: EMSS - 6 - EMSS mod 4) allowed at most 9.
        st.settings.tx_markers = st.settings.rx_markers = false;
        st.settings.crc = true;
        st.settings.max_ulpdu = settings.max_ulpdu > 6 ? settings.max_ulpdu - 6 : 0;
        proto::ift::Deframer::Config icfg;
        icfg.limits.min_header_size = proto::ddp::kTaggedHeaderSize;
        icfg.limits.max_header_size = proto::ddp::kUntaggedHeaderSize;
        icfg.limits.max_payload_size = proto::ift::kMaxPayloadSize;
        conn_state* stp = &st;
        proto::ift::Deframer::Handlers h;
        h.frame = [this, stp](const proto::ift::FrameView& f, bool) {
            std::vector<std::uint8_t> ulpdu(f.header, f.header + f.header_size);
            ulpdu.insert(ulpdu.end(), f.payload, f.payload + f.payload_size);
            const std::uint64_t beats = (f.wire_length + params_.crc_bytes_per_cycle - 1) / params_.crc_bytes_per_cycle;
            deliver(*stp, ulpdu.data(), ulpdu.size(), {beats, beats});
        };
        st.ift_deframer = std::make_unique<proto::ift::Deframer>(icfg, std::move(h));
        st.tx_stream_pos = 0;
        st.rx_fpdu_base = consumed;
        st.rx_next_fpdu = 0;
        RNIC_MLOG(debug, mpa, "connection " << conn << ": full operation with IFT framing, MULPDU "
                                            << st.settings.max_ulpdu);
        if (consumed < st.startup.size()) {
            std::vector<std::uint8_t> rest(st.startup.begin() + static_cast<std::ptrdiff_t>(consumed), st.startup.end());
            st.startup.clear();
            rx_delay_ = sc_core::SC_ZERO_TIME;
            feed(conn, st, rest.data(), rest.size());
        } else {
            st.startup.clear();
        }
        return;
    }
    st.tx_stream_pos = 0;  // the first FPDU sits at the marker base (RFC 5044 §4.3)
    mpa::Deframer::Config cfg;
    cfg.markers = settings.rx_markers;
    cfg.crc = settings.crc;
    cfg.stream_pos = 0;
    cfg.max_ulpdu = mpa::kMaxUlpduLength;
    st.rx_fpdu_base = consumed;
    st.rx_next_fpdu = 0;
    conn_state* stp = &st;
    if (datapath_->model() == datapath_model::tlm) {
        st.deframer = std::make_unique<mpa::Deframer>(cfg, [this, stp](const std::uint8_t* ulpdu, std::size_t len) {
            // The codec has checked the FPDU; the TLM datapath charges its wire length.
            const std::size_t wire = mpa::fpdu_wire_length(len, stp->settings.rx_markers, stp->rx_next_fpdu);
            const std::uint64_t beats = (wire + params_.crc_bytes_per_cycle - 1) / params_.crc_bytes_per_cycle;
            deliver(*stp, ulpdu, len, {beats, beats});
        });
    } else {
        st.dp_deframer = std::make_unique<datapath_deframer>(
            *datapath_, cfg, [this, stp](const std::uint8_t* ulpdu, std::size_t len, const datapath_cycles& c) {
                deliver(*stp, ulpdu, len, c);
            });
    }
    RNIC_MLOG(debug, mpa, "connection " << conn << ": full operation, markers tx " << settings.tx_markers << " rx "
                                        << settings.rx_markers << ", CRC " << settings.crc);
    if (consumed < st.startup.size()) {
        std::vector<std::uint8_t> rest(st.startup.begin() + static_cast<std::ptrdiff_t>(consumed), st.startup.end());
        st.startup.clear();
        rx_delay_ = sc_core::SC_ZERO_TIME;
        feed(conn, st, rest.data(), rest.size());
    } else {
        st.startup.clear();
    }
}

std::uint64_t mpa_framer::placed_pending(std::uint32_t conn) const {
    const auto it = conns_.find(conn);
    return it == conns_.end() ? 0 : it->second.placed_bytes;
}

std::size_t mpa_framer::place_out_of_order(std::uint32_t conn, std::uint64_t stream_offset, const std::uint8_t* data,
                                           std::size_t len, sc_core::sc_time& delay) {
    const auto it = conns_.find(conn);
    if (params_.path == rx_path::buffering || it == conns_.end() || !it->second.full || it->second.failed ||
        stream_offset < it->second.rx_fpdu_base) {
        return 0;
    }
    conn_state& st = it->second;
    ++ooo_segments_;
    const auto pos = static_cast<std::uint32_t>(stream_offset - st.rx_fpdu_base);  // marker space
    if (params_.path == rx_path::aligned) {
        // Seed 000 §5: assume the segment starts with a frame; the CRC and the header checks
        // (DDP/RDMAP header, STag and bounds at the RDMA engine) reject a false assumption.
        return place_fpdus(conn, st, pos, data, len, delay);
    }
    if (!st.settings.rx_markers) return 0;
    // RFC 5044 §4.3: the Markers in the segment point back at the FPDU each belongs to. Take the first
    // FPDU header that a Marker locates inside the segment and deframe from there.
    std::uint32_t start = 0;
    if (!locate_fpdu(data, len, pos, &start)) return 0;
    return place_fpdus(conn, st, start, data + (start - pos), len - (start - pos), delay);
}

bool mpa_framer::locate_fpdu(const std::uint8_t* data, std::size_t len, std::uint32_t pos, std::uint32_t* start) const {
    constexpr std::uint32_t kInterval = static_cast<std::uint32_t>(mpa::kMarkerInterval);
    std::uint32_t m = (pos + kInterval - 1) / kInterval * kInterval;  // first marker at or after pos
    for (; static_cast<std::uint64_t>(m - pos) + mpa::kMarkerSize <= len; m += kInterval) {
        const std::size_t at = m - pos;
        const std::uint32_t fpduptr = static_cast<std::uint32_t>(data[at + 2]) << 8 | data[at + 3];
        // FPDUPTR 0: the Marker leads its FPDU; otherwise it points back at the ULPDU_Length field.
        if (fpduptr > m) continue;
        std::uint32_t s = fpduptr == 0 ? m : m - fpduptr;
        // An FPDU whose ULPDU_Length follows a leading Marker begins at that Marker (the CRC covers it).
        if (fpduptr != 0 && s >= 4 && (s - 4) % kInterval == 0) s -= 4;
        if (s < pos) continue;  // that FPDU began before these bytes
        *start = s;
        return true;
    }
    return false;
}

std::size_t mpa_framer::split_fpdu_reach(std::uint32_t conn) const {
    const auto it = conns_.find(conn);
    // The TLM datapath only: a probe through the RTL datapath would run its clocks for bytes that
    // mostly come to nothing.
    const bool joins = joins_configured() && datapath_->model() == datapath_model::tlm && it != conns_.end() &&
                       it->second.full && !it->second.failed && it->second.settings.rx_markers;
    if (!joins) return 0;
    // The longest FPDU (RFC 5044 §4.1: a 16-bit ULPDU_Length, with padding, CRC and its Markers).
    // A frame straddling the segment's left edge starts at most one longest FPDU before it; the
    // Marker that locates a frame at or before that one lies within a further longest FPDU plus
    // one Marker interval (every Marker inside that span points at an FPDU starting in it).
    const std::size_t longest = mpa::fpdu_wire_length(mpa::kMaxUlpduLength, true, 0) + mpa::kMarkerSize;
    return 2 * longest + mpa::kMarkerInterval;
}

std::size_t mpa_framer::place_split_fpdus(std::uint32_t conn, std::uint64_t run_offset, const std::uint8_t* data,
                                          std::size_t len, std::uint64_t seg_offset, std::size_t seg_len,
                                          sc_core::sc_time& delay) {
    if (split_fpdu_reach(conn) == 0) return 0;
    conn_state& st = conns_.find(conn)->second;
    if (run_offset < st.rx_fpdu_base || seg_offset < run_offset || seg_offset + seg_len > run_offset + len) return 0;
    const auto pos = static_cast<std::uint32_t>(run_offset - st.rx_fpdu_base);
    const auto seg_lo = static_cast<std::uint32_t>(seg_offset - run_offset);  // relative to pos
    const auto seg_hi = seg_lo + static_cast<std::uint32_t>(seg_len);
    std::uint32_t start = 0;
    if (!locate_fpdu(data, len, pos, &start)) return 0;
    const std::uint64_t before = ooo_fpdus_placed_;
    // Only the FPDUs that straddle an edge of the segment: the ones inside it were offered with it,
    // the ones wholly in held bytes were offered with their own segments.
    place_fpdus(conn, st, start, data + (start - pos), len - (start - pos), delay,
                [&](std::uint32_t p, std::uint32_t wire) {
                    const std::uint32_t lo = p - pos, hi = lo + wire;
                    const bool overlaps = lo < seg_hi && hi > seg_lo;
                    const bool inside = lo >= seg_lo && hi <= seg_hi;
                    return overlaps && !inside;
                });
    const std::uint64_t joined = ooo_fpdus_placed_ - before;
    ooo_split_fpdus_placed_ += joined;
    return static_cast<std::size_t>(joined);
}

std::size_t mpa_framer::place_fpdus(std::uint32_t conn, conn_state& st, std::uint32_t pos, const std::uint8_t* data,
                                    std::size_t len, sc_core::sc_time& delay, const fpdu_filter& wanted) {
    // Deframe only whole FPDUs: a trailing partial FPDU stays for the in-order path.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> found;  // position, wire length
    std::vector<std::vector<std::uint8_t>> ulpdus;
    std::uint32_t next = pos;
    mpa::Deframer::Config cfg;
    cfg.markers = st.settings.rx_markers;
    cfg.crc = st.settings.crc;
    cfg.stream_pos = pos;
    std::vector<datapath_cycles> costs;
    auto found_one = [&](const std::uint8_t* ulpdu, std::size_t n, const datapath_cycles& c) {
        const auto wire = static_cast<std::uint32_t>(frame_wire_length(st, n, next, true));
        found.emplace_back(next, wire);
        next += wire;
        ulpdus.emplace_back(ulpdu, ulpdu + n);
        costs.push_back(c);
    };
    bool bad = false;
    if (params_.kind == framing_kind::ift) {
        bad = !deframe_ift(data, len, [&](const std::uint8_t* ulpdu, std::size_t n) {
            const std::uint64_t beats =
                (proto::ift::kOverhead + n + params_.crc_bytes_per_cycle - 1) / params_.crc_bytes_per_cycle;
            found_one(ulpdu, n, {beats, beats});
        });
    } else if (datapath_->model() == datapath_model::tlm) {
        mpa::Deframer probe(cfg, [&](const std::uint8_t* ulpdu, std::size_t n) {
            const std::size_t wire = mpa::fpdu_wire_length(n, cfg.markers, next);
            const std::uint64_t beats = (wire + params_.crc_bytes_per_cycle - 1) / params_.crc_bytes_per_cycle;
            found_one(ulpdu, n, {beats, beats});
        });
        bad = probe.feed(data, len) != mpa::DeframeError::none;
    } else {
        datapath_deframer probe(*datapath_, cfg, found_one);
        bad = probe.feed(data, len) != mpa::DeframeError::none;
    }
    if (bad && found.empty() && !wanted) {
        ++ooo_bad_candidates_;  // no FPDU where one was assumed: leave it to buffering
    }
    std::size_t placed = 0;
    for (std::size_t i = 0; i < found.size(); ++i) {
        if (wanted && !wanted(found[i].first, found[i].second)) continue;
        ++ooo_fpdus_found_;
        if (st.placed.count(found[i].first) != 0) {
            placed += found[i].second;  // a duplicate of one already placed
            continue;
        }
        // A received FPDU is checked by the receive side's CRC unit, as in deliver(): out-of-order
        // placement competes with the in-order receive stream, not with transmit.
        rx_crc_.reserve_lt(delay, datapath_time(costs[i]));
        stream_ext ext;
        ext.conn = conn;
        ext.kind = stream_kind::out_of_order;
        ext.fpdu_pos = found[i].first;
        ext.fpdu_markers = cfg.markers;
        sc_core::sc_time d = delay;
        if (send_stream(ulpdu_rx_out, ext, ulpdus[i].data(), ulpdus[i].size(), d) != tlm::TLM_OK_RESPONSE) {
            ++ooo_refused_;
            continue;
        }
        st.placed[found[i].first] = found[i].second;
        st.placed_bytes += found[i].second;
        placed += found[i].second;
        ++ooo_fpdus_placed_;
        ooo_bytes_placed_ += ulpdus[i].size();
    }
    return placed;
}

void mpa_framer::report_stats(boost::json::object& out) const {
    out["tx_fpdus"] = tx_fpdus_;
    out["tx_fpdu_bytes"] = tx_bytes_;
    out["tx_startup_bytes"] = tx_raw_bytes_;
    out["rx_fpdus"] = rx_fpdus_;
    out["rx_stream_bytes"] = rx_bytes_;
    out["crc_errors"] = crc_errors_;
    out["framing_errors"] = framing_errors_;
    out["rx_bytes_dropped_after_error"] = rx_dropped_after_error_;
    out["ooo_segments_offered"] = ooo_segments_;
    out["ooo_fpdus_found"] = ooo_fpdus_found_;
    out["ooo_fpdus_placed"] = ooo_fpdus_placed_;
    out["ooo_ulpdu_bytes_placed"] = ooo_bytes_placed_;
    out["ooo_false_candidates"] = ooo_bad_candidates_;
    // Only when markers can join FPDUs split across out-of-order segments (new key, absent otherwise).
    if (joins_configured()) {
        out["ooo_split_fpdus_placed"] = ooo_split_fpdus_placed_;
    }
    out["ooo_refused_by_rdma"] = ooo_refused_;
    out["in_order_already_placed"] = in_order_already_placed_;
    out["datapath_model"] = params_.model == datapath_model::rtl ? "rtl" : "tlm";
    out["tx_datapath_beats"] = tx_dp_beats_;
    out["tx_datapath_latency_cycles"] = tx_dp_latency_;
    out["rx_datapath_beats"] = rx_dp_beats_;
    out["rx_datapath_latency_cycles"] = rx_dp_latency_;
}

}  // namespace rnic
