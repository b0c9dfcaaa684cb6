/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module-internal view of one stapvm session (one LOAD,
 * one anon-inode fd): the verified program, its per-CPU state (VM
 * registers, ring, nesting guard, counters), its probe instances and the
 * functions the glue files (main.c, session.c, probes.c, procfs.c,
 * netfilter.c, rings.c) call in each other.
 *
 * Left out: the VM itself (core/stp_core.h) and every user-visible layout
 * (vm-spec/include/stapvm/abi.h).
 *
 * Contexts: stp_hit() runs in probe context (kprobe, kretprobe, hrtimer,
 * netfilter hooks) and in process context with preemption disabled
 * (begin, end); everything else runs in process context.
 */
#ifndef STAPVM_SESSION_H
#define STAPVM_SESSION_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/irq_work.h>
#include <linux/workqueue.h>
#include <linux/kprobes.h>
#include <linux/hrtimer.h>
#include <linux/percpu.h>
#include <linux/fs.h>
#include <linux/ioctl.h>
#include <linux/netfilter.h>
#include <linux/path.h>
#include <linux/uprobes.h>
#include <asm/local64.h>

#include "core/stp_core.h"

/*
 * Largest kretprobe maxactive the module honours (bounds the instances):
 * the verifier's cap (abi.h), clamped again when arming.
 */
#define STP_KRET_MAXACTIVE_CAP	STP_MAX_MAXACTIVE

/*
 * An ioctl number without its size bits: the extensible requests (LOAD,
 * START, PROBE_STATS) are matched on direction, type and number, and go
 * by the args_size their structure starts with (abi.h).
 */
#define STP_IOC_NOSIZE(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

/*
 * One probe's counters on one CPU. local64_t: a nested hit (IRQ, NMI)
 * may bump skipped while the interrupted one bumps it too; local64_inc
 * is one instruction, safe against both without a lock prefix.
 */
struct stp_probe_ctr {
	local64_t hits;		/* handler runs */
	local64_t skipped;	/* nested hits refused by the guard */
};

/* Per-CPU state of a session; only its own CPU writes it, in a hit. */
struct stp_cpu {
	struct stp_vm vm;	/* registers; vm.sbuf allocated at LOAD */
	struct stp_ring ring;	/* producer view of this CPU's ring */
	struct page **pages;	/* 2 + 2 * ring_pages entries (data twice) */
	void *area;		/* vmap of pages: cons, prod, data, data */
	unsigned int busy;	/* nesting guard: inside a handler */
	u64 hits;		/* handler runs */
	u64 errors;		/* run-time errors */
	u64 skipped;		/* hits skipped for a map lock (MAXTRYLOCK) */
	struct stp_probe_ctr *pctr;	/* prog.nprobes entries, this CPU */
	struct stp_iter *iters;	/* prog.niters foreach iterators, or NULL */
	/*
	 * Overload breaker (stap's cycles_base / cycles_sum, get_cycles()
	 * units): start of the current interval and handler cycles of the
	 * hits that ended in it. Written only by this CPU's hits.
	 */
	u64 ovl_base;
	u64 ovl_sum;
	/* helpers' scratch (stp_env.h: SYMNAME, SYMDATA, BACKTRACE) */
	unsigned long scratch[(STP_KENV_SCRATCH + 7) / 8];
	u64 dm_cons;		/* deadman: consumer_pos at its last look */
};

struct stp_session;

/* One probe point of the image, armed or not. */
/* A uprobe of a session (uprobes.c): its consumer, the file it is on. */
struct stp_uprobe {
	struct uprobe_consumer uc;
	struct path path;	/* held from arm to stp_uprobe_disarm_sync */
	struct uprobe *handle;	/* 6.12+: uprobe_register's; else NULL */
	u64 offset;		/* file offset (ev_config) */
	pid_t pid;		/* ev_pid: the one process, or 0 */
	/* STP_PROBE_F_UEXE: the program (held like path), its inode */
	struct path exe;
	struct inode *exe_inode;	/* NULL: any program */
};

/*
 * A process event probe (procevents.c): the kernel hooks it uses, the
 * program it counts in.
 */
struct stp_procev {
	struct kretprobe rp;	/* BEGIN, THREAD_BEGIN: schedule_tail's return */
	struct kprobe kp;	/* END, THREAD_END: do_exit's group_dead call */
	/* BEGIN: sched_process_exec; syscalls: sys_enter/exit; if armed */
	struct tracepoint *exec_tp;
	struct path exe;	/* STP_PROBE_F_UEXE: held from arm to release */
	struct inode *exe_inode;	/* NULL: any program */
	pid_t pid;		/* ev_pid: the one process, or 0 */
	u8 event;		/* STP_PROC_* */
	bool syscall;		/* STP_PROBE_PSYSCALL, _PSYSCALL_RETURN */
};

struct stp_probe {
	union {
		struct kprobe kp;	/* STP_PROBE_KPROBE */
		struct kretprobe rp;	/* STP_PROBE_KRETPROBE */
		struct hrtimer timer;	/* STP_PROBE_TIMER, not profile */
		struct tracepoint *tp;	/* STP_PROBE_TRACEPOINT, when armed */
		struct perf_event * __percpu *wide_bp;	/* STP_PROBE_WATCH */
		struct nf_hook_ops nfo;	/* STP_PROBE_NETFILTER */
		struct stp_uprobe upr;	/* STP_PROBE_UPROBE, _URETPROBE */
		struct stp_procev pev;	/* STP_PROBE_PROCESS */
	};
	struct stp_session *sess;
	u32 index;		/* into the image's PROBES */
	u32 handler;		/* into the image's HANDLERS */
	u8 kind;		/* enum stp_probe_kind */
	bool optional;		/* STP_PROBE_F_OPTIONAL */
	bool overload;		/* hits count against the overload breaker */
	bool armed;
	bool upr_held;		/* upr.path to put (uprobes.c) */
	bool profile;		/* STP_PROBE_F_PROFILE: pevents, not timer */
	/* profile, PERF: nr_cpu_ids, NULL offline; a task's event in [0] */
	struct perf_event **pevents;
	ktime_t period;		/* timers */
	u64 rnd_ns;		/* timers: randomize, <= period (abi.h) */
	char symbol[STP_MAX_SYMBOL_LEN + 1];	/* kprobes, NUL-terminated */
};

struct stp_session {
	struct mutex lock;	/* serialises INFO/START/STOP/... */
	u32 state;		/* enum stp_session_state, under lock */
	/*
	 * active: probe hits run their handler. Set before arming, cleared
	 * on exit() or a breaker and before disarming. Read with READ_ONCE
	 * in probe context; a stale true only lets one more hit run, which
	 * disarming (synchronize) then waits for.
	 */
	bool active;
	u32 exit_requested;	/* enum stp_exit_reason, set once; stp_request_stop */
	/*
	 * error: MAXERRORS or MAXSKIPPED exceeded (STP_STATE_ERROR); set
	 * once in any context by stp_request_error, never cleared. STOP
	 * reads it after disarming, when no handler can set it any more
	 * but the end handlers it then runs.
	 */
	u32 error;
	void *image;		/* owned; prog points into it */
	u32 image_size;
	struct stp_prog prog;
	s64 *globals;		/* prog.nglobals slots */
	/*
	 * Statistics: nr_cpu_ids copies of stat_stride bytes (>=
	 * prog.stat_bytes, cache-line aligned), one per CPU id, zeroed at
	 * LOAD; NULL without statistics. A CPU writes only its own copy.
	 */
	u8 *stats;
	u64 stat_stride;
	struct stp_map **maps;	/* prog.nmaps maps, each one vmalloc'd block */
	struct stp_cpu __percpu *cpu;
	u32 ring_pages;		/* data pages per ring, power of two */
	struct stp_probe *probes;	/* prog.nprobes entries */
	u32 narmed;		/* kprobes, kretprobes, timers armed */
	struct kprobe **kp_batch;	/* scratch for unregister_kprobes */
	struct kretprobe **rp_batch;	/* scratch for unregister_kretprobes */
	wait_queue_head_t wq;	/* pollers */
	struct irq_work wake_work;	/* wakes wq from probe context */
	/*
	 * Deadman (session.c): a look at the rings every second while
	 * RUNNING; dm_since is when records started waiting with no
	 * consumer_pos moving (0: not stalled).
	 */
	struct delayed_work deadman;
	u64 dm_since;
	struct stp_procfs *procfs;	/* procfs.c; NULL without such probes */
	/* ustack.c: prog.nusym_bins paths and inodes (NULL: not found) */
	struct path *ubin_paths;
	struct inode **ubin_inodes;
};

/* session.c */
extern const struct file_operations stp_session_fops;
struct stp_session *stp_session_create(void *image, u32 size,
				       const struct stp_prog *prog);
void stp_session_destroy(struct stp_session *s);
void stp_request_stop(struct stp_session *s, u32 reason, bool error);
void stp_request_exit(struct stp_session *s);
void stp_request_error(struct stp_session *s);
void stp_deadman_start(struct stp_session *s);
int stp_copy_args(void *dst, u32 ksize, u32 min_size,
		  const void __user *uarg);

/* probes.c */
int stp_probes_init(struct stp_session *s);
int stp_probes_start(struct stp_session *s, u32 *failed_probe);
void stp_probes_disarm(struct stp_session *s);
void stp_probes_run_end(struct stp_session *s);
void stp_probes_run_error(struct stp_session *s);
u64 stp_probes_missed(struct stp_session *s);
void stp_probe_stat(struct stp_session *s, u32 i, struct stp_probe_stat *st);

bool stp_probe_run_value(struct stp_session *s, u32 i, struct stp_kvalue *v);
void stp_probe_run_nf(struct stp_probe *p, struct pt_regs *regs,
		      s64 *verdict);
void stp_probe_run_regs(struct stp_probe *p, struct pt_regs *regs);

/* netfilter.c */
int stp_nf_arm(struct stp_probe *p);
void stp_nf_disarm(struct stp_probe *p);

/* uprobes.c */
int stp_uprobe_arm(struct stp_probe *p);
bool stp_current_runs(struct inode *exe);
int stp_uprobe_lookup(const struct stp_prog *prog, u32 str,
		      struct path *path);
struct tracepoint *stp_tracepoint_find(const char *name);
/* The kinds procevents.c arms: process events and process syscalls. */
static inline bool stp_kind_procev(u8 kind)
{
	return kind == STP_PROBE_PROCESS || kind == STP_PROBE_PSYSCALL ||
	       kind == STP_PROBE_PSYSCALL_RETURN;
}

int stp_procev_arm(struct stp_probe *p);
u32 stp_procev_disarm(struct stp_probe *p);
void stp_procev_release(struct stp_probe *p);
u64 stp_procev_missed(struct stp_probe *p);
void stp_uprobe_disarm(struct stp_probe *p);
void stp_uprobe_disarm_sync(struct stp_session *s);

/* ustack.c */
int stp_usyms_init(struct stp_session *s);
void stp_usyms_free(struct stp_session *s);

/* procfs.c */
int stp_procfs_module_init(void);
void stp_procfs_module_exit(void);
int stp_procfs_init(struct stp_session *s);
int stp_procfs_arm(struct stp_session *s, u32 *failed_probe);
void stp_procfs_disarm(struct stp_session *s);
void stp_procfs_free(struct stp_session *s);
const char *stp_procfs_dirname(struct stp_session *s);
long stp_procfs_input(struct stp_session *s, void __user *uarg);

/* rings.c */
int stp_rings_alloc(struct stp_session *s);
void stp_rings_free(struct stp_session *s);
int stp_rings_mmap(struct stp_session *s, struct vm_area_struct *vma);
bool stp_rings_pending(struct stp_session *s);
u64 stp_rings_dropped(struct stp_session *s);

static inline u32 stp_ring_stride_pages(const struct stp_session *s)
{
	return 2 + 2 * s->ring_pages;
}

#endif /* STAPVM_SESSION_H */
