// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * isa.c - the data tables of the stapvm ABI, expanded once from the
 * X-macros of vm-spec/include/stapvm: operand kinds of every opcode, the
 * contract of every helper, the names and errnos of verifier errors and the
 * messages of run-time errors, for the C core: verify.c checks programs
 * against them and returns their errnos, vm_str.c takes a caught error's
 * message from them. Rust does not read these arrays: vm-spec/build.rs
 * expands the same X-macros into its own tables (vm-spec/src/tables.rs).
 *
 * Left out: behaviour. This file has no code.
 * Context: data only, usable anywhere.
 */
#include "stp_core.h"

const struct stp_opcode_info stp_opcode_info[STP_OP__COUNT] =
	STP_OPCODE_INFO_INIT;

const struct stp_helper_info stp_helper_info[STP_HLP__COUNT] =
	STP_HELPER_INFO_INIT;

#define STP_X_VERR_INFO(name, err, msg) \
	[STP_VERR_##name] = { #name, err, msg },
const struct stp_verr_info stp_verr_info[STP_VERR__COUNT] = {
	STP_VERIFY_ERRORS(STP_X_VERR_INFO)
};
#undef STP_X_VERR_INFO

#define STP_X_RTE_INFO(name, msg) \
	[STP_RTE_##name] = { #name, msg },
const struct stp_rte_info stp_rte_info[STP_RTE__COUNT] = {
	STP_RUNTIME_ERRORS(STP_X_RTE_INFO)
};
#undef STP_X_RTE_INFO
