// SPDX-License-Identifier: GPL-2.0
/*
 * stapvm_lines - a test module for statement probes by source line
 * (module("stapvm_lines").statement("lines_walk@*:*")): writing N to
 * /proc/stapvm_lines runs lines_walk(N), whose marked lines run a known
 * number of times (tests/cases/statement-lines). Built with the kernel's
 * debuginfo flags like any module, so its DWARF line table is in the .ko.
 *
 * Context: process context only (the procfs write).
 */
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/uaccess.h>

static int stapvm_lines_sink;

/* The walk: the loop body runs n times, the cap once when the sum passes
 * 100 (WRITE_ONCE: a store, so never a conditional move), the return once.
 * tests/cases/statement-lines names the line before LINE-IF (the loop's
 * closing brace, no code) by its number, 31: keep these lines in place.
 */
static noinline int lines_walk(int n)
{
	int i, sum = 0;

	for (i = 0; i < n; i++) {
		WRITE_ONCE(stapvm_lines_sink, i);	/* LINE-BODY */
		sum += i;
	}
	if (sum > 100)				/* LINE-IF */
		WRITE_ONCE(stapvm_lines_sink, -1);	/* LINE-CAP */
	return sum;				/* LINE-RET */
}

static ssize_t lines_write(struct file *f, const char __user *buf,
			   size_t len, loff_t *pos)
{
	int n, err;

	err = kstrtoint_from_user(buf, len, 10, &n);
	if (err)
		return err;
	if (n < 0 || n > 100000)
		return -EINVAL;
	lines_walk(n);
	return len;
}

static const struct proc_ops lines_ops = {
	.proc_write = lines_write,
};

static int __init lines_init(void)
{
	if (!proc_create("stapvm_lines", 0200, NULL, &lines_ops))
		return -ENOMEM;
	return 0;
}

static void __exit lines_exit(void)
{
	remove_proc_entry("stapvm_lines", NULL);
}

module_init(lines_init);
module_exit(lines_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("stapvm test module: statement probes by source line");
