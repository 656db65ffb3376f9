// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues of the RDMA-core side of rnic.ko (docs/architecture.md, "rnic.ko and the kernel
 * RDMA core"): coherent rings of the device's 32-byte CQEs read by their phase bit and mapped to
 * ib_wc, and the completion poller. No interrupt reaches the guest, so armed CQs are watched by a
 * timer that calls their completion handlers, in softirq context as an interrupt handler would.
 */
#include <linux/dma-mapping.h>
#include <linux/hrtimer.h>
#include <linux/log2.h>
#include <linux/module.h>

#include "rnic_ib.h"
#include "rnic_ib_abi.h"
#include "rnic_regs.h"

#define RNIC_IB_MAX_CQE 4095u /* ring entries at most 4096 (the firmware's limit for rings) */

static unsigned int cq_poll_us = 100;
module_param(cq_poll_us, uint, 0444);
MODULE_PARM_DESC(cq_poll_us, "RDMA core: how often armed CQs are looked at for a completion handler to call (us, "
		 "10..100000); no interrupt reaches the guest");

static ktime_t poll_interval(void)
{
	return ns_to_ktime((u64)clamp(cq_poll_us, 10u, 100000u) * NSEC_PER_USEC);
}


static bool cqe_ready(struct rnic_ib_cq *cq)
{
	/* A user CQ's consumer index is the provider's, published in its ring mapping (rnic_ib_abi.h). */
	u32 consumer = cq->user ? READ_ONCE(*cq->user_consumer) : cq->consumer;
	const u8 *e = (const u8 *)cq->ring.cpu + (consumer & (cq->entries - 1)) * RNIC_CQE_SIZE;
	u32 want = (consumer / cq->entries) % 2 == 0 ? 1 : 0;

	return (le32_to_cpu(READ_ONCE(*(const __le32 *)(e + RNIC_CQE_OWNER))) >> 31) == want;
}

static void free_ring(struct rnic_ib_dev *rdev, struct rnic_ib_cq *cq)
{
	if (!IS_ERR_OR_NULL(cq->ring_entry))
		rdma_user_mmap_entry_remove(cq->ring_entry);
	if (!IS_ERR_OR_NULL(cq->db_entry))
		rdma_user_mmap_entry_remove(cq->db_entry);
	cq->ring_entry = cq->db_entry = NULL;
	if (cq->user)
		rnic_ib_uring_free(rdev, &cq->ring);
	else
		rnic_free(rdev->d, &cq->ring);
}

int rnic_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr, struct ib_udata *udata)
{
	struct rnic_ib_cq *cq = container_of(ibcq, struct rnic_ib_cq, ibcq);
	struct rnic_ib_dev *rdev = to_rdev(ibcq->device);
	struct rnic_ib_create_cq_resp resp = {};
	int err;

	if (attr->flags || attr->cqe < 1 || attr->cqe > (int)RNIC_IB_MAX_CQE)
		return -EINVAL;
	cq->entries = max_t(u32, 2, roundup_pow_of_two(attr->cqe + 1));
	spin_lock_init(&cq->lock);
	cq->user = udata != NULL;
	if (cq->user)
		/* The ring, then the provider's consumer index (rnic_ib_abi.h), in pages it maps. */
		err = rnic_ib_uring_alloc(rdev, &cq->ring, cq->entries * RNIC_CQE_SIZE + sizeof(u32));
	else
		err = rnic_alloc(rdev->d, &cq->ring, PAGE_ALIGN(cq->entries * RNIC_CQE_SIZE));
	if (err)
		return err;
	memset(cq->ring.cpu, 0, cq->ring.size); /* phase 0 everywhere: nothing yet */
	cq->user_consumer = (u32 *)((u8 *)cq->ring.cpu + cq->entries * RNIC_CQE_SIZE);
	err = rnic_command(rdev->d, RNIC_CMD_CREATE_CQ, cq->ring.dma, cq->entries, 1, 0, 0, 0, &cq->cqn, NULL);
	if (err) {
		free_ring(rdev, cq);
		return err;
	}
	if (cq->user) {
		struct ib_ucontext *uctx = &rdma_udata_to_drv_context(udata, struct rnic_ib_ucontext, ibuc)->ibuc;
		u32 db = RNIC_CQ_DOORBELL(cq->cqn);

		cq->ring_entry = rnic_ib_umap_insert(uctx, cq->ring.cpu, 0, cq->ring.size, &resp.ring_mmap);
		cq->db_entry = IS_ERR(cq->ring_entry) ? NULL :
			       rnic_ib_umap_insert(uctx, NULL, db, PAGE_SIZE, &resp.db_mmap);
		resp.ring_size = cq->ring.size;
		resp.entries = cq->entries;
		resp.cqn = cq->cqn;
		resp.db_offset = db & ~PAGE_MASK;
		resp.consumer_offset = cq->entries * RNIC_CQE_SIZE;
		err = IS_ERR(cq->ring_entry) ? PTR_ERR(cq->ring_entry) : !cq->db_entry ? -ENOMEM :
		      IS_ERR(cq->db_entry) ? PTR_ERR(cq->db_entry) :
		      udata->outlen < sizeof(resp) ? -EINVAL : ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			rnic_command(rdev->d, RNIC_CMD_DESTROY_CQ, cq->cqn, 0, 0, 0, 0, 0, NULL, NULL);
			free_ring(rdev, cq);
			return err;
		}
	}
	ibcq->cqe = cq->entries - 1;
	spin_lock_bh(&rdev->cq_list_lock);
	list_add_tail(&cq->node, &rdev->cqs);
	spin_unlock_bh(&rdev->cq_list_lock);
	return 0;
}

int rnic_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct rnic_ib_cq *cq = container_of(ibcq, struct rnic_ib_cq, ibcq);
	struct rnic_ib_dev *rdev = to_rdev(ibcq->device);
	int err;

	/* A CQ the firmware keeps (a QP still on it: the core prevents that) keeps its ring too: the
	 * device may still write it. */
	err = rnic_command(rdev->d, RNIC_CMD_DESTROY_CQ, cq->cqn, 0, 0, 0, 0, 0, NULL, NULL);
	if (err)
		return err;
	spin_lock_bh(&rdev->cq_list_lock);
	list_del(&cq->node);
	spin_unlock_bh(&rdev->cq_list_lock);
	free_ring(rdev, cq);
	return 0;
}

static enum ib_wc_status wc_status(u8 s)
{
	switch (s) {
	case RNIC_CQE_STATUS_SUCCESS: return IB_WC_SUCCESS;
	case RNIC_CQE_STATUS_LOCAL_LENGTH_ERROR: return IB_WC_LOC_LEN_ERR;
	case RNIC_CQE_STATUS_LOCAL_PROTECTION_ERROR: return IB_WC_LOC_PROT_ERR;
	case RNIC_CQE_STATUS_REMOTE_ACCESS_ERROR: return IB_WC_REM_ACCESS_ERR;
	case RNIC_CQE_STATUS_REMOTE_OPERATION_ERROR: return IB_WC_REM_OP_ERR;
	case RNIC_CQE_STATUS_FLUSHED: return IB_WC_WR_FLUSH_ERR;
	case RNIC_CQE_STATUS_REMOTE_INVALID_REQUEST: return IB_WC_REM_INV_REQ_ERR;
	case RNIC_CQE_STATUS_BAD_OPCODE: return IB_WC_LOC_QP_OP_ERR;
	}
	return IB_WC_GENERAL_ERR; /* transport_error and anything unknown */
}

static enum ib_wc_opcode wc_opcode(u8 op, bool receive)
{
	if (receive)
		return op == RNIC_WR_RDMA_WRITE_WITH_IMM ? IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV;
	switch (op) {
	case RNIC_WR_RDMA_WRITE: return IB_WC_RDMA_WRITE;
	case RNIC_WR_RDMA_READ: return IB_WC_RDMA_READ;
	case RNIC_WR_ATOMIC_FETCH_ADD: return IB_WC_FETCH_ADD;
	case RNIC_WR_ATOMIC_COMPARE_SWAP: return IB_WC_COMP_SWAP;
	case RNIC_WR_LOCAL_INVALIDATE: return IB_WC_LOCAL_INV;
	}
	return IB_WC_SEND;
}

int rnic_ib_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct rnic_ib_cq *cq = container_of(ibcq, struct rnic_ib_cq, ibcq);
	struct rnic_ib_dev *rdev = to_rdev(ibcq->device);
	struct rnic_ib_qp *errored[4];
	unsigned int nerr = 0, i;
	unsigned long flags;
	u32 start;
	int n = 0;

	if (cq->user)
		return -EOPNOTSUPP; /* the provider polls its ring itself; two consumers would race */
	spin_lock_irqsave(&cq->lock, flags);
	start = cq->consumer;
	while (n < num && cqe_ready(cq)) {
		const u8 *e = (const u8 *)cq->ring.cpu + (cq->consumer & (cq->entries - 1)) * RNIC_CQE_SIZE;
		u32 owner, index;
		struct rnic_ib_qp *qp;
		bool receive;
		u8 op;

		dma_rmb(); /* the entry after its owner word */
		owner = le32_to_cpu(*(const __le32 *)(e + RNIC_CQE_OWNER));
		op = e[RNIC_CQE_OPCODE];
		index = le32_to_cpu(*(const __le32 *)(e + RNIC_CQE_WQE_INDEX));
		receive = owner & RNIC_CQE_OWNER_RECEIVE;
		cq->consumer++;
		qp = xa_load(&rdev->qps, le16_to_cpu(*(const __le16 *)(e + RNIC_CQE_QPN)));
		if (!qp)
			continue; /* an entry of a QP destroyed since: nobody to report it to */
		if (op == RNIC_CQE_OPCODE_QP_ERROR) {
			/* Not a work request: the QP went to Error (a Terminate, a lost stream). */
			if (nerr < ARRAY_SIZE(errored)) {
				rnic_qp_get(qp);
				errored[nerr++] = qp;
			}
			continue;
		}
		if (receive)
			WRITE_ONCE(qp->rq_done, index + 1);
		else
			WRITE_ONCE(qp->sq_done, index + 1);
		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = le64_to_cpu(*(const __le64 *)(e + RNIC_CQE_WR_ID));
		wc[n].status = wc_status(e[RNIC_CQE_STATUS]);
		wc[n].vendor_err = e[RNIC_CQE_STATUS];
		wc[n].opcode = wc_opcode(op, receive);
		wc[n].byte_len = le32_to_cpu(*(const __le32 *)(e + RNIC_CQE_BYTE_LEN));
		wc[n].qp = &qp->ibqp;
		if (owner & (RNIC_CQE_FLAG_INVALIDATED << RNIC_CQE_OWNER_FLAGS_SHIFT)) {
			wc[n].wc_flags |= IB_WC_WITH_INVALIDATE;
			wc[n].ex.invalidate_rkey = le32_to_cpu(*(const __le32 *)(e + RNIC_CQE_IMM_DATA));
		}
		n++;
	}
	if (cq->consumer != start)
		iowrite32(cq->consumer, rdev->d->bar0 + RNIC_CQ_DOORBELL(cq->cqn) + RNIC_CQ_CONSUMER);
	spin_unlock_irqrestore(&cq->lock, flags);
	for (i = 0; i < nerr; i++) {
		struct ib_event ev = { .device = &rdev->ibdev, .element.qp = &errored[i]->ibqp,
				       .event = IB_EVENT_QP_FATAL };

		errored[i]->state = IB_QPS_ERR;
		errored[i]->fw_connected = false;
		if (errored[i]->ibqp.event_handler)
			errored[i]->ibqp.event_handler(&ev, errored[i]->ibqp.qp_context);
		rnic_ep_close(errored[i], false);
		rnic_qp_put(errored[i]);
	}
	return n;
}

int rnic_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct rnic_ib_cq *cq = container_of(ibcq, struct rnic_ib_cq, ibcq);
	struct rnic_ib_dev *rdev = to_rdev(ibcq->device);
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* Solicited-only arming is served as next-completion: more events than asked, never fewer. */
	cq->armed = true;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cqe_ready(cq))
		missed = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	/* A poller running now (not queued) has looked at this CQ already or will: start it again. */
	if (!READ_ONCE(rdev->stopping) && !hrtimer_is_queued(&rdev->poll_timer))
		hrtimer_start(&rdev->poll_timer, poll_interval(), HRTIMER_MODE_REL_SOFT);
	return missed;
}

/*
 * The interrupt the guest cannot get: every cq_poll_us while a CQ is armed, an armed CQ whose next
 * entry is there is disarmed and its completion handler called (softirq context, as from an
 * interrupt). Only coherent memory is read, no BAR.
 */
static enum hrtimer_restart rnic_ib_poll_timer(struct hrtimer *t)
{
	struct rnic_ib_dev *rdev = container_of(t, struct rnic_ib_dev, poll_timer);
	struct rnic_ib_cq *cq;
	bool still_armed = false;

	spin_lock(&rdev->cq_list_lock);
	list_for_each_entry(cq, &rdev->cqs, node) {
		unsigned long flags;
		bool fire;

		spin_lock_irqsave(&cq->lock, flags);
		fire = cq->armed && cqe_ready(cq);
		if (fire)
			cq->armed = false;
		still_armed |= cq->armed;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (fire && cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	}
	spin_unlock(&rdev->cq_list_lock);
	if (!still_armed || READ_ONCE(rdev->stopping))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, poll_interval());
	return HRTIMER_RESTART;
}

void rnic_ib_poller_init(struct rnic_ib_dev *rdev)
{
	hrtimer_init(&rdev->poll_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	rdev->poll_timer.function = rnic_ib_poll_timer;
}
