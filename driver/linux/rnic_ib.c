// SPDX-License-Identifier: GPL-2.0
/*
 * The device as an iWARP RNIC of the kernel RDMA core: ib_device registration and the verbs
 * (docs/architecture.md, "rnic.ko and the kernel RDMA core"). Objects are the firmware's (commands
 * through rnic_command); rings live in coherent DMA memory and the data path (WQEs, doorbells, CQE
 * polling) is the same as the self-test's and /dev/rnic0's, by the layouts of rnic_regs.h.
 * Completion queues and their poller: rnic_ib_cq.c.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <net/addrconf.h>

#include "rnic_ib.h"
#include "rnic_ib_abi.h"
#include "rnic_regs.h"
#include "rnic_wqe.h"

#define RNIC_IB_MAX_WR 4096u  /* ring entries at most (the firmware's limit for rings) */
#define RNIC_IB_MAX_PD 0xffffu
/* The RDMA engine's default IRD and ORD (models/rdma/engine_part.h, rnic.rdma.ird/ord). */
#define RNIC_IB_MAX_RD_ATOM 16
/* A firmware region over the whole DMA address space for get_dma_mr: 2^52 bytes, beyond any bus address. */
#define RNIC_IB_DMA_MR_LENGTH (1ull << 52)

/* ---- device, port ---- */

static int rnic_ib_query_device(struct ib_device *ibdev, struct ib_device_attr *attr, struct ib_udata *udata)
{
	struct rnic_dev *d = to_rdev(ibdev)->d;

	/* No driver-private input or output: whatever udata a provider passes is left alone. */
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = d->version;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = RNIC_IB_DMA_MR_LENGTH;
	attr->page_size_cap = GENMASK_ULL(RNIC_MAX_PAGE_SHIFT, RNIC_MIN_PAGE_SHIFT);
	attr->vendor_id = RNIC_PCI_VENDOR_ID;
	attr->vendor_part_id = RNIC_PCI_DEVICE_ID;
	attr->max_qp = d->max_qp;
	attr->max_qp_wr = RNIC_IB_MAX_WR - 1;
	attr->max_send_sge = 1;
	attr->max_recv_sge = 1;
	attr->max_sge_rd = 1;
	attr->max_cq = d->max_cq;
	attr->max_cqe = RNIC_IB_MAX_WR - 1;
	attr->max_mr = d->max_mr;
	attr->max_pd = RNIC_IB_MAX_PD;
	attr->max_qp_rd_atom = RNIC_IB_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = RNIC_IB_MAX_RD_ATOM;
	attr->max_res_rd_atom = RNIC_IB_MAX_RD_ATOM * d->max_qp;
	attr->atomic_cap = IB_ATOMIC_NONE;
	attr->max_pkeys = 1;
	return 0;
}

static int rnic_ib_query_port(struct ib_device *ibdev, u32 port, struct ib_port_attr *attr)
{
	struct net_device *ndev = to_rdev(ibdev)->ndev;

	/* iw_query_port has set state and phys_state from the interface; the rest is the device's. */
	attr->gid_tbl_len = 1;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = 0x7fffffff; /* a WQE's length is u32; RDMA Reads are limited further by the peer */
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = ib_mtu_int_to_enum(ndev->mtu);
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP;
	attr->active_width = IB_WIDTH_4X;
	attr->active_speed = IB_SPEED_EDR; /* about the 100 Gb/s of the platform's fastest link */
	return 0;
}

static int rnic_ib_get_port_immutable(struct ib_device *ibdev, u32 port, struct ib_port_immutable *imm)
{
	imm->gid_tbl_len = 1;
	imm->pkey_tbl_len = 1;
	imm->core_cap_flags = RDMA_CORE_PORT_IWARP;
	return 0;
}

/* The iWARP GID: the station MAC, then zeros (what rdma_cm builds from the interface's address). */
static int rnic_ib_query_gid(struct ib_device *ibdev, u32 port, int index, union ib_gid *gid)
{
	if (index != 0)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, to_rdev(ibdev)->d->mac, ETH_ALEN);
	return 0;
}

static int rnic_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

static struct net_device *rnic_ib_get_netdev(struct ib_device *ibdev, u32 port)
{
	struct net_device *ndev = to_rdev(ibdev)->ndev;

	dev_hold(ndev);
	return ndev;
}

/* ---- protection domains and memory regions ---- */

static int rnic_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rnic_ib_pd *pd = container_of(ibpd, struct rnic_ib_pd, ibpd);
	int id;

	/* A user PD (ib_uverbs) is the same firmware PD number; it has no driver-private data. */
	/* PD 1 is what the self-test and /dev/rnic0 use; the core's PDs start at 2 so none is shared. */
	id = ida_alloc_range(&to_rdev(ibpd->device)->pd_ida, 2, RNIC_IB_MAX_PD, GFP_KERNEL);
	if (id < 0)
		return id;
	pd->pdn = id;
	return 0;
}

static int rnic_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rnic_ib_pd *pd = container_of(ibpd, struct rnic_ib_pd, ibpd);

	ida_free(&to_rdev(ibpd->device)->pd_ida, pd->pdn);
	return 0;
}

static struct ib_mr *rnic_ib_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct rnic_ib_pd *pd = container_of(ibpd, struct rnic_ib_pd, ibpd);
	struct rnic_dev *d = to_rdev(ibpd->device)->d;
	struct rnic_ib_mr *mr;
	u32 stag = 0;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* VA-based at bus address 0: a work request's local address and a peer's tagged offset are both
	 * bus addresses, as kernel consumers name memory (ib_dma_map_*). */
	err = rnic_command(d, RNIC_CMD_REG_MR, 0, RNIC_IB_DMA_MR_LENGTH, access_to_device(access) | (u64)pd->pdn << 32,
			   0, 0, 0, &stag, NULL);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->stag = stag;
	mr->ibmr.lkey = stag;
	mr->ibmr.rkey = stag;
	return &mr->ibmr;
}

static int rnic_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rnic_ib_mr *mr = container_of(ibmr, struct rnic_ib_mr, ibmr);
	int err;

	err = rnic_command(to_rdev(ibmr->device)->d, RNIC_CMD_DEREG_MR, mr->stag, 0, 0, 0, 0, 0, NULL, NULL);
	if (err)
		return err;
	if (mr->umem)
		ib_umem_release(mr->umem); /* after the device forgot the region: no DMA to the pages now */
	kfree(mr);
	return 0;
}

/* ---- queue pairs ---- */

void rnic_qp_get(struct rnic_ib_qp *qp)
{
	refcount_inc(&qp->refs);
}

void rnic_qp_put(struct rnic_ib_qp *qp)
{
	if (refcount_dec_and_test(&qp->refs))
		complete(&qp->unreferenced);
}

static void rnic_iw_add_ref(struct ib_qp *ibqp)
{
	rnic_qp_get(to_rqp(ibqp));
}

static void rnic_iw_rem_ref(struct ib_qp *ibqp)
{
	rnic_qp_put(to_rqp(ibqp));
}

static struct ib_qp *rnic_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct rnic_ib_qp *qp = xa_load(&to_rdev(ibdev)->qps, qpn);

	return qp ? &qp->ibqp : NULL;
}

static u32 ring_entries(u32 wanted)
{
	return max_t(u32, 2, roundup_pow_of_two(wanted + 1));
}

/* The rings and, for a user QP, its mmap offsets (a mapping the process keeps holds its pages). */
static void rnic_ib_qp_free_rings(struct rnic_ib_dev *rdev, struct rnic_ib_qp *qp)
{
	struct rdma_user_mmap_entry **e[] = { &qp->sq_entry, &qp->rq_entry, &qp->db_entry };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(e); i++) {
		if (!IS_ERR_OR_NULL(*e[i]))
			rdma_user_mmap_entry_remove(*e[i]);
		*e[i] = NULL;
	}
	if (qp->user) {
		rnic_ib_uring_free(rdev, &qp->sq);
		rnic_ib_uring_free(rdev, &qp->rq);
	} else {
		rnic_free(rdev->d, &qp->sq);
		rnic_free(rdev->d, &qp->rq);
	}
}

static int rnic_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init, struct ib_udata *udata)
{
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	struct rnic_ib_dev *rdev = to_rdev(ibqp->device);
	struct rnic_ib_pd *pd = container_of(ibqp->pd, struct rnic_ib_pd, ibpd);
	struct rnic_ib_cq *scq = container_of(init->send_cq, struct rnic_ib_cq, ibcq);
	struct rnic_ib_cq *rcq = container_of(init->recv_cq, struct rnic_ib_cq, ibcq);
	struct rnic_dev *d = rdev->d;
	struct rnic_ib_create_qp_resp resp = {};
	int err;

	if (init->qp_type != IB_QPT_RC || init->srq || init->create_flags || init->cap.max_inline_data ||
	    init->cap.max_send_sge > 1 || init->cap.max_recv_sge > 1 || init->cap.max_send_wr >= RNIC_IB_MAX_WR ||
	    init->cap.max_recv_wr >= RNIC_IB_MAX_WR)
		return -EINVAL;
	qp->sq_entries = ring_entries(init->cap.max_send_wr);
	qp->rq_entries = ring_entries(init->cap.max_recv_wr);
	qp->pdn = pd->pdn;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->ep_lock);
	refcount_set(&qp->refs, 1);
	init_completion(&qp->unreferenced);
	qp->user = udata != NULL;
	if (qp->user) {
		/* Rings the provider maps (rnic_ib_user.c); the process writes the WQEs. */
		err = rnic_ib_uring_alloc(rdev, &qp->sq, qp->sq_entries * RNIC_SEND_WQE_SIZE) ?:
		      rnic_ib_uring_alloc(rdev, &qp->rq, qp->rq_entries * RNIC_RECV_WQE_SIZE);
	} else {
		err = rnic_alloc(d, &qp->sq, PAGE_ALIGN(qp->sq_entries * RNIC_SEND_WQE_SIZE)) ?:
		      rnic_alloc(d, &qp->rq, PAGE_ALIGN(qp->rq_entries * RNIC_RECV_WQE_SIZE));
	}
	if (err)
		goto fail;
	memset(qp->sq.cpu, 0, qp->sq.size);
	memset(qp->rq.cpu, 0, qp->rq.size);
	err = rnic_command(d, RNIC_CMD_CREATE_QP, qp->sq.dma, qp->sq_entries, qp->rq.dma, qp->rq_entries,
			   scq->cqn | (u64)rcq->cqn << 32, qp->pdn, &qp->qpn, NULL);
	if (err)
		goto fail;
	if (qp->user) {
		struct ib_ucontext *uctx = &rdma_udata_to_drv_context(udata, struct rnic_ib_ucontext, ibuc)->ibuc;
		u32 db = RNIC_QP_DOORBELL(qp->qpn);

		qp->sq_entry = rnic_ib_umap_insert(uctx, qp->sq.cpu, 0, qp->sq.size, &resp.sq_mmap);
		qp->rq_entry = IS_ERR(qp->sq_entry) ? NULL :
			       rnic_ib_umap_insert(uctx, qp->rq.cpu, 0, qp->rq.size, &resp.rq_mmap);
		qp->db_entry = IS_ERR_OR_NULL(qp->rq_entry) ? NULL :
			       rnic_ib_umap_insert(uctx, NULL, db, PAGE_SIZE, &resp.db_mmap);
		resp.sq_size = qp->sq.size;
		resp.rq_size = qp->rq.size;
		resp.sq_entries = qp->sq_entries;
		resp.rq_entries = qp->rq_entries;
		resp.qpn = qp->qpn;
		resp.db_offset = db & ~PAGE_MASK;
		err = IS_ERR(qp->sq_entry) ? PTR_ERR(qp->sq_entry) : !qp->rq_entry ? -ENOMEM :
		      IS_ERR(qp->rq_entry) ? PTR_ERR(qp->rq_entry) : !qp->db_entry ? -ENOMEM :
		      IS_ERR(qp->db_entry) ? PTR_ERR(qp->db_entry) :
		      ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
		if (!err && udata->outlen < sizeof(resp))
			err = -EINVAL; /* a provider of another ABI: it could not find its rings */
		if (err) {
			rnic_command(d, RNIC_CMD_DESTROY_QP, qp->qpn, 0, 0, 0, 0, 0, NULL, NULL);
			goto fail;
		}
	}
	err = xa_insert(&rdev->qps, qp->qpn, qp, GFP_KERNEL);
	if (err) {
		rnic_command(d, RNIC_CMD_DESTROY_QP, qp->qpn, 0, 0, 0, 0, 0, NULL, NULL);
		goto fail;
	}
	ibqp->qp_num = qp->qpn;
	init->cap.max_send_wr = qp->sq_entries - 1;
	init->cap.max_recv_wr = qp->rq_entries - 1;
	init->cap.max_send_sge = 1;
	init->cap.max_recv_sge = 1;
	return 0;
fail:
	rnic_ib_qp_free_rings(rdev, qp);
	return err;
}

static int rnic_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask, struct ib_udata *udata)
{
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	struct rnic_dev *d = to_rdev(ibqp->device)->d;
	int err = 0;

	/* ibv_modify_qp passes no driver-private data; any udata is ignored. */
	if (!(mask & IB_QP_STATE))
		return 0; /* access flags, IRD/ORD: the firmware's connect and the regions decide them */
	switch (attr->qp_state) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
	case IB_QPS_RTS:
		/* Bookkeeping only: the firmware's connect brings its QP to RTS (docs/architecture.md). */
		if (qp->state == IB_QPS_ERR && attr->qp_state != IB_QPS_RESET)
			return -EINVAL;
		break;
	case IB_QPS_SQD:
		if (qp->fw_connected) {
			err = rnic_command(d, RNIC_CMD_MODIFY_QP, qp->qpn, RNIC_QP_STATE_CLOSING, 0, 0, 0, 0, NULL, NULL);
			if (err)
				return err;
			rnic_ep_close(qp, true);
		}
		break;
	case IB_QPS_SQE:
	case IB_QPS_ERR:
		if (qp->fw_connected) {
			qp->fw_connected = false;
			rnic_command(d, RNIC_CMD_MODIFY_QP, qp->qpn, RNIC_QP_STATE_ERROR, 0, 0, 0, 0, NULL, NULL);
			rnic_ep_close(qp, false);
		}
		attr->qp_state = IB_QPS_ERR;
		break;
	default:
		return -EINVAL;
	}
	qp->state = attr->qp_state;
	return 0;
}

static int rnic_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask, struct ib_qp_init_attr *init)
{
	struct rnic_ib_qp *qp = to_rqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	attr->cap.max_send_wr = qp->sq_entries - 1;
	attr->cap.max_recv_wr = qp->rq_entries - 1;
	attr->cap.max_send_sge = 1;
	attr->cap.max_recv_sge = 1;
	init->qp_type = IB_QPT_RC;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

static int rnic_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	struct rnic_ib_dev *rdev = to_rdev(ibqp->device);
	struct rnic_dev *d = rdev->d;

	if (qp->fw_connected) {
		/* Abortive, as for a QP in use (RFC 5040 S6.2: the stream is torn down). */
		qp->fw_connected = false;
		rnic_command(d, RNIC_CMD_MODIFY_QP, qp->qpn, RNIC_QP_STATE_ERROR, 0, 0, 0, 0, NULL, NULL);
	}
	rnic_ep_close(qp, false);
	flush_workqueue(rdev->cm_wq); /* the close above has been delivered */
	rnic_qp_put(qp);
	/* iw_cm lets go once it has seen the close; bounded, so a lost reference cannot hang rmmod. */
	if (!wait_for_completion_timeout(&qp->unreferenced, msecs_to_jiffies(10000)))
		dev_warn(&d->pdev->dev, "QP %u still referenced after 10 s; destroying it anyway\n", qp->qpn);
	if (rnic_command(d, RNIC_CMD_DESTROY_QP, qp->qpn, 0, 0, 0, 0, 0, NULL, NULL)) {
		/* The device keeps the QP: its rings stay allocated, never reused while it may read them. */
		dev_err(&d->pdev->dev, "QP %u: the firmware refused destroy_qp; its rings are kept\n", qp->qpn);
		xa_erase(&rdev->qps, qp->qpn);
		return 0;
	}
	xa_erase(&rdev->qps, qp->qpn);
	rnic_ib_qp_free_rings(rdev, qp);
	return 0;
}

static int rnic_ib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr, const struct ib_send_wr **bad)
{
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	struct rnic_dev *d = to_rdev(ibqp->device)->d;
	unsigned long flags;
	u32 start;
	int err = 0;

	spin_lock_irqsave(&qp->sq_lock, flags);
	start = qp->sq_prod;
	for (; wr; wr = wr->next) {
		u8 *w, opcode, wflags = 0;
		u64 remote_to = 0;
		u32 rstag = 0, inv = 0;

		if (qp->state == IB_QPS_ERR || qp->state == IB_QPS_RESET) {
			err = -EINVAL;
			break;
		}
		if (wr->num_sge > 1 || (wr->send_flags & ~(IB_SEND_SIGNALED | IB_SEND_SOLICITED))) {
			err = -EINVAL; /* one SGE; no inline data, no fence */
			break;
		}
		switch (wr->opcode) {
		case IB_WR_SEND: opcode = RNIC_WR_SEND; break;
		case IB_WR_SEND_WITH_INV: opcode = RNIC_WR_SEND; inv = wr->ex.invalidate_rkey; break;
		case IB_WR_LOCAL_INV: opcode = RNIC_WR_LOCAL_INVALIDATE; inv = wr->ex.invalidate_rkey; break;
		case IB_WR_RDMA_WRITE:
		case IB_WR_RDMA_READ:
			opcode = wr->opcode == IB_WR_RDMA_WRITE ? RNIC_WR_RDMA_WRITE : RNIC_WR_RDMA_READ;
			remote_to = rdma_wr(wr)->remote_addr;
			rstag = rdma_wr(wr)->rkey;
			break;
		default:
			err = -EINVAL;
			break;
		}
		if (err)
			break;
		if (qp->sq_prod - READ_ONCE(qp->sq_done) >= qp->sq_entries) {
			err = -ENOMEM;
			break;
		}
		if ((wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all)
			wflags |= RNIC_WR_FLAG_SIGNALED;
		if (wr->send_flags & IB_SEND_SOLICITED)
			wflags |= RNIC_WR_FLAG_SOLICITED;
		w = (u8 *)qp->sq.cpu + (qp->sq_prod & (qp->sq_entries - 1)) * RNIC_SEND_WQE_SIZE;
		if (wr->num_sge == 1)
			rnic_write_send_wqe(w, opcode, wflags, wr->wr_id, wr->sg_list[0].addr, wr->sg_list[0].length,
					    wr->sg_list[0].lkey, remote_to, rstag, inv);
		else
			rnic_write_send_wqe(w, opcode, wflags, wr->wr_id, 0, 0, 0, remote_to, rstag, inv);
		qp->sq_prod++;
	}
	if (qp->sq_prod != start) {
		dma_wmb(); /* the WQEs before the doorbell */
		iowrite32(qp->sq_prod, d->bar0 + RNIC_QP_DOORBELL(qp->qpn) + RNIC_SQ_DOORBELL);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (err)
		*bad = wr;
	return err;
}

static int rnic_ib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr, const struct ib_recv_wr **bad)
{
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	struct rnic_dev *d = to_rdev(ibqp->device)->d;
	unsigned long flags;
	u32 start;
	int err = 0;

	spin_lock_irqsave(&qp->rq_lock, flags);
	start = qp->rq_prod;
	for (; wr; wr = wr->next) {
		u8 *w;

		if (qp->state == IB_QPS_ERR || wr->num_sge > 1) {
			err = -EINVAL;
			break;
		}
		if (qp->rq_prod - READ_ONCE(qp->rq_done) >= qp->rq_entries) {
			err = -ENOMEM;
			break;
		}
		w = (u8 *)qp->rq.cpu + (qp->rq_prod & (qp->rq_entries - 1)) * RNIC_RECV_WQE_SIZE;
		if (wr->num_sge == 1)
			rnic_write_recv_wqe(w, wr->wr_id, wr->sg_list[0].addr, wr->sg_list[0].length, wr->sg_list[0].lkey);
		else
			rnic_write_recv_wqe(w, wr->wr_id, 0, 0, 0);
		qp->rq_prod++;
	}
	if (qp->rq_prod != start) {
		dma_wmb();
		iowrite32(qp->rq_prod, d->bar0 + RNIC_QP_DOORBELL(qp->qpn) + RNIC_RQ_DOORBELL);
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (err)
		*bad = wr;
	return err;
}

static const struct ib_device_ops rnic_ib_ops = {
	.owner = THIS_MODULE,
	/* No driver id of the kernel's list fits an out-of-tree device: libibverbs then matches the
	 * provider by the PCI id in the device's modalias, and by this ABI version (rnic_ib_abi.h). */
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = RNIC_IB_UVERBS_ABI_VERSION,
	.alloc_ucontext = rnic_ib_alloc_ucontext,
	.dealloc_ucontext = rnic_ib_dealloc_ucontext,
	.mmap = rnic_ib_mmap,
	.mmap_free = rnic_ib_mmap_free,

	.query_device = rnic_ib_query_device,
	.query_port = rnic_ib_query_port,
	.get_port_immutable = rnic_ib_get_port_immutable,
	.query_gid = rnic_ib_query_gid,
	.query_pkey = rnic_ib_query_pkey,
	.get_netdev = rnic_ib_get_netdev,
	.alloc_pd = rnic_ib_alloc_pd,
	.dealloc_pd = rnic_ib_dealloc_pd,
	.get_dma_mr = rnic_ib_get_dma_mr,
	.reg_user_mr = rnic_ib_reg_user_mr,
	.dereg_mr = rnic_ib_dereg_mr,
	.create_cq = rnic_ib_create_cq,
	.destroy_cq = rnic_ib_destroy_cq,
	.poll_cq = rnic_ib_poll_cq,
	.req_notify_cq = rnic_ib_req_notify_cq,
	.create_qp = rnic_ib_create_qp,
	.modify_qp = rnic_ib_modify_qp,
	.query_qp = rnic_ib_query_qp,
	.destroy_qp = rnic_ib_destroy_qp,
	.post_send = rnic_ib_post_send,
	.post_recv = rnic_ib_post_recv,

	.iw_add_ref = rnic_iw_add_ref,
	.iw_rem_ref = rnic_iw_rem_ref,
	.iw_get_qp = rnic_iw_get_qp,
	.iw_connect = rnic_iw_connect,
	.iw_accept = rnic_iw_accept,
	.iw_reject = rnic_iw_reject,
	.iw_create_listen = rnic_iw_create_listen,
	.iw_destroy_listen = rnic_iw_destroy_listen,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, rnic_ib_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, rnic_ib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_cq, rnic_ib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_qp, rnic_ib_qp, ibqp),
};

int rnic_ib_register(struct rnic_dev *d)
{
	struct rnic_ib_dev *rdev;
	struct ib_device *ibdev;
	int err;

	rdev = ib_alloc_device(rnic_ib_dev, ibdev);
	if (!rdev)
		return -ENOMEM;
	rdev->d = d;
	ida_init(&rdev->pd_ida);
	xa_init(&rdev->qps);
	spin_lock_init(&rdev->cq_list_lock);
	INIT_LIST_HEAD(&rdev->cqs);
	rnic_ib_poller_init(rdev);
	rdev->cm_wq = alloc_ordered_workqueue("rnic_cm", WQ_MEM_RECLAIM);
	if (!rdev->cm_wq) {
		err = -ENOMEM;
		goto free_dev;
	}
	err = rnic_iwcm_init(rdev);
	if (err)
		goto free_wq;
	rdev->ndev = rnic_netdev_create(d);
	if (IS_ERR(rdev->ndev)) {
		err = PTR_ERR(rdev->ndev);
		goto stop_iwcm;
	}
	ibdev = &rdev->ibdev;
	/* The PCI function as the device's parent: sysfs then has device/modalias, by which libibverbs
	 * matches the user-space provider (driver/linux/provider) to this device. */
	ibdev->dev.parent = &d->pdev->dev;
	ibdev->node_type = RDMA_NODE_RNIC;
	/* The provider arms its CQs through the kernel (the poller raises the completion channel's
	 * event, no interrupt reaching the guest); ib_uverbs offers this command only when asked to. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, d->mac);
	strscpy(ibdev->node_desc, "rnic-vp modelled iWARP RNIC", sizeof(ibdev->node_desc));
	memcpy(ibdev->iw_ifname, rdev->ndev->name, sizeof(ibdev->iw_ifname));
	/* The firmware opens connections from the station address itself: no iwpmd port mapping. */
	ibdev->iw_driver_flags = IW_F_NO_PORT_MAP;
	ib_set_device_ops(ibdev, &rnic_ib_ops);
	err = ib_device_set_netdev(ibdev, rdev->ndev, 1);
	if (err)
		goto free_ndev;
	err = ib_register_device(ibdev, "rnic%d", &d->pdev->dev);
	if (err)
		goto free_ndev;
	d->ib = rdev;
	dev_info(&d->pdev->dev, "RDMA core: iWARP device %s on interface %s (%pM)\n", dev_name(&ibdev->dev),
		 rdev->ndev->name, d->mac);
	return 0;
free_ndev:
	rnic_netdev_destroy(rdev->ndev);
stop_iwcm:
	rnic_iwcm_stop(rdev);
free_wq:
	destroy_workqueue(rdev->cm_wq);
free_dev:
	ib_dealloc_device(ibdev);
	dev_err(&d->pdev->dev, "RDMA core registration failed: %d\n", err);
	return err;
}

void rnic_ib_unregister(struct rnic_dev *d)
{
	struct rnic_ib_dev *rdev = d->ib;

	if (!rdev)
		return;
	/* Consumers (rdma_cm's clients) are told to let go and have destroyed their objects on return. */
	ib_unregister_device(&rdev->ibdev);
	WRITE_ONCE(rdev->stopping, true);
	rnic_iwcm_stop(rdev); /* every listener was destroyed above; the poller may still be queued */
	hrtimer_cancel(&rdev->poll_timer);
	destroy_workqueue(rdev->cm_wq);
	rnic_netdev_destroy(rdev->ndev);
	ida_destroy(&rdev->pd_ida);
	xa_destroy(&rdev->qps);
	d->ib = NULL;
	ib_dealloc_device(&rdev->ibdev);
	dev_info(&d->pdev->dev, "RDMA core: device unregistered\n");
}
