/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel sampler reads thread state, anchor and continuation entry
 * from a thread's JavaThread: tell it where each thread's is, as a JVM's
 * code map reports its threads, and forget ended threads; and push the
 * JVM's virtual-thread layout once the code map has it. The sampler's
 * map is shared fairly between JVMs (jthreads.c says how).
 */
#ifndef ASGST_JTHREADS_H
#define ASGST_JTHREADS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct capture;
struct codemap;
struct jthreads;

/* the share of the sampler's JavaThread map a JVM always may have */
#define JT_MIN_SHARE		1024u

/* follow cm's threads for JVM pid (cm must outlive it); NULL: no memory */
struct jthreads *jthreads__new(struct capture *cap, pid_t pid,
			       struct codemap *cm);
/* push the virtual-thread layout if the code map has it by now (once) */
void jthreads__sync_cont(struct jthreads *j);
/*
 * The process left the sampler's maps (capture__forget deleted its
 * entries; its pid may name another process now): push and delete
 * nothing more, and count nothing as held.
 */
void jthreads__forget(struct jthreads *j);
/* deletes the entries it pushed (unless forgotten) */
void jthreads__free(struct jthreads *j);

struct jthreads_stats {
	uint64_t refused;	/* threads not pushed: the JVM at its share */
	uint64_t reclaimed;	/* entries taken back: the JVM above its share
				   when another needed room */
	size_t held;		/* entries held now */
	size_t share;		/* a JVM's share now (for all: the map's size) */
};

/* one JVM's (j), or every JVM's so far (j NULL) */
void jthreads__stats(const struct jthreads *j, struct jthreads_stats *out);
/* the sampler map's size (tests: a smaller one); 0: ASGST_JTHREADS_MAX */
void jthreads__set_entries(size_t entries);

#endif /* ASGST_JTHREADS_H */
