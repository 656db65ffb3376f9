// Memory-mapped read/write transactions (MMIO, DMA, buffer memory) through an initiator socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <systemc>
#include <tlm>

#include "core/payload_pool.h"

namespace rnic {

// `Ext` is a tlm_extension<T> type, or std::nullptr_t for none.
template <typename Socket, typename Ext = std::nullptr_t>
tlm::tlm_response_status mem_transport(Socket& socket, tlm::tlm_command cmd, std::uint64_t addr, void* data,
                                       std::size_t len, sc_core::sc_time& delay, Ext* ext = nullptr) {
    pooled_payload pooled;
    tlm::tlm_generic_payload& gp = *pooled;
    gp.set_command(cmd);
    gp.set_address(addr);
    gp.set_data_ptr(static_cast<unsigned char*>(data));
    gp.set_data_length(static_cast<unsigned int>(len));
    gp.set_streaming_width(static_cast<unsigned int>(len));
    gp.set_byte_enable_ptr(nullptr);
    gp.set_dmi_allowed(false);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    if constexpr (!std::is_same_v<Ext, std::nullptr_t>) {
        if (ext != nullptr) gp.set_extension(ext);
    }
    socket->b_transport(gp, delay);
    if constexpr (!std::is_same_v<Ext, std::nullptr_t>) {
        if (ext != nullptr) gp.clear_extension(ext);
    }
    return gp.get_response_status();
}

template <typename Socket>
tlm::tlm_response_status mem_read(Socket& s, std::uint64_t addr, void* data, std::size_t len, sc_core::sc_time& d) {
    return mem_transport(s, tlm::TLM_READ_COMMAND, addr, data, len, d);
}
template <typename Socket>
tlm::tlm_response_status mem_write(Socket& s, std::uint64_t addr, const void* data, std::size_t len,
                                   sc_core::sc_time& d) {
    return mem_transport(s, tlm::TLM_WRITE_COMMAND, addr, const_cast<void*>(data), len, d);
}

}  // namespace rnic

namespace rnic {
// An MSI-X request to the PCIe endpoint: a 4-byte write whose address is the vector number.
template <typename Socket>
void send_msix(Socket& socket, std::uint32_t vector, sc_core::sc_time& delay) {
    std::uint32_t data = vector;
    mem_write(socket, vector, &data, sizeof data, delay);
}
}  // namespace rnic
