// SPDX-License-Identifier: GPL-2.0
/*
 * User verbs of rnic.ko (docs/architecture.md, "User verbs: rdma-core over ib_uverbs"): what
 * ib_uverbs needs so that rdma-core's libibverbs, with the provider of driver/linux/provider/, runs
 * the data path from user space as on /dev/rnic0: a user context, queue rings the process maps and
 * writes WQEs into (and polls CQEs from), the BAR0 page holding its doorbells, and memory regions
 * pinned from user memory (ib_umem). The control path stays the kernel's and the firmware's.
 *
 * Rings of user objects are ordinary pages (alloc_pages_exact, one streaming DMA mapping; x86 is
 * DMA-coherent) rather than dma_alloc_coherent memory, because a mapping made with vm_insert_page
 * holds a reference on each page: a process that keeps a ring mapped after destroying its CQ or QP
 * keeps pages the kernel no longer uses, never pages given back to the allocator.
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/iter.h>

#include "rnic_ib.h"
#include "rnic_regs.h"

struct rnic_umap {
	struct rdma_user_mmap_entry entry;
	bool doorbell;       /* the BAR0 page at `bar_off` (uncached MMIO), else `cpu` pages */
	void *cpu;
	u64 bar_off;
};

static struct rnic_umap *to_umap(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct rnic_umap, entry);
}

int rnic_ib_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	/* Nothing per process beyond the core's object: every object the process makes hangs off it. */
	return 0;
}

void rnic_ib_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

int rnic_ib_uring_alloc(struct rnic_ib_dev *rdev, struct rnic_coherent *c, size_t size)
{
	struct device *dev = &rdev->d->pdev->dev;

	c->size = PAGE_ALIGN(size);
	c->cpu = alloc_pages_exact(c->size, GFP_KERNEL | __GFP_ZERO);
	if (!c->cpu)
		return -ENOMEM;
	c->dma = dma_map_single(dev, c->cpu, c->size, DMA_BIDIRECTIONAL);
	if (dma_mapping_error(dev, c->dma)) {
		free_pages_exact(c->cpu, c->size);
		c->cpu = NULL;
		return -ENOMEM;
	}
	return 0;
}

void rnic_ib_uring_free(struct rnic_ib_dev *rdev, struct rnic_coherent *c)
{
	if (!c->cpu)
		return;
	dma_unmap_single(&rdev->d->pdev->dev, c->dma, c->size, DMA_BIDIRECTIONAL);
	free_pages_exact(c->cpu, c->size); /* pages still mapped by the process stay until it unmaps */
	c->cpu = NULL;
}

/* An mmap offset for `size` bytes of ring pages (cpu) or for the BAR0 page at bar_off (cpu NULL). */
struct rdma_user_mmap_entry *rnic_ib_umap_insert(struct ib_ucontext *uctx, void *cpu, u64 bar_off, size_t size,
						 u64 *offset)
{
	struct rnic_umap *m = kzalloc(sizeof(*m), GFP_KERNEL);
	int err;

	if (!m)
		return ERR_PTR(-ENOMEM);
	m->cpu = cpu;
	m->doorbell = !cpu;
	m->bar_off = bar_off & PAGE_MASK;
	err = rdma_user_mmap_entry_insert(uctx, &m->entry, PAGE_ALIGN(size));
	if (err) {
		kfree(m);
		return ERR_PTR(err);
	}
	*offset = rdma_user_mmap_get_offset(&m->entry);
	return &m->entry;
}

int rnic_ib_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rnic_ib_dev *rdev = to_rdev(uctx->device);
	struct rdma_user_mmap_entry *e = rdma_user_mmap_entry_get(uctx, vma);
	unsigned long len = vma->vm_end - vma->vm_start, i;
	struct rnic_umap *m;
	int err = 0;

	if (!e)
		return -EINVAL; /* an offset the driver never gave, or a length other than the object's */
	m = to_umap(e);
	if (m->doorbell) {
		/* Only the page of the object's own doorbell slot, uncached as MMIO must be. */
		err = rdma_user_mmap_io(uctx, vma,
					(pci_resource_start(rdev->d->pdev, 0) + m->bar_off) >> PAGE_SHIFT, PAGE_SIZE,
					pgprot_noncached(vma->vm_page_prot), e);
	} else {
		vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
		for (i = 0; i < len && !err; i += PAGE_SIZE)
			err = vm_insert_page(vma, vma->vm_start + i, virt_to_page((u8 *)m->cpu + i));
	}
	rdma_user_mmap_entry_put(e);
	return err;
}

void rnic_ib_mmap_free(struct rdma_user_mmap_entry *e)
{
	kfree(to_umap(e));
}

/* ---- memory regions from user memory ---- */

struct ib_mr *rnic_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 virt, int access,
				  struct ib_udata *udata)
{
	struct rnic_ib_dev *rdev = to_rdev(ibpd->device);
	struct rnic_ib_pd *pd = container_of(ibpd, struct rnic_ib_pd, ibpd);
	struct rnic_dev *d = rdev->d;
	struct ib_block_iter biter;
	struct rnic_coherent list = {};
	struct rnic_ib_mr *mr;
	struct ib_umem *umem;
	unsigned long npages, i = 0;
	u32 stag = 0, status = 0;
	u64 p5;
	int err;

	if (length == 0 || (access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ)))
		return ERR_PTR(-EINVAL); /* no atomics, no MW binding, no on-demand paging */
	/* The device's page list names whole pages; the first byte's offset in its page is the same in
	 * the process's address and in the iova (rping and most consumers register with iova = addr). */
	if (offset_in_page(start) != offset_in_page(virt))
		return ERR_PTR(-EINVAL);
	npages = (offset_in_page(start) + length + PAGE_SIZE - 1) >> PAGE_SHIFT;
	if (npages > RNIC_MAX_PAGE_LIST_ENTRIES)
		return ERR_PTR(-EINVAL);
	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	err = mr ? rnic_alloc(d, &list, npages * sizeof(u64)) : -ENOMEM;
	if (err)
		goto fail;
	/* The bus address of each page, little-endian (reg_mr_pages, docs/device.md). */
	rdma_for_each_block(umem->sgt_append.sgt.sgl, &biter, umem->sgt_append.sgt.nents, PAGE_SIZE) {
		if (i == npages) {
			err = -EINVAL;
			goto fail;
		}
		((__le64 *)list.cpu)[i++] = cpu_to_le64(rdma_block_iter_dma_address(&biter));
	}
	if (i != npages) {
		err = -EINVAL;
		goto fail;
	}
	p5 = npages | (u64)PAGE_SHIFT << 24 | (u64)offset_in_page(start) << 32;
	err = rnic_command(d, RNIC_CMD_REG_MR_PAGES, virt, length,
			   access_to_device(access) | (u64)pd->pdn << 32, virt, list.dma, p5, &stag, &status);
	rnic_free(d, &list);
	if (err)
		goto fail;
	mr->stag = stag;
	mr->umem = umem;
	mr->ibmr.lkey = stag;
	mr->ibmr.rkey = stag;
	return &mr->ibmr;
fail:
	rnic_free(d, &list);
	kfree(mr);
	ib_umem_release(umem);
	return ERR_PTR(err);
}
