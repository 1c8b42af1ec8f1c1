// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The delay queue: a FIFO of record copies, so a sample is decoded a little
 * after it arrived (the pipeline decides how long).
 */
#include <stdlib.h>
#include <string.h>

#include "profile/queue.h"

struct queued *queued__new(const void *data, size_t len)
{
	struct queued *q = malloc(sizeof(*q) + len);

	if (!q)
		return NULL;
	q->len = len;
	q->end = NULL;
	memcpy(q->data, data, len);
	return q;
}

void queued__free(struct queued *q)
{
	if (!q)
		return;
	free(q->end);
	free(q);
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
	return q;
}

void queue__free(struct queue *qu)
{
	struct queued *q;

	while ((q = queue__pop(qu)))
		queued__free(q);
}
