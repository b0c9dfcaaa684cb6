// SPDX-License-Identifier: GPL-2.0
/*
 * Module entry and /dev/stapvm: the misc device (0600, open needs
 * CAP_SYS_ADMIN) and its one ioctl, STP_IOC_LOAD, which copies an image in,
 * has the core verify it, applies the kernel's lockdown policy to it
 * (lockdown.c), and turns a verified image into a session fd (session.c).
 *
 * Left out: everything after LOAD (session.c, probes.c, rings.c) and the
 * checks themselves: core/verify.c is their one definition, including
 * those the module's glue relies on (RING_PAGES a power of two for
 * rings.c, an overload threshold not above its interval, kprobe symbols
 * of 1 to STP_MAX_SYMBOL_LEN bytes for probes.c). The image size cap is
 * also checked here, by the verifier's own stp_verify_size, because it
 * must hold before the image is allocated and copied in.
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

#include "session.h"
#include "lockdown.h"

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
	int err, fd;

	err = stp_copy_args(&a, sizeof(a), STP_LOAD_ARGS_SIZE_VER0, uargs);
	if (err)
		return err;
	if (a.flags != 0)
		return -EINVAL;

	res = kzalloc(sizeof(*res), GFP_KERNEL);
	if (!res)
		return -ENOMEM;

	/*
	 * The cap is checked before anything is allocated for the image
	 * (stp_verify checks it again, with the same code and message).
	 */
	err = stp_verify_size(a.image_size, res);
	if (err)
		goto report;
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
		err = stp_lockdown_check(&prog, res);
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
	int err = stp_procfs_module_init();

	if (err)
		return err;
	err = misc_register(&stp_miscdev);
	if (err)
		stp_procfs_module_exit();
	return err;
}

/*
 * Sessions hold a module reference through their fd (stp_session_fops has
 * .owner = THIS_MODULE, taken by anon_inode_getfd), so exit runs only when
 * no session is left.
 */
static void __exit stp_exit(void)
{
	misc_deregister(&stp_miscdev);
	stp_procfs_module_exit();
}

module_init(stp_init);
module_exit(stp_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("stapvm");
MODULE_DESCRIPTION("stapvm: verified bytecode VM for SystemTap-style tracing");
