// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetime of a session and the operations on its fd: INFO,
 * START, STOP, STATUS and GLOBALS ioctls, poll, mmap (delegated to
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
 * Contexts: process context, except stapvm_ring_wakeup() and
 * stp_request_exit(), which probe context calls (any context up to NMI:
 * they only queue an irq_work), and the irq_work callback (hardirq).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/uaccess.h>
#include <linux/cpumask.h>
#include <linux/topology.h>

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
 * (stap semantics; end handlers still run at STOP) and wake the poller,
 * which sees exit_requested and issues STOP. Any context.
 */
void stp_request_exit(struct stp_session *s)
{
	WRITE_ONCE(s->active, false);
	/*
	 * xchg is a full barrier: active=false is visible before the
	 * poller, woken by the irq_work, reads exit_requested (its
	 * READ_ONCE in stp_session_poll after poll_wait).
	 */
	if (!xchg(&s->exit_requested, 1))
		irq_work_queue(&s->wake_work);
}

static void stp_cpus_free(struct stp_session *s)
{
	int cpu;

	if (!s->cpu)
		return;
	for_each_possible_cpu(cpu)
		kvfree(per_cpu_ptr(s->cpu, cpu)->vm.sbuf);
	free_percpu(s->cpu);
	s->cpu = NULL;
}

/* Per-CPU registers: a struct stp_vm plus its string buffer, per CPU. */
static int stp_cpus_alloc(struct stp_session *s)
{
	u32 maxstr = s->prog.limits[STP_LIM_MAXSTRINGLEN];
	u64 sbuf_size = stp_vm_sbuf_size(maxstr);
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
	}
	return 0;
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
	irq_work_sync(&s->wake_work);
	kfree(s->probes);
	kfree(s->kp_batch);
	kfree(s->rp_batch);
	stp_rings_free(s);
	stp_cpus_free(s);
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

static int stp_ioc_start(struct stp_session *s)
{
	int err;

	if (s->state != STP_STATE_LOADED)
		return -EBUSY;
	err = stp_probes_start(s);
	/* On failure begin may have run: the session can not start again. */
	s->state = err ? STP_STATE_STOPPED : STP_STATE_RUNNING;
	return err;
}

/* Disarm, wait for in-flight handlers, run end handlers. Idempotent. */
static int stp_ioc_stop(struct stp_session *s)
{
	if (s->state == STP_STATE_RUNNING) {
		stp_probes_disarm(s);
		stp_probes_run_end(s);
	}
	s->state = STP_STATE_STOPPED;
	return 0;
}

static int stp_ioc_status(struct stp_session *s, void __user *arg)
{
	struct stp_status st = {
		.state = s->state,
		.exit_requested = READ_ONCE(s->exit_requested),
		.probes_armed = s->narmed,
	};
	int cpu;

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

static long stp_session_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct stp_session *s = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	mutex_lock(&s->lock);
	switch (cmd) {
	case STP_IOC_INFO:
		ret = stp_ioc_info(s, uarg);
		break;
	case STP_IOC_START:
		ret = stp_ioc_start(s);
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
	mutex_unlock(&s->lock);
	return ret;
}

static __poll_t stp_session_poll(struct file *file, poll_table *pt)
{
	struct stp_session *s = file->private_data;

	poll_wait(file, &s->wq, pt);
	/* Pairs with the xchg in stp_request_exit (via the waitqueue). */
	if (READ_ONCE(s->exit_requested) || stp_rings_pending(s))
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
