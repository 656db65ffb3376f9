/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rnic_kping.ko's two halves share: the state of a run and the rdma_cm and completion helpers
 * (rnic_kping_main.c: parameters, the client modes; rnic_kping_server.c: the server mode).
 */
#ifndef RNIC_KPING_H
#define RNIC_KPING_H

#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#define INFO_BYTES 16 /* struct rping_rdma_info: u64 buf, u32 rkey, u32 size, big-endian */
/* The buffer: the message to send at 0, RECVS receive slots of RECV_BYTES from 64, data from DATA. */
#define RECVS 4
#define RECV_BYTES 64
#define DATA 512
/* perf_server's control messages (platform/workloads/perf_server.h) */
#define PERF_MAGIC 0x46524e52u
#define PERF_MSG 32
#define PERF_DATA_OFFSET 64
#define PERF_MAX_AREA (256u << 10) /* count * size at most: no wrap-around on either side */
enum { PERF_HELLO = 1, PERF_CHECK_WRITE = 2, PERF_FILL_READ = 3, PERF_EXPECT_SENDS = 4, PERF_BYE = 6 };

enum kping_step { STEP_IDLE, STEP_ADDR, STEP_ROUTE, STEP_REQUEST, STEP_CONNECTED, STEP_DISCONNECTED, STEP_ERROR };

struct kping {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	wait_queue_head_t wait;
	enum kping_step step;
	int cm_error;
	bool cq_event;
	unsigned int cq_events;
	u8 *buf;
	dma_addr_t dma;
	size_t buf_len;
	u32 slot;
	unsigned int in_flight; /* mode=perf: signaled work requests not yet completed */
	struct ib_wc early;     /* mode=perf: a reply that came before the last Send's own completion */
	bool have_early;
	unsigned long recv_posted; /* bit i: receive slot i is posted and has not completed */
	/* mode=server: the connect request not yet answered (a new cm_id), and what it carried */
	struct rdma_cm_id *request;
	u8 request_pd[64];
	u8 request_pd_len;
	u8 request_ird, request_ord;
	int reject_status;   /* mode=rejected: the REJECTED event's status */
	u8 reject_pd[64];    /* ... and the private data of the rejecting MPA Reply */
	u8 reject_pd_len;
};

/* mode=server's parameters (rnic_kping_main.c). */
struct kping_server_args {
	unsigned int count, size, port, reject, keep_listening;
	const char *expect_pd;  /* each request's MPA private data must be this, byte for byte ("": any) */
};

int kping_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
int kping_wait_step(struct kping *kp, enum kping_step want, const char *what);
void kping_comp_handler(struct ib_cq *cq, void *ctx);
int kping_next_wc(struct kping *kp, struct ib_wc *wc);
int kping_post_recv(struct kping *kp, unsigned int slot);
/* After a graceful close: every receive still posted must complete flushed (IB_WC_WR_FLUSH_ERR), each
 * once; the completions of signaled Sends still due may come among them. 0, or -EPROTO / -ETIMEDOUT. */
int kping_expect_flushed_receives(struct kping *kp);
/* On kp->id: a PD (unsafe global rkey), a CQ with the completion handler, an RC QP (16 sends, RECVS
 * receives, one SGE), kp->buf mapped and RECVS receives posted; undone by kping_teardown_qp. */
int kping_setup_qp(struct kping *kp);
void kping_teardown_qp(struct kping *kp);
/* rping's server through rdma_cm's listen and accept (rnic_kping_server.c); takes kp. */
int kping_serve(struct kping *kp, const struct kping_server_args *a);
/* At module exit: the listener left open by keep_listening=1, if any. */
void kping_server_exit(void);

#endif /* RNIC_KPING_H */
