// Control interfaces of the RDMA (DDP/RDMAP) engine.
//  rdma_ctl_if      firmware -> engine: program CQs, QPs and memory regions (context memory).
//  rdma_doorbell_if register file -> engine: SQ/RQ/CQ doorbells written by the driver.
#pragma once

#include <cstdint>
#include <memory>
#include <systemc>

#include "framing/framing.h"  // peer_acknowledgement
#include "rdma/page_list.h"

namespace rnic {

struct cq_config {
    std::uint64_t ring = 0;
    std::uint32_t entries = 0;
    std::uint32_t msix_vector = 0;
};

struct qp_config {
    std::uint64_t sq_ring = 0;
    std::uint32_t sq_entries = 0;
    std::uint64_t rq_ring = 0;
    std::uint32_t rq_entries = 0;
    std::uint32_t send_cq = 0, recv_cq = 0;
    std::uint32_t pd = 0;
};

struct mr_config {
    std::uint64_t addr = 0;
    std::uint64_t length = 0;
    std::uint32_t access = 0;  // regmap::mr_access
    std::uint32_t pd = 0;
    std::uint64_t to_base = 0;  // tagged offset of the first byte
    // reg_mr_pages: the region's bytes are in these pages, and `addr` is the address local work
    // requests name its first byte by (its virtual address), not a host address. Null: contiguous
    // host memory from `addr` (reg_mr).
    std::shared_ptr<const mr_page_list> pages = nullptr;

    region_map map() const { return {addr, pages.get()}; }
};

// How the stream a QP goes to RTS on starts.
struct qp_stream {
    std::uint32_t conn = 0;
    std::size_t max_ulpdu = 0;
    // The Read limits: negotiated (RFC 6581 §9.1, used as they are, 0 included), or else the
    // application's wish (0: the device's own limits).
    std::uint32_t ird = 0, ord = 0;
    bool negotiated = false;
    // Responder: send no FPDU before the initiator's first one has arrived (RFC 5044 §7.1.2 rule 4).
    bool hold_until_first_fpdu = false;
    // Initiator in the peer-to-peer model: the ready-to-receive message, sent before any work
    // request of the QP (RFC 6581 §5, §9.2): none, a zero-length RDMA Write or a zero-length Read.
    enum class rtr : std::uint8_t { none, write, read } send_rtr = rtr::none;
    // VI/TCP Reliable Reception (seed 003 §3.2): send work requests complete when the peer reports
    // their data placed (rdma_llp_if::peer_acknowledged), not when TCP has it acknowledged; and
    // this end owes the peer the same report of what it placed (a frame the framing builds).
    bool peer_acknowledges = false;
};

class rdma_ctl_if : public virtual sc_core::sc_interface {
public:
    virtual int create_cq(const cq_config& cfg) = 0;             // cqn, or -1: no resources
    virtual int create_qp(const qp_config& cfg) = 0;             // qpn, -1 no resources, -2 bad CQ
    virtual std::int64_t register_mr(const mr_config& cfg) = 0;  // STag, or -1
    virtual bool deregister_mr(std::uint32_t stag) = 0;
    virtual bool qp_valid(std::uint32_t qpn) const = 0;
    virtual bool qp_idle(std::uint32_t qpn) const = 0;  // created, not yet connected
    // The connection is in full operation: the QP goes to RTS on it, with the inbound and outbound
    // RDMA Read limits the MPA exchange settled (RFC 6581 §5; RFC 5040 §6.1).
    virtual bool qp_connect(std::uint32_t qpn, const qp_stream& stream) = 0;
    // Driver-requested transitions (regmap::qp_state): error (abortive) or closing (graceful).
    // Returns false when the transition is not allowed from the QP's state.
    virtual bool qp_modify(std::uint32_t qpn, std::uint8_t target) = 0;
    // query_qp result word (regmap::query_qp_result), or -1 for no such QP.
    virtual std::int64_t qp_query(std::uint32_t qpn) const = 0;
    // 0 ok, -1 no such object, -2 in use / wrong state.
    virtual int destroy_qp(std::uint32_t qpn) = 0;
    virtual int destroy_cq(std::uint32_t cqn) = 0;
    // The firmware ends a stream whose negotiation failed after the Reply: a Terminate with layer
    // LLP, type MPA and `mpa_code` (RFC 6581 §8), then Error.
    virtual void llp_terminate(std::uint32_t conn, std::uint8_t mpa_code) = 0;
    // The stream failed (framing error, reset): the QP goes to Error (RFC 5040 §6.2).
    virtual void stream_failed(std::uint32_t conn, const char* why) = 0;
    // Device-wide counters the firmware reports to the driver (query_stats).
    struct counter_snapshot {
        std::uint64_t wqes = 0, cqes = 0, terminates_sent = 0, terminates_received = 0, placed_bytes = 0;
    };
    virtual counter_snapshot counters() const = 0;
    // CTRL.RESET (regmap.h): whether any QP, CQ or memory region exists; and their removal, with
    // nothing more written to host memory (no flush completions: the driver's rings may be gone)
    // and each QP's TCP connection closed and handed back to the TCP engine.
    virtual bool has_objects() const = 0;
    virtual void reset_objects() = 0;
};

// The framing unit reports a broken stream to the RDMAP layer, which sends the Terminate
// (RFC 5044 §8, RFC 5040 §5.3) and moves the QP to Error.
class rdma_llp_if : public virtual sc_core::sc_interface {
public:
    // `mpa_code`: RFC 5044 §8 / RFC 6581 §8 error code (2 CRC error, 3 marker/length mismatch, ...).
    virtual void llp_error(std::uint32_t conn, std::uint8_t mpa_code, const sc_core::sc_time& delay) = 0;
    // What the peer reported about our messages on `conn` (VI/TCP Reliable Reception, seed 003
    // §3.2): placed through a send-stream offset, or one of them in error (framing.h).
    virtual void peer_acknowledged(std::uint32_t /*conn*/, const peer_acknowledgement& /*report*/,
                                   const sc_core::sc_time& /*delay*/) {}
};

class rdma_doorbell_if : public virtual sc_core::sc_interface {
public:
    virtual void sq_doorbell(std::uint32_t qpn, std::uint32_t producer, const sc_core::sc_time& delay) = 0;
    virtual void rq_doorbell(std::uint32_t qpn, std::uint32_t producer, const sc_core::sc_time& delay) = 0;
    virtual void cq_doorbell(std::uint32_t cqn, std::uint32_t consumer, const sc_core::sc_time& delay) = 0;
    virtual void cq_arm(std::uint32_t cqn, const sc_core::sc_time& delay) = 0;
};

}  // namespace rnic
