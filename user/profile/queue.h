/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pipeline's delay queue: records as they arrive (copied, or left in
 * the ring buffer), decoded in arrival order once they are old enough (see
 * pipeline.c).
 */
#ifndef ASGST_QUEUE_H
#define ASGST_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct asgst_sample_hdr;

struct queued {
	struct queued *next;
	/* raw recordings: the END record that weighed this off-CPU stack,
	 * written right after it */
	struct queued *end;
	uint64_t arrival_ns;
	size_t len;
	/* the record: data below, or where the kernel wrote it, held in
	 * the ring buffer until it is decoded (queued__in_ring) */
	const void *rec;
	uint64_t data[];	/* 8-aligned record copy, unless in the ring */
};

static inline bool queued__in_ring(const struct queued *q)
{
	return q->rec != (const void *)q->data;
}

/* zero-initialise for an empty queue */
struct queue {
	struct queued *head, *tail;
	size_t n;		/* records queued */
	size_t bytes;		/* their length, in the ring or copied */
};

/* a copy of a record, not queued yet; NULL when out of memory */
struct queued *queued__new(const void *data, size_t len);
/* a record left where it is (rec, len bytes): no copy */
struct queued *queued__ref(const void *rec, size_t len);
/* the same of a record in two pieces: a then b */
struct queued *queued__new2(const void *a, size_t alen, const void *b,
			    size_t blen);

static inline struct asgst_sample_hdr *queued__hdr(struct queued *q)
{
	return (struct asgst_sample_hdr *)q->data;
}

/* q and its END copy */
void queued__free(struct queued *q);

/* append q, arrived at now_ns */
void queue__push(struct queue *qu, struct queued *q, uint64_t now_ns);
/* unlink the head and hand it over (the caller frees it); NULL: empty */
struct queued *queue__pop(struct queue *qu);
void queue__free(struct queue *qu);

#endif /* ASGST_QUEUE_H */
