// The TCP engine's connection table: opening connections (active and passive), closing them, and
// freeing a connection once it is closed and its owner has released it, so that its slot, its send
// region in NIC buffer memory and its id serve a later connection (docs/architecture.md,
// "Connection lifecycle").
#include <algorithm>
#include <limits>

#include "core/sim_log.h"
#include "toe/tcp_engine_connection.h"

namespace rnic {

using toe_detail::time_ns;

namespace {
// Closed connections listed one by one in the results; beyond this many only their sums count (a
// long hostile run opens millions).
constexpr std::size_t kListedClosedConnections = 256;
}  // namespace

tcp_engine::connection* tcp_engine::create_connection(std::uint16_t local_port, std::uint32_t remote_ip,
                                                      std::uint16_t remote_port) {
    if (live_connections_ >= params_.max_connections) {
        ++table_full_refusals_;
        RNIC_MLOG(warn, toe, "connection table full (" << params_.max_connections << ")");
        return nullptr;
    }
    const auto region = buffer_.allocate_region(params_.send_buffer);
    if (!region) {
        ++no_region_refusals_;
        return nullptr;
    }
    tcp::config cfg;
    cfg.local_port = local_port;
    cfg.remote_port = remote_port;
    cfg.iss = static_cast<std::uint32_t>(next_iss());
    cfg.mss = static_cast<std::uint16_t>(params_.mtu - net::kIpv4HeaderSize - net::kTcpBaseHeaderSize);
    cfg.send_buffer = params_.send_buffer;
    cfg.receive_buffer = params_.receive_buffer;
    cfg.window_scale = params_.window_scale;
    cfg.sack = params_.sack;
    cfg.sack_recovery = params_.sack_recovery;
    cfg.ecn = params_.ecn;
    cfg.delayed_ack_ns = time_ns(params_.delayed_ack);
    cfg.rto_initial_ns = time_ns(params_.rto_initial);
    cfg.rto_min_ns = time_ns(params_.rto_min);
    cfg.initial_window_segments = params_.initial_window_segments;
    // The lowest free id: a hardware connection table reuses its slots, and the choice must not
    // depend on anything but the order of events (same scenario, same ids).
    std::uint32_t id = static_cast<std::uint32_t>(conns_.size());
    if (!free_ids_.empty()) {
        id = *free_ids_.begin();
        free_ids_.erase(free_ids_.begin());
    } else {
        conns_.emplace_back();
    }
    if (params_.clamp_window_to_reassembly) {
        cfg.receive_window_cap = [this, id] { return reassembly_.window_cap(id); };
    }
    reassembly_.open(id);
    conns_[id] = std::make_unique<connection>(*this, id, cfg, *region, remote_ip);
    connection& c = *conns_[id];
    c.set_ports(local_port, remote_port);
    c.serial = connections_opened_++;
    ++live_connections_;
    by_tuple_[{local_port, remote_port, remote_ip}].push_back(id);
    return &c;
}

tcp_engine::connection* tcp_engine::find(std::uint32_t conn) const {
    return conn < conns_.size() ? conns_[conn].get() : nullptr;
}

int tcp_engine::tcp_connect(const tcp_open_params& p) {
    const std::uint64_t no_region_before = no_region_refusals_;
    connection* c = create_connection(p.local_port, p.remote_ip, p.remote_port);
    if (c == nullptr) return no_region_refusals_ != no_region_before ? kNoSendRegion : kNoConnectionSlot;
    c->owned = true;  // the caller holds the id from now on
    RNIC_MLOG(debug, toe,
              "connection " << c->id() << ": connect " << net::format_ipv4(p.remote_ip) << ":" << p.remote_port
                            << " from port " << p.local_port);
    c->ctx_delay = sc_core::SC_ZERO_TIME;
    c->tcp().connect(time_ns(sim_now()));
    reschedule_timer();
    return static_cast<int>(c->id());
}

bool tcp_engine::tcp_listen(std::uint16_t port) {
    if (std::find(listen_ports_.begin(), listen_ports_.end(), port) == listen_ports_.end()) {
        listen_ports_.push_back(port);
    }
    unlistened_ports_.erase(std::remove(unlistened_ports_.begin(), unlistened_ports_.end(), port),
                            unlistened_ports_.end());
    return true;
}

bool tcp_engine::tcp_unlisten(std::uint16_t port) {
    const auto it = std::find(listen_ports_.begin(), listen_ports_.end(), port);
    if (it == listen_ports_.end()) return false;
    listen_ports_.erase(it);
    if (std::find(unlistened_ports_.begin(), unlistened_ports_.end(), port) == unlistened_ports_.end()) {
        unlistened_ports_.push_back(port);
    }
    // Handshakes the port took but nobody owns yet (SYN-RECEIVED) belonged to the listener: reset
    // them, as a listener's close does to its half-open connections, so their peers learn at once.
    std::size_t reset = 0;
    for (const auto& c : conns_) {
        if (c == nullptr || c->owned || c->local_port() != port) continue;
        if (c->tcp().state() != tcp::state::syn_received) continue;
        c->ctx_delay = sc_core::SC_ZERO_TIME;
        c->tcp().abort(time_ns(sim_now()));
        ++reset;
    }
    RNIC_MLOG(debug, toe, "port " << port << ": no longer listening; " << reset << " half-open connections reset");
    reschedule_timer();
    return true;
}

void tcp_engine::tcp_abort(std::uint32_t conn) {
    if (connection* c = find(conn)) {
        c->ctx_delay = sc_core::SC_ZERO_TIME;
        c->tcp().abort(time_ns(sim_now()));
        reschedule_timer();
    }
}

void tcp_engine::tcp_close(std::uint32_t conn) {
    if (connection* c = find(conn)) {
        if (c->in_callback > 0) {
            c->close_deferred = true;  // after the bytes this callback appended (see eth_rx_b_transport)
            return;
        }
        c->ctx_delay = sc_core::SC_ZERO_TIME;
        c->tcp().close(time_ns(sim_now()));
        reschedule_timer();
    }
}

void tcp_engine::tcp_release(std::uint32_t conn) {
    connection* c = find(conn);
    if (c == nullptr || c->released) return;
    c->released = true;
    if (c->finished) note_closed(*c);
    reschedule_timer();
}

void tcp_engine::note_closed(connection& c) {
    // Called from inside the state machine (state_changed) as well: the connection is freed later,
    // at the end of the engine's current entry point (free_closed_connections).
    if (!c.released) return;
    if (std::find(to_free_.begin(), to_free_.end(), c.id()) == to_free_.end()) to_free_.push_back(c.id());
}

void tcp_engine::free_closed_connections() {
    for (std::size_t i = 0; i < to_free_.size();) {
        connection* c = find(to_free_[i]);
        // Still inside one of its own callbacks (further up the stack): freed at a later call.
        if (c != nullptr && c->in_callback > 0) {
            ++i;
            continue;
        }
        to_free_.erase(to_free_.begin() + static_cast<std::ptrdiff_t>(i));
        if (c != nullptr && c->released && c->finished) free_connection(*c);
    }
}

void tcp_engine::free_connection(connection& c) {
    const std::uint32_t id = c.id();
    RNIC_MLOG(debug, toe, "connection " << id << ": closed and released, freed");
    // What it still held goes back: send-stream bytes never acknowledged (a reset, an abort) and
    // out-of-order bytes a reset left in the reassembly store.
    c.release_until(c.appended());
    reassembly_.forget(id);
    buffer_.free_region(c.buffer_base());
    // Its entries in the engine's indexes, so that a new connection under the same id starts clean.
    if (c.indexed_deadline != std::numeric_limits<std::uint64_t>::max()) deadlines_.erase({c.indexed_deadline, id});
    touched_.erase(std::remove(touched_.begin(), touched_.end(), id), touched_.end());
    tx_waiting_.erase(std::remove(tx_waiting_.begin(), tx_waiting_.end(), id), tx_waiting_.end());
    if (const auto t = by_tuple_.find({c.local_port(), c.remote_port(), c.remote_ip()}); t != by_tuple_.end()) {
        t->second.erase(std::remove(t->second.begin(), t->second.end(), id), t->second.end());
        if (t->second.empty()) by_tuple_.erase(t);
    }
    ooo_out->connection_released(id);
    conn_events_out->on_tcp_event(id, toe_event::released, c.local_port());
    closed_peak_sum_ += reassembly_.peak(id);
    closed_tx_peak_sum_ += c.tx_held_peak;
    if (closed_reports_.size() < kListedClosedConnections) {
        closed_reports_.emplace(c.serial, connection_report(c));
    } else {
        ++closed_not_listed_;
    }
    conns_[id].reset();
    free_ids_.insert(id);
    --live_connections_;
    ++connections_freed_;
}

boost::json::object tcp_engine::connection_report(const connection& c) const {
    const tcp::stats& s = c.tcp().stats();
    boost::json::object o{{"id", c.id()},
                          {"state", tcp::to_string(c.tcp().state())},
                          {"local_port", c.local_port()},
                          {"remote_port", c.remote_port()},
                          {"segments_sent", s.segments_sent},
                          {"segments_received", s.segments_received},
                          {"bytes_sent", s.bytes_sent},
                          {"bytes_retransmitted", s.bytes_retransmitted},
                          {"bytes_delivered", s.bytes_delivered},
                          {"retransmit_timeouts", s.retransmit_timeouts},
                          {"fast_retransmits", s.fast_retransmits},
                          {"dupacks_received", s.dupacks_received},
                          {"out_of_order_segments", s.out_of_order_segments},
                          {"duplicate_segments", s.duplicate_segments},
                          {"acks_sent", s.acks_sent},
                          {"bad_segments", s.bad_segments},
                          {"reassembly_peak_bytes", reassembly_.peak(c.id())},
                          {"send_held_peak_bytes", c.tx_held_peak}};
    if (params_.ecn) {
        o["ecn"] = {{"negotiated", c.tcp().ecn_active()},
                    {"ce_received", s.ecn_ce_received},
                    {"ece_received", s.ecn_ece_received},
                    {"cwnd_reductions", s.ecn_cwnd_reductions},
                    {"cwr_sent", s.ecn_cwr_sent}};
    }
    return o;
}

void tcp_engine::report_diagnostics(boost::json::object& out) const {
    boost::json::array conns;
    for (const auto& c : conns_) {
        if (c == nullptr) continue;
        const tcp::connection& t = c->tcp();
        const std::uint64_t deadline = t.next_deadline();
        conns.push_back(
            {{"id", c->id()},
             {"state", tcp::to_string(t.state())},
             {"local_port", c->local_port()},
             {"remote_port", c->remote_port()},
             {"send_queued_bytes", c->appended() - t.send_stream_acked()},
             {"bytes_in_flight", t.bytes_in_flight()},
             {"cwnd", t.cwnd()},
             {"send_window", t.send_window()},
             {"receive_window", t.receive_window()},
             {"out_of_order_bytes", t.out_of_order_bytes()},
             {"next_timer_ns", deadline == std::numeric_limits<std::uint64_t>::max() ? boost::json::value(nullptr)
                                                                                     : boost::json::value(deadline)},
             {"released", c->released}});
    }
    out["connections"] = std::move(conns);
}

void tcp_engine::report_connections(boost::json::object& out) const {
    // Every connection in the order it was opened: the freed ones as they were when freed (the
    // first kListedClosedConnections of them), then merged with the live ones by opening order.
    std::vector<std::pair<std::uint64_t, const connection*>> live;
    std::uint64_t peak_sum = closed_peak_sum_, tx_peak_sum = closed_tx_peak_sum_;
    for (const auto& c : conns_) {
        if (c == nullptr) continue;
        live.emplace_back(c->serial, c.get());
        peak_sum += reassembly_.peak(c->id());
        tx_peak_sum += c->tx_held_peak;
    }
    std::sort(live.begin(), live.end());
    boost::json::array conns;
    auto closed = closed_reports_.begin();
    for (const auto& [serial, c] : live) {
        for (; closed != closed_reports_.end() && closed->first < serial; ++closed) conns.push_back(closed->second);
        conns.push_back(connection_report(*c));
    }
    for (; closed != closed_reports_.end(); ++closed) conns.push_back(closed->second);
    out["connections"] = std::move(conns);
    // Only when there is something to say, so that results of runs that never free a connection
    // keep their exact keys.
    if (connections_freed_ > 0) {
        out["connections_opened"] = connections_opened_;
        out["connections_freed"] = connections_freed_;
        if (closed_not_listed_ > 0) out["connections_closed_not_listed"] = closed_not_listed_;
    }
    if (table_full_refusals_ > 0) out["connections_refused_table_full"] = table_full_refusals_;
    if (no_region_refusals_ > 0) out["connections_refused_no_send_region"] = no_region_refusals_;
    // Against buffer.rx_reassembly_peak_bytes (the shared pool's peak): what per-connection pools
    // sized for each connection's own worst case would add up to (statistical multiplexing).
    out["rx_reassembly_peak_sum_bytes"] = peak_sum;
    // The send side: what the connections' regions (send_buffer bytes each, carved at connect)
    // held at their fullest, added up.
    out["tx_held_peak_sum_bytes"] = tx_peak_sum;
}

}  // namespace rnic
