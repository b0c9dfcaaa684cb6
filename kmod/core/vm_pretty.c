// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vm_pretty.c - the work of the PRETTY instruction: SystemTap's `$var$`
 * and `$var$$` (tapsets.cxx, dwarf_pretty_print), a target value printed
 * with the type nodes of the PRETTY section (abi.h: struct
 * stp_pretty_node; opcodes.h says what is printed). The loader builds the
 * nodes from the target's BTF; verify.c (check_pretty) proved every kind,
 * size, bitfield, name and child index, and that children come after
 * their parent.
 *
 * Nested aggregates are walked with an explicit stack of
 * STP_PRETTY_MAX_DEPTH frames (no recursion); every node printed costs a
 * unit of the caller's MAXACTION fuel, so the work is bounded by the fuel
 * whatever the node graph shares. Memory is read only through the
 * environment's fault-safe reads; a fault makes the result "ERROR".
 *
 * Context: any, called from stp_run(): never sleeps, never allocates.
 */
#include "vm_int.h"

/* One aggregate being printed: its node, next child, address. */
struct pp_frame {
	u64 base;
	u32 node;
	u32 next;
};

struct pp {
	void *env;
	const struct stp_prog *p;
	char *out;
	u32 cap;
	u32 len;
	u32 args;		/* values printed (stap's sprintf arguments) */
	bool full;		/* $$: nested aggregates expanded */
	bool fault;
	u64 *fuel;
	char *raw;		/* scratch: a string's bytes (cap) */
	char *quoted;		/* scratch: the string quoted (cap) */
	u32 depth;
	struct pp_frame stack[STP_PRETTY_MAX_DEPTH];
};

static void put(struct pp *pp, const char *s, u32 n)
{
	u32 room = pp->cap - pp->len;

	if (n > room)
		n = room;
	memcpy(pp->out + pp->len, s, n);
	pp->len += n;
}

static void put_str(struct pp *pp, const char *s)
{
	u32 n = 0;

	while (s[n])		/* the constant texts of this file */
		n++;
	put(pp, s, n);
}

/* One printf conversion of v (format.c), e.g. "%i" or "'%#c'". */
static void put_fmt(struct pp *pp, const char *fmt, u64 v)
{
	struct stp_fmt_arg a = { .is_str = 0, .i = (s64)v };
	char buf[48];
	u32 fl = 0;
	int n;

	while (fmt[fl])
		fl++;
	n = stp_format(fmt, fl, &a, 1, buf, sizeof(buf));
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (n > 0)
		put(pp, buf, (u32)n);
	pp->args++;
}

/*
 * kernel_or_user_string_quoted(addr): kernel_string, else user_string,
 * then string_quoted; both copies faulting is a fault of the whole value.
 */
static void put_string(struct pp *pp, u64 addr)
{
	u64 at = 0;
	u32 n = 0;

	if (stp_copy_string(pp->env, false, pp->raw, pp->cap, addr, &n, &at) &&
	    stp_copy_string(pp->env, true, pp->raw, pp->cap, addr, &n, &at)) {
		pp->fault = true;
		return;
	}
	n = stp_text_strn(pp->raw, n, pp->quoted, pp->cap, 0, true);
	put(pp, pp->quoted, n);
	pp->args++;
}

/* A scalar member of node n at addr: its bytes, bits and sign. */
static bool read_scalar(struct pp *pp, const struct stp_pretty_node *n,
			u64 addr, u64 *v)
{
	u32 bits = n->bit_size;

	if (read_signed(pp->env, false, addr, n->size, v))
		return false;
	if (!bits) {
		if (n->kind != STP_PK_SIGNED && n->size < 8)
			*v &= (1ull << (8 * n->size)) - 1;
		return true;
	}
	/* verify.c: bit_off + bit_size <= 8 * size <= 64, bit_size >= 1 */
	*v <<= 64 - n->bit_off - bits;
	*v = n->kind == STP_PK_SIGNED ? (u64)((s64)*v >> (64 - bits)) :
					*v >> (64 - bits);
	return true;
}

static bool charge(struct pp *pp)
{
	if (!*pp->fuel)
		return false;
	(*pp->fuel)--;
	return true;
}

/* Opens aggregate node i at addr: its frame, or its "{...}" / "[...]". */
static void open_aggregate(struct pp *pp, u32 i, u64 addr, bool top)
{
	const struct stp_pretty_node *n = &pp->p->pretty[i];
	bool is_struct = n->kind == STP_PK_STRUCT;

	if (!top && (!pp->full || pp->depth >= STP_PRETTY_MAX_DEPTH)) {
		put_str(pp, is_struct ? "{...}" : "[...]");
		return;
	}
	put_str(pp, is_struct ? "{" : "[");
	pp->stack[pp->depth].base = addr;
	pp->stack[pp->depth].node = i;
	pp->stack[pp->depth].next = 0;
	pp->depth++;
}

/*
 * A member or element: node i at address addr (top: the value itself,
 * already read, is v). Returns false when the fuel ran out.
 */
static bool value(struct pp *pp, u32 i, u64 addr, u64 v, bool top)
{
	const struct stp_pretty_node *n = &pp->p->pretty[i];

	if (!charge(pp))
		return false;
	switch (n->kind) {
	case STP_PK_SIGNED:
	case STP_PK_UNSIGNED:
	case STP_PK_CHAR:
		if (!top && !read_scalar(pp, n, addr, &v)) {
			pp->fault = true;
			break;
		}
		put_fmt(pp, n->kind == STP_PK_SIGNED ? "%i" :
			    n->kind == STP_PK_UNSIGNED ? "%u" : "'%#c'", v);
		break;
	case STP_PK_POINTER:
	case STP_PK_FUNC:
	case STP_PK_STRING:
		if (!top && read_signed(pp->env, false, addr, 8, &v)) {
			pp->fault = true;
			break;
		}
		if (n->kind == STP_PK_STRING)
			put_string(pp, v);
		else
			put_fmt(pp, n->kind == STP_PK_FUNC ? "<function>:%p" :
				    "%p", v);
		break;
	case STP_PK_CHARS:
		/* stap: a nested array is "[...]" before its chars are seen */
		if (!top && (!pp->full || pp->depth >= STP_PRETTY_MAX_DEPTH))
			put_str(pp, "[...]");
		else
			put_string(pp, top ? v : addr);
		break;
	case STP_PK_STRUCT:
	case STP_PK_ARRAY:
		open_aggregate(pp, i, top ? v : addr, top);
		break;
	default:		/* STP_PK_UNKNOWN */
		put_str(pp, "?");
		break;
	}
	return true;
}

/* The label before a member's "=": ".name", "<union>", "<class>". */
static void label(struct pp *pp, u32 name)
{
	const struct stp_str_desc *sd;

	if (name == STP_PRETTY_NAME_UNION) {
		put_str(pp, "<union>");
	} else if (name == STP_PRETTY_NAME_STRUCT) {
		put_str(pp, "<class>");
	} else if (name != STP_PRETTY_NAME_NONE) {
		/* verify.c: name < nstrs, inside STRDATA */
		sd = &pp->p->strs[name];
		put_str(pp, ".");
		put(pp, (const char *)pp->p->strdata + sd->off, sd->len);
	}
	put_str(pp, "=");
}

u32 stp_pretty(void *env, const struct stp_prog *p, u64 v, u64 node,
	       bool full, char *dst, u32 cap, char *raw, char *quoted,
	       u64 *fuel, u32 *len)
{
	struct pp pp = {
		.env = env, .p = p, .out = dst, .cap = cap, .full = full,
		.fuel = fuel, .raw = raw, .quoted = quoted,
	};
	u32 steps = 0;

	if (node >= p->npretty) {	/* no type: stap's "?" */
		put_str(&pp, "?");
		*len = pp.len;
		return STP_RTE_NONE;
	}
	if (!value(&pp, (u32)node, 0, v, true))
		return STP_RTE_MAXACTION;
	/*
	 * Each iteration prints a child or closes a frame, and every child
	 * costs fuel, so this ends within 2 * fuel + depth iterations.
	 */
	while (pp.depth && !pp.fault) {
		struct pp_frame *f = &pp.stack[pp.depth - 1];
		const struct stp_pretty_node *n = &p->pretty[f->node];
		u32 c;

		if (++steps == 0)	/* unreachable: bounded as above */
			break;
		if (n->kind == STP_PK_ARRAY) {
			if (f->next++ == 0 && pp.args < STP_PRETTY_MAX_ARGS) {
				/* the element, at the array's address */
				if (!value(&pp, n->first, f->base, 0, false))
					return STP_RTE_MAXACTION;
				continue;
			}
			put_str(&pp, ", ...]");
			pp.depth--;
			continue;
		}
		if (f->next >= n->count) {
			put_str(&pp, "}");
			pp.depth--;
			continue;
		}
		if (f->next)
			put_str(&pp, ", ");
		if (pp.args >= STP_PRETTY_MAX_ARGS) {
			put_str(&pp, "...");
			f->next = n->count;
			continue;
		}
		c = n->first + f->next++;	/* verify.c: < npretty */
		label(&pp, p->pretty[c].name);
		if (!value(&pp, c, f->base + p->pretty[c].offset, 0, false))
			return STP_RTE_MAXACTION;
	}
	if (pp.fault) {		/* stap's catch in the generated function */
		memcpy(dst, "ERROR", 5);
		pp.len = 5;
	}
	*len = pp.len;
	return STP_RTE_NONE;
}
