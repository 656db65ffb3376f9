#include "framing/mpa_framer.h"

#include "core/sim_log.h"
#include "core/stream.h"

namespace rnic {

namespace mpa = proto::mpa;

mpa_framer::mpa_framer(const sc_core::sc_module_name& name, const mpa_framer_params& params)
    : sc_module(name),
      ulpdu_tx_in("ulpdu_tx_in"),
      fpdu_tx_out("fpdu_tx_out"),
      stream_rx_in("stream_rx_in"),
      ulpdu_rx_out("ulpdu_rx_out"),
      ctl_in("ctl_in"),
      events_out("events_out"),
      params_(params) {
    ulpdu_tx_in.register_b_transport(this, &mpa_framer::tx_b_transport);
    stream_rx_in.register_b_transport(this, &mpa_framer::rx_b_transport);
    ctl_in.bind(*this);
}

sc_core::sc_time mpa_framer::crc_time(std::size_t bytes) const {
    const double beats = static_cast<double>((bytes + params_.crc_bytes_per_cycle - 1) / params_.crc_bytes_per_cycle);
    return cycles_time(beats + params_.cycles_per_fpdu, params_.clock_hz);
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
    mpa::build_fpdu(gp.get_data_ptr(), gp.get_data_length(), st.settings.crc, st.settings.tx_markers,
                    st.tx_stream_pos, fpdu_scratch_);
    tx_crc_.reserve_lt(delay, crc_time(fpdu_scratch_.size()));
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
    feed(ext->conn, st, gp.get_data_ptr(), gp.get_data_length());
}

void mpa_framer::feed(std::uint32_t conn, conn_state& st, const std::uint8_t* data, std::size_t len) {
    if (st.failed) {
        rx_dropped_after_error_ += len;
        return;
    }
    rx_conn_ = conn;
    rx_bytes_ += len;
    const mpa::DeframeError err = st.deframer->feed(data, len);
    if (err != mpa::DeframeError::none) {
        st.failed = true;
        if (err == mpa::DeframeError::crc_mismatch) ++crc_errors_;
        else ++framing_errors_;
        RNIC_LOG_AT(warn, mpa, to_ps(sc_core::sc_time_stamp() + rx_delay_), name(),
                    "connection " << conn << ": " << mpa::to_string(err) << ": " << st.deframer->error_detail());
        events_out->on_framing_error(conn, st.deframer->error_detail());
    }
}

const std::vector<std::uint8_t>& mpa_framer::startup_bytes(std::uint32_t conn) const {
    static const std::vector<std::uint8_t> kNone;
    const auto it = conns_.find(conn);
    return it == conns_.end() ? kNone : it->second.startup;
}

void mpa_framer::full_operation(std::uint32_t conn, const mpa_settings& settings, std::size_t consumed) {
    conn_state& st = state(conn);
    st.full = true;
    st.settings = settings;
    st.tx_stream_pos = 0;  // the first FPDU sits at the marker base (RFC 5044 §4.3)
    mpa::Deframer::Config cfg;
    cfg.markers = settings.rx_markers;
    cfg.crc = settings.crc;
    cfg.stream_pos = 0;
    cfg.max_ulpdu = mpa::kMaxUlpduLength;
    st.deframer = std::make_unique<mpa::Deframer>(cfg, [this](const std::uint8_t* ulpdu, std::size_t len) {
        // A good FPDU: the CRC unit has checked it; the ULPDU goes on to the RDMA engine.
        rx_crc_.reserve_lt(rx_delay_, crc_time(len));
        ++rx_fpdus_;
        stream_ext ext;
        ext.conn = rx_conn_;
        sc_core::sc_time d = rx_delay_;
        send_stream(ulpdu_rx_out, ext, ulpdu, len, d);
    });
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

void mpa_framer::report_stats(boost::json::object& out) const {
    out["tx_fpdus"] = tx_fpdus_;
    out["tx_fpdu_bytes"] = tx_bytes_;
    out["tx_startup_bytes"] = tx_raw_bytes_;
    out["rx_fpdus"] = rx_fpdus_;
    out["rx_stream_bytes"] = rx_bytes_;
    out["crc_errors"] = crc_errors_;
    out["framing_errors"] = framing_errors_;
    out["rx_bytes_dropped_after_error"] = rx_dropped_after_error_;
}

}  // namespace rnic
