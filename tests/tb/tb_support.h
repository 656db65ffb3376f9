// Helpers for TLM testbenches.
#pragma once

#include <cstdint>
#include <cstring>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "core/stream.h"

namespace rnic::test {

// An initiator that test code drives directly (b_transport outside any process is allowed for
// LT models that never wait()).
struct tb_initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<tb_initiator> out;
    explicit tb_initiator(const sc_core::sc_module_name& n) : sc_module(n), out("out") {}
};

// A target that records what arrives and when.
struct tb_sink : sc_core::sc_module {
    struct item {
        sc_core::sc_time at;
        std::uint64_t address;
        std::vector<std::uint8_t> data;
        std::int64_t conn;  // the stream_ext's connection id; -1 without one (frames, memory, MSI-X)
    };
    tlm_utils::simple_target_socket<tb_sink> in;
    std::vector<item> items;
    explicit tb_sink(const sc_core::sc_module_name& n) : sc_module(n), in("in") {
        in.register_b_transport(this, &tb_sink::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
        const stream_ext* ext = get_stream_ext(gp);
        items.push_back({sc_core::sc_time_stamp() + delay, gp.get_address(),
                         std::vector<std::uint8_t>(gp.get_data_ptr(), gp.get_data_ptr() + gp.get_data_length()),
                         ext != nullptr ? static_cast<std::int64_t>(ext->conn) : -1});
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

// Host memory as a flat byte array from address 0: reads and writes inside it take `latency`,
// anything reaching past its end is an address error.
struct tb_memory : sc_core::sc_module {
    tlm_utils::simple_target_socket<tb_memory> in;
    std::vector<std::uint8_t> mem;
    sc_core::sc_time latency;
    tb_memory(const sc_core::sc_module_name& n, std::size_t size, sc_core::sc_time access_latency)
        : sc_module(n), in("in"), mem(size, 0), latency(access_latency) {
        in.register_b_transport(this, &tb_memory::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
        const std::uint64_t a = gp.get_address();
        const std::size_t len = gp.get_data_length();
        if (a + len > mem.size()) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            return;
        }
        if (gp.is_read())
            std::memcpy(gp.get_data_ptr(), mem.data() + a, len);
        else
            std::memcpy(mem.data() + a, gp.get_data_ptr(), len);
        delay += latency;
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

}  // namespace rnic::test
