// SPDX-License-Identifier: GPL-2.0
/*
 * User-space stacks and symbols (helpers.h: UBACKTRACE, USYMNAME ..
 * UMODNAME; abi.h: user-space symbol tables), the kernel side of stap's
 * ubacktrace(), usymname(), usymdata(), umodname() and the print/sprint
 * forms built on them.
 *
 * The walk: the user registers of the hit (or those current saved on
 * kernel entry), their ip, then the frame-pointer chain read with
 * copy_from_user_nofault, at most STP_MAX_BACKTRACE frames; each step
 * must move the frame pointer strictly up the stack, so a garbage frame
 * pointer ends the walk at its first fault or first backward step.
 *
 * The symbols: the binaries of the image's USYMBINS, looked up by path
 * when the session is created (stp_usyms_init; a missing file has none)
 * and held until it is destroyed (stp_usyms_free). An address resolves
 * through the VMA of current's mm that holds it: the mmap lock is only
 * tried (mmap_read_trylock), and only in task context with interrupts
 * enabled (uprobes, uretprobes, begin/end, procfs), since up_read may
 * wake a waiter and a probe with interrupts off may run under a runqueue
 * lock; elsewhere, or when the lock is busy, the address is unknown.
 *
 * Contexts: stp_usyms_init/free in process context (path lookup sleeps);
 * the helpers in any probe context, with preemption disabled: no sleep,
 * no allocation, bounded loops (a binary search over a verified, sorted
 * slice; the walk's frame cap; path bytes bounded by the verified string
 * length).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/ptrace.h>

#include "session.h"
#include "compat.h"

/*
 * Looks up the path of every binary of the image's symbol tables; a path
 * that does not resolve to a regular file leaves its inode NULL (no
 * symbols for it), as a binary that is not mapped anywhere would.
 * Process context. Returns 0 or -ENOMEM.
 */
int stp_usyms_init(struct stp_session *s)
{
	const struct stp_prog *p = &s->prog;
	u32 i;

	if (!p->nusym_bins)
		return 0;
	s->ubin_paths = kcalloc(p->nusym_bins, sizeof(*s->ubin_paths),
				GFP_KERNEL_ACCOUNT);
	s->ubin_inodes = kcalloc(p->nusym_bins, sizeof(*s->ubin_inodes),
				 GFP_KERNEL_ACCOUNT);
	if (!s->ubin_paths || !s->ubin_inodes)
		return -ENOMEM;
	for (i = 0; i < p->nusym_bins; i++) {	/* <= STP_MAX_USYM_BINS */
		const struct stp_str_desc *sd = &p->strs[p->usym_bins[i].path];
		char *name;

		name = kmemdup_nul((const char *)p->strdata + sd->off, sd->len,
				   GFP_KERNEL);
		if (!name)
			return -ENOMEM;
		if (!kern_path(name, LOOKUP_FOLLOW, &s->ubin_paths[i])) {
			if (d_is_reg(s->ubin_paths[i].dentry))
				s->ubin_inodes[i] =
					d_real_inode(s->ubin_paths[i].dentry);
			else
				path_put(&s->ubin_paths[i]);
		}
		kfree(name);
	}
	return 0;
}

/* Drops what stp_usyms_init took. Process context. */
void stp_usyms_free(struct stp_session *s)
{
	u32 i;

	if (s->ubin_inodes && s->ubin_paths)
		for (i = 0; i < s->prog.nusym_bins; i++)
			if (s->ubin_inodes[i])
				path_put(&s->ubin_paths[i]);
	kfree(s->ubin_inodes);
	kfree(s->ubin_paths);
	s->ubin_inodes = NULL;
	s->ubin_paths = NULL;
}

/* What an address resolved to (stp_usym_find). */
struct stp_ufound {
	const struct stp_usym_bin *bin;	/* NULL: no known binary */
	const struct stp_usym *sym;	/* NULL: before the first symbol */
	u64 sym_off;		/* addr - the symbol's start */
	u64 mod_off;		/* addr - where file offset 0 is mapped */
	u64 mod_size;		/* the mapping's end - that base */
};

/*
 * Resolves addr in current's address space: the VMA holding it, a file
 * mapping of one of the session's binaries, then the last symbol at or
 * below its file offset. False when nothing is known (see the top).
 */
static bool stp_usym_find(struct stp_kenv *ke, u64 addr, struct stp_ufound *f)
{
	const struct stp_prog *p = ke->prog;
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	const struct stp_usym *syms;
	u64 foff = 0, base = 0, end = 0;
	u32 i, lo, hi;
	bool found = false;

	memset(f, 0, sizeof(*f));
	if (!p || !p->nusym_bins || !ke->ubins || !mm ||
	    (current->flags & PF_KTHREAD) || !in_task() || irqs_disabled())
		return false;
	if (!mmap_read_trylock(mm))
		return false;
	vma = find_vma(mm, (unsigned long)addr);
	if (vma && addr >= vma->vm_start && vma->vm_file) {
		struct inode *inode = file_inode(vma->vm_file);

		for (i = 0; i < p->nusym_bins; i++)	/* capped */
			if (ke->ubins[i] && ke->ubins[i] == inode)
				break;
		if (i < p->nusym_bins) {
			foff = addr - vma->vm_start +
			       ((u64)vma->vm_pgoff << PAGE_SHIFT);
			base = vma->vm_start -
			       ((u64)vma->vm_pgoff << PAGE_SHIFT);
			end = vma->vm_end;
			f->bin = &p->usym_bins[i];
			found = true;
		}
	}
	mmap_read_unlock(mm);
	if (!found)
		return false;
	f->mod_off = addr - base;
	f->mod_size = end - base;
	/* verify.c: [first, first + count) inside USYMS, offsets ascending */
	syms = p->usyms + f->bin->first;
	lo = 0;
	hi = f->bin->count;
	while (lo < hi) {	/* the first symbol above foff */
		u32 mid = lo + (hi - lo) / 2;

		if (syms[mid].offset <= foff)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		f->sym = &syms[lo - 1];
		f->sym_off = foff - f->sym->offset;
	}
	return true;
}

/* An output buffer of at most max bytes; what does not fit is dropped. */
struct stp_uout {
	char *buf;
	u32 len;
	u32 max;
};

static void stp_uout_mem(struct stp_uout *o, const void *s, u32 n)
{
	u32 room = o->max - o->len;

	if (n > room)
		n = room;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void stp_uout_str(struct stp_uout *o, const char *s)
{
	stp_uout_mem(o, s, (u32)strlen(s));
}

/* stap's %p and %#lx: 0x and lowercase hex digits. */
static void stp_uout_hex(struct stp_uout *o, u64 v)
{
	char one[24];

	stp_uout_mem(o, one, (u32)scnprintf(one, sizeof(one), "0x%llx", v));
}

static void stp_uout_name(struct stp_uout *o, const struct stp_prog *p,
			  const struct stp_usym *u)
{
	/* verify.c: [name, +name_len) inside USYMSTR */
	stp_uout_mem(o, p->usymstr + u->name, u->name_len);
}

/* The binary's path, or with base only what follows its last '/'. */
static void stp_uout_path(struct stp_uout *o, const struct stp_prog *p,
			  const struct stp_usym_bin *b, bool base)
{
	/* verify.c: b->path < nstrs, the string inside STRDATA */
	const struct stp_str_desc *sd = &p->strs[b->path];
	const char *s = (const char *)p->strdata + sd->off;
	u32 from = 0, i;

	if (base)
		for (i = 0; i < sd->len; i++)
			if (s[i] == '/')
				from = i + 1;
	stp_uout_mem(o, s + from, sd->len - from);
}

/* "+0x<off>" and, with size, "/0x<size>". */
static void stp_uout_offsize(struct stp_uout *o, u64 off, bool with_size,
			     u64 size)
{
	stp_uout_str(o, "+");
	stp_uout_hex(o, off);
	if (with_size) {
		stp_uout_str(o, "/");
		stp_uout_hex(o, size);
	}
}

u32 stp_kenv_usym(struct stp_kenv *ke, u64 addr, u32 helper, char *buf,
		  u32 max)
{
	struct stp_uout o = { .buf = buf, .max = max };
	const struct stp_prog *p = ke->prog;
	struct stp_ufound f;
	bool known = stp_usym_find(ke, addr, &f);
	bool named = known && f.sym;

	switch (helper) {
	case STP_HLP_UMODNAME:
		if (known)
			stp_uout_path(&o, p, f.bin, false);
		break;
	case STP_HLP_USYMNAME:
		if (named)
			stp_uout_name(&o, p, f.sym);
		else
			stp_uout_hex(&o, addr);
		break;
	case STP_HLP_USYMBRIEF:
		if (named) {
			stp_uout_name(&o, p, f.sym);
			stp_uout_offsize(&o, f.sym_off, false, 0);
		} else {
			stp_uout_hex(&o, addr);
		}
		stp_uout_str(&o, "\n");
		break;
	case STP_HLP_USYMSIMPLE:
		if (named) {
			stp_uout_name(&o, p, f.sym);
			stp_uout_offsize(&o, f.sym_off, false, 0);
			stp_uout_str(&o, " [");
			stp_uout_path(&o, p, f.bin, true);
			stp_uout_str(&o, "]");
		} else if (known) {
			stp_uout_hex(&o, addr);
			stp_uout_str(&o, " [");
			stp_uout_path(&o, p, f.bin, true);
			stp_uout_offsize(&o, f.mod_off, false, 0);
			stp_uout_str(&o, "]");
		} else {
			stp_uout_hex(&o, addr);
		}
		stp_uout_str(&o, "\n");
		break;
	default:		/* USYMDATA, USYMFULL */
		if (helper == STP_HLP_USYMFULL) {
			stp_uout_str(&o, " ");
			if (named) {
				stp_uout_hex(&o, addr);
				stp_uout_str(&o, " : ");
			}
		}
		if (named) {
			stp_uout_name(&o, p, f.sym);
			stp_uout_offsize(&o, f.sym_off, true, f.sym->size);
			stp_uout_str(&o, " [");
			stp_uout_path(&o, p, f.bin, false);
			stp_uout_str(&o, "]");
		} else if (known) {
			stp_uout_hex(&o, addr);
			stp_uout_str(&o, " [");
			stp_uout_path(&o, p, f.bin, false);
			stp_uout_offsize(&o, f.mod_off, true, f.mod_size);
			stp_uout_str(&o, "]");
		} else {
			stp_uout_hex(&o, addr);
		}
		if (helper == STP_HLP_USYMFULL)
			stp_uout_str(&o, "\n");
		break;
	}
	return o.len;
}

/* The user registers of the hit, else current's saved ones, else NULL. */
static struct pt_regs *stp_uregs(struct stp_kenv *ke)
{
	if (ke->regs && user_mode(ke->regs))
		return ke->regs;
	if (!READ_ONCE(current->mm) || (current->flags & PF_KTHREAD))
		return NULL;
	return task_pt_regs(current);
}

static bool stp_uread(u64 addr, u64 *v)
{
	return !copy_from_user_nofault(v, (const void __user *)
				       (unsigned long)addr, sizeof(*v));
}

/* Appends frame addr to a BACKTRACE-style string; false when full. */
static bool stp_uframe(struct stp_uout *o, u64 addr)
{
	char one[24];
	u32 m = (u32)scnprintf(one, sizeof(one), "%s0x%llx",
			       o->len ? " " : "", addr);

	if (o->len + m > o->max)
		return false;
	stp_uout_mem(o, one, m);
	return true;
}

u32 stp_kenv_ubacktrace(struct stp_kenv *ke, char *buf, u32 max)
{
	struct stp_uout o = { .buf = buf, .max = max };
	struct pt_regs *regs = stp_uregs(ke);
	struct stp_ufound f;
	u64 ip, sp, fp, next, ret;
	u32 n;

	if (!regs)
		return 0;
	ip = instruction_pointer(regs);
	sp = user_stack_pointer(regs);
	fp = regs->bp;
	if (!stp_uframe(&o, ip))
		return o.len;
	n = 1;
	/* At a function's first byte its frame is not built: [sp] returns */
	if (stp_usym_find(ke, ip, &f) && f.sym && !f.sym_off &&
	    stp_uread(sp, &ret) && ret) {
		if (!stp_uframe(&o, ret))
			return o.len;
		n++;
	}
	for (; n < STP_MAX_BACKTRACE; n++) {
		if (!fp || (fp & 7) || fp < sp || fp > U64_MAX - 16 ||
		    !stp_uread(fp, &next) || !stp_uread(fp + 8, &ret) || !ret)
			break;
		if (!stp_uframe(&o, ret))
			break;
		if (next <= fp)
			break;
		fp = next;
	}
	return o.len;
}
