// SPDX-License-Identifier: GPL-2.0
// build-flags: -fno-omit-frame-pointer -fno-optimize-sibling-calls
/*
 * uchain - known user stacks for ubacktrace() & co. "uchain N" calls
 * main -> uchain_a -> uchain_b -> uchain_c N times (frame pointers kept:
 * the build-flags line above, read by tests/guest/lib.sh build_helpers).
 * "uchain bad N" calls uchain_bad_leaf N times from inline assembly that
 * first points rbp at an unmapped address above the stack, then N times with
 * rbp at a stack frame that names itself as its caller's (a loop): a
 * frame-pointer walk must stop cleanly in both. Prints UCHAIN_PID=<pid>.
 *
 * usage: uchain N | uchain bad N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline, noclone)) long uchain_c(long x)
{
	__asm__ volatile("" : : : "memory");
	return 3 * x;
}

__attribute__((noinline, noclone)) long uchain_b(long x)
{
	return uchain_c(x) + 1;
}

__attribute__((noinline, noclone)) long uchain_a(long x)
{
	return uchain_b(x) + 2;
}

__attribute__((noinline, noclone, used)) long uchain_bad_leaf(long x)
{
	__asm__ volatile("" : : : "memory");
	return x + 1;
}

/*
 * Calls uchain_bad_leaf(x) with rbp = fp, below the red zone; every
 * register the callee may clobber is declared.
 */
__attribute__((noinline, noclone)) long uchain_bad_call(long x,
							unsigned long fp)
{
	long r;

	__asm__ volatile("sub $128, %%rsp\n\t"
			 "push %%rbp\n\t"
			 "sub $8, %%rsp\n\t"
			 "mov %[fp], %%rbp\n\t"
			 "call uchain_bad_leaf\n\t"
			 "add $8, %%rsp\n\t"
			 "pop %%rbp\n\t"
			 "add $128, %%rsp\n\t"
			 : "=a"(r), "+D"(x)
			 : [fp] "b"(fp)
			 : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11",
			   "memory", "cc");
	return r;
}

int main(int argc, char **argv)
{
	long i, n, sum = 0;

	if (argc > 2 && !strcmp(argv[1], "bad")) {
		/* a frame whose saved rbp is itself, its return address 0x4242 */
		volatile unsigned long frame[2];

		frame[0] = (unsigned long)&frame[0];
		frame[1] = 0x4242;
		n = strtol(argv[2], NULL, 10);
		for (i = 0; i < n; i++)
			sum += uchain_bad_call(i, 0x7fffffff0000UL);
		for (i = 0; i < n; i++)
			sum += uchain_bad_call(i, (unsigned long)&frame[0]);
	} else {
		n = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
		for (i = 0; i < n; i++)
			sum += uchain_a(i);
	}
	printf("UCHAIN_PID=%d\nUCHAIN_SUM=%ld\n", (int)getpid(), sum);
	return 0;
}
