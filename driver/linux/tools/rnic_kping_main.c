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
 * mode=perf runs the client of the platform's perf_server instead (platform/workloads/perf_server.h:
 * 32-byte little-endian control Sends): hello (the server's region), `count` RDMA Writes of `size`
 * bytes with perf_pattern that the server checks, `count` RDMA Reads of a pattern the server wrote,
 * checked here, `count` Sends of `size` bytes the server checks, bye; `depth` operations in flight.
 *
 * Memory: one kmalloc buffer mapped with ib_dma_map_single; the PD's local DMA lkey for local
 * access and, since the server must reach the buffers, the PD's unsafe global rkey
 * (IB_PD_UNSAFE_GLOBAL_RKEY) as the advertised rkey, with bus addresses as tagged offsets.
 *
 * mode=server (rnic_kping_server.c) is rping's server instead: listen, accept, serve the client's pings.
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

#include "../rnic_rping_pattern.h"
#include "rnic_kping.h"

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
static char *mode = "rping";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "rping (librdmacm rping's client), perf (perf_server's client: RDMA Write, RDMA Read, Send) "
		 "or server (rping's server: listen on server_port, accept, serve count pings)");
static char *private_data = "";
module_param(private_data, charp, 0444);
MODULE_PARM_DESC(private_data, "mode=rping: MPA private data of the connect (at most 64 bytes); mode=server: the "
		 "private data every connect request must carry, byte for byte (empty: not checked)");
static unsigned int reject;
module_param(reject, uint, 0444);
MODULE_PARM_DESC(reject, "mode=server: reject this many connect requests first (private data \"rnic_kping: not now\")");
static unsigned int keep_listening;
module_param(keep_listening, uint, 0444);
MODULE_PARM_DESC(keep_listening, "mode=server: 1 keeps the listener open until the module is removed");
static unsigned int depth = 8;
module_param(depth, uint, 0444);
MODULE_PARM_DESC(depth, "mode=perf: operations in flight (1..8)");
static unsigned int timeout_ms = 60000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "Longest wait for any one connection event or completion");
static int result = 1;
module_param(result, int, 0444);
MODULE_PARM_DESC(result, "Outcome: 0 pass, negative errno on failure, 1 not run");

int kping_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kping *kp = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED: kp->step = STEP_ADDR; break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: kp->step = STEP_ROUTE; break;
	case RDMA_CM_EVENT_ESTABLISHED: kp->step = STEP_CONNECTED; break;
	case RDMA_CM_EVENT_DISCONNECTED: kp->step = STEP_DISCONNECTED; break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* mode=server: a new cm_id; one request is answered at a time, a second is refused meanwhile. */
		if (kp->request)
			return -EBUSY; /* rdma_cm rejects and destroys it */
		kp->request = id;
		kp->request_pd_len = min_t(u8, ev->param.conn.private_data_len, sizeof(kp->request_pd));
		memcpy(kp->request_pd, ev->param.conn.private_data, kp->request_pd_len);
		/* rdma_cm's names are the answering side's: the peer's IRD becomes our initiator depth. */
		kp->request_ird = ev->param.conn.initiator_depth;
		kp->request_ord = ev->param.conn.responder_resources;
		kp->step = STEP_REQUEST;
		break;
	case RDMA_CM_EVENT_REJECTED:
		kp->reject_status = ev->status;
		kp->reject_pd_len = min_t(u8, ev->param.conn.private_data_len, sizeof(kp->reject_pd));
		memcpy(kp->reject_pd, ev->param.conn.private_data, kp->reject_pd_len);
		pr_err("rnic_kping: rdma_cm event %s, status %d, %u bytes of private data\n", rdma_event_msg(ev->event),
		       ev->status, ev->param.conn.private_data_len);
		kp->cm_error = -ECONNREFUSED;
		kp->step = STEP_ERROR;
		break;
	default:
		pr_err("rnic_kping: rdma_cm event %s, status %d\n", rdma_event_msg(ev->event), ev->status);
		kp->cm_error = ev->status ? ev->status : -ECONNABORTED;
		kp->step = STEP_ERROR;
		break;
	}
	wake_up(&kp->wait);
	return 0; /* the id is destroyed by kping_run, never here */
}

int kping_wait_step(struct kping *kp, enum kping_step want, const char *what)
{
	long left = wait_event_interruptible_timeout(kp->wait, kp->step == want || kp->step == STEP_ERROR,
						     msecs_to_jiffies(timeout_ms));

	if (kp->step == want)
		return 0;
	pr_err("rnic_kping: %s: %s\n", what, left == 0 ? "timed out" : left < 0 ? "interrupted" : "rdma_cm error");
	return kp->step == STEP_ERROR ? kp->cm_error : left < 0 ? (int)left : -ETIMEDOUT;
}

void kping_comp_handler(struct ib_cq *cq, void *ctx)
{
	struct kping *kp = ctx;

	kp->cq_events++;
	kp->cq_event = true;
	wake_up(&kp->wait);
}

/* The next completion, whatever its status: polled, then waited for through the CQ's completion handler. */
static int kping_wait_wc(struct kping *kp, struct ib_wc *wc)
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
	/* A successful completion's opcode is valid; a receive's slot is free again. */
	if (wc->status == IB_WC_SUCCESS && (wc->opcode & IB_WC_RECV) && wc->wr_id < RECVS)
		kp->recv_posted &= ~BIT(wc->wr_id);
	return 0;
}

/* The next completion, which must be a success. */
int kping_next_wc(struct kping *kp, struct ib_wc *wc)
{
	int err = kping_wait_wc(kp, wc);

	if (err)
		return err;
	if (wc->status != IB_WC_SUCCESS) {
		pr_err("rnic_kping: completion of wr_id %llu: %s (vendor %u)\n", wc->wr_id, ib_wc_status_msg(wc->status),
		       wc->vendor_err);
		return -EIO;
	}
	return 0;
}

int kping_post_recv(struct kping *kp, unsigned int slot)
{
	struct ib_sge sge = { .addr = kp->dma + 64 + slot * RECV_BYTES, .length = RECV_BYTES,
			      .lkey = kp->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	int err = ib_post_recv(kp->id->qp, &wr, NULL);

	if (!err)
		kp->recv_posted |= BIT(slot);
	return err;
}

int kping_expect_flushed_receives(struct kping *kp)
{
	unsigned int want = hweight_long(kp->recv_posted), flushed = 0;
	struct ib_wc wc;
	int err;

	while (kp->recv_posted) {
		err = kping_wait_wc(kp, &wc);
		if (err)
			return err;
		if (wc.status == IB_WC_SUCCESS && !(wc.opcode & IB_WC_RECV) && kp->in_flight) {
			kp->in_flight--; /* a Send acknowledged before the close, its completion late */
			continue;
		}
		if (wc.status != IB_WC_WR_FLUSH_ERR || wc.wr_id >= RECVS || !(kp->recv_posted & BIT(wc.wr_id))) {
			pr_err("rnic_kping: after the graceful close: a completion of wr_id %llu: %s, not the flush of a "
			       "posted receive\n", wc.wr_id, ib_wc_status_msg(wc.status));
			return -EPROTO;
		}
		kp->recv_posted &= ~BIT(wc.wr_id);
		flushed++;
	}
	pr_info("rnic_kping: after the graceful close %u of %u posted receives completed with IB_WC_WR_FLUSH_ERR\n",
		flushed, want);
	return 0;
}

/* Sends the first len bytes of the buffer and waits for the next receive (wc: its completion). */
static int kping_send_and_receive(struct kping *kp, u32 len, struct ib_wc *wc)
{
	struct ib_device *dev = kp->id->device;
	struct ib_sge sge = { .addr = kp->dma, .length = len, .lkey = kp->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_id = ~0ull, .sg_list = &sge, .num_sge = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };
	int err;

	ib_dma_sync_single_for_device(dev, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
	err = ib_post_send(kp->id->qp, &wr, NULL);
	if (err)
		return err;
	kp->in_flight++;
	for (;;) {
		err = kping_next_wc(kp, wc);
		if (err)
			return err;
		if (wc->opcode == IB_WC_RECV)
			break; /* the send's own completion came first, or comes later: both are fine */
		kp->in_flight--;
	}
	ib_dma_sync_single_for_cpu(dev, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
	return wc->wr_id < RECVS ? 0 : -EPROTO;
}

/* Sends rping_rdma_info for the buffer at offset off, then waits for the server's go-ahead. */
static int kping_advertise(struct kping *kp, u32 off, const char *what)
{
	struct ib_wc wc;
	int err;

	put_unaligned_be64(kp->dma + off, kp->buf);
	put_unaligned_be32(kp->pd->unsafe_global_rkey, kp->buf + 8);
	put_unaligned_be32(size, kp->buf + 12);
	err = kping_send_and_receive(kp, INFO_BYTES, &wc);
	if (err)
		return err;
	if (wc.byte_len != INFO_BYTES) {
		pr_err("rnic_kping: %s: received %u bytes (rping sends %u)\n", what, wc.byte_len, INFO_BYTES);
		return -EPROTO;
	}
	return kping_post_recv(kp, wc.wr_id);
}

static int kping_pings(struct kping *kp, u64 *checked, u64 *bad)
{
	u8 *echo = kp->buf + DATA, *start = kp->buf + DATA + kp->slot, *expect;
	unsigned int ping, i;
	int err = 0;

	expect = kmalloc(size, GFP_KERNEL);
	if (!expect)
		return -ENOMEM;
	for (ping = 0; ping < count && !err; ping++) {
		rnic_rping_pattern(expect, ping, size);
		memcpy(start, expect, size);
		memset(echo, 0, size); /* the echo must really arrive */
		err = kping_advertise(kp, DATA + kp->slot, "the go-ahead after the server's RDMA Read") ?:
		      kping_advertise(kp, DATA, "the go-ahead after the server's RDMA Write");
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

/* The byte at data offset o of pattern seed (perf_server.h's perf_pattern). */
static u8 perf_pattern(u64 seed, u64 o)
{
	return (u8)((seed * 151u + o * 131u + (o >> 8) * 7u + (o >> 16)) & 0xffu);
}

struct perf_reply {
	u32 status, c;
	u64 a, b;
};

/* One control message to perf_server and its reply. */
static int perf_request(struct kping *kp, u32 op, u32 count_, u64 seed, struct perf_reply *r)
{
	const u8 *m;
	struct ib_wc wc;
	int err;

	memset(kp->buf, 0, PERF_MSG);
	put_unaligned_le32(PERF_MAGIC, kp->buf);
	put_unaligned_le32(op, kp->buf + 4);
	put_unaligned_le32(size, kp->buf + 8);
	put_unaligned_le32(count_, kp->buf + 12);
	put_unaligned_le64(seed, kp->buf + 16);
	err = kping_send_and_receive(kp, PERF_MSG, &wc);
	if (err)
		return err;
	m = kp->buf + 64 + wc.wr_id * RECV_BYTES;
	if (wc.byte_len != PERF_MSG || get_unaligned_le32(m) != PERF_MAGIC) {
		pr_err("rnic_kping: a %u-byte reply to op %u that is no perf reply\n", wc.byte_len, op);
		return -EPROTO;
	}
	r->status = get_unaligned_le32(m + 4);
	r->a = get_unaligned_le64(m + 8);
	r->b = get_unaligned_le64(m + 16);
	r->c = get_unaligned_le32(m + 24);
	return kping_post_recv(kp, wc.wr_id);
}

/* Waits until at most `left` signaled work requests are in flight; receives are not expected. */
static int perf_drain(struct kping *kp, unsigned int left)
{
	struct ib_wc wc;
	int err;

	while (kp->in_flight > left) {
		err = kping_next_wc(kp, &wc);
		if (err)
			return err;
		if (wc.opcode == IB_WC_RECV) {
			/* The server answers the last Send once it has it, which may be before our completion. */
			if (kp->have_early) {
				pr_err("rnic_kping: an unexpected receive of %u bytes\n", wc.byte_len);
				return -EPROTO;
			}
			kp->early = wc;
			kp->have_early = true;
			continue;
		}
		kp->in_flight--;
	}
	return 0;
}

/* count operations: RDMA Writes or Reads between data slot i and the server's data offset i * size,
 * or Sends of data slot i; depth of them in flight. Returns the wall time in ns through *ns. */
static int perf_ops(struct kping *kp, enum ib_wr_opcode op, u64 raddr, u32 rkey, u64 *ns)
{
	u64 t0 = ktime_get_ns();
	unsigned int i;
	int err;

	ib_dma_sync_single_for_device(kp->id->device, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
	for (i = 0; i < count; i++) {
		struct ib_sge sge = { .addr = kp->dma + DATA + (u64)i * size, .length = size,
				      .lkey = kp->pd->local_dma_lkey };
		struct ib_rdma_wr wr = { .wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = op,
						 .send_flags = IB_SEND_SIGNALED },
					 .remote_addr = raddr + PERF_DATA_OFFSET + (u64)i * size, .rkey = rkey };

		err = perf_drain(kp, depth - 1);
		if (err)
			return err;
		err = ib_post_send(kp->id->qp, &wr.wr, NULL);
		if (err)
			return err;
		kp->in_flight++;
	}
	err = perf_drain(kp, 0);
	*ns = ktime_get_ns() - t0;
	ib_dma_sync_single_for_cpu(kp->id->device, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
	return err;
}

static void perf_row(const char *op, u64 ns, const char *check, u64 a, u64 b)
{
	pr_info("rnic_kping: %-5s %u x %u bytes, depth %u: %llu us per op, %llu KB/s; %s%llu bytes checked, %llu differ\n",
		op, count, size, depth, div_u64(ns, 1000 * count), ns ? div64_u64((u64)count * size * 1000000, ns) : 0,
		check, a, b);
}

static int kping_perf(struct kping *kp, u64 *checked, u64 *bad)
{
	u8 *data = kp->buf + DATA;
	struct perf_reply r;
	u64 raddr, area = (u64)count * size, o, ns, differ;
	u32 rkey, i, j;
	int err;

	err = perf_request(kp, PERF_HELLO, 0, 0, &r);
	if (err)
		return err;
	raddr = r.a;
	rkey = r.c;
	if (r.status || r.b < PERF_DATA_OFFSET + area) {
		pr_err("rnic_kping: hello: status %u, a region of %llu bytes (%llu needed)\n", r.status, r.b,
		       PERF_DATA_OFFSET + area);
		return -EPROTO;
	}
	pr_info("rnic_kping: perf_server's region: tagged offset %#llx, %llu bytes, STag %#x\n", raddr, r.b, rkey);
	/* RDMA Writes of pattern 1, checked by the server. */
	for (o = 0; o < area; o++)
		data[o] = perf_pattern(1, o);
	err = perf_ops(kp, IB_WR_RDMA_WRITE, raddr, rkey, &ns) ?: perf_request(kp, PERF_CHECK_WRITE, count, 1, &r);
	if (err)
		return err;
	perf_row("write", ns, "server: ", r.a, r.b);
	if (r.status || r.a != area || r.b) {
		pr_err("rnic_kping: the server found the Writes wrong (status %u, first at %u)\n", r.status, r.c);
		return -EILSEQ;
	}
	*checked += r.a;
	/* RDMA Reads of pattern 2, which the server wrote, checked here. */
	err = perf_request(kp, PERF_FILL_READ, count, 2, &r);
	if (err)
		return err;
	if (r.status || r.a != area)
		return -EPROTO;
	memset(data, 0, area);
	err = perf_ops(kp, IB_WR_RDMA_READ, raddr, rkey, &ns);
	if (err)
		return err;
	for (o = 0, differ = 0; o < area; o++)
		differ += data[o] != perf_pattern(2, o);
	perf_row("read", ns, "client: ", area, differ);
	*checked += area;
	*bad += differ;
	if (differ)
		return -EILSEQ;
	/* Sends: Send i carries perf_pattern(3 + i, j), checked by the server (its receives are 4 KiB). */
	if (size <= 4096) {
		for (i = 0; i < count; i++)
			for (j = 0; j < size; j++)
				data[(u64)i * size + j] = perf_pattern(3 + i, j);
		err = perf_request(kp, PERF_EXPECT_SENDS, count, 3, &r);
		if (err)
			return err;
		if (r.status)
			return -EPROTO;
		err = perf_ops(kp, IB_WR_SEND, 0, 0, &ns);
		if (err)
			return err;
		/* The server's reply after the last Send. */
		{
			struct ib_wc wc;
			const u8 *m;

			if (kp->have_early) {
				wc = kp->early;
				kp->have_early = false;
			} else {
				err = kping_next_wc(kp, &wc);
				if (err)
					return err;
			}
			ib_dma_sync_single_for_cpu(kp->id->device, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
			m = kp->buf + 64 + wc.wr_id * RECV_BYTES;
			if (wc.opcode != IB_WC_RECV || wc.wr_id >= RECVS || wc.byte_len != PERF_MSG ||
			    get_unaligned_le32(m) != PERF_MAGIC)
				return -EPROTO;
			r.status = get_unaligned_le32(m + 4);
			r.a = get_unaligned_le64(m + 8);
			r.b = get_unaligned_le64(m + 16);
			err = kping_post_recv(kp, wc.wr_id);
			if (err)
				return err;
		}
		perf_row("send", ns, "server: ", r.a, r.b);
		if (r.status || r.a != area || r.b)
			return -EILSEQ;
		*checked += r.a;
	}
	return perf_request(kp, PERF_BYE, 0, 0, &r);
}

int kping_setup_qp(struct kping *kp)
{
	struct ib_qp_init_attr qp_attr = { 0 };
	struct ib_cq_init_attr cq_attr = { .cqe = 16 };
	unsigned int i;
	int err;

	kp->pd = ib_alloc_pd(kp->id->device, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(kp->pd))
		return PTR_ERR(kp->pd);
	kp->cq = ib_create_cq(kp->id->device, kping_comp_handler, NULL, kp, &cq_attr);
	if (IS_ERR(kp->cq)) {
		err = PTR_ERR(kp->cq);
		goto dealloc_pd;
	}
	qp_attr.send_cq = kp->cq;
	qp_attr.recv_cq = kp->cq;
	qp_attr.qp_type = IB_QPT_RC;
	qp_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	qp_attr.cap.max_send_wr = 16;
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
	for (i = 0, err = 0; i < RECVS && !err; i++)
		err = kping_post_recv(kp, i);
	if (!err)
		return 0;
	ib_dma_unmap_single(kp->id->device, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
destroy_qp:
	rdma_destroy_qp(kp->id);
destroy_cq:
	ib_destroy_cq(kp->cq);
dealloc_pd:
	ib_dealloc_pd(kp->pd);
	return err;
}

void kping_teardown_qp(struct kping *kp)
{
	ib_dma_unmap_single(kp->id->device, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
	rdma_destroy_qp(kp->id);
	ib_destroy_cq(kp->cq);
	ib_dealloc_pd(kp->pd);
}

static int kping_run(void)
{
	struct rdma_conn_param conn = { 0 };
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct kping *kp;
	u64 checked = 0, bad = 0, t0, t_connect;
	int err;

	bool perf = strcmp(mode, "perf") == 0;

	if (strcmp(mode, "server") == 0) {
		struct kping_server_args a = { count, size, server_port, reject, keep_listening, private_data };

		if (size < 26 || size > 65536 || count < 1 || count > 100000 || !server_port || server_port > 65535 ||
		    strlen(private_data) > sizeof(((struct kping *)NULL)->request_pd))
			return -EINVAL;
		kp = kzalloc(sizeof(*kp), GFP_KERNEL);
		if (!kp)
			return -ENOMEM;
		init_waitqueue_head(&kp->wait);
		return kping_serve(kp, &a); /* it frees kp, or keeps it with the listener */
	}
	if (strlen(private_data) > 64)
		return -EINVAL;
	if (size < 26 || size > 65536 || count < 1 || count > 100000 ||
	    !in4_pton(server_ip, -1, (u8 *)&dst.sin_addr.s_addr, -1, NULL) || (!perf && strcmp(mode, "rping") != 0) ||
	    (perf && ((u64)count * size > PERF_MAX_AREA || depth < 1 || depth > 8)))
		return -EINVAL;
	dst.sin_port = htons(server_port);
	kp = kzalloc(sizeof(*kp), GFP_KERNEL);
	if (!kp)
		return -ENOMEM;
	init_waitqueue_head(&kp->wait);
	kp->slot = ALIGN(size, 64);
	kp->buf_len = DATA + (perf ? (size_t)count * size : 2 * (size_t)kp->slot);
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
	err = kping_setup_qp(kp);
	if (err)
		goto destroy_id;
	/* rping: the server RDMA Reads from us, one Read Request in flight (IRD 1), as rping asks.
	 * perf: our Reads, up to depth in flight (ORD). */
	conn.responder_resources = perf ? 0 : 1;
	conn.initiator_depth = perf ? depth : 1;
	conn.retry_count = 7;
	conn.private_data = private_data;
	conn.private_data_len = strlen(private_data);
	err = rdma_connect(kp->id, &conn) ?: kping_wait_step(kp, STEP_CONNECTED, "rdma_connect");
	if (err)
		goto teardown;
	t_connect = ktime_get_ns();
	pr_info("rnic_kping: connected to %s:%u (QP %u) in %llu ms\n", server_ip, server_port, kp->id->qp->qp_num,
		div_u64(t_connect - t0, 1000000));
	err = perf ? kping_perf(kp, &checked, &bad) : kping_pings(kp, &checked, &bad);
	if (!err && perf)
		pr_info("rnic_kping: perf: %llu bytes checked, %llu bad; %u completion events\n", checked, bad,
			kp->cq_events);
	else if (!err)
		pr_info("rnic_kping: %u pings of %u bytes, %llu bytes checked, %llu bad; %llu us wall per ping; %u "
			"completion events\n", count, size, checked, bad, div_u64(ktime_get_ns() - t_connect, 1000 * count),
			kp->cq_events);
	rdma_disconnect(kp->id);
	if (kping_wait_step(kp, STEP_DISCONNECTED, "rdma_disconnect") == 0) {
		pr_info("rnic_kping: disconnected\n");
		/* The device flushes the receives still posted once the close is done (rnic.ko's close work). */
		if (!err)
			err = kping_expect_flushed_receives(kp);
	}
teardown:
	kping_teardown_qp(kp);
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
		pr_info("rnic_kping: PASS (%s, %u x %u bytes against %s:%u)\n", mode, count, size, server_ip, server_port);
	else
		pr_info("rnic_kping: FAIL (error %d)\n", result);
	return 0; /* loaded either way, so that the verdict can be read from the parameter */
}

static void __exit kping_exit(void)
{
	kping_server_exit();
}

module_init(kping_init);
module_exit(kping_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rping's client protocol over the kernel rdma_cm API (a consumer of any RDMA device)");
