// The firmware HAL: everything the NIC's control-processor firmware may touch. The control-processor
// model (models/cp/control_processor.*) implements it on top of the NIC's internal interfaces and runs
// the program it is given (cp/cp_program.h); the firmware (firmware/) is written against it alone and
// has no SystemC dependency, so it could be retargeted to an instruction-set simulator or real
// hardware. It lives beside the model because it is what the hardware offers: the firmware depends
// on it, never the other way round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/seeds/vitcp_ce.h"

namespace rnic::fw {

// The zero-length messages an initiator may send as its ready-to-receive indication (RFC 6581
// §9.2), as a bit set. The zero-length Send (flag B) is not among them: RFC 5040 §5.3 makes a
// zero-length Send consume an untagged buffer of the responder, i.e. one of the application's
// receive WQEs, which a provider-level RTR must not do (RFC 6581 §4.4.2).
namespace rtr {
constexpr std::uint8_t kWrite = 1;  // flag C: zero-length RDMA Write
constexpr std::uint8_t kRead = 2;   // flag D: zero-length RDMA Read Request (answered by a zero-length Response)
}  // namespace rtr

// What the RTR on a stream is: none (client-server: the initiator's first ULP message is it), or
// the zero-length message the initiator sends right after the Reply.
enum class rtr_kind : std::uint8_t { none, write, read };

enum class event_kind {
    command_doorbell,  // the driver advanced CMDQ_PROD
    tcp_established,   // conn, port = local port
    tcp_closed,        // conn
    tcp_failed,        // conn (active open failed)
    tcp_refused,       // port = the listening port: a SYN got no send region and was reset
    startup_bytes,     // conn: MPA start-up bytes arrived
    framing_error,     // conn
    timer,             // a timer armed with arm_timer expired
    device_reset,      // the driver wrote CTRL.RESET (the registers are at their reset values already)
};

struct event {
    event_kind kind = event_kind::command_doorbell;
    std::uint32_t conn = 0;
    std::uint16_t port = 0;
};

// Both ends of a TCP connection (IPv4 addresses as numbers); all zero for an id that names nothing.
struct connection_addresses {
    std::uint32_t local_ip = 0, remote_ip = 0;
    std::uint16_t local_port = 0, remote_port = 0;
};

struct cq_params {
    std::uint64_t ring;
    std::uint32_t entries;
    std::uint32_t vector;
};
struct qp_params {
    std::uint64_t sq_ring;
    std::uint32_t sq_entries;
    std::uint64_t rq_ring;
    std::uint32_t rq_entries;
    std::uint32_t send_cq, recv_cq, pd;
};
struct mr_params {
    std::uint64_t addr;
    std::uint64_t length;
    std::uint32_t access;
    std::uint32_t pd;
    std::uint64_t to_base;
    // reg_mr_pages: the host address of each page (empty: contiguous host memory from addr).
    std::vector<std::uint64_t> pages = {};
    unsigned page_shift = 0;
    std::uint64_t first_byte_offset = 0;
};
struct mpa_mode {
    bool tx_markers;
    bool rx_markers;
    bool crc;
    std::size_t max_ulpdu;
    bool pack_fpdus = false;             // mpa_policy::pack_marker_fpdus: several whole FPDUs per segment with markers
    std::uint16_t read_window = 0xFFFF;  // VI/TCP: the agreed RDMA Read Window (seed 003 §2.2.2.2.6)
    bool urgent_marks = false;
    bool unreliable =
        false;  // VI/TCP: Unreliable Delivery agreed (seed 003 §3.3, vitcp_errors.h)  // VI/TCP: the peer sent the Urgent Marker option, we mark (seed 003 §3.7)
    bool reliable_reception = false;  // VI/TCP: Reliable Reception agreed (seed 003 §3.2 Message ACK, vitcp_ack.h)
};

// The MPA policy the NIC was built with (scenario rnic.mpa.*).
struct mpa_policy {
    int revision = 1;           // 1 (RFC 5044) or 2 (RFC 6581)
    bool want_markers = false;  // we ask the peer for markers (M bit)
    bool want_crc = true;       // C bit
    // With markers sent, several complete FPDUs may share a segment (RFC 5044 §5, Appendix A);
    // off, each FPDU has a segment of its own.
    bool pack_marker_fpdus = false;
    std::uint16_t ird = 16, ord = 16;
    std::uint16_t max_ird = 16, max_ord = 16;           // the RDMA engine's limits (rnic.rdma.ird/ord)
    std::uint64_t timeout_ps = 0;                       // negotiation timeout
    bool peer_to_peer = false;                          // every connect asks for an explicit RTR (RFC 6581 §9.2)
    std::uint8_t rtr_types = rtr::kWrite | rtr::kRead;  // RTRs this device sends and accepts
    // VI/TCP (rnic.framing = vitcp, seed 003): the CE exchange of §4 replaces the MPA Request/Reply
    // (firmware_vitcp.cpp) with this end's proposal (rnic.vitcp.*).
    bool vitcp = false;
    proto::vitcp_ce::proposal vitcp_proposal;
    // Test mode (rnic.vitcp.raw_connect_requests): a connect with private data sends those bytes as
    // its ConnectRequest, and a refusal's answer comes back in the connect's buffer (the vi_ce_*
    // probes: what a peer does with a ConnectRequest no correct end sends).
    bool vitcp_raw_connect_requests = false;
};

// How a negotiated stream starts (rdma_if.h qp_stream).
struct stream_start {
    std::uint32_t conn = 0;
    std::size_t max_ulpdu = 0;
    std::uint32_t ird = 0, ord = 0;
    bool negotiated = false;         // RFC 6581 values (used as they are); else the wish (0: device's)
    bool responder = false;          // hold our FPDUs until the initiator's first (RFC 5044 §7.1.2 rule 4)
    rtr_kind rtr = rtr_kind::none;   // initiator: the RTR to send first (RFC 6581 §9.2)
    bool peer_acknowledges = false;  // VI/TCP Reliable Reception: sends complete on the peer's Message ACK
};

class hal {
public:
    virtual ~hal() = default;

    // Execution: block until the next event; account for the handler's cost in CPU cycles.
    virtual event wait_event() = 0;
    virtual void consume_cycles(std::uint64_t cycles) = 0;
    virtual std::uint64_t now_ps() const = 0;
    virtual void arm_timer(std::uint64_t at_ps) = 0;
    virtual const char* name() const = 0;
    virtual const mpa_policy& policy() const = 0;

    // Device registers owned by the firmware side (command queue, status).
    virtual std::uint32_t reg_read(std::uint32_t offset) = 0;
    virtual void reg_write(std::uint32_t offset, std::uint32_t value) = 0;

    // Host memory through the DMA engine; false when the host refused the access.
    virtual bool dma_read(std::uint64_t addr, void* dst, std::size_t len) = 0;
    virtual bool dma_write(std::uint64_t addr, const void* src, std::size_t len) = 0;
    virtual void raise_msix(std::uint32_t vector) = 0;

    // RDMA engine context.
    virtual int create_cq(const cq_params& p) = 0;
    virtual int create_qp(const qp_params& p) = 0;
    virtual std::int64_t register_mr(const mr_params& p) = 0;
    virtual bool deregister_mr(std::uint32_t stag) = 0;
    virtual bool qp_idle(std::uint32_t qpn) const = 0;
    virtual bool qp_connect(std::uint32_t qpn, const stream_start& stream) = 0;
    // The QP on `conn` (in RTS) sends a Terminate with layer LLP, type MPA and `mpa_code`, then goes
    // to Error and the stream closes (RFC 6581 §8: a negotiation that fails after the Reply).
    virtual void terminate_stream(std::uint32_t conn, std::uint8_t mpa_code) = 0;
    virtual bool qp_modify(std::uint32_t qpn, std::uint8_t target) = 0;  // regmap::qp_state
    virtual std::int64_t qp_query(std::uint32_t qpn) const = 0;          // regmap::query_qp_result, -1
    virtual int destroy_qp(std::uint32_t qpn) = 0;                       // 0, -1 no such, -2 busy
    virtual int destroy_cq(std::uint32_t cqn) = 0;
    virtual void stream_failed(std::uint32_t conn, const char* why) = 0;
    // CTRL.RESET: every QP, CQ and memory region removed (rdma_ctl_if::reset_objects).
    virtual void reset_contexts() = 0;
    // The engines' counters of regmap::kDeviceCounters (wqes .. tcp_retransmitted_bytes) into
    // out[index]; the firmware fills its own (commands, connections_*).
    virtual void read_counters(std::uint64_t* out) const = 0;

    // TCP engine.
    // The connection id, or kTcpNoSlot (table full) or kTcpNoSendRegion (no send region in buffer
    // memory), as the TCP engine answers (toe_ctl_if::tcp_connect).
    static constexpr int kTcpNoSlot = -1;
    static constexpr int kTcpNoSendRegion = -2;
    virtual int tcp_connect(std::uint32_t remote_ip, std::uint16_t remote_port, std::uint16_t local_port) = 0;
    virtual bool tcp_listen(std::uint16_t port) = 0;
    // Stops listening on `port` (toe_ctl_if::tcp_unlisten); false when it was not listening.
    virtual bool tcp_unlisten(std::uint16_t port) = 0;
    // Resets (RST) a connection nobody will take: a listen-backlog peer of a port that stopped listening.
    virtual void tcp_abort(std::uint32_t conn) = 0;
    // Closes (FIN) a connection whose negotiation failed or was rejected, so nothing stays half-open.
    virtual void tcp_close(std::uint32_t conn) = 0;
    // The firmware is done with a connection no QP took (toe_ctl_if::tcp_release): freed once closed.
    virtual void tcp_release(std::uint32_t conn) = 0;
    virtual std::uint16_t tcp_effective_mss(std::uint32_t conn) const = 0;
    virtual connection_addresses tcp_addresses(std::uint32_t conn) const = 0;

    // Framing unit: start-up byte exchange and the switch to full operation.
    virtual bool send_startup(std::uint32_t conn, const std::vector<std::uint8_t>& bytes) = 0;
    virtual const std::vector<std::uint8_t>& startup_bytes(std::uint32_t conn) const = 0;
    virtual void full_operation(std::uint32_t conn, const mpa_mode& mode, std::size_t consumed) = 0;
};

}  // namespace rnic::fw
