/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vm_int.h - what the interpreter (vm.c) uses of its helpers: the string
 * instructions' work (vm_str.c) and the statistics' merge and extraction
 * (vm_stat.c), plus the small pieces all three share. Internal to the core
 * (stp_core.h has the public part).
 *
 * The per-hit path of `<<<` (stat_add and what it calls) is static inline
 * here rather than in vm_stat.c, so STADD and MSTADD cost no call, as when
 * it all was one file; so are the one-line utilities.
 *
 * Every function here trusts what verify.c proved about the program, as
 * vm.c does, and says which fact it relies on. Context: any (the callers
 * run in stp_run(): no sleep, no allocation, bounded loops).
 */
#ifndef STP_VM_INT_H
#define STP_VM_INT_H

#include "stp_core.h"
#include "util.h"

/*
 * Address of string register i of the current frame (verify.c: i < nsregs
 * <= STP_MAX_SREGS); sregs and slen are the current frame's. Uses the
 * caller's sregs and vm.
 */
#define SREG(i)	(sregs + (u64)(i) * ((u64)vm->str_cap + 1))

static inline u32 min_u32(u32 a, u32 b)
{
	return a < b ? a : b;
}

/*
 * The width of the {KERNEL,USER}_{LONG,INT,SHORT,CHAR} helpers' reads
 * (helpers.h), in bytes.
 */
static inline u32 int_read_size(s32 helper)
{
	switch (helper) {
	case STP_HLP_KERNEL_INT:
	case STP_HLP_USER_INT:
		return 4;
	case STP_HLP_KERNEL_SHORT:
	case STP_HLP_USER_SHORT:
		return 2;
	case STP_HLP_KERNEL_CHAR:
	case STP_HLP_USER_CHAR:
		return 1;
	default:
		return 8;
	}
}

/*
 * A signed integer of n (1, 2, 4 or 8) bytes at addr, read fault-safely
 * from kernel or user memory and sign-extended into *v; nonzero (and *v
 * untouched) on a fault.
 */
static inline int read_signed(void *env, bool user, u64 addr, u32 n, u64 *v)
{
	union {
		s64 l;
		s32 i;
		s16 s;
		s8 c;
	} u;
	int err = user ? stp_env_read_user(env, &u, addr, n) :
			 stp_env_read_kernel(env, &u, addr, n);

	if (err)
		return err;
	switch (n) {
	case 4:
		*v = (u64)(s64)u.i;
		break;
	case 2:
		*v = (u64)(s64)u.s;
		break;
	case 1:
		*v = (u64)(s64)u.c;
		break;
	default:
		*v = (u64)u.l;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Strings (vm_str.c)                                                  */

/*
 * Copies a NUL-terminated string from kernel or user memory into dst (at
 * most cap bytes), one nofault read per page so that bytes after the NUL on
 * a following, maybe unmapped, page are never touched. On a fault, *fault
 * is the address of the chunk that failed.
 */
int stp_copy_string(void *env, bool user, char *dst, u32 cap, u64 addr,
		    u32 *len, u64 *fault);

/*
 * USER_STRING_OK (helpers.h): 1 when stp_copy_string(user) of addr would not
 * fault, else 0. Reads the same pages in pieces of a small buffer; each
 * iteration reads >= 1 byte, so at most cap iterations.
 */
u64 stp_user_string_ok(void *env, u32 cap, u64 addr);

/*
 * SPRINTF: formats the text of f (verify.c: it has one) with r[rb..] and
 * s[sc..] into dst (str_cap + 1 bytes; verify.c: dst is not one of the
 * arguments). Returns the length, cut at cap.
 */
u32 stp_do_sprintf(struct stp_vm *vm, const struct stp_prog *p,
		   const u64 *r, const u32 *slen, char *sregs,
		   const struct stp_format_desc *f, u32 rb, u32 sc,
		   char *dst, u32 cap);

/* Index of the first occurrence of needle in hay, or -1. */
s64 stp_find_str(const char *hay, u32 hl, const char *needle, u32 nl);

/* The kernel's simple_strtol on a counted string (opcodes.h: STOL). */
s64 stp_str_tol(const char *s, u32 n, u64 base);

/* str_replace into dst (cap bytes at most); dst is none of the sources. */
u32 stp_str_repl(const char *s, u32 sl, const char *from, u32 fl,
		 const char *to, u32 tl, char *dst, u32 cap);

/*
 * STEXTN (opcodes.h): stap's _stp_text_str of s (sl bytes) into dst, at
 * most cap bytes (cap >= 15: MAXSTRINGLEN >= 16); dst is not s.
 */
u32 stp_text_strn(const char *s, u32 sl, char *dst, u32 cap, s64 len,
		  bool quoted);

/*
 * STOK (opcodes.h): stap's tokenize on this CPU's tokenizer; the token
 * into dst (cap bytes). s may be dst: it is copied before dst is written.
 */
u32 stp_tokenize(struct stp_vm *vm, const char *s, u32 sl,
		 const char *delim, u32 dl, char *dst, u32 cap);

/*
 * The message a catch receives (opcodes.h, TRY): stap's text of err with
 * %llx / %llu / %lld replaced by addr (%lld: as a signed number), or error(msg)'s text; at most cap bytes
 * at dst (which may overlap msg: memmove). Returns the length.
 */
u32 stp_catch_message(char *dst, u32 cap, u32 err, u64 addr,
		      const char *msg, u32 msg_len);

/*
 * REMATCH: walk the DFA of @d over the @len bytes of @str (opcodes.h).
 * verify.c (check_regexes) proved start and every entry < nstates, every
 * class < nclasses - 1 and the rows inside REGEXDATA, so each index below
 * is in range. At most len + 1 <= MAXSTRINGLEN steps.
 */
u64 stp_regex_match(const struct stp_prog *p,
		    const struct stp_regex_desc *d, const u8 *str, u32 len);

/*
 * REMATCHS's group pass (opcodes.h): run group program @d (verified by
 * check_regex_sub: every target, slot and set in range, pc + 1 inside)
 * over the @len bytes of @str (len <= rx's str_cap) and record the match,
 * or "failed", in @rx. Takes one unit of *@fuel per position: at most
 * len + 1 positions, each with at most ninsn closure steps per list.
 * Return: 0, or -1 when the fuel ran out (rx then says "failed").
 */
int stp_regex_groups(const struct stp_prog *p, const struct stp_regex_sub *d,
		     struct stp_rx_state *rx, const u8 *str, u32 len,
		     u64 *fuel);

/*
 * MATCHED: group @n of rx's match into @dst (at most @cap bytes).
 * Return: the length, or -STP_RTE_SUBEXP_FAILED / -STP_RTE_SUBEXP_RANGE.
 */
int stp_regex_group(const struct stp_rx_state *rx, s64 n, char *dst,
		    u32 cap);

/*
 * PRETTY (opcodes.h; vm_pretty.c): value v printed as type node `node`
 * (nested aggregates expanded when full) into dst, at most cap bytes,
 * *len its length. raw and quoted are two scratch strings of cap bytes,
 * none of them dst. Charges *fuel one unit per node printed.
 * Return: STP_RTE_NONE, or STP_RTE_MAXACTION when the fuel ran out.
 */
u32 stp_pretty(void *env, const struct stp_prog *p, u64 v, u64 node,
	       bool full, char *dst, u32 cap, char *raw, char *quoted,
	       u64 *fuel, u32 *len);

/* ------------------------------------------------------------------ */
/* Statistics (vm_stat.c; the per-hit path inline below)               */

/* The merged scalars of a statistic (stap's _stp_stat_get). */
struct stat_merged {
	s64 count;
	s64 sum;
	s64 min;
	s64 max;
	s64 variance;
};

/*
 * STHISTS, MSTHISTS: the merged buckets of a statistic (copy slot: 0 for
 * a scalar, the entry's slot of a statistics array) for stp_format_hist.
 */
struct hist_ctx {
	const struct stp_stat_area *a;
	const struct stp_stat_desc *d;
	u32 slot;
};

/*
 * Copy of statistic d for CPU id cpu (< area->ncpus, checked at entry);
 * slot is the entry slot of a statistics array (< its capacity), else 0.
 */
static inline struct stp_stat_cpu *
stat_at(const struct stp_stat_area *a, const struct stp_stat_desc *d, u32 cpu,
	u32 slot)
{
	/*
	 * verify.c: offset + size <= stat_bytes <= stride; an array's
	 * statistic: offset + capacity * size <= stat_bytes.
	 */
	return (struct stp_stat_cpu *)(a->base + (u64)cpu * a->stride +
				       d->offset +
				       (u64)slot * stp_stat_size(d));
}

/* stap's _stp_div64 without the error: 0 for y == 0, -x for y == -1. */
static inline s64 div64(s64 x, s64 y)
{
	if (!y)
		return 0;
	if (y == -1)
		return (s64)(0 - (u64)x);
	return x / y;
}

/*
 * Position of the highest set bit, 1-based: 1..64. x != 0, for which
 * __builtin_clzll is undefined (the kernel's own fls64 uses it too).
 */
static inline u32 fls64_nz(u64 x)
{
	return 64 - (u32)__builtin_clzll(x);
}

/* Bucket of v in a statistic's histogram (opcodes.h: STADD). */
static inline u32 hist_bucket(const struct stp_stat_desc *d, s64 v)
{
	u64 q;
	u32 n;

	if (d->hist == STP_HIST_LOG) {
		if (!v)
			return STP_HIST_LOG_BUCKETS / 2;
		if (v > 0)
			n = STP_HIST_LOG_BUCKETS / 2 + fls64_nz((u64)v);
		else
			n = STP_HIST_LOG_BUCKETS / 2 - fls64_nz(0 - (u64)v);
		/* n <= 64 + 63 and n >= 64 - 64 */
		return n;
	}
	/* LINEAR; verify.c: interval > 0, nbuckets >= 3 */
	v = (s64)((u64)v - (u64)(s64)d->start);
	if (v < 0)
		return 0;
	q = (u64)v / (u64)d->interval;
	return q >= d->nbuckets - 2 ? d->nbuckets - 1 : (u32)q + 1;
}

/*
 * s <<< v on this CPU's copy: one writer (the per-CPU guard); readers on
 * other CPUs read the fields once each, so stores are single and untorn.
 */
static inline void stat_add(struct stp_stat_cpu *sc,
			    const struct stp_stat_desc *d, s64 v)
{
	s64 *bk = (s64 *)(sc + 1);
	s64 n = sc->count;
	s64 vs = (s64)((u64)v << d->shift);	/* verify.c: shift <= 62 */

	if (!n) {
		STP_WRITE_ONCE(sc->sum, v);
		STP_WRITE_ONCE(sc->min, v);
		STP_WRITE_ONCE(sc->max, v);
		STP_WRITE_ONCE(sc->avg_s, vs);
		STP_WRITE_ONCE(sc->m2, 0);
	} else {
		STP_WRITE_ONCE(sc->sum, (s64)((u64)sc->sum + (u64)v));
		if (v > sc->max)
			STP_WRITE_ONCE(sc->max, v);
		if (v < sc->min)
			STP_WRITE_ONCE(sc->min, v);
		if (d->flags & STP_STAT_F_VARIANCE) {
			/* stap keeps delta in an int: the low 32 bits */
			s64 delta = (s32)(u32)((u64)vs - (u64)sc->avg_s);
			s64 avg = (s64)((u64)sc->avg_s +
					(u64)div64(delta, n + 1));
			s64 m2 = (s64)((u64)sc->m2 + (u64)delta *
				       ((u64)vs - (u64)avg));

			STP_WRITE_ONCE(sc->avg_s, avg);
			STP_WRITE_ONCE(sc->m2, m2);
			STP_WRITE_ONCE(sc->variance_s, div64(m2, n));
		}
	}
	STP_WRITE_ONCE(sc->count, n + 1);
	if (d->hist != STP_HIST_NONE) {
		u32 b = hist_bucket(d, v);	/* < nbuckets */

		STP_WRITE_ONCE(bk[b], bk[b] + 1);
	}
}

/*
 * Merges the copies of statistic d (slot: 0 for a scalar, the entry's
 * slot of a statistics array) over every CPU id into *m, as stap's
 * _stp_stat_get: count, sum, min, max; with variance, @variance too.
 */
void stp_stat_merge(const struct stp_stat_area *a,
		    const struct stp_stat_desc *d, u32 slot, bool variance,
		    struct stat_merged *m);

/*
 * Extractor x (STP_OP_STCOUNT .. STP_OP_STVAR; verify.c: MSTX names one)
 * of merged scalars m, into *v. False, and *v untouched, for any but
 * @count and @sum of an empty statistic: stap's "empty aggregate".
 */
bool stp_stat_extract(const struct stat_merged *m, u32 x, u64 *v);

/*
 * Merges statistic d (entry slot of an array; no variance) into *m and
 * says whether it is empty: no sample on any CPU.
 */
bool stp_stat_empty(const struct stp_stat_area *a,
		    const struct stp_stat_desc *d, u32 slot,
		    struct stat_merged *m);

/* Bucket b of statistic d summed over CPUs. */
s64 stp_stat_bucket(const struct stp_stat_area *a,
		    const struct stp_stat_desc *d, u32 slot, u32 b);

/* stp_format_hist's bucket callback over a struct hist_ctx. */
s64 stp_hist_ctx_bucket(const void *ctx, u32 i);

#endif /* STP_VM_INT_H */
