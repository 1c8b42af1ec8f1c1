/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Traces decoded before, by their key (decode/decode.h, decoder__key): a
 * busy thread's samples walk the same frames over and over, and naming
 * them, interning their strings and hashing them into the profile was
 * most of a sample's decode. A sample whose walk gives a key kept here,
 * with the same stamps, is added to the profile stack its key went to,
 * its frames never named.
 *
 * The stamps are what a trace's names and fields hang on beside its key:
 * the profile's resets, the code map's stamp (codemap__stamp: every
 * change to blobs, threads and methods), the symbolizer's (the process's
 * maps load, symbols added or modules freed) and the process's interned
 * comm, container and pod. A code map answers by the sample's time: an
 * entry serves only samples whose time, and its own, are at or after the
 * map's horizon (every record it holds is older), so lookups at either
 * time are the same. Direct-mapped and bounded: a slot holds the last
 * key kept in it.
 */
#ifndef ASGST_STACK_MEMO_H
#define ASGST_STACK_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode/decode.h"

struct stack_memo_stamp {
	uint64_t prof_epoch;
	uint64_t cm_stamp;		/* 0: no code map */
	uint64_t names_gen;		/* never 0 in an entry */
	uint64_t names_epoch;
	const char *comm, *container_id, *pod_uid;
};

struct stack_memo_stats {
	uint64_t hits;
	uint64_t kept;
};

struct stack_memo;

/* NULL: out of memory (decoding goes on without) */
struct stack_memo *stack_memo__new(void);
void stack_memo__free(struct stack_memo *m);
/*
 * The profile stack kept for k with st, at a sample time t (the map's
 * horizon is h): true with *stack and *error (the trace had an error
 * code).
 */
bool stack_memo__find(struct stack_memo *m, const struct decode_key *k,
		      const struct stack_memo_stamp *st, uint64_t t,
		      uint64_t h, size_t *stack, bool *error);
/* k's trace went to the profile's stack at sample time t */
void stack_memo__keep(struct stack_memo *m, const struct decode_key *k,
		      const struct stack_memo_stamp *st, uint64_t t,
		      size_t stack, bool error);
void stack_memo__stats(const struct stack_memo *m,
		       struct stack_memo_stats *out);

#endif /* ASGST_STACK_MEMO_H */
