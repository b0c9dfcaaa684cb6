// SPDX-License-Identifier: GPL-2.0
/*
 * faulter - makes page faults the kernel counts: maps N fresh anonymous
 * pages (default 4000), without transparent huge pages, and writes one
 * byte to each (one fault each), then prints
 * FAULTS=<minor + major faults of this process since it started>
 * (getrusage, the kernel's own count, the same task counter perf's
 * page-faults event follows) and TOUCHED=<N>.
 *
 * usage: faulter [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 4000;
	long page = sysconf(_SC_PAGESIZE);
	struct rusage ru;
	volatile char *p;
	long i;

	if (n <= 0 || n > 1000000 || page <= 0) {
		fprintf(stderr, "usage: faulter [N], 0 < N <= 1000000\n");
		return 2;
	}
	p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* One fault per page: no transparent huge pages here. */
	if (madvise((void *)p, (size_t)(n * page), MADV_NOHUGEPAGE))
		perror("madvise");
	for (i = 0; i < n; i++)
		p[i * page] = 1;
	if (getrusage(RUSAGE_SELF, &ru)) {
		perror("getrusage");
		return 1;
	}
	printf("FAULTS=%ld\nTOUCHED=%ld\n", ru.ru_minflt + ru.ru_majflt, n);
	return 0;
}
