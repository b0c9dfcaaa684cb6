// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vm_str.c - the work of the interpreter's string instructions and
 * string helpers, on counted byte strings (no NUL kept): copies from
 * kernel or user memory (KERNEL_STRING, USER_STRING, USER_STRING_OK),
 * SPRINTF, SFIND, STOL, SREPL, STEXT / STEXTN, STOK, REMATCH's DFA walk,
 * REMATCHS's group pass (a Pike VM) and MATCHED, and the message a catch
 * receives (TRY). opcodes.h defines what each
 * computes; vm.c decodes the instruction and calls in here.
 *
 * Every result is cut at the cap the caller passes (MAXSTRINGLEN - 1);
 * register indexes and table entries were proved by verify.c, as vm.c
 * says at each call.
 *
 * Left out: decoding, registers, records (vm.c); printf formatting itself
 * (format.c).
 *
 * Context: any, called from stp_run(): never sleeps, never allocates
 * (the group pass works in the CPU's struct stp_rx_state, allocated at
 * load); every loop is bounded by a string length, the cap or a group
 * program's length, as each says.
 */
#include "vm_int.h"

int stp_copy_string(void *env, bool user, char *dst, u32 cap, u64 addr,
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

u64 stp_user_string_ok(void *env, u32 cap, u64 addr)
{
	char buf[64];
	u32 n = 0;

	while (n < cap) {
		u64 a = addr + n;
		u32 chunk = STP_ENV_PAGE_SIZE - (u32)(a & (STP_ENV_PAGE_SIZE - 1));

		chunk = min_u32(min_u32(chunk, cap - n), (u32)sizeof(buf));
		if (stp_env_read_user(env, buf, a, chunk))
			return 0;
		if (memchr(buf, 0, chunk))
			return 1;
		n += chunk;
	}
	return 1;
}

u32 stp_do_sprintf(struct stp_vm *vm, const struct stp_prog *p,
		   const u64 *r, const u32 *slen, char *sregs,
		   const struct stp_format_desc *f, u32 rb, u32 sc,
		   char *dst, u32 cap)
{
	struct stp_fmt_arg args[STP_MAX_FMT_ARGS];
	const struct stp_str_desc *t = &p->strs[f->text];
	u32 i, ri = rb, si = sc;
	int n;

	/* verify.c: nargs <= STP_MAX_FMT_ARGS, runs inside the files. */
	for (i = 0; i < f->nargs; i++) {
		if (f->str_mask & (1u << i)) {
			args[i].is_str = 1;
			args[i].len = slen[si];
			args[i].i = 0;
			args[i].s = SREG(si);
			si++;
		} else {
			args[i].is_str = 0;
			args[i].len = 0;
			args[i].i = (s64)r[ri++];
			args[i].s = NULL;
		}
	}
	n = stp_format((const char *)p->strdata + t->off, t->len, args,
		       f->nargs, dst, cap + 1);
	if (n < 0)
		return 0;
	/*
	 * Cut at the first NUL (%c of 0): string registers never hold one,
	 * and stap's C strings end there (sprintf("%c", 0) is "").
	 */
	return (u32)strnlen(dst, min_u32((u32)n, cap));
}

s64 stp_find_str(const char *hay, u32 hl, const char *needle, u32 nl)
{
	u32 i;

	if (nl > hl)
		return -1;
	for (i = 0; i + nl <= hl; i++)	/* at most hl + 1 iterations */
		if (!memcmp(hay + i, needle, nl))
			return i;
	return -1;
}

s64 stp_str_tol(const char *s, u32 n, u64 base)
{
	bool neg = false;
	u64 v = 0;
	u32 i = 0;

	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	if (base == 0) {
		if (i + 1 < n && s[i] == '0' && (s[i + 1] | 0x20) == 'x' &&
		    i + 2 < n)
			base = 16;
		else if (i < n && s[i] == '0')
			base = 8;
		else
			base = 10;
	}
	if (base == 16 && i + 1 < n && s[i] == '0' && (s[i + 1] | 0x20) == 'x')
		i += 2;
	for (; i < n; i++) {		/* at most n iterations */
		u8 c = (u8)s[i];
		u64 d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (d >= base)
			break;
		v = v * base + d;
	}
	return neg ? (s64)(0 - v) : (s64)v;
}

u32 stp_str_repl(const char *s, u32 sl, const char *from, u32 fl,
		 const char *to, u32 tl, char *dst, u32 cap)
{
	u32 i = 0, n = 0;

	if (!fl) {
		memcpy(dst, s, sl);	/* sl <= cap: same capacity */
		return sl;
	}
	while (i < sl && n < cap) {	/* i grows every iteration */
		if (i + fl <= sl && !memcmp(s + i, from, fl)) {
			u32 k = min_u32(tl, cap - n);

			memcpy(dst + n, to, k);
			n += k;
			i += fl;
		} else {
			dst[n++] = s[i++];
		}
	}
	return n;
}

/*
 * stap's _stp_decode_utf8 on s[0..n) (n >= 1): the code point of a valid
 * 2..4-byte UTF-8 sequence (not overlong, no surrogate, <= 0x10FFFF) and
 * its length, else the first byte and 1.
 */
static u32 decode_utf8(const u8 *s, u32 n, u32 *cp)
{
	u32 len, c, i;
	u8 b = s[0];

	if ((b & 0xe0) == 0xc0 && n >= 2) {
		len = 2;
		c = b & 0x1f;
	} else if ((b & 0xf0) == 0xe0 && n >= 3) {
		len = 3;
		c = b & 0x0f;
	} else if ((b & 0xf8) == 0xf0 && n >= 4) {
		len = 4;
		c = b & 0x07;
	} else {
		goto verbatim;
	}
	for (i = 1; i < len; i++) {	/* at most 3 iterations */
		if ((s[i] & 0xc0) != 0x80)
			goto verbatim;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff || c < 0x80 ||
	    (len == 3 && c < 0x800) || (len == 4 && c < 0x10000))
		goto verbatim;
	*cp = c;
	return len;
verbatim:
	*cp = b;
	return 1;
}

/*
 * The escape of byte c < 0x80 (opcodes.h, STEXTN) into e; its length.
 */
static u32 text_escape(u32 c, char *e)
{
	static const char from[] = "\a\b\f\n\r\t\v\"\\";
	static const char to[] = "abfnrtv\"\\";
	const char *k = c ? memchr(from, (int)c, sizeof(from) - 1) : NULL;

	if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\') {
		e[0] = (char)c;
		return 1;
	}
	e[0] = '\\';
	if (k) {
		e[1] = to[k - from];
		return 2;
	}
	e[1] = (char)('0' + ((c >> 6) & 3));
	e[2] = (char)('0' + ((c >> 3) & 7));
	e[3] = (char)('0' + (c & 7));
	return 4;
}

u32 stp_text_strn(const char *s, u32 sl, char *dst, u32 cap, s64 len,
		  bool quoted)
{
	s64 budget = len <= 0 || len > (s64)cap ? (s64)cap : len;
	u32 i = 0, n = 0, c = 0, esc = 0, esc_len = 0;
	bool have_esc = false;

	if (quoted) {
		budget = (budget < 5 ? 5 : budget) - 2;
		dst[n++] = '"';
	}
	while (i < sl) {	/* i grows every iteration */
		char e[10];
		u32 k = decode_utf8((const u8 *)s + i, sl - i, &c), num, j;

		if (budget <= 0)
			break;
		i += k;
		if (k > 1) {
			num = c <= 0xffff ? 6 : 10;
			e[0] = '\\';
			e[1] = c <= 0xffff ? 'u' : 'U';
			for (j = 0; j < num - 2; j++) {	/* at most 8 */
				u32 d = (c >> (4 * (num - 3 - j))) & 0xf;

				e[2 + j] = (char)(d < 10 ? '0' + d : 'A' + d - 10);
			}
		} else {
			num = text_escape(c, e);
		}
		if (num > 1 && !have_esc && budget - 3 < (s64)num) {
			have_esc = true;
			esc = n;
			esc_len = num;
		}
		if (budget < (s64)num)
			break;
		memcpy(dst + n, e, num);
		n += num;
		budget -= num;
	}
	if (quoted) {
		if (c && i < sl) {
			/* n + budget == 1 + the quoted budget >= 4 */
			u32 cut = (u32)((s64)n + budget - 3);

			n = have_esc && esc < cut && cut < esc + esc_len ? esc
									   : cut;
			memcpy(dst + n, "\"...", 4);
			n += 4;
		} else {
			dst[n++] = '"';
		}
	}
	return n;
}

u32 stp_tokenize(struct stp_vm *vm, const char *s, u32 sl,
		 const char *delim, u32 dl, char *dst, u32 cap)
{
	u32 start, end;

	if (!vm->tok)
		return 0;
	if (sl) {
		sl = min_u32(sl, min_u32(cap, vm->str_cap));
		memcpy(vm->tok, s, sl);
		vm->tok_len = sl;
		vm->tok_pos = 1;
	}
	/* tok_pos - 1 <= tok_len: every token start is inside or at the end */
	while (vm->tok_pos) {	/* tok_pos grows or becomes 0 */
		start = vm->tok_pos - 1;
		for (end = start; end < vm->tok_len; end++)
			if (dl && memchr(delim, vm->tok[end], dl))
				break;
		vm->tok_pos = end < vm->tok_len ? end + 2 : 0;
		if (end > start) {
			memcpy(dst, vm->tok + start, end - start);
			return end - start;
		}
	}
	return 0;
}

u32 stp_catch_message(char *dst, u32 cap, u32 err, u64 addr,
		      const char *msg, u32 msg_len)
{
	const char *m = stp_rte_info[err].msg;
	u32 n = 0, i;

	if (err == STP_RTE_USER) {
		n = min_u32(msg_len, cap);
		memmove(dst, msg, n);
		return n;
	}
	/* table messages are short constants: at most 128 characters */
	for (i = 0; m[i] && i < 128 && n < cap; i++) {
		char num[24];
		u32 k = 0;
		u64 v = addr;
		bool hex = m[i + 1] == 'l' && m[i + 2] == 'l' && m[i + 3] == 'x';

		if (m[i] != '%' || m[i + 1] != 'l' || m[i + 2] != 'l' ||
		    (m[i + 3] != 'x' && m[i + 3] != 'u' && m[i + 3] != 'd')) {
			dst[n++] = m[i];
			continue;
		}
		if (m[i + 3] == 'd' && (s64)addr < 0) {
			dst[n++] = '-';
			v = 0 - addr;
			if (n == cap)
				break;
		}
		do {		/* at most 20 digits */
			u32 dg = hex ? (u32)(v & 15) : (u32)(v % 10);

			num[k++] = (char)(dg < 10 ? '0' + dg : 'a' + dg - 10);
			v = hex ? v >> 4 : v / 10;
		} while (v && k < sizeof(num));
		while (k && n < cap)
			dst[n++] = num[--k];
		i += 3;
	}
	return n;
}

u64 stp_regex_match(const struct stp_prog *p,
		    const struct stp_regex_desc *d, const u8 *str, u32 len)
{
	const u16 *t = p->rxdata + d->trans;
	u32 n = d->nclasses;
	u32 st = d->start;
	u32 i;

	for (i = 0; i < len && st >= 2; i++)
		st = t[(u64)st * n + d->classes[str[i]]];
	if (st >= 2)
		st = t[(u64)st * n + n - 1];
	return st == 1;
}

/* Is byte c in set k (abi.h: struct stp_regex_set)? */
static bool rx_in_set(const struct stp_prog *p, u32 k, u8 c)
{
	return p->rxsets[k].bits[c >> 3] & (1u << (c & 7));
}

/*
 * Adds the closure of @pc at position @pos, with the slots @start, to list
 * @l (lowest priority so far). Each pc enters the list at most once (the
 * sparse set), and each entry pushes at most one frame, so the stack never
 * holds more than ninsn + 1 <= STP_RX_STACK frames and the loop ends after
 * at most 2 * ninsn + 1 pops.
 */
static void rx_add(const struct stp_prog *p, const struct stp_regex_sub *d,
		   struct stp_rx_state *rx, u32 l, u32 pc, u32 pos, u32 len,
		   const u16 *start)
{
	const u32 *prog = p->rxprog + d->first;
	u32 ns = d->nslots;
	u32 sp = 0;

	memcpy(rx->cur, start, ns * sizeof(u16));
	rx->stack[sp].pc = (u16)pc;
	rx->stack[sp].restore = 0;
	sp++;
	while (sp) {
		struct stp_rx_frame *f = &rx->stack[--sp];

		if (f->restore) {
			rx->cur[f->pc] = f->old;
			continue;
		}
		pc = f->pc;
		/* each iteration inserts pc into the list, or leaves */
		for (;;) {
			u32 idx = rx->sparse[l][pc];
			u32 w, arg;

			if (idx < rx->count[l] && rx->dense[l][idx] == pc)
				break;
			idx = rx->count[l]++;
			rx->dense[l][idx] = (u16)pc;
			rx->sparse[l][pc] = (u16)idx;
			w = prog[pc];
			arg = w >> STP_RX_OP_BITS;
			switch (w & STP_RX_OP_MASK) {
			case STP_RX_JMP:	/* arg < ninsn */
				pc = arg;
				continue;
			case STP_RX_SPLIT:	/* arg < ninsn */
				if (sp < STP_RX_STACK) {
					rx->stack[sp].pc = (u16)arg;
					rx->stack[sp].restore = 0;
					sp++;
				}
				pc++;		/* not the last instruction */
				continue;
			case STP_RX_SAVE:	/* arg < nslots */
				if (sp < STP_RX_STACK) {
					rx->stack[sp].pc = (u16)arg;
					rx->stack[sp].old = rx->cur[arg];
					rx->stack[sp].restore = 1;
					sp++;
				}
				rx->cur[arg] = (u16)pos;
				pc++;
				continue;
			case STP_RX_BOL:
				if (pos != 0)
					break;
				pc++;
				continue;
			case STP_RX_EOL:
				if (pos != len)
					break;
				pc++;
				continue;
			default:		/* SET, MATCH: a thread */
				memcpy(rx->tcaps[l][idx], rx->cur,
				       ns * sizeof(u16));
				rx->threads[l]++;
				break;
			}
			break;
		}
	}
}

int stp_regex_groups(const struct stp_prog *p, const struct stp_regex_sub *d,
		     struct stp_rx_state *rx, const u8 *str, u32 len,
		     u64 *fuel)
{
	const u32 *prog = p->rxprog + d->first;
	u32 ns = d->nslots;
	u32 cl = 0, i, t;
	u32 mstart = 0, mend = 0;
	bool have = false;
	u16 unset[STP_MAX_REGEX_SLOTS];

	rx->result = 0;
	rx->nslots = ns;
	for (i = 0; i < ns; i++)
		unset[i] = STP_RX_UNSET;
	rx->count[0] = 0;
	rx->threads[0] = 0;
	for (i = 0; i <= len; i++) {	/* len < MAXSTRINGLEN positions */
		u32 nl = 1 - cl;

		if (!*fuel)
			return -1;
		(*fuel)--;
		if (!have)	/* the lazy pad: a new start, lowest priority */
			rx_add(p, d, rx, cl, 0, i, len, unset);
		rx->count[nl] = 0;
		rx->threads[nl] = 0;
		for (t = 0; t < rx->count[cl]; t++) {	/* <= ninsn */
			u32 pc = rx->dense[cl][t];
			u32 w = prog[pc];
			const u16 *caps = rx->tcaps[cl][t];

			switch (w & STP_RX_OP_MASK) {
			case STP_RX_MATCH:
				if (have && caps[0] > mstart)
					break;
				if (!have || caps[0] < mstart || i > mend) {
					memcpy(rx->caps, caps, ns * sizeof(u16));
					have = true;
					mstart = caps[0];
					mend = i;
				}
				break;
			case STP_RX_SET:	/* arg < nrxsets */
				if (have && caps[0] > mstart)
					break;
				if (i < len &&
				    rx_in_set(p, w >> STP_RX_OP_BITS, str[i]))
					rx_add(p, d, rx, nl, pc + 1, i + 1, len,
					       caps);
				break;
			default:	/* passed through by the closure */
				break;
			}
		}
		cl = nl;
		if (have && !rx->threads[cl])	/* no thread left */
			break;
	}
	if (have) {
		memcpy(rx->subj, str, len);
		rx->len = len;
		rx->result = 1;
	}
	return 0;
}

int stp_regex_group(const struct stp_rx_state *rx, s64 n, char *dst,
		    u32 cap)
{
	u32 st, en;

	if (!rx || !rx->result)
		return -STP_RTE_SUBEXP_FAILED;
	if (n < 0 || n >= rx->nslots / 2)
		return -STP_RTE_SUBEXP_RANGE;
	st = rx->caps[2 * n];
	en = rx->caps[2 * n + 1];
	/* unset, or a stale pair (never from the compiler's programs) */
	if (st == STP_RX_UNSET || en == STP_RX_UNSET || st > en ||
	    en > rx->len)
		return 0;
	en = min_u32(en, st + cap);
	memcpy(dst, rx->subj + st, en - st);
	return (int)(en - st);
}
