// The responder of the RDMA engine for queue 1 (RFC 5040 §5.2, RFC 7306 §5.2): RDMA Read Requests
// and Atomic Requests accepted within the IRD and checked against the region table, atomics
// executed on host memory (atomic_alu.h, by read-modify-write or PCIe AtomicOps), and the Read and
// Atomic Responses sent from the transmit thread in request order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <systemc>

#include "proto/ddp_rdmap.h"
#include "rdma/context_if.h"
#include "rdma/engine_part.h"

namespace rnic {

class qp_lifecycle;
class transmit_path;

// Why a request is refused: the Terminate it draws (RFC 5040 §7, RFC 5041 §7, RFC 7306 §8).
struct request_refusal {
    proto::ddp::term_layer layer;
    std::uint8_t etype, code;
    std::string what;
};

class responder : private engine_part {
public:
    responder(const engine_resources& res, transmit_path& transmit, qp_lifecycle& lifecycle);

    // A Read Request or Atomic Request whose queue number and MSN the receive path has checked: its
    // response is queued (the request's MSN becomes the last one received), or it is refused and
    // nothing has changed.
    std::optional<request_refusal> accept_read_request(qp_context& qp, const proto::ddp::header& h,
                                                       const std::uint8_t* ulpdu, std::size_t len,
                                                       sc_core::sc_time& delay);
    std::optional<request_refusal> execute_atomic(qp_context& qp, const proto::ddp::header& h,
                                                  const std::uint8_t* ulpdu, std::size_t len, sc_core::sc_time& delay);
    // Sends the response to the oldest accepted request (transmit thread; Read Responses and Atomic
    // Responses leave in request order, RFC 7306 §7).
    void send_next_response(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& issue);

private:
    void send_read_response(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& issue);
    void send_atomic_response(std::uint32_t qpn, qp_context& qp, sc_core::sc_time& issue);
    // Performs the atomic on host memory at `addr`; false when the host refused. Sets *original.
    bool perform_atomic(std::uint64_t addr, const proto::ddp::atomic_request& req, std::uint64_t* original,
                        sc_core::sc_time& delay);

    transmit_path& transmit_;
    qp_lifecycle& lifecycle_;
    // Read-modify-write atomics: when the unit's lock frees, the last write having been handed to
    // the bus. Absolute simulated time.
    sc_core::sc_time rmw_lock_free_ = sc_core::SC_ZERO_TIME;
};

}  // namespace rnic
