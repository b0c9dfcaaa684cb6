/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * map_int.h - what vm.c uses of map.c: entry access and the operations
 * done under a map's lock. Internal to the core (stp_core.h has the
 * public part: sizes, setup, MAP_READ, iterators' memory).
 */
#ifndef STP_MAP_INT_H
#define STP_MAP_INT_H

#include "stp_core.h"

/* Entry i of map m, as its header and as bytes (i < capacity). */
#define ENTB(m, i)	((m)->ents + (u64)(i) * (m)->ent_size)
#define ENT(m, i)	((struct stp_map_ent *)ENTB(m, i))

/* The entry holding key k, or NULL. */
u8 *stp_map_lookup(struct stp_map *m, const struct stp_map_key *k);

/*
 * The entry holding key k, inserted (value 0 / "") when absent; a wrap
 * map full evicts its oldest entry first. NULL when the map is full.
 */
u8 *stp_map_insert(struct stp_map *m, const struct stp_map_key *k);

/* Deletes key k if present. */
void stp_map_delete(struct stp_map *m, const struct stp_map_key *k);

/* Deletes every entry: O(count + nbuckets). */
void stp_map_clear(struct stp_map *m);

/*
 * Fills iterator it with map m's entries (at most iter_cap, m->capacity
 * <= iter_cap by the verifier), sorted as sort says (opcodes.h: SORT),
 * keeping max(limit, 0) of them.
 */
void stp_map_iter_fill(const struct stp_map *m, struct stp_iter *it,
		       u32 map, u32 sort, s64 limit, u32 iter_cap);

/*
 * Sorts the it->count entries of a filled iterator by the keys the caller
 * stored in it->idx[].key (sort: an extractor order, bits 4..6 set; bit 7
 * descending; ties by insertion order), then keeps max(limit, 0) of them.
 */
void stp_map_iter_sort(const struct stp_map *m, struct stp_iter *it,
		       u32 sort, s64 limit);

/* The next entry of it still in m, or NULL when exhausted. */
u8 *stp_map_iter_next(const struct stp_map *m, struct stp_iter *it);

#endif /* STP_MAP_INT_H */
