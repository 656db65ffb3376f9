// The receive side of the RDMA engine: ULPDUs from the framing unit parsed and checked (RFC 5041 §7
// tagged and untagged checks, RFC 5040 §7 rights and opcodes, RFC 7306 §8), RDMA Writes, Sends,
// Read Responses and Immediate Data placed in host memory by DMA, Atomic Responses completed,
// Read and Atomic Requests handed to the responder, and the Terminate sent for every error
// (RFC 5040 §5.3), after which the QP goes to Error. Runs in ulpdu_rx_in's b_transport.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>

#include "core/stream.h"
#include "proto/ddp_rdmap.h"
#include "rdma/context_if.h"
#include "rdma/engine_part.h"

namespace rnic {

class completion_unit;
class qp_lifecycle;
class responder;
struct request_refusal;

class receive_path : private engine_part {
public:
    receive_path(const engine_resources& res, completion_unit& completions, qp_lifecycle& lifecycle,
                 responder& requests);

    // One ULPDU from the framing unit: in order, or (stream_kind::out_of_order) offered for early
    // placement, which only a valid RDMA Write gets (the response status says whether it was placed).
    void receive(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // RFC 5040 §4.8 / §5.3: one Terminate on queue 2 carrying the offending DDP header (`ulpdu`, or
    // none); the QP is in Terminate afterwards.
    void send_terminate(std::uint32_t qpn, qp_context& qp, proto::ddp::term_layer layer, std::uint8_t etype,
                        std::uint8_t code, const std::uint8_t* ulpdu, std::size_t len, sc_core::sc_time& delay);

private:
    void terminate_received(std::uint32_t qpn, qp_context& qp, const std::uint8_t* ulpdu, std::size_t len,
                            sc_core::sc_time& delay);
    void place_tagged(std::uint32_t qpn, qp_context& qp, const proto::ddp::header& h, const std::uint8_t* ulpdu,
                      std::size_t len, sc_core::sc_time& delay);
    bool place_out_of_order(const qp_context& qp, const std::uint8_t* ulpdu, std::size_t len, sc_core::sc_time& delay);
    void place_send(std::uint32_t qpn, qp_context& qp, const proto::ddp::header& h, const std::uint8_t* ulpdu,
                    std::size_t len, bool in_error, sc_core::sc_time& delay);
    void place_read_response(std::uint32_t qpn, qp_context& qp, const proto::ddp::header& h, const std::uint8_t* ulpdu,
                             std::size_t len, bool already_placed, sc_core::sc_time& delay);
    void complete_atomic(std::uint32_t qpn, qp_context& qp, const proto::ddp::header& h, const std::uint8_t* ulpdu,
                         std::size_t len, sc_core::sc_time& delay);
    // The response to `request` (a Read or an atomic) has arrived in full.
    void answered(std::uint32_t qpn, qp_context& qp, pending_completion& request, sc_core::sc_time& delay);
    void unexpected_response(std::uint32_t qpn, qp_context& qp, const char* what, const std::uint8_t* ulpdu,
                             std::size_t len, sc_core::sc_time& delay);
    // A Read or Atomic Request: queue 1 checks, then the responder.
    void take_request(std::uint32_t qpn, qp_context& qp, const proto::ddp::header& h, const std::uint8_t* ulpdu,
                      std::size_t len, sc_core::sc_time& delay);
    void fail_request(std::uint32_t qpn, qp_context& qp, const proto::ddp::header& h, const std::uint8_t* ulpdu,
                      std::size_t len, const request_refusal& why, sc_core::sc_time& delay);
    // DMA-writes a received payload, telling the DMA engine where MPA markers sat between its bytes.
    tlm::tlm_response_status place_payload(std::uint64_t host_addr, const std::uint8_t* payload, std::size_t len,
                                           std::size_t header_len, sc_core::sc_time& delay);
    // place_payload into bytes [off, off + len) of a region: one transfer per run of its host memory
    // (page_list.h), each told where the markers sat in its part of the payload.
    tlm::tlm_response_status place_in_region(const region_map& map, std::uint64_t off, const std::uint8_t* payload,
                                             std::size_t len, std::size_t header_len, sc_core::sc_time& delay);

    completion_unit& completions_;
    qp_lifecycle& lifecycle_;
    responder& requests_;
    const placement_ext* rx_placement_ = nullptr;  // the ULPDU being received (for place_payload)
};

}  // namespace rnic
