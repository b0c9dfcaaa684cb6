// SPDX-License-Identifier: GPL-2.0
/*
 * stapvm_floor.ko - the native "floor" of tests/guest/bench (design brief
 * §6): the cheapest possible C probe on a function, whose handler only
 * does this_cpu_inc() on a per-CPU counter. stapvm's per-hit overhead is
 * reported as a ratio to this module's.
 *
 *   insmod stapvm_floor.ko [symbol=__x64_sys_getppid] [ret=0|1]
 *
 * ret=0 arms a kprobe (pre_handler), ret=1 a kretprobe (return handler,
 * maxactive left to the kernel's default, as stapvm's kretprobes). The
 * read-only parameters `hits` and `missed` (/sys/module/stapvm_floor/
 * parameters/) give the summed counter and the kprobe's nmissed.
 *
 * Only ever loaded in the QEMU guest of tests/guest/bench.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>

static char *symbol = "__x64_sys_getppid";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "function to probe");

static bool ret;
module_param(ret, bool, 0444);
MODULE_PARM_DESC(ret, "kretprobe instead of kprobe");

static DEFINE_PER_CPU(unsigned long, floor_hits);

static int floor_pre(struct kprobe *kp, struct pt_regs *regs)
{
	this_cpu_inc(floor_hits);
	return 0;
}

static int floor_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	this_cpu_inc(floor_hits);
	return 0;
}

static struct kprobe floor_kp = { .pre_handler = floor_pre };
static struct kretprobe floor_rp = { .handler = floor_ret };

static int hits_get(char *buf, const struct kernel_param *kp)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(floor_hits, cpu);
	return sysfs_emit(buf, "%lu\n", sum);
}

static int missed_get(char *buf, const struct kernel_param *kp)
{
	unsigned long m = ret ? floor_rp.nmissed + floor_rp.kp.nmissed :
				floor_kp.nmissed;

	return sysfs_emit(buf, "%lu\n", m);
}

static const struct kernel_param_ops hits_ops = { .get = hits_get };
static const struct kernel_param_ops missed_ops = { .get = missed_get };
module_param_cb(hits, &hits_ops, NULL, 0444);
module_param_cb(missed, &missed_ops, NULL, 0444);

static int __init floor_init(void)
{
	if (ret) {
		floor_rp.kp.symbol_name = symbol;
		return register_kretprobe(&floor_rp);
	}
	floor_kp.symbol_name = symbol;
	return register_kprobe(&floor_kp);
}

static void __exit floor_exit(void)
{
	if (ret)
		unregister_kretprobe(&floor_rp);
	else
		unregister_kprobe(&floor_kp);
}

module_init(floor_init);
module_exit(floor_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("stapvm benchmark floor: a kprobe/kretprobe doing this_cpu_inc");
