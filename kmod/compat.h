/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences between the kernels stapvm.ko builds on
 * (5.10 ... 7.3), each with the version it changed in, so that the module
 * glue calls one name whatever the kernel.
 *
 * - Timer randomization (probes.c) needs a random number in hardirq
 *   context (an hrtimer callback). get_random_u64() has the same name and
 *   meaning on every kernel of the range and may be called from hardirq
 *   context: on 5.10 from a per-CPU batch under an irqsave spinlock, from
 *   5.18 on from a per-CPU batch under local_lock_irqsave. The bounded
 *   helpers are the ones that differ: get_random_u32_below() appeared in
 *   6.2 (and in some 6.1.y stable kernels), prandom_u32_max() left in 6.2,
 *   and both are 32-bit; a randomization may exceed 32 bits of
 *   nanoseconds. So stp_random_below() scales a 64-bit random number
 *   (mul_u64_u64_shr, include/linux/math64.h on every kernel of the range).
 * - get_kretprobe(ri) (probes.c, procevents.c) appeared in 5.11, when
 *   the lockless kretprobe rework hid the instance's owner behind
 *   ri->rph; 5.10's kretprobe_instance has the owner in ri->rp.
 * - In a kretprobe handler, regs->ip is the probed function's return
 *   address from 5.15 on (x86 kretprobe_trampoline_handler fixes it up,
 *   so stack traces from there are right); 5.10 leaves the trampoline's
 *   address, which addr() and caller() would name. stp_kretprobe_fix_ip()
 *   sets it as later kernels do: nothing reads regs->ip after the
 *   handlers on 5.10 (the trampoline returns to the address the handler
 *   loop gives).
 * - A kretprobe's default maxactive (maxactive 0) is max(10, 2 * possible
 *   CPUs) from 5.11 on; 5.10 gives that only with CONFIG_PREEMPTION and
 *   else num_possible_cpus() (Debian's 5.10 is PREEMPT_VOLUNTARY: 2 on
 *   two CPUs, so a third task sleeping in wait4() was a missed return).
 *   STP_KRET_DEFAULT_MAXACTIVE is the later rule, passed explicitly.
 * - hrtimer_setup() (timer, function, clock, mode) replaced
 *   hrtimer_init() plus the function assignment in 6.13; hrtimer_init()
 *   was removed afterwards.
 * - pde_data() (procfs.c) replaced PDE_DATA() in 5.17.
 * - Netfilter hooks (netfilter.c) need no wrapper: the hook function's
 *   prototype (priv, skb, const struct nf_hook_state *) dates from 4.4,
 *   nf_register_net_hook() / nf_unregister_net_hook() from 4.13, and the
 *   members used (state->hook, in, out, okfn; ops->hook, priv, pf,
 *   hooknum, priority) are read and set by name: nf_hook_state.hook is
 *   an unsigned int on 5.10 and a u8 on 6.1, widened either way.
 * - Uprobes (uprobes.c): up to 6.11, uprobe_register_refctr(inode,
 *   offset, ref_ctr_offset, uc) returns 0 or an errno and
 *   uprobe_unregister(inode, offset, uc) waits for handlers in flight;
 *   6.12 folded the reference counter into uprobe_register(), which
 *   returns the struct uprobe * (or an ERR_PTR) that
 *   uprobe_unregister_nosync(uprobe, uc) takes, and one
 *   uprobe_unregister_sync() then waits for every handler. The consumer's
 *   handler and ret_handler kept their prototypes through 6.12; 6.13
 *   (uprobe sessions) gave both a last __u64 *data argument, which
 *   STP_UPROBE_PARAMS() adds where the kernel passes it.
 * - Process events (procevents.c) hook functions, not an API:
 *   schedule_tail(prev) is what every new task runs first (from 2.6 on);
 *   sched_process_exec's prototype (task, old_pid, bprm) dates from 3.4;
 *   do_exit() calls acct_collect(exitcode, group_dead) (BSD process
 *   accounting) and taskstats_exit(task, group_dead) before exit_mm()
 *   on every kernel of the range, so STP_EXIT_HOOKS tries the first and
 *   then the second (a kernel without BSD accounting has no
 *   acct_collect symbol); both take group_dead second. The raw
 *   sys_enter(regs, id) and sys_exit(regs, ret) tracepoints (3.x on)
 *   are probed with one prototype (regs, long).
 * - User stacks and symbols (ustack.c) need no wrapper: mmap_read_trylock()
 *   and mmap_read_unlock() date from 5.8, copy_from_user_nofault() from
 *   5.8, find_vma() (a maple tree walk from 6.1, under the mmap lock
 *   either way), kern_path(), d_real_inode() and file_inode() from before
 *   5.10, with the same prototypes through 6.12.
 */
#ifndef STAPVM_COMPAT_H
#define STAPVM_COMPAT_H

#include <linux/version.h>
#include <linux/random.h>
#include <linux/math64.h>
#include <linux/hrtimer.h>
#include <linux/err.h>
#include <linux/uprobes.h>
#include <linux/kprobes.h>
#include <linux/cpumask.h>
#include <linux/minmax.h>

/* A uniform random number in [0, n) (0 when n is 0); any context but NMI. */
static inline u64 stp_random_below(u64 n)
{
	return mul_u64_u64_shr(get_random_u64(), n, 64);
}

/* The kretprobe an instance belongs to: get_kretprobe() from 5.11. */
static inline struct kretprobe *
stp_get_kretprobe(struct kretprobe_instance *ri)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 11, 0)
	return get_kretprobe(ri);
#else
	return ri->rp;
#endif
}

/* regs->ip = the return address in a kretprobe handler (5.15+: already). */
static inline void stp_kretprobe_fix_ip(struct kretprobe_instance *ri,
					struct pt_regs *regs)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 15, 0)
	instruction_pointer_set(regs, (unsigned long)ri->ret_addr);
#endif
}

/* A kretprobe's maxactive when the script gives none (5.11+'s default). */
#define STP_KRET_DEFAULT_MAXACTIVE \
	max_t(unsigned int, 10, 2 * num_possible_cpus())

/* hrtimer_setup() from 6.13, hrtimer_init() and .function before. */
static inline void stp_hrtimer_setup(struct hrtimer *t,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

/* pde_data() from 5.17, PDE_DATA() before. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 17, 0)
#define pde_data(inode) PDE_DATA(inode)
#endif

/* do_exit()'s calls with group_dead second, in the order tried. */
#define STP_EXIT_HOOKS "acct_collect", "taskstats_exit"

/* A uprobe consumer handler's parameters: these, then __u64 *data (6.13+). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define STP_UPROBE_PARAMS(...) __VA_ARGS__, __u64 *data
#else
#define STP_UPROBE_PARAMS(...) __VA_ARGS__
#endif

/* Registers uc at offset of inode (ref: the semaphore's offset or 0). */
static inline int stp_uprobe_register(struct inode *inode, loff_t offset,
				      loff_t ref, struct uprobe_consumer *uc,
				      struct uprobe **handle)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	struct uprobe *u = uprobe_register(inode, offset, ref, uc);

	if (IS_ERR(u))
		return PTR_ERR(u);
	*handle = u;
	return 0;
#else
	*handle = NULL;
	return uprobe_register_refctr(inode, offset, ref, uc);
#endif
}

/* Unregisters uc; before 6.12 this also waits for its handlers. */
static inline void stp_uprobe_unregister_nosync(struct inode *inode,
						loff_t offset,
						struct uprobe *handle,
						struct uprobe_consumer *uc)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	uprobe_unregister_nosync(handle, uc);
#else
	uprobe_unregister(inode, offset, uc);
#endif
}

/* Waits for the handlers of every uprobe unregistered so far (6.12+). */
static inline void stp_uprobe_unregister_sync(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	uprobe_unregister_sync();
#endif
}

/*
 * The lockdown reason of kernel memory reads by tracing programs
 * (lockdown.c): LOCKDOWN_BPF_READ until 5.13, which split it into
 * LOCKDOWN_BPF_READ_KERNEL (what stapvm asks) and a user-memory part.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 13, 0)
#define STP_LOCKDOWN_READ_KERNEL LOCKDOWN_BPF_READ_KERNEL
#else
#define STP_LOCKDOWN_READ_KERNEL LOCKDOWN_BPF_READ
#endif

#endif /* STAPVM_COMPAT_H */
