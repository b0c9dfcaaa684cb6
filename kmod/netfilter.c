// SPDX-License-Identifier: GPL-2.0
/*
 * The netfilter hooks of a session (STP_PROBE_NETFILTER; abi.h: netfilter
 * hooks): one nf_hook_ops per probe, embedded in its struct stp_probe,
 * registered in the initial network namespace at START (other network
 * namespaces are not hooked) and unregistered at STOP, on a START that
 * fails later on, and when the session fd is closed (SIGKILL included),
 * all through stp_probes_disarm.
 *
 * The hook function hands the VM the hook's arguments as a tracepoint's
 * are handed (probes.c): a pt_regs whose argument registers hold the hook
 * number, the sk_buff, the input and output devices (NULL when the hook
 * has none) and okfn, so ARG 0..4 read them ($hooknum, $skb, $in, $out,
 * $okfn); it returns the verdict the handler left (VERDICT_SET: NF_DROP
 * or NF_ACCEPT only, vm.c) or NF_ACCEPT, stap's default, when the
 * handler did not run (session stopping, a nested hit skipped).
 *
 * Contexts: stp_nf_arm and stp_nf_disarm run in process context under the
 * session lock (nf_register_net_hook allocates and may sleep;
 * nf_unregister_net_hook waits with synchronize_net() for hook functions
 * in flight, so none of ours runs past it). The hook function runs where
 * the stack calls the hook: softirq (the receive path: PRE_ROUTING,
 * LOCAL_IN, FORWARD) or process context (a local sender's LOCAL_OUT and
 * POST_ROUTING), under rcu_read_lock; stp_probe_run_nf disables
 * preemption around the VM run. It never sleeps or allocates.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/netfilter.h>
#include <linux/skbuff.h>
#include <net/net_namespace.h>

#include "session.h"

static unsigned int stp_nf_hook(void *priv, struct sk_buff *skb,
				const struct nf_hook_state *state)
{
	struct stp_probe *p = priv;
	struct pt_regs regs = {
		.di = state->hook,
		.si = (unsigned long)skb,
		.dx = (unsigned long)state->in,
		.cx = (unsigned long)state->out,
		.r8 = (unsigned long)state->okfn,
	};
	s64 verdict = NF_ACCEPT;

	if (!READ_ONCE(p->sess->active))
		return NF_ACCEPT;
	stp_probe_run_nf(p, &regs, &verdict);
	/* VERDICT_SET admits nothing else (vm.c); again here */
	return verdict == NF_DROP ? NF_DROP : NF_ACCEPT;
}

/*
 * Registers p's hook: family, hook number and priority from the verified
 * descriptor (the verifier bounds the family and the hook).
 */
int stp_nf_arm(struct stp_probe *p)
{
	const struct stp_probe_desc *pd = &p->sess->prog.probes[p->index];

	memset(&p->nfo, 0, sizeof(p->nfo));
	p->nfo.hook = stp_nf_hook;
	p->nfo.priv = p;
	p->nfo.pf = pd->ev_type;
	p->nfo.hooknum = pd->ev_config;
	p->nfo.priority = pd->ev_pid;
	return nf_register_net_hook(&init_net, &p->nfo);
}

/* Unregisters p's hook; no call of stp_nf_hook for p runs after it. */
void stp_nf_disarm(struct stp_probe *p)
{
	nf_unregister_net_hook(&init_net, &p->nfo);
}
