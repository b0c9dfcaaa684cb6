// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * format.c - SystemTap's printf conversions: turns a format text and its
 * arguments (64-bit integers and counted strings) into bytes, the way
 * stap's runtime/vsprintf.c does, so that `stapvm run` prints what `stap`
 * prints.
 *
 * Supported: %d %i (signed), %u, %x %X %o (unsigned 64-bit), %p (hex with
 * 0x, 0x0 for zero), %c (%#c escaped: \n, \', \\, \033 ...), %s, %b
 * (the integer's low 1, 2, 4 or 8 bytes, little-endian, as stap's
 * _stp_vsprint_binary: the precision if valid, else the width if valid,
 * else 8; NUL-padded to the width), %%; the flags - 0 + space # (any number
 * of them; stap's parser takes only one, the compiler enforces that);
 * width and precision as digits or '*' (taken from the next argument, a
 * negative width means '-'); the length modifiers l ll h hh z j t L q are
 * accepted and ignored.
 *
 * Where stap differs from C's printf, stap wins: '#' with %x and %p always
 * prints "0x" (also for zero), '#' with %o always prints a leading '0'
 * (also before precision zeros), the '0' flag also applies with a
 * precision, '+' and ' ' apply only to %d/%i.
 *
 * Left out: %m/%M (memory) and %#s escaping. They are
 * copied to the output as written, as is any unknown conversion, without
 * consuming an argument. A missing argument formats as 0 or "".
 *
 * Context: any; no allocation, no libc beyond memcpy/memset, and every loop
 * is bounded by the format length, the argument count or a fixed size.
 */
#include "stp_core.h"

/* Width and precision are clamped to this, so lengths stay in range. */
#define STP_FMT_MAX_WIDTH	(1 << 20)

enum {
	F_LEFT = 1,	/* '-' */
	F_ZERO = 2,	/* '0' */
	F_PLUS = 4,	/* '+' */
	F_SPACE = 8,	/* ' ' */
	F_SPECIAL = 16,	/* '#' */
	F_SIGNED = 32,	/* %d %i */
	F_LARGE = 64,	/* %X */
};

/* Output cursor: writes what fits, counts everything. */
struct fmt_out {
	char *buf;
	u64 cap;	/* bytes that may be written (out_size - 1) */
	u64 len;	/* bytes produced so far */
};

static void out_bytes(struct fmt_out *o, const char *s, u64 n)
{
	if (o->len < o->cap) {
		u64 room = o->cap - o->len;

		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static void out_fill(struct fmt_out *o, char c, s64 n)
{
	if (n <= 0)
		return;
	if (o->len < o->cap) {
		u64 room = o->cap - o->len;

		memset(o->buf + o->len, c, (u64)n < room ? (u64)n : room);
	}
	o->len += (u64)n;
}

/*
 * stap's number(): sign or prefix, then zero or space padding to width,
 * then precision zeros, then the digits.
 */
static void out_number(struct fmt_out *o, u64 num, u32 base, s64 width,
		       s64 prec, u32 flags)
{
	static const char lower[] = "0123456789abcdef";
	static const char upper[] = "0123456789ABCDEF";
	const char *digits = (flags & F_LARGE) ? upper : lower;
	char tmp[24];	/* 22 octal digits for 2^64 - 1 */
	char sign = 0;
	s64 ndig = 0;
	char pad;

	if (flags & F_LEFT)
		flags &= ~F_ZERO;
	pad = (flags & F_ZERO) ? '0' : ' ';
	if (flags & F_SIGNED) {
		if ((s64)num < 0) {
			sign = '-';
			num = 0 - num;
			width--;
		} else if (flags & F_PLUS) {
			sign = '+';
			width--;
		} else if (flags & F_SPACE) {
			sign = ' ';
			width--;
		}
	}
	if (flags & F_SPECIAL) {
		if (base == 16)
			width -= 2;
		else if (base == 8)
			width--;
	}
	if (num == 0)
		tmp[ndig++] = '0';
	while (num != 0 && ndig < (s64)sizeof(tmp)) {
		tmp[ndig++] = digits[num % base];
		num /= base;
	}
	if (ndig > prec)
		prec = ndig;
	width -= prec;
	if (!(flags & (F_ZERO | F_LEFT))) {
		out_fill(o, ' ', width);
		width = 0;
	}
	if (sign)
		out_bytes(o, &sign, 1);
	if (flags & F_SPECIAL) {
		if (base == 8)
			out_bytes(o, "0", 1);
		else if (base == 16)
			out_bytes(o, (flags & F_LARGE) ? "0X" : "0x", 2);
	}
	if (!(flags & F_LEFT)) {
		out_fill(o, pad, width);
		width = 0;
	}
	out_fill(o, '0', prec - ndig);
	while (ndig > 0) {
		ndig--;
		out_bytes(o, &tmp[ndig], 1);
	}
	out_fill(o, ' ', width);
}

/*
 * stap's %#c: \a \b \f \n \r \t \v \' \\ escaped as in a C literal, other
 * printable ASCII (also '"') as is, any other byte as \ooo.
 * Writes at most 4 bytes to buf and returns the length.
 */
static u64 escape_char(u8 c, char *buf)
{
	static const char from[] = "\a\b\f\n\r\t\v'\\";
	static const char to[] = "abfnrtv'\\";
	u32 k;

	for (k = 0; k < sizeof(from) - 1; k++) {
		if ((u8)from[k] == c) {
			buf[0] = '\\';
			buf[1] = to[k];
			return 2;
		}
	}
	if (c >= 0x20 && c < 0x7f) {
		buf[0] = (char)c;
		return 1;
	}
	buf[0] = '\\';
	buf[1] = (char)('0' + ((c >> 6) & 7));
	buf[2] = (char)('0' + ((c >> 3) & 7));
	buf[3] = (char)('0' + (c & 7));
	return 4;
}

static void out_padded(struct fmt_out *o, const char *s, u64 n, s64 width,
		       u32 flags)
{
	s64 pad = width > (s64)n ? width - (s64)n : 0;

	if (!(flags & F_LEFT))
		out_fill(o, ' ', pad);
	out_bytes(o, s, n);
	if (flags & F_LEFT)
		out_fill(o, ' ', pad);
}

/* Parses decimal digits at fmt[*i], saturating at STP_FMT_MAX_WIDTH. */
static s64 parse_num(const char *fmt, u32 fmt_len, u32 *i)
{
	s64 v = 0;

	while (*i < fmt_len && fmt[*i] >= '0' && fmt[*i] <= '9') {
		v = v * 10 + (fmt[*i] - '0');
		if (v > STP_FMT_MAX_WIDTH)
			v = STP_FMT_MAX_WIDTH;
		(*i)++;
	}
	return v;
}

static s64 clamp_width(s64 v)
{
	if (v > STP_FMT_MAX_WIDTH)
		return STP_FMT_MAX_WIDTH;
	if (v < -STP_FMT_MAX_WIDTH)
		return -STP_FMT_MAX_WIDTH;
	return v;
}

int stp_format(const char *fmt, u32 fmt_len, const struct stp_fmt_arg *args,
	       u32 nargs, char *out, u32 out_size)
{
	static const struct stp_fmt_arg none = { 1, 0, 0, "" };
	struct fmt_out o = { out, out_size ? out_size - 1 : 0, 0 };
	u32 argi = 0;
	u32 i = 0;

	/* Each iteration consumes at least one byte of fmt. */
	while (i < fmt_len) {
		const struct stp_fmt_arg *arg;
		u32 start = i, flags = 0;
		s64 width = 0, prec = -1;
		bool more = true;
		char conv;

		if (fmt[i] != '%') {
			u32 j = i;

			while (j < fmt_len && fmt[j] != '%')
				j++;
			out_bytes(&o, fmt + i, j - i);
			i = j;
			continue;
		}
		i++;
		while (more && i < fmt_len) {
			switch (fmt[i]) {
			case '-':
				flags |= F_LEFT;
				break;
			case '0':
				flags |= F_ZERO;
				break;
			case '+':
				flags |= F_PLUS;
				break;
			case ' ':
				flags |= F_SPACE;
				break;
			case '#':
				flags |= F_SPECIAL;
				break;
			default:
				more = false;
				continue;
			}
			i++;
		}
		if (i < fmt_len && fmt[i] == '*') {
			i++;
			width = argi < nargs ? clamp_width(args[argi].i) : 0;
			argi++;
			if (width < 0) {
				width = -width;
				flags |= F_LEFT;
			}
		} else {
			width = parse_num(fmt, fmt_len, &i);
		}
		if (i < fmt_len && fmt[i] == '.') {
			i++;
			if (i < fmt_len && fmt[i] == '*') {
				i++;
				prec = argi < nargs ? clamp_width(args[argi].i)
						    : 0;
				argi++;
				if (prec < 0)
					prec = -1;
			} else {
				prec = parse_num(fmt, fmt_len, &i);
			}
		}
		/* Length modifiers: accepted and ignored. */
		while (i < fmt_len && i - start < 64 &&
		       (fmt[i] == 'l' || fmt[i] == 'h' || fmt[i] == 'z' ||
			fmt[i] == 'j' || fmt[i] == 't' || fmt[i] == 'L' ||
			fmt[i] == 'q'))
			i++;
		if (i >= fmt_len) {
			/* Incomplete conversion: copy it. */
			out_bytes(&o, fmt + start, i - start);
			break;
		}
		conv = fmt[i++];
		if (conv == '%') {
			out_bytes(&o, "%", 1);
			continue;
		}
		if (!(conv == 'd' || conv == 'i' || conv == 'u' ||
		      conv == 'x' || conv == 'X' || conv == 'o' ||
		      conv == 'p' || conv == 'c' || conv == 's' ||
		      conv == 'b')) {
			out_bytes(&o, fmt + start, i - start);
			continue;
		}
		arg = argi < nargs ? &args[argi] : &none;
		argi++;
		switch (conv) {
		case 'd':
		case 'i':
			out_number(&o, (u64)arg->i, 10, width, prec,
				   flags | F_SIGNED);
			break;
		case 'u':
			out_number(&o, (u64)arg->i, 10, width, prec, flags);
			break;
		case 'X':
			out_number(&o, (u64)arg->i, 16, width, prec,
				   flags | F_LARGE);
			break;
		case 'x':
			out_number(&o, (u64)arg->i, 16, width, prec, flags);
			break;
		case 'o':
			out_number(&o, (u64)arg->i, 8, width, prec, flags);
			break;
		case 'p':
			out_number(&o, (u64)arg->i, 16, width, prec,
				   flags | F_SPECIAL);
			break;
		case 'c': {
			char c[4];
			u64 n = 1;

			c[0] = (char)(u8)arg->i;
			if (flags & F_SPECIAL)
				n = escape_char((u8)arg->i, c);
			out_padded(&o, c, n, width, flags);
			break;
		}
		case 'b': {
			/*
			 * The low n bytes, little-endian: n is the precision
			 * if 1, 2, 4 or 8, else the width if one of those,
			 * else 8; NUL bytes pad to the width.
			 */
			char b[8];
			u64 v = (u64)arg->i;
			s64 n = 8;
			u32 k;

			if (prec == 1 || prec == 2 || prec == 4 || prec == 8)
				n = prec;
			else if (width == 1 || width == 2 || width == 4)
				n = width;
			for (k = 0; k < 8; k++) {
				b[k] = (char)(u8)v;
				v >>= 8;
			}
			if (!(flags & F_LEFT))
				out_fill(&o, '\0', width - n);
			out_bytes(&o, b, (u64)n);
			if (flags & F_LEFT)
				out_fill(&o, '\0', width - n);
			break;
		}
		case 's':
			if (arg->is_str) {
				u64 n = arg->len;

				if (prec >= 0 && (u64)prec < n)
					n = (u64)prec;
				out_padded(&o, arg->s, n, width, flags);
			} else {
				out_number(&o, (u64)arg->i, 10, width, prec,
					   flags | F_SIGNED);
			}
			break;
		}
	}
	if (out_size)
		out[o.len < o.cap ? o.len : o.cap] = '\0';
	return o.len > 0x7fffffff ? 0x7fffffff : (int)o.len;
}

/* ------------------------------------------------------------------ */
/* Histograms                                                          */

/*
 * Columns of the widest bar and empty rows kept around a non-empty one,
 * as stap's runtime/stat-common.c (_stp_stat_print_histogram_buf, its
 * HIST_WIDTH and HIST_ELISION defaults). The elision rule, the same for
 * log and linear histograms: the drawn range is two buckets beyond the
 * first and last non-empty ones (stap's fixed `i < 2` margin loop; a log
 * histogram does not go below bucket 0's row unless a value is negative,
 * a linear one drops an empty underflow/overflow row); a row i of that
 * range is left out when every bucket in [i - HIST_ELISION,
 * i + HIST_ELISION] within the range is 0, and one "~" row stands for
 * each run of left-out rows. So an empty run between two non-empty
 * buckets shows whole up to 2 * HIST_ELISION = 4 rows; from 5 rows on
 * its first two and last two show around a "~". vm-spec/src/hist.rs draws
 * the same, character for character. (stap lets -DHIST_ELISION=N change
 * the 2 of the window, not of the margin; stapvm does not.)
 */
#define HIST_WIDTH	50
#define HIST_ELISION	2

/* Characters v takes in decimal, its sign included. */
static s64 hist_space(s64 v)
{
	u64 t = v < 0 ? 0 - (u64)v : (u64)v;
	s64 n = v < 0;

	if (!v)
		return 1;
	while (t) {	/* at most 20 iterations */
		t /= 10;
		n++;
	}
	return n;
}

static void hist_num(struct fmt_out *o, s64 v)
{
	char buf[24];
	u64 t = v < 0 ? 0 - (u64)v : (u64)v;
	u32 n = sizeof(buf);

	do {	/* at most 20 iterations */
		buf[--n] = (char)('0' + t % 10);
		t /= 10;
	} while (t);
	if (v < 0)
		buf[--n] = '-';
	out_bytes(o, buf + n, sizeof(buf) - n);
}

/* The value bucket i of d is labelled with (last = nbuckets - 1). */
static s64 hist_label(const struct stp_stat_desc *d, s64 i, s64 last)
{
	s64 zero = STP_HIST_LOG_BUCKETS / 2;

	if (d->hist == STP_HIST_LINEAR) {
		s64 k = i == 0 ? 0 : i == last ? i - 2 : i - 1;

		return (s64)((u64)d->start + (u64)k * (u64)(s64)d->interval);
	}
	i = i < 0 ? 0 : i > last ? last : i;
	if (i == zero)
		return 0;
	if (i < zero)
		return (s64)(((u64)1 << 63)) >> i;
	return (s64)((u64)1 << ((i - zero - 1) & 63));
}

u32 stp_format_hist(const struct stp_stat_desc *d,
		    s64 (*bucket)(const void *ctx, u32 i), const void *ctx,
		    char *out, u32 cap)
{
	struct fmt_out o = { .buf = out, .cap = cap, .len = 0 };
	s64 nb = d->nbuckets > STP_HIST_MAX_BUCKETS ? STP_HIST_MAX_BUCKETS
						     : d->nbuckets;
	bool linear = d->hist == STP_HIST_LINEAR;
	s64 zero = STP_HIST_LOG_BUCKETS / 2;
	s64 last = nb - 1, low = -1, high = 0, valmax = 0, i, k;
	s64 under = 0, over = 0, scale, cnt_space, val_space;
	bool eliding = false;

	if (nb <= 0 || d->hist == STP_HIST_NONE)
		return 0;
	for (i = 0; i < nb; i++) {	/* nb <= STP_HIST_MAX_BUCKETS */
		s64 c = bucket(ctx, (u32)i);

		if (c > 0 && low == -1)
			low = i;
		if (c > 0)
			high = i;
		if (c > valmax)
			valmax = c;
	}
	for (k = 0; k < HIST_ELISION; k++) {
		if (low > 0 && (linear || low != zero))
			low--;
		if (high < last)
			high++;
	}
	if (linear) {
		if (low == 0 && bucket(ctx, 0) == 0)
			low++;
		if (high == last && bucket(ctx, (u32)last) == 0)
			high--;
		under = low == 0;
		over = high == last;
	}
	scale = valmax <= HIST_WIDTH ? 1 : (valmax + HIST_WIDTH - 1) / HIST_WIDTH;
	cnt_space = hist_space(valmax);
	if (linear) {
		s64 a = hist_space(d->start) + under;
		s64 b = hist_space((s64)((u64)d->start +
					 (u64)(s64)d->interval * (u64)high)) + over;

		val_space = a > b ? a : b;
	} else {
		s64 a = hist_space(hist_label(d, high, last));
		s64 b = hist_space(hist_label(d, low, last));

		val_space = a > b ? a : b;
	}
	if (val_space < 5)
		val_space = 5;
	out_fill(&o, ' ', val_space - 5);
	out_bytes(&o, "value |", 7);
	out_fill(&o, '-', HIST_WIDTH);
	out_bytes(&o, " count\n", 7);
	for (i = low < 0 ? 0 : low; i <= high; i++) {	/* i < nb */
		s64 lo = i - HIST_ELISION, hi = i + HIST_ELISION, c, v, bar;
		const char *prefix = "";
		bool empty = true;

		lo = lo < low ? low : lo;
		lo = lo < 0 ? 0 : lo;
		hi = hi > high ? high : hi;
		for (k = lo; k <= hi; k++)	/* at most 5 iterations */
			if (bucket(ctx, (u32)k) != 0)
				empty = false;
		if (empty) {
			eliding = true;
			continue;
		}
		if (eliding) {
			out_fill(&o, ' ', val_space);
			out_bytes(&o, " ~\n", 3);
			eliding = false;
		}
		if (linear && i == 0)
			prefix = "<";
		else if (linear && i == last)
			prefix = ">";
		v = hist_label(d, i, last);
		c = bucket(ctx, (u32)i);
		out_fill(&o, ' ', val_space - hist_space(v) - (*prefix ? 1 : 0));
		out_bytes(&o, prefix, *prefix ? 1 : 0);
		hist_num(&o, v);
		out_bytes(&o, " |", 2);
		bar = c > 0 ? c / scale : 0;
		out_fill(&o, '@', bar);
		out_fill(&o, ' ', HIST_WIDTH - bar + 1 + cnt_space - hist_space(c));
		hist_num(&o, c);
		out_bytes(&o, "\n", 1);
	}
	out_bytes(&o, "\n", 1);
	return (u32)(o.len < o.cap ? o.len : o.cap);
}
