// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/rnic0: the kernel-bypass interface of rnic.ko (rnic_uapi.h). The ioctls are the control path
 * (firmware commands); mmap hands the process its device-visible buffers, its rings and the BAR0
 * page of its doorbells, so the data path (WQEs, doorbells, CQE polling) runs in user space.
 *
 * Memory registration, two ways. Any memory of the process (RNIC_IOC_REG_USER_MR): its pages are
 * pinned with pin_user_pages_fast(FOLL_WRITE | FOLL_LONGTERM), as long-term DMA targets must be,
 * each mapped with dma_map_page, and their bus addresses handed to the device as a page list in
 * coherent memory (reg_mr_pages), freed once the firmware has copied it; deregistration or closing
 * the file unmaps and unpins them (dirtied: the device may have written). Or ranges of buffers
 * this driver allocated with the DMA API and mapped into the process (RNIC_IOC_ALLOC, reg_mr: one
 * contiguous range). Doorbell pages: one BAR0 page holds the slots of 256 QPs (or 512 CQs), so a
 * process can reach other QPs' doorbells on its page; the device ignores doorbells of QPs that do not
 * exist and logs them. A real device would give each process doorbell pages of its own.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "rnic.h"
#include "rnic_regs.h"
#include "rnic_uapi.h"

#define RNIC_MAX_ALLOC (16u << 20)

enum rnic_obj_kind { RNIC_OBJ_BUF, RNIC_OBJ_MR, RNIC_OBJ_CQ, RNIC_OBJ_QP };

struct rnic_obj {
	struct list_head node;
	enum rnic_obj_kind kind;
	u32 handle;   /* buffers: the handle; MR: STag; CQ: cqn; QP: qpn */
	u32 key;      /* mmap key: offset = (key * 4 + part) << PAGE_SHIFT */
	struct rnic_coherent mem[2];
	u32 db_page;  /* BAR0 offset of the doorbell page (CQ, QP) */
	bool connected;
	/* A region over pinned user pages: the pages and their DMA mappings (npages of each). */
	struct page **pages;
	dma_addr_t *page_dma;
	unsigned long npages;
};

struct rnic_file {
	struct rnic_dev *d;
	struct mutex lock;
	struct list_head objs;
	u32 next_key;
};

static struct rnic_dev *file_dev(struct file *f)
{
	return ((struct rnic_file *)f->private_data)->d;
}

static struct rnic_obj *find(struct rnic_file *rf, enum rnic_obj_kind kind, u32 handle)
{
	struct rnic_obj *o;

	list_for_each_entry(o, &rf->objs, node)
		if (o->kind == kind && o->handle == handle)
			return o;
	return NULL;
}

static u64 mmap_off(u32 key, unsigned int part)
{
	return (u64)(key * 4 + part) << PAGE_SHIFT;
}

static bool valid_entries(u32 n)
{
	return n >= 2 && n <= 4096 && (n & (n - 1)) == 0;
}

static struct rnic_obj *new_obj(struct rnic_file *rf, enum rnic_obj_kind kind)
{
	struct rnic_obj *o = kzalloc(sizeof(*o), GFP_KERNEL);

	if (!o)
		return NULL;
	o->kind = kind;
	o->key = ++rf->next_key;
	return o;
}

/* Unmaps and unpins what pin_user_region() took (the first `mapped` pages were mapped). */
static void release_user_pages(struct rnic_dev *d, struct rnic_obj *o, unsigned long mapped)
{
	unsigned long i;

	for (i = 0; i < mapped; i++)
		dma_unmap_page(&d->pdev->dev, o->page_dma[i], PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (o->pages && o->npages)
		unpin_user_pages_dirty_lock(o->pages, o->npages, true);
	kvfree(o->pages);
	kvfree(o->page_dma);
	o->pages = NULL;
	o->page_dma = NULL;
	o->npages = 0;
}

static void free_obj(struct rnic_dev *d, struct rnic_obj *o)
{
	if (o->pages)
		release_user_pages(d, o, o->npages);
	rnic_free(d, &o->mem[0]);
	rnic_free(d, &o->mem[1]);
	kfree(o);
}

/* Tears down one object through the firmware (QPs: abortively if still connected). */
static void destroy_obj(struct rnic_dev *d, struct rnic_obj *o)
{
	switch (o->kind) {
	case RNIC_OBJ_QP:
		if (o->connected)
			rnic_command(d, RNIC_CMD_MODIFY_QP, o->handle, RNIC_QP_STATE_ERROR, 0, 0, 0, 0, NULL, NULL);
		rnic_command(d, RNIC_CMD_DESTROY_QP, o->handle, 0, 0, 0, 0, 0, NULL, NULL);
		dev_info(&d->pdev->dev, "released QP %u\n", o->handle);
		break;
	case RNIC_OBJ_CQ:
		rnic_command(d, RNIC_CMD_DESTROY_CQ, o->handle, 0, 0, 0, 0, 0, NULL, NULL);
		break;
	case RNIC_OBJ_MR:
		rnic_command(d, RNIC_CMD_DEREG_MR, o->handle, 0, 0, 0, 0, 0, NULL, NULL);
		break;
	case RNIC_OBJ_BUF:
		break;
	}
	free_obj(d, o);
}

static int rnic_open(struct inode *inode, struct file *f)
{
	struct miscdevice *misc = f->private_data;
	struct rnic_file *rf = kzalloc(sizeof(*rf), GFP_KERNEL);

	if (!rf)
		return -ENOMEM;
	rf->d = container_of(misc, struct rnic_dev, misc);
	mutex_init(&rf->lock);
	INIT_LIST_HEAD(&rf->objs);
	f->private_data = rf;
	return 0;
}

static int rnic_release(struct inode *inode, struct file *f)
{
	struct rnic_file *rf = f->private_data;
	static const enum rnic_obj_kind order[] = { RNIC_OBJ_QP, RNIC_OBJ_CQ, RNIC_OBJ_MR, RNIC_OBJ_BUF };
	struct rnic_obj *o, *tmp;
	unsigned int i;

	/* QPs before the CQs they use, regions before the buffers they cover. */
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		list_for_each_entry_safe(o, tmp, &rf->objs, node) {
			if (o->kind != order[i])
				continue;
			list_del(&o->node);
			destroy_obj(rf->d, o);
		}
	}
	kfree(rf);
	return 0;
}

static long do_alloc(struct rnic_file *rf, struct rnic_uapi_alloc *a)
{
	struct rnic_obj *o;

	if (a->size == 0 || a->size > RNIC_MAX_ALLOC)
		return -EINVAL;
	o = new_obj(rf, RNIC_OBJ_BUF);
	if (!o)
		return -ENOMEM;
	if (rnic_alloc(rf->d, &o->mem[0], PAGE_ALIGN(a->size))) {
		kfree(o);
		return -ENOMEM;
	}
	memset(o->mem[0].cpu, 0, o->mem[0].size);
	o->handle = o->key;
	a->dma_addr = o->mem[0].dma;
	a->mmap_offset = mmap_off(o->key, 0);
	a->handle = o->handle;
	list_add_tail(&o->node, &rf->objs);
	return 0;
}

static long do_reg_mr(struct rnic_file *rf, struct rnic_uapi_reg_mr *m)
{
	struct rnic_obj *buf = find(rf, RNIC_OBJ_BUF, m->handle), *o;
	u32 stag = 0;
	u64 addr;
	int err;

	if (!buf)
		return -ENOENT;
	if (m->length == 0 || m->offset > buf->mem[0].size || m->length > buf->mem[0].size - m->offset ||
	    (m->access & ~(u32)(RNIC_MR_LOCAL_WRITE | RNIC_MR_REMOTE_WRITE | RNIC_MR_REMOTE_READ |
				 RNIC_MR_REMOTE_ATOMIC)))
		return -EINVAL;
	o = new_obj(rf, RNIC_OBJ_MR);
	if (!o)
		return -ENOMEM;
	addr = buf->mem[0].dma + m->offset;
	err = rnic_command(rf->d, RNIC_CMD_REG_MR, addr, m->length, m->access | (u64)1 << 32, addr, 0, 0, &stag,
			   &m->status);
	if (err) {
		kfree(o);
		return err;
	}
	o->handle = stag;
	m->stag = stag;
	m->addr = addr;
	list_add_tail(&o->node, &rf->objs);
	return 0;
}

/* Pins the user pages behind [addr, addr + length) and maps each for DMA, into o. */
static int pin_user_region(struct rnic_dev *d, struct rnic_obj *o, u64 addr, u64 length)
{
	unsigned long first = addr & PAGE_MASK, n, i;
	int pinned;

	n = (unsigned long)((offset_in_page(addr) + length + PAGE_SIZE - 1) >> PAGE_SHIFT);
	o->pages = kvcalloc(n, sizeof(*o->pages), GFP_KERNEL);
	o->page_dma = kvcalloc(n, sizeof(*o->page_dma), GFP_KERNEL);
	if (!o->pages || !o->page_dma) {
		release_user_pages(d, o, 0);
		return -ENOMEM;
	}
	pinned = pin_user_pages_fast(first, (int)n, FOLL_WRITE | FOLL_LONGTERM, o->pages);
	if (pinned < 0 || (unsigned long)pinned != n) {
		o->npages = pinned > 0 ? (unsigned long)pinned : 0;
		release_user_pages(d, o, 0);
		return pinned < 0 ? pinned : -EFAULT;
	}
	o->npages = n;
	for (i = 0; i < n; i++) {
		o->page_dma[i] = dma_map_page(&d->pdev->dev, o->pages[i], 0, PAGE_SIZE, DMA_BIDIRECTIONAL);
		if (dma_mapping_error(&d->pdev->dev, o->page_dma[i])) {
			release_user_pages(d, o, i);
			return -ENOMEM;
		}
	}
	return 0;
}

static long do_reg_user_mr(struct rnic_file *rf, struct rnic_uapi_reg_user_mr *m)
{
	struct rnic_dev *d = rf->d;
	struct rnic_obj *o;
	__le64 *list;
	unsigned long i;
	u32 stag = 0;
	u64 p5;
	int err;

	if (m->length == 0 || m->addr + m->length < m->addr ||
	    ((offset_in_page(m->addr) + m->length + PAGE_SIZE - 1) >> PAGE_SHIFT) > RNIC_MAX_PAGE_LIST_ENTRIES ||
	    (m->access & ~(u32)(RNIC_MR_LOCAL_WRITE | RNIC_MR_REMOTE_WRITE | RNIC_MR_REMOTE_READ |
				 RNIC_MR_REMOTE_ATOMIC)))
		return -EINVAL;
	o = new_obj(rf, RNIC_OBJ_MR);
	if (!o)
		return -ENOMEM;
	err = pin_user_region(d, o, m->addr, m->length);
	if (err) {
		kfree(o);
		return err;
	}
	/* The page list in coherent memory, u64 little-endian bus addresses; freed after the command. */
	if (rnic_alloc(d, &o->mem[0], o->npages * sizeof(u64))) {
		free_obj(d, o);
		return -ENOMEM;
	}
	list = o->mem[0].cpu;
	for (i = 0; i < o->npages; i++)
		list[i] = cpu_to_le64(o->page_dma[i]);
	p5 = o->npages | (u64)PAGE_SHIFT << 24 | (u64)offset_in_page(m->addr) << 32;
	err = rnic_command(d, RNIC_CMD_REG_MR_PAGES, m->addr, m->length, m->access | (u64)1 << 32, m->addr,
			   o->mem[0].dma, p5, &stag, &m->status);
	rnic_free(d, &o->mem[0]);
	if (err) {
		free_obj(d, o);
		return err;
	}
	o->handle = stag;
	m->stag = stag;
	m->npages = (u32)o->npages;
	list_add_tail(&o->node, &rf->objs);
	return 0;
}

static long do_dereg_mr(struct rnic_file *rf, struct rnic_uapi_dereg_mr *m)
{
	struct rnic_obj *o = find(rf, RNIC_OBJ_MR, m->stag);
	int err;

	if (!o)
		return -ENOENT;
	/* The device stops using the pages before they are unmapped and unpinned. */
	err = rnic_command(rf->d, RNIC_CMD_DEREG_MR, o->handle, 0, 0, 0, 0, 0, NULL, &m->status);
	if (err)
		return err;
	list_del(&o->node);
	free_obj(rf->d, o);
	return 0;
}

static long do_create_cq(struct rnic_file *rf, struct rnic_uapi_create_cq *c)
{
	struct rnic_dev *d = rf->d;
	struct rnic_obj *o;
	u32 cqn = 0, db;
	int err;

	if (!valid_entries(c->entries))
		return -EINVAL;
	o = new_obj(rf, RNIC_OBJ_CQ);
	if (!o)
		return -ENOMEM;
	if (rnic_alloc(d, &o->mem[0], PAGE_ALIGN(c->entries * RNIC_CQE_SIZE))) {
		kfree(o);
		return -ENOMEM;
	}
	memset(o->mem[0].cpu, 0, o->mem[0].size);
	err = rnic_command(d, RNIC_CMD_CREATE_CQ, o->mem[0].dma, c->entries, 1, 0, 0, 0, &cqn, &c->status);
	if (err) {
		free_obj(d, o);
		return err;
	}
	o->handle = cqn;
	db = RNIC_CQ_DOORBELL(cqn);
	o->db_page = db & PAGE_MASK;
	c->cqn = cqn;
	c->ring_mmap = mmap_off(o->key, 0);
	c->db_mmap = mmap_off(o->key, 2);
	c->db_offset = db & ~PAGE_MASK;
	list_add_tail(&o->node, &rf->objs);
	return 0;
}

static long do_create_qp(struct rnic_file *rf, struct rnic_uapi_create_qp *q)
{
	struct rnic_dev *d = rf->d;
	struct rnic_obj *o;
	u32 qpn = 0, db;
	int err;

	if (!find(rf, RNIC_OBJ_CQ, q->cqn))
		return -ENOENT;
	if (!valid_entries(q->sq_entries) || !valid_entries(q->rq_entries))
		return -EINVAL;
	o = new_obj(rf, RNIC_OBJ_QP);
	if (!o)
		return -ENOMEM;
	if (rnic_alloc(d, &o->mem[0], PAGE_ALIGN(q->sq_entries * RNIC_SEND_WQE_SIZE)) ||
	    rnic_alloc(d, &o->mem[1], PAGE_ALIGN(q->rq_entries * RNIC_RECV_WQE_SIZE))) {
		free_obj(d, o);
		return -ENOMEM;
	}
	memset(o->mem[0].cpu, 0, o->mem[0].size);
	memset(o->mem[1].cpu, 0, o->mem[1].size);
	err = rnic_command(d, RNIC_CMD_CREATE_QP, o->mem[0].dma, q->sq_entries, o->mem[1].dma, q->rq_entries,
			   q->cqn | (u64)q->cqn << 32, 1, &qpn, &q->status);
	if (err) {
		free_obj(d, o);
		return err;
	}
	o->handle = qpn;
	db = RNIC_QP_DOORBELL(qpn);
	o->db_page = db & PAGE_MASK;
	q->qpn = qpn;
	q->sq_mmap = mmap_off(o->key, 0);
	q->rq_mmap = mmap_off(o->key, 1);
	q->db_mmap = mmap_off(o->key, 2);
	q->db_offset = db & ~PAGE_MASK;
	list_add_tail(&o->node, &rf->objs);
	return 0;
}

static long do_connect(struct rnic_file *rf, struct rnic_uapi_connect *c)
{
	struct rnic_obj *o = find(rf, RNIC_OBJ_QP, c->qpn);
	int err;

	if (!o)
		return -ENOENT;
	if (c->port == 0 || c->ird > 0x3fff || c->ord > 0x3fff || o->connected)
		return -EINVAL;
	err = rnic_command(rf->d, RNIC_CMD_CONNECT, c->qpn, c->ipv4 | (u64)c->port << 32,
			   c->local_port ? c->local_port : 40000, c->ird | (u64)c->ord << 16, 0, 0, NULL, &c->status);
	if (!err)
		o->connected = true;
	return err;
}

static long do_destroy_qp(struct rnic_file *rf, struct rnic_uapi_destroy_qp *q)
{
	struct rnic_obj *o = find(rf, RNIC_OBJ_QP, q->qpn);
	u32 word = 0;
	int i;

	if (!o)
		return -ENOENT;
	if (o->connected) {
		/* Graceful: the stream closes once sent work is acknowledged; then destroy. */
		rnic_command(rf->d, RNIC_CMD_MODIFY_QP, o->handle, RNIC_QP_STATE_CLOSING, 0, 0, 0, 0, NULL, NULL);
		for (i = 0; i < 200; i++) {
			if (rnic_command(rf->d, RNIC_CMD_QUERY_QP, o->handle, 0, 0, 0, 0, 0, &word, NULL) ||
			    (word & RNIC_QUERY_QP_STATE_MASK) == RNIC_QP_STATE_IDLE ||
			    (word & RNIC_QUERY_QP_STATE_MASK) == RNIC_QP_STATE_ERROR)
				break;
			msleep(10);
		}
		o->connected = (word & RNIC_QUERY_QP_STATE_MASK) != RNIC_QP_STATE_IDLE &&
			       (word & RNIC_QUERY_QP_STATE_MASK) != RNIC_QP_STATE_ERROR;
	}
	list_del(&o->node);
	destroy_obj(rf->d, o);
	q->status = RNIC_CMD_STATUS_OK;
	return 0;
}

#define RNIC_IOCTL_CASE(cmd, type, fn)                                   \
	case cmd: {                                                      \
		type arg;                                                \
		if (copy_from_user(&arg, uarg, sizeof(arg)))             \
			return -EFAULT;                                  \
		mutex_lock(&rf->lock);                                   \
		err = fn(rf, &arg);                                      \
		mutex_unlock(&rf->lock);                                 \
		if (copy_to_user(uarg, &arg, sizeof(arg)))               \
			return -EFAULT;                                  \
		return err;                                              \
	}

static long rnic_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct rnic_file *rf = f->private_data;
	void __user *uarg = (void __user *)arg;
	long err;

	switch (cmd) {
	RNIC_IOCTL_CASE(RNIC_IOC_ALLOC, struct rnic_uapi_alloc, do_alloc)
	RNIC_IOCTL_CASE(RNIC_IOC_REG_MR, struct rnic_uapi_reg_mr, do_reg_mr)
	RNIC_IOCTL_CASE(RNIC_IOC_CREATE_CQ, struct rnic_uapi_create_cq, do_create_cq)
	RNIC_IOCTL_CASE(RNIC_IOC_CREATE_QP, struct rnic_uapi_create_qp, do_create_qp)
	RNIC_IOCTL_CASE(RNIC_IOC_CONNECT, struct rnic_uapi_connect, do_connect)
	RNIC_IOCTL_CASE(RNIC_IOC_DESTROY_QP, struct rnic_uapi_destroy_qp, do_destroy_qp)
	RNIC_IOCTL_CASE(RNIC_IOC_REG_USER_MR, struct rnic_uapi_reg_user_mr, do_reg_user_mr)
	RNIC_IOCTL_CASE(RNIC_IOC_DEREG_MR, struct rnic_uapi_dereg_mr, do_dereg_mr)
	}
	return -ENOTTY;
}

static int rnic_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct rnic_file *rf = f->private_data;
	struct rnic_dev *d = file_dev(f);
	unsigned long len = vma->vm_end - vma->vm_start;
	u32 key = vma->vm_pgoff / 4, part = vma->vm_pgoff % 4;
	struct rnic_obj *o, *found = NULL;
	int err = -EINVAL;

	mutex_lock(&rf->lock);
	list_for_each_entry(o, &rf->objs, node)
		if (o->key == key && o->kind != RNIC_OBJ_MR)
			found = o;
	if (!found) {
		err = -ENOENT;
	} else if (part == 2 && (found->kind == RNIC_OBJ_CQ || found->kind == RNIC_OBJ_QP) && len == PAGE_SIZE) {
		/* The doorbell page: uncached MMIO of BAR0, no other part of the BAR. */
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
		vma->vm_flags |= VM_IO | VM_DONTEXPAND | VM_DONTDUMP;
		err = io_remap_pfn_range(vma, vma->vm_start,
					 (pci_resource_start(d->pdev, 0) + found->db_page) >> PAGE_SHIFT, PAGE_SIZE,
					 vma->vm_page_prot);
	} else if (part < 2 && found->mem[part].cpu && len <= found->mem[part].size) {
		vma->vm_pgoff = 0;
		err = dma_mmap_coherent(&d->pdev->dev, vma, found->mem[part].cpu, found->mem[part].dma, len);
	}
	mutex_unlock(&rf->lock);
	return err;
}

static const struct file_operations rnic_fops = {
	.owner = THIS_MODULE,
	.open = rnic_open,
	.release = rnic_release,
	.unlocked_ioctl = rnic_ioctl,
	.mmap = rnic_mmap,
};

int rnic_cdev_register(struct rnic_dev *d)
{
	int err;

	d->misc.minor = MISC_DYNAMIC_MINOR;
	d->misc.name = "rnic0";
	d->misc.fops = &rnic_fops;
	d->misc.parent = &d->pdev->dev;
	err = misc_register(&d->misc);
	if (!err)
		d->misc_registered = true;
	return err;
}

void rnic_cdev_unregister(struct rnic_dev *d)
{
	if (d->misc_registered)
		misc_deregister(&d->misc);
	d->misc_registered = false;
}
