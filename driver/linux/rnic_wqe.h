/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Writing one work request into its queue slot, shared by rnic.ko (kernel QPs in rnic_ib.c, the
 * self-test's QP in rnic_main.c) and the libibverbs provider (provider/rnic_verbs.c), so that the
 * layout lives in one writer: the generated rnic_regs.h's offsets (docs/device.md, "Send queue work
 * request", "Receive queue work request"), fields little-endian whatever the CPU. The slot is
 * cleared first: fields not named stay zero, as the device expects of reserved bytes. Needs the
 * fixed-width integer types (linux/types.h in the kernel, stdint.h in user space) and memset.
 */
#ifndef RNIC_WQE_H
#define RNIC_WQE_H

#include "rnic_regs.h"

static inline void rnic_wqe_put_le(uint8_t *w, unsigned int off, uint64_t v, unsigned int bytes)
{
	unsigned int i;

	for (i = 0; i < bytes; i++)
		w[off + i] = (uint8_t)(v >> (8 * i));
}

/*
 * A send queue WQE: RNIC_WR_* opcode and RNIC_WR_FLAG_* flags, the consumer's wr_id, the local
 * buffer (0, 0, 0 for a work request without one), the remote tagged offset and STag (RDMA Write and
 * Read), and the STag to invalidate (Send with Invalidate, local invalidate).
 */
static inline void rnic_write_send_wqe(uint8_t *w, uint8_t opcode, uint8_t flags, uint64_t wr_id,
				       uint64_t local_addr, uint32_t length, uint32_t local_stag,
				       uint64_t remote_to, uint32_t remote_stag, uint32_t imm_or_inv)
{
	memset(w, 0, RNIC_SEND_WQE_SIZE);
	w[RNIC_SEND_WQE_OPCODE] = opcode;
	w[RNIC_SEND_WQE_FLAGS] = flags;
	rnic_wqe_put_le(w, RNIC_SEND_WQE_WR_ID, wr_id, RNIC_SEND_WQE_WR_ID_LEN);
	rnic_wqe_put_le(w, RNIC_SEND_WQE_LOCAL_ADDR, local_addr, RNIC_SEND_WQE_LOCAL_ADDR_LEN);
	rnic_wqe_put_le(w, RNIC_SEND_WQE_LENGTH, length, RNIC_SEND_WQE_LENGTH_LEN);
	rnic_wqe_put_le(w, RNIC_SEND_WQE_LOCAL_STAG, local_stag, RNIC_SEND_WQE_LOCAL_STAG_LEN);
	rnic_wqe_put_le(w, RNIC_SEND_WQE_REMOTE_TO, remote_to, RNIC_SEND_WQE_REMOTE_TO_LEN);
	rnic_wqe_put_le(w, RNIC_SEND_WQE_REMOTE_STAG, remote_stag, RNIC_SEND_WQE_REMOTE_STAG_LEN);
	rnic_wqe_put_le(w, RNIC_SEND_WQE_IMM_OR_INV, imm_or_inv, RNIC_SEND_WQE_IMM_OR_INV_LEN);
}

/* A receive queue WQE: the consumer's wr_id and the buffer (0, 0, 0 for none). */
static inline void rnic_write_recv_wqe(uint8_t *w, uint64_t wr_id, uint64_t addr, uint32_t length, uint32_t stag)
{
	memset(w, 0, RNIC_RECV_WQE_SIZE);
	rnic_wqe_put_le(w, RNIC_RECV_WQE_WR_ID, wr_id, RNIC_RECV_WQE_WR_ID_LEN);
	rnic_wqe_put_le(w, RNIC_RECV_WQE_ADDR, addr, RNIC_RECV_WQE_ADDR_LEN);
	rnic_wqe_put_le(w, RNIC_RECV_WQE_LENGTH, length, RNIC_RECV_WQE_LENGTH_LEN);
	rnic_wqe_put_le(w, RNIC_RECV_WQE_STAG, stag, RNIC_RECV_WQE_STAG_LEN);
}

#endif /* RNIC_WQE_H */
