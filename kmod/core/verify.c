// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * verify.c - the stapvm verifier: decides whether an image from user space
 * may be run by vm.c, and if so describes it as a struct stp_prog.
 *
 * What a verified program guarantees to the interpreter
 * -----------------------------------------------------
 * stp_run() does no bounds check of its own. It relies on these facts, each
 * proved here, and vm.c names the one it uses at every unchecked access:
 *
 *  1. Every table the code indexes lies inside the image, is 8-byte
 *     aligned, does not overlap another table, and holds whole entries;
 *     every count is within its STP_MAX_* cap.
 *  2. Every handler is a non-empty slice of CODE that ends in RET, with
 *     nregs <= STP_MAX_REGS, nsregs <= STP_MAX_SREGS and a valid context;
 *     handlers do not overlap and come in CODE order.
 *  3. Every opcode is known; every operand has the kind the STP_OPCODES
 *     table gives it: unused operands are 0, registers are below the
 *     handler's nregs/nsregs, table indexes below the table's size, PRINTF
 *     register runs inside the register files.
 *  4. Control stays inside the handler: forward jumps (JF) land before the
 *     handler's end, LOOP (JB, the only backward jump) lands at or after
 *     its start, and the last instruction returns (RET, RETI or RETS), so
 *     pc can never run off.
 *     Each LOOP charges MAXACTION fuel, so a run executes at most
 *     insn_count * MAXACTION instructions.
 *  5. No register is read before it is written on every path from the
 *     handler's entry, back edges included (registers are not zeroed
 *     between runs, so this is what keeps one probe hit from seeing
 *     another's data).
 *  6. Helpers are called with the result kind of their opcode (CALLI:
 *     integer, CALLS: string), an unused argument is 0, and only from
 *     handlers whose context the helper allows (RETVAL only in return
 *     probes, ARG only at function entry; neither in a function).
 *  7. Calls (FCALL*) name a handler of context STP_CTX_FUNCTION whose
 *     result kind is the opcode's, with argument runs of exactly its
 *     nparams / nsparams registers, in range and written. A function's
 *     parameters r[0..nparams), s[0..nsparams) count as written at its
 *     entry. Every return instruction matches its handler: RET in probe
 *     handlers and functions without result, RETI / RETS in functions
 *     returning a long / string. When the program has functions, MAXNESTING
 *     frames fit in STP_MAX_FRAME_BYTES.
 *  8. SPRINTF names a format that has a text (a string of STRS); SPRINTF,
 *     SREPL, STEXT and STEXTN write a string register none of their string
 *     operands is.
 *  9. Statistic descriptors are consistent (histogram kind and stap's
 *     parameters, shift, flags) and laid out back to back from offset 0,
 *     within STP_MAX_STAT_BYTES per CPU (prog->stat_bytes); statistic
 *     instructions name a statistic that is not an array's
 *     (STP_STAT_F_ARRAY); STHIST and STBKT one with a histogram, STVAR
 *     one with STP_STAT_F_VARIANCE. A statistics array (STP_MAPV_STAT)
 *     names an array statistic placed after the scalars and the arrays
 *     before it (capacity copies), within STP_MAX_STAT_BYTES too.
 * 10. Maps have consistent descriptors within STP_MAX_MAP_BYTES; map
 *     instructions name a map, pass key runs of its key counts (read and
 *     written: RN/SN, RNW/SNW), a value operand of its value kind
 *     (MSTADD, MSTX, MSTHIST, MSTHISTS, MSTBKT: a statistics array,
 *     whose statistic has a histogram for MSTHIST, MSTHISTS and MSTBKT
 *     and the variance flag for MSTX of STVAR), a valid MOPR arithmetic,
 *     MSX extractor,
 *     iterator and order; MNEXT reads an iterator MITER filled on every
 *     path; prog->niters iterators of prog->iter_cap entries fit
 *     STP_MAX_ITER_BYTES per CPU.
 * 11. TRY / TRYEND (opcodes.h): every instruction has one armed catch
 *     (none, or a target pc and message register) on every path to it,
 *     back edges included, and an armed target lies after the
 *     instruction; the state at a target is the meet of the states of
 *     every instruction run under that catch, plus the message register
 *     (MITER cannot fail, and a catch keeps its frame's iterators). A
 *     catch therefore jumps forward, and the registers read after it are
 *     written whichever instruction failed.
 * 12. Regular expressions (check_regexes) have 2..STP_MAX_REGEX_STATES
 *     states and 2..257 columns, every byte class below the end-of-string
 *     column, the start state and every transition below nstates, and
 *     their rows inside REGEXDATA; REMATCH names one (RX). REGEXSUBS
 *     is empty or has one entry per regex; each group program
 *     (check_regex_sub, abi.h: struct stp_regex_sub) has 1..
 *     STP_MAX_REGEX_INSNS instructions inside REGEXPROG, an even nslots
 *     in [2, STP_MAX_REGEX_SLOTS], known operations, JMP / SPLIT targets
 *     inside, SAVE slots < nslots, SET sets inside REGEXSETS, zero
 *     arguments on BOL, EOL, MATCH, and a last JMP or MATCH; REMATCHS
 *     names a regex with a program.
 * 13. Pretty-printing nodes (check_pretty, abi.h struct stp_pretty_node):
 *     a known kind, a name that is a string id or an anonymous label,
 *     scalar sizes of 1, 2, 4 or 8 bytes, bitfields inside their bytes
 *     and only on SIGNED/UNSIGNED, children (a STRUCT's members, an
 *     ARRAY's element) before their parent (so inside the section and no
 *     cycle), at most STP_MAX_PRETTY_MEMBERS members, every field a kind
 *     does not use zero. PRETTY writes a register of its own, imm is 0 or
 *     1, and its handler leaves the two scratch registers
 *     s[STP_MAX_SREGS - 2..] free.
 * 14. Strings are inside STRDATA, at most MAXSTRINGLEN - 1 bytes (stap
 *     counts the NUL), NUL-free; formats have at most STP_MAX_FMT_ARGS
 *     arguments and no kind bits past them; probe descriptors are
 *     consistent (kind, its context and the fields it uses as
 *     STP_PROBE_KINDS says, flags, symbol, period); the limits are inside
 *     their bounds.
 *
 * Order of checks
 * ---------------
 * Header (size, magic, version, header fields, total size), limits,
 * sections (placement, then overlap), counts against caps, strings,
 * formats, handlers, probes, then the code of each handler in one forward
 * pass. Each check needs only what the earlier ones proved. The first
 * failure wins; res->code says which rule, res->where which entry
 * (instruction index into CODE for code errors) and res->msg gives the
 * details, e.g. "insn 12 (handler 0 pc 12): jump target 40 outside
 * handler 0 [0, 30)".
 *
 * Read-before-write
 * -----------------
 * One forward pass per handler. For every instruction we keep the set of
 * integer registers (u64 mask) and string registers (u16 mask) written on
 * every path that reaches it: the intersection over its forward
 * predecessors. JMP, LOOP and RET do not fall through, so the instruction
 * after one of them gets only what jumps into it; an instruction nothing
 * reaches is still checked for well-formedness but reads nothing there,
 * since it never runs.
 *
 * Back edges (LOOP) do not flow. That is sound only because each live
 * LOOP is checked against its target, whose set is final by then (the
 * target comes first): the target must be reached by some forward path,
 * and the set at the LOOP must include the set at the target. Then the
 * back edge cannot make the target's set smaller, and the intersection
 * computed without it is the true one. Structured loops (the target falls
 * through into the body and dominates the LOOP) always pass; a forward
 * jump from outside into a loop body that skips a write, or a LOOP back
 * into code only the LOOP reaches, is refused (docs/design.md, section 1).
 *
 * This is the only verifier: the module runs it on LOAD, and the compiler
 * runs the same file built for user space as its last pass
 * (vm_spec::core::verify_image), so a rule changed here changes both.
 * vm-testkit/tests/verify.rs holds one case per error code.
 *
 * Left out: types (each opcode names its register file, so there are none
 * to track) and values (division by zero and faults are run-time errors).
 *
 * Context: process context only: the scratch state (16 bytes per
 * instruction) comes from stp_env_zalloc. Every loop is bounded by a cap
 * of abi.h: sections and limits by their counts, tables by STP_MAX_*,
 * code by STP_MAX_INSNS (handlers are disjoint, so each instruction is
 * visited once), symbols by STP_MAX_SYMBOL_LEN, PRINTF runs by
 * STP_MAX_FMT_ARGS.
 */
#include "stp_core.h"
#include "util.h"

/* Entry sizes of the sections, in enum stp_section order. */
static const u32 stp_sec_entry[STP_SEC__COUNT] = {
#define STP_X_SEC_SIZE(name, type) \
	[STP_SEC_##name] = sizeof(type),
	STP_SECTIONS(STP_X_SEC_SIZE)
#undef STP_X_SEC_SIZE
};

static const char *const stp_sec_name[STP_SEC__COUNT] = {
#define STP_X_SEC_NAME(name, type) \
	[STP_SEC_##name] = #name,
	STP_SECTIONS(STP_X_SEC_NAME)
#undef STP_X_SEC_NAME
};

static const u32 stp_limit_min[STP_LIM__COUNT] = {
#define STP_X_LIM_MIN(name, def, min, max) \
	[STP_LIM_##name] = min,
	STP_LIMITS(STP_X_LIM_MIN)
#undef STP_X_LIM_MIN
};

static const u32 stp_limit_max[STP_LIM__COUNT] = {
#define STP_X_LIM_MAX(name, def, min, max) \
	[STP_LIM_##name] = max,
	STP_LIMITS(STP_X_LIM_MAX)
#undef STP_X_LIM_MAX
};

static const char *const stp_limit_name[STP_LIM__COUNT] = {
#define STP_X_LIM_NAME(name, def, min, max) \
	[STP_LIM_##name] = #name,
	STP_LIMITS(STP_X_LIM_NAME)
#undef STP_X_LIM_NAME
};

/* The handler context each probe kind requires (abi.h). */
static const u8 stp_probe_ctx[STP_PROBE__COUNT] = {
#define STP_X_PROBE_CTX(name, str, ctx, uses) \
	[STP_PROBE_##name] = STP_CTX_##ctx,
	STP_PROBE_KINDS(STP_X_PROBE_CTX)
#undef STP_X_PROBE_CTX
};

/* The descriptor fields each probe kind uses (enum stp_probe_uses). */
static const u16 stp_probe_uses[STP_PROBE__COUNT] = {
#define STP_X_PROBE_USES(name, str, ctx, uses) \
	[STP_PROBE_##name] = (uses),
	STP_PROBE_KINDS(STP_X_PROBE_USES)
#undef STP_X_PROBE_USES
};

/* Per-instruction read-before-write state. */
struct insn_state {
	u64 r;		/* integer registers surely written */
	u16 s;		/* string registers surely written */
	u8 seen;	/* some forward predecessor reaches it */
	u8 it;		/* iterators surely filled (MITER) */
	u8 creg;	/* the armed catch's message register */
	u8 bad_catch;	/* two paths bring different armed catches */
	u8 pad[2];
	u32 catch1;	/* the armed catch target + 1, 0: none (TRY) */
	u32 pad2;
};

/* Length of one of our own constant strings (names, message formats). */
static u32 cstr_len(const char *s)
{
	u32 n = 0;

	while (n < STP_LOG_MAX && s[n])
		n++;
	return n;
}

/* A message argument: an integer or one of our constant strings. */
#define VI(x)	{ .is_str = 0, .i = (s64)(x) }
#define VS(x)	{ .is_str = 1, .len = cstr_len(x), .s = (x) }

/*
 * FAIL(res, CODE, where, fmt, args...) fills *res and returns the negative
 * errno of STP_VERR_CODE; the message is fmt formatted by stp_format with
 * the VI()/VS() arguments.
 */
#define FAIL(res, code, where, fmt, ...)				\
	fail(res, STP_VERR_##code, where, fmt,				\
	     (const struct stp_fmt_arg[]){ VI(0), __VA_ARGS__ } + 1,	\
	     sizeof((const struct stp_fmt_arg[]){ VI(0), __VA_ARGS__ }) / \
	     sizeof(struct stp_fmt_arg) - 1)

static int fail(struct stp_verify_result *res, u32 code, u32 where,
		const char *fmt, const struct stp_fmt_arg *args, u32 nargs)
{
	res->code = code;
	res->where = where;
	stp_format(fmt, cstr_len(fmt), args, nargs, res->msg,
		   sizeof(res->msg));
	return -stp_verr_info[code].err;
}

/* ------------------------------------------------------------------ */
/* Header, limits, sections                                            */

/*
 * FNV-1a (abi.h) of the size bytes at image, with the header's checksum
 * field read as 0. size >= sizeof(struct stp_image_hdr); one pass, at most
 * STP_MAX_IMAGE_SIZE steps.
 */
static u32 image_checksum(const u8 *image, u32 size)
{
	const u32 at = __builtin_offsetof(struct stp_image_hdr, checksum);
	u32 h = STP_FNV1A_BASIS;
	u32 i;

	for (i = 0; i < size; i++) {
		u8 b = (i >= at && i < at + 4) ? 0 : image[i];

		h = (h ^ b) * STP_FNV1A_PRIME;
	}
	return h;
}

static int check_header(const struct stp_image_hdr *h, u32 size,
			struct stp_verify_result *res)
{
	u32 i, sum;

	if (h->magic != STP_IMAGE_MAGIC)
		return FAIL(res, BAD_MAGIC, 0,
			    "bad magic 0x%x: not a stapvm image", VI(h->magic));
	if (h->version != STP_IMAGE_VERSION)
		return FAIL(res, BAD_VERSION, 0,
			    "image version %u, this module reads version %u",
			    VI(h->version), VI(STP_IMAGE_VERSION));
	if (h->hdr_size != sizeof(*h))
		return FAIL(res, BAD_HEADER, 0,
			    "header size %u, expected %u", VI(h->hdr_size),
			    VI(sizeof(*h)));
	if (h->total_size != size)
		return FAIL(res, BAD_SIZE, 0,
			    "header says %u bytes, buffer has %u",
			    VI(h->total_size), VI(size));
	sum = image_checksum((const u8 *)h, size);
	if (h->checksum != sum)
		return FAIL(res, BAD_CHECKSUM, 0,
			    "corrupt image (checksum): header says 0x%x, the bytes sum to 0x%x",
			    VI(h->checksum), VI(sum));
	if (h->flags)
		return FAIL(res, BAD_HEADER, 0,
			    "header flags 0x%x must be 0", VI(h->flags));
	for (i = 0; i < STP_LIM__COUNT; i++) {
		u32 v = h->limits[i];

		if (v < stp_limit_min[i] || v > stp_limit_max[i])
			return FAIL(res, BAD_LIMIT, i,
				    "limit %s = %u outside [%u, %u]",
				    VS(stp_limit_name[i]), VI(v),
				    VI(stp_limit_min[i]),
				    VI(stp_limit_max[i]));
	}
	i = h->limits[STP_LIM_RING_PAGES];
	if (i & (i - 1))
		return FAIL(res, BAD_LIMIT, STP_LIM_RING_PAGES,
			    "limit RING_PAGES = %u is not a power of two",
			    VI(i));
	/* A threshold above the interval could never trip (abi.h). */
	if (h->limits[STP_LIM_STP_OVERLOAD_THRESHOLD] >
	    h->limits[STP_LIM_STP_OVERLOAD_INTERVAL])
		return FAIL(res, BAD_LIMIT, STP_LIM_STP_OVERLOAD_THRESHOLD,
			    "limit STP_OVERLOAD_THRESHOLD = %u is above STP_OVERLOAD_INTERVAL = %u",
			    VI(h->limits[STP_LIM_STP_OVERLOAD_THRESHOLD]),
			    VI(h->limits[STP_LIM_STP_OVERLOAD_INTERVAL]));
	return 0;
}

static int check_sections(const struct stp_image_hdr *h, u32 size,
			  struct stp_verify_result *res)
{
	u32 i, j;

	for (i = 0; i < STP_SEC__COUNT; i++) {
		u64 off = h->sec[i].off, len = h->sec[i].size;

		if (off % 8)
			return FAIL(res, BAD_SECTION, i,
				    "section %s at %u is not 8-byte aligned",
				    VS(stp_sec_name[i]), VI(off));
		if (off < sizeof(*h) || off + len > size)
			return FAIL(res, BAD_SECTION, i,
				    "section %s [%u, %u) outside [%u, %u)",
				    VS(stp_sec_name[i]), VI(off),
				    VI(off + len), VI(sizeof(*h)), VI(size));
		if (len % stp_sec_entry[i])
			return FAIL(res, BAD_SECTION, i,
				    "section %s: %u bytes is not a multiple of %u",
				    VS(stp_sec_name[i]), VI(len),
				    VI(stp_sec_entry[i]));
	}
	for (i = 0; i < STP_SEC__COUNT; i++) {
		u64 a0 = h->sec[i].off, a1 = a0 + h->sec[i].size;

		for (j = i + 1; j < STP_SEC__COUNT; j++) {
			u64 b0 = h->sec[j].off, b1 = b0 + h->sec[j].size;

			if (a0 == a1 || b0 == b1)
				continue;
			if (a0 < b1 && b0 < a1)
				return FAIL(res, BAD_SECTION, j,
					    "section %s overlaps section %s",
					    VS(stp_sec_name[j]),
					    VS(stp_sec_name[i]));
		}
	}
	return 0;
}

/* Typed views and counts (sections already checked). */
static void fill_prog(const u8 *img, const struct stp_image_hdr *h,
		      struct stp_prog *p)
{
	const struct stp_section_desc *s = h->sec;
	u32 i;

	p->hdr = h;
	p->code = (const void *)(img + s[STP_SEC_CODE].off);
	p->handlers = (const void *)(img + s[STP_SEC_HANDLERS].off);
	p->probes = (const void *)(img + s[STP_SEC_PROBES].off);
	p->konsts = (const void *)(img + s[STP_SEC_KONSTS].off);
	p->strs = (const void *)(img + s[STP_SEC_STRS].off);
	p->strdata = img + s[STP_SEC_STRDATA].off;
	p->formats = (const void *)(img + s[STP_SEC_FORMATS].off);
	p->stats = (const void *)(img + s[STP_SEC_STATS].off);
	p->ninsns = s[STP_SEC_CODE].size / sizeof(struct stp_insn);
	p->nhandlers = s[STP_SEC_HANDLERS].size /
		       sizeof(struct stp_handler_desc);
	p->nprobes = s[STP_SEC_PROBES].size / sizeof(struct stp_probe_desc);
	p->nkonsts = s[STP_SEC_KONSTS].size / sizeof(s64);
	p->nstrs = s[STP_SEC_STRS].size / sizeof(struct stp_str_desc);
	p->strdata_size = s[STP_SEC_STRDATA].size;
	p->nformats = s[STP_SEC_FORMATS].size /
		      sizeof(struct stp_format_desc);
	p->nstats = s[STP_SEC_STATS].size / sizeof(struct stp_stat_desc);
	p->maps = (const void *)(img + s[STP_SEC_MAPS].off);
	p->nmaps = s[STP_SEC_MAPS].size / sizeof(struct stp_map_desc);
	p->regexes = (const void *)(img + s[STP_SEC_REGEXES].off);
	p->nregexes = s[STP_SEC_REGEXES].size / sizeof(struct stp_regex_desc);
	p->rxdata = (const void *)(img + s[STP_SEC_REGEXDATA].off);
	p->rxdata_len = s[STP_SEC_REGEXDATA].size / sizeof(u16);
	p->rxsubs = (const void *)(img + s[STP_SEC_REGEXSUBS].off);
	p->nrxsubs = s[STP_SEC_REGEXSUBS].size / sizeof(struct stp_regex_sub);
	p->rxprog = (const void *)(img + s[STP_SEC_REGEXPROG].off);
	p->rxprog_len = s[STP_SEC_REGEXPROG].size / sizeof(u32);
	p->rxsets = (const void *)(img + s[STP_SEC_REGEXSETS].off);
	p->nrxsets = s[STP_SEC_REGEXSETS].size / sizeof(struct stp_regex_set);
	p->pretty = (const void *)(img + s[STP_SEC_PRETTY].off);
	p->npretty = s[STP_SEC_PRETTY].size / sizeof(struct stp_pretty_node);
	p->uargs = (const void *)(img + s[STP_SEC_UARGS].off);
	p->nuargs = s[STP_SEC_UARGS].size / sizeof(u64);
	p->usym_bins = (const void *)(img + s[STP_SEC_USYMBINS].off);
	p->nusym_bins = s[STP_SEC_USYMBINS].size / sizeof(struct stp_usym_bin);
	p->usyms = (const void *)(img + s[STP_SEC_USYMS].off);
	p->nusyms = s[STP_SEC_USYMS].size / sizeof(struct stp_usym);
	p->usymstr = img + s[STP_SEC_USYMSTR].off;
	p->usymstr_size = s[STP_SEC_USYMSTR].size;
	p->nglobals = h->nglobals;
	for (i = 0; i < STP_LIM__COUNT; i++)
		p->limits[i] = h->limits[i];
}

static int check_counts(const struct stp_prog *p,
			struct stp_verify_result *res)
{
	static const struct {
		const char *what;
		u32 offset;
		u32 max;
	} caps[] = {
#define CAP(field, max) { #field, __builtin_offsetof(struct stp_prog, field), max }
		CAP(ninsns, STP_MAX_INSNS),
		CAP(nhandlers, STP_MAX_HANDLERS),
		CAP(nprobes, STP_MAX_PROBES),
		CAP(nkonsts, STP_MAX_KONSTS),
		CAP(nstrs, STP_MAX_STRS),
		CAP(nformats, STP_MAX_FORMATS),
		CAP(nglobals, STP_MAX_GLOBALS),
		CAP(nstats, STP_MAX_STATS),
		CAP(nmaps, STP_MAX_MAPS),
		CAP(nregexes, STP_MAX_REGEXES),
		CAP(npretty, STP_MAX_PRETTY_NODES),
		CAP(nuargs, STP_MAX_PROBES * STP_MAX_UARGS),
		CAP(nusym_bins, STP_MAX_USYM_BINS),
		CAP(nusyms, STP_MAX_USYMS),
#undef CAP
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(caps); i++) {
		u32 n = *(const u32 *)((const u8 *)p + caps[i].offset);

		if (n > caps[i].max)
			return FAIL(res, TOO_MANY, i, "%s = %u, the cap is %u",
				    VS(caps[i].what), VI(n), VI(caps[i].max));
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Tables: strings, formats, handlers, probes                          */

static int check_strings(const struct stp_prog *p,
			 struct stp_verify_result *res)
{
	/* MAXSTRINGLEN counts the NUL, as in stap (>= 16: check_header). */
	u32 maxlen = p->limits[STP_LIM_MAXSTRINGLEN] - 1;
	u32 i;

	for (i = 0; i < p->nstrs; i++) {
		const struct stp_str_desc *d = &p->strs[i];

		if ((u64)d->off + d->len > p->strdata_size)
			return FAIL(res, BAD_STRING, i,
				    "string %u [%u, +%u) outside STRDATA (%u bytes)",
				    VI(i), VI(d->off), VI(d->len),
				    VI(p->strdata_size));
		if (d->len > maxlen)
			return FAIL(res, BAD_STRING, i,
				    "string %u: %u bytes, MAXSTRINGLEN is %u (NUL included)",
				    VI(i), VI(d->len), VI(maxlen + 1));
		if (memchr(p->strdata + d->off, 0, d->len))
			return FAIL(res, BAD_STRING, i,
				    "string %u holds a NUL byte", VI(i));
	}
	return 0;
}

static int check_formats(const struct stp_prog *p,
			 struct stp_verify_result *res)
{
	u32 i;

	for (i = 0; i < p->nformats; i++) {
		const struct stp_format_desc *f = &p->formats[i];

		if (f->reserved)
			return FAIL(res, BAD_FORMAT, i,
				    "format %u: reserved field must be 0",
				    VI(i));
		if (f->text != STP_FMT_NO_TEXT && f->text >= p->nstrs)
			return FAIL(res, BAD_FORMAT, i,
				    "format %u names string %u of %u as its text",
				    VI(i), VI(f->text), VI(p->nstrs));

		if (f->nargs > STP_MAX_FMT_ARGS)
			return FAIL(res, BAD_FORMAT, i,
				    "format %u has %u arguments, the cap is %u",
				    VI(i), VI(f->nargs), VI(STP_MAX_FMT_ARGS));
		if (f->nargs < 32 && (f->str_mask >> f->nargs))
			return FAIL(res, BAD_FORMAT, i,
				    "format %u: kind mask 0x%x has bits past its %u arguments",
				    VI(i), VI(f->str_mask), VI(f->nargs));
	}
	return 0;
}

/*
 * Regular expressions (abi.h: struct stp_regex_desc): the sizes, every
 * byte class, the start state and every transition in range, the table
 * inside REGEXDATA. vm.c's regex_match indexes with nothing else.
 */
static int check_regexes(const struct stp_prog *p,
			 struct stp_verify_result *res)
{
	u32 i, k;

	for (i = 0; i < p->nregexes; i++) {	/* <= STP_MAX_REGEXES */
		const struct stp_regex_desc *d = &p->regexes[i];
		u64 cells = (u64)d->nstates * d->nclasses;
		const u16 *t;

		if (d->nstates < 2 || d->nstates > STP_MAX_REGEX_STATES ||
		    d->nclasses < 2 || d->nclasses > 257)
			return FAIL(res, BAD_REGEX, i,
				    "regex %u: %u states of %u classes outside [2, %u] x [2, 257]",
				    VI(i), VI(d->nstates), VI(d->nclasses),
				    VI(STP_MAX_REGEX_STATES));
		if (d->start >= d->nstates)
			return FAIL(res, BAD_REGEX, i,
				    "regex %u: start state %u of %u",
				    VI(i), VI(d->start), VI(d->nstates));
		if ((u64)d->trans + cells > p->rxdata_len)
			return FAIL(res, BAD_REGEX, i,
				    "regex %u: table [%u, +%u) outside REGEXDATA (%u entries)",
				    VI(i), VI(d->trans), VI(cells),
				    VI(p->rxdata_len));
		for (k = 0; k < 256; k++)
			if (d->classes[k] >= d->nclasses - 1)
				return FAIL(res, BAD_REGEX, i,
					    "regex %u: byte %u in class %u of %u",
					    VI(i), VI(k), VI(d->classes[k]),
					    VI(d->nclasses - 1));
		t = p->rxdata + d->trans;
		/* cells <= STP_MAX_REGEX_STATES * 257 */
		for (k = 0; k < cells; k++)
			if (t[k] >= d->nstates)
				return FAIL(res, BAD_REGEX, i,
					    "regex %u: entry %u goes to state %u of %u",
					    VI(i), VI(k), VI(t[k]),
					    VI(d->nstates));
	}
	return 0;
}

/*
 * Group program i (abi.h: struct stp_regex_sub): vm_str.c's Pike VM
 * indexes the program, the slots and the sets with nothing else, and
 * follows pc + 1 only from an instruction that is not the last.
 */
static int check_regex_sub(const struct stp_prog *p, u32 i,
			   struct stp_verify_result *res)
{
	const struct stp_regex_sub *d = &p->rxsubs[i];
	const u32 *prog;
	u32 k;

	if (d->pad)
		return FAIL(res, BAD_REGEX, i, "regex %u: program pad %u",
			    VI(i), VI(d->pad));
	if (!d->ninsn)
		return 0;
	if (d->ninsn > STP_MAX_REGEX_INSNS)
		return FAIL(res, BAD_REGEX, i,
			    "regex %u: %u program instructions, the cap is %u",
			    VI(i), VI(d->ninsn), VI(STP_MAX_REGEX_INSNS));
	if ((u64)d->first + d->ninsn > p->rxprog_len)
		return FAIL(res, BAD_REGEX, i,
			    "regex %u: program [%u, +%u) outside REGEXPROG (%u instructions)",
			    VI(i), VI(d->first), VI(d->ninsn),
			    VI(p->rxprog_len));
	if (d->nslots < 2 || d->nslots > STP_MAX_REGEX_SLOTS ||
	    (d->nslots & 1))
		return FAIL(res, BAD_REGEX, i,
			    "regex %u: %u slots, not even in [2, %u]",
			    VI(i), VI(d->nslots), VI(STP_MAX_REGEX_SLOTS));
	prog = p->rxprog + d->first;
	for (k = 0; k < d->ninsn; k++) {	/* <= STP_MAX_REGEX_INSNS */
		u32 op = prog[k] & STP_RX_OP_MASK;
		u32 arg = prog[k] >> STP_RX_OP_BITS;
		bool bad;

		switch (op) {
		case STP_RX_SET:
			bad = arg >= p->nrxsets;
			break;
		case STP_RX_JMP:
		case STP_RX_SPLIT:
			bad = arg >= d->ninsn;
			break;
		case STP_RX_SAVE:
			bad = arg >= d->nslots;
			break;
		case STP_RX_BOL:
		case STP_RX_EOL:
		case STP_RX_MATCH:
			bad = arg != 0;
			break;
		default:
			return FAIL(res, BAD_REGEX, i,
				    "regex %u: instruction %u has unknown operation %u",
				    VI(i), VI(k), VI(op));
		}
		if (bad)
			return FAIL(res, BAD_REGEX, i,
				    "regex %u: instruction %u (operation %u): argument %u out of range",
				    VI(i), VI(k), VI(op), VI(arg));
	}
	k = prog[d->ninsn - 1] & STP_RX_OP_MASK;
	if (k != STP_RX_JMP && k != STP_RX_MATCH)
		return FAIL(res, BAD_REGEX, i,
			    "regex %u: last instruction (operation %u) falls through",
			    VI(i), VI(k));
	return 0;
}

static int check_regex_subs(struct stp_prog *p,
			    struct stp_verify_result *res)
{
	u32 i;
	int err;

	if (p->nrxsubs && p->nrxsubs != p->nregexes)
		return FAIL(res, BAD_REGEX, 0,
			    "%u group programs for %u regexes",
			    VI(p->nrxsubs), VI(p->nregexes));
	for (i = 0; i < p->nrxsubs; i++) {	/* == nregexes, capped */
		err = check_regex_sub(p, i, res);
		if (err)
			return err;
		if (p->rxsubs[i].ninsn)
			p->rx_groups = 1;
	}
	return 0;
}

/*
 * Pretty-printing nodes (abi.h: struct stp_pretty_node): what
 * vm_pretty.c indexes and reads with nothing else checked. A child index
 * is always below its parent's, so following children ends.
 */
static int check_pretty(const struct stp_prog *p,
			struct stp_verify_result *res)
{
	u32 i, k;

	for (i = 0; i < p->npretty; i++) {	/* <= STP_MAX_PRETTY_NODES */
		const struct stp_pretty_node *n = &p->pretty[i];
		bool scalar = n->kind == STP_PK_SIGNED ||
			      n->kind == STP_PK_UNSIGNED ||
			      n->kind == STP_PK_CHAR;
		bool parent = n->kind == STP_PK_STRUCT ||
			      n->kind == STP_PK_ARRAY;

		if (n->kind >= STP_PK__COUNT)
			return FAIL(res, BAD_PRETTY, i,
				    "pretty node %u: unknown kind %u",
				    VI(i), VI(n->kind));
		if (n->name < STP_PRETTY_NAME_STRUCT && n->name >= p->nstrs)
			return FAIL(res, BAD_PRETTY, i,
				    "pretty node %u: name %u of %u strings",
				    VI(i), VI(n->name), VI(p->nstrs));
		for (k = 0; k < sizeof(n->reserved); k++)
			if (n->reserved[k])
				return FAIL(res, BAD_PRETTY, i,
					    "pretty node %u: reserved byte set",
					    VI(i));
		if (scalar ? n->size != 1 && n->size != 2 && n->size != 4 &&
			     n->size != 8 : n->size != 0)
			return FAIL(res, BAD_PRETTY, i,
				    "pretty node %u: size %u for kind %u",
				    VI(i), VI(n->size), VI(n->kind));
		if ((n->bit_size || n->bit_off) &&
		    (n->kind == STP_PK_CHAR || !scalar || !n->bit_size ||
		     (u32)n->bit_off + n->bit_size > 8u * n->size))
			return FAIL(res, BAD_PRETTY, i,
				    "pretty node %u: bitfield [%u, +%u) of %u bytes",
				    VI(i), VI(n->bit_off), VI(n->bit_size),
				    VI(n->size));
		if (n->kind == STP_PK_ARRAY && n->first >= i)
			return FAIL(res, BAD_PRETTY, i,
				    "pretty node %u: array element %u",
				    VI(i), VI(n->first));
		if (!parent && (n->first || n->count))
			return FAIL(res, BAD_PRETTY, i,
				    "pretty node %u: children of a kind %u",
				    VI(i), VI(n->kind));
		/* An empty struct has no children: first and count 0. */
		if (n->kind == STP_PK_STRUCT && (n->first || n->count) &&
		    (!n->count || n->count > STP_MAX_PRETTY_MEMBERS ||
		     (u64)n->first + n->count > i))
			return FAIL(res, BAD_PRETTY, i,
				    "pretty node %u: members [%u, +%u) not before it",
				    VI(i), VI(n->first), VI(n->count));
		if (n->kind == STP_PK_ARRAY && n->count)
			return FAIL(res, BAD_PRETTY, i,
				    "pretty node %u: an array with a count of %u",
				    VI(i), VI(n->count));
	}
	return 0;
}

static bool is_return(u8 op)
{
	return op == STP_OP_RET || op == STP_OP_RETI || op == STP_OP_RETS;
}

/* The return instruction a handler must use (enum stp_ret_kind order). */
static const u8 stp_ret_op[STP_RET__COUNT] = {
	[STP_RET_NONE] = STP_OP_RET,
	[STP_RET_LONG] = STP_OP_RETI,
	[STP_RET_STR] = STP_OP_RETS,
};

static int check_handlers(struct stp_prog *p, struct stp_verify_result *res)
{
	u64 prev_end = 0;
	u32 i, j;

	for (i = 0; i < p->nhandlers; i++) {
		const struct stp_handler_desc *h = &p->handlers[i];
		u64 end = (u64)h->insn_off + h->insn_count;

		if (!h->insn_count || end > p->ninsns)
			return FAIL(res, BAD_HANDLER, i,
				    "handler %u [%u, %u) empty or outside CODE (%u instructions)",
				    VI(i), VI(h->insn_off), VI(end),
				    VI(p->ninsns));
		if (h->insn_off < prev_end)
			return FAIL(res, BAD_HANDLER, i,
				    "handler %u starts at %u, inside or before handler %u",
				    VI(i), VI(h->insn_off), VI(i - 1));
		prev_end = end;
		if (h->nregs > STP_MAX_REGS || h->nsregs > STP_MAX_SREGS)
			return FAIL(res, BAD_HANDLER, i,
				    "handler %u uses %u integer and %u string registers, the caps are %u and %u",
				    VI(i), VI(h->nregs), VI(h->nsregs),
				    VI(STP_MAX_REGS), VI(STP_MAX_SREGS));
		if (h->ctx >= STP_CTX__ALL)
			return FAIL(res, BAD_HANDLER, i,
				    "handler %u has unknown context %u",
				    VI(i), VI(h->ctx));
		for (j = 0; j < sizeof(h->reserved); j++)
			if (h->reserved[j])
				return FAIL(res, BAD_HANDLER, i,
					    "handler %u: reserved byte %u is not 0",
					    VI(i), VI(j));
		if (h->ctx != STP_CTX_FUNCTION &&
		    (h->nparams || h->nsparams || h->ret))
			return FAIL(res, BAD_HANDLER, i,
				    "handler %u is not a function: nparams, nsparams and ret must be 0",
				    VI(i));
		if (h->nparams > h->nregs || h->nsparams > h->nsregs ||
		    h->ret >= STP_RET__COUNT)
			return FAIL(res, BAD_HANDLER, i,
				    "function %u: %u/%u parameters for %u/%u registers, result kind %u",
				    VI(i), VI(h->nparams), VI(h->nsparams),
				    VI(h->nregs), VI(h->nsregs), VI(h->ret));
		if (h->ctx == STP_CTX_FUNCTION)
			p->nfuncs++;
		if (!is_return(p->code[end - 1].op))
			return FAIL(res, NO_RET, (u32)(end - 1),
				    "handler %u ends in %s at insn %u, not RET, RETI or RETS",
				    VI(i),
				    VS(p->code[end - 1].op < STP_OP__COUNT ?
				       stp_opcode_info[p->code[end - 1].op].name :
				       "an unknown opcode"),
				    VI(end - 1));
	}
	if (p->nfuncs &&
	    stp_vm_frames_size(p->limits[STP_LIM_MAXNESTING],
			       p->limits[STP_LIM_MAXSTRINGLEN]) >
	    STP_MAX_FRAME_BYTES)
		return FAIL(res, BAD_LIMIT, STP_LIM_MAXNESTING,
			    "MAXNESTING %u frames with MAXSTRINGLEN %u take more than %u bytes per CPU",
			    VI(p->limits[STP_LIM_MAXNESTING]),
			    VI(p->limits[STP_LIM_MAXSTRINGLEN]),
			    VI(STP_MAX_FRAME_BYTES));
	return 0;
}

static bool symbol_char_ok(u8 c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
}

/*
 * Statistic descriptors: known histogram kind with stap's parameters,
 * flags and shift in range, each at the offset right after the previous
 * one, all within STP_MAX_STAT_BYTES per CPU. Sets p->stat_bytes.
 */
static int check_stats(struct stp_prog *p, struct stp_verify_result *res)
{
	u64 off = 0;
	u32 i;

	for (i = 0; i < p->nstats; i++) {	/* nstats <= STP_MAX_STATS */
		const struct stp_stat_desc *d = &p->stats[i];
		s64 span = (s64)d->stop - d->start;
		bool ok;

		if (d->reserved || (d->flags & ~STP_STAT_F__ALL))
			return FAIL(res, BAD_STAT, i,
				    "statistic %u: unknown flags 0x%x or reserved field",
				    VI(i), VI(d->flags));
		if (d->shift > STP_STAT_MAX_SHIFT ||
		    (d->shift && !(d->flags & STP_STAT_F_VARIANCE)))
			return FAIL(res, BAD_STAT, i,
				    "statistic %u: shift %u (at most %u, only with the variance flag)",
				    VI(i), VI(d->shift), VI(STP_STAT_MAX_SHIFT));
		switch (d->hist) {
		case STP_HIST_NONE:
			ok = !d->nbuckets && !d->start && !d->stop &&
			     !d->interval;
			break;
		case STP_HIST_LOG:
			ok = d->nbuckets == STP_HIST_LOG_BUCKETS &&
			     !d->start && !d->stop && !d->interval;
			break;
		case STP_HIST_LINEAR:
			/* stap: (stop - start) / interval + 3 buckets, 3 to 128 */
			ok = d->interval > 0 &&
			     (s64)d->nbuckets == span / d->interval + 3 &&
			     d->nbuckets >= 3 &&
			     d->nbuckets <= STP_HIST_MAX_BUCKETS;
			break;
		default:
			ok = false;
			break;
		}
		if (!ok)
			return FAIL(res, BAD_STAT, i,
				    "statistic %u: histogram kind %u with %u buckets, start %d, stop %d, interval %d",
				    VI(i), VI(d->hist), VI(d->nbuckets),
				    VI(d->start), VI(d->stop), VI(d->interval));
		if (d->flags & STP_STAT_F_ARRAY)
			continue;	/* placed by check_maps */
		if (d->offset != off)
			return FAIL(res, BAD_STAT, i,
				    "statistic %u at offset %u, must be %u",
				    VI(i), VI(d->offset), VI(off));
		off += stp_stat_size(d);
		if (off > STP_MAX_STAT_BYTES)
			return FAIL(res, BAD_STAT, i,
				    "statistics take more than %u bytes per CPU",
				    VI(STP_MAX_STAT_BYTES));
	}
	p->stat_bytes = (u32)off;
	return 0;
}

/*
 * Map descriptors: 1..STP_MAX_MAP_KEYS keys, no kind bit past them, a
 * known value kind, known flags, a capacity in [1, STP_MAX_MAP_ENTRIES],
 * all maps within STP_MAX_MAP_BYTES. A statistics array names an
 * STP_STAT_F_ARRAY statistic placed right after the scalar statistics and
 * the arrays before it (capacity copies), all within STP_MAX_STAT_BYTES
 * per CPU. Sets p->map_bytes, p->iter_cap (the largest capacity) and
 * adds the arrays' copies to p->stat_bytes (check_stats ran first).
 */
static int check_maps(struct stp_prog *p, struct stp_verify_result *res)
{
	u32 maxstr = p->limits[STP_LIM_MAXSTRINGLEN];
	u64 soff = p->stat_bytes;
	u64 total = 0;
	u32 i;

	p->iter_cap = 0;
	for (i = 0; i < p->nmaps; i++) {	/* nmaps <= STP_MAX_MAPS */
		const struct stp_map_desc *d = &p->maps[i];

		if (d->reserved || d->reserved2 ||
		    (d->stat && d->value != STP_MAPV_STAT) ||
		    (d->flags & ~STP_MAP_F__ALL))
			return FAIL(res, BAD_MAP, i,
				    "map %u: unknown flags 0x%x or reserved field",
				    VI(i), VI(d->flags));
		if (!d->nkeys || d->nkeys > STP_MAX_MAP_KEYS ||
		    (d->key_str_mask >> d->nkeys))
			return FAIL(res, BAD_MAP, i,
				    "map %u: %u keys (1 to %u), string mask 0x%x",
				    VI(i), VI(d->nkeys), VI(STP_MAX_MAP_KEYS),
				    VI(d->key_str_mask));
		if (d->value >= STP_MAPV__COUNT)
			return FAIL(res, BAD_MAP, i,
				    "map %u: value kind %u is not supported",
				    VI(i), VI(d->value));
		if (!d->capacity || d->capacity > STP_MAX_MAP_ENTRIES)
			return FAIL(res, BAD_MAP, i,
				    "map %u: capacity %u outside [1, %u]",
				    VI(i), VI(d->capacity),
				    VI(STP_MAX_MAP_ENTRIES));
		if (d->value == STP_MAPV_STAT) {
			const struct stp_stat_desc *sd;

			if (d->stat >= p->nstats ||
			    !(p->stats[d->stat].flags & STP_STAT_F_ARRAY))
				return FAIL(res, BAD_MAP, i,
					    "map %u: statistic %u is not an array statistic",
					    VI(i), VI(d->stat));
			sd = &p->stats[d->stat];
			if (sd->offset != soff)
				return FAIL(res, BAD_STAT, d->stat,
					    "statistic %u at offset %u, must be %u",
					    VI(d->stat), VI(sd->offset),
					    VI(soff));
			soff += (u64)d->capacity * stp_stat_size(sd);
			if (soff > STP_MAX_STAT_BYTES)
				return FAIL(res, BAD_STAT, d->stat,
					    "statistics take more than %u bytes per CPU",
					    VI(STP_MAX_STAT_BYTES));
		}
		total += stp_map_size(d, maxstr);
		if (total > STP_MAX_MAP_BYTES)
			return FAIL(res, TOO_MANY, i,
				    "maps take more than %u bytes (at map %u)",
				    VI(STP_MAX_MAP_BYTES), VI(i));
		if (d->capacity > p->iter_cap)
			p->iter_cap = d->capacity;
	}
	p->map_bytes = total;
	p->stat_bytes = (u32)soff;	/* <= STP_MAX_STAT_BYTES */
	return 0;
}

/*
 * A PERF probe's event (abi.h): a generic perf type with a config the
 * kernel defines, a sample period in range (for the clock events, in the
 * timers' bounds: the period counts ns), a pid with .process only.
 */
static int check_perf(const struct stp_probe_desc *d, u32 i,
		      struct stp_verify_result *res)
{
	u64 c = d->ev_config;
	bool ok, clock = false;

	switch (d->ev_type) {
	case STP_PERF_TYPE_HARDWARE:
		ok = c < STP_PERF_HW_MAX;
		break;
	case STP_PERF_TYPE_SOFTWARE:
		ok = c < STP_PERF_SW_MAX;
		clock = c == STP_PERF_SW_CPU_CLOCK ||
			c == STP_PERF_SW_TASK_CLOCK;
		break;
	case STP_PERF_TYPE_HW_CACHE:
		ok = (c & 0xff) < STP_PERF_CACHE_ID_MAX &&
		     ((c >> 8) & 0xff) < STP_PERF_CACHE_OP_MAX &&
		     ((c >> 16) & 0xff) < STP_PERF_CACHE_RESULT_MAX &&
		     !(c >> 24);
		break;
	case STP_PERF_TYPE_RAW:
		ok = true;
		break;
	default:
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: perf event type %u is not one of hardware (0), software (1), hw_cache (3), raw (4)",
			    VI(i), VI(d->ev_type));
	}
	if (!ok)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: perf event config 0x%x is not an event of type %u",
			    VI(i), VI(c), VI(d->ev_type));
	if (clock && (d->period_ns < STP_MIN_TIMER_NS ||
		      d->period_ns > STP_MAX_TIMER_NS))
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: perf clock sample period %u ns is outside [%u, %u]",
			    VI(i), VI(d->period_ns), VI(STP_MIN_TIMER_NS),
			    VI(STP_MAX_TIMER_NS));
	if (d->period_ns < 1 || d->period_ns > STP_MAX_PERF_PERIOD)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: perf sample period %u is outside [1, %u]",
			    VI(i), VI(d->period_ns), VI(STP_MAX_PERF_PERIOD));
	if ((d->flags & STP_PROBE_F_PERF_TASK) ? d->ev_pid <= 0
					       : d->ev_pid != 0)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: perf pid %d without the process flag, or not > 0 with it",
			    VI(i), VI(d->ev_pid));
	if (d->ev_len)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: a length on a perf probe", VI(i));
	return 0;
}

/*
 * A WATCH probe's watchpoint (abi.h): writes or reads and writes, of 1,
 * 2, 4 or 8 bytes at a non-zero address aligned to the length; no period
 * or pid.
 */
static int check_watch(const struct stp_probe_desc *d, u32 i,
		       struct stp_verify_result *res)
{
	u32 len = d->ev_len;

	if (d->ev_type != STP_WATCH_W && d->ev_type != STP_WATCH_RW)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: watchpoint access %u is not write (%u) or read/write (%u)",
			    VI(i), VI(d->ev_type), VI(STP_WATCH_W),
			    VI(STP_WATCH_RW));
	if (len != 1 && len != 2 && len != 4 && len != 8)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: watchpoint length %u is not 1, 2, 4 or 8",
			    VI(i), VI(len));
	if (!d->ev_config || (d->ev_config & (len - 1)))
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: watchpoint address 0x%x is 0 or not aligned to its length %u",
			    VI(i), VI(d->ev_config), VI(len));
	if (d->period_ns || d->ev_pid || (d->flags & STP_PROBE_F_PERF_TASK))
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: a period, pid or process flag on a watchpoint",
			    VI(i));
	return 0;
}

/*
 * A NETFILTER probe's hook (abi.h: netfilter hooks): one of stap's four
 * protocol families, a hook that family has, no length, period, pid
 * flag or symbol fields (the caller checks those); every s32 is a
 * priority.
 */
static int check_netfilter(const struct stp_probe_desc *d, u32 i,
			   struct stp_verify_result *res)
{
	u32 nhooks;

	switch (d->ev_type) {
	case STP_NFPROTO_IPV4:
	case STP_NFPROTO_IPV6:
	case STP_NFPROTO_BRIDGE:
		nhooks = STP_NF_INET_NUMHOOKS;
		break;
	case STP_NFPROTO_ARP:
		nhooks = STP_NF_ARP_NUMHOOKS;
		break;
	default:
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: netfilter protocol family %u is not IPv4 (%u), IPv6 (%u), ARP (%u) or bridge (%u)",
			    VI(i), VI(d->ev_type), VI(STP_NFPROTO_IPV4),
			    VI(STP_NFPROTO_IPV6), VI(STP_NFPROTO_ARP),
			    VI(STP_NFPROTO_BRIDGE));
	}
	if (d->ev_config >= nhooks)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: netfilter hook %u is out of range: protocol family %u has hooks 0 to %u",
			    VI(i), VI(d->ev_config), VI(d->ev_type),
			    VI(nhooks - 1));
	if (d->ev_len || d->period_ns ||
	    (d->flags & ~STP_PROBE_F_OPTIONAL))
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: a length, period or flag other than optional on a netfilter probe",
			    VI(i));
	return 0;
}

/* A byte of a procfs file name (abi.h: procfs files). */
static bool file_char_ok(u8 c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' ||
	       c == '+' || c == ',' || c == ':' || c == '=' || c == '@' ||
	       c == '%';
}

/*
 * String str of the image as a uprobe's path (abi.h: user-space probes):
 * absolute, at most STP_MAX_UPROBE_PATH bytes, without NUL. One pass over
 * the path, bounded by its length.
 */
static int check_uprobe_path(const struct stp_prog *p, u32 i, u32 str,
			     struct stp_verify_result *res)
{
	const struct stp_str_desc *s;
	const u8 *c;
	u32 j;

	if (str >= p->nstrs)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u names string %u of %u as a path",
			    VI(i), VI(str), VI(p->nstrs));
	s = &p->strs[str];
	c = p->strdata + s->off;
	if (!s->len || s->len > STP_MAX_UPROBE_PATH || c[0] != '/')
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: uprobe path of %u bytes, must be absolute and 1 to %u",
			    VI(i), VI(s->len), VI(STP_MAX_UPROBE_PATH));
	for (j = 0; j < s->len; j++)
		if (!c[j])
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: uprobe path has a NUL at %u",
				    VI(i), VI(j));
	return 0;
}

/*
 * A uprobe's descriptor (abi.h: user-space probes): a path as its symbol
 * (and as ev_type with STP_PROBE_F_UEXE), ev_config and offset any (the
 * kernel checks them against the file), ev_pid a process or 0, every
 * other field 0 and no flag but OPTIONAL and UEXE.
 */
static int check_uprobe(const struct stp_prog *p, u32 i,
			struct stp_verify_result *res)
{
	const struct stp_probe_desc *d = &p->probes[i];
	u32 j;
	int err;

	if ((d->ev_type && !(d->flags & STP_PROBE_F_UEXE)) || d->ev_len ||
	    d->randomize ||
	    (d->flags & ~(STP_PROBE_F_OPTIONAL | STP_PROBE_F_UEXE)))
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: a uprobe uses only its path, offsets, process, program and arguments",
			    VI(i));
	/* USDT arguments: maxactive specs from uargs, each well formed */
	if (d->maxactive > STP_MAX_UARGS ||
	    (d->maxactive && d->kind != STP_PROBE_UPROBE) ||
	    (u64)d->uargs + d->maxactive > p->nuargs)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: USDT arguments [%u, +%u) outside the %u of UARGS (at most %u)",
			    VI(i), VI(d->uargs), VI(d->maxactive),
			    VI(p->nuargs), VI(STP_MAX_UARGS));
	for (j = 0; j < d->maxactive; j++) {	/* <= STP_MAX_UARGS */
		u64 a = p->uargs[d->uargs + j];
		u64 kind = a & STP_UARG_KIND_MASK;
		u64 size = (a >> STP_UARG_SIZE_SHIFT) & 0xf;
		u64 reg = (a >> STP_UARG_REG_SHIFT) & 0xff;

		if ((a & STP_UARG_RESERVED) || kind > STP_UARG_MEM ||
		    (size != 1 && size != 2 && size != 4 && size != 8) ||
		    (kind != STP_UARG_CONST && reg >= STP_UARG_REGS) ||
		    (kind == STP_UARG_CONST && reg))
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: USDT argument %u has a bad spec 0x%x",
				    VI(i), VI(j + 1), VI(a));
	}
	if (d->ev_pid < 0)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: uprobe process %d is negative",
			    VI(i), VI(d->ev_pid));
	err = check_uprobe_path(p, i, d->symbol, res);
	if (!err && (d->flags & STP_PROBE_F_UEXE))
		err = check_uprobe_path(p, i, d->ev_type, res);
	return err;
}

/*
 * A process event's descriptor (abi.h: process events): an event below
 * STP_PROC__COUNT (0 for the syscall kinds), a process or 0, with
 * STP_PROBE_F_UEXE a program's path as ev_type; every other field 0, no
 * flag but OPTIONAL and UEXE.
 */
static int check_process(const struct stp_prog *p, u32 i,
			 struct stp_verify_result *res)
{
	const struct stp_probe_desc *d = &p->probes[i];

	if (d->symbol || d->offset || d->maxactive || d->ev_len ||
	    d->randomize || d->uargs ||
	    (d->ev_type && !(d->flags & STP_PROBE_F_UEXE)) ||
	    (d->flags & ~(STP_PROBE_F_OPTIONAL | STP_PROBE_F_UEXE)))
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: a process event uses only its event, process and program",
			    VI(i));
	if (d->ev_config >= STP_PROC__COUNT ||
	    (d->kind != STP_PROBE_PROCESS && d->ev_config))
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: process event %u is not one of the %u",
			    VI(i), VI(d->ev_config), VI(STP_PROC__COUNT));
	if (d->ev_pid < 0)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: process %d is negative",
			    VI(i), VI(d->ev_pid));
	if (d->flags & STP_PROBE_F_UEXE)
		return check_uprobe_path(p, i, d->ev_type, res);
	return 0;
}

/*
 * The user-space symbol tables (abi.h): each binary an absolute path of
 * STRS and a slice of USYMS sorted by strictly increasing offset, each
 * symbol's name inside USYMSTR. Every symbol is looked at once per
 * binary that names it: at most STP_MAX_USYM_BINS * STP_MAX_USYMS steps
 * (counts capped by check_counts).
 */
static int check_usyms(const struct stp_prog *p,
		       struct stp_verify_result *res)
{
	u32 i, j;

	for (i = 0; i < p->nusym_bins; i++) {
		const struct stp_usym_bin *b = &p->usym_bins[i];
		const struct stp_str_desc *s;

		if (b->reserved || b->path >= p->nstrs)
			return FAIL(res, BAD_USYM, i,
				    "user binary %u: path string %u of %u, reserved %u",
				    VI(i), VI(b->path), VI(p->nstrs),
				    VI(b->reserved));
		s = &p->strs[b->path];
		if (!s->len || p->strdata[s->off] != '/')
			return FAIL(res, BAD_USYM, i,
				    "user binary %u: path is not absolute",
				    VI(i));
		if ((u64)b->first + b->count > p->nusyms)
			return FAIL(res, BAD_USYM, i,
				    "user binary %u: symbols [%u, +%u) outside the %u of USYMS",
				    VI(i), VI(b->first), VI(b->count),
				    VI(p->nusyms));
		for (j = 0; j < b->count; j++) {
			const struct stp_usym *u = &p->usyms[b->first + j];

			if (u->reserved || !u->name_len ||
			    u->name_len > STP_MAX_USYM_NAME ||
			    (u64)u->name + u->name_len > p->usymstr_size)
				return FAIL(res, BAD_USYM, i,
					    "user binary %u: symbol %u has a bad name [%u, +%u) of %u bytes",
					    VI(i), VI(j), VI(u->name),
					    VI(u->name_len),
					    VI(p->usymstr_size));
			if (j && u->offset <= u[-1].offset)
				return FAIL(res, BAD_USYM, i,
					    "user binary %u: symbol %u is not after symbol %u",
					    VI(i), VI(j), VI(j - 1));
		}
	}
	return 0;
}

static bool is_file_probe(const struct stp_probe_desc *d)
{
	return d->kind < STP_PROBE__COUNT &&
	       (stp_probe_uses[d->kind] & STP_PROBE_USES_FILE);
}

/*
 * Probe i, a procfs file's (abi.h: procfs files): its name, mode and
 * size; at most one probe of its kind on the file, the same mode and size
 * as the other kind's; at most STP_MAX_PROCFS_FILES files (*files counts
 * them). Each earlier probe is looked at once; a file has at most two
 * probes, so at most (2 * STP_MAX_PROCFS_FILES + 1) * nprobes comparisons
 * of at most STP_MAX_PROCFS_NAME bytes before the count refuses.
 */
static int check_file(const struct stp_prog *p, u32 i, u32 *files,
		      struct stp_verify_result *res)
{
	const struct stp_probe_desc *d = &p->probes[i];
	const struct stp_str_desc *s;
	const u8 *c;
	bool seen = false;
	u32 j;

	if (d->symbol >= p->nstrs)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u names string %u of %u as its procfs file",
			    VI(i), VI(d->symbol), VI(p->nstrs));
	s = &p->strs[d->symbol];
	c = p->strdata + s->off;
	if (!s->len || s->len > STP_MAX_PROCFS_NAME)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: procfs file name of %u bytes, must be 1 to %u",
			    VI(i), VI(s->len), VI(STP_MAX_PROCFS_NAME));
	for (j = 0; j < s->len; j++)
		if (!file_char_ok(c[j]))
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: procfs file name has byte 0x%x at %u, not in [A-Za-z0-9_.+,:=@%%-]",
				    VI(i), VI(c[j]), VI(j));
	if (c[0] == '.' && (s->len == 1 || (s->len == 2 && c[1] == '.')))
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: procfs file name is \".\" or \"..\"",
			    VI(i));
	if (d->offset & ~STP_PROCFS_MODE_MASK)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: procfs file mode 0%o has bits outside 0666",
			    VI(i), VI(d->offset));
	if (!d->maxactive || d->maxactive > STP_MAX_PROCFS_SIZE)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: procfs file size %u, must be 1 to %u",
			    VI(i), VI(d->maxactive), VI(STP_MAX_PROCFS_SIZE));
	for (j = 0; j < i; j++) {
		const struct stp_probe_desc *e = &p->probes[j];
		const struct stp_str_desc *t;

		if (!is_file_probe(e))
			continue;
		t = &p->strs[e->symbol];	/* checked when j was */
		if (t->len != s->len || memcmp(p->strdata + t->off, c, s->len))
			continue;
		if (e->kind == d->kind)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: a second %s probe on procfs file %u's",
				    VI(i), VS(d->kind == STP_PROBE_PROCFS_READ ?
					      "read" : "write"), VI(j));
		if (e->offset != d->offset || e->maxactive != d->maxactive)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: mode or size differs from probe %u's on the same procfs file",
				    VI(i), VI(j));
		seen = true;
	}
	if (!seen && ++*files > STP_MAX_PROCFS_FILES)
		return FAIL(res, BAD_PROBE, i,
			    "probe %u: more than %u procfs files",
			    VI(i), VI(STP_MAX_PROCFS_FILES));
	return 0;
}

static int check_probes(const struct stp_prog *p,
			struct stp_verify_result *res)
{
	u32 i, j, files = 0;

	for (i = 0; i < p->nprobes; i++) {
		const struct stp_probe_desc *d = &p->probes[i];
		u32 uses;
		bool kp;

		if (d->kind >= STP_PROBE__COUNT)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u has unknown kind %u",
				    VI(i), VI(d->kind));
		uses = stp_probe_uses[d->kind];
		kp = uses & STP_PROBE_USES_SYMBOL;
		if (d->flags & ~STP_PROBE_F__ALL)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u has unknown flags 0x%x",
				    VI(i), VI(d->flags));
		if ((d->flags & STP_PROBE_F_UEXE) &&
		    !(uses & (STP_PROBE_USES_UPROBE |
			      STP_PROBE_USES_PROCESS)))
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: the program flag is only for uprobes and process events",
				    VI(i));
		if ((d->flags & STP_PROBE_F_PROFILE) &&
		    !(uses & STP_PROBE_USES_PERIOD))
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: the profile flag is only for timers",
				    VI(i));
		if ((d->flags & STP_PROBE_F_JIFFIES) &&
		    (!(uses & STP_PROBE_USES_PERIOD) ||
		     (d->flags & STP_PROBE_F_PROFILE)))
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: the jiffies flag is only for timers, without the profile flag",
				    VI(i));
		if (d->randomize &&
		    (!(uses & STP_PROBE_USES_PERIOD) ||
		     (d->flags & STP_PROBE_F_PROFILE)))
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: randomize is only for timers, without the profile flag",
				    VI(i));
		/* abi.h: at most the period, so no period is negative */
		if (d->randomize > d->period_ns)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: randomize %u is above the timer period %u",
				    VI(i), VI(d->randomize), VI(d->period_ns));
		if (d->reserved)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: reserved fields must be 0",
				    VI(i));
		if (d->uargs && d->kind != STP_PROBE_UPROBE)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: USDT arguments on a probe that is not a uprobe",
				    VI(i));
		/* helpers.h PP copies it; STRS are inside STRDATA */
		if (d->pp >= p->nstrs)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u names string %u of %u as its pp",
				    VI(i), VI(d->pp), VI(p->nstrs));
		if (!(uses & (STP_PROBE_USES_PERF | STP_PROBE_USES_WATCH |
			      STP_PROBE_USES_NETFILTER |
			      STP_PROBE_USES_UPROBE |
			      STP_PROBE_USES_PROCESS)) &&
		    (d->ev_type || d->ev_config || d->ev_pid || d->ev_len ||
		     (d->flags & STP_PROBE_F_PERF_TASK)))
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: perf event fields set on a probe that is not a perf probe",
				    VI(i));
		if (d->handler >= p->nhandlers)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u names handler %u of %u",
				    VI(i), VI(d->handler), VI(p->nhandlers));
		if (p->handlers[d->handler].ctx != stp_probe_ctx[d->kind])
			return FAIL(res, BAD_PROBE, i,
				    "probe %u of kind %u needs a handler of context %u, handler %u has %u",
				    VI(i), VI(d->kind),
				    VI(stp_probe_ctx[d->kind]),
				    VI(d->handler),
				    VI(p->handlers[d->handler].ctx));
		if (uses & (STP_PROBE_USES_PERF | STP_PROBE_USES_WATCH)) {
			int err = (uses & STP_PROBE_USES_PERF) ?
				  check_perf(d, i, res) :
				  check_watch(d, i, res);

			if (err)
				return err;
		} else if (uses & STP_PROBE_USES_NETFILTER) {
			int err = check_netfilter(d, i, res);

			if (err)
				return err;
		} else if (d->flags & STP_PROBE_F_JIFFIES) {
			/* a timer (above): period_ns counts jiffies */
			if (d->period_ns < 1 ||
			    d->period_ns > STP_MAX_TIMER_JIFFIES)
				return FAIL(res, BAD_PROBE, i,
					    "probe %u: timer period %u jiffies is outside [1, %u]",
					    VI(i), VI(d->period_ns),
					    VI(STP_MAX_TIMER_JIFFIES));
		} else if ((uses & STP_PROBE_USES_PERIOD) &&
			   !(d->period_ns == 0 &&
			     (d->flags & STP_PROBE_F_PROFILE))) {
			if (d->period_ns < STP_MIN_TIMER_NS)
				return FAIL(res, BAD_PROBE, i,
					    "probe %u: timer period %u ns is below %u ns",
					    VI(i), VI(d->period_ns),
					    VI(STP_MIN_TIMER_NS));
			if (d->period_ns > STP_MAX_TIMER_NS)
				return FAIL(res, BAD_PROBE, i,
					    "probe %u: timer period %u ns is above %u ns",
					    VI(i), VI(d->period_ns),
					    VI(STP_MAX_TIMER_NS));
		} else if (d->period_ns) {
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: period set on a probe that is not a timer",
				    VI(i));
		}
		if (uses & STP_PROBE_USES_FILE) {
			int err = check_file(p, i, &files, res);

			if (err)
				return err;
			continue;
		}
		if (uses & STP_PROBE_USES_UPROBE) {
			int err = check_uprobe(p, i, res);

			if (err)
				return err;
			continue;
		}
		if (uses & STP_PROBE_USES_PROCESS) {
			int err = check_process(p, i, res);

			if (err)
				return err;
			continue;
		}
		if (!kp) {
			if (d->symbol || d->offset || d->maxactive)
				return FAIL(res, BAD_PROBE, i,
					    "probe %u: symbol, offset or maxactive set on a probe that is not a kprobe",
					    VI(i));
			continue;
		}
		/* of the kinds with a symbol, a tracepoint uses neither */
		if ((d->offset && !(uses & STP_PROBE_USES_OFFSET)) ||
		    (d->maxactive && !(uses & STP_PROBE_USES_MAXACTIVE)))
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: offset or maxactive set on a tracepoint",
				    VI(i));
		if (d->maxactive > STP_MAX_MAXACTIVE)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u: maxactive %u is above %u",
				    VI(i), VI(d->maxactive),
				    VI(STP_MAX_MAXACTIVE));
		if (d->symbol >= p->nstrs)
			return FAIL(res, BAD_PROBE, i,
				    "probe %u names string %u of %u as its symbol",
				    VI(i), VI(d->symbol), VI(p->nstrs));
		{
			const struct stp_str_desc *s = &p->strs[d->symbol];
			const u8 *c = p->strdata + s->off;
			u32 colons = 0;

			if (!s->len || s->len > STP_MAX_SYMBOL_LEN)
				return FAIL(res, BAD_PROBE, i,
					    "probe %u: symbol of %u bytes, must be 1 to %u",
					    VI(i), VI(s->len),
					    VI(STP_MAX_SYMBOL_LEN));
			/* module:function, kprobes' name for a module's symbol */
			for (j = 0; j < s->len; j++) {
				if (c[j] == ':' && j && j + 1 < s->len &&
				    !colons++)
					continue;
				if (!symbol_char_ok(c[j]))
					return FAIL(res, BAD_PROBE, i,
						    "probe %u: symbol has byte 0x%x at %u, not in [A-Za-z0-9_.$] (one ':' after a module name)",
						    VI(i), VI(c[j]), VI(j));
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Code                                                                */

/* Flows state *out into instruction t (an index into st). */
static void flow(struct insn_state *st, u32 t, const struct insn_state *out)
{
	if (!st[t].seen) {
		st[t].r = out->r;
		st[t].s = out->s;
		st[t].it = out->it;
		st[t].catch1 = out->catch1;
		st[t].creg = out->creg;
		st[t].seen = 1;
	} else {
		st[t].r &= out->r;
		st[t].s &= out->s;
		st[t].it &= out->it;
		if (st[t].catch1 != out->catch1 || st[t].creg != out->creg)
			st[t].bad_catch = 1;
	}
}

/* Index of the lowest set bit of x != 0 (at most 64 iterations). */
static u32 lowest_bit(u64 x)
{
	u32 n = 0;

	while (!(x & 1)) {
		x >>= 1;
		n++;
	}
	return n;
}

/* Where-am-I prefix shared by every code message. */
#define AT	"insn %u (handler %u pc %u): "
#define ATV(pc)	VI(off + (pc)), VI(hi), VI(pc)

/* Checks one register operand of kind k at position pos ("a", "b", "c"). */
static int check_reg(const struct stp_handler_desc *h, u32 hi, u32 off,
		     u32 pc, const char *pos, u32 k, u32 v,
		     const struct insn_state *in, bool live,
		     struct stp_verify_result *res)
{
	switch (k) {
	case STP_OPND_NO:
		if (v)
			return FAIL(res, BAD_OPERAND, off + pc,
				    AT "unused operand %s is %u, must be 0",
				    ATV(pc), VS(pos), VI(v));
		return 0;
	case STP_OPND_RW:
	case STP_OPND_RR:
	case STP_OPND_RM:
		if (v >= h->nregs)
			return FAIL(res, BAD_REGISTER, off + pc,
				    AT "operand %s: r%u, handler has %u integer registers",
				    ATV(pc), VS(pos), VI(v), VI(h->nregs));
		if (k != STP_OPND_RW && live && !(in->r & (1ull << v)))
			return FAIL(res, UNINIT_REGISTER, off + pc,
				    AT "r%u read before it is written",
				    ATV(pc), VI(v));
		return 0;
	case STP_OPND_SW:
	case STP_OPND_SR:
		if (v >= h->nsregs)
			return FAIL(res, BAD_REGISTER, off + pc,
				    AT "operand %s: s%u, handler has %u string registers",
				    ATV(pc), VS(pos), VI(v), VI(h->nsregs));
		if (k == STP_OPND_SR && live && !(in->s & (1u << v)))
			return FAIL(res, UNINIT_REGISTER, off + pc,
				    AT "s%u read before it is written",
				    ATV(pc), VI(v));
		return 0;
	case STP_OPND_RP:
		if ((u32)v + 1 >= h->nregs)
			return FAIL(res, BAD_REGISTER, off + pc,
				    AT "operand %s: r%u and the next, handler has %u integer registers",
				    ATV(pc), VS(pos), VI(v), VI(h->nregs));
		if (live && (~in->r & (3ull << v)))
			return FAIL(res, UNINIT_REGISTER, off + pc,
				    AT "r%u or r%u read before it is written",
				    ATV(pc), VI(v), VI(v + 1));
		return 0;
	case STP_OPND_SP:
		if ((u32)v + 1 >= h->nsregs)
			return FAIL(res, BAD_REGISTER, off + pc,
				    AT "operand %s: s%u and the next, handler has %u string registers",
				    ATV(pc), VS(pos), VI(v), VI(h->nsregs));
		if (live && (~(u32)in->s & (3u << v)))
			return FAIL(res, UNINIT_REGISTER, off + pc,
				    AT "s%u or s%u read before it is written",
				    ATV(pc), VI(v), VI(v + 1));
		return 0;
	}
	/* RN/SN are checked with their length by check_runs(). */
	return 0;
}

/*
 * The RN run at b (nint registers) and the SN run at c (nstr registers) of
 * a PRINTF, SPRINTF (lengths from the format) or FCALL* (from the callee's
 * parameters): an empty run's base is 0, runs are in range and written.
 */
static int check_runs(const struct stp_handler_desc *h, u32 hi, u32 off,
		      u32 pc, const struct stp_insn *insn, u32 nint, u32 nstr,
		      const char *what, const char *arg,
		      const struct insn_state *in, bool live,
		      struct stp_verify_result *res)
{
	u32 i;

	if (!nint && insn->b)
		return FAIL(res, BAD_OPERAND, off + pc,
			    AT "%s %u has no integer arguments, b must be 0",
			    ATV(pc), VS(what), VI(insn->imm));
	if (!nstr && insn->c)
		return FAIL(res, BAD_OPERAND, off + pc,
			    AT "%s %u has no string arguments, c must be 0",
			    ATV(pc), VS(what), VI(insn->imm));
	if ((u32)insn->b + nint > h->nregs)
		return FAIL(res, BAD_REGISTER, off + pc,
			    AT "%s %u needs r%u..r%u, handler has %u integer registers",
			    ATV(pc), VS(what), VI(insn->imm), VI(insn->b),
			    VI(insn->b + nint - 1), VI(h->nregs));
	if ((u32)insn->c + nstr > h->nsregs)
		return FAIL(res, BAD_REGISTER, off + pc,
			    AT "%s %u needs s%u..s%u, handler has %u string registers",
			    ATV(pc), VS(what), VI(insn->imm), VI(insn->c),
			    VI(insn->c + nstr - 1), VI(h->nsregs));
	if (!live)
		return 0;
	for (i = 0; i < nint; i++)	/* nint <= STP_MAX_REGS */
		if (!(in->r & (1ull << (insn->b + i))))
			return FAIL(res, UNINIT_REGISTER, off + pc,
				    AT "r%u (%s argument) read before it is written",
				    ATV(pc), VI(insn->b + i), VS(arg));
	for (i = 0; i < nstr; i++)	/* nstr <= STP_MAX_SREGS */
		if (!(in->s & (1u << (insn->c + i))))
			return FAIL(res, UNINIT_REGISTER, off + pc,
				    AT "s%u (%s argument) read before it is written",
				    ATV(pc), VI(insn->c + i), VS(arg));
	return 0;
}

/*
 * Map instructions: the map's key runs (RN/SN read, RNW/SNW written:
 * nlong integer registers from b, nstr string registers from c), the
 * value's kind, MOPR's arithmetic, MITER's order.
 */
static int check_map_insn(const struct stp_prog *p,
			  const struct stp_handler_desc *h, u32 hi, u32 off,
			  u32 pc, const struct stp_insn *insn,
			  const struct stp_opcode_info *oi,
			  const struct insn_state *in, bool live,
			  struct stp_verify_result *res)
{
	/* check_imm: the map id (STP_IMM_LO) < nmaps */
	const struct stp_map_desc *d = &p->maps[STP_IMM_LO(insn->imm)];
	u32 nstr = stp_popcount(d->key_str_mask);
	u32 nlong = d->nkeys - nstr;
	u32 want = STP_MAPV__COUNT, col;

	switch (insn->op) {
	case STP_OP_MGET:
	case STP_OP_MSET:
	case STP_OP_MOPR:
		want = STP_MAPV_LONG;
		break;
	case STP_OP_MGETS:
	case STP_OP_MSETS:
		want = STP_MAPV_STR;
		break;
	case STP_OP_MSTADD:
	case STP_OP_MSTX:
	case STP_OP_MSTHIST:
	case STP_OP_MSTHISTS:
	case STP_OP_MSTBKT:
		want = STP_MAPV_STAT;
		break;
	}
	if (want != STP_MAPV__COUNT && d->value != want)
		return FAIL(res, BAD_MAP, off + pc,
			    AT "%s on map %u, whose values are of kind %u",
			    ATV(pc), VS(oi->name), VI(STP_IMM_LO(insn->imm)),
			    VI(d->value));
	if (insn->op == STP_OP_MSTX &&
	    STP_IMM_HI(insn->imm) == STP_OP_STVAR &&
	    !(p->stats[d->stat].flags & STP_STAT_F_VARIANCE))
		return FAIL(res, BAD_STAT, off + pc,
			    AT "MSTX @variance of map %u, whose statistic has no variance flag",
			    ATV(pc), VI(STP_IMM_LO(insn->imm)));
	if ((insn->op == STP_OP_MSTHIST || insn->op == STP_OP_MSTHISTS ||
	     insn->op == STP_OP_MSTBKT) &&
	    p->stats[d->stat].hist == STP_HIST_NONE)
		return FAIL(res, BAD_STAT, off + pc,
			    AT "%s of map %u, whose statistic has no histogram",
			    ATV(pc), VS(oi->name), VI(STP_IMM_LO(insn->imm)));
	if (oi->c == STP_OPND_SORT) {
		col = insn->c & 15;
		/* an extractor order only on a statistics array's value */
		if (((insn->c >> 4) & 7) &&
		    (col != 15 || d->value != STP_MAPV_STAT ||
		     ((insn->c >> 4) & 7) >= STP_SORTX__COUNT))
			return FAIL(res, BAD_MAP, off + pc,
				    AT "MITER order 0x%x on map %u: an extractor order needs a statistics array's value",
				    ATV(pc), VI(insn->c), VI(STP_IMM_LO(insn->imm)));
		if ((col > d->nkeys && col != 15) || (!col && insn->c))
			return FAIL(res, BAD_MAP, off + pc,
				    AT "MITER order 0x%x on map %u of %u keys",
				    ATV(pc), VI(insn->c), VI(STP_IMM_LO(insn->imm)),
				    VI(d->nkeys));
		return 0;
	}
	/* check_imm: the iterator (STP_IMM_HI) < STP_MAX_ITERS <= 8 */
	if (insn->op == STP_OP_MNEXT && live &&
	    !(in->it & (1u << STP_IMM_HI(insn->imm))))
		return FAIL(res, UNINIT_REGISTER, off + pc,
			    AT "iterator %u read before MITER fills it",
			    ATV(pc), VI(STP_IMM_HI(insn->imm)));
	if (oi->b == STP_OPND_RN)
		return check_runs(h, hi, off, pc, insn, nlong, nstr, "map",
				  "key", in, live, res);
	if (oi->b == STP_OPND_RNW)
		return check_runs(h, hi, off, pc, insn, nlong, nstr, "map",
				  "key", in, false, res);
	return 0;
}

/* What a map instruction writes besides operand a: runs, iterators. */
static void map_flow(const struct stp_prog *p, const struct stp_insn *insn,
		     const struct stp_opcode_info *oi, struct insn_state *out)
{
	const struct stp_map_desc *d;
	u32 nstr, nlong, i;

	if (oi->imm == STP_OPND_MIT && insn->op == STP_OP_MITER)
		out->it |= (u8)(1u << STP_IMM_HI(insn->imm));	/* check_imm */
	if (oi->b != STP_OPND_RNW)
		return;
	d = &p->maps[STP_IMM_LO(insn->imm)];	/* check_imm */
	nstr = stp_popcount(d->key_str_mask);
	nlong = d->nkeys - nstr;
	for (i = 0; i < nlong; i++)		/* <= STP_MAX_MAP_KEYS */
		out->r |= 1ull << (insn->b + i);
	for (i = 0; i < nstr; i++)
		out->s |= (u16)(1u << (insn->c + i));
}

/*
 * The operand rules that go beyond one operand's kind: argument runs
 * (PRINTF, SPRINTF, FCALL*), SPRINTF's format text, and the destinations
 * that must not alias a source (SPRINTF, SREPL, STEXT, STEXTN).
 */
static int check_insn_extra(const struct stp_prog *p,
			    const struct stp_handler_desc *h, u32 hi, u32 off,
			    u32 pc, const struct stp_insn *insn,
			    const struct insn_state *in, bool live,
			    struct stp_verify_result *res)
{
	const struct stp_format_desc *f;
	const struct stp_handler_desc *fn;
	u32 nstr, nint;

	switch (insn->op) {
	case STP_OP_PRINTF:
	case STP_OP_SPRINTF:
		/* check_imm: imm < nformats */
		f = &p->formats[insn->imm];
		nstr = stp_popcount(f->str_mask);
		nint = f->nargs - nstr;	/* verified: mask bits < nargs */
		if (insn->op == STP_OP_SPRINTF && f->text == STP_FMT_NO_TEXT)
			return FAIL(res, BAD_INDEX, off + pc,
				    AT "SPRINTF of format %u, which has no text",
				    ATV(pc), VI(insn->imm));
		if (insn->op == STP_OP_SPRINTF && nstr &&
		    insn->a >= insn->c && insn->a < insn->c + nstr)
			return FAIL(res, BAD_REGISTER, off + pc,
				    AT "SPRINTF writes s%u, one of its arguments",
				    ATV(pc), VI(insn->a));
		return check_runs(h, hi, off, pc, insn, nint, nstr, "format",
				  insn->op == STP_OP_PRINTF ? "printf" : "sprintf",
				  in, live, res);
	case STP_OP_FCALL:
	case STP_OP_FCALLI:
	case STP_OP_FCALLS:
		/* check_imm: imm < nhandlers */
		fn = &p->handlers[insn->imm];
		return check_runs(h, hi, off, pc, insn, fn->nparams,
				  fn->nsparams, "function", "function", in, live,
				  res);
	case STP_OP_SREPL:
		if (insn->a == insn->b || insn->a == insn->c ||
		    insn->a == insn->c + 1)
			return FAIL(res, BAD_REGISTER, off + pc,
				    AT "SREPL writes s%u, one of its operands",
				    ATV(pc), VI(insn->a));
		return 0;
	case STP_OP_STEXT:
	case STP_OP_STEXTN:
		if (insn->a == insn->b)
			return FAIL(res, BAD_REGISTER, off + pc,
				    AT "%s writes s%u, its operand", ATV(pc),
				    VS(stp_opcode_info[insn->op].name),
				    VI(insn->a));
		return 0;
	case STP_OP_STHIST:
	case STP_OP_STHISTS:
	case STP_OP_STBKT:
		/* check_imm: imm < nstats */
		if (p->stats[insn->imm].hist == STP_HIST_NONE)
			return FAIL(res, BAD_STAT, off + pc,
				    AT "%s of statistic %u, which has no histogram",
				    ATV(pc), VS(stp_opcode_info[insn->op].name),
				    VI(insn->imm));
		return 0;
	case STP_OP_MGET:
	case STP_OP_MGETS:
	case STP_OP_MSET:
	case STP_OP_MSETS:
	case STP_OP_MOPR:
	case STP_OP_MDEL:
	case STP_OP_MHAS:
	case STP_OP_MCLEAR:
	case STP_OP_MITER:
	case STP_OP_MNEXT:
	case STP_OP_MSTADD:
	case STP_OP_MSTX:
	case STP_OP_MSTHIST:
	case STP_OP_MSTHISTS:
	case STP_OP_MSTBKT:
		return check_map_insn(p, h, hi, off, pc, insn,
				      &stp_opcode_info[insn->op], in, live,
				      res);
	case STP_OP_REMATCHS:
		/* check_imm: imm < nregexes */
		if ((u32)insn->imm >= p->nrxsubs ||
		    !p->rxsubs[insn->imm].ninsn)
			return FAIL(res, BAD_REGEX, off + pc,
				    AT "REMATCHS of regex %d, which has no group program",
				    ATV(pc), VI(insn->imm));
		return 0;
	case STP_OP_PRETTY:
		if (insn->imm != 0 && insn->imm != 1)
			return FAIL(res, BAD_OPERAND, off + pc,
				    AT "PRETTY depth %d, not 0 or 1", ATV(pc),
				    VI(insn->imm));
		if (h->nsregs > STP_MAX_SREGS - 2)
			return FAIL(res, BAD_REGISTER, off + pc,
				    AT "PRETTY in a handler of %u string registers (its scratch needs %u free)",
				    ATV(pc), VI(h->nsregs), VI(2));
		return 0;
	case STP_OP_STVAR:
		if (!(p->stats[insn->imm].flags & STP_STAT_F_VARIANCE))
			return FAIL(res, BAD_STAT, off + pc,
				    AT "STVAR of statistic %u, which has no variance flag",
				    ATV(pc), VI(insn->imm));
		return 0;
	}
	return 0;
}

/* The immediate of kind k: jumps stay in the handler, indexes in tables. */
static int check_imm(const struct stp_prog *p,
		     const struct stp_handler_desc *h, u32 hi, u32 off,
		     u32 pc, u32 k, s32 imm, struct stp_verify_result *res)
{
	s64 target = (s64)pc + 1 + imm;
	const char *what;
	u32 n;

	switch (k) {
	case STP_OPND_NO:
		if (imm)
			return FAIL(res, BAD_OPERAND, off + pc,
				    AT "unused immediate is %d, must be 0",
				    ATV(pc), VI(imm));
		return 0;
	case STP_OPND_IMM:
		return 0;
	case STP_OPND_JF:
		if (imm < 0 || target >= h->insn_count)
			return FAIL(res, BAD_JUMP, off + pc,
				    AT "forward jump to %d outside handler %u [%u, %u)",
				    ATV(pc), VI(off + target), VI(hi), VI(off),
				    VI(off + h->insn_count));
		return 0;
	case STP_OPND_JB:
		if (imm >= 0 || target < 0)
			return FAIL(res, BAD_JUMP, off + pc,
				    AT "backward jump to %d outside handler %u [%u, %u)",
				    ATV(pc), VI(off + target), VI(hi), VI(off),
				    VI(off + h->insn_count));
		return 0;
	case STP_OPND_K:
		what = "constant";
		n = p->nkonsts;
		break;
	case STP_OPND_STR:
		what = "string";
		n = p->nstrs;
		break;
	case STP_OPND_GLB:
		what = "global";
		n = p->nglobals;
		break;
	case STP_OPND_FMT:
		what = "format";
		n = p->nformats;
		break;
	case STP_OPND_HLP:
		what = "helper";
		n = STP_HLP__COUNT;
		break;
	case STP_OPND_FN:
		what = "function";
		n = p->nhandlers;
		break;
	case STP_OPND_STAT:
		if (imm >= 0 && (u32)imm < p->nstats &&
		    (p->stats[imm].flags & STP_STAT_F_ARRAY))
			return FAIL(res, BAD_STAT, off + pc,
				    AT "statistic %d is a statistics array's",
				    ATV(pc), VI(imm));
		what = "statistic";
		n = p->nstats;
		break;
	case STP_OPND_MOP:
	case STP_OPND_MIT:
	case STP_OPND_MSX: {
		u32 x = STP_IMM_HI(imm);

		if (x >= STP_IMM_HI_LIMIT ||
		    (k == STP_OPND_MIT && x >= STP_MAX_ITERS) ||
		    (k == STP_OPND_MSX &&
		     (x < STP_OP_STCOUNT || x > STP_OP_STVAR)) ||
		    (k == STP_OPND_MOP &&
		     !(x == STP_OP_ADD || x == STP_OP_SUB || x == STP_OP_MUL ||
		       x == STP_OP_DIV || x == STP_OP_MOD || x == STP_OP_AND ||
		       x == STP_OP_OR || x == STP_OP_XOR || x == STP_OP_SHL ||
		       x == STP_OP_SHR)))
			return FAIL(res, BAD_MAP, off + pc,
				    AT "immediate 0x%x: bad %s in bits 16..31",
				    ATV(pc), VI(imm),
				    VS(k == STP_OPND_MIT ? "iterator" :
				       k == STP_OPND_MSX ? "extractor" :
				       "operation"));
		imm = (s32)STP_IMM_LO(imm);
		what = "map";
		n = p->nmaps;
		break;
	}
	case STP_OPND_MAP:
		what = "map";
		n = p->nmaps;
		break;
	case STP_OPND_RX:
		what = "regex";
		n = p->nregexes;
		break;
	default:
		return FAIL(res, BAD_OPCODE, off + pc,
			    AT "immediate of unknown kind %u (ABI table bug)",
			    ATV(pc), VI(k));
	}
	if (imm < 0 || (u32)imm >= n)
		return FAIL(res, BAD_INDEX, off + pc,
			    AT "%s index %d out of range [0, %u)",
			    ATV(pc), VS(what), VI(imm), VI(n));
	return 0;
}

static int check_handler_code(const struct stp_prog *p, u32 hi,
			      struct insn_state *st,
			      struct stp_verify_result *res)
{
	const struct stp_handler_desc *h = &p->handlers[hi];
	const struct stp_insn *code = p->code + h->insn_off;
	u32 off = h->insn_off;
	u32 pc;
	int err;

	memset(st, 0, sizeof(*st) * h->insn_count);
	st[0].seen = 1;		/* the entry: only parameters written */
	/* check_handlers: nparams <= nregs <= 64, nsparams <= nsregs <= 16 */
	st[0].r = h->nparams >= 64 ? ~0ull : (1ull << h->nparams) - 1;
	st[0].s = (u16)((1u << h->nsparams) - 1);

	for (pc = 0; pc < h->insn_count; pc++) {
		const struct stp_insn *insn = &code[pc];
		const struct stp_opcode_info *oi;
		struct insn_state out;
		bool live = st[pc].seen;
		u32 kb;

		if (insn->op >= STP_OP__COUNT)
			return FAIL(res, BAD_OPCODE, off + pc,
				    AT "unknown opcode %u", ATV(pc),
				    VI(insn->op));
		oi = &stp_opcode_info[insn->op];
		kb = oi->b;

		err = check_imm(p, h, hi, off, pc, oi->imm, insn->imm, res);
		if (err)
			return err;
		if (insn->op == STP_OP_CALLI || insn->op == STP_OP_CALLS) {
			const struct stp_helper_info *hl =
				&stp_helper_info[insn->imm];
			u32 want = insn->op == STP_OP_CALLI ? STP_HRES_INT
							    : STP_HRES_STR;

			if (hl->res != want)
				return FAIL(res, BAD_HELPER, off + pc,
					    AT "helper %s returns %s, %s needs %s",
					    ATV(pc), VS(hl->name),
					    VS(hl->res == STP_HRES_INT ?
					       "an integer" : "a string"),
					    VS(oi->name),
					    VS(want == STP_HRES_INT ?
					       "an integer" : "a string"));
			if (!(hl->ctx_mask & (1u << h->ctx)))
				return FAIL(res, BAD_CONTEXT, off + pc,
					    AT "helper %s not allowed in a handler of context %u",
					    ATV(pc), VS(hl->name), VI(h->ctx));
			if (hl->arg == STP_HARG_NONE)
				kb = STP_OPND_NO;
			else if (hl->arg == STP_HARG_STR)
				kb = STP_OPND_SR;
		}
		if (oi->imm == STP_OPND_FN) {
			/* check_imm: imm < nhandlers */
			const struct stp_handler_desc *fn =
				&p->handlers[insn->imm];
			u32 want = insn->op == STP_OP_FCALLI ? STP_RET_LONG :
				   insn->op == STP_OP_FCALLS ? STP_RET_STR :
							       STP_RET_NONE;

			if (fn->ctx != STP_CTX_FUNCTION)
				return FAIL(res, BAD_CALL, off + pc,
					    AT "%s of handler %u, which is not a function",
					    ATV(pc), VS(oi->name), VI(insn->imm));
			if (fn->ret != want)
				return FAIL(res, BAD_CALL, off + pc,
					    AT "%s of function %u, whose result kind is %u",
					    ATV(pc), VS(oi->name), VI(insn->imm),
					    VI(fn->ret));
		}
		if (is_return(insn->op)) {
			u32 want = h->ctx == STP_CTX_FUNCTION ?
				   stp_ret_op[h->ret] : STP_OP_RET;

			if (insn->op != want)
				return FAIL(res, BAD_RETURN, off + pc,
					    AT "%s in a handler that returns with %s",
					    ATV(pc), VS(oi->name),
					    VS(stp_opcode_info[want].name));
		}
		err = check_reg(h, hi, off, pc, "a", oi->a, insn->a,
				&st[pc], live, res);
		if (!err)
			err = check_reg(h, hi, off, pc, "b", kb, insn->b,
					&st[pc], live, res);
		if (!err)
			err = check_reg(h, hi, off, pc, "c", oi->c, insn->c,
					&st[pc], live, res);
		if (!err)
			err = check_insn_extra(p, h, hi, off, pc, insn,
					       &st[pc], live, res);
		if (err)
			return err;
		if (!live)
			continue;	/* never runs: flows nothing */
		if (st[pc].bad_catch)
			return FAIL(res, BAD_TRY, off + pc,
				    AT "reached with different armed catches",
				    ATV(pc));
		if (st[pc].catch1) {
			/* Any instruction may fail under its catch (11). */
			struct insn_state c = st[pc];
			u32 t = c.catch1 - 1;

			if (t <= pc)
				return FAIL(res, BAD_TRY, off + pc,
					    AT "armed catch at pc %u is not after it",
					    ATV(pc), VI(t));
			c.s |= (u16)(1u << c.creg);
			c.catch1 = 0;
			c.creg = 0;
			c.bad_catch = 0;
			flow(st, t, &c);
		}

		out = st[pc];
		if (oi->a == STP_OPND_RW)
			out.r |= 1ull << insn->a;
		else if (oi->a == STP_OPND_SW)
			out.s |= (u16)(1u << insn->a);
		else if (oi->a == STP_OPND_RM)
			out.r |= 1ull << insn->a;
		map_flow(p, insn, oi, &out);
		if (insn->op == STP_OP_TRY) {
			/* check_imm: JF, so the target is after the TRY */
			out.catch1 = pc + 1 + (u32)insn->imm + 1;
			out.creg = insn->a;
		} else if (insn->op == STP_OP_TRYEND) {
			out.catch1 = 0;
			out.creg = 0;
		}

		switch (insn->op) {
		case STP_OP_JZ:
		case STP_OP_JNZ:
			flow(st, pc + 1 + insn->imm, &out);
			flow(st, pc + 1, &out);
			break;
		case STP_OP_JMP:
			flow(st, pc + 1 + insn->imm, &out);
			break;
		case STP_OP_LOOP: {
			/* Back edge: must not shrink the target's set (see top).
			 * check_imm: imm < 0 and the target >= 0, so t <= pc.
			 */
			u32 t = (u32)((s64)pc + 1 + insn->imm);
			u64 mr = st[t].r & ~out.r;
			u16 ms = st[t].s & (u16)~out.s;
			u8 mi = st[t].it & (u8)~out.it;

			if (!st[t].seen)
				return FAIL(res, BAD_JUMP, off + pc,
					    AT "loop back to pc %u, which no forward path reaches",
					    ATV(pc), VI(t));
			if (mr)
				return FAIL(res, UNINIT_REGISTER, off + pc,
					    AT "loop back to pc %u without r%u, which is written on every forward path there",
					    ATV(pc), VI(t), VI(lowest_bit(mr)));
			if (ms)
				return FAIL(res, UNINIT_REGISTER, off + pc,
					    AT "loop back to pc %u without s%u, which is written on every forward path there",
					    ATV(pc), VI(t), VI(lowest_bit(ms)));
			if (mi)
				return FAIL(res, UNINIT_REGISTER, off + pc,
					    AT "loop back to pc %u without iterator %u, which is filled on every forward path there",
					    ATV(pc), VI(t), VI(lowest_bit(mi)));
			if (st[t].catch1 != out.catch1 ||
			    st[t].creg != out.creg)
				return FAIL(res, BAD_TRY, off + pc,
					    AT "loop back to pc %u with another armed catch",
					    ATV(pc), VI(t));
			break;
		}
		case STP_OP_RET:
		case STP_OP_RETI:
		case STP_OP_RETS:
		case STP_OP_ERROR:
			break;		/* no successor in this handler */
		default:
			/* pc + 1 < insn_count: the last insn is RET. */
			flow(st, pc + 1, &out);
			break;
		}
	}
	return 0;
}

int stp_verify_size(u32 size, struct stp_verify_result *res)
{
	if (size > STP_MAX_IMAGE_SIZE)
		return FAIL(res, TOO_BIG, 0, "image of %u bytes, the cap is %u",
			    VI(size), VI(STP_MAX_IMAGE_SIZE));
	return 0;
}

int stp_verify(const void *image, u32 size, struct stp_prog *prog,
	       struct stp_verify_result *res)
{
	const struct stp_image_hdr *h = image;
	struct insn_state *st;
	struct stp_prog p;
	bool func_iters;
	u32 i;
	int err;

	memset(res, 0, sizeof(*res));
	memset(prog, 0, sizeof(*prog));
	err = stp_verify_size(size, res);
	if (err)
		return err;
	if (size < sizeof(*h))
		return FAIL(res, TRUNCATED, 0,
			    "image of %u bytes, the header alone takes %u",
			    VI(size), VI(sizeof(*h)));
	if ((unsigned long)image % 8)
		return FAIL(res, BAD_HEADER, 0,
			    "image buffer is not 8-byte aligned");
	err = check_header(h, size, res);
	if (!err)
		err = check_sections(h, size, res);
	if (err)
		return err;
	memset(&p, 0, sizeof(p));
	fill_prog(image, h, &p);
	err = check_counts(&p, res);
	if (!err)
		err = check_strings(&p, res);
	if (!err)
		err = check_formats(&p, res);
	if (!err)
		err = check_handlers(&p, res);
	if (!err)
		err = check_probes(&p, res);
	if (!err)
		err = check_stats(&p, res);
	if (!err)
		err = check_maps(&p, res);
	if (!err)
		err = check_regexes(&p, res);
	if (!err)
		err = check_regex_subs(&p, res);
	if (!err)
		err = check_pretty(&p, res);
	if (!err)
		err = check_usyms(&p, res);
	if (err)
		return err;

	if (p.nhandlers) {
		st = stp_env_zalloc((u64)p.ninsns * sizeof(*st));
		if (!st)
			return FAIL(res, NO_MEMORY, 0,
				    "no memory for %u instructions of state",
				    VI(p.ninsns));
		for (i = 0; i < p.nhandlers && !err; i++)
			err = check_handler_code(&p, i, st, res);
		stp_env_free(st);
		if (err)
			return err;
	}
	/*
	 * Iterators: 1 + the largest one named per level; one level for the
	 * probe handler and, when a function uses one, one per function
	 * frame (MAXNESTING), so a function's foreach never touches its
	 * callers' (vm.c: depth * iter_frame + id). Each CPU's within a cap.
	 */
	func_iters = false;
	p.iter_frame = 0;
	for (i = 0; i < p.nhandlers; i++) {	/* nhandlers capped */
		const struct stp_handler_desc *h = &p.handlers[i];
		u32 j;

		for (j = 0; j < h->insn_count; j++) {	/* inside CODE */
			const struct stp_insn *in = &p.code[h->insn_off + j];
			u32 it = STP_IMM_HI(in->imm);

			if (in->op >= STP_OP__COUNT ||
			    stp_opcode_info[in->op].imm != STP_OPND_MIT)
				continue;
			if (it + 1 > p.iter_frame)
				p.iter_frame = it + 1;
			if (h->ctx == STP_CTX_FUNCTION)
				func_iters = true;
		}
	}
	p.niters = p.iter_frame;
	if (func_iters)
		p.niters *= 1 + p.limits[STP_LIM_MAXNESTING];
	if (stp_iters_size(p.niters, p.iter_cap) > STP_MAX_ITER_BYTES)
		return FAIL(res, TOO_MANY, 0,
			    "%u iterators over maps of %u entries take more than %u bytes per CPU",
			    VI(p.niters), VI(p.iter_cap),
			    VI(STP_MAX_ITER_BYTES));
	*prog = p;
	res->code = STP_VERR_OK;
	return 0;
}
