// SPDX-License-Identifier: GPL-2.0
/*
 * runas - runs a command with another real and effective uid and gid
 * (busybox in the guest has no su/chpst without a passwd file), so cases
 * can check what a probe sees of a non-root task's credentials.
 *
 * usage: runas UID GID COMMAND [ARG...]
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	gid_t gid;
	uid_t uid;

	if (argc < 4) {
		fprintf(stderr, "usage: runas UID GID COMMAND [ARG...]\n");
		return 2;
	}
	uid = (uid_t)strtoul(argv[1], NULL, 10);
	gid = (gid_t)strtoul(argv[2], NULL, 10);
	if (setgroups(0, NULL) || setgid(gid) || setuid(uid)) {
		perror("runas");
		return 1;
	}
	execvp(argv[3], argv + 3);
	perror("runas: exec");
	return 127;
}
