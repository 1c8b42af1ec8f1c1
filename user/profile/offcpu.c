// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Off-CPU stacks waiting for their END record (see offcpu.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "capture/sample.h"
#include "profile/offcpu.h"
#include "profile/profile.h"
#include "profile/queue.h"
#include "trace.h"

/* what an END says of every switch-out of its thread; a failed put only
 * leaves the thread's stacks as sampled */
static void exact_add(struct offcpu *o, uint32_t tid, uint64_t ns,
		      uint64_t n)
{
	if (!tid || !ns || !n)
		return;
	(void)u64map__put(&o->exact_ns, tid,
			  u64map__get(&o->exact_ns, tid) + ns);
	(void)u64map__put(&o->exact_n, tid, u64map__get(&o->exact_n, tid) + n);
}

int offcpu__hold(struct offcpu *o, struct queue *qu, struct queued *q,
		 uint64_t now_ns)
{
	uint32_t tid = queued__hdr(q)->tid;
	uint64_t old = u64map__get(&o->pending, tid);

	if (u64map__put(&o->pending, tid, (uint64_t)(uintptr_t)q))
		return -ENOMEM;
	if (old > 1) {	/* its END was lost: count it, no time */
		o->no_end++;
		queue__push(qu, (struct queued *)(uintptr_t)old, now_ns);
	}
	return 0;
}

struct queued *offcpu__end(struct offcpu *o, struct queue *qu,
			   const struct asgst_sample_hdr *e, uint64_t now_ns)
{
	uint64_t v = u64map__get(&o->pending, e->tid);
	struct queued *q = (struct queued *)(uintptr_t)v;

	if (e->version >= 4)
		exact_add(o, e->tid, e->ev_weight, e->ev_size);
	if (v <= 1 || queued__hdr(q)->ktime_ns != e->ktime_ns) {
		o->stray_end++;	/* its stack was lost */
		return NULL;
	}
	u64map__put(&o->pending, e->tid, 1);
	queued__hdr(q)->weight_ns = e->weight_ns;
	if (queued__hdr(q)->version >= 4 &&
	    ASGST_SF_EVERY(queued__hdr(q)->flags) > 1)
		(void)u64map__put(&o->sampled, e->tid, 1);
	queue__push(qu, q, now_ns);
	return q;
}

void offcpu__flush(struct offcpu *o, struct queue *qu, uint64_t end_ns,
		   uint64_t now_ns)
{
	struct u64map *m = &o->pending;

	for (size_t i = 0; i < m->cap; i++) {
		struct queued *q = (struct queued *)(uintptr_t)m->vals[i];
		struct asgst_sample_hdr *h;

		if (m->vals[i] <= 1)
			continue;
		m->vals[i] = 1;
		h = queued__hdr(q);
		h->weight_ns = end_ns > h->ktime_ns ? end_ns - h->ktime_ns : 0;
		/* a sampled wait still going on: its own time, once */
		if (h->version >= 4 && u64map__get(&o->exact_ns, h->tid))
			exact_add(o, h->tid, h->weight_ns, 1);
		if (h->version >= 4 && ASGST_SF_EVERY(h->flags) > 1)
			(void)u64map__put(&o->sampled, h->tid, 1);
		queue__push(qu, q, now_ns);
	}
}

void offcpu__weigh(const struct asgst_sample_hdr *h, uint64_t *count,
		   uint64_t *weight_ns)
{
	uint64_t n = h->version >= 4 ? ASGST_SF_EVERY(h->flags) : 0;

	if (!n)
		n = 1;
	*count = n;
	*weight_ns = h->weight_ns > UINT64_MAX / n ? UINT64_MAX :
		     h->weight_ns * n;
}

void offcpu__free(struct offcpu *o)
{
	for (size_t i = 0; i < o->pending.cap; i++)
		if (o->pending.vals[i] > 1)
			free((void *)(uintptr_t)o->pending.vals[i]);
	u64map__free(&o->pending);
	u64map__free(&o->exact_ns);
	u64map__free(&o->exact_n);
	u64map__free(&o->sampled);
}

static uint64_t scaled(uint64_t v, uint64_t num, uint64_t den)
{
	long double x = (long double)v * num / den + 0.5L;

	return x >= (long double)UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

/* add v to k's sum in m, which holds sum + 1 (a value is never 0) */
static int sum_add(struct u64map *m, uint64_t k, uint64_t v)
{
	uint64_t old = u64map__get(m, k);

	return u64map__put(m, k, (old ? old : 1) + v);
}

/*
 * v, the next of a thread's values, scaled by num / den: the difference of
 * the scaled running sums (*cum, sum + 1 in the map), so that the scaled
 * values sum to the scaled sum, rounding and all
 */
static uint64_t scaled_next(struct u64map *cum, uint64_t tid, uint64_t v,
			    uint64_t num, uint64_t den)
{
	uint64_t old = u64map__get(cum, tid), before = old ? old - 1 : 0;

	if (u64map__put(cum, tid, before + v + 1))
		return scaled(v, num, den);
	return scaled(before + v, num, den) - scaled(before, num, den);
}

void offcpu__calibrate(struct offcpu *o, struct profile *p)
{
	struct u64map sum_ns = { 0 }, sum_n = { 0 };
	struct u64map cum_ns = { 0 }, cum_n = { 0 };
	size_t i, n = profile__nstacks(p);

	if (!o->exact_ns.n)
		goto cleanup;
	/* what the sampled stacks of each thread sum to */
	for (i = 0; i < n; i++) {
		const struct profile_stack *ps = profile__stack(p, i);
		uint64_t tid = (uint32_t)ps->trace.tid;

		if (ps->trace.event != TRACE_EV_OFFCPU ||
		    !u64map__get(&o->exact_ns, tid) ||
		    !u64map__get(&o->sampled, tid))
			continue;
		if (sum_add(&sum_ns, tid, ps->weight_ns) ||
		    sum_add(&sum_n, tid, ps->count))
			goto cleanup;
	}
	for (i = 0; i < n; i++) {
		const struct profile_stack *ps = profile__stack(p, i);
		uint64_t tid = (uint32_t)ps->trace.tid, c, w;
		uint64_t ens, en, sns, sn;

		if (ps->trace.event != TRACE_EV_OFFCPU)
			continue;
		ens = u64map__get(&o->exact_ns, tid);
		en = u64map__get(&o->exact_n, tid);
		sns = u64map__get(&sum_ns, tid);
		sn = u64map__get(&sum_n, tid);
		if (!ens || sns <= 1)
			continue;
		sns--;
		sn = sn ? sn - 1 : 0;
		if (ens == sns && en == sn)
			continue;
		w = scaled_next(&cum_ns, tid, ps->weight_ns, ens, sns);
		c = sn && en ? scaled_next(&cum_n, tid, ps->count, en, sn) :
			       ps->count;
		profile__set_time(p, i, c, w);
	}
cleanup:
	u64map__free(&sum_ns);
	u64map__free(&sum_n);
	u64map__free(&cum_ns);
	u64map__free(&cum_n);
	u64map__free(&o->exact_ns);
	u64map__free(&o->exact_n);
	u64map__free(&o->sampled);
	o->exact_ns = (struct u64map){ 0 };
	o->exact_n = (struct u64map){ 0 };
	o->sampled = (struct u64map){ 0 };
}
