// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The delay queue: a FIFO of records (copies, or references into the ring
 * buffer), so a sample is decoded a little after it arrived (the pipeline
 * decides how long).
 */
#include <stdlib.h>
#include <string.h>

#include "profile/queue.h"

/*
 * Record copies are recycled: at 999 Hz a CPU brings a few KiB a ms, each
 * copy lives for the decode delay, and malloc and free of blocks that size
 * cost more than the copy. Blocks up to POOL_CLASSES KiB are kept by size
 * class (1 KiB steps, so a copy wastes less than 1 KiB), at most
 * POOL_BYTES of them in all; larger ones go back to malloc. The recorder
 * decodes on one thread: the pool is not locked.
 */
#define POOL_STEP		1024
#define POOL_CLASSES		24
#define POOL_BYTES		(8u << 20)

static struct {
	struct queued *free[POOL_CLASSES];	/* chained by next */
	size_t bytes;				/* kept in all classes */
} pool;

/* the class of a copy of len bytes (its block holds (class + 1) KiB); or
 * POOL_CLASSES: not pooled */
static size_t pool_class(size_t len)
{
	size_t need = sizeof(struct queued) + len;

	return need > POOL_CLASSES * POOL_STEP ? POOL_CLASSES :
	       (need - 1) / POOL_STEP;
}

/* nodes of records left in the ring buffer, reused */
static struct {
	struct queued *free;
	size_t n;
} refs;

#define REFS_MAX		4096

static void pool_put(struct queued *q)
{
	size_t c = pool_class(q->len);

	if (queued__in_ring(q)) {
		if (refs.n >= REFS_MAX) {
			free(q);
			return;
		}
		q->next = refs.free;
		refs.free = q;
		refs.n++;
		return;
	}

	if (c >= POOL_CLASSES || pool.bytes + (c + 1) * POOL_STEP > POOL_BYTES) {
		free(q);
		return;
	}
	q->next = pool.free[c];
	pool.free[c] = q;
	pool.bytes += (c + 1) * POOL_STEP;
}

struct queued *queued__new(const void *data, size_t len)
{
	return queued__new2(data, len, NULL, 0);
}

struct queued *queued__new2(const void *a, size_t alen, const void *b,
			    size_t blen)
{
	size_t len = alen + blen, c = pool_class(len);
	struct queued *q;

	if (c < POOL_CLASSES && pool.free[c]) {
		q = pool.free[c];
		pool.free[c] = q->next;
		pool.bytes -= (c + 1) * POOL_STEP;
	} else {
		q = malloc(c < POOL_CLASSES ? (c + 1) * POOL_STEP :
			   sizeof(*q) + len);
	}
	if (!q)
		return NULL;
	q->len = len;
	q->end = NULL;
	q->rec = q->data;
	memcpy(q->data, a, alen);
	if (blen)
		memcpy((char *)q->data + alen, b, blen);
	return q;
}

struct queued *queued__ref(const void *rec, size_t len)
{
	struct queued *q = refs.free;

	if (q) {
		refs.free = q->next;
		refs.n--;
	} else if (!(q = malloc(sizeof(*q)))) {
		return NULL;
	}
	q->len = len;
	q->end = NULL;
	q->rec = rec;
	return q;
}

void queued__free(struct queued *q)
{
	if (!q)
		return;
	if (q->end)
		pool_put(q->end);
	pool_put(q);
}

void queue__push(struct queue *qu, struct queued *q, uint64_t now_ns)
{
	q->next = NULL;
	q->arrival_ns = now_ns;
	if (qu->tail)
		qu->tail->next = q;
	else
		qu->head = q;
	qu->tail = q;
	qu->n++;
	qu->bytes += q->len;
}

struct queued *queue__pop(struct queue *qu)
{
	struct queued *q = qu->head;

	if (!q)
		return NULL;
	qu->head = q->next;
	if (!qu->head)
		qu->tail = NULL;
	qu->n--;
	qu->bytes -= q->len;
	return q;
}

void queue__free(struct queue *qu)
{
	struct queued *q;

	while ((q = queue__pop(qu)))
		queued__free(q);
	/* the pipeline is done with records: the pool goes too */
	for (size_t c = 0; c < POOL_CLASSES; c++) {
		while ((q = pool.free[c])) {
			pool.free[c] = q->next;
			free(q);
		}
	}
	pool.bytes = 0;
	while ((q = refs.free)) {
		refs.free = q->next;
		free(q);
	}
	refs.n = 0;
}
