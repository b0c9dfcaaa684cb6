// SPDX-License-Identifier: GPL-2.0
/*
 * Memory and mapping of a session's per-CPU rings (abi.h draws
 * the layout): for every possible CPU, a consumer page, a producer page
 * and ring_pages data pages, vmap'ed as cons, prod, data, data so that a
 * record never wraps, in the kernel or in user space (the BPF ringbuf
 * trick). mmap exposes ring i at pgoff i * ring_stride_pages; only the
 * consumer page may be mapped writable, and only alone.
 *
 * Left out: the producer protocol (core/ring.c: stp_ring_reserve/commit)
 * and the consumer (user space). The kernel never trusts consumer_pos;
 * here it is only compared for poll.
 *
 * Context: process context (LOAD, mmap, poll, release).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/version.h>
#include <linux/cpumask.h>
#include <linux/topology.h>

#include "session.h"

static void stp_ring_free_one(struct stp_cpu *c, u32 ring_pages)
{
	u32 i;

	if (c->area)
		vunmap(c->area);
	c->area = NULL;
	if (!c->pages)
		return;
	/* The second copy of the data pages is the same pages: free once. */
	for (i = 0; i < 2 + ring_pages; i++)
		if (c->pages[i])
			__free_page(c->pages[i]);
	kvfree(c->pages);
	c->pages = NULL;
}

static int stp_ring_alloc_one(struct stp_session *s, int cpu)
{
	struct stp_cpu *c = per_cpu_ptr(s->cpu, cpu);
	u32 n = s->ring_pages, total = stp_ring_stride_pages(s), i;

	c->pages = kvcalloc(total, sizeof(*c->pages), GFP_KERNEL_ACCOUNT);
	if (!c->pages)
		return -ENOMEM;
	for (i = 0; i < 2 + n; i++) {
		c->pages[i] = alloc_pages_node(cpu_to_node(cpu),
					       GFP_KERNEL_ACCOUNT | __GFP_ZERO |
					       __GFP_NOWARN, 0);
		if (!c->pages[i])
			return -ENOMEM;	/* caller frees what was allocated */
	}
	for (i = 0; i < n; i++)
		c->pages[2 + n + i] = c->pages[2 + i];
	/* VM_USERMAP: remap_vmalloc_range() accepts only such areas. */
	c->area = vmap(c->pages, total, VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (!c->area)
		return -ENOMEM;

	c->ring.cons = c->area;
	c->ring.prod = c->area + PAGE_SIZE;
	c->ring.data = c->area + 2 * PAGE_SIZE;
	c->ring.size = (u64)n * PAGE_SIZE;
	c->ring.owner = s;
	return 0;
}

int stp_rings_alloc(struct stp_session *s)
{
	int cpu, err;

	for_each_possible_cpu(cpu) {
		err = stp_ring_alloc_one(s, cpu);
		if (err)
			return err;	/* stp_rings_free() unwinds */
	}
	return 0;
}

void stp_rings_free(struct stp_session *s)
{
	int cpu;

	if (!s->cpu)
		return;
	for_each_possible_cpu(cpu)
		stp_ring_free_one(per_cpu_ptr(s->cpu, cpu), s->ring_pages);
}

/*
 * Any ring with unconsumed records? producer_pos is load-acquired, the
 * partner of the core's store-release in stp_ring_commit(); consumer_pos
 * is user-written and only compared. For poll, the caller puts a full
 * barrier before this (the wakeup handshake: stp_session_poll).
 */
bool stp_rings_pending(struct stp_session *s)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct stp_ring *r = &per_cpu_ptr(s->cpu, cpu)->ring;

		/* Partner: store-release in stp_ring_commit(). */
		if (smp_load_acquire(&r->prod->producer_pos) !=
		    READ_ONCE(r->cons->consumer_pos))
			return true;
	}
	return false;
}

u64 stp_rings_dropped(struct stp_session *s)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(s->cpu, cpu)->ring.prod->dropped);
	return sum;
}

/*
 * vm_flags became read-only behind accessors in 6.3; an out-of-tree module
 * built for 6.1 and 6.12 alike needs the version test.
 */
static void stp_vma_clear_maywrite(struct vm_area_struct *vma)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, VM_MAYWRITE);
#else
	vma->vm_flags &= ~VM_MAYWRITE;
#endif
}

/*
 * One mapping covers part of one ring: pgoff selects the ring (pgoff /
 * stride) and the first page in it. Writable only for the consumer page
 * alone; every other mapping loses VM_MAYWRITE so mprotect cannot add
 * write later. remap_vmalloc_range() checks the length against the area
 * and sets VM_DONTEXPAND, so mremap cannot grow it.
 */
int stp_rings_mmap(struct stp_session *s, struct vm_area_struct *vma)
{
	unsigned long stride = stp_ring_stride_pages(s);
	unsigned long ring = vma->vm_pgoff / stride;
	unsigned long first = vma->vm_pgoff % stride;
	unsigned long npages = vma_pages(vma);

	if (ring >= nr_cpu_ids || !cpu_possible(ring))
		return -ENXIO;
	if (npages > stride - first)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE) {
		if (first != 0 || npages != 1)
			return -EPERM;
	} else {
		stp_vma_clear_maywrite(vma);
	}
	return remap_vmalloc_range(vma, per_cpu_ptr(s->cpu, ring)->area,
				   first);
}
