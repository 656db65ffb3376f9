#include "framing/mpa_framer.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "core/sim_log.h"
#include "core/stream.h"
#include "proto/seeds/vitcp_urgent.h"

namespace rnic {

mpa_framer::mpa_framer(const sc_core::sc_module_name& name, const mpa_framer_params& params, framing& framing)
    : sc_module(name),
      ulpdu_tx_in("ulpdu_tx_in"),
      fpdu_tx_out("fpdu_tx_out"),
      stream_rx_in("stream_rx_in"),
      ulpdu_rx_out("ulpdu_rx_out"),
      ctl_in("ctl_in"),
      ooo_in("ooo_in"),
      events_out("events_out"),
      llp_error_out("llp_error_out"),
      reasm_out("reasm_out"),
      params_(params),
      framing_(framing),
      tx_crc_(params.order),
      rx_crc_(params.order) {
    ulpdu_tx_in.register_b_transport(this, &mpa_framer::tx_b_transport);
    stream_rx_in.register_b_transport(this, &mpa_framer::rx_b_transport);
    ctl_in.bind(*this);
    ooo_in.bind(*this);
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
    refetch_ext* refetch = find_ext<refetch_ext>(gp);
    conn_state& st = state(ext->conn);
    if (ext->kind == stream_kind::raw) {
        if (st.full) {
            RNIC_MLOG_D(error, mpa, delay, "connection " << ext->conn << ": raw bytes after full operation refused");
            gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
            return;
        }
        tx_raw_bytes_ += gp.get_data_length();
        gp.set_response_status(send_stream(fpdu_tx_out, *ext, gp.get_data_ptr(), gp.get_data_length(), delay));
        if (gp.is_response_ok()) st.tx_stream_offset += gp.get_data_length();
        return;
    }
    if (ext->kind == stream_kind::acknowledgement) {
        send_acknowledgement(*ext, st, gp, delay);
        return;
    }
    if (ext->kind == stream_kind::verbatim) {
        // Test mode (raw_stream work requests): the host's own FPDUs, passed on unframed. They do not
        // move tx_stream_pos: a connection that carries them carries nothing framed here after them.
        if (!st.full) {
            gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
            return;
        }
        tx_verbatim_bytes_ += gp.get_data_length();
        ext->kind = stream_kind::data;
        gp.set_response_status(send_stream(fpdu_tx_out, *ext, gp.get_data_ptr(), gp.get_data_length(), delay));
        if (gp.is_response_ok()) st.tx_stream_offset += gp.get_data_length();
        return;
    }
    if (!st.full || gp.get_data_length() > st.settings.max_ulpdu) {
        RNIC_MLOG_D(error, mpa, delay,
                    "connection " << ext->conn << ": ULPDU of " << gp.get_data_length() << " bytes refused ("
                                  << (st.full ? "longer than MULPDU" : "not in full operation") << ")");
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    fpdu_scratch_.clear();
    const datapath_cycles cycles = framing_.build(gp.get_data_ptr(), gp.get_data_length(), tx_options_now(st, delay),
                                                  st.tx_stream_pos, fpdu_scratch_);
    if (fpdu_scratch_.empty()) {
        // The framing has no frame for this ULPDU (RDMA/TCP: no message type for an atomic).
        ++tx_refused_;
        RNIC_MLOG_D(warn, mpa, delay,
                    "connection " << ext->conn << ": ULPDU of " << gp.get_data_length()
                                  << " bytes refused: the framing cannot carry it");
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    if (refetch != nullptr) {
        refetch->frame_pos = st.tx_stream_pos;
        refetch->markers = st.settings.tx_markers;
        refetch->crc = st.settings.crc;
    }
    tx_crc_.reserve_lt(delay, datapath_time(cycles));
    tx_dp_beats_ += cycles.beats;
    tx_dp_latency_ += cycles.latency;
    st.tx_stream_pos += static_cast<std::uint32_t>(fpdu_scratch_.size());
    ++tx_fpdus_;
    tx_bytes_ += fpdu_scratch_.size();
    gp.set_response_status(
        send_stream(fpdu_tx_out, *ext, fpdu_scratch_.data(), fpdu_scratch_.size(), delay, nullptr, refetch));
    if (gp.is_response_ok()) st.tx_stream_offset += fpdu_scratch_.size();
}

frame_options mpa_framer::tx_options_now(const conn_state& st, const sc_core::sc_time& delay) {
    frame_options o = tx_options(st);
    o.stream_offset = st.tx_stream_offset;
    o.at_ps = to_ps(sim_now() + delay);
    return o;
}

void mpa_framer::send_acknowledgement(stream_ext& ext, conn_state& st, tlm::tlm_generic_payload& gp,
                                      sc_core::sc_time& delay) {
    // The RDMA engine's transmit thread asks, once what it placed has landed, whether the peer is
    // owed an acknowledgement the frames sent since did not carry (VI/TCP Reliable Reception, seed
    // 003 §3.2 Notes on NOP); nothing to send is a success.
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    if (!st.full || st.failed) return;
    fpdu_scratch_.clear();
    const datapath_cycles cycles =
        framing_.build_acknowledgement(tx_options_now(st, delay), st.tx_stream_pos, fpdu_scratch_);
    if (fpdu_scratch_.empty()) return;
    tx_crc_.reserve_lt(delay, datapath_time(cycles));
    tx_dp_beats_ += cycles.beats;
    tx_dp_latency_ += cycles.latency;
    st.tx_stream_pos += static_cast<std::uint32_t>(fpdu_scratch_.size());
    ++tx_fpdus_;
    ++tx_acknowledgements_;
    tx_bytes_ += fpdu_scratch_.size();
    ext.kind = stream_kind::data;
    gp.set_response_status(send_stream(fpdu_tx_out, ext, fpdu_scratch_.data(), fpdu_scratch_.size(), delay));
    if (gp.is_response_ok()) st.tx_stream_offset += fpdu_scratch_.size();
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
    const deframe_status status = st.deframer->feed(data, len);
    const peer_acknowledgement peer = st.deframer->take_peer_acknowledgement();
    if (peer.placed || peer.error != peer_error_kind::none) {
        // VI/TCP Reliable Reception (seed 003 §3.2): the peer placed our messages, or found one in error.
        if (peer.error != peer_error_kind::none) ++rx_peer_error_reports_;
        llp_error_out->peer_acknowledged(conn, peer, rx_delay_);
    }
    if (status == deframe_status::ok) return;
    const bool crc = status == deframe_status::crc_error;
    const std::string& detail = st.deframer->error_detail();
    st.failed = true;
    if (crc)
        ++crc_errors_;
    else
        ++framing_errors_;
    RNIC_LOG_AT(warn, mpa, to_ps(sim_now() + rx_delay_), name(),
                "connection " << conn << ": " << st.deframer->error_name() << ": " << detail);
    // RFC 5044 §8 codes: 2 CRC error, 3 Marker and ULPDU length field mismatch (IFT names no
    // Terminate codes; these say the same: a frame that cannot be delineated).
    llp_error_out->llp_error(conn, crc ? 2 : 3, rx_delay_);
    events_out->on_framing_error(conn, detail);
}

void mpa_framer::deliver(conn_state& st, const std::uint8_t* ulpdu, std::size_t len, const datapath_cycles& c) {
    // A good FPDU: the CRC unit has checked it; the ULPDU goes on to the RDMA engine. FPDUs are
    // contiguous in the stream, so their positions follow from their lengths.
    const std::uint32_t pos = st.rx_next_fpdu;
    st.rx_next_fpdu += static_cast<std::uint32_t>(framing_.frame_wire_length(ulpdu, len, rx_options(st), pos));
    rx_crc_.reserve_lt(rx_delay_, datapath_time(c));
    rx_dp_beats_ += c.beats;
    rx_dp_latency_ += c.latency;
    ++rx_fpdus_;
    stream_ext ext;
    ext.conn = rx_conn_;
    placement_ext where;
    where.frame_pos = pos;
    where.markers = st.settings.rx_markers;
    where.in_error = st.deframer->delivering_in_error();
    if (reasm_out->take_placed(st.conn, st.placed_key(pos))) {
        // Placed when it arrived out of order: delivery still happens here, in order (RFC 5041 §5).
        where.already_placed = true;
        ++in_order_already_placed_;
    }
    sc_core::sc_time d = rx_delay_;
    send_stream(ulpdu_rx_out, ext, ulpdu, len, d, &where);
    rx_landed_ = std::max(rx_landed_, d);
    st.deframer->landed(to_ps(sim_now() + d));
}

const std::vector<std::uint8_t>& mpa_framer::startup_bytes(std::uint32_t conn) const {
    static const std::vector<std::uint8_t> kNone;
    const auto it = conns_.find(conn);
    return it == conns_.end() ? kNone : it->second.startup;
}

std::size_t mpa_framer::ulpdu_limit(std::uint32_t conn) const {
    const auto it = conns_.find(conn);
    return it == conns_.end() ? 0 : it->second.settings.max_ulpdu;
}

void mpa_framer::full_operation(std::uint32_t conn, const mpa_settings& settings, std::size_t consumed) {
    conn_state& st = state(conn);
    st.full = true;
    st.settings = framing_.settle(settings);
    st.tx_stream_pos = 0;  // the first FPDU sits at the marker base (RFC 5044 §4.3)
    st.rx_fpdu_base = consumed;
    st.rx_next_fpdu = 0;
    conn_state* stp = &st;
    st.deframer =
        framing_.make_deframer(rx_options(st), [this, stp](const std::uint8_t* ulpdu, std::size_t len,
                                                           const datapath_cycles& c) { deliver(*stp, ulpdu, len, c); });
    if (framing_.kind() != framing_kind::mpa) {
        RNIC_MLOG(debug, mpa,
                  "connection " << conn << ": full operation with "
                                << (framing_.kind() == framing_kind::ift       ? "IFT"
                                    : framing_.kind() == framing_kind::rdmatcp ? "RDMA/TCP"
                                                                               : "VI/TCP")
                                << " framing, MULPDU " << st.settings.max_ulpdu);
    } else {
        RNIC_MLOG(debug, mpa,
                  "connection " << conn << ": full operation, markers tx " << settings.tx_markers << " rx "
                                << settings.rx_markers << ", CRC " << settings.crc);
    }
    if (consumed < st.startup.size()) {
        std::vector<std::uint8_t> rest(st.startup.begin() + static_cast<std::ptrdiff_t>(consumed), st.startup.end());
        st.startup.clear();
        rx_delay_ = sc_core::SC_ZERO_TIME;
        feed(conn, st, rest.data(), rest.size());
    } else {
        st.startup.clear();
    }
}

std::size_t mpa_framer::place_out_of_order(std::uint32_t conn, std::uint64_t stream_offset, const std::uint8_t* data,
                                           std::size_t len, sc_core::sc_time& delay) {
    ooo_landed_ = placement_landing{};
    const urgent_hint urgent = std::exchange(urgent_, urgent_hint{});
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
    if (params_.path == rx_path::urgent) {
        // Seed 003 §3.7: the urgent byte is the first byte of a VI segment; the codec's checks and the
        // message rules (vitcp_framing::deframe_whole) reject a false one.
        const bool marked = urgent.valid && urgent.conn == conn && urgent.stream_offset == stream_offset;
        const auto start =
            marked ? proto::vitcp_urgent::located_start(stream_offset, len, true, urgent.pointer) : std::nullopt;
        if (!start) {
            ++ooo_unmarked_;
            return 0;
        }
        const std::size_t skip = static_cast<std::size_t>(*start - stream_offset);
        return place_fpdus(conn, st, pos + static_cast<std::uint32_t>(skip), data + skip, len - skip, delay);
    }
    // RFC 5044 §4.3: the Markers in the segment point back at the FPDU each belongs to. Take the first
    // FPDU header that a Marker locates inside the segment and deframe from there.
    std::uint32_t start = 0;
    if (!framing_.locate_frame(rx_options(st), data, len, pos, &start)) return 0;
    return place_fpdus(conn, st, start, data + (start - pos), len - (start - pos), delay);
}

std::size_t mpa_framer::split_fpdu_reach(std::uint32_t conn) const {
    const auto it = conns_.find(conn);
    if (!joins_configured() || it == conns_.end() || !it->second.full || it->second.failed) return 0;
    return framing_.split_frame_reach(rx_options(it->second));
}

std::size_t mpa_framer::place_split_fpdus(std::uint32_t conn, std::uint64_t run_offset, const std::uint8_t* data,
                                          std::size_t len, std::uint64_t seg_offset, std::size_t seg_len,
                                          sc_core::sc_time& delay) {
    ooo_landed_ = placement_landing{};
    if (split_fpdu_reach(conn) == 0) return 0;
    conn_state& st = conns_.find(conn)->second;
    if (run_offset < st.rx_fpdu_base || seg_offset < run_offset || seg_offset + seg_len > run_offset + len) return 0;
    const auto pos = static_cast<std::uint32_t>(run_offset - st.rx_fpdu_base);
    const auto seg_lo = static_cast<std::uint32_t>(seg_offset - run_offset);  // relative to pos
    const auto seg_hi = seg_lo + static_cast<std::uint32_t>(seg_len);
    std::uint32_t start = 0;
    if (!framing_.locate_frame(rx_options(st), data, len, pos, &start)) return 0;
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
    const frame_options options = rx_options(st);
    std::vector<datapath_cycles> costs;
    auto found_one = [&](const std::uint8_t* ulpdu, std::size_t n, const datapath_cycles& c) {
        const auto wire = static_cast<std::uint32_t>(framing_.frame_wire_length(ulpdu, n, options, next));
        found.emplace_back(next, wire);
        next += wire;
        ulpdus.emplace_back(ulpdu, ulpdu + n);
        costs.push_back(c);
    };
    const bool bad = !framing_.deframe_whole(options, pos, data, len, found_one);
    if (bad && found.empty() && !wanted) {
        ++ooo_bad_candidates_;  // no FPDU where one was assumed: leave it to buffering
    }
    std::size_t placed = 0;
    for (std::size_t i = 0; i < found.size(); ++i) {
        if (wanted && !wanted(found[i].first, found[i].second)) continue;
        ++ooo_fpdus_found_;
        if (reasm_out->is_placed(conn, st.placed_key(found[i].first))) {
            placed += found[i].second;  // a duplicate of one already placed
            continue;
        }
        // A received FPDU is checked by the receive side's CRC unit, as in deliver(): out-of-order
        // placement competes with the in-order receive stream, not with transmit.
        rx_crc_.reserve_lt(delay, datapath_time(costs[i]));
        stream_ext ext;
        ext.conn = conn;
        ext.kind = stream_kind::out_of_order;
        placement_ext where;
        where.frame_pos = found[i].first;
        where.markers = options.markers;
        sc_core::sc_time d = delay;
        if (send_stream(ulpdu_rx_out, ext, ulpdus[i].data(), ulpdus[i].size(), d, &where) != tlm::TLM_OK_RESPONSE) {
            ++ooo_refused_;
            continue;
        }
        ooo_landed_.bytes += found[i].second;
        ooo_landed_.landed = std::max(ooo_landed_.landed, d);
        reasm_out->note_placed(conn, st.placed_key(found[i].first), found[i].second);
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
    if (tx_refused_ != 0) out["tx_ulpdus_refused_by_framing"] = tx_refused_;     // new key, only when non-zero
    if (tx_verbatim_bytes_ != 0) out["tx_verbatim_bytes"] = tx_verbatim_bytes_;  // new key, test mode only
    // New keys, VI/TCP Reliable Reception only (non-zero there).
    if (tx_acknowledgements_ != 0) out["tx_acknowledgement_frames"] = tx_acknowledgements_;
    if (rx_peer_error_reports_ != 0) out["rx_peer_error_reports"] = rx_peer_error_reports_;
    out["ooo_segments_offered"] = ooo_segments_;
    out["ooo_fpdus_found"] = ooo_fpdus_found_;
    out["ooo_fpdus_placed"] = ooo_fpdus_placed_;
    out["ooo_ulpdu_bytes_placed"] = ooo_bytes_placed_;
    out["ooo_false_candidates"] = ooo_bad_candidates_;
    // Only when markers can join FPDUs split across out-of-order segments (new key, absent otherwise).
    if (joins_configured()) {
        out["ooo_split_fpdus_placed"] = ooo_split_fpdus_placed_;
    }
    // Only on the urgent path (new key, absent otherwise).
    if (params_.path == rx_path::urgent) out["ooo_segments_unmarked"] = ooo_unmarked_;
    out["ooo_refused_by_rdma"] = ooo_refused_;
    out["in_order_already_placed"] = in_order_already_placed_;
    out["datapath_model"] = framing_.model() == datapath_model::rtl ? "rtl" : "tlm";
    out["tx_datapath_beats"] = tx_dp_beats_;
    out["tx_datapath_latency_cycles"] = tx_dp_latency_;
    out["rx_datapath_beats"] = rx_dp_beats_;
    out["rx_datapath_latency_cycles"] = rx_dp_latency_;
}

}  // namespace rnic
