// The payload convention of every data path between NIC blocks (ULPDUs, FPDUs, stream bytes,
// frames): a tlm_generic_payload whose data pointer holds the bytes, plus this extension.
#pragma once

#include <cstdint>
#include <cstring>
#include <systemc>
#include <tlm>

#include "core/payload_pool.h"

namespace rnic {

enum class stream_kind : std::uint8_t {
    data,  // ULPDU / FPDU / in-order stream bytes / an Ethernet frame
    raw,   // bytes sent before MPA full operation (MPA Request/Reply), passed through unframed
    out_of_order,  // a ULPDU found in an out-of-order segment: place it now if it is safe, or refuse
};

struct stream_ext : tlm::tlm_extension<stream_ext> {
    std::uint32_t conn = 0;          // TCP engine connection id
    stream_kind kind = stream_kind::data;
    std::uint64_t tag = 0;           // producer's cookie (e.g. work request)
    std::uint64_t stream_end = 0;    // filled by the TCP engine: send-stream offset after these bytes
    bool already_placed = false;     // in-order ULPDU whose payload was placed out of order earlier
    // Where a ULPDU's payload came from, so that a retransmission can fetch it again from host
    // memory instead of keeping it in NIC buffer memory (rnic.tcp.retransmit_from = "host").
    std::uint64_t host_addr = 0;     // payload source in host memory (0: not refetchable)
    std::uint32_t host_len = 0;      // payload bytes there
    std::uint32_t header_len = 0;    // ULPDU bytes in front of the payload (DDP/RDMAP headers)
    std::uint8_t header[32] = {};    // those bytes
    // Filled by the framing unit for the same purpose: how the FPDU was framed.
    std::uint32_t fpdu_pos = 0;      // marker-space position of the FPDU's first byte
    bool fpdu_markers = false;
    bool fpdu_crc = false;

    tlm::tlm_extension_base* clone() const override { return new stream_ext(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override {
        *this = static_cast<const stream_ext&>(other);
    }
};

// Sends `len` bytes through an initiator socket as a WRITE with a stream_ext; the extension lives on
// the caller's stack for the duration of the call. Returns the response status.
template <typename Socket>
tlm::tlm_response_status send_stream(Socket& socket, stream_ext& ext, const std::uint8_t* data, std::size_t len,
                                     sc_core::sc_time& delay) {
    pooled_payload pooled;
    tlm::tlm_generic_payload& gp = *pooled;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(ext.conn);
    gp.set_data_ptr(const_cast<unsigned char*>(data));
    gp.set_data_length(static_cast<unsigned int>(len));
    gp.set_streaming_width(static_cast<unsigned int>(len));
    gp.set_byte_enable_ptr(nullptr);
    gp.set_dmi_allowed(false);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    gp.set_extension(&ext);
    socket->b_transport(gp, delay);
    gp.clear_extension(&ext);
    return gp.get_response_status();
}

inline stream_ext* get_stream_ext(tlm::tlm_generic_payload& gp) {
    stream_ext* ext = nullptr;
    gp.get_extension(ext);
    return ext;
}

}  // namespace rnic
