// SPDX-License-Identifier: GPL-2.0
/*
 * netpair - loopback traffic with known sizes for the networking alias
 * cases (tests/cases/aliases-net*): every call is one the tcp.*, udp.*,
 * socket.* and *mib.* aliases probe.
 *
 * usage: netpair tcp PORT N   listen on 127.0.0.1:PORT, connect to it,
 *                             setsockopt TCP_NODELAY, write(2) N bytes and
 *                             send(2) N bytes, read them on the accepted
 *                             socket, connect(AF_UNSPEC) the client
 *                             (tcp_disconnect); also IPV6_V6ONLY on an
 *                             AF_INET6 socket (ipv6_setsockopt)
 *        netpair udp PORT N   bind 127.0.0.1:PORT, connect a sender to it,
 *                             send N bytes, recv them, connect(AF_UNSPEC)
 *                             the sender (udp_disconnect)
 *
 * Prints KEY=value lines for the harness's expectation variables:
 * TCP_CPORT / UDP_SPORT, the client's (sender's) local port.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char buf[65536];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static struct sockaddr_in lo_addr(int port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int local_port(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		die("getsockname");
	return ntohs(a.sin_port);
}

static void unconnect(int fd)
{
	struct sockaddr sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_family = AF_UNSPEC;
	if (connect(fd, &sa, sizeof(sa)) < 0)
		die("connect AF_UNSPEC");
}

static void read_all(int fd, long n)
{
	long got = 0, r;

	while (got < n) {
		r = read(fd, buf, sizeof(buf));
		if (r <= 0)
			die("read");
		got += r;
	}
}

static void tcp(int port, long n)
{
	struct sockaddr_in a = lo_addr(port);
	int one = 1, l, c, s, s6;

	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 4) < 0)
		die("bind/listen");
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect");
	if (setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		die("setsockopt");
	s = accept(l, NULL, NULL);
	if (s < 0)
		die("accept");
	printf("TCP_CPORT=%d\n", local_port(c));
	if (write(c, buf, n) != n || send(c, buf, n, 0) != n)
		die("write/send");
	read_all(s, 2 * n);
	unconnect(c);
	close(c);
	close(s);
	close(l);
	s6 = socket(AF_INET6, SOCK_STREAM, 0);
	if (s6 >= 0) {
		if (setsockopt(s6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
			die("setsockopt IPV6_V6ONLY");
		close(s6);
	}
}

static void udp(int port, long n)
{
	struct sockaddr_in a = lo_addr(port);
	int r, s;

	r = socket(AF_INET, SOCK_DGRAM, 0);
	if (r < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("udp bind");
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("udp connect");
	printf("UDP_SPORT=%d\n", local_port(s));
	if (send(s, buf, n, 0) != n)
		die("udp send");
	if (recv(r, buf, sizeof(buf), 0) != n)
		die("udp recv");
	unconnect(s);
	close(s);
	close(r);
}

int main(int argc, char **argv)
{
	long n;
	int port;

	if (argc != 4)
		return 2;
	port = atoi(argv[2]);
	n = strtol(argv[3], NULL, 10);
	if (n <= 0 || n > (long)sizeof(buf))
		return 2;
	if (!strcmp(argv[1], "tcp"))
		tcp(port, n);
	else if (!strcmp(argv[1], "udp"))
		udp(port, n);
	else
		return 2;
	return 0;
}
