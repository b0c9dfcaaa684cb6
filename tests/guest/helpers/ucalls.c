// SPDX-License-Identifier: GPL-2.0
/*
 * ucalls - calls ucall_leaf(i) for i = 0 .. N-1 and prints UCALLS_PID=<pid>
 * and UCALLS_SUM=<the sum of what it returned> for the harness's
 * expectation variables: a user-space function with a known number of
 * calls, arguments and return values for process(...).function probes.
 * With "xol" it also prints UCALLS_XOL=1 when its address space has the
 * kernel's "[uprobes]" mapping (the out-of-line area a uprobe hit
 * creates), else 0: whether a uprobe was still armed in it.
 *
 * usage: ucalls N [xol]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 if /proc/self/maps has the uprobes area, 0 if not, -1 unreadable. */
static int has_xol_area(void)
{
	char line[512];
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes]"))
			found = 1;
	fclose(f);
	return found;
}

/* Out of line and not cloned, so the symbol is the function called. */
__attribute__((noinline, noclone)) long ucall_leaf(long x)
{
	__asm__ volatile("" : : : "memory");
	return 3 * x + 1;
}

int main(int argc, char **argv)
{
	long i, n, sum = 0;

	n = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	for (i = 0; i < n; i++)
		sum += ucall_leaf(i);
	printf("UCALLS_PID=%d\nUCALLS_SUM=%ld\n", (int)getpid(), sum);
	if (argc > 2 && !strcmp(argv[2], "xol"))
		printf("UCALLS_XOL=%d\n", has_xol_area());
	return 0;
}
