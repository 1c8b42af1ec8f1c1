/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the engine: one recording's state, and what its files hand each
 * other. recorder.c runs the lifecycle; targets.c the fork/exec handshake,
 * the targets' liveness and --cgroup/--container; sideband_maps.c the
 * side-band into the map log and the symbolizer; outputs.c opening and
 * writing the outputs; periods.c --switch-output; replay.c report's passes
 * over a raw file; stats.c the status line and --stats.
 */
#ifndef ASGST_RECORDER_INT_H
#define ASGST_RECORDER_INT_H

#include <limits.h>
#include <time.h>

#include "output/output.h"
#include "output/switch_name.h"
#include "profile/container.h"
#include "recorder/raw_sink.h"
#include "recorder/recorder.h"
#include "util/err.h"

struct maplog;
struct replay;
struct raw_writer;

/* the fork/exec handshake of -- COMMAND, and -p's liveness */
struct targets {
	pid_t child;		/* -- COMMAND; <= 0: none */
	int go_fd, exec_fd;	/* see targets.c: spawn_stopped() */
	bool child_done;	/* reaped */
	/* -p's processes as pidfds (-1: none, /proc is read), opened at the
	 * first look; NULL until then */
	int *pidfds;
	uint64_t last_alive;	/* their last look */
};

struct recorder {
	struct recorder_opts o;
	const char *who;	/* "record" or "report", for messages */
	const struct recorder_ops *ops;
	struct capture_opts co;
	void *cap;		/* ops's sampler */
	struct profile *prof;
	struct pipeline *pl;
	void *sb;		/* ops's side-band: mmap/exec/fork/exit */
	struct maplog *ml;	/* ... the maps kept from it */
	uint64_t ml_pruned;	/* when the maplog was last pruned */
	struct output out[RECORDER_MAX_OUTPUTS];
	struct raw_writer *raw;	/* the raw output's writer, this period's */
	size_t raw_idx;		/* the output the raw file is */
	struct pipeline_sink sink;	/* into raw (raw_sink.c) */
	struct container_target ct;	/* --container */
	struct targets tg;
	char agent[4096];
	struct jvm_events *jev;	/* -e alloc/lock */
	bool tty;		/* a status line on stderr */
	bool started;		/* sampling started */
	bool stopped;		/* recorder__stop done */
	uint64_t t0;		/* sampling started */
	uint64_t startup_cpu_ns;	/* the process's CPU time then */
	uint64_t last_status;
	uint64_t decode_ns;	/* for --stats */
	uint64_t st[ASGST_STAT_MAX];	/* the sampler's, last read */
	/* --switch-output: the period being recorded */
	uint64_t period_t0;	/* it began (CLOCK_MONOTONIC) */
	uint64_t next_switch;
	uint64_t st0[ASGST_STAT_MAX];	/* the sampler's, as it began */
	char names[RECORDER_MAX_OUTPUTS][PATH_MAX];	/* its files */
	struct switch_files kept[RECORDER_MAX_OUTPUTS];
	time_t began;		/* its name's time */
	unsigned periods;	/* written before it */
	size_t stacks_before;	/* their stacks */
	bool period_failed;	/* a period's output failed: exit 1 */
	struct replay *rp;	/* a replay's rebuilt code maps */
	struct recorder_push *push;	/* --push */
};

/* "asgst-bpf record: ..." (or report) on stderr */
#define recorder_say(r, ...)	err__say((r)->who, __VA_ARGS__)

/* targets.c */
int recorder_targets_open(struct recorder *r);
int recorder_targets_start(struct recorder *r);
bool recorder_targets_gone(struct recorder *r, uint64_t now);
void recorder_targets_close(struct recorder *r);

/* sideband_maps.c */
void recorder_sideband_open(struct recorder *r);
void recorder_sideband_pump(struct recorder *r, uint64_t now);
void recorder_sideband_close(struct recorder *r);

/* outputs.c */
int recorder_outputs_open(struct recorder *r);
int recorder_outputs_write(struct recorder *r);
void recorder_outputs_close(struct recorder *r);

/* periods.c */
int recorder_periods_open(struct recorder *r);
void recorder_period_meta(struct recorder *r, uint64_t end_ns);
void recorder_period_switch(struct recorder *r, uint64_t now);

/* push.c: --push; open checks the URL and credentials before anything
 * is recorded; period sends the profile of [from, until) (wall clock) */
int recorder_push_open(struct recorder *r);
void recorder_push_period(struct recorder *r, time_t from, time_t until);
void recorder_push_drain(struct recorder *r);
bool recorder_push_stats(const struct recorder *r, struct push_stats *st,
			 char *err, size_t errlen);
void recorder_push_close(struct recorder *r);

/* replay.c */
int recorder_replay_run(struct recorder *r);
void recorder_replay_free(struct recorder *r);

/* stats.c */
void recorder_status_line(struct recorder *r, uint64_t now);

#endif /* ASGST_RECORDER_INT_H */
