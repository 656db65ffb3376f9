// A channel for a port of a Verilated SystemC module driven outside the SystemC scheduler.
//
// Verilator's --sc output reads its inputs and writes its outputs through sc_in/sc_out ports. With
// sc_signal a written value becomes visible only in the kernel's update phase, which needs
// sc_start and delta cycles. The framer runs the RTL inside a b_transport call, where a target
// must not wait (docs/architecture.md, timing discipline), and a clock-by-clock loop through the
// scheduler would cost two delta cycles per clock. So the ports are bound to this channel instead:
// write() is visible to the next read() at once, and the model's eval is called directly
// (rtl_fpdu_datapath.cpp). Its events never fire, so the kernel never runs the model on its own
// (apart from the one initialisation call every SC_METHOD gets, which evaluates the same inputs).
#pragma once

#include <systemc>

namespace rnic::rtl {

template <typename T>
class direct_signal_base : public sc_core::sc_signal_inout_if<T> {
public:
    const sc_core::sc_event& default_event() const override { return never_; }
    const sc_core::sc_event& value_changed_event() const override { return never_; }
    const T& read() const override { return value_; }
    const T& get_data_ref() const override { return value_; }
    bool event() const override { return false; }
    void write(const T& v) override { value_ = v; }

protected:
    T value_{};
    sc_core::sc_event never_;
};

template <typename T>
class direct_signal final : public direct_signal_base<T> {};

template <>
class direct_signal<bool> final : public direct_signal_base<bool> {
public:
    const sc_core::sc_event& posedge_event() const override { return never_; }
    const sc_core::sc_event& negedge_event() const override { return never_; }
    bool posedge() const override { return false; }
    bool negedge() const override { return false; }
};

}  // namespace rnic::rtl
