/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the RDMA-core side of rnic.ko shares between its files: the verbs (rnic_ib.c), connection
 * management through the firmware (rnic_iwcm.c) and the station interface (rnic_netdev.c).
 * Design: docs/architecture.md, "rnic.ko and the kernel RDMA core".
 */
#ifndef RNIC_IB_H
#define RNIC_IB_H

#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/idr.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>
#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>

#include "rnic.h"
#include "rnic_regs.h"

struct rnic_ib_dev {
	struct ib_device ibdev;
	struct rnic_dev *d;
	struct net_device *ndev;
	struct ida pd_ida;
	struct xarray qps;           /* qpn -> struct rnic_ib_qp */
	spinlock_t cq_list_lock;     /* taken by the poller in softirq context: _bh elsewhere */
	struct list_head cqs;        /* every live CQ, for the completion poller */
	struct hrtimer poll_timer;   /* the completion poller, running while a CQ is armed */
	struct workqueue_struct *cm_wq; /* ordered: connect and close of every endpoint, one at a time */
	bool stopping;
	/* The passive side (rnic_iwcm.c): listeners, and the poller of the firmware's next_peer. */
	struct mutex listen_lock;    /* the list, and delivering a connect request to a listener */
	struct list_head listeners;
	struct delayed_work listen_work;
	struct rnic_coherent peer_buf; /* next_peer's record and private data */
};

/* A process's user context (ib_uverbs); it owns nothing beyond the core's object. */
struct rnic_ib_ucontext {
	struct ib_ucontext ibuc;
};

struct rnic_ib_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

struct rnic_ib_cq {
	struct ib_cq ibcq;
	struct rnic_coherent ring;
	u32 cqn, entries, consumer;
	spinlock_t lock;             /* the consumer index and the armed flag */
	bool armed;
	struct list_head node;
	/* A user CQ (rnic_ib_user.c): its ring is pages the process maps, and the consumer index is the
	 * provider's, kept in the ring mapping at *user_consumer for the completion poller. */
	bool user;
	u32 *user_consumer;
	struct rdma_user_mmap_entry *ring_entry, *db_entry;
};

struct rnic_ep;

struct rnic_ib_qp {
	struct ib_qp ibqp;
	struct rnic_coherent sq, rq;
	u32 qpn, pdn, sq_entries, rq_entries;
	u32 sq_prod, sq_done, rq_prod, rq_done;
	spinlock_t sq_lock, rq_lock;
	bool sig_all;
	enum ib_qp_state state;      /* as the core sees it */
	bool fw_connected;           /* the firmware's QP is in RTS or closing: it must be closed */
	refcount_t refs;             /* iw_cm's (iw_add_ref) and the endpoint's, plus one of its own */
	struct completion unreferenced;
	spinlock_t ep_lock;
	struct rnic_ep *ep;          /* the connection iw_cm manages on this QP, if any */
	/* A user QP (rnic_ib_user.c): the process writes its WQEs and rings its doorbells. */
	bool user;
	struct rdma_user_mmap_entry *sq_entry, *rq_entry, *db_entry;
};

struct rnic_ib_mr {
	struct ib_mr ibmr;
	u32 stag;
	struct ib_umem *umem;        /* the pinned user pages of reg_user_mr, else NULL */
};

static inline u32 access_to_device(int access)
{
	u32 a = 0;

	if (access & IB_ACCESS_LOCAL_WRITE)
		a |= RNIC_MR_LOCAL_WRITE;
	if (access & IB_ACCESS_REMOTE_WRITE)
		a |= RNIC_MR_REMOTE_WRITE | RNIC_MR_LOCAL_WRITE;
	if (access & IB_ACCESS_REMOTE_READ)
		a |= RNIC_MR_REMOTE_READ;
	return a;
}

static inline struct rnic_ib_dev *to_rdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct rnic_ib_dev, ibdev);
}

static inline struct rnic_ib_qp *to_rqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct rnic_ib_qp, ibqp);
}

/* rnic_ib_cq.c */
int rnic_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr, struct ib_udata *udata);
int rnic_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int rnic_ib_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int rnic_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void rnic_ib_poller_init(struct rnic_ib_dev *rdev);

/* rnic_ib.c */
void rnic_qp_get(struct rnic_ib_qp *qp);
void rnic_qp_put(struct rnic_ib_qp *qp);

/* rnic_iwcm.c */
int rnic_iw_connect(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param);
int rnic_iw_accept(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param);
int rnic_iw_reject(struct iw_cm_id *cm_id, const void *pdata, u8 pdata_len);
int rnic_iw_create_listen(struct iw_cm_id *cm_id, int backlog);
int rnic_iw_destroy_listen(struct iw_cm_id *cm_id);
/* The passive side's state at registration; its poller stopped and buffer freed at unregistration. */
int rnic_iwcm_init(struct rnic_ib_dev *rdev);
void rnic_iwcm_stop(struct rnic_ib_dev *rdev);
/* The QP's connection is closing (graceful: the firmware is in closing) or closed: deliver the close. */
void rnic_ep_close(struct rnic_ib_qp *qp, bool graceful);

/* rnic_ib_user.c: user contexts, their mmaps, user rings and user memory regions */
int rnic_ib_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata);
void rnic_ib_dealloc_ucontext(struct ib_ucontext *uctx);
int rnic_ib_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void rnic_ib_mmap_free(struct rdma_user_mmap_entry *e);
int rnic_ib_uring_alloc(struct rnic_ib_dev *rdev, struct rnic_coherent *c, size_t size);
void rnic_ib_uring_free(struct rnic_ib_dev *rdev, struct rnic_coherent *c);
struct rdma_user_mmap_entry *rnic_ib_umap_insert(struct ib_ucontext *uctx, void *cpu, u64 bar_off, size_t size,
						 u64 *offset);
struct ib_mr *rnic_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 virt, int access,
				  struct ib_udata *udata);

/* rnic_netdev.c */
struct net_device *rnic_netdev_create(struct rnic_dev *d);
void rnic_netdev_destroy(struct net_device *ndev);

#endif /* RNIC_IB_H */
