/* SPDX-License-Identifier: GPL-2.0 */
/* What rnic_main.c (probe, bring-up, commands, self-test) shares with rnic_cdev.c (/dev/rnic0). */
#ifndef RNIC_H
#define RNIC_H

#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>

struct rnic_ib_dev;

struct rnic_coherent {
	void *cpu;
	dma_addr_t dma;
	size_t size;
};

struct rnic_cq {
	struct rnic_coherent ring;
	u32 cqn;
	u32 consumer;
	bool live;
};

struct rnic_qp {
	struct rnic_coherent sq, rq;
	u32 qpn;
	u32 sq_prod, sq_done, rq_prod;
	bool live, connected;
};

struct rnic_dev {
	struct pci_dev *pdev;
	void __iomem *bar0;
	struct rnic_coherent cmdq, ctx;
	u32 cmd_prod;
	bool ready;
	/* What the self-test created, torn down by rnic_teardown() whatever happened. */
	struct rnic_cq cq;
	struct rnic_qp qp;
	struct rnic_coherent buf;
	u32 stags[4];
	unsigned int nstags;
	struct mutex cmd_lock; /* one firmware command at a time */
	struct miscdevice misc;
	bool misc_registered;
	/* Read once at bring-up, so that verbs need no BAR read (each costs the guest 13-60 us). */
	u8 mac[6];
	u32 ipv4; /* host byte order */
	u32 version, max_qp, max_cq, max_mr;
	struct rnic_ib_dev *ib; /* the RDMA core's view (rnic_ib.c), NULL when not registered */
};

int rnic_alloc(struct rnic_dev *d, struct rnic_coherent *c, size_t size);
void rnic_free(struct rnic_dev *d, struct rnic_coherent *c);
/* A firmware command, waited for by polling; 0, -EIO (*status says why), -ETIMEDOUT or -ENODEV. */
int rnic_command(struct rnic_dev *d, u8 op, u64 p0, u64 p1, u64 p2, u64 p3, u64 p4, u64 p5, u32 *result,
		 u32 *status);
/* The same, and the command's p5 as the device left it (connect with RNIC_CONNECT_PRIVATE_DATA). */
int rnic_command_p5(struct rnic_dev *d, u8 op, const u64 p[6], u32 *result, u32 *status, u64 *p5_out);
int rnic_cdev_register(struct rnic_dev *d);
void rnic_cdev_unregister(struct rnic_dev *d);
/* The ib_device of an iWARP RNIC with the kernel RDMA core (rnic_ib.c); no-ops without CONFIG_INFINIBAND. */
#if IS_ENABLED(CONFIG_INFINIBAND)
int rnic_ib_register(struct rnic_dev *d);
void rnic_ib_unregister(struct rnic_dev *d);
#else
static inline int rnic_ib_register(struct rnic_dev *d) { return 0; }
static inline void rnic_ib_unregister(struct rnic_dev *d) { }
#endif

#endif /* RNIC_H */
