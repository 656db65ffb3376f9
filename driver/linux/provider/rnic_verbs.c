// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librnic-rdmav34.so: the libibverbs provider of the modelled iWARP RNIC, so that rdma-core's tools
 * (rping through librdmacm, ibv_devinfo) run unmodified over rnic.ko's ib_device in the guest
 * (docs/architecture.md, "User verbs: rdma-core over ib_uverbs"). Built by provider/build.sh against
 * rdma-core 44's own headers, for the private provider ABI IBVERBS_PRIVATE_34 of Debian bookworm's
 * libibverbs1; /etc/libibverbs.d/rnic.driver names it.
 *
 * The control path (PD, MR, CQ, QP creation, modify, destroy, query) is the kernel's, through the
 * ibv_cmd_* calls of libibverbs; the data path is here, as a hardware provider's is: send and
 * receive WQEs written into the rings the kernel handed out (mmap of rnic_ib_abi.h's offsets), the
 * producer index written to the QP's doorbell slot in the mmapped BAR0 page, CQEs polled from the
 * CQ's ring by their phase bit and the consumer index given back through the CQ's doorbell slot.
 * Layouts: rnic_regs.h (generated from the device model's register map, docs/device.md).
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/driver.h>
#include <util/udma_barrier.h>

#include "rnic_ib_abi.h"
#include "rnic_regs.h"
#include "rnic_wqe.h"

#define RNIC_MAX_QPN 65536 /* the CQE's queue-pair field is 16 bits */

struct rnic_device {
	struct verbs_device vdev;
};

struct rnic_qp;

struct rnic_context {
	struct verbs_context vctx;
	pthread_mutex_t qp_lock;          /* writers of qps[]; poll_cq reads it without the lock */
	struct rnic_qp **qps;             /* qpn -> QP of this context, for completions */
};

struct rnic_cq {
	struct ibv_cq ibcq;
	pthread_spinlock_t lock;
	uint8_t *ring;
	size_t ring_size;
	uint32_t entries, consumer, cqn;
	volatile uint32_t *consumer_pub;  /* the kernel's completion poller reads it (rnic_ib_abi.h) */
	void *db_page;
	volatile uint32_t *db;            /* the CQ's doorbell slot: consumer index at RNIC_CQ_CONSUMER */
};

struct rnic_qp {
	struct ibv_qp ibqp;
	pthread_spinlock_t sq_lock, rq_lock;
	uint8_t *sq, *rq;
	size_t sq_size, rq_size;
	uint32_t sq_entries, rq_entries;
	uint32_t sq_prod, rq_prod;        /* free-running producer indices */
	uint32_t sq_done, rq_done;        /* one past the last completed WQE, from the CQEs */
	void *db_page;
	volatile uint32_t *db;            /* the QP's slot: SQ at RNIC_SQ_DOORBELL, RQ at RNIC_RQ_DOORBELL */
	int sig_all;
};

struct rnic_create_cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct rnic_ib_create_cq_resp drv;
};

struct rnic_create_qp_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct rnic_ib_create_qp_resp drv;
};

static struct rnic_context *to_rctx(struct ibv_context *c)
{
	return container_of(c, struct rnic_context, vctx.context);
}

static struct rnic_cq *to_rcq(struct ibv_cq *c)
{
	return container_of(c, struct rnic_cq, ibcq);
}

static struct rnic_qp *to_rqp(struct ibv_qp *q)
{
	return container_of(q, struct rnic_qp, ibqp);
}

static uint32_t get_le32(const uint8_t *p, unsigned int off)
{
	uint32_t v;

	memcpy(&v, p + off, 4);
	return le32toh(v);
}

static uint64_t get_le64(const uint8_t *p, unsigned int off)
{
	uint64_t v;

	memcpy(&v, p + off, 8);
	return le64toh(v);
}

/* A doorbell: one 32-bit uncached store to BAR0 (the page is mapped uncached by rnic.ko). */
static void db_write(volatile uint32_t *slot, uint32_t v)
{
	*slot = htole32(v);
}

static void *map(struct ibv_context *ctx, uint64_t offset, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd, (off_t)offset);

	return p == MAP_FAILED ? NULL : p;
}

/* ---- device, port ---- */

static int rnic_query_device(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int err;

	err = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp, &resp_size);
	if (err)
		return err;
	/* rnic.ko reports the device's VERSION register as fw_ver. */
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "0x%llx",
		 (unsigned long long)resp.base.fw_ver);
	return 0;
}

static int rnic_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

/* ---- protection domains, memory regions ---- */

static struct ibv_pd *rnic_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_alloc_pd cmd;
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(ctx, pd, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return pd;
}

static int rnic_dealloc_pd(struct ibv_pd *pd)
{
	int err = ibv_cmd_dealloc_pd(pd);

	if (!err)
		free(pd);
	return err;
}

static struct ibv_mr *rnic_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	struct ibv_reg_mr cmd;
	struct ib_uverbs_reg_mr_resp resp;
	int err;

	if (!vmr)
		return NULL;
	/* The kernel pins the pages (ib_umem) and gives the device their list (reg_mr_pages). */
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		fprintf(stderr, "librnic: reg_mr of %zu bytes at %p: the kernel refused: %s\n", length, addr, strerror(err));
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int rnic_dereg_mr(struct verbs_mr *vmr)
{
	int err = ibv_cmd_dereg_mr(vmr);

	if (!err)
		free(vmr);
	return err;
}

/* ---- completion queues ---- */

static void cq_unmap(struct rnic_cq *cq)
{
	if (cq->ring)
		munmap(cq->ring, cq->ring_size);
	if (cq->db_page)
		munmap(cq->db_page, (size_t)sysconf(_SC_PAGESIZE));
}

static struct ibv_cq *rnic_create_cq(struct ibv_context *ctx, int cqe, struct ibv_comp_channel *channel,
				     int comp_vector)
{
	struct rnic_cq *cq = calloc(1, sizeof(*cq));
	struct ibv_create_cq cmd;
	struct rnic_create_cq_resp resp;
	int err;

	if (!cq)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->ibcq, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		fprintf(stderr, "librnic: create_cq of %d entries: the kernel refused: %s\n", cqe, strerror(err));
		free(cq);
		errno = err;
		return NULL;
	}
	if (resp.drv.entries == 0 || (resp.drv.entries & (resp.drv.entries - 1)) ||
	    resp.drv.consumer_offset + sizeof(uint32_t) > resp.drv.ring_size ||
	    resp.drv.db_offset + 8 > (uint32_t)sysconf(_SC_PAGESIZE)) {
		fprintf(stderr, "librnic: create_cq: the kernel's answer does not fit this provider's ABI\n");
		err = EPROTO;
		goto destroy;
	}
	cq->entries = resp.drv.entries;
	cq->cqn = resp.drv.cqn;
	cq->ring_size = resp.drv.ring_size;
	cq->ring = map(ctx, resp.drv.ring_mmap, cq->ring_size);
	cq->db_page = map(ctx, resp.drv.db_mmap, (size_t)sysconf(_SC_PAGESIZE));
	if (!cq->ring || !cq->db_page) {
		err = errno;
		fprintf(stderr, "librnic: create_cq: mmap of the %s failed: %s\n", cq->ring ? "doorbell page" : "ring",
			strerror(err));
		goto destroy;
	}
	cq->consumer_pub = (volatile uint32_t *)(cq->ring + resp.drv.consumer_offset);
	cq->db = (volatile uint32_t *)((uint8_t *)cq->db_page + resp.drv.db_offset);
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return &cq->ibcq;
destroy:
	cq_unmap(cq);
	ibv_cmd_destroy_cq(&cq->ibcq);
	free(cq);
	errno = err;
	return NULL;
}

static int rnic_destroy_cq(struct ibv_cq *ibcq)
{
	struct rnic_cq *cq = to_rcq(ibcq);
	int err = ibv_cmd_destroy_cq(ibcq);

	if (err)
		return err;
	cq_unmap(cq);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

static enum ibv_wc_status wc_status(uint8_t s)
{
	switch (s) {
	case RNIC_CQE_STATUS_SUCCESS: return IBV_WC_SUCCESS;
	case RNIC_CQE_STATUS_LOCAL_LENGTH_ERROR: return IBV_WC_LOC_LEN_ERR;
	case RNIC_CQE_STATUS_LOCAL_PROTECTION_ERROR: return IBV_WC_LOC_PROT_ERR;
	case RNIC_CQE_STATUS_REMOTE_ACCESS_ERROR: return IBV_WC_REM_ACCESS_ERR;
	case RNIC_CQE_STATUS_REMOTE_OPERATION_ERROR: return IBV_WC_REM_OP_ERR;
	case RNIC_CQE_STATUS_FLUSHED: return IBV_WC_WR_FLUSH_ERR;
	case RNIC_CQE_STATUS_REMOTE_INVALID_REQUEST: return IBV_WC_REM_INV_REQ_ERR;
	case RNIC_CQE_STATUS_BAD_OPCODE: return IBV_WC_LOC_QP_OP_ERR;
	}
	return IBV_WC_GENERAL_ERR; /* transport_error and anything this provider does not know */
}

static enum ibv_wc_opcode wc_opcode(uint8_t op, int receive)
{
	if (receive)
		return op == RNIC_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	switch (op) {
	case RNIC_WR_RDMA_WRITE: return IBV_WC_RDMA_WRITE;
	case RNIC_WR_RDMA_READ: return IBV_WC_RDMA_READ;
	case RNIC_WR_ATOMIC_FETCH_ADD: return IBV_WC_FETCH_ADD;
	case RNIC_WR_ATOMIC_COMPARE_SWAP: return IBV_WC_COMP_SWAP;
	case RNIC_WR_LOCAL_INVALIDATE: return IBV_WC_LOCAL_INV;
	}
	return IBV_WC_SEND;
}

static int cqe_ready(const struct rnic_cq *cq, const uint8_t **entry)
{
	const uint8_t *e = cq->ring + (cq->consumer & (cq->entries - 1)) * RNIC_CQE_SIZE;
	uint32_t want = (cq->consumer / cq->entries) % 2 == 0 ? 1 : 0;

	*entry = e;
	return (le32toh(*(volatile const uint32_t *)(e + RNIC_CQE_OWNER)) >> 31) == want;
}

static int rnic_poll_cq(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
	struct rnic_cq *cq = to_rcq(ibcq);
	struct rnic_context *ctx = to_rctx(ibcq->context);
	uint32_t start;
	const uint8_t *e;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	start = cq->consumer;
	while (n < num && cqe_ready(cq, &e)) {
		uint32_t owner, index;
		struct rnic_qp *qp;
		int receive;
		uint8_t op;

		udma_from_device_barrier(); /* the entry's other words after its owner word */
		owner = get_le32(e, RNIC_CQE_OWNER);
		op = e[RNIC_CQE_OPCODE];
		index = get_le32(e, RNIC_CQE_WQE_INDEX);
		receive = !!(owner & RNIC_CQE_OWNER_RECEIVE);
		cq->consumer++;
		/* A QP error entry is no work request: the kernel's QP watch reports the close. */
		if (op == RNIC_CQE_OPCODE_QP_ERROR)
			continue;
		qp = ctx->qps[(uint16_t)(e[RNIC_CQE_QPN] | e[RNIC_CQE_QPN + 1] << 8)];
		if (qp) {
			if (receive)
				__atomic_store_n(&qp->rq_done, index + 1, __ATOMIC_RELEASE);
			else
				__atomic_store_n(&qp->sq_done, index + 1, __ATOMIC_RELEASE);
		}
		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = get_le64(e, RNIC_CQE_WR_ID);
		wc[n].status = wc_status(e[RNIC_CQE_STATUS]);
		wc[n].vendor_err = e[RNIC_CQE_STATUS];
		wc[n].opcode = wc_opcode(op, receive);
		wc[n].byte_len = get_le32(e, RNIC_CQE_BYTE_LEN);
		wc[n].qp_num = e[RNIC_CQE_QPN] | e[RNIC_CQE_QPN + 1] << 8;
		if (owner & (RNIC_CQE_FLAG_INVALIDATED << RNIC_CQE_OWNER_FLAGS_SHIFT)) {
			wc[n].wc_flags |= IBV_WC_WITH_INV;
			wc[n].invalidated_rkey = get_le32(e, RNIC_CQE_IMM_DATA);
		}
		n++;
	}
	if (cq->consumer != start) {
		*cq->consumer_pub = cq->consumer;
		db_write(cq->db + RNIC_CQ_CONSUMER / 4, cq->consumer);
	}
	pthread_spin_unlock(&cq->lock);
	return n;
}

static int rnic_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct rnic_cq *cq = to_rcq(ibcq);

	/*
	 * No interrupt reaches the guest: the kernel arms the CQ and its poller raises the completion
	 * channel's event when the CQE at our consumer index arrives (or is already there).
	 */
	pthread_spin_lock(&cq->lock);
	*cq->consumer_pub = cq->consumer;
	pthread_spin_unlock(&cq->lock);
	udma_to_device_barrier();
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

/* ---- queue pairs ---- */

static void qp_unmap(struct rnic_qp *qp)
{
	if (qp->sq)
		munmap(qp->sq, qp->sq_size);
	if (qp->rq)
		munmap(qp->rq, qp->rq_size);
	if (qp->db_page)
		munmap(qp->db_page, (size_t)sysconf(_SC_PAGESIZE));
}

static struct ibv_qp *rnic_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct rnic_context *ctx = to_rctx(pd->context);
	struct rnic_qp *qp;
	struct ibv_create_qp cmd;
	struct rnic_create_qp_resp resp;
	int err;

	/* What the device offers (rnic.ko checks the same): RC, one SGE, no SRQ, no inline data. */
	if (attr->qp_type != IBV_QPT_RC || attr->srq || attr->cap.max_send_sge > 1 || attr->cap.max_recv_sge > 1 ||
	    attr->cap.max_inline_data) {
		fprintf(stderr, "librnic: create_qp: only RC QPs with one SGE, no SRQ and no inline data\n");
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_qp(pd, &qp->ibqp, attr, &cmd, sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		fprintf(stderr, "librnic: create_qp: the kernel refused: %s\n", strerror(err));
		free(qp);
		errno = err;
		return NULL;
	}
	if (resp.drv.qpn >= RNIC_MAX_QPN || !resp.drv.sq_entries || (resp.drv.sq_entries & (resp.drv.sq_entries - 1)) ||
	    !resp.drv.rq_entries || (resp.drv.rq_entries & (resp.drv.rq_entries - 1)) ||
	    (size_t)resp.drv.sq_entries * RNIC_SEND_WQE_SIZE > resp.drv.sq_size ||
	    (size_t)resp.drv.rq_entries * RNIC_RECV_WQE_SIZE > resp.drv.rq_size ||
	    resp.drv.db_offset + 8 > (uint32_t)sysconf(_SC_PAGESIZE)) {
		fprintf(stderr, "librnic: create_qp: the kernel's answer does not fit this provider's ABI\n");
		err = EPROTO;
		goto destroy;
	}
	qp->sq_entries = resp.drv.sq_entries;
	qp->rq_entries = resp.drv.rq_entries;
	qp->sq_size = resp.drv.sq_size;
	qp->rq_size = resp.drv.rq_size;
	qp->sq = map(pd->context, resp.drv.sq_mmap, qp->sq_size);
	qp->rq = map(pd->context, resp.drv.rq_mmap, qp->rq_size);
	qp->db_page = map(pd->context, resp.drv.db_mmap, (size_t)sysconf(_SC_PAGESIZE));
	if (!qp->sq || !qp->rq || !qp->db_page) {
		err = errno;
		fprintf(stderr, "librnic: create_qp: mmap of its rings or doorbell page failed: %s\n", strerror(err));
		goto destroy;
	}
	qp->db = (volatile uint32_t *)((uint8_t *)qp->db_page + resp.drv.db_offset);
	qp->sig_all = attr->sq_sig_all;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	attr->cap.max_send_wr = qp->sq_entries - 1;
	attr->cap.max_recv_wr = qp->rq_entries - 1;
	attr->cap.max_send_sge = 1;
	attr->cap.max_recv_sge = 1;
	attr->cap.max_inline_data = 0;
	pthread_mutex_lock(&ctx->qp_lock);
	ctx->qps[resp.drv.qpn] = qp;
	pthread_mutex_unlock(&ctx->qp_lock);
	return &qp->ibqp;
destroy:
	qp_unmap(qp);
	ibv_cmd_destroy_qp(&qp->ibqp);
	free(qp);
	errno = err;
	return NULL;
}

static int rnic_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct ibv_modify_qp cmd;

	/* The firmware's connect brings the QP to RTS (iw_cm); the kernel keeps the states' books. */
	return ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
}

static int rnic_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(qp, attr, mask, init, &cmd, sizeof(cmd));
}

static int rnic_destroy_qp(struct ibv_qp *ibqp)
{
	struct rnic_context *ctx = to_rctx(ibqp->context);
	struct rnic_qp *qp = to_rqp(ibqp);
	uint32_t qpn = ibqp->qp_num;
	int err = ibv_cmd_destroy_qp(ibqp);

	if (err)
		return err;
	pthread_mutex_lock(&ctx->qp_lock);
	if (qpn < RNIC_MAX_QPN && ctx->qps[qpn] == qp)
		ctx->qps[qpn] = NULL;
	pthread_mutex_unlock(&ctx->qp_lock);
	qp_unmap(qp);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	return 0;
}

static int rnic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct rnic_qp *qp = to_rqp(ibqp);
	uint32_t start;
	int err = 0;

	pthread_spin_lock(&qp->sq_lock);
	start = qp->sq_prod;
	for (; wr; wr = wr->next) {
		uint8_t *w, opcode, flags = 0;
		uint64_t remote_to = 0;
		uint32_t rstag = 0, inv = 0;

		if (wr->num_sge > 1 || wr->num_sge < 0 ||
		    (wr->send_flags & ~(unsigned int)(IBV_SEND_SIGNALED | IBV_SEND_SOLICITED))) {
			err = EINVAL; /* one SGE; no inline data, no fence (ibv_post_send(3): EINVAL) */
			break;
		}
		switch (wr->opcode) {
		case IBV_WR_SEND: opcode = RNIC_WR_SEND; break;
		case IBV_WR_SEND_WITH_INV: opcode = RNIC_WR_SEND; inv = wr->invalidate_rkey; break;
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_READ:
			opcode = wr->opcode == IBV_WR_RDMA_WRITE ? RNIC_WR_RDMA_WRITE : RNIC_WR_RDMA_READ;
			remote_to = wr->wr.rdma.remote_addr;
			rstag = wr->wr.rdma.rkey;
			break;
		default:
			err = EINVAL;
			break;
		}
		if (err)
			break;
		if (qp->sq_prod - __atomic_load_n(&qp->sq_done, __ATOMIC_ACQUIRE) >= qp->sq_entries) {
			err = ENOMEM; /* the send queue is full (ibv_post_send(3): ENOMEM) */
			break;
		}
		if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sig_all)
			flags |= RNIC_WR_FLAG_SIGNALED;
		if (wr->send_flags & IBV_SEND_SOLICITED)
			flags |= RNIC_WR_FLAG_SOLICITED;
		w = qp->sq + (qp->sq_prod & (qp->sq_entries - 1)) * RNIC_SEND_WQE_SIZE;
		if (wr->num_sge == 1)
			rnic_write_send_wqe(w, opcode, flags, wr->wr_id, wr->sg_list[0].addr, wr->sg_list[0].length,
					    wr->sg_list[0].lkey, remote_to, rstag, inv);
		else
			rnic_write_send_wqe(w, opcode, flags, wr->wr_id, 0, 0, 0, remote_to, rstag, inv);
		qp->sq_prod++;
	}
	if (qp->sq_prod != start) {
		udma_to_device_barrier(); /* the WQEs before the doorbell */
		db_write(qp->db + RNIC_SQ_DOORBELL / 4, qp->sq_prod);
	}
	pthread_spin_unlock(&qp->sq_lock);
	if (err)
		*bad = wr;
	return err;
}

static int rnic_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rnic_qp *qp = to_rqp(ibqp);
	uint32_t start;
	int err = 0;

	pthread_spin_lock(&qp->rq_lock);
	start = qp->rq_prod;
	for (; wr; wr = wr->next) {
		uint8_t *w;

		if (wr->num_sge > 1 || wr->num_sge < 0) {
			err = EINVAL;
			break;
		}
		if (qp->rq_prod - __atomic_load_n(&qp->rq_done, __ATOMIC_ACQUIRE) >= qp->rq_entries) {
			err = ENOMEM;
			break;
		}
		w = qp->rq + (qp->rq_prod & (qp->rq_entries - 1)) * RNIC_RECV_WQE_SIZE;
		if (wr->num_sge == 1)
			rnic_write_recv_wqe(w, wr->wr_id, wr->sg_list[0].addr, wr->sg_list[0].length, wr->sg_list[0].lkey);
		else
			rnic_write_recv_wqe(w, wr->wr_id, 0, 0, 0);
		qp->rq_prod++;
	}
	if (qp->rq_prod != start) {
		udma_to_device_barrier();
		db_write(qp->db + RNIC_RQ_DOORBELL / 4, qp->rq_prod);
	}
	pthread_spin_unlock(&qp->rq_lock);
	if (err)
		*bad = wr;
	return err;
}

/* ---- context, device ---- */

static void rnic_free_context(struct ibv_context *ibctx)
{
	struct rnic_context *ctx = to_rctx(ibctx);

	free(ctx->qps);
	pthread_mutex_destroy(&ctx->qp_lock);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops rnic_ctx_ops = {
	.query_device_ex = rnic_query_device,
	.query_port = rnic_query_port,
	.alloc_pd = rnic_alloc_pd,
	.dealloc_pd = rnic_dealloc_pd,
	.reg_mr = rnic_reg_mr,
	.dereg_mr = rnic_dereg_mr,
	.create_cq = rnic_create_cq,
	.poll_cq = rnic_poll_cq,
	.req_notify_cq = rnic_req_notify_cq,
	.destroy_cq = rnic_destroy_cq,
	.create_qp = rnic_create_qp,
	.query_qp = rnic_query_qp,
	.modify_qp = rnic_modify_qp,
	.destroy_qp = rnic_destroy_qp,
	.post_send = rnic_post_send,
	.post_recv = rnic_post_recv,
	.free_context = rnic_free_context,
};

static struct verbs_context *rnic_alloc_context(struct ibv_device *ibdev, int cmd_fd, void *private_data)
{
	struct rnic_context *ctx;
	struct ibv_get_context cmd;
	struct ib_uverbs_get_context_resp resp;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx, RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	ctx->qps = calloc(RNIC_MAX_QPN, sizeof(*ctx->qps));
	if (!ctx->qps || ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(ctx->qps);
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		return NULL;
	}
	pthread_mutex_init(&ctx->qp_lock, NULL);
	verbs_set_ops(&ctx->vctx, &rnic_ctx_ops);
	return &ctx->vctx;
}

static struct verbs_device *rnic_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct rnic_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->vdev : NULL;
}

static void rnic_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct rnic_device, vdev));
}

/* rnic.ko registers with RDMA_DRIVER_UNKNOWN (no kernel driver id fits an out-of-tree device), so
 * libibverbs matches this provider by the PCI id in the device's modalias. */
static const struct verbs_match_ent rnic_match_table[] = {
	VERBS_PCI_MATCH(RNIC_PCI_VENDOR_ID, RNIC_PCI_DEVICE_ID, NULL),
	{}
};

static const struct verbs_device_ops rnic_dev_ops = {
	.name = "rnic",
	.match_min_abi_version = RNIC_IB_UVERBS_ABI_VERSION,
	.match_max_abi_version = RNIC_IB_UVERBS_ABI_VERSION,
	.match_table = rnic_match_table,
	.alloc_device = rnic_alloc_device,
	.uninit_device = rnic_uninit_device,
	.alloc_context = rnic_alloc_context,
};

PROVIDER_DRIVER(rnic, rnic_dev_ops);
