/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel environment of the stapvm C core (kmod/core): the
 * types, barriers, atomics, clocks, identity of current, nofault reads,
 * ring wakeup and verify-time allocation that core/stp_core.h lists in its
 * environment contract checklist, item by item and in the same order.
 *
 * The core's "env" pointer is a struct stp_kenv (below), built on the stack
 * by the glue for each hit: the pt_regs of the kprobe or kretprobe, NULL
 * for begin, end and timer handlers (whose helpers never look at regs: the
 * verifier restricts ARG to kprobe and RETVAL to kretprobe handlers).
 *
 * Left out: anything the core does not list. The user-space twin of this
 * file lives in vm-spec/csrc/.
 *
 * Contexts: everything marked [any] in stp_core.h is called from stp_run()
 * in kprobe, kretprobe, hrtimer (hardirq) or process context with
 * preemption disabled, so nothing here sleeps, locks or allocates, except
 * stp_env_zalloc/stp_env_free, which only the verifier calls, in process
 * context.
 */
#ifndef STAPVM_STP_ENV_H
#define STAPVM_STP_ENV_H

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/compiler.h>
#include <linux/atomic.h>
#include <linux/sched.h>
#include <linux/cred.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>
#include <linux/rcupdate.h>
#include <linux/timekeeping.h>
#include <linux/jiffies.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <asm/barrier.h>
#include <asm/page.h>

/* The per-hit environment handed to stp_run() in stp_run_ctx.env. */
struct stp_kenv {
	struct pt_regs *regs;	/* kprobe/kretprobe registers, else NULL */
};

/* Types, error numbers, mem* functions: the kernel's own. */

#define STP_ENV_PAGE_SIZE	PAGE_SIZE

/*
 * The attribute for the interpreter's computed-goto table, so objtool
 * recognises its indirect jumps (as kernel/bpf/core.c does).
 */
#define STP_ENV_JUMP_TABLE	__annotate_jump_table

#define STP_READ_ONCE(x)	READ_ONCE(x)
#define STP_WRITE_ONCE(x, v)	WRITE_ONCE(x, v)

/*
 * Ring positions: the core's store-release of producer_pos pairs with the
 * consumer's load-acquire in user space (and with stp_rings_pending()'s
 * load-acquire for poll); its load-acquire of consumer_pos pairs with
 * user space's store-release after it consumed records.
 */
static inline u64 stp_load_acquire_u64(const u64 *p)
{
	/* Partner: the writer's store-release of *p (see above). */
	return smp_load_acquire(p);
}

static inline void stp_store_release_u64(u64 *p, u64 v)
{
	/* Partner: the reader's load-acquire of *p (see above). */
	smp_store_release(p, v);
}

/*
 * Full barrier: orders ring.c's producer_pos store before its
 * consumer_pos load (the wakeup decision).
 */
#define stp_env_mb()	smp_mb()

/* Global scalars are 8-aligned s64 slots, which is atomic64_t's layout. */
static inline s64 stp_env_atomic_add_return(s64 *p, s64 v)
{
	return atomic64_add_return(v, (atomic64_t *)p);
}

/* NMI-safe clocks: both fast accessors are lockless (seqcount latch). */
static inline u64 stp_env_time_ns(void *env)
{
	return ktime_get_mono_fast_ns();
}

static inline u64 stp_env_wall_ns(void *env)
{
	return ktime_get_real_fast_ns();
}

static inline s64 stp_env_pid(void *env)
{
	return current->tgid;
}

static inline s64 stp_env_tid(void *env)
{
	return current->pid;
}

/*
 * real_parent is RCU-protected; every caller runs with preemption
 * disabled, which is an RCU-sched (and, since the flavour consolidation,
 * an RCU) read-side section.
 */
static inline s64 stp_env_ppid(void *env)
{
	return READ_ONCE(current->real_parent)->tgid;
}

static inline s64 stp_env_uid(void *env)
{
	return from_kuid_munged(&init_user_ns, current_uid());
}

static inline s64 stp_env_euid(void *env)
{
	return from_kuid_munged(&init_user_ns, current_euid());
}

static inline s64 stp_env_gid(void *env)
{
	return from_kgid_munged(&init_user_ns, current_gid());
}

static inline s64 stp_env_cpu(void *env)
{
	return raw_smp_processor_id();
}

static inline s64 stp_env_jiffies(void *env)
{
	return (s64)get_jiffies_64();
}

/*
 * comm may be rewritten concurrently (prctl, exec): copy it once, then
 * measure the copy, so the length always matches the bytes returned.
 */
static inline u32 stp_env_comm(void *env, char *buf, u32 max)
{
	char comm[TASK_COMM_LEN];
	const char *nul;
	u32 len;

	memcpy(comm, current->comm, sizeof(comm));
	nul = memchr(comm, 0, sizeof(comm));
	len = nul ? (u32)(nul - comm) : (u32)sizeof(comm);
	if (len > max)
		len = max;
	memcpy(buf, comm, len);
	return len;
}

static inline s64 stp_env_retval(void *env)
{
	struct stp_kenv *ke = env;

	if (!ke || !ke->regs)
		return 0;
	return (s64)regs_return_value(ke->regs);
}

/*
 * regs_get_kernel_argument() reads arguments past the sixth from the
 * stack, bounded by regs_within_kernel_stack(); a script-chosen n far out
 * of range therefore reads 0, never outside the stack.
 */
static inline s64 stp_env_arg(void *env, u32 n)
{
	struct stp_kenv *ke = env;

	if (!ke || !ke->regs)
		return 0;
	return (s64)regs_get_kernel_argument(ke->regs, n);
}

static inline int stp_env_read_kernel(void *env, void *dst, u64 addr, u32 n)
{
	if (copy_from_kernel_nofault(dst, (const void *)(unsigned long)addr, n))
		return -EFAULT;
	return 0;
}

static inline int stp_env_read_user(void *env, void *dst, u64 addr, u32 n)
{
	if (copy_from_user_nofault(dst, (const void __user *)(unsigned long)addr, n))
		return -EFAULT;
	return 0;
}

/*
 * Ring wakeup: struct stp_ring is incomplete here, so a macro; r->owner is
 * the session, whose irq_work wakes the poller (session.c). Never wakes a
 * waitqueue from probe context directly.
 */
void stapvm_ring_wakeup(void *owner);
#define stp_env_ring_wakeup(r)	stapvm_ring_wakeup((r)->owner)

/*
 * Verify-time scratch, process context only. Sizes come from a hostile
 * image: refuse what kvzalloc would warn about and never warn on failure
 * (the verifier turns NULL into STP_VERR_NO_MEMORY).
 */
static inline void *stp_env_zalloc(u64 size)
{
	if (size == 0 || size > INT_MAX)
		return NULL;
	return kvzalloc((size_t)size, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
}

static inline void stp_env_free(void *p)
{
	kvfree(p);
}

/*
 * Map locks (stp_core.h): a raw spinlock, taken with interrupts off for
 * one map instruction; the core tries at most MAXTRYLOCK times, so a
 * probe that interrupts (or an NMI that hits) a holder on this CPU gives
 * up instead of deadlocking.
 */
#include <linux/spinlock.h>
#include <asm/processor.h>

#define stp_env_map_lock_t raw_spinlock_t

static inline void stp_env_map_lock_init(stp_env_map_lock_t *l)
{
	raw_spin_lock_init(l);
}

static inline bool stp_env_map_trylock(stp_env_map_lock_t *l,
				       unsigned long *flags)
{
	unsigned long f;

	if (!raw_spin_trylock_irqsave(l, f))
		return false;
	*flags = f;
	return true;
}

static inline void stp_env_map_unlock(stp_env_map_lock_t *l,
				      unsigned long flags)
{
	raw_spin_unlock_irqrestore(l, flags);
}

static inline void stp_env_cpu_relax(void)
{
	cpu_relax();
}

#endif /* STAPVM_STP_ENV_H */
