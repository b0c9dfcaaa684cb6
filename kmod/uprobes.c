// SPDX-License-Identifier: GPL-2.0
/*
 * The user-space probes of a session (STP_PROBE_UPROBE and
 * STP_PROBE_URETPROBE; abi.h: user-space probes): one uprobe consumer
 * per probe, embedded in its struct stp_probe, on the inode of the file
 * the descriptor names (an absolute path, looked up at START) at the file
 * offset ev_config, with the semaphore (USDT reference counter) at file
 * offset `offset` when it is not 0, so the kernel raises it in every
 * process mapping the file while the probe is armed. Registered at START
 * and unregistered at STOP, on a START that fails later on, and when the
 * session fd is closed (SIGKILL included), all through stp_probes_disarm.
 *
 * The handlers run in the traced task's context, on its return to user
 * mode after the breakpoint (preemption enabled, may fault on user
 * memory): stp_probe_run_regs disables preemption around the VM run, as
 * the VM needs, with the task's user registers (ARG, RETVAL, REGISTER,
 * UADDR read them). A descriptor with ev_pid > 0 runs only in that
 * process (the -x / -c target); the uprobe stays in the other processes
 * that map the file, which pass through it. So does one with
 * STP_PROBE_F_UEXE (a .library probe) in processes of another program.
 *
 * Contexts: stp_uprobe_arm and stp_uprobe_disarm_* run in process context
 * under the session lock (path lookup and uprobe registration sleep).
 * Unregistering waits for handlers in flight: uprobe_unregister() before
 * 6.12, uprobe_unregister_nosync() plus one uprobe_unregister_sync() for
 * all from 6.12 (compat.h), after which the paths are released.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "session.h"
#include "compat.h"

/*
 * Whether current runs the program whose inode is exe (STP_PROBE_F_UEXE):
 * its mm's executable file is that inode. Under RCU, without a
 * reference: only the pointers are compared. Any context with a current
 * task (procevents.c too).
 */
bool stp_current_runs(struct inode *exe)
{
	struct mm_struct *mm = current->mm;
	struct file *f;
	bool in;

	if (!mm)
		return false;
	rcu_read_lock();
	f = rcu_dereference(mm->exe_file);
	in = f && file_inode(f) == exe;
	rcu_read_unlock();
	return in;
}

/* Runs p's handler unless p is for another process or program. */
static void stp_uprobe_hit(struct stp_probe *p, struct pt_regs *regs)
{
	if (p->upr.pid && task_tgid_nr(current) != p->upr.pid)
		return;
	if (p->upr.exe_inode && !stp_current_runs(p->upr.exe_inode))
		return;
	stp_probe_run_regs(p, regs);
}

/*
 * The regular file whose path is string str of prog (verified absolute),
 * looked up and held in *path. Process context (START).
 */
int stp_uprobe_lookup(const struct stp_prog *prog, u32 str,
			     struct path *path)
{
	const struct stp_str_desc *sd = &prog->strs[str];
	char *name;
	int err;

	name = kmemdup_nul((const char *)prog->strdata + sd->off, sd->len,
			   GFP_KERNEL);
	if (!name)
		return -ENOMEM;
	err = kern_path(name, LOOKUP_FOLLOW, path);
	kfree(name);
	if (err)
		return err;
	if (!d_is_reg(path->dentry)) {
		path_put(path);
		return -ENOEXEC;
	}
	return 0;
}

static int stp_uprobe_fn(STP_UPROBE_PARAMS(struct uprobe_consumer *uc,
					   struct pt_regs *regs))
{
	stp_uprobe_hit(container_of(uc, struct stp_probe, upr.uc), regs);
	return 0;
}

static int stp_uretprobe_fn(STP_UPROBE_PARAMS(struct uprobe_consumer *uc,
					      unsigned long func,
					      struct pt_regs *regs))
{
	stp_uprobe_hit(container_of(uc, struct stp_probe, upr.uc), regs);
	return 0;
}

/* Drops the paths p's uprobe holds (the file, the program if any). */
static void stp_uprobe_put_paths(struct stp_probe *p)
{
	path_put(&p->upr.path);
	if (p->upr.exe_inode) {
		path_put(&p->upr.exe);
		p->upr.exe_inode = NULL;
	}
}

/*
 * Registers p's uprobe: the file the verified descriptor names (the
 * verifier: an absolute path), its offset and semaphore, the process.
 * On failure nothing stays registered or referenced.
 */
int stp_uprobe_arm(struct stp_probe *p)
{
	const struct stp_prog *prog = &p->sess->prog;
	const struct stp_probe_desc *pd = &prog->probes[p->index];
	struct inode *inode;
	int err;

	p->upr.exe_inode = NULL;
	err = stp_uprobe_lookup(prog, pd->symbol, &p->upr.path);
	if (err)
		return err;
	if (pd->flags & STP_PROBE_F_UEXE) {
		err = stp_uprobe_lookup(prog, pd->ev_type, &p->upr.exe);
		if (err) {
			path_put(&p->upr.path);
			return err;
		}
		p->upr.exe_inode = d_real_inode(p->upr.exe.dentry);
	}
	inode = d_real_inode(p->upr.path.dentry);
	memset(&p->upr.uc, 0, sizeof(p->upr.uc));
	if (p->kind == STP_PROBE_URETPROBE)
		p->upr.uc.ret_handler = stp_uretprobe_fn;
	else
		p->upr.uc.handler = stp_uprobe_fn;
	p->upr.offset = pd->ev_config;
	p->upr.pid = pd->ev_pid;
	err = stp_uprobe_register(inode, pd->ev_config, pd->offset,
				  &p->upr.uc, &p->upr.handle);
	if (err) {
		stp_uprobe_put_paths(p);
		return err;
	}
	return 0;
}

/*
 * First half of disarming p: no new hit starts once every uprobe of the
 * session went through this and stp_uprobe_disarm_sync() ran.
 */
void stp_uprobe_disarm(struct stp_probe *p)
{
	stp_uprobe_unregister_nosync(d_real_inode(p->upr.path.dentry),
				     p->upr.offset, p->upr.handle, &p->upr.uc);
}

/* Second half: waits for handlers in flight, then drops the paths. */
void stp_uprobe_disarm_sync(struct stp_session *s)
{
	u32 i;

	stp_uprobe_unregister_sync();
	for (i = 0; i < s->prog.nprobes; i++) {
		struct stp_probe *p = &s->probes[i];

		if (p->upr_held) {
			stp_uprobe_put_paths(p);
			p->upr_held = false;
		}
	}
}
