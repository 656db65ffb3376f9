// SPDX-License-Identifier: GPL-2.0
/*
 * iw_cm's connection operations on the firmware (docs/architecture.md, "rnic.ko and the kernel RDMA
 * core"). As on offload RNICs, the firmware opens the TCP connection and runs the MPA Request/Reply
 * exchange (RFC 5044 S7, IRD/ORD per RFC 6581); the driver turns the outcome of its commands into
 * iw_cm events. Its connect command completes only when negotiation has ended, so it runs on an
 * ordered work queue, as does the close that follows a disconnect; both deliver their event from
 * there. The passive side: a listener opens the port (firmware listen) and, since no interrupt
 * reaches the guest, a delayed work item polls the firmware's next_peer while any listener exists,
 * turning each waiting peer into IW_CM_EVENT_CONNECT_REQUEST; accept and reject name the peer's
 * handle. MPA private data travels both ways (RFC 5044 S7.1, after the RFC 6581 word).
 */
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <asm/unaligned.h>

#include "rnic_ib.h"
#include "rnic_regs.h"

static unsigned int listen_poll_ms = 20;
module_param(listen_poll_ms, uint, 0444);
MODULE_PARM_DESC(listen_poll_ms, "While a listener exists, ask the firmware for waiting peers this often (ms)");

static unsigned int qp_watch_ms = 100;
module_param(qp_watch_ms, uint, 0444);
MODULE_PARM_DESC(qp_watch_ms, "While a connection is up, ask the firmware this often whether the peer closed it (ms)");

/* The peer record and up to the MPA limit of private data (RFC 5044 S7.1: 512 bytes). */
#define PEER_BUF_BYTES (RNIC_PEER_RECORD_SIZE + 512)

struct rnic_listener {
	struct list_head node;
	struct iw_cm_id *cm_id;
	__be32 addr; /* 0: any */
	u16 port;
};

struct rnic_ep {
	struct rnic_ib_dev *rdev;
	struct iw_cm_id *cm_id;
	struct rnic_ib_qp *qp;
	struct work_struct connect_work, close_work;
	struct delayed_work watch_work; /* while established: has the peer closed the stream? */
	u32 ird, ord;
	u32 peer_handle;    /* passive side: the firmware's handle of the waiting peer (next_peer) */
	u16 port;           /* passive side: the listening port */
	u8 *private_data;   /* active side: the Request's private data (kmalloc), sent by the connect work */
	u8 private_data_len;
	bool established;   /* a successful connect reply was delivered: a close must follow */
	bool close_queued;  /* under qp->ep_lock */
	bool graceful;
};

static void queue_close_locked(struct rnic_ep *ep, bool graceful)
{
	if (ep->close_queued)
		return;
	ep->close_queued = true;
	ep->graceful = graceful;
	queue_work(ep->rdev->cm_wq, &ep->close_work);
}

void rnic_ep_close(struct rnic_ib_qp *qp, bool graceful)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->ep_lock, flags);
	if (qp->ep)
		queue_close_locked(qp->ep, graceful);
	spin_unlock_irqrestore(&qp->ep_lock, flags);
}

static int connect_status(int err, u32 status)
{
	if (err != -EIO)
		return err; /* -ETIMEDOUT: the firmware did not answer in cmd_timeout_ms */
	switch (status) {
	case RNIC_CMD_STATUS_CONNECTION_REFUSED: return -ECONNREFUSED;
	case RNIC_CMD_STATUS_CONNECTION_TIMEOUT: return -ETIMEDOUT;
	case RNIC_CMD_STATUS_MPA_NEGOTIATION_FAILED: return -ECONNRESET;
	case RNIC_CMD_STATUS_NO_BUFFER_MEMORY: return -ENOBUFS; /* no send region for the connection */
	}
	return -EINVAL;
}

/*
 * A peer's close reaches the QP without a completion (a graceful close flushes nothing) and no
 * interrupt reaches the guest, so while the connection is up its QP's state is asked for every
 * qp_watch_ms, one short command at a time; once it leaves RTS the close is delivered.
 */
static void rnic_watch_work(struct work_struct *w)
{
	struct rnic_ep *ep = container_of(to_delayed_work(w), struct rnic_ep, watch_work);
	struct rnic_ib_qp *qp = ep->qp;
	unsigned long flags;
	u32 word = 0, state;
	bool closing;

	spin_lock_irqsave(&qp->ep_lock, flags);
	closing = ep->close_queued;
	spin_unlock_irqrestore(&qp->ep_lock, flags);
	if (closing || READ_ONCE(ep->rdev->stopping))
		return;
	if (!rnic_command(ep->rdev->d, RNIC_CMD_QUERY_QP, qp->qpn, 0, 0, 0, 0, 0, &word, NULL)) {
		state = word & RNIC_QUERY_QP_STATE_MASK;
		if (state != RNIC_QP_STATE_RTS) {
			dev_info(&ep->rdev->d->pdev->dev, "iw_cm: QP %u left RTS without the consumer (firmware state "
				 "%u): the peer closed the connection\n", qp->qpn, state);
			/* Idle or closing: the peer's graceful close; terminate or error: abortive. */
			rnic_ep_close(qp, state == RNIC_QP_STATE_IDLE || state == RNIC_QP_STATE_CLOSING);
			return;
		}
	}
	queue_delayed_work(system_wq, &ep->watch_work, msecs_to_jiffies(qp_watch_ms));
}

static void rnic_connect_work(struct work_struct *w)
{
	struct rnic_ep *ep = container_of(w, struct rnic_ep, connect_work);
	struct iw_cm_id *cm_id = ep->cm_id;
	struct rnic_ib_qp *qp = ep->qp;
	struct rnic_dev *d = ep->rdev->d;
	const struct sockaddr_in *raddr = (const struct sockaddr_in *)&cm_id->m_remote_addr;
	const struct sockaddr_in *laddr = (const struct sockaddr_in *)&cm_id->m_local_addr;
	struct iw_cm_event ev = { .event = IW_CM_EVENT_CONNECT_REPLY };
	struct rnic_coherent pd = {};
	unsigned long flags;
	u32 status = 0;
	u64 p[6], reply_len = 0;
	int err;

	/* One buffer both ways: the Request's private data out, the Reply's (accept or reject) back. */
	err = rnic_alloc(d, &pd, 512);
	if (!err) {
		memcpy(pd.cpu, ep->private_data, ep->private_data_len);
		p[0] = qp->qpn;
		p[1] = ntohl(raddr->sin_addr.s_addr) | (u64)ntohs(raddr->sin_port) << 32;
		p[2] = ntohs(laddr->sin_port);
		p[3] = ep->ird | (u64)ep->ord << 16 | RNIC_CONNECT_PRIVATE_DATA;
		p[4] = pd.dma;
		p[5] = 512 | (u64)ep->private_data_len << 32;
		err = rnic_command_p5(d, RNIC_CMD_CONNECT, p, NULL, &status, &reply_len);
	}
	ev.status = err ? connect_status(err, status) : 0;
	if ((!err || status == RNIC_CMD_STATUS_CONNECTION_REFUSED) && reply_len) {
		/* iw_cm copies it before the handler returns (cm_event_handler). */
		ev.private_data = pd.cpu;
		ev.private_data_len = min_t(u64, reply_len, 512);
	}
	ev.local_addr = cm_id->m_local_addr;
	ev.remote_addr = cm_id->m_remote_addr;
	ev.ird = ep->ird;
	ev.ord = ep->ord;
	if (!err) {
		qp->fw_connected = true;
		ep->established = true;
		queue_delayed_work(system_wq, &ep->watch_work, msecs_to_jiffies(qp_watch_ms));
	}
	dev_info(&d->pdev->dev, "iw_cm: QP %u connect %pI4:%u -> %pI4:%u: %s (%d), private data %u out, %u back\n",
		 qp->qpn, &laddr->sin_addr, ntohs(laddr->sin_port), &raddr->sin_addr, ntohs(raddr->sin_port),
		 err ? "failed" : "established", ev.status, ep->private_data_len, ev.private_data_len);
	cm_id->event_handler(cm_id, &ev);
	if (pd.cpu)
		rnic_free(d, &pd);
	if (err) {
		/* No close follows a failed connect (iw_cm is idle again); the close work frees the endpoint. */
		spin_lock_irqsave(&qp->ep_lock, flags);
		queue_close_locked(ep, false);
		spin_unlock_irqrestore(&qp->ep_lock, flags);
	}
}

static void rnic_close_work(struct work_struct *w)
{
	struct rnic_ep *ep = container_of(w, struct rnic_ep, close_work);
	struct rnic_ib_qp *qp = ep->qp;
	struct rnic_dev *d = ep->rdev->d;
	struct iw_cm_event ev = { .event = IW_CM_EVENT_CLOSE };
	unsigned long flags;
	u32 word = 0, state = RNIC_QP_STATE_ERROR;
	int i;

	cancel_delayed_work_sync(&ep->watch_work); /* it only queues this work, never waits for it */
	if (ep->established) {
		if (ep->graceful) {
			/* The stream closes once sent work is acknowledged: wait for idle (bounded), else abort. */
			for (i = 0; i < 200; i++) {
				if (rnic_command(d, RNIC_CMD_QUERY_QP, qp->qpn, 0, 0, 0, 0, 0, &word, NULL))
					break;
				state = word & RNIC_QUERY_QP_STATE_MASK;
				if (state == RNIC_QP_STATE_IDLE || state == RNIC_QP_STATE_ERROR)
					break;
				msleep(10);
			}
			if (state != RNIC_QP_STATE_IDLE && state != RNIC_QP_STATE_ERROR)
				rnic_command(d, RNIC_CMD_MODIFY_QP, qp->qpn, RNIC_QP_STATE_ERROR, 0, 0, 0, 0, NULL, NULL);
		}
		/*
		 * A QP's posted receives flush once its connection is closed, as siw's and cxgb4's do, for
		 * user and kernel QPs alike: rdma-core's rping waits for that flushed completion before it
		 * tears down (its CQ thread ends on IBV_WC_WR_FLUSH_ERR), and a kernel consumer draining its
		 * QP (ib_drain_rq's model) needs every receive back. The device keeps receives in Idle
		 * after a graceful close, and flushes them on the move from Idle to Error.
		 */
		if (state == RNIC_QP_STATE_IDLE)
			rnic_command(d, RNIC_CMD_MODIFY_QP, qp->qpn, RNIC_QP_STATE_ERROR, 0, 0, 0, 0, NULL, NULL);
		qp->fw_connected = false;
		ev.status = ep->graceful && state == RNIC_QP_STATE_IDLE ? 0 : -ECONNRESET;
		ev.local_addr = ep->cm_id->m_local_addr;
		ev.remote_addr = ep->cm_id->m_remote_addr;
		dev_info(&d->pdev->dev, "iw_cm: QP %u closed (%s, firmware state %u)\n", qp->qpn,
			 ep->graceful ? "graceful" : "abortive", state);
		ep->cm_id->event_handler(ep->cm_id, &ev);
	}
	spin_lock_irqsave(&qp->ep_lock, flags);
	qp->ep = NULL;
	spin_unlock_irqrestore(&qp->ep_lock, flags);
	ep->cm_id->provider_data = NULL;
	ep->cm_id->rem_ref(ep->cm_id);
	rnic_qp_put(qp);
	kfree(ep->private_data);
	kfree(ep);
}

int rnic_iw_connect(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param)
{
	struct rnic_ib_dev *rdev = to_rdev(cm_id->device);
	struct rnic_ib_qp *qp = xa_load(&rdev->qps, param->qpn);
	struct rnic_ep *ep;
	unsigned long flags;

	if (!qp)
		return -EINVAL;
	if (cm_id->m_remote_addr.ss_family != AF_INET || cm_id->m_local_addr.ss_family != AF_INET)
		return -EAFNOSUPPORT; /* the firmware's connect takes an IPv4 address */
	if (param->private_data_len > RNIC_MAX_CONN_PRIVATE_DATA)
		return -EINVAL;
	if (param->ird > 0x3fff || param->ord > 0x3fff)
		return -EINVAL;
	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return -ENOMEM;
	if (param->private_data_len) {
		ep->private_data = kmemdup(param->private_data, param->private_data_len, GFP_KERNEL);
		if (!ep->private_data) {
			kfree(ep);
			return -ENOMEM;
		}
		ep->private_data_len = param->private_data_len;
	}
	ep->rdev = rdev;
	ep->cm_id = cm_id;
	ep->qp = qp;
	ep->ird = param->ird;
	ep->ord = param->ord;
	INIT_WORK(&ep->connect_work, rnic_connect_work);
	INIT_WORK(&ep->close_work, rnic_close_work);
	INIT_DELAYED_WORK(&ep->watch_work, rnic_watch_work);
	spin_lock_irqsave(&qp->ep_lock, flags);
	if (qp->ep) {
		spin_unlock_irqrestore(&qp->ep_lock, flags);
		kfree(ep->private_data);
		kfree(ep);
		return -EBUSY;
	}
	qp->ep = ep;
	spin_unlock_irqrestore(&qp->ep_lock, flags);
	rnic_qp_get(qp);
	cm_id->add_ref(cm_id);
	cm_id->provider_data = ep;
	queue_work(rdev->cm_wq, &ep->connect_work);
	return 0;
}

/* ---- The passive side (docs/architecture.md, "The passive side for connection managers") ---- */

/*
 * A waiting peer nobody listens for (its listener went between the firmware's report and now, or
 * it came on an address no listener took): refuse it, so it does not wait in the backlog for ever.
 */
static void reject_peer(struct rnic_ib_dev *rdev, u32 handle, u16 port)
{
	rnic_command(rdev->d, RNIC_CMD_REJECT, 0, port, handle, 0, 0, 0, NULL, NULL);
}

/* One waiting peer from next_peer's record: IW_CM_EVENT_CONNECT_REQUEST to its listener. */
static void deliver_connect_request(struct rnic_ib_dev *rdev, u8 *rec)
{
	struct rnic_dev *d = rdev->d;
	const u32 handle = get_unaligned_le32(rec + RNIC_PEER_RECORD_HANDLE);
	const u16 port = get_unaligned_le16(rec + RNIC_PEER_RECORD_LOCAL_PORT);
	const __be32 local = htonl(get_unaligned_le32(rec + RNIC_PEER_RECORD_LOCAL_IP));
	const __be32 remote = htonl(get_unaligned_le32(rec + RNIC_PEER_RECORD_REMOTE_IP));
	const u16 rport = get_unaligned_le16(rec + RNIC_PEER_RECORD_REMOTE_PORT);
	const u16 pd_len = get_unaligned_le16(rec + RNIC_PEER_RECORD_PD_LENGTH);
	struct iw_cm_event ev = { .event = IW_CM_EVENT_CONNECT_REQUEST };
	struct sockaddr_in *la = (struct sockaddr_in *)&ev.local_addr;
	struct sockaddr_in *ra = (struct sockaddr_in *)&ev.remote_addr;
	struct rnic_listener *l, *found = NULL;
	struct rnic_ep *ep;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep) {
		reject_peer(rdev, handle, port);
		return;
	}
	ep->rdev = rdev;
	ep->peer_handle = handle;
	ep->port = port;
	INIT_WORK(&ep->close_work, rnic_close_work);
	INIT_DELAYED_WORK(&ep->watch_work, rnic_watch_work);
	la->sin_family = AF_INET;
	la->sin_addr.s_addr = local;
	la->sin_port = htons(port);
	ra->sin_family = AF_INET;
	ra->sin_addr.s_addr = remote;
	ra->sin_port = htons(rport);
	if (rec[RNIC_PEER_RECORD_FLAGS] & RNIC_PEER_FLAG_ENHANCED) {
		ev.ird = get_unaligned_le16(rec + RNIC_PEER_RECORD_IRD);
		ev.ord = get_unaligned_le16(rec + RNIC_PEER_RECORD_ORD);
	} else {
		ev.ird = ev.ord = 1; /* revision 1 negotiates nothing; the ULP's own values apply */
	}
	ev.private_data = rec + RNIC_PEER_RECORD_SIZE;
	ev.private_data_len = min_t(u16, pd_len, PEER_BUF_BYTES - RNIC_PEER_RECORD_SIZE);
	ev.provider_data = ep;
	mutex_lock(&rdev->listen_lock);
	list_for_each_entry(l, &rdev->listeners, node) {
		if (l->port == port && (!l->addr || l->addr == local)) {
			found = l;
			break;
		}
	}
	if (found) {
		dev_info(&d->pdev->dev, "iw_cm: connect request %pI4:%u -> %pI4:%u (peer %u, MPA rev %u, IRD %u ORD %u, "
			 "%u bytes of private data)\n", &ra->sin_addr, rport, &la->sin_addr, port, handle,
			 rec[RNIC_PEER_RECORD_REVISION], ev.ird, ev.ord, pd_len);
		/* iw_cm copies the event and its private data, and makes the child cm_id later. */
		found->cm_id->event_handler(found->cm_id, &ev);
	}
	mutex_unlock(&rdev->listen_lock);
	if (!found) {
		dev_info(&d->pdev->dev, "iw_cm: peer %u on port %u has no listener: rejected\n", handle, port);
		reject_peer(rdev, handle, port);
		kfree(ep);
	}
}

/*
 * The poller: while a listener exists, one next_peer every listen_poll_ms (and again at once while
 * peers come), so that the shared command ring is taken one short command at a time.
 */
static void rnic_listen_poll(struct work_struct *w)
{
	struct rnic_ib_dev *rdev = container_of(to_delayed_work(w), struct rnic_ib_dev, listen_work);
	unsigned int i;
	u32 got = 0;

	for (i = 0; i < 4 && !READ_ONCE(rdev->stopping); i++) {
		got = 0;
		if (rnic_command(rdev->d, RNIC_CMD_NEXT_PEER, 0, 0, 0, 0, rdev->peer_buf.dma, PEER_BUF_BYTES, &got, NULL) ||
		    !got)
			break;
		deliver_connect_request(rdev, rdev->peer_buf.cpu);
	}
	mutex_lock(&rdev->listen_lock);
	if (!list_empty(&rdev->listeners) && !READ_ONCE(rdev->stopping))
		queue_delayed_work(system_wq, &rdev->listen_work, got ? 0 : msecs_to_jiffies(listen_poll_ms));
	mutex_unlock(&rdev->listen_lock);
}

int rnic_iw_create_listen(struct iw_cm_id *cm_id, int backlog)
{
	struct rnic_ib_dev *rdev = to_rdev(cm_id->device);
	const struct sockaddr_in *laddr = (const struct sockaddr_in *)&cm_id->m_local_addr;
	struct rnic_listener *l;
	int err;

	if (laddr->sin_family != AF_INET)
		return -EAFNOSUPPORT;
	if (!laddr->sin_port)
		return -EINVAL;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->cm_id = cm_id;
	l->addr = laddr->sin_addr.s_addr;
	l->port = ntohs(laddr->sin_port);
	err = rnic_command(rdev->d, RNIC_CMD_LISTEN, 0, l->port, 0, 0, 0, 0, NULL, NULL);
	if (err) {
		kfree(l);
		return err == -EIO ? -EADDRINUSE : err;
	}
	cm_id->provider_data = l;
	cm_id->add_ref(cm_id);
	mutex_lock(&rdev->listen_lock);
	list_add_tail(&l->node, &rdev->listeners);
	mod_delayed_work(system_wq, &rdev->listen_work, 0);
	mutex_unlock(&rdev->listen_lock);
	dev_info(&rdev->d->pdev->dev, "iw_cm: listening on %pI4:%u (backlog %d), next_peer every %u ms\n",
		 &laddr->sin_addr, l->port, backlog, listen_poll_ms);
	return 0;
}

int rnic_iw_destroy_listen(struct iw_cm_id *cm_id)
{
	struct rnic_ib_dev *rdev = to_rdev(cm_id->device);
	struct rnic_listener *l = cm_id->provider_data, *o;
	bool last, port_shared = false;
	u32 reset = 0;
	int err = 0;

	if (!l)
		return 0;
	mutex_lock(&rdev->listen_lock);
	list_del(&l->node);
	last = list_empty(&rdev->listeners);
	list_for_each_entry(o, &rdev->listeners, node)
		port_shared |= o->port == l->port;
	mutex_unlock(&rdev->listen_lock);
	/* The poller delivers under listen_lock: once unlinked, it cannot reach this cm_id any more. */
	if (last)
		cancel_delayed_work_sync(&rdev->listen_work);
	/*
	 * The device closes the port unless another listener (another address) still uses it: a SYN
	 * to it is refused with a reset from now on, and backlog peers no accept or reject took are
	 * reset (docs/device.md, unlisten); connections already accepted are not touched.
	 */
	if (!port_shared)
		err = rnic_command(rdev->d, RNIC_CMD_UNLISTEN, 0, l->port, 0, 0, 0, 0, &reset, NULL);
	if (err)
		dev_warn(&rdev->d->pdev->dev, "iw_cm: unlisten of port %u failed (%d); the device may still take peers\n",
			 l->port, err);
	dev_info(&rdev->d->pdev->dev, "iw_cm: listener on port %u destroyed; %s%s\n", l->port,
		 port_shared ? "another listener keeps the port open" : err ? "port state unknown" : "port closed",
		 last ? "; no listener left, next_peer polling stopped" : "");
	if (!port_shared && !err)
		dev_info(&rdev->d->pdev->dev, "iw_cm: port %u no longer listening, %u backlog peers reset\n",
			 l->port, reset);
	cm_id->provider_data = NULL;
	cm_id->rem_ref(cm_id);
	kfree(l);
	return 0;
}

int rnic_iw_accept(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param)
{
	struct rnic_ib_dev *rdev = to_rdev(cm_id->device);
	struct rnic_ep *ep = cm_id->provider_data;
	struct rnic_ib_qp *qp = xa_load(&rdev->qps, param->qpn);
	struct rnic_dev *d = rdev->d;
	struct iw_cm_event ev = { .event = IW_CM_EVENT_ESTABLISHED };
	struct rnic_coherent pd = {};
	unsigned long flags;
	u32 status = 0;
	int err;

	if (!ep || !qp)
		return -EINVAL;
	if (param->private_data_len > RNIC_MAX_CONN_PRIVATE_DATA || param->ird > 0x3fff || param->ord > 0x3fff)
		return -EINVAL;
	if (param->private_data_len) {
		err = rnic_alloc(d, &pd, param->private_data_len);
		if (err)
			return err;
		memcpy(pd.cpu, param->private_data, param->private_data_len);
	}
	ep->cm_id = cm_id;
	ep->qp = qp;
	ep->ird = param->ird;
	ep->ord = param->ord;
	spin_lock_irqsave(&qp->ep_lock, flags);
	if (qp->ep) {
		spin_unlock_irqrestore(&qp->ep_lock, flags);
		rnic_free(d, &pd);
		return -EBUSY;
	}
	qp->ep = ep;
	spin_unlock_irqrestore(&qp->ep_lock, flags);
	rnic_qp_get(qp);
	cm_id->add_ref(cm_id);
	/* The peer's Request is in: the firmware answers at once and the QP is in RTS when it completes. */
	err = rnic_command(d, RNIC_CMD_ACCEPT, qp->qpn, ep->port, ep->peer_handle, ep->ird | (u64)ep->ord << 16,
			   pd.cpu ? pd.dma : 0, param->private_data_len, NULL, &status);
	rnic_free(d, &pd);
	dev_info(&d->pdev->dev, "iw_cm: QP %u accept of peer %u on port %u: %s (status %u), %u bytes of private data\n",
		 qp->qpn, ep->peer_handle, ep->port, err ? "failed" : "established", status, param->private_data_len);
	if (err) {
		/* iw_cm expects no event after a failed accept; the cm_id stays the caller's. */
		spin_lock_irqsave(&qp->ep_lock, flags);
		qp->ep = NULL;
		spin_unlock_irqrestore(&qp->ep_lock, flags);
		cm_id->rem_ref(cm_id);
		rnic_qp_put(qp);
		cm_id->provider_data = NULL;
		kfree(ep);
		return status == RNIC_CMD_STATUS_BAD_HANDLE ? -ECONNRESET : connect_status(err, status);
	}
	qp->fw_connected = true;
	ep->established = true;
	ev.local_addr = cm_id->m_local_addr;
	ev.remote_addr = cm_id->m_remote_addr;
	ev.ird = ep->ird;
	ev.ord = ep->ord;
	cm_id->event_handler(cm_id, &ev);
	queue_delayed_work(system_wq, &ep->watch_work, msecs_to_jiffies(qp_watch_ms));
	return 0;
}

int rnic_iw_reject(struct iw_cm_id *cm_id, const void *pdata, u8 pdata_len)
{
	struct rnic_ib_dev *rdev = to_rdev(cm_id->device);
	struct rnic_ep *ep = cm_id->provider_data;
	struct rnic_dev *d = rdev->d;
	struct rnic_coherent pd = {};
	u32 status = 0;
	int err;

	if (!ep)
		return -EINVAL;
	if (pdata_len > RNIC_MAX_REJECT_PRIVATE_DATA)
		return -EINVAL;
	if (pdata_len) {
		err = rnic_alloc(d, &pd, pdata_len);
		if (err)
			return err;
		memcpy(pd.cpu, pdata, pdata_len);
	}
	/* RFC 5044 S7.1.5: an MPA Reply with the Rejected bit and this private data, then the close. */
	err = rnic_command(d, RNIC_CMD_REJECT, 0, ep->port, ep->peer_handle, 0, pd.cpu ? pd.dma : 0, pdata_len, NULL,
			   &status);
	rnic_free(d, &pd);
	dev_info(&d->pdev->dev, "iw_cm: reject of peer %u on port %u with %u bytes of private data: %s (status %u)\n",
		 ep->peer_handle, ep->port, pdata_len, err ? "failed" : "sent", status);
	cm_id->provider_data = NULL;
	kfree(ep);
	return err && status != RNIC_CMD_STATUS_BAD_HANDLE ? connect_status(err, status) : 0;
}

int rnic_iwcm_init(struct rnic_ib_dev *rdev)
{
	mutex_init(&rdev->listen_lock);
	INIT_LIST_HEAD(&rdev->listeners);
	INIT_DELAYED_WORK(&rdev->listen_work, rnic_listen_poll);
	return rnic_alloc(rdev->d, &rdev->peer_buf, PEER_BUF_BYTES);
}

void rnic_iwcm_stop(struct rnic_ib_dev *rdev)
{
	cancel_delayed_work_sync(&rdev->listen_work);
	rnic_free(rdev->d, &rdev->peer_buf);
}
