// SPDX-License-Identifier: GPL-2.0
/*
 * rnic: Linux driver for the modelled iWARP RNIC (PCI 1a4e:0001), the device of the rnic-vp
 * virtual platform, seen by a QEMU guest through x-pci-proxy-dev (docs/architecture.md, "The
 * QEMU transport"). The device contract is docs/device.md; every offset and code here comes from
 * rnic_regs.h, generated from the platform's models/rnic/regmap.h.
 *
 * What it does: probe (BAR0 mapped, bus mastering, 64-bit DMA mask), device bring-up (the firmware
 * command ring in coherent memory, station MAC and IPv4, CTRL.ENABLE, STATUS.READY), firmware
 * commands, CQs, QPs and memory regions in coherent DMA memory, doorbells, completion polling, and
 * on remove the teardown of everything it created. Interrupts: the proxy cannot deliver INTx or MSI
 * to a TCG guest, so the driver polls (MSI-X vectors stay masked).
 *
 * The self-test (module parameter rping_count > 0) runs librdmacm's rping client protocol against
 * an rping server at server_ip:server_port (host b of the platform): per ping it advertises a
 * buffer holding rping's pattern, the server RDMA Reads it, checks it and RDMA Writes it back into
 * a second buffer, which this driver compares byte for byte. The result is printed on the kernel
 * log as "rnic: selftest: PASS ..." or "rnic: selftest: FAIL ..." and kept in the read-only module
 * parameter selftest_result (0 pass, negative errno otherwise, 1 not run).
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/inet.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "rnic.h"
#include "rnic_rping_pattern.h"
#include "rnic_regs.h"
#include "rnic_wqe.h"

#define DRV_NAME "rnic"

static char *ip = "10.0.0.1";
module_param(ip, charp, 0444);
MODULE_PARM_DESC(ip, "Station IPv4 address of the RNIC (the scenario's hosts.0.ipv4)");
static char *mac = "02:00:00:00:00:0a";
module_param(mac, charp, 0444);
MODULE_PARM_DESC(mac, "Station MAC address of the RNIC (the scenario's hosts.0.mac)");
static char *server_ip = "10.0.0.2";
module_param(server_ip, charp, 0444);
MODULE_PARM_DESC(server_ip, "Self-test: IPv4 address of the rping server (host b)");
static unsigned int server_port = 7174;
module_param(server_port, uint, 0444);
MODULE_PARM_DESC(server_port, "Self-test: TCP port of the rping server");
static unsigned int rping_count;
module_param(rping_count, uint, 0444);
MODULE_PARM_DESC(rping_count, "Self-test: number of pings at probe (0: no self-test)");
static unsigned int rping_size = 3000;
module_param(rping_size, uint, 0444);
MODULE_PARM_DESC(rping_size, "Self-test: ping size in bytes (26..65536)");
static unsigned int cmd_timeout_ms = 60000;
module_param(cmd_timeout_ms, uint, 0444);
MODULE_PARM_DESC(cmd_timeout_ms, "Longest wait for a firmware command (connect waits for the peer)");
static unsigned int bar_bench;
module_param(bar_bench, uint, 0444);
MODULE_PARM_DESC(bar_bench, "Time this many BAR0 reads and as many writes at probe and log the cost of each (0: no)");
static char *inject = "";
module_param(inject, charp, 0444);
MODULE_PARM_DESC(inject, "Driver misuse on purpose, '+'-separated: bad_dma (a command ring outside guest RAM), "
		 "bad_doorbell (a QP that does not exist), bad_command (an unknown opcode), bad_order (destroying a CQ a QP "
		 "still uses), bad_wqe (after the self-test's pings, a work request with an unknown opcode)");
static bool ib = true;
module_param(ib, bool, 0444);
MODULE_PARM_DESC(ib, "Register the device with the kernel RDMA core as an iWARP RNIC (ib_device rnicN, netdev rnicN)");
static int selftest_result = 1;
module_param(selftest_result, int, 0444);
MODULE_PARM_DESC(selftest_result, "Self-test outcome: 0 pass, negative errno on failure, 1 not run");

#define RNIC_CMDQ_ENTRIES 16u
#define RNIC_PD 1u
#define RNIC_CQ_ENTRIES 64u
#define RNIC_SQ_ENTRIES 16u
#define RNIC_RQ_ENTRIES 4u
#define RNIC_INFO 16u /* sizeof(struct rping_rdma_info) */

struct rnic_cqe {
	u64 wr_id;
	u32 byte_len, wqe_index, owner;
	u8 opcode, status;
	u16 qpn;
};

static u32 rnic_read(struct rnic_dev *d, u32 off)
{
	return ioread32(d->bar0 + off);
}

static void rnic_write(struct rnic_dev *d, u32 off, u32 v)
{
	iowrite32(v, d->bar0 + off);
}

int rnic_alloc(struct rnic_dev *d, struct rnic_coherent *c, size_t size)
{
	c->size = size;
	c->cpu = dma_alloc_coherent(&d->pdev->dev, size, &c->dma, GFP_KERNEL);
	return c->cpu ? 0 : -ENOMEM;
}

void rnic_free(struct rnic_dev *d, struct rnic_coherent *c)
{
	if (c->cpu)
		dma_free_coherent(&d->pdev->dev, c->size, c->cpu, c->dma);
	c->cpu = NULL;
}

static void put_le(void *base, unsigned int off, u64 v, unsigned int len)
{
	u8 *p = (u8 *)base + off;
	unsigned int i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(v >> (8 * i));
}

static u64 get_le(const void *base, unsigned int off, unsigned int len)
{
	const u8 *p = (const u8 *)base + off;
	u64 v = 0;
	int i;

	for (i = (int)len - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static const char *rnic_cmd_status(u32 s)
{
	switch (s) {
	case RNIC_CMD_STATUS_OK: return "ok";
	case RNIC_CMD_STATUS_BAD_OPCODE: return "bad opcode";
	case RNIC_CMD_STATUS_BAD_PARAMETER: return "bad parameter";
	case RNIC_CMD_STATUS_NO_RESOURCES: return "no resources";
	case RNIC_CMD_STATUS_BAD_HANDLE: return "bad handle";
	case RNIC_CMD_STATUS_BAD_STATE: return "bad state";
	case RNIC_CMD_STATUS_CONNECTION_REFUSED: return "connection refused";
	case RNIC_CMD_STATUS_CONNECTION_TIMEOUT: return "connection timeout";
	case RNIC_CMD_STATUS_MPA_NEGOTIATION_FAILED: return "MPA negotiation failed";
	case RNIC_CMD_STATUS_NOT_LISTENING: return "not listening";
	case RNIC_CMD_STATUS_NO_BUFFER_MEMORY: return "no NIC buffer memory for the connection";
	}
	return "unknown status";
}

/*
 * One firmware command, waited for by polling its status word in the coherent ring (no interrupt
 * reaches the guest). Returns 0 and the result, -EIO with the device's status logged, or -ETIMEDOUT.
 */
static int rnic_cmd_locked(struct rnic_dev *d, u8 op, const u64 p[6], u32 *result, u32 *status_out, u64 *p5_out)
{
	u8 *slot = (u8 *)d->cmdq.cpu + (d->cmd_prod % RNIC_CMDQ_ENTRIES) * RNIC_COMMAND_SIZE;
	unsigned long deadline = jiffies + msecs_to_jiffies(cmd_timeout_ms);
	unsigned int i;
	u32 status;

	if (!d->ready)
		return -ENODEV;
	memset(slot, 0, RNIC_COMMAND_SIZE);
	slot[RNIC_COMMAND_OPCODE] = op;
	put_le(slot, RNIC_COMMAND_COOKIE, d->cmd_prod, 4);
	for (i = 0; i < RNIC_COMMAND_PARAMS; i++)
		put_le(slot, RNIC_COMMAND_PARAM + 8 * i, p[i], 8);
	put_le(slot, RNIC_COMMAND_STATUS, RNIC_CMD_STATUS_PENDING, 4);
	d->cmd_prod++;
	dma_wmb(); /* the command before the doorbell */
	rnic_write(d, RNIC_REG_CMDQ_PROD, d->cmd_prod);
	for (;;) {
		status = READ_ONCE(*(u32 *)(slot + RNIC_COMMAND_STATUS));
		if (le32_to_cpu(status) != RNIC_CMD_STATUS_PENDING)
			break;
		if (time_after(jiffies, deadline)) {
			dev_err(&d->pdev->dev, "firmware command %u timed out after %u ms\n", op, cmd_timeout_ms);
			return -ETIMEDOUT;
		}
		usleep_range(50, 200);
	}
	dma_rmb();
	status = (u32)get_le(slot, RNIC_COMMAND_STATUS, 4);
	if (result)
		*result = (u32)get_le(slot, RNIC_COMMAND_RESULT, 4);
	if (status_out)
		*status_out = status;
	if (p5_out) /* connect with RNIC_CONNECT_PRIVATE_DATA: the device wrote the Reply's length here */
		*p5_out = get_le(slot, RNIC_COMMAND_PARAM + 8 * 5, 8);
	if (status != RNIC_CMD_STATUS_OK) {
		dev_err(&d->pdev->dev, "firmware command %u failed: %s (status %u)\n", op, rnic_cmd_status(status),
			status);
		return -EIO;
	}
	return 0;
}

int rnic_command(struct rnic_dev *d, u8 op, u64 p0, u64 p1, u64 p2, u64 p3, u64 p4, u64 p5, u32 *result,
		 u32 *status)
{
	const u64 p[6] = { p0, p1, p2, p3, p4, p5 };
	int err;

	mutex_lock(&d->cmd_lock);
	err = rnic_cmd_locked(d, op, p, result, status, NULL);
	mutex_unlock(&d->cmd_lock);
	return err;
}

int rnic_command_p5(struct rnic_dev *d, u8 op, const u64 p[6], u32 *result, u32 *status, u64 *p5_out)
{
	int err;

	mutex_lock(&d->cmd_lock);
	err = rnic_cmd_locked(d, op, p, result, status, p5_out);
	mutex_unlock(&d->cmd_lock);
	return err;
}

static int rnic_cmd6(struct rnic_dev *d, u8 op, u64 p0, u64 p1, u64 p2, u64 p3, u64 p4, u64 p5, u32 *result)
{
	return rnic_command(d, op, p0, p1, p2, p3, p4, p5, result, NULL);
}

/* Brings the device up: reset, command ring, station addresses, enable, wait for READY. */
static int rnic_bringup(struct rnic_dev *d)
{
	unsigned long deadline;
	u8 m[6], a[4];
	u32 status;
	int err;

	if (!mac_pton(mac, m)) {
		dev_err(&d->pdev->dev, "mac=%s is not a MAC address\n", mac);
		return -EINVAL;
	}
	if (!in4_pton(ip, -1, a, -1, NULL)) {
		dev_err(&d->pdev->dev, "ip=%s is not an IPv4 address\n", ip);
		return -EINVAL;
	}
	rnic_write(d, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	err = rnic_alloc(d, &d->cmdq, RNIC_CMDQ_ENTRIES * RNIC_COMMAND_SIZE);
	if (err)
		return err;
	/*
	 * CTRL.RESET returned the device to its reset state (docs/device.md): no QP, CQ or region of an
	 * earlier load survives, and the firmware fetches commands from slot 0 again.
	 */
	d->cmd_prod = 0;
	rnic_write(d, RNIC_REG_CMDQ_BASE_LO, lower_32_bits(d->cmdq.dma));
	rnic_write(d, RNIC_REG_CMDQ_BASE_HI, upper_32_bits(d->cmdq.dma));
	rnic_write(d, RNIC_REG_CMDQ_ENTRIES, RNIC_CMDQ_ENTRIES);
	rnic_write(d, RNIC_REG_MAC_HI, (u32)m[0] << 8 | m[1]);
	rnic_write(d, RNIC_REG_MAC_LO, (u32)m[2] << 24 | (u32)m[3] << 16 | (u32)m[4] << 8 | m[5]);
	rnic_write(d, RNIC_REG_IPV4_ADDR, (u32)a[0] << 24 | (u32)a[1] << 16 | (u32)a[2] << 8 | a[3]);
	rnic_write(d, RNIC_REG_CTRL, RNIC_CTRL_ENABLE);
	deadline = jiffies + msecs_to_jiffies(5000);
	while (!((status = rnic_read(d, RNIC_REG_STATUS)) & RNIC_STATUS_READY)) {
		if (status & RNIC_STATUS_FATAL) {
			dev_err(&d->pdev->dev, "device reports FATAL during bring-up\n");
			return -EIO;
		}
		if (time_after(jiffies, deadline)) {
			dev_err(&d->pdev->dev, "device not ready after 5 s (STATUS 0x%x)\n", status);
			return -ETIMEDOUT;
		}
		msleep(1);
	}
	if (status & RNIC_STATUS_CTX_AREA) {
		u32 bytes = rnic_read(d, RNIC_REG_CAP_CTX_BYTES);

		err = rnic_alloc(d, &d->ctx, bytes);
		if (err)
			return err;
		rnic_write(d, RNIC_REG_CTX_BASE_LO, lower_32_bits(d->ctx.dma));
		rnic_write(d, RNIC_REG_CTX_BASE_HI, upper_32_bits(d->ctx.dma));
	}
	memcpy(d->mac, m, sizeof(d->mac));
	d->ipv4 = (u32)a[0] << 24 | (u32)a[1] << 16 | (u32)a[2] << 8 | a[3];
	d->version = rnic_read(d, RNIC_REG_VERSION);
	d->max_qp = rnic_read(d, RNIC_REG_CAP_MAX_QP);
	d->max_cq = rnic_read(d, RNIC_REG_CAP_MAX_CQ);
	d->max_mr = rnic_read(d, RNIC_REG_CAP_MAX_MR);
	d->ready = true;
	/* The firmware answers commands: a nop through the ring. */
	err = rnic_cmd6(d, RNIC_CMD_NOP, 0, 0, 0, 0, 0, 0, NULL);
	if (err) {
		d->ready = false;
		return err;
	}
	dev_info(&d->pdev->dev, "device ready: %u QPs, %u CQs, %u MRs; command ring at %pad, first command %u; %s %s\n",
		 d->max_qp, d->max_cq, d->max_mr, &d->cmdq.dma, d->cmd_prod - 1, ip, mac);
	return 0;
}

/* The next completion of cq, or -EAGAIN when none is there. */
static int rnic_poll_cq(struct rnic_dev *d, struct rnic_cq *cq, struct rnic_cqe *out)
{
	const u8 *e = (const u8 *)cq->ring.cpu + (cq->consumer % RNIC_CQ_ENTRIES) * RNIC_CQE_SIZE;
	u32 want = (cq->consumer / RNIC_CQ_ENTRIES) % 2 == 0 ? 1 : 0;
	u32 owner = le32_to_cpu(READ_ONCE(*(const u32 *)(e + RNIC_CQE_OWNER)));

	if ((owner >> 31) != want)
		return -EAGAIN;
	dma_rmb(); /* the entry after its owner word */
	out->wr_id = get_le(e, RNIC_CQE_WR_ID, 8);
	out->byte_len = (u32)get_le(e, RNIC_CQE_BYTE_LEN, 4);
	out->opcode = e[RNIC_CQE_OPCODE];
	out->status = e[RNIC_CQE_STATUS];
	out->qpn = (u16)get_le(e, RNIC_CQE_QPN, 2);
	out->wqe_index = (u32)get_le(e, RNIC_CQE_WQE_INDEX, 4);
	out->owner = owner;
	cq->consumer++;
	rnic_write(d, RNIC_CQ_DOORBELL(cq->cqn) + RNIC_CQ_CONSUMER, cq->consumer);
	return 0;
}

static int rnic_post_send(struct rnic_dev *d, struct rnic_qp *qp, u8 opcode, u64 wr_id, dma_addr_t local, u32 len,
			  u32 lstag, u64 remote_to, u32 rstag)
{
	u8 *w;

	if (qp->sq_prod - qp->sq_done >= RNIC_SQ_ENTRIES)
		return -ENOSPC;
	w = (u8 *)qp->sq.cpu + (qp->sq_prod % RNIC_SQ_ENTRIES) * RNIC_SEND_WQE_SIZE;
	rnic_write_send_wqe(w, opcode, RNIC_WR_FLAG_SIGNALED, wr_id, local, len, lstag, remote_to, rstag, 0);
	qp->sq_prod++;
	dma_wmb();
	rnic_write(d, RNIC_QP_DOORBELL(qp->qpn) + RNIC_SQ_DOORBELL, qp->sq_prod);
	return 0;
}

static int rnic_post_recv(struct rnic_dev *d, struct rnic_qp *qp, u64 wr_id, dma_addr_t addr, u32 len, u32 stag)
{
	u8 *w = (u8 *)qp->rq.cpu + (qp->rq_prod % RNIC_RQ_ENTRIES) * RNIC_RECV_WQE_SIZE;

	rnic_write_recv_wqe(w, wr_id, addr, len, stag);
	qp->rq_prod++;
	dma_wmb();
	rnic_write(d, RNIC_QP_DOORBELL(qp->qpn) + RNIC_RQ_DOORBELL, qp->rq_prod);
	return 0;
}

/* Tears down whatever the self-test created, in the order the firmware requires. */
static void rnic_teardown(struct rnic_dev *d)
{
	unsigned int i;
	u32 word = 0;

	if (d->qp.live) {
		if (d->qp.connected) {
			/* Graceful close, then wait (bounded) for the QP to leave Closing. */
			rnic_cmd6(d, RNIC_CMD_MODIFY_QP, d->qp.qpn, RNIC_QP_STATE_CLOSING, 0, 0, 0, 0, NULL);
			for (i = 0; i < 200; i++) {
				if (rnic_cmd6(d, RNIC_CMD_QUERY_QP, d->qp.qpn, 0, 0, 0, 0, 0, &word) ||
				    (word & RNIC_QUERY_QP_STATE_MASK) == RNIC_QP_STATE_IDLE ||
				    (word & RNIC_QUERY_QP_STATE_MASK) == RNIC_QP_STATE_ERROR)
					break;
				msleep(10);
			}
			if ((word & RNIC_QUERY_QP_STATE_MASK) != RNIC_QP_STATE_IDLE &&
			    (word & RNIC_QUERY_QP_STATE_MASK) != RNIC_QP_STATE_ERROR)
				rnic_cmd6(d, RNIC_CMD_MODIFY_QP, d->qp.qpn, RNIC_QP_STATE_ERROR, 0, 0, 0, 0, NULL);
		}
		if (rnic_cmd6(d, RNIC_CMD_DESTROY_QP, d->qp.qpn, 0, 0, 0, 0, 0, NULL) == 0)
			dev_info(&d->pdev->dev, "QP %u destroyed\n", d->qp.qpn);
		d->qp.live = false;
	}
	if (d->cq.live) {
		rnic_cmd6(d, RNIC_CMD_DESTROY_CQ, d->cq.cqn, 0, 0, 0, 0, 0, NULL);
		d->cq.live = false;
	}
	for (i = 0; i < d->nstags; i++)
		rnic_cmd6(d, RNIC_CMD_DEREG_MR, d->stags[i], 0, 0, 0, 0, 0, NULL);
	d->nstags = 0;
	/* The device no longer refers to these. */
	rnic_free(d, &d->qp.sq);
	rnic_free(d, &d->qp.rq);
	rnic_free(d, &d->cq.ring);
	rnic_free(d, &d->buf);
}

static int rnic_reg_mr(struct rnic_dev *d, dma_addr_t addr, u32 len, u32 access, u32 *stag)
{
	int err = rnic_cmd6(d, RNIC_CMD_REG_MR, addr, len, access | (u64)RNIC_PD << 32, addr, 0, 0, stag);

	if (!err)
		d->stags[d->nstags++] = *stag;
	return err;
}

/* Waits for the next receive completion, consuming send completions; re-posts the receive. */
static int rping_wait_recv(struct rnic_dev *d, dma_addr_t recv, u32 recv_stag, const char *what)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(cmd_timeout_ms);
	struct rnic_cqe e;

	for (;;) {
		if (rnic_poll_cq(d, &d->cq, &e) == -EAGAIN) {
			if (time_after(jiffies, deadline)) {
				dev_err(&d->pdev->dev, "selftest: no completion while waiting for %s\n", what);
				return -ETIMEDOUT;
			}
			usleep_range(20, 100);
			continue;
		}
		if (e.status != RNIC_CQE_STATUS_SUCCESS || e.opcode == RNIC_CQE_OPCODE_QP_ERROR) {
			dev_err(&d->pdev->dev, "selftest: completion with status %u opcode %u while waiting for %s\n",
				e.status, e.opcode, what);
			return -EIO;
		}
		if (!(e.owner & RNIC_CQE_OWNER_RECEIVE)) {
			d->qp.sq_done = e.wqe_index + 1;
			continue;
		}
		if (e.byte_len != RNIC_INFO) {
			dev_err(&d->pdev->dev, "selftest: received %u bytes (rping sends %u)\n", e.byte_len, RNIC_INFO);
			return -EPROTO;
		}
		return rnic_post_recv(d, &d->qp, 1, recv, RNIC_INFO, recv_stag);
	}
}

static int rnic_selftest(struct rnic_dev *d)
{
	const u32 all = RNIC_MR_LOCAL_WRITE | RNIC_MR_REMOTE_READ | RNIC_MR_REMOTE_WRITE;
	u32 slot = ALIGN(rping_size, 64), recv_stag, send_stag, rdma_stag, start_stag, peer;
	dma_addr_t recv, send, rdma, start;
	u8 *cpu, *expect;
	unsigned int ping;
	u64 bad = 0, checked = 0, t0;
	int err;

	if (rping_size < 26 || rping_size > 65536 || !in4_pton(server_ip, -1, (u8 *)&peer, -1, NULL))
		return -EINVAL;
	peer = be32_to_cpu((__force __be32)peer);
	err = rnic_alloc(d, &d->buf, 64 + 2 * (size_t)slot);
	if (err)
		return err;
	cpu = d->buf.cpu;
	memset(cpu, 0, d->buf.size);
	recv = d->buf.dma;
	send = d->buf.dma + 32;
	rdma = d->buf.dma + 64;
	start = d->buf.dma + 64 + slot;
	err = rnic_reg_mr(d, recv, RNIC_INFO, RNIC_MR_LOCAL_WRITE, &recv_stag) ?:
	      rnic_reg_mr(d, send, RNIC_INFO, 0, &send_stag) ?:
	      rnic_reg_mr(d, rdma, rping_size, all, &rdma_stag) ?:
	      rnic_reg_mr(d, start, rping_size, all, &start_stag);
	if (err)
		return err;
	err = rnic_alloc(d, &d->cq.ring, RNIC_CQ_ENTRIES * RNIC_CQE_SIZE) ?:
	      rnic_alloc(d, &d->qp.sq, RNIC_SQ_ENTRIES * RNIC_SEND_WQE_SIZE) ?:
	      rnic_alloc(d, &d->qp.rq, RNIC_RQ_ENTRIES * RNIC_RECV_WQE_SIZE);
	if (err)
		return err;
	memset(d->cq.ring.cpu, 0, d->cq.ring.size); /* phase 0 everywhere: nothing new yet */
	err = rnic_cmd6(d, RNIC_CMD_CREATE_CQ, d->cq.ring.dma, RNIC_CQ_ENTRIES, 1, 0, 0, 0, &d->cq.cqn);
	if (err)
		return err;
	d->cq.live = true;
	err = rnic_cmd6(d, RNIC_CMD_CREATE_QP, d->qp.sq.dma, RNIC_SQ_ENTRIES, d->qp.rq.dma, RNIC_RQ_ENTRIES,
			d->cq.cqn | (u64)d->cq.cqn << 32, RNIC_PD, &d->qp.qpn);
	if (err)
		return err;
	d->qp.live = true;
	dev_info(&d->pdev->dev, "selftest: CQ %u, QP %u, STags %#x %#x %#x %#x\n", d->cq.cqn, d->qp.qpn, recv_stag,
		 send_stag, rdma_stag, start_stag);
	rnic_post_recv(d, &d->qp, 1, recv, RNIC_INFO, recv_stag);
	err = rnic_cmd6(d, RNIC_CMD_CONNECT, d->qp.qpn, peer | (u64)server_port << 32, 40000, 1 | 1u << 16, 0, 0,
			NULL);
	if (err)
		return err;
	d->qp.connected = true;
	dev_info(&d->pdev->dev, "selftest: connected to %s:%u\n", server_ip, server_port);
	expect = kmalloc(rping_size, GFP_KERNEL);
	if (!expect)
		return -ENOMEM;
	t0 = ktime_get_ns();
	for (ping = 0; ping < rping_count && !err; ping++) {
		u8 *info = cpu + 32;

		rnic_rping_pattern(expect, ping, rping_size);
		memcpy(cpu + 64 + slot, expect, rping_size);
		memset(cpu + 64, 0, rping_size); /* the echo must really arrive */
		/* Advertise the start buffer: rping_rdma_info, big-endian buf (our TO), rkey, size. */
		put_unaligned_be64(start, info);
		put_unaligned_be32(start_stag, info + 8);
		put_unaligned_be32(rping_size, info + 12);
		err = rnic_post_send(d, &d->qp, RNIC_WR_SEND, 2, send, RNIC_INFO, send_stag, 0, 0) ?:
		      rping_wait_recv(d, recv, recv_stag, "the go-ahead after the server's RDMA Read");
		if (err)
			break;
		put_unaligned_be64(rdma, info);
		put_unaligned_be32(rdma_stag, info + 8);
		put_unaligned_be32(rping_size, info + 12);
		err = rnic_post_send(d, &d->qp, RNIC_WR_SEND, 2, send, RNIC_INFO, send_stag, 0, 0) ?:
		      rping_wait_recv(d, recv, recv_stag, "the go-ahead after the server's RDMA Write");
		if (err)
			break;
		if (memcmp(cpu + 64, expect, rping_size) != 0) {
			unsigned int i, first = rping_size;

			for (i = 0; i < rping_size; i++) {
				if (cpu[64 + i] != expect[i]) {
					bad++;
					if (first == rping_size)
						first = i;
				}
			}
			dev_err(&d->pdev->dev, "selftest: ping %u: %llu bytes of the echo differ, the first at %u\n",
				ping, bad, first);
			err = -EILSEQ;
		}
		checked += rping_size;
	}
	kfree(expect);
	if (!err && strstr(inject, "bad_wqe")) {
		/* A malformed work request: the device completes it with its error status. */
		unsigned long deadline = jiffies + msecs_to_jiffies(5000);
		struct rnic_cqe e = { 0 };
		bool seen = false;

		rnic_post_send(d, &d->qp, 0x55, 0x55, send, RNIC_INFO, send_stag, 0, 0);
		while (!seen && time_before(jiffies, deadline)) {
			if (rnic_poll_cq(d, &d->cq, &e) == -EAGAIN) {
				usleep_range(20, 100);
				continue;
			}
			seen = e.wr_id == 0x55;
		}
		dev_info(&d->pdev->dev, "inject bad_wqe: opcode 0x55 -> %s completion status %u%s\n",
			 seen ? "a" : "no", e.status, e.status == RNIC_CQE_STATUS_BAD_OPCODE ? " (bad opcode)" : "");
		if (!seen || e.status != RNIC_CQE_STATUS_BAD_OPCODE)
			err = -EPROTO;
	}
	if (!err)
		dev_info(&d->pdev->dev,
			 "selftest: %u pings of %u bytes, %llu bytes checked, %llu bad; %llu us wall per ping (2 Sends, the "
			 "server's RDMA Read and RDMA Write)\n",
			 rping_count, rping_size, checked, bad, div_u64(ktime_get_ns() - t0, 1000 * rping_count));
	return err;
}

/* The wall-clock cost of BAR accesses as the guest sees it (each one a round trip to rnic-sim). */
static void rnic_bar_bench(struct rnic_dev *d)
{
	u64 t0, t1, t2;
	unsigned int i;
	u32 sink = 0;

	t0 = ktime_get_ns();
	for (i = 0; i < bar_bench; i++)
		sink += rnic_read(d, RNIC_REG_VERSION);
	t1 = ktime_get_ns();
	for (i = 0; i < bar_bench; i++)
		rnic_write(d, RNIC_REG_INTR_CAUSE, 0); /* write-1-to-clear: 0 changes nothing */
	t2 = ktime_get_ns();
	dev_info(&d->pdev->dev, "BAR cost: %u reads %llu ns each, %u writes %llu ns each (wall, guest clock; %u)\n",
		 bar_bench, div_u64(t1 - t0, bar_bench), bar_bench, div_u64(t2 - t1, bar_bench), sink & 1);
}

/*
 * Misuse on purpose, to see the device answer with its error status and the model log it while the
 * simulation and the guest carry on: every case is followed by a working self-test.
 */
static void rnic_inject(struct rnic_dev *d)
{
	u32 result = 0, cons;
	int err;

	if (strstr(inject, "bad_dma")) {
		/* A command ring outside guest RAM: the firmware's fetch is refused by host memory. */
		const u64 outside = 64ull << 30;

		mutex_lock(&d->cmd_lock);
		cons = rnic_read(d, RNIC_REG_CMDQ_CONS);
		rnic_write(d, RNIC_REG_CMDQ_BASE_LO, lower_32_bits(outside));
		rnic_write(d, RNIC_REG_CMDQ_BASE_HI, upper_32_bits(outside));
		rnic_write(d, RNIC_REG_CMDQ_PROD, ++d->cmd_prod);
		msleep(50); /* the firmware tries the fetch (simulated time runs with wall time) */
		rnic_write(d, RNIC_REG_CMDQ_BASE_LO, lower_32_bits(d->cmdq.dma));
		rnic_write(d, RNIC_REG_CMDQ_BASE_HI, upper_32_bits(d->cmdq.dma));
		mutex_unlock(&d->cmd_lock);
		dev_info(&d->pdev->dev, "inject bad_dma: command ring at %#llx; consumer %u -> %u (the fetch failed)\n",
			 outside, cons, rnic_read(d, RNIC_REG_CMDQ_CONS));
	}
	if (strstr(inject, "bad_doorbell")) {
		u32 qpn = rnic_read(d, RNIC_REG_CAP_MAX_QP) - 1;

		rnic_write(d, RNIC_QP_DOORBELL(qpn) + RNIC_SQ_DOORBELL, 1);
		rnic_write(d, RNIC_QP_DOORBELL(qpn) + RNIC_RQ_DOORBELL, 1);
		dev_info(&d->pdev->dev, "inject bad_doorbell: rang QP %u, which does not exist\n", qpn);
	}
	if (strstr(inject, "bad_command")) {
		err = rnic_cmd6(d, 0x55, 0, 0, 0, 0, 0, 0, &result);
		dev_info(&d->pdev->dev, "inject bad_command: opcode 0x55 -> %d\n", err);
	}
	if (strstr(inject, "bad_order")) {
		/* Commands out of order: the CQ goes before the QP that uses it. */
		struct rnic_coherent cq = { 0 }, sq = { 0 }, rq = { 0 };
		u32 cqn = 0, qpn = 0, status = 0;

		if (!rnic_alloc(d, &cq, PAGE_SIZE) && !rnic_alloc(d, &sq, PAGE_SIZE) && !rnic_alloc(d, &rq, PAGE_SIZE)) {
			memset(cq.cpu, 0, PAGE_SIZE);
			if (!rnic_cmd6(d, RNIC_CMD_CREATE_CQ, cq.dma, 16, 1, 0, 0, 0, &cqn) &&
			    !rnic_cmd6(d, RNIC_CMD_CREATE_QP, sq.dma, 4, rq.dma, 4, cqn | (u64)cqn << 32, RNIC_PD, &qpn)) {
				err = rnic_command(d, RNIC_CMD_DESTROY_CQ, cqn, 0, 0, 0, 0, 0, NULL, &status);
				dev_info(&d->pdev->dev, "inject bad_order: destroy_cq %u under QP %u -> %d, %s\n", cqn, qpn,
					 err, rnic_cmd_status(status));
				rnic_cmd6(d, RNIC_CMD_DESTROY_QP, qpn, 0, 0, 0, 0, 0, NULL);
				rnic_cmd6(d, RNIC_CMD_DESTROY_CQ, cqn, 0, 0, 0, 0, 0, NULL);
			}
		}
		rnic_free(d, &rq);
		rnic_free(d, &sq);
		rnic_free(d, &cq);
	}
}

static int rnic_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct rnic_dev *d;
	int err;

	d = devm_kzalloc(&pdev->dev, sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->pdev = pdev;
	mutex_init(&d->cmd_lock);
	pci_set_drvdata(pdev, d);
	err = pcim_enable_device(pdev);
	if (err)
		return err;
	err = pcim_iomap_regions(pdev, BIT(0), DRV_NAME);
	if (err)
		return err;
	d->bar0 = pcim_iomap_table(pdev)[0];
	if (pci_resource_len(pdev, 0) < RNIC_BAR0_SIZE) {
		dev_err(&pdev->dev, "BAR0 is %llu bytes, the device has %u\n",
			(unsigned long long)pci_resource_len(pdev, 0), RNIC_BAR0_SIZE);
		return -ENODEV;
	}
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		return err;
	pci_set_master(pdev);
	if (rnic_read(d, RNIC_REG_ID) != (RNIC_PCI_VENDOR_ID << 16 | RNIC_PCI_DEVICE_ID)) {
		dev_err(&pdev->dev, "unexpected ID register 0x%08x\n", rnic_read(d, RNIC_REG_ID));
		return -ENODEV;
	}
	dev_info(&pdev->dev, "RNIC interface version %u.%u, BAR0 at %pR\n", rnic_read(d, RNIC_REG_VERSION) >> 16,
		 rnic_read(d, RNIC_REG_VERSION) & 0xffff, &pdev->resource[0]);
	err = rnic_bringup(d);
	if (err)
		goto fail;
	if (bar_bench > 0)
		rnic_bar_bench(d);
	if (inject[0] != '\0')
		rnic_inject(d);
	if (rping_count > 0) {
		selftest_result = rnic_selftest(d);
		if (selftest_result == 0)
			pr_info("rnic: selftest: PASS (%u pings of %u bytes against %s:%u)\n", rping_count, rping_size,
				server_ip, server_port);
		else
			pr_info("rnic: selftest: FAIL (error %d)\n", selftest_result);
		rnic_teardown(d);
	}
	err = rnic_cdev_register(d);
	if (err)
		goto fail;
	if (ib) {
		err = rnic_ib_register(d);
		if (err) {
			rnic_cdev_unregister(d);
			goto fail;
		}
	}
	return 0;
fail:
	rnic_teardown(d);
	rnic_free(d, &d->ctx);
	rnic_free(d, &d->cmdq);
	pci_clear_master(pdev);
	return err;
}

static void rnic_remove(struct pci_dev *pdev)
{
	struct rnic_dev *d = pci_get_drvdata(pdev);

	rnic_ib_unregister(d); /* the RDMA core's consumers let go of the device first */
	rnic_cdev_unregister(d); /* waits for no file to be open: each release tore its objects down */
	rnic_teardown(d);
	d->ready = false;
	rnic_write(d, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	rnic_free(d, &d->ctx);
	rnic_free(d, &d->cmdq);
	pci_clear_master(pdev);
	dev_info(&pdev->dev, "removed\n");
}

static const struct pci_device_id rnic_ids[] = {
	{ PCI_DEVICE(RNIC_PCI_VENDOR_ID, RNIC_PCI_DEVICE_ID) },
	{ 0 }
};
MODULE_DEVICE_TABLE(pci, rnic_ids);

static struct pci_driver rnic_driver = {
	.name = DRV_NAME,
	.id_table = rnic_ids,
	.probe = rnic_probe,
	.remove = rnic_remove,
};
module_pci_driver(rnic_driver);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Driver for the rnic-vp modelled iWARP RNIC (polling, self-test, RDMA core iWARP device)");
