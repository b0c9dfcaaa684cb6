// SPDX-License-Identifier: GPL-2.0
/*
 * stapvm_floor.ko - the native "floor" of tests/guest/bench (design brief
 * §6): the cheapest possible C probe on a function, whose handler only
 * does this_cpu_inc() on a per-CPU counter. stapvm's per-hit overhead is
 * reported as a ratio to this module's.
 *
 *   insmod stapvm_floor.ko [symbol=__x64_sys_getppid] [ret=0|1]
 *   insmod stapvm_floor.ko upath=/path/to/binary uoffset=0x...
 *
 * ret=0 arms a kprobe (pre_handler), ret=1 a kretprobe (return handler,
 * maxactive left to the kernel's default, as stapvm's kretprobes); upath
 * a uprobe at file offset uoffset of that binary instead (the uprobe
 * API of 6.12, uprobe_register() returning the uprobe, or of earlier
 * kernels, uprobe_register_refctr()). The
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
#include <linux/namei.h>
#include <linux/uprobes.h>
#include <linux/version.h>

static char *symbol = "__x64_sys_getppid";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "function to probe");

static bool ret;
module_param(ret, bool, 0444);
MODULE_PARM_DESC(ret, "kretprobe instead of kprobe");

static char *upath;
module_param(upath, charp, 0444);
MODULE_PARM_DESC(upath, "binary of a uprobe instead of a kprobe");

static unsigned long uoffset;
module_param(uoffset, ulong, 0444);
MODULE_PARM_DESC(uoffset, "file offset of the uprobe in upath");

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

static int floor_uprobe(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	this_cpu_inc(floor_hits);
	return 0;
}

static struct kprobe floor_kp = { .pre_handler = floor_pre };
static struct kretprobe floor_rp = { .handler = floor_ret };
static struct uprobe_consumer floor_uc = { .handler = floor_uprobe };
static struct path floor_upath;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
static struct uprobe *floor_uprobe_handle;
#endif

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

static int floor_uprobe_init(void)
{
	struct inode *inode;
	int err = kern_path(upath, LOOKUP_FOLLOW, &floor_upath);

	if (err)
		return err;
	inode = d_real_inode(floor_upath.dentry);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	floor_uprobe_handle = uprobe_register(inode, uoffset, 0, &floor_uc);
	err = IS_ERR(floor_uprobe_handle) ? PTR_ERR(floor_uprobe_handle) : 0;
#else
	err = uprobe_register_refctr(inode, uoffset, 0, &floor_uc);
#endif
	if (err)
		path_put(&floor_upath);
	return err;
}

static int __init floor_init(void)
{
	if (upath)
		return floor_uprobe_init();
	if (ret) {
		floor_rp.kp.symbol_name = symbol;
		return register_kretprobe(&floor_rp);
	}
	floor_kp.symbol_name = symbol;
	return register_kprobe(&floor_kp);
}

static void __exit floor_exit(void)
{
	if (upath) {
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
		uprobe_unregister_nosync(floor_uprobe_handle, &floor_uc);
		uprobe_unregister_sync();
#else
		uprobe_unregister(d_real_inode(floor_upath.dentry), uoffset,
				  &floor_uc);
#endif
		path_put(&floor_upath);
		return;
	}
	if (ret)
		unregister_kretprobe(&floor_rp);
	else
		unregister_kprobe(&floor_kp);
}

module_init(floor_init);
module_exit(floor_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("stapvm benchmark floor: a kprobe/kretprobe/uprobe doing this_cpu_inc");
