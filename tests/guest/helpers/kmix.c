// SPDX-License-Identifier: GPL-2.0
/*
 * kmix - kernel paths SystemTap's example scripts probe that busybox
 * alone does not reach (tests/guest/case-lib.sh's workload_examples).
 *
 * usage: kmix ipc       futexes: a thread FUTEX_WAITs until the main
 *                       thread FUTEX_WAKEs it (futexes.stp); System V
 *                       semaphores: semget, semop, semtimedop, IPC_RMID
 *                       (semop-watch.stp)
 *        kmix huge      a MAP_HUGETLB page faulted in (clear_huge_page /
 *                       folio_zero_user), then written by a forked child
 *                       (hugetlb copy-on-write: copy_user_huge_page /
 *                       copy_user_large_folio); an anonymous 2 MiB range
 *                       faulted in small pages, then MADV_COLLAPSE'd
 *                       (collapse_huge_page). Needs vm.nr_hugepages >= 2
 *                       and transparent hugepages; what the kernel lacks
 *                       is skipped with a note on stderr.
 *        kmix retrans   a loopback TCP connection whose data is queued
 *                       in TCP_REPAIR mode (TCP_SEND_QUEUE: taken as sent,
 *                       never transmitted), so that the retransmission
 *                       timer sends it (tcp_retransmit_skb) one RTO later
 *                       (about 200 ms on loopback) and the peer reads it;
 *                       tail loss probes are off meanwhile
 *                       (net.ipv4.tcp_early_retrans = 0)
 *        kmix aio       Linux native AIO on a temporary file: io_setup,
 *                       io_submit of a pwrite and a pread, io_getevents,
 *                       io_destroy (traceaio.stp)
 *
 * Exit status 0 unless a step that cannot be missing failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/aio_abi.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define HUGE_SZ (2UL << 20)

static uint32_t futex_word;

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

static void *futex_waiter(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&futex_word, __ATOMIC_SEQ_CST) == 0)
		futex(&futex_word, FUTEX_WAIT, 0);
	return NULL;
}

static int do_ipc(void)
{
	pthread_t t;
	struct sembuf up = { .sem_num = 0, .sem_op = 1 };
	struct sembuf down = { .sem_num = 0, .sem_op = -1 };
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 1000000 };
	int id;

	if (pthread_create(&t, NULL, futex_waiter, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	usleep(20000);
	__atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
	futex(&futex_word, FUTEX_WAKE, 1);
	pthread_join(t, NULL);

	id = semget(IPC_PRIVATE, 1, 0600);
	if (id < 0) {
		perror("semget");
		return 1;
	}
	semop(id, &up, 1);
	semop(id, &down, 1);
	/* Nothing to take: times out after 1 ms. */
	semtimedop(id, &down, 1, &ts);
	semctl(id, 0, IPC_RMID);
	return 0;
}

static void do_huge(void)
{
	char *p, *raw, *a;
	pid_t c;

	p = mmap(NULL, HUGE_SZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED) {
		perror("kmix: MAP_HUGETLB");
	} else {
		p[0] = 1;
		c = fork();
		if (c == 0) {
			p[1] = 2;
			_exit(0);
		}
		if (c > 0)
			waitpid(c, NULL, 0);
		munmap(p, HUGE_SZ);
	}

	raw = mmap(NULL, 2 * HUGE_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		perror("kmix: mmap");
		return;
	}
	a = (char *)(((uintptr_t)raw + HUGE_SZ - 1) & ~(HUGE_SZ - 1));
	madvise(a, HUGE_SZ, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < HUGE_SZ; off += 4096)
		a[off] = 1;
	madvise(a, HUGE_SZ, MADV_HUGEPAGE);
	if (madvise(a, HUGE_SZ, MADV_COLLAPSE) != 0)
		perror("kmix: MADV_COLLAPSE");
	munmap(raw, 2 * HUGE_SZ);
}

/* Reads /proc/sys/net/ipv4/tcp_early_retrans into v (len bytes), or "". */
static void early_retrans(char *v, size_t len, const char *set)
{
	const char *path = "/proc/sys/net/ipv4/tcp_early_retrans";
	FILE *f = fopen(path, "r");

	v[0] = '\0';
	if (f) {
		if (!fgets(v, (int)len, f))
			v[0] = '\0';
		fclose(f);
	}
	f = fopen(path, "w");
	if (f) {
		fputs(set, f);
		fclose(f);
	}
}

static int do_retrans(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char buf[256] = "retransmit me";
	char old[16];
	int on = 1, off = 0, q = TCP_SEND_QUEUE;
	int l, c, s, rc = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(l, 1) < 0 || getsockname(l, (struct sockaddr *)&a, &len) < 0) {
		perror("kmix: listen");
		return 1;
	}
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("kmix: connect");
		return 1;
	}
	s = accept(l, NULL, NULL);
	/*
	 * No tail loss probe (it resends through __tcp_retransmit_skb and
	 * its ACK would leave the RTO nothing to do): the RTO timer's
	 * tcp_retransmit_skb sends the data.
	 */
	early_retrans(old, sizeof(old), "0");
	/* Queued as if sent: only the retransmission timer sends it. */
	if (setsockopt(c, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)) < 0 ||
	    setsockopt(c, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) < 0 ||
	    write(c, buf, sizeof(buf)) < 0 ||
	    setsockopt(c, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off)) < 0) {
		perror("kmix: TCP_REPAIR");
		rc = 1;
	}
	if (s >= 0) {
		struct timeval tv = { .tv_sec = 3 };

		/* The retransmission delivers it (or 3 s pass). */
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (read(s, buf, sizeof(buf)) < 0)
			perror("kmix: read");
		close(s);
	}
	if (old[0])
		early_retrans(buf, sizeof(buf), old);
	close(c);
	close(l);
	return rc;
}

static int do_aio(void)
{
	char path[] = "/tmp/kmix-aio-XXXXXX";
	static char data[4096] = "kmix aio";
	struct iocb w = { 0 }, r = { 0 };
	struct iocb *cbs[2] = { &w, &r };
	struct io_event ev[2];
	aio_context_t ctx = 0;
	int fd = mkstemp(path);
	long n = -1;

	if (fd < 0) {
		perror("kmix: mkstemp");
		return 1;
	}
	unlink(path);
	w.aio_fildes = r.aio_fildes = (__u32)fd;
	w.aio_lio_opcode = IOCB_CMD_PWRITE;
	r.aio_lio_opcode = IOCB_CMD_PREAD;
	w.aio_buf = r.aio_buf = (__u64)(uintptr_t)data;
	w.aio_nbytes = r.aio_nbytes = sizeof(data);
	if (syscall(SYS_io_setup, 4, &ctx) == 0) {
		n = syscall(SYS_io_submit, ctx, 2L, cbs);
		if (n > 0)
			syscall(SYS_io_getevents, ctx, n, n, ev, NULL);
		syscall(SYS_io_destroy, ctx);
	}
	close(fd);
	if (n != 2) {
		perror("kmix: io_submit");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "aio") == 0)
		return do_aio();
	if (argc == 2 && strcmp(argv[1], "ipc") == 0)
		return do_ipc();
	if (argc == 2 && strcmp(argv[1], "huge") == 0) {
		do_huge();
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "retrans") == 0)
		return do_retrans();
	fprintf(stderr, "usage: kmix ipc|huge|retrans|aio\n");
	return 2;
}
