// SPDX-License-Identifier: GPL-2.0
/*
 * Process events of a session (STP_PROBE_PROCESS; abi.h: process events):
 * process.begin, .end, .thread.begin, .thread.end, for every process, one
 * process (ev_pid) or one program's processes (STP_PROBE_F_UEXE). Each
 * probe hooks the kernel where the event happens in the task itself:
 *
 * - BEGIN and THREAD_BEGIN: a kretprobe on schedule_tail(), which a new
 *   task runs first of all (ret_from_fork), in its own context; at its
 *   return the runqueue lock is released and interrupts are on. The new
 *   task is its process's first thread (BEGIN) or another (THREAD_BEGIN).
 *   BEGIN also hooks the sched_process_exec tracepoint: the process after
 *   a successful exec, running its new program.
 * - END and THREAD_END: a kprobe on acct_collect(exitcode, group_dead),
 *   which do_exit() calls for every exiting task before its memory goes,
 *   with group_dead set for its process's last thread (END) and clear for
 *   the others (THREAD_END); taskstats_exit(task, group_dead) stands in
 *   where BSD process accounting is not built (its group_dead is the
 *   second argument too). The task's mm is still there, so a program
 *   filter and user reads work.
 *
 * - PSYSCALL and PSYSCALL_RETURN (process.syscall, .syscall.return): the
 *   raw sys_enter and sys_exit tracepoints, in the calling thread.
 *
 * Kernel threads never count. The handler gets the task's user
 * registers (task_pt_regs); a syscall probe a copy of them with r10 (the
 * fourth argument) also in cx, where ARG 4 reads it.
 *
 * Contexts: the hooks' handlers run in the task's own context with
 * preemption disabled around the VM (stp_probe_run_regs); the kretprobe's
 * and kprobe's with interrupts as the hooked code has them, the
 * tracepoint's with preemption disabled. stp_procev_arm and
 * stp_procev_disarm run in process context under the session lock
 * (registration sleeps); stp_procev_release runs after every hook of the
 * session is gone (unregister_k(ret)probe waits for handlers,
 * tracepoint_synchronize_unregister for tracepoint probes).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/namei.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/tracepoint.h>

#include "session.h"
#include "compat.h"

/* Whether current is a user task p counts in. */
static bool stp_procev_counts(struct stp_probe *p)
{
	if (current->flags & PF_KTHREAD)
		return false;
	if (p->pev.pid && task_tgid_nr(current) != p->pev.pid)
		return false;
	return !p->pev.exe_inode || stp_current_runs(p->pev.exe_inode);
}

/* Runs p's handler when current is a user task p counts in. */
static void stp_procev_hit(struct stp_probe *p)
{
	if (stp_procev_counts(p))
		stp_probe_run_regs(p, task_pt_regs(current));
}

/*
 * sys_enter / sys_exit (compat.h): current's system call, its user
 * registers copied with the fourth argument (r10) where ARG 4 reads it.
 */
static void stp_procev_syscall(void *data, struct pt_regs *regs, long v)
{
	struct stp_probe *p = data;
	struct pt_regs r;

	if (!stp_procev_counts(p))
		return;
	r = *task_pt_regs(current);
	r.cx = r.r10;
	stp_probe_run_regs(p, &r);
}

/* schedule_tail() returned in a new task: its first thread or another. */
static int stp_procev_new_task(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	struct kretprobe *rp = stp_get_kretprobe(ri);
	struct stp_probe *p;
	bool first;

	if (unlikely(!rp))
		return 0;
	p = container_of(rp, struct stp_probe, pev.rp);
	first = thread_group_leader(current);
	if (first == (p->pev.event == STP_PROC_BEGIN))
		stp_procev_hit(p);
	return 0;
}

/* sched_process_exec: current runs its new program (compat.h). */
static void stp_procev_exec(void *data, struct task_struct *task,
			    pid_t old_pid, struct linux_binprm *bprm)
{
	stp_procev_hit(data);
}

/* do_exit()'s accounting call: group_dead in the second argument. */
static int stp_procev_exit(struct kprobe *kp, struct pt_regs *regs)
{
	struct stp_probe *p = container_of(kp, struct stp_probe, pev.kp);
	bool last = (int)regs->si != 0;

	if (last == (p->pev.event == STP_PROC_END))
		stp_procev_hit(p);
	return 0;
}

/* Registers the kprobe on the exit hook, the stand-in if needed. */
static int stp_procev_arm_exit(struct stp_probe *p)
{
	static const char *const hooks[] = { STP_EXIT_HOOKS };
	int err = -ENOENT;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(hooks); i++) {
		memset(&p->pev.kp, 0, sizeof(p->pev.kp));
		p->pev.kp.symbol_name = hooks[i];
		p->pev.kp.pre_handler = stp_procev_exit;
		err = register_kprobe(&p->pev.kp);
		if (err != -ENOENT && err != -EINVAL)
			return err;
	}
	return err;
}

/*
 * Arms process event p: looks up its program (if any), then registers
 * its hooks. On failure nothing stays registered or referenced.
 */
int stp_procev_arm(struct stp_probe *p)
{
	const struct stp_prog *prog = &p->sess->prog;
	const struct stp_probe_desc *pd = &prog->probes[p->index];
	int err;

	memset(&p->pev, 0, sizeof(p->pev));
	p->pev.pid = pd->ev_pid;
	p->pev.event = (u8)pd->ev_config;	/* < STP_PROC__COUNT */
	p->pev.syscall = p->kind != STP_PROBE_PROCESS;
	if (pd->flags & STP_PROBE_F_UEXE) {
		err = stp_uprobe_lookup(prog, pd->ev_type, &p->pev.exe);
		if (err)
			return err;
		p->pev.exe_inode = d_real_inode(p->pev.exe.dentry);
	}
	if (p->pev.syscall) {
		p->pev.exec_tp = stp_tracepoint_find(p->kind == STP_PROBE_PSYSCALL ?
						     "sys_enter" : "sys_exit");
		err = p->pev.exec_tp ?
		      tracepoint_probe_register(p->pev.exec_tp,
						stp_procev_syscall, p) :
		      -ENOENT;
		if (err)
			p->pev.exec_tp = NULL;
		goto out;
	}
	switch (p->pev.event) {
	case STP_PROC_BEGIN:
	case STP_PROC_THREAD_BEGIN:
		p->pev.rp.kp.symbol_name = "schedule_tail";
		p->pev.rp.handler = stp_procev_new_task;
		err = register_kretprobe(&p->pev.rp);
		if (err || p->pev.event != STP_PROC_BEGIN)
			break;
		p->pev.exec_tp = stp_tracepoint_find("sched_process_exec");
		err = p->pev.exec_tp ?
		      tracepoint_probe_register(p->pev.exec_tp,
						stp_procev_exec, p) :
		      -ENOENT;
		if (err) {
			p->pev.exec_tp = NULL;
			unregister_kretprobe(&p->pev.rp);
		}
		break;
	default:
		err = stp_procev_arm_exit(p);
		break;
	}
out:
	if (err && p->pev.exe_inode) {
		path_put(&p->pev.exe);
		p->pev.exe_inode = NULL;
	}
	return err;
}

/*
 * Unregisters armed p's hooks; the kprobes' handlers are done on return.
 * Returns 1 when a tracepoint probe was unregistered, whose handlers the
 * caller waits for (tracepoint_synchronize_unregister), else 0.
 */
u32 stp_procev_disarm(struct stp_probe *p)
{
	if (p->pev.syscall) {
		if (!p->pev.exec_tp)
			return 0;
		tracepoint_probe_unregister(p->pev.exec_tp,
					    stp_procev_syscall, p);
		return 1;
	}
	if (p->pev.event == STP_PROC_BEGIN ||
	    p->pev.event == STP_PROC_THREAD_BEGIN)
		unregister_kretprobe(&p->pev.rp);
	else
		unregister_kprobe(&p->pev.kp);
	if (!p->pev.exec_tp)
		return 0;
	tracepoint_probe_unregister(p->pev.exec_tp, stp_procev_exec, p);
	return 1;
}

/* Drops armed p's program, once no handler of it runs. */
void stp_procev_release(struct stp_probe *p)
{
	if (p->pev.exe_inode) {
		path_put(&p->pev.exe);
		p->pev.exe_inode = NULL;
	}
}

/* Hits the hooks missed (kprobe recursion, kretprobe instances). */
u64 stp_procev_missed(struct stp_probe *p)
{
	if (p->pev.syscall)
		return 0;
	if (p->pev.event == STP_PROC_BEGIN ||
	    p->pev.event == STP_PROC_THREAD_BEGIN)
		return READ_ONCE(p->pev.rp.nmissed) +
		       READ_ONCE(p->pev.rp.kp.nmissed);
	return READ_ONCE(p->pev.kp.nmissed);
}
