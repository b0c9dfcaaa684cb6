// SPDX-License-Identifier: GPL-2.0
/*
 * The probe points of a session and the one path every hit
 * takes into the VM: kprobes (symbol + offset), kretprobes (return value
 * in regs), hrtimers (CLOCK_MONOTONIC, relative, forwarded and restarted;
 * a randomized timer draws each period anew, stp_timer_interval),
 * tracepoints of the kernel image (one generic probe function, below),
 * the perf events of timer.profile and perf.* (per CPU, or bound to one
 * process), and begin/end/error handlers,
 * which run in process context with preemption disabled, as the procfs
 * and input probes do (procfs.c, through stp_probe_run_value). START runs
 * begin handlers, then arms every probe; a non-optional probe that fails
 * to arm unwinds everything armed.
 *
 * Every hit: session active? -> per-CPU nesting guard (a hit on a CPU that
 * is already inside a handler of this session is skipped, counted in its
 * probe's skipped but not towards MAXSKIPPED, as stap's default
 * INTERRUPTIBLE runtime does not count reentrant hits; other sessions
 * have their own guard) -> stp_run() -> account (hits,
 * per-probe hits, errors, MAXERRORS/MAXSKIPPED breakers, exit(), the
 * overload breaker: two get_cycles() reads per hit, none with
 * STP_NO_OVERLOAD). A
 * breaker puts the session in the error state (stp_request_error): no
 * handler runs any more and STOP skips the end handlers.
 *
 * timer.profile and perf.*: perf events, one per online CPU or one bound
 * to a process; kernel.data: a wide hardware breakpoint (below);
 * netfilter hooks: netfilter.c, whose hook runs stp_probe_run_nf; uprobes:
 * uprobes.c, whose handlers run stp_probe_run_regs.
 *
 * A kprobe or kretprobe is registered disabled and enabled only when its
 * address is outside this module: probing stapvm's own code is refused
 * (-EPERM), whatever name reached it.
 *
 * Left out: tracepoints of modules, CPU hotplug for timer.profile, @entry
 * data for kretprobes (no entry_handler), and kprobe batch registration
 * (register_kprobes is all-or-nothing; optional probes need one by one).
 *
 * Contexts: the handlers run in kprobe context (preemption disabled, IRQs
 * disabled for int3 kprobes, enabled for ftrace-based ones), kretprobe
 * context (preemption disabled), hardirq (hrtimer, perf clocks), NMI
 * (hardware perf counters), the debug exception (watchpoints, IRQs
 * off), the task that raised a software perf event
 * (page fault, context switch: preemption disabled), a netfilter hook's
 * softirq or process context (preemption disabled by stp_probe_run_nf) and
 * whatever context a tracepoint fires in (preemption disabled); a kprobe
 * or tracepoint on code that NMI handlers run fires in NMI context. They
 * never sleep or allocate, and take no lock but a map's, by trylock (the
 * nesting guard in stp_hit skips a hit that interrupts one of the same
 * session on this CPU). Arm/disarm/begin/end run in process context under
 * the session lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/hrtimer.h>
#include <linux/perf_event.h>
#include <linux/hw_breakpoint.h>
#include <linux/pid.h>
#include <linux/sched/task.h>
#include <linux/cpu.h>
#include <linux/tracepoint.h>
#include <linux/preempt.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/timex.h>
#include <linux/jiffies.h>
#include <linux/timekeeping.h>

#include "session.h"
#include "compat.h"

/* Sum of one per-CPU counter, for the breakers (rare: only on a bump). */
static u64 stp_sum_errors(struct stp_session *s)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(s->cpu, cpu)->errors);
	return sum;
}

static u64 stp_sum_skipped(struct stp_session *s)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(s->cpu, cpu)->skipped);
	return sum;
}

/*
 * The overload breaker tripped on this CPU (stap's epilogue): the error
 * record (STP_RTE_OVERLOAD, addr = the handler cycles summed; dropped
 * like any record when the ring is full), one error, and the error state
 * whatever MAXERRORS says. Cold path; probe context.
 */
static noinline void stp_overload_trip(struct stp_session *s,
				       struct stp_cpu *c,
				       struct stp_probe *p, u64 sum)
{
	struct stp_rec_hdr *hdr;
	struct stp_rec_error *er;
	u32 len = sizeof(*hdr) + sizeof(*er);

	hdr = stp_ring_reserve(&c->ring, len);
	if (hdr) {
		hdr->len = len;
		hdr->type = STP_REC_ERROR;
		hdr->id = STP_RTE_OVERLOAD;
		hdr->time_ns = ktime_get_mono_fast_ns();
		er = (struct stp_rec_error *)(hdr + 1);
		er->handler = p->handler;
		er->pc = 0;
		er->addr = sum;
		stp_ring_commit(&c->ring, hdr, len);
	}
	WRITE_ONCE(c->errors, c->errors + 1);
	stp_request_stop(s, STP_EXIT_OVERLOAD, true);
}

/*
 * Overload accounting after a hit that started at t0 (get_cycles() on
 * this CPU: the TSC, stap's default clock for this, and the cheapest),
 * as stap's epilogue does: add the hit's cycles; when the interval since
 * ovl_base is over, trip if the sum exceeds the threshold, then start a
 * new interval. The first hit only starts one (ovl_base 0); a clock that
 * went backwards ends the interval too (stap's wrap rule).
 */
static void stp_overload_account(struct stp_session *s, struct stp_cpu *c,
				 struct stp_probe *p, u64 t0)
{
	u64 now = get_cycles();

	c->ovl_sum += now - t0;
	if (now > c->ovl_base &&
	    now - c->ovl_base <= s->prog.limits[STP_LIM_STP_OVERLOAD_INTERVAL])
		return;
	if (c->ovl_sum > s->prog.limits[STP_LIM_STP_OVERLOAD_THRESHOLD])
		stp_overload_trip(s, c, p, c->ovl_sum);
	c->ovl_base = now;
	c->ovl_sum = 0;
}

/*
 * Run probe p's handler on this CPU. Preemption is disabled by the caller
 * (probe context or begin/end), so this CPU's state is ours until we
 * return; an interrupt or NMI hitting another probe of this session on
 * this CPU finds busy set and is skipped, which keeps the VM registers and
 * the ring single-user.
 */
static void stp_hit_value(struct stp_session *s, struct stp_probe *p,
			  struct pt_regs *regs, struct stp_kvalue *value,
			  s64 *verdict)
{
	struct stp_cpu *c = this_cpu_ptr(s->cpu);
	struct stp_kenv env = {
		.regs = regs, .scratch = c->scratch, .value = value,
		.verdict = verdict, .prog = &s->prog, .ubins = s->ubin_inodes,
	};
	struct stp_run_ctx rc = {
		.prog = &s->prog,
		.handler = p->handler,
		.probe = p->index,
		.env = &env,
		.globals = s->globals,
		.ring = &c->ring,
		.stats = {
			.base = s->stats,
			.stride = s->stat_stride,
			.ncpus = nr_cpu_ids,
			.cpu = smp_processor_id(),
		},
		.maps = s->maps,
		.iters = c->iters,
	};
	u64 t0 = 0;
	int err;

	if (c->busy) {
		/*
		 * An interrupt's hit inside a handler on this CPU: stap (its
		 * default INTERRUPTIBLE build) drops it without counting it
		 * towards MAXSKIPPED; its probe's skipped shows it. Nested
		 * hits may nest again (NMI in IRQ): an irq-safe add.
		 */
		local64_inc(&c->pctr[p->index].skipped);
		return;
	}
	c->busy = 1;
	/*
	 * Compiler barrier, partner of the one before busy = 0: an
	 * interrupting hit on this CPU sees busy set before any VM or ring
	 * state is touched, and until all of it is done.
	 */
	barrier();
	if (p->overload)
		t0 = get_cycles();
	err = stp_run(&c->vm, &rc);
	WRITE_ONCE(c->hits, c->hits + 1);
	local64_inc(&c->pctr[p->index].hits);
	if (rc.skipped) {
		/* A map lock not taken in MAXTRYLOCK tries: stap skips. */
		this_cpu_inc(s->cpu->skipped);
		local64_inc(&c->pctr[p->index].skipped);
		if (stp_sum_skipped(s) > s->prog.limits[STP_LIM_MAXSKIPPED])
			stp_request_error(s);
	}
	if (err) {
		WRITE_ONCE(c->errors, c->errors + 1);
		if (stp_sum_errors(s) > s->prog.limits[STP_LIM_MAXERRORS])
			stp_request_error(s);
	}
	if (rc.exit_requested)
		stp_request_exit(s);
	/*
	 * Cycles spent waiting for another CPU's map lock are left out: on
	 * bare metal they are microseconds; under a hypervisor they are the
	 * holder's vCPU descheduled, time the script did not use.
	 */
	if (p->overload)
		stp_overload_account(s, c, p, t0 + rc.lock_wait);
	barrier();	/* partner of the barrier after busy = 1 */
	c->busy = 0;
}

static void stp_hit(struct stp_session *s, struct stp_probe *p,
		    struct pt_regs *regs)
{
	stp_hit_value(s, p, regs, NULL, NULL);
}

/*
 * Run probe i's handler with $value (procfs.c: procfs and input probes),
 * from process context: with preemption disabled around the hit, as
 * begin/end, and only while the session is active (stp_procfs_disarm
 * waits for such a hit with synchronize_rcu). Returns false when the
 * session runs no handlers any more.
 */
bool stp_probe_run_value(struct stp_session *s, u32 i, struct stp_kvalue *v)
{
	bool ran = false;

	preempt_disable();
	if (READ_ONCE(s->active)) {
		stp_hit_value(s, &s->probes[i], NULL, v, NULL);
		ran = true;
	}
	preempt_enable();
	return ran;
}

/*
 * Run probe p's handler with regs from a context that may be preemptible
 * (uprobes.c: the traced task after its breakpoint), with preemption
 * disabled around the hit, while the session is active.
 */
void stp_probe_run_regs(struct stp_probe *p, struct pt_regs *regs)
{
	preempt_disable();
	if (READ_ONCE(p->sess->active))
		stp_hit(p->sess, p, regs);
	preempt_enable();
}

/*
 * Run netfilter probe p's handler (netfilter.c) with the hook's arguments
 * in regs and its verdict in *verdict, from the hook's context (softirq or
 * process) with preemption disabled around the hit, while the session is
 * active.
 */
void stp_probe_run_nf(struct stp_probe *p, struct pt_regs *regs,
		      s64 *verdict)
{
	preempt_disable();
	if (READ_ONCE(p->sess->active))
		stp_hit_value(p->sess, p, regs, NULL, verdict);
	preempt_enable();
}

static int stp_kprobe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct stp_probe *p = container_of(kp, struct stp_probe, kp);

	if (READ_ONCE(p->sess->active))
		stp_hit(p->sess, p, regs);
	return 0;
}

static int stp_kretprobe_ret(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	struct kretprobe *rp = stp_get_kretprobe(ri);
	struct stp_probe *p;

	if (unlikely(!rp))
		return 0;
	p = container_of(rp, struct stp_probe, rp);
	stp_kretprobe_fix_ip(ri, regs);
	if (READ_ONCE(p->sess->active))
		stp_hit(p->sess, p, regs);
	return 0;
}

/*
 * The next period of a timer: the fixed one, or for timer.*(N).randomize(M)
 * N + r with r uniform in [-M, M], floored at STP_MIN_TIMER_NS (abi.h).
 * rnd_ns <= period (stp_probes_init), so period - rnd_ns cannot wrap, and
 * both are at most KTIME_MAX, so the sum fits in 64 bits. Hardirq context
 * (stp_random_below: compat.h).
 */
static ktime_t stp_timer_interval(const struct stp_probe *p)
{
	u64 ns = ktime_to_ns(p->period);

	if (!p->rnd_ns)
		return p->period;
	ns = ns - p->rnd_ns + stp_random_below(2 * p->rnd_ns + 1);
	ns = max_t(u64, ns, STP_MIN_TIMER_NS);
	return ns_to_ktime(min_t(u64, ns, KTIME_MAX));
}

static enum hrtimer_restart stp_timer_fn(struct hrtimer *t)
{
	struct stp_probe *p = container_of(t, struct stp_probe, timer);
	struct stp_session *s = p->sess;

	if (!READ_ONCE(s->active))
		return HRTIMER_NORESTART;
	stp_hit(s, p, NULL);
	if (!READ_ONCE(s->active))	/* exit() in this very hit */
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, stp_timer_interval(p));
	return HRTIMER_RESTART;
}

/*
 * Perf events: timer.profile (STP_PROBE_F_PROFILE: cpu-clock, every tick
 * or period) and PERF probes (perf.sw/hw/hw_cache/type: the event and
 * sample period of the descriptor). One event per online CPU, or with
 * STP_PROBE_F_PERF_TASK one event bound to the process ev_pid (its
 * threads created later are not counted: no inherit). The overflow
 * handler runs in the context that overflowed the counter: hardirq for
 * the clocks, NMI for hardware counters, the faulting or switching task
 * (preemption disabled) for the other software events; it gets the
 * interrupted registers (addr(), user_mode()). CPUs brought online later
 * get no event (stap's follow hotplug; not done here).
 */
static void stp_perf_fn(struct perf_event *ev, struct perf_sample_data *sd,
			struct pt_regs *regs)
{
	struct stp_probe *p = ev->overflow_handler_context;

	if (READ_ONCE(p->sess->active))
		stp_hit(p->sess, p, regs);
}

/* Releases p's events (process context: the release waits for handlers). */
static void stp_perf_disarm(struct stp_probe *p)
{
	unsigned int cpu;

	if (!p->pevents)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (p->pevents[cpu])
			perf_event_release_kernel(p->pevents[cpu]);
	kfree(p->pevents);
	p->pevents = NULL;
}

/* The event of a PERF probe bound to the process pid, in pevents[0]. */
static int stp_perf_arm_task(struct stp_probe *p, struct perf_event_attr *attr,
			     pid_t pid)
{
	struct task_struct *task;
	struct perf_event *ev;

	rcu_read_lock();
	task = pid > 0 ? pid_task(find_vpid(pid), PIDTYPE_PID) : NULL;
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	if (!task)
		return -ESRCH;
	ev = perf_event_create_kernel_counter(attr, -1, task, stp_perf_fn, p);
	put_task_struct(task);
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	p->pevents[0] = ev;
	return 0;
}

static int stp_perf_arm(struct stp_probe *p)
{
	const struct stp_probe_desc *pd = &p->sess->prog.probes[p->index];
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		/* ns of CPU time for cpu-clock; 0: every tick */
		.sample_period = ktime_to_ns(p->period) ?: TICK_NSEC,
		.pinned = 1,
	};
	unsigned int cpu;
	int err = 0;

	if (p->kind == STP_PROBE_PERF) {
		/* type, config and period: in the verifier's bounds */
		attr.type = pd->ev_type;
		attr.config = pd->ev_config;
		attr.sample_period = clamp_t(u64, pd->period_ns, 1,
					     STP_MAX_PERF_PERIOD);
	}
	p->pevents = kcalloc(nr_cpu_ids, sizeof(*p->pevents), GFP_KERNEL);
	if (!p->pevents)
		return -ENOMEM;
	if (p->kind == STP_PROBE_PERF && (pd->flags & STP_PROBE_F_PERF_TASK)) {
		err = stp_perf_arm_task(p, &attr, pd->ev_pid);
		if (err)
			stp_perf_disarm(p);
		return err;
	}
	/*
	 * No cpus_read_lock() around this: the first perf event of the
	 * system enables perf_sched_events (static_branch_enable), which
	 * takes cpu_hotplug_lock for read itself, and a second read of that
	 * percpu-rwsem deadlocks when a hotplug writer queues in between
	 * (lockdep reported it on the checking kernel). A CPU coming online
	 * meanwhile gets no event; one going offline keeps an idle one.
	 */
	for_each_online_cpu(cpu) {
		struct perf_event *ev;

		ev = perf_event_create_kernel_counter(&attr, cpu, NULL,
						      stp_perf_fn, p);
		if (IS_ERR(ev)) {
			err = PTR_ERR(ev);
			break;
		}
		p->pevents[cpu] = ev;
	}
	if (err)
		stp_perf_disarm(p);
	return err;
}

/*
 * kernel.data watchpoints (STP_PROBE_WATCH): one wide hardware breakpoint,
 * a debug register on every online CPU, on ev_len bytes at ev_config. The
 * handler runs in the debug exception after the access (NMI-like context,
 * IRQs off), with its registers, through the perf overflow handler.
 * x86-64 has four debug registers per CPU: a fifth breakpoint fails with
 * ENOSPC, which the loader reports.
 */
static int stp_watch_arm(struct stp_probe *p)
{
	const struct stp_probe_desc *pd = &p->sess->prog.probes[p->index];
	struct perf_event * __percpu *bp;
	struct perf_event_attr attr;

	hw_breakpoint_init(&attr);
	attr.bp_addr = pd->ev_config;
	attr.bp_len = pd->ev_len;	/* 1, 2, 4, 8: HW_BREAKPOINT_LEN_N */
	attr.bp_type = pd->ev_type == STP_WATCH_RW ? HW_BREAKPOINT_RW :
						     HW_BREAKPOINT_W;
	bp = register_wide_hw_breakpoint(&attr, stp_perf_fn, p);
	/*
	 * A __percpu pointer is a named address space (__seg_gs) with gcc 14
	 * on 6.15+: it leaves it only through an integer, as IS_ERR_PCPU()
	 * does (which 6.1 lacks).
	 */
	if (IS_ERR((const void *)(__force unsigned long)bp))
		return PTR_ERR((const void *)(__force unsigned long)bp);
	p->wide_bp = bp;
	return 0;
}

/* Unregisters p's breakpoint (process context: waits for handlers). */
static void stp_watch_disarm(struct stp_probe *p)
{
	unregister_wide_hw_breakpoint(p->wide_bp);
	p->wide_bp = NULL;
}

/*
 * Begin, end or error handlers, in image order, in process context. Begin
 * stops at exit() or an error (later begin probes see a stopping session,
 * as in stap); end handlers all run, unless one of them puts the session
 * in the error state (stap checks the state in every probe's prologue);
 * error handlers all run (the session is in the error state).
 */
static void stp_run_boundary(struct stp_session *s, u8 kind)
{
	u32 i;

	for (i = 0; i < s->prog.nprobes; i++) {
		struct stp_probe *p = &s->probes[i];

		if (p->kind != kind)
			continue;
		if (kind == STP_PROBE_BEGIN && READ_ONCE(s->exit_requested))
			break;
		if (kind != STP_PROBE_ERROR && READ_ONCE(s->error))
			break;
		preempt_disable();
		stp_hit(s, p, NULL);
		preempt_enable();
	}
}

void stp_probes_run_end(struct stp_session *s)
{
	stp_run_boundary(s, STP_PROBE_END);
}

/*
 * STOP in the error state runs this instead of the end handlers: stap's
 * `error` probes (STP_PROBE_ERROR, END context), all of them, in image
 * order; the session is already in the error state, so they run
 * regardless of it.
 */
void stp_probes_run_error(struct stp_session *s)
{
	stp_run_boundary(s, STP_PROBE_ERROR);
}

/*
 * Fill the probe instances from the verified descriptors (LOAD time):
 * symbols are copied out of STRDATA and NUL-terminated; nothing is armed.
 */
int stp_probes_init(struct stp_session *s)
{
	const struct stp_prog *prog = &s->prog;
	u32 n = prog->nprobes, i;

	s->probes = kcalloc(max_t(u32, n, 1), sizeof(*s->probes),
			    GFP_KERNEL_ACCOUNT);
	s->kp_batch = kcalloc(max_t(u32, n, 1), sizeof(*s->kp_batch),
			      GFP_KERNEL_ACCOUNT);
	s->rp_batch = kcalloc(max_t(u32, n, 1), sizeof(*s->rp_batch),
			      GFP_KERNEL_ACCOUNT);
	if (!s->probes || !s->kp_batch || !s->rp_batch)
		return -ENOMEM;

	for (i = 0; i < n; i++) {
		const struct stp_probe_desc *pd = &prog->probes[i];
		struct stp_probe *p = &s->probes[i];
		const struct stp_str_desc *sd;
		u64 ns, rnd;

		p->sess = s;
		p->index = i;
		p->handler = pd->handler;
		p->kind = pd->kind;
		p->optional = pd->flags & STP_PROBE_F_OPTIONAL;
		p->profile = pd->flags & STP_PROBE_F_PROFILE;
		/* stap: begin, end and error probes are not accounted. */
		p->overload = !prog->limits[STP_LIM_STP_NO_OVERLOAD] &&
			      pd->kind != STP_PROBE_BEGIN &&
			      pd->kind != STP_PROBE_END &&
			      pd->kind != STP_PROBE_ERROR;
		switch (pd->kind) {
		case STP_PROBE_KPROBE:
		case STP_PROBE_KRETPROBE:
		case STP_PROBE_TRACEPOINT:
			sd = &prog->strs[pd->symbol];
			if (sd->len == 0 || sd->len > STP_MAX_SYMBOL_LEN)
				return -EINVAL;	/* verify.c refused it already */
			memcpy(p->symbol, prog->strdata + sd->off, sd->len);
			p->symbol[sd->len] = '\0';
			break;
		case STP_PROBE_TIMER:
			/*
			 * The verifier bounds the period to STP_MAX_TIMER_NS
			 * (abi.h); clamped again (defence in depth): a value
			 * past KTIME_MAX would turn negative and fire at the
			 * timer resolution. timer.jiffies(N)
			 * (STP_PROBE_F_JIFFIES): N jiffies of this kernel's
			 * HZ, N <= STP_MAX_TIMER_JIFFIES (the verifier), so
			 * the product fits in 64 bits whatever HZ is.
			 */
			ns = pd->period_ns;
			/* randomize <= period_ns (the verifier); again here */
			rnd = min_t(u64, pd->randomize, pd->period_ns);
			if (pd->flags & STP_PROBE_F_JIFFIES) {
				ns = min_t(u64, ns, STP_MAX_TIMER_JIFFIES) *
				     (NSEC_PER_SEC / HZ);
				rnd = min_t(u64, rnd, STP_MAX_TIMER_JIFFIES) *
				      (NSEC_PER_SEC / HZ);
			}
			ns = min_t(u64, ns, KTIME_MAX);
			p->period = ns_to_ktime(ns);
			p->rnd_ns = min_t(u64, rnd, ns);
			break;
		default:
			break;
		}
	}
	return stp_procfs_init(s);
}

/*
 * Tracepoints. A tracepoint calls its probes as
 * void probe(void *data, <the tracepoint's prototype>); one generic
 * function serves every tracepoint: on x86-64 (SysV ABI) data comes in
 * %rdi and the first five arguments in %rsi, %rdx, %rcx, %r8, %r9, the
 * rest on the stack, each widened to a 64-bit slot, and the caller pops
 * the stack arguments. Declaring twelve u64 parameters reads the real
 * arguments in their slots; slots past the tracepoint's own arguments
 * hold whatever the registers or the caller's frame held (never
 * dereferenced, only copied). Sub-64-bit arguments have undefined upper
 * bits (the script masks or casts them). Indirect call type checks would
 * object to the mismatched prototype: kCFI (CONFIG_CFI_CLANG) is off in
 * Debian's 6.1 kernels (built with gcc); IBT only needs the endbr64 gcc
 * puts on this address-taken function.
 *
 * The arguments reach the VM as a kprobe's would: a pt_regs holding
 * a0..a5 in the argument registers, so ARG(1..6) (int_arg() ...) read
 * them; sp is 0, so ARG past 6 reads 0. Tracepoint probes run with
 * preemption disabled (stp_hit's requirement).
 */
struct stp_tp_find {
	const char *name;
	struct tracepoint *tp;
};

static void stp_tp_match(struct tracepoint *tp, void *priv)
{
	struct stp_tp_find *f = priv;

	if (!f->tp && !strcmp(tp->name, f->name))
		f->tp = tp;
}

static void stp_tp_probe(void *data, u64 a0, u64 a1, u64 a2, u64 a3,
			 u64 a4, u64 a5, u64 a6, u64 a7, u64 a8, u64 a9,
			 u64 a10, u64 a11)
{
	struct stp_probe *p = data;
	struct pt_regs regs = {
		.di = a0, .si = a1, .dx = a2, .cx = a3, .r8 = a4, .r9 = a5,
	};

	if (READ_ONCE(p->sess->active))
		stp_hit(p->sess, p, &regs);
}

/* The built-in tracepoint name (module ones are not looked up), or NULL. */
struct tracepoint *stp_tracepoint_find(const char *name)
{
	struct stp_tp_find f = { .name = name };

	for_each_kernel_tracepoint(stp_tp_match, &f);
	return f.tp;
}

static int stp_tp_arm(struct stp_probe *p)
{
	struct tracepoint *tp = stp_tracepoint_find(p->symbol);
	int err;

	if (!tp)
		return -ENOENT;
	err = tracepoint_probe_register(tp, stp_tp_probe, p);
	if (!err)
		p->tp = tp;
	return err;
}

/*
 * A kprobe registered disabled is enabled only when its address is not in
 * this module: a handler of stapvm's own code would run the VM inside the
 * VM, the ring or the session code it probes. -EPERM names that case to
 * user space. Process context (START).
 */
static int stp_enable_outside_self(struct kprobe *kp, bool ret)
{
	int err = -EPERM;

	if (!within_module((unsigned long)kp->addr, THIS_MODULE)) {
		err = enable_kprobe(kp);
		if (!err)
			return 0;
	}
	/* not armed: the caller leaves p->armed false, so undo it here */
	if (ret)
		unregister_kretprobe(container_of(kp, struct kretprobe, kp));
	else
		unregister_kprobe(kp);
	return err;
}

static int stp_arm_one(struct stp_probe *p)
{
	const struct stp_probe_desc *pd = &p->sess->prog.probes[p->index];
	int err;

	switch (p->kind) {
	case STP_PROBE_KPROBE:
		memset(&p->kp, 0, sizeof(p->kp));
		p->kp.symbol_name = p->symbol;
		p->kp.offset = pd->offset;
		p->kp.pre_handler = stp_kprobe_pre;
		p->kp.flags = KPROBE_FLAG_DISABLED;
		err = register_kprobe(&p->kp);
		return err ? err : stp_enable_outside_self(&p->kp, false);
	case STP_PROBE_KRETPROBE:
		memset(&p->rp, 0, sizeof(p->rp));
		p->rp.kp.symbol_name = p->symbol;
		p->rp.handler = stp_kretprobe_ret;
		p->rp.maxactive = pd->maxactive ?
				  min(pd->maxactive, STP_KRET_MAXACTIVE_CAP) :
				  STP_KRET_DEFAULT_MAXACTIVE;
		p->rp.kp.flags = KPROBE_FLAG_DISABLED;
		err = register_kretprobe(&p->rp);
		return err ? err : stp_enable_outside_self(&p->rp.kp, true);
	case STP_PROBE_TRACEPOINT:
		return stp_tp_arm(p);
	case STP_PROBE_PERF:
		return stp_perf_arm(p);
	case STP_PROBE_WATCH:
		return stp_watch_arm(p);
	case STP_PROBE_NETFILTER:
		return stp_nf_arm(p);
	case STP_PROBE_UPROBE:
	case STP_PROBE_URETPROBE:
		err = stp_uprobe_arm(p);
		p->upr_held = !err;
		return err;
	case STP_PROBE_PROCESS:
	case STP_PROBE_PSYSCALL:
	case STP_PROBE_PSYSCALL_RETURN:
		return stp_procev_arm(p);
	case STP_PROBE_TIMER:
		if (p->profile)
			return stp_perf_arm(p);
		stp_hrtimer_setup(&p->timer, stp_timer_fn, CLOCK_MONOTONIC,
				  HRTIMER_MODE_REL);
		hrtimer_start(&p->timer, stp_timer_interval(p),
			      HRTIMER_MODE_REL);
		return 0;
	default:
		return 0;	/* begin/end: not armed */
	}
}

/*
 * Disarm everything armed. active is cleared first so a hit that still
 * arrives does nothing; unregister_k(ret)probes() waits (synchronize_rcu)
 * for handlers in flight, hrtimer_cancel() for a running callback. Process
 * context. nmissed counters stay readable afterwards.
 */
void stp_probes_disarm(struct stp_session *s)
{
	u32 nkp = 0, nrp = 0, ntp = 0, nup = 0, i;

	WRITE_ONCE(s->active, false);
	stp_procfs_disarm(s);
	for (i = 0; i < s->prog.nprobes; i++) {
		struct stp_probe *p = &s->probes[i];

		if (!p->armed)
			continue;
		if (p->kind == STP_PROBE_KPROBE)
			s->kp_batch[nkp++] = &p->kp;
		else if (p->kind == STP_PROBE_KRETPROBE)
			s->rp_batch[nrp++] = &p->rp;
		else if ((p->kind == STP_PROBE_TIMER && p->profile) ||
			 p->kind == STP_PROBE_PERF)
			stp_perf_disarm(p);
		else if (p->kind == STP_PROBE_WATCH)
			stp_watch_disarm(p);
		else if (p->kind == STP_PROBE_NETFILTER)
			stp_nf_disarm(p);
		else if (p->kind == STP_PROBE_UPROBE ||
			 p->kind == STP_PROBE_URETPROBE) {
			stp_uprobe_disarm(p);
			nup++;
		} else if (stp_kind_procev(p->kind)) {
			ntp += stp_procev_disarm(p);
		} else if (p->kind == STP_PROBE_TIMER)
			hrtimer_cancel(&p->timer);
		else if (p->kind == STP_PROBE_TRACEPOINT) {
			tracepoint_probe_unregister(p->tp, stp_tp_probe, p);
			ntp++;
		}
	}
	/* No tracepoint probe of ours runs past this (nor later). */
	if (ntp)
		tracepoint_synchronize_unregister();
	if (nkp)
		unregister_kprobes(s->kp_batch, nkp);
	if (nrp)
		unregister_kretprobes(s->rp_batch, nrp);
	/* No uprobe handler of ours runs past this; the paths go. */
	if (nup)
		stp_uprobe_disarm_sync(s);
	for (i = 0; i < s->prog.nprobes; i++) {
		struct stp_probe *p = &s->probes[i];

		/* after the syncs above: no handler reads its program */
		if (p->armed && stp_kind_procev(p->kind))
			stp_procev_release(p);
		p->armed = false;
	}
	s->narmed = 0;
}

/*
 * START: begin handlers, then arm. If begin asked to exit, nothing is
 * armed (STOP will run end, or not in the error state). A non-optional
 * probe that fails to arm unwinds everything; its index goes to
 * *failed_probe and its error is returned.
 */
int stp_probes_start(struct stp_session *s, u32 *failed_probe)
{
	u32 i;
	int err;

	stp_run_boundary(s, STP_PROBE_BEGIN);
	if (READ_ONCE(s->exit_requested))
		return 0;

	WRITE_ONCE(s->active, true);
	for (i = 0; i < s->prog.nprobes; i++) {
		struct stp_probe *p = &s->probes[i];

		if (p->kind != STP_PROBE_KPROBE &&
		    p->kind != STP_PROBE_KRETPROBE &&
		    p->kind != STP_PROBE_TIMER &&
		    p->kind != STP_PROBE_TRACEPOINT &&
		    p->kind != STP_PROBE_PERF &&
		    p->kind != STP_PROBE_WATCH &&
		    p->kind != STP_PROBE_NETFILTER &&
		    p->kind != STP_PROBE_UPROBE &&
		    p->kind != STP_PROBE_URETPROBE &&
		    !stp_kind_procev(p->kind))
			continue;
		err = stp_arm_one(p);
		if (err) {
			if (p->optional)
				continue;
			pr_notice("probe %u (%s) failed to arm: %d\n", i,
				  p->symbol[0] ? p->symbol :
				  p->kind == STP_PROBE_PERF ? "perf" :
				  p->kind == STP_PROBE_WATCH ? "watch" :
				  p->kind == STP_PROBE_NETFILTER ? "netfilter" :
				  p->kind == STP_PROBE_UPROBE ||
				  p->kind == STP_PROBE_URETPROBE ? "uprobe" :
				  stp_kind_procev(p->kind) ? "process" :
				  "timer",
				  err);
			stp_probes_disarm(s);
			*failed_probe = i;
			return err;
		}
		p->armed = true;
		s->narmed++;
	}
	err = stp_procfs_arm(s, failed_probe);
	if (err) {
		stp_probes_disarm(s);
		return err;
	}
	for (i = 0; i < s->prog.nprobes; i++) {
		struct stp_probe *p = &s->probes[i];

		if (p->kind == STP_PROBE_PROCFS_READ ||
		    p->kind == STP_PROBE_PROCFS_WRITE) {
			p->armed = true;
			s->narmed++;
		}
	}
	return 0;
}

/*
 * kprobe recursion misses and kretprobe maxactive misses of one probe.
 * The kprobe structures are zeroed when arming and stay in place after
 * disarming, so this is 0 for a probe never armed and final after STOP.
 */
static u64 stp_probe_missed(struct stp_probe *p)
{
	if (p->kind == STP_PROBE_KPROBE)
		return READ_ONCE(p->kp.nmissed);
	if (p->kind == STP_PROBE_KRETPROBE)
		return READ_ONCE(p->rp.nmissed) + READ_ONCE(p->rp.kp.nmissed);
	if (stp_kind_procev(p->kind))
		return stp_procev_missed(p);
	return 0;
}

/* Every probe's misses, counted as skipped. */
u64 stp_probes_missed(struct stp_session *s)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < s->prog.nprobes; i++)
		sum += stp_probe_missed(&s->probes[i]);
	return sum;
}

/*
 * PROBE_STATS entry of probe i (< prog.nprobes): its per-CPU counters
 * summed (other CPUs' local64_t read untorn), plus its misses. Process
 * context.
 */
void stp_probe_stat(struct stp_session *s, u32 i, struct stp_probe_stat *st)
{
	int cpu;

	st->hits = 0;
	st->skipped = stp_probe_missed(&s->probes[i]);
	for_each_possible_cpu(cpu) {
		struct stp_probe_ctr *pc = &per_cpu_ptr(s->cpu, cpu)->pctr[i];

		st->hits += local64_read(&pc->hits);
		st->skipped += local64_read(&pc->skipped);
	}
}
