// SPDX-License-Identifier: GPL-2.0
/*
 * bench-tool - the guest-side workload and clock of tests/guest/bench,
 * built with gcc -static.
 *
 *   bench-tool loop N          N x getppid(2) (the system call itself,
 *                              syscall(SYS_getppid)) as fast as possible;
 *                              prints "calls=N ns=T ns_per_call=X"
 *   bench-tool rate N RATE     N x getppid(2) paced at RATE calls/s (a
 *                              burst of RATE/1000 calls every ms, absolute
 *                              clock_nanosleep in between); prints the
 *                              same plus "rate=achieved"
 *   bench-tool uloop N         N calls of bench_ufunc(), a user-space
 *                              function that does nothing (not inlined),
 *                              for the uprobe rows; prints as loop does
 *   bench-tool uoffset         the file offset of bench_ufunc in this
 *                              program (from /proc/self/maps), for the
 *                              uprobe floor's insmod
 *   bench-tool now             CLOCK_MONOTONIC in ns
 *   bench-tool waitfile F T0 MS
 *                              waits (polling every 200 us) until F
 *                              exists, at most MS ms; prints
 *                              "launch_ms=X": ms from T0 (a `now` value)
 *                              until F appeared. Exit 1 on timeout.
 *
 * Timing is wall clock (CLOCK_MONOTONIC): with one vCPU, anything else
 * that runs during the loop (the stapvm consumer) is part of the cost, as
 * it would be for stap or bpftrace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench-tool loop N | uloop N | uoffset | rate N RATE | now | waitfile FILE T0 MS\n");
	return 2;
}

/* What the uprobe rows probe: a call that does nothing else. */
__attribute__((noinline)) void bench_ufunc(void)
{
	__asm__ volatile("" ::: "memory");
}

/* The file offset of bench_ufunc: its mapping's offset plus the distance. */
static int print_uoffset(void)
{
	unsigned long a = (unsigned long)&bench_ufunc, lo, hi, off;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 &&
		    a >= lo && a < hi) {
			printf("%#lx\n", a - lo + off);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return 1;
}

int main(int argc, char **argv)
{
	long long t0, t1, i, n;

	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "now")) {
		printf("%lld\n", now_ns());
		return 0;
	}
	if (!strcmp(argv[1], "waitfile") && argc == 5) {
		long long start = atoll(argv[3]);
		long long limit = now_ns() + atoll(argv[4]) * 1000000LL;
		struct timespec d = { 0, 200000 };

		while (access(argv[2], F_OK)) {
			if (now_ns() > limit) {
				printf("launch_ms=timeout\n");
				return 1;
			}
			nanosleep(&d, NULL);
		}
		printf("launch_ms=%.1f\n", (double)(now_ns() - start) / 1e6);
		return 0;
	}
	if (!strcmp(argv[1], "loop") && argc == 3) {
		n = atoll(argv[2]);
		t0 = now_ns();
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
		t1 = now_ns();
		printf("calls=%lld ns=%lld ns_per_call=%.2f\n", n, t1 - t0,
		       n ? (double)(t1 - t0) / (double)n : 0.0);
		return 0;
	}
	if (!strcmp(argv[1], "uloop") && argc == 3) {
		n = atoll(argv[2]);
		t0 = now_ns();
		for (i = 0; i < n; i++)
			bench_ufunc();
		t1 = now_ns();
		printf("calls=%lld ns=%lld ns_per_call=%.2f\n", n, t1 - t0,
		       n ? (double)(t1 - t0) / (double)n : 0.0);
		return 0;
	}
	if (!strcmp(argv[1], "uoffset"))
		return print_uoffset();
	if (!strcmp(argv[1], "rate") && argc == 4) {
		long long rate = atoll(argv[3]), per_ms, done = 0;
		struct timespec next;

		n = atoll(argv[2]);
		per_ms = rate / 1000 > 0 ? rate / 1000 : 1;
		clock_gettime(CLOCK_MONOTONIC, &next);
		t0 = now_ns();
		while (done < n) {
			for (i = 0; i < per_ms && done < n; i++, done++)
				syscall(SYS_getppid);
			next.tv_nsec += 1000000;
			if (next.tv_nsec >= 1000000000L) {
				next.tv_nsec -= 1000000000L;
				next.tv_sec++;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		}
		t1 = now_ns();
		printf("calls=%lld ns=%lld ns_per_call=%.2f rate=%.0f\n", n,
		       t1 - t0, n ? (double)(t1 - t0) / (double)n : 0.0,
		       t1 > t0 ? (double)n * 1e9 / (double)(t1 - t0) : 0.0);
		return 0;
	}
	return usage();
}
