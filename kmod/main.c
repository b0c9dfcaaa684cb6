// SPDX-License-Identifier: GPL-2.0
/*
 * Module entry and /dev/stapvm: the misc device (0600, open needs
 * CAP_SYS_ADMIN) and its one ioctl, STP_IOC_LOAD, which copies an image in,
 * has the core verify it, and turns a verified image into a session fd
 * (session.c).
 *
 * Left out: everything after LOAD (session.c, probes.c, rings.c) and the
 * checks themselves (core/verify.c; this file adds only what depends on
 * the module: the image size cap before allocating, the power-of-two
 * RING_PAGES the ring allocator needs, and an overload threshold not above
 * its interval).
 *
 * Context: process context only (open, ioctl, module init/exit).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/capability.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/anon_inodes.h>
#include <linux/log2.h>

#include "session.h"

/*
 * Fill *res for a refusal decided here rather than by the verifier; the
 * message is worded like the verifier's own.
 */
static int stp_refuse(struct stp_verify_result *res, u32 code, u32 where,
		      const char *msg)
{
	res->code = code;
	res->where = where;
	strscpy(res->msg, msg, sizeof(res->msg));
	return -stp_verr_info[code].err;
}

/*
 * Module-specific checks of a verified program: what the ring allocator
 * and the probe glue need beyond the verifier's own bounds.
 */
static int stp_check_glue(const struct stp_prog *prog,
			  struct stp_verify_result *res)
{
	u32 ring_pages = prog->limits[STP_LIM_RING_PAGES];
	char detail[96];
	u32 i;

	if (!is_power_of_2(ring_pages)) {
		snprintf(detail, sizeof(detail),
			 "limit RING_PAGES = %u is not a power of two",
			 ring_pages);
		return stp_refuse(res, STP_VERR_BAD_LIMIT, STP_LIM_RING_PAGES,
				  detail);
	}
	/* A threshold above the interval could never trip (abi.h). */
	if (prog->limits[STP_LIM_STP_OVERLOAD_THRESHOLD] >
	    prog->limits[STP_LIM_STP_OVERLOAD_INTERVAL]) {
		snprintf(detail, sizeof(detail),
			 "limit STP_OVERLOAD_THRESHOLD = %u is above STP_OVERLOAD_INTERVAL = %u",
			 prog->limits[STP_LIM_STP_OVERLOAD_THRESHOLD],
			 prog->limits[STP_LIM_STP_OVERLOAD_INTERVAL]);
		return stp_refuse(res, STP_VERR_BAD_LIMIT,
				  STP_LIM_STP_OVERLOAD_THRESHOLD, detail);
	}
	for (i = 0; i < prog->nprobes; i++) {
		const struct stp_probe_desc *pd = &prog->probes[i];

		if (pd->kind != STP_PROBE_KPROBE &&
		    pd->kind != STP_PROBE_KRETPROBE &&
		    pd->kind != STP_PROBE_TRACEPOINT)
			continue;
		if (prog->strs[pd->symbol].len == 0 ||
		    prog->strs[pd->symbol].len > STP_MAX_SYMBOL_LEN) {
			snprintf(detail, sizeof(detail),
				 "probe %u: symbol of %u bytes, must be 1 to %u",
				 i, prog->strs[pd->symbol].len,
				 STP_MAX_SYMBOL_LEN);
			return stp_refuse(res, STP_VERR_BAD_PROBE, i, detail);
		}
	}
	return 0;
}

/* Copy the outcome of a LOAD back: code, place, and the message. */
static int stp_report(struct stp_load_args __user *uargs,
		      const struct stp_load_args *a,
		      const struct stp_verify_result *res)
{
	char __user *log = u64_to_user_ptr(a->log);
	u32 room = min(a->log_size, STP_LOG_MAX);
	size_t len;

	if (put_user(res->code, &uargs->err_code) ||
	    put_user(res->where, &uargs->err_where))
		return -EFAULT;
	if (room == 0)
		return 0;
	len = strnlen(res->msg, room - 1);
	if (copy_to_user(log, res->msg, len) || put_user('\0', log + len))
		return -EFAULT;
	return 0;
}

static long stp_load(struct stp_load_args __user *uargs)
{
	struct stp_verify_result *res;
	struct stp_session *sess;
	struct stp_load_args a;
	struct stp_prog prog;
	void *image = NULL;
	char detail[80];
	int err, fd;

	err = stp_copy_args(&a, sizeof(a), STP_LOAD_ARGS_SIZE_VER0, uargs);
	if (err)
		return err;
	if (a.flags != 0)
		return -EINVAL;

	res = kzalloc(sizeof(*res), GFP_KERNEL);
	if (!res)
		return -ENOMEM;

	/* The cap is checked before anything is allocated for the image. */
	if (a.image_size > STP_MAX_IMAGE_SIZE) {
		snprintf(detail, sizeof(detail),
			 "image of %u bytes, the cap is %u", a.image_size,
			 STP_MAX_IMAGE_SIZE);
		err = stp_refuse(res, STP_VERR_TOO_BIG, 0, detail);
		goto report;
	}
	/* kvmalloc memory is at least 8-byte aligned, as stp_verify needs. */
	image = kvmalloc(max_t(u32, a.image_size, 8),
			 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!image) {
		err = -ENOMEM;
		goto out;
	}
	if (copy_from_user(image, u64_to_user_ptr(a.image), a.image_size)) {
		err = -EFAULT;
		goto out;
	}

	err = stp_verify(image, a.image_size, &prog, res);
	if (!err)
		err = stp_check_glue(&prog, res);
	if (err)
		goto report;

	res->code = STP_VERR_OK;
	res->where = 0;
	res->msg[0] = '\0';
	err = stp_report(uargs, &a, res);
	if (err)
		goto out;

	sess = stp_session_create(image, a.image_size, &prog);
	if (IS_ERR(sess)) {
		err = PTR_ERR(sess);
		goto out;
	}
	image = NULL;	/* owned by the session now */

	fd = anon_inode_getfd("[stapvm]", &stp_session_fops, sess,
			      O_RDWR | O_CLOEXEC);
	if (fd < 0)
		stp_session_destroy(sess);
	kfree(res);
	return fd;

report:
	if (stp_report(uargs, &a, res))
		err = -EFAULT;
out:
	kvfree(image);
	kfree(res);
	return err;
}

/* LOAD is extensible: matched without its size bits (abi.h). */
static long stp_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	if (STP_IOC_NOSIZE(cmd) == STP_IOC_NOSIZE(STP_IOC_LOAD))
		return stp_load((struct stp_load_args __user *)arg);
	return -ENOTTY;
}

static int stp_dev_open(struct inode *inode, struct file *file)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	return 0;
}

static const struct file_operations stp_dev_fops = {
	.owner = THIS_MODULE,
	.open = stp_dev_open,
	.unlocked_ioctl = stp_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice stp_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "stapvm",
	.fops = &stp_dev_fops,
	.mode = 0600,
};

static int __init stp_init(void)
{
	return misc_register(&stp_miscdev);
}

/*
 * Sessions hold a module reference through their fd (stp_session_fops has
 * .owner = THIS_MODULE, taken by anon_inode_getfd), so exit runs only when
 * no session is left.
 */
static void __exit stp_exit(void)
{
	misc_deregister(&stp_miscdev);
}

module_init(stp_init);
module_exit(stp_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("stapvm");
MODULE_DESCRIPTION("stapvm: verified bytecode VM for SystemTap-style tracing");
