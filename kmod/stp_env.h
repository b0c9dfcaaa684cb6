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
#include <linux/timex.h>
#include <linux/cpumask.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <asm/barrier.h>
#include <asm/page.h>

#include <linux/kallsyms.h>
#include <linux/stacktrace.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/task_stack.h>	/* task_pt_regs: task_stack_page */
#include "stapvm/abi.h"		/* STP_MAX_BACKTRACE */

/* Frames stack_trace_save() may give BACKTRACE before it picks its own. */
#define STP_KENV_TRACE		64

/*
 * Bytes of the per-CPU scratch area a hit hands the helpers (SYMNAME,
 * SYMDATA: sprint_symbol's KSYM_SYMBOL_LEN output and " [kernel]";
 * BACKTRACE: STP_KENV_TRACE frames). Per session and CPU: the session's
 * nesting guard makes it single-user.
 */
#define STP_KENV_SCRATCH						\
	(KSYM_SYMBOL_LEN + 16 > STP_KENV_TRACE * sizeof(unsigned long) ?	\
	 KSYM_SYMBOL_LEN + 16 : STP_KENV_TRACE * sizeof(unsigned long))

/* The per-hit environment handed to stp_run() in stp_run_ctx.env. */
/*
 * A procfs or input probe's $value (procfs.c): len bytes at buf; a read
 * probe's (PROCFS_READ: writable) may grow to cap bytes.
 */
struct stp_kvalue {
	char *buf;
	u32 len;
	u32 cap;
};

struct stp_kenv {
	/* kprobe/kretprobe registers, the interrupted ones (timer.profile) */
	struct pt_regs *regs;	/* else NULL */
	void *scratch;		/* STP_KENV_SCRATCH bytes, or NULL */
	struct stp_kvalue *value;	/* procfs and input probes, else NULL */
	s64 *verdict;		/* netfilter probes (netfilter.c), else NULL */
	/* user-space symbol tables (ustack.c): the program, and the inode of
	 * each of its USYMBINS (NULL: not found); NULL without them
	 */
	const struct stp_prog *prog;
	struct inode **ubins;
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
 * consumer_pos load (the wakeup decision). Partner: the smp_mb() in
 * stp_session_poll (session.c), between the consumer's store of
 * consumer_pos and the load of producer_pos before it sleeps.
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

/*
 * TASK_CURRENT: the address of current's task_struct. Scripts read its
 * members only through nofault KERNEL_* reads at BTF offsets (@cast).
 */
static inline u64 stp_env_task(void *env)
{
	return (u64)(unsigned long)current;
}

/*
 * current->mm->arg_start / arg_end (MM_ARG, for cmdline_str()). current's
 * mm cannot go away while current runs; the fields are plain longs that
 * exec sets before the task runs user code. A kernel thread has no mm: 0.
 */
static inline u64 stp_env_mm_arg(void *env, bool end)
{
	struct mm_struct *mm = READ_ONCE(current->mm);

	if (!mm)
		return 0;
	return end ? READ_ONCE(mm->arg_end) : READ_ONCE(mm->arg_start);
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

static inline s64 stp_env_egid(void *env)
{
	return from_kgid_munged(&init_user_ns, current_egid());
}

/* The module is built for the running kernel: its HZ is that kernel's. */
static inline s64 stp_env_hz(void *env)
{
	return HZ;
}

/* The TSC on x86-64 (rdtsc: no lock, any context). */
static inline u64 stp_env_cycles(void *env)
{
	return (u64)get_cycles();
}

/* cpu_online() reads a cpumask bit: no lock, any context. */
static inline u64 stp_env_cpu_online(void *env, s64 cpu)
{
	return cpu >= 0 && cpu < nr_cpu_ids && cpu_online((unsigned int)cpu);
}

/*
 * RANDOM's source: SplitMix64 over one shared counter, stepped by an
 * atomic add (lockless, NMI-safe), mixed with the TSC. Not for security:
 * stap's _stp_random_u is an LCG seeded from jiffies.
 */
static inline u32 stp_env_random_u32(void *env)
{
	static atomic64_t state;
	u64 z = (u64)atomic64_add_return((s64)0x9e3779b97f4a7c15ull, &state) ^
		(u64)get_cycles();

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (u32)((z ^ (z >> 31)) >> 32);
}

/*
 * comm may be rewritten concurrently (prctl, exec): copy it once, then
 * measure the copy (stp_comm_out), so the length always matches the bytes
 * returned.
 */
static inline u32 stp_comm_out(const char *comm, char *buf, u32 max)
{
	const char *nul = memchr(comm, 0, TASK_COMM_LEN);
	u32 len = nul ? (u32)(nul - comm) : (u32)TASK_COMM_LEN;

	if (len > max)
		len = max;
	memcpy(buf, comm, len);
	return len;
}

static inline u32 stp_env_comm(void *env, char *buf, u32 max)
{
	char comm[TASK_COMM_LEN];

	memcpy(comm, current->comm, sizeof(comm));
	return stp_comm_out(comm, buf, max);
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
#include <linux/delay.h>
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

/*
 * Between two trylocks of a map lock: stap's TRYLOCKDELAY
 * (runtime_defines.h, 10 us). udelay() spins with PAUSE, which lets a
 * hypervisor run the holder. How many polls a lock gets: vm.c map_lock.
 */
#define STP_TRYLOCKDELAY_US	10

static inline void stp_env_cpu_relax(void)
{
	udelay(STP_TRYLOCKDELAY_US);
}

/* ADDR: the instruction pointer of the hit's registers, 0 without. */
static inline u64 stp_env_addr(void *env)
{
	struct stp_kenv *ke = env;

	return ke && ke->regs ? (u64)instruction_pointer(ke->regs) : 0;
}

/* USER_MODE: the hit's registers are a user-mode context. */
static inline s64 stp_env_user_mode(void *env)
{
	struct stp_kenv *ke = env;

	return ke && ke->regs && user_mode(ke->regs);
}

/*
 * SYMNAME / SYMDATA of addr into buf (at most max bytes); returns the
 * length. sprint_symbol() looks kallsyms up without a lock (modules under
 * RCU, preemption is off here) and writes at most KSYM_SYMBOL_LEN bytes
 * into the scratch area; an address without a symbol comes back as
 * 0x<hex>. SYMNAME drops sprint_symbol's " [module]" (stap's symname is
 * the bare name); SYMDATA adds stap's " [kernel]" to a core-kernel symbol.
 */
static inline u32 stp_env_symbol(void *env, u64 addr, bool data, char *buf,
				 u32 max)
{
	struct stp_kenv *ke = env;
	char *s;
	u32 n;

	if (!ke || !ke->scratch) {
		n = (u32)snprintf(buf, max + 1, "0x%llx", addr);
		return n < max ? n : max;
	}
	s = ke->scratch;
	if (data)
		sprint_symbol(s, (unsigned long)addr);
	else
		sprint_symbol_no_offset(s, (unsigned long)addr);
	n = (u32)strnlen(s, KSYM_SYMBOL_LEN);
	if (!data) {		/* stap's symname: no " [module]" */
		const char *sp = memchr(s, ' ', n);

		if (sp)
			n = (u32)(sp - s);
	}
	if (data && !memchr(s, '[', n) && !(n > 1 && s[0] == '0' &&
					    s[1] == 'x')) {
		memcpy(s + n, " [kernel]", 9);
		n += 9;
	}
	if (n > max)
		n = max;
	memcpy(buf, s, n);
	return n;
}

/* PEXECNAME: the real parent's comm, as stp_env_comm. */
static inline u32 stp_env_pcomm(void *env, char *buf, u32 max)
{
	char comm[TASK_COMM_LEN];
	struct task_struct *t;

	rcu_read_lock();
	t = rcu_dereference(current->real_parent);
	memcpy(comm, t->comm, sizeof(comm));
	rcu_read_unlock();
	return stp_comm_out(comm, buf, max);
}

/*
 * BACKTRACE into buf (at most max bytes): stack_trace_save() from here
 * (ORC, safe in any context), then the frames from the hit's own address
 * on: with registers the first frame at or just after their instruction
 * pointer (a kprobe's int3 or ftrace entry, the interrupted context),
 * else the first frame after this module's. At most STP_MAX_BACKTRACE
 * frames, whole ones only. Returns the length.
 */
static inline u32 stp_env_backtrace(void *env, char *buf, u32 max)
{
	struct stp_kenv *ke = env;
	unsigned long *ent;
	unsigned int n, i, start = 0, k;
	u32 len = 0;

	if (!ke || !ke->scratch)
		return 0;
	ent = ke->scratch;
	n = stack_trace_save(ent, STP_KENV_TRACE, 0);
	if (n > STP_KENV_TRACE)
		n = STP_KENV_TRACE;
	for (i = 0; i < n; i++)		/* the last frame of this module */
		if (within_module(ent[i], THIS_MODULE))
			start = i + 1;
	if (ke->regs) {
		unsigned long ip = instruction_pointer(ke->regs);

		for (i = 0; i < n; i++)
			if (ent[i] + 1 >= ip && ent[i] < ip + 16)
				break;
		if (i < n) {
			start = i;
			ent[i] = ip;
		}
	}
	for (k = 0, i = start; i < n && k < STP_MAX_BACKTRACE; i++, k++) {
		char one[24];
		u32 m = (u32)scnprintf(one, sizeof(one), "%s0x%lx",
				       len ? " " : "", ent[i]);

		if (len + m > max)
			break;
		memcpy(buf + len, one, m);
		len += m;
	}
	return len;
}

/*
 * REGISTER: the idx-th 8-byte word of the hit's pt_regs (r15 .. ss, the
 * order of stap's x86_64 registers.stp offsets); 0 without registers or
 * past ss. regs_get_register() also bounds the offset (MAX_REG_OFFSET).
 */
static inline u64 stp_env_register(void *env, u64 idx)
{
	struct stp_kenv *ke = env;

	if (!ke || !ke->regs || idx > MAX_REG_OFFSET / sizeof(unsigned long))
		return 0;
	return regs_get_register(ke->regs,
				 (unsigned int)idx * sizeof(unsigned long));
}

/*
 * UADDR (stap's uaddr()): the user-mode instruction pointer of current:
 * the hit's own registers when they are user mode (timer.profile),
 * else the user registers saved at the top of current's kernel stack
 * (task_pt_regs, always mapped); 0 for a task without user context.
 */
static inline u64 stp_env_uaddr(void *env)
{
	struct stp_kenv *ke = env;

	if (ke && ke->regs && user_mode(ke->regs))
		return (u64)instruction_pointer(ke->regs);
	if (!READ_ONCE(current->mm) || (current->flags & PF_KTHREAD))
		return 0;
	return (u64)instruction_pointer(task_pt_regs(current));
}

/*
 * PID2TASK (stap's pid2task: pid_task(find_vpid(pid), PIDTYPE_PID)): the
 * lookup is lockless (idr under RCU; preemption is off here, and
 * rcu_read_lock nests in any context). task_active_pid_ns() is NULL for
 * a task past detach_pid (an exiting current): then 0, as for an unknown
 * pid. The address is only ever read through nofault copies (@cast).
 */
static inline u64 stp_env_pid2task(void *env, s64 nr)
{
	struct pid_namespace *ns;
	struct task_struct *t = NULL;

	if (nr <= 0 || nr > INT_MAX)
		return 0;
	rcu_read_lock();
	ns = task_active_pid_ns(current);
	if (ns)
		t = pid_task(find_pid_ns((int)nr, ns), PIDTYPE_PID);
	rcu_read_unlock();
	return (u64)(unsigned long)t;
}

/*
 * MODNAME of addr into buf (at most max bytes); returns the length. 6.1
 * exports no __module_address: sprint_symbol() (module_address_lookup,
 * under preempt-disable, no lock) names the module of any address in a
 * module's layout as " [module]"; an address kallsyms resolves outside
 * every module is the kernel image's, "kernel"; else 0 bytes (stap's
 * "Cannot determine kernel module name", raised by the tapset).
 */
static inline u32 stp_env_modname(void *env, u64 addr, char *buf, u32 max)
{
	struct stp_kenv *ke = env;
	const char *name = "kernel", *lb, *end;
	char *s;
	u32 n;

	if (!ke || !ke->scratch)
		return 0;
	s = ke->scratch;
	sprint_symbol(s, (unsigned long)addr);
	n = (u32)strnlen(s, KSYM_SYMBOL_LEN);
	lb = memchr(s, '[', n);
	if (lb) {
		name = lb + 1;
		end = memchr(name, ']', n - (u32)(name - s));
		if (!end)
			return 0;
		n = (u32)(end - name);
	} else {
		/* "0x...": no symbol, neither a module nor the kernel */
		if (n > 1 && s[0] == '0' && s[1] == 'x')
			return 0;
		n = 6;
	}
	if (n > max)
		n = max;
	memcpy(buf, name, n);
	return n;
}

/* UBACKTRACE and USYMNAME .. UMODNAME (helpers.h), in ustack.c. */
u32 stp_kenv_ubacktrace(struct stp_kenv *ke, char *buf, u32 max);
u32 stp_kenv_usym(struct stp_kenv *ke, u64 addr, u32 helper, char *buf,
		  u32 max);

static inline u32 stp_env_ubacktrace(void *env, char *buf, u32 max)
{
	return env ? stp_kenv_ubacktrace(env, buf, max) : 0;
}

static inline u32 stp_env_usym(void *env, u64 addr, u32 helper, char *buf,
			       u32 max)
{
	struct stp_kenv k = { 0 };

	/* without an environment: the forms of an unknown address */
	return stp_kenv_usym(env ? env : &k, addr, helper, buf, max);
}

/*
 * $value of a procfs or input probe (helpers.h: VALUE, VALUE_SET,
 * VALUE_APPEND; the verifier allows them only in those handlers, whose
 * env always has a value). Plain copies within the preallocated buffer.
 */
static inline u32 stp_env_value(void *env, char *dst, u32 max)
{
	struct stp_kenv *ke = env;
	u32 n;

	if (!ke || !ke->value)
		return 0;
	n = min(ke->value->len, max);
	memcpy(dst, ke->value->buf, n);
	return n;
}

static inline s64 stp_env_value_set(void *env, const char *src, u32 len,
				    bool append)
{
	struct stp_kenv *ke = env;
	struct stp_kvalue *v;
	u32 at, n;

	if (!ke || !ke->value)
		return 0;
	v = ke->value;
	at = append ? v->len : 0;
	n = min(len, v->cap - at);	/* v->len <= v->cap */
	memcpy(v->buf + at, src, n);
	v->len = at + n;
	return v->len;
}

/*
 * $verdict of a netfilter probe (helpers.h: VERDICT, VERDICT_SET; the
 * verifier allows them only in NETFILTER handlers, whose env always has
 * a verdict; vm.c passes only NF_DROP or NF_ACCEPT to the setter).
 */
static inline s64 stp_env_verdict(void *env)
{
	struct stp_kenv *ke = env;

	return ke && ke->verdict ? *ke->verdict : 1;	/* NF_ACCEPT */
}

static inline void stp_env_verdict_set(void *env, s64 v)
{
	struct stp_kenv *ke = env;

	if (ke && ke->verdict)
		*ke->verdict = v;
}

#endif /* STAPVM_STP_ENV_H */
