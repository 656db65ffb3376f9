#include "cp/control_processor.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/mem_access.h"
#include "core/sim_log.h"
#include "core/timed_resource.h"
#include "rnic/regmap.h"
#include "core/stream.h"

namespace rnic {

control_processor::control_processor(const sc_core::sc_module_name& name, const control_processor_params& params,
                                     const fw::program_factory& program)
    : sc_module(name),
      dma_out("dma_out"),
      irq_out("irq_out"),
      startup_tx_out("startup_tx_out"),
      rdma_out("rdma_out"),
      toe_out("toe_out"),
      framer_out("framer_out"),
      regs_out("regs_out"),
      toe_events_in("toe_events_in"),
      framer_events_in("framer_events_in"),
      doorbell_in("doorbell_in"),
      params_(params),
      program_(program ? program(*this) : nullptr) {
    if (!program_) throw std::invalid_argument(std::string(sc_module::name()) + ": control processor given no program");
    toe_events_in.bind(*this);
    framer_events_in.bind(*this);
    doorbell_in.bind(*this);
    SC_HAS_PROCESS(control_processor);
    SC_THREAD(firmware_thread);
    set_stack_size(kThreadStackBytes);
    SC_METHOD(timer_method);
    sensitive << timer_event_;
    dont_initialize();
    SC_METHOD(deliver_method);
    sensitive << incoming_event_;
    dont_initialize();
}

void control_processor::firmware_thread() {
    program_->run();
}

// Events arrive with an LT delay; they become visible to the firmware at their time.
void control_processor::post(const fw::event& ev, const sc_core::sc_time& delay) {
    const sc_core::sc_time at = sc_core::sc_time_stamp() + delay;
    auto it = incoming_.end();
    while (it != incoming_.begin() && std::prev(it)->at > at) --it;
    incoming_.insert(it, {at, ev});
    incoming_event_.notify(incoming_.front().at - sc_core::sc_time_stamp());
}

void control_processor::deliver_method() {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    while (!incoming_.empty() && incoming_.front().at <= now) {
        events_.push_back(incoming_.front().ev);
        incoming_.pop_front();
        event_ready_.notify(sc_core::SC_ZERO_TIME);
    }
    if (!incoming_.empty()) incoming_event_.notify(incoming_.front().at - now);
}

fw::event control_processor::wait_event() {
    while (events_.empty()) wait(event_ready_);
    fw::event ev = events_.front();
    events_.pop_front();
    ++events_handled_;
    return ev;
}

void control_processor::consume_cycles(std::uint64_t cycles) {
    const sc_core::sc_time t = cycles_time(static_cast<double>(cycles), params_.clock_hz);
    busy_ += t;
    wait(t);
}

std::uint64_t control_processor::now_ps() const {
    return to_ps(sc_core::sc_time_stamp());
}

void control_processor::arm_timer(std::uint64_t at_ps) {
    const sc_core::sc_time at = from_ps(at_ps);
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    timer_event_.cancel();
    timer_event_.notify(at > now ? at - now : sc_core::SC_ZERO_TIME);
}

void control_processor::timer_method() {
    post({fw::event_kind::timer, 0, 0}, sc_core::SC_ZERO_TIME);
}

bool control_processor::dma_read(std::uint64_t addr, void* dst, std::size_t len) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const bool ok = mem_read(dma_out, addr, dst, len, delay) == tlm::TLM_OK_RESPONSE;
    wait(delay);
    if (!ok) ++dma_errors_;
    return ok;
}

bool control_processor::dma_write(std::uint64_t addr, const void* src, std::size_t len) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const bool ok = mem_write(dma_out, addr, src, len, delay) == tlm::TLM_OK_RESPONSE;
    wait(delay);
    if (!ok) ++dma_errors_;
    return ok;
}

void control_processor::raise_msix(std::uint32_t vector) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    send_msix(irq_out, vector, delay);
}

int control_processor::create_cq(const fw::cq_params& p) {
    return rdma_out->create_cq({p.ring, p.entries, p.vector});
}

int control_processor::create_qp(const fw::qp_params& p) {
    return rdma_out->create_qp({p.sq_ring, p.sq_entries, p.rq_ring, p.rq_entries, p.send_cq, p.recv_cq, p.pd});
}

std::int64_t control_processor::register_mr(const fw::mr_params& p) {
    mr_config cfg{p.addr, p.length, p.access, p.pd, p.to_base};
    if (!p.pages.empty()) {
        // The firmware's copy goes to the engine's page-list memory (shared by the work that uses it).
        auto list = std::make_shared<mr_page_list>();
        list->pages = p.pages;
        list->page_shift = p.page_shift;
        list->first_byte_offset = p.first_byte_offset;
        cfg.pages = std::move(list);
    }
    return rdma_out->register_mr(cfg);
}

int control_processor::tcp_connect(std::uint32_t remote_ip, std::uint16_t remote_port, std::uint16_t local_port) {
    return toe_out->tcp_connect({remote_ip, remote_port, local_port});
}

bool control_processor::send_startup(std::uint32_t conn, const std::vector<std::uint8_t>& bytes) {
    stream_ext ext;
    ext.conn = conn;
    ext.kind = stream_kind::raw;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const bool ok = send_stream(startup_tx_out, ext, bytes.data(), bytes.size(), delay) == tlm::TLM_OK_RESPONSE;
    wait(delay);
    return ok;
}

bool control_processor::qp_connect(std::uint32_t qpn, const fw::stream_start& stream) {
    qp_stream q;
    q.conn = stream.conn;
    // The framing may fit less in a segment than the MPA formula the firmware used (IFT).
    q.max_ulpdu = std::min(stream.max_ulpdu, framer_out->ulpdu_limit(stream.conn));
    q.ird = stream.ird;
    q.ord = stream.ord;
    q.negotiated = stream.negotiated;
    q.hold_until_first_fpdu = stream.responder;
    q.peer_acknowledges = stream.peer_acknowledges;
    q.send_rtr = stream.rtr == fw::rtr_kind::write  ? qp_stream::rtr::write
                 : stream.rtr == fw::rtr_kind::read ? qp_stream::rtr::read
                                                    : qp_stream::rtr::none;
    return rdma_out->qp_connect(qpn, q);
}

void control_processor::full_operation(std::uint32_t conn, const fw::mpa_mode& mode, std::size_t consumed) {
    mpa_settings s;
    s.tx_markers = mode.tx_markers;
    s.rx_markers = mode.rx_markers;
    s.crc = mode.crc;
    s.max_ulpdu = mode.max_ulpdu;
    s.read_window = mode.read_window;
    s.unreliable = mode.unreliable;
    s.reliable_reception = mode.reliable_reception;
    // RFC 5044 Appendix A: a segment with markers carries one FPDU unless packing is allowed.
    toe_out->tcp_one_fpdu_per_segment(conn, mode.tx_markers && !mode.pack_fpdus);
    if (mode.urgent_marks) toe_out->tcp_mark_urgent(conn);
    framer_out->full_operation(conn, s, consumed);
}

void control_processor::on_tcp_event(std::uint32_t conn, toe_event ev, std::uint16_t local_port) {
    fw::event_kind k = fw::event_kind::tcp_closed;
    switch (ev) {
    case toe_event::established:
        k = fw::event_kind::tcp_established;
        break;
    case toe_event::closed:
    case toe_event::reset:
        k = fw::event_kind::tcp_closed;
        break;
    case toe_event::failed:
        k = fw::event_kind::tcp_failed;
        break;
    case toe_event::refused:
        k = fw::event_kind::tcp_refused;
        break;
    case toe_event::released:
        drop_connection_events(conn);
        return;
    }
    post({k, conn, local_port}, sc_core::SC_ZERO_TIME);
}

void control_processor::drop_connection_events(std::uint32_t conn) {
    // The TCP engine freed `conn`: what the firmware has not yet taken about it is stale, and taken
    // later it would be applied to the next connection under the same id.
    const auto stale = [conn](const fw::event& ev) {
        switch (ev.kind) {
        case fw::event_kind::tcp_established:
        case fw::event_kind::tcp_closed:
        case fw::event_kind::tcp_failed:
        case fw::event_kind::startup_bytes:
        case fw::event_kind::framing_error:
            return ev.conn == conn;
        default:
            return false;
        }
    };
    const std::size_t before = incoming_.size() + events_.size();
    incoming_.erase(
        std::remove_if(incoming_.begin(), incoming_.end(), [&](const timed_event& t) { return stale(t.ev); }),
        incoming_.end());
    events_.erase(std::remove_if(events_.begin(), events_.end(), stale), events_.end());
    stale_events_dropped_ += before - incoming_.size() - events_.size();
}

void control_processor::on_startup_bytes(std::uint32_t conn) {
    post({fw::event_kind::startup_bytes, conn, 0}, sc_core::SC_ZERO_TIME);
}

void control_processor::on_framing_error(std::uint32_t conn, const std::string&) {
    post({fw::event_kind::framing_error, conn, 0}, sc_core::SC_ZERO_TIME);
}

void control_processor::command_doorbell(const sc_core::sc_time& delay) {
    post({fw::event_kind::command_doorbell, 0, 0}, delay);
}

void control_processor::device_reset(const sc_core::sc_time& delay) {
    // A device with nothing to reset (fresh from power-on, as every driver's bring-up finds it)
    // stays as it is: no event, no time.
    if (!program_->has_state() && !rdma_out->has_objects()) return;
    post({fw::event_kind::device_reset, 0, 0}, delay);
}

void control_processor::read_counters(std::uint64_t* out) const {
    using c = regmap::device_counter;
    const rdma_ctl_if::counter_snapshot r = rdma_out->counters();
    out[static_cast<int>(c::wqes)] = r.wqes;
    out[static_cast<int>(c::cqes)] = r.cqes;
    out[static_cast<int>(c::terminates_sent)] = r.terminates_sent;
    out[static_cast<int>(c::terminates_received)] = r.terminates_received;
    out[static_cast<int>(c::placed_bytes)] = r.placed_bytes;
    out[static_cast<int>(c::tcp_retransmitted_bytes)] = toe_out->tcp_retransmitted_bytes();
}

void control_processor::report_stats(boost::json::object& out) const {
    out["events_handled"] = events_handled_;
    for (const auto& [key, value] : program_->counters()) out[key] = value;
    out["busy_ps"] = to_ps(busy_);
    out["dma_errors"] = dma_errors_;
    // Only when it happened, so that results of runs without connection reuse keep their keys.
    if (stale_events_dropped_ > 0) out["stale_connection_events_dropped"] = stale_events_dropped_;
}

}  // namespace rnic
