// SPDX-License-Identifier: GPL-2.0
/*
 * stp-ioctl - drives /dev/stapvm directly, without the stapvm CLI, for the
 * guest tests of the module's ioctl, mmap and poll paths.
 *
 *   stp-ioctl load IMG        LOAD only; prints "accepted" or
 *                             "refused: <ERRNO_NAME> (<errno>): <log>"
 *                             (the format of `stapvm debug load-image`)
 *   stp-ioctl run IMG SECS    LOAD, INFO, mmap every ring, START, poll until
 *                             exit() or SECS seconds, STOP, drain; prints
 *                             the records ("printf ID ARGS...", "error ...",
 *                             "exit") in time order, then the STATUS
 *                             counters and the PROBE_STATS of every probe
 *                             to stderr; a failed START prints the errno
 *                             and the probe START names
 *   stp-ioctl hold IMG SECS   LOAD and START, then sleep SECS (for kill tests)
 *   stp-ioctl evil IMG SECS   like run, but first writes a consumer_pos
 *                             outside [producer_pos - size, producer_pos]
 *                             into every ring: every record must be dropped
 *                             (and counted), nothing else may happen
 *   stp-ioctl mmap IMG        the mapping rules: prints one line per
 *                             attempt (writable data, mprotect, past the
 *                             ring, a ring past the last CPU, ...)
 *   stp-ioctl args IMG        the args_size rules of LOAD, START and
 *                             PROBE_STATS (abi.h): one line per attempt
 *                             (larger with a zero or non-zero tail,
 *                             smaller, huge, flags, reserved, ioctl
 *                             numbers with other sizes)
 *
 * Left out: formatting (records are printed raw), several sessions.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stapvm/abi.h"

static const char *errname(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EINVAL: return "EINVAL";
	case E2BIG: return "E2BIG";
	case ENOEXEC: return "ENOEXEC";
	case EPROTO: return "EPROTO";
	case EBADMSG: return "EBADMSG";
	case ERANGE: return "ERANGE";
	case ENOMEM: return "ENOMEM";
	case ENOTTY: return "ENOTTY";
	case EEXIST: return "EEXIST";
	case ENXIO: return "ENXIO";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	default: return "E?";
	}
}

static unsigned char *read_file(const char *path, uint32_t *size)
{
	struct stat st;
	unsigned char *buf;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st)) {
		perror(path);
		exit(2);
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf || fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		perror(path);
		exit(2);
	}
	fclose(f);
	*size = (uint32_t)st.st_size;
	return buf;
}

/* LOAD; returns the session fd or -1 after printing the refusal. */
static int load(const unsigned char *img, uint32_t size, int quiet_ok)
{
	char log[STP_LOG_MAX];
	struct stp_load_args a;
	int dev, fd, e;

	dev = open(STP_DEVICE_PATH, O_RDWR);
	if (dev < 0) {
		perror(STP_DEVICE_PATH);
		exit(2);
	}
	memset(&a, 0, sizeof(a));
	memset(log, 0, sizeof(log));
	a.args_size = sizeof(a);
	a.image = (uintptr_t)img;
	a.image_size = size;
	a.log = (uintptr_t)log;
	a.log_size = sizeof(log);
	fd = ioctl(dev, STP_IOC_LOAD, &a);
	e = errno;
	close(dev);
	if (fd < 0) {
		printf("refused: %s (%d): %s\n", errname(e), e, log);
		return -1;
	}
	if (!quiet_ok)
		printf("accepted\n");
	return fd;
}

struct rec {
	uint64_t time;
	const struct stp_rec_hdr *hdr;
};

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static const struct stp_format_desc *formats;
static uint32_t nformats;

static void print_rec(const struct stp_rec_hdr *h)
{
	const unsigned char *p = (const unsigned char *)(h + 1);
	const unsigned char *end = (const unsigned char *)h + h->len;
	uint32_t i;

	switch (h->type) {
	case STP_REC_PRINTF:
		printf("printf %u", h->id);
		if (h->id >= nformats) {
			printf(" (bad format id)\n");
			return;
		}
		for (i = 0; i < formats[h->id].nargs && p < end; i++) {
			if (formats[h->id].str_mask & (1u << i)) {
				uint32_t len;

				memcpy(&len, p, 4);
				printf(" \"%.*s\"", (int)len, (const char *)p + 4);
				p += (4 + len + 7) & ~7u;
			} else {
				int64_t v;

				memcpy(&v, p, 8);
				printf(" %lld", (long long)v);
				p += 8;
			}
		}
		printf("\n");
		break;
	case STP_REC_ERROR: {
		const struct stp_rec_error *e = (const void *)p;

		printf("error %u handler=%u pc=%u addr=0x%llx\n", h->id,
		       e->handler, e->pc, (unsigned long long)e->addr);
		break;
	}
	case STP_REC_EXIT:
		printf("exit\n");
		break;
	default:
		printf("record type %u len %u\n", h->type, h->len);
	}
}

static void print_probe_stats(int fd);

static int run(const unsigned char *img, uint32_t size, int secs, int hold,
	       int evil)
{
	const struct stp_image_hdr *ih = (const void *)img;
	struct stp_session_info info;
	struct stp_start_args sa;
	struct stp_status st;
	struct rec *recs = NULL;
	size_t nrecs = 0, cap = 0;
	uint64_t **cons, **prod;
	unsigned char **data;
	long pg = sysconf(_SC_PAGESIZE);
	struct timespec t0, t;
	uint32_t cpu;
	int fd;

	fd = load(img, size, 1);
	if (fd < 0)
		return 1;
	formats = (const void *)(img + ih->sec[STP_SEC_FORMATS].off);
	nformats = ih->sec[STP_SEC_FORMATS].size / sizeof(*formats);
	if (ioctl(fd, STP_IOC_INFO, &info)) {
		perror("INFO");
		return 1;
	}
	cons = calloc(info.nr_cpus, sizeof(*cons));
	prod = calloc(info.nr_cpus, sizeof(*prod));
	data = calloc(info.nr_cpus, sizeof(*data));
	for (cpu = 0; cpu < info.nr_cpus; cpu++) {
		off_t base = (off_t)cpu * info.ring_stride_pages * pg;
		void *c, *p;

		c = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base);
		p = mmap(NULL, pg * (1 + 2 * (size_t)info.ring_pages),
			 PROT_READ, MAP_SHARED, fd, base + pg);
		if (c == MAP_FAILED || p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		cons[cpu] = c;
		prod[cpu] = p;
		data[cpu] = (unsigned char *)p + pg;
	}
	if (evil)
		for (cpu = 0; cpu < info.nr_cpus; cpu++)
			*cons[cpu] = 0xdeadbeef000ull;
	memset(&sa, 0, sizeof(sa));
	sa.args_size = sizeof(sa);
	if (ioctl(fd, STP_IOC_START, &sa)) {
		printf("start failed: %s (%d)", errname(errno), errno);
		if (sa.failed_probe != STP_START_NO_PROBE)
			printf(": probe %u, %s (%d)", sa.failed_probe,
			       errname(-sa.failed_err), sa.failed_err);
		printf("\n");
		return 1;
	}
	if (hold) {
		printf("started\n");
		fflush(stdout);
		sleep(secs);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (ioctl(fd, STP_IOC_STATUS, &st)) {
			perror("STATUS");
			return 1;
		}
		if (st.exit_requested)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= secs)
			break;
		poll(&pfd, 1, 100);
	}
	if (ioctl(fd, STP_IOC_STOP)) {
		perror("STOP");
		return 1;
	}
	/* Drain: records stay in place, the session is not closed yet. */
	for (cpu = 0; cpu < info.nr_cpus; cpu++) {
		uint64_t mask = (uint64_t)info.ring_pages * pg - 1;
		uint64_t c = evil ? *prod[cpu] :
			     __atomic_load_n(cons[cpu], __ATOMIC_ACQUIRE);
		uint64_t p = __atomic_load_n(prod[cpu], __ATOMIC_ACQUIRE);

		while (c < p) {
			const struct stp_rec_hdr *h =
				(const void *)(data[cpu] + (c & mask));

			if (h->len < sizeof(*h) || h->len % 8) {
				printf("bad record len %u\n", h->len);
				break;
			}
			if (nrecs == cap) {
				cap = cap ? 2 * cap : 64;
				recs = realloc(recs, cap * sizeof(*recs));
			}
			recs[nrecs].time = h->time_ns;
			recs[nrecs].hdr = h;
			nrecs++;
			c += h->len;
		}
	}
	qsort(recs, nrecs, sizeof(*recs), rec_cmp);
	for (size_t i = 0; i < nrecs; i++)
		print_rec(recs[i].hdr);
	for (cpu = 0; cpu < info.nr_cpus; cpu++)
		__atomic_store_n(cons[cpu], *prod[cpu], __ATOMIC_RELEASE);
	if (ioctl(fd, STP_IOC_STATUS, &st)) {
		perror("STATUS");
		return 1;
	}
	fflush(stdout);
	fprintf(stderr,
		"status: state=%u exit=%u hits=%llu errors=%llu skipped=%llu dropped=%llu armed=%llu\n",
		st.state, st.exit_requested, (unsigned long long)st.hits,
		(unsigned long long)st.errors, (unsigned long long)st.skipped,
		(unsigned long long)st.dropped,
		(unsigned long long)st.probes_armed);
	print_probe_stats(fd);
	close(fd);
	return 0;
}

/* PROBE_STATS of every probe, to stderr: "probe I: hits=N skipped=M". */
static void print_probe_stats(int fd)
{
	struct stp_probe_stat ps[64];
	struct stp_probe_stats_args pa;
	uint32_t i;

	memset(&pa, 0, sizeof(pa));
	pa.args_size = sizeof(pa);
	pa.stats = (uintptr_t)ps;
	pa.count = 64;
	if (ioctl(fd, STP_IOC_PROBE_STATS, &pa)) {
		fprintf(stderr, "PROBE_STATS: %s\n", errname(errno));
		return;
	}
	for (i = 0; i < pa.count && i < 64; i++)
		fprintf(stderr, "probe %u: hits=%llu skipped=%llu\n", i,
			(unsigned long long)ps[i].hits,
			(unsigned long long)ps[i].skipped);
}

static void try_map(int fd, const char *what, size_t len, int prot,
		    off_t off)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	if (p == MAP_FAILED) {
		printf("%s: %s\n", what, errname(errno));
		return;
	}
	printf("%s: mapped\n", what);
	munmap(p, len);
}

static int mmap_checks(const unsigned char *img, uint32_t size)
{
	struct stp_session_info info;
	long pg = sysconf(_SC_PAGESIZE);
	size_t ro_len;
	off_t stride;
	void *p;
	int fd;

	fd = load(img, size, 1);
	if (fd < 0 || ioctl(fd, STP_IOC_INFO, &info))
		return 1;
	stride = (off_t)info.ring_stride_pages * pg;
	ro_len = pg * (1 + 2 * (size_t)info.ring_pages);
	printf("info: page_size=%u ring_pages=%u stride=%u (2 + 2 * ring_pages: %s)\n",
	       info.page_size, info.ring_pages, info.ring_stride_pages,
	       info.ring_stride_pages == 2 + 2 * info.ring_pages ? "yes" : "no");
	try_map(fd, "consumer page rw", pg, PROT_READ | PROT_WRITE, 0);
	try_map(fd, "consumer page + producer page rw", 2 * pg,
		PROT_READ | PROT_WRITE, 0);
	try_map(fd, "producer page rw", pg, PROT_READ | PROT_WRITE, pg);
	try_map(fd, "data rw", pg, PROT_READ | PROT_WRITE, 2 * pg);
	try_map(fd, "producer + data ro", ro_len, PROT_READ, pg);
	try_map(fd, "whole ring ro", stride, PROT_READ, 0);
	try_map(fd, "past the ring end", ro_len + pg, PROT_READ, pg);
	try_map(fd, "ring past the last cpu", pg, PROT_READ,
		stride * info.nr_cpus);
	try_map(fd, "last cpu's consumer page rw", pg, PROT_READ | PROT_WRITE,
		stride * (info.nr_cpus - 1));
	p = mmap(NULL, ro_len, PROT_READ, MAP_SHARED, fd, pg);
	if (p != MAP_FAILED) {
		printf("mprotect ro -> rw: %s\n",
		       mprotect(p, pg, PROT_READ | PROT_WRITE) ?
		       errname(errno) : "allowed");
		/* The data area is mapped twice: both views agree. */
		printf("double mapping: %s\n",
		       !memcmp((char *)p + pg, (char *)p + pg +
			       (size_t)info.ring_pages * pg, pg) ? "same" : "differs");
		munmap(p, ro_len);
	}
	p = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, 0);
	printf("private ro consumer page: %s\n",
	       p == MAP_FAILED ? errname(errno) : "mapped");
	close(fd);
	return 0;
}

/* An ioctl number of the given direction/number for a size-byte struct. */
#define IOC_SIZED(nr, size) \
	_IOC(_IOC_READ | _IOC_WRITE, STP_IOC_MAGIC, (nr), (size))

/* Larger than any argument structure: the struct, then a tail. */
union big_args {
	struct stp_load_args load;
	struct stp_start_args start;
	struct stp_probe_stats_args stats;
	unsigned char bytes[64];
};

/* One ioctl attempt: prints "WHAT: ok" or "WHAT: ERRNO"; returns the result. */
static int attempt(const char *what, int fd, unsigned long cmd, void *arg)
{
	int rc = ioctl(fd, cmd, arg);

	if (rc < 0)
		printf("%s: %s\n", what, errname(errno));
	else
		printf("%s: ok\n", what);
	return rc;
}

/* LOAD with args_size = size and the tail after the struct set to tail. */
static int load_sized(const unsigned char *img, uint32_t isize, uint32_t size,
		      unsigned char tail, uint32_t flags, const char *what)
{
	union big_args b;
	int dev, fd;

	memset(&b, 0, sizeof(b));
	b.load.args_size = size;
	b.load.flags = flags;
	b.load.image = (uintptr_t)img;
	b.load.image_size = isize;
	b.bytes[sizeof(b.load)] = tail;
	dev = open(STP_DEVICE_PATH, O_RDWR);
	if (dev < 0) {
		perror(STP_DEVICE_PATH);
		exit(2);
	}
	fd = attempt(what, dev, IOC_SIZED(1, size <= sizeof(b) ? size : sizeof(b)), &b);
	close(dev);
	return fd;
}

static int args_checks(const unsigned char *img, uint32_t isize)
{
	const uint32_t ls = sizeof(struct stp_load_args);
	const uint32_t ss = sizeof(struct stp_start_args);
	const uint32_t ps = sizeof(struct stp_probe_stats_args);
	struct stp_probe_stat st[4];
	union big_args b;
	int fd;

	printf("sizes: load=%u (ver0 %u) start=%u (ver0 %u) probe_stats=%u (ver0 %u)\n",
	       ls, STP_LOAD_ARGS_SIZE_VER0, ss, STP_START_ARGS_SIZE_VER0, ps,
	       STP_PROBE_STATS_ARGS_SIZE_VER0);
	fd = load_sized(img, isize, ls, 0, 0, "load exact size");
	if (fd >= 0)
		close(fd);
	fd = load_sized(img, isize, ls + 8, 0, 0, "load +8, zero tail");
	if (fd >= 0)
		close(fd);
	fd = load_sized(img, isize, ls + 8, 1, 0, "load +8, non-zero tail");
	if (fd >= 0)
		close(fd);
	fd = load_sized(img, isize, ls - 8, 0, 0, "load -8");
	if (fd >= 0)
		close(fd);
	fd = load_sized(img, isize, 0, 0, 0, "load size 0");
	if (fd >= 0)
		close(fd);
	fd = load_sized(img, isize, STP_ARGS_SIZE_MAX + 8, 0, 0, "load size 4104");
	if (fd >= 0)
		close(fd);
	fd = load_sized(img, isize, ls, 0, 1, "load flags 1");
	if (fd >= 0)
		close(fd);

	fd = load(img, isize, 1);
	if (fd < 0)
		return 1;
	memset(&b, 0, sizeof(b));
	attempt("other ioctl type", fd, _IOC(_IOC_READ | _IOC_WRITE, 'T', 3, ss), &b);
	attempt("start without argument (old _IO number)", fd, _IO(STP_IOC_MAGIC, 3), NULL);
	b.start.args_size = ss - 8;
	attempt("start -8", fd, IOC_SIZED(3, ss - 8), &b);
	b.start.args_size = ss + 8;
	b.bytes[ss] = 1;
	attempt("start +8, non-zero tail", fd, IOC_SIZED(3, ss + 8), &b);
	b.bytes[ss] = 0;
	b.start.args_size = ss;
	b.start.flags = 1;
	attempt("start flags 1", fd, STP_IOC_START, &b);
	b.start.flags = 0;
	b.start.args_size = ss + 8;
	b.start.failed_probe = 7;
	b.start.failed_err = 7;
	if (attempt("start +8, zero tail", fd, IOC_SIZED(3, ss + 8), &b) == 0)
		printf("  failed_probe=%s failed_err=%d\n",
		       b.start.failed_probe == STP_START_NO_PROBE ?
		       "none" : "SET", b.start.failed_err);
	b.start.args_size = ss;
	attempt("start again", fd, STP_IOC_START, &b);
	attempt("stop", fd, STP_IOC_STOP, NULL);

	memset(&b, 0, sizeof(b));
	b.stats.args_size = ps;
	b.stats.stats = (uintptr_t)st;
	b.stats.count = 0;
	if (attempt("probe_stats count 0", fd, STP_IOC_PROBE_STATS, &b) == 0)
		printf("  count=%u\n", b.stats.count);
	b.stats.args_size = ps + 8;
	b.stats.count = 4;
	if (attempt("probe_stats +8, zero tail", fd, IOC_SIZED(7, ps + 8), &b) == 0)
		printf("  count=%u\n", b.stats.count);
	b.stats.args_size = ps + 8;
	b.bytes[ps + 4] = 1;
	attempt("probe_stats +8, non-zero tail", fd, IOC_SIZED(7, ps + 8), &b);
	b.bytes[ps + 4] = 0;
	b.stats.args_size = ps - 8;
	attempt("probe_stats -8", fd, IOC_SIZED(7, ps - 8), &b);
	b.stats.args_size = ps;
	b.stats.reserved = 1;
	attempt("probe_stats reserved 1", fd, STP_IOC_PROBE_STATS, &b);
	b.stats.reserved = 0;
	b.stats.stats = 16;	/* not a user address */
	b.stats.count = 2;
	attempt("probe_stats bad pointer", fd, STP_IOC_PROBE_STATS, &b);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *img;
	uint32_t size;

	if (argc < 3) {
		fprintf(stderr, "usage: stp-ioctl load|run|hold|evil|mmap|args IMG [SECS]\n");
		return 2;
	}
	img = read_file(argv[2], &size);
	if (!strcmp(argv[1], "load"))
		return load(img, size, 0) < 0;
	if (!strcmp(argv[1], "run") || !strcmp(argv[1], "hold") ||
	    !strcmp(argv[1], "evil"))
		return run(img, size, argc > 3 ? atoi(argv[3]) : 5,
			   !strcmp(argv[1], "hold"), !strcmp(argv[1], "evil"));
	if (!strcmp(argv[1], "mmap"))
		return mmap_checks(img, size);
	if (!strcmp(argv[1], "args"))
		return args_checks(img, size);
	fprintf(stderr, "unknown mode %s\n", argv[1]);
	return 2;
}
