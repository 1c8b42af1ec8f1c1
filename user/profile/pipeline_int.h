/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the pipeline's files share: the pipeline itself and the state kept
 * per process. pipeline.c drives (queue, decode, profile); procs.c keeps
 * the processes (pid table, code maps, agent injection, JavaThread sync).
 */
#ifndef ASGST_PIPELINE_INT_H
#define ASGST_PIPELINE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "capture/sample.h"
#include "util/clock.h"
#include "profile/offcpu.h"
#include "profile/pipeline.h"
#include "profile/stack_memo.h"
#include "profile/queue.h"
#include "util/u64map.h"

struct sink_tap;
struct jthreads;

struct proc_state {
	pid_t pid;
	bool used;
	bool is_jvm;
	bool map_failed;	/* reported once, Java decoding off */
	bool agent_off_said;	/* "the agent is off" said once */
	bool cap_said;		/* "the code map exceeds" said once */
	bool jt_said;		/* "past its share of JavaThreads" once */
	bool ev_done;		/* asked for JVM events (or refused) */
	uint64_t cm_capped;	/* its map's records dropped, last counted */
	const char *comm;	/* process comm, interned */
	/* its container and pod (container.h), interned; NULL: none. foreign:
	 * not the container record --container asked for, left undecoded */
	const char *container_id;
	const char *pod_uid;
	/* profile/service.h, interned: what a fleet's store calls it, and
	 * its executable's name; NULL: not looked up (a replay) */
	const char *service;
	const char *process;
	bool foreign;
	/* a CPython process (python/py_proc.h): its layout and code names;
	 * py_comm: the thread comm it was last looked at with (an exec
	 * changes it), not again before py_next_ns; py_said: its refusal
	 * said */
	struct py_proc *py;
	char py_comm[ASGST_COMM_LEN];
	uint64_t py_next_ns;
	uint8_t py_tries;	/* looked at on a comm change, at most 4 */
	bool py_tried;
	bool py_said;
	struct codemap *cm;
	struct sink_tap *tap;		/* with a sink only */
	struct jthreads *jts;		/* JavaThreads pushed to the kernel */
	uint64_t jvm_from_seq;		/* see proc_became_jvm() */
	bool attach_tried;
	pid_t attach_child;		/* > 0 while an attach runs */
	uint64_t attach_start_ns;
	uint64_t cm_next_try_ns;
	/* pid reuse and exit (procs__prune) */
	uint64_t start_time;	/* /proc/PID/stat field 22; 0: unknown */
	uint64_t gone_ns;	/* seen exited (or its pid reused); 0: alive */
	uint64_t until_seq;	/* retired: its samples decode before this */
	uint64_t checked_ns;	/* start time last compared */
	uint64_t life_ns;	/* ... and found the same, read from then */
	uint64_t arrival_ns;	/* its last record came (pipeline__push) */
};

struct pipeline {
	struct profile *prof;
	struct capture *cap;
	struct pipeline_opts opts;
	struct strtab *st;	/* the profile's */
	struct symbolizer *sz;
	struct decoder *dec;
	struct proc_state *procs;	/* open addressing by pid */
	size_t procs_cap;
	size_t procs_n;
	size_t attaching;		/* procs with attach_child > 0 */
	bool priming;			/* pipeline__prime, before sampling */
	/* the containers' names last looked up (service.h): a container's
	 * processes ask for the same one, and its runtime's file is big */
	struct {
		const char *id;		/* interned; NULL: empty slot */
		const char *name;	/* interned; NULL: none */
	} svc_cache[16];
	unsigned svc_next;
	uint64_t attach_deferred_ns;	/* an attach last put off */
	struct queue queue;		/* waiting to be decoded */
	/* the last record ring_relieve looked at: none before it, nor it,
	 * is left in the ring buffer (NULL: start at the head) */
	struct queued *relieved;
	struct offcpu offcpu;		/* waiting for their END */
	struct frame *frames;
	/* the trace again with native frames' inlined functions in
	 * (pipeline.c, expand_inlines): TRACE_MAX_FRAMES each; xsrc[k] is
	 * the index in frames of xframes[k], -1 for an inlined one */
	struct frame *xframes;
	int32_t *xsrc;
	/* the trace with its Python frames merged in (pipeline.c) */
	struct frame *pyframes;
	struct frame *pybuild;		/* ASGST_PY_MAX_FRAMES */
	bool pyentry[ASGST_PY_MAX_FRAMES];
	uint64_t py_epoch;		/* batches: code objects checked again */
	bool expanded;			/* the trace is in xframes */
	/* stacks waiting for their modules' debug info (pipeline.c,
	 * hold_trace), oldest first, and the bytes they take */
	struct held_trace *held, **held_tail;
	struct debug_loader *loader;	/* the symbolizer's; NULL: none */
	size_t held_n, held_bytes;
	uint64_t decode_seq;		/* samples decoded so far: their index */
	uint64_t sink_seq0;		/* decode_seq of the sink's first */
	uint64_t last_update_ns;	/* code maps last caught up */
	uint64_t last_ktime;		/* newest record time seen */
	uint64_t last_prune_ns;		/* exited processes last looked for */
	unsigned int prune_sweeps;
	size_t queue_peak;		/* records queued, most since a trim */
	struct proc_state *retired;	/* exited, samples still queued */
	size_t retired_n, retired_cap;
	uint64_t first_batch_ns;	/* first samples decoded (warm-up) */
	/* a trace's strings as the profile's (pipeline.c, intern_trace):
	 * valid while cm_epoch stays; procs.c moves it whenever a code map
	 * may have freed strings (freed, pruned, handed over) */
	struct str_cache *str_cache;
	uint64_t str_cache_epoch;
	uint64_t cm_epoch;
	uint64_t cm_pruned;		/* sum of the code maps' pruned */
	/* the kernel's exit records while complete: pid -> when one of its
	 * threads' exit was read (procs.c, proc_may_have_changed) */
	bool exit_feed;
	struct u64map exits;
	/* traces decoded before, by key (stack_memo.h; NULL: none kept),
	 * and the sample being decoded's stamps for it (pipeline.c) */
	struct stack_memo *memo;
	bool memo_off;			/* ASGST_STACK_MEMO=0: no memo, no tails */
	struct {
		bool on;		/* this sample may use the memo */
		struct stack_memo_stamp st;
		uint64_t t, horizon;
		uint64_t jit;		/* symbolizer__jit_lookups before */
		size_t stack;		/* a hit's */
		bool error;
	} mcur;
	/* but for queued and offcpu_*: see pipeline__stats() */
	struct pipeline_stats stats;
};

/* procs.c */
int procs__init(struct pipeline *pl);
/* ends (waits for) the attaches still running */
void procs__free(struct pipeline *pl);
/* first sight of a process: cache what it is while it is still there */
struct proc_state *procs__get(struct pipeline *pl, pid_t pid,
			      const char *thread_comm);
/* a sample of ps is about to be decoded: is it (still, now) a JVM's */
/* pid's service and process names now (live, else retired); -ENOENT */
int procs__names(struct pipeline *pl, pid_t pid, const char **service,
		 const char **process);
/* comm: the sample's thread comm (ASGST_COMM_LEN, maybe not NUL-ended) */
void procs__on_sample(struct pipeline *pl, struct proc_state *ps,
		      uint64_t now, const char *comm);
/* catch the code maps up (new code, new threads for the kernel side) */
void procs__update_codemaps(struct pipeline *pl, uint64_t now);
/* reap finished attaches (all of them, waiting, when block) */
void procs__reap_attaches(struct pipeline *pl, bool block);
bool procs__attach_pending(const struct pipeline *pl);
/* drop exited processes once their last samples are decoded (rate-limited;
 * called by procs__update_codemaps) */
void procs__prune(struct pipeline *pl, uint64_t now);

#endif /* ASGST_PIPELINE_INT_H */
