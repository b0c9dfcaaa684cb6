// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vm_stat.c - the statistics' read side for the interpreter: merging the
 * per-CPU copies of a statistic (stap's _stp_stat_get), the scalar
 * extractors (@count .. @variance) and the merged histogram buckets, for
 * STCOUNT .. STVAR, STHIST, STHISTS, STBKT, MSTX, MSTHIST, MSTHISTS,
 * MSTBKT and MITER's extractor orders. opcodes.h defines the arithmetic.
 *
 * The write side (STADD, MSTADD: stat_add) is static inline in vm_int.h,
 * on the per-hit path.
 *
 * Copies being written on another CPU are read field by field, each once
 * (STP_READ_ONCE), without a lock, as stap does; a copy may be seen half
 * updated.
 *
 * Context: any, called from stp_run(); each loop visits the CPU ids of
 * the area (ncpus) once.
 */
#include "vm_int.h"

void stp_stat_merge(const struct stp_stat_area *a,
		    const struct stp_stat_desc *d, u32 slot, bool variance,
		    struct stat_merged *m)
{
	s64 avg_s, s1 = 0, s2 = 0, last_c = 0, last_var = 0;
	u32 i, ncopies = 0;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < a->ncpus; i++) {	/* CPU ids */
		const struct stp_stat_cpu *sc = stat_at(a, d, i, slot);
		s64 c = STP_READ_ONCE(sc->count);
		s64 mn = STP_READ_ONCE(sc->min), mx = STP_READ_ONCE(sc->max);

		if (c <= 0)
			continue;
		if (!m->count) {
			m->min = mn;
			m->max = mx;
		}
		m->count += c;
		m->sum = (s64)((u64)m->sum + (u64)STP_READ_ONCE(sc->sum));
		if (mx > m->max)
			m->max = mx;
		if (mn < m->min)
			m->min = mn;
	}
	if (!variance || m->count <= 0)
		return;
	avg_s = div64((s64)((u64)m->sum << d->shift), m->count);
	for (i = 0; i < a->ncpus; i++) {	/* CPU ids */
		const struct stp_stat_cpu *sc = stat_at(a, d, i, slot);
		s64 c = STP_READ_ONCE(sc->count);
		u64 dev = (u64)STP_READ_ONCE(sc->avg_s) - (u64)avg_s;

		if (c <= 0)
			continue;
		s1 = (s64)((u64)s1 + (u64)c * dev * dev);
		s2 = (s64)((u64)s2 + (u64)(c - 1) *
			   (u64)STP_READ_ONCE(sc->variance_s));
		ncopies++;
		last_c = c;
		last_var = STP_READ_ONCE(sc->variance_s);
	}
	m->variance = div64((s64)((u64)s1 + (u64)s2), m->count - 1) >>
		      ((2 * d->shift) & 63);
	/*
	 * A statistics array is a stap pmap: its aggregation copies the
	 * first CPU's node whole, so one CPU's samples give that CPU's
	 * Welford variance unmerged (runok maps/ix.exp).
	 */
	if ((d->flags & STP_STAT_F_ARRAY) && ncopies == 1)
		m->variance = (last_c > 1 ? last_var : 0) >>
			      ((2 * d->shift) & 63);
}

bool stp_stat_extract(const struct stat_merged *m, u32 x, u64 *v)
{
	if (x == STP_OP_STCOUNT || x == STP_OP_STSUM) {
		*v = (u64)(x == STP_OP_STCOUNT ? m->count : m->sum);
		return true;
	}
	if (m->count <= 0)
		return false;
	if (x == STP_OP_STMIN)
		*v = (u64)m->min;
	else if (x == STP_OP_STMAX)
		*v = (u64)m->max;
	else if (x == STP_OP_STAVG)
		*v = (u64)div64(m->sum, m->count);
	else
		*v = (u64)m->variance;
	return true;
}

bool stp_stat_empty(const struct stp_stat_area *a,
		    const struct stp_stat_desc *d, u32 slot,
		    struct stat_merged *m)
{
	stp_stat_merge(a, d, slot, false, m);
	return m->count <= 0;
}

s64 stp_stat_bucket(const struct stp_stat_area *a,
		    const struct stp_stat_desc *d, u32 slot, u32 b)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < a->ncpus; i++) {	/* CPU ids */
		const s64 *bk = (const s64 *)(stat_at(a, d, i, slot) + 1);

		sum += (u64)STP_READ_ONCE(bk[b]);
	}
	return (s64)sum;
}

s64 stp_hist_ctx_bucket(const void *ctx, u32 i)
{
	const struct hist_ctx *h = ctx;

	return stp_stat_bucket(h->a, h->d, h->slot, i);	/* i < d->nbuckets */
}
