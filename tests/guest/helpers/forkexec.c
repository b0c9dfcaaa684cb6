// SPDX-License-Identifier: GPL-2.0
/*
 * forkexec - a known tree of process events for process.begin/.end and
 * .thread.begin/.thread.end: forks N children, each of which execs this
 * program again as "forkexec child", which starts two threads, joins
 * them and exits; the parent waits for every child. So per child: a
 * fork, an exec, two threads that begin and end, one process end.
 *
 * usage: forkexec N (at most 16) | forkexec child
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CHILDREN 16

static void *thread_fn(void *arg)
{
	return arg;
}

static int child(void)
{
	pthread_t t[2];
	int i;

	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread_fn, NULL))
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	long n, i;
	int bad = 0, status;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	if (n < 0 || n > MAX_CHILDREN) {
		fprintf(stderr, "usage: forkexec N (0 to %d) | forkexec child\n",
			MAX_CHILDREN);
		return 2;
	}
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			execl("/proc/self/exe", "forkexec", "child", (char *)NULL);
			_exit(127);
		}
		/* one child at a time: the events come in a known order */
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	}
	printf("FORKEXEC_CHILDREN=%ld FORKEXEC_BAD=%d\n", n, bad);
	return 0;
}
