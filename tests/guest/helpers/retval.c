// SPDX-License-Identifier: GPL-2.0
/*
 * retval - calls getppid(2) N times through syscall() and prints
 * RETVAL_PID=<pid> and RETVAL_PPID=<what getppid returned> for the
 * harness's expectation variables (a kretprobe on the syscall sees the
 * same return value).
 *
 * usage: retval N      (N < 0: call getppid forever, print nothing; for
 *                      load under load)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long i, n, ppid = -1;

	n = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	while (n < 0)
		syscall(SYS_getppid);
	for (i = 0; i < n; i++)
		ppid = syscall(SYS_getppid);
	printf("RETVAL_PID=%d\nRETVAL_PPID=%ld\n", getpid(), ppid);
	return 0;
}
