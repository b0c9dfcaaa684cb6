// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetime of a session and the operations on its fd: INFO,
 * START, STOP, STATUS, GLOBALS, PROBE_STATS and MAP_READ ioctls, poll, mmap (delegated to
 * rings.c) and release. A session is created by LOAD (main.c) from a
 * verified program and owns everything: the image, the per-CPU VM
 * registers and rings, the globals and the probe instances. Nothing is
 * allocated after LOAD.
 *
 * Release does what STOP does except running end handlers, so a SIGKILLed
 * loader leaves nothing armed.
 *
 * Left out: arming and running probes (probes.c), ring memory (rings.c),
 * the VM (core/).
 *
 * Also the deadman (stp_deadman_fn): a delayed work that disarms the
 * probes of a running session whose consumer stopped reading.
 *
 * Contexts: process context, except stapvm_ring_wakeup() and
 * stp_request_stop() and its wrappers, which probe context calls (any
 * context up to NMI: they only queue an irq_work), and the irq_work
 * callback (hardirq).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/mm.h>
#include <linux/uaccess.h>
#include <linux/cpumask.h>
#include <linux/topology.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/build_bug.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "session.h"

/* irq_work callback: hardirq context, may take the waitqueue lock. */
static void stp_wake_fn(struct irq_work *work)
{
	struct stp_session *s = container_of(work, struct stp_session,
					     wake_work);

	wake_up_all(&s->wq);
}

/* The core's stp_env_ring_wakeup(): any context, never wakes directly. */
void stapvm_ring_wakeup(void *owner)
{
	struct stp_session *s = owner;

	irq_work_queue(&s->wake_work);
}

/*
 * exit() ran or a breaker tripped: stop running handlers for probe hits
 * (stap semantics; end handlers still run at STOP unless error is set) and
 * wake the poller, which sees exit_requested and issues STOP. The first
 * reason (enum stp_exit_reason) stays. With error, SystemTap's error
 * state: no handler runs from now on and STOP runs the error probes
 * instead of the end probes. Any context.
 */
void stp_request_stop(struct stp_session *s, u32 reason, bool error)
{
	if (error)
		WRITE_ONCE(s->error, 1);
	WRITE_ONCE(s->active, false);
	/*
	 * A successful cmpxchg is a full barrier: error and active=false
	 * are visible before the poller, woken by the irq_work, reads
	 * exit_requested (its READ_ONCE in stp_session_poll after
	 * poll_wait; STATUS reads error after it, smp_rmb between). When
	 * another reason was first, its own cmpxchg ordered its stores.
	 */
	if (!cmpxchg(&s->exit_requested, STP_EXIT_NONE, reason))
		irq_work_queue(&s->wake_work);
}

/* exit() ran. Any context. */
void stp_request_exit(struct stp_session *s)
{
	stp_request_stop(s, STP_EXIT_REQUESTED, false);
}

/* MAXERRORS or MAXSKIPPED exceeded: the error state. Any context. */
void stp_request_error(struct stp_session *s)
{
	stp_request_stop(s, STP_EXIT_REQUESTED, true);
}

/*
 * The deadman: a consumer that stopped reading must not leave probes
 * running for nobody. Once a second while the session RUNNING, look at
 * every ring: records waiting (producer_pos != consumer_pos, which also
 * covers a full ring that drops) while no ring's consumer_pos moved since
 * the last look starts a stall; any consumer_pos moving, or no record
 * waiting, ends it. A stall of STP_DEADMAN_NS disarms every probe and
 * puts the session in the error state (STP_EXIT_DEADMAN; after exit() it
 * only disarms): a loader that comes back sees it in STATUS, and STOP
 * runs the error probes. Process context (system workqueue); the session
 * lock is only tried, so STOP and release never wait for this and a busy
 * tick just looks again later.
 */
#define STP_DEADMAN_TICK	HZ

static void stp_deadman_fn(struct work_struct *work)
{
	struct stp_session *s = container_of(to_delayed_work(work),
					     struct stp_session, deadman);
	bool moved = false, waiting = false;
	u64 now = ktime_get_ns();
	int cpu;

	if (!mutex_trylock(&s->lock)) {
		schedule_delayed_work(&s->deadman, STP_DEADMAN_TICK);
		return;
	}
	if (s->state != STP_STATE_RUNNING || !s->narmed)
		goto out;	/* stopped or disarmed: no more ticks */
	for_each_possible_cpu(cpu) {
		struct stp_cpu *c = per_cpu_ptr(s->cpu, cpu);
		u64 cons = READ_ONCE(c->ring.cons->consumer_pos);

		if (cons != c->dm_cons) {
			c->dm_cons = cons;
			moved = true;
		}
		/* Partner: store-release in stp_ring_commit(). */
		if (smp_load_acquire(&c->ring.prod->producer_pos) != cons)
			waiting = true;
	}
	if (moved || !waiting)
		s->dm_since = 0;
	else if (!s->dm_since)
		s->dm_since = now;
	else if (now - s->dm_since >= STP_DEADMAN_NS) {
		/* After exit() handlers stopped already: disarm only. */
		if (!READ_ONCE(s->exit_requested))
			stp_request_stop(s, STP_EXIT_DEADMAN, true);
		stp_probes_disarm(s);
		goto out;
	}
	schedule_delayed_work(&s->deadman, STP_DEADMAN_TICK);
out:
	mutex_unlock(&s->lock);
}

/* START succeeded: the first look in a second. Under the session lock. */
void stp_deadman_start(struct stp_session *s)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct stp_cpu *c = per_cpu_ptr(s->cpu, cpu);

		c->dm_cons = READ_ONCE(c->ring.cons->consumer_pos);
	}
	s->dm_since = 0;
	schedule_delayed_work(&s->deadman, STP_DEADMAN_TICK);
}

/* The current layouts are the sizes abi.h lists. */
static_assert(sizeof(struct stp_load_args) == STP_LOAD_ARGS_SIZE_VER0);
static_assert(sizeof(struct stp_start_args) == STP_START_ARGS_SIZE_VER0);
static_assert(sizeof(struct stp_probe_stats_args) ==
	      STP_PROBE_STATS_ARGS_SIZE_VER0);

/*
 * Copy an extensible argument structure in (abi.h: args_size rules):
 * ksize is the size this module knows, min_size the oldest size it still
 * accepts (equal to ksize while there is one layout). Returns 0, -EFAULT,
 * -EINVAL (too small) or -E2BIG (too large, or a non-zero tail).
 */
int stp_copy_args(void *dst, u32 ksize, u32 min_size,
		  const void __user *uarg)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < min_size)
		return -EINVAL;
	if (usize > STP_ARGS_SIZE_MAX)
		return -E2BIG;
	return copy_struct_from_user(dst, ksize, uarg, usize);
}

static void stp_cpus_free(struct stp_session *s)
{
	int cpu;

	if (!s->cpu)
		return;
	for_each_possible_cpu(cpu) {
		kvfree(per_cpu_ptr(s->cpu, cpu)->vm.sbuf);
		kvfree(per_cpu_ptr(s->cpu, cpu)->vm.tok);
		kvfree(per_cpu_ptr(s->cpu, cpu)->vm.rx);
		kvfree(per_cpu_ptr(s->cpu, cpu)->vm.frames);
		kvfree(per_cpu_ptr(s->cpu, cpu)->pctr);
		kvfree(per_cpu_ptr(s->cpu, cpu)->iters);
	}
	free_percpu(s->cpu);
	s->cpu = NULL;
}

/*
 * Per-CPU registers: a struct stp_vm plus its string buffer, its
 * tokenizer's (STOK) and, for a program with regex group programs, the
 * group state (REMATCHS, about 34 KB), for a program
 * with functions MAXNESTING frames (the verifier bounded their size by
 * STP_MAX_FRAME_BYTES), and the per-probe counters, per CPU.
 */
static int stp_cpus_alloc(struct stp_session *s)
{
	u32 maxstr = s->prog.limits[STP_LIM_MAXSTRINGLEN];
	u32 nframes = s->prog.nfuncs ? s->prog.limits[STP_LIM_MAXNESTING] : 0;
	u64 sbuf_size = stp_vm_sbuf_size(maxstr);
	u64 frames_size = stp_vm_frames_size(nframes, maxstr);
	u32 nprobes = max_t(u32, s->prog.nprobes, 1);
	u64 iters_size = stp_iters_size(s->prog.niters, s->prog.iter_cap);
	int cpu;

	s->cpu = alloc_percpu(struct stp_cpu);
	if (!s->cpu)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct stp_cpu *c = per_cpu_ptr(s->cpu, cpu);

		c->vm.str_cap = maxstr;
		c->vm.sbuf = kvzalloc_node(sbuf_size, GFP_KERNEL_ACCOUNT,
					   cpu_to_node(cpu));
		if (!c->vm.sbuf)
			return -ENOMEM;	/* caller frees what was allocated */
		/* STOK's tokenizer (tok_pos, tok_len: 0 from alloc_percpu) */
		c->vm.tok = kvzalloc_node(maxstr, GFP_KERNEL_ACCOUNT,
					  cpu_to_node(cpu));
		if (!c->vm.tok)
			return -ENOMEM;
		/* REMATCHS's group state, only for programs with groups */
		if (s->prog.rx_groups) {
			c->vm.rx = kvzalloc_node(stp_rx_state_size(maxstr),
						 GFP_KERNEL_ACCOUNT,
						 cpu_to_node(cpu));
			if (!c->vm.rx)
				return -ENOMEM;
		}
		if (nframes) {
			c->vm.frames = kvzalloc_node(frames_size,
						     GFP_KERNEL_ACCOUNT,
						     cpu_to_node(cpu));
			if (!c->vm.frames)
				return -ENOMEM;
			c->vm.nframes = nframes;
		}
		c->pctr = kvzalloc_node(array_size(nprobes, sizeof(*c->pctr)),
					GFP_KERNEL_ACCOUNT, cpu_to_node(cpu));
		if (!c->pctr)
			return -ENOMEM;
		if (iters_size) {
			void *mem = kvzalloc_node(iters_size,
						  GFP_KERNEL_ACCOUNT,
						  cpu_to_node(cpu));

			if (!mem)
				return -ENOMEM;
			c->iters = stp_iters_init(mem, s->prog.niters,
						  s->prog.iter_cap);
		}
	}
	return 0;
}

/*
 * The maps: one zeroed vmalloc block each, of the core's stp_map_size()
 * (the verifier capped the total at STP_MAX_MAP_BYTES), set up by
 * stp_map_init(). Process context.
 */
static int stp_maps_alloc(struct stp_session *s)
{
	u32 maxstr = s->prog.limits[STP_LIM_MAXSTRINGLEN];
	u32 i;

	if (!s->prog.nmaps)
		return 0;
	s->maps = kvcalloc(s->prog.nmaps, sizeof(*s->maps),
			   GFP_KERNEL_ACCOUNT);
	if (!s->maps)
		return -ENOMEM;
	for (i = 0; i < s->prog.nmaps; i++) {
		const struct stp_map_desc *d = &s->prog.maps[i];

		s->maps[i] = vzalloc(stp_map_size(d, maxstr));
		if (!s->maps[i])
			return -ENOMEM;	/* caller frees what was allocated */
		stp_map_init(s->maps[i], d, maxstr);
		cond_resched();
	}
	return 0;
}

/*
 * Statistics: one zeroed block of nr_cpu_ids copies, each of the
 * program's stat_bytes (statistics arrays' copies included; verifier-
 * capped at STP_MAX_STAT_BYTES) rounded
 * up to a cache line so CPUs do not share lines; the whole is capped at
 * STP_MAX_STAT_MEM. A CPU id without a CPU keeps an empty copy, which the
 * extractors' merge skips like any empty one.
 */
static int stp_stats_alloc(struct stp_session *s)
{
	u64 total;

	if (!s->prog.nstats)
		return 0;
	s->stat_stride = ALIGN((u64)s->prog.stat_bytes, SMP_CACHE_BYTES);
	if (check_mul_overflow(s->stat_stride, (u64)nr_cpu_ids, &total) ||
	    total > STP_MAX_STAT_MEM)
		return -E2BIG;
	s->stats = kvzalloc(total, GFP_KERNEL_ACCOUNT);
	return s->stats ? 0 : -ENOMEM;
}

static void stp_maps_free(struct stp_session *s)
{
	u32 i;

	if (!s->maps)
		return;
	for (i = 0; i < s->prog.nmaps; i++)
		vfree(s->maps[i]);
	kvfree(s->maps);
	s->maps = NULL;
}

/*
 * Build a session from a verified program. Takes ownership of image on
 * success only. Process context.
 */
struct stp_session *stp_session_create(void *image, u32 size,
				       const struct stp_prog *prog)
{
	struct stp_session *s;
	int err;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	mutex_init(&s->lock);
	init_waitqueue_head(&s->wq);
	init_irq_work(&s->wake_work, stp_wake_fn);
	INIT_DELAYED_WORK(&s->deadman, stp_deadman_fn);
	s->state = STP_STATE_LOADED;
	s->prog = *prog;
	s->image_size = size;
	s->ring_pages = prog->limits[STP_LIM_RING_PAGES];

	err = -ENOMEM;
	s->globals = kvcalloc(max_t(u32, prog->nglobals, 1), sizeof(s64),
			      GFP_KERNEL_ACCOUNT);
	if (!s->globals)
		goto fail;
	err = stp_cpus_alloc(s);
	if (err)
		goto fail;
	err = stp_maps_alloc(s);
	if (!err)
		err = stp_stats_alloc(s);
	if (!err)
		err = stp_usyms_init(s);
	if (err)
		goto fail;
	err = stp_rings_alloc(s);
	if (err)
		goto fail;
	err = stp_probes_init(s);
	if (err)
		goto fail;
	s->image = image;
	return s;

fail:
	s->image = NULL;	/* still the caller's */
	stp_session_destroy(s);
	return ERR_PTR(err);
}

/*
 * Free everything. Nothing may be armed (release disarms first), so no
 * handler can run or start; irq_work_sync waits for a wakeup queued by
 * the last hits. Process context.
 */
void stp_session_destroy(struct stp_session *s)
{
	cancel_delayed_work_sync(&s->deadman);
	irq_work_sync(&s->wake_work);
	stp_procfs_free(s);
	stp_usyms_free(s);
	kfree(s->probes);
	kfree(s->kp_batch);
	kfree(s->rp_batch);
	stp_rings_free(s);
	stp_cpus_free(s);
	stp_maps_free(s);
	kvfree(s->stats);
	kvfree(s->globals);
	kvfree(s->image);
	mutex_destroy(&s->lock);
	kfree(s);
}

static int stp_ioc_info(struct stp_session *s, void __user *arg)
{
	struct stp_session_info info = {
		.nr_cpus = nr_cpu_ids,
		.page_size = PAGE_SIZE,
		.ring_pages = s->ring_pages,
		.ring_stride_pages = stp_ring_stride_pages(s),
	};

	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

/* Write START's outputs (inside every accepted args_size). */
static int stp_start_report(struct stp_start_args __user *ua, u32 probe,
			    s32 err)
{
	if (put_user(probe, &ua->failed_probe) ||
	    put_user(err, &ua->failed_err))
		return -EFAULT;
	return 0;
}

static int stp_ioc_start(struct stp_session *s, void __user *uarg)
{
	struct stp_start_args __user *ua = uarg;
	struct stp_start_args a;
	u32 failed = STP_START_NO_PROBE;
	int err;

	err = stp_copy_args(&a, sizeof(a), STP_START_ARGS_SIZE_VER0, uarg);
	if (err)
		return err;
	if (a.flags)
		return -EINVAL;
	if (s->state != STP_STATE_LOADED)
		return -EBUSY;
	/* Writable outputs are checked before anything runs. */
	err = stp_start_report(ua, STP_START_NO_PROBE, 0);
	if (err)
		return err;
	err = stp_probes_start(s, &failed);
	/* On failure begin may have run: the session can not start again. */
	WRITE_ONCE(s->state, err ? STP_STATE_STOPPED : STP_STATE_RUNNING);
	if (!err && s->narmed)
		stp_deadman_start(s);
	if (err && failed != STP_START_NO_PROBE)
		stp_start_report(ua, failed, err);	/* err wins over EFAULT */
	return err;
}

/*
 * Disarm, wait for in-flight handlers, then run the end handlers, or, in
 * the error state, the error hook instead (stap's `error` probes).
 * Idempotent.
 */
static int stp_ioc_stop(struct stp_session *s)
{
	if (s->state == STP_STATE_RUNNING) {
		stp_probes_disarm(s);
		/* No handler runs now: error is final until end runs. */
		if (READ_ONCE(s->error))
			stp_probes_run_error(s);
		else
			stp_probes_run_end(s);
	}
	WRITE_ONCE(s->state, STP_STATE_STOPPED);
	return 0;
}

/* The state STATUS reports: ERROR overrides RUNNING and STOPPED. */
static u32 stp_reported_state(struct stp_session *s)
{
	if (s->state != STP_STATE_LOADED && READ_ONCE(s->error))
		return STP_STATE_ERROR;
	return s->state;
}

static int stp_ioc_status(struct stp_session *s, void __user *arg)
{
	struct stp_status st = {
		.probes_armed = s->narmed,
	};
	int cpu;

	st.exit_requested = READ_ONCE(s->exit_requested);
	/*
	 * exit_requested, then error: pairs with the full barrier of the
	 * successful cmpxchg in stp_request_stop (error is stored before
	 * it), so an exit asked for by a breaker is never reported without
	 * the error state.
	 */
	smp_rmb();
	st.state = stp_reported_state(s);

	/* Other CPUs' counters: aligned u64, read untorn with READ_ONCE. */
	for_each_possible_cpu(cpu) {
		struct stp_cpu *c = per_cpu_ptr(s->cpu, cpu);

		st.hits += READ_ONCE(c->hits);
		st.errors += READ_ONCE(c->errors);
		st.skipped += READ_ONCE(c->skipped);
	}
	st.skipped += stp_probes_missed(s);
	st.dropped = stp_rings_dropped(s);
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

#define STP_GLOBALS_CHUNK 32

static int stp_ioc_globals(struct stp_session *s, void __user *arg)
{
	struct stp_globals_args __user *ua = arg;
	struct stp_globals_args ga;
	s64 buf[STP_GLOBALS_CHUNK];
	s64 __user *dst;
	u32 n, i, j, k;

	if (copy_from_user(&ga, ua, sizeof(ga)))
		return -EFAULT;
	if (ga.reserved)
		return -EINVAL;
	n = min(ga.count, s->prog.nglobals);
	dst = u64_to_user_ptr(ga.values);
	for (i = 0; i < n; i += k) {
		k = min_t(u32, n - i, STP_GLOBALS_CHUNK);
		for (j = 0; j < k; j++)
			buf[j] = READ_ONCE(s->globals[i + j]);
		if (copy_to_user(dst + i, buf, k * sizeof(s64)))
			return -EFAULT;
	}
	return put_user(n, &ua->count);
}

static_assert(sizeof(struct stp_map_read_args) ==
	      STP_MAP_READ_ARGS_SIZE_VER0);

#define STP_MAP_READ_CHUNK	(256u << 10)

/*
 * MAP_READ: entries of one map from a cursor, through a kernel buffer
 * filled under the map's lock (copy_to_user may fault, so not under it).
 */
static int stp_ioc_map_read(struct stp_session *s, void __user *uarg)
{
	struct stp_map_read_args __user *ua = uarg;
	struct stp_map_read_args a;
	struct stp_map *m;
	unsigned long flags;
	u32 size, used = 0;
	u8 *buf;
	int n, err;

	err = stp_copy_args(&a, sizeof(a), STP_MAP_READ_ARGS_SIZE_VER0, uarg);
	if (err)
		return err;
	if (a.flags)
		return -EINVAL;
	if (a.map >= s->prog.nmaps || !s->maps)
		return -ENOENT;
	m = s->maps[a.map];
	size = min(a.buf_size, STP_MAP_READ_CHUNK);
	buf = kvmalloc(max(size, 8u), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	raw_spin_lock_irqsave(&m->lock, flags);
	if (a.cursor == STP_MAP_READ_END)
		n = 0;
	else
		n = stp_map_read(m, &a.cursor, buf, size, &used);
	raw_spin_unlock_irqrestore(&m->lock, flags);
	if (n < 0)
		err = n;
	else if (copy_to_user(u64_to_user_ptr(a.buf), buf, used) ||
		 put_user(a.cursor, &ua->cursor) ||
		 put_user((u32)n, &ua->count))
		err = -EFAULT;
	kvfree(buf);
	return err;
}

static int stp_ioc_probe_stats(struct stp_session *s, void __user *uarg)
{
	struct stp_probe_stats_args __user *ua = uarg;
	struct stp_probe_stats_args a;
	struct stp_probe_stat __user *dst;
	struct stp_probe_stat st;
	u32 n, i;
	int err;

	err = stp_copy_args(&a, sizeof(a), STP_PROBE_STATS_ARGS_SIZE_VER0,
			    uarg);
	if (err)
		return err;
	if (a.flags || a.reserved)
		return -EINVAL;
	n = min(a.count, s->prog.nprobes);
	dst = u64_to_user_ptr(a.stats);
	for (i = 0; i < n; i++) {
		stp_probe_stat(s, i, &st);
		if (copy_to_user(dst + i, &st, sizeof(st)))
			return -EFAULT;
		cond_resched();
	}
	return put_user(s->prog.nprobes, &ua->count);
}

/* The requests whose size is in args_size, not in the number. */
static bool stp_ioc_is(unsigned int cmd, unsigned int ref)
{
	return STP_IOC_NOSIZE(cmd) == STP_IOC_NOSIZE(ref);
}

static long stp_session_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct stp_session *s = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	/* Runs handlers and copies from user space: not under the lock. */
	if (cmd == STP_IOC_INPUT)
		return stp_procfs_input(s, uarg);
	mutex_lock(&s->lock);
	if (stp_ioc_is(cmd, STP_IOC_START)) {
		ret = stp_ioc_start(s, uarg);
		goto out;
	}
	if (stp_ioc_is(cmd, STP_IOC_PROBE_STATS)) {
		ret = stp_ioc_probe_stats(s, uarg);
		goto out;
	}
	if (stp_ioc_is(cmd, STP_IOC_MAP_READ)) {
		ret = stp_ioc_map_read(s, uarg);
		goto out;
	}
	switch (cmd) {
	case STP_IOC_INFO:
		ret = stp_ioc_info(s, uarg);
		break;
	case STP_IOC_STOP:
		ret = stp_ioc_stop(s);
		break;
	case STP_IOC_STATUS:
		ret = stp_ioc_status(s, uarg);
		break;
	case STP_IOC_GLOBALS:
		ret = stp_ioc_globals(s, uarg);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
out:
	mutex_unlock(&s->lock);
	return ret;
}

static __poll_t stp_session_poll(struct file *file, poll_table *pt)
{
	struct stp_session *s = file->private_data;

	poll_wait(file, &s->wq, pt);
	/*
	 * The consumer's half of the ring wakeup (core/ring.c,
	 * stp_ring_commit): user space stored consumer_pos (a store-release)
	 * before calling poll(); this barrier orders that store before
	 * stp_rings_pending()'s loads of producer_pos, as the producer's
	 * stp_env_mb() orders its store of producer_pos before its load of
	 * consumer_pos. So either the producer sees us caught up and queues
	 * the wakeup, or the check below sees its record. poll_wait() put us
	 * on s->wq first, so a wakeup after that check is not lost either: the
	 * wake_up_all() of stp_wake_fn() takes the waitqueue lock we took.
	 */
	smp_mb();
	/*
	 * exit_requested: set by the successful cmpxchg in stp_request_stop
	 * before its irq_work wakes s->wq, so a poll woken by it sees it.
	 * It keeps EPOLLIN up until STOP (abi.h); state is read without the
	 * lock: a stale RUNNING only reports one more EPOLLIN.
	 */
	if ((READ_ONCE(s->exit_requested) &&
	     READ_ONCE(s->state) == STP_STATE_RUNNING) ||
	    stp_rings_pending(s))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

static int stp_session_mmap(struct file *file, struct vm_area_struct *vma)
{
	return stp_rings_mmap(file->private_data, vma);
}

/*
 * Last close (mappings hold the file too, so no mapping is left): disarm
 * without end handlers, then free.
 */
static int stp_session_release(struct inode *inode, struct file *file)
{
	struct stp_session *s = file->private_data;

	/* No deadman tick runs or starts past this (it only tries the lock). */
	cancel_delayed_work_sync(&s->deadman);
	if (s->state == STP_STATE_RUNNING)
		stp_probes_disarm(s);
	stp_session_destroy(s);
	return 0;
}

const struct file_operations stp_session_fops = {
	.owner = THIS_MODULE,
	.release = stp_session_release,
	.unlocked_ioctl = stp_session_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = stp_session_poll,
	.mmap = stp_session_mmap,
	.llseek = noop_llseek,
};
