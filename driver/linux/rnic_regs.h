/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The iWARP RNIC's device interface for C drivers: BAR0 registers and their bits, doorbells,
 * MSI-X, the layouts of commands, work requests and completions in host memory (byte offsets and
 * sizes, little-endian), command codes and status values.
 *
 * Generated from models/rnic/regmap.h by rnic-devicedoc; do not edit by hand. Regenerate with
 *   build/bin/rnic-devicedoc --c-header -o driver/linux/rnic_regs.h
 * (rnic-tools-tests fails while this file differs from what the generator writes).
 * The prose of the interface is docs/device.md, generated from the same tables.
 */
#ifndef RNIC_REGS_H
#define RNIC_REGS_H

/* PCI identity (the ID register) and BAR0 */
#define RNIC_PCI_VENDOR_ID                       0x1a4e
#define RNIC_PCI_DEVICE_ID                       0x0001
#define RNIC_BAR0_SIZE                           0x20000u /* bytes of 32-bit registers; aligned 32-bit accesses only */

/* Registers: offset in BAR0, and reset value */
#define RNIC_REG_ID                              0x0000u /* ro: Identification: vendor 0x1a4e (upper 16 bits), device 0x0001 */
#define RNIC_REG_ID_RESET                        0x1a4e0001u
#define RNIC_REG_VERSION                         0x0004u /* ro: Device interface version major.minor (16.16) */
#define RNIC_REG_VERSION_RESET                   0x00010000u
#define RNIC_REG_CTRL                            0x0008u /* rw: Control: bit 0 ENABLE; bit 1 RESET (self-clearing) */
#define RNIC_REG_CTRL_RESET                      0x00000000u
#define RNIC_REG_STATUS                          0x000cu /* ro: Status: bit 0 READY (firmware running); bit 1 FATAL */
#define RNIC_REG_STATUS_RESET                    0x00000000u
#define RNIC_REG_INTR_CAUSE                      0x0010u /* rw1c: Interrupt causes seen (bit = MSI-X vector), write 1 to clear */
#define RNIC_REG_INTR_CAUSE_RESET                0x00000000u
#define RNIC_REG_CMDQ_BASE_LO                    0x0020u /* rw: Firmware command ring base address, low 32 bits (64-byte aligned) */
#define RNIC_REG_CMDQ_BASE_LO_RESET              0x00000000u
#define RNIC_REG_CMDQ_BASE_HI                    0x0024u /* rw: Firmware command ring base address, high 32 bits */
#define RNIC_REG_CMDQ_BASE_HI_RESET              0x00000000u
#define RNIC_REG_CMDQ_ENTRIES                    0x0028u /* rw: Command ring entries (power of two, 2..4096) */
#define RNIC_REG_CMDQ_ENTRIES_RESET              0x00000000u
#define RNIC_REG_CMDQ_PROD                       0x002cu /* wo: Command ring doorbell: producer index (free-running mod 2^32) */
#define RNIC_REG_CMDQ_PROD_RESET                 0x00000000u
#define RNIC_REG_CMDQ_CONS                       0x0030u /* ro: Command ring consumer index (commands fetched by firmware) */
#define RNIC_REG_CMDQ_CONS_RESET                 0x00000000u
#define RNIC_REG_MAC_LO                          0x0040u /* rw: Station MAC address bytes 2..5 (byte 2 in bits 31:24) */
#define RNIC_REG_MAC_LO_RESET                    0x00000000u
#define RNIC_REG_MAC_HI                          0x0044u /* rw: Station MAC address bytes 0..1 (byte 0 in bits 15:8) */
#define RNIC_REG_MAC_HI_RESET                    0x00000000u
#define RNIC_REG_IPV4_ADDR                       0x0048u /* rw: Station IPv4 address */
#define RNIC_REG_IPV4_ADDR_RESET                 0x00000000u
#define RNIC_REG_CAP_MAX_QP                      0x0050u /* ro: Number of queue pairs supported (the configured count; reset value: default) */
#define RNIC_REG_CAP_MAX_QP_RESET                0x00000040u
#define RNIC_REG_CAP_MAX_CQ                      0x0054u /* ro: Number of completion queues supported (the configured count) */
#define RNIC_REG_CAP_MAX_CQ_RESET                0x00000040u
#define RNIC_REG_CAP_MAX_MR                      0x0058u /* ro: Number of memory regions supported (the configured count) */
#define RNIC_REG_CAP_MAX_MR_RESET                0x00000400u
#define RNIC_REG_CAP_CTX_BYTES                   0x005cu /* ro: Bytes of host memory the device needs for its QP and STag context tables (0: it keeps them on chip) */
#define RNIC_REG_CAP_CTX_BYTES_RESET             0x00000000u
#define RNIC_REG_CTX_BASE_LO                     0x0060u /* rw: Context tables' host address, low 32 bits (4 KiB aligned) */
#define RNIC_REG_CTX_BASE_LO_RESET               0x00000000u
#define RNIC_REG_CTX_BASE_HI                     0x0064u /* rw: Context tables' host address, high 32 bits; writing it hands the address to the device */
#define RNIC_REG_CTX_BASE_HI_RESET               0x00000000u
#define RNIC_REG_ASYNC_EVENT                     0x0068u /* ro: Oldest asynchronous event not yet acknowledged: bits 31:24 its type (1 cq_error: a CQ overran and lost a completion, as verbs IBV_EVENT_CQ_ERR; the QPs whose completions it lost are in Error), bits 23:0 the resource it names (the CQ number); 0: none. Events wait in order, one per CQ (its first overrun); CTRL.RESET clears them */
#define RNIC_REG_ASYNC_EVENT_RESET               0x00000000u
#define RNIC_REG_ASYNC_EVENT_ACK                 0x006cu /* wo: Write any value: the oldest asynchronous event is removed and ASYNC_EVENT shows the next */
#define RNIC_REG_ASYNC_EVENT_ACK_RESET           0x00000000u

/* CTRL bits */
#define RNIC_CTRL_ENABLE                         (1u << 0) /* ENABLE: start the firmware; STATUS.READY follows once it runs */
#define RNIC_CTRL_RESET                          (1u << 1) /* RESET: return the device to its reset state (self-clearing, reads back 0): the registers the driver programs and CMDQ_CONS to their reset values; every QP (its TCP connection closed), CQ and memory region removed without anything more written to host memory; the firmware's command index back to ring slot 0, the connections it held closed; new objects are numbered from 0 again. STATUS.READY stays set (the firmware keeps running); listening ports stay open. A device with nothing to reset is left as it is */

/* STATUS bits */
#define RNIC_STATUS_READY                        (1u << 0) /* READY: the firmware runs and takes commands */
#define RNIC_STATUS_FATAL                        (1u << 1) /* FATAL: the device stopped on an internal error */
#define RNIC_STATUS_CTX_AREA                     (1u << 2) /* CTX_AREA: the device keeps its contexts in host memory: allocate CAP_CTX_BYTES and write CTX_BASE */

/* BAR0 regions */
#define RNIC_BAR0_REGISTERS_OFFSET               0x0u /* The registers below; other offsets in the window read as zero and ignore writes */
#define RNIC_BAR0_REGISTERS_SIZE                 0x1000u
#define RNIC_BAR0_QP_DOORBELLS_OFFSET            0x1000u /* One 16-byte slot per QP: SQ producer index at +0x0, RQ producer index at +0x4 (write-only) */
#define RNIC_BAR0_QP_DOORBELLS_SIZE              0x7000u
#define RNIC_BAR0_CQ_DOORBELLS_OFFSET            0x8000u /* One 8-byte slot per CQ: consumer index at +0x0; any write to +0x4 arms the CQ for one interrupt (write-only) */
#define RNIC_BAR0_CQ_DOORBELLS_SIZE              0x4000u
#define RNIC_BAR0_MSI_X_TABLE_OFFSET             0xc000u /* kMsixVectors entries of 16 bytes (host-bus endpoint) */
#define RNIC_BAR0_MSI_X_TABLE_SIZE               0x1000u
#define RNIC_BAR0_MSI_X_PBA_OFFSET               0xd000u /* Pending bits, one per vector, in 64-bit words (read-only) */
#define RNIC_BAR0_MSI_X_PBA_SIZE                 0x1000u
#define RNIC_BAR0_QP_DOORBELLS_HIGH_OFFSET       0x10000u /* QPs 1792..4095: QP n's 16-byte slot at + 16*(n - 1792), laid out as in the first QP window (write-only) */
#define RNIC_BAR0_QP_DOORBELLS_HIGH_SIZE         0x9000u

/* Doorbells: free-running indices (mod 2^32), write-only */
#define RNIC_QP_DOORBELL_BASE                    0x1000u
#define RNIC_QP_DOORBELL_STRIDE                  16u
#define RNIC_QP_DOORBELL_HIGH_BASE               0x10000u /* QPs from RNIC_QP_DOORBELL_LOW_COUNT up */
#define RNIC_QP_DOORBELL_LOW_COUNT               1792u
#define RNIC_SQ_DOORBELL                         0x0u /* in a QP's slot: send-queue producer index */
#define RNIC_RQ_DOORBELL                         0x4u /* in a QP's slot: receive-queue producer index */
#define RNIC_MAX_QPS                             4096u
#define RNIC_QP_DOORBELL(qpn)                    ((qpn) < RNIC_QP_DOORBELL_LOW_COUNT ? RNIC_QP_DOORBELL_BASE + (qpn) * RNIC_QP_DOORBELL_STRIDE : RNIC_QP_DOORBELL_HIGH_BASE + ((qpn) - RNIC_QP_DOORBELL_LOW_COUNT) * RNIC_QP_DOORBELL_STRIDE) /* BAR0 offset of QP qpn's slot */
#define RNIC_CQ_DOORBELL_BASE                    0x8000u
#define RNIC_CQ_DOORBELL_STRIDE                  8u
#define RNIC_CQ_CONSUMER                         0x0u /* in a CQ's slot: consumer index */
#define RNIC_CQ_ARM                              0x4u /* in a CQ's slot: any write arms the CQ's interrupt once */
#define RNIC_CQ_DOORBELL(cqn)                    (RNIC_CQ_DOORBELL_BASE + (cqn) * RNIC_CQ_DOORBELL_STRIDE)

/* MSI-X */
#define RNIC_MSIX_VECTORS                        16u
#define RNIC_MSIX_COMMAND_VECTOR                 0u /* firmware command completion; CQ cqn uses 1 + cqn % (RNIC_MSIX_VECTORS - 1) */
#define RNIC_MSIX_TABLE_OFFSET                   0xc000u
#define RNIC_MSIX_PBA_OFFSET                     0xd000u
#define RNIC_MSIX_CTRL_MASK                      (1u << 0) /* Mask: the vector raises no message; a message due is kept pending in the PBA */

/* Structures in host memory and BAR0: size, and each field's byte offset and size */
/* Firmware command ring entry */
#define RNIC_COMMAND_SIZE                        64u
#define RNIC_COMMAND_OPCODE                      0x00u /* u8 command (below) */
#define RNIC_COMMAND_OPCODE_LEN                  1u
#define RNIC_COMMAND_COOKIE                      0x04u /* u32, echoed */
#define RNIC_COMMAND_COOKIE_LEN                  4u
#define RNIC_COMMAND_PARAM                       0x08u /* 6 x u64 parameters p0..p5, little-endian */
#define RNIC_COMMAND_PARAM_LEN                   48u
#define RNIC_COMMAND_STATUS                      0x38u /* u32 cmd_status, written by the device (the driver writes kStatusPending first) */
#define RNIC_COMMAND_STATUS_LEN                  4u
#define RNIC_COMMAND_RESULT                      0x3cu /* u32, written by the device */
#define RNIC_COMMAND_RESULT_LEN                  4u
/* Send queue work request */
#define RNIC_SEND_WQE_SIZE                       64u
#define RNIC_SEND_WQE_OPCODE                     0x00u /* u8 wr_opcode */
#define RNIC_SEND_WQE_OPCODE_LEN                 1u
#define RNIC_SEND_WQE_FLAGS                      0x01u /* u8 wr_flags */
#define RNIC_SEND_WQE_FLAGS_LEN                  1u
#define RNIC_SEND_WQE_WR_ID                      0x08u /* u64, returned in the completion */
#define RNIC_SEND_WQE_WR_ID_LEN                  8u
#define RNIC_SEND_WQE_LOCAL_ADDR                 0x10u /* u64 host address of the source data (Read, atomics: of the destination) */
#define RNIC_SEND_WQE_LOCAL_ADDR_LEN             8u
#define RNIC_SEND_WQE_LENGTH                     0x18u /* u32 bytes */
#define RNIC_SEND_WQE_LENGTH_LEN                 4u
#define RNIC_SEND_WQE_LOCAL_STAG                 0x1cu /* u32 STag of the local region holding the data */
#define RNIC_SEND_WQE_LOCAL_STAG_LEN             4u
#define RNIC_SEND_WQE_REMOTE_TO                  0x20u /* u64 tagged offset at the peer */
#define RNIC_SEND_WQE_REMOTE_TO_LEN              8u
#define RNIC_SEND_WQE_REMOTE_STAG                0x28u /* u32 STag at the peer */
#define RNIC_SEND_WQE_REMOTE_STAG_LEN            4u
#define RNIC_SEND_WQE_IMM_OR_INV                 0x2cu /* u32 invalidate STag (Send with Invalidate, local invalidate) */
#define RNIC_SEND_WQE_IMM_OR_INV_LEN             4u
#define RNIC_SEND_WQE_IMM_DATA                   0x30u /* u64 Immediate Data (immediate_data, rdma_write_with_imm) */
#define RNIC_SEND_WQE_IMM_DATA_LEN               8u
#define RNIC_SEND_WQE_OPERAND                    0x30u /* u64 add data (FetchAdd) / swap data (CmpSwap) */
#define RNIC_SEND_WQE_OPERAND_LEN                8u
#define RNIC_SEND_WQE_COMPARE                    0x38u /* u64 compare data (CmpSwap) */
#define RNIC_SEND_WQE_COMPARE_LEN                8u
/* Second send-queue slot of a masked atomic */
#define RNIC_ATOMIC_MASKS_SIZE                   64u
#define RNIC_ATOMIC_MASKS_OPCODE                 0x00u /* u8 atomic_masks (0x7e) */
#define RNIC_ATOMIC_MASKS_OPCODE_LEN             1u
#define RNIC_ATOMIC_MASKS_ADD_OR_SWAP_MASK       0x10u /* u64 FetchAdd: add mask (carry boundaries); CmpSwap: swap mask */
#define RNIC_ATOMIC_MASKS_ADD_OR_SWAP_MASK_LEN   8u
#define RNIC_ATOMIC_MASKS_COMPARE_MASK           0x18u /* u64 compare mask (CmpSwap) */
#define RNIC_ATOMIC_MASKS_COMPARE_MASK_LEN       8u
/* Receive queue work request */
#define RNIC_RECV_WQE_SIZE                       32u
#define RNIC_RECV_WQE_WR_ID                      0x00u /* u64, returned in the completion */
#define RNIC_RECV_WQE_WR_ID_LEN                  8u
#define RNIC_RECV_WQE_ADDR                       0x08u /* u64 host address of the buffer */
#define RNIC_RECV_WQE_ADDR_LEN                   8u
#define RNIC_RECV_WQE_LENGTH                     0x10u /* u32 buffer bytes */
#define RNIC_RECV_WQE_LENGTH_LEN                 4u
#define RNIC_RECV_WQE_STAG                       0x14u /* u32 STag of a region with local-write access holding the buffer */
#define RNIC_RECV_WQE_STAG_LEN                   4u
/* DMA scatter/gather element */
#define RNIC_SGE_SIZE                            16u
#define RNIC_SGE_ADDR                            0x00u /* u64 host address */
#define RNIC_SGE_ADDR_LEN                        8u
#define RNIC_SGE_LENGTH                          0x08u /* u32 bytes (0: skipped) */
#define RNIC_SGE_LENGTH_LEN                      4u
#define RNIC_SGE_FLAGS                           0x0cu /* u32 sge_flags */
#define RNIC_SGE_FLAGS_LEN                       4u
/* Completion queue entry */
#define RNIC_CQE_SIZE                            32u
#define RNIC_CQE_WR_ID                           0x00u /* u64 wr_id of the work request (receives: of the receive WQE) */
#define RNIC_CQE_WR_ID_LEN                       8u
#define RNIC_CQE_BYTE_LEN                        0x08u /* u32 bytes transferred (receives: bytes placed) */
#define RNIC_CQE_BYTE_LEN_LEN                    4u
#define RNIC_CQE_OPCODE                          0x0cu /* u8 wr_opcode of the work request (receives: of the message; 0xfe: QP error entry) */
#define RNIC_CQE_OPCODE_LEN                      1u
#define RNIC_CQE_STATUS                          0x0du /* u8 cqe_status */
#define RNIC_CQE_STATUS_LEN                      1u
#define RNIC_CQE_QPN                             0x0eu /* u16 queue pair number */
#define RNIC_CQE_QPN_LEN                         2u
#define RNIC_CQE_WQE_INDEX                       0x10u /* u32 SQ/RQ index of the completed WQE (its last slot) */
#define RNIC_CQE_WQE_INDEX_LEN                   4u
#define RNIC_CQE_IMM_DATA                        0x14u /* u64 Immediate Data, invalidated STag or Terminate (see flags) */
#define RNIC_CQE_IMM_DATA_LEN                    8u
#define RNIC_CQE_OWNER                           0x1cu /* u32 owner word: phase, flags, receive (bits below) */
#define RNIC_CQE_OWNER_LEN                       4u
/* MSI-X table entry */
#define RNIC_MSIX_ENTRY_SIZE                     16u
#define RNIC_MSIX_ENTRY_ADDR_LO                  0x00u /* Message Address [31:2] (bits 1:0 zero) */
#define RNIC_MSIX_ENTRY_ADDR_LO_LEN              4u
#define RNIC_MSIX_ENTRY_ADDR_HI                  0x04u /* Message Upper Address */
#define RNIC_MSIX_ENTRY_ADDR_HI_LEN              4u
#define RNIC_MSIX_ENTRY_DATA                     0x08u /* Message Data: the driver writes the vector number here */
#define RNIC_MSIX_ENTRY_DATA_LEN                 4u
#define RNIC_MSIX_ENTRY_CONTROL                  0x0cu /* Vector Control: bit 0 Mask (set at reset) */
#define RNIC_MSIX_ENTRY_CONTROL_LEN              4u
/* A waiting peer, as next_peer reports it */
#define RNIC_PEER_RECORD_SIZE                    32u
#define RNIC_PEER_RECORD_HANDLE                  0x00u /* u32 names the peer for accept or reject p2 (never 0) */
#define RNIC_PEER_RECORD_HANDLE_LEN              4u
#define RNIC_PEER_RECORD_LOCAL_IP                0x04u /* u32 this device's IPv4 address */
#define RNIC_PEER_RECORD_LOCAL_IP_LEN            4u
#define RNIC_PEER_RECORD_REMOTE_IP               0x08u /* u32 the peer's IPv4 address */
#define RNIC_PEER_RECORD_REMOTE_IP_LEN           4u
#define RNIC_PEER_RECORD_LOCAL_PORT              0x0cu /* u16 the listening port */
#define RNIC_PEER_RECORD_LOCAL_PORT_LEN          2u
#define RNIC_PEER_RECORD_REMOTE_PORT             0x0eu /* u16 the peer's port */
#define RNIC_PEER_RECORD_REMOTE_PORT_LEN         2u
#define RNIC_PEER_RECORD_REVISION                0x10u /* u8 the MPA Request's revision */
#define RNIC_PEER_RECORD_REVISION_LEN            1u
#define RNIC_PEER_RECORD_FLAGS                   0x11u /* u8 peer_flags of the Request */
#define RNIC_PEER_RECORD_FLAGS_LEN               1u
#define RNIC_PEER_RECORD_PD_LENGTH               0x12u /* u16 length of the Request's private data (without the RFC 6581 word) */
#define RNIC_PEER_RECORD_PD_LENGTH_LEN           2u
#define RNIC_PEER_RECORD_IRD                     0x14u /* u16 the Request's IRD (revision 2 with the enhanced flag; 0x3fff: no limit) */
#define RNIC_PEER_RECORD_IRD_LEN                 2u
#define RNIC_PEER_RECORD_ORD                     0x16u /* u16 the Request's ORD */
#define RNIC_PEER_RECORD_ORD_LEN                 2u
#define RNIC_COMMAND_PARAMS                      6u /* u64 parameters p0..p5 at RNIC_COMMAND_PARAM + 8 * i */

/* Firmware commands (RNIC_COMMAND_OPCODE) */
#define RNIC_CMD_NOP                             0u /* Does nothing; completes with ok */
#define RNIC_CMD_CREATE_CQ                       1u /* Creates a completion queue on a ring of 32-byte CQEs. Parameters: p0 ring address; p1 entries (power of 2); p2 MSI-X vector. Result: cqn */
#define RNIC_CMD_CREATE_QP                       2u /* Creates a queue pair in state idle; entries are powers of 2. Parameters: p0 SQ address; p1 SQ entries; p2 RQ address; p3 RQ entries; p4 send cqn | recv cqn << 32; p5 protection domain. Result: qpn */
#define RNIC_CMD_REG_MR                          3u /* Registers a memory region. Parameters: p0 host address; p1 length; p2 access flags | pd << 32; p3 tagged offset of the first byte (VA-based: = p0; zero-based: 0). Result: STag */
#define RNIC_CMD_DEREG_MR                        4u /* Invalidates and frees a memory region. Parameters: p0 STag */
#define RNIC_CMD_CONNECT                         5u /* Active open: TCP connection and MPA Request; completes when MPA negotiation ends (RTS) or fails. Parameters: p0 qpn; p1 remote IPv4 | remote port << 32; p2 local port; p3 IRD | ORD << 16 wanted (0: the firmware's policy) | 1 << 30 peer-to-peer (kConnectPeerToPeer: an explicit RTR, RFC 6581 S9.2, needs MPA revision 2) | 1 << 31 private data (kConnectPrivateData, below); p4 host address and p5 length of a buffer for the private data of a rejecting MPA Reply (0: none). Result: connection (ok); private-data bytes written at p4 (connection_refused after an MPA Reply with R = 1) */
#define RNIC_CMD_ACCEPT                          6u /* Passive open: waits for a peer's connection on the port (or takes the peer p2 names: bad_handle if it is no longer waiting), answers its MPA Request; the QP sends nothing before the peer's first FPDU (its RTR in the peer-to-peer model, RFC 5044 S7.1.2 rule 4). Parameters: p0 qpn; p1 local port; p2 peer handle from next_peer (0: the oldest waiting peer, or the next); p3 IRD | ORD << 16 as for connect; p4 host address and p5 length (at most kMaxConnPrivateData) of the private data of the MPA Reply */
#define RNIC_CMD_DESTROY_QP                      7u /* The QP must be idle or in Error (its connection closed first). Parameters: p0 qpn */
#define RNIC_CMD_DESTROY_CQ                      8u /* No live QP may still use the CQ. Parameters: p0 cqn */
#define RNIC_CMD_MODIFY_QP                       9u /* error (abortive: flush, close the stream) or closing (graceful: the stream closes once sent work is acknowledged). Parameters: p0 qpn; p1 target qp_state */
#define RNIC_CMD_QUERY_QP                        10u /* qp_state | terminate (layer<<28 | etype<<24 | code<<16) of the last Terminate sent or received | terminate_valid << 14 (0: none) | terminate_received << 15. Parameters: p0 qpn. Result: query_qp result word */
#define RNIC_CMD_REJECT                          11u /* Passive refusal: waits for the next peer on the port (as accept does, listen backlog first; or takes the peer p2 names: bad_handle if it is no longer waiting), answers its MPA Request with an MPA Reply with R = 1 carrying the private data (RFC 5044 S7.1.5, RFC 6581), then closes the TCP connection; completes once the Reply is sent. Parameters: p1 local port; p2 peer handle from next_peer (0: the next peer, as accept); p4 host address and p5 length (at most kMaxRejectPrivateData) of the private data. Result: connection */
#define RNIC_CMD_QUERY_STATS                     12u /* Writes the device counters as u64 little-endian, in this order: wqes, cqes, terminates_sent, terminates_received, placed_bytes, tcp_retransmitted_bytes, commands, connections_established, connections_failed, connections_rejected (kDeviceCounters). Parameters: p0 host address (8-byte aligned); p1 buffer bytes (at least 8 x the counters). Result: number of counters written */
#define RNIC_CMD_LISTEN                          13u /* Opens the port: peers' connections are taken (TCP handshake, MPA Request held) into a backlog that the next accept or reject on the port serves, oldest first. Parameters: p1 local port */
#define RNIC_CMD_REG_MR_PAGES                    14u /* Registers a memory region over pages that need not be contiguous in host memory (pinned user pages). The firmware reads the page list once, into the device's page-list memory (kPageListPoolEntries = 65536 entries shared by all regions); the list may be freed when the command completes. The region's bytes must lie within the listed pages; with remote_atomic, the first byte's offset must equal the tagged offset of the first byte modulo 8, so that an 8-byte-aligned atomic target never crosses a page. A bad count, page size, offset, list address or unaligned page is bad_parameter; a full page-list memory is no_resources. Parameters: p0 address of the first byte as local work requests name it (the region's virtual address); p1 length; p2 access flags | pd << 32; p3 tagged offset of the first byte (as for reg_mr); p4 host address of the page list (8-byte aligned): u64 little-endian host addresses of the pages, in order, each aligned to the page size; p5 page count (1..kMaxPageListEntries = 4096, bits 0-23) | log2 page size (kMinPageShift..kMaxPageShift = 12..21: 4 KiB to 2 MiB, bits 24-31) | offset of the first byte in the first page << 32. Result: STag */
#define RNIC_CMD_NEXT_PEER                       15u /* Reports the oldest listen-backlog peer whose MPA Request has arrived and that was not reported before: its handle (for accept or reject p2), addresses and the Request (revision, flags, IRD/ORD of RFC 6581, private data). The peer keeps waiting until an accept or reject names it or it leaves. A buffer that is too small or not writable is bad_parameter. Parameters: p1 local port (0: any); p4 host address and p5 length (at least kPeerRecordSize) of a buffer: the peer_record, then the MPA Request's private data (cut to the buffer; pd_length is the whole). Result: 1: a peer was written; 0: none waits */
#define RNIC_CMD_UNLISTEN                        16u /* Closes the port (listen, or an accept or reject that waited on it, opened it): from now on a peer's SYN to it is answered with a reset (RFC 9293 S3.10.7.1), half-open handshakes on it are reset, so is every listen-backlog peer no accept or reject took (its MPA Request arrived or not; the result counts them), and accepts or rejects still waiting for a peer on the port complete with not_listening. Connections an accept or reject already took, and QPs' connections, are not touched. A port that is not listening is not_listening; port 0 is bad_parameter. Parameters: p1 local port. Result: peers reset */
#define RNIC_CMD_STATUS_PENDING                  0xffffffffu /* written by the driver before the doorbell */
#define RNIC_CMD_STATUS_OK                       0u /* Done; result holds the command's result */
#define RNIC_CMD_STATUS_BAD_OPCODE               1u /* Unknown command opcode */
#define RNIC_CMD_STATUS_BAD_PARAMETER            2u /* A parameter is out of range (ring size, alignment, vector, state) */
#define RNIC_CMD_STATUS_NO_RESOURCES             3u /* No free QP, CQ, STag or connection */
#define RNIC_CMD_STATUS_BAD_HANDLE               4u /* The qpn, cqn or STag names nothing */
#define RNIC_CMD_STATUS_BAD_STATE                5u /* The object is in a state that does not allow the command */
#define RNIC_CMD_STATUS_CONNECTION_REFUSED       6u /* The peer refused the TCP connection (RST) */
#define RNIC_CMD_STATUS_CONNECTION_TIMEOUT       7u /* No TCP connection or MPA answer in time */
#define RNIC_CMD_STATUS_MPA_NEGOTIATION_FAILED   8u /* The MPA Request/Reply exchange was rejected */
#define RNIC_CMD_STATUS_NOT_LISTENING            9u /* unlisten, or an accept or reject waiting on the port: the port does not listen */
#define RNIC_CMD_STATUS_NO_BUFFER_MEMORY         10u /* The connection's send region could not be reserved in NIC buffer memory (rnic.buffer.send_regions=reserved); the peer's SYN was answered with a reset */
#define RNIC_CONNECT_PEER_TO_PEER                (1ull << 30) /* connect p3: the peer-to-peer model (RFC 6581) */
#define RNIC_MAX_REJECT_PRIVATE_DATA             256u
#define RNIC_CONNECT_PRIVATE_DATA                (1ull << 31) /* connect p3: the Request carries p5[47:32] bytes from p4; the Reply's private data comes back there */
#define RNIC_MAX_CONN_PRIVATE_DATA               508u /* private data of an MPA Request or accepting Reply */
#define RNIC_PEER_FLAG_MARKER                    0x1u /* M: the peer wants markers (RFC 5044 S7.1.1) */
#define RNIC_PEER_FLAG_CRC                       0x2u /* C: the peer wants CRCs */
#define RNIC_PEER_FLAG_ENHANCED                  0x4u /* revision 2 with the IRD/ORD word (RFC 6581 S9.1); ird and ord are valid */
#define RNIC_PEER_FLAG_PEER_TO_PEER              0x8u /* A: the peer asks for the peer-to-peer model (RFC 6581 S9.2) */
#define RNIC_MAX_PAGE_LIST_ENTRIES               4096u /* reg_mr_pages: pages per region at most */
#define RNIC_PAGE_LIST_POOL_ENTRIES              65536u /* reg_mr_pages: the device's page-list memory, shared by all regions */
#define RNIC_MIN_PAGE_SHIFT                      12u /* reg_mr_pages: smallest page 4 KiB */
#define RNIC_MAX_PAGE_SHIFT                      21u /* reg_mr_pages: largest page 2 MiB */

/* Device counters (query_stats), u64 each in this order */
#define RNIC_COUNTER_WQES                        0u /* Work requests the RDMA engine fetched from send queues */
#define RNIC_COUNTER_CQES                        1u /* Completion-queue entries written */
#define RNIC_COUNTER_TERMINATES_SENT             2u /* Terminate messages sent */
#define RNIC_COUNTER_TERMINATES_RECEIVED         3u /* Terminate messages received */
#define RNIC_COUNTER_PLACED_BYTES                4u /* Payload bytes placed in host memory (Writes, Sends, Read Responses) */
#define RNIC_COUNTER_TCP_RETRANSMITTED_BYTES     5u /* TCP payload bytes sent again (from NIC buffer or refetched from host) */
#define RNIC_COUNTER_COMMANDS                    6u /* Firmware commands executed (this one not yet counted) */
#define RNIC_COUNTER_CONNECTIONS_ESTABLISHED     7u /* Connections that reached RTS */
#define RNIC_COUNTER_CONNECTIONS_FAILED          8u /* Connections whose set-up failed (refused, timed out, bad MPA) */
#define RNIC_COUNTER_CONNECTIONS_REJECTED        9u /* MPA Requests this side refused with the reject command */
#define RNIC_COUNTERS                            10u

/* Queue-pair states and the query_qp result word */
#define RNIC_QP_STATE_IDLE                       0u /* Created, or closed gracefully: not connected */
#define RNIC_QP_STATE_RTS                        1u /* Ready to send: the stream is in RDMA mode */
#define RNIC_QP_STATE_CLOSING                    2u /* Graceful close in progress: sent work is being acknowledged */
#define RNIC_QP_STATE_TERMINATE                  3u /* A Terminate has been sent or received */
#define RNIC_QP_STATE_ERROR                      4u /* After a Terminate, a fatal stream error or modify_qp to error; work flushes */
#define RNIC_QUERY_QP_STATE_SHIFT                0u /* qp_state */
#define RNIC_QUERY_QP_STATE_MASK                 0x7u
#define RNIC_QUERY_QP_TERMINATE_VALID            (1u << 14) /* 1: a Terminate was sent or received (layer, etype, code and terminate_received say which); 0: none */
#define RNIC_QUERY_QP_TERMINATE_RECEIVED         (1u << 15) /* 1: the Terminate came from the peer; 0: this side sent it */
#define RNIC_QUERY_QP_CODE_SHIFT                 16u /* Terminate error code (RFC 5040 S4.8 / RFC 5041 S7.2) */
#define RNIC_QUERY_QP_CODE_MASK                  0xff0000u
#define RNIC_QUERY_QP_ETYPE_SHIFT                24u /* Terminate error type */
#define RNIC_QUERY_QP_ETYPE_MASK                 0xf000000u
#define RNIC_QUERY_QP_LAYER_SHIFT                28u /* Terminate layer: 0 RDMAP, 1 DDP, 2 LLP */
#define RNIC_QUERY_QP_LAYER_MASK                 0xf0000000u

/* Memory-region access flags (reg_mr p2) */
#define RNIC_MR_LOCAL_WRITE                      0x1u /* The device may write the region for local work (receives, Read responses, atomic results) */
#define RNIC_MR_REMOTE_WRITE                     0x2u /* A peer may RDMA Write into the region */
#define RNIC_MR_REMOTE_READ                      0x4u /* A peer may RDMA Read from the region */
#define RNIC_MR_REMOTE_ATOMIC                    0x8u /* A peer may run atomics (FetchAdd, CmpSwap) on the region */

/* Work requests */
#define RNIC_WR_RDMA_WRITE                       0u /* RDMA Write of local_addr/length to remote_stag/remote_to */
#define RNIC_WR_SEND                             1u /* Send into the peer's next receive (imm_or_inv != 0: Send with Invalidate) */
#define RNIC_WR_RDMA_READ                        2u /* RDMA Read of length bytes at remote_stag/remote_to into local_addr */
#define RNIC_WR_ATOMIC_FETCH_ADD                 3u /* RFC 7306 FetchAdd; the original lands at local_addr */
#define RNIC_WR_ATOMIC_COMPARE_SWAP              4u /* RFC 7306 CmpSwap; the original lands at local_addr */
#define RNIC_WR_IMMEDIATE_DATA                   5u /* RFC 7306 S6: 8 bytes of Immediate Data, consumes one receive at the peer */
#define RNIC_WR_RDMA_WRITE_WITH_IMM              6u /* An RDMA Write followed by Immediate Data (RFC 7306 S6), one work request */
#define RNIC_WR_LOCAL_INVALIDATE                 7u /* Invalidates local STag imm_or_inv in send-queue order (RFC 5040 S2.2) */
#define RNIC_WR_RAW_ULPDU                        127u /* Test mode only (rnic.rdma.raw_ulpdu_wqes): sends the ULPDU held at local_addr/length verbatim, for driver bring-up and for tests that need a peer to misbehave on the wire */
#define RNIC_WR_ATOMIC_MASKS                     126u /* Second slot of a masked atomic (not a work request of its own) */
#define RNIC_WR_RAW_STREAM                       125u /* Test mode only (rnic.rdma.raw_ulpdu_wqes): puts the bytes at local_addr/length verbatim into the connection's TCP stream, unframed, as one TCP segment (the peer's own FPDUs, cut anywhere) */
#define RNIC_WR_FLAG_SIGNALED                    0x1u /* Write a completion for this work request */
#define RNIC_WR_FLAG_SOLICITED                   0x2u /* Ask the peer for a Solicited Event (Send, Immediate Data) */
#define RNIC_WR_FLAG_MASKED                      0x4u /* Masked atomic (RFC 7306 S5.1): the WQE takes two slots; the second (opcode atomic_masks) holds the masks. Without the flag FetchAdd has add mask 0 (a plain 64-bit add) and CmpSwap all-ones masks */
#define RNIC_WR_FLAG_INLINE_DATA                 0x8u /* Inline data (Send, RDMA Write, RDMA Write with Immediate): the `length` payload bytes (at most kMaxInlineData = 192) follow the WQE in the next ceil(length / 64) slots; local_addr and local_stag are not used, so the device reads no payload from host memory */
#define RNIC_MAX_INLINE_DATA                     192u
#define RNIC_SGE_FLAG_LAST                       0x1u /* The last element of the list */

/* Completions */
#define RNIC_CQE_FLAG_IMM                        0x1u /* imm_data holds Immediate Data */
#define RNIC_CQE_FLAG_INVALIDATED                0x2u /* imm_data holds the STag a Send with Invalidate invalidated */
#define RNIC_CQE_FLAG_SOLICITED                  0x4u /* The message asked for a Solicited Event */
#define RNIC_CQE_OWNER_RECEIVE                   (1u << 0) /* 1: a receive completion (or a QP error entry), on the QP's receive CQ */
#define RNIC_CQE_OWNER_FLAGS_SHIFT               8u /* cqe_flags */
#define RNIC_CQE_OWNER_FLAGS_MASK                0xff00u
#define RNIC_CQE_OWNER_PHASE                     (1u << 31) /* 1 on the first pass over the ring, 0 on the second, and so on */
#define RNIC_CQE_OPCODE_QP_ERROR                 0xfeu /* opcode of a QP error entry */
#define RNIC_CQE_STATUS_SUCCESS                  0u /* The work request completed */
#define RNIC_CQE_STATUS_LOCAL_LENGTH_ERROR       1u /* A length not valid for the work request's opcode */
#define RNIC_CQE_STATUS_LOCAL_PROTECTION_ERROR   2u /* A local STag, bound or right did not check out */
#define RNIC_CQE_STATUS_REMOTE_ACCESS_ERROR      3u /* The peer's Terminate: RDMAP remote protection or DDP tagged-buffer error */
#define RNIC_CQE_STATUS_REMOTE_OPERATION_ERROR   4u /* The peer's Terminate: another RDMAP or DDP error */
#define RNIC_CQE_STATUS_TRANSPORT_ERROR          5u /* The stream failed without a Terminate that says why (LLP error, connection lost) */
#define RNIC_CQE_STATUS_FLUSHED                  6u /* Not performed: the QP went to Error first */
#define RNIC_CQE_STATUS_REMOTE_INVALID_REQUEST   7u /* The peer reported a DDP untagged-buffer error (no buffer, MSN, QN, length) */
#define RNIC_CQE_STATUS_BAD_OPCODE               8u /* The device does not take this work-request opcode */

#endif /* RNIC_REGS_H */
