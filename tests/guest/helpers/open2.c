// SPDX-License-Identifier: GPL-2.0
/*
 * open2 - calls the open(2) system call itself (SYS_open, not openat, which
 * is what glibc's open() uses) N times on FILE, closes each fd, and prints
 * OPEN2_PID=<pid> for the harness's expectation variables.
 *
 * usage: open2 N FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long i, n, fd;

	if (argc != 3) {
		fprintf(stderr, "usage: open2 N FILE\n");
		return 2;
	}
	n = strtol(argv[1], NULL, 10);
	for (i = 0; i < n; i++) {
		fd = syscall(SYS_open, argv[2], O_RDONLY);
		if (fd < 0) {
			perror("open");
			return 1;
		}
		close((int)fd);
	}
	printf("OPEN2_PID=%d\n", getpid());
	return 0;
}
