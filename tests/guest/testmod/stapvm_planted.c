// SPDX-License-Identifier: GPL-2.0
/*
 * stapvm_planted - bugs planted on purpose, one per class of report of the
 * checking kernel (tests/guest/checking-kernel), so that tests/guest/
 * planted-bugs can show each class is reported and fails a guest run:
 *
 *   insmod stapvm_planted.ko bug=NAME
 *
 *   uaf     a read of freed slab memory (KASAN: use-after-free)
 *   oob     a read past a slab object (KASAN: slab-out-of-bounds)
 *   kfence  a read past an object KFENCE guards (KFENCE: out-of-bounds)
 *   shift   a shift past the width of int (UBSAN: shift-out-of-bounds)
 *   lockdep two mutexes taken in both orders (lockdep: circular locking)
 *   sleep   might_sleep() with preemption off (sleeping in atomic context)
 *   odebug  an armed timer freed (ODEBUG: free active object)
 *
 * Never loaded by the test suite itself, only by the planted-bugs runs;
 * never loaded into the host kernel. Context: module init (process).
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/delay.h>
#ifdef CONFIG_KFENCE
#include <linux/kfence.h>	/* 5.12 on */
#endif
#include <linux/timer.h>
#include <linux/jiffies.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "the bug to plant: uaf, oob, kfence, shift, lockdep, sleep, odebug");

static DEFINE_MUTEX(planted_a);
static DEFINE_MUTEX(planted_b);

/*
 * Read and written with READ_ONCE/WRITE_ONCE, out of the compiler's reach,
 * so that each bug happens at run time.
 */
static int planted_sink;
static int planted_width = 40;

static void planted_uaf(void)
{
	char *p = kmalloc(32, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	WRITE_ONCE(planted_sink, READ_ONCE(p[3]));
}

static void planted_oob(void)
{
	char *p = kmalloc(32, GFP_KERNEL);

	if (!p)
		return;
	WRITE_ONCE(planted_sink, READ_ONCE(p[32 + READ_ONCE(planted_width) % 8]));
	kfree(p);
}

/* KFENCE guards one allocation per sample interval: try for up to 30 s. */
static void planted_kfence(void)
{
#ifdef CONFIG_KFENCE
	int i;

	for (i = 0; i < 1500; i++) {
		char *p = kmalloc(64, GFP_KERNEL);

		if (!p)
			return;
		if (is_kfence_address(p)) {
			/*
			 * KFENCE puts the object at the start or at the end
			 * of its page: read the guard page on that side.
			 */
			char *q = offset_in_page(p) ? p + 64 : p - 1;

			WRITE_ONCE(planted_sink, READ_ONCE(*q));
			kfree(p);
			return;
		}
		kfree(p);
		msleep(20);
	}
	pr_info("stapvm_planted: no KFENCE allocation in 30 s\n");
#else
	pr_info("stapvm_planted: this kernel has no KFENCE\n");
#endif
}

static void planted_shift(void)
{
	int one = 1;

	WRITE_ONCE(planted_sink, one << READ_ONCE(planted_width));
}

static void planted_lockdep(void)
{
	mutex_lock(&planted_a);
	mutex_lock(&planted_b);
	mutex_unlock(&planted_b);
	mutex_unlock(&planted_a);
	mutex_lock(&planted_b);
	mutex_lock(&planted_a);
	mutex_unlock(&planted_a);
	mutex_unlock(&planted_b);
}

static void planted_sleep(void)
{
	preempt_disable();
	might_sleep();
	preempt_enable();
}

static void planted_timer_fn(struct timer_list *t)
{
}

static void planted_odebug(void)
{
	struct timer_list *t;

	/* Without debug objects nothing would disarm the freed timer. */
	if (!IS_ENABLED(CONFIG_DEBUG_OBJECTS_TIMERS) ||
	    !IS_ENABLED(CONFIG_DEBUG_OBJECTS_FREE))
		return;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return;
	timer_setup(t, planted_timer_fn, 0);
	mod_timer(t, jiffies + 100 * HZ);
	/* ODEBUG reports the free and deactivates the timer (its fixup). */
	kfree(t);
}

static const struct {
	const char *name;
	void (*plant)(void);
} planted_bugs[] = {
	{ "uaf", planted_uaf },
	{ "oob", planted_oob },
	{ "kfence", planted_kfence },
	{ "shift", planted_shift },
	{ "lockdep", planted_lockdep },
	{ "sleep", planted_sleep },
	{ "odebug", planted_odebug },
};

static int __init planted_init(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(planted_bugs); i++) {
		if (!strcmp(bug, planted_bugs[i].name)) {
			planted_bugs[i].plant();
			return 0;
		}
	}
	return -EINVAL;
}

static void __exit planted_exit(void)
{
}

module_init(planted_init);
module_exit(planted_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("stapvm test: bugs planted for the checking kernel's reports");
