/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * host.c - test hooks of the user-space environment (csrc/stp_env.h):
 * allocation failure injection, so the tests can reach the verifier's
 * NO_MEMORY path.
 *
 * Left out: everything the kernel needs; this file is never built into
 * stapvm.ko.
 * Context: user space; the counter is per thread, so parallel tests do not
 * disturb each other.
 */
#include "stp_env.h"

_Thread_local u32 stp_host_failing_allocs;

void stp_host_fail_next_allocs(u32 n)
{
	stp_host_failing_allocs = n;
}
