// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vm.c - the stapvm interpreter: runs one handler of a verified program
 * over the caller's per-CPU registers and writes its output as records into
 * the caller's per-CPU ring.
 *
 * Dispatch is computed goto over a 256-slot table built from the
 * STP_OPCODES X-macro; slots without an opcode go to op_BADOP, which ends
 * the handler with STP_RTE_BADOP instead of trusting a verifier bug. Each
 * instruction is loaded once into a local copy and its fields are used as
 * they are: there are no bounds checks here beyond what verify.c proved,
 * and every unchecked access names the rule it relies on
 * ("verify.c: ..."). Integer arithmetic is done on u64 so that overflow
 * wraps instead of being undefined.
 *
 * Strings live in string registers of MAXSTRINGLEN + 1 bytes (length plus
 * bytes, no NUL kept) but hold at most MAXSTRINGLEN - 1 bytes, as stap's
 * MAXSTRINGLEN counts the terminating NUL; concatenation and copies from
 * memory are cut there silently, as stap does.
 *
 * User functions run on frames the caller allocated (vm->frames): a call
 * switches the register pointers (r, slen, sregs) to the next frame's and
 * the code pointer to the callee's handler; a return switches back. The
 * handler's own registers are level 0 (vm->r, vm->slen, vm->sbuf).
 *
 * Statistics: STADD writes the running CPU's copy (rc->stats.cpu), the
 * extractors merge the copies of every CPU id (rc->stats), see opcodes.h.
 *
 * This file is the dispatch loop and the records it writes (PRINTF, EXIT,
 * errors, histograms). The work of the string instructions is in
 * vm_str.c, the statistics' merge and extraction in vm_stat.c; vm_int.h
 * declares them and holds, static inline, what every hit may run (the
 * `<<<` update, SREG, the small utilities).
 *
 * Associative arrays: map instructions run map.c under the map's lock
 * (rc->maps), foreach iterators live in rc->iters (this CPU's); a lock not
 * taken in MAXTRYLOCK attempts ends the run as skipped (rc->skipped).
 *
 * Left out: nesting and
 * reentrancy of probe hits (the caller's per-CPU guard); MAXERRORS (the
 * caller counts the errors stp_run returns).
 *
 * Context: any, once the caller holds the per-CPU nesting guard for vm and
 * rc->ring. Never sleeps, never allocates; runs at most
 * (MAXACTION + 1) * (MAXNESTING + 1) * (longest handler) instructions:
 * only LOOP jumps backwards and only LOOP and FCALL* enter code again, and
 * each charges one unit of fuel; returns only pop frames.
 */
#include "vm_int.h"
#include "map_int.h"

/*
 * Room for a record of len bytes (header included, a multiple of 8) with
 * its header filled in, to be committed by the caller; NULL if there is
 * no ring or it is full (then the ring counts the drop).
 */
static inline struct stp_rec_hdr *rec_reserve(struct stp_run_ctx *rc,
					      u16 type, u16 id, u32 len)
{
	struct stp_rec_hdr *hdr;

	if (!rc->ring)
		return NULL;
	hdr = stp_ring_reserve(rc->ring, len);
	if (!hdr)
		return NULL;
	hdr->len = len;
	hdr->type = type;
	hdr->id = id;
	hdr->time_ns = stp_env_time_ns(rc->env);
	return hdr;
}

/* Writes a record with an optional payload; drops it if the ring is full. */
static void emit(struct stp_run_ctx *rc, u16 type, u16 id, const void *payload,
		 u32 plen)
{
	struct stp_rec_hdr *hdr;
	u32 len = (u32)sizeof(*hdr) + plen;

	hdr = rec_reserve(rc, type, id, len);
	if (!hdr)
		return;
	if (plen)
		memcpy(hdr + 1, payload, plen);
	stp_ring_commit(rc->ring, hdr, len);
}

/*
 * An STP_REC_ERROR record: struct stp_rec_error, then for STP_RTE_USER the
 * message (msg_len bytes, zero-padded to 8); dropped if the ring is full.
 */
static void emit_error(struct stp_run_ctx *rc, u32 err,
		       const struct stp_rec_error *er, const char *msg,
		       u32 msg_len)
{
	struct stp_rec_hdr *hdr;
	u32 len = (u32)(sizeof(*hdr) + sizeof(*er)) + stp_round8(msg_len);

	hdr = rec_reserve(rc, STP_REC_ERROR, (u16)err, len);
	if (!hdr)
		return;
	memcpy(hdr + 1, er, sizeof(*er));
	if (msg_len) {
		u8 *m = (u8 *)(hdr + 1) + sizeof(*er);

		memcpy(m, msg, msg_len);
		memset(m + msg_len, 0, stp_round8(msg_len) - msg_len);
	}
	stp_ring_commit(rc->ring, hdr, len);
}

/* PRINTF fmt, rb, sc: one record with the arguments in format order. */
static void emit_printf(struct stp_vm *vm, const u64 *r, const u32 *slen,
			char *sregs, struct stp_run_ctx *rc,
			const struct stp_format_desc *f, u32 fmt, u32 rb,
			u32 sc)
{
	struct stp_rec_hdr *hdr;
	u32 len = sizeof(*hdr), i, ri, si;
	u8 *p;

	/* verify.c: nargs <= STP_MAX_FMT_ARGS, runs inside the files. */
	for (i = 0, si = sc; i < f->nargs; i++) {
		if (f->str_mask & (1u << i))
			len += stp_round8(4 + slen[si++]);
		else
			len += 8;
	}
	/* verify.c: fmt < STP_MAX_FORMATS <= 2^16 */
	hdr = rec_reserve(rc, STP_REC_PRINTF, (u16)fmt, len);
	if (!hdr)
		return;
	p = (u8 *)(hdr + 1);
	for (i = 0, ri = rb, si = sc; i < f->nargs; i++) {
		if (f->str_mask & (1u << i)) {
			u32 n = slen[si];
			u32 padded = stp_round8(4 + n);

			memcpy(p, &n, 4);
			memcpy(p + 4, SREG(si), n);
			memset(p + 4 + n, 0, padded - 4 - n);
			p += padded;
			si++;
		} else {
			memcpy(p, &r[ri], 8);
			p += 8;
			ri++;
		}
	}
	stp_ring_commit(rc->ring, hdr, len);
}

/*
 * SYSTEM: an STP_REC_SYSTEM record with the command (n <= MAXSTRINGLEN - 1
 * bytes, a string register's), dropped if the ring is full; user space
 * runs it.
 */
static void emit_system(struct stp_run_ctx *rc, const char *cmd, u32 n)
{
	struct stp_rec_hdr *hdr;
	u32 padded = stp_round8(4 + n);
	u32 len = (u32)sizeof(*hdr) + padded;
	u8 *p;

	hdr = rec_reserve(rc, STP_REC_SYSTEM, 0, len);
	if (!hdr)
		return;
	p = (u8 *)(hdr + 1);
	memcpy(p, &n, 4);
	memcpy(p + 4, cmd, n);
	memset(p + 4 + n, 0, padded - 4 - n);
	stp_ring_commit(rc->ring, hdr, len);
}

/* ------------------------------------------------------------------ */
/* Statistics records                                                  */

/*
 * STHIST: an STP_REC_HIST record with the merged buckets (dropped if the
 * ring is full). The caller checked that the statistic is not empty.
 */
static void emit_hist(struct stp_run_ctx *rc, const struct stp_stat_desc *d,
		      u32 idx, u32 slot)
{
	struct stp_rec_hdr *hdr;
	struct stp_rec_hist *h;
	s64 *bk;
	u32 len, b;

	/* verify.c: nbuckets <= STP_HIST_LOG_BUCKETS, STP_HIST_MAX_BUCKETS */
	len = (u32)(sizeof(*hdr) + sizeof(*h)) + d->nbuckets * 8;
	/* verify.c: idx < STP_MAX_STATS <= 2^16 */
	hdr = rec_reserve(rc, STP_REC_HIST, (u16)idx, len);
	if (!hdr)
		return;
	h = (struct stp_rec_hist *)(hdr + 1);
	memset(h, 0, sizeof(*h));
	h->hist = d->hist;
	h->nbuckets = d->nbuckets;
	h->start = d->start;
	h->stop = d->stop;
	h->interval = d->interval;
	bk = (s64 *)(h + 1);
	for (b = 0; b < d->nbuckets; b++)
		bk[b] = stp_stat_bucket(&rc->stats, d, slot, b);
	stp_ring_commit(rc->ring, hdr, len);
}

/* ------------------------------------------------------------------ */
/* Associative arrays                                                  */

/* The key tuple of a map instruction: r[b..] longs, s[c..] strings. */
static void map_key(const struct stp_map *m, const u64 *r, const u32 *slen,
		    const char *sregs, u64 stride, u32 b, u32 c,
		    struct stp_map_key *k)
{
	u32 i;

	/* verify.c: b + nlong <= nregs, c + nstr <= nsregs (key runs) */
	k->lk = r + b;
	for (i = 0; i < m->nstr; i++) {		/* <= STP_MAX_MAP_KEYS */
		k->sk[i] = sregs + (u64)(c + i) * stride;
		k->sl[i] = slen[c + i];
	}
}

/*
 * Takes m's lock in at most tries attempts (MAXTRYLOCK, >= 1). Only
 * another CPU can hold it (the caller's per-CPU guard keeps hits on this
 * CPU from nesting), for one map instruction with interrupts off, so the
 * wait cannot deadlock: the holder is running, or its vCPU was
 * descheduled by a hypervisor (under TCG for tens of milliseconds).
 * stap polls once per attempt, TRYLOCKDELAY apart (1 ms for its default
 * 100), which a descheduled holder outlasts: a hot map on four vCPUs
 * skipped hits. Here attempt i polls 2^(i-1) times, at most
 * 2^MAP_LOCK_MAX_SHIFT, each after stp_env_cpu_relax(): the first attempts
 * are stap's, and 100 of them poll for up to about 0.9 s in the kernel.
 * The cycles waited go to rc->lock_wait.
 */
#define MAP_LOCK_MAX_SHIFT	10u

static bool map_lock(struct stp_run_ctx *rc, struct stp_map *m, u32 tries,
		     unsigned long *flags)
{
	bool got = false;
	u32 i, j, polls;
	u64 t0;

	if (stp_env_map_trylock(&m->lock, flags))
		return true;
	t0 = stp_env_cycles(rc->env);
	for (i = 1; i < tries && !got; i++) {	/* tries <= MAXTRYLOCK's max */
		polls = 1u << (i - 1 < MAP_LOCK_MAX_SHIFT ? i - 1 :
			       MAP_LOCK_MAX_SHIFT);
		for (j = 0; j < polls && !got; j++) {	/* <= 1024 */
			stp_env_cpu_relax();
			got = stp_env_map_trylock(&m->lock, flags);
		}
	}
	rc->lock_wait += stp_env_cycles(rc->env) - t0;
	return got;
}

/* MOPR: x op y as the opcode op computes it (y != 0 for DIV, MOD). */
static u64 map_arith(u32 op, u64 x, u64 y)
{
	switch (op) {
	case STP_OP_ADD:
		return x + y;
	case STP_OP_SUB:
		return x - y;
	case STP_OP_MUL:
		return x * y;
	case STP_OP_DIV:
		return (s64)y == -1 ? 0 - x : (u64)((s64)x / (s64)y);
	case STP_OP_MOD:
		return (s64)y == -1 ? 0 : (u64)((s64)x % (s64)y);
	case STP_OP_AND:
		return x & y;
	case STP_OP_OR:
		return x | y;
	case STP_OP_XOR:
		return x ^ y;
	case STP_OP_SHL:
		return x << (y & 63);
	case STP_OP_SHR:
		return (u64)((s64)x >> (y & 63));
	}
	return x;		/* verify.c: MOP names one of the above */
}

/*
 * The environment may put the dispatch table in a special section (the
 * kernel's __annotate_jump_table, so objtool understands the indirect
 * jumps, as in kernel/bpf/core.c).
 */
#ifndef STP_ENV_JUMP_TABLE
#define STP_ENV_JUMP_TABLE
#endif

/* The table has 256 slots; the X-macro fills the defined ones. */
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winitializer-overrides"
#else
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#endif

/*
 * USDT argument n (1-based) of probe `probe`'s marker (helpers.h UARG;
 * the verifier checked the specs), 0 past the last; n == 0: how many.
 */
static u64 uarg(void *env, const struct stp_prog *p, u32 probe, u64 n)
{
	const struct stp_probe_desc *d;
	u64 a, v = 0, size;
	u32 reg;

	if (probe >= p->nprobes)
		return 0;
	d = &p->probes[probe];
	if (!n)
		return d->maxactive;
	if (n > d->maxactive)
		return 0;
	a = p->uargs[d->uargs + n - 1];
	size = (a >> STP_UARG_SIZE_SHIFT) & 0xf;
	reg = (u32)(a >> STP_UARG_REG_SHIFT) & 0xff;
	switch (a & STP_UARG_KIND_MASK) {
	case STP_UARG_CONST:
		v = (u64)(s64)(s32)(a >> STP_UARG_VALUE_SHIFT);
		break;
	case STP_UARG_REG:
		v = stp_env_register(env, reg);
		break;
	default:	/* STP_UARG_MEM: a fault reads 0 */
		if (read_signed(env, true, stp_env_register(env, reg) +
				(u64)(s64)(s32)(a >> STP_UARG_VALUE_SHIFT),
				(u32)size, &v))
			v = 0;
	}
	if (size < 8) {
		u32 sh = 64 - 8 * (u32)size;

		v = (a & STP_UARG_SIGNED) ? (u64)((s64)(v << sh) >> sh) :
					    (v << sh) >> sh;
	}
	return v;
}

int stp_run(struct stp_vm *vm, struct stp_run_ctx *rc)
{
#define STP_X_LABEL(name, a, b, c, imm, cost, doc) \
	[STP_OP_##name] = &&op_##name,
	static const void *const disp[256] STP_ENV_JUMP_TABLE = {
		[0 ... 255] = &&op_BADOP,
		STP_OPCODES(STP_X_LABEL)
	};
#undef STP_X_LABEL
	const struct stp_prog *p = rc->prog;
	/* The caller passes a verified program and a handler index of it. */
	const struct stp_handler_desc *h = &p->handlers[rc->handler];
	const struct stp_insn *code = p->code + h->insn_off;
	const struct stp_insn *ip = code;
	/*
	 * A string holds at most MAXSTRINGLEN - 1 bytes: stap counts the
	 * terminating NUL (verify.c: MAXSTRINGLEN >= 16, so cap >= 15).
	 */
	u32 cap = min_u32(vm->str_cap, p->limits[STP_LIM_MAXSTRINGLEN]) - 1;
	u64 fuel = p->limits[STP_LIM_MAXACTION];
	u64 *r = vm->r;
	u32 *slen = vm->slen;
	char *sregs = vm->sbuf;
	/* Function frames: nframes of them, string bytes after the array. */
	struct stp_frame *frames = vm->frames;
	u32 maxdepth = vm->frames ? min_u32(vm->nframes,
					     p->limits[STP_LIM_MAXNESTING]) : 0;
	u64 fsb = (stp_vm_sbuf_size(vm->str_cap) + 7) & ~7ull;
	char *fsbuf = frames ? (char *)(frames + vm->nframes) : NULL;
	u32 depth = 0;			/* active function frames */
	u32 hidx = rc->handler;		/* handler of the current frame */
	u32 cpc = 0;			/* this frame's armed catch pc + 1 */
	u8 creg = 0;			/* ... and its message register */
	s64 *g = rc->globals;
	void *env = rc->env;
	struct stp_rec_error er;
	struct stp_insn in;
	u32 err = STP_RTE_NONE;
	u64 addr = 0;
	const char *umsg = NULL;	/* STP_RTE_USER: the message */
	u32 umsg_len = 0;
	/* Statistics only with an area that holds every statistic. */
	const struct stp_stat_area *sa = &rc->stats;
	bool stats_ok = sa->base && sa->cpu < sa->ncpus &&
			sa->stride >= p->stat_bytes && !(sa->stride & 7);
	struct stat_merged sm;

	rc->exit_requested = 0;
	rc->error = STP_RTE_NONE;
	rc->error_pc = 0;
	rc->error_handler = rc->handler;
	rc->error_addr = 0;
	rc->skipped = 0;
	rc->lock_wait = 0;
	if (vm->rx)	/* every run starts with no match (opcodes.h) */
		vm->rx->result = 0;

/* Load the next instruction once and jump to its label. */
#define NEXT()	do { in = *ip++; goto *disp[in.op]; } while (0)
#define FAIL(code, a)	do { err = (code); addr = (a); goto fail; } while (0)

	/* verify.c: handlers are non-empty and end in RET. */
	NEXT();

op_NOP:
	NEXT();
op_MOV:		/* verify.c: a, b < nregs (OPND_RW, OPND_RR) */
	r[in.a] = r[in.b];
	NEXT();
op_LDI:
	r[in.a] = (u64)(s64)in.imm;
	NEXT();
op_LDK:		/* verify.c: imm < nkonsts (OPND_K) */
	r[in.a] = (u64)p->konsts[in.imm];
	NEXT();
op_ADD:
	r[in.a] = r[in.b] + r[in.c];
	NEXT();
op_SUB:
	r[in.a] = r[in.b] - r[in.c];
	NEXT();
op_MUL:
	r[in.a] = r[in.b] * r[in.c];
	NEXT();
op_DIV:
	if (!r[in.c])
		FAIL(STP_RTE_DIVZERO, 0);
	if ((s64)r[in.c] == -1)	/* INT64_MIN / -1 wraps to INT64_MIN */
		r[in.a] = 0 - r[in.b];
	else
		r[in.a] = (u64)((s64)r[in.b] / (s64)r[in.c]);
	NEXT();
op_MOD:
	if (!r[in.c])
		FAIL(STP_RTE_DIVZERO, 0);
	if ((s64)r[in.c] == -1)	/* x % -1 == 0, also for INT64_MIN */
		r[in.a] = 0;
	else
		r[in.a] = (u64)((s64)r[in.b] % (s64)r[in.c]);
	NEXT();
op_AND:
	r[in.a] = r[in.b] & r[in.c];
	NEXT();
op_OR:
	r[in.a] = r[in.b] | r[in.c];
	NEXT();
op_XOR:
	r[in.a] = r[in.b] ^ r[in.c];
	NEXT();
op_SHL:
	r[in.a] = r[in.b] << (r[in.c] & 63);
	NEXT();
op_SHR:		/* arithmetic: gcc and clang shift signed values so */
	r[in.a] = (u64)((s64)r[in.b] >> (r[in.c] & 63));
	NEXT();
op_ADDI:
	r[in.a] = r[in.b] + (u64)(s64)in.imm;
	NEXT();
op_NEG:
	r[in.a] = 0 - r[in.b];
	NEXT();
op_NOT:
	r[in.a] = ~r[in.b];
	NEXT();
op_LNOT:
	r[in.a] = r[in.b] == 0;
	NEXT();
op_EQ:
	r[in.a] = r[in.b] == r[in.c];
	NEXT();
op_NE:
	r[in.a] = r[in.b] != r[in.c];
	NEXT();
op_LT:
	r[in.a] = (s64)r[in.b] < (s64)r[in.c];
	NEXT();
op_LE:
	r[in.a] = (s64)r[in.b] <= (s64)r[in.c];
	NEXT();
op_GT:
	r[in.a] = (s64)r[in.b] > (s64)r[in.c];
	NEXT();
op_GE:
	r[in.a] = (s64)r[in.b] >= (s64)r[in.c];
	NEXT();
op_JMP:		/* verify.c: target < handler end (OPND_JF) */
	ip += in.imm;
	NEXT();
op_JZ:
	if (!r[in.a])
		ip += in.imm;
	NEXT();
op_JNZ:
	if (r[in.a])
		ip += in.imm;
	NEXT();
op_LOOP:	/* verify.c: imm < 0, target >= handler start (OPND_JB) */
	if (!fuel)
		FAIL(STP_RTE_MAXACTION, 0);
	fuel--;
	ip += in.imm;
	NEXT();
op_RET:
	if (depth)
		goto ret_pop;
	rc->fuel_left = fuel;
	return STP_RTE_NONE;
op_LDG:		/* verify.c: imm < nglobals (OPND_GLB) */
	r[in.a] = (u64)STP_READ_ONCE(g[in.imm]);
	NEXT();
op_STG:
	STP_WRITE_ONCE(g[in.imm], (s64)r[in.a]);
	NEXT();
op_GADD:
	r[in.a] = (u64)stp_env_atomic_add_return(&g[in.imm], (s64)r[in.b]);
	NEXT();
op_SMOV:	/* verify.c: a, b < nsregs (OPND_SW, OPND_SR) */
	if (in.a != in.b)
		memcpy(SREG(in.a), SREG(in.b), slen[in.b]);
	slen[in.a] = slen[in.b];
	NEXT();
op_SLDK: {	/* verify.c: imm < nstrs, inside STRDATA (OPND_STR) */
	const struct stp_str_desc *d = &p->strs[in.imm];
	u32 n = min_u32(d->len, cap);

	memcpy(SREG(in.a), p->strdata + d->off, n);
	slen[in.a] = n;
	NEXT();
}
op_SCAT: {
	u32 nb = slen[in.b];
	u32 nc = min_u32(slen[in.c], cap - nb);	/* nb <= cap */
	char *d = SREG(in.a);

	if (in.a == in.b) {
		/* d[nb..] from c; if c == a too, nc <= nb: no overlap */
		memcpy(d + nb, SREG(in.c), nc);
	} else if (in.a == in.c) {
		memmove(d + nb, d, nc);
		memcpy(d, SREG(in.b), nb);
	} else {
		memcpy(d, SREG(in.b), nb);
		memcpy(d + nb, SREG(in.c), nc);
	}
	slen[in.a] = nb + nc;
	NEXT();
}
op_SCMP: {
	const u8 *x = (const u8 *)SREG(in.b), *y = (const u8 *)SREG(in.c);
	u32 lx = slen[in.b], ly = slen[in.c];
	u32 n = min_u32(lx, ly), i;
	s64 res = 0;

	for (i = 0; i < n; i++) {	/* n <= cap */
		if (x[i] != y[i]) {
			res = x[i] < y[i] ? -1 : 1;
			break;
		}
	}
	if (!res && lx != ly)
		res = lx < ly ? -1 : 1;
	r[in.a] = (u64)res;
	NEXT();
}
op_SLEN:
	r[in.a] = slen[in.b];
	NEXT();
op_REMATCH:	/* verify.c: a < nregs, b < nsregs, imm < nregexes */
	r[in.a] = stp_regex_match(p, &p->regexes[in.imm],
				  (const u8 *)SREG(in.b), slen[in.b]);
	NEXT();
op_REMATCHS:	/* verify.c: as REMATCH; the regex has a group program */
	if (!vm->rx)
		goto op_BADOP;
	r[in.a] = stp_regex_match(p, &p->regexes[in.imm],
				  (const u8 *)SREG(in.b), slen[in.b]);
	vm->rx->result = 0;
	if (r[in.a] &&
	    stp_regex_groups(p, &p->rxsubs[in.imm], vm->rx,
			     (const u8 *)SREG(in.b),
			     min_u32(slen[in.b], vm->str_cap), &fuel))
		FAIL(STP_RTE_MAXACTION, 0);
	NEXT();
op_MATCHED: {	/* verify.c: a < nsregs, b < nregs */
	int n = stp_regex_group(vm->rx, (s64)r[in.b], SREG(in.a), cap);

	if (n < 0)
		FAIL((u32)-n, r[in.b]);
	slen[in.a] = (u32)n;
	NEXT();
}
op_NGROUPS:
	if (!vm->rx || !vm->rx->result)
		FAIL(STP_RTE_SUBEXP_COUNT, 0);
	r[in.a] = vm->rx->nslots / 2;
	NEXT();
op_CALLI:	/* verify.c: imm < STP_HLP__COUNT, INT result, context */
	switch (in.imm) {
	case STP_HLP_PID:
		r[in.a] = (u64)stp_env_pid(env);
		break;
	case STP_HLP_TID:
		r[in.a] = (u64)stp_env_tid(env);
		break;
	case STP_HLP_PPID:
		r[in.a] = (u64)stp_env_ppid(env);
		break;
	case STP_HLP_UID:
		r[in.a] = (u64)stp_env_uid(env);
		break;
	case STP_HLP_EUID:
		r[in.a] = (u64)stp_env_euid(env);
		break;
	case STP_HLP_GID:
		r[in.a] = (u64)stp_env_gid(env);
		break;
	case STP_HLP_CPU:
		r[in.a] = (u64)stp_env_cpu(env);
		break;
	case STP_HLP_GETTIMEOFDAY_NS:
		r[in.a] = stp_env_wall_ns(env);
		break;
	case STP_HLP_LOCAL_CLOCK_NS:
		r[in.a] = stp_env_time_ns(env);
		break;
	case STP_HLP_JIFFIES:
		r[in.a] = (u64)stp_env_jiffies(env);
		break;
	case STP_HLP_RETVAL:	/* verify.c: only in return probes */
		r[in.a] = (u64)stp_env_retval(env);
		break;
	case STP_HLP_ARG:	/* verify.c: only at function entry */
		r[in.a] = (u64)stp_env_arg(env, r[in.b] > 0xffffffffull ?
					   0xffffffffu : (u32)r[in.b]);
		break;
	case STP_HLP_KERNEL_LONG:
	case STP_HLP_KERNEL_INT:
	case STP_HLP_KERNEL_SHORT:
	case STP_HLP_KERNEL_CHAR:
		if (read_signed(env, false, r[in.b], int_read_size(in.imm),
				&r[in.a]))
			FAIL(STP_RTE_KFAULT, r[in.b]);
		break;
	case STP_HLP_TASK_CURRENT:
		r[in.a] = stp_env_task(env);
		break;
	case STP_HLP_ADDR:
		r[in.a] = stp_env_addr(env);
		break;
	case STP_HLP_USER_MODE:
		r[in.a] = (u64)stp_env_user_mode(env);
		break;
	case STP_HLP_USER_STRING_OK:
		r[in.a] = stp_user_string_ok(env, cap, r[in.b]);
		break;
	case STP_HLP_MM_ARG:
		r[in.a] = stp_env_mm_arg(env, r[in.b] != 0);
		break;
	case STP_HLP_EGID:
		r[in.a] = (u64)stp_env_egid(env);
		break;
	case STP_HLP_HZ:
		r[in.a] = (u64)stp_env_hz(env);
		break;
	case STP_HLP_GET_CYCLES:
		r[in.a] = stp_env_cycles(env);
		break;
	case STP_HLP_CPU_ONLINE:
		r[in.a] = stp_env_cpu_online(env, (s64)r[in.b]);
		break;
	case STP_HLP_RANDOM:	/* helpers.h: x % n, 0 for n == 0 */
		r[in.a] = r[in.b] ? (u64)stp_env_random_u32(env) % r[in.b] : 0;
		break;
	case STP_HLP_USER_LONG:
	case STP_HLP_USER_INT:
	case STP_HLP_USER_SHORT:
	case STP_HLP_USER_CHAR:	/* helpers.h: 0 on a fault */
		if (read_signed(env, true, r[in.b], int_read_size(in.imm),
				&r[in.a]))
			r[in.a] = 0;
		break;
	case STP_HLP_REGISTER:
		r[in.a] = stp_env_register(env, r[in.b]);
		break;
	case STP_HLP_UADDR:
		r[in.a] = stp_env_uaddr(env);
		break;
	case STP_HLP_IS_RETURN:	/* the probe handler's, also in a function */
		r[in.a] = p->handlers[rc->handler].ctx == STP_CTX_KRETPROBE;
		break;
	case STP_HLP_PID2TASK:
		r[in.a] = stp_env_pid2task(env, (s64)r[in.b]);
		break;
	case STP_HLP_VALUE_SET:	/* verify.c: procfs read probes, s[b] */
	case STP_HLP_VALUE_APPEND:
		r[in.a] = stp_env_value_set(env, SREG(in.b), slen[in.b],
					    in.imm == STP_HLP_VALUE_APPEND);
		break;
	case STP_HLP_UARG:	/* verify.c: uprobes, specs well formed */
		r[in.a] = uarg(env, p, rc->probe, r[in.b]);
		break;
	case STP_HLP_VERDICT:	/* verify.c: netfilter probes */
		r[in.a] = (u64)stp_env_verdict(env);
		break;
	case STP_HLP_VERDICT_SET:	/* helpers.h: DROP or ACCEPT only */
		if (r[in.b] != STP_NF_DROP && r[in.b] != STP_NF_ACCEPT) {
			stp_env_verdict_set(env, STP_NF_ACCEPT);
			FAIL(STP_RTE_VERDICT, r[in.b]);
		}
		stp_env_verdict_set(env, (s64)r[in.b]);
		r[in.a] = r[in.b];
		break;
	default:		/* a STR helper: verify.c refuses it */
		goto op_BADOP;
	}
	NEXT();
op_CALLS:	/* verify.c: imm < STP_HLP__COUNT, STR result, context */
	switch (in.imm) {
	case STP_HLP_EXECNAME:
		slen[in.a] = min_u32(stp_env_comm(env, SREG(in.a), cap), cap);
		break;
	case STP_HLP_KERNEL_STRING:
	case STP_HLP_USER_STRING: {
		bool user = in.imm == STP_HLP_USER_STRING;
		u32 n = 0;

		if (stp_copy_string(env, user, SREG(in.a), cap, r[in.b], &n,
				    &addr)) {
			slen[in.a] = 0;	/* helpers.h: empty after a fault */
			FAIL(user ? STP_RTE_USTRFAULT : STP_RTE_KSTRFAULT,
			     addr);
		}
		slen[in.a] = n;
		break;
	}
	case STP_HLP_SYMNAME:
	case STP_HLP_SYMDATA:
		slen[in.a] = min_u32(stp_env_symbol(env, r[in.b],
						    in.imm == STP_HLP_SYMDATA,
						    SREG(in.a), cap), cap);
		break;
	case STP_HLP_PEXECNAME:
		slen[in.a] = min_u32(stp_env_pcomm(env, SREG(in.a), cap), cap);
		break;
	case STP_HLP_BACKTRACE:
		slen[in.a] = min_u32(stp_env_backtrace(env, SREG(in.a), cap),
				     cap);
		break;
	case STP_HLP_MODNAME:
		slen[in.a] = min_u32(stp_env_modname(env, r[in.b], SREG(in.a),
						     cap), cap);
		break;
	case STP_HLP_UBACKTRACE:
		slen[in.a] = min_u32(stp_env_ubacktrace(env, SREG(in.a), cap),
				     cap);
		break;
	case STP_HLP_USYMNAME:
	case STP_HLP_USYMDATA:
	case STP_HLP_USYMFULL:
	case STP_HLP_USYMBRIEF:
	case STP_HLP_USYMSIMPLE:
	case STP_HLP_UMODNAME:
		slen[in.a] = min_u32(stp_env_usym(env, r[in.b], (u32)in.imm,
						  SREG(in.a), cap), cap);
		break;
	case STP_HLP_VALUE:	/* verify.c: procfs and input probes */
		slen[in.a] = min_u32(stp_env_value(env, SREG(in.a), cap), cap);
		break;
	case STP_HLP_PP:	/* verify.c: every probe's pp < nstrs */
		slen[in.a] = 0;
		if (rc->probe < p->nprobes) {
			const struct stp_str_desc *d =
				&p->strs[p->probes[rc->probe].pp];
			u32 n = min_u32(d->len, cap);

			memcpy(SREG(in.a), p->strdata + d->off, n);
			slen[in.a] = n;
		}
		break;
	default:		/* an INT helper: verify.c refuses it */
		goto op_BADOP;
	}
	NEXT();
op_PRINTF:	/* verify.c: imm < nformats, runs inside nregs/nsregs */
	emit_printf(vm, r, slen, sregs, rc, &p->formats[in.imm], (u32)in.imm,
		    in.b, in.c);
	NEXT();
op_EXIT:	/* stap: exit() does not end the current handler */
	rc->exit_requested = 1;
	emit(rc, STP_REC_EXIT, 0, NULL, 0);
	NEXT();
op_ABORT:	/* stap: abort() is exit() that also ends the run, uncatchable */
	rc->exit_requested = 1;
	emit(rc, STP_REC_EXIT, 0, NULL, 0);
	rc->fuel_left = fuel;
	return STP_RTE_NONE;
op_FCALL:
op_FCALLI:
op_FCALLS: {	/* verify.c: imm is a function of this result kind, runs ok */
	const struct stp_handler_desc *fh = &p->handlers[in.imm];
	struct stp_frame *f;
	char *nsregs;
	u32 i;

	if (!fuel)
		FAIL(STP_RTE_MAXACTION, 0);
	fuel--;
	if (depth >= maxdepth)
		FAIL(STP_RTE_MAXNESTING, 0);
	f = &frames[depth];
	nsregs = fsbuf + depth * fsb;
	/* verify.c: nparams/nsparams registers from b/c are in range. */
	for (i = 0; i < fh->nparams; i++)
		f->r[i] = r[in.b + i];
	for (i = 0; i < fh->nsparams; i++) {
		u32 n = slen[in.c + i];

		memcpy(nsregs + (u64)i * ((u64)vm->str_cap + 1),
		       SREG(in.c + i), n);
		f->slen[i] = n;
	}
	f->ret_ip = ip;
	f->caller = hidx;
	f->dst = in.a;
	f->caller_catch = cpc;		/* a call starts disarmed */
	f->caller_creg = creg;
	cpc = 0;
	depth++;
	r = f->r;
	slen = f->slen;
	sregs = nsregs;
	hidx = (u32)in.imm;
	code = p->code + fh->insn_off;
	ip = code;
	NEXT();
}
op_RETI:	/* verify.c: only in functions returning a long */
	frames[depth - 1].r[0] = r[in.a];	/* park the value */
	goto ret_pop;
op_RETS: {	/* verify.c: only in functions returning a string */
	struct stp_frame *f = &frames[depth - 1];
	char *csregs = depth > 1 ? fsbuf + (depth - 2) * fsb : vm->sbuf;
	u32 *cslen = depth > 1 ? frames[depth - 2].slen : vm->slen;
	u32 n = slen[in.a];

	/* distinct frames: no overlap */
	memcpy(csregs + (u64)f->dst * ((u64)vm->str_cap + 1), SREG(in.a), n);
	cslen[f->dst] = n;
	goto ret_pop;
}
ret_pop: {
	/* depth >= 1: RETI and RETS only in functions (verify.c). */
	struct stp_frame *f = &frames[depth - 1];
	u8 op = f->ret_ip[-1].op;	/* the FCALL* that made this frame */

	depth--;
	hidx = f->caller;
	code = p->code + p->handlers[hidx].insn_off;
	ip = f->ret_ip;
	cpc = f->caller_catch;
	creg = f->caller_creg;
	if (depth) {
		r = frames[depth - 1].r;
		slen = frames[depth - 1].slen;
		sregs = fsbuf + (depth - 1) * fsb;
	} else {
		r = vm->r;
		slen = vm->slen;
		sregs = vm->sbuf;
	}
	if (op == STP_OP_FCALLI)
		r[f->dst] = f->r[0];
	NEXT();
}
op_PRETTY: {	/* verify.c: imm 0 or 1; nsregs <= STP_MAX_SREGS - 2 */
	u32 n = 0;

	if (stp_pretty(env, p, r[in.b], r[in.c], in.imm != 0, SREG(in.a), cap,
		       SREG(STP_MAX_SREGS - 2), SREG(STP_MAX_SREGS - 1), &fuel,
		       &n) != STP_RTE_NONE) {
		slen[in.a] = 0;
		FAIL(STP_RTE_MAXACTION, 0);
	}
	slen[in.a] = n;
	NEXT();
}
op_SPRINTF:	/* verify.c: format with text, runs ok, a not an argument */
	slen[in.a] = stp_do_sprintf(vm, p, r, slen, sregs,
				    &p->formats[in.imm], in.b, in.c,
				    SREG(in.a), cap);
	NEXT();
op_SSUB: {	/* verify.c: c, c + 1 < nregs (OPND_RP) */
	s64 start = (s64)r[in.c], len = (s64)r[in.c + 1];
	u32 n = 0;

	if (start >= 0 && start < (s64)slen[in.b] && len > 0) {
		n = slen[in.b] - (u32)start;
		if ((u64)len < n)
			n = (u32)len;
		memmove(SREG(in.a), SREG(in.b) + start, n);
	}
	slen[in.a] = n;
	NEXT();
}
op_SFIND:
	r[in.a] = (u64)stp_find_str(SREG(in.b), slen[in.b], SREG(in.c),
				    slen[in.c]);
	NEXT();
op_STOL:
	r[in.a] = (u64)stp_str_tol(SREG(in.b), slen[in.b], r[in.c]);
	NEXT();
op_SREPL:	/* verify.c: a is none of b, c, c + 1 (OPND_SP) */
	slen[in.a] = stp_str_repl(SREG(in.b), slen[in.b], SREG(in.c),
				  slen[in.c], SREG(in.c + 1), slen[in.c + 1],
				  SREG(in.a), cap);
	NEXT();
op_STEXT:	/* verify.c: a != b */
	slen[in.a] = stp_text_strn(SREG(in.b), slen[in.b], SREG(in.a), cap,
				   0, false);
	NEXT();
op_STEXTN:	/* verify.c: a != b; c, c + 1 < nregs (OPND_RP) */
	slen[in.a] = stp_text_strn(SREG(in.b), slen[in.b], SREG(in.a), cap,
				   (s64)r[in.c], r[in.c + 1] != 0);
	NEXT();
op_STOK:
	slen[in.a] = stp_tokenize(vm, SREG(in.b), slen[in.b], SREG(in.c),
				  slen[in.c], SREG(in.a), cap);
	NEXT();
op_SCHAR: {
	s64 i = (s64)r[in.c];

	r[in.a] = i >= 0 && i < (s64)slen[in.b] ? (u8)SREG(in.b)[i] : 0;
	NEXT();
}
op_TRY:		/* verify.c: a < nsregs, target inside, after every covered insn */
	slen[in.a] = 0;
	cpc = (u32)(ip - code) + (u32)in.imm + 1;
	creg = in.a;
	NEXT();
op_TRYEND:
	cpc = 0;
	NEXT();
op_SYSTEM:	/* verify.c: b is a string register written on every path */
	emit_system(rc, SREG(in.b), slen[in.b]);
	NEXT();
op_ERROR:
	umsg = SREG(in.b);
	umsg_len = slen[in.b];
	FAIL(STP_RTE_USER, umsg_len);
op_STADD:	/* verify.c: imm < nstats (OPND_STAT) */
	if (!stats_ok)
		goto op_BADOP;
	stat_add(stat_at(sa, &p->stats[in.imm], sa->cpu, 0), &p->stats[in.imm],
		 (s64)r[in.a]);
	NEXT();
op_STCOUNT:
op_STSUM:
op_STMIN:
op_STMAX:
op_STAVG:
op_STVAR:
	if (!stats_ok)
		goto op_BADOP;
	/* verify.c: STVAR only with STP_STAT_F_VARIANCE */
	stp_stat_merge(sa, &p->stats[in.imm], 0, in.op == STP_OP_STVAR, &sm);
	if (!stp_stat_extract(&sm, in.op, &r[in.a]))
		FAIL(STP_RTE_EMPTY_AGG, 0);
	NEXT();
op_STHIST:	/* verify.c: the statistic has a histogram */
	if (!stats_ok)
		goto op_BADOP;
	if (stp_stat_empty(sa, &p->stats[in.imm], 0, &sm))
		FAIL(STP_RTE_EMPTY_AGG, 0);
	emit_hist(rc, &p->stats[in.imm], (u32)in.imm, 0);
	NEXT();
op_STHISTS: {	/* verify.c: the statistic has a histogram */
	struct hist_ctx hc = { sa, &p->stats[in.imm], 0 };

	if (!stats_ok)
		goto op_BADOP;
	if (stp_stat_empty(sa, &p->stats[in.imm], 0, &sm))
		FAIL(STP_RTE_EMPTY_AGG, 0);
	slen[in.a] = stp_format_hist(&p->stats[in.imm], stp_hist_ctx_bucket,
				     &hc, SREG(in.a), cap);
	NEXT();
}
op_STCLR: {	/* opcodes.h: every CPU's copy, not only this one's */
	const struct stp_stat_desc *d = &p->stats[in.imm];	/* check_imm */
	u32 i;

	if (!stats_ok)
		goto op_BADOP;
	for (i = 0; i < sa->ncpus; i++)	/* CPU ids */
		memset(stat_at(sa, d, i, 0), 0, stp_stat_size(d));
	NEXT();
}
op_STBKT:	/* verify.c: the statistic has a histogram */
	if (!stats_ok)
		goto op_BADOP;
	if (stp_stat_empty(sa, &p->stats[in.imm], 0, &sm))
		FAIL(STP_RTE_EMPTY_AGG, 0);
	if (r[in.b] >= p->stats[in.imm].nbuckets)	/* negative too */
		FAIL(STP_RTE_HIST_INDEX, 0);
	r[in.a] = (u64)stp_stat_bucket(sa, &p->stats[in.imm], 0, (u32)r[in.b]);
	NEXT();
op_MGET:
op_MGETS:
op_MSET:
op_MSETS:
op_MOPR:
op_MDEL:
op_MHAS:
op_MCLEAR: {	/* verify.c: map id < nmaps, key runs and value kind match */
	u32 op = STP_IMM_HI(in.imm);	/* MOPR only */
	struct stp_map *m;
	struct stp_map_key k;
	unsigned long fl;
	bool full = false;
	u32 n = 0;
	u8 *e;

	if (!rc->maps)
		goto op_BADOP;
	m = rc->maps[STP_IMM_LO(in.imm)];
	if (in.op == STP_OP_MOPR && (op == STP_OP_DIV || op == STP_OP_MOD) &&
	    !r[in.a])
		FAIL(STP_RTE_DIVZERO, 0);
	map_key(m, r, slen, sregs, (u64)vm->str_cap + 1, in.b, in.c, &k);
	if (!map_lock(rc, m, p->limits[STP_LIM_MAXTRYLOCK], &fl))
		goto skip;
	switch (in.op) {
	case STP_OP_MGET:
		e = stp_map_lookup(m, &k);
		if (e)
			memcpy(&r[in.a], e + m->val_off, 8);
		else
			r[in.a] = 0;
		break;
	case STP_OP_MGETS:
		e = stp_map_lookup(m, &k);
		if (e) {
			memcpy(&n, e + m->val_off, 4);
			n = min_u32(n, cap);
			memcpy(SREG(in.a), e + m->val_off + 4, n);
		}
		slen[in.a] = n;
		break;
	case STP_OP_MSET:
	case STP_OP_MSETS:
	case STP_OP_MOPR:
		e = stp_map_insert(m, &k);
		full = !e;
		if (!e)
			break;
		if (in.op == STP_OP_MSET) {
			memcpy(e + m->val_off, &r[in.a], 8);
		} else if (in.op == STP_OP_MSETS) {
			n = slen[in.a];		/* <= cap <= m->str_cap */
			memcpy(e + m->val_off, &n, 4);
			memcpy(e + m->val_off + 4, SREG(in.a), n);
		} else {
			u64 v;

			memcpy(&v, e + m->val_off, 8);
			v = map_arith(op, v, r[in.a]);
			memcpy(e + m->val_off, &v, 8);
			r[in.a] = v;
		}
		break;
	case STP_OP_MDEL:
		stp_map_delete(m, &k);
		break;
	case STP_OP_MHAS:
		r[in.a] = stp_map_lookup(m, &k) != NULL;
		break;
	default:		/* MCLEAR */
		stp_map_clear(m);
		break;
	}
	stp_env_map_unlock(&m->lock, fl);
	if (full)		/* an insertion into a full map */
		FAIL(m->flags & STP_MAP_F_SIZED ? STP_RTE_ARRAY_SIZE :
		     STP_RTE_ARRAY_OVERFLOW, m->capacity);
	NEXT();
}
op_MITER:
op_MNEXT: {	/* verify.c: map id < nmaps, iterator < niters, runs match */
	u32 id = STP_IMM_LO(in.imm);
	struct stp_iter *it;
	struct stp_map *m;
	unsigned long fl;
	u32 i, li = 0, si = 0;
	u8 *e;

	if (!rc->maps || !rc->iters)
		goto op_BADOP;
	m = rc->maps[id];
	/* verify.c: niters covers iter_frame per level, depth included */
	it = &rc->iters[depth * p->iter_frame + STP_IMM_HI(in.imm)];
	if (in.op == STP_OP_MNEXT && it->map != id)
		goto op_BADOP;	/* filled for another map (or never) */
	if (in.op == STP_OP_MITER && (in.c & 0x70) && !stats_ok)
		goto op_BADOP;	/* an extractor order needs the statistics */
	if (!map_lock(rc, m, p->limits[STP_LIM_MAXTRYLOCK], &fl))
		goto skip;
	if (in.op == STP_OP_MITER && (in.c & 0x70)) {
		/*
		 * verify.c: an extractor order is on a statistics array's
		 * value column. Every entry's merged extractor once, then sort.
		 */
		const struct stp_stat_desc *d = &p->stats[p->maps[id].stat];
		u32 x = (in.c >> 4) & 7;

		stp_map_iter_fill(m, it, id, 0, (s64)(~0ull >> 1),
				  p->iter_cap);
		for (i = 0; i < it->count; i++) {	/* <= iter_cap */
			struct stp_iter_ent *xe = &it->idx[i];

			stp_stat_merge(sa, d, xe->slot, false, &sm);
			xe->key = x == STP_SORTX_SUM ? sm.sum :
				  x == STP_SORTX_MIN ? sm.min :
				  x == STP_SORTX_MAX ? sm.max :
				  div64(sm.sum, sm.count);
		}
		stp_map_iter_sort(m, it, in.c, (s64)r[in.b]);
		stp_env_map_unlock(&m->lock, fl);
		NEXT();
	}
	if (in.op == STP_OP_MITER) {
		stp_map_iter_fill(m, it, id, in.c, (s64)r[in.b], p->iter_cap);
		stp_env_map_unlock(&m->lock, fl);
		NEXT();
	}
	e = stp_map_iter_next(m, it);
	for (i = 0; i < m->nkeys; i++) {	/* <= STP_MAX_MAP_KEYS */
		if (m->str_mask & (1u << i)) {
			u32 n = 0;

			if (e) {
				const u8 *sk = e + m->skey_off +
					       (u64)si * m->str_slot;

				memcpy(&n, sk, 4);
				n = min_u32(n, cap);
				memcpy(SREG(in.c + si), sk + 4, n);
			}
			slen[in.c + si] = n;
			si++;
		} else {
			if (e)
				memcpy(&r[in.b + li], e + m->lkey_off + 8 * li,
				       8);
			else
				r[in.b + li] = 0;
			li++;
		}
	}
	r[in.a] = e != NULL;
	stp_env_map_unlock(&m->lock, fl);
	NEXT();
}
op_MSTADD:
op_MSTX:
op_MSTHIST:
op_MSTHISTS:
op_MSTBKT: {	/* verify.c: a statistics array (STP_MAPV_STAT), runs match */
	u32 x = STP_IMM_HI(in.imm);	/* MSTX: the extractor */
	const struct stp_stat_desc *d;
	struct stp_map *m;
	struct stp_map_key k;
	unsigned long fl;
	u32 slot = 0, i;
	s64 cnt = 0, bkt = 0;
	u8 *e;

	if (!rc->maps || !stats_ok)
		goto op_BADOP;
	m = rc->maps[STP_IMM_LO(in.imm)];
	d = &p->stats[p->maps[STP_IMM_LO(in.imm)].stat];	/* verify.c */
	map_key(m, r, slen, sregs, (u64)vm->str_cap + 1, in.b, in.c, &k);
	if (!map_lock(rc, m, p->limits[STP_LIM_MAXTRYLOCK], &fl))
		goto skip;
	if (in.op == STP_OP_MSTADD) {
		e = stp_map_insert(m, &k);
		if (!e) {
			stp_env_map_unlock(&m->lock, fl);
			FAIL(m->flags & STP_MAP_F_SIZED ? STP_RTE_ARRAY_SIZE :
			     STP_RTE_ARRAY_OVERFLOW, m->capacity);
		}
		slot = (u32)((u64)(e - m->ents) / m->ent_size);
		memcpy(&cnt, e + m->val_off, 8);
		if (!cnt) {	/* a new entry: its slot's old samples go */
			for (i = 0; i < sa->ncpus; i++)	/* CPU ids */
				memset(stat_at(sa, d, i, slot), 0,
				       stp_stat_size(d));
		}
		stat_add(stat_at(sa, d, sa->cpu, slot), d, (s64)r[in.a]);
		cnt++;
		memcpy(e + m->val_off, &cnt, 8);
		stp_env_map_unlock(&m->lock, fl);
		NEXT();
	}
	e = stp_map_lookup(m, &k);
	if (e) {
		slot = (u32)((u64)(e - m->ents) / m->ent_size);
		stp_stat_merge(sa, d, slot, x == STP_OP_STVAR, &sm);
	} else {
		memset(&sm, 0, sizeof(sm));
	}
	if (in.op == STP_OP_MSTHIST && sm.count > 0)
		emit_hist(rc, d, p->maps[STP_IMM_LO(in.imm)].stat, slot);
	/* MSTBKT: under the lock, the slot is the key's; r[a] unsigned */
	if (in.op == STP_OP_MSTBKT && sm.count > 0 && r[in.a] < d->nbuckets)
		bkt = stp_stat_bucket(sa, d, slot, (u32)r[in.a]);
	if (in.op == STP_OP_MSTHISTS && sm.count > 0) {
		/* under the lock: the slot is not re-used while it is drawn */
		struct hist_ctx hc = { sa, d, slot };

		slen[in.a] = stp_format_hist(d, stp_hist_ctx_bucket, &hc,
					     SREG(in.a), cap);
	}
	stp_env_map_unlock(&m->lock, fl);
	if (in.op == STP_OP_MSTX) {
		if (!stp_stat_extract(&sm, x, &r[in.a]))
			FAIL(STP_RTE_EMPTY_AGG, 0);
		NEXT();
	}
	if (sm.count <= 0)	/* MSTHIST, MSTHISTS, MSTBKT */
		FAIL(STP_RTE_EMPTY_AGG, 0);
	if (in.op == STP_OP_MSTBKT) {
		if (r[in.a] >= d->nbuckets)	/* negative too */
			FAIL(STP_RTE_HIST_INDEX, 0);
		r[in.a] = (u64)bkt;
	}
	NEXT();
}
skip:		/* MAXTRYLOCK attempts failed: stap skips the probe */
	rc->skipped = 1;
	rc->fuel_left = fuel;
	return STP_RTE_NONE;
op_BADOP:
	err = STP_RTE_BADOP;
	addr = 0;
fail:
	if (err != STP_RTE_MAXACTION && err != STP_RTE_BADOP) {
		/* The innermost frame with an armed catch (opcodes.h, TRY). */
		u32 lvl = depth, c = cpc;
		u8 cr = creg;

		while (!c && lvl) {	/* at most depth <= MAXNESTING steps */
			c = frames[lvl - 1].caller_catch;
			cr = frames[lvl - 1].caller_creg;
			lvl--;
		}
		if (c && !fuel) {
			/* the caught error's message goes with it */
			err = STP_RTE_MAXACTION;
			addr = 0;
			umsg = NULL;
			umsg_len = 0;
		} else if (c) {
			char *dsb = lvl ? fsbuf + (lvl - 1) * fsb : vm->sbuf;
			u32 *dsl = lvl ? frames[lvl - 1].slen : vm->slen;

			fuel--;
			if (lvl < depth) {
				struct stp_frame *f = &frames[lvl];

				hidx = f->caller;
				code = p->code + p->handlers[hidx].insn_off;
				depth = lvl;
			}
			r = lvl ? frames[lvl - 1].r : vm->r;
			slen = dsl;
			sregs = dsb;
			/* verify.c: cr < nsregs of the catching handler */
			slen[cr] = stp_catch_message(SREG(cr), cap, err,
						     addr, umsg, umsg_len);
			cpc = 0;
			creg = 0;
			umsg = NULL;
			umsg_len = 0;
			err = STP_RTE_NONE;
			ip = code + (c - 1);
			NEXT();
		}
	}
	rc->error = err;
	rc->error_pc = (u32)(ip - 1 - code);
	rc->error_handler = hidx;
	rc->error_addr = addr;
	rc->fuel_left = fuel;
	er.handler = hidx;
	er.pc = rc->error_pc;
	er.addr = addr;
	emit_error(rc, err, &er, umsg, umsg_len);
	return (int)err;
#undef NEXT
#undef FAIL
}

#if defined(__clang__)
#pragma clang diagnostic pop
#else
#pragma GCC diagnostic pop
#endif
