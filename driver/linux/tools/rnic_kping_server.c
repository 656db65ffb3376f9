// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_kping mode=server: librdmacm rping's server through the kernel rdma_cm API, so that the
 * guest is the passive side (docs/architecture.md, "The passive side for connection managers"):
 * rdma_listen on server_port (any address), then per connect request either rdma_reject (the first
 * `reject` requests, with private data) or a PD, a CQ, an RC QP on the request's cm_id and
 * rdma_accept with private data. Per ping, as rping's server does: the client's first Send
 * advertises its start buffer, which is RDMA Read here and checked against the pattern ping i must
 * have; a go-ahead Send; the second Send advertises the client's echo buffer, which is RDMA Written
 * with what was read (strlen + 1 bytes); a go-ahead Send. After `count` pings the client
 * disconnects. With keep_listening=1 the listener stays open until the module is removed (a device
 * removed under an open listener must tear down cleanly).
 */
#include <linux/slab.h>
#include <asm/unaligned.h>
#include <rdma/ib_cm.h>

#include "../rnic_rping_pattern.h"
#include "rnic_kping.h"

static const char kAccepted[] = "rnic_kping: welcome";
static const char kRejected[] = "rnic_kping: not now";

static struct rdma_cm_id *kept_listener;
static struct kping *kept_kp;

/* The next completion of `want`, passing over the completions of our own Sends. */
static int serve_wait(struct kping *kp, enum ib_wc_opcode want, struct ib_wc *wc)
{
	int err;

	for (;;) {
		err = kping_next_wc(kp, wc);
		if (err)
			return err;
		if (wc->opcode == want)
			return 0;
		if (wc->opcode != IB_WC_SEND) {
			pr_err("rnic_kping: server: completion opcode %d while waiting for %d\n", wc->opcode, want);
			return -EPROTO;
		}
	}
}

/* One work request on the QP: a Send of the 16-byte go-ahead, or an RDMA Read or Write of len bytes. */
static int serve_post(struct kping *kp, enum ib_wr_opcode op, u64 local, u32 len, u64 raddr, u32 rkey)
{
	struct ib_sge sge = { .addr = local, .length = len, .lkey = kp->pd->local_dma_lkey };
	struct ib_rdma_wr wr = { .wr = { .wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op,
					 .send_flags = IB_SEND_SIGNALED },
				 .remote_addr = raddr, .rkey = rkey };

	return ib_post_send(kp->id->qp, &wr.wr, NULL);
}

/* The client's advertisement (struct rping_rdma_info) in the receive of wc; the receive is posted again. */
static int serve_advert(struct kping *kp, u64 *buf, u32 *rkey, u32 *len)
{
	struct ib_wc wc;
	const u8 *m;
	int err = serve_wait(kp, IB_WC_RECV, &wc);

	if (err)
		return err;
	ib_dma_sync_single_for_cpu(kp->id->device, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
	if (wc.wr_id >= RECVS || wc.byte_len != INFO_BYTES) {
		pr_err("rnic_kping: server: received %u bytes (rping sends %u)\n", wc.byte_len, INFO_BYTES);
		return -EPROTO;
	}
	m = kp->buf + 64 + wc.wr_id * RECV_BYTES;
	*buf = get_unaligned_be64(m);
	*rkey = get_unaligned_be32(m + 8);
	*len = get_unaligned_be32(m + 12);
	return kping_post_recv(kp, wc.wr_id);
}

static int serve_pings(struct kping *kp, const struct kping_server_args *a, u64 *checked, u64 *bad)
{
	u8 *data = kp->buf + DATA, *expect;
	struct ib_wc wc;
	unsigned int ping, i, first;
	u64 buf;
	u32 rkey, len;
	int err = 0;

	expect = kmalloc(a->size, GFP_KERNEL);
	if (!expect)
		return -ENOMEM;
	memset(kp->buf, 0, INFO_BYTES); /* the go-ahead: rping's server sends its never-filled buffer */
	for (ping = 0; ping < a->count && !err; ping++) {
		/* The start buffer: RDMA Read it, check it, go ahead. */
		err = serve_advert(kp, &buf, &rkey, &len);
		if (err)
			break;
		if (len != a->size) {
			pr_err("rnic_kping: server: ping %u advertises %u bytes, %u expected\n", ping, len, a->size);
			err = -EPROTO;
			break;
		}
		memset(data, 0, a->size); /* what is compared must really have arrived */
		ib_dma_sync_single_for_device(kp->id->device, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
		err = serve_post(kp, IB_WR_RDMA_READ, kp->dma + DATA, len, buf, rkey) ?:
		      serve_wait(kp, IB_WC_RDMA_READ, &wc);
		if (err)
			break;
		ib_dma_sync_single_for_cpu(kp->id->device, kp->dma, kp->buf_len, DMA_BIDIRECTIONAL);
		rnic_rping_pattern(expect, ping, a->size);
		*checked += a->size;
		if (memcmp(data, expect, a->size) != 0) {
			for (i = 0, first = a->size; i < a->size; i++) {
				if (data[i] != expect[i]) {
					(*bad)++;
					if (first == a->size)
						first = i;
				}
			}
			pr_err("rnic_kping: server: ping %u: the client's start buffer differs from byte %u on\n", ping,
			       first);
			err = -EILSEQ;
			break;
		}
		err = serve_post(kp, IB_WR_SEND, kp->dma, INFO_BYTES, 0, 0);
		if (err)
			break;
		/* The echo buffer: RDMA Write what was read (strlen + 1 bytes, as rping), go ahead. */
		err = serve_advert(kp, &buf, &rkey, &len);
		if (err)
			break;
		len = min_t(u32, strnlen(data, a->size - 1) + 1, len);
		err = serve_post(kp, IB_WR_RDMA_WRITE, kp->dma + DATA, len, buf, rkey) ?:
		      serve_wait(kp, IB_WC_RDMA_WRITE, &wc) ?: serve_post(kp, IB_WR_SEND, kp->dma, INFO_BYTES, 0, 0);
	}
	kfree(expect);
	return err;
}

/* The request's cm_id: rdma_reject with our private data (RFC 5044 S7.1.5 on the wire). */
static void serve_reject(struct kping *kp, struct rdma_cm_id *req)
{
	int err = rdma_reject(req, kRejected, sizeof(kRejected) - 1, IB_CM_REJ_CONSUMER_DEFINED);

	pr_info("rnic_kping: server: rejected the connect request with %zu bytes of private data (%d)\n",
		sizeof(kRejected) - 1, err);
	rdma_destroy_id(req);
}

static int serve_connection(struct kping *kp, const struct kping_server_args *a)
{
	struct rdma_conn_param conn = { 0 };
	u64 checked = 0, bad = 0, t0 = ktime_get_ns();
	int err;

	err = kping_setup_qp(kp);
	if (err)
		return err;
	/* rping: IRD = ORD = 1 (the client's Read Requests are none; ours one at a time). */
	conn.responder_resources = 1;
	conn.initiator_depth = 1;
	conn.private_data = kAccepted;
	conn.private_data_len = sizeof(kAccepted) - 1;
	err = rdma_accept(kp->id, &conn) ?: kping_wait_step(kp, STEP_CONNECTED, "rdma_accept");
	if (err)
		goto teardown;
	pr_info("rnic_kping: server: accepted (QP %u) with %zu bytes of private data in %llu ms\n", kp->id->qp->qp_num,
		sizeof(kAccepted) - 1, div_u64(ktime_get_ns() - t0, 1000000));
	t0 = ktime_get_ns();
	err = serve_pings(kp, a, &checked, &bad);
	if (!err)
		pr_info("rnic_kping: server: %u pings of %u bytes, %llu bytes checked, %llu bad; %llu us wall per ping\n",
			a->count, a->size, checked, bad, div_u64(ktime_get_ns() - t0, 1000 * a->count));
	/* The client disconnects after its last check; rping's server then disconnects too. */
	if (!err && kping_wait_step(kp, STEP_DISCONNECTED, "the client's disconnect") == 0)
		pr_info("rnic_kping: server: the client disconnected\n");
	rdma_disconnect(kp->id);
teardown:
	kping_teardown_qp(kp);
	return err;
}

/* Takes kp: freed on return, or kept with the listener (keep_listening=1) until module exit. */
int kping_serve(struct kping *kp, const struct kping_server_args *a)
{
	struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(a->port) };
	struct rdma_cm_id *listener;
	unsigned int rejected = 0;
	int err;

	kp->slot = ALIGN(a->size, 64);
	kp->buf_len = DATA + kp->slot;
	kp->buf = kzalloc(kp->buf_len, GFP_KERNEL);
	if (!kp->buf) {
		kfree(kp);
		return -ENOMEM;
	}
	listener = rdma_create_id(&init_net, kping_cm_handler, kp, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(listener)) {
		err = PTR_ERR(listener);
		goto free_buf;
	}
	err = rdma_bind_addr(listener, (struct sockaddr *)&any) ?: rdma_listen(listener, 4);
	if (err)
		goto destroy_listener;
	pr_info("rnic_kping: server: listening on port %u\n", a->port);
	for (;;) {
		err = kping_wait_step(kp, STEP_REQUEST, "a connect request");
		if (err)
			goto destroy_listener;
		kp->id = kp->request;
		kp->request = NULL;
		kp->step = STEP_IDLE;
		pr_info("rnic_kping: server: connect request from %pI4:%u on device %s: IRD %u ORD %u, %u bytes of "
			"private data\n", &((struct sockaddr_in *)&kp->id->route.addr.dst_addr)->sin_addr,
			ntohs(((struct sockaddr_in *)&kp->id->route.addr.dst_addr)->sin_port), dev_name(&kp->id->device->dev),
			kp->request_ird, kp->request_ord, kp->request_pd_len);
		if (a->expect_pd[0]) {
			/* The active side's MPA Request private data (RFC 5044 S7.1, after the RFC 6581 IRD/ORD
			 * word, which the firmware decodes apart), as next_peer and iw_cm delivered it. */
			size_t n = strlen(a->expect_pd);

			if (kp->request_pd_len != n || memcmp(kp->request_pd, a->expect_pd, n)) {
				pr_err("rnic_kping: server: the connect request carried %u bytes of private data \"%*pE\", "
				       "not the %zu bytes \"%s\" expected\n", kp->request_pd_len, kp->request_pd_len,
				       kp->request_pd, n, a->expect_pd);
				serve_reject(kp, kp->id);
				kp->id = NULL;
				err = -EBADMSG;
				goto destroy_listener;
			}
			pr_info("rnic_kping: server: the request's private data is the expected %zu bytes \"%s\", byte "
				"for byte\n", n, a->expect_pd);
		}
		if (rejected < a->reject) {
			rejected++;
			serve_reject(kp, kp->id);
			kp->id = NULL;
			continue;
		}
		break;
	}
	err = serve_connection(kp, a);
	rdma_destroy_id(kp->id);
	kp->id = NULL;
destroy_listener:
	if (!err && a->keep_listening) {
		/* Left open on purpose: the module's exit (or the device's removal first) takes it down. */
		kept_listener = listener;
		kept_kp = kp;
		pr_info("rnic_kping: server: the listener on port %u stays open\n", a->port);
		return 0;
	}
	rdma_destroy_id(listener);
free_buf:
	kfree(kp->buf);
	kfree(kp);
	return err;
}

void kping_server_exit(void)
{
	if (!kept_listener)
		return;
	rdma_destroy_id(kept_listener);
	kfree(kept_kp->buf);
	kfree(kept_kp);
	pr_info("rnic_kping: server: listener closed at module exit\n");
}
