/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel sampler reads thread state, anchor and continuation entry
 * from a thread's JavaThread: tell it where each thread's is, as a JVM's
 * code map reports its threads, and forget ended threads; and push the
 * JVM's virtual-thread layout once the code map has it.
 */
#ifndef ASGST_JTHREADS_H
#define ASGST_JTHREADS_H

#include <sys/types.h>

struct capture;
struct codemap;
struct jthreads;

/* follow cm's threads for JVM pid (cm must outlive it); NULL: no memory */
struct jthreads *jthreads__new(struct capture *cap, pid_t pid,
			       struct codemap *cm);
/* push the virtual-thread layout if the code map has it by now (once) */
void jthreads__sync_cont(struct jthreads *j);
void jthreads__free(struct jthreads *j);

#endif /* ASGST_JTHREADS_H */
