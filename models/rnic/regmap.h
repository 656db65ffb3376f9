// The RNIC's device interface, declared once: BAR0 registers, doorbells, MSI-X vectors, the layout
// of descriptors and completions in host memory, firmware commands and status codes.
// Used by the device model (models/rnic), the driver (driver/) and the firmware (firmware/);
// docs/device.md is kept beside it. No SystemC dependency.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rnic::regmap {

enum class access : std::uint8_t { ro, rw, wo, rw1c };

struct register_desc {
    const char* name;
    std::uint32_t offset;
    std::uint32_t reset;
    access acc;
    const char* description;
};

// X(name, offset, reset, access, description)
#define RNIC_REGISTERS(X)                                                                                   \
    X(ID, 0x0000, 0x1a4e0001, ro, "Identification: vendor 0x1a4e (upper 16 bits), device 0x0001")           \
    X(VERSION, 0x0004, 0x00010000, ro, "Device interface version major.minor (16.16)")                     \
    X(CTRL, 0x0008, 0x00000000, rw, "Control: bit 0 ENABLE; bit 1 RESET (self-clearing)")                  \
    X(STATUS, 0x000c, 0x00000000, ro, "Status: bit 0 READY (firmware running); bit 1 FATAL")               \
    X(INTR_CAUSE, 0x0010, 0x00000000, rw1c, "Interrupt causes seen (bit = MSI-X vector), write 1 to clear") \
    X(CMDQ_BASE_LO, 0x0020, 0x00000000, rw, "Firmware command ring base address, low 32 bits (64-byte aligned)") \
    X(CMDQ_BASE_HI, 0x0024, 0x00000000, rw, "Firmware command ring base address, high 32 bits")           \
    X(CMDQ_ENTRIES, 0x0028, 0x00000000, rw, "Command ring entries (power of two, 2..4096)")                \
    X(CMDQ_PROD, 0x002c, 0x00000000, wo, "Command ring doorbell: producer index (free-running mod 2^32)")  \
    X(CMDQ_CONS, 0x0030, 0x00000000, ro, "Command ring consumer index (commands fetched by firmware)")      \
    X(MAC_LO, 0x0040, 0x00000000, rw, "Station MAC address bytes 2..5 (byte 2 in bits 31:24)")            \
    X(MAC_HI, 0x0044, 0x00000000, rw, "Station MAC address bytes 0..1 (byte 0 in bits 15:8)")             \
    X(IPV4_ADDR, 0x0048, 0x00000000, rw, "Station IPv4 address")                                          \
    X(CAP_MAX_QP, 0x0050, 0x00000040, ro, "Number of queue pairs supported")                              \
    X(CAP_MAX_CQ, 0x0054, 0x00000040, ro, "Number of completion queues supported")                        \
    X(CAP_MAX_MR, 0x0058, 0x00000400, ro, "Number of memory regions supported")

enum reg : std::uint32_t {
#define RNIC_REG_ENUM(n, o, r, a, d) n = o,
    RNIC_REGISTERS(RNIC_REG_ENUM)
#undef RNIC_REG_ENUM
};

constexpr register_desc kRegisters[] = {
#define RNIC_REG_DESC(n, o, r, a, d) {#n, o, r, access::a, d},
    RNIC_REGISTERS(RNIC_REG_DESC)
#undef RNIC_REG_DESC
};

namespace ctrl {
constexpr std::uint32_t enable = 1u << 0;
constexpr std::uint32_t reset = 1u << 1;
}  // namespace ctrl
namespace status {
constexpr std::uint32_t ready = 1u << 0;
constexpr std::uint32_t fatal = 1u << 1;
}  // namespace status

// BAR0 size and doorbell pages.
constexpr std::uint32_t kBar0Size = 0x10000;
// Queue-pair doorbells: SQ producer index at QP_DB_BASE + 16*qpn, RQ producer index at +4.
constexpr std::uint32_t kQpDoorbellBase = 0x1000;
constexpr std::uint32_t kQpDoorbellStride = 16;
constexpr std::uint32_t kSqDoorbell = 0x0;
constexpr std::uint32_t kRqDoorbell = 0x4;
// CQ doorbells: consumer index at CQ_DB_BASE + 8*cqn; writing +4 arms the CQ for one interrupt.
constexpr std::uint32_t kCqDoorbellBase = 0x8000;
constexpr std::uint32_t kCqDoorbellStride = 8;
constexpr std::uint32_t kCqConsumer = 0x0;
constexpr std::uint32_t kCqArm = 0x4;

// MSI-X vectors: 0 = firmware command completion; 1 + cqn % (kMsixVectors-1) = completion queues.
constexpr unsigned kMsixVectors = 16;
constexpr unsigned kMsixCommandVector = 0;

// MSI-X table and Pending Bit Array in BAR0, laid out as the PCIe Base Specification (§6.1.4 / §7.7.2)
// requires: each in its own 4 KiB page (no other register shares the page), the table an array of
// 16-byte entries, the PBA one bit per vector in 64-bit words. Decoded by the host-bus endpoint
// (models/pcie, models/pcix), not by the RNIC's register file. Accesses are aligned 32- or 64-bit.
// The CQ doorbell range (kCqDoorbellBase + 8*cqn) therefore ends below kMsixTableOffset (2048 CQs).
constexpr std::uint32_t kMsixTableOffset = 0xc000;
constexpr std::uint32_t kMsixEntrySize = 16;
constexpr std::uint32_t kMsixPbaOffset = 0xd000;
constexpr std::uint32_t kMsixPbaSize = ((kMsixVectors + 63) / 64) * 8;
namespace msix_off {
constexpr std::uint32_t addr_lo = 0x0;   // Message Address [31:2] (bits 1:0 zero)
constexpr std::uint32_t addr_hi = 0x4;   // Message Upper Address
constexpr std::uint32_t data = 0x8;      // Message Data: the driver writes the vector number here
constexpr std::uint32_t control = 0xc;   // Vector Control: bit 0 Mask (set at reset)
}  // namespace msix_off
namespace msix_ctrl {
constexpr std::uint32_t mask = 1u << 0;
}  // namespace msix_ctrl

// ---- Firmware command ring (64-byte entries) ------------------------------------------------
constexpr std::size_t kCommandSize = 64;
namespace cmd_off {
constexpr std::size_t opcode = 0x00;   // u8
constexpr std::size_t cookie = 0x04;   // u32, echoed
constexpr std::size_t param = 0x08;    // 6 x u64 parameters, little-endian
constexpr std::size_t status = 0x38;   // u32, written by the device
constexpr std::size_t result = 0x3c;   // u32, written by the device
}  // namespace cmd_off

enum class command : std::uint8_t {
    nop = 0,
    create_cq = 1,     // p0 ring address, p1 entries (power of 2), p2 MSI-X vector         -> result cqn
    create_qp = 2,     // p0 SQ address, p1 SQ entries, p2 RQ address, p3 RQ entries,
                       // p4 send cqn | recv cqn << 32, p5 protection domain                 -> result qpn
    reg_mr = 3,        // p0 host address, p1 length, p2 access flags | pd << 32,
                       // p3 tagged offset of the first byte (VA-based: = p0; zero-based: 0) -> result STag
    dereg_mr = 4,      // p0 STag
    connect = 5,       // p0 qpn, p1 remote IPv4 | remote port << 32, p2 local port,
                       // p3 IRD | ORD << 16 wanted (0: the firmware's policy);
                       // completes when MPA negotiation ends (RTS) or fails
    accept = 6,        // p0 qpn, p1 local port, p3 as for connect: waits for a peer's connection,
                       // answers its MPA Request
    destroy_qp = 7,    // p0 qpn: the QP must be idle or in Error (its connection closed first)
    destroy_cq = 8,    // p0 cqn: no live QP may still use it
    modify_qp = 9,     // p0 qpn, p1 target qp_state: error (abortive: flush, close the stream)
                       // or closing (graceful: the stream closes once sent work is acknowledged)
    query_qp = 10,     // p0 qpn -> result: qp_state | terminate (layer<<28 | etype<<24 | code<<16) of the
                       // last Terminate sent or received (0 if none) | terminate_received << 15
};

// Queue-pair states (the RDMAC verbs model behind RFC 5040 §6: Idle until the stream is in RDMA
// mode, RTS while it is, Closing during a graceful close, Terminate once a Terminate has been sent
// or received, Error after that and after any fatal error).
enum class qp_state : std::uint8_t { idle = 0, rts = 1, closing = 2, terminate = 3, error = 4 };
const char* to_string(qp_state s);
namespace query_qp_result {
constexpr std::uint32_t state_mask = 0x7;
constexpr std::uint32_t terminate_received = 1u << 15;
constexpr unsigned code_shift = 16, etype_shift = 24, layer_shift = 28;
}  // namespace query_qp_result

// Written by the driver before ringing the doorbell, replaced by the device on completion.
constexpr std::uint32_t kStatusPending = 0xffffffffu;

enum class cmd_status : std::uint32_t {
    ok = 0,
    bad_opcode = 1,
    bad_parameter = 2,
    no_resources = 3,
    bad_handle = 4,
    bad_state = 5,
    connection_refused = 6,
    connection_timeout = 7,
    mpa_negotiation_failed = 8,
};
const char* to_string(cmd_status s);

// Memory-region access flags (RFC 5040 §2.x / verbs).
namespace mr_access {
constexpr std::uint32_t local_write = 1u << 0;
constexpr std::uint32_t remote_write = 1u << 1;
constexpr std::uint32_t remote_read = 1u << 2;
constexpr std::uint32_t remote_atomic = 1u << 3;
}  // namespace mr_access

// ---- Send queue work request (64 bytes) -----------------------------------------------------
constexpr std::size_t kSendWqeSize = 64;
namespace sqe_off {
constexpr std::size_t opcode = 0x00;       // u8 wr_opcode
constexpr std::size_t flags = 0x01;        // u8 wr_flags
constexpr std::size_t wr_id = 0x08;        // u64
constexpr std::size_t local_addr = 0x10;   // u64 host address of the source data
constexpr std::size_t length = 0x18;       // u32
constexpr std::size_t local_stag = 0x1c;   // u32 STag of the local region holding the data
constexpr std::size_t remote_to = 0x20;    // u64 tagged offset at the peer
constexpr std::size_t remote_stag = 0x28;  // u32
constexpr std::size_t imm_or_inv = 0x2c;   // u32 invalidate STag (Send with Invalidate, local invalidate)
// Immediate Data and RDMA Write with Immediate (RFC 7306 §6): the 8 bytes of Immediate Data.
constexpr std::size_t imm_data = 0x30;     // u64, shares the slot with `operand`
// Atomics (RFC 7306): the 8-byte original value lands at local_addr (length 8); the target is
// remote_stag/remote_to (64-bit aligned). FetchAdd adds `operand` (add mask 0: a plain 64-bit add);
// CmpSwap swaps in `operand` if the target equals `compare` (masks all ones).
constexpr std::size_t operand = 0x30;      // u64 add data / swap data
constexpr std::size_t compare = 0x38;      // u64 compare data
}  // namespace sqe_off

enum class wr_opcode : std::uint8_t {
    rdma_write = 0,
    send = 1,
    rdma_read = 2,
    atomic_fetch_add = 3,
    atomic_compare_swap = 4,
    immediate_data = 5,       // RFC 7306 §6: 8 bytes of Immediate Data, consumes one receive at the peer
    rdma_write_with_imm = 6,  // an RDMA Write followed by Immediate Data (RFC 7306 §6), one work request
    local_invalidate = 7,     // invalidates local STag `imm_or_inv` in send-queue order (RFC 5040 §2.2)
    // Test mode only (rnic.rdma.raw_ulpdu_wqes): sends the ULPDU held at local_addr/length verbatim,
    // for driver bring-up and for tests that need a peer to misbehave on the wire.
    raw_ulpdu = 0x7f,
    // Second slot of a masked atomic (not a work request of its own).
    atomic_masks = 0x7e,
};
namespace wr_flags {
constexpr std::uint8_t signaled = 1u << 0;
constexpr std::uint8_t solicited = 1u << 1;
// Masked atomic (RFC 7306 §5.1): the WQE takes two slots; the second (opcode atomic_masks) holds the
// masks at atomic_mask_off. Without the flag FetchAdd has add mask 0 (a plain 64-bit add) and
// CmpSwap has all-ones masks.
constexpr std::uint8_t masked = 1u << 2;
}  // namespace wr_flags
namespace atomic_mask_off {
constexpr std::size_t add_or_swap_mask = 0x10;  // u64
constexpr std::size_t compare_mask = 0x18;      // u64 (CmpSwap)
}  // namespace atomic_mask_off

// ---- Receive queue work request (32 bytes) --------------------------------------------------
constexpr std::size_t kRecvWqeSize = 32;
namespace rqe_off {
constexpr std::size_t wr_id = 0x00;
constexpr std::size_t addr = 0x08;
constexpr std::size_t length = 0x10;
constexpr std::size_t stag = 0x14;
}  // namespace rqe_off

// ---- DMA scatter/gather element (16 bytes) ----------------------------------------------------
// A list or ring of these in host memory describes the host side of one DMA transfer (the NIC side
// is contiguous); the DMA engine fetches them itself (models/dma). Elements are processed in order
// until `count` of them or one with the `last` flag; a zero length is skipped.
constexpr std::size_t kSgeSize = 16;
namespace sge_off {
constexpr std::size_t addr = 0x00;    // u64 host address
constexpr std::size_t length = 0x08;  // u32 bytes
constexpr std::size_t flags = 0x0c;   // u32 sge_flags
}  // namespace sge_off
namespace sge_flags {
constexpr std::uint32_t last = 1u << 0;
}  // namespace sge_flags

// ---- Completion queue entry (32 bytes) ------------------------------------------------------
// The device writes entries in ring order; bit 31 of `owner` is the phase: 1 on the first pass
// over the ring, 0 on the second, and so on, so the driver sees new entries without a register read.
constexpr std::size_t kCqeSize = 32;
namespace cqe_off {
constexpr std::size_t wr_id = 0x00;     // u64
constexpr std::size_t byte_len = 0x08;  // u32
constexpr std::size_t opcode = 0x0c;    // u8 wr_opcode (or cqe_opcode for receives)
constexpr std::size_t status = 0x0d;    // u8 cqe_status
constexpr std::size_t qpn = 0x0e;       // u16
constexpr std::size_t wqe_index = 0x10; // u32 SQ/RQ index of the completed WQE (its last slot)
// Receive completions: the Immediate Data (cqe_flags::imm); Send with Invalidate: the invalidated
// STag in the low 32 bits (cqe_flags::invalidated); QP error entries: the Terminate (query_qp layout).
constexpr std::size_t imm_data = 0x14;  // u64
constexpr std::size_t owner = 0x1c;     // u32: bit 31 phase, bits 15:8 cqe_flags, bit 0 = 1 for receives
constexpr unsigned flags_shift = 8;
}  // namespace cqe_off
namespace cqe_flags {
constexpr std::uint8_t imm = 1u << 0;          // imm_data holds Immediate Data
constexpr std::uint8_t invalidated = 1u << 1;  // imm_data holds the STag a Send with Invalidate invalidated
constexpr std::uint8_t solicited = 1u << 2;    // the message asked for a Solicited Event
}  // namespace cqe_flags
// The opcode of a QP error entry: written to the QP's receive CQ when the QP leaves RTS because of a
// Terminate (sent or received) or a fatal stream error; status tells the class, imm_data the Terminate.
constexpr std::uint8_t kCqeOpcodeQpError = 0xfe;

enum class cqe_status : std::uint8_t {
    success = 0,
    local_length_error = 1,
    local_protection_error = 2,
    remote_access_error = 3,
    remote_operation_error = 4,
    transport_error = 5,
    flushed = 6,
    remote_invalid_request = 7,  // the peer reported a DDP untagged-buffer error (no buffer, MSN, QN, length)
    bad_opcode = 8,              // the device does not take this work-request opcode
};
const char* to_string(cqe_status s);

}  // namespace rnic::regmap
