/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Aggregation: stacks counted per (pid, tid, thread, kind, error, frames).
 * profile__add() copies the trace and interns its strings, so the caller's
 * trace may be reused right after.
 */
#ifndef ASGST_PROFILE_H
#define ASGST_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

struct strtab;

struct profile_meta {
	uint32_t frequency_hz;
	uint64_t duration_ns;
	uint64_t samples;	/* samples recorded (decoded or not) */
	uint64_t lost;		/* samples the kernel could not record */
	uint32_t events;	/* ASGST_EVMASK_* recorded; 0: cpu */
	uint64_t offcpu_events;	/* off-CPU stacks recorded */
	uint64_t offcpu_lost;	/* off-CPU stacks lost (ring full) */
	uint64_t end_ns;	/* when the recording ended, CLOCK_MONOTONIC */
	uint64_t offcpu_capture_ns; /* taking off-CPU stacks (profiler time) */
	uint64_t alloc_events;	/* allocation stacks recorded */
	uint64_t lock_events;	/* contended-monitor stacks recorded */
	uint64_t jvm_ev_lost;	/* alloc or lock: ring buffer full */
	uint64_t jvm_ev_throttled; /* alloc or lock: over a process's budget */
	uint64_t alloc_interval; /* bytes between sampled allocations asked */
};

struct profile_stack {
	struct trace trace;	/* strings interned in the profile's strtab */
	uint64_t count;		/* samples (events) */
	uint64_t weight_ns;	/* off-CPU time, or lock: time waited; 0 for
				   cpu samples and allocations */
	uint64_t alloc_bytes;	/* alloc: bytes allocated (the scaled
				   estimate), summed over count */
	uint64_t alloc_objects;	/* alloc: objects allocated (estimate) */
};

/* what one event (or a stored stack) adds to its stack */
struct profile_values {
	uint64_t count;
	uint64_t weight_ns;
	uint64_t alloc_bytes;
	uint64_t alloc_objects;
};

struct profile;

struct profile *profile__new(void);
/*
 * The GNU build-id (hex) of a module path, as the symbolizer read it from
 * the file the processes mapped (through their own roots): for the pprof
 * mappings. set: 0 / -ENOMEM. get: module is a string of the profile's (a
 * frame's module); NULL when unknown.
 */
int profile__set_build_id(struct profile *p, const char *module,
			  const char *hex);
const char *profile__build_id(const struct profile *p, const char *module);
void profile__free(struct profile *p);
/*
 * The next period of a recording (--switch-output): every stack is dropped
 * and its memory freed; the figures are zeroed but for frequency_hz and
 * events. The strtab stays: the symbol caches intern into it.
 */
void profile__reset(struct profile *p);
struct strtab *profile__strtab(struct profile *p);
struct profile_meta *profile__meta(struct profile *p);
const struct profile_meta *profile__meta_const(const struct profile *p);
/* 0 or -ENOMEM */
int profile__add(struct profile *p, const struct trace *t, uint64_t count,
		 uint64_t weight_ns);
/*
 * profile__add for a trace whose strings are all profile__strtab(p)'s own
 * (or NULL), as the pipeline interns them: neither copied nor interned
 * again. 0 or -ENOMEM.
 */
int profile__add_interned(struct profile *p, const struct trace *t,
			  uint64_t count, uint64_t weight_ns);
/* the same with every value; 0 or -ENOMEM */
int profile__add_values(struct profile *p, const struct trace *t,
			const struct profile_values *v);
int profile__add_values_interned(struct profile *p, const struct trace *t,
				 const struct profile_values *v);
size_t profile__nstacks(const struct profile *p);
/*
 * Adding again to a stack known by its index (profile/stack_memo.h): the
 * stack the last successful add went to (SIZE_MAX: none since the last
 * reset), and the resets so far (indices of an earlier epoch are void).
 * profile__add_to_stack: 0, or -EINVAL when i is no stack.
 */
size_t profile__last_stack(const struct profile *p);
uint64_t profile__epoch(const struct profile *p);
int profile__add_to_stack(struct profile *p, size_t i,
			  const struct profile_values *v);
/*
 * The service and process names of stack i (profile/service.h; strings
 * of the profile's strtab, or NULL). They are the process's, not part of
 * a stack's identity: two stacks of a pid differing only in them are one,
 * and the pipeline sets them to the process's final names before the
 * outputs are written (pipeline__annotate), as report reads them back.
 */
void profile__set_names(struct profile *p, size_t i, const char *service,
			const char *process);
/* stack i's count and time, rescaled (offcpu__calibrate: a thread's
 * sampled off-CPU stacks to its exact sums) */
void profile__set_time(struct profile *p, size_t i, uint64_t count,
		       uint64_t weight_ns);
/*
 * What a flame graph weighs a stack by: its samples, or, when the profile
 * holds off-CPU time, microseconds (off-CPU time, and a cpu sample as
 * 10^6 / frequency us) so on- and off-CPU stacks add up in one unit.
 */
bool profile__timed(const struct profile *p);
uint64_t profile__stack_value(const struct profile *p,
			      const struct profile_stack *ps);
/* the root frame an off-CPU stack gets in flame graphs */
#define PROFILE_OFFCPU_FRAME	"[off-cpu]"
/* stacks in insertion order; i < profile__nstacks() */
const struct profile_stack *profile__stack(const struct profile *p, size_t i);

#endif /* ASGST_PROFILE_H */
