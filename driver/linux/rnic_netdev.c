// SPDX-License-Identifier: GPL-2.0
/*
 * The station interface of the RNIC (rnicN): what the RDMA core routes through to find the device
 * (rdma_cm takes the interface's MAC as the iWARP GID and looks for the device that has it;
 * iw_query_port reports the port's state from the interface's carrier and addresses). The device has
 * no packet path for the guest's own IP stack: its TCP engine is offloaded and owned by the
 * firmware. So the interface does no ARP (rdma_cm then needs no neighbour entry) and what the
 * guest's stack sends through it is dropped and counted (tx_dropped), never put on the wire.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>

#include "rnic_ib.h"

static int rnic_netdev_open(struct net_device *ndev)
{
	netif_carrier_on(ndev);
	netif_start_queue(ndev);
	return 0;
}

static int rnic_netdev_stop(struct net_device *ndev)
{
	netif_stop_queue(ndev);
	netif_carrier_off(ndev);
	return 0;
}

static netdev_tx_t rnic_netdev_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	ndev->stats.tx_dropped++;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops rnic_netdev_ops = {
	.ndo_open = rnic_netdev_open,
	.ndo_stop = rnic_netdev_stop,
	.ndo_start_xmit = rnic_netdev_xmit,
};

struct net_device *rnic_netdev_create(struct rnic_dev *d)
{
	struct net_device *ndev = alloc_etherdev(0);
	int err;

	if (!ndev)
		return ERR_PTR(-ENOMEM);
	strscpy(ndev->name, "rnic%d", sizeof(ndev->name));
	ndev->netdev_ops = &rnic_netdev_ops;
	ndev->flags |= IFF_NOARP;
	ndev->flags &= ~IFF_MULTICAST;
	eth_hw_addr_set(ndev, d->mac);
	SET_NETDEV_DEV(ndev, &d->pdev->dev);
	netif_carrier_off(ndev);
	err = register_netdev(ndev);
	if (err) {
		free_netdev(ndev);
		return ERR_PTR(err);
	}
	return ndev;
}

void rnic_netdev_destroy(struct net_device *ndev)
{
	unregister_netdev(ndev);
	free_netdev(ndev);
}
