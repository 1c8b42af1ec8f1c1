/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Event families: the stacks a writer weighs in one unit. cpu and off-CPU
 * stacks are time (samples, or us with off-CPU time in), allocations are
 * bytes (and objects), contended monitors ns. A flame graph, a collapsed
 * file or a top table never adds two families together.
 */
#ifndef ASGST_EVFAMILY_H
#define ASGST_EVFAMILY_H

#include <stdbool.h>
#include <stddef.h>

#include "trace.h"

struct profile;

enum ev_family {
	EVF_TIME = 0,	/* cpu, offcpu */
	EVF_ALLOC,
	EVF_LOCK,
	EVF_N,
};

#define EVF_BIT(f)	(1u << (f))

static inline enum ev_family ev_family__of(const struct trace *t)
{
	return t->event == TRACE_EV_ALLOC ? EVF_ALLOC :
	       t->event == TRACE_EV_LOCK ? EVF_LOCK : EVF_TIME;
}

/* "time", "alloc", "lock" */
const char *ev_family__name(enum ev_family f);

/*
 * EVF_BIT()s of the families p holds: those recorded (its meta's events;
 * none named is cpu) and those of its stacks. Never 0.
 */
unsigned ev_families(const struct profile *p);
/* the family a single-weight output shows first: time, alloc, lock */
enum ev_family ev_families__main(unsigned fams);

/*
 * frame__display_name() (trace.h) for a frame of t, the FRAME_CLASS leaf
 * of an allocation or a contended monitor included: its class, dotted,
 * with the suffix _[a] (allocated) or _[l] (monitor) when suffix is set.
 */
size_t ev_frame_name(const struct trace *t, const struct frame *f, char *buf,
		     size_t size, bool suffix);

#endif /* ASGST_EVFAMILY_H */
