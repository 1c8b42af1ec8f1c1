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
struct profile;
struct queue;
struct queued;

/* zero-initialise for an empty one */
struct offcpu {
	struct u64map pending;	/* tid -> struct queued * (1: none) */
	uint64_t no_end;	/* stacks whose END never came */
	uint64_t stray_end;	/* END records with no stack waiting */
	/* by tid, what its ENDs (version 4) said of every switch-out, its
	 * stack taken or not: ns off the CPU and switch-outs, since the
	 * last offcpu__calibrate; and whether a stack of it stood for more
	 * than one switch (1) */
	struct u64map exact_ns, exact_n, sampled;
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
/*
 * Each thread's off-CPU stacks in p scaled so that their times and counts
 * sum to what the sampler summed over every switch-out of the thread
 * (ratio estimation: a thread's total and switch count exact, the shares
 * of its stacks those of its sampled stacks, and what the ring had no
 * room for in them too); a thread whose ENDs said nothing (older
 * records), or whose every stack was taken, is left as it is: exact, its
 * lost records counted apart. Then the sums start again.
 */
void offcpu__calibrate(struct offcpu *o, struct profile *p);
/*
 * What an off-CPU stack, weighed by its END, stands for: the sampler took
 * it with probability 1/N (N in its flags from version 4 on, else 1), so
 * it counts N switches and N times its time (Horvitz-Thompson: each
 * stack's sums are then unbiased estimates of what every switch would
 * have given). The time saturates rather than wraps.
 */
void offcpu__weigh(const struct asgst_sample_hdr *h, uint64_t *count,
		   uint64_t *weight_ns);

#endif /* ASGST_OFFCPU_H */
