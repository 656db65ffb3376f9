// The payload convention of every data path between NIC blocks (ULPDUs, FPDUs, stream bytes,
// frames): a tlm_generic_payload whose data pointer holds the bytes, plus the extensions of its path.
#pragma once

#include <cstdint>
#include <cstring>
#include <systemc>
#include <tlm>

#include "core/payload_pool.h"

namespace rnic {

enum class stream_kind : std::uint8_t {
    data,          // ULPDU / FPDU / in-order stream bytes
    raw,           // bytes sent before MPA full operation (MPA Request/Reply), passed through unframed
    out_of_order,  // a ULPDU found in an out-of-order segment: place it now if it is safe, or refuse
    verbatim,      // test mode (raw_stream work requests): stream bytes in full operation, passed through unframed
    // No bytes: the RDMA engine asks the framing for the acknowledgement of placed messages it owes
    // the peer, if its protocol has one (VI/TCP Reliable Reception's NOP, framing::build_acknowledgement)
    acknowledgement,
};

// Each data path between NIC blocks carries the extensions its receiver needs and no more
// (docs/architecture.md, "Modules and their sockets"):
//   ulpdu_tx (RDMA engine, CP -> framer), fpdu_tx (framer -> TCP engine): stream_ext, and
//     refetch_ext on a ULPDU whose payload a retransmission may fetch again from host memory;
//   stream_rx (TCP engine -> framer): stream_ext;
//   ulpdu_rx (framer -> RDMA engine): stream_ext and placement_ext;
//   Ethernet frames (TCP engine, link, switch): none.
// The generic payload's address is not used on these paths.

// Stream data: whose bytes these are and what they are. On every stream path.
struct stream_ext : tlm::tlm_extension<stream_ext> {
    std::uint32_t conn = 0;  // TCP engine connection id
    stream_kind kind = stream_kind::data;

    tlm::tlm_extension_base* clone() const override { return new stream_ext(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const stream_ext&>(other); }
};

// Control of a received ULPDU's placement (framer -> RDMA engine): where its frame sat in the
// stream, so that a Marker-fragmenting DMA can cut at the framing's breaks, and whether it was
// placed out of order already (delivered now in order, RFC 5041 §5, with no second DMA).
struct placement_ext : tlm::tlm_extension<placement_ext> {
    std::uint32_t frame_pos = 0;  // marker-space position of the frame's first byte
    bool markers = false;         // the frame carries Markers (receive side's setting)
    bool already_placed = false;
    // The message this ULPDU belongs to is in error but its connection goes on (VI/TCP at
    // Unreliable Delivery, seed 003 §3.6 option 2, proto/seeds/vitcp_errors.h): a Send is placed
    // and its receive completes with a transport error, a tagged Write is dropped.
    bool in_error = false;

    tlm::tlm_extension_base* clone() const override { return new placement_ext(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const placement_ext&>(other); }
};

// Refetch (transmit path, rnic.tcp.retransmit_from = "host"): where a ULPDU's payload came from,
// so that a retransmission fetches it again from host memory and re-frames it instead of keeping
// it in NIC buffer memory. The RDMA engine attaches it only to a ULPDU with one host copy of its
// payload; the framer adds how it framed the ULPDU; the TCP engine records both.
struct refetch_ext : tlm::tlm_extension<refetch_ext> {
    std::uint64_t host_addr = 0;   // payload source in host memory
    std::uint32_t host_len = 0;    // payload bytes there
    std::uint32_t header_len = 0;  // ULPDU bytes in front of the payload (DDP/RDMAP headers)
    std::uint8_t header[32] = {};  // those bytes
    // Filled by the framing unit: how the frame was framed (framing::reframe repeats it).
    std::uint32_t frame_pos = 0;  // marker-space position of the frame's first byte
    bool markers = false;
    bool crc = false;

    tlm::tlm_extension_base* clone() const override { return new refetch_ext(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const refetch_ext&>(other); }
};

namespace stream_detail {
template <typename Socket>
tlm::tlm_response_status write_bytes(Socket& socket, tlm::tlm_generic_payload& gp, const std::uint8_t* data,
                                     std::size_t len, sc_core::sc_time& delay) {
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(0);
    gp.set_data_ptr(const_cast<unsigned char*>(data));
    gp.set_data_length(static_cast<unsigned int>(len));
    gp.set_streaming_width(static_cast<unsigned int>(len));
    gp.set_byte_enable_ptr(nullptr);
    gp.set_dmi_allowed(false);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(gp, delay);
    return gp.get_response_status();
}
}  // namespace stream_detail

// Sends `len` bytes through an initiator socket as a WRITE with a stream_ext and, when given, the
// path's other extensions; the extensions live on the caller's stack for the duration of the call.
// Returns the response status.
template <typename Socket>
tlm::tlm_response_status send_stream(Socket& socket, stream_ext& ext, const std::uint8_t* data, std::size_t len,
                                     sc_core::sc_time& delay, placement_ext* placement = nullptr,
                                     refetch_ext* refetch = nullptr) {
    pooled_payload pooled;
    tlm::tlm_generic_payload& gp = *pooled;
    gp.set_extension(&ext);
    if (placement != nullptr) gp.set_extension(placement);
    if (refetch != nullptr) gp.set_extension(refetch);
    const tlm::tlm_response_status status = stream_detail::write_bytes(socket, gp, data, len, delay);
    gp.clear_extension(&ext);
    if (placement != nullptr) gp.clear_extension(placement);
    if (refetch != nullptr) gp.clear_extension(refetch);
    return status;
}

// Sends one Ethernet frame (no extension: a frame names no connection).
template <typename Socket>
tlm::tlm_response_status send_frame_bytes(Socket& socket, const std::uint8_t* frame, std::size_t len,
                                          sc_core::sc_time& delay) {
    pooled_payload pooled;
    return stream_detail::write_bytes(socket, *pooled, frame, len, delay);
}

inline stream_ext* get_stream_ext(tlm::tlm_generic_payload& gp) {
    stream_ext* ext = nullptr;
    gp.get_extension(ext);
    return ext;
}

// The path's other extensions, nullptr when the transaction carries none.
template <typename Ext>
Ext* find_ext(tlm::tlm_generic_payload& gp) {
    Ext* ext = nullptr;
    gp.get_extension(ext);
    return ext;
}

}  // namespace rnic
