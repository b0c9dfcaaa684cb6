// SPDX-License-Identifier: GPL-2.0
// guest-build: dynamic
/*
 * mallocs - makes exactly N calls of the shared glibc's malloc() between
 * a call of mallocs_begin() and one of mallocs_end() (both empty and not
 * inlined, so that uprobes on them bracket the calls), then prints
 * MALLOCS_PTR=<hex> for each pointer malloc() returned, in order, and
 * MALLOCS_SIZES=<the sum of the sizes asked>: what the glibc case's
 * process(...).library("libc.so.6").function("malloc") probes and
 * .return's $return must count and read.
 *
 * usage: mallocs N (at most 64)
 */
#include <stdio.h>
#include <stdlib.h>

#define MAX_ALLOCS 64

__attribute__((noinline)) void mallocs_begin(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void mallocs_end(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	void *p[MAX_ALLOCS];
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0, i, sizes = 0;

	if (n < 0 || n > MAX_ALLOCS) {
		fprintf(stderr, "usage: mallocs N (0 to %d)\n", MAX_ALLOCS);
		return 2;
	}
	mallocs_begin();
	for (i = 0; i < n; i++) {
		/* sizes of the tcache's bins, and one past mmap's threshold */
		size_t sz = i == n - 1 ? 200000 : (size_t)(i + 1) * 24;

		p[i] = malloc(sz);
		sizes += (long)sz;
	}
	mallocs_end();
	for (i = 0; i < n; i++)
		printf("MALLOCS_PTR=%lx\n", (unsigned long)p[i]);
	printf("MALLOCS_SIZES=%ld\n", sizes);
	for (i = 0; i < n; i++)
		free(p[i]);
	return 0;
}
