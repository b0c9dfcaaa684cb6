// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ring.c - the producer side of one per-CPU record ring (BPF-ringbuf
 * layout, abi.h draws the mapping): reserve room for a record, then commit
 * it by moving producer_pos.
 *
 * One producer per ring by contract: the caller holds the per-CPU nesting
 * guard, so reserve and commit need no lock and no atomic read-modify-
 * write; producer_pos is written only here, with a store-release that
 * publishes the record's bytes. Between reserve and commit nothing else
 * may reserve on the same ring.
 *
 * consumer_pos is written by user space and never trusted: it is read once
 * per reservation, and any value outside [producer_pos - size, producer_pos]
 * makes the ring count as full, so a hostile value can only make us drop
 * records, never write outside data[0, 2 * size).
 *
 * Left out: allocation, the double mapping, the consumer, the wakeup
 * mechanism (stp_env_ring_wakeup).
 * Context: any (probe context included); no allocation, no loops.
 */
#include "stp_core.h"

static void stp_ring_drop(struct stp_ring *r)
{
	/* Single producer: a plain increment; user space only reads it. */
	STP_WRITE_ONCE(r->prod->dropped, r->prod->dropped + 1);
}

void *stp_ring_reserve(struct stp_ring *r, u32 len)
{
	u64 prod = r->prod->producer_pos;	/* written only by us */
	u64 cons;

	/* pairs with the consumer's store-release of consumer_pos */
	cons = stp_load_acquire_u64(&r->cons->consumer_pos);
	if (!len || len % 8 || len > r->size || cons > prod ||
	    prod - cons > r->size || prod - cons + len > r->size) {
		stp_ring_drop(r);
		return NULL;
	}
	/* len <= size and data is mapped twice: the record never wraps. */
	return r->data + (prod & (r->size - 1));
}

void stp_ring_commit(struct stp_ring *r, void *rec, u32 len)
{
	u64 prod = r->prod->producer_pos;

	(void)rec;	/* always at prod: single producer */
	/* pairs with the consumer's load-acquire of producer_pos */
	stp_store_release_u64(&r->prod->producer_pos, prod + len);
	/*
	 * Wake the consumer only if it had read everything before this
	 * record; otherwise it is still draining and will see this one too.
	 * Both sides store their position, then load the other's: we store
	 * producer_pos and load consumer_pos; the consumer stores
	 * consumer_pos and then, deciding to sleep, loads producer_pos (in
	 * the kernel that check is the session's poll, stp_session_poll in
	 * kmod/session.c, after the consumer's poll() call). A release store
	 * may pass a later load, so without a full barrier on each side we
	 * could read a stale consumer_pos (skip the wakeup) while the
	 * consumer, caught up, reads the old producer_pos and sleeps. This
	 * barrier pairs with the smp_mb() in stp_session_poll, between the
	 * consumer's store and its load: at least one side sees the other.
	 */
	stp_env_mb();
	if (stp_load_acquire_u64(&r->cons->consumer_pos) == prod)
		stp_env_ring_wakeup(r);
}
