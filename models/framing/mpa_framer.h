// The framing unit: the device's framing (framing.h: MPA per RFC 5044, or IFT per seed 001, made
// by make_framing) behind four sockets, with its timing and per-connection state. On transmit each
// ULPDU becomes one frame; on receive the in-order stream is deframed and checked, and out-of-order
// segments are offered for direct placement. Before full operation a connection is in start-up:
// transmit bytes (the MPA Request/Reply) pass through unframed and receive bytes are buffered for
// the firmware. Which framing it runs, and on which datapath, is the device's choice (rnic.cpp);
// a new framing is a new implementation of `framing`, not a change here.
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
#include "core/stream.h"
#include "core/timed_resource.h"
#include "framing/framing.h"
#include "framing/framing_if.h"
#include "rdma/rdma_if.h"
#include "toe/reassembly.h"

namespace rnic {

struct mpa_framer_params {
    rx_path path = rx_path::buffering;
    double clock_hz = 500e6;
    double cycles_per_fpdu = 1;  // pipeline fill besides the datapath beats (the RTL's: 1, README)
    // Markers path: place FPDUs split across out-of-order segments once all their pieces are held
    // (RFC 5044 Appendix A); off, only whole FPDUs inside one segment are placed.
    bool join_split_fpdus = true;
    // How the transmit and receive CRC datapaths serve FPDUs booked out of time order
    // (simulation.resource_order).
    booking order = booking::in_order;
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
    sc_core::sc_port<reassembly_if> reasm_out;    // frames placed out of order, recorded with their owner

    // `framing` (the device's, make_framing) outlives the framer. With IFT the MPA Request/Reply
    // remains only the connection's switch into RDMA mode (the draft defines no start-up exchange).
    mpa_framer(const sc_core::sc_module_name& name, const mpa_framer_params& params, framing& framing);

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
    void urgent_pointer(std::uint32_t conn, std::uint64_t stream_offset, std::uint16_t pointer) override {
        urgent_ = urgent_hint{true, conn, stream_offset, pointer};
    }
    std::size_t split_fpdu_reach(std::uint32_t conn) const override;
    placement_landing last_placement() const override { return ooo_landed_; }
    void connection_released(std::uint32_t conn) override { conns_.erase(conn); }

    void report_stats(boost::json::object& out) const override;

private:
    struct conn_state {
        std::uint32_t conn = 0;  // its id (frame_options::conn)
        bool full = false;
        mpa_settings settings;
        std::uint32_t tx_stream_pos = 0;     // marker-space position of the next FPDU byte we send
        std::uint64_t tx_stream_offset = 0;  // send-stream offset of the next byte the TCP engine takes
        std::vector<std::uint8_t> startup;
        std::unique_ptr<frame_deframer> deframer;  // the in-order stream, from full operation on
        bool failed = false;
        std::uint64_t rx_fpdu_base = 0;  // TCP stream offset of the first FPDU byte received
        std::uint32_t rx_next_fpdu = 0;  // marker-space position of the next in-order FPDU
        // The key of the frame at marker-space position `pos` in the TCP engine's record of frames
        // placed out of order (reassembly_if): its stream offset as counted from full operation.
        std::uint64_t placed_key(std::uint32_t pos) const { return rx_fpdu_base + pos; }
    };
    // Deframes exactly the FPDUs in [pos, pos+len) of an out-of-order segment and offers each ULPDU
    // to the RDMA engine; returns the wire bytes of those placed. With `wanted`, only the FPDUs it
    // accepts (position, wire length) are counted and offered (the split ones of a joined run).
    using fpdu_filter = std::function<bool(std::uint32_t pos, std::uint32_t wire)>;
    std::size_t place_fpdus(std::uint32_t conn, conn_state& st, std::uint32_t pos, const std::uint8_t* data,
                            std::size_t len, sc_core::sc_time& delay, const fpdu_filter& wanted = nullptr);
    // Joining split FPDUs is asked for on a path that can do it (markers, a framing that locates frames).
    bool joins_configured() const {
        return params_.join_split_fpdus && params_.path == rx_path::markers && framing_.locates_frames();
    }
    // What each direction of a connection frames with.
    static frame_options tx_options(const conn_state& st) {
        return {st.settings.tx_markers,  st.settings.crc,        st.conn,
                st.settings.read_window, st.settings.unreliable, st.settings.reliable_reception};
    }
    static frame_options rx_options(const conn_state& st) {
        return {st.settings.rx_markers,  st.settings.crc,        st.conn,
                st.settings.read_window, st.settings.unreliable, st.settings.reliable_reception};
    }
    // Transmit options for a frame built now, `delay` ahead: where it starts in the send stream
    // and when (VI/TCP Reliable Reception acknowledges by them).
    static frame_options tx_options_now(const conn_state& st, const sc_core::sc_time& delay);
    // A frame the framing built by itself (VI/TCP's NOP carrying a Message ACK): to the TCP engine.
    void send_acknowledgement(stream_ext& ext, conn_state& st, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    void tx_b_transport(int initiator, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void feed(std::uint32_t conn, conn_state& st, const std::uint8_t* data, std::size_t len);
    conn_state& state(std::uint32_t conn) {
        conn_state& st = conns_[conn];
        st.conn = conn;
        return st;
    }
    // Time the CRC/Marker datapath is busy with one FPDU: its beats plus the per-FPDU cycles.
    sc_core::sc_time datapath_time(const datapath_cycles& c) const;
    // The ULPDU of a good FPDU, delivered in order (both deframers end here).
    void deliver(conn_state& st, const std::uint8_t* ulpdu, std::size_t len, const datapath_cycles& c);

    mpa_framer_params params_;
    framing& framing_;
    std::map<std::uint32_t, conn_state> conns_;
    timed_resource tx_crc_, rx_crc_;
    std::vector<std::uint8_t> fpdu_scratch_;
    sc_core::sc_time rx_delay_ = sc_core::SC_ZERO_TIME;  // delay context of the current receive call
    // When the last placement the current receive call caused lands in host memory (as a delay): the
    // call returns it, so the TCP engine can bound what is still on its way (placement_backlog).
    sc_core::sc_time rx_landed_ = sc_core::SC_ZERO_TIME;
    placement_landing ooo_landed_;  // what the last out-of-order offer placed, and when it lands
    // The urgent pointer of the segment about to be offered (urgent_pointer), for the next offer only.
    struct urgent_hint {
        bool valid = false;
        std::uint32_t conn = 0;
        std::uint64_t stream_offset = 0;
        std::uint16_t pointer = 0;
    };
    urgent_hint urgent_;
    std::uint64_t ooo_unmarked_ = 0;  // urgent path: offered segments with no VI segment start marked
    std::uint32_t rx_conn_ = 0;
    std::uint64_t tx_fpdus_ = 0, tx_bytes_ = 0, tx_raw_bytes_ = 0, rx_fpdus_ = 0, rx_bytes_ = 0;
    std::uint64_t crc_errors_ = 0, framing_errors_ = 0, rx_dropped_after_error_ = 0;
    std::uint64_t tx_refused_ = 0;         // ULPDUs the framing cannot carry (RDMA/TCP: atomics)
    std::uint64_t tx_verbatim_bytes_ = 0;  // test mode: stream bytes passed through unframed (raw_stream)
    // VI/TCP Reliable Reception: NOPs sent to carry a Message ACK; peer error reports received.
    std::uint64_t tx_acknowledgements_ = 0, rx_peer_error_reports_ = 0;
    std::uint64_t ooo_segments_ = 0, ooo_fpdus_found_ = 0, ooo_fpdus_placed_ = 0, ooo_bytes_placed_ = 0;
    std::uint64_t ooo_bad_candidates_ = 0, ooo_refused_ = 0, in_order_already_placed_ = 0;
    std::uint64_t ooo_split_fpdus_placed_ = 0;  // FPDUs joined across out-of-order segments (markers)
    // Datapath cycles (beats: throughput cost; latency: first word in to last word out).
    std::uint64_t tx_dp_beats_ = 0, tx_dp_latency_ = 0, rx_dp_beats_ = 0, rx_dp_latency_ = 0;
};

}  // namespace rnic
