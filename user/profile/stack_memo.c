// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The memo of decoded traces by key (stack_memo.h). One slot per key's
 * low bits; a slot compares both 64-bit halves of the key and every stamp.
 */
#include <stdlib.h>
#include <string.h>

#include "profile/stack_memo.h"

#define MEMO_SLOTS	8192	/* a power of two; 88 bytes each */

struct memo_ent {
	struct decode_key key;
	struct stack_memo_stamp st;
	uint64_t t;			/* the kept trace's sample time */
	uint32_t stack;
	bool error;
	bool used;
};

struct stack_memo {
	struct memo_ent e[MEMO_SLOTS];
	struct stack_memo_stats stats;
};

struct stack_memo *stack_memo__new(void)
{
	return calloc(1, sizeof(struct stack_memo));
}

void stack_memo__free(struct stack_memo *m)
{
	free(m);
}

static struct memo_ent *slot(struct stack_memo *m, const struct decode_key *k)
{
	return &m->e[(k->a ^ k->b >> 17) & (MEMO_SLOTS - 1)];
}

static bool same_stamp(const struct stack_memo_stamp *a,
		       const struct stack_memo_stamp *b)
{
	return a->prof_epoch == b->prof_epoch && a->cm_stamp == b->cm_stamp &&
	       a->names_gen == b->names_gen &&
	       a->names_epoch == b->names_epoch && a->comm == b->comm &&
	       a->container_id == b->container_id && a->pod_uid == b->pod_uid;
}

bool stack_memo__find(struct stack_memo *m, const struct decode_key *k,
		      const struct stack_memo_stamp *st, uint64_t t,
		      uint64_t h, size_t *stack, bool *error)
{
	const struct memo_ent *e;

	if (!m || !st->names_gen)
		return false;
	e = slot(m, k);
	if (!e->used || e->key.a != k->a || e->key.b != k->b ||
	    !same_stamp(&e->st, st))
		return false;
	/* the map may answer otherwise at times before its newest record */
	if (st->cm_stamp && (t < h || e->t < h))
		return false;
	*stack = e->stack;
	*error = e->error;
	m->stats.hits++;
	return true;
}

void stack_memo__keep(struct stack_memo *m, const struct decode_key *k,
		      const struct stack_memo_stamp *st, uint64_t t,
		      size_t stack, bool error)
{
	struct memo_ent *e;

	if (!m || !st->names_gen || stack > UINT32_MAX)
		return;
	e = slot(m, k);
	e->key = *k;
	e->st = *st;
	e->t = t;
	e->stack = (uint32_t)stack;
	e->error = error;
	e->used = true;
	m->stats.kept++;
}

void stack_memo__stats(const struct stack_memo *m,
		       struct stack_memo_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (m)
		*out = m->stats;
}
