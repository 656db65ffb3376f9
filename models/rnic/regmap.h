// The RNIC's device interface, declared once: BAR0 registers, doorbells, MSI-X vectors, the layout
// of descriptors and completions in host memory, firmware commands and status codes.
// Used by the device model (models/rnic), the driver (driver/) and the firmware (firmware/).
// Everything here is also data: the X-macro lists and the k*Fields / k*Bits / k*Values tables below
// are what tools/devicedoc (rnic-devicedoc) turns into docs/device.md, and what its test checks for
// consistency (fields inside their structures, no overlaps, unique values). After changing this file:
//   build/bin/rnic-devicedoc -o docs/device.md
// No SystemC dependency.
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

// A bit field of a 32-bit word (a register, the CQE owner word, the query_qp result).
struct bitfield_desc {
    const char* name;
    unsigned lsb;
    unsigned width;
    const char* description;
};

// A field of a little-endian structure in host memory. `overlays` names the field whose bytes this
// one shares on purpose (same offset and size, used by other opcodes), or is "".
struct field_desc {
    const char* name;
    std::size_t offset;
    std::size_t size;
    const char* overlays;
    const char* description;
};

// A named value of an enumeration or a flag (value = the flag's mask).
struct value_desc {
    const char* name;
    std::uint32_t value;
    const char* description;
};

// X(name, offset, reset, access, description)
#define RNIC_REGISTERS(X)                                                                                             \
    X(ID, 0x0000, 0x1a4e0001, ro, "Identification: vendor 0x1a4e (upper 16 bits), device 0x0001")                     \
    X(VERSION, 0x0004, 0x00010000, ro, "Device interface version major.minor (16.16)")                                \
    X(CTRL, 0x0008, 0x00000000, rw, "Control: bit 0 ENABLE; bit 1 RESET (self-clearing)")                             \
    X(STATUS, 0x000c, 0x00000000, ro, "Status: bit 0 READY (firmware running); bit 1 FATAL")                          \
    X(INTR_CAUSE, 0x0010, 0x00000000, rw1c, "Interrupt causes seen (bit = MSI-X vector), write 1 to clear")           \
    X(CMDQ_BASE_LO, 0x0020, 0x00000000, rw, "Firmware command ring base address, low 32 bits (64-byte aligned)")      \
    X(CMDQ_BASE_HI, 0x0024, 0x00000000, rw, "Firmware command ring base address, high 32 bits")                       \
    X(CMDQ_ENTRIES, 0x0028, 0x00000000, rw, "Command ring entries (power of two, 2..4096)")                           \
    X(CMDQ_PROD, 0x002c, 0x00000000, wo, "Command ring doorbell: producer index (free-running mod 2^32)")             \
    X(CMDQ_CONS, 0x0030, 0x00000000, ro, "Command ring consumer index (commands fetched by firmware)")                \
    X(MAC_LO, 0x0040, 0x00000000, rw, "Station MAC address bytes 2..5 (byte 2 in bits 31:24)")                        \
    X(MAC_HI, 0x0044, 0x00000000, rw, "Station MAC address bytes 0..1 (byte 0 in bits 15:8)")                         \
    X(IPV4_ADDR, 0x0048, 0x00000000, rw, "Station IPv4 address")                                                      \
    X(CAP_MAX_QP, 0x0050, 0x00000040, ro,                                                                             \
      "Number of queue pairs supported (the configured count; reset value: default)")                                 \
    X(CAP_MAX_CQ, 0x0054, 0x00000040, ro, "Number of completion queues supported (the configured count)")             \
    X(CAP_MAX_MR, 0x0058, 0x00000400, ro, "Number of memory regions supported (the configured count)")                \
    X(CAP_CTX_BYTES, 0x005c, 0x00000000, ro,                                                                          \
      "Bytes of host memory the device needs for its QP and STag context tables (0: it keeps them on chip)")          \
    X(CTX_BASE_LO, 0x0060, 0x00000000, rw, "Context tables' host address, low 32 bits (4 KiB aligned)")               \
    X(CTX_BASE_HI, 0x0064, 0x00000000, rw,                                                                            \
      "Context tables' host address, high 32 bits; writing it hands the address to the device")                       \
    X(ASYNC_EVENT, 0x0068, 0x00000000, ro,                                                                            \
      "Oldest asynchronous event not yet acknowledged: bits 31:24 its type (1 cq_error: a CQ overran and lost a "     \
      "completion, as verbs IBV_EVENT_CQ_ERR; the QPs whose completions it lost are in Error), bits 23:0 the "        \
      "resource it names (the CQ number); 0: none. Events wait in order, one per CQ (its first overrun); CTRL.RESET " \
      "clears them")                                                                                                  \
    X(ASYNC_EVENT_ACK, 0x006c, 0x00000000, wo,                                                                        \
      "Write any value: the oldest asynchronous event is removed and ASYNC_EVENT shows the next")

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

// Helpers that turn the X-macro lists below into constants and tables.
#define RNIC_BIT_CONST(n, bit, d) constexpr std::uint32_t n = 1u << (bit);
#define RNIC_BIT_CONST_U8(n, bit, d) constexpr std::uint8_t n = 1u << (bit);
#define RNIC_BIT_DESC(n, bit, d) {#n, bit, 1, d},
#define RNIC_FLAG_VALUE(n, bit, d) {#n, 1u << (bit), d},
#define RNIC_FIELD_CONST(n, o, s, ov, d) constexpr std::size_t n = o;
#define RNIC_FIELD_CONST_U32(n, o, s, ov, d) constexpr std::uint32_t n = o;
#define RNIC_FIELD_DESC(n, o, s, ov, d) {#n, o, s, ov, d},

// CTRL and STATUS bits. X(name, bit, description)
#define RNIC_CTRL_BITS(X)                                                                                    \
    X(enable, 0, "ENABLE: start the firmware; STATUS.READY follows once it runs")                            \
    X(reset, 1,                                                                                              \
      "RESET: return the device to its reset state (self-clearing, reads back 0): the registers the driver " \
      "programs and CMDQ_CONS to their reset values; every QP (its TCP connection closed), CQ and memory "   \
      "region removed without anything more written to host memory; the firmware's command index back to "   \
      "ring slot 0, the connections it held closed; new objects are numbered from 0 again. STATUS.READY "    \
      "stays set (the firmware keeps running); listening ports stay open. A device with nothing to reset "   \
      "is left as it is")
#define RNIC_STATUS_BITS(X)                                       \
    X(ready, 0, "READY: the firmware runs and takes commands")    \
    X(fatal, 1, "FATAL: the device stopped on an internal error") \
    X(ctx_area, 2, "CTX_AREA: the device keeps its contexts in host memory: allocate CAP_CTX_BYTES and write CTX_BASE")

namespace ctrl {
RNIC_CTRL_BITS(RNIC_BIT_CONST)
}  // namespace ctrl
namespace status {
RNIC_STATUS_BITS(RNIC_BIT_CONST)
}  // namespace status
constexpr bitfield_desc kCtrlBits[] = {RNIC_CTRL_BITS(RNIC_BIT_DESC)};
constexpr bitfield_desc kStatusBits[] = {RNIC_STATUS_BITS(RNIC_BIT_DESC)};

// BAR0 size and doorbell pages.
constexpr std::uint32_t kBar0Size = 0x20000;
// Queue-pair doorbells: SQ producer index at QP_DB_BASE + 16*qpn, RQ producer index at +4.
constexpr std::uint32_t kQpDoorbellBase = 0x1000;
constexpr std::uint32_t kQpDoorbellStride = 16;
constexpr std::uint32_t kSqDoorbell = 0x0;
constexpr std::uint32_t kRqDoorbell = 0x4;
// QPs beyond the first window's room (1792) ring in a second window above the MSI-X pages, up to 4096.
constexpr std::uint32_t kQpDoorbellHighBase = 0x10000;
constexpr std::uint32_t kQpDoorbellLowCount = (0x8000 - kQpDoorbellBase) / kQpDoorbellStride;
constexpr std::uint32_t kMaxQps = 4096;
// BAR0 offset of QP `qpn`'s doorbell slot (add kSqDoorbell or kRqDoorbell).
constexpr std::uint32_t qp_doorbell(std::uint32_t qpn) {
    return qpn < kQpDoorbellLowCount ? kQpDoorbellBase + qpn * kQpDoorbellStride
                                     : kQpDoorbellHighBase + (qpn - kQpDoorbellLowCount) * kQpDoorbellStride;
}
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
constexpr std::uint32_t kMsixPageSize = 0x1000;  // the page each of the table and the PBA owns
// X(name, offset, size, overlays, description)
#define RNIC_MSIX_ENTRY_FIELDS(X)                                                 \
    X(addr_lo, 0x0, 4, "", "Message Address [31:2] (bits 1:0 zero)")              \
    X(addr_hi, 0x4, 4, "", "Message Upper Address")                               \
    X(data, 0x8, 4, "", "Message Data: the driver writes the vector number here") \
    X(control, 0xc, 4, "", "Vector Control: bit 0 Mask (set at reset)")
namespace msix_off {
RNIC_MSIX_ENTRY_FIELDS(RNIC_FIELD_CONST_U32)
}  // namespace msix_off
#define RNIC_MSIX_CTRL_BITS(X) \
    X(mask, 0, "Mask: the vector raises no message; a message due is kept pending in the PBA")
namespace msix_ctrl {
RNIC_MSIX_CTRL_BITS(RNIC_BIT_CONST)
}  // namespace msix_ctrl
constexpr field_desc kMsixEntryFields[] = {RNIC_MSIX_ENTRY_FIELDS(RNIC_FIELD_DESC)};
constexpr bitfield_desc kMsixControlBits[] = {RNIC_MSIX_CTRL_BITS(RNIC_BIT_DESC)};

// What BAR0 decodes where (the register file, the doorbell windows, the endpoint's MSI-X pages).
struct bar_region {
    const char* name;
    std::uint32_t offset;
    std::uint32_t size;
    const char* description;
};
constexpr bar_region kBar0Regions[] = {
    {"registers", 0x0000, kQpDoorbellBase,
     "The registers below; other offsets in the window read as zero and ignore writes"},
    {"QP doorbells", kQpDoorbellBase, kCqDoorbellBase - kQpDoorbellBase,
     "One 16-byte slot per QP: SQ producer index at +0x0, RQ producer index at +0x4 (write-only)"},
    {"CQ doorbells", kCqDoorbellBase, kMsixTableOffset - kCqDoorbellBase,
     "One 8-byte slot per CQ: consumer index at +0x0; any write to +0x4 arms the CQ for one interrupt (write-only)"},
    {"MSI-X table", kMsixTableOffset, kMsixPageSize, "kMsixVectors entries of 16 bytes (host-bus endpoint)"},
    {"MSI-X PBA", kMsixPbaOffset, kMsixPageSize, "Pending bits, one per vector, in 64-bit words (read-only)"},
    {"QP doorbells (high)", kQpDoorbellHighBase, (kMaxQps - kQpDoorbellLowCount) * kQpDoorbellStride,
     "QPs 1792..4095: QP n's 16-byte slot at + 16*(n - 1792), laid out as in the first QP window (write-only)"},
};

// ---- Firmware command ring (64-byte entries) ------------------------------------------------
constexpr std::size_t kCommandSize = 64;
// X(name, offset, size, overlays, description)
#define RNIC_COMMAND_FIELDS(X)                                                                               \
    X(opcode, 0x00, 1, "", "u8 command (below)")                                                             \
    X(cookie, 0x04, 4, "", "u32, echoed")                                                                    \
    X(param, 0x08, 48, "", "6 x u64 parameters p0..p5, little-endian")                                       \
    X(status, 0x38, 4, "", "u32 cmd_status, written by the device (the driver writes kStatusPending first)") \
    X(result, 0x3c, 4, "", "u32, written by the device")
namespace cmd_off {
RNIC_COMMAND_FIELDS(RNIC_FIELD_CONST)
}  // namespace cmd_off
constexpr field_desc kCommandFields[] = {RNIC_COMMAND_FIELDS(RNIC_FIELD_DESC)};

// X(name, opcode, parameters, result, description)
#define RNIC_COMMANDS(X)                                                                                             \
    X(nop, 0, "", "", "Does nothing; completes with ok")                                                             \
    X(create_cq, 1, "p0 ring address; p1 entries (power of 2); p2 MSI-X vector", "cqn",                              \
      "Creates a completion queue on a ring of 32-byte CQEs")                                                        \
    X(create_qp, 2,                                                                                                  \
      "p0 SQ address; p1 SQ entries; p2 RQ address; p3 RQ entries; p4 send cqn | recv cqn << 32; "                   \
      "p5 protection domain",                                                                                        \
      "qpn", "Creates a queue pair in state idle; entries are powers of 2")                                          \
    X(reg_mr, 3,                                                                                                     \
      "p0 host address; p1 length; p2 access flags | pd << 32; p3 tagged offset of the first byte "                  \
      "(VA-based: = p0; zero-based: 0)",                                                                             \
      "STag", "Registers a memory region")                                                                           \
    X(dereg_mr, 4, "p0 STag", "", "Invalidates and frees a memory region")                                           \
    X(connect, 5,                                                                                                    \
      "p0 qpn; p1 remote IPv4 | remote port << 32; p2 local port; p3 IRD | ORD << 16 wanted (0: the "                \
      "firmware's policy) | 1 << 30 peer-to-peer (kConnectPeerToPeer: an explicit RTR, RFC 6581 §9.2, "             \
      "needs MPA revision 2) | 1 << 31 private data (kConnectPrivateData, below); p4 host address and p5 "           \
      "length of a buffer for the private data of a rejecting MPA Reply (0: none)",                                  \
      "connection (ok); private-data bytes written at p4 (connection_refused after an MPA Reply with R = 1)",        \
      "Active open: TCP connection and MPA Request; completes when MPA negotiation ends (RTS) or fails")             \
    X(accept, 6,                                                                                                     \
      "p0 qpn; p1 local port; p2 peer handle from next_peer (0: the oldest waiting peer, or the next); "             \
      "p3 IRD | ORD << 16 as for connect; p4 host address and p5 length (at most kMaxConnPrivateData) of "           \
      "the private data of the MPA Reply",                                                                           \
      "",                                                                                                            \
      "Passive open: waits for a peer's connection on the port (or takes the peer p2 names: bad_handle "             \
      "if it is no longer waiting), answers its MPA Request; the QP sends nothing before the peer's first "          \
      "FPDU (its RTR in the peer-to-peer model, RFC 5044 §7.1.2 rule 4)")                                            \
    X(destroy_qp, 7, "p0 qpn", "", "The QP must be idle or in Error (its connection closed first)")                  \
    X(destroy_cq, 8, "p0 cqn", "", "No live QP may still use the CQ")                                                \
    X(modify_qp, 9, "p0 qpn; p1 target qp_state", "",                                                                \
      "error (abortive: flush, close the stream) or closing (graceful: the stream closes once sent work "            \
      "is acknowledged)")                                                                                            \
    X(query_qp, 10, "p0 qpn", "query_qp result word",                                                                \
      "qp_state | terminate (layer<<28 | etype<<24 | code<<16) of the last Terminate sent or received "              \
      "| terminate_valid << 14 (0: none) | terminate_received << 15")                                                \
    X(reject, 11,                                                                                                    \
      "p1 local port; p2 peer handle from next_peer (0: the next peer, as accept); p4 host "                         \
      "address and p5 length (at most kMaxRejectPrivateData) of the private data",                                   \
      "connection",                                                                                                  \
      "Passive refusal: waits for the next peer on the port (as accept does, listen backlog first; or takes "        \
      "the peer p2 names: bad_handle if it is no longer waiting), "                                                  \
      "answers its MPA Request with an MPA Reply with R = 1 carrying the private data (RFC 5044 §7.1.5, "           \
      "RFC 6581), then closes the TCP connection; completes once the Reply is sent")                                 \
    X(query_stats, 12, "p0 host address (8-byte aligned); p1 buffer bytes (at least 8 x the counters)",              \
      "number of counters written",                                                                                  \
      "Writes the device counters as u64 little-endian, in this order: wqes, cqes, terminates_sent, "                \
      "terminates_received, placed_bytes, tcp_retransmitted_bytes, commands, connections_established, "              \
      "connections_failed, connections_rejected (kDeviceCounters)")                                                  \
    X(listen, 13, "p1 local port", "",                                                                               \
      "Opens the port: peers' connections are taken (TCP handshake, MPA Request held) into a backlog that "          \
      "the next accept or reject on the port serves, oldest first")                                                  \
    X(reg_mr_pages, 14,                                                                                              \
      "p0 address of the first byte as local work requests name it (the region's virtual address); "                 \
      "p1 length; p2 access flags | pd << 32; p3 tagged offset of the first byte (as for reg_mr); p4 host "          \
      "address of the page list (8-byte aligned): u64 little-endian host addresses of the pages, in order, "         \
      "each aligned to the page size; p5 page count (1..kMaxPageListEntries = 4096, bits 0-23) | log2 page size "    \
      "(kMinPageShift..kMaxPageShift = 12..21: 4 KiB to 2 MiB, bits 24-31) | offset of the first byte in the first " \
      "page << 32",                                                                                                  \
      "STag",                                                                                                        \
      "Registers a memory region over pages that need not be contiguous in host memory (pinned user "                \
      "pages). The firmware reads the page list once, into the device's page-list memory "                           \
      "(kPageListPoolEntries = 65536 entries shared by all regions); the list may be freed when the command "        \
      "completes. The region's bytes must lie within the listed pages; with remote_atomic, the first "               \
      "byte's offset must equal the tagged offset of the first byte modulo 8, so that an 8-byte-aligned "            \
      "atomic target never crosses a page. A bad count, page size, offset, list address or unaligned page "          \
      "is bad_parameter; a full page-list memory is no_resources")                                                   \
    X(next_peer, 15,                                                                                                 \
      "p1 local port (0: any); p4 host address and p5 length (at least kPeerRecordSize) of a buffer: the "           \
      "peer_record, then the MPA Request's private data (cut to the buffer; pd_length is the whole)",                \
      "1: a peer was written; 0: none waits",                                                                        \
      "Reports the oldest listen-backlog peer whose MPA Request has arrived and that was not reported "              \
      "before: its handle (for accept or reject p2), addresses and the Request (revision, flags, IRD/ORD "           \
      "of RFC 6581, private data). The peer keeps waiting until an accept or reject names it or it leaves. "         \
      "A buffer that is too small or not writable is bad_parameter")                                                 \
    X(unlisten, 16, "p1 local port", "peers reset",                                                                  \
      "Closes the port (listen, or an accept or reject that waited on it, opened it): from now on a "                \
      "peer's SYN to it is answered with a reset (RFC 9293 §3.10.7.1), half-open handshakes on it are "             \
      "reset, so is every listen-backlog peer no accept or reject took (its MPA Request arrived or not; "            \
      "the result counts them), and accepts or rejects still waiting for a peer on the port complete "               \
      "with not_listening. Connections an accept or reject already took, and QPs' connections, are not "             \
      "touched. A port that is not listening is not_listening; port 0 is bad_parameter")
// Device counters, in the order query_stats writes them (u64 little-endian each), since reset.
// X(name, index, description)
#define RNIC_DEVICE_COUNTERS(X)                                                                            \
    X(wqes, 0, "Work requests the RDMA engine fetched from send queues")                                   \
    X(cqes, 1, "Completion-queue entries written")                                                         \
    X(terminates_sent, 2, "Terminate messages sent")                                                       \
    X(terminates_received, 3, "Terminate messages received")                                               \
    X(placed_bytes, 4, "Payload bytes placed in host memory (Writes, Sends, Read Responses)")              \
    X(tcp_retransmitted_bytes, 5, "TCP payload bytes sent again (from NIC buffer or refetched from host)") \
    X(commands, 6, "Firmware commands executed (this one not yet counted)")                                \
    X(connections_established, 7, "Connections that reached RTS")                                          \
    X(connections_failed, 8, "Connections whose set-up failed (refused, timed out, bad MPA)")              \
    X(connections_rejected, 9, "MPA Requests this side refused with the reject command")
enum class device_counter : std::uint8_t {
#define RNIC_DEVICE_COUNTER_ENUM(n, v, d) n = v,
    RNIC_DEVICE_COUNTERS(RNIC_DEVICE_COUNTER_ENUM)
#undef RNIC_DEVICE_COUNTER_ENUM
};
constexpr value_desc kDeviceCounters[] = {
#define RNIC_DEVICE_COUNTER_DESC(n, v, d) {#n, v, d},
    RNIC_DEVICE_COUNTERS(RNIC_DEVICE_COUNTER_DESC)
#undef RNIC_DEVICE_COUNTER_DESC
};
constexpr std::size_t kDeviceCounterCount = sizeof kDeviceCounters / sizeof kDeviceCounters[0];

// Page-list memory regions (reg_mr_pages): pages per region at most, the device's page-list memory
// (entries shared by all regions, 512 KiB of SRAM), and the page sizes taken (4 KiB to 2 MiB).
constexpr std::uint32_t kMaxPageListEntries = 4096;
constexpr std::uint32_t kPageListPoolEntries = 65536;
constexpr unsigned kMinPageShift = 12;
constexpr unsigned kMaxPageShift = 21;

// Private data of a rejecting MPA Reply (reject p5; RFC 5044 §7.1.4 allows 512 bytes, less the
// RFC 6581 IRD/ORD word under revision 2).
constexpr std::uint32_t kMaxRejectPrivateData = 256;

// connect p3 bit 30: the peer-to-peer model with an explicit ready-to-receive message (RFC 6581
// §9.2; needs MPA revision 2, else bad_parameter). IRD and ORD are 14 bits each (bits 0-13 and
// 16-29), so no valid ORD reaches this bit; the driver refuses larger values.
constexpr std::uint64_t kConnectPeerToPeer = std::uint64_t{1} << 30;

// ---- The passive side for connection managers (next_peer, accept/reject by handle, private data) ----
// connect p3 bit 31: the MPA Request carries private data (RFC 5044 §7.1, after the RFC 6581 IRD/ORD
// word in revision 2): p5 bits 32-47 give its length (at most kMaxConnPrivateData), read from p4
// before the Request is sent. With the bit set, the Reply's private data (accepting or rejecting) is
// written at p4 (at most p5 bits 0-31) and the device replaces the command's p5 with the Reply's
// private-data length before it writes the status. Without it connect behaves as before.
constexpr std::uint64_t kConnectPrivateData = std::uint64_t{1} << 31;
// Private data of an MPA Request or accepting Reply: 512 bytes (RFC 5044 §7.1, PD_Length) less the
// 4-byte IRD/ORD word of revision 2 (RFC 6581 §9.1).
constexpr std::uint32_t kMaxConnPrivateData = 508;
// next_peer's record of a waiting peer (addresses as connect p1 takes them: IPv4 as a number).
constexpr std::size_t kPeerRecordSize = 32;
// X(name, offset, size, overlays, description)
#define RNIC_PEER_RECORD_FIELDS(X)                                                                     \
    X(handle, 0x00, 4, "", "u32 names the peer for accept or reject p2 (never 0)")                     \
    X(local_ip, 0x04, 4, "", "u32 this device's IPv4 address")                                         \
    X(remote_ip, 0x08, 4, "", "u32 the peer's IPv4 address")                                           \
    X(local_port, 0x0c, 2, "", "u16 the listening port")                                               \
    X(remote_port, 0x0e, 2, "", "u16 the peer's port")                                                 \
    X(revision, 0x10, 1, "", "u8 the MPA Request's revision")                                          \
    X(flags, 0x11, 1, "", "u8 peer_flags of the Request")                                              \
    X(pd_length, 0x12, 2, "", "u16 length of the Request's private data (without the RFC 6581 word)")  \
    X(ird, 0x14, 2, "", "u16 the Request's IRD (revision 2 with the enhanced flag; 0x3fff: no limit)") \
    X(ord, 0x16, 2, "", "u16 the Request's ORD")
namespace peer_off {
RNIC_PEER_RECORD_FIELDS(RNIC_FIELD_CONST)
}  // namespace peer_off
constexpr field_desc kPeerRecordFields[] = {RNIC_PEER_RECORD_FIELDS(RNIC_FIELD_DESC)};
// X(name, mask, description)
#define RNIC_PEER_FLAGS(X)                                                                      \
    X(marker, 0x1, "M: the peer wants markers (RFC 5044 §7.1.1)")                               \
    X(crc, 0x2, "C: the peer wants CRCs")                                                       \
    X(enhanced, 0x4, "revision 2 with the IRD/ORD word (RFC 6581 §9.1); ird and ord are valid") \
    X(peer_to_peer, 0x8, "A: the peer asks for the peer-to-peer model (RFC 6581 §9.2)")
namespace peer_flags {
#define RNIC_PEER_FLAG_CONST(n, v, d) constexpr std::uint8_t n = v;
RNIC_PEER_FLAGS(RNIC_PEER_FLAG_CONST)
#undef RNIC_PEER_FLAG_CONST
}  // namespace peer_flags
constexpr value_desc kPeerFlags[] = {
#define RNIC_PEER_FLAG_DESC(n, v, d) {#n, v, d},
    RNIC_PEER_FLAGS(RNIC_PEER_FLAG_DESC)
#undef RNIC_PEER_FLAG_DESC
};
// ---- end of the passive side's declarations ----

struct command_desc {
    const char* name;
    std::uint8_t opcode;
    const char* params;
    const char* result;
    const char* description;
};

enum class command : std::uint8_t {
#define RNIC_COMMAND_ENUM(n, v, p, r, d) n = v,
    RNIC_COMMANDS(RNIC_COMMAND_ENUM)
#undef RNIC_COMMAND_ENUM
};
constexpr command_desc kCommands[] = {
#define RNIC_COMMAND_DESC(n, v, p, r, d) {#n, v, p, r, d},
    RNIC_COMMANDS(RNIC_COMMAND_DESC)
#undef RNIC_COMMAND_DESC
};

// Queue-pair states (the RDMAC verbs model behind RFC 5040 §6: Idle until the stream is in RDMA
// mode, RTS while it is, Closing during a graceful close, Terminate once a Terminate has been sent
// or received, Error after that and after any fatal error). X(name, value, text, description)
#define RNIC_QP_STATES(X)                                                                   \
    X(idle, 0, "idle", "Created, or closed gracefully: not connected")                      \
    X(rts, 1, "rts", "Ready to send: the stream is in RDMA mode")                           \
    X(closing, 2, "closing", "Graceful close in progress: sent work is being acknowledged") \
    X(terminate, 3, "terminate", "A Terminate has been sent or received")                   \
    X(error, 4, "error", "After a Terminate, a fatal stream error or modify_qp to error; work flushes")
enum class qp_state : std::uint8_t {
#define RNIC_QP_STATE_ENUM(n, v, t, d) n = v,
    RNIC_QP_STATES(RNIC_QP_STATE_ENUM)
#undef RNIC_QP_STATE_ENUM
};
constexpr value_desc kQpStates[] = {
#define RNIC_QP_STATE_DESC(n, v, t, d) {#n, v, d},
    RNIC_QP_STATES(RNIC_QP_STATE_DESC)
#undef RNIC_QP_STATE_DESC
};
const char* to_string(qp_state s);
namespace query_qp_result {
constexpr std::uint32_t kStateMask = 0x7;
// Set with a Terminate: RDMAP's Local Catastrophic Error is layer 0, type 0, code 0 (RFC 5040 §7.2),
// so the three fields alone cannot say whether there was one.
constexpr std::uint32_t kTerminateValid = 1u << 14;
constexpr std::uint32_t kTerminateReceived = 1u << 15;
constexpr unsigned kCodeShift = 16, kEtypeShift = 24, kLayerShift = 28;
}  // namespace query_qp_result
// The query_qp result word (also the imm_data of a QP error CQE), from the constants above.
constexpr bitfield_desc kQueryQpResultBits[] = {
    {"state", 0, 3, "qp_state"},
    {"terminate_valid", 14, 1,
     "1: a Terminate was sent or received (layer, etype, code and terminate_received say which); 0: none"},
    {"terminate_received", 15, 1, "1: the Terminate came from the peer; 0: this side sent it"},
    {"code", query_qp_result::kCodeShift, query_qp_result::kEtypeShift - query_qp_result::kCodeShift,
     "Terminate error code (RFC 5040 §4.8 / RFC 5041 §7.2)"},
    {"etype", query_qp_result::kEtypeShift, query_qp_result::kLayerShift - query_qp_result::kEtypeShift,
     "Terminate error type"},
    {"layer", query_qp_result::kLayerShift, 32 - query_qp_result::kLayerShift,
     "Terminate layer: 0 RDMAP, 1 DDP, 2 LLP"},
};

// Written by the driver before ringing the doorbell, replaced by the device on completion.
constexpr std::uint32_t kStatusPending = 0xffffffffu;

// X(name, value, text, description)
#define RNIC_CMD_STATUSES(X)                                                                                          \
    X(ok, 0, "ok", "Done; result holds the command's result")                                                         \
    X(bad_opcode, 1, "bad opcode", "Unknown command opcode")                                                          \
    X(bad_parameter, 2, "bad parameter", "A parameter is out of range (ring size, alignment, vector, state)")         \
    X(no_resources, 3, "no resources", "No free QP, CQ, STag or connection")                                          \
    X(bad_handle, 4, "bad handle", "The qpn, cqn or STag names nothing")                                              \
    X(bad_state, 5, "bad state", "The object is in a state that does not allow the command")                          \
    X(connection_refused, 6, "connection refused", "The peer refused the TCP connection (RST)")                       \
    X(connection_timeout, 7, "connection timeout", "No TCP connection or MPA answer in time")                         \
    X(mpa_negotiation_failed, 8, "MPA negotiation failed", "The MPA Request/Reply exchange was rejected")             \
    X(not_listening, 9, "not listening",                                                                              \
      "unlisten, or an accept or reject waiting on the port: the port does not listen")                               \
    X(no_buffer_memory, 10, "no buffer memory",                                                                       \
      "The connection's send region could not be reserved in NIC buffer memory (rnic.buffer.send_regions=reserved); " \
      "the peer's SYN was answered with a reset")
enum class cmd_status : std::uint32_t {
#define RNIC_CMD_STATUS_ENUM(n, v, t, d) n = v,
    RNIC_CMD_STATUSES(RNIC_CMD_STATUS_ENUM)
#undef RNIC_CMD_STATUS_ENUM
};
constexpr value_desc kCmdStatuses[] = {
#define RNIC_CMD_STATUS_DESC(n, v, t, d) {#n, v, d},
    RNIC_CMD_STATUSES(RNIC_CMD_STATUS_DESC)
#undef RNIC_CMD_STATUS_DESC
};
const char* to_string(cmd_status s);

// Memory-region access flags (RFC 5040 §2.x / verbs). X(name, bit, description)
#define RNIC_MR_ACCESS(X)                                                                                          \
    X(local_write, 0, "The device may write the region for local work (receives, Read responses, atomic results)") \
    X(remote_write, 1, "A peer may RDMA Write into the region")                                                    \
    X(remote_read, 2, "A peer may RDMA Read from the region")                                                      \
    X(remote_atomic, 3, "A peer may run atomics (FetchAdd, CmpSwap) on the region")
namespace mr_access {
RNIC_MR_ACCESS(RNIC_BIT_CONST)
}  // namespace mr_access
constexpr value_desc kMrAccessFlags[] = {RNIC_MR_ACCESS(RNIC_FLAG_VALUE)};

// ---- Send queue work request (64 bytes) -----------------------------------------------------
constexpr std::size_t kSendWqeSize = 64;
// X(name, offset, size, overlays, description)
// Immediate Data and RDMA Write with Immediate (RFC 7306 §6): imm_data holds the 8 bytes of Immediate
// Data. Atomics (RFC 7306): the 8-byte original value lands at local_addr (length 8); the target is
// remote_stag/remote_to (64-bit aligned). FetchAdd adds `operand` (add mask 0: a plain 64-bit add);
// CmpSwap swaps in `operand` if the target equals `compare` (masks all ones).
#define RNIC_SQE_FIELDS(X)                                                                                \
    X(opcode, 0x00, 1, "", "u8 wr_opcode")                                                                \
    X(flags, 0x01, 1, "", "u8 wr_flags")                                                                  \
    X(wr_id, 0x08, 8, "", "u64, returned in the completion")                                              \
    X(local_addr, 0x10, 8, "", "u64 host address of the source data (Read, atomics: of the destination)") \
    X(length, 0x18, 4, "", "u32 bytes")                                                                   \
    X(local_stag, 0x1c, 4, "", "u32 STag of the local region holding the data")                           \
    X(remote_to, 0x20, 8, "", "u64 tagged offset at the peer")                                            \
    X(remote_stag, 0x28, 4, "", "u32 STag at the peer")                                                   \
    X(imm_or_inv, 0x2c, 4, "", "u32 invalidate STag (Send with Invalidate, local invalidate)")            \
    X(imm_data, 0x30, 8, "", "u64 Immediate Data (immediate_data, rdma_write_with_imm)")                  \
    X(operand, 0x30, 8, "imm_data", "u64 add data (FetchAdd) / swap data (CmpSwap)")                      \
    X(compare, 0x38, 8, "", "u64 compare data (CmpSwap)")
namespace sqe_off {
RNIC_SQE_FIELDS(RNIC_FIELD_CONST)
}  // namespace sqe_off
constexpr field_desc kSendWqeFields[] = {RNIC_SQE_FIELDS(RNIC_FIELD_DESC)};

// Asynchronous event types in ASYNC_EVENT bits 31:24 (the verbs' affiliated asynchronous events).
constexpr std::uint32_t kAsyncEventTypeShift = 24;
constexpr std::uint32_t kAsyncEventResourceMask = 0x00ffffff;
enum class async_event : std::uint8_t {
    none = 0,
    // A CQ overran: a completion was lost (verbs IBV_EVENT_CQ_ERR); the QPs whose completions it lost
    // went to Error. Raised once per CQ, at its first lost completion.
    cq_error = 1,
};

// X(name, value, description)
#define RNIC_WR_OPCODES(X)                                                                                \
    X(rdma_write, 0, "RDMA Write of local_addr/length to remote_stag/remote_to")                          \
    X(send, 1, "Send into the peer's next receive (imm_or_inv != 0: Send with Invalidate)")               \
    X(rdma_read, 2, "RDMA Read of length bytes at remote_stag/remote_to into local_addr")                 \
    X(atomic_fetch_add, 3, "RFC 7306 FetchAdd; the original lands at local_addr")                         \
    X(atomic_compare_swap, 4, "RFC 7306 CmpSwap; the original lands at local_addr")                       \
    X(immediate_data, 5, "RFC 7306 §6: 8 bytes of Immediate Data, consumes one receive at the peer")      \
    X(rdma_write_with_imm, 6, "An RDMA Write followed by Immediate Data (RFC 7306 §6), one work request") \
    X(local_invalidate, 7, "Invalidates local STag imm_or_inv in send-queue order (RFC 5040 §2.2)")       \
    X(raw_ulpdu, 0x7f,                                                                                    \
      "Test mode only (rnic.rdma.raw_ulpdu_wqes): sends the ULPDU held at local_addr/length verbatim, "   \
      "for driver bring-up and for tests that need a peer to misbehave on the wire")                      \
    X(atomic_masks, 0x7e, "Second slot of a masked atomic (not a work request of its own)")               \
    X(raw_stream, 0x7d,                                                                                   \
      "Test mode only (rnic.rdma.raw_ulpdu_wqes): puts the bytes at local_addr/length verbatim into the " \
      "connection's TCP stream, unframed, as one TCP segment (the peer's own FPDUs, cut anywhere)")
enum class wr_opcode : std::uint8_t {
#define RNIC_WR_OPCODE_ENUM(n, v, d) n = v,
    RNIC_WR_OPCODES(RNIC_WR_OPCODE_ENUM)
#undef RNIC_WR_OPCODE_ENUM
};
constexpr value_desc kWrOpcodes[] = {
#define RNIC_WR_OPCODE_DESC(n, v, d) {#n, v, d},
    RNIC_WR_OPCODES(RNIC_WR_OPCODE_DESC)
#undef RNIC_WR_OPCODE_DESC
};
// X(name, bit, description)
#define RNIC_WR_FLAGS(X)                                                                                     \
    X(signaled, 0, "Write a completion for this work request")                                               \
    X(solicited, 1, "Ask the peer for a Solicited Event (Send, Immediate Data)")                             \
    X(masked, 2,                                                                                             \
      "Masked atomic (RFC 7306 §5.1): the WQE takes two slots; the second (opcode atomic_masks) holds the " \
      "masks. Without the flag FetchAdd has add mask 0 (a plain 64-bit add) and CmpSwap all-ones masks")     \
    X(inline_data, 3,                                                                                        \
      "Inline data (Send, RDMA Write, RDMA Write with Immediate): the `length` payload bytes (at most "      \
      "kMaxInlineData = 192) follow the WQE in the next ceil(length / 64) slots; local_addr and local_stag " \
      "are not used, so the device reads no payload from host memory")
// Most payload bytes a WQE can carry inline (three extra send-queue slots).
constexpr std::uint32_t kMaxInlineData = 192;
namespace wr_flags {
RNIC_WR_FLAGS(RNIC_BIT_CONST_U8)
}  // namespace wr_flags
constexpr value_desc kWrFlags[] = {RNIC_WR_FLAGS(RNIC_FLAG_VALUE)};
// The second slot of a masked atomic. X(name, offset, size, overlays, description)
#define RNIC_ATOMIC_MASK_FIELDS(X)                                                                    \
    X(opcode, 0x00, 1, "", "u8 atomic_masks (0x7e)")                                                  \
    X(add_or_swap_mask, 0x10, 8, "", "u64 FetchAdd: add mask (carry boundaries); CmpSwap: swap mask") \
    X(compare_mask, 0x18, 8, "", "u64 compare mask (CmpSwap)")
namespace atomic_mask_off {
RNIC_ATOMIC_MASK_FIELDS(RNIC_FIELD_CONST)
}  // namespace atomic_mask_off
constexpr field_desc kAtomicMaskFields[] = {RNIC_ATOMIC_MASK_FIELDS(RNIC_FIELD_DESC)};

// ---- Receive queue work request (32 bytes) --------------------------------------------------
constexpr std::size_t kRecvWqeSize = 32;
#define RNIC_RQE_FIELDS(X)                                   \
    X(wr_id, 0x00, 8, "", "u64, returned in the completion") \
    X(addr, 0x08, 8, "", "u64 host address of the buffer")   \
    X(length, 0x10, 4, "", "u32 buffer bytes")               \
    X(stag, 0x14, 4, "", "u32 STag of a region with local-write access holding the buffer")
namespace rqe_off {
RNIC_RQE_FIELDS(RNIC_FIELD_CONST)
}  // namespace rqe_off
constexpr field_desc kRecvWqeFields[] = {RNIC_RQE_FIELDS(RNIC_FIELD_DESC)};

// ---- DMA scatter/gather element (16 bytes) ----------------------------------------------------
// A list or ring of these in host memory describes the host side of one DMA transfer (the NIC side
// is contiguous); the DMA engine fetches them itself (models/dma). Elements are processed in order
// until `count` of them or one with the `last` flag; a zero length is skipped.
constexpr std::size_t kSgeSize = 16;
#define RNIC_SGE_FIELDS(X)                           \
    X(addr, 0x00, 8, "", "u64 host address")         \
    X(length, 0x08, 4, "", "u32 bytes (0: skipped)") \
    X(flags, 0x0c, 4, "", "u32 sge_flags")
namespace sge_off {
RNIC_SGE_FIELDS(RNIC_FIELD_CONST)
}  // namespace sge_off
constexpr field_desc kSgeFields[] = {RNIC_SGE_FIELDS(RNIC_FIELD_DESC)};
#define RNIC_SGE_FLAGS(X) X(last, 0, "The last element of the list")
namespace sge_flags {
RNIC_SGE_FLAGS(RNIC_BIT_CONST)
}  // namespace sge_flags
constexpr value_desc kSgeFlags[] = {RNIC_SGE_FLAGS(RNIC_FLAG_VALUE)};

// ---- Completion queue entry (32 bytes) ------------------------------------------------------
// The device writes entries in ring order; bit 31 of `owner` is the phase: 1 on the first pass
// over the ring, 0 on the second, and so on, so the driver sees new entries without a register read.
constexpr std::size_t kCqeSize = 32;
// Receive completions: imm_data holds the Immediate Data (cqe_flags::imm); Send with Invalidate: the
// invalidated STag in the low 32 bits (cqe_flags::invalidated); QP error entries: the Terminate
// (query_qp layout).
#define RNIC_CQE_FIELDS(X)                                                                                      \
    X(wr_id, 0x00, 8, "", "u64 wr_id of the work request (receives: of the receive WQE)")                       \
    X(byte_len, 0x08, 4, "", "u32 bytes transferred (receives: bytes placed)")                                  \
    X(opcode, 0x0c, 1, "", "u8 wr_opcode of the work request (receives: of the message; 0xfe: QP error entry)") \
    X(status, 0x0d, 1, "", "u8 cqe_status")                                                                     \
    X(qpn, 0x0e, 2, "", "u16 queue pair number")                                                                \
    X(wqe_index, 0x10, 4, "", "u32 SQ/RQ index of the completed WQE (its last slot)")                           \
    X(imm_data, 0x14, 8, "", "u64 Immediate Data, invalidated STag or Terminate (see flags)")                   \
    X(owner, 0x1c, 4, "", "u32 owner word: phase, flags, receive (bits below)")
namespace cqe_off {
RNIC_CQE_FIELDS(RNIC_FIELD_CONST)
constexpr unsigned kFlagsShift = 8;
}  // namespace cqe_off
constexpr field_desc kCqeFields[] = {RNIC_CQE_FIELDS(RNIC_FIELD_DESC)};
// X(name, bit, description)
#define RNIC_CQE_FLAGS(X)                                                           \
    X(imm, 0, "imm_data holds Immediate Data")                                      \
    X(invalidated, 1, "imm_data holds the STag a Send with Invalidate invalidated") \
    X(solicited, 2, "The message asked for a Solicited Event")
namespace cqe_flags {
RNIC_CQE_FLAGS(RNIC_BIT_CONST_U8)
}  // namespace cqe_flags
constexpr value_desc kCqeFlags[] = {RNIC_CQE_FLAGS(RNIC_FLAG_VALUE)};
// The owner word.
namespace cqe_owner {
constexpr std::uint32_t kReceive = 1u << 0;
constexpr std::uint32_t kPhase = 1u << 31;
}  // namespace cqe_owner
constexpr bitfield_desc kCqeOwnerBits[] = {
    {"receive", 0, 1, "1: a receive completion (or a QP error entry), on the QP's receive CQ"},
    {"flags", cqe_off::kFlagsShift, 8, "cqe_flags"},
    {"phase", 31, 1, "1 on the first pass over the ring, 0 on the second, and so on"},
};
// The opcode of a QP error entry: written to the QP's receive CQ when the QP leaves RTS because of a
// Terminate (sent or received) or a fatal stream error; status tells the class, imm_data the Terminate.
constexpr std::uint8_t kCqeOpcodeQpError = 0xfe;

// X(name, value, text, description)
#define RNIC_CQE_STATUSES(X)                                                                                   \
    X(success, 0, "success", "The work request completed")                                                     \
    X(local_length_error, 1, "local length error", "A length not valid for the work request's opcode")         \
    X(local_protection_error, 2, "local protection error", "A local STag, bound or right did not check out")   \
    X(remote_access_error, 3, "remote access error",                                                           \
      "The peer's Terminate: RDMAP remote protection or DDP tagged-buffer error")                              \
    X(remote_operation_error, 4, "remote operation error", "The peer's Terminate: another RDMAP or DDP error") \
    X(transport_error, 5, "transport error",                                                                   \
      "The stream failed without a Terminate that says why (LLP error, connection lost)")                      \
    X(flushed, 6, "flushed", "Not performed: the QP went to Error first")                                      \
    X(remote_invalid_request, 7, "remote invalid request",                                                     \
      "The peer reported a DDP untagged-buffer error (no buffer, MSN, QN, length)")                            \
    X(bad_opcode, 8, "bad opcode", "The device does not take this work-request opcode")
enum class cqe_status : std::uint8_t {
#define RNIC_CQE_STATUS_ENUM(n, v, t, d) n = v,
    RNIC_CQE_STATUSES(RNIC_CQE_STATUS_ENUM)
#undef RNIC_CQE_STATUS_ENUM
};
constexpr value_desc kCqeStatuses[] = {
#define RNIC_CQE_STATUS_DESC(n, v, t, d) {#n, v, d},
    RNIC_CQE_STATUSES(RNIC_CQE_STATUS_DESC)
#undef RNIC_CQE_STATUS_DESC
};
const char* to_string(cqe_status s);

// Every structure in host memory or BAR0, for the generator and the layout checks.
struct layout_desc {
    const char* name;
    std::size_t size;
    const field_desc* fields;
    std::size_t count;
    const char* description;
};
template <std::size_t N>
constexpr layout_desc layout(const char* name, std::size_t size, const field_desc (&fields)[N], const char* d) {
    return {name, size, fields, N, d};
}
constexpr layout_desc kLayouts[] = {
    layout("command", kCommandSize, kCommandFields, "Firmware command ring entry"),
    layout("send_wqe", kSendWqeSize, kSendWqeFields, "Send queue work request"),
    layout("atomic_masks", kSendWqeSize, kAtomicMaskFields, "Second send-queue slot of a masked atomic"),
    layout("recv_wqe", kRecvWqeSize, kRecvWqeFields, "Receive queue work request"),
    layout("sge", kSgeSize, kSgeFields, "DMA scatter/gather element"),
    layout("cqe", kCqeSize, kCqeFields, "Completion queue entry"),
    layout("msix_entry", kMsixEntrySize, kMsixEntryFields, "MSI-X table entry"),
    layout("peer_record", kPeerRecordSize, kPeerRecordFields, "A waiting peer, as next_peer reports it"),
};

#undef RNIC_BIT_CONST
#undef RNIC_BIT_CONST_U8
#undef RNIC_BIT_DESC
#undef RNIC_FLAG_VALUE
#undef RNIC_FIELD_CONST
#undef RNIC_FIELD_CONST_U32
#undef RNIC_FIELD_DESC

const char* to_string(access a);

}  // namespace rnic::regmap
