// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Off-CPU stacks waiting for their END record (see offcpu.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "capture/sample.h"
#include "profile/offcpu.h"
#include "profile/queue.h"

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

	if (v <= 1 || queued__hdr(q)->ktime_ns != e->ktime_ns) {
		o->stray_end++;	/* its stack was lost */
		return NULL;
	}
	u64map__put(&o->pending, e->tid, 1);
	queued__hdr(q)->weight_ns = e->weight_ns;
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
}
