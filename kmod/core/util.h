/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * util.h - small arithmetic helpers the core files share (map.c, verify.c,
 * vm.c and its parts): rounding to the 8-byte alignment every table and
 * record has, and a bounded popcount for key and argument masks. No state.
 *
 * Context: any; each function is a few instructions, or at most 32 loop
 * iterations.
 */
#ifndef STP_UTIL_H
#define STP_UTIL_H

#include "stp_core.h"

/* n rounded up to a multiple of 8 (n below 2^32 - 7: every caller's is). */
static inline u32 stp_round8(u32 n)
{
	return (n + 7) & ~7u;
}

/* The number of bits set in x: at most 32 iterations. */
static inline u32 stp_popcount(u32 x)
{
	u32 n = 0;

	while (x) {
		x &= x - 1;
		n++;
	}
	return n;
}

#endif /* STP_UTIL_H */
