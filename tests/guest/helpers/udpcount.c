// SPDX-License-Identifier: GPL-2.0
/*
 * udpcount - a known number of loopback UDP datagrams, counted at both
 * ends, for the netfilter cases (tests/cases/netfilter-*).
 *
 * usage: udpcount PORT N MS   bind a receiver to 127.0.0.1:PORT, send N
 *                             datagrams of 32 bytes to it from another
 *                             socket, then receive until MS milliseconds
 *                             pass without a datagram
 *
 * Prints UDP_SENT=N (the sends that succeeded) and UDP_RECEIVED=M (the
 * datagrams the receiver got), KEY=value lines for the harness's
 * expectation variables. Exits 1 on a setup error.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv;
	char buf[64];
	int rx, tx, n, ms, i, sent = 0, got = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: udpcount PORT N MS\n");
		return 1;
	}
	a.sin_port = htons((unsigned short)atoi(argv[1]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	n = atoi(argv[2]);
	ms = atoi(argv[3]);
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&a, sizeof(a))) {
		perror("udpcount: socket/bind");
		return 1;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	if (setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("udpcount: SO_RCVTIMEO");
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < n; i++)
		if (sendto(tx, buf, 32, 0, (struct sockaddr *)&a,
			   sizeof(a)) == 32)
			sent++;
	/* bounded: every wait ends within MS, and at most n + 1 of them */
	for (i = 0; i <= n; i++) {
		if (recv(rx, buf, sizeof(buf), 0) < 0)
			break;
		got++;
	}
	printf("UDP_SENT=%d\nUDP_RECEIVED=%d\n", sent, got);
	return 0;
}
