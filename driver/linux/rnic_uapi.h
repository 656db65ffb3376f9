/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The user-space interface of rnic.ko: the character device /dev/rnic0. Its ioctls do the control
 * path (device-visible buffers, memory registration, CQs, QPs, connect, destroy) through the
 * firmware; mmap gives the process its buffers, its queue rings and the BAR0 page holding its
 * doorbells, so work requests are written, doorbells rung and completions polled from user space.
 * Layouts of the rings' entries and the doorbell offsets: rnic_regs.h.
 *
 * Every ioctl returns 0 or -1 with errno: EINVAL (a bad argument), ENOENT (no such handle), ENOMEM,
 * EFAULT (user pages that cannot be pinned), EIO (the device's command status is in `status` where the structure has one), ETIMEDOUT.
 * Closing the file destroys everything the file created (QPs first, closed abortively).
 */
#ifndef RNIC_UAPI_H
#define RNIC_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Device-visible memory: `size` bytes (page-rounded), mmap at `mmap_offset`; `dma_addr` is the
 * host address the device uses (and the tagged offset a VA-based region gives its first byte). */
struct rnic_uapi_alloc {
	__u64 size;
	__u64 dma_addr;     /* out */
	__u64 mmap_offset;  /* out */
	__u32 handle;       /* out */
	__u32 reserved;
};

/* Registers [offset, offset + length) of buffer `handle` with RNIC_MR_* access flags. */
struct rnic_uapi_reg_mr {
	__u32 handle;
	__u32 access;
	__u64 offset;
	__u64 length;
	__u64 addr;    /* out: the region's host address (its tagged offset, VA-based) */
	__u32 stag;    /* out */
	__u32 status;  /* out: the command status (RNIC_CMD_STATUS_*) */
};

/* Registers [addr, addr + length) of the process's own memory (malloc, anonymous mmap, any user
 * pages): the driver pins the pages (FOLL_LONGTERM), maps each for DMA and gives the device their
 * list (reg_mr_pages, docs/device.md); at most RNIC_MAX_PAGE_LIST_ENTRIES pages. Work requests name
 * the bytes by their virtual addresses, and a peer by the same (VA-based: the first byte's tagged
 * offset is addr). The pages stay pinned until RNIC_IOC_DEREG_MR or until the file is closed. */
struct rnic_uapi_reg_user_mr {
	__u64 addr;
	__u64 length;
	__u32 access;
	__u32 stag;    /* out */
	__u32 status;  /* out: the command status (RNIC_CMD_STATUS_*) */
	__u32 npages;  /* out: pages pinned */
};

/* Deregisters a region either registration ioctl made (its pages, if pinned, are unpinned). */
struct rnic_uapi_dereg_mr {
	__u32 stag;
	__u32 status;  /* out */
};

/* A CQ of `entries` 32-byte CQEs (power of two); its ring at ring_mmap, its doorbells in the BAR0
 * page at db_mmap, at db_offset within that page. */
struct rnic_uapi_create_cq {
	__u32 entries;
	__u32 cqn;          /* out */
	__u64 ring_mmap;    /* out */
	__u64 db_mmap;      /* out */
	__u32 db_offset;    /* out */
	__u32 status;       /* out */
};

/* A QP on CQ `cqn` (send and receive); rings at sq_mmap / rq_mmap, its doorbell slot in the BAR0
 * page at db_mmap, at db_offset (SQ producer at + RNIC_SQ_DOORBELL, RQ at + RNIC_RQ_DOORBELL). */
struct rnic_uapi_create_qp {
	__u32 cqn;
	__u32 sq_entries;
	__u32 rq_entries;
	__u32 qpn;          /* out */
	__u64 sq_mmap;      /* out */
	__u64 rq_mmap;      /* out */
	__u64 db_mmap;      /* out */
	__u32 db_offset;    /* out */
	__u32 status;       /* out */
};

/* Active open of QP `qpn` to ipv4:port (host byte order); IRD and ORD wanted (0: firmware policy). */
struct rnic_uapi_connect {
	__u32 qpn;
	__u32 ipv4;
	__u16 port;
	__u16 local_port;
	__u16 ird;
	__u16 ord;
	__u32 status;       /* out */
	__u32 reserved;
};

struct rnic_uapi_destroy_qp {
	__u32 qpn;
	__u32 status;       /* out */
};

#define RNIC_UAPI_IOC 'R'
#define RNIC_IOC_ALLOC      _IOWR(RNIC_UAPI_IOC, 1, struct rnic_uapi_alloc)
#define RNIC_IOC_REG_MR     _IOWR(RNIC_UAPI_IOC, 2, struct rnic_uapi_reg_mr)
#define RNIC_IOC_CREATE_CQ  _IOWR(RNIC_UAPI_IOC, 3, struct rnic_uapi_create_cq)
#define RNIC_IOC_CREATE_QP  _IOWR(RNIC_UAPI_IOC, 4, struct rnic_uapi_create_qp)
#define RNIC_IOC_CONNECT    _IOWR(RNIC_UAPI_IOC, 5, struct rnic_uapi_connect)
#define RNIC_IOC_DESTROY_QP _IOWR(RNIC_UAPI_IOC, 6, struct rnic_uapi_destroy_qp)
#define RNIC_IOC_REG_USER_MR _IOWR(RNIC_UAPI_IOC, 7, struct rnic_uapi_reg_user_mr)
#define RNIC_IOC_DEREG_MR   _IOWR(RNIC_UAPI_IOC, 8, struct rnic_uapi_dereg_mr)

#endif /* RNIC_UAPI_H */
