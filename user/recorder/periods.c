// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --switch-output: a recording cut in periods, each written to its own set
 * of files named with the UTC time it began, with only the newest
 * --switch-max-files of each output kept. A period's figures are the
 * sampler's counters since it began.
 */
#include <stdio.h>
#include <string.h>

#include "output/raw.h"
#include "profile/profile.h"
#include "recorder/recorder_int.h"

/* a period's files: -o's paths with the time it began (CLOCK_REALTIME) */
static int period_open(struct recorder *r, time_t began)
{
	char err[512];
	bool raw = false;
	int rc, ret = 0;

	/* a late switch can begin in its predecessor's second: a name of its
	 * own, never the file just written */
	if (r->began && began <= r->began)
		began = r->began + 1;
	r->began = began;
	for (size_t i = 0; i < r->o.nout; i++) {
		if (r->o.formats[i] == OUT_RAW && raw)
			continue;	/* one raw file is enough */
		rc = switch_name__format(r->names[i], sizeof(r->names[i]),
					 r->o.outputs[i], began);
		if (rc) {
			snprintf(err, sizeof(err), "cannot write %s: the "
				 "period's file name is too long",
				 r->o.outputs[i]);
		} else if (r->o.formats[i] == OUT_RAW) {
			raw = true;
			r->raw_idx = i;
			rc = raw_writer__open(&r->raw, r->names[i], err,
					      sizeof(err));
		} else {
			rc = output__open(&r->out[i], r->names[i],
					  r->o.formats[i], err, sizeof(err));
		}
		if (rc) {
			/* no file (out[i].f or raw NULL): at the period's
			 * end its profile is kept in a raw file instead */
			recorder_say(r, "%s", err);
			ret = 1;
		}
	}
	return ret;
}

/* the first period's files, opened as recorder__open opens outputs */
int recorder_periods_open(struct recorder *r)
{
	for (size_t i = 0; i < r->o.nout; i++) {
		r->kept[i].max = r->o.switch_max;
		r->kept[i].siblings = r->o.formats[i] == OUT_COLLAPSED;
	}
	return period_open(r, time(NULL));
}

/* the period's figures: the sampler's counters (r->st, just read) since
 * it began */
void recorder_period_meta(struct recorder *r, uint64_t end_ns)
{
	struct profile_meta *m = profile__meta(r->prof);
	const uint64_t *st = r->st, *st0 = r->st0;

	m->end_ns = end_ns;
	m->duration_ns = end_ns - r->period_t0;
	m->samples = st[ASGST_STAT_SAMPLES] - st0[ASGST_STAT_SAMPLES];
	m->lost = st[ASGST_STAT_LOST] - st0[ASGST_STAT_LOST];
	m->events = r->co.events;
	m->offcpu_events = st[ASGST_STAT_OFFCPU] - st0[ASGST_STAT_OFFCPU];
	m->offcpu_lost = st[ASGST_STAT_OFFCPU_LOST] -
			 st0[ASGST_STAT_OFFCPU_LOST];
	m->offcpu_capture_ns = st[ASGST_STAT_OFFCPU_CAPTURE_NS] -
			       st0[ASGST_STAT_OFFCPU_CAPTURE_NS];
	m->alloc_events = st[ASGST_STAT_ALLOC] - st0[ASGST_STAT_ALLOC];
	m->lock_events = st[ASGST_STAT_LOCK] - st0[ASGST_STAT_LOCK];
	m->jvm_ev_lost = st[ASGST_STAT_JVM_EV_LOST] -
			 st0[ASGST_STAT_JVM_EV_LOST];
	m->jvm_ev_throttled = st[ASGST_STAT_JVM_EV_THROTTLED] -
			      st0[ASGST_STAT_JVM_EV_THROTTLED];
	m->alloc_interval = r->co.events & ASGST_EVMASK_ALLOC ?
			    r->o.alloc_interval : 0;
}

/*
 * The period ends. Its profile holds the samples decoded in it; those
 * still in the delay queue (or off-CPU stacks waiting for their thread to
 * run again) are decoded into the next one. Only the profile is dropped:
 * processes, symbols and code maps stay.
 */
void recorder_period_switch(struct recorder *r, uint64_t now)
{
	r->ops->stats(r->cap, r->st);
	recorder_period_meta(r, now);
	if (recorder_outputs_write(r))
		r->period_failed = true;
	recorder_push_period(r, r->began, time(NULL));
	r->periods++;
	r->stacks_before += profile__nstacks(r->prof);
	profile__reset(r->prof);
	memcpy(r->st0, r->st, sizeof(r->st0));
	r->period_t0 = now;
	/* a period that ran late (a slow write): the next on the beat */
	while (r->next_switch <= now)
		r->next_switch += r->o.switch_ns;
	if (period_open(r, time(NULL)))
		r->period_failed = true;
	/* with no raw output the pipeline never had a sink */
	if (r->o.formats[r->raw_idx] == OUT_RAW &&
	    pipeline__set_sink(r->pl, r->raw ? &r->sink : NULL)) {
		recorder_say(r, "%s: the code maps could not be copied",
			     r->names[r->raw_idx]);
		r->period_failed = true;
	}
}
