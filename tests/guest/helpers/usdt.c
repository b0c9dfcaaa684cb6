// SPDX-License-Identifier: GPL-2.0
/*
 * usdt - fires USDT markers (<sys/sdt.h>) a known number of times:
 * stapvm:tick (no arguments) N times, and stapvm:guarded N times but only
 * while its semaphore is raised (a tracer armed on it), as programs guard
 * costly marker arguments; stapvm:args with six arguments of mixed sizes
 * and signs (-5 - i as a signed char, 250 as an unsigned char, -300 as a
 * short, 4000000000 as an unsigned int, big - i as a long, i) and
 * stapvm:one with the global big (-1234567890123) N times each. Prints
 * USDT_PID=<pid>, USDT_TICKS=<N> and USDT_GUARDED=<times the guard was
 * open>.
 *
 * usage: usdt N
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/sdt.h>

/* The semaphores the notes name (sdt.h: PROVIDER_NAME_semaphore); only
 * guarded's is tested.
 */
volatile unsigned short stapvm_tick_semaphore
	__attribute__((section(".probes"))) = 0;
volatile unsigned short stapvm_guarded_semaphore
	__attribute__((section(".probes"))) = 0;
volatile unsigned short stapvm_args_semaphore
	__attribute__((section(".probes"))) = 0;
volatile unsigned short stapvm_one_semaphore
	__attribute__((section(".probes"))) = 0;

volatile long big = -1234567890123L;

int main(int argc, char **argv)
{
	long i, n, guarded = 0;

	n = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	for (i = 0; i < n; i++) {
		STAP_PROBE(stapvm, tick);
		if (stapvm_guarded_semaphore) {
			guarded++;
			STAP_PROBE(stapvm, guarded);
		}
		{
			/* volatile: in memory, so some specs are memory ones */
			volatile signed char c = (signed char)(-5 - i);
			volatile unsigned char uc = 250;
			volatile short sh = -300;
			volatile unsigned int ui = 4000000000u;
			long l = big - i;

			STAP_PROBE6(stapvm, args, c, uc, sh, ui, l, i);
			STAP_PROBE1(stapvm, one, big);
		}
	}
	printf("USDT_PID=%d\nUSDT_TICKS=%ld\nUSDT_GUARDED=%ld\n", (int)getpid(),
	       n, guarded);
	return 0;
}
