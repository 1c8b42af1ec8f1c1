/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * From raw sample records to a profile: per-process state (comm, JVM or
 * not, code map), a short delay queue so a JVM's code map has caught up with
 * the code a sample hit before the sample is decoded, decoding and
 * aggregation.
 */
#ifndef ASGST_PIPELINE_H
#define ASGST_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/py_proc.h"

struct profile;
struct capture;
struct filter;
struct codemap;

/*
 * What a recording keeps beside its profile, to be decoded again later
 * (record -o x.asgst): the records as decoded, the code maps' bytes as
 * they were read, and each process as it was. The caller implements it
 * (recorder/raw_sink.c writes a raw file), so the pipeline knows no file
 * format. Each returns 0 or -errno; a sink remembers its own failures,
 * the pipeline decodes on.
 */
struct pipeline_proc_rec {
	pid_t pid;
	bool is_jvm;
	uint64_t jvm_from_seq;	/* the sample index (of this sink's) from
				 * which it was decoded as a JVM */
	const char *comm;
	const char *maps;	/* its /proc/PID/maps text */
	size_t maps_len;
	const char *container_id;	/* NULL: none */
	const char *pod_uid;
	const char *service;		/* profile/service.h; NULL: none */
	const char *process;
};

struct pipeline_sink {
	/* one sample record, in the order they are decoded */
	int (*sample)(void *ctx, const void *rec, size_t len);
	/* bytes of pid's code map at file offset off */
	int (*codemap)(void *ctx, pid_t pid, uint64_t off, const void *bytes,
		       size_t len);
	int (*proc)(void *ctx, const struct pipeline_proc_rec *p);
	/* a CPython process's code object as read (NULL: not kept);
	 * v->poison_until counts from the sink's first sample */
	int (*pycode)(void *ctx, pid_t pid, const struct py_code_view *v);
	void *ctx;
};

struct pipeline_opts {
	bool no_attach;		/* never inject the agent */
	bool quiet;
	const char *agent_path;	/* libasgst-agent.so, NULL: not found */
	uint64_t decode_delay_ns;	/* queue delay, 0: default */
	const struct filter *filter;	/* NULL: keep every stack */
	const struct pipeline_sink *sink;	/* also keep the samples */
	bool offline;			/* report: never look at /proc */
	/* native frames' inlined functions and lines from DWARF
	 * (record --inline; symbolizer__inlines) */
	bool inlines;
	/*
	 * With inlines: read the DWARF on a thread of its own (symbols/
	 * debug_loader.h) and hold the stacks that wait for it (decoded,
	 * not in the ring buffer) rather than pausing the decode; and ask
	 * these debuginfod servers for the debug files of modules that
	 * have none (NULL: none). settle_ns: the most pipeline__finish
	 * waits for what is still under way (0: 5 s).
	 */
	bool debug_thread;
	const char *debuginfod_urls;
	uint32_t debuginfod_timeout_s;
	uint64_t settle_ns;
	/* CPython processes: keep the interpreter's own C frames between
	 * the Python frames (record --python-native; python/py_merge.h) */
	bool python_native;
	/* -e alloc/lock: each JVM is asked and probed (jvm_events.h) */
	struct jvm_events *jvm_events;
};

struct pipeline_stats {
	uint64_t records;	/* records received */
	uint64_t bad_records;	/* failed sample__parse */
	uint64_t decoded;	/* added to the profile */
	uint64_t decode_errors;	/* traces with an error code */
	uint64_t py_procs;	/* CPython processes whose frames are walked */
	uint64_t py_samples;	/* samples with Python frames merged */
	uint64_t py_unnamed;	/* Python frames whose code was unreadable */
	uint64_t filtered;	/* decoded, dropped by the filter */
	uint64_t processes;	/* distinct pids seen */
	uint64_t jvms;		/* of which JVMs */
	uint64_t jvms_decoded;	/* JVMs with a usable code map */
	uint64_t attached;	/* agents injected by this run */
	size_t queued;		/* samples waiting to be decoded */
	uint64_t offcpu_no_end;	/* off-CPU stacks whose END never came */
	uint64_t offcpu_stray_end; /* END records with no stack waiting */
	uint64_t windows;	/* samples with a stack window */
	uint64_t window_bytes;	/* the bytes of those windows */
	uint64_t record_bytes;	/* the bytes of every record pushed */
	uint64_t ring_copied;	/* held in the ring, copied out for room */
	uint64_t ring_walked;	/* queued records looked at for that */
	/* decoded before their delay was over: the queue was full */
	uint64_t decoded_early;
	/* decoded before the attaches running ended: the hold was full */
	uint64_t attach_unheld;
	uint64_t attach_deferred; /* attaches put off: too many running */
	/* memory bounded by what is alive (procs.c: procs__prune) */
	uint64_t procs_live;	/* processes in the table now */
	uint64_t procs_dropped;	/* exited ones whose state was dropped */
	uint64_t pid_reuses;	/* pids that came back with a new start time */
	uint64_t sym_procs;	/* processes the symbolizer keeps maps of */
	uint64_t sym_modules;	/* modules (ELF files) it keeps */
	uint64_t map_errors;	/* sampler map updates that failed */
	uint64_t codemap_capped; /* code-map records dropped past a budget */
	uint64_t strtab_bytes;	/* names interned (never freed) */
	/* traces the stack memo had, and kept (stack_memo.h); JVM walks
	 * whose native tail was replayed (decode/walk.h) */
	uint64_t memo_hits, memo_kept, tail_hits;
	/* what the recorder spends (pipeline.c): the CPU time of decoding
	 * (pipeline__process, this thread's), and the process's CPU time and
	 * records received when the warm-up ended (0: not yet), so a caller
	 * can tell the steady cost a sample from the start-up's */
	uint64_t decode_cpu_ns;
	uint64_t warm_cpu_ns;
	uint64_t warm_records;
	uint64_t warm_decode_cpu_ns;	/* decode_cpu_ns and decoded then */
	uint64_t warm_decoded;
	uint64_t finish_cpu_ns;	/* process CPU at pipeline__finish's end */
	/* stacks held for their modules' debug info (pipeline.c) */
	uint64_t inline_held;		/* held, in all */
	uint64_t inline_unready;	/* let go before it came (the end's
					   wait over, or the hold full) */
	size_t inline_held_peak;	/* most held at once */
	/* the debug loader's (symbols/debug_loader.h) */
	uint64_t debuginfod_fetches, debuginfod_fetched;
	uint64_t debuginfod_failed, debuginfod_capped;
	uint64_t debuginfod_ns;
};

struct pipeline;

struct pipeline *pipeline__new(struct profile *p, struct capture *c,
			       const struct pipeline_opts *o);
void pipeline__free(struct pipeline *pl);
/*
 * A record from the ring buffer, queued: PIPELINE_HELD when it was left
 * where it is (a live sample: the pipeline releases it to the capture
 * once decoded), 0 when copied, or -ENOMEM.
 */
#define PIPELINE_HELD	1
int pipeline__push(struct pipeline *pl, const void *data, size_t len);
/* decode queued samples older than the delay (all when flush) */
void pipeline__process(struct pipeline *pl, uint64_t now_ns, bool flush);
/* end of the recording (end_ns: CLOCK_MONOTONIC, the sampler's clock; 0
 * unknown): off-CPU stacks still waiting for their thread to run again are
 * weighed up to then (at least to the newest record), then all is decoded */
void pipeline__finish(struct pipeline *pl, uint64_t end_ns);
/*
 * Stacks held for their modules' debug info: those whose info came
 * (waiting at most wait_ns for it) go to the profile; with all, the rest
 * too, as they are. A period's end lets the ready ones go (the rest go to
 * the next period); pipeline__finish waits up to settle_ns, then all.
 */
void pipeline__settle(struct pipeline *pl, uint64_t wait_ns, bool all);
void pipeline__stats(const struct pipeline *pl, struct pipeline_stats *out);
/* what the outputs need beside the stacks (the modules' build-ids, as
 * read through the processes' roots) into p, before it is written */
void pipeline__annotate(struct pipeline *pl, struct profile *p);
/* the symbolizer's figures (modules, CFI memory and row cache) */
struct symbolizer_stats;
void pipeline__symbolizer_stats(const struct pipeline *pl,
				struct symbolizer_stats *out);
/* the symbolizer the pipeline names frames with (to give it more sources) */
struct symbolizer *pipeline__symbolizer(struct pipeline *pl);
/*
 * The kernel's exit records (the side-band), as they are read: complete
 * says none were lost so far (false from the first loss on). While
 * complete, a process none of whose threads exited since its start time
 * was last read cannot have passed its pid on, and /proc is not read for
 * it again before a few seconds.
 */
void pipeline__exit_feed(struct pipeline *pl, bool complete);
void pipeline__note_exit(struct pipeline *pl, pid_t pid);
/* look at a process now (targets of -p / --), not at its first sample */
int pipeline__prime(struct pipeline *pl, pid_t pid);
/*
 * pid mapped a libjvm.so (the side-band says): a process of the table is
 * looked at again now, not at its next sample (with -e alloc or lock
 * alone there may be none before its agent is asked); one not in it is
 * added when may_add (it is a target).
 */
void pipeline__jvm_mapped(struct pipeline *pl, pid_t pid, bool may_add);
/* prime every running JVM (-a); the number found, or -errno */
int pipeline__prime_jvms(struct pipeline *pl);
/* end of a recording: hand the sink what it needs besides the samples
 * (every process, its code map's header); 0 or the first -errno */
int pipeline__finish_sink(struct pipeline *pl);
/*
 * The next period of a recording (--switch-output): the samples decoded
 * from now on go to sink (NULL: none), which also gets again every code
 * map read so far, so that each period decodes alone. 0 or -errno.
 */
int pipeline__set_sink(struct pipeline *pl, const struct pipeline_sink *sink);
/* report: a process as recorded (maps text; cm may be NULL, taken over;
 * jvm_from_seq: the sample index from which it was decoded as a JVM;
 * its container and pod labels, service and process names, each NULL or
 * "" when none) */
/*
 * report: a code object of CPython process pid as the recording kept it
 * (RAW_PYCODE), before the samples that follow it in the file; the
 * samples before it are decoded first. 0 or -errno.
 */
/*
 * pid mapped a python3.X or libpython3.X file (the kernel's side-band
 * record): looked at as a CPython process now, not at its next sample
 * (may_add: also when no sample of it came yet).
 */
void pipeline__python_mapped(struct pipeline *pl, pid_t pid, bool may_add);

int pipeline__add_pycode(struct pipeline *pl, pid_t pid,
			 const struct py_code_view *v);

struct pipeline_offline_names {
	const char *container_id, *pod_uid, *service, *process;
};
int pipeline__add_offline(struct pipeline *pl, pid_t pid, const char *comm,
			  bool is_jvm, uint64_t jvm_from_seq, const char *maps,
			  size_t maps_len, struct codemap *cm,
			  const struct pipeline_offline_names *nm);

#endif /* ASGST_PIPELINE_H */
