/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lockdown check of LOAD (lockdown.c). Context: process context.
 */
#ifndef STAPVM_LOCKDOWN_H
#define STAPVM_LOCKDOWN_H

#include "core/stp_core.h"

/*
 * stp_lockdown_check - refuse a verified program that the kernel's
 * lockdown forbids: one that reads kernel memory, in confidentiality mode.
 * @prog: the verified program.
 * @res: filled with the message (code STP_VERR_OK: not a verifier error,
 *       where: the instruction) when refused.
 * Return: 0, or the -errno of security_locked_down() (-EPERM).
 */
int stp_lockdown_check(const struct stp_prog *prog,
		       struct stp_verify_result *res);

#endif /* STAPVM_LOCKDOWN_H */
