// SPDX-License-Identifier: GPL-2.0
// build-flags: -g -O0
/*
 * udwarf - calls udw_visit(n, &rec, name) for n = 1 .. 3, with a struct
 * whose members (a bitfield among them, and a pointer to another struct)
 * and a string differ at each call, and prints, as UDW_E<n>= and
 * UDW_R<n>= lines for the harness's expectation variables, the lines a
 * script reading the parameters from the binary's DWARF ($n,
 * $r->count, $r->mode, $r->inner->depth, user_string($name); $return
 * and $n at return) must print for each call. Built with -g: its DWARF
 * is what stapvm reads.
 *
 * usage: udwarf
 */
#include <stdio.h>

struct udw_inner {
	char pad[3];
	short depth;
};

struct udw_rec {
	long count;
	unsigned int flags : 3, mode : 5;
	const char *label;
	struct udw_inner *inner;
};

__attribute__((noinline)) long udw_visit(int n, struct udw_rec *r, const char *name)
{
	__asm__ volatile("" : : "r"(name) : "memory");
	return n * 100 + r->count + r->mode;
}

int main(void)
{
	static const char *const names[] = { "alpha", "beta", "gamma" };
	struct udw_inner in = { { 0 }, 0 };
	struct udw_rec r = { 0, 0, 0, "rec", &in };
	int n;

	for (n = 1; n <= 3; n++) {
		long ret;

		r.count = -10L * n;
		r.flags = (unsigned int)n;
		r.mode = (unsigned int)(7 * n);
		in.depth = (short)(1000 * n);
		ret = udw_visit(n, &r, names[n - 1]);
		printf("UDW_E%d=entry n=%d count=%ld mode=%u depth=%d name=%s\n", n, n, r.count,
		       (unsigned int)r.mode, in.depth, names[n - 1]);
		printf("UDW_R%d=return n=%d ret=%ld\n", n, n, ret);
	}
	return 0;
}
