/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The driver-private part of the user verbs ABI between rnic.ko (rnic_ib_user.c) and its libibverbs
 * provider (driver/linux/provider/rnic_verbs.c): what the kernel returns in the udata of
 * create_cq and create_qp so that the provider can mmap the queue memory and the doorbell page and
 * run the data path itself (WQEs, doorbells, CQE polling by the layouts of rnic_regs.h). Bump
 * RNIC_IB_UVERBS_ABI_VERSION with any change here: libibverbs only binds the provider to a device
 * whose uverbs abi_version (sysfs) lies in the provider's match range.
 */
#ifndef RNIC_IB_ABI_H
#define RNIC_IB_ABI_H

#include <linux/types.h>

#define RNIC_IB_UVERBS_ABI_VERSION 1

/*
 * A user CQ's ring: `entries` CQEs of RNIC_CQE_SIZE bytes, then at byte `consumer_offset` of the same
 * mapping a __u32 the provider keeps equal to its consumer index. The kernel's completion poller
 * reads it when the CQ is armed (ibv_req_notify_cq goes through the kernel): no interrupt reaches the
 * guest, so the kernel looks for the CQE at that index to raise the completion channel's event.
 */
struct rnic_ib_create_cq_resp {
	__aligned_u64 ring_mmap;   /* mmap offset of the ring (ring_size bytes) */
	__aligned_u64 db_mmap;     /* mmap offset of the BAR0 page holding the CQ's doorbell slot */
	__u32 ring_size;
	__u32 entries;
	__u32 cqn;
	__u32 db_offset;           /* of the CQ's slot within that page */
	__u32 consumer_offset;
	__u32 reserved;
};

/* A user QP's rings (send: sq_entries WQEs of RNIC_SEND_WQE_SIZE; receive: rq_entries of
 * RNIC_RECV_WQE_SIZE) and its doorbell slot (SQ producer at + RNIC_SQ_DOORBELL, RQ at + RNIC_RQ_DOORBELL). */
struct rnic_ib_create_qp_resp {
	__aligned_u64 sq_mmap;
	__aligned_u64 rq_mmap;
	__aligned_u64 db_mmap;
	__u32 sq_size;
	__u32 rq_size;
	__u32 sq_entries;
	__u32 rq_entries;
	__u32 qpn;
	__u32 db_offset;
};

#endif /* RNIC_IB_ABI_H */
