// What the TCP engine's ports need when it is tested without the rest of the RNIC.
#pragma once

#include <systemc>
#include <vector>

#include "framing/framing_if.h"
#include "toe/toe_if.h"

namespace rnic::test {

// Connection events recorded; acks ignored; no out-of-order placement.
struct engine_stubs : sc_core::sc_module, toe_conn_events_if, toe_tx_progress_if, framer_ooo_if {
    std::vector<toe_event> events;
    sc_core::sc_event event;  // notified on every connection event
    explicit engine_stubs(const sc_core::sc_module_name& n) : sc_module(n) {}
    void on_tcp_event(std::uint32_t, toe_event ev, std::uint16_t) override {
        events.push_back(ev);
        event.notify(sc_core::SC_ZERO_TIME);
    }
    void on_tx_acked(std::uint32_t, std::uint64_t, const sc_core::sc_time&) override {}
    std::size_t place_out_of_order(std::uint32_t, std::uint64_t, const std::uint8_t*, std::size_t,
                                   sc_core::sc_time&) override {
        return 0;
    }
    std::size_t place_split_fpdus(std::uint32_t, std::uint64_t, const std::uint8_t*, std::size_t, std::uint64_t,
                                  std::size_t, sc_core::sc_time&) override {
        return 0;
    }
    std::size_t split_fpdu_reach(std::uint32_t) const override { return 0; }
    placement_landing last_placement() const override { return {}; }
    void connection_released(std::uint32_t) override {}
};

}  // namespace rnic::test
