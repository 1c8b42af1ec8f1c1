/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recording engine: the one place the kernel sampler, the side-band,
 * the map log, the symbolizer, the pipeline and the outputs meet. A command
 * (cli/) says what to record and where to write it; the engine runs the
 * recording, in this order:
 *
 *   recorder__open    targets resolved, outputs opened (a bad path fails
 *                     before anything is recorded), the sampler loaded, a
 *                     command forked and held, the targets primed,
 *                     sampling started, then the command exec'd
 *   recorder__run     the ring buffer polled, the side-band pumped, the
 *                     samples decoded in batches, --switch-output periods
 *                     written, until *o->stop, the duration or the
 *                     targets' exit
 *   recorder__stop    the sampler stops: from here no record is added
 *   recorder__finish  the side-band pumped, the ring buffer drained, the
 *                     counters read (so all they count is decoded), the
 *                     last samples decoded, the outputs written
 *   recorder__close   all freed; a command still running is ended, an
 *                     output not written removed
 *
 * report replays a raw recording through the same engine:
 * recorder__open_replay, recorder__run (the file decoded), recorder__finish
 * (the outputs written), recorder__close.
 *
 * Messages go to stderr as "asgst-bpf record: ..." ("asgst-bpf report: ..."
 * for a replay); a call that fails has said why.
 */
#ifndef ASGST_RECORDER_H
#define ASGST_RECORDER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/capture.h"
#include "capture/sideband.h"
#include "output/writers.h"
#include "profile/jvm_events.h"
#include "profile/pipeline.h"
#include "push/push.h"

#define RECORDER_MAX_OUTPUTS	8

/*
 * The kernel side as the engine calls it: the BPF sampler and the
 * side-band (recorder_bpf_ops), or a test's fake. cap and sb are the
 * table's own handles. capture() gives the pipeline the sampler it keeps
 * targets, stack windows and JavaThreads in (NULL: none, every record is
 * copied out of the ring). sideband_open NULL: no side-band.
 */
struct recorder_ops {
	int (*open)(void **cap, const struct capture_opts *o, char *err,
		    size_t errlen);
	int (*start)(void *cap, char *err, size_t errlen);
	void (*stop)(void *cap);
	int (*poll)(void *cap, int timeout_ms, capture_sample_fn fn,
		    void *ctx);
	int (*drain)(void *cap, capture_sample_fn fn, void *ctx);
	int (*stats)(void *cap, uint64_t out[ASGST_STAT_MAX]);
	void (*close)(void *cap);
	struct capture *(*capture)(void *cap);

	int (*sideband_open)(void **sb, char *err, size_t errlen);
	int (*sideband_read)(void *sb, sideband_fn fn, void *ctx);
	void (*sideband_stats)(void *sb, struct sideband_stats *st);
	void (*sideband_close)(void *sb);
};

extern const struct recorder_ops recorder_bpf_ops;

struct filter;

/* -e alloc without --alloc-interval: the JVM's own default (512 KiB) */
#define RECORDER_ALLOC_INTERVAL	(512u << 10)

struct recorder_opts {
	/* targets: filter_mode ASGST_FILTER_ALL (-a), _PIDS (pids, or cmd),
	 * _CGROUP (cgroup); or container: filter->container names it */
	uint32_t filter_mode;
	const pid_t *pids;
	size_t npids;
	const char *cgroup;	/* a cgroup v2 path, or under /sys/fs/cgroup */
	bool container;
	char **cmd;		/* -- COMMAND ARGS, NULL-terminated */

	/* the sampler */
	uint32_t events;	/* ASGST_EVMASK_*; 0: cpu */
	uint32_t freq_hz;
	uint32_t window;	/* stack window bytes */
	bool window_all;	/* a window for every process, not JVMs only */
	uint32_t ringbuf_mb;	/* 0: the default */
	bool time_samples;	/* --stats: the sampler times its samples */
	uint32_t offcpu_every;	/* -e offcpu: a stack 1 in N switches; 0:
				   N adapted to a budget (capture.h) */
	uint64_t alloc_interval; /* -e alloc: bytes between sampled
				    allocations; 0: RECORDER_ALLOC_INTERVAL */

	/* outputs: a NULL path is stdout; a raw one (OUT_RAW) gets the
	 * samples, code maps and processes, the first raw one only */
	const char *outputs[RECORDER_MAX_OUTPUTS];
	enum output_format formats[RECORDER_MAX_OUTPUTS];
	size_t nout;

	double duration_s;	/* <= 0: until stopped */
	uint64_t switch_ns;	/* a period a set of files; 0: one set */
	uint32_t switch_max;	/* files kept per output; 0: all */

	/* --push URL: each period's profiles sent to Pyroscope (NULL:
	 * none); --label KEY=VALUE on each; credentials from the
	 * environment and push_auth_file; the queue's bound (0: 64 MiB)
	 * and a request's time limit (0: 10 s) */
	const char *push_url;
	const char *const *push_labels;
	size_t npush_labels;
	const char *push_auth_file;
	size_t push_queue_bytes;
	unsigned push_timeout_ms;

	/* the stacks kept (NULL: all); --container resolves into it */
	struct filter *filter;
	bool no_attach;		/* never inject the agent */
	bool inlines;		/* --inline: native inlined frames, lines */
	/* --inline: debuginfod servers to ask (NULL: none); one fetch's
	 * limit in seconds (0: 10) */
	const char *debuginfod_urls;
	uint32_t debuginfod_timeout_s;
	bool python_native;	/* --python-native: CPython's own C frames */
	bool quiet;		/* no notices, no status line */
	/* recorder__run returns once *stop is set (NULL: never); with
	 * stop_on_signals SIGINT and SIGTERM set it, from the moment
	 * sampling starts */
	volatile sig_atomic_t *stop;
	bool stop_on_signals;

	const struct recorder_ops *ops;	/* NULL: recorder_bpf_ops */

	/* report: the raw recording to replay; of the fields above only
	 * the outputs, filter and quiet count then */
	const char *replay;
};

/* why recorder__run returned */
enum recorder_end {
	RECORDER_STOPPED,	/* *o->stop was set */
	RECORDER_DURATION,	/* duration_s passed */
	RECORDER_TARGETS_GONE,	/* the command, or every -p process, exited */
	RECORDER_RING_ERROR,	/* the ring buffer failed (said) */
	RECORDER_REPLAYED,	/* a replay read its file to the end */
	RECORDER_REPLAY_ERROR,	/* a replay's file was bad (said) */
};

struct recorder_stats {
	uint64_t counters[ASGST_STAT_MAX];	/* the sampler's, last read */
	struct pipeline_stats pl;
	uint64_t decode_ns;	/* wall time in the pipeline's decode */
	size_t stacks;		/* distinct stacks, every period's */
	unsigned periods;	/* --switch-output periods written before
				 * the last one */
	uint32_t events;	/* ASGST_EVMASK_* recorded */
	bool period_failed;	/* a period's output failed */
	struct jvm_events_stats jev;	/* -e alloc/lock: JVMs asked */
	bool pushing;			/* --push: push's figures */
	struct push_stats push;
	char push_error[256];		/* its last failure; "" none */
};

struct recorder;
struct profile;

/* 0, or the exit status the command ends with (2: no such cgroup or
 * container, 1: any other failure); *out is set either way (NULL when out
 * of memory) and goes to recorder__close */
int recorder__open(struct recorder **out, const struct recorder_opts *o);
/* the raw recording o->replay, to be decoded by recorder__run; 0 or 1 */
int recorder__open_replay(struct recorder **out,
			  const struct recorder_opts *o);
enum recorder_end recorder__run(struct recorder *r);
/* once; a replay has no sampler to stop */
void recorder__stop(struct recorder *r);
/* 0, or 1 when an output could not be written (said; a recording's
 * stacks are then kept in a raw file in $TMPDIR, said too). Stops the
 * sampler first when recorder__stop was not called. */
int recorder__finish(struct recorder *r);
void recorder__close(struct recorder *r);

void recorder__stats(const struct recorder *r, struct recorder_stats *out);
/* --label KEY=VALUE as --push sends it: 0, or -EINVAL with one line */
int recorder__check_label(const char *kv, char *err, size_t errlen);
/* --stats: what the recording cost, on stderr */
void recorder__print_stats(struct recorder *r);
/* the profile (the last period's), once finished */
struct profile *recorder__profile(struct recorder *r);

#endif /* ASGST_RECORDER_H */
