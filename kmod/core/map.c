// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * map.c - stapvm's associative arrays: fixed-capacity hash maps over
 * storage the caller allocates once (at LOAD), used by vm.c's map
 * instructions under the map's lock, and the foreach iterators' fill and
 * sort.
 *
 * Layout (stp_core.h draws it): a header, nbuckets hash-chain heads (a
 * power of two >= capacity), then capacity entries of ent_size bytes.
 * Chained hashing with a free list: no tombstones, and every chain holds
 * at most count <= capacity entries, so every walk here is bounded by the
 * capacity (each loop says so). Entries are also on a doubly linked
 * insertion-order list: a wrap map evicts its head, unsorted foreach and
 * sort ties follow it.
 *
 * Left out: locking (vm.c takes the lock around every call that reads or
 * changes a map, the glue around stp_map_read), allocation (the glue).
 *
 * Context: any, except stp_map_init (process context, before any run).
 */
#include "stp_core.h"

#include "map_int.h"
#include "util.h"

static u32 pow2_at_least(u32 n)
{
	u32 p = 1;

	while (p < n)		/* at most 32 iterations */
		p <<= 1;
	return p;
}

static u32 hdr_size(void)
{
	return stp_round8(sizeof(struct stp_map));
}

/* Entry layout of map d: value, long keys, string keys (offsets). */
static void layout(const struct stp_map_desc *d, u32 maxstr, u32 *str_slot,
		   u32 *val_off, u32 *lkey_off, u32 *skey_off, u32 *ent_size)
{
	u32 nstr = stp_popcount(d->key_str_mask);
	u32 nlong = d->nkeys - nstr;
	u32 slot = stp_round8(4 + maxstr);
	u32 off = stp_round8(sizeof(struct stp_map_ent));

	*str_slot = slot;
	*val_off = off;
	off += d->value == STP_MAPV_STR ? slot : 8;
	*lkey_off = off;
	off += 8 * nlong;
	*skey_off = off;
	off += slot * nstr;
	*ent_size = off;
}

u64 stp_map_size(const struct stp_map_desc *d, u32 maxstr)
{
	u32 slot, vo, lo, so, es;

	layout(d, maxstr, &slot, &vo, &lo, &so, &es);
	return hdr_size() +
	       stp_round8(4 * pow2_at_least(d->capacity)) +
	       (u64)d->capacity * es;
}

void stp_map_init(struct stp_map *m, const struct stp_map_desc *d,
		  u32 maxstr)
{
	u32 i;

	stp_env_map_lock_init(&m->lock);
	m->nkeys = d->nkeys;
	m->str_mask = d->key_str_mask;
	m->nstr = stp_popcount(d->key_str_mask);
	m->nlong = d->nkeys - m->nstr;
	m->value = d->value;
	m->flags = d->flags;
	m->capacity = d->capacity;
	m->nbuckets = pow2_at_least(d->capacity);
	m->str_cap = maxstr;
	layout(d, maxstr, &m->str_slot, &m->val_off, &m->lkey_off,
	       &m->skey_off, &m->ent_size);
	m->buckets = (u32 *)((u8 *)m + hdr_size());
	m->ents = (u8 *)m->buckets + stp_round8(4 * m->nbuckets);
	memset(m->buckets, 0xff, 4ull * m->nbuckets);
	m->count = 0;
	m->seq = 0;
	m->head = STP_MAP_NIL;
	m->tail = STP_MAP_NIL;
	m->free_head = 0;
	for (i = 0; i < m->capacity; i++)	/* capacity entries */
		ENT(m, i)->hnext = i + 1 < m->capacity ? i + 1 : STP_MAP_NIL;
}

/* FNV-1a over the long keys, then each string key's length and bytes. */
static u32 key_hash(const struct stp_map *m, const struct stp_map_key *k)
{
	const u8 *p = (const u8 *)k->lk;
	u32 h = 2166136261u, i, j;

	for (i = 0; i < 8 * m->nlong; i++)	/* <= 72 bytes */
		h = (h ^ p[i]) * 16777619u;
	for (i = 0; i < m->nstr; i++) {		/* <= 9 strings */
		h = (h ^ k->sl[i]) * 16777619u;
		for (j = 0; j < k->sl[i]; j++)	/* <= str_cap bytes */
			h = (h ^ (u8)k->sk[i][j]) * 16777619u;
	}
	return h;
}

static bool key_equal(const struct stp_map *m, const u8 *e,
		      const struct stp_map_key *k)
{
	u32 i;

	if (m->nlong && memcmp(e + m->lkey_off, k->lk, 8ull * m->nlong))
		return false;
	for (i = 0; i < m->nstr; i++) {		/* <= 9 strings */
		const u8 *s = e + m->skey_off + (u64)i * m->str_slot;
		u32 len;

		memcpy(&len, s, 4);
		if (len != k->sl[i] || memcmp(s + 4, k->sk[i], len))
			return false;
	}
	return true;
}

/* Finds key k: its slot, and the slot before it on its chain. */
static u32 find(const struct stp_map *m, const struct stp_map_key *k,
		u32 h, u32 *prev)
{
	u32 i = m->buckets[h & (m->nbuckets - 1)], n;

	*prev = STP_MAP_NIL;
	for (n = 0; i < m->capacity && n < m->capacity; n++) {
		if (key_equal(m, ENTB(m, i), k))
			return i;
		*prev = i;
		i = ENT(m, i)->hnext;
	}
	return STP_MAP_NIL;
}

u8 *stp_map_lookup(struct stp_map *m, const struct stp_map_key *k)
{
	u32 prev, i = find(m, k, key_hash(m, k), &prev);

	return i == STP_MAP_NIL ? NULL : ENTB(m, i);
}

/* Unlinks used slot i (whose chain predecessor is prev) and frees it. */
static void remove_slot(struct stp_map *m, u32 i, u32 prev, u32 h)
{
	struct stp_map_ent *e = ENT(m, i);

	if (prev == STP_MAP_NIL)
		m->buckets[h & (m->nbuckets - 1)] = e->hnext;
	else
		ENT(m, prev)->hnext = e->hnext;
	if (e->prev == STP_MAP_NIL)
		m->head = e->next;
	else
		ENT(m, e->prev)->next = e->next;
	if (e->next == STP_MAP_NIL)
		m->tail = e->prev;
	else
		ENT(m, e->next)->prev = e->prev;
	e->used = 0;
	e->seq = 0;
	e->hnext = m->free_head;
	m->free_head = i;
	m->count--;
}

/* The hash of the entry in slot i, recomputed from its stored keys. */
static u32 slot_hash(const struct stp_map *m, u32 i)
{
	const u8 *e = ENTB(m, i);
	struct stp_map_key k;
	u32 j;

	k.lk = (const u64 *)(e + m->lkey_off);
	for (j = 0; j < m->nstr; j++) {		/* <= 9 strings */
		const u8 *s = e + m->skey_off + (u64)j * m->str_slot;

		memcpy(&k.sl[j], s, 4);
		k.sk[j] = (const char *)s + 4;
	}
	return key_hash(m, &k);
}

/* Removes used slot i, finding its chain predecessor. */
static void evict(struct stp_map *m, u32 i)
{
	u32 h = slot_hash(m, i);
	u32 j = m->buckets[h & (m->nbuckets - 1)], prev = STP_MAP_NIL, n;

	for (n = 0; j < m->capacity && n < m->capacity; n++) {
		if (j == i) {
			remove_slot(m, i, prev, h);
			return;
		}
		prev = j;
		j = ENT(m, j)->hnext;
	}
}

u8 *stp_map_insert(struct stp_map *m, const struct stp_map_key *k)
{
	u32 h = key_hash(m, k), prev, i, j;
	struct stp_map_ent *e;
	u8 *b;

	i = find(m, k, h, &prev);
	if (i != STP_MAP_NIL)
		return ENTB(m, i);
	if (m->count >= m->capacity) {
		if (!(m->flags & STP_MAP_F_WRAP) || m->head >= m->capacity)
			return NULL;
		evict(m, m->head);
	}
	i = m->free_head;
	if (i >= m->capacity)
		return NULL;	/* cannot happen: count < capacity */
	e = ENT(m, i);
	b = ENTB(m, i);
	m->free_head = e->hnext;
	e->hnext = m->buckets[h & (m->nbuckets - 1)];
	m->buckets[h & (m->nbuckets - 1)] = i;
	e->prev = m->tail;
	e->next = STP_MAP_NIL;
	if (m->tail == STP_MAP_NIL)
		m->head = i;
	else
		ENT(m, m->tail)->next = i;
	m->tail = i;
	e->used = 1;
	e->seq = ++m->seq;
	m->count++;
	memset(b + m->val_off, 0, m->lkey_off - m->val_off);
	if (m->nlong)
		memcpy(b + m->lkey_off, k->lk, 8ull * m->nlong);
	for (j = 0; j < m->nstr; j++) {		/* <= 9 strings */
		u8 *s = b + m->skey_off + (u64)j * m->str_slot;

		memcpy(s, &k->sl[j], 4);
		memcpy(s + 4, k->sk[j], k->sl[j]);
	}
	return b;
}

void stp_map_delete(struct stp_map *m, const struct stp_map_key *k)
{
	u32 h = key_hash(m, k), prev, i = find(m, k, h, &prev);

	if (i != STP_MAP_NIL)
		remove_slot(m, i, prev, h);
}

void stp_map_clear(struct stp_map *m)
{
	u32 i = m->head, n;

	for (n = 0; i < m->capacity && n < m->capacity; n++) {
		struct stp_map_ent *e = ENT(m, i);
		u32 next = e->next;

		e->used = 0;
		e->seq = 0;
		e->hnext = m->free_head;
		m->free_head = i;
		i = next;
	}
	memset(m->buckets, 0xff, 4ull * m->nbuckets);
	m->head = STP_MAP_NIL;
	m->tail = STP_MAP_NIL;
	m->count = 0;
}

/* ------------------------------------------------------------------ */
/* foreach                                                             */

/* Compares two byte strings as SCMP does: -1, 0, 1. */
static int str_cmp(const u8 *x, u32 lx, const u8 *y, u32 ly)
{
	u32 n = lx < ly ? lx : ly, i;

	for (i = 0; i < n; i++)		/* <= str_cap */
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return lx == ly ? 0 : lx < ly ? -1 : 1;
}

/*
 * Compares two used entries of an iterator by the column sort names, or
 * with an extractor order (sort bits 4..6) by the keys the caller stored
 * in the iterator; ties by insertion order.
 */
static int ent_cmp(const struct stp_map *m, const struct stp_iter_ent *xa,
		   const struct stp_iter_ent *xb, u32 sort)
{
	u32 a = xa->slot, b = xb->slot;
	const u8 *ea = ENTB(m, a), *eb = ENTB(m, b);
	u32 col = sort & 15, off;
	bool is_str;
	int c = 0;

	if (sort & 0x70) {
		c = xa->key < xb->key ? -1 : xa->key > xb->key;
		goto order;
	}
	if (col == 15) {
		off = m->val_off;
		is_str = m->value == STP_MAPV_STR;
	} else {
		u32 k = col - 1;	/* verify.c: col <= nkeys */
		u32 below = m->str_mask & ((1u << k) - 1);

		is_str = m->str_mask & (1u << k);
		if (is_str)
			off = m->skey_off + stp_popcount(below) * m->str_slot;
		else
			off = m->lkey_off + 8 * (k - stp_popcount(below));
	}
	if (is_str) {
		u32 la, lb;

		memcpy(&la, ea + off, 4);
		memcpy(&lb, eb + off, 4);
		c = str_cmp(ea + off + 4, la, eb + off + 4, lb);
	} else {
		s64 va, vb;

		memcpy(&va, ea + off, 8);
		memcpy(&vb, eb + off, 8);
		c = va < vb ? -1 : va > vb;
	}
order:
	if (sort & 0x80)
		c = -c;
	if (!c) {
		u64 sa = ENT(m, a)->seq, sb = ENT(m, b)->seq;

		c = sa < sb ? -1 : sa > sb;
	}
	return c;
}

static void sift_down(const struct stp_map *m, struct stp_iter_ent *x,
		      u32 root, u32 n, u32 sort)
{
	u32 i;

	for (i = 0; i < 64 && 2 * root + 1 < n; i++) {	/* depth <= 32 */
		u32 child = 2 * root + 1;
		struct stp_iter_ent t;

		if (child + 1 < n &&
		    ent_cmp(m, &x[child], &x[child + 1], sort) < 0)
			child++;
		if (ent_cmp(m, &x[root], &x[child], sort) >= 0)
			return;
		t = x[root];
		x[root] = x[child];
		x[child] = t;
		root = child;
	}
}

/* Heapsort of x[0..n) by ent_cmp: O(n log n), no recursion. */
static void heapsort(const struct stp_map *m, struct stp_iter_ent *x, u32 n,
		     u32 sort)
{
	u32 i;

	if (n < 2)
		return;
	for (i = n / 2; i-- > 0;)		/* n / 2 iterations */
		sift_down(m, x, i, n, sort);
	for (i = n - 1; i > 0; i--) {		/* n - 1 iterations */
		struct stp_iter_ent t = x[0];

		x[0] = x[i];
		x[i] = t;
		sift_down(m, x, 0, i, sort);
	}
}

void stp_map_iter_fill(const struct stp_map *m, struct stp_iter *it,
		       u32 map, u32 sort, s64 limit, u32 iter_cap)
{
	u32 i = m->head, n = 0, k;

	for (k = 0; i < m->capacity && k < m->capacity && n < iter_cap; k++) {
		it->idx[n].slot = i;
		it->idx[n].gen = (u32)ENT(m, i)->seq;
		n++;
		i = ENT(m, i)->next;
	}
	if (sort)
		heapsort(m, it->idx, n, sort);
	it->map = map;
	it->pos = 0;
	it->count = limit < 0 ? 0 : limit < n ? (u32)limit : n;
}

void stp_map_iter_sort(const struct stp_map *m, struct stp_iter *it,
		       u32 sort, s64 limit)
{
	heapsort(m, it->idx, it->count, sort);
	if (limit < it->count)
		it->count = limit < 0 ? 0 : (u32)limit;
}

u8 *stp_map_iter_next(const struct stp_map *m, struct stp_iter *it)
{
	while (it->pos < it->count) {	/* count <= iter_cap, pos grows */
		const struct stp_iter_ent *x = &it->idx[it->pos++];
		struct stp_map_ent *e;

		if (x->slot >= m->capacity)
			continue;
		e = ENT(m, x->slot);
		if (e->used && (u32)e->seq == x->gen)
			return ENTB(m, x->slot);
	}
	return NULL;
}

struct stp_iter *stp_iters_init(void *mem, u32 niters, u32 iter_cap)
{
	struct stp_iter *it = mem;
	struct stp_iter_ent *idx = (struct stp_iter_ent *)(it + niters);
	u32 i;

	for (i = 0; i < niters; i++) {		/* <= STP_MAX_ITERS */
		it[i].map = STP_MAP_NIL;
		it[i].count = 0;
		it[i].pos = 0;
		it[i].idx = idx + (u64)i * iter_cap;
	}
	return it;
}

/* ------------------------------------------------------------------ */
/* MAP_READ                                                            */

/* Appends a stored string (u32 length, bytes) padded to 8. */
static u8 *put_str(u8 *p, const u8 *s, u32 cap)
{
	u32 len;

	memcpy(&len, s, 4);
	if (len > cap)
		len = cap;
	memcpy(p, &len, 4);
	memcpy(p + 4, s + 4, len);
	memset(p + 4 + len, 0, stp_round8(4 + len) - 4 - len);
	return p + stp_round8(4 + len);
}

static u32 str_rec_len(const u8 *s, u32 cap)
{
	u32 len;

	memcpy(&len, s, 4);
	return stp_round8(4 + (len > cap ? cap : len));
}

int stp_map_read(const struct stp_map *m, u32 *cursor, u8 *out, u32 size,
		 u32 *used)
{
	u32 i = *cursor, n = 0, pos = 0, k;

	for (; i < m->capacity; i++) {		/* capacity slots */
		const u8 *e = ENTB(m, i);
		struct stp_map_rec rec = { 0 };
		u32 len = sizeof(rec), li = 0, si = 0;
		u8 *p;

		if (!ENT(m, i)->used)
			continue;
		for (k = 0; k < m->nkeys; k++) {	/* <= 9 keys */
			if (m->str_mask & (1u << k))
				len += str_rec_len(e + m->skey_off +
						   (u64)si++ * m->str_slot,
						   m->str_cap);
			else
				len += 8, li++;
		}
		len += m->value == STP_MAPV_STR ?
		       str_rec_len(e + m->val_off, m->str_cap) : 8;
		if (len > size - pos) {
			if (!n) {
				*cursor = i;
				return -E2BIG;
			}
			break;
		}
		p = out + pos;
		rec.len = len;
		rec.seq = ENT(m, i)->seq;
		memcpy(p, &rec, sizeof(rec));
		p += sizeof(rec);
		li = 0;
		si = 0;
		for (k = 0; k < m->nkeys; k++) {	/* <= 9 keys */
			if (m->str_mask & (1u << k)) {
				p = put_str(p, e + m->skey_off +
					    (u64)si++ * m->str_slot,
					    m->str_cap);
			} else {
				memcpy(p, e + m->lkey_off + 8ull * li++, 8);
				p += 8;
			}
		}
		if (m->value == STP_MAPV_STR) {
			p = put_str(p, e + m->val_off, m->str_cap);
		} else {
			memcpy(p, e + m->val_off, 8);
			p += 8;
		}
		pos += len;
		n++;
	}
	*cursor = i >= m->capacity ? STP_MAP_READ_END : i;
	*used = pos;
	return (int)n;
}
