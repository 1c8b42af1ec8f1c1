/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Off-CPU pairing: a thread's stack is recorded as it leaves the CPU, and
 * its weight (the time until it ran again) arrives later in an END record of
 * the same tid and time; the stack waits here for it, then joins the delay
 * queue. A thread still off the CPU when the recording ends is weighed up to
 * its end.
 */
#ifndef ASGST_OFFCPU_H
#define ASGST_OFFCPU_H

#include <stdint.h>

#include "util/u64map.h"

struct asgst_sample_hdr;
struct queue;
struct queued;

/* zero-initialise for an empty one */
struct offcpu {
	struct u64map pending;	/* tid -> struct queued * (1: none) */
	uint64_t no_end;	/* stacks whose END never came */
	uint64_t stray_end;	/* END records with no stack waiting */
};

/* an off-CPU stack (8-aligned copy) waits for its END: 0, or -ENOMEM with
 * q not taken */
int offcpu__hold(struct offcpu *o, struct queue *qu, struct queued *q,
		 uint64_t now_ns);
/* an END record: its stack, weighed, joins the queue and is returned;
 * NULL when no stack waited for it */
struct queued *offcpu__end(struct offcpu *o, struct queue *qu,
			   const struct asgst_sample_hdr *e, uint64_t now_ns);
/* the end of the recording (end_ns: the newest time known): every stack
 * still waiting joins the queue */
void offcpu__flush(struct offcpu *o, struct queue *qu, uint64_t end_ns,
		   uint64_t now_ns);
void offcpu__free(struct offcpu *o);

#endif /* ASGST_OFFCPU_H */
