// The NIC's control processor: an embedded CPU (a SystemC thread with a clock) that runs the program
// it is given (cp/cp_program.h: the platform gives it the firmware of firmware/) and implements the
// firmware HAL (cp/firmware_hal.h) over the NIC's internal interfaces. The program charges its
// handlers' costs in CPU cycles, so firmware work shows up in connection-set-up latency.
//  dma_out         -> host memory through the DMA engine (command ring)
//  irq_out         -> MSI-X requests to the PCIe endpoint
//  startup_tx_out  -> MPA Request/Reply bytes to the framing unit
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "core/stats.h"
#include "cp/cp_program.h"
#include "cp/firmware_hal.h"
#include "framing/framing_if.h"
#include "rdma/rdma_if.h"
#include "toe/toe_if.h"

namespace rnic {

// Register file access for the firmware (the rnic module owns BAR0).
class regfile_if : public virtual sc_core::sc_interface {
public:
    virtual std::uint32_t fw_read(std::uint32_t offset) const = 0;
    virtual void fw_write(std::uint32_t offset, std::uint32_t value) = 0;
};

// The register file tells the control processor about the command doorbell.
class cp_doorbell_if : public virtual sc_core::sc_interface {
public:
    virtual void command_doorbell(const sc_core::sc_time& delay) = 0;
    // CTRL.RESET: the firmware resets its state and the engines' objects (firmware::on_reset).
    virtual void device_reset(const sc_core::sc_time& delay) = 0;
};

struct control_processor_params {
    double clock_hz = 1e9;
    fw::mpa_policy mpa;
};

class control_processor : public sc_core::sc_module,
                          public fw::hal,
                          public toe_conn_events_if,
                          public framer_events_if,
                          public cp_doorbell_if,
                          public stats_reporter {
public:
    tlm_utils::simple_initiator_socket<control_processor> dma_out;
    tlm_utils::simple_initiator_socket<control_processor> irq_out;
    tlm_utils::simple_initiator_socket<control_processor> startup_tx_out;
    sc_core::sc_port<rdma_ctl_if> rdma_out;
    sc_core::sc_port<toe_ctl_if> toe_out;
    sc_core::sc_port<framer_ctl_if> framer_out;
    sc_core::sc_port<regfile_if> regs_out;
    sc_core::sc_export<toe_conn_events_if> toe_events_in;
    sc_core::sc_export<framer_events_if> framer_events_in;
    sc_core::sc_export<cp_doorbell_if> doorbell_in;

    // `program` makes what the processor runs on its HAL (the device assembly chooses it); it must
    // make one (std::invalid_argument otherwise: a device without a program is an assembly bug).
    control_processor(const sc_core::sc_module_name& name, const control_processor_params& params,
                      const fw::program_factory& program);

    // fw::hal
    fw::event wait_event() override;
    void consume_cycles(std::uint64_t cycles) override;
    std::uint64_t now_ps() const override;
    void arm_timer(std::uint64_t at_ps) override;
    const char* name() const override { return sc_module::name(); }
    const fw::mpa_policy& policy() const override { return params_.mpa; }
    std::uint32_t reg_read(std::uint32_t offset) override { return regs_out->fw_read(offset); }
    void reg_write(std::uint32_t offset, std::uint32_t value) override { regs_out->fw_write(offset, value); }
    bool dma_read(std::uint64_t addr, void* dst, std::size_t len) override;
    bool dma_write(std::uint64_t addr, const void* src, std::size_t len) override;
    void raise_msix(std::uint32_t vector) override;
    int create_cq(const fw::cq_params& p) override;
    int create_qp(const fw::qp_params& p) override;
    std::int64_t register_mr(const fw::mr_params& p) override;
    void reset_contexts() override { rdma_out->reset_objects(); }
    bool deregister_mr(std::uint32_t stag) override { return rdma_out->deregister_mr(stag); }
    bool qp_idle(std::uint32_t qpn) const override { return rdma_out->qp_idle(qpn); }
    bool qp_connect(std::uint32_t qpn, const fw::stream_start& stream) override;
    void terminate_stream(std::uint32_t conn, std::uint8_t mpa_code) override {
        rdma_out->llp_terminate(conn, mpa_code);
    }
    bool qp_modify(std::uint32_t qpn, std::uint8_t target) override { return rdma_out->qp_modify(qpn, target); }
    std::int64_t qp_query(std::uint32_t qpn) const override { return rdma_out->qp_query(qpn); }
    int destroy_qp(std::uint32_t qpn) override { return rdma_out->destroy_qp(qpn); }
    int destroy_cq(std::uint32_t cqn) override { return rdma_out->destroy_cq(cqn); }
    void stream_failed(std::uint32_t conn, const char* why) override { rdma_out->stream_failed(conn, why); }
    void read_counters(std::uint64_t* out) const override;
    int tcp_connect(std::uint32_t remote_ip, std::uint16_t remote_port, std::uint16_t local_port) override;
    bool tcp_listen(std::uint16_t port) override { return toe_out->tcp_listen(port); }
    bool tcp_unlisten(std::uint16_t port) override { return toe_out->tcp_unlisten(port); }
    void tcp_abort(std::uint32_t conn) override { toe_out->tcp_abort(conn); }
    void tcp_close(std::uint32_t conn) override { toe_out->tcp_close(conn); }
    void tcp_release(std::uint32_t conn) override { toe_out->tcp_release(conn); }
    std::uint16_t tcp_effective_mss(std::uint32_t conn) const override { return toe_out->tcp_effective_mss(conn); }
    fw::connection_addresses tcp_addresses(std::uint32_t conn) const override {
        const rnic::tcp_addresses a = toe_out->tcp_addresses_of(conn);
        return {a.local_ip, a.remote_ip, a.local_port, a.remote_port};
    }
    bool send_startup(std::uint32_t conn, const std::vector<std::uint8_t>& bytes) override;
    const std::vector<std::uint8_t>& startup_bytes(std::uint32_t conn) const override {
        return framer_out->startup_bytes(conn);
    }
    void full_operation(std::uint32_t conn, const fw::mpa_mode& mode, std::size_t consumed) override;

    // Events into the firmware.
    void on_tcp_event(std::uint32_t conn, toe_event ev, std::uint16_t local_port) override;
    void on_startup_bytes(std::uint32_t conn) override;
    void on_framing_error(std::uint32_t conn, const std::string& what) override;
    void command_doorbell(const sc_core::sc_time& delay) override;
    void device_reset(const sc_core::sc_time& delay) override;

    void report_stats(boost::json::object& out) const override;
    std::uint64_t commands_executed() const { return program_->commands_executed(); }

private:
    void firmware_thread();
    void timer_method();
    void post(const fw::event& ev, const sc_core::sc_time& delay);
    void deliver_method();

    control_processor_params params_;
    std::unique_ptr<fw::program> program_;
    struct timed_event {
        sc_core::sc_time at;
        fw::event ev;
    };
    std::deque<timed_event> incoming_;  // events not yet visible (in flight)
    std::deque<fw::event> events_;      // visible to the firmware
    sc_core::sc_event incoming_event_, event_ready_, timer_event_;
    sc_core::sc_time busy_ = sc_core::SC_ZERO_TIME;
    std::uint64_t events_handled_ = 0, dma_errors_ = 0, stale_events_dropped_ = 0;
    void drop_connection_events(std::uint32_t conn);
};

}  // namespace rnic
