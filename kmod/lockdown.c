// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's lockdown policy applied to a verified program at LOAD,
 * before a session exists (so nothing is allocated or armed for a program
 * lockdown forbids).
 *
 * stapvm follows what the kernel decides for BPF tracing programs: in
 * confidentiality mode no kernel memory may be read at an address a
 * program chooses (the KERNEL_* helpers, PRETTY: helpers.h
 * STP_HELPERS_READ_KERNEL, opcodes.h STP_OPS_READ_KERNEL), so such a
 * program is refused with the answer of security_locked_down() (-EPERM,
 * and the lockdown LSM's own line in the kernel log); registers, probe
 * arguments, tracepoint fields and user memory stay readable, as they do
 * for BPF. Integrity mode forbids none of this: a signed stapvm.ko loads
 * and works there.
 *
 * Context: process context (the LOAD ioctl).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/security.h>

#include "compat.h"
#include "lockdown.h"

/* The first instruction at or after *pc that reads kernel memory. */
static bool stp_reads_kernel(const struct stp_prog *prog, u32 *pc,
			     const char **what)
{
	for (; *pc < prog->ninsns; (*pc)++) {
		const struct stp_insn *in = &prog->code[*pc];

		switch (in->op) {
#define STP_X_OP_CASE(name) case STP_OP_##name:
		STP_OPS_READ_KERNEL(STP_X_OP_CASE)
#undef STP_X_OP_CASE
			*what = stp_opcode_info[in->op].name;
			return true;
		case STP_OP_CALLI:
		case STP_OP_CALLS:
			switch (in->imm) {
#define STP_X_HLP_CASE(name) case STP_HLP_##name:
			STP_HELPERS_READ_KERNEL(STP_X_HLP_CASE)
#undef STP_X_HLP_CASE
				*what = stp_helper_info[in->imm].name;
				return true;
			}
			break;
		}
	}
	return false;
}

int stp_lockdown_check(const struct stp_prog *prog,
		       struct stp_verify_result *res)
{
	const char *what = "";
	u32 pc = 0, h;
	int err;

	if (!stp_reads_kernel(prog, &pc, &what))
		return 0;
	err = security_locked_down(STP_LOCKDOWN_READ_KERNEL);
	if (!err)
		return 0;
	for (h = 0; h < prog->nhandlers; h++)
		if (pc - prog->handlers[h].insn_off <
		    prog->handlers[h].insn_count)
			break;
	res->code = STP_VERR_OK;
	res->where = pc;
	snprintf(res->msg, sizeof(res->msg),
		 "the kernel is locked down (confidentiality): the program reads kernel memory (handler %u, insn %u: %s), which lockdown forbids; see kernel_lockdown(7)",
		 h, pc, what);
	return err;
}
