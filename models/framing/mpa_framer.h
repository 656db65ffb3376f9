// MPA framing unit (RFC 5044): FPDU build with markers, PAD and CRC32c on transmit; FPDU
// reassembly, marker removal and CRC check on receive. Before full operation a connection is in
// start-up: transmit bytes (the MPA Request/Reply) pass through unframed and receive bytes are
// buffered for the firmware. The seam for the seeds' other framings: a sibling module with the
// same four sockets.
//  ulpdu_tx_in  <- ULPDUs (DDP segments) or raw start-up bytes
//  fpdu_tx_out  -> FPDUs to the TCP engine's send stream
//  stream_rx_in <- in-order TCP stream bytes
//  ulpdu_rx_out -> checked ULPDUs to the RDMA engine
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <string>
#include <vector>

#include "core/stats.h"
#include "core/timed_resource.h"
#include "framing/fpdu_datapath.h"
#include "framing/framing_if.h"
#include "proto/mpa.h"
#include "proto/seeds/ift.h"
#include "rdma/rdma_if.h"

namespace rnic {

struct mpa_framer_params {
    rx_path path = rx_path::buffering;
    double clock_hz = 500e6;
    std::uint32_t crc_bytes_per_cycle = 16;  // CRC32c datapath width (128-bit bus)
    double cycles_per_fpdu = 1;              // pipeline fill besides the datapath beats (the RTL's: 1, README)
    // CRC/Marker datapath: the TLM model (proto codecs) or the Verilated RTL (rtl/, 8 or 16 bytes wide).
    datapath_model model = datapath_model::tlm;
    std::string rtl_vcd;                     // RTL only: VCD of the first FPDU sent and received
    // MPA, or IFT (seed 001): then no markers, the TLM datapath, and the MPA Request/Reply remains
    // only the connection's switch into RDMA mode (the draft defines no start-up exchange).
    framing_kind kind = framing_kind::mpa;
    // Markers path: place FPDUs split across out-of-order segments once all their pieces are held
    // (RFC 5044 Appendix A); off, only whole FPDUs inside one segment are placed.
    bool join_split_fpdus = true;
};

class mpa_framer : public sc_core::sc_module, public framer_ctl_if, public framer_ooo_if, public stats_reporter {
public:
    tlm_utils::multi_passthrough_target_socket<mpa_framer> ulpdu_tx_in;  // RDMA engine and control processor
    tlm_utils::simple_initiator_socket<mpa_framer> fpdu_tx_out;
    tlm_utils::simple_target_socket<mpa_framer> stream_rx_in;
    tlm_utils::simple_initiator_socket<mpa_framer> ulpdu_rx_out;
    sc_core::sc_export<framer_ctl_if> ctl_in;
    sc_core::sc_export<framer_ooo_if> ooo_in;
    sc_core::sc_port<framer_events_if> events_out;
    sc_core::sc_port<rdma_llp_if> llp_error_out;  // a broken stream: the RDMAP layer sends the Terminate

    mpa_framer(const sc_core::sc_module_name& name, const mpa_framer_params& params);

    // framer_ctl_if
    const std::vector<std::uint8_t>& startup_bytes(std::uint32_t conn) const override;
    void full_operation(std::uint32_t conn, const mpa_settings& settings, std::size_t consumed) override;
    std::size_t ulpdu_limit(std::uint32_t conn) const override;
    // framer_ooo_if
    std::size_t place_out_of_order(std::uint32_t conn, std::uint64_t stream_offset, const std::uint8_t* data,
                                   std::size_t len, sc_core::sc_time& delay) override;
    std::size_t place_split_fpdus(std::uint32_t conn, std::uint64_t run_offset, const std::uint8_t* data,
                                  std::size_t len, std::uint64_t seg_offset, std::size_t seg_len,
                                  sc_core::sc_time& delay) override;
    std::size_t split_fpdu_reach(std::uint32_t conn) const override;
    std::uint64_t placed_pending(std::uint32_t conn) const override;

    void report_stats(boost::json::object& out) const override;

private:
    struct conn_state {
        bool full = false;
        mpa_settings settings;
        std::uint32_t tx_stream_pos = 0;  // marker-space position of the next FPDU byte we send
        std::vector<std::uint8_t> startup;
        std::unique_ptr<proto::mpa::Deframer> deframer;         // TLM datapath
        std::unique_ptr<datapath_deframer> dp_deframer;         // RTL datapath
        std::unique_ptr<proto::ift::Deframer> ift_deframer;     // IFT framing
        bool failed = false;
        std::uint64_t rx_fpdu_base = 0;   // TCP stream offset of the first FPDU byte received
        std::uint32_t rx_next_fpdu = 0;   // marker-space position of the next in-order FPDU
        std::map<std::uint32_t, std::uint32_t> placed;  // FPDUs placed out of order: position -> wire length
        std::uint64_t placed_bytes = 0;   // sum of their wire lengths
    };
    // Deframes exactly the FPDUs in [pos, pos+len) of an out-of-order segment and offers each ULPDU
    // to the RDMA engine; returns the wire bytes of those placed. With `wanted`, only the FPDUs it
    // accepts (position, wire length) are counted and offered (the split ones of a joined run).
    using fpdu_filter = std::function<bool(std::uint32_t pos, std::uint32_t wire)>;
    std::size_t place_fpdus(std::uint32_t conn, conn_state& st, std::uint32_t pos, const std::uint8_t* data,
                            std::size_t len, sc_core::sc_time& delay, const fpdu_filter& wanted = nullptr);
    // Joining split FPDUs is asked for on a path that can do it (markers, MPA framing).
    bool joins_configured() const {
        return params_.join_split_fpdus && params_.path == rx_path::markers && params_.kind == framing_kind::mpa;
    }
    // RFC 5044 §4.3: the marker-space position of the first FPDU that a Marker inside
    // [pos, pos+len) locates and that starts at or after pos; false when none does.
    bool locate_fpdu(const std::uint8_t* data, std::size_t len, std::uint32_t pos, std::uint32_t* start) const;
    // Bytes a frame carrying `ulpdu_len` bytes occupies in the stream at position `pos`.
    std::size_t frame_wire_length(const conn_state& st, std::size_t ulpdu_len, std::uint32_t pos, bool rx) const;
    // IFT: one frame from a ULPDU (its DDP header and payload); the stream's positions follow from lengths.
    void build_ift_frame(const std::uint8_t* ulpdu, std::size_t len);
    // IFT: deframes the whole frames at the start of an out-of-order segment (the Header and Payload
    // CRCs vouch for each, seed 001 §5.1), for place_fpdus.
    bool deframe_ift(const std::uint8_t* data, std::size_t len,
                     const std::function<void(const std::uint8_t*, std::size_t)>& sink);

    void tx_b_transport(int initiator, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void feed(std::uint32_t conn, conn_state& st, const std::uint8_t* data, std::size_t len);
    conn_state& state(std::uint32_t conn) { return conns_[conn]; }
    // Time the CRC/Marker datapath is busy with one FPDU: its beats plus the per-FPDU cycles.
    sc_core::sc_time datapath_time(const datapath_cycles& c) const;
    // The ULPDU of a good FPDU, delivered in order (both deframers end here).
    void deliver(conn_state& st, const std::uint8_t* ulpdu, std::size_t len, const datapath_cycles& c);

    mpa_framer_params params_;
    std::unique_ptr<fpdu_datapath> datapath_;
    std::map<std::uint32_t, conn_state> conns_;
    timed_resource tx_crc_, rx_crc_;
    std::vector<std::uint8_t> fpdu_scratch_;
    sc_core::sc_time rx_delay_ = sc_core::SC_ZERO_TIME;  // delay context of the current receive call
    // When the last placement the current receive call caused lands in host memory (as a delay): the
    // call returns it, so the TCP engine can bound what is still on its way (placement_backlog).
    sc_core::sc_time rx_landed_ = sc_core::SC_ZERO_TIME;
    std::uint32_t rx_conn_ = 0;
    std::uint64_t tx_fpdus_ = 0, tx_bytes_ = 0, tx_raw_bytes_ = 0, rx_fpdus_ = 0, rx_bytes_ = 0;
    std::uint64_t crc_errors_ = 0, framing_errors_ = 0, rx_dropped_after_error_ = 0;
    std::uint64_t ooo_segments_ = 0, ooo_fpdus_found_ = 0, ooo_fpdus_placed_ = 0, ooo_bytes_placed_ = 0;
    std::uint64_t ooo_bad_candidates_ = 0, ooo_refused_ = 0, in_order_already_placed_ = 0;
    std::uint64_t ooo_split_fpdus_placed_ = 0;  // FPDUs joined across out-of-order segments (markers)
    // Datapath cycles (beats: throughput cost; latency: first word in to last word out).
    std::uint64_t tx_dp_beats_ = 0, tx_dp_latency_ = 0, rx_dp_beats_ = 0, rx_dp_latency_ = 0;
};

}  // namespace rnic
