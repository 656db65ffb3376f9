// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_kping: a kernel consumer of the RDMA core, in the spirit of krping. At load it runs
 * librdmacm's rping client protocol through the kernel rdma_cm API against an rping server (host b
 * of the rnic-vp platform): resolve address and route, a PD, a CQ with a completion handler, an RC
 * QP, rdma_connect; then per ping a Send advertising the start buffer (rping_rdma_info: big-endian
 * address, rkey, size), which the server RDMA Reads and checks, a Send advertising the echo buffer,
 * which the server RDMA Writes back, each followed by the server's go-ahead Send; the echo is
 * compared byte for byte with the pattern. Then rdma_disconnect and teardown. Nothing in it is
 * specific to rnic.ko: it runs on whatever RDMA device rdma_cm routes server_ip to.
 *
 * Memory: one kmalloc buffer mapped with ib_dma_map_single; the PD's local DMA lkey for local
 * access and, since the server must reach the buffers, the PD's unsafe global rkey
 * (IB_PD_UNSAFE_GLOBAL_RKEY) as the advertised rkey, with bus addresses as tagged offsets.
 *
 * The verdict: "rnic_kping: PASS ..." or "rnic_kping: FAIL ..." on the kernel log, and the read-only
 * parameter result (0 pass, negative errno, 1 not run).
 */
#include <linux/inet.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <asm/unaligned.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

static char *server_ip = "10.0.0.2";
module_param(server_ip, charp, 0444);
MODULE_PARM_DESC(server_ip, "IPv4 address of the rping server");
static unsigned int server_port = 7174;
module_param(server_port, uint, 0444);
MODULE_PARM_DESC(server_port, "TCP port of the rping server");
static unsigned int count = 10;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "Pings (1..100000)");
static unsigned int size = 3000;
module_param(size, uint, 0444);
MODULE_PARM_DESC(size, "Ping size in bytes (26..65536)");
static unsigned int timeout_ms = 60000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "Longest wait for any one connection event or completion");
static int result = 1;
module_param(result, int, 0444);
MODULE_PARM_DESC(result, "Outcome: 0 pass, negative errno on failure, 1 not run");

#define INFO_BYTES 16 /* struct rping_rdma_info: u64 buf, u32 rkey, u32 size, big-endian */

enum kping_step { STEP_IDLE, STEP_ADDR, STEP_ROUTE, STEP_CONNECTED, STEP_DISCONNECTED, STEP_ERROR };

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
};

static int kping_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kping *kp = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED: kp->step = STEP_ADDR; break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: kp->step = STEP_ROUTE; break;
	case RDMA_CM_EVENT_ESTABLISHED: kp->step = STEP_CONNECTED; break;
	case RDMA_CM_EVENT_DISCONNECTED: kp->step = STEP_DISCONNECTED; break;
	default:
		pr_err("rnic_kping: rdma_cm event %s, status %d\n", rdma_event_msg(ev->event), ev->status);
		kp->cm_error = ev->status ? ev->status : -ECONNABORTED;
		kp->step = STEP_ERROR;
		break;
	}
	wake_up(&kp->wait);
	return 0; /* the id is destroyed by kping_run, never here */
}

static int kping_wait_step(struct kping *kp, enum kping_step want, const char *what)
{
	long left = wait_event_interruptible_timeout(kp->wait, kp->step == want || kp->step == STEP_ERROR,
						     msecs_to_jiffies(timeout_ms));

	if (kp->step == want)
		return 0;
	pr_err("rnic_kping: %s: %s\n", what, left == 0 ? "timed out" : left < 0 ? "interrupted" : "rdma_cm error");
	return kp->step == STEP_ERROR ? kp->cm_error : left < 0 ? (int)left : -ETIMEDOUT;
}

static void kping_comp_handler(struct ib_cq *cq, void *ctx)
{
	struct kping *kp = ctx;

	kp->cq_events++;
	kp->cq_event = true;
	wake_up(&kp->wait);
}

/* The next completion: polled, then waited for through the CQ's completion handler. */
static int kping_next_wc(struct kping *kp, struct ib_wc *wc)
{
	for (;;) {
		int n = ib_poll_cq(kp->cq, 1, wc);

		if (n < 0)
			return n;
		if (n == 1)
			break;
		kp->cq_event = false;
		if (ib_req_notify_cq(kp->cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS) > 0)
			continue;
		if (!wait_event_timeout(kp->wait, kp->cq_event, msecs_to_jiffies(timeout_ms))) {
			pr_err("rnic_kping: no completion within %u ms\n", timeout_ms);
			return -ETIMEDOUT;
		}
	}
	if (wc->status != IB_WC_SUCCESS) {
		pr_err("rnic_kping: completion of wr_id %llu: %s (vendor %u)\n", wc->wr_id, ib_wc_status_msg(wc->status),
		       wc->vendor_err);
		return -EIO;
	}
	return 0;
}

static int kping_post_recv(struct kping *kp)
{
	struct ib_sge sge = { .addr = kp->dma, .length = INFO_BYTES, .lkey = kp->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(kp->id->qp, &wr, NULL);
}

/* Sends rping_rdma_info for the buffer at offset off, then waits for the server's go-ahead. */
static int kping_advertise(struct kping *kp, u32 off, const char *what)
{
	struct ib_device *dev = kp->id->device;
	struct ib_sge sge = { .addr = kp->dma + 32, .length = INFO_BYTES, .lkey = kp->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc;
	int err;

	put_unaligned_be64(kp->dma + off, kp->buf + 32);
	put_unaligned_be32(kp->pd->unsafe_global_rkey, kp->buf + 40);
	put_unaligned_be32(size, kp->buf + 44);
	ib_dma_sync_single_for_device(dev, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
	err = ib_post_send(kp->id->qp, &wr, NULL);
	if (err)
		return err;
	for (;;) {
		err = kping_next_wc(kp, &wc);
		if (err)
			return err;
		if (wc.opcode == IB_WC_RECV)
			break; /* the send's own completion came first, or comes later: both are fine */
	}
	ib_dma_sync_single_for_cpu(dev, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
	if (wc.byte_len != INFO_BYTES) {
		pr_err("rnic_kping: %s: received %u bytes (rping sends %u)\n", what, wc.byte_len, INFO_BYTES);
		return -EPROTO;
	}
	return kping_post_recv(kp);
}

/* rping's data for ping i: "rdma-ping-<i>: " then letters from 'A' + i % 58, wrapping at 'z'. */
static void rping_pattern(u8 *out, unsigned int ping)
{
	char head[32];
	unsigned int n = scnprintf(head, sizeof(head), "rdma-ping-%u: ", ping), i;
	u8 c = (u8)(65 + ping % 58);

	n = min(n, size - 1);
	memcpy(out, head, n);
	for (i = n; i < size; i++) {
		out[i] = c;
		if (++c > 122)
			c = 65;
	}
	out[size - 1] = 0;
}

static int kping_pings(struct kping *kp, u64 *checked, u64 *bad)
{
	u8 *echo = kp->buf + 64, *start = kp->buf + 64 + kp->slot, *expect;
	unsigned int ping, i;
	int err = 0;

	expect = kmalloc(size, GFP_KERNEL);
	if (!expect)
		return -ENOMEM;
	for (ping = 0; ping < count && !err; ping++) {
		rping_pattern(expect, ping);
		memcpy(start, expect, size);
		memset(echo, 0, size); /* the echo must really arrive */
		err = kping_advertise(kp, 64 + kp->slot, "the go-ahead after the server's RDMA Read") ?:
		      kping_advertise(kp, 64, "the go-ahead after the server's RDMA Write");
		if (err)
			break;
		*checked += size;
		if (memcmp(echo, expect, size) != 0) {
			unsigned int first = size;

			for (i = 0; i < size; i++) {
				if (echo[i] != expect[i]) {
					(*bad)++;
					if (first == size)
						first = i;
				}
			}
			pr_err("rnic_kping: ping %u: the echo differs from byte %u on\n", ping, first);
			err = -EILSEQ;
		}
	}
	kfree(expect);
	return err;
}

static int kping_run(void)
{
	struct ib_qp_init_attr qp_attr = { 0 };
	struct rdma_conn_param conn = { 0 };
	struct ib_cq_init_attr cq_attr = { .cqe = 16 };
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct kping *kp;
	u64 checked = 0, bad = 0, t0, t_connect;
	int err;

	if (size < 26 || size > 65536 || count < 1 || count > 100000 ||
	    !in4_pton(server_ip, -1, (u8 *)&dst.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	dst.sin_port = htons(server_port);
	kp = kzalloc(sizeof(*kp), GFP_KERNEL);
	if (!kp)
		return -ENOMEM;
	init_waitqueue_head(&kp->wait);
	kp->slot = ALIGN(size, 64);
	kp->buf_len = 64 + 2 * (size_t)kp->slot;
	kp->buf = kzalloc(kp->buf_len, GFP_KERNEL);
	if (!kp->buf) {
		err = -ENOMEM;
		goto free_kp;
	}
	t0 = ktime_get_ns();
	kp->id = rdma_create_id(&init_net, kping_cm_handler, kp, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(kp->id)) {
		err = PTR_ERR(kp->id);
		goto free_buf;
	}
	err = rdma_resolve_addr(kp->id, NULL, (struct sockaddr *)&dst, 2000) ?:
	      kping_wait_step(kp, STEP_ADDR, "rdma_resolve_addr");
	if (err)
		goto destroy_id;
	err = rdma_resolve_route(kp->id, 2000) ?: kping_wait_step(kp, STEP_ROUTE, "rdma_resolve_route");
	if (err)
		goto destroy_id;
	pr_info("rnic_kping: %s resolved to device %s port %u (node type %s)\n", server_ip,
		dev_name(&kp->id->device->dev), kp->id->port_num, rdma_node_get_transport(kp->id->device->node_type) ==
		RDMA_TRANSPORT_IWARP ? "iWARP RNIC" : "not iWARP");
	kp->pd = ib_alloc_pd(kp->id->device, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(kp->pd)) {
		err = PTR_ERR(kp->pd);
		goto destroy_id;
	}
	kp->cq = ib_create_cq(kp->id->device, kping_comp_handler, NULL, kp, &cq_attr);
	if (IS_ERR(kp->cq)) {
		err = PTR_ERR(kp->cq);
		goto dealloc_pd;
	}
	qp_attr.send_cq = kp->cq;
	qp_attr.recv_cq = kp->cq;
	qp_attr.qp_type = IB_QPT_RC;
	qp_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	qp_attr.cap.max_send_wr = 8;
	qp_attr.cap.max_recv_wr = 4;
	qp_attr.cap.max_send_sge = 1;
	qp_attr.cap.max_recv_sge = 1;
	err = rdma_create_qp(kp->id, kp->pd, &qp_attr);
	if (err)
		goto destroy_cq;
	kp->dma = ib_dma_map_single(kp->id->device, kp->buf, kp->buf_len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(kp->id->device, kp->dma)) {
		err = -ENOMEM;
		goto destroy_qp;
	}
	err = kping_post_recv(kp);
	if (err)
		goto unmap;
	/* The server RDMA Reads from us: one Read Request in flight is what rping needs (IRD 1). */
	conn.responder_resources = 1;
	conn.initiator_depth = 1;
	conn.retry_count = 7;
	err = rdma_connect(kp->id, &conn) ?: kping_wait_step(kp, STEP_CONNECTED, "rdma_connect");
	if (err)
		goto unmap;
	t_connect = ktime_get_ns();
	pr_info("rnic_kping: connected to %s:%u (QP %u) in %llu ms\n", server_ip, server_port, kp->id->qp->qp_num,
		div_u64(t_connect - t0, 1000000));
	err = kping_pings(kp, &checked, &bad);
	if (!err)
		pr_info("rnic_kping: %u pings of %u bytes, %llu bytes checked, %llu bad; %llu us wall per ping; %u "
			"completion events\n", count, size, checked, bad, div_u64(ktime_get_ns() - t_connect, 1000 * count),
			kp->cq_events);
	rdma_disconnect(kp->id);
	if (kping_wait_step(kp, STEP_DISCONNECTED, "rdma_disconnect") == 0)
		pr_info("rnic_kping: disconnected\n");
unmap:
	ib_dma_unmap_single(kp->id->device, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
destroy_qp:
	rdma_destroy_qp(kp->id);
destroy_cq:
	ib_destroy_cq(kp->cq);
dealloc_pd:
	ib_dealloc_pd(kp->pd);
destroy_id:
	rdma_destroy_id(kp->id);
free_buf:
	kfree(kp->buf);
free_kp:
	kfree(kp);
	return err;
}

static int __init kping_init(void)
{
	result = kping_run();
	if (result == 0)
		pr_info("rnic_kping: PASS (%u pings of %u bytes against %s:%u)\n", count, size, server_ip, server_port);
	else
		pr_info("rnic_kping: FAIL (error %d)\n", result);
	return 0; /* loaded either way, so that the verdict can be read from the parameter */
}

static void __exit kping_exit(void)
{
}

module_init(kping_init);
module_exit(kping_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rping's client protocol over the kernel rdma_cm API (a consumer of any RDMA device)");
