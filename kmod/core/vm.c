/* SPDX-License-Identifier: GPL-2.0 OR MIT */
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
 * Strings live in string registers of capacity MAXSTRINGLEN (length plus
 * bytes, no NUL kept); concatenation and copies from memory are cut at the
 * capacity silently, as stap does.
 *
 * Left out: user functions, arrays, statistics (not in the ISA yet);
 * nesting and reentrancy (the caller's per-CPU guard); MAXERRORS (the
 * caller counts the errors stp_run returns).
 *
 * Context: any, once the caller holds the per-CPU nesting guard for vm and
 * rc->ring. Never sleeps, never allocates; runs at most
 * insn_count * (MAXACTION + 1) instructions because only LOOP jumps
 * backwards and each LOOP charges one unit of fuel.
 */
#include "stp_core.h"

/* Address of string register i (verify.c: i < nsregs <= STP_MAX_SREGS). */
#define SREG(i)	(vm->sbuf + (u64)(i) * ((u64)vm->str_cap + 1))

static u32 min_u32(u32 a, u32 b)
{
	return a < b ? a : b;
}

static u32 round8(u32 n)
{
	return (n + 7) & ~7u;
}

/*
 * Copies a NUL-terminated string from kernel or user memory into dst (at
 * most cap bytes), one nofault read per page so that bytes after the NUL on
 * a following, maybe unmapped, page are never touched. On a fault, *fault
 * is the address of the chunk that failed.
 */
static int copy_string(void *env, bool user, char *dst, u32 cap, u64 addr,
		       u32 *len, u64 *fault)
{
	u32 n = 0;

	/* Each iteration copies >= 1 byte: at most cap iterations, in
	 * practice cap / STP_ENV_PAGE_SIZE + 2.
	 */
	while (n < cap) {
		u64 a = addr + n;
		u32 chunk = STP_ENV_PAGE_SIZE - (u32)(a & (STP_ENV_PAGE_SIZE - 1));
		const char *nul;
		int err;

		chunk = min_u32(chunk, cap - n);
		err = user ? stp_env_read_user(env, dst + n, a, chunk)
			   : stp_env_read_kernel(env, dst + n, a, chunk);
		if (err) {
			*fault = a;
			return err;
		}
		nul = memchr(dst + n, 0, chunk);
		if (nul) {
			n = (u32)(nul - dst);
			break;
		}
		n += chunk;
	}
	*len = n;
	return 0;
}

/* Writes a record with an optional payload; drops it if the ring is full. */
static void emit(struct stp_run_ctx *rc, u16 type, u16 id, const void *payload,
		 u32 plen)
{
	struct stp_rec_hdr *hdr;
	u32 len = (u32)sizeof(*hdr) + plen;

	if (!rc->ring)
		return;
	hdr = stp_ring_reserve(rc->ring, len);
	if (!hdr)
		return;		/* counted by the ring */
	hdr->len = len;
	hdr->type = type;
	hdr->id = id;
	hdr->time_ns = stp_env_time_ns(rc->env);
	if (plen)
		memcpy(hdr + 1, payload, plen);
	stp_ring_commit(rc->ring, hdr, len);
}

/* PRINTF fmt, rb, sc: one record with the arguments in format order. */
static void emit_printf(struct stp_vm *vm, struct stp_run_ctx *rc,
			const struct stp_format_desc *f, u32 fmt, u32 rb,
			u32 sc)
{
	struct stp_rec_hdr *hdr;
	u32 len = sizeof(*hdr), i, ri, si;
	u8 *p;

	/* verify.c: nargs <= STP_MAX_FMT_ARGS, runs inside the files. */
	for (i = 0, si = sc; i < f->nargs; i++) {
		if (f->str_mask & (1u << i))
			len += round8(4 + vm->slen[si++]);
		else
			len += 8;
	}
	if (!rc->ring)
		return;
	hdr = stp_ring_reserve(rc->ring, len);
	if (!hdr)
		return;		/* counted by the ring */
	hdr->len = len;
	hdr->type = STP_REC_PRINTF;
	hdr->id = (u16)fmt;	/* verify.c: fmt < STP_MAX_FORMATS <= 2^16 */
	hdr->time_ns = stp_env_time_ns(rc->env);
	p = (u8 *)(hdr + 1);
	for (i = 0, ri = rb, si = sc; i < f->nargs; i++) {
		if (f->str_mask & (1u << i)) {
			u32 n = vm->slen[si];
			u32 padded = round8(4 + n);

			memcpy(p, &n, 4);
			memcpy(p + 4, SREG(si), n);
			memset(p + 4 + n, 0, padded - 4 - n);
			p += padded;
			si++;
		} else {
			memcpy(p, &vm->r[ri], 8);
			p += 8;
			ri++;
		}
	}
	stp_ring_commit(rc->ring, hdr, len);
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
	u32 cap = min_u32(vm->str_cap, p->limits[STP_LIM_MAXSTRINGLEN]);
	u64 fuel = p->limits[STP_LIM_MAXACTION];
	u64 *r = vm->r;
	s64 *g = rc->globals;
	void *env = rc->env;
	struct stp_rec_error er;
	struct stp_insn in;
	u32 err = STP_RTE_NONE;
	u64 addr = 0;

	rc->exit_requested = 0;
	rc->error = STP_RTE_NONE;
	rc->error_pc = 0;
	rc->error_addr = 0;

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
		memcpy(SREG(in.a), SREG(in.b), vm->slen[in.b]);
	vm->slen[in.a] = vm->slen[in.b];
	NEXT();
op_SLDK: {	/* verify.c: imm < nstrs, inside STRDATA (OPND_STR) */
	const struct stp_str_desc *d = &p->strs[in.imm];
	u32 n = min_u32(d->len, cap);

	memcpy(SREG(in.a), p->strdata + d->off, n);
	vm->slen[in.a] = n;
	NEXT();
}
op_SCAT: {
	u32 nb = vm->slen[in.b];
	u32 nc = min_u32(vm->slen[in.c], cap - nb);	/* nb <= cap */
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
	vm->slen[in.a] = nb + nc;
	NEXT();
}
op_SCMP: {
	const u8 *x = (const u8 *)SREG(in.b), *y = (const u8 *)SREG(in.c);
	u32 lx = vm->slen[in.b], ly = vm->slen[in.c];
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
	r[in.a] = vm->slen[in.b];
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
	case STP_HLP_KERNEL_LONG: {
		s64 v;

		if (stp_env_read_kernel(env, &v, r[in.b], sizeof(v)))
			FAIL(STP_RTE_KFAULT, r[in.b]);
		r[in.a] = (u64)v;
		break;
	}
	default:		/* a STR helper: verify.c refuses it */
		goto op_BADOP;
	}
	NEXT();
op_CALLS:	/* verify.c: imm < STP_HLP__COUNT, STR result, context */
	switch (in.imm) {
	case STP_HLP_EXECNAME:
		vm->slen[in.a] = min_u32(stp_env_comm(env, SREG(in.a), cap),
					 cap);
		break;
	case STP_HLP_KERNEL_STRING:
	case STP_HLP_USER_STRING: {
		bool user = in.imm == STP_HLP_USER_STRING;
		u32 n = 0;

		if (copy_string(env, user, SREG(in.a), cap, r[in.b], &n,
				&addr))
			FAIL(user ? STP_RTE_USTRFAULT : STP_RTE_KSTRFAULT,
			     addr);
		vm->slen[in.a] = n;
		break;
	}
	default:		/* an INT helper: verify.c refuses it */
		goto op_BADOP;
	}
	NEXT();
op_PRINTF:	/* verify.c: imm < nformats, runs inside nregs/nsregs */
	emit_printf(vm, rc, &p->formats[in.imm], (u32)in.imm, in.b, in.c);
	NEXT();
op_EXIT:	/* stap: exit() does not end the current handler */
	rc->exit_requested = 1;
	emit(rc, STP_REC_EXIT, 0, NULL, 0);
	NEXT();
op_BADOP:
	err = STP_RTE_BADOP;
	addr = 0;
fail:
	rc->error = err;
	rc->error_pc = (u32)(ip - 1 - code);
	rc->error_addr = addr;
	rc->fuel_left = fuel;
	er.handler = rc->handler;
	er.pc = rc->error_pc;
	er.addr = addr;
	emit(rc, STP_REC_ERROR, (u16)err, &er, sizeof(er));
	return (int)err;
#undef NEXT
#undef FAIL
}

#if defined(__clang__)
#pragma clang diagnostic pop
#else
#pragma GCC diagnostic pop
#endif
