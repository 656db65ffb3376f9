// SPDX-License-Identifier: GPL-2.0
/*
 * iw_cm's connection operations on the firmware (docs/architecture.md, "rnic.ko and the kernel RDMA
 * core"). As on offload RNICs, the firmware opens the TCP connection and runs the MPA Request/Reply
 * exchange (RFC 5044 S7, IRD/ORD per RFC 6581); the driver turns the outcome of its commands into
 * iw_cm events. Its connect command completes only when negotiation has ended, so it runs on an
 * ordered work queue, as does the close that follows a disconnect; both deliver their event from
 * there. The passive side is not offered: the firmware's listen does not report a peer before an
 * accept names its QP, and iw_cm needs a connect request event first.
 */
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/slab.h>

#include "rnic_ib.h"
#include "rnic_regs.h"

struct rnic_ep {
	struct rnic_ib_dev *rdev;
	struct iw_cm_id *cm_id;
	struct rnic_ib_qp *qp;
	struct work_struct connect_work, close_work;
	u32 ird, ord;
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
	}
	return -EINVAL;
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
	unsigned long flags;
	u32 status = 0;
	int err;

	err = rnic_command(d, RNIC_CMD_CONNECT, qp->qpn,
			   ntohl(raddr->sin_addr.s_addr) | (u64)ntohs(raddr->sin_port) << 32, ntohs(laddr->sin_port),
			   ep->ird | (u64)ep->ord << 16, 0, 0, NULL, &status);
	ev.status = err ? connect_status(err, status) : 0;
	ev.local_addr = cm_id->m_local_addr;
	ev.remote_addr = cm_id->m_remote_addr;
	ev.ird = ep->ird;
	ev.ord = ep->ord;
	if (!err) {
		qp->fw_connected = true;
		ep->established = true;
	}
	dev_info(&d->pdev->dev, "iw_cm: QP %u connect %pI4:%u -> %pI4:%u: %s (%d)\n", qp->qpn, &laddr->sin_addr,
		 ntohs(laddr->sin_port), &raddr->sin_addr, ntohs(raddr->sin_port), err ? "failed" : "established",
		 ev.status);
	cm_id->event_handler(cm_id, &ev);
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
	if (param->private_data_len) {
		dev_err(&rdev->d->pdev->dev, "iw_cm: connect with %u bytes of MPA private data: the firmware's connect "
			"sends none\n", param->private_data_len);
		return -EOPNOTSUPP;
	}
	if (param->ird > 0x3fff || param->ord > 0x3fff)
		return -EINVAL;
	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return -ENOMEM;
	ep->rdev = rdev;
	ep->cm_id = cm_id;
	ep->qp = qp;
	ep->ird = param->ird;
	ep->ord = param->ord;
	INIT_WORK(&ep->connect_work, rnic_connect_work);
	INIT_WORK(&ep->close_work, rnic_close_work);
	spin_lock_irqsave(&qp->ep_lock, flags);
	if (qp->ep) {
		spin_unlock_irqrestore(&qp->ep_lock, flags);
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

/* Passive side: see the header comment and docs/architecture.md (a firmware command is missing). */
int rnic_iw_create_listen(struct iw_cm_id *cm_id, int backlog)
{
	dev_info(&to_rdev(cm_id->device)->d->pdev->dev,
		 "iw_cm: listen refused: the firmware cannot report a connecting peer before an accept names its QP\n");
	return -EOPNOTSUPP;
}

int rnic_iw_destroy_listen(struct iw_cm_id *cm_id)
{
	return -EOPNOTSUPP; /* never called: no listen is ever created */
}

int rnic_iw_accept(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param)
{
	return -EOPNOTSUPP; /* only after a connect request, which this device never delivers */
}

int rnic_iw_reject(struct iw_cm_id *cm_id, const void *pdata, u8 pdata_len)
{
	return -EOPNOTSUPP;
}
