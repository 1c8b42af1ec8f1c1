// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recording's lifecycle (recorder.h): open, run, stop, finish, close,
 * and the replay of a raw recording through the same steps.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvm/attach.h"
#include "jvm/codemap.h"
#include "profile/filter.h"
#include "profile/jvm_events.h"
#include "profile/profile.h"
#include "recorder/recorder_int.h"
#include "util/clock.h"

/* the ring buffer is polled this long at most between two decodes */
#define POLL_MS		100

/* a signal handler has no context: the flag of the one recording */
static volatile sig_atomic_t *signal_stop;

static void on_signal(int sig)
{
	(void)sig;
	if (signal_stop)
		*signal_stop = 1;
}

static int on_record(const void *data, size_t len, void *ctx)
{
	return pipeline__push(ctx, data, len) == PIPELINE_HELD ? CAPTURE_HOLD :
								 0;
}

static struct recorder *recorder_new(const struct recorder_opts *o,
				     const char *who)
{
	struct recorder *r = calloc(1, sizeof(*r));

	if (!r) {
		err__say(who, "out of memory");
		return NULL;
	}
	r->o = *o;
	r->who = who;
	r->ops = o->ops ? o->ops : &recorder_bpf_ops;
	r->tg.child = -1;
	r->tg.go_fd = r->tg.exec_fd = -1;
	raw_sink__init(&r->sink, &r->raw);
	return r;
}

/* the sampler loaded, not started; a command forked, waiting to exec */
static int open_capture(struct recorder *r)
{
	struct capture_opts *co = &r->co;
	char err[512];
	int rc;

	co->filter_mode = r->o.filter_mode;
	co->pids = r->o.pids;
	co->npids = r->o.npids;
	co->freq_hz = r->o.freq_hz;
	co->events = r->o.events ? r->o.events : ASGST_EVMASK_CPU;
	co->defer_start = true;
	co->window_size = r->o.window;
	co->ringbuf_mb = r->o.ringbuf_mb;
	co->offcpu_every = r->o.offcpu_every;
	co->window_all = r->o.window_all;
	co->time_samples = r->o.time_samples;
	rc = recorder_targets_open(r);
	if (rc)
		return rc;
	rc = r->ops->open(&r->cap, co, err, sizeof(err));
	if (rc) {
		recorder_say(r, "%s", err);
		return 1;
	}
	return 0;
}

/* the profile and the pipeline; NULL filter when it keeps everything */
static int open_pipeline(struct recorder *r, struct pipeline_opts *po,
			 struct capture *c)
{
	struct filter *f = r->o.filter;

	po->filter = f && filter__active(f) ? f : NULL;
	po->quiet = r->o.quiet;
	r->prof = profile__new();
	r->pl = r->prof ? pipeline__new(r->prof, c, po) : NULL;
	if (!r->pl) {
		recorder_say(r, "out of memory");
		return 1;
	}
	return 0;
}

/*
 * -e alloc/lock: the JVMs' agents asked and probed as the pipeline finds
 * them; the agent library is the reference of what gets a uprobe
 */
static int open_jvm_events(struct recorder *r, struct pipeline_opts *po)
{
	uint32_t mask = 0;
	char err[512];

	if (!(r->o.events & ASGST_EVMASK_JVM))
		return 0;
	if (!r->agent[0] && attach__find_agent(r->agent, sizeof(r->agent),
					       err, sizeof(err))) {
		recorder_say(r, "%s: -e alloc and -e lock need it", err);
		return 1;
	}
	if (!r->o.alloc_interval)
		r->o.alloc_interval = RECORDER_ALLOC_INTERVAL;
	if (r->o.events & ASGST_EVMASK_ALLOC)
		mask |= CODEMAP_EV_ALLOC;
	if (r->o.events & ASGST_EVMASK_LOCK)
		mask |= CODEMAP_EV_LOCK;
	r->jev = jvm_events__new(r->ops->capture(r->cap), r->agent, mask,
				 r->o.alloc_interval, r->o.quiet, err,
				 sizeof(err));
	if (!r->jev) {
		recorder_say(r, "%s", err);
		return 1;
	}
	po->jvm_events = r->jev;
	return 0;
}

/* the pipeline over the sampler, the targets known before sampling */
static int open_live(struct recorder *r)
{
	struct pipeline_opts po = { 0 };
	char err[512];

	po.no_attach = r->o.no_attach;
	po.inlines = r->o.inlines;
	po.debug_thread = true;
	po.debuginfod_urls = r->o.debuginfod_urls;
	po.debuginfod_timeout_s = r->o.debuginfod_timeout_s;
	po.python_native = r->o.python_native;
	if (!r->o.no_attach) {
		if (attach__find_agent(r->agent, sizeof(r->agent), err,
				       sizeof(err)))
			recorder_say(r, "%s; JVMs without the agent show "
				     "native frames only", err);
		else
			po.agent_path = r->agent;
	}
	if (open_jvm_events(r, &po))
		return 1;
	po.sink = r->raw ? &r->sink : NULL;
	if (open_pipeline(r, &po, r->ops->capture(r->cap)))
		return 1;
	profile__meta(r->prof)->frequency_hz = r->o.freq_hz;
	recorder_sideband_open(r);
	/* JVMs among the targets get their stack window from the start */
	if (r->o.filter_mode == ASGST_FILTER_ALL && !r->o.container)
		pipeline__prime_jvms(r->pl);
	for (size_t i = 0; i < r->o.npids; i++)
		pipeline__prime(r->pl, r->o.pids[i]);
	for (size_t i = 0; i < r->ct.npids; i++)
		pipeline__prime(r->pl, r->ct.pids[i]);
	/* the targets' threads are known to the kernel side: start sampling */
	pipeline__process(r->pl, 0, false);
	return 0;
}

/* start sampling, then let the command exec */
static int start(struct recorder *r)
{
	char err[512];
	int rc;

	rc = r->ops->start(r->cap, err, sizeof(err));
	if (rc) {
		recorder_say(r, "%s", err);
		return 1;
	}
	r->started = true;
	r->startup_cpu_ns = clock__cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (r->o.stop_on_signals && r->o.stop) {
		struct sigaction sa = { .sa_handler = on_signal };

		signal_stop = r->o.stop;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	r->tty = !r->o.quiet && isatty(STDERR_FILENO);
	r->t0 = clock__mono_ns();
	r->period_t0 = r->t0;
	r->next_switch = r->t0 + r->o.switch_ns;
	return recorder_targets_start(r);
}

/* open the outputs now (with --switch-output the first period's files):
 * a bad path fails before anything is recorded */
static int open_outputs(struct recorder *r)
{
	return r->o.switch_ns ? recorder_periods_open(r) :
				recorder_outputs_open(r);
}

int recorder__open(struct recorder **out, const struct recorder_opts *o)
{
	struct recorder *r = recorder_new(o, "record");

	*out = r;
	if (!r)
		return 1;
	return recorder_push_open(r) ?: open_outputs(r) ?: open_capture(r) ?:
	       open_live(r) ?: start(r);
}

int recorder__open_replay(struct recorder **out,
			  const struct recorder_opts *o)
{
	/* a report waits for debug info longer: no ring buffer to keep */
	struct pipeline_opts po = {
		.offline = true,
		.inlines = o->inlines,
		.debug_thread = true,
		.debuginfod_urls = o->debuginfod_urls,
		.debuginfod_timeout_s = o->debuginfod_timeout_s,
		.settle_ns = 60ull * 1000 * 1000 * 1000,
		.python_native = o->python_native,
	};
	struct recorder *r = recorder_new(o, "report");

	*out = r;
	if (!r)
		return 1;
	return open_pipeline(r, &po, NULL);
}

static bool stop_asked(const struct recorder *r)
{
	return r->o.stop && *r->o.stop;
}

enum recorder_end recorder__run(struct recorder *r)
{
	uint64_t t_end = 0;
	int rc;

	if (r->o.replay)
		return recorder_replay_run(r) ? RECORDER_REPLAY_ERROR :
						RECORDER_REPLAYED;
	if (r->o.duration_s > 0)
		t_end = r->t0 + (uint64_t)(r->o.duration_s * 1e9);
	while (!stop_asked(r)) {
		uint64_t now;

		recorder_sideband_pump(r, clock__mono_ns());
		rc = r->ops->poll(r->cap, POLL_MS, on_record, r->pl);
		if (rc < 0) {
			recorder_say(r, "ring buffer: %s", strerror(-rc));
			return RECORDER_RING_ERROR;
		}
		now = clock__mono_ns();
		pipeline__process(r->pl, now, false);
		r->decode_ns += clock__mono_ns() - now;
		if (t_end && now >= t_end)
			return RECORDER_DURATION;
		if (recorder_targets_gone(r, now))
			return RECORDER_TARGETS_GONE;
		if (r->o.switch_ns && now >= r->next_switch)
			recorder_period_switch(r, now);
		recorder_status_line(r, now);
	}
	return RECORDER_STOPPED;
}

void recorder__stop(struct recorder *r)
{
	if (r->cap && !r->stopped)
		r->ops->stop(r->cap);
	r->stopped = true;
}

/*
 * The sampler stopped first: a command still running, or a busy host,
 * would otherwise put records in the ring buffer between the drain and the
 * counters' read, counted and never decoded (hundreds at 100 k off-CPU
 * switches a second). Then whatever is in the ring buffer still counts
 * (the maps first).
 */
static void finish_live(struct recorder *r)
{
	uint64_t end_ns, t_dec;

	recorder__stop(r);
	recorder_sideband_pump(r, clock__mono_ns());
	r->ops->drain(r->cap, on_record, r->pl);
	r->ops->stats(r->cap, r->st);
	end_ns = clock__mono_ns();
	t_dec = clock__mono_ns();
	pipeline__finish(r->pl, end_ns);
	r->decode_ns += clock__mono_ns() - t_dec;
	if (r->tty)
		fputs("\r\033[K", stderr);
	/* the whole recording, or with --switch-output its last period */
	recorder_period_meta(r, end_ns);
}

int recorder__finish(struct recorder *r)
{
	int rc;

	if (!r->o.replay)
		finish_live(r);
	else if (recorder_outputs_open(r))
		return 1;	/* a replay opens its outputs once decoded */
	rc = recorder_outputs_write(r);
	if (r->push) {
		recorder_push_period(r, r->began, time(NULL));
		recorder_push_drain(r);
	}
	return rc;
}

void recorder__close(struct recorder *r)
{
	if (!r)
		return;
	recorder_targets_close(r);
	recorder_push_close(r);
	recorder_outputs_close(r);
	pipeline__free(r->pl);
	jvm_events__free(r->jev);
	recorder_sideband_close(r);
	profile__free(r->prof);
	if (r->cap)
		r->ops->close(r->cap);
	recorder_replay_free(r);
	if (signal_stop == r->o.stop)
		signal_stop = NULL;
	free(r);
}

void recorder__stats(const struct recorder *r, struct recorder_stats *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->counters, r->st, sizeof(out->counters));
	if (r->pl)
		pipeline__stats(r->pl, &out->pl);
	out->decode_ns = r->decode_ns;
	out->stacks = r->stacks_before +
		      (r->prof ? profile__nstacks(r->prof) : 0);
	out->periods = r->periods;
	out->events = r->co.events;
	out->period_failed = r->period_failed;
	jvm_events__stats(r->jev, &out->jev);
	out->pushing = recorder_push_stats(r, &out->push, out->push_error,
					   sizeof(out->push_error));
}

struct profile *recorder__profile(struct recorder *r)
{
	return r->prof;
}
