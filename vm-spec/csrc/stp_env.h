/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * stp_env.h (user space) - the environment of the stapvm C core when it is
 * built into vm-spec's static library: libc types and string functions,
 * GCC atomics, and a simulated "current task" and memory (struct
 * stp_host_env) so tests and `check`-style runs can execute begin, end and
 * timer handlers, and kprobe handlers against made-up memory, without a
 * kernel.
 *
 * It implements the checklist at the top of kmod/core/stp_core.h; the
 * kernel's version is kmod/stp_env.h.
 *
 * Left out: real task identity and real memory. Every "current" value comes
 * from the struct stp_host_env the caller passes as env.
 * Context: single-threaded tests; the atomics are real, so concurrent runs
 * on distinct vms are also fine.
 */
#ifndef STP_ENV_H
#define STP_ENV_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>
#include <errno.h>
#include <time.h>

#include <linux/types.h>

/* The kernel's names, and the same types as abi.h's __u64 and friends. */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;

/* The kernel's: elements of an array (not a pointer). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* abi.h's, which stp_core.h includes before the core expands this */
#define STP_ENV_PAGE_SIZE STP_HOST_PAGE_SIZE

#define STP_READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define STP_WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

static inline u64 stp_load_acquire_u64(const u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void stp_store_release_u64(u64 *p, u64 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void stp_env_mb(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline s64 stp_env_atomic_add_return(s64 *p, s64 v)
{
	/* Wrapping add: done on the unsigned view to avoid UB. */
	return (s64)__atomic_add_fetch((u64 *)p, (u64)v, __ATOMIC_SEQ_CST);
}

/* One readable range of simulated memory (kernel and user alike). */
struct stp_host_mem {
	u64 addr;
	u64 len;
	const u8 *data;
};

/*
 * The simulated current task, passed as stp_run_ctx.env. time_ns is the
 * record clock: when non-zero it is used and then incremented by one per
 * call, so records are ordered and tests are deterministic; when zero the
 * host's CLOCK_MONOTONIC is used. wakeups counts stp_env_ring_wakeup calls
 * on rings whose owner points at it.
 */
struct stp_host_env {
	s64 pid;
	s64 tid;
	s64 ppid;
	s64 uid;
	s64 euid;
	s64 gid;
	s64 cpu;
	s64 jiffies;
	s64 retval;
	s64 args[6];
	u64 wall_ns;
	u64 time_ns;
	const char *comm;
	u32 comm_len;
	u32 nmem;
	const struct stp_host_mem *mem;
	u64 ip;			/* ADDR */
	s64 user_mode;		/* USER_MODE */
	const char *pcomm;	/* PEXECNAME */
	u32 pcomm_len;
	u32 nstack;		/* BACKTRACE: frames at stack */
	const u64 *stack;
	u64 task;		/* TASK_CURRENT */
	s64 egid;		/* EGID */
	s64 hz;			/* HZ */
	u64 cycles;		/* GET_CYCLES */
	u64 online_mask;	/* CPU_ONLINE: bit c for CPU c < 64 (and cpu) */
	u32 random;		/* RANDOM's pseudo-random number */
	char *value;		/* VALUE: $value, value_len of value_cap bytes */
	u32 value_len;
	u32 value_cap;		/* VALUE_SET / VALUE_APPEND grow it up to this */
	s64 verdict;		/* VERDICT / VERDICT_SET: a netfilter verdict */
};

#define STP_HOST_ENV(env) ((struct stp_host_env *)(env))

static inline u64 stp_env_time_ns(void *env)
{
	struct stp_host_env *e = STP_HOST_ENV(env);
	struct timespec ts;

	if (e && e->time_ns)
		return e->time_ns++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static inline u64 stp_env_wall_ns(void *env)
{
	return STP_HOST_ENV(env)->wall_ns;
}

static inline s64 stp_env_pid(void *env) { return STP_HOST_ENV(env)->pid; }
static inline s64 stp_env_tid(void *env) { return STP_HOST_ENV(env)->tid; }
static inline s64 stp_env_ppid(void *env) { return STP_HOST_ENV(env)->ppid; }
static inline s64 stp_env_uid(void *env) { return STP_HOST_ENV(env)->uid; }
static inline s64 stp_env_euid(void *env) { return STP_HOST_ENV(env)->euid; }
static inline s64 stp_env_gid(void *env) { return STP_HOST_ENV(env)->gid; }
static inline s64 stp_env_cpu(void *env) { return STP_HOST_ENV(env)->cpu; }
static inline u64 stp_env_task(void *env) { return STP_HOST_ENV(env)->task; }
/* No mm in the host environment: MM_ARG is always 0 (helpers.h). */
static inline u64 stp_env_mm_arg(void *env, bool end) { return 0; }
static inline s64 stp_env_jiffies(void *env)
{
	return STP_HOST_ENV(env)->jiffies;
}
static inline s64 stp_env_egid(void *env) { return STP_HOST_ENV(env)->egid; }
static inline s64 stp_env_hz(void *env) { return STP_HOST_ENV(env)->hz; }
static inline u64 stp_env_cycles(void *env)
{
	return STP_HOST_ENV(env)->cycles;
}
/* The environment's cpu, and CPU c < 64 when bit c of online_mask is set. */
static inline u64 stp_env_cpu_online(void *env, s64 cpu)
{
	struct stp_host_env *e = STP_HOST_ENV(env);

	return cpu == e->cpu ||
	       (cpu >= 0 && cpu < 64 && (e->online_mask >> cpu) & 1);
}
static inline u32 stp_env_random_u32(void *env)
{
	return STP_HOST_ENV(env)->random;
}
static inline s64 stp_env_retval(void *env)
{
	return STP_HOST_ENV(env)->retval;
}

static inline s64 stp_env_arg(void *env, u32 n)
{
	return n < 6 ? STP_HOST_ENV(env)->args[n] : 0;
}

#include <stdio.h>
#include "stapvm/abi.h"	/* STP_MAX_BACKTRACE */

static inline u64 stp_env_addr(void *env) { return STP_HOST_ENV(env)->ip; }

static inline s64 stp_env_user_mode(void *env)
{
	return STP_HOST_ENV(env)->user_mode != 0;
}

/* No symbols in user space: SYMNAME and SYMDATA give 0x<hex>. */
static inline u32 stp_env_symbol(void *env, u64 addr, bool data, char *buf,
				 u32 max)
{
	char one[24];
	u32 n = (u32)snprintf(one, sizeof(one), "0x%llx",
			      (unsigned long long)addr);

	if (n > max)
		n = max;
	memcpy(buf, one, n);
	return n;
}

/* A simulated comm (len bytes, or NULL) cut at max and at a NUL. */
static inline u32 stp_host_comm_out(const char *comm, u32 len, char *buf,
				    u32 max)
{
	u32 n = len < max ? len : max;
	const char *nul;

	if (!comm)
		return 0;
	nul = memchr(comm, 0, n);
	if (nul)
		n = (u32)(nul - comm);
	memcpy(buf, comm, n);
	return n;
}

static inline u32 stp_env_pcomm(void *env, char *buf, u32 max)
{
	struct stp_host_env *e = STP_HOST_ENV(env);

	return stp_host_comm_out(e->pcomm, e->pcomm_len, buf, max);
}

/* BACKTRACE of the frames the test gives, as the kernel formats them. */
static inline u32 stp_env_backtrace(void *env, char *buf, u32 max)
{
	struct stp_host_env *e = STP_HOST_ENV(env);
	u32 i, len = 0;

	for (i = 0; i < e->nstack && i < STP_MAX_BACKTRACE; i++) {
		char one[24];
		u32 m = (u32)snprintf(one, sizeof(one), "%s0x%llx",
				      len ? " " : "",
				      (unsigned long long)e->stack[i]);

		if (len + m > max)
			break;
		memcpy(buf + len, one, m);
		len += m;
	}
	return len;
}

static inline u32 stp_env_comm(void *env, char *buf, u32 max)
{
	struct stp_host_env *e = STP_HOST_ENV(env);

	return stp_host_comm_out(e->comm, e->comm_len, buf, max);
}

/* Copy [addr, addr + n) if one simulated range holds all of it. */
static inline int stp_host_read(void *env, void *dst, u64 addr, u32 n)
{
	struct stp_host_env *e = STP_HOST_ENV(env);
	u32 i;

	for (i = 0; i < e->nmem; i++) {
		const struct stp_host_mem *m = &e->mem[i];

		if (addr >= m->addr && addr - m->addr <= m->len &&
		    n <= m->len - (addr - m->addr)) {
			memcpy(dst, m->data + (addr - m->addr), n);
			return 0;
		}
	}
	return -EFAULT;
}

static inline int stp_env_read_kernel(void *env, void *dst, u64 addr, u32 n)
{
	return stp_host_read(env, dst, addr, n);
}

static inline int stp_env_read_user(void *env, void *dst, u64 addr, u32 n)
{
	return stp_host_read(env, dst, addr, n);
}

struct stp_ring;
/* User space: owner, if set, points at a u64 counter of wakeups. */
static inline void stp_env_ring_wakeup_counter(void *owner)
{
	if (owner)
		__atomic_add_fetch((u64 *)owner, 1, __ATOMIC_RELAXED);
}
#define stp_env_ring_wakeup(r) stp_env_ring_wakeup_counter((r)->owner)

/* Test hook (csrc/host.c): the next n allocations of this thread fail. */
extern _Thread_local u32 stp_host_failing_allocs;
void stp_host_fail_next_allocs(u32 n);

static inline void *stp_env_zalloc(u64 size)
{
	if (stp_host_failing_allocs) {
		stp_host_failing_allocs--;
		return NULL;
	}
	return calloc(1, size ? (size_t)size : 1);
}

static inline void stp_env_free(void *p)
{
	free(p);
}

/* Map locks: a spin flag (tests may run sessions on several threads). */
typedef u32 stp_env_map_lock_t;

static inline void stp_env_map_lock_init(stp_env_map_lock_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELAXED);
}

static inline bool stp_env_map_trylock(stp_env_map_lock_t *l,
				       unsigned long *flags)
{
	*flags = 0;
	return !__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE);
}

static inline void stp_env_map_unlock(stp_env_map_lock_t *l,
				      unsigned long flags)
{
	(void)flags;
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static inline void stp_env_cpu_relax(void)
{
}

/*
 * REGISTER from the environment's values, at their x86-64 pt_regs word
 * index: r9 r8 (8, 9) = args[5], args[4]; ax (10) = retval; cx dx si di
 * (11 .. 14) = args[3] .. args[0]; ip (16); every other word 0.
 */
static inline u64 stp_env_register(void *env, u64 idx)
{
	struct stp_host_env *e = STP_HOST_ENV(env);

	switch (idx) {
	case 8: return (u64)e->args[5];
	case 9: return (u64)e->args[4];
	case 10: return (u64)e->retval;
	case 11: return (u64)e->args[3];
	case 12: return (u64)e->args[2];
	case 13: return (u64)e->args[1];
	case 14: return (u64)e->args[0];
	case 16: return e->ip;
	default: return 0;
	}
}

/* UADDR: ADDR's value in user mode, else 0 (no saved user registers). */
static inline u64 stp_env_uaddr(void *env)
{
	struct stp_host_env *e = STP_HOST_ENV(env);

	return e->user_mode ? e->ip : 0;
}

/* PID2TASK: the task (TASK_CURRENT's value) of the one thread, tid. */
static inline u64 stp_env_pid2task(void *env, s64 nr)
{
	struct stp_host_env *e = STP_HOST_ENV(env);

	return nr > 0 && nr == e->tid ? e->task : 0;
}

/* UBACKTRACE: the frames the test gives, as BACKTRACE. */
static inline u32 stp_env_ubacktrace(void *env, char *buf, u32 max)
{
	return stp_env_backtrace(env, buf, max);
}

/*
 * USYMNAME .. UMODNAME: no user symbols in user space, so the forms of an
 * unknown address (helpers.h): 0x<hex>, " 0x<hex>\n" for USYMFULL,
 * "0x<hex>\n" for USYMBRIEF and USYMSIMPLE, nothing for UMODNAME.
 */
static inline u32 stp_env_usym(void *env, u64 addr, u32 helper, char *buf,
			       u32 max)
{
	char one[32];
	u32 n;

	if (helper == STP_HLP_UMODNAME)
		return 0;
	n = (u32)snprintf(one, sizeof(one), "%s0x%llx%s",
			  helper == STP_HLP_USYMFULL ? " " : "",
			  (unsigned long long)addr,
			  helper == STP_HLP_USYMFULL ||
			  helper == STP_HLP_USYMBRIEF ||
			  helper == STP_HLP_USYMSIMPLE ? "\n" : "");
	if (n > max)
		n = max;
	memcpy(buf, one, n);
	return n;
}

/* MODNAME: no symbols in user space, so never known (0 bytes). */
static inline u32 stp_env_modname(void *env, u64 addr, char *buf, u32 max)
{
	return 0;
}

/* $value: the bytes the test environment gives (NULL: none). */
static inline u32 stp_env_value(void *env, char *dst, u32 max)
{
	struct stp_host_env *e = STP_HOST_ENV(env);
	u32 n = e->value_len < max ? e->value_len : max;

	if (!e->value)
		return 0;
	memcpy(dst, e->value, n);
	return n;
}

static inline s64 stp_env_value_set(void *env, const char *src, u32 len,
				    bool append)
{
	struct stp_host_env *e = STP_HOST_ENV(env);
	u32 at, n;

	if (!e->value)
		return 0;
	at = append ? e->value_len : 0;
	n = len < e->value_cap - at ? len : e->value_cap - at;
	memcpy(e->value + at, src, n);
	e->value_len = at + n;
	return e->value_len;
}

/* $verdict of a netfilter probe: the test environment's. */
static inline s64 stp_env_verdict(void *env)
{
	return STP_HOST_ENV(env)->verdict;
}

static inline void stp_env_verdict_set(void *env, s64 v)
{
	STP_HOST_ENV(env)->verdict = v;
}

#endif /* STP_ENV_H */
